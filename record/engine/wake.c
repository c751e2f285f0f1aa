// SPDX-License-Identifier: BSD-2-Clause
/*
 * wake.c - a record source held off between wakes (see wake.h): its fds in
 * the loop's epoll set with EPOLLONESHOT, so that once it fires, nothing
 * from it wakes the loop until it is re-armed.
 *
 * Kernel facts this relies on:
 *  - EPOLL_CTL_MOD polls the fd: what became ready while it was disarmed
 *    is reported then (a BPF ring buffer polls readable while it holds
 *    data; a perf event once after each wakeup, the poll taking it).
 *  - An epoll set polls readable while one of its fds does, so a group of
 *    fds (one perf event per CPU) is armed and held as one, by one
 *    EPOLL_CTL_MOD (nested epoll, Linux 2.6+).
 */
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "wake.h"

void wake__init(struct wake *w)
{
	*w = (struct wake){ .epfd = -1, .fd = -1, .group = -1, .armed = 1,
			    .hold = WAKE_HOLD_MIN_NS };
}

int wake__add(struct wake *w, int epfd, uint32_t tag, const int *fds, size_t nr)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t i;

	wake__init(w);
	if (!nr)
		return -EINVAL;
	w->epfd = epfd;
	w->tag = tag;
	w->fd = fds[0];
	if (nr > 1) {
		w->group = epoll_create1(EPOLL_CLOEXEC);
		if (w->group < 0)
			return -errno;
		for (i = 0; i < nr; i++)
			if (epoll_ctl(w->group, EPOLL_CTL_ADD, fds[i], &ev) < 0)
				return -errno;
		w->fd = w->group;
	}
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u32 = tag;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
		return -errno;
	return 0;
}

void wake__fired(struct wake *w, uint64_t now)
{
	w->wakes++;
	w->armed = 0;
	w->rearm_at = now + w->hold;
}

void wake__hold(struct wake *w, uint64_t now)
{
	if (w->fd < 0 || (!w->armed && w->rearm_at <= now + w->hold))
		return;
	w->armed = 0;
	w->rearm_at = now + w->hold;
}

int wake__due(const struct wake *w, uint64_t now)
{
	return !w->armed && w->fd >= 0 && now >= w->rearm_at;
}

uint64_t wake__next(const struct wake *w)
{
	return w->armed || w->fd < 0 ? UINT64_MAX : w->rearm_at;
}

int wake__read(struct wake *w, uint64_t now, int found)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = w->tag };

	if (found) {
		/* Busy: read again after a longer hold, still disarmed. */
		if (w->hold < WAKE_HOLD_MAX_NS)
			w->hold = w->hold * 2 < WAKE_HOLD_MAX_NS ? w->hold * 2 : WAKE_HOLD_MAX_NS;
		w->rearm_at = now + w->hold;
		return 0;
	}
	w->hold = WAKE_HOLD_MIN_NS;
	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0) {
		w->rearm_at = now + w->hold;
		return 0;
	}
	w->armed = 1;
	return 1;
}

void wake__free(struct wake *w)
{
	if (w->group >= 0)
		close(w->group);
	w->group = -1;
	w->fd = -1;
}
