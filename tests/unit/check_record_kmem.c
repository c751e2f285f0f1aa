// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_kmem: what stkrec says its BPF maps cost in kernel memory
 * (--stack-storage-size) and how it reads what the machine has.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check_main.h"
#include "kmem.h"
#include "stkrec.h"

START_TEST(hash_entry_is_header_key_value_and_bucket)
{
	/* 48-byte element header, 8-byte key, 1024-byte value, 16-byte
	 * bucket: the 1096 bytes an entry of "stacks" shows in fdinfo. */
	ck_assert_uint_eq(kmem__hash_bytes(1, 8, 1024), 1096);
	/* Keys and values round up to 8 bytes each. */
	ck_assert_uint_eq(kmem__hash_bytes(2, 1, 1), 2 * (48 + 8 + 8 + 16));
	ck_assert_uint_eq(kmem__hash_bytes(0, 8, 8), 0);
}
END_TEST

START_TEST(recording_is_stacks_ring_and_two_counts_maps)
{
	/* The set holds ids (8-byte key, 1-byte value), not frames. */
	uint64_t stacks = kmem__hash_bytes(16384, 8, 1) + (1u << 20);

	ck_assert_uint_eq(kmem__hash_bytes(1, 8, 1), 80);
	ck_assert_uint_eq(kmem__recording_bytes(16384, 1u << 20, 16384, 0),
			  stacks + 2 * kmem__hash_bytes(16384, sizeof(struct stkrec_count_key),
							sizeof(struct stkrec_count_lanes)));
	ck_assert_uint_eq(kmem__recording_bytes(16384, 1u << 20, 16384, 1),
			  stacks + 2 * kmem__hash_bytes(16384, sizeof(struct stkrec_offcpu_key),
							sizeof(struct stkrec_offcpu_value)));
	/* The largest size stkrec takes (4M ids, a 256 MiB ring) is about
	 * 1.9 GiB in profile mode with counts maps of as many entries (their
	 * values a count for each of eight intervals), 2.1 GiB off-CPU. */
	ck_assert_uint_gt(kmem__recording_bytes(4194304, 1u << 28, 4194304, 0), 7ULL << 28);
	ck_assert_uint_lt(kmem__recording_bytes(4194304, 1u << 28, 4194304, 0), 2ULL << 30);
	ck_assert_uint_lt(kmem__recording_bytes(4194304, 1u << 28, 4194304, 1), 9ULL << 28);
}
END_TEST

static char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/check_kmem.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

START_TEST(mem_available_is_read_in_bytes)
{
	char *p = write_tmp("MemTotal:       32768000 kB\nMemFree:         1000 kB\n"
			    "MemAvailable:    2097152 kB\nBuffers:  12 kB\n");
	uint64_t b = 0;

	ck_assert_int_eq(kmem__available(p, &b), 0);
	ck_assert_uint_eq(b, 2097152ULL * 1024);
	unlink(p);
}
END_TEST

START_TEST(no_mem_available_line_is_enoent)
{
	char *p = write_tmp("MemTotal:       32768000 kB\nMemFree:         1000 kB\n");
	uint64_t b = 7;

	ck_assert_int_eq(kmem__available(p, &b), -ENOENT);
	ck_assert_uint_eq(b, 7);
	unlink(p);
	ck_assert_int_eq(kmem__available("/nonexistent/meminfo", &b), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_kmem");
	TCase *tc = tcase_create("kmem");

	tcase_add_test(tc, hash_entry_is_header_key_value_and_bucket);
	tcase_add_test(tc, recording_is_stacks_ring_and_two_counts_maps);
	tcase_add_test(tc, mem_available_is_read_in_bytes);
	tcase_add_test(tc, no_mem_available_line_is_enoent);
	suite_add_tcase(s, tc);
	return check_run(s);
}
