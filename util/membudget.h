/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * membudget.h - one budget for the memory stkrec holds in user space
 * (--user-memory): an accountant, not an allocator.  A holder takes the
 * bytes it is about to keep (membudget__take()) and gives them back when
 * it frees them (membudget__give()); what it may drop and build again
 * later (a cache: symbol tables, saved unwind rows) it registers as a
 * shrinker, which a take that does not fit asks to free room first, the
 * least recently used first, whoever the taker is.  So every holder of
 * the recorder shares one limit without knowing the others.
 *
 * Transient buffers (a file being read, one flush's queue) are not
 * counted: the budget bounds what stays.
 *
 * Not thread-safe, by design: only the recorder's main thread calls it.
 * Work done on another thread hands its result to the main thread, which
 * takes the bytes when it keeps them.
 *
 * A zero-initialised struct membudget has a limit of 0 (every take of
 * more than 0 bytes fails); membudget__init() sets one.
 */
#ifndef STK_UTIL_MEMBUDGET_H
#define STK_UTIL_MEMBUDGET_H

#include <stdint.h>

#define MEMBUDGET_MAX_SHRINKERS 4

/*
 * A cache a take may shrink: @shrink frees what it can of @want bytes or
 * more (giving each freed byte back with membudget__give() as it goes,
 * and never what its owner is using at the moment) and returns the
 * number of bytes it gave back.
 */
struct membudget_shrinker {
	uint64_t (*shrink)(void *ctx, uint64_t want);
	void *ctx;
};

struct membudget {
	uint64_t limit;		/* bytes that may be held at once */
	uint64_t used;		/* bytes held now */
	uint64_t peak;		/* the most held at once */
	uint64_t refused;	/* takes refused (-ENOSPC) */
	struct membudget_shrinker shrinkers[MEMBUDGET_MAX_SHRINKERS];
	unsigned int nr_shrinkers;
	int shrinking;		/* a shrinker runs: no shrinking from inside it */
};

/* An empty budget of @limit bytes, without shrinkers. */
void membudget__init(struct membudget *b, uint64_t limit);

/*
 * membudget__add_shrinker() - register a cache @fn(@ctx, want) that takes
 * shrink, asked in the order they were added.  Returns 0, or -ENOSPC when
 * MEMBUDGET_MAX_SHRINKERS are registered already.
 */
int membudget__add_shrinker(struct membudget *b, uint64_t (*fn)(void *ctx, uint64_t want),
			    void *ctx);

/* membudget__remove_shrinker() - unregister @fn(@ctx) (its owner goes
 * away before the budget).  Returns 0 or -ENOENT. */
int membudget__remove_shrinker(struct membudget *b, uint64_t (*fn)(void *ctx, uint64_t want),
			       void *ctx);

/*
 * membudget__take() - account for @bytes about to be kept.  When they do
 * not fit, the shrinkers are asked for the difference first.  A take
 * larger than the whole limit is refused without shrinking anything.
 * Returns 0 (now counted in used), or -ENOSPC (nothing changed but what
 * the shrinkers freed; counted in refused).
 */
int membudget__take(struct membudget *b, uint64_t bytes);

/* membudget__give() - @bytes taken before are free again. */
void membudget__give(struct membudget *b, uint64_t bytes);

#endif
