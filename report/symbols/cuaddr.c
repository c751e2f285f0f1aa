// SPDX-License-Identifier: BSD-2-Clause
/*
 * Address to CU from the CUs' own DW_AT_low_pc/DW_AT_high_pc or
 * DW_AT_ranges (cuaddr.h): read once, sorted, then a binary search per
 * address, as scopes.c does for a CU's functions.
 */
#include <errno.h>
#include <stdlib.h>

#include "cuaddr.h"

struct cu_span {
	uint64_t begin, end;	/* DWARF addresses, [begin, end) */
	uint64_t max_end;	/* max end of this and every earlier span (sorted) */
	uint32_t order;		/* the CU's place in .debug_info */
	Dwarf_Die *cudie;	/* libdwfl's */
};

struct cu_addr {
	struct cu_span *spans;	/* sorted by begin, then order */
	size_t nr_spans;
	Dwarf_Addr bias;	/* module address = DWARF address + bias */
};

static int cu_span_cmp(const void *a, const void *b)
{
	const struct cu_span *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cu_addr__add(struct cu_addr *ca, size_t *cap, uint64_t begin, uint64_t end,
			uint32_t order, Dwarf_Die *cudie)
{
	if (ca->nr_spans == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct cu_span *p = realloc(ca->spans, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ca->spans = p;
		*cap = n;
	}
	ca->spans[ca->nr_spans++] = (struct cu_span){ .begin = begin, .end = end,
						      .order = order, .cudie = cudie };
	return 0;
}

struct cu_addr *cu_addr__new(Dwfl_Module *mod)
{
	struct cu_addr *ca = calloc(1, sizeof(*ca));
	Dwarf_Die *cudie = NULL;
	Dwarf_Addr bias = 0;
	uint32_t order = 0;
	size_t cap = 0, i;

	if (!ca)
		goto nomem;
	while ((cudie = dwfl_module_nextcu(mod, cudie, &bias))) {
		Dwarf_Addr base, begin, end;
		ptrdiff_t off = 0;

		ca->bias = bias;
		/* A CU whose ranges fail to read keeps those read before. */
		while ((off = dwarf_ranges(cudie, off, &base, &begin, &end)) > 0)
			if (begin < end && cu_addr__add(ca, &cap, begin, end, order, cudie))
				goto nomem;
		order++;
	}
	if (!ca->nr_spans)
		return ca;
	qsort(ca->spans, ca->nr_spans, sizeof(*ca->spans), cu_span_cmp);
	for (i = 0; i < ca->nr_spans; i++) {
		uint64_t prev = i ? ca->spans[i - 1].max_end : 0;

		ca->spans[i].max_end = ca->spans[i].end > prev ? ca->spans[i].end : prev;
	}
	return ca;
nomem:
	cu_addr__free(ca);
	errno = ENOMEM;
	return NULL;
}

void cu_addr__free(struct cu_addr *ca)
{
	if (!ca)
		return;
	free(ca->spans);
	free(ca);
}

Dwarf_Die *cu_addr__find(const struct cu_addr *ca, uint64_t pc, Dwarf_Addr *bias)
{
	const struct cu_span *best = NULL;
	size_t lo = 0, hi = ca->nr_spans, i;
	uint64_t a = pc - ca->bias;	/* wraps as libdwfl's does */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ca->spans[mid].begin <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Every span that can hold @a is at or before lo - 1; max_end says
	 * when no earlier one reaches it. */
	for (i = lo; i > 0 && ca->spans[i - 1].max_end > a; i--) {
		const struct cu_span *c = &ca->spans[i - 1];

		if (a < c->end && (!best || c->order < best->order))
			best = c;
	}
	if (!best)
		return NULL;
	*bias = ca->bias;
	return best->cudie;
}
