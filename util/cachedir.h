/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cachedir.h - a directory of cache files that only its owner may write:
 * stkrec's unwind tables (record/unwind/tcache.c) and stkreport's symbol
 * cache (report/symbols/symcache.c) are both one file per build-id in
 * such a directory, made when missing and kept under a size.
 */
#ifndef STK_CACHEDIR_H
#define STK_CACHEDIR_H

#include <stdint.h>

struct iovec;
struct stat;

/* cachedir__ok() - is @dir ours alone: a directory (not a link) owned by
 * our euid that nobody else may write to?  0, -EPERM, or lstat's -errno
 * (-ENOENT: missing). */
int cachedir__ok(const char *dir);

/*
 * cachedir__make() - make @dir and its missing parents 0700, each only
 * inside a directory of ours or root's (`sudo stkreport` with the user's
 * $HOME must not make the user's ~/.cache root's).  0 when @dir is then
 * ours alone (cachedir__ok()), else -errno.
 */
int cachedir__make(const char *dir);

/*
 * cachedir__open() - open the cache file @path for reading if it is ours:
 * a regular file (a link is not followed) owned by our euid that nobody
 * else may write.  @st, if not NULL, gets its fstat().  Returns the fd
 * (O_CLOEXEC), -ENOENT when missing, -EPERM when a link or not ours.
 */
int cachedir__open(const char *path, struct stat *st);

/*
 * cachedir__store() - make @path hold the @n buffers of @iov, whole or not
 * at all: written to a new file beside it (mode 0600, ours) and renamed
 * over it, so a reader never sees a part.  0 or -errno (nothing left).
 */
int cachedir__store(const char *path, const struct iovec *iov, int n);

/*
 * cachedir__trim() - if the regular files of @dir whose names end in
 * @suffix take more than @max bytes, remove the oldest (by modification
 * time) down to 3/4 of @max, so the next trim is many stores away.
 * Returns the bytes those files take after it (0 also when @dir cannot be
 * read).  Links are never followed.
 */
uint64_t cachedir__trim(const char *dir, const char *suffix, uint64_t max);

#endif /* STK_CACHEDIR_H */
