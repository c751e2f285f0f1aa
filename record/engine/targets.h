/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets.h - the tasks -p and -t name, watched so that the recording can
 * stop when the last of them is gone (as perf record -p does): one pidfd
 * each, which polls readable when its task has exited (pidfd_open(),
 * Linux 5.3+; thread ids need PIDFD_THREAD, Linux 6.9+), or, where the
 * kernel has none, a look with kill() (a thread: /proc/TID) at each flush.
 */
#ifndef STKREC_TARGETS_H
#define STKREC_TARGETS_H

#include <stddef.h>
#include <stdint.h>

struct targets;

/*
 * targets__open() - watch @pids (processes) and @tids (threads).  A task
 * already gone counts as gone.  Returns the watcher, or NULL with errno
 * ENOMEM.
 */
struct targets *targets__open(const uint32_t *pids, size_t nr_pids, const uint32_t *tids,
			      size_t nr_tids);

/* targets__nr_fds() - how many pidfds there are to poll (for epoll); the
 * targets without one are looked at by targets__check(). */
size_t targets__nr_fds(const struct targets *t);

/* targets__fd() - the @i-th pidfd, owned by @t (valid until
 * targets__free()). */
int targets__fd(const struct targets *t, size_t i);

/*
 * targets__check() - look at every task still alive: a pidfd that polls
 * readable, a kill(pid, 0) that says ESRCH or a /proc/TID gone marks it
 * gone (without a pidfd a zombie still counts as alive).
 * Cheap (one poll() and a syscall per task without a pidfd).
 * Returns the number of targets still alive.
 */
size_t targets__check(struct targets *t);

/* targets__free() - close the pidfds; accepts NULL. */
void targets__free(struct targets *t);

#endif
