// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_pprof_intern: pprof.c's intern tables stay exact when the hashes of
 * different byte strings collide.  A 64-bit keyed hash (util/hash.h) almost
 * never collides, so this suite builds pprof.c itself with a hash_bytes()
 * that gives every string the same value: every entry then shares one
 * chain, and only the byte comparison tells them apart.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>

#include "check_main.h"
#include "hash.h"

/* After hash.h's declaration; pprof.c's own #include "hash.h" is then a no-op. */
#define hash_bytes(h, p, n) ((void)(p), (void)(n), (uint64_t)(h))
#include "pprof.c"
#undef hash_bytes

static const struct pprof_value_type count_type[] = { { "samples", "count" } };

static struct pprof *new_profile(void)
{
	struct pprof_opts opts = { .sample_types = count_type, .nr_sample_types = 1 };
	struct pprof *p = pprof__new(&opts);

	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(colliding_strings_keep_indexes_of_their_own)
{
	struct pprof *p = new_profile();
	char s[32];
	int64_t i, got;
	size_t bad = 0;

	/* Entries 0..2 are "", "samples", "count". */
	for (i = 0; i < 3000; i++) {
		snprintf(s, sizeof(s), "s%ld", (long)i);
		bad += pprof__string(p, s, &got) != 0 || got != 3 + i;
	}
	ck_assert_uint_eq(bad, 0);
	for (i = 2999; i >= 0; i--) {
		snprintf(s, sizeof(s), "s%ld", (long)i);
		bad += pprof__string(p, s, &got) != 0 || got != 3 + i;
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(pprof__string(p, "count", &got), 0);
	ck_assert_int_eq(got, 2);
	ck_assert_int_eq(pprof__string(p, "", &got), 0);
	ck_assert_int_eq(got, 0);
	/* A prefix and an extension of a known string are strings of their own. */
	ck_assert_int_eq(pprof__string(p, "s1", &got), 0);
	ck_assert_int_eq(got, 4);
	ck_assert_int_eq(pprof__string(p, "s", &got), 0);
	ck_assert_int_eq(got, 3003);
	ck_assert_int_eq(pprof__string(p, "s10000", &got), 0);
	ck_assert_int_eq(got, 3004);
	ck_assert_uint_eq(p->strings.list.n, 3005);
	pprof__free(p);
}
END_TEST

START_TEST(colliding_functions_and_mapping_keys_stay_apart)
{
	struct pprof *p = new_profile();
	struct pprof_function f = { .name = "f", .filename = "a.c", .start_line = 1 };
	struct pprof_mapping m = { .start = 0x1000, .limit = 0x2000, .filename = "/bin/a" };
	uint64_t id, i;

	ck_assert_int_eq(pprof__function(p, &f, &id), 0);
	ck_assert_uint_eq(id, 1);
	f.start_line = 2;
	ck_assert_int_eq(pprof__function(p, &f, &id), 0);
	ck_assert_uint_eq(id, 2);
	f.start_line = 1;
	ck_assert_int_eq(pprof__function(p, &f, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* Mapping keys are 8-byte strings in their own table. */
	for (i = 0; i < 100; i++) {
		ck_assert_int_eq(pprof__mapping(p, i, &m, &id), 0);
		ck_assert_uint_eq(id, i + 1);
	}
	for (i = 0; i < 100; i++) {
		ck_assert_int_eq(pprof__mapping(p, i, NULL, &id), 0);
		ck_assert_uint_eq(id, i + 1);
	}
	ck_assert_int_eq(pprof__mapping(p, 100, NULL, &id), -ENOENT);
	pprof__free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pprof_intern");
	TCase *tc = tcase_create("collisions");

	tcase_add_test(tc, colliding_strings_keep_indexes_of_their_own);
	tcase_add_test(tc, colliding_functions_and_mapping_keys_stay_apart);
	suite_add_tcase(s, tc);
	return check_run(s);
}
