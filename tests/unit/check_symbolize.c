// SPDX-License-Identifier: BSD-2-Clause
/*
 * Symbolizer tests on the ELF fixtures built by mk/report.mk
 * ($O/tests/fixtures): each address is derived from the fixture files
 * themselves, so a test proves the lookup, not a copied number.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "demangle.h"
#include "elffind.h"
#include "symbolize.h"
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

/* Value of @name in the debuginfo of @file under debug/.build-id/. */
static uint64_t debuginfo_sym_addr(const char *file, const char *name)
{
	char hex[129], path[4096];
	uint8_t bid[64];
	int n = elf_file__build_id(file, bid);

	ck_assert_int_gt(n, 0);
	hex_encode(hex, bid, (size_t)n);
	snprintf(path, sizeof(path), "%s/debug/.build-id/%.2s/%s.debug", fx, hex, hex + 2);
	return sym_addr(path, name);
}

static uint64_t ret_addr(const char *file, const char *caller, const char *callee)
{
	uint64_t v = 0;

	ck_assert_int_eq(fx_call_ret(file, caller, callee, &v), 0);
	return v;
}

#define BASE 0x555555554000ull

/* Fixture @rel loaded at @base in a symbolizer of its own (new_sym(NULL,
 * NULL, @flags)), recorded under its own path: what most tests look in. */
struct fxmod {
	const char *f;
	struct symbolizer *s;
	struct stk_mapping map;		/* its executable mapping */
	struct sym_module *m;
};

static void fx_load(struct fxmod *x, const char *rel, uint64_t base, int flags)
{
	x->f = fxpath(rel);
	x->s = new_sym(NULL, NULL, flags);
	x->m = load(x->s, x->f, x->f, x->f, base, &x->map);
}

static const struct sym_result *fx_lookup(struct fxmod *x, uint64_t addr, int is_ret)
{
	return lookup(x->s, x->m, &x->map, addr, is_ret);
}

static void fx_unload(struct fxmod *x)
{
	symbolizer__free(x->s);
}

