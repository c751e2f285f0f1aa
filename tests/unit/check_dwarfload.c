// SPDX-License-Identifier: BSD-2-Clause
/*
 * dwarfload.c reads zlib-compressed DWARF inflating only what lookups
 * need.  These tests prove it finds the CU libdw finds for every CU of a
 * real binary, inflates no further than the CU asked for, and that the
 * symbolizer's answers (names, inline frames, files, lines) are those of
 * libdwfl's own loading at every address, for DWARF in the binary and in
 * separate debuginfo.  Fixtures: mk/repperf.mk ($O/tests/fixtures/zdebug).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "../../report/dwarfload.h"
#include "../../report/elffind.h"
#include "../../report/symbolize.h"
#include "../tools/fxelf.h"

static char out_dir[PATH_MAX];

static const char *out_file(const char *rel)
{
	static char buf[4][PATH_MAX + 64];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", out_dir, rel);
	return buf[i];
}

/* The compressed debuginfo of the stripped fixture. */
static const char *debug_file(void)
{
	static char path[PATH_MAX + 256];
	uint8_t bid[64];
	char hex[129];
	int n = elf_file__build_id(out_file("tests/fixtures/zdebug/root/stkreport_s"), bid), i;

	ck_assert_int_gt(n, 0);
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	snprintf(path, sizeof(path), "%s/tests/fixtures/zdebug/debug/.build-id/%.2s/%s.debug",
		 out_dir, hex, hex + 2);
	return path;
}

/* Sum of the inflated sizes of the compressed sections of @path. */
static uint64_t inflated_total(const char *path)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	int fd;
	Elf *elf = fx_elf_open(path, &fd);

	ck_assert_ptr_nonnull(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			total += ch.ch_size;
	}
	fx_elf_close(elf, fd);
	return total;
}

