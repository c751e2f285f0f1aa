// SPDX-License-Identifier: BSD-2-Clause
/*
 * cachedir.c - a cache directory that only its owner may write: checked,
 * made, and trimmed oldest first (cachedir.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cachedir.h"

int cachedir__ok(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* mkdir(@path, 0700) when missing, only inside a directory of ours or
 * root's.  0 or -errno (-EPERM: another user's directory). */
static int mkdir_in_own(char *path)
{
	char *slash = strrchr(path, '/');
	struct stat st;
	int err;

	if (lstat(path, &st) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	if (slash) {
		*slash = '\0';
		err = lstat(slash == path ? "/" : path, &st) < 0 ? -errno : 0;
		*slash = '/';
		if (err)
			return err;
		if (st.st_uid != geteuid() && st.st_uid != 0)
			return -EPERM;
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

int cachedir__make(const char *dir)
{
	char p[PATH_MAX], *slash;
	int err = cachedir__ok(dir);

	if (err != -ENOENT)
		return err;
	if (strlen(dir) >= sizeof(p))
		return -ENAMETOOLONG;
	strcpy(p, dir);
	for (slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		err = mkdir_in_own(p);
		*slash = '/';
		if (err)
			return err;
	}
	err = mkdir_in_own(p);
	return err ? err : cachedir__ok(dir);
}

int cachedir__open(const char *path, struct stat *st)
{
	struct stat own;
	int fd;

	if (!st)
		st = &own;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -ENOENT;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int cachedir__store(const char *path, const struct iovec *iov, int n)
{
	char tmp[PATH_MAX];
	int fd, i, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);	/* 0600, ours */
	if (fd < 0)
		return -errno;
	for (i = 0; i < n && !err; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && !err) {
			ssize_t w = write(fd, p, left);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				err = w < 0 ? -errno : -EIO;
			else {
				p += w;
				left -= (size_t)w;
			}
		}
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

struct cache_file {
	char name[NAME_MAX + 1];
	int64_t mtime;	/* ns */
	uint64_t size;
};

static int file_cmp(const void *a, const void *b)
{
	const struct cache_file *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

uint64_t cachedir__trim(const char *dir, const char *suffix, uint64_t max)
{
	struct cache_file *e = NULL, *n;
	size_t nr = 0, cap = 0, i, sl = strlen(suffix);
	uint64_t total = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int dfd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return 0;
	}
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name);

		if (len <= sl || len >= sizeof(e->name) || strcmp(d->d_name + len - sl, suffix) ||
		    fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			n = realloc(e, cap * sizeof(*e));
			if (!n)
				break;
			e = n;
		}
		strcpy(e[nr].name, d->d_name);
		e[nr].mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		e[nr].size = (uint64_t)st.st_size;
		total += e[nr].size;
		nr++;
	}
	if (total > max) {
		qsort(e, nr, sizeof(*e), file_cmp);
		for (i = 0; i < nr && total > max / 4 * 3; i++)
			if (unlinkat(dfd, e[i].name, 0) == 0)
				total -= e[i].size;
	}
	free(e);
	closedir(dp);
	return total;
}
