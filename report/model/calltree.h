/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * calltree.h - the call tree of one function (stkreport --callers FUNC,
 * --callees FUNC): its callees, top-down from it to the leaves, or its
 * callers, bottom-up from it to the roots, with the value each path
 * holds, merged by function (funcs.h: name and module).
 *
 * A sample counts once, at one occurrence of FUNC in its stack: for the
 * callees the outermost one (nearest the root, so a recursion shows as
 * FUNC again below it), for the callers the innermost one (nearest the
 * leaf, so outer recursive calls show as callers).  The root's value is
 * then FUNC's total.  Functions match FUNC by name in any module: each
 * module's FUNC is a root of its own.
 */
#ifndef STK_REPORT_CALLTREE_H
#define STK_REPORT_CALLTREE_H

#include <stdint.h>

#include "funcs.h"
#include "report.h"

struct calltree_node {
	const struct func_stat *fn;	/* its function (name, module) */
	uint64_t value;			/* what the samples through it hold */
	uint64_t self;			/* callees: of those, where it is the leaf */
	struct calltree_node *child;	/* first callee (callers: caller) */
	struct calltree_node *next;	/* next sibling */
};

struct calltree;

/*
 * calltree__new() - the tree of @func (a name) over @r's samples: with
 * @callers its callers, else its callees.  @r must outlive the tree.
 * Returns NULL with errno ENOMEM, or EINVAL (NULL arguments).
 */
struct calltree *calltree__new(const struct report *r, const char *func, int callers);
void calltree__free(struct calltree *t);	/* accepts NULL */

/* The roots, FUNC in each module it is in (none: no sample has it),
 * chained by ->next.  Borrowed until calltree__free(). */
const struct calltree_node *calltree__roots(const struct calltree *t);

/* The value of every sample kept, the shares' denominator. */
uint64_t calltree__total(const struct calltree *t);

#endif
