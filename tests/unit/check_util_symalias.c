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

START_TEST(report_names_libc_read_and_malloc_by_their_exported_names)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwfl_Module *mod;
	struct symtab *t;
	GElf_Addr a;

	ck_assert_ptr_nonnull(dwfl);
	mod = dwfl_report_offline(dwfl, "libc", libc_path(), -1);
	ck_assert_ptr_nonnull(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	t = symtab__new(mod);
	ck_assert_ptr_nonnull(t);
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
	tcase_add_test(tc, report_names_libc_read_and_malloc_by_their_exported_names);
	tcase_add_test(tc, embedded_symbols_of_libc_use_the_same_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
