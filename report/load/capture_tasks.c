// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_tasks.c - the tasks a capture holds and when (capture_tasks.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture_tasks.h"

struct holder {
	uint32_t id;
	char comm[16];
	uint64_t count;		/* all its rows */
	uint64_t comm_count;	/* the row its comm comes from */
};

static int by_id(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int capture_tasks__span(const struct capture *cap, uint64_t *from_ns, uint64_t *to_ns)
{
	uint64_t start = 0, from = UINT64_MAX, to = 0;
	size_t i;

	for (i = 0; i < cap->nr_segs; i++) {
		const struct cap_segment *s = &cap->segs[i];

		if (!s->t_last)
			continue;
		if (!start)
			start = s->info.mono_start_ns ? s->info.mono_start_ns : s->t_first;
		if (s->t_first < from)
			from = s->t_first;
		if (s->t_last > to)
			to = s->t_last;
	}
	if (!to)
		return -ENODATA;
	*from_ns = from > start ? from - start : 0;
	*to_ns = to > start ? to - start : 0;
	return 0;
}

int capture_tasks__any(const struct capture *cap)
{
	size_t i, j;

	for (i = 0; i < cap->nr_segs; i++) {
		for (j = 0; j < cap->segs[i].nr_counts; j++)
			if (cap->segs[i].counts[j]->row.count)
				return 1;
		for (j = 0; j < cap->segs[i].nr_offc; j++)
			if (cap->segs[i].offc[j]->row.count)
				return 1;
	}
	return 0;
}

/* Every row as one holder entry, into *@out (@n entries). */
static int collect(const struct capture *cap, int by_tid, struct holder **out, size_t *n)
{
	size_t i, j, nr = 0, k = 0;
	struct holder *h;

	for (i = 0; i < cap->nr_segs; i++)
		nr += cap->segs[i].nr_counts + cap->segs[i].nr_offc;
	h = calloc(nr ? nr : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (i = 0; i < cap->nr_segs; i++) {
		const struct cap_segment *s = &cap->segs[i];

		for (j = 0; j < s->nr_counts; j++) {
			const struct stk_count *r = &s->counts[j]->row;

			h[k].id = by_tid ? r->tid : r->tgid;
			memcpy(h[k].comm, r->comm, sizeof(h[k].comm));
			h[k].count = h[k].comm_count = r->count;
			k += r->count != 0;
		}
		for (j = 0; j < s->nr_offc; j++) {
			const struct stk_offcpu *r = &s->offc[j]->row;

			h[k].id = by_tid ? r->target.tid : r->target.tgid;
			memcpy(h[k].comm, r->target.comm, sizeof(h[k].comm));
			h[k].count = h[k].comm_count = r->count;
			k += r->count != 0;
		}
	}
	*out = h;
	*n = k;
	return 0;
}

int capture_tasks__describe(const struct capture *cap, int by_tid, struct strbuf *sb)
{
	struct holder *h = NULL;
	size_t n = 0, i, m = 0;
	int err;

	err = collect(cap, by_tid, &h, &n);
	if (err)
		return err;
	if (!n) {
		free(h);
		return strbuf__adds(sb, "no samples");
	}
	/* One entry per id: counts summed, the comm of its busiest row. */
	qsort(h, n, sizeof(*h), by_id);
	for (i = 1; i < n; i++) {
		if (h[i].id == h[m].id) {
			h[m].count += h[i].count;
			if (h[i].comm_count > h[m].comm_count) {
				memcpy(h[m].comm, h[i].comm, sizeof(h[m].comm));
				h[m].comm_count = h[i].comm_count;
			}
		} else {
			h[++m] = h[i];
		}
	}
	n = m + 1;
	qsort(h, n, sizeof(*h), by_count_desc);
	err = strbuf__adds(sb, by_tid ? (n > 1 ? "tids " : "tid ") : (n > 1 ? "pids " : "pid "));
	for (i = 0; i < n && i < CAPTURE_TASKS_MAX_LISTED && !err; i++)
		err = strbuf__addf(sb, "%s%" PRIu32 " (%.16s)", i ? ", " : "", h[i].id, h[i].comm);
	if (!err && n > CAPTURE_TASKS_MAX_LISTED)
		err = strbuf__addf(sb, " and %zu more", n - CAPTURE_TASKS_MAX_LISTED);
	free(h);
	return err;
}
