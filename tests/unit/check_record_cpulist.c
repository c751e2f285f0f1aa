// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_cpulist: stkrec's CPU list parser (-C, and
 * /sys/devices/system/cpu/online) and its formatter.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "check_main.h"
#include "cpulist.h"

static void expect_list(const char *s, const int *want, size_t n)
{
	int *cpus = NULL;
	size_t got = 0, i;

	ck_assert_int_eq(cpulist__parse(s, &cpus, &got), 0);
	ck_assert_uint_eq(got, n);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(cpus[i], want[i]);
	free(cpus);
}

static void expect_einval(const char *s)
{
	int *cpus = NULL;
	size_t n = 99;

	ck_assert_int_eq(cpulist__parse(s, &cpus, &n), -EINVAL);
	ck_assert_ptr_null(cpus);
	ck_assert_uint_eq(n, 99);
}

START_TEST(single_cpu_and_ranges_parse_sorted)
{
	static const int a[] = { 0 };
	static const int b[] = { 0, 1, 2, 3, 8, 10, 11 };
	static const int c[] = { 1, 2, 5 };

	expect_list("0", a, 1);
	expect_list("0-3,8,10-11", b, 7);
	/* Out of order and overlapping items give each CPU once, sorted. */
	expect_list("5,1-2,2", c, 3);
}
END_TEST

START_TEST(trailing_newline_of_sysfs_is_accepted)
{
	static const int a[] = { 0, 1 };

	expect_list("0-1\n", a, 2);
}
END_TEST

START_TEST(malformed_lists_are_einval)
{
	expect_einval("");
	expect_einval(",");
	expect_einval("1,");
	expect_einval(",1");
	expect_einval("1,,2");
	expect_einval("3-1");
	expect_einval("1-");
	expect_einval("-1");
	expect_einval("a");
	expect_einval("1 2");
	expect_einval(" 1");
	expect_einval("1\n2");
	expect_einval("8192");
	expect_einval("0-99999999999999999999");
}
END_TEST

START_TEST(highest_cpu_number_is_accepted)
{
	static const int a[] = { CPULIST_MAX_CPU };

	expect_list("8191", a, 1);
}
END_TEST

START_TEST(format_compresses_runs_into_ranges)
{
	static const int a[] = { 0, 1, 2, 3, 8, 10, 11 };
	static const int b[] = { 4 };
	char buf[64];

	ck_assert_int_eq(cpulist__format(a, 7, buf, sizeof(buf)), 11);
	ck_assert_str_eq(buf, "0-3,8,10-11");
	ck_assert_int_eq(cpulist__format(b, 1, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "4");
	ck_assert_int_eq(cpulist__format(a, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(format_truncates_but_reports_full_length)
{
	static const int a[] = { 0, 1, 2, 3, 8, 10, 11 };
	char buf[6];

	ck_assert_int_eq(cpulist__format(a, 7, buf, sizeof(buf)), 11);
	ck_assert_str_eq(buf, "0-3,8");
}
END_TEST

START_TEST(online_cpus_are_read_from_sysfs)
{
	int *cpus = NULL;
	size_t n = 0;

	ck_assert_int_eq(cpulist__online(&cpus, &n), 0);
	ck_assert_uint_ge(n, 1);
	ck_assert_int_ge(cpus[0], 0);
	free(cpus);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_cpulist");
	TCase *tc = tcase_create("cpulist");

	tcase_add_test(tc, single_cpu_and_ranges_parse_sorted);
	tcase_add_test(tc, trailing_newline_of_sysfs_is_accepted);
	tcase_add_test(tc, malformed_lists_are_einval);
	tcase_add_test(tc, highest_cpu_number_is_accepted);
	tcase_add_test(tc, format_compresses_runs_into_ranges);
	tcase_add_test(tc, format_truncates_but_reports_full_length);
	tcase_add_test(tc, online_cpus_are_read_from_sysfs);
	suite_add_tcase(s, tc);
	return check_run(s);
}
