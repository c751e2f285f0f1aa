// SPDX-License-Identifier: BSD-2-Clause
/*
 * Opening recorded paths inside a --sysroot or --debug-dir without leaving
 * it, and regular files only (rootopen.h says the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootopen.h"
#include "util.h"

/* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static int not_regular(mode_t mode)
{
	return S_ISDIR(mode) ? -EISDIR : -ENXIO;
}

/* Consumes @fd: returns it, blocking again, if it is a regular file. */
static int keep_regular(int fd)
{
	struct stat st;
	int fl, err;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = not_regular(st.st_mode);
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int regular_open(const char *path)
{
	struct stat st;
	int fd;

	/* Look before opening: a device node is never opened. */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return not_regular(st.st_mode);
	fd = open(path, OPEN_FLAGS);
	if (fd < 0)
		return -errno;
	return keep_regular(fd);	/* it may have changed since stat() */
}

static int openat2_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int i;
	long fd = -1;

	/* EAGAIN: a rename or mount raced with ".." resolution; try again. */
	for (i = 0; i < 8; i++) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

int root_open(int rootfd, const char *path)
{
	struct stat st;
	int fd, err;

	/* O_PATH opens nothing: see what it is before opening it. */
	fd = openat2_in_root(rootfd, path, O_PATH | O_CLOEXEC);
	/* No openat2 (before 5.6), or a seccomp filter or an older kernel
	 * that refuses these flags. */
	if (fd == -ENOSYS || fd == -EINVAL || fd == -E2BIG || fd == -EPERM)
		return root_open_walk(rootfd, path);
	if (fd < 0)
		return fd;
	err = fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (!S_ISREG(st.st_mode))
		return not_regular(st.st_mode);
	fd = openat2_in_root(rootfd, path, OPEN_FLAGS);
	if (fd < 0)
		return fd;
	return keep_regular(fd);
}

int root_open_walk(int rootfd, const char *path)
{
	struct strbuf rest = { 0 }, next = { 0 }, swap;
	char name[NAME_MAX + 1], link[PATH_MAX];
	int *dirs = NULL, *tmp;	/* dirs[0..depth): opened below the root */
	size_t depth = 0, cap = 0, pos = 0, len;
	unsigned int links = 0;
	int fd, err;

	/* As open(2): an empty path names nothing. */
	err = path[0] ? strbuf__adds(&rest, path) : -ENOENT;
	while (!err) {
		const char *p = strbuf__str(&rest) + pos, *q;
		int dir = depth ? dirs[depth - 1] : rootfd, last;
		struct stat st;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p) {
			err = -EISDIR;	/* the path ends at a directory */
			break;
		}
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		pos = (size_t)(p - strbuf__str(&rest));
		for (q = p; *q == '/'; q++)
			;
		last = !*q;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			if (depth)	/* ".." of the root is the root */
				close(dirs[--depth]);
			continue;
		}
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			err = -errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > ROOTOPEN_MAX_LINKS) {
				err = -ELOOP;
				break;
			}
			n = readlinkat(dir, name, link, sizeof(link));
			if (n < 0 || (size_t)n == sizeof(link)) {
				err = n < 0 ? -errno : -ENAMETOOLONG;
				break;
			}
			/* The rest of the path now follows the link's target,
			 * an absolute one from the root. */
			strbuf__reset(&next);
			err = strbuf__add(&next, link, (size_t)n) ?: strbuf__adds(&next, "/") ?:
			      strbuf__adds(&next, p);
			swap = rest;
			rest = next;
			next = swap;
			pos = 0;
			if (link[0] == '/')
				while (depth)
					close(dirs[--depth]);
			continue;
		}
		if (S_ISDIR(st.st_mode) && !last) {
			if (depth == cap) {
				cap = cap ? 2 * cap : 16;
				tmp = realloc(dirs, cap * sizeof(*dirs));
				if (!tmp) {
					err = -ENOMEM;
					break;
				}
				dirs = tmp;
			}
			fd = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				err = -errno;
				break;
			}
			dirs[depth++] = fd;
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			err = S_ISDIR(st.st_mode) || last ? not_regular(st.st_mode) : -ENOTDIR;
			break;
		}
		if (!last) {
			err = -ENOTDIR;
			break;
		}
		fd = openat(dir, name, OPEN_FLAGS | O_NOFOLLOW);
		err = fd < 0 ? -errno : keep_regular(fd);
		break;
	}
	while (depth)
		close(dirs[--depth]);
	free(dirs);
	strbuf__free(&rest);
	strbuf__free(&next);
	return err;
}
