# SPDX-License-Identifier: BSD-2-Clause
#
# symbig - a shared library with 300,000 local function symbols (names of
# 40-odd characters, as a large C++ library's), for the memory bound of
# --embed-symbols (tests/e2e/record_usermem.sh).  Written in assembly with
# a .rept of a macro (\@ numbers each expansion): gas makes the library in
# about 2 s, where the same functions in C take a compiler minutes.  Only
# symbig_spin is exported and ever runs; its 300,000 neighbours are the
# table a recorder must read to name it.

	.text
	.macro symbig_fn
	.p2align 4
symbig_generated_function_number_\@:
	.type symbig_generated_function_number_\@, @function
	pushq %rbp
	movq %rsp, %rbp
	popq %rbp
	ret
	.size symbig_generated_function_number_\@, .-symbig_generated_function_number_\@
	.endm

	.rept 150000
	symbig_fn
	.endr

# symbig_spin(n): count n down, with a frame pointer.
	.globl symbig_spin
	.type symbig_spin, @function
	.p2align 4
symbig_spin:
	pushq %rbp
	movq %rsp, %rbp
	movq %rdi, %rcx
1:	decq %rcx
	jnz 1b
	popq %rbp
	ret
	.size symbig_spin, .-symbig_spin

	.rept 150000
	symbig_fn
	.endr

	.section .note.GNU-stack,"",@progbits
