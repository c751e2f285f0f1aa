// SPDX-License-Identifier: BSD-2-Clause
/*
 * kvmlinux tests on the stand-in vmlinux built by mk/kvmlinux.mk
 * ($O/tests/fixtures/kernel/vmlinux): whether a file is used (build-id),
 * the KASLR slide chosen from a capture's KBID base and KSYM symbols, and
 * lookups at slid addresses.  Addresses come from the fixture itself.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "capture.h"
#include "elffind.h"
#include "kvmlinux.h"
#include "../tools/fxelf.h"

#define SLIDE 0x1e200000ull
#define OTHER_SLIDE 0x2a400000ull

static char vmlinux[4096], other[4096];

/* A capture holding only kernel data: a "[kernel.kallsyms]" object and
 * the symbols added with ksym(). */
struct kcap {
	struct capture cap;
	struct cap_kobj kobj;
};

static void kcap__init(struct kcap *k, const char *bid_file, uint64_t base)
{
	int n;

	memset(k, 0, sizeof(*k));
	k->cap.ksyms = ksyms__new();
	ck_assert_ptr_nonnull(k->cap.ksyms);
	k->kobj.name = "[kernel.kallsyms]";
	k->kobj.base = base;
	k->kobj.size = 0x1000;
	if (bid_file) {
		n = elf_file__build_id(bid_file, k->kobj.build_id);
		ck_assert_int_gt(n, 0);
		k->kobj.build_id_size = (uint32_t)n;
	}
	k->cap.kobjs = &k->kobj;
	k->cap.nr_kobjs = 1;
}

static void kcap__fini(struct kcap *k)
{
	ksyms__free(k->cap.ksyms);
}

static uint64_t sym(const char *name)
{
	uint64_t v = 0;

	ck_assert_int_eq(fx_sym(vmlinux, name, &v, NULL), 0);
	return v;
}

/* Captured symbol @name of the fixture, recorded at its address + @slide. */
static void ksym(struct kcap *k, const char *name, uint64_t slide, const char *module)
{
	ck_assert_int_eq(ksyms__add(k->cap.ksyms, sym(name) + slide, 0, 0, name, module), 0);
}

static struct kvmlinux *open_kv(const struct kcap *k, int flags)
{
	struct symbolizer_opts o = {
		.sz = sizeof(o),
		.system_debug_dir = "",
		.no_inline = flags & 1,
		.lines = !!(flags & 2),
	};
	struct kvmlinux *kv = kvmlinux__open(vmlinux, &k->cap, &o);

	ck_assert_ptr_nonnull(kv);
	return kv;
}

static const struct sym_result *lookup(struct kvmlinux *kv, uint64_t addr, int is_ret)
{
	const struct sym_result *r = (const void *)1;

	ck_assert_int_eq(kvmlinux__lookup(kv, addr, is_ret, &r), 0);
	return r;
}

/* Return address of CALLER's call to CALLEE, at @slide. */
static uint64_t ret_addr(const char *caller, const char *callee, uint64_t slide)
{
	uint64_t v = 0;

	ck_assert_int_eq(fx_call_ret(vmlinux, caller, callee, &v), 0);
	return v + slide;
}

