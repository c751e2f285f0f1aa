// SPDX-License-Identifier: BSD-2-Clause
/*
 * The comparison model of stkreport diff (diff.h).  Functions are summed
 * by funcs.h in one table shared by both sides, so two builds of a
 * program, whose addresses differ, meet in the same entries.  Stacks are rendered by the folded writer's own
 * renderer, so a diff's stacks are exactly `stkreport -f folded`'s.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util.h"

struct diff {
	struct diff_side sides[2];
	struct funcs *funcs;		/* both sides' functions */
	size_t nr_funcs;
	struct diff_func *sorted;
	struct groups rows;		/* the folded stacks, raw values by side */
	struct diff_row *sorted_rows;
	char **warnings;
	size_t nr_warnings, cap_warnings;
};

static int diff__add_side(struct diff *d, int side, const struct output_opts *o)
{
	const struct report *r = d->sides[side].r;
	struct strbuf sb = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];
		uint64_t v = sample_value(r, s);

		d->sides[side].value += v;
		err = funcs__add(d->funcs, side, r, s);
		if (err)
			break;
		strbuf__reset(&sb);
		err = out_folded__render(&sb, r, s, o);
		err = err ?: groups__add(&d->rows, strbuf__str(&sb), sb.len, side, v, r, s);
	}
	strbuf__free(&sb);
	return err;
}

static uint64_t capture_duration(const struct capture *c)
{
	const char *m = capture__meta(c, "duration_ns");
	uint64_t t0 = UINT64_MAX, t1 = 0;
	size_t i;

	/* A slice lasts from its first to its last row, not the recording. */
	if (!c->sliced && m && *m) {
		char *end;
		unsigned long long v = strtoull(m, &end, 10);

		if (!*end && v)
			return v;
	}
	if (!c->sliced && capture__stat(c, "duration_ns"))
		return capture__stat(c, "duration_ns");
	for (i = 0; i < c->nr_segs; i++) {
		if (!c->segs[i].t_last)
			continue;
		if (c->segs[i].t_first < t0)
			t0 = c->segs[i].t_first;
		if (c->segs[i].t_last > t1)
			t1 = c->segs[i].t_last;
	}
	return t1 > t0 ? t1 - t0 : 0;
}

static uint64_t capture_frequency(const struct capture *c)
{
	const char *m = capture__meta(c, "frequency");
	char *end;
	unsigned long long v;

	if (!m || !*m)
		return 0;
	v = strtoull(m, &end, 10);
	return *end ? 0 : v;
}

int diff__normalizable(const struct report *r, enum diff_normalize how)
{
	if (how != DIFF_NORM_TIME)
		return 0;
	if (!capture_duration(r->cap))
		return -ENODATA;
	if (r->kind == REPORT_PROFILE && !capture_frequency(r->cap))
		return -ENODATA;
	return 0;
}

static double pct(uint64_t v, double per_100)
{
	return per_100 > 0 ? 100.0 * (double)v / per_100 : 0.0;
}

static double absd(double v)
{
	return v < 0 ? -v : v;
}

/* How much a function changed: its self and total changes together, so a
 * leaf that changed comes before its callers whose total changed alike. */
static double change(const struct diff_func *f)
{
	return absd(f->self_delta) + absd(f->total_delta);
}

