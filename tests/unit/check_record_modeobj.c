// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_modeobj: the question modeobj asks of the kernel's BTF
 * without parsing it (modeobj__btf_has_string()): whether a type name is
 * one of its strings, however the 64 KiB pieces it reads fall; and the
 * size of profile's counts maps (modeobj__profile_counts_entries()): four
 * flush intervals of samples, within 8192 and --stack-storage-size; and
 * of its rows ring (modeobj__rows_ring_bytes()).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "check_main.h"
#include "modeobj.h"

static const char *const wanted = "btf_trace_sched_prepare_exec";

/* A BTF file of an int, @nfill typedefs of 32-byte names, one of an
 * @extra-byte name if @extra, then a typedef named @name (if not NULL);
 * its path into @path.  The strings: "", "int", the names in that order. */
static void write_btf(char *path, size_t size, int nfill, size_t extra, const char *name)
{
	struct btf *btf = btf__new_empty();
	char fill[256];
	const void *raw;
	__u32 raw_size;
	int fd, i, id;

	ck_assert_ptr_nonnull(btf);
	ck_assert_uint_lt(extra, sizeof(fill));
	id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	ck_assert_int_gt(id, 0);
	for (i = 0; i <= nfill; i++) {
		size_t len = i < nfill ? 32 : extra;

		if (!len)
			break;
		snprintf(fill, sizeof(fill), "%c%07d", i < nfill ? 'f' : 'e', i);
		memset(fill + 8, 'x', len > 8 ? len - 8 : 0);
		fill[len > 8 ? len : 8] = '\0';
		ck_assert_int_gt(btf__add_typedef(btf, fill, id), 0);
	}
	if (name)
		ck_assert_int_gt(btf__add_typedef(btf, name, id), 0);
	raw = btf__raw_data(btf, &raw_size);
	ck_assert_ptr_nonnull(raw);
	snprintf(path, size, "/tmp/check_modeobj.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, raw, raw_size), (ssize_t)raw_size);
	close(fd);
	btf__free(btf);
}

START_TEST(name_found_only_when_it_is_a_whole_string)
{
	char path[64];

	write_btf(path, sizeof(path), 3, 0, wanted);
	ck_assert_int_eq(modeobj__btf_has_string(path, wanted), 1);
	ck_assert_int_eq(modeobj__btf_has_string(path, "int"), 1);
	/* A prefix, a suffix of a string: no type has that name. */
	ck_assert_int_eq(modeobj__btf_has_string(path, "btf_trace_sched_prepare"), 0);
	ck_assert_int_eq(modeobj__btf_has_string(path, "sched_prepare_exec"), 0);
	unlink(path);
	write_btf(path, sizeof(path), 3, 0, NULL);
	ck_assert_int_eq(modeobj__btf_has_string(path, wanted), 0);
	unlink(path);
}
END_TEST

/* The name at every offset around the first 64 KiB piece's end, and
 * around the second's: found wherever the pieces cut it. */
START_TEST(name_across_a_piece_boundary_is_found)
{
	char path[64];
	size_t extra;
	int piece;

	/* The strings: 5 bytes, then 33 per fill name: 1984 of them end at
	 * 65477, 3969 at 130982; an extra name of 20..70 bytes moves ours
	 * (29 bytes with the NUL before it) to start 65498..65548, or
	 * 131003..131053 (the second piece ends at 65536 + 65536 - 29 =
	 * 131043). */
	for (piece = 0; piece < 2; piece++) {
		for (extra = 20; extra <= 70; extra++) {
			write_btf(path, sizeof(path), piece ? 3969 : 1984, extra, wanted);
			ck_assert_int_eq(modeobj__btf_has_string(path, wanted), 1);
			ck_assert_int_eq(modeobj__btf_has_string(path, "btf_trace_sched_prepare_exe"), 0);
			unlink(path);
		}
	}
}
END_TEST

START_TEST(not_btf_is_ebadmsg_and_missing_is_enoent)
{
	char path[] = "/tmp/check_modeobj.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "ELF garbage, not BTF at all", 27), 27);
	close(fd);
	ck_assert_int_eq(modeobj__btf_has_string(path, wanted), -EBADMSG);
	unlink(path);
	ck_assert_int_eq(modeobj__btf_has_string(path, wanted), -ENOENT);
}
END_TEST

/* On the running kernel, the string says what the parsed BTF says. */
START_TEST(kernel_btf_agrees_with_libbpf)
{
	static const char *const names[] = {
		"btf_trace_sched_prepare_exec", "btf_trace_sched_switch",
		"btf_trace_sched_process_exec", "btf_trace_no_such_tracepoint_here",
	};
	struct btf *btf = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	size_t i;

	if (!btf)
		return;		/* no BTF: nothing to compare with */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_int_eq(modeobj__btf_has_string("/sys/kernel/btf/vmlinux", names[i]),
				 btf__find_by_name_kind(btf, names[i], BTF_KIND_TYPEDEF) > 0);
	btf__free(btf);
}
END_TEST

static uint32_t profile_counts(unsigned int hz, size_t cpus, double interval_s, uint32_t storage)
{
	struct recorder_opts o = {
		.frequency = hz,
		.nr_cpus = cpus,
		.flush_interval_ns = (uint64_t)(interval_s * 1e9),
		.stack_storage_size = storage,
	};

	return modeobj__profile_counts_entries(&o);
}

/* A row is one sample at least: four intervals' samples, 8192 at least
 * (the other modes' minimum), --stack-storage-size at most. */
START_TEST(profile_counts_follow_samples_per_interval)
{
	/* The default: 49 Hz, 1 s, 16384: the minimum up to 41 CPUs. */
	ck_assert_uint_eq(profile_counts(49, 2, 1, 16384), 8192);
	ck_assert_uint_eq(profile_counts(49, 41, 1, 16384), 8192);
	ck_assert_uint_eq(profile_counts(49, 64, 1, 16384), 4 * 49 * 64 + 1);
	ck_assert_uint_eq(profile_counts(49, 128, 1, 16384), 16384);
	ck_assert_uint_eq(profile_counts(4999, 1, 1, 65536), 4 * 4999 + 1);
	ck_assert_uint_eq(profile_counts(999, 1, 20, 65536), 65536);
	ck_assert_uint_eq(profile_counts(999, 2, 0.5, 65536), 8192);
	/* A set smaller than the minimum: the minimum, as before. */
	ck_assert_uint_eq(profile_counts(100000, 4096, 3600, 64), 8192);
	/* No overflow at the largest figures. */
	ck_assert_uint_eq(profile_counts(4000000000u, 1u << 20, 1e6, 1u << 22), 1u << 22);
}
END_TEST

static uint32_t rows_ring(unsigned int hz, size_t cpus, double interval_s)
{
	struct recorder_opts o = {
		.frequency = hz,
		.nr_cpus = cpus,
		.flush_interval_ns = (uint64_t)(interval_s * 1e9),
	};

	return modeobj__rows_ring_bytes(&o);
}

/* Two intervals of rows (80 bytes each) at one a period on every CPU, a
 * power of two from 64 KiB to 64 MiB. */
START_TEST(rows_ring_holds_two_intervals)
{
	/* The default 49 Hz, 1 s: the minimum (819 rows). */
	ck_assert_uint_eq(rows_ring(49, 2, 1), 64 * 1024);
	/* 999 Hz on 2 CPUs: 320 KB of rows. */
	ck_assert_uint_eq(rows_ring(999, 2, 1), 512 * 1024);
	ck_assert_uint_eq(rows_ring(999, 2, 0.05), 64 * 1024);
	ck_assert_uint_eq(rows_ring(999, 64, 1), 16 * 1024 * 1024);
	/* No overflow at the largest figures. */
	ck_assert_uint_eq(rows_ring(4000000000u, 1u << 20, 1e6), 64 * 1024 * 1024);
}
END_TEST

static Suite *modeobj_suite(void)
{
	Suite *s = suite_create("record_modeobj");
	TCase *tc = tcase_create("btf_has_string");
	TCase *tcc = tcase_create("profile_counts");

	tcase_add_test(tc, name_found_only_when_it_is_a_whole_string);
	tcase_add_test(tc, name_across_a_piece_boundary_is_found);
	tcase_add_test(tc, not_btf_is_ebadmsg_and_missing_is_enoent);
	tcase_add_test(tc, kernel_btf_agrees_with_libbpf);
	suite_add_tcase(s, tc);
	tcase_add_test(tcc, profile_counts_follow_samples_per_interval);
	tcase_add_test(tcc, rows_ring_holds_two_intervals);
	suite_add_tcase(s, tcc);
	return s;
}

int main(void)
{
	return check_run(modeobj_suite());
}
