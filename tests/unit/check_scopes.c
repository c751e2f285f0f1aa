// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolizer finds inline scopes from a per-CU index of the top-level
 * DIEs instead of libdw's walk of the whole CU at every address
 * (dwarf_getscopes, dwarf_getscopes_die).  These tests prove the two give
 * the same frames, names, files and lines at every address of real
 * optimized binaries full of inlined code: our own tools, built -O2 -g.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/elffind.h"
#include "../../report/symbolize.h"
#include "../tools/fxelf.h"

static char out_dir[PATH_MAX];

static struct symbolizer *new_sym(int exact)
{
	struct symbolizer_opts o = {
		.sz = sizeof(o),
		.system_debug_dir = "",
		.lines = 1,
		.exact_scopes = exact,
	};
	struct symbolizer *s = symbolizer__new(&o);

	ck_assert_ptr_nonnull(s);
	return s;
}

static int same_line(const struct sym_line *a, const struct sym_line *b)
{
	if (strcmp(a->name, b->name) || strcmp(a->raw, b->raw))
		return 0;
	if (a->line != b->line || a->start_line != b->start_line)
		return 0;
	if (!a->file || !b->file)
		return a->file == b->file;
	return strcmp(a->file, b->file) == 0;
}

static int same_result(const struct sym_result *a, const struct sym_result *b)
{
	uint32_t i;

	if (!a || !b)
		return a == b;
	if (a->nr_lines != b->nr_lines || a->inlined != b->inlined)
		return 0;
	for (i = 0; i < a->nr_lines; i++)
		if (!same_line(&a->lines[i], &b->lines[i]))
			return 0;
	return 1;
}

/*
 * Looks up every @step-th address of @file's executable mapping, as a leaf
 * and as a return address, with both scope finders; returns the number of
 * addresses whose answers differ and counts those with inline frames.
 */
static long compare_file(const char *file, unsigned int step, long *inlined)
{
	struct symbolizer *fast = new_sym(0), *exact = new_sym(1);
	struct sym_module *mf, *me;
	struct stk_mapping maps[8], *x = NULL;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint64_t addr;
	long diffs = 0;
	int n, i, bn;

	bn = elf_file__build_id(file, bid);
	ck_assert_int_gt(bn, 0);
	n = fx_mappings(file, 0x7f0000000000ull, maps, 8);
	for (i = 0; i < n; i++)
		if (maps[i].prot & PROT_EXEC)
			x = &maps[i];
	ck_assert_ptr_nonnull(x);
	mf = symbolizer__module(fast, file, bid, (uint32_t)bn);
	me = symbolizer__module(exact, file, bid, (uint32_t)bn);
	ck_assert_ptr_nonnull(mf);
	ck_assert_ptr_nonnull(me);
	*inlined = 0;
	for (addr = x->start; addr < x->end; addr += step) {
		int is_ret;

		for (is_ret = 0; is_ret < 2; is_ret++) {
			const struct sym_result *rf = NULL, *re = NULL;

			ck_assert_int_eq(symbolizer__lookup(fast, mf, x, addr, is_ret, &rf), 0);
			ck_assert_int_eq(symbolizer__lookup(exact, me, x, addr, is_ret, &re), 0);
			if (!same_result(rf, re)) {
				if (diffs++ < 5)
					fprintf(stderr, "%s+%#llx: %s (exact %s)\n", file,
						(unsigned long long)(addr - x->start + x->offset),
						rf ? rf->lines[0].name : "-",
						re ? re->lines[0].name : "-");
			}
			*inlined += !is_ret && re && re->inlined;
		}
	}
	ck_assert_int_eq(mf->status, SYM_MOD_OK);
	ck_assert(mf->has_dwarf);
	symbolizer__free(fast);
	symbolizer__free(exact);
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
	const char *o = getenv("O");
	Suite *su = suite_create("scopes");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	char *abs;
	int failed;

	/* Absolute: the symbolizer only opens recorded absolute paths. */
	abs = realpath(o && o[0] ? o : "build", NULL);
	if (!abs) {
		fprintf(stderr, "check_scopes: build directory missing (make)\n");
		return 1;
	}
	snprintf(out_dir, sizeof(out_dir), "%s", abs);
	free(abs);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_stkreport);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_stkrec);
	tcase_add_test(tc, index_and_libdw_walk_agree_on_the_inline_fixture);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
