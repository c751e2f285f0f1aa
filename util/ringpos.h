/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ringpos.h - a BPF ring buffer's consumer and producer positions mapped
 * read-only, so that user space can tell whether records wait, or how far
 * the producer is, without a system call (libbpf 1.1 has no ring__*()
 * accessors).  The kernel's layout: the consumer page, then the producer
 * page, at the start of the ring's fd.
 */
#ifndef STK_RINGPOS_H
#define STK_RINGPOS_H

#include <stddef.h>

struct ringpos {
	const unsigned long *cons, *prod;
	size_t page;
};

/* Map @fd's positions into @rp.  0 or -errno; @rp is closed on error. */
int ringpos__open(struct ringpos *rp, int fd);

/* Unmap them.  Accepts a zeroed or closed @rp. */
void ringpos__close(struct ringpos *rp);

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
