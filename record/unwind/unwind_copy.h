/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_copy.h - unwinding a copy of a user stack in user space, with
 * the unwinder's tables: the stacks BPF deferred (bpf/stkrec.h,
 * STKREC_UW_DEFERRED) because a table was not built yet when they were
 * sampled.  The same walk as bpf/unwind.bpf.h's uw_step(), with the
 * process's mappings as the recorder knows them now and the stack's
 * memory read only from the copy.
 */
#ifndef STKREC_UNWIND_COPY_H
#define STKREC_UNWIND_COPY_H

#include <stdint.h>

#include "stk.h"
#include "stkrec.h"

struct unwinder;

/* The executable mapping of process @tgid holding @addr, or NULL. */
typedef const struct stk_mapping *(*unwind_copy_mapping_fn)(void *ctx, uint32_t tgid,
							    uint64_t addr);

struct unwind_copy_stats {
	uint64_t unwound;	/* copies unwound */
	uint64_t pending;	/* of which met a table still being built
				 * (a frame-pointer step there, or a stop) */
	uint64_t stops[STKREC_UW_NR_STOPS]; /* of which ended with that marker */
	uint64_t fp_steps;	/* frames found by frame pointer in them */
};

/*
 * unwinder__unwind_copy() - the frames of @d into @out (nr and ips, with
 * the stop marker as BPF writes it when the walk stops early), looking up
 * mappings with @mapping(@ctx, ...).  @fp: a mapping without a table
 * takes a frame-pointer step (--unwind=auto), else the walk stops there.
 * Returns 1 if the walk met a table still being built (or a mapping not
 * loaded yet), else 0.  Unless @last, such a walk is not counted in the
 * stats (the caller tries again once the table is in).
 */
int unwinder__unwind_copy(struct unwinder *u, const struct stkrec_defer *d, int fp,
			  unwind_copy_mapping_fn mapping, void *ctx, int last, struct stkrec_stack *out);

void unwinder__copy_stats(const struct unwinder *u, struct unwind_copy_stats *st);

#endif
