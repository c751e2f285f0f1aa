// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_esym: the pieces of --embed-symbols — an ELF file's
 * function symbols at file offsets (elfsyms.c), and perf map parsing
 * (perfmap.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_main.h"
#include "elfsyms.h"
#include "esym.h"
#include "perfmap.h"
#include "procmaps.h"
#include "procs.h"

/* A local function with a name of its own, to look up in our own file. */
__attribute__((noinline, noipa)) static int elfsyms_fixture_fn(int x)
{
	return x * 3 + 1;
}

/* The file offset of our own address @a, through /proc/self/maps, as a
 * reporter turns a sampled address into one. */
static uint64_t self_file_offset(uint64_t a)
{
	char line[4096];
	uint64_t off = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		struct procmaps_line l;

		if (procmaps__parse_line(line, &l) == 0 && a >= l.start && a < l.end) {
			off = a - l.start + l.offset;
			break;
		}
	}
	fclose(f);
	return off;
}

START_TEST(own_function_is_found_at_its_file_offset)
{
	struct elfsyms t;
	uint64_t off = self_file_offset((uint64_t)(uintptr_t)elfsyms_fixture_fn);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	long i;

	ck_assert_int_eq(elfsyms_fixture_fn(1), 4);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_fd(fd, &t), 0);
	close(fd);
	ck_assert_uint_gt(t.n, 10);
	ck_assert(t.sources & STK_ESYM_SRC_SYMTAB);
	i = elfsyms__find(&t, off);
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(t.syms[i].name, "elfsyms_fixture_fn");
	ck_assert_uint_eq(t.syms[i].addr, off);
	/* Sorted, one per address, each with a size. */
	for (i = 1; i < (long)t.n; i++)
		ck_assert_uint_gt(t.syms[i].addr, t.syms[i - 1].addr);
	elfsyms__free(&t);
}
END_TEST

/* A call that does not return, as the last instruction of its caller:
 * the return address is past the caller's end. */
static jmp_buf noreturn_jb;
static uint64_t noreturn_ret;

__attribute__((noinline, noipa, noreturn)) static void esym_fixture_noreturn(void)
{
	noreturn_ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	longjmp(noreturn_jb, 1);
}

__attribute__((noinline, noipa)) static void esym_fixture_ends_in_noreturn(void)
{
	esym_fixture_noreturn();
}

/*
 * --embed-symbols=covering stores the symbol a report names a return
 * address by, the one covering address - 1: here the caller, although
 * the return address itself is past its end.
 */
START_TEST(covering_symbols_of_a_return_address_at_a_function_end)
{
	struct procs *p = procs__new();
	struct esym *e = esym__new(ESYM_COVERING);
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk c;
	struct elfsyms t;
	uint64_t ips[2], chunks = 0, off;
	char path[64];
	int fd, rfd, found = 0;
	long k;
	size_t i;

	if (setjmp(noreturn_jb) == 0)
		esym_fixture_ends_in_noreturn();
	ck_assert_uint_ne(noreturn_ret, 0);
	/* The fixture holds: the return address is not in the caller. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_fd(fd, &t), 0);
	close(fd);
	off = self_file_offset(noreturn_ret);
	k = elfsyms__find(&t, off);
	ck_assert(k < 0 || strcmp(t.syms[k].name, "esym_fixture_ends_in_noreturn") != 0);
	k = elfsyms__find(&t, off - 1);
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(t.syms[k].name, "esym_fixture_ends_in_noreturn");
	elfsyms__free(&t);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)getpid(), "check", 0), 0);
	ips[0] = (uint64_t)(uintptr_t)elfsyms_fixture_fn;
	ips[1] = noreturn_ret;
	ck_assert_int_eq(esym__queue(e, (uint32_t)getpid(), ips, 2), 0);
	fd = memfd_create("check_esym", 0);
	ck_assert_int_ge(fd, 0);
	rfd = dup(fd);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(esym__flush(e, p, w, &chunks), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	r = stk_reader__open(path);
	ck_assert_ptr_nonnull(r);
	while (stk_reader__next(r, &c) > 0)
		for (i = 0; c.type == STK_CHUNK_ESYM && i < c.u.esym.nr_syms; i++)
			found += strcmp(c.u.esym.syms[i].name, "esym_fixture_ends_in_noreturn") == 0;
	ck_assert_int_eq(found, 1);
	stk_reader__close(r);
	close(rfd);
	esym__free(e);
	procs__free(p);
}
END_TEST

START_TEST(not_elf_and_truncated_files_are_refused)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file, but long enough for a header\n";
	uint8_t hdr[64];
	struct elfsyms t;
	int fd;

	ck_assert_int_eq(elfsyms__read_mem(text, sizeof(text), &t), -ENOEXEC);
	ck_assert_ptr_null(t.syms);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(read(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	close(fd);
	/* Only the ELF header: its section headers lie past the end. */
	ck_assert_int_eq(elfsyms__read_mem(hdr, sizeof(hdr), &t), -EBADMSG);
}
END_TEST

START_TEST(perf_map_lines_parse_and_bad_ones_are_skipped)
{
	char text[] = "7f0000001000 40 first\n"
		      "0x7f0000000100 0x10 with prefix\r\n"
		      "garbage line\n"
		      "7f0000002000 0 size zero\n"
		      "7f0000003000 20\n"
		      "12345678901234567 10 too long\n"
		      "7f0000004000 8 LazyCompile:*f /a b.js:1";
	struct stk_esym_sym *s = NULL;
	long n = perfmap__parse(text, strlen(text), &s);

	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(s[0].addr, 0x7f0000000100);
	ck_assert_uint_eq(s[0].size, 0x10);
	ck_assert_str_eq(s[0].name, "with prefix");
	ck_assert_uint_eq(s[1].addr, 0x7f0000001000);
	ck_assert_str_eq(s[1].name, "first");
	ck_assert_str_eq(s[2].name, "LazyCompile:*f /a b.js:1");
	free(s);
}
END_TEST

START_TEST(nspid_of_ourselves_is_our_pid_outside_a_namespace)
{
	/* The tests run in the initial PID namespace. */
	ck_assert_uint_eq(perfmap__nspid("/proc", (uint32_t)getpid()), (uint32_t)getpid());
	ck_assert_uint_eq(perfmap__nspid("/nonexistent", 42), 42);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("record_esym");
	TCase *tc = tcase_create("esym");

	tcase_add_test(tc, own_function_is_found_at_its_file_offset);
	tcase_add_test(tc, covering_symbols_of_a_return_address_at_a_function_end);
	tcase_add_test(tc, not_elf_and_truncated_files_are_refused);
	tcase_add_test(tc, perf_map_lines_parse_and_bad_ones_are_skipped);
	tcase_add_test(tc, nspid_of_ourselves_is_our_pid_outside_a_namespace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
