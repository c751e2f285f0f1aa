// SPDX-License-Identifier: BSD-2-Clause
/*
 * --since/--until (report/load/slice.c): the seconds parser and the midpoint
 * rule, which makes adjacent slices disjoint and complete.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "check_main.h"
#include "slice.h"

#define SEC 1000000000ull

START_TEST(seconds_parsed_exactly)
{
	struct time_slice s = TIME_SLICE_ALL;

	ck_assert_int_eq(time_slice__option(&s, TIME_SLICE_OPT_SINCE, "2.5"), 1);
	ck_assert_uint_eq(s.since_ns, 2500000000ull);
	ck_assert_int_eq(time_slice__option(&s, TIME_SLICE_OPT_UNTIL, "10"), 1);
	ck_assert_uint_eq(s.until_ns, 10 * SEC);
	ck_assert_int_eq(time_slice__option(&s, TIME_SLICE_OPT_SINCE, ".000000001"), 1);
	ck_assert_uint_eq(s.since_ns, 1);
	ck_assert_int_eq(time_slice__option(&s, 'f', "x"), 0);
}
END_TEST

START_TEST(bad_seconds_rejected)
{
	static const char *const bad[] = { "", ".", "-1", "+1", "1e3", "inf", "0x10", "1.2.3", "1 ", "abc" };
	struct time_slice s = TIME_SLICE_ALL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(time_slice__option(&s, TIME_SLICE_OPT_SINCE, bad[i]), -EINVAL);
	ck_assert(time_slice__all(&s));
	s.since_ns = 3 * SEC;
	s.until_ns = 3 * SEC;
	ck_assert_int_eq(time_slice__check(&s), -EINVAL);
}
END_TEST

START_TEST(midpoint_rule_splits_without_overlap)
{
	struct time_slice lo = { 0, 3 * SEC }, hi = { 3 * SEC, UINT64_MAX };
	uint64_t start = 1000 * SEC, t;

	/* Intervals of 1 s starting at every 0.1 s: each in exactly one. */
	for (t = 0; t < 6 * SEC; t += SEC / 10) {
		int a = time_slice__keeps(&lo, start, start + t, start + t + SEC);
		int b = time_slice__keeps(&hi, start, start + t, start + t + SEC);

		ck_assert_int_eq(a + b, 1);
		ck_assert_int_eq(a, t + SEC / 2 < 3 * SEC);
	}
	/* No interval: only the whole capture has it. */
	ck_assert_int_eq(time_slice__keeps(&lo, start, 0, 0), 0);
	ck_assert_int_eq(time_slice__keeps(NULL, start, 0, 0), 1);
	ck_assert_uint_eq(time_slice__midpoint(start, start - 5, start - 1), 0);
}
END_TEST

static Suite *slice_suite(void)
{
	Suite *s = suite_create("slice");
	TCase *tc = tcase_create("slice");

	tcase_add_test(tc, seconds_parsed_exactly);
	tcase_add_test(tc, bad_seconds_rejected);
	tcase_add_test(tc, midpoint_rule_splits_without_overlap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(slice_suite());
}
