/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scopes.h - the function-like DWARF scopes (inlined subroutines and the
 * subprogram they were inlined into) at an address, found from a per-CU
 * index of each CU's top-level DIEs, with libdw's answers.
 *
 * dwarf_getscopes() walks every top-level DIE of the CU on each call (then
 * twice more for an inlined address: the abstract origin, through
 * dwarf_getscopes_die()); at 10^5 addresses those walks were a third of a
 * report's instructions.  A scope_index reads each CU's top-level ranges
 * once and then walks only the one function that holds the address.
 * Where the index cannot tell what libdw would say (imported units, a
 * DWARF error, an origin outside the top level), it asks libdw.
 */
#ifndef STK_REPORT_SCOPES_H
#define STK_REPORT_SCOPES_H

#include <elfutils/libdw.h>
#include <stdint.h>

/* Most frames one address yields: of a deeper inline chain, the leaf and
 * its nearest callers are kept. */
#define SCOPE_MAX_FRAMES 64

/* One function-like scope. */
struct scope_frame {
	Dwarf_Die die;		/* valid while the Dwarf it came from lives */
	int tag;		/* DW_TAG_inlined_subroutine or DW_TAG_subprogram */
};

/* The per-CU indexes of one Dwarf, built as CUs are first asked about. */
struct scope_index;

/* Returns an empty index, or NULL with errno ENOMEM. */
struct scope_index *scope_index__new(void);
/* Accepts NULL.  Free it before the Dwarf its CUs came from. */
void scope_index__free(struct scope_index *si);

/*
 * scope_index__find() - the function-like scopes at DWARF address @pc,
 * leaf first: the innermost inlined subroutine, ..., the subprogram that
 * holds @pc.  What scope_index__find_exact() gives, for the cost of a
 * walk of one function.
 * @cudie: the CU DIE covering @pc (e.g. dwfl_module_addrdie()'s).
 * @fr: room for SCOPE_MAX_FRAMES frames.
 * Returns the number of frames (0: no function-like scope holds @pc), or
 * -ENOMEM.
 */
int scope_index__find(struct scope_index *si, Dwarf_Die *cudie, uint64_t pc,
		      struct scope_frame *fr);

/*
 * scope_index__find_span() - scope_index__find(), and the addresses
 * [*@lo, *@hi) around @pc (DWARF addresses) where it gives the same frames:
 * the walk takes the same top-level DIE and the same child at each level
 * there (the DIEs' own ranges and those of the siblings before them bound
 * it).  [@pc, @pc + 1) where libdw's own walk decides.
 */
int scope_index__find_span(struct scope_index *si, Dwarf_Die *cudie, uint64_t pc,
			   struct scope_frame *fr, uint64_t *lo, uint64_t *hi);

/*
 * scope_index__find_exact() - the same, from libdw's own walks of the
 * whole CU: dwarf_getscopes() for the innermost function-like scope, then
 * dwarf_getscopes_die() for the functions it was inlined into.  Needs no
 * index: the reference scope_index__find() falls back to, and is checked
 * against (check_scopes).  Returns the number of frames; never fails (a
 * DWARF error gives fewer frames, as libdw's walk does).
 */
int scope_index__find_exact(Dwarf_Die *cudie, uint64_t pc, struct scope_frame *fr);

#endif
