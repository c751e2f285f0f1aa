// SPDX-License-Identifier: BSD-2-Clause
/*
 * Symbolizer tests on the ELF fixtures built by mk/report.mk
 * ($O/tests/fixtures): each address is derived from the fixture files
 * themselves, so a test proves the lookup, not a copied number.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/demangle.h"
#include "../../report/elffind.h"
#include "../../report/symbolize.h"
#include "../tools/fxelf.h"

static char fx[1024];

static const char *fxpath(const char *rel)
{
	static char buf[8][4096];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fx, rel);
	return buf[i];
}

static struct symbolizer *new_sym(const char *sysroot, const char *debug_dir, int flags)
{
	const char *dirs[1] = { debug_dir };
	struct symbolizer_opts o = {
		.sz = sizeof(o),
		.sysroot = sysroot,
		.debug_dirs = dirs,
		.nr_debug_dirs = debug_dir ? 1 : 0,
		.system_debug_dir = "",
		.no_inline = flags & 1,
		.lines = !!(flags & 2),
		.no_demangle = !!(flags & 4),
	};
	struct symbolizer *s = symbolizer__new(&o);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* A module for fixture @file as if loaded at @base, recorded under @path
 * with @bid_file's build-id; returns the executable mapping in @map. */
static struct sym_module *load(struct symbolizer *s, const char *file, const char *path,
			       const char *bid_file, uint64_t base, struct stk_mapping *map)
{
	struct stk_mapping maps[8];
	uint8_t bid[64];
	int n, i, bn;

	bn = elf_file__build_id(bid_file, bid);
	ck_assert_int_gt(bn, 0);
	n = fx_mappings(file, base, maps, 8);
	ck_assert_int_gt(n, 0);
	for (i = 0; i < n; i++)
		if (maps[i].prot & PROT_EXEC)
			*map = maps[i];
	ck_assert(map->prot & PROT_EXEC);
	return symbolizer__module(s, path, bid, (uint32_t)bn);
}

static const struct sym_result *lookup(struct symbolizer *s, struct sym_module *m,
				       const struct stk_mapping *map, uint64_t addr, int is_ret)
{
	const struct sym_result *r = NULL;

	ck_assert_int_eq(symbolizer__lookup(s, m, map, addr, is_ret, &r), 0);
	return r;
}

static uint64_t sym_addr(const char *file, const char *name)
{
	uint64_t v = 0;

	ck_assert_int_eq(fx_sym(file, name, &v, NULL), 0);
	return v;
}

static uint64_t ret_addr(const char *file, const char *caller, const char *callee)
{
	uint64_t v = 0;

	ck_assert_int_eq(fx_call_ret(file, caller, callee, &v), 0);
	return v;
}

#define BASE 0x555555554000ull