static int func_cmp(const void *a, const void *b)
{
	const struct diff_func *x = a, *y = b;
	double kx = change(x), ky = change(y);
	int c;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (absd(x->total_delta) != absd(y->total_delta))
		return absd(x->total_delta) > absd(y->total_delta) ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

/* By text; once the texts were dropped (output.h, struct groups), by the
 * groups' fixed order instead. */
static int row_cmp(const void *a, const void *b)
{
	const struct group *x = ((const struct diff_row *)a)->g, *y = ((const struct diff_row *)b)->g;

	return group__cmp_text(x, y);
}

int diff__row_text(struct diff *d, const struct diff_row *row, struct strbuf *sb,
		   const char **text)
{
	return group__text(&d->rows, row->g, sb, text);
}

static int diff__warn(struct diff *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int diff__warn(struct diff *d, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (array__grow((void **)&d->warnings, &d->cap_warnings, d->nr_warnings, sizeof(*d->warnings)))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	d->warnings[d->nr_warnings++] = s;
	return 0;
}

static const char *side_name(int side)
{
	return side == DIFF_BASE ? "base" : "new";
}

/* Recorder counters of lost data, with what they mean. */
static const struct {
	const char *stat, *what;
} losses[] = {
	{ "counts_map_full", "samples dropped (counts map full)" },
	{ "stacks_map_full", "stacks lost (no room: --stack-storage-size)" },
	{ "stack_lookup_missing", "stacks lost before they were written" },
	{ "events_lost", "process events lost" },
	{ "mmap_events_lost", "mmap records lost" },
	{ "offcpu_start_map_full", "blocking episodes not timed (map full)" },
	{ "offcpu_waker_map_full", "wakers not kept (map full)" },
};

static int diff__side_warnings(struct diff *d, int side)
{
	const struct diff_side *s = &d->sides[side];
	const struct capture *c = s->r->cap;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(losses) / sizeof(losses[0]); i++) {
		uint64_t v = capture__stat(c, losses[i].stat);

		if (v)
			err = diff__warn(d, "%s: %" PRIu64 " %s", side_name(side), v, losses[i].what);
	}
	if (!err && s->r->missing_stacks)
		err = diff__warn(d, "%s: %" PRIu64 " stack traces could not be displayed%s",
				 side_name(side), s->r->missing_stacks,
				 s->r->missing_map_full ? " (no room for them)" : "");
	if (!err && c->damaged)
		err = diff__warn(d, "%s: damaged capture, compared what was recovered: %s",
				 side_name(side), c->first_error ? c->first_error : "unknown damage");
	else if (!err && !c->summary.closed)
		err = diff__warn(d, "%s: capture not closed cleanly (recording killed?)",
				 side_name(side));
	return err;
}

static int diff__warnings_make(struct diff *d)
{
	const struct diff_side *b = &d->sides[DIFF_BASE], *n = &d->sides[DIFF_NEW];
	const char *kb = capture__meta(b->r->cap, "kernel_release");
	const char *kn = capture__meta(n->r->cap, "kernel_release");
	int err = 0;

	if (b->kind != n->kind)
		err = diff__warn(d, "different kinds: base is %s, new is %s; their shares measure different things",
				 report_kind__name(b->kind), report_kind__name(n->kind));
	if (!err && b->kind == REPORT_PROFILE && n->kind == REPORT_PROFILE &&
	    b->frequency != n->frequency)
		err = diff__warn(d, "different frequencies: base %" PRIu64 " Hz, new %" PRIu64 " Hz (0: not recorded)",
				 b->frequency, n->frequency);
	if (!err && kb && kn && strcmp(kb, kn) != 0)
		err = diff__warn(d, "different kernels: base %s, new %s", kb, kn);
	err = err ?: diff__side_warnings(d, DIFF_BASE);
	err = err ?: diff__side_warnings(d, DIFF_NEW);
	return err;
}

static void diff__side_init(struct diff_side *s, const struct report *r,
			    enum diff_normalize how)
{
	s->r = r;
	s->kind = r->kind;
	s->events = r->total_count;
	s->duration_ns = capture_duration(r->cap);
	s->frequency = r->kind == REPORT_PROFILE ? capture_frequency(r->cap) : 0;
	if (how == DIFF_NORM_SAMPLES)
		s->per_100 = (double)s->value;
	else if (r->kind == REPORT_PROFILE)	/* samples per second / frequency */
		s->per_100 = (double)s->duration_ns / 1e9 * (double)s->frequency;
	else					/* blocked ns per ns */
		s->per_100 = (double)s->duration_ns;
}

struct diff *diff__new(const struct report *base, const struct report *new,
		       const struct output_opts *o, const struct diff_opts *opts)
{
	const struct report *r[2] = { base, new };
	struct func_stat *const *all;
	struct diff *d = NULL;
	size_t i;
	int err = -EINVAL, side;

	if (!base || !new || !o || !opts || opts->sz < sizeof(*opts) ||
	    (opts->normalize != DIFF_NORM_SAMPLES && opts->normalize != DIFF_NORM_TIME))
		goto fail;
	err = -ENODATA;
	if (diff__normalizable(base, opts->normalize) || diff__normalizable(new, opts->normalize))
		goto fail;
	err = -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->funcs = funcs__new(FUNCS_BY_FUNC);
	if (!d->funcs)
		goto fail;
	d->rows.render = out_folded__render;
	d->rows.o = o;
	d->rows.budget = output__text_budget((base->cap ? base->cap->summary.file_size : 0) +
					     (new->cap ? new->cap->summary.file_size : 0));
	for (side = 0; side < 2; side++) {
		d->sides[side].r = r[side];
		err = diff__add_side(d, side, o);
		if (err)
			goto fail;
		diff__side_init(&d->sides[side], r[side], opts->normalize);
	}
	err = -ENOMEM;
	all = funcs__all(d->funcs, &d->nr_funcs);
	d->sorted = calloc(d->nr_funcs ? d->nr_funcs : 1, sizeof(*d->sorted));
	d->sorted_rows = calloc(d->rows.n ? d->rows.n : 1, sizeof(*d->sorted_rows));
	if (!d->sorted || !d->sorted_rows)
		goto fail;
	for (i = 0; i < d->nr_funcs; i++) {
		struct diff_func *f = &d->sorted[i];

		f->name = all[i]->name;
		f->module = all[i]->module;
		memcpy(f->self, all[i]->self, sizeof(f->self));
		memcpy(f->total, all[i]->total, sizeof(f->total));
		for (side = 0; side < 2; side++) {
			f->self_pct[side] = pct(f->self[side], d->sides[side].per_100);
			f->total_pct[side] = pct(f->total[side], d->sides[side].per_100);
		}
		f->self_delta = f->self_pct[DIFF_NEW] - f->self_pct[DIFF_BASE];
		f->total_delta = f->total_pct[DIFF_NEW] - f->total_pct[DIFF_BASE];
	}
	qsort(d->sorted, d->nr_funcs, sizeof(*d->sorted), func_cmp);
	for (i = 0; i < d->rows.n; i++) {
		struct diff_row *row = &d->sorted_rows[i];

		row->g = d->rows.all[i];
		row->stack = row->g->text;
		for (side = 0; side < 2; side++)
			row->value[side] = out_value(r[side], d->rows.all[i]->value[side]);
	}
	qsort(d->sorted_rows, d->rows.n, sizeof(*d->sorted_rows), row_cmp);
	err = diff__warnings_make(d);
	if (err)
		goto fail;
	return d;
fail:
	diff__free(d);
	errno = -err;
	return NULL;
}

void diff__free(struct diff *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_warnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->sorted);
	free(d->sorted_rows);
	funcs__free(d->funcs);
	groups__free(&d->rows);
	free(d);
}

const struct diff_side *diff__side(const struct diff *d, int i)
{
	return &d->sides[i ? DIFF_NEW : DIFF_BASE];
}

const struct diff_func *diff__funcs(const struct diff *d, size_t *n)
{
	*n = d->nr_funcs;
	return d->sorted;
}

const struct diff_row *diff__rows(const struct diff *d, size_t *n)
{
	*n = d->rows.n;
	return d->sorted_rows;
}

const char *const *diff__warnings(const struct diff *d, size_t *n)
{
	*n = d->nr_warnings;
	return (const char *const *)d->warnings;
}
