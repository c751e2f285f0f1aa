// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_idmap: the uint64 -> uint64 hash map stkrec keeps its sets
 * in (stacks written, stacks resident, processes), with removals.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "idmap.h"

START_TEST(set_find_and_replace)
{
	struct idmap *m = idmap__new();

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_null(idmap__find(m, 5));
	ck_assert_int_eq(idmap__set(m, 5, 50), 0);
	ck_assert_int_eq(idmap__set(m, 0, 7), 0); /* key 0 is a valid key */
	ck_assert_uint_eq(*idmap__find(m, 5), 50);
	ck_assert_uint_eq(*idmap__find(m, 0), 7);
	ck_assert_int_eq(idmap__set(m, 5, 51), 0);
	ck_assert_uint_eq(*idmap__find(m, 5), 51);
	ck_assert_uint_eq(idmap__count(m), 2);
	*idmap__find(m, 0) = 8; /* the value can be written through */
	ck_assert_uint_eq(*idmap__find(m, 0), 8);
	idmap__free(m);
}
END_TEST

START_TEST(many_keys_survive_growth)
{
	struct idmap *m = idmap__new();
	uint64_t i;

	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(idmap__set(m, i * 0x9E3779B97F4A7C15ULL, i), 0);
	ck_assert_uint_eq(idmap__count(m), 100000);
	for (i = 0; i < 100000; i++)
		ck_assert_uint_eq(*idmap__find(m, i * 0x9E3779B97F4A7C15ULL), i);
	ck_assert_ptr_null(idmap__find(m, 3));
	idmap__free(m);
}
END_TEST

START_TEST(removal_keeps_every_other_key_findable)
{
	struct idmap *m = idmap__new();
	uint64_t i;

	/* Dense small keys collide in the probe sequences, so removals must
	 * shift entries back correctly. */
	for (i = 0; i < 5000; i++)
		ck_assert_int_eq(idmap__set(m, i, i + 1), 0);
	for (i = 0; i < 5000; i += 3)
		ck_assert_int_eq(idmap__remove(m, i), 0);
	ck_assert_int_eq(idmap__remove(m, 0), -ENOENT);
	for (i = 0; i < 5000; i++) {
		if (i % 3 == 0)
			ck_assert_ptr_null(idmap__find(m, i));
		else
			ck_assert_uint_eq(*idmap__find(m, i), i + 1);
	}
	ck_assert_uint_eq(idmap__count(m), 5000 - 1667);
	idmap__free(m);
}
END_TEST

START_TEST(iteration_visits_each_key_once)
{
	struct idmap *m = idmap__new();
	uint64_t key, val, sum = 0;
	size_t it = 0, n = 0;

	for (key = 1; key <= 100; key++)
		ck_assert_int_eq(idmap__set(m, key, key * 2), 0);
	while (idmap__next(m, &it, &key, &val)) {
		ck_assert_uint_eq(val, key * 2);
		sum += key;
		n++;
	}
	ck_assert_uint_eq(n, 100);
	ck_assert_uint_eq(sum, 5050);
	ck_assert_int_eq(idmap__next(m, &it, &key, &val), 0);
	idmap__free(m);
}
END_TEST

START_TEST(clear_empties_and_the_map_is_reusable)
{
	struct idmap *m = idmap__new();
	size_t it = 0;

	ck_assert_int_eq(idmap__set(m, 1, 1), 0);
	ck_assert_int_eq(idmap__set(m, 2, 2), 0);
	idmap__clear(m);
	ck_assert_uint_eq(idmap__count(m), 0);
	ck_assert_ptr_null(idmap__find(m, 1));
	ck_assert_int_eq(idmap__next(m, &it, NULL, NULL), 0);
	ck_assert_int_eq(idmap__set(m, 2, 3), 0);
	ck_assert_uint_eq(*idmap__find(m, 2), 3);
	idmap__free(m);
}
END_TEST

START_TEST(empty_map_finds_nothing_and_free_accepts_null)
{
	struct idmap *m = idmap__new();
	size_t it = 0;

	ck_assert_ptr_null(idmap__find(m, 0));
	ck_assert_int_eq(idmap__remove(m, 0), -ENOENT);
	ck_assert_int_eq(idmap__next(m, &it, NULL, NULL), 0);
	idmap__free(m);
	idmap__free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_idmap");
	TCase *tc = tcase_create("idmap");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, set_find_and_replace);
	tcase_add_test(tc, many_keys_survive_growth);
	tcase_add_test(tc, removal_keeps_every_other_key_findable);
	tcase_add_test(tc, iteration_visits_each_key_once);
	tcase_add_test(tc, clear_empties_and_the_map_is_reusable);
	tcase_add_test(tc, empty_map_finds_nothing_and_free_accepts_null);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
