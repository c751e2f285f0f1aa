// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_ksymtab: which kernel symbols a --kallsyms=covering
 * capture stores for the addresses it records (record/ksyms/ksymtab.c, on a
 * /proc/kallsyms table), read back from the KSYM chunks written.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_main.h"
#include "ksymtab.h"

static const char table[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T x86_64_start_kernel\n"
	"ffffffff81000100 T x86_64_start_reservations\n"
	"ffffffff81000140 T start_kernel\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff82000000 D some_data\n";

/* A path to a memory file holding @text (no file left behind). */
static const char *memfile(const char *text, char *path, size_t size)
{
	int fd = memfd_create("check_ksymtab", 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return path;
}

/*
 * Write what @kt queued after seeing @addrs, read the capture back and
 * return the symbol names joined with ',' in file order (static buffer).
 */
static const char *stored(const uint64_t *addrs, size_t n, struct ksymtab_stats *st)
{
	static char out[512];
	char path[64], rpath[64];
	struct ksymtab *kt = ksymtab__new();
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk c;
	uint64_t chunks = 0;
	size_t i;
	int fd, rfd;

	ck_assert_ptr_nonnull(kt);
	ck_assert_int_eq(ksymtab__load_kallsyms(kt, memfile(table, path, sizeof(path))), 0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(ksymtab__see(kt, addrs[i]), 0);
	ck_assert_int_eq(ksymtab__resolve(kt), 0);
	fd = memfd_create("check_ksymtab_out", 0);
	ck_assert_int_ge(fd, 0);
	rfd = dup(fd);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(ksymtab__write(kt, w, &chunks), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	ksymtab__stats(kt, st);
	ksymtab__free(kt);

	snprintf(rpath, sizeof(rpath), "/proc/self/fd/%d", rfd);
	r = stk_reader__open(rpath);
	ck_assert_ptr_nonnull(r);
	out[0] = '\0';
	while (stk_reader__next(r, &c) > 0) {
		if (c.type != STK_CHUNK_KSYM)
			continue;
		for (i = 0; i < c.u.ksym.n; i++) {
			if (out[0])
				strcat(out, ",");
			strcat(out, c.u.ksym.syms[i].name);
		}
	}
	stk_reader__close(r);
	close(rfd);
	return out;
}

START_TEST(return_address_at_a_symbol_start_also_stores_the_symbol_before)
{
	/* x86_64_start_reservations ends calling start_kernel, which never
	 * returns: the return address is start_kernel's first byte, and a
	 * report looks it up at address - 1. */
	const uint64_t addrs[] = { 0xffffffff81000140 };
	struct ksymtab_stats st;

	ck_assert_str_eq(stored(addrs, 1, &st), "start_kernel,x86_64_start_reservations");
	ck_assert_uint_eq(st.written, 2);
	ck_assert_uint_eq(st.unknown, 0);
}
END_TEST

START_TEST(address_inside_a_symbol_stores_that_symbol_only)
{
	const uint64_t addrs[] = { 0xffffffff81000150, 0xffffffff81000151, 0xffffffff81000110 };
	struct ksymtab_stats st;

	ck_assert_str_eq(stored(addrs, 3, &st), "start_kernel,x86_64_start_reservations");
	ck_assert_uint_eq(st.written, 2);
}
END_TEST

START_TEST(data_and_user_addresses_store_nothing)
{
	const uint64_t addrs[] = { 0xffffffff82000010, 0x7f0000001000 };
	struct ksymtab_stats st;

	ck_assert_str_eq(stored(addrs, 2, &st), "");
	ck_assert_uint_eq(st.unknown, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("record_ksymtab");
	TCase *tc = tcase_create("ksymtab");

	tcase_add_test(tc, return_address_at_a_symbol_start_also_stores_the_symbol_before);
	tcase_add_test(tc, address_inside_a_symbol_stores_that_symbol_only);
	tcase_add_test(tc, data_and_user_addresses_store_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
