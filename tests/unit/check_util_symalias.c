// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_util_symalias: the rule that names an address among its aliases
 * (util/symalias.h), on the aliases glibc 2.36 and Linux 6.x really have,
 * and on the tables that use it: stkreport's ELF symbol table
 * (report/symbols/symtab.c, through libdwfl) and stkrec's embedded symbols
 * (record/usyms/elfsyms.c), both on this machine's libc.
 */
#include <check.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "elfsyms.h"
#include "symalias.h"
#include "symtab.h"

#define G SYMALIAS_GLOBAL
#define W SYMALIAS_WEAK
#define L SYMALIAS_LOCAL

START_TEST(exported_names_win_as_perf_picks_them)
{
	ck_assert_int_lt(symalias__cmp("read", G, "__read", G), 0);
	ck_assert_int_gt(symalias__cmp("__read", G, "read", G), 0);
	ck_assert_int_lt(symalias__cmp("malloc", G, "__libc_malloc", G), 0);
	ck_assert_int_lt(symalias__cmp("__memmove_avx512_unaligned_erms", L,
				       "__memcpy_avx512_unaligned_erms", L), 0);
	ck_assert_int_lt(symalias__cmp("memcpy", G, "__pi_memcpy", G), 0);
	ck_assert_int_lt(symalias__cmp("memcpy", G, "__memcpy", G), 0);
	ck_assert_int_eq(symalias__cmp("x", G, "x", G), 0);
}
END_TEST

START_TEST(global_over_weak_over_local)
{
	ck_assert_int_lt(symalias__cmp("__read", G, "read", W), 0);
	ck_assert_int_lt(symalias__cmp("read", W, "__GI_read", L), 0);
	ck_assert_int_lt(symalias__cmp("__libc_read", G, "read", L), 0);
	ck_assert_int_eq(symalias__elf_bind(STB_GLOBAL), G);
	ck_assert_int_eq(symalias__elf_bind(STB_GNU_UNIQUE), G);
	ck_assert_int_eq(symalias__elf_bind(STB_WEAK), W);
	ck_assert_int_eq(symalias__elf_bind(STB_LOCAL), L);
	ck_assert_int_eq(symalias__kallsyms_bind('T'), G);
	ck_assert_int_eq(symalias__kallsyms_bind('W'), W);
	ck_assert_int_eq(symalias__kallsyms_bind('t'), L);
}
END_TEST

/* binutils 2.35+ spells versioned definitions into .symtab: the version
 * is no part of the name, and a compat-only name loses (rule 2). */
START_TEST(versions_are_no_part_of_a_name)
{
	ck_assert_uint_eq(symalias__name_len("__libc_start_main@@GLIBC_2.34"), 17);
	ck_assert_uint_eq(symalias__name_len("cfree@GLIBC_2.2.5"), 5);
	ck_assert_uint_eq(symalias__name_len("free"), 4);
	ck_assert_uint_eq(symalias__name_len("@x"), 2);	/* no name before it */
	ck_assert_uint_eq(symalias__name_len("a@"), 2);	/* no version after it */
	ck_assert_uint_eq(symalias__name_len("a@b@c"), 5);
	ck_assert_uint_eq(symalias__name_len("a@b c"), 5);
	ck_assert_int_eq(symalias__compat_name("cfree@GLIBC_2.2.5"), 1);
	ck_assert_int_eq(symalias__compat_name("clock_nanosleep@@GLIBC_2.17"), 0);
	ck_assert_int_eq(symalias__compat_name("free"), 0);
	/* free, not cfree (longer, but kept for old binaries only), whether
	 * the version is spelled (.symtab) or known from .gnu.version. */
	ck_assert_int_lt(symalias__cmp("free", G, "cfree@GLIBC_2.2.5", G), 0);
	ck_assert_int_lt(symalias__cmp("free", G, "cfree", G | SYMALIAS_COMPAT), 0);
	ck_assert_int_lt(symalias__cmp("cfree", G, "free", G), 0);	/* not known: the longer */
	/* The default version over the old one; compat global over local. */
	ck_assert_int_lt(symalias__cmp("__libc_start_main@@GLIBC_2.34", G,
				       "__libc_start_main@GLIBC_2.2.5", G), 0);
	ck_assert_int_lt(symalias__cmp("__libc_start_main@GLIBC_2.2.5", G,
				       "__libc_start_main_impl", L), 0);
	/* Lengths without the version: "foo@@V" is no longer than "bar". */
	ck_assert_int_lt(symalias__cmp("bar", G, "foo@@VERSION_1", G), 0);
}
END_TEST

/* libc as the process has it mapped, and libdwfl's module for it. */
static const char *libc_path(void)
{
	static char path[4096];
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	fclose(f);
	ck_assert_msg(path[0], "libc.so.6 not mapped");
	return path;
}

