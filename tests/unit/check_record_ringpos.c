// SPDX-License-Identifier: BSD-2-Clause
/*
 * How many flush intervals a BPF ring may go unread (record/sys/ringpos.c
 * ringpos__intervals(), the quiet stretches of record/engine/recorder_loop.c):
 * at the rate it filled since the last look, per interval elapsed, half
 * of it at most and MAX at most; the producer's position read through
 * the pointer ringpos__open() would have mapped (a variable here).
 */
#include <check.h>
#include <stdint.h>

#include "check_main.h"
#include "ringpos.h"

#define SIZE (256u * 1024u)

static unsigned long prod;

static struct ringpos ring(void)
{
	struct ringpos rp = { .prod = &prod, .size = SIZE };

	prod = 0;
	return rp;
}

START_TEST(nothing_came_allows_the_most)
{
	struct ringpos rp = ring();

	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 8);
	ck_assert_uint_eq(ringpos__intervals(&rp, 3, 5), 3);
}
END_TEST

START_TEST(the_rate_per_interval_fills_half_the_ring)
{
	struct ringpos rp = ring();

	/* An eighth of the ring in one interval: four fill half. */
	prod += SIZE / 8;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 4);
	/* The same over four intervals: a quarter as fast, capped at 8. */
	prod += SIZE / 8;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 4), 8);
	/* Half in two intervals: two more fill it. */
	prod += SIZE / 2;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 2), 2);
	/* More than half in one: none. */
	prod += SIZE / 2 + 1;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 0);
}
END_TEST

START_TEST(each_look_counts_from_the_last)
{
	struct ringpos rp = ring();

	prod += SIZE;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 0);
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 8);
	/* The producer's position wraps: what came is still the difference. */
	rp.mark = prod = (unsigned long)-16;
	prod += SIZE / 4;
	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 2);
}
END_TEST

START_TEST(a_ring_never_opened_allows_the_most)
{
	struct ringpos rp = { 0 };

	ck_assert_uint_eq(ringpos__intervals(&rp, 8, 1), 8);
}
END_TEST

START_TEST(fit_scales_by_the_intervals_elapsed)
{
	ck_assert_uint_eq(ringpos_fit(0, 1, 100, 8), 8);
	ck_assert_uint_eq(ringpos_fit(30, 1, 100, 8), 3);
	ck_assert_uint_eq(ringpos_fit(30, 3, 100, 8), 8);
	ck_assert_uint_eq(ringpos_fit(30, 0, 100, 8), 3);	/* 0 taken as 1 */
	ck_assert_uint_eq(ringpos_fit(101, 1, 100, 8), 0);
	ck_assert_uint_eq(ringpos_fit(UINT64_MAX / 2, 1, 100, 8), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_ringpos");
	TCase *tc = tcase_create("ringpos");

	tcase_add_test(tc, nothing_came_allows_the_most);
	tcase_add_test(tc, the_rate_per_interval_fills_half_the_ring);
	tcase_add_test(tc, each_look_counts_from_the_last);
	tcase_add_test(tc, a_ring_never_opened_allows_the_most);
	tcase_add_test(tc, fit_scales_by_the_intervals_elapsed);
	suite_add_tcase(s, tc);
	return check_run_fork(s, CK_NOFORK);
}
