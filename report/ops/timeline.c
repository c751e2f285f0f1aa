// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline of `stkreport info`: a point per row chunk, bucketed by
 * the midpoint rule of --since/--until (slice.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slice.h"
#include "timeline.h"
#include "util.h"

#define NS 1000000000ull

int timeline__add_chunk(struct timeline *tl, const struct stk_chunk *ch, uint64_t seg_start,
			const struct time_slice *slice)
{
	struct tl_segment *s;
	struct tl_point pt = { 0 };
	int sat = 0;	/* capped: info's totals say so */
	size_t i;

	if (ch->type != STK_CHUNK_CNTS && ch->type != STK_CHUNK_OFFC && ch->type != STK_CHUNK_TRCE)
		return 0;
	if (ch->segment >= tl->nr_segs) {
		size_t n = (size_t)ch->segment + 1;

		s = realloc(tl->segs, n * sizeof(*s));
		if (!s)
			return -ENOMEM;
		memset(s + tl->nr_segs, 0, (n - tl->nr_segs) * sizeof(*s));
		tl->segs = s;
		tl->nr_segs = n;
	}
	s = &tl->segs[ch->segment];
	if (!ch->t1_ns)
		return 0;	/* no interval: on no timeline */
	if (!s->start_ns)
		s->start_ns = seg_start ? seg_start : ch->t0_ns;
	if (!time_slice__keeps(slice, s->start_ns, ch->t0_ns, ch->t1_ns))
		return 0;
	if (s->nr_points == s->cap_points) {
		size_t n = s->cap_points ? 2 * s->cap_points : 64;
		struct tl_point *p = realloc(s->points, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->points = p;
		s->cap_points = n;
	}
	pt.mid_ns = time_slice__midpoint(s->start_ns, ch->t0_ns, ch->t1_ns);
	if (ch->type == STK_CHUNK_CNTS) {
		for (i = 0; i < ch->u.cnts.n; i++)
			pt.count = sat_add(pt.count, ch->u.cnts.rows[i].count, &sat);
	} else if (ch->type == STK_CHUNK_TRCE) {
		/* Every event alike: the timeline counts them all. */
		for (i = 0; i < ch->u.trce.n; i++)
			pt.count = sat_add(pt.count, ch->u.trce.rows[i].count, &sat);
	} else {
		s->offcpu = 1;
		for (i = 0; i < ch->u.offc.n; i++) {
			pt.count = sat_add(pt.count, ch->u.offc.rows[i].count, &sat);
			pt.blocked_ns = sat_add(pt.blocked_ns, ch->u.offc.rows[i].blocked_ns, &sat);
		}
	}
	s->points[s->nr_points++] = pt;
	return 0;
}

/* The next width after @w seconds: 1 2 5 10 15 30 60 120 300 600 1800
 * 3600, then doubling. */
static uint64_t next_width(uint64_t w)
{
	static const uint64_t steps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600 };
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] > w)
			return steps[i];
	return 2 * w;
}

int timeline__buckets(const struct timeline *tl, size_t seg, uint64_t min_width_ns,
		      size_t max_buckets, struct tl_bucket **out, size_t *n, uint64_t *width_ns)
{
	const struct tl_segment *s = seg < tl->nr_segs ? &tl->segs[seg] : NULL;
	uint64_t last = 0, w = 1, nb;
	struct tl_bucket *b;
	int sat = 0;	/* capped: info's totals say so */
	size_t i;

	*out = NULL;
	*n = 0;
	*width_ns = NS;
	if (!s || !s->nr_points)
		return 0;
	for (i = 0; i < s->nr_points; i++)
		if (s->points[i].mid_ns > last)
			last = s->points[i].mid_ns;
	if (!max_buckets)
		max_buckets = 1;
	while (w * NS < min_width_ns || last / (w * NS) + 1 > max_buckets)
		w = next_width(w);
	nb = last / (w * NS) + 1;
	b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0; i < nb; i++) {
		b[i].start_ns = i * w * NS;
		b[i].end_ns = (i + 1) * w * NS;
	}
	for (i = 0; i < s->nr_points; i++) {
		struct tl_bucket *x = &b[s->points[i].mid_ns / (w * NS)];

		x->count = sat_add(x->count, s->points[i].count, &sat);
		x->blocked_ns = sat_add(x->blocked_ns, s->points[i].blocked_ns, &sat);
	}
	*out = b;
	*n = nb;
	*width_ns = w * NS;
	return 0;
}

void timeline__free(struct timeline *tl)
{
	size_t i;

	for (i = 0; i < tl->nr_segs; i++)
		free(tl->segs[i].points);
	free(tl->segs);
	memset(tl, 0, sizeof(*tl));
}
