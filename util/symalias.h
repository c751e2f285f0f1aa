/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symalias.h - which of several symbols at one address names it: the one
 * rule stkrec (embedded symbols, /proc/kallsyms) and stkreport (ELF
 * symbol tables, captured kernel symbols) both follow, so that one
 * address gets one name wherever it was named, and the name perf gives it.
 *
 * The rule, first difference wins:
 *  1. binding: global over weak over local (what a library exports over
 *     what it keeps to itself: `read`, `malloc`, not `__GI___read`);
 *  2. fewer leading underscores (`read` over `__read`, `malloc` over
 *     `__libc_malloc`, `memcpy` over `__pi_memcpy`);
 *  3. the longer name (`__memmove_avx512_unaligned_erms` over
 *     `__memcpy_avx512_unaligned_erms`: one function serving both);
 *  4. the lower name in byte order, so that the choice never depends on
 *     the order of a table.
 * Rules 2 and 3 are perf's (tools/perf/util/symbol.c choose_best_symbol()),
 * and 1 is too where an address has a global alias; perf ranks a local
 * alias over a weak one, which here would name an exported weak function
 * by an internal local alias.  perf's first rule (a symbol with a size
 * over one without) only tells apart what perf itself made sizeless: it
 * makes every alias in /proc/kallsyms but the last one sizeless, so that
 * perf names memcpy's address `__pi_memcpy`; that is not followed.
 */
#ifndef STK_UTIL_SYMALIAS_H
#define STK_UTIL_SYMALIAS_H

/* Bindings, in the order of rule 1. */
enum symalias_bind {
	SYMALIAS_GLOBAL = 0,
	SYMALIAS_WEAK = 1,
	SYMALIAS_LOCAL = 2,
};

/* The binding of an ELF symbol's STB_* value: STB_GLOBAL, STB_WEAK (and
 * STB_GNU_UNIQUE, global) or anything else (local). */
enum symalias_bind symalias__elf_bind(unsigned int stb);

/* The binding of a /proc/kallsyms type letter: upper case global, 'w'
 * and 'W' weak, other lower case local. */
enum symalias_bind symalias__kallsyms_bind(char type);

/*
 * symalias__cmp() - < 0 when @a (binding @ba) names an address before @b
 * (binding @bb), > 0 when @b does, 0 only for equal names and bindings.
 */
int symalias__cmp(const char *a, enum symalias_bind ba, const char *b, enum symalias_bind bb);

#endif
