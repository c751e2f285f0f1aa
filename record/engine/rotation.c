// SPDX-License-Identifier: BSD-2-Clause
/*
 * rotation.c - the files of a rotating recording: their names from -o's
 * pattern, never another file's, and --keep's deletion of the oldest
 * (see rotation.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rotation.h"

int rotation__expand(const char *pattern, time_t t, char *buf, size_t size)
{
	struct tm tm;
	size_t n;

	if (!*pattern || !size)
		return -EINVAL;
	if (!localtime_r(&t, &tm))
		return -EINVAL;
	/* strftime() returns 0 both for an empty result and for one too
	 * long: a pattern that expands to nothing is refused anyway. */
	n = strftime(buf, size, pattern, &tm);
	if (n == 0)
		return strlen(pattern) + 1 >= size ? -ENAMETOOLONG : -EINVAL;
	if (buf[n - 1] == '/')
		return -EINVAL;
	return 0;
}

int rotation__suffixed(const char *name, unsigned int n, char *buf, size_t size)
{
	const char *base = strrchr(name, '/'), *dot;
	size_t at;
	int len;

	base = base ? base + 1 : name;
	dot = strrchr(base, '.');
	at = dot && dot != base ? (size_t)(dot - name) : strlen(name);
	len = snprintf(buf, size, "%.*s-%u%s", (int)at, name, n, name + at);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

/* Create @path empty, if nothing is there: 0, -EEXIST or open()'s -errno. */
static int create_excl(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int rotation__claim(const char *pattern, time_t t, char *buf, size_t size)
{
	char name[4096];
	unsigned int n;
	int err;

	err = rotation__expand(pattern, t, name, sizeof(name));
	if (err)
		return err;
	if (strlen(name) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, name);
	err = create_excl(buf);
	/* Taken (this second's file, or anyone's): the first free suffix.
	 * Tried in order, so the same files get the same names. */
	for (n = 1; err == -EEXIST && n <= ROTATION_MAX_SUFFIX; n++) {
		err = rotation__suffixed(name, n, buf, size);
		if (err)
			return err;
		err = create_excl(buf);
	}
	return err;
}

struct rotation_file {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct rotation {
	unsigned int keep;
	struct rotation_file *files;	/* files[head..n): not deleted */
	size_t head, n, cap;
	char *first;
	uint64_t written, deleted;
};

struct rotation *rotation__new(unsigned int keep)
{
	struct rotation *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->keep = keep;
	return r;
}

void rotation__free(struct rotation *r)
{
	size_t i;

	if (!r)
		return;
	for (i = r->head; i < r->n; i++)
		free(r->files[i].path);
	free(r->files);
	free(r->first);
	free(r);
}

int rotation__done(struct rotation *r, const char *path)
{
	struct rotation_file f = {};
	struct stat st;

	if (r->head && r->n == r->cap) {
		/* Slide the kept ones down rather than grow without end. */
		memmove(r->files, r->files + r->head, (r->n - r->head) * sizeof(*r->files));
		r->n -= r->head;
		r->head = 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct rotation_file *p = realloc(r->files, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->files = p;
		r->cap = cap;
	}
	f.path = strdup(path);
	if (!f.path || (!r->first && !(r->first = strdup(path)))) {
		free(f.path);
		return -ENOMEM;
	}
	/* Unknown (a FIFO gone?): never deleted, as another file would not be. */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		f.dev = st.st_dev;
		f.ino = st.st_ino;
	}
	r->files[r->n++] = f;
	r->written++;
	return 0;
}

int rotation__prune(struct rotation *r, const char **failed)
{
	struct stat st;

	*failed = NULL;
	while (r->keep && r->n - r->head > r->keep) {
		struct rotation_file *f = &r->files[r->head];

		if (f->ino && lstat(f->path, &st) == 0 && st.st_dev == f->dev &&
		    st.st_ino == f->ino) {
			if (unlink(f->path) == 0)
				r->deleted++;
			else if (errno != ENOENT) {
				*failed = f->path;
				return -errno;
			}
		}
		/* The last one stays named for rotation__last(). */
		free(f->path);
		r->head++;
	}
	return 0;
}

uint64_t rotation__files(const struct rotation *r)
{
	return r->written;
}

uint64_t rotation__deleted(const struct rotation *r)
{
	return r->deleted;
}

const char *rotation__first(const struct rotation *r)
{
	return r->first;
}

const char *rotation__last(const struct rotation *r)
{
	return r->n > r->head ? r->files[r->n - 1].path : NULL;
}
