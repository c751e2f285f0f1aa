// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CU index (report/symbols/cuaddr.c) finds an address's CU from the
 * CUs' own ranges, for DWARF without .debug_aranges (Go's, clang's,
 * rustc's), where libdwfl's dwfl_module_addrdie() finds none.  These tests
 * prove it finds the CU libdwfl finds from the aranges, at every third
 * address of a real binary (stkreport, built by gcc with aranges), and the
 * same CU again in a copy of it without .debug_aranges.  Where libdwfl
 * names a CU whose own ranges do not hold the address (it stretches each
 * arange to the next one's start), the index names none.
 */
#include <check.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "cuaddr.h"

static char out_dir[PATH_MAX];

static const Dwfl_Callbacks dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct opened {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t lo, hi;	/* its executable segment, module addresses */
};

static void open_file(struct opened *o, const char *rel)
{
	char file[PATH_MAX + 64];
	Dwarf_Addr dbias;
	GElf_Addr bias;
	size_t nph, i;
	Elf *elf;

	snprintf(file, sizeof(file), "%s/%s", out_dir, rel);
	o->dwfl = dwfl_begin(&dwfl_cb);
	ck_assert_ptr_nonnull(o->dwfl);
	dwfl_report_begin(o->dwfl);
	o->mod = dwfl_report_elf(o->dwfl, "fx", file, -1, 0, false);
	dwfl_report_end(o->dwfl, NULL, NULL);
	ck_assert_msg(o->mod, "%s: %s", file, dwfl_errmsg(-1));
	elf = dwfl_module_getelf(o->mod, &bias);
	ck_assert_ptr_nonnull(elf);
	ck_assert_ptr_nonnull(dwfl_module_getdwarf(o->mod, &dbias));
	ck_assert_int_eq(elf_getphdrnum(elf, &nph), 0);
	o->lo = o->hi = 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			o->lo = ph.p_vaddr + bias;
			o->hi = o->lo + ph.p_memsz;
		}
	}
	ck_assert_uint_lt(o->lo, o->hi);
}

static Dwarf_Off cu_off(Dwarf_Die *cudie)
{
	return cudie ? dwarf_dieoffset(cudie) : (Dwarf_Off)-1;
}

START_TEST(index_finds_the_cu_the_aranges_name)
{
	struct opened o;
	struct cu_addr *ca;
	long same = 0, diffs = 0;
	uint64_t pc;

	open_file(&o, "stkreport");
	ca = cu_addr__new(o.mod);
	ck_assert_ptr_nonnull(ca);
	for (pc = o.lo; pc < o.hi; pc += 3) {
		Dwarf_Addr b1, b2;
		Dwarf_Die *want = dwfl_module_addrdie(o.mod, pc, &b1);
		Dwarf_Die *got;

		if (!want)
			continue;
		got = cu_addr__find(ca, pc, &b2);
		/* libdwfl's aranges run on to the next CU's start: an address
		 * between CUs (crt's code) is the earlier CU's, not in its
		 * ranges, and in no CU of the index. */
		if (cu_off(got) == cu_off(want) && b1 == b2) {
			same++;
		} else if ((got || dwarf_haspc(want, pc - b1) != 0) && diffs++ < 5) {
			fprintf(stderr, "%#llx: CU %#llx, aranges say %#llx\n",
				(unsigned long long)pc, (unsigned long long)cu_off(got),
				(unsigned long long)cu_off(want));
		}
	}
	ck_assert_int_eq(diffs, 0);
	ck_assert_int_gt(same, 10000);	/* not vacuous */
	cu_addr__free(ca);
	dwfl_end(o.dwfl);
}
END_TEST

/* The copy without .debug_aranges: libdwfl finds no CU, the index the
 * one the original's aranges name. */
START_TEST(index_finds_the_cu_without_aranges)
{
	struct opened o, n;
	struct cu_addr *ca;
	long same = 0, diffs = 0, libdwfl = 0;
	uint64_t pc;

	open_file(&o, "stkreport");
	open_file(&n, "tests/fixtures/stkreport.noaranges");
	ck_assert_uint_eq(o.lo, n.lo);
	ca = cu_addr__new(n.mod);
	ck_assert_ptr_nonnull(ca);
	for (pc = o.lo; pc < o.hi; pc += 3) {
		Dwarf_Addr b1, b2;
		Dwarf_Die *want = dwfl_module_addrdie(o.mod, pc, &b1);
		Dwarf_Die *got = cu_addr__find(ca, pc, &b2);

		libdwfl += dwfl_module_addrdie(n.mod, pc, &b2) != NULL;
		if (!want)
			continue;
		if (cu_off(got) == cu_off(want))
			same++;
		else if (got || dwarf_haspc(want, pc - b1) != 0)
			diffs++;
	}
	ck_assert_int_eq(libdwfl, 0);	/* what the index is for */
	ck_assert_int_eq(diffs, 0);
	ck_assert_int_gt(same, 10000);
	cu_addr__free(ca);
	dwfl_end(n.dwfl);
	dwfl_end(o.dwfl);
}
END_TEST

START_TEST(free_accepts_null)
{
	cu_addr__free(NULL);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("cuaddr");
	TCase *tc = tcase_create("core");

	if (check_build_path(out_dir, sizeof(out_dir), "", "make"))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, index_finds_the_cu_the_aranges_name);
	tcase_add_test(tc, index_finds_the_cu_without_aranges);
	tcase_add_test(tc, free_accepts_null);
	suite_add_tcase(su, tc);
	return check_run(su);
}