START_TEST(pie_leaf_and_return_addresses_name_their_functions)
{
	struct fxmod x;
	const struct sym_result *r;

	fx_load(&x, "root/fx/fx_pie", BASE, 0);
	r = fx_lookup(&x, BASE + sym_addr(x.f, "fx_leaf") + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_leaf");
	r = fx_lookup(&x, BASE + ret_addr(x.f, "fx_mid", "fx_leaf"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_mid");
	ck_assert_int_eq(x.m->status, SYM_MOD_OK);
	ck_assert_int_eq(x.m->source, ELF_SRC_PATH);
	fx_unload(&x);
}
END_TEST

START_TEST(call_ending_a_function_is_credited_to_the_caller_via_pc_minus_1)
{
	struct fxmod x;
	uint64_t ret;
	const struct sym_result *r;

	fx_load(&x, "root/fx/fx_pie", BASE, 0);
	ret = BASE + ret_addr(x.f, "fx_dies", "fx_abort");
	/* The fixture's layout makes the return address the next function. */
	ck_assert_uint_eq(ret, BASE + sym_addr(x.f, "fx_after_dies"));
	r = fx_lookup(&x, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_dies");
	r = fx_lookup(&x, ret, 0);
	ck_assert_str_eq(r->lines[0].name, "fx_after_dies");
	fx_unload(&x);
}
END_TEST

START_TEST(non_pie_resolves_absolute_addresses)
{
	struct fxmod x;
	const struct sym_result *r;

	fx_load(&x, "root/fx/fx_nopie", BASE, 0);
	ck_assert_uint_lt(x.map.start, 0x1000000);	/* ET_EXEC: base ignored */
	r = fx_lookup(&x, ret_addr(x.f, "fx_root", "fx_mid"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_root");
	fx_unload(&x);
}
END_TEST

START_TEST(shared_library_resolves_at_any_base)
{
	struct fxmod x;
	uint64_t base = 0x7f1234560000ull;
	const struct sym_result *r;

	fx_load(&x, "root/fx/libfx.so", base, 0);
	r = fx_lookup(&x, base + ret_addr(x.f, "fxlib_work", "fxlib_helper"), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fxlib_work");
	fx_unload(&x);
}
END_TEST

START_TEST(inlined_function_gives_two_lines_leaf_first)
{
	struct fxmod x;
	const struct sym_result *r;
	const char *base;

	fx_load(&x, "root/fx/fx_pie", BASE, 2);
	r = fx_lookup(&x, BASE + ret_addr(x.f, "fx_outer", "fx_leaf2"), 1);
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
	fx_unload(&x);
}
END_TEST

START_TEST(no_inline_keeps_only_the_outer_function)
{
	struct fxmod x;
	const struct sym_result *r;

	fx_load(&x, "root/fx/fx_pie", BASE, 1);
	r = fx_lookup(&x, BASE + ret_addr(x.f, "fx_outer", "fx_leaf2"), 1);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "fx_outer");
	ck_assert_ptr_null(r->lines[0].file);
	fx_unload(&x);
}
END_TEST

START_TEST(cpp_names_are_demangled_unless_disabled)
{
	struct fxmod x;
	struct symbolizer *raw = new_sym(NULL, NULL, 4);
	struct sym_module *mr;
	uint64_t ret, leaf;
	const struct sym_result *r;

	fx_load(&x, "root/fx/fx_cpp", BASE, 0);
	mr = load(raw, x.f, x.f, x.f, BASE, &x.map);
	ret = BASE + ret_addr(x.f, "_ZN2fx5Shape4areaEii", "_ZN2fx6WorkerIlE3runEl");
	leaf = BASE + sym_addr(x.f, "_ZN2fx6WorkerIlE3runEl") + 1;
	r = fx_lookup(&x, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "fx::Shape::area(int, int)");
	ck_assert_str_eq(r->lines[0].raw, "_ZN2fx5Shape4areaEii");
	r = fx_lookup(&x, leaf, 0);
	ck_assert_str_eq(r->lines[0].name, "fx::Worker<long>::run(long)");
	r = lookup(raw, mr, &x.map, ret, 1);
	ck_assert_str_eq(r->lines[0].name, "_ZN2fx5Shape4areaEii");
	fx_unload(&x);
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
	uint64_t fn = debuginfo_sym_addr(f, "fx_leaf");
	const struct sym_result *r;

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
	struct fxmod x;
	const char *dbg = fxpath("root/fx/.debug/fx_dbglink.debug");
	const struct sym_result *r;
	uint64_t fn;

	fx_load(&x, "root/fx/fx_dbglink", BASE, 0);
	ck_assert_int_eq(fx_sym(dbg, "fx_root", &fn, NULL), 0);
	r = fx_lookup(&x, BASE + fn + 1, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "fx_root");
	ck_assert_ptr_nonnull(x.m->debug_path);
	ck_assert_str_eq(x.m->debug_path, dbg);
	fx_unload(&x);
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
	uint64_t fn = debuginfo_sym_addr(f, "fx_mid");
	const struct sym_result *r;

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
	struct fxmod x;
	struct sym_module *again;
	uint64_t a;

	fx_load(&x, "root/fx/fx_pie", BASE, 0);
	again = load(x.s, x.f, "/other/path/to/same", x.f, BASE, &x.map);
	a = BASE + sym_addr(x.f, "fx_leaf") + 2;
	ck_assert_ptr_eq(x.m, again);
	ck_assert_uint_eq(symbolizer__nr_modules(x.s), 1);
	ck_assert_ptr_eq(fx_lookup(&x, a, 0), fx_lookup(&x, a, 0));
	fx_unload(&x);
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

/* uwholes' nl_trampoline is a code label (no .type, as ld.so's _start):
 * it names the code no function covers, up to the next function, and the
 * sizeless function before it (crtstuff's frame_dummy) ends there. */
START_TEST(code_label_names_what_no_function_covers)
{
	char path[4096];
	struct fxmod x;
	const struct sym_result *r;
	uint64_t label, size = 1, work;

	check_build_path(path, sizeof(path), "tests/unwind/uwholes", "make check");
	ck_assert_int_eq(fx_sym(path, "nl_trampoline", &label, &size), 0);
	ck_assert_uint_eq(size, 0);
	x.f = path;
	x.s = new_sym(NULL, NULL, 0);
	x.m = load(x.s, x.f, x.f, x.f, BASE, &x.map);
	r = fx_lookup(&x, BASE + label, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "nl_trampoline");
	/* The return address after its call of nl_work (push %rbp, mov
	 * %rsp,%rbp, call: 1 + 3 + 5 bytes in). */
	r = fx_lookup(&x, BASE + label + 9, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "nl_trampoline");
	/* Functions keep their names. */
	work = sym_addr(path, "nl_work");
	r = fx_lookup(&x, BASE + work, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "nl_work");
	fx_unload(&x);
}
END_TEST

/*
 * The classic x86-64 lazy PLT, counted rather than decoded (the symbolizer
 * follows each stub's jump to its GOT slot instead): the k-th JUMP_SLOT
 * relocation of .rela.plt is the (k+1)-th 16-byte entry of .plt, PLT0
 * first.  Returns 0 and sets *@addr to @sym's stub, or -ENOENT.
 */
static int plt_stub_addr(const char *file, const char *sym, uint64_t *addr)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), k = 0, found = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t plt = 0;
	size_t shstrndx;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".plt") == 0)
			plt = sh.sh_addr;
		if (name && strcmp(name, ".rela.plt") == 0) {
			Elf_Data *d = elf_getdata(scn, NULL), *sd;
			Elf_Scn *dyn = elf_getscn(elf, sh.sh_link);
			GElf_Shdr dsh;
			GElf_Rela r;
			GElf_Sym y;

			ck_assert_ptr_nonnull(gelf_getshdr(dyn, &dsh));
			sd = elf_getdata(dyn, NULL);
			for (k = 0; gelf_getrela(d, k, &r); k++) {
				ck_assert_ptr_nonnull(gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &y));
				if (strcmp(elf_strptr(elf, dsh.sh_link, y.st_name), sym) == 0)
					found = k;
			}
		}
	}
	elf_end(elf);
	close(fd);
	if (found < 0 || !plt)
		return -ENOENT;
	*addr = plt + 16 * (uint64_t)(found + 1);
	return 0;
}

/* uwholes (-z lazy) calls libuwctor.so's uwctor_linked through its PLT: a
 * sample in the stub is uwctor_linked@plt, as perf and objdump name it,
 * not [unknown]; PLT0 has no symbol of its own. */
START_TEST(plt_stub_is_named_for_the_function_it_jumps_to)
{
	char path[4096];
	struct fxmod x;
	const struct sym_result *r;
	uint64_t stub;
	struct demangler *d = demangler__new();
	char *n;

	check_build_path(path, sizeof(path), "tests/unwind/uwholes", "make check");
	ck_assert_int_eq(plt_stub_addr(path, "uwctor_linked", &stub), 0);
	x.f = path;
	x.s = new_sym(NULL, NULL, 0);
	x.m = load(x.s, x.f, x.f, x.f, BASE, &x.map);
	r = fx_lookup(&x, BASE + stub, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "uwctor_linked@plt");
	/* Its last byte (the lazy entry's jmp to PLT0) too, and the next
	 * entry is another function's. */
	r = fx_lookup(&x, BASE + stub + 15, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[0].name, "uwctor_linked@plt");
	r = fx_lookup(&x, BASE + stub + 16, 0);
	ck_assert(!r || strcmp(r->lines[0].name, "uwctor_linked@plt") != 0);
	fx_unload(&x);
	/* A C++ stub: demangled, the suffix kept (perf's fx::run()@plt). */
	n = demangler__demangle(d, "_ZN2fx3runEv@plt");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, "fx::run()@plt");
	free(n);
	demangler__free(d);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("symbolize");
	TCase *tc = tcase_create("core");

	if (check_build_path(fx, sizeof(fx), "tests/fixtures", "make fixtures"))
		return 1;
	tcase_add_test(tc, pie_leaf_and_return_addresses_name_their_functions);
	tcase_add_test(tc, plt_stub_is_named_for_the_function_it_jumps_to);
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
	tcase_add_test(tc, code_label_names_what_no_function_covers);
	suite_add_tcase(su, tc);
	return check_run(su);
}
