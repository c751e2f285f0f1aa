// SPDX-License-Identifier: BSD-2-Clause
/*
 * The inline-scope index (scopes.h): per CU, the address ranges of its
 * top-level DIEs, sorted, so that the function holding an address is found
 * by binary search and only it is walked, down the first child holding the
 * address at each level, as libdw's scope walk goes (libdw_visit_scopes.c).
 */
#include <dwarf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "idmap.h"
#include "scopes.h"

/* A top-level DIE of a CU with an address range (a function, mostly). */
struct cu_range {
	uint64_t begin, end;	/* DWARF addresses, [begin, end) */
	uint64_t max_end;	/* max end of this and every earlier range (sorted) */
	uint32_t order;		/* DIE order among the CU's children */
	Dwarf_Die die;
};

/*
 * What dwarf_getscopes() finds by walking every top-level DIE of the CU on
 * each call (then twice more for an inlined address: the abstract origin,
 * dwarf_getscopes_die()), read once per CU: at 10^5 addresses those walks
 * were a third of the report's instructions.  @exact: the CU has
 * something this index does not model (imported units, a DWARF error), so
 * its addresses take libdw's own walk.
 */
struct cu_index {
	int exact;
	struct cu_range *ranges;	/* sorted by begin, then DIE order */
	size_t nr_ranges;
	Dwarf_Off *tops;		/* offsets of every top-level DIE, ascending */
	size_t nr_tops;
};

struct scope_index {
	struct idmap cus;			/* CU DIE offset -> struct cu_index */
};

static void cu_index__free(struct cu_index *ci)
{
	if (!ci)
		return;
	free(ci->ranges);
	free(ci->tops);
	free(ci);
}

struct scope_index *scope_index__new(void)
{
	return calloc(1, sizeof(struct scope_index));
}

void scope_index__free(struct scope_index *si)
{
	size_t i = 0;
	uint64_t v;

	if (!si)
		return;
	while (idmap__next(&si->cus, &i, NULL, &v))
		cu_index__free((struct cu_index *)(uintptr_t)v);
	idmap__release(&si->cus);
	free(si);
}

/* The DIEs that libdw's scope walk descends into (libdw_visit_scopes.c). */
static int may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return 1;
	}
	return 0;
}

/*
 * Whether dwarf_ranges() can find any range in @die: it needs the DIE's own
 * DW_AT_low_pc (DW_AT_high_pc may come from an abstract origin) or its own
 * DW_AT_ranges, and without either returns 0 -- after searching the
 * origin chain for DW_AT_high_pc.  The abbreviation tells it for nothing,
 * and most top-level DIEs are types and declarations.
 */
