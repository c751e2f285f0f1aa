// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_util_membudget: util/membudget.c, the accountant of --user-memory:
 * takes within the limit, refusals, the peak, shrinkers asked for the
 * difference (and only then), a take over the whole limit refused without
 * shrinking, no shrinking from inside a shrinker.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "check_main.h"
#include "membudget.h"

/* A cache of @held bytes that frees @step at a time, as asked. */
struct cache {
	struct membudget *b;
	uint64_t held, step;
	int calls;
	uint64_t last_want;
	int take_inside;	/* it takes while it shrinks (it should not) */
	int inside_ret;
};

static uint64_t cache_shrink(void *ctx, uint64_t want)
{
	struct cache *c = ctx;
	uint64_t freed = 0;

	c->calls++;
	c->last_want = want;
	if (c->take_inside)
		c->inside_ret = membudget__take(c->b, c->b->limit);
	while (freed < want && c->held) {
		uint64_t n = c->held < c->step ? c->held : c->step;

		c->held -= n;
		freed += n;
		membudget__give(c->b, n);
	}
	return freed;
}

START_TEST(takes_within_the_limit_and_refuses_beyond)
{
	struct membudget b;

	membudget__init(&b, 100);
	ck_assert_int_eq(membudget__take(&b, 60), 0);
	ck_assert_int_eq(membudget__take(&b, 40), 0);
	ck_assert_uint_eq(b.used, 100);
	ck_assert_int_eq(membudget__take(&b, 1), -ENOSPC);
	ck_assert_uint_eq(b.used, 100);
	ck_assert_uint_eq(b.refused, 1);
	membudget__give(&b, 60);
	ck_assert_uint_eq(b.used, 40);
	ck_assert_uint_eq(b.peak, 100);
	ck_assert_int_eq(membudget__take(&b, 0), 0);
	/* More given back than taken: a holder's bug, never a wrap. */
	membudget__give(&b, 1000);
	ck_assert_uint_eq(b.used, 0);
	ck_assert_uint_eq(b.peak, 100);
}
END_TEST

START_TEST(a_zeroed_budget_holds_nothing)
{
	struct membudget b = { 0 };

	ck_assert_int_eq(membudget__take(&b, 1), -ENOSPC);
	ck_assert_int_eq(membudget__take(&b, 0), 0);
}
END_TEST

START_TEST(shrinkers_are_asked_for_the_difference_only_when_needed)
{
	struct membudget b;
	struct cache c = { .b = &b, .held = 80, .step = 10 };

	membudget__init(&b, 100);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c), 0);
	ck_assert_int_eq(membudget__take(&b, 80), 0);	/* the cache's own */
	ck_assert_int_eq(membudget__take(&b, 20), 0);
	ck_assert_int_eq(c.calls, 0);
	ck_assert_int_eq(membudget__take(&b, 25), 0);
	ck_assert_int_eq(c.calls, 1);
	ck_assert_uint_eq(c.last_want, 25);
	ck_assert_uint_eq(c.held, 50);			/* 30 freed, in steps of 10 */
	ck_assert_uint_eq(b.used, 95);
	ck_assert_uint_eq(b.peak, 100);
	/* All the cache can give is not enough: refused, the cache emptied. */
	ck_assert_int_eq(membudget__take(&b, 60), -ENOSPC);
	ck_assert_uint_eq(c.held, 0);
	ck_assert_uint_eq(b.used, 45);
	ck_assert_uint_eq(b.refused, 1);
}
END_TEST

START_TEST(a_take_over_the_whole_limit_shrinks_nothing)
{
	struct membudget b;
	struct cache c = { .b = &b, .held = 50, .step = 50 };

	membudget__init(&b, 100);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c), 0);
	ck_assert_int_eq(membudget__take(&b, 50), 0);
	ck_assert_int_eq(membudget__take(&b, 101), -ENOSPC);
	ck_assert_int_eq(c.calls, 0);
	ck_assert_uint_eq(c.held, 50);
}
END_TEST

START_TEST(no_shrinking_from_inside_a_shrinker)
{
	struct membudget b;
	struct cache c = { .b = &b, .held = 100, .step = 100, .take_inside = 1 };

	membudget__init(&b, 100);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c), 0);
	ck_assert_int_eq(membudget__take(&b, 100), 0);
	ck_assert_int_eq(membudget__take(&b, 10), 0);
	ck_assert_int_eq(c.calls, 1);		/* not again from inside */
	ck_assert_int_eq(c.inside_ret, -ENOSPC);
	ck_assert_uint_eq(b.used, 10);
}
END_TEST

START_TEST(shrinkers_in_order_until_it_fits_and_removed)
{
	struct membudget b;
	struct cache c1 = { .b = &b, .held = 30, .step = 30 };
	struct cache c2 = { .b = &b, .held = 30, .step = 30 };
	struct cache c3 = { .b = &b, .held = 30, .step = 30 };
	int i;

	membudget__init(&b, 90);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c1), 0);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c2), 0);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c3), 0);
	ck_assert_int_eq(membudget__take(&b, 90), 0);
	ck_assert_int_eq(membudget__take(&b, 40), 0);
	ck_assert_int_eq(c1.calls + c2.calls, 2);
	ck_assert_int_eq(c3.calls, 0);		/* 60 freed: enough */
	ck_assert_int_eq(membudget__remove_shrinker(&b, cache_shrink, &c1), 0);
	ck_assert_int_eq(membudget__remove_shrinker(&b, cache_shrink, &c1), -ENOENT);
	ck_assert_uint_eq(b.nr_shrinkers, 2);
	for (i = 2; i < MEMBUDGET_MAX_SHRINKERS; i++)
		ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c1), 0);
	ck_assert_int_eq(membudget__add_shrinker(&b, cache_shrink, &c1), -ENOSPC);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("util_membudget");
	TCase *tc = tcase_create("membudget");

	tcase_add_test(tc, takes_within_the_limit_and_refuses_beyond);
	tcase_add_test(tc, a_zeroed_budget_holds_nothing);
	tcase_add_test(tc, shrinkers_are_asked_for_the_difference_only_when_needed);
	tcase_add_test(tc, a_take_over_the_whole_limit_shrinks_nothing);
	tcase_add_test(tc, no_shrinking_from_inside_a_shrinker);
	tcase_add_test(tc, shrinkers_in_order_until_it_fits_and_removed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
