/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture_tasks.h - what tasks a capture holds and when, as short phrases,
 * for the error that a filter or time slice matched nothing.
 */
#ifndef STK_REPORT_CAPTURE_TASKS_H
#define STK_REPORT_CAPTURE_TASKS_H

#include "capture.h"
#include "util.h"

/* Tasks listed at most; the rest are counted ("and 12 more"). */
#define CAPTURE_TASKS_MAX_LISTED 8

/*
 * capture_tasks__describe() - append to @sb "pids 100 (fx_pie), 200 (fx_nopie)"
 * (or "tids ..." with @by_tid): the processes (threads) that have rows in
 * @cap, the ones with the most samples (off-CPU: episodes) first, each
 * with the comm of its busiest row, at most CAPTURE_TASKS_MAX_LISTED of them,
 * then "and N more".  Names are raw: the caller escapes the line.  Appends
 * "no samples" when @cap has no rows.
 * Returns 0 or -ENOMEM.
 */
int capture_tasks__describe(const struct capture *cap, int by_tid, struct strbuf *sb);

/*
 * capture_tasks__span() - the time the rows of @cap cover, from the start
 * of its first segment (where --since and --until count from): *@from_ns
 * the earliest row interval's start, *@to_ns the latest one's end.
 * Returns 0, or -ENODATA when no row has a time.
 */
int capture_tasks__span(const struct capture *cap, uint64_t *from_ns, uint64_t *to_ns);

/* capture_tasks__any() - 1 when @cap has at least one row with a count. */
int capture_tasks__any(const struct capture *cap);

#endif
