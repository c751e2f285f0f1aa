/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * child.h - the command of "stkrec -- CMD ARGS": forked first, held on a
 * pipe while everything is attached, then released to exec.
 */
#ifndef STKREC_CHILD_H
#define STKREC_CHILD_H

#include <sys/types.h>

struct child;

/*
 * child__spawn() - fork a child that waits, with a default signal mask,
 * until child__release(), then execvp()s @argv.  The caller's signal mask
 * and handlers are not inherited by CMD.
 *
 * Returns the child, or NULL with errno from pipe()/fork() or ENOMEM.
 */
struct child *child__spawn(char *const argv[]);

pid_t child__pid(const struct child *c);

/*
 * child__pidfd() - a pidfd (Linux 5.3+) that polls readable when the child
 * exits, or -1 if the kernel has none (then poll with child__try_wait()).
 * Owned by @c.
 */
int child__pidfd(const struct child *c);

/*
 * child__release() - let the child exec CMD and wait until it did.
 * Returns 0, or the execvp() -errno (e.g. -ENOENT, -EACCES); after a
 * failed exec the child has exited and is reaped.
 */
int child__release(struct child *c);

/*
 * child__try_wait() - reap the child if it exited.  Returns 1 with
 * @exit_code set as a shell would (its exit status, or 128 + signal), 0
 * if it still runs, or -errno.
 */
int child__try_wait(struct child *c, int *exit_code);

/* child__wait() - as child__try_wait(), blocking.  Returns 0 or -errno. */
int child__wait(struct child *c, int *exit_code);

/* child__kill() - send @sig if the child still runs.  Returns 0 or -errno. */
int child__kill(struct child *c, int sig);

/*
 * child__free() - a child never released is killed; one released but not
 * reaped is left running (like perf, stkrec does not take CMD down with
 * it).  Accepts NULL.
 */
void child__free(struct child *c);

#endif
