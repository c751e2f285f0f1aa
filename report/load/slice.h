/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * slice.h - --since/--until: a time slice of a capture, in whole flush
 * intervals.  One definition of which rows a slice holds, and one parser,
 * shared by every subcommand that takes the options (the report, info,
 * diff), so they cannot drift apart.
 *
 * A row (CNTS/OFFC) covers its chunk's interval [t0_ns, t1_ns].  It is in
 * the slice [since, until) when the interval's midpoint, counted from its
 * segment's start (the file header's mono_start_ns), is >= since and
 * < until.  Flushes are ~1 s apart (--flush-interval), so a slice is exact
 * to one interval; the midpoint rule makes adjacent slices (--until T and
 * --since T) disjoint and together the whole capture: no row is counted
 * twice or lost at the boundary.
 */
#ifndef STK_REPORT_SLICE_H
#define STK_REPORT_SLICE_H

#include <getopt.h>
#include <stdint.h>

struct time_slice {
	uint64_t since_ns;	/* 0: from the start */
	uint64_t until_ns;	/* UINT64_MAX: to the end */
};

/* The option values of --since and --until in struct option tables. */
enum {
	TIME_SLICE_OPT_SINCE = 0x5100,
	TIME_SLICE_OPT_UNTIL,
};

/* Entries for a getopt_long() table: { "since", ... }, { "until", ... }. */
#define TIME_SLICE_LONG_OPTS						\
	{ "since", required_argument, NULL, TIME_SLICE_OPT_SINCE },	\
	{ "until", required_argument, NULL, TIME_SLICE_OPT_UNTIL }

/* The --help lines of the two options (indented like the report's). */
#define TIME_SLICE_HELP							\
"      --since SECONDS  only the flush intervals (~1 s) whose midpoint is at\n" \
"                       or after SECONDS from the capture's start (fractions\n" \
"                       allowed); see the timeline of 'stkreport info'\n"	\
"      --until SECONDS  only those whose midpoint is before SECONDS\n"

/* The whole capture. */
#define TIME_SLICE_ALL ((struct time_slice){ 0, UINT64_MAX })

/*
 * time_slice__option() - handle getopt_long()'s result @c with @arg.
 * Returns 1 if @c was --since or --until and @arg a valid number of
 * seconds (decimal, fractions allowed, >= 0), 0 if @c is another option,
 * -EINVAL for a bad @arg.
 */
int time_slice__option(struct time_slice *s, int c, const char *arg);

/* 0, or -EINVAL when since >= until (an empty slice is a usage error). */
int time_slice__check(const struct time_slice *s);

/* 1 when @s is the whole capture. */
int time_slice__all(const struct time_slice *s);

/*
 * time_slice__keeps() - whether rows of the interval [@t0, @t1] of a
 * segment that started at @start (CLOCK_MONOTONIC ns) are in @s.  An
 * interval without times (t1 = 0) is kept only by the whole capture.
 */
int time_slice__keeps(const struct time_slice *s, uint64_t start, uint64_t t0, uint64_t t1);

/* The offset of [@t0, @t1]'s midpoint from @start, ns (0 if before it). */
uint64_t time_slice__midpoint(uint64_t start, uint64_t t0, uint64_t t1);

#endif
