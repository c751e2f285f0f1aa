/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_table.h - compact unwind tables for the BPF unwinder, built from
 * an ELF file's call frame information with libdw.
 *
 * A table is a sorted array of struct stkrec_unwind_row (bpf/stkrec.h):
 * one row per address range with one rule for the CFA and one for rbp,
 * adjacent equal rows merged, gaps between FDEs marked STKREC_UW_NONE,
 * but for the entry point (e_entry), which ends every stack: STKREC_UW_END
 * there when no CFI covers it (ld.so's _start).  In a Go binary, rows of
 * its .debug_frame also get the rbp rule Go's frames keep but its CFI
 * omits, and its stack-switching functions STKREC_UW_STACK_SWITCH.
 * libdw evaluates the CFI programs (augmentations, pointer encodings,
 * remember/restore state); this file only classifies each resulting row.
 * x86-64 only.
 */
#ifndef STKREC_UNWIND_TABLE_H
#define STKREC_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "stkrec.h"

struct unwind_table;

struct unwind_table_stats {
	uint64_t fdes;		/* FDEs walked */
	uint64_t rows;		/* rows kept, after merging */
	uint64_t rows_raw;	/* rows libdw gave, before merging */
	uint64_t unsupported;	/* rows of kind STKREC_UW_UNSUPPORTED */
	uint64_t plt, signal, end, rbp_deref, ra_rdi;
	uint64_t cfa_rbx;	/* rows of kind STKREC_UW_CFA_RBX */
	uint64_t clone;		/* rows of kind STKREC_UW_CLONE */
	uint64_t fdes_skipped;	/* FDEs scanned but not walked (encoding, no code) */
	uint64_t scanned;	/* 1: no .eh_frame_hdr, .eh_frame's FDEs scanned */
	uint64_t debug_frame_fdes; /* FDEs from .debug_frame (no .eh_frame rule there) */
	uint64_t entry;		/* 1: the entry point had no CFI, an END row was added */
	uint64_t go_switchers;	/* Go: its stack-switching functions found (systemstack...) */
};

/*
 * unwind_table__from_elf() - build the table of @elf (which stays the
 * caller's, and may be an in-memory image such as the vDSO) from its
 * .eh_frame, walking the FDEs that .eh_frame_hdr lists, or without one
 * (static executables: GCC links those without it) or its table every
 * FDE of the .eh_frame section; and from its .debug_frame for the code
 * .eh_frame has no rule for (-fno-asynchronous-unwind-tables -g puts the
 * CFI there; .eh_frame wins where both have one).
 * Returns the table, or NULL with errno: ENOENT (no FDE in .eh_frame or
 * .debug_frame), ENOTSUP (not x86-64), E2BIG (addresses beyond 4 GiB),
 * EBADMSG (libdw could not read the CFI, or it names a register number
 * past 255, which libdw would allocate room for), ETIME (the build took
 * more CPU time than its budget: 1 s, see unwind_table__set_budget()),
 * ENOMEM.
 */
struct unwind_table *unwind_table__from_elf(Elf *elf);

/* The CPU time one table's build may take (0: the default, 1 s; libLLVM
 * takes ~0.2 s); for tests.  A crafted FDE can make libdw's per-row
 * re-run quadratic: 240k rows in one FDE are minutes. */
void unwind_table__set_budget(uint64_t ns);

/*
 * unwind_table__from_elf_debug() - the same, and when @elf has no
 * .debug_frame, that of @debug (NULL: none), @elf's separate debuginfo
 * (objcopy --only-keep-debug; the caller checked it is @elf's, by
 * build-id).  Both stay the caller's.  errno as above.
 */
struct unwind_table *unwind_table__from_elf_debug(Elf *elf, Elf *debug);

/* The same, on any thread (libelf handles are not shared between
 * threads), giving up with ETIME as soon as *@stop is set (@stop may be
 * NULL). */
struct unwind_table *unwind_table__build(Elf *elf, Elf *debug, const _Atomic int *stop);

/* 1 if @elf has a .debug_frame section, else 0. */
int unwind_table__has_debug_frame(Elf *elf);

/* The same for the file at @path (opened read-only).  errno as above, or
 * open()'s. */
struct unwind_table *unwind_table__from_file(const char *path);

/* The rows, sorted by pc; valid until unwind_table__free(). */
const struct stkrec_unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *nr);

/* The row covering ELF address @pc, or NULL (before the first row). */
const struct stkrec_unwind_row *unwind_table__lookup(const struct unwind_table *t, uint64_t pc);

void unwind_table__stats(const struct unwind_table *t, struct unwind_table_stats *st);

void unwind_table__free(struct unwind_table *t);

#endif
