// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets.c - watch the tasks of -p/-t and say when the last one is gone
 * (see targets.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "targets.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 00000200	/* O_EXCL; include/uapi/linux/pidfd.h, Linux 6.9 */
#endif

struct target {
	uint32_t id;
	int thread;		/* a -t thread */
	int fd;			/* pidfd, or -1 */
	int gone;
};

struct targets {
	struct target *t;
	size_t n;
	int *fds;		/* pidfds in target order, for targets__fd() */
	size_t nr_fds;
};

/* A pidfd for @tg, or -1 when the kernel has none (ENOSYS; EINVAL for a
 * thread before PIDFD_THREAD); a task that is gone is marked so. */
static void target_open(struct target *tg)
{
	int fd = (int)syscall(SYS_pidfd_open, tg->id, tg->thread ? PIDFD_THREAD : 0);

	if (fd < 0 && errno == ESRCH)
		tg->gone = 1;
	tg->fd = fd < 0 ? -1 : fd;
}

/* 1 if @tg is gone, by a look at its pidfd or with a null signal. */
static int target_gone(struct target *tg)
{
	struct pollfd p = { .fd = tg->fd, .events = POLLIN };
	char path[32];

	if (tg->fd >= 0)
		return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR));
	if (!tg->thread)
		return kill((pid_t)tg->id, 0) < 0 && errno == ESRCH;
	/* A thread id is found under /proc too, though not listed there. */
	snprintf(path, sizeof(path), "/proc/%u/stat", tg->id);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

struct targets *targets__open(const uint32_t *pids, size_t nr_pids, const uint32_t *tids,
			      size_t nr_tids)
{
	struct targets *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->n = nr_pids + nr_tids;
	t->t = calloc(t->n ? t->n : 1, sizeof(*t->t));
	t->fds = calloc(t->n ? t->n : 1, sizeof(*t->fds));
	if (!t->t || !t->fds) {
		targets__free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < t->n; i++) {
		struct target *tg = &t->t[i];

		tg->thread = i >= nr_pids;
		tg->id = tg->thread ? tids[i - nr_pids] : pids[i];
		target_open(tg);
		if (tg->fd >= 0)
			t->fds[t->nr_fds++] = tg->fd;
	}
	return t;
}

size_t targets__nr_fds(const struct targets *t)
{
	return t ? t->nr_fds : 0;
}

int targets__fd(const struct targets *t, size_t i)
{
	return i < t->nr_fds ? t->fds[i] : -1;
}

size_t targets__check(struct targets *t)
{
	size_t i, alive = 0;

	if (!t)
		return 0;
	for (i = 0; i < t->n; i++) {
		if (!t->t[i].gone && target_gone(&t->t[i]))
			t->t[i].gone = 1;
		alive += !t->t[i].gone;
	}
	return alive;
}

void targets__free(struct targets *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; t->t && i < t->n; i++)
		if (t->t[i].fd >= 0)
			close(t->t[i].fd);
	free(t->t);
	free(t->fds);
	free(t);
}