START_TEST(slide_is_kbid_base_minus_text_when_no_ksym_matches)
{
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;

	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_OK);
	ck_assert_uint_eq(in->slide, SLIDE);
	ck_assert_int_eq(in->slide_from_text, 1);
	ck_assert_uint_eq(in->ksym_matched, 0);
	ck_assert_uint_eq(in->ksym_votes, 0);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(slide_from_ksyms_alone_without_kbid_base)
{
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;

	kcap__init(&k, vmlinux, 0);
	ksym(&k, "vfs_read", SLIDE, NULL);
	ksym(&k, "ksys_read", SLIDE, NULL);
	ksym(&k, "do_syscall_64", SLIDE, NULL);
	/* Captures repeat symbols across flushes: still one vote each. */
	ksym(&k, "do_syscall_64", SLIDE, NULL);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_OK);
	ck_assert_uint_eq(in->slide, SLIDE);
	ck_assert_int_eq(in->slide_from_text, 0);
	ck_assert_uint_eq(in->ksym_matched, 3);
	ck_assert_uint_eq(in->ksym_votes, 3);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(ksym_majority_overrides_a_wrong_kbid_base)
{
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;

	kcap__init(&k, vmlinux, sym("_text") + OTHER_SLIDE);
	ksym(&k, "vfs_read", SLIDE, NULL);
	ksym(&k, "ksys_read", SLIDE, NULL);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_OK);
	ck_assert_uint_eq(in->slide, SLIDE);
	ck_assert_uint_eq(in->ksym_votes, 2);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(kbid_base_wins_a_tie_between_ksyms)
{
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;

	kcap__init(&k, vmlinux, sym("_text") + OTHER_SLIDE);
	ksym(&k, "vfs_read", SLIDE, NULL);
	ksym(&k, "ksys_read", OTHER_SLIDE, NULL);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_OK);
	ck_assert_uint_eq(in->slide, OTHER_SLIDE);
	ck_assert_uint_eq(in->ksym_matched, 2);
	ck_assert_uint_eq(in->ksym_votes, 1);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(module_ambiguous_and_unknown_ksyms_give_no_slide)
{
	const struct sym_result *r;
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;

	kcap__init(&k, vmlinux, 0);
	ksym(&k, "vfs_read", SLIDE, "fxmod");		/* "vfs_read [fxmod]" */
	ksym(&k, "ksys_read", SLIDE, NULL);		/* at two addresses */
	ksym(&k, "ksys_read", OTHER_SLIDE, NULL);
	ck_assert_int_eq(ksyms__add(k.cap.ksyms, 0xffffffffa0000000ull, 0, 0, "no_such_fn", NULL), 0);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_NO_SLIDE);
	ck_assert_uint_eq(in->ksym_matched, 0);
	r = lookup(kv, sym("vfs_read") + SLIDE, 0);
	ck_assert_ptr_null(r);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(another_build_id_is_refused_and_looks_nothing_up)
{
	const struct sym_result *r;
	struct kcap k;
	struct kvmlinux *kv;
	const struct kvmlinux_info *in;
	uint8_t bid[STK_MAX_BUILD_ID];
	int n = elf_file__build_id(vmlinux, bid);

	kcap__init(&k, other, sym("_text") + SLIDE);
	kv = open_kv(&k, 0);
	in = kvmlinux__info(kv);
	ck_assert_int_eq(in->status, KVMLINUX_MISMATCH);
	ck_assert_int_eq(n, (int)in->build_id_size);
	ck_assert_mem_eq(in->build_id, bid, (size_t)n);
	ck_assert_ptr_eq(in->kernel, &k.kobj);
	r = lookup(kv, sym("vfs_read") + SLIDE, 0);
	ck_assert_ptr_null(r);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(no_recorded_kernel_build_id_means_not_used)
{
	struct kcap k;
	struct kvmlinux *kv;

	kcap__init(&k, NULL, sym("_text") + SLIDE);
	kv = open_kv(&k, 0);
	ck_assert_int_eq(kvmlinux__info(kv)->status, KVMLINUX_NO_KERNEL_BID);
	kvmlinux__free(kv);
	k.cap.nr_kobjs = 0;
	kv = open_kv(&k, 0);
	ck_assert_int_eq(kvmlinux__info(kv)->status, KVMLINUX_NO_KERNEL_BID);
	ck_assert_ptr_null(kvmlinux__info(kv)->kernel);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(unreadable_files_fail_with_their_errno)
{
	struct symbolizer_opts o = { .sz = sizeof(o), .system_debug_dir = "" };
	char notelf[] = "/tmp/check_kvmlinux.XXXXXX";
	struct kcap k;
	int fd;

	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	errno = 0;
	ck_assert_ptr_null(kvmlinux__open("/nonexistent/vmlinux", &k.cap, &o));
	ck_assert_int_eq(errno, ENOENT);
	fd = mkstemp(notelf);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	errno = 0;
	ck_assert_ptr_null(kvmlinux__open(notelf, &k.cap, &o));
	ck_assert_int_eq(errno, ENOEXEC);
	unlink(notelf);
	kcap__fini(&k);
}
END_TEST

START_TEST(inlined_call_gives_two_frames_leaf_first_with_lines)
{
	const struct sym_result *r;
	struct kcap k;
	struct kvmlinux *kv;

	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	kv = open_kv(&k, 2);
	/* rw_verify_area's call, inlined into vfs_read. */
	r = lookup(kv, ret_addr("vfs_read", "_copy_to_user", SLIDE), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 2);
	ck_assert_uint_eq(r->inlined, 1);
	ck_assert_str_eq(r->lines[0].name, "rw_verify_area");
	ck_assert_str_eq(r->lines[1].name, "vfs_read");
	ck_assert_ptr_nonnull(r->lines[0].file);
	ck_assert_ptr_nonnull(strstr(r->lines[0].file, "fx_vmlinux.c"));
	ck_assert_ptr_nonnull(r->lines[1].file);
	ck_assert_ptr_nonnull(strstr(r->lines[1].file, "fx_vmlinux.c"));
	/* The inlined body comes before the function it is called from. */
	ck_assert_uint_gt(r->lines[0].line, 0);
	ck_assert_uint_gt(r->lines[1].line, r->lines[0].line);
	ck_assert_int_eq(kvmlinux__has_dwarf(kv), 1);
	/* The leaf, not a return address. */
	r = lookup(kv, sym("_copy_to_user") + SLIDE + 8, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "_copy_to_user");
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(no_inline_keeps_the_outer_function_and_reads_no_dwarf)
{
	const struct sym_result *r;
	struct kcap k;
	struct kvmlinux *kv;

	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	kv = open_kv(&k, 1);
	r = lookup(kv, ret_addr("vfs_read", "_copy_to_user", SLIDE), 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->nr_lines, 1);
	ck_assert_str_eq(r->lines[0].name, "vfs_read");
	ck_assert_ptr_null(r->lines[0].file);
	ck_assert_int_eq(kvmlinux__has_dwarf(kv), 0);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(call_ending_a_function_is_credited_to_it_via_pc_minus_1)
{
	const struct sym_result *r;
	struct kcap k;
	struct kvmlinux *kv;
	uint64_t ret = ret_addr("make_task_dead", "do_exit", SLIDE), start, size;

	ck_assert_int_eq(fx_sym(vmlinux, "make_task_dead", &start, &size), 0);
	/* The premise: the call is the function's last instruction. */
	ck_assert_uint_eq(ret, start + size + SLIDE);
	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	kv = open_kv(&k, 0);
	r = lookup(kv, ret, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->lines[r->nr_lines - 1].name, "make_task_dead");
	r = lookup(kv, ret, 0);
	ck_assert(!r || strcmp(r->lines[r->nr_lines - 1].name, "make_task_dead") != 0);
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

START_TEST(addresses_outside_the_image_code_are_not_looked_up)
{
	struct kcap k;
	struct kvmlinux *kv;

	kcap__init(&k, vmlinux, sym("_text") + SLIDE);
	kv = open_kv(&k, 0);
	/* Unslid: the link-time address is not where the kernel ran. */
	ck_assert_ptr_null(lookup(kv, sym("vfs_read"), 0));
	ck_assert_ptr_null(lookup(kv, 0xffffffffc0001010ull, 0));	/* a module */
	ck_assert_ptr_null(lookup(kv, sym("_etext") + SLIDE, 0));
	ck_assert_ptr_null(lookup(kv, sym("_text") + SLIDE - 1, 0));
	ck_assert_ptr_nonnull(lookup(kv, sym("_text") + SLIDE, 0));
	kvmlinux__free(kv);
	kcap__fini(&k);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("kvmlinux");
	TCase *tc = tcase_create("core");
	char dir[2048];

	if (check_build_path(dir, sizeof(dir), "tests/fixtures/kernel", "make fixtures"))
		return 1;
	snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", dir);
	snprintf(other, sizeof(other), "%s/vmlinux.other", dir);
	tcase_add_test(tc, slide_is_kbid_base_minus_text_when_no_ksym_matches);
	tcase_add_test(tc, slide_from_ksyms_alone_without_kbid_base);
	tcase_add_test(tc, ksym_majority_overrides_a_wrong_kbid_base);
	tcase_add_test(tc, kbid_base_wins_a_tie_between_ksyms);
	tcase_add_test(tc, module_ambiguous_and_unknown_ksyms_give_no_slide);
	tcase_add_test(tc, another_build_id_is_refused_and_looks_nothing_up);
	tcase_add_test(tc, no_recorded_kernel_build_id_means_not_used);
	tcase_add_test(tc, unreadable_files_fail_with_their_errno);
	tcase_add_test(tc, inlined_call_gives_two_frames_leaf_first_with_lines);
	tcase_add_test(tc, no_inline_keeps_the_outer_function_and_reads_no_dwarf);
	tcase_add_test(tc, call_ending_a_function_is_credited_to_it_via_pc_minus_1);
	tcase_add_test(tc, addresses_outside_the_image_code_are_not_looked_up);
	suite_add_tcase(su, tc);
	return check_run(su);
}
