/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timeline.h - samples (or blocked time) per stretch of a capture, for the
 * timeline of `stkreport info`: where a workload changed, so a user knows
 * what to pass to --since/--until.  A row chunk (CNTS/OFFC) falls in the
 * bucket of its interval's midpoint, the rule of slice.h, so a line of the
 * timeline is exactly what --since/--until with its bounds select.
 */
#ifndef STK_REPORT_TIMELINE_H
#define STK_REPORT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "slice.h"
#include "stk.h"

struct tl_point {
	uint64_t mid_ns;		/* midpoint, from the segment start */
	uint64_t count;			/* samples, or blocking episodes */
	uint64_t blocked_ns;
};

struct tl_segment {
	uint64_t start_ns;		/* 0 until the first row chunk */
	struct tl_point *points;	/* one per row chunk, file order */
	size_t nr_points, cap_points;
	int offcpu;			/* it had OFFC chunks */
};

/* Zero-initialised is empty and valid. */
struct timeline {
	struct tl_segment *segs;	/* indexed by stk_chunk.segment */
	size_t nr_segs;
};

struct tl_bucket {
	uint64_t start_ns, end_ns;	/* [start, end) from the segment start */
	uint64_t count, blocked_ns;
};

/*
 * timeline__add_chunk() - count @ch if it is a CNTS or OFFC chunk in
 * @slice (NULL: all; other chunks are ignored).  @seg_start is its
 * segment's mono_start_ns, or 0 when unknown (a lost header: the first row
 * chunk's t0 is used).
 * Returns 0 or -ENOMEM.
 */
int timeline__add_chunk(struct timeline *tl, const struct stk_chunk *ch, uint64_t seg_start,
			const struct time_slice *slice);

/*
 * timeline__buckets() - segment @seg's points summed into buckets of equal
 * width: a whole number of seconds from 1, 2, 5, 10, 15, 30, 60, 120, 300,
 * 600, 1800, 3600..., the smallest at least @min_width_ns (e.g. the flush
 * interval; 0 for none) that gives at most @max_buckets buckets.  Buckets
 * run from 0 to the last point; empty ones are included.
 * *@out is malloc()ed (NULL with *@n = 0 for a segment without rows).
 * Returns 0 or -ENOMEM.
 */
int timeline__buckets(const struct timeline *tl, size_t seg, uint64_t min_width_ns,
		      size_t max_buckets, struct tl_bucket **out, size_t *n, uint64_t *width_ns);

void timeline__free(struct timeline *tl);	/* empty and valid afterwards */

#endif
