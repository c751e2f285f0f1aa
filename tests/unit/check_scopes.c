// SPDX-License-Identifier: BSD-2-Clause
/*
 * The inline-scope index (report/symbols/scopes.c) finds the function-like scopes
 * at an address from a per-CU index of the top-level DIEs instead of
 * libdw's walk of the whole CU at every address (dwarf_getscopes,
 * dwarf_getscopes_die).  These tests prove the two give the same frames --
 * the same DIEs, so the same names, files and lines -- at every address of
 * real optimized binaries full of inlined code: our own tools, built -O2 -g.
 * The DWARF is opened with libdwfl as the symbolizer opens it.
 */
#include <check.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "scopes.h"

static char out_dir[PATH_MAX];

static const Dwfl_Callbacks dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int same_frames(const struct scope_frame *a, int na, const struct scope_frame *b, int nb)
{
	int i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i].tag != b[i].tag || dwarf_dieoffset((Dwarf_Die *)&a[i].die) !=
					    dwarf_dieoffset((Dwarf_Die *)&b[i].die))
			return 0;
	return 1;
}

/*
 * Asks both scope finders about every @step-th address of @file's
 * executable segment, and about the address before it (where a return
 * address is looked up); returns the number of addresses whose answers
 * differ and counts those with inline frames.
 */
static long compare_file(const char *file, unsigned int step, long *inlined)
{
	struct scope_frame ff[SCOPE_MAX_FRAMES], fe[SCOPE_MAX_FRAMES];
	struct scope_index *si = scope_index__new();
	Dwfl *dwfl = dwfl_begin(&dwfl_cb);
	uint64_t lo = 0, hi = 0, addr;
	Dwfl_Module *mod;
	GElf_Addr bias;
	Dwarf_Addr dbias;
	size_t nph, i;
	long diffs = 0;
	Elf *elf;

	ck_assert_ptr_nonnull(si);
	ck_assert_ptr_nonnull(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "fx", file, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	ck_assert_ptr_nonnull(mod);
	elf = dwfl_module_getelf(mod, &bias);
	ck_assert_ptr_nonnull(elf);
	ck_assert_ptr_nonnull(dwfl_module_getdwarf(mod, &dbias));
	ck_assert_int_eq(elf_getphdrnum(elf, &nph), 0);
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			lo = ph.p_vaddr + bias;
			hi = lo + ph.p_memsz;
		}
	}
	ck_assert_uint_lt(lo, hi);
	*inlined = 0;
	for (addr = lo; addr < hi; addr += step) {
		int is_ret;

		for (is_ret = 0; is_ret < 2; is_ret++) {
			uint64_t pc = addr - (uint64_t)is_ret;
			Dwarf_Die *cudie = dwfl_module_addrdie(mod, pc, &dbias);
			int nf, ne;

			if (!cudie)
				continue;
			nf = scope_index__find(si, cudie, pc - dbias, ff);
			ne = scope_index__find_exact(cudie, pc - dbias, fe);
			ck_assert_int_ge(nf, 0);
			if (!same_frames(ff, nf, fe, ne)) {
				if (diffs++ < 5)
					fprintf(stderr, "%s: %#llx: %d frames, %s (exact %d, %s)\n",
						file, (unsigned long long)(pc - bias), nf,
						nf ? dwarf_diename(&ff[0].die) : "-", ne,
						ne ? dwarf_diename(&fe[0].die) : "-");
			}
			*inlined += !is_ret && ne > 1;
		}
	}
	scope_index__free(si);
	dwfl_end(dwfl);
	return diffs;
}

static const char *out_file(const char *rel)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", out_dir, rel);
	return buf;
}

START_TEST(index_and_libdw_walk_agree_on_stkreport)
{
	long inlined, diffs = compare_file(out_file("stkreport"), 11, &inlined);

	ck_assert_int_eq(diffs, 0);
	/* Not vacuous: -O2 inlines a lot (nearly half of its code). */
	ck_assert_int_gt(inlined, 1000);
}
END_TEST

START_TEST(index_and_libdw_walk_agree_on_stkrec)
{
	long inlined, diffs = compare_file(out_file("stkrec"), 5, &inlined);

	ck_assert_int_eq(diffs, 0);
	ck_assert_int_gt(inlined, 100);
}
END_TEST

/* The fixture with a forced inline, at every address. */
START_TEST(index_and_libdw_walk_agree_on_the_inline_fixture)
{
	long inlined, diffs = compare_file(out_file("tests/fixtures/root/fx/fx_pie"), 1, &inlined);

	ck_assert_int_eq(diffs, 0);
	ck_assert_int_gt(inlined, 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("scopes");
	TCase *tc = tcase_create("core");

	if (check_build_path(out_dir, sizeof(out_dir), "", "make"))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_stkreport);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_stkrec);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_the_inline_fixture);
	suite_add_tcase(su, tc);
	return check_run(su);
}
