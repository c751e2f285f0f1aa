/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rotation.h - the files of a rotating recording (--rotate,
 * --rotate-size, --keep): each file's name, made from -o's strftime(3)
 * pattern at the file's start and never another file's; the files this
 * recording wrote, in order; and --keep's deletion of the oldest of them.
 * The recorder (recorder.c) decides when to rotate; this only names,
 * remembers and deletes.
 *
 * Use: rotation__new() -> (rotation__claim() -> the file is written ->
 * rotation__done() -> rotation__prune()) per file -> rotation__free().
 */
#ifndef STKREC_ROTATION_H
#define STKREC_ROTATION_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Suffixes tried for a name that exists ("-1" to "-999"). */
#define ROTATION_MAX_SUFFIX 999

/*
 * rotation__expand() - @pattern through strftime(3) at @t, local time,
 * into @buf (@size bytes).  Returns 0, -EINVAL (@pattern empty, or it
 * expands to nothing or to a name ending in '/') or -ENAMETOOLONG.
 */
int rotation__expand(const char *pattern, time_t t, char *buf, size_t size);

/*
 * rotation__suffixed() - @name with "-@n" before its extension (the last
 * '.' of its last component, unless that component starts with it), or
 * at its end: "a/web-1.stk" for ("a/web.stk", 1), "trace-2" for
 * ("trace", 2).  Returns 0 or -ENAMETOOLONG.
 */
int rotation__suffixed(const char *name, unsigned int n, char *buf, size_t size);

/*
 * rotation__claim() - the name of the file that starts at @t: @pattern
 * expanded, or the first of its suffixed forms (1 to
 * ROTATION_MAX_SUFFIX) that names nothing, created there empty (mode
 * 0600, O_EXCL) so that no one else takes it before the capture's
 * stk_writer__commit() renames over it; into @buf.  Nothing existing is
 * ever replaced.  Returns 0, rotation__expand()'s errors, -EEXIST (every
 * suffix taken), or open()'s -errno (-EACCES, -ENOENT: no such directory).
 */
int rotation__claim(const char *pattern, time_t t, char *buf, size_t size);

struct rotation;

/* No files yet; @keep: how many to keep at most (0: all).  NULL with
 * errno = ENOMEM. */
struct rotation *rotation__new(unsigned int keep);

/* Frees @r (the files stay).  Accepts NULL. */
void rotation__free(struct rotation *r);

/*
 * rotation__done() - file @path is written and closed: remember it (and
 * its device and inode, so that --keep deletes only the file this
 * recording wrote, not one put in its place since).  Returns 0 or
 * -ENOMEM (then it is not counted and never deleted).
 */
int rotation__done(struct rotation *r, const char *path);

/*
 * rotation__prune() - delete the oldest files rotation__done() was told
 * of while there are more than @keep of them: each only if its name
 * still holds the file written (else it is forgotten, left alone).
 * Returns 0, or the first unlink() -errno other than -ENOENT (the file
 * stays counted; its name in *@failed, borrowed until the next call).
 */
int rotation__prune(struct rotation *r, const char **failed);

/* Files written (rotation__done()), deleted ones included. */
uint64_t rotation__files(const struct rotation *r);

/* Files deleted by rotation__prune(). */
uint64_t rotation__deleted(const struct rotation *r);

/* The first and the last file written, or NULL: borrowed, valid for the
 * life of @r (the first stays named even once deleted). */
const char *rotation__first(const struct rotation *r);
const char *rotation__last(const struct rotation *r);

#endif
