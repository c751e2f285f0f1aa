/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ringpos.h - a BPF ring buffer's consumer and producer positions mapped
 * read-only, and its size, so that user space can tell how far the
 * producer is, or how much came since it last looked, without a system
 * call (libbpf 1.1 has no ring__*() accessors).  The kernel's layout: the
 * consumer page, then the producer page, at the start of the ring's fd.
 */
#ifndef STKREC_RINGPOS_H
#define STKREC_RINGPOS_H

#include <stddef.h>
#include <stdint.h>

struct ringpos {
	const unsigned long *cons, *prod;
	size_t page;
	uint32_t size;		/* the ring's bytes */
	unsigned long mark;	/* the producer at ringpos__intervals() */
};

/* Map @fd's positions into @rp and read its size.  0 or -errno; @rp is
 * closed on error. */
int ringpos__open(struct ringpos *rp, int fd);

/* Unmap them.  Accepts a zeroed or closed @rp. */
void ringpos__close(struct ringpos *rp);

/*
 * ringpos_fit() - how many intervals (@max at most) of what came in the
 * last @elapsed (>= 1) fit in @room: @max when nothing came.
 */
static inline uint32_t ringpos_fit(uint64_t came, uint32_t elapsed, uint64_t room, uint32_t max)
{
	uint64_t q;

	if (!came)
		return max;
	q = room * (elapsed ? elapsed : 1) / came;
	return q < max ? (uint32_t)q : max;
}

/*
 * ringpos__intervals() - how many intervals (@max at most) of what the
 * producer reserved since the last call, which was @elapsed intervals ago,
 * fill half the ring at most (a ring never opened: @max).  Called once a
 * flush, which empties the ring: the rate it fills at.
 */
uint32_t ringpos__intervals(struct ringpos *rp, uint32_t max, uint32_t elapsed);

/* The producer's position now (every record reserved before it). */
static inline unsigned long ringpos__prod(const struct ringpos *rp)
{
	return __atomic_load_n(rp->prod, __ATOMIC_ACQUIRE);
}

/* Whether the consumer has reached position @pos. */
static inline int ringpos__reached(const struct ringpos *rp, unsigned long pos)
{
	return (long)(__atomic_load_n(rp->cons, __ATOMIC_ACQUIRE) - pos) >= 0;
}

#endif
