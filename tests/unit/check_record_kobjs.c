// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_kobjs: the kernel image and modules with their build-ids
 * (KBID), read from a fake /sys and /proc/modules.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "kobjs.h"

static char root[PATH_MAX];

/* A raw note file holding a GNU build-id of @n bytes, all @fill. */
static void put_note(const char *path, uint8_t fill, uint32_t n)
{
	uint8_t buf[256] = { 0 };
	Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = n, .n_type = NT_GNU_BUILD_ID };
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + sizeof(nh), "GNU", 4);
	memset(buf + sizeof(nh) + 4, fill, n);
	ck_assert_uint_eq(fwrite(buf, 1, sizeof(nh) + 4 + ((n + 3) & ~3u), f), sizeof(nh) + 4 + ((n + 3) & ~3u));
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/%s", root, rel);
	ck_assert_int_eq(system(cmd), 0);
}

static void setup(void)
{
	char p[PATH_MAX + 64];
	FILE *f;

	strcpy(root, "/tmp/check_kobjs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	mkdirs("sys/kernel");
	mkdirs("sys/module/alpha/notes");
	mkdirs("sys/module/beta");
	snprintf(p, sizeof(p), "%s/sys/kernel/notes", root);
	put_note(p, 0xab, 20);
	snprintf(p, sizeof(p), "%s/sys/module/alpha/notes/.note.gnu.build-id", root);
	put_note(p, 0xcd, 20);
	snprintf(p, sizeof(p), "%s/modules", root);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("alpha 16384 1 - Live 0xffffffffc0100000\n"
	      "beta 8192 0 alpha, Live 0xffffffffc0200000 (OE)\n"
	      "garbage line\n", f);
	fclose(f);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(kernel_image_comes_first_with_its_build_id_and_bounds)
{
	char sys[PATH_MAX + 8], mods[PATH_MAX + 16];
	struct kobjs ko;
	uint8_t want[20];

	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(mods, sizeof(mods), "%s/modules", root);
	ck_assert_int_eq(kobjs__read(&ko, sys, mods, 0xffffffff81000000, 0xffffffff82000000), 0);
	ck_assert_uint_ge(ko.n, 1);
	ck_assert_str_eq(ko.objs[0].name, "[kernel.kallsyms]");
	ck_assert_uint_eq(ko.objs[0].base, 0xffffffff81000000);
	ck_assert_uint_eq(ko.objs[0].size, 0x1000000);
	memset(want, 0xab, sizeof(want));
	ck_assert_uint_eq(ko.objs[0].build_id_size, 20);
	ck_assert_mem_eq(ko.objs[0].build_id, want, 20);
	kobjs__free(&ko);
}
END_TEST

START_TEST(modules_have_base_size_and_build_id_when_readable)
{
	char sys[PATH_MAX + 8], mods[PATH_MAX + 16];
	struct kobjs ko;
	uint8_t want[20];

	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(mods, sizeof(mods), "%s/modules", root);
	ck_assert_int_eq(kobjs__read(&ko, sys, mods, 0, 0), 0);
	ck_assert_uint_eq(ko.n, 3); /* the garbage line is skipped */
	ck_assert_uint_eq(ko.objs[0].base, 0);
	ck_assert_uint_eq(ko.objs[0].size, 0);
	ck_assert_str_eq(ko.objs[1].name, "alpha");
	ck_assert_uint_eq(ko.objs[1].base, 0xffffffffc0100000);
	ck_assert_uint_eq(ko.objs[1].size, 16384);
	memset(want, 0xcd, sizeof(want));
	ck_assert_uint_eq(ko.objs[1].build_id_size, 20);
	ck_assert_mem_eq(ko.objs[1].build_id, want, 20);
	ck_assert_str_eq(ko.objs[2].name, "beta");
	ck_assert_uint_eq(ko.objs[2].base, 0xffffffffc0200000);
	ck_assert_uint_eq(ko.objs[2].build_id_size, 0); /* no notes directory */
	kobjs__free(&ko);
}
END_TEST

START_TEST(kernel_without_modules_gives_the_image_only)
{
	char sys[PATH_MAX + 8], mods[PATH_MAX + 16];
	struct kobjs ko;

	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(mods, sizeof(mods), "%s/no-such-file", root);
	ck_assert_int_eq(kobjs__read(&ko, sys, mods, 0, 0), 0);
	ck_assert_uint_eq(ko.n, 1);
	kobjs__free(&ko);
	kobjs__free(&ko); /* safe twice: emptied */
}
END_TEST

START_TEST(unreadable_kernel_notes_leave_the_build_id_empty)
{
	char mods[PATH_MAX + 16];
	struct kobjs ko;

	snprintf(mods, sizeof(mods), "%s/modules", root);
	ck_assert_int_eq(kobjs__read(&ko, "/nonexistent", mods, 0, 0), 0);
	ck_assert_str_eq(ko.objs[0].name, "[kernel.kallsyms]");
	ck_assert_uint_eq(ko.objs[0].build_id_size, 0);
	kobjs__free(&ko);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_kobjs");
	TCase *tc = tcase_create("kobjs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kernel_image_comes_first_with_its_build_id_and_bounds);
	tcase_add_test(tc, modules_have_base_size_and_build_id_when_readable);
	tcase_add_test(tc, kernel_without_modules_gives_the_image_only);
	tcase_add_test(tc, unreadable_kernel_notes_leave_the_build_id_empty);
	suite_add_tcase(s, tc);
	return check_run(s);
}
