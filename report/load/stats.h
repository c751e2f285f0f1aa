/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.h - a STAT chunk's counters kept past the chunk: the capture, info
 * and merge each hold the last one a segment had, names copied.
 */
#ifndef STK_REPORT_STATS_H
#define STK_REPORT_STATS_H

#include <stddef.h>

#include "stk.h"

/*
 * stats__copy() - replace *@stats (*@nr of them, freed first) with a copy of
 * the @n counters at @src: STAT values are totals, so the last chunk wins.
 * 0 or -ENOMEM (then *@stats is empty).
 */
int stats__copy(struct stk_stat **stats, size_t *nr, const struct stk_stat *src, size_t n);

/* Free *@stats and their names; back to empty. */
void stats__free(struct stk_stat **stats, size_t *nr);

#endif
