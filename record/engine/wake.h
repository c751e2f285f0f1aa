/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wake.h - a source of records that wakes the recorder's loop on its first
 * record (or, the side-band, each quarter of its ring written), then is
 * held off for a few ms (EPOLLONESHOT), so that a burst of records costs a
 * few wakes and a quiet source none.  Instead of polling: what comes after
 * a quiet while is read at once (a Python code object, a copied stack whose
 * table is in), and a busy source
 * is read once per hold, without a syscall more: the hold grows while the
 * records keep coming, to WAKE_HOLD_MAX_NS (the longest a record waits), and
 * the source is armed again only once a read at the end of a hold finds
 * nothing.
 *
 * The loop: wake__add() each source to its epoll set; when epoll says one
 * fired, call wake__fired() and read it; when wake__due(), read it and
 * tell wake__read() whether there were records; if that re-armed it, read
 * it once more (the kernel's wake for what came just before may have been
 * taken by the re-arm's poll, as a perf event's is).
 */
#ifndef STKREC_WAKE_H
#define STKREC_WAKE_H

#include <stddef.h>
#include <stdint.h>

/* The first hold after a quiet while, and the longest. */
#define WAKE_HOLD_MIN_NS (2 * 1000000ull)
#define WAKE_HOLD_MAX_NS (10 * 1000000ull)

struct wake {
	int epfd;		/* the loop's epoll set */
	int fd;			/* what it watches: the source's fd or @group */
	int group;		/* an epoll set of the source's fds, or -1 */
	uint32_t tag;		/* epoll data */
	int armed;
	uint64_t rearm_at;	/* held: read (and re-armed if quiet) then */
	uint64_t hold;
	uint64_t wakes;		/* times it fired */
};

/*
 * wake__add() - watch @fds (@nr of them, records of one source: a group
 * is read as one) in @epfd, armed, with epoll data @tag.  @w is
 * initialised (wake__free() it, even on error).  Returns 0 or -errno.
 */
int wake__add(struct wake *w, int epfd, uint32_t tag, const int *fds, size_t nr);

/* wake__fired() - epoll said @w fired at @now (it is held now). */
void wake__fired(struct wake *w, uint64_t now);

/* wake__hold() - @w was just read at @now, not woken (the records of a
 * change may still be coming): read it again after a hold, as if it had
 * fired (not counted as a wake).  A hold ending sooner stays. */
void wake__hold(struct wake *w, uint64_t now);

/* wake__due() - is @w held, its hold over at @now? */
int wake__due(const struct wake *w, uint64_t now);

/* wake__next() - when @w is to be re-armed, or UINT64_MAX if it is armed. */
uint64_t wake__next(const struct wake *w);

/*
 * wake__read() - @w's hold is over (wake__due()) and the caller read it at
 * @now: @found records or none.  Found: held again, for twice as long (to
 * WAKE_HOLD_MAX_NS).  None: armed again, its next hold the shortest.
 * Returns 1 if it was armed (the caller reads once more), 0 if it is held
 * (an epoll_ctl() that failed too: tried again after a hold).
 */
int wake__read(struct wake *w, uint64_t now, int found);

/* wake__init() - @w watches nothing yet: wake__free() does nothing, and
 * wake__next() is UINT64_MAX. */
void wake__init(struct wake *w);

/* wake__free() - close what wake__add() opened (the group's epoll set);
 * the loop's set is the caller's.  Accepts an initialised @w. */
void wake__free(struct wake *w);

#endif