static int die_may_have_pc(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cu_index__add_range(struct cu_index *ci, size_t *cap, uint64_t begin, uint64_t end,
			       uint32_t order, const Dwarf_Die *die)
{
	if (ci->nr_ranges == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct cu_range *p = realloc(ci->ranges, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ci->ranges = p;
		*cap = n;
	}
	ci->ranges[ci->nr_ranges++] = (struct cu_range){ .begin = begin, .end = end,
							 .order = order, .die = *die };
	return 0;
}

static int cu_index__add_top(struct cu_index *ci, size_t *cap, Dwarf_Off off)
{
	if (ci->nr_tops == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		Dwarf_Off *p = realloc(ci->tops, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ci->tops = p;
		*cap = n;
	}
	ci->tops[ci->nr_tops++] = off;
	return 0;
}

/* Reads the address ranges of the top-level DIEs of @cudie.  Any DWARF
 * error marks the index exact: libdw's walk then decides, errors and all. */
static struct cu_index *cu_index__build(Dwarf_Die *cudie)
{
	struct cu_index *ci = calloc(1, sizeof(*ci));
	size_t cap_r = 0, cap_t = 0, i;
	uint32_t order = 0;
	Dwarf_Die child;
	int r;

	if (!ci)
		return NULL;
	r = dwarf_child(cudie, &child);
	if (r < 0)
		ci->exact = 1;
	while (r == 0 && !ci->exact) {
		Dwarf_Addr base, begin, end;
		ptrdiff_t off = 0;

		/* libdw walks an imported unit's children in place. */
		if (dwarf_tag(&child) == DW_TAG_imported_unit) {
			ci->exact = 1;
			break;
		}
		if (cu_index__add_top(ci, &cap_t, dwarf_dieoffset(&child)))
			goto nomem;
		if (die_may_have_pc(&child))
			while ((off = dwarf_ranges(&child, off, &base, &begin, &end)) > 0)
				if (begin < end &&
				    cu_index__add_range(ci, &cap_r, begin, end, order, &child))
					goto nomem;
		if (off < 0)
			ci->exact = 1;
		order++;
		r = dwarf_siblingof(&child, &child);
		if (r < 0)
			ci->exact = 1;
	}
	if (ci->exact || !ci->nr_ranges)	/* no ranges: ranges is NULL */
		return ci;
	qsort(ci->ranges, ci->nr_ranges, sizeof(*ci->ranges), cu_range_cmp);
	for (i = 0; i < ci->nr_ranges; i++) {
		uint64_t prev = i ? ci->ranges[i - 1].max_end : 0;

		ci->ranges[i].max_end = ci->ranges[i].end > prev ? ci->ranges[i].end : prev;
	}
	return ci;
nomem:
	cu_index__free(ci);
	errno = ENOMEM;
	return NULL;
}

/* The first top-level DIE (in DIE order, as libdw walks them) whose ranges
 * hold @pc, or NULL. */
static const struct cu_range *cu_index__find(const struct cu_index *ci, uint64_t pc)
{
	const struct cu_range *best = NULL;
	size_t lo = 0, hi = ci->nr_ranges, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->ranges[mid].begin <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Every range that can hold pc is at or before lo - 1; max_end says
	 * when no earlier one reaches it. */
	for (i = lo; i > 0 && ci->ranges[i - 1].max_end > pc; i--) {
		const struct cu_range *c = &ci->ranges[i - 1];

		if (pc < c->end && (!best || c->order < best->order))
			best = c;
	}
	return best;
}

static int cu_index__is_top(const struct cu_index *ci, Dwarf_Off off)
{
	size_t lo = 0, hi = ci->nr_tops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->tops[mid] == off)
			return 1;
		if (ci->tops[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Narrows [*lo, *hi) to what lies on @pc's side of [begin, end), a range
 * that does not hold @pc. */
static void span_exclude(uint64_t pc, uint64_t begin, uint64_t end, uint64_t *lo, uint64_t *hi)
{
	if (begin >= end)
		return;
	if (end <= pc && end > *lo)
		*lo = end;
	else if (begin > pc && begin < *hi)
		*hi = begin;
}

/*
 * Narrows [*lo, *hi) by @die's ranges: to the one holding @pc when @holds,
 * else to the gap between them around @pc.  0, or -1 on a DWARF error.
 */
static int span_die(Dwarf_Die *die, uint64_t pc, int holds, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Addr base, begin, end;
	ptrdiff_t off = 0;

	if (!die_may_have_pc(die))
		return 0;
	while ((off = dwarf_ranges(die, off, &base, &begin, &end)) > 0) {
		if (!holds) {
			span_exclude(pc, begin, end, lo, hi);
		} else if (begin <= pc && pc < end) {
			if (begin > *lo)
				*lo = begin;
			if (end < *hi)
				*hi = end;
		}
	}
	return off < 0 ? -1 : 0;
}

/* Narrows [*lo, *hi) to where @top (or, when NULL, no range at all) is
 * still the first top-level range holding the address, as at @pc. */
static void cu_index__span(const struct cu_index *ci, uint64_t pc, const struct cu_range *top,
			   uint64_t *lo, uint64_t *hi)
{
	size_t i;

	for (i = 0; i < ci->nr_ranges; i++) {
		const struct cu_range *c = &ci->ranges[i];

		if (c == top) {
			if (c->begin > *lo)
				*lo = c->begin;
			if (c->end < *hi)
				*hi = c->end;
		} else if (!top || c->order < top->order) {
			span_exclude(pc, c->begin, c->end, lo, hi);
		}
	}
}

#define MAX_SCOPE_PATH 256

/*
 * The function-like scopes at @pc, leaf first, as scope_index__find_exact()
 * finds them with dwarf_getscopes() and dwarf_getscopes_die(), from the
 * CU's index and a walk of the one function that holds @pc.
 * Returns the number of frames (0: no function-like scope holds @pc),
 * SCOPES_EXACT when only libdw's walk can tell (then use it), or -ENOMEM.
 */
#define SCOPES_EXACT (SCOPE_MAX_FRAMES + 1)

static int scope_index__fast(struct scope_index *si, Dwarf_Die *cudie, uint64_t pc,
			     struct scope_frame *fr, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Die path[MAX_SCOPE_PATH], origin, c;
	const struct cu_range *top;
	struct cu_index *ci;
	Dwarf_Off cuoff = dwarf_dieoffset(cudie);
	int depth, i, inl = -1, nfr = 0, r, tag;

	ci = idmap__find_ptr(&si->cus, cuoff);
	if (!ci) {
		ci = cu_index__build(cudie);
		if (!ci)
			return -ENOMEM;
		if (idmap__set_ptr(&si->cus, cuoff, ci)) {
			cu_index__free(ci);
			return -ENOMEM;
		}
	}
	if (ci->exact)
		return SCOPES_EXACT;
	top = cu_index__find(ci, pc);
	cu_index__span(ci, pc, top, lo, hi);
	if (!top)
		return 0;
	/* Down the first child holding pc at each level, as libdw does; the
	 * rest of each level is still read, since libdw's walk fails on a
	 * DWARF error anywhere in it. */
	path[0] = top->die;
	depth = 1;
	for (;;) {
		Dwarf_Die *cur = &path[depth - 1];
		int found = 0;

		tag = dwarf_tag(cur);
		if (tag == DW_TAG_inlined_subroutine)
			inl = depth - 1;
		if (!may_have_scopes(tag) || !dwarf_haschildren(cur))
			break;
		r = dwarf_child(cur, &c);
		if (r < 0)
			return SCOPES_EXACT;
		if (r > 0)
			break;
		do {
			if (dwarf_tag(&c) == DW_TAG_imported_unit)
				return SCOPES_EXACT;
			if (!found) {
				r = die_may_have_pc(&c) ? dwarf_haspc(&c, pc) : 0;
				if (r < 0)
					return SCOPES_EXACT;
				if (r > 0) {
					if (depth == MAX_SCOPE_PATH)
						return SCOPES_EXACT;
					path[depth] = c;
					found = 1;
				}
				/* The walk takes the same child for every address
				 * this one holds and its elder siblings do not. */
				if (span_die(&c, pc, r > 0, lo, hi))
					return SCOPES_EXACT;
			}
		} while ((r = dwarf_siblingof(&c, &c)) == 0);
		if (r < 0)
			return SCOPES_EXACT;
		if (!found)
			break;
		depth++;
	}
	/*
	 * dwarf_getscopes() fails when the innermost inlined instance has no
	 * abstract origin it can read (we then show no DWARF frames, as
	 * before), and only succeeds when it finds the origin by walking the
	 * CU: certain for a top-level DIE, the usual place; elsewhere ask libdw.
	 */
	if (inl >= 0) {
		Dwarf_Attribute am, *a = dwarf_attr(&path[inl], DW_AT_abstract_origin, &am);

		if (!dwarf_formref_die(a, &origin))
			return 0;
		if (!cu_index__is_top(ci, dwarf_dieoffset(&origin)))
			return SCOPES_EXACT;
	}
	for (i = depth - 1; i >= 0 && nfr < SCOPE_MAX_FRAMES; i--) {
		tag = dwarf_tag(&path[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		fr[nfr].die = path[i];
		fr[nfr].tag = tag;
		nfr++;
		if (tag == DW_TAG_subprogram)
			break;
	}
	return nfr;
}

int scope_index__find_span(struct scope_index *si, Dwarf_Die *cudie, uint64_t pc,
			   struct scope_frame *fr, uint64_t *lo, uint64_t *hi)
{
	int nfr;

	*lo = 0;
	*hi = UINT64_MAX;
	nfr = scope_index__fast(si, cudie, pc, fr, lo, hi);
	if (nfr != SCOPES_EXACT)
		return nfr;
	*lo = pc;
	*hi = pc + 1;
	return scope_index__find_exact(cudie, pc, fr);
}

int scope_index__find(struct scope_index *si, Dwarf_Die *cudie, uint64_t pc,
		      struct scope_frame *fr)
{
	uint64_t lo, hi;

	return scope_index__find_span(si, cudie, pc, fr, &lo, &hi);
}

/* dwarf_getscopes() continues past an inlined subroutine with the scopes
 * of its abstract definition, not with its caller: the callers come from
 * dwarf_getscopes_die() of the inlined instance. */
int scope_index__find_exact(Dwarf_Die *cudie, uint64_t pc, struct scope_frame *fr)
{
	Dwarf_Die *scopes = NULL;
	int nsc, nfr = 0, i;

	nsc = dwarf_getscopes(cudie, pc, &scopes);
	for (i = 0; i < nsc; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			fr[0].die = scopes[i];
			fr[0].tag = tag;
			nfr = 1;
			break;
		}
	}
	free(scopes);
	if (nfr && fr[0].tag == DW_TAG_inlined_subroutine) {
		Dwarf_Die *parents = NULL;
		int np = dwarf_getscopes_die(&fr[0].die, &parents);

		for (i = 1; i < np && nfr < SCOPE_MAX_FRAMES; i++) {
			int tag = dwarf_tag(&parents[i]);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
				continue;
			fr[nfr].die = parents[i];
			fr[nfr].tag = tag;
			nfr++;
			if (tag == DW_TAG_subprogram)
				break;
		}
		free(parents);
	}
	return nfr;
}
