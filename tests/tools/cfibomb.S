/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfibomb.S - the "CFI bomb" (tests/e2e/record_slowcfi.sh, issue 22): a
 * shared library of one function, cfibomb_run(), whose single FDE has
 * 240,000 CFI rows (120,000 push/pop pairs, each followed by its
 * .cfi_adjust_cfa_offset).  The library is 0.97 MB and its FDE's program
 * 720 KB, inside every bound record/unwind/cfi.c checks, yet libdw re-runs
 * that program for each row it is asked about, so building its unwind
 * table is quadratic: it runs into unwind_table.c's 5 s budget.  Any user
 * can write and map such a file; the recorder pays per build-id.
 *
 * cfibomb_run() is callable: every push is undone by its pop, and it
 * returns (about 240,000 instructions a call).
 */
	.text
	.globl	cfibomb_run
	.type	cfibomb_run, @function
cfibomb_run:
	.cfi_startproc
	.rept	120000
	push	%rax
	.cfi_adjust_cfa_offset 8
	pop	%rax
	.cfi_adjust_cfa_offset -8
	.endr
	ret
	.cfi_endproc
	.size	cfibomb_run, .-cfibomb_run

	.section .note.GNU-stack,"",@progbits