START_TEST(pie_leaf_and_return_addresses_name_their_functions)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	const struct sym_result *r;

	r = lookup(s, m, &map, BASE + sym_addr(f, "fx_leaf") + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_leaf");
	r = lookup(s, m, &map, BASE + ret_addr(f, "fx_mid", "fx_leaf"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_mid");
	ck_assert_int_eq(m->status, SYM_MOD_OK);
	ck_assert_int_eq(m->source, ELF_SRC_PATH);
	symbolizer__free(s);
}
END_TEST

START_TEST(call_ending_a_function_is_credited_to_the_caller_via_pc_minus_1)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	uint64_t ret = BASE + ret_addr(f, "fx_dies", "fx_abort");
	const struct sym_result *r;

	/* The fixture's layout makes the return address the next function. */
	ck_assert_uint_eq(ret, BASE + sym_addr(f, "fx_after_dies"));
	r = lookup(s, m, &map, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_dies");
	r = lookup(s, m, &map, ret, 0);
	ck_assert_str_eq(r->lines[0].name, "fx_after_dies");
	symbolizer__free(s);
}
END_TEST

START_TEST(non_pie_resolves_absolute_addresses)
{
	const char *f = fxpath("root/fx/fx_nopie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	const struct sym_result *r;

	ck_assert_uint_lt(map.start, 0x1000000);	/* ET_EXEC: base ignored */
	r = lookup(s, m, &map, ret_addr(f, "fx_root", "fx_mid"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_root");
	symbolizer__free(s);
}
END_TEST

START_TEST(shared_library_resolves_at_any_base)
{
	const char *f = fxpath("root/fx/libfx.so");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	uint64_t base = 0x7f1234560000ull;
	struct sym_module *m = load(s, f, f, f, base, &map);
	const struct sym_result *r;

	r = lookup(s, m, &map, base + ret_addr(f, "fxlib_work", "fxlib_helper"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fxlib_work");
	symbolizer__free(s);
}
END_TEST

START_TEST(inlined_function_gives_two_lines_leaf_first)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 2);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	const struct sym_result *r;
	const char *base;

	r = lookup(s, m, &map, BASE + ret_addr(f, "fx_outer", "fx_leaf2"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 2);
	ck_assert_uint_eq(r->inlined, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_inlined");
	ck_assert_str_eq(r->lines[1].name, "fx_outer");
	/* Lines of tests/fixtures/fx_app.c: the call in fx_inlined, and
	 * fx_outer's call of fx_inlined. */
	ck_assert_ptr_nonnull(r->lines[0].file);
	base = strrchr(r->lines[0].file, '/');
	ck_assert_str_eq(base ? base + 1 : r->lines[0].file, "fx_app.c");
	ck_assert_uint_eq(r->lines[0].line, 40);
	ck_assert_uint_eq(r->lines[1].line, 47);
	ck_assert_uint_eq(r->lines[1].start_line, 45);
	symbolizer__free(s);
}
END_TEST

START_TEST(no_inline_keeps_only_the_outer_function)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 1);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	const struct sym_result *r;

	r = lookup(s, m, &map, BASE + ret_addr(f, "fx_outer", "fx_leaf2"), 1);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_outer");
	ck_assert_ptr_null(r->lines[0].file);
	symbolizer__free(s);
}
END_TEST

START_TEST(cpp_names_are_demangled_unless_disabled)
{
	const char *f = fxpath("root/fx/fx_cpp");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct symbolizer *raw = new_sym(NULL, NULL, 4);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	struct sym_module *mr = load(raw, f, f, f, BASE, &map);
	uint64_t ret = BASE + ret_addr(f, "_ZN2fx5Shape4areaEii", "_ZN2fx6WorkerIlE3runEl");
	uint64_t leaf = BASE + sym_addr(f, "_ZN2fx6WorkerIlE3runEl") + 1;
	const struct sym_result *r;

	r = lookup(s, m, &map, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "fx::Shape::area(int, int)");
	ck_assert_str_eq(r->lines[0].raw, "_ZN2fx5Shape4areaEii");
	r = lookup(s, m, &map, leaf, 0);
	ck_assert_str_eq(r->lines[0].name, "fx::Worker<long>::run(long)");
	r = lookup(raw, mr, &map, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "_ZN2fx5Shape4areaEii");
	symbolizer__free(s);
	symbolizer__free(raw);
}
END_TEST

START_TEST(stripped_binary_needs_its_build_id_debuginfo)
{
	const char *f = fxpath("root/fx/fx_stripped");
	struct symbolizer *none = new_sym(NULL, NULL, 0);
	struct symbolizer *dbg = new_sym(NULL, fxpath("debug"), 0);
	struct stk_mapping map;
	struct sym_module *m0 = load(none, f, f, f, BASE, &map);
	struct sym_module *m1 = load(dbg, f, f, f, BASE, &map);
	uint8_t bid[64];
	char hex[129];
	char dbgfile[4096];
	uint64_t fn;
	const struct sym_result *r;
	int n;

	n = elf_file__build_id(f, bid);
	ck_assert_int_gt(n, 0);
	hex_encode(hex, bid, (size_t)n);
	snprintf(dbgfile, sizeof(dbgfile), "%s/debug/.build-id/%.2s/%s.debug", fx, hex, hex + 2);
	ck_assert_int_eq(fx_sym(dbgfile, "fx_leaf", &fn, NULL), 0);
	ck_assert_ptr_null(lookup(none, m0, &map, BASE + fn + 1, 0));
	ck_assert_int_eq(m0->status, SYM_MOD_NO_SYMBOLS);
	r = lookup(dbg, m1, &map, BASE + fn + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_leaf");
	ck_assert_int_eq(m1->status, SYM_MOD_OK);
	ck_assert_ptr_nonnull(m1->debug_path);
	ck_assert(m1->has_dwarf);
	symbolizer__free(none);
	symbolizer__free(dbg);
}
END_TEST

START_TEST(debuglink_name_finds_debuginfo_beside_the_binary)
{
	/* No build-id dir holds it: only the .gnu_debuglink name leads to
	 * .debug/fx_dbglink.debug next to the binary. */
	const char *f = fxpath("root/fx/fx_dbglink");
	const char *dbg = fxpath("root/fx/.debug/fx_dbglink.debug");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	const struct sym_result *r;
	uint64_t fn;

	ck_assert_int_eq(fx_sym(dbg, "fx_root", &fn, NULL), 0);
	r = lookup(s, m, &map, BASE + fn + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_root");
	ck_assert_ptr_nonnull(m->debug_path);
	ck_assert_str_eq(m->debug_path, dbg);
	symbolizer__free(s);
}
END_TEST

START_TEST(separate_debuginfo_alone_still_symbolizes)
{
	/* "Another machine" with only the .debug file: the binary's path
	 * does not exist, the debug dir has its debuginfo by build-id. */
	const char *f = fxpath("root/fx/fx_stripped");
	struct symbolizer *s = new_sym(NULL, fxpath("debug"), 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, "/nonexistent/fx_stripped", f, BASE, &map);
	uint64_t fn;
	const struct sym_result *r;
	uint8_t bid[64];
	char hex[129], dbgfile[4096];
	int n = elf_file__build_id(f, bid);

	hex_encode(hex, bid, (size_t)n);
	snprintf(dbgfile, sizeof(dbgfile), "%s/debug/.build-id/%.2s/%s.debug", fx, hex, hex + 2);
	ck_assert_int_eq(fx_sym(dbgfile, "fx_mid", &fn, NULL), 0);
	r = lookup(s, m, &map, BASE + fn + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_mid");
	ck_assert_int_eq(m->source, ELF_SRC_DEBUG_DIR);
	symbolizer__free(s);
}
END_TEST

START_TEST(rebuilt_binary_at_same_path_is_refused)
{
	/* Recorded: /fx/fx_pie with fx_pie_v2's build-id; the sysroot has
	 * another build of /fx/fx_pie. */
	const char *v2 = fxpath("root/fx/fx_pie_v2");
	struct symbolizer *s = new_sym(fxpath("root"), NULL, 0);
	struct symbolizer *ok = new_sym(fxpath("root"), fxpath("bid"), 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, v2, "/fx/fx_pie", v2, BASE, &map);
	struct sym_module *m2 = load(ok, v2, "/fx/fx_pie", v2, BASE, &map);
	uint64_t leaf = BASE + sym_addr(v2, "fx_leaf") + 1;
	const struct sym_result *r;

	ck_assert_ptr_null(lookup(s, m, &map, leaf, 0));
	ck_assert_int_eq(m->status, SYM_MOD_MISMATCH);
	ck_assert_ptr_nonnull(m->mismatch_path);
	ck_assert_str_eq(m->mismatch_path, fxpath("root/fx/fx_pie"));
	r = lookup(ok, m2, &map, leaf, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_leaf");
	ck_assert_int_eq(m2->source, ELF_SRC_DEBUG_DIR);
	symbolizer__free(s);
	symbolizer__free(ok);
}
END_TEST

START_TEST(missing_file_and_special_mappings_say_why)
{
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct stk_mapping map = { .start = 0x1000, .end = 0x2000, .prot = PROT_EXEC };
	struct sym_module *gone = symbolizer__module(s, "/nonexistent/bin (deleted)", bid, 20);
	struct sym_module *vdso = symbolizer__module(s, "[vdso]", NULL, 0);

	ck_assert_str_eq(gone->path, "/nonexistent/bin");
	ck_assert_ptr_null(lookup(s, gone, &map, 0x1100, 0));
	ck_assert_int_eq(gone->status, SYM_MOD_NOT_FOUND);
	ck_assert_ptr_null(lookup(s, vdso, &map, 0x1100, 0));
	ck_assert_int_eq(vdso->status, SYM_MOD_NOT_FILE);
	ck_assert_str_eq(sym_module_status__reason(SYM_MOD_MISMATCH), "build-id mismatch");
	symbolizer__free(s);
}
END_TEST

/* @path's bytes, malloc'ed, into *@size. */
static void *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc((size_t)n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

START_TEST(embedded_image_names_a_mapping_with_no_file)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, "[vdso]", f, BASE, &map);
	const struct sym_result *r;
	size_t size;
	void *img = slurp(f, &size);

	ck_assert_int_eq(symbolizer__add_embedded(s, m->build_id, m->build_id_size, img, size), 0);
	r = lookup(s, m, &map, BASE + sym_addr(f, "fx_leaf") + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_leaf");
	ck_assert_int_eq(m->status, SYM_MOD_OK);
	ck_assert_int_eq(m->source, ELF_SRC_EMBEDDED);
	ck_assert_str_eq(m->elf_path, "[vdso]");
	ck_assert_str_eq(elf_source__name(m->source), "embedded");
	symbolizer__free(s);
	free(img);
}
END_TEST

START_TEST(embedded_image_with_another_build_id_is_not_used)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct stk_mapping map;
	struct sym_module *m;
	size_t size;
	void *img = slurp(f, &size);

	/* fx_pie's image filed under a build-id that is not its own. */
	ck_assert_int_eq(symbolizer__add_embedded(s, bid, 20, img, size), 0);
	ck_assert_int_eq(symbolizer__add_embedded(s, bid, 0, img, size), -EINVAL);
	m = load(s, f, "[vdso]", f, BASE, &map);
	m = symbolizer__module(s, "[vdso]", bid, 20);
	ck_assert_ptr_null(lookup(s, m, &map, BASE + sym_addr(f, "fx_leaf") + 1, 0));
	ck_assert_int_eq(m->status, SYM_MOD_NOT_FILE);
	ck_assert_int_eq(m->source, ELF_SRC_NONE);
	ck_assert_ptr_null(m->elf_path);
	symbolizer__free(s);
	free(img);
}
END_TEST

START_TEST(modules_are_interned_and_lookups_cached)
{
	const char *f = fxpath("root/fx/fx_pie");
	struct symbolizer *s = new_sym(NULL, NULL, 0);
	struct stk_mapping map;
	struct sym_module *m = load(s, f, f, f, BASE, &map);
	struct sym_module *again = load(s, f, "/other/path/to/same", f, BASE, &map);
	uint64_t a = BASE + sym_addr(f, "fx_leaf") + 2;

	ck_assert_ptr_eq(m, again);
	ck_assert_uint_eq(symbolizer__nr_modules(s), 1);
	ck_assert_ptr_eq(lookup(s, m, &map, a, 0), lookup(s, m, &map, a, 0));
	symbolizer__free(s);
}
END_TEST

START_TEST(rust_legacy_names_lose_hash_and_escapes)
{
	struct demangler *d = demangler__new();
	char *n;

	n = demangler__demangle(d, "_ZN4core3fmt5write17h0123456789abcdefE");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, "core::fmt::write");
	free(n);
	n = demangler__demangle(d, "_ZN4test20$LT$impl$u20$Foo$GT$3bar17h0123456789abcdefE");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, "test::<impl Foo>::bar");
	free(n);
	ck_assert_ptr_null(demangler__demangle(d, "main"));
	ck_assert_ptr_null(demangler__demangle(d, "_Zgarbage"));
	demangler__free(d);
}
END_TEST

/* --short-names: each demangled form, and what it becomes. */
START_TEST(short_names_drop_parameters_and_return_types)
{
	static const char *const cases[][2] = {
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "int max<int>(int, int)", "max<int>" },
		{ "unsigned long fx::sum<unsigned long>(unsigned long*, int)", "fx::sum<unsigned long>" },
		{ "(anonymous namespace)::f(char*)", "(anonymous namespace)::f" },
		{ "S::operator()(int) const", "S::operator()" },
		{ "bool operator< <int>(A<int> const&, A<int> const&)", "operator< <int>" },
		{ "operator new(unsigned long)", "operator new" },
		{ "A::operator int() const", "A::operator int" },
		{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()" },
		{ "f(int) [clone .cold]", "f [clone .cold]" },
		{ "std::basic_string<char>::~basic_string()", "std::basic_string<char>::~basic_string" },
		{ "S::get() const &&", "S::get" },
		{ "fx::Worker<long>::run(long)", "fx::Worker<long>::run" },
		{ "void (*signal_handler(int))(int)", "signal_handler" },
		{ "main", "main" },
		{ "core::fmt::write", "core::fmt::write" },
		{ "guard variable for f()::x", "guard variable for f()::x" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		demangle__shorten(buf);
		ck_assert_msg(strcmp(buf, cases[i][1]) == 0, "'%s' -> '%s', want '%s'", cases[i][0],
			      buf, cases[i][1]);
	}
}
END_TEST

int main(void)
{
	const char *o = getenv("O");
	Suite *su = suite_create("symbolize");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	char rel[1024], *abs;

	/* Absolute: recorded paths always are. */
	snprintf(rel, sizeof(rel), "%s/tests/fixtures", o && o[0] ? o : "build");
	abs = realpath(rel, NULL);
	if (!abs) {
		fprintf(stderr, "check_symbolize: %s: fixtures missing (make fixtures)\n", rel);
		return 1;
	}
	snprintf(fx, sizeof(fx), "%s", abs);
	free(abs);
	tcase_add_test(tc, pie_leaf_and_return_addresses_name_their_functions);
	tcase_add_test(tc, call_ending_a_function_is_credited_to_the_caller_via_pc_minus_1);
	tcase_add_test(tc, non_pie_resolves_absolute_addresses);
	tcase_add_test(tc, shared_library_resolves_at_any_base);
	tcase_add_test(tc, inlined_function_gives_two_lines_leaf_first);
	tcase_add_test(tc, no_inline_keeps_only_the_outer_function);
	tcase_add_test(tc, cpp_names_are_demangled_unless_disabled);
	tcase_add_test(tc, stripped_binary_needs_its_build_id_debuginfo);
	tcase_add_test(tc, debuglink_name_finds_debuginfo_beside_the_binary);
	tcase_add_test(tc, separate_debuginfo_alone_still_symbolizes);
	tcase_add_test(tc, rebuilt_binary_at_same_path_is_refused);
	tcase_add_test(tc, missing_file_and_special_mappings_say_why);
	tcase_add_test(tc, embedded_image_names_a_mapping_with_no_file);
	tcase_add_test(tc, embedded_image_with_another_build_id_is_not_used);
	tcase_add_test(tc, modules_are_interned_and_lookups_cached);
	tcase_add_test(tc, rust_legacy_names_lose_hash_and_escapes);
	tcase_add_test(tc, short_names_drop_parameters_and_return_types);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
