/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symalias.h - which of several symbols at one address names it: the one
 * rule stkrec (embedded symbols, /proc/kallsyms) and stkreport (ELF
 * symbol tables, captured kernel symbols) both follow, so that one
 * address gets one name wherever it was named, and the name perf gives it.
 *
 * A name's symbol version is no part of it: binutils 2.35+ writes
 * versioned definitions into .symtab as `name@@VER` (the default version,
 * what new links bind to) and `name@VER` (an older version kept for old
 * binaries), so glibc's debuginfo names one function
 * `__libc_start_main@@GLIBC_2.34` and `__libc_start_main@GLIBC_2.2.5`.
 * Names are compared, and shown, without it (symalias__name_len()).
 *
 * The rule, first difference wins:
 *  1. binding: global over weak over local (what a library exports over
 *     what it keeps to itself: `read`, `malloc`, not `__GI___read`);
 *  2. a name that is current over one kept only under an older version
 *     (`free` over `cfree@GLIBC_2.2.5`, glibc's compat name for it): a
 *     `name@VER` without `@@`, or a .dynsym name .gnu.version hides;
 *  3. fewer leading underscores (`read` over `__read`, `malloc` over
 *     `__libc_malloc`, `memcpy` over `__pi_memcpy`);
 *  4. the longer name (`__memmove_avx512_unaligned_erms` over
 *     `__memcpy_avx512_unaligned_erms`: one function serving both);
 *  5. the lower name in byte order, so that the choice never depends on
 *     the order of a table.
 * Rules 3 and 4 are perf's (tools/perf/util/symbol.c choose_best_symbol()),
 * and 1 is too where an address has a global alias; perf ranks a local
 * alias over a weak one, which here would name an exported weak function
 * by an internal local alias.  perf's first rule (a symbol with a size
 * over one without) only tells apart what perf itself made sizeless: it
 * makes every alias in /proc/kallsyms but the last one sizeless, so that
 * perf names memcpy's address `__pi_memcpy`; that is not followed.
 * perf keeps versions in names (`__libc_start_main@@GLIBC_2.34` with
 * --no-inline) and, comparing them with the version, would rank
 * `cfree@GLIBC_2.2.5` over `free` for its length (rule 2 is ours).
 * Kernel symbols are not named by this rule: see ksyms.h (the kernel's
 * own choice, the one a capture named by %pS holds).
 */
#ifndef STK_UTIL_SYMALIAS_H
#define STK_UTIL_SYMALIAS_H

/* Bindings, in the order of rule 1. */
enum symalias_bind {
	SYMALIAS_GLOBAL = 0,
	SYMALIAS_WEAK = 1,
	SYMALIAS_LOCAL = 2,
};

/* Or'ed into a binding: a name known to be kept only under an older
 * version (rule 2) though it carries none, as .dynsym's names do. */
#define SYMALIAS_COMPAT 4

/* The binding of an ELF symbol's STB_* value: STB_GLOBAL, STB_WEAK (and
 * STB_GNU_UNIQUE, global) or anything else (local). */
enum symalias_bind symalias__elf_bind(unsigned int stb);

/* The binding of a /proc/kallsyms type letter: upper case global, 'w'
 * and 'W' weak, other lower case local. */
enum symalias_bind symalias__kallsyms_bind(char type);

/*
 * symalias__cmp() - < 0 when @a (binding @ba, maybe | SYMALIAS_COMPAT)
 * names an address before @b (binding @bb), > 0 when @b does, 0 only for
 * equal names and equal ranks (a name and its versioned spelling differ).
 */
int symalias__cmp(const char *a, int ba, const char *b, int bb);

/*
 * symalias__name_len() - the length of @name without its symbol version
 * (`@VER` or `@@VER`: an '@' after the first byte, followed by a version
 * without '@' and without spaces).  strlen(@name) when there is none.
 */
size_t symalias__name_len(const char *name);

/* 1 if @name carries an older, non-default version (`name@VER`). */
int symalias__compat_name(const char *name);

#endif
