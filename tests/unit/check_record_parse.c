// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_parse: the strict option value parsers of stkrec (-F,
 * --stack-storage-size, -p/-t lists, DURATION and --flush-interval).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "parse.h"

START_TEST(uint_accepts_plain_decimal_up_to_max)
{
	uint64_t v = 0;

	ck_assert_int_eq(parse__uint("0", 10, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(parse__uint("49", 100, &v), 0);
	ck_assert_uint_eq(v, 49);
	ck_assert_int_eq(parse__uint("100", 100, &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(parse__uint("18446744073709551615", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(uint_rejects_signs_spaces_and_garbage_with_einval)
{
	uint64_t v = 7;

	ck_assert_int_eq(parse__uint("", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("-5", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("+5", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint(" 5", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("5 ", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("5x", 10, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("0x10", 100, &v), -EINVAL);
	ck_assert_int_eq(parse__uint("1.5", 10, &v), -EINVAL);
	ck_assert_uint_eq(v, 7);
}
END_TEST

START_TEST(uint_above_max_or_overflowing_is_erange)
{
	uint64_t v = 7;

	ck_assert_int_eq(parse__uint("101", 100, &v), -ERANGE);
	ck_assert_int_eq(parse__uint("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(parse__uint("99999999999999999999999", UINT64_MAX, &v), -ERANGE);
	ck_assert_uint_eq(v, 7);
}
END_TEST

START_TEST(id_list_accumulates_and_drops_duplicates)
{
	uint32_t *ids = NULL;
	size_t n = 0;

	ck_assert_int_eq(parse__id_list("12,7,12", &ids, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ids[0], 12);
	ck_assert_uint_eq(ids[1], 7);
	/* A second -p adds to the first. */
	ck_assert_int_eq(parse__id_list("7,4294967294", &ids, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(ids[2], 4294967294u);
	free(ids);
}
END_TEST

START_TEST(id_list_rejects_zero_empty_items_and_overflow)
{
	uint32_t *ids = NULL;
	size_t n = 0;

	ck_assert_int_eq(parse__id_list("0", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("1,", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list(",1", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("1,,2", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("-1", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("abc", &ids, &n), -EINVAL);
	ck_assert_int_eq(parse__id_list("4294967295", &ids, &n), -ERANGE);
	ck_assert_int_eq(parse__id_list("123456789012345678901234567890123", &ids, &n), -ERANGE);
	ck_assert_uint_eq(n, 0);
	free(ids);
}
END_TEST

START_TEST(seconds_accept_integers_and_decimals)
{
	uint64_t ns = 0;

	ck_assert_int_eq(parse__seconds("5", 100, &ns), 0);
	ck_assert_uint_eq(ns, 5000000000ULL);
	ck_assert_int_eq(parse__seconds("0.5", 100, &ns), 0);
	ck_assert_uint_eq(ns, 500000000ULL);
	ck_assert_int_eq(parse__seconds(".25", 100, &ns), 0);
	ck_assert_uint_eq(ns, 250000000ULL);
	ck_assert_int_eq(parse__seconds("2.", 100, &ns), 0);
	ck_assert_uint_eq(ns, 2000000000ULL);
	ck_assert_int_eq(parse__seconds("0.001", 100, &ns), 0);
	ck_assert_uint_eq(ns, 1000000ULL);
	/* Digits past the nanosecond are ignored, not rounded. */
	ck_assert_int_eq(parse__seconds("1.0000000019", 100, &ns), 0);
	ck_assert_uint_eq(ns, 1000000001ULL);
	ck_assert_int_eq(parse__seconds("100", 100, &ns), 0);
	ck_assert_uint_eq(ns, 100000000000ULL);
}
END_TEST

START_TEST(seconds_reject_zero_negative_garbage_and_out_of_range)
{
	uint64_t ns = 7;

	ck_assert_int_eq(parse__seconds("0", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("0.0", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds(".", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("-1", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("1s", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("1.5.2", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("1e3", 100, &ns), -EINVAL);
	ck_assert_int_eq(parse__seconds("101", 100, &ns), -ERANGE);
	ck_assert_int_eq(parse__seconds("100.5", 100, &ns), -ERANGE);
	ck_assert_int_eq(parse__seconds("0.0009", 100, &ns), -ERANGE);
}
END_TEST

START_TEST(size_takes_bytes_or_k_m_g_binary_units)
{
	uint64_t v = 0;

	ck_assert_int_eq(parse__size("4096", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(parse__size("100M", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 100ULL << 20);
	ck_assert_int_eq(parse__size("2G", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 2ULL << 30);
	ck_assert_int_eq(parse__size("64K", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 64ULL << 10);
}
END_TEST

START_TEST(size_rejects_zero_units_alone_other_units_and_too_big)
{
	uint64_t v = 7;

	ck_assert_int_eq(parse__size("", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("0", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("0M", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("M", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("10m", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("10MB", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("1.5M", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("-1", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse__size("2G", 1ULL << 30, &v), -ERANGE);
	ck_assert_int_eq(parse__size("2049", 2048, &v), -ERANGE);
	ck_assert_uint_eq(v, 7);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, uint_accepts_plain_decimal_up_to_max);
	tcase_add_test(tc, uint_rejects_signs_spaces_and_garbage_with_einval);
	tcase_add_test(tc, uint_above_max_or_overflowing_is_erange);
	tcase_add_test(tc, id_list_accumulates_and_drops_duplicates);
	tcase_add_test(tc, id_list_rejects_zero_empty_items_and_overflow);
	tcase_add_test(tc, seconds_accept_integers_and_decimals);
	tcase_add_test(tc, seconds_reject_zero_negative_garbage_and_out_of_range);
	tcase_add_test(tc, size_takes_bytes_or_k_m_g_binary_units);
	tcase_add_test(tc, size_rejects_zero_units_alone_other_units_and_too_big);
	suite_add_tcase(s, tc);
	return check_run(s);
}
