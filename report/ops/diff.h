/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diff.h - the comparison of two reports (stkreport diff): functions
 * matched by name and module file name, never by address, with their self
 * and total shares on each side; the differential stacks (folded text with
 * a base and a new value, FlameGraph's difffolded layout); and what makes
 * the two captures hard to compare (capture-level warnings).
 *
 *   report (base), report (new) -> diff__new() -> struct diff -> writers
 *
 * Both reports must be made with the same options (main_args.h does that)
 * and must outlive the diff.
 *
 * Functions, their self and total values and what those count are
 * funcs.h's (matched by name and module file name, never by address; only
 * the sampled task's stacks; samples, or blocked nanoseconds off-CPU).
 */
#ifndef STK_REPORT_DIFF_H
#define STK_REPORT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "funcs.h"
#include "output.h"
#include "report.h"

enum diff_normalize {
	/* Share of the side's total value, in percent. */
	DIFF_NORM_SAMPLES = 0,
	/*
	 * By recorded duration, in percent of one CPU for profiles (samples
	 * per second over the sampling frequency: a function that runs all
	 * the time on one CPU is 100) and in percent of the recording's wall
	 * time for off-CPU captures (blocked time per second: threads
	 * blocked in it the whole time, each adding 100).
	 */
	DIFF_NORM_TIME,
};

struct diff_opts {
	size_t sz;			/* sizeof(struct diff_opts) */
	enum diff_normalize normalize;
};

/* BASE is side 0, NEW side 1. */
enum { DIFF_BASE = 0, DIFF_NEW = 1 };

struct diff_side {
	const struct report *r;
	enum report_kind kind;
	uint64_t value;			/* sum of the samples' values kept */
	uint64_t events;		/* samples, or blocking episodes */
	uint64_t duration_ns;		/* recording time; 0: not recorded */
	uint64_t frequency;		/* profile: META frequency, Hz; 0: unknown */
	double per_100;			/* the value that is 100 (percent) */
};

struct diff_func {
	const char *name;		/* raw (escape to print); owned by the diff */
	const char *module;
	uint64_t self[2], total[2];	/* values, by side */
	double self_pct[2], total_pct[2];	/* normalized, percent */
	double self_delta, total_delta;	/* new - base, percentage points */
};

/* One stack of either side: its folded text (as `stkreport -f folded`
 * prints it, already escaped) and its value on each side in folded units
 * (samples, or microseconds for off-CPU), 0 where it is absent. */
struct diff_row {
	const char *stack;	/* the folded stack, NULL once texts were dropped */
	const struct group *g;	/* its stack either way: diff__row_text() */
	uint64_t value[2];
};

struct diff;

/*
 * diff__new() - compare @base with @new.  @o: the rendering options the
 * reports were made with (the folded texts follow them).
 * Returns NULL with errno: ENOMEM; EINVAL (bad @opts); ENODATA with
 * DIFF_NORM_TIME when a side cannot be normalized so (see
 * diff__normalizable(), which tells which side).
 */
struct diff *diff__new(const struct report *base, const struct report *new,
		       const struct output_opts *o, const struct diff_opts *opts);
void diff__free(struct diff *d);	/* accepts NULL */

/*
 * diff__normalizable() - whether @r can be normalized by @how: 0, or
 * -ENODATA for DIFF_NORM_TIME when its capture recorded no duration (no
 * META or STAT duration_ns and no flush intervals), or it is a profile
 * without a recorded frequency.
 */
int diff__normalizable(const struct report *r, enum diff_normalize how);

/* Side @i (DIFF_BASE or DIFF_NEW); borrowed, valid until diff__free(). */
const struct diff_side *diff__side(const struct diff *d, int i);

/*
 * diff__funcs() - every function of either side, biggest change first: by
 * |self_delta| + |total_delta| (a leaf that changed before its callers
 * whose total changed as much), then |total_delta|, then name and module.  *@n is set to the count.  Borrowed until diff__free().
 */
const struct diff_func *diff__funcs(const struct diff *d, size_t *n);

/* diff__rows() - every stack of either side, in byte order of the text.
 * *@n is set to the count.  Borrowed until diff__free(). */
const struct diff_row *diff__rows(const struct diff *d, size_t *n);

/* The folded stack of @row: held, or rendered again into @sb (output.h,
 * struct groups); *@text valid until @sb changes.  0 or -ENOMEM. */
int diff__row_text(struct diff *d, const struct diff_row *row, struct strbuf *sb,
		   const char **text);

/*
 * diff__warnings() - what makes the captures hard to compare, one
 * sentence each (raw capture strings inside: print escaped): different
 * kinds, frequencies or kernels; per side lost samples, stacks and
 * events, missed stacks, damage.  *@n is set to the count.  Borrowed
 * until diff__free().
 */
const char *const *diff__warnings(const struct diff *d, size_t *n);

/* ---- writers (out_diff.c) ---- */

struct diff_print_opts {
	size_t top;			/* functions listed; 0: all */
	const char *paths[2];		/* the captures, as named on the command line */
	enum diff_normalize normalize;	/* as given to diff__new() */
	enum funcs_sort sort;		/* -f top: the order, on NEW's values */
};

/*
 * out_diff__text() - the top functions by change, each with its self and
 * total change in points and each side's share and value; then one line
 * per side (kind, samples or blocked time, duration) and one per warning.
 * Every capture string is escaped (textsafe.h).  0, -ENOMEM, or -EIO.
 */
int out_diff__text(const struct diff *d, const struct diff_print_opts *o, FILE *f);

/*
 * out_diff__top() - -f top: every function (the first @o->top; 0: all)
 * with its self and total value on each side and their change in points,
 * ordered by @o->sort on NEW's values (then BASE's); then one line per
 * side.  0, -ENOMEM, or -EIO.
 */
int out_diff__top(const struct diff *d, const struct diff_print_opts *o, FILE *f);

/* out_diff__folded() - "stack base new" per row (FlameGraph's difffolded
 * layout).  0 or -EIO. */
int out_diff__folded(struct diff *d, FILE *f);

/* out_diff__svg() - a differential flame graph (report/model/flame.h): NEW's
 * shape, each frame red where its share grew, blue where it shrank; @title
 * NULL for the default; @inverted: an icicle.  0 or -errno. */
int out_diff__svg(struct diff *d, const char *title, int inverted, FILE *f);

#endif