START_TEST(uncompressed_dwarf_is_left_to_libdwfl)
{
	errno = 0;
	ck_assert_ptr_null(dwarf_load__open(out_file("stkreport"), 0));
	ck_assert_int_eq(errno, ENOTSUP);
	errno = 0;
	ck_assert_ptr_null(dwarf_load__open(out_file("no/such/file"), 0));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/*
 * Every CU that libdw reads in the same file (inflating it all), asked for
 * by its lowest address, is found at the same offset, and looking up the
 * first one inflates only part of the sections.
 */
START_TEST(each_cu_is_found_where_libdw_has_it_inflating_only_what_precedes)
{
	const char *zpath = out_file("tests/fixtures/zdebug/stkreport_z");
	struct dwarf_load *d = dwarf_load__open(zpath, 0);
	uint64_t total = inflated_total(zpath), after_first = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int fd, ncu = 0;
	Dwarf *ref;

	ck_assert_ptr_nonnull(d);
	fd = open(zpath, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ref = dwarf_begin(fd, DWARF_C_READ);
	ck_assert_ptr_nonnull(ref);
	while (dwarf_nextcu(ref, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, got;
		Dwarf_Addr base, lo, hi;

		ck_assert_ptr_nonnull(dwarf_offdie(ref, off + hsize, &cu));
		/* CUs without code (no ranges) are never asked for. */
		if (dwarf_ranges(&cu, 0, &base, &lo, &hi) > 0 && lo < hi) {
			ck_assert_int_eq(dwarf_load__addrdie(d, lo, &got), 0);
			ck_assert_uint_eq(dwarf_dieoffset(&got), off + hsize);
			ck_assert_str_eq(dwarf_diename(&got), dwarf_diename(&cu));
			if (!ncu++)
				after_first = dwarf_load__inflated(d);
		}
		off = next;
	}
	ck_assert_int_gt(ncu, 20);
	/* Not the whole file for the first CU; everything by the end, but
	 * still not the location lists and call frame sections. */
	ck_assert_uint_lt(after_first, total / 2);
	ck_assert_uint_lt(dwarf_load__inflated(d), total);
	dwarf_end(ref);
	close(fd);
	dwarf_load__close(d);
}
END_TEST

/*
 * libdwfl's rules at the edges: the gaps between ranges belong to the CU
 * before, and the last range includes its end address.  Compared with
 * dwfl_module_addrdie() on the same file around every range boundary.
 */
START_TEST(cu_at_every_range_boundary_is_libdwfl_s)
{
	const char *zpath = out_file("tests/fixtures/zdebug/stkreport_z");
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	struct dwarf_load *d = dwarf_load__open(zpath, 0);
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwarf_Aranges *ar;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	size_t n, i, checked = 0;
	Dwarf *dw;

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "z", zpath, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	ck_assert_ptr_nonnull(mod);
	dw = dwfl_module_getdwarf(mod, &bias);
	ck_assert_ptr_nonnull(dw);
	ck_assert_int_eq(dwarf_getaranges(dw, &ar, &n), 0);
	ck_assert_uint_gt(n, 20);
	for (i = 0; i < n; i++) {
		Dwarf_Addr start, end, probes[5];
		Dwarf_Word len;
		Dwarf_Off off;
		int k;

		ck_assert_int_eq(dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off), 0);
		end = start + len;
		probes[0] = start - 1;
		probes[1] = start;
		probes[2] = end - 1;
		probes[3] = end;
		probes[4] = end + 1;
		for (k = 0; k < 5; k++) {
			Dwarf_Die got, *want = dwfl_module_addrdie(mod, probes[k] + bias, &bias);
			int r = dwarf_load__addrdie(d, probes[k], &got);

			if (!want) {
				ck_assert_int_eq(r, -ENOENT);
				continue;
			}
			ck_assert_int_eq(r, 0);
			ck_assert_uint_eq(dwarf_dieoffset(&got), dwarf_dieoffset(want));
			checked++;
		}
	}
	ck_assert_uint_gt(checked, 5 * n / 2);
	dwfl_end(dwfl);
	dwarf_load__close(d);
}
END_TEST

START_TEST(address_past_every_range_has_no_cu)
{
	struct dwarf_load *d = dwarf_load__open(out_file("tests/fixtures/zdebug/stkreport_z"), 0);
	Dwarf_Die cu;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(dwarf_load__addrdie(d, UINT64_MAX - 16, &cu), -ENOENT);
	dwarf_load__close(d);
}
END_TEST

static struct symbolizer *new_sym(int dwfl, int lines, const char *debug_dir)
{
	const char *dirs[1] = { debug_dir };
	struct symbolizer_opts o = {
		.sz = sizeof(o),
		.debug_dirs = dirs,
		.nr_debug_dirs = debug_dir ? 1 : 0,
		.system_debug_dir = debug_dir ? "" : NULL,
		.lines = lines,
		.dwfl_dwarf = dwfl,
	};
	struct symbolizer *s = symbolizer__new(&o);

	ck_assert_ptr_nonnull(s);
	return s;
}

static int same_result(const struct sym_result *a, const struct sym_result *b)
{
	uint32_t i;

	if (!a || !b)
		return a == b;
	if (a->nr_lines != b->nr_lines || a->inlined != b->inlined)
		return 0;
	for (i = 0; i < a->nr_lines; i++) {
		const struct sym_line *x = &a->lines[i], *y = &b->lines[i];

		if (strcmp(x->name, y->name) || x->line != y->line || x->start_line != y->start_line)
			return 0;
		if ((!x->file || !y->file) ? x->file != y->file : strcmp(x->file, y->file) != 0)
			return 0;
	}
	return 1;
}

/*
 * Every @step-th address of @file's code, as leaf and return address,
 * with and without lines: dwarfload.c and libdwfl give the same answers.
 * Returns the number of lookups with inline frames (0 proves nothing).
 */
static long compare_loaders(const char *file, const char *debug_dir, unsigned int step)
{
	struct stk_mapping maps[8], *x = NULL;
	uint8_t bid[64];
	long inlined = 0, diffs = 0;
	int n, i, bn, lines;

	bn = elf_file__build_id(file, bid);
	ck_assert_int_gt(bn, 0);
	n = fx_mappings(file, 0x7f0000000000ull, maps, 8);
	for (i = 0; i < n; i++)
		if (maps[i].prot & PROT_EXEC)
			x = &maps[i];
	ck_assert_ptr_nonnull(x);
	for (lines = 0; lines < 2; lines++) {
		struct symbolizer *ours = new_sym(0, lines, debug_dir);
		struct symbolizer *dwfl = new_sym(1, lines, debug_dir);
		struct sym_module *mo = symbolizer__module(ours, file, bid, (uint32_t)bn);
		struct sym_module *md = symbolizer__module(dwfl, file, bid, (uint32_t)bn);
		uint64_t addr;

		for (addr = x->start; addr < x->end; addr += step) {
			int is_ret;

			for (is_ret = 0; is_ret < 2; is_ret++) {
				const struct sym_result *ro = NULL, *rd = NULL;

				ck_assert_int_eq(symbolizer__lookup(ours, mo, x, addr, is_ret, &ro), 0);
				ck_assert_int_eq(symbolizer__lookup(dwfl, md, x, addr, is_ret, &rd), 0);
				if (!same_result(ro, rd) && diffs++ < 5)
					fprintf(stderr, "%s+%#llx lines=%d: %s (libdwfl: %s)\n", file,
						(unsigned long long)(addr - x->start), lines,
						ro ? ro->lines[0].name : "-", rd ? rd->lines[0].name : "-");
				inlined += rd && rd->inlined;
			}
		}
		ck_assert_int_eq(mo->status, SYM_MOD_OK);
		ck_assert(mo->has_dwarf);
		ck_assert(md->has_dwarf);
		symbolizer__free(ours);
		symbolizer__free(dwfl);
	}
	ck_assert_int_eq(diffs, 0);
	return inlined;
}

START_TEST(compressed_dwarf_in_the_binary_symbolizes_as_libdwfl_does)
{
	ck_assert_int_gt(compare_loaders(out_file("tests/fixtures/zdebug/stkreport_z"), NULL, 7),
			 1000);
}
END_TEST

START_TEST(compressed_separate_debuginfo_symbolizes_as_libdwfl_does)
{
	const char *dbg = debug_file();

	ck_assert_int_eq(access(dbg, R_OK), 0);
	ck_assert_int_gt(compare_loaders(out_file("tests/fixtures/zdebug/root/stkreport_s"),
					 out_file("tests/fixtures/zdebug/debug"), 7), 1000);
}
END_TEST

/* Distribution debuginfo when installed (Debian's libc6-dbg): libc's
 * .debug_info is ~6 MB compressed, with every kind of unit GCC emits. */
static char libc_debug[PATH_MAX];

START_TEST(libc_debuginfo_symbolizes_as_libdwfl_does)
{
	ck_assert_int_gt(compare_loaders(libc_debug, NULL, 61), 100);
}
END_TEST

static int find_libc_debuginfo(void)
{
	static const char *const libcs[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6",
		"/lib64/libc.so.6",
	};
	char hex[129];
	uint8_t bid[64];
	size_t i;
	int n, j;

	for (i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++) {
		char dbg[PATH_MAX + 256];

		n = elf_file__build_id(libcs[i], bid);
		if (n <= 0)
			continue;
		for (j = 0; j < n; j++)
			sprintf(hex + 2 * j, "%02x", bid[j]);
		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		if (access(dbg, R_OK) == 0) {
			snprintf(libc_debug, sizeof(libc_debug), "%s", libcs[i]);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	const char *o = getenv("O");
	Suite *su = suite_create("dwarfload");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	char *abs;
	int failed;

	abs = realpath(o && o[0] ? o : "build", NULL);
	if (!abs) {
		fprintf(stderr, "check_dwarfload: build directory missing (make)\n");
		return 1;
	}
	snprintf(out_dir, sizeof(out_dir), "%s", abs);
	free(abs);
	elf_version(EV_CURRENT);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, uncompressed_dwarf_is_left_to_libdwfl);
	tcase_add_test(tc, each_cu_is_found_where_libdw_has_it_inflating_only_what_precedes);
	tcase_add_test(tc, cu_at_every_range_boundary_is_libdwfl_s);
	tcase_add_test(tc, address_past_every_range_has_no_cu);
	tcase_add_test(tc, compressed_dwarf_in_the_binary_symbolizes_as_libdwfl_does);
	tcase_add_test(tc, compressed_separate_debuginfo_symbolizes_as_libdwfl_does);
	if (find_libc_debuginfo())
		tcase_add_test(tc, libc_debuginfo_symbolizes_as_libdwfl_does);
	else
		fprintf(stderr, "check_dwarfload: no libc debuginfo installed, its test skipped\n");
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
