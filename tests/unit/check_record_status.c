// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_status: the text of stkrec's live status line, which says
 * what the mode counts (samples; or blocking episodes and blocked time),
 * and the byte sizes and seconds it prints.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "status.h"

START_TEST(profile_line_counts_samples)
{
	struct recorder_status st = {
		.elapsed_ns = 12999999999ULL, .samples = 1234, .stacks = 56,
		.lost = 0,
	};
	char buf[160];

	status__format(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "12s  1234 samples  56 stacks  0 lost");
}
END_TEST

START_TEST(offcpu_line_counts_episodes_and_blocked_time_not_samples)
{
	struct recorder_status st = {
		.elapsed_ns = 5000000000ULL, .offcpu = 1, .samples = 812,
		.blocked_ns = 31499999999ULL, .stacks = 40, .lost = 2,
	};
	char buf[160];

	status__format(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "5s  812 episodes  31.4s blocked  40 stacks  2 lost");
}
END_TEST

START_TEST(offcpu_line_with_nothing_blocked_yet)
{
	struct recorder_status st = { .offcpu = 1 };
	char buf[160];

	status__format(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0s  0 episodes  0.0s blocked  0 stacks  0 lost");
}
END_TEST

START_TEST(status_line_is_truncated_to_the_buffer)
{
	struct recorder_status st = { .offcpu = 1, .samples = 812 };
	char buf[8];

	status__format(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0s  812");
}
END_TEST

START_TEST(seconds_are_tenths_rounded_down)
{
	char buf[32];

	status__format_seconds(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.0s");
	status__format_seconds(99999999ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.0s");
	status__format_seconds(100000000ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.1s");
	status__format_seconds(3600000000000ULL + 950000000ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3600.9s");
}
END_TEST

START_TEST(sizes_use_binary_units_from_one_kib)
{
	char buf[32];

	status__format_size(1023, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1023 B");
	status__format_size(1024, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.0 KiB");
	status__format_size(12 * 1024 * 1024 + 300 * 1024, buf, sizeof(buf));
	ck_assert_str_eq(buf, "12.3 MiB");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, profile_line_counts_samples);
	tcase_add_test(tc, offcpu_line_counts_episodes_and_blocked_time_not_samples);
	tcase_add_test(tc, offcpu_line_with_nothing_blocked_yet);
	tcase_add_test(tc, status_line_is_truncated_to_the_buffer);
	tcase_add_test(tc, seconds_are_tenths_rounded_down);
	tcase_add_test(tc, sizes_use_binary_units_from_one_kib);
	suite_add_tcase(s, tc);
	return check_run(s);
}