/* The module address of @name in @mod's symbol table, or 0. */
static GElf_Addr sym_addr(Dwfl_Module *mod, const char *name)
{
	int n = dwfl_module_getsymtab(mod), i;

	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (s && strcmp(s, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
			return addr;
	}
	return 0;
}

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* libc's libdwfl module, found through @cb, and its symtab. */
static struct symtab *libc_symtab(const Dwfl_Callbacks *cb, Dwfl **dwfl, Dwfl_Module **mod)
{
	struct symtab *t;

	*dwfl = dwfl_begin(cb);
	ck_assert_ptr_nonnull(*dwfl);
	*mod = dwfl_report_offline(*dwfl, "libc", libc_path(), -1);
	ck_assert_ptr_nonnull(*mod);
	dwfl_report_end(*dwfl, NULL, NULL);
	t = symtab__new(*mod);
	ck_assert_ptr_nonnull(t);
	return t;
}

START_TEST(report_names_libc_read_and_malloc_by_their_exported_names)
{
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct symtab *t = libc_symtab(&offline, &dwfl, &mod);
	GElf_Addr a;

	a = sym_addr(mod, "__read");
	ck_assert_uint_ne(a, 0);
	ck_assert_str_eq(symtab__find(t, a), "read");
	a = sym_addr(mod, "__libc_malloc");
	ck_assert_uint_ne(a, 0);
	ck_assert_str_eq(symtab__find(t, a), "malloc");
	/* With libc6-dbg's .symtab, the multiarch memcpy is memmove's. */
	a = sym_addr(mod, "__memcpy_avx512_unaligned_erms");
	if (a)
		ck_assert_str_eq(symtab__find(t, a), "__memmove_avx512_unaligned_erms");
	symtab__free(t);
	dwfl_end(dwfl);
}
END_TEST

/* libc's .symtab (libc6-dbg) names one function under versions, and
 * .dynsym alone (no debuginfo) spells free's compat alias cfree bare:
 * both name __libc_start_main, clock_nanosleep and free plainly. */
static int no_debuginfo(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
			const char *file, const char *dlink, GElf_Word crc, char **path)
{
	(void)mod, (void)ud, (void)name, (void)base, (void)file, (void)dlink, (void)crc;
	(void)path;
	return -1;
}

static const Dwfl_Callbacks dynsym_only = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void check_libc_unversioned(const Dwfl_Callbacks *cb)
{
	static const char *const want[][3] = {	/* a name to find it by, twice; the name */
		{ "__libc_start_main@@GLIBC_2.34", "__libc_start_main", "__libc_start_main" },
		{ "clock_nanosleep@@GLIBC_2.17", "clock_nanosleep", "clock_nanosleep" },
		{ "__libc_free", "free", "free" },
		{ "pthread_sigmask@@GLIBC_2.32", "pthread_sigmask", "pthread_sigmask" },
	};
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct symtab *t = libc_symtab(cb, &dwfl, &mod);
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		GElf_Addr a = sym_addr(mod, want[i][0]) ?: sym_addr(mod, want[i][1]);

		ck_assert_msg(a, "%s not in libc", want[i][1]);
		ck_assert_str_eq(symtab__find(t, a), want[i][2]);
	}
	symtab__free(t);
	dwfl_end(dwfl);
}

START_TEST(report_names_libc_without_symbol_versions)
{
	check_libc_unversioned(&offline);
	check_libc_unversioned(&dynsym_only);
}
END_TEST

START_TEST(embedded_symbols_of_libc_use_the_same_names)
{
	struct elfsyms t;
	int fd = open(libc_path(), O_RDONLY | O_CLOEXEC);
	size_t i;
	int seen = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_fd(fd, &t), 0);
	close(fd);
	/* Debian's libc has .dynsym only: read and __read, malloc and
	 * __libc_malloc are one address each. */
	for (i = 0; i < t.n; i++) {
		ck_assert_str_ne(t.syms[i].name, "__read");
		ck_assert_str_ne(t.syms[i].name, "__libc_malloc");
		seen += strcmp(t.syms[i].name, "read") == 0 || strcmp(t.syms[i].name, "malloc") == 0;
	}
	ck_assert_int_eq(seen, 2);
	elfsyms__free(&t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("util_symalias");
	TCase *tc = tcase_create("symalias");

	tcase_add_test(tc, exported_names_win_as_perf_picks_them);
	tcase_add_test(tc, global_over_weak_over_local);
	tcase_add_test(tc, versions_are_no_part_of_a_name);
	tcase_add_test(tc, report_names_libc_without_symbol_versions);
	tcase_add_test(tc, report_names_libc_read_and_malloc_by_their_exported_names);
	tcase_add_test(tc, embedded_symbols_of_libc_use_the_same_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
