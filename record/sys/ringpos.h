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
	unsigned long mark;	/* the producer at ringpos__can_wait() */
};

/* Map @fd's positions into @rp and read its size.  0 or -errno; @rp is
 * closed on error. */
int ringpos__open(struct ringpos *rp, int fd);

/* Unmap them.  Accepts a zeroed or closed @rp. */
void ringpos__close(struct ringpos *rp);

/*
 * ringpos__can_wait() - whether what the producer reserved since the last
 * call, @intervals times over, fills half the ring at most (a ring never
 * opened: yes).  Called once a flush, which empties the ring: the rate it
 * fills at.
 */
int ringpos__can_wait(struct ringpos *rp, uint32_t intervals);

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
