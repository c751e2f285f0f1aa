// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_util_idmap: util/idmap.c, the uint64 -> uint64 hash map of stkrec
 * and stkreport (set, find, remove, iterate, clear, growth, embedded and
 * pointer use), and util/hash.c, the per-process keyed hash it probes with:
 * keys crafted to collide under the old fixed mixers must not pile up.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "hash.h"
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

START_TEST(reserve_takes_n_keys_without_growing_and_keeps_the_old_ones)
{
	struct idmap m = { 0 };
	const struct idmap_slot *slots;
	size_t cap;
	uint64_t i;

	ck_assert_int_eq(idmap__reserve(&m, 0), 0);	/* nothing asked: no table */
	ck_assert_uint_eq(m.cap, 0);
	for (i = 1; i <= 10; i++)
		ck_assert_int_eq(idmap__set(&m, i * 7919, i), 0);
	ck_assert_int_eq(idmap__set(&m, 0, 99), 0);
	ck_assert_int_eq(idmap__reserve(&m, 100000), 0);
	cap = m.cap;
	slots = m.slots;
	ck_assert_uint_ge(cap, 2 * 100001);
	ck_assert_uint_lt(cap, 4 * 100001);	/* the next power of two, no more */
	for (i = 1; i <= 10; i++)		/* rehashed, found */
		ck_assert_uint_eq(*idmap__find(&m, i * 7919), i);
	ck_assert_uint_eq(*idmap__find(&m, 0), 99);
	for (i = 11; i < 100000; i++)		/* 100000 keys in all, key 0 included */
		ck_assert_int_eq(idmap__set(&m, i * 7919, i), 0);
	ck_assert_uint_eq(idmap__count(&m), 100000);
	ck_assert_uint_eq(m.cap, cap);		/* not one growth */
	ck_assert_ptr_eq(m.slots, slots);
	ck_assert_int_eq(idmap__reserve(&m, 1000), 0);	/* smaller: unchanged */
	ck_assert_uint_eq(m.cap, cap);
	ck_assert_int_eq(idmap__reserve(&m, 100000), 0);
	ck_assert_ptr_eq(m.slots, slots);
	ck_assert_int_eq(idmap__set(&m, 1, 1), 0);	/* one more still works */
	ck_assert_uint_eq(*idmap__find(&m, 1), 1);
	ck_assert_uint_eq(*idmap__find(&m, 99999ull * 7919), 99999);
	ck_assert_int_eq(idmap__reserve(&m, SIZE_MAX / 2), -ENOMEM);
	ck_assert_uint_eq(m.cap, cap);			/* unchanged by the failure */
	ck_assert_uint_eq(*idmap__find(&m, 7919), 1);
	idmap__release(&m);
}
END_TEST

/* A prefetch changes nothing a lookup finds, with or without slots. */
START_TEST(prefetch_changes_nothing)
{
	struct idmap *m = idmap__new();
	uint64_t i;

	idmap__prefetch(m, 1);	/* no slots yet: nothing to load */
	for (i = 1; i < 5000; i++) {
		idmap__prefetch(m, i * 0x9E3779B97F4A7C15ULL);
		ck_assert_int_eq(idmap__set(m, i * 0x9E3779B97F4A7C15ULL, i), 0);
	}
	for (i = 1; i < 5000; i++) {
		idmap__prefetch(m, i * 0x9E3779B97F4A7C15ULL);
		ck_assert_uint_eq(*idmap__find(m, i * 0x9E3779B97F4A7C15ULL), i);
	}
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

START_TEST(key_zero_is_removed_iterated_and_cleared_like_any_key)
{
	struct idmap *m = idmap__new();
	uint64_t key = 1, val = 0;
	size_t it = 0;

	ck_assert_int_eq(idmap__set(m, 0, 9), 0);
	ck_assert_int_eq(idmap__set(m, 0, 10), 0);
	ck_assert_uint_eq(idmap__count(m), 1);
	ck_assert_int_eq(idmap__next(m, &it, &key, &val), 1);
	ck_assert_uint_eq(key, 0);
	ck_assert_uint_eq(val, 10);
	ck_assert_int_eq(idmap__next(m, &it, &key, &val), 0);
	ck_assert_int_eq(idmap__remove(m, 0), 0);
	ck_assert_ptr_null(idmap__find(m, 0));
	ck_assert_int_eq(idmap__remove(m, 0), -ENOENT);
	ck_assert_uint_eq(idmap__count(m), 0);
	ck_assert_int_eq(idmap__set(m, 0, 1), 0);
	ck_assert_int_eq(idmap__set(m, 5, 1), 0);
	idmap__clear(m);
	ck_assert_ptr_null(idmap__find(m, 0));
	ck_assert_ptr_null(idmap__find(m, 5));
	ck_assert_uint_eq(idmap__count(m), 0);
	idmap__free(m);
}
END_TEST

START_TEST(zero_initialised_map_is_valid_and_release_empties_it)
{
	struct idmap m = { 0 };
	int a, b;

	ck_assert_ptr_null(idmap__find(&m, 1));
	ck_assert_ptr_null(idmap__find_ptr(&m, 1));
	ck_assert_int_eq(idmap__remove(&m, 1), -ENOENT);
	ck_assert_uint_eq(idmap__max_probe(&m), 0);
	ck_assert_int_eq(idmap__set_ptr(&m, 1, &a), 0);
	ck_assert_int_eq(idmap__set_ptr(&m, 0, &b), 0);
	ck_assert_int_eq(idmap__set_ptr(&m, 2, NULL), -EINVAL); /* NULL means absent */
	ck_assert_ptr_eq(idmap__find_ptr(&m, 1), &a);
	ck_assert_ptr_eq(idmap__find_ptr(&m, 0), &b);
	ck_assert_ptr_null(idmap__find_ptr(&m, 2));
	ck_assert_uint_eq(idmap__count(&m), 2);
	idmap__release(&m);
	ck_assert_uint_eq(idmap__count(&m), 0);
	ck_assert_ptr_null(idmap__find_ptr(&m, 1));
	ck_assert_int_eq(idmap__set(&m, 3, 4), 0); /* usable again */
	ck_assert_uint_eq(*idmap__find(&m, 3), 4);
	idmap__release(&m);
}
END_TEST

/* xorshift64*: a fixed pseudo-random sequence for the tests below. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

START_TEST(random_operations_agree_with_a_plain_array)
{
	/* A small key space, so keys come back after removal and the probe
	 * sequences collide, wrap around the table end and get shifted back;
	 * every step is checked against an array indexed by the key (errors
	 * are counted, as a Check assertion per step would be slow). */
	enum { NKEYS = 3000, STEPS = 300000 };
	uint64_t *model = calloc(NKEYS, sizeof(*model)); /* value + 1, 0 = absent */
	struct idmap m = { 0 };
	uint64_t s = 42, r, k, v, key, val;
	size_t i, present = 0, it = 0, seen = 0, bad = 0;
	const uint64_t *f;

	ck_assert_ptr_nonnull(model);
	for (i = 0; i < STEPS; i++) {
		r = rnd(&s);
		k = r % NKEYS;
		key = k * 0x9e3779b97f4a7c15ull; /* 0 stays a key */
		if ((r >> 32) % 3) {
			v = r >> 40;
			bad += idmap__set(&m, key, v) != 0;
			present += !model[k];
			model[k] = v + 1;
		} else {
			bad += idmap__remove(&m, key) != (model[k] ? 0 : -ENOENT);
			present -= !!model[k];
			model[k] = 0;
		}
		bad += idmap__count(&m) != present;
		if (i % 1000)
			continue;
		for (k = 0; k < NKEYS; k++) {
			f = idmap__find(&m, k * 0x9e3779b97f4a7c15ull);
			bad += model[k] ? !f || *f != model[k] - 1 : f != NULL;
		}
		ck_assert_uint_eq(bad, 0);
	}
	while (idmap__next(&m, &it, &key, &val)) {
		k = key * 0xf1de83e19937733dull; /* the inverse of the multiplier above */
		bad += k >= NKEYS || model[k] != val + 1;
		seen++;
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(seen, present);
	idmap__release(&m);
	free(model);
}
END_TEST

START_TEST(removals_leave_no_tombstones_behind)
{
	/* Churn: 200 rounds of adding 1000 fresh keys and removing them.  With
	 * tombstones the table would fill with them and grow or slow down;
	 * backward-shift removal leaves it as if the keys never were there. */
	struct idmap m = { 0 };
	uint64_t round, i;
	size_t cap, bad = 0;

	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(idmap__set(&m, i + 1, i), 0);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(idmap__remove(&m, i + 1), 0);
	cap = m.cap; /* white-box: the size the table needed once */
	for (round = 1; round <= 200; round++) {
		for (i = 0; i < 1000; i++)
			bad += idmap__set(&m, round * 1000000 + i, i) != 0;
		for (i = 0; i < 1000; i++)
			bad += idmap__remove(&m, round * 1000000 + i) != 0;
		ck_assert_uint_eq(bad, 0);
		ck_assert_uint_eq(idmap__count(&m), 0);
		ck_assert_uint_eq(idmap__max_probe(&m), 0); /* no slot in use */
	}
	ck_assert_uint_eq(m.cap, cap);
	idmap__release(&m);
}
END_TEST

/*
 * The fixed mixers stk used before.  Both are invertible, so anyone can
 * compute keys whose hashes end in 32 zero bits: all of them land in home
 * slot 0 of any table up to 2^32 slots.
 */
static uint64_t mul_inverse(uint64_t a)
{
	uint64_t x = a; /* Newton's iteration: 5 steps give 64 correct bits */
	int i;

	for (i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t unxorshift(uint64_t y, unsigned int sh)
{
	uint64_t x = y;
	unsigned int i;

	for (i = 0; i < 64 / sh + 1; i++)
		x = y ^ (x >> sh);
	return x;
}

/* The idmap's slot_of() before util/hash.c's keyed hash64(): murmur3
 * fmix64's first half. */
static uint64_t old_idmap_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static uint64_t old_idmap_preimage(uint64_t y)
{
	y = unxorshift(y, 33);
	y *= mul_inverse(0xff51afd7ed558ccdULL);
	return unxorshift(y, 33);
}

/* The reporter's own hash64(0, k) before util/hash.c's, which u64map probed
 * with: splitmix64. */
static uint64_t old_u64map_mix(uint64_t v)
{
	uint64_t z = v + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t old_u64map_preimage(uint64_t y)
{
	y = unxorshift(y, 31);
	y *= mul_inverse(0x94d049bb133111ebull);
	y = unxorshift(y, 27);
	y *= mul_inverse(0xbf58476d1ce4e5b9ull);
	y = unxorshift(y, 30);
	return y - 0x9e3779b97f4a7c15ull;
}

static void check_crafted_keys_spread(uint64_t (*mix)(uint64_t), uint64_t (*preimage)(uint64_t))
{
	enum { N = 20000 };
	struct idmap m = { 0 };
	uint64_t i, k;
	size_t bad = 0;

	for (i = 1; i <= N; i++) {
		k = preimage(i << 32);
		bad += mix(k) != i << 32; /* really a collision for the old hash */
		bad += idmap__set(&m, k, i) != 0;
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(idmap__count(&m), N);
	/* Under the old mixer every key probes from slot 0: the longest
	 * sequence would be N.  Random keys at load 0.3 give about 10-20; 64
	 * is exceeded with a probability far below 1e-12. */
	ck_assert_uint_lt(idmap__max_probe(&m), 64);
	for (i = 1; i <= N; i++)
		bad += *idmap__find(&m, preimage(i << 32)) != i;
	ck_assert_uint_eq(bad, 0);
	idmap__release(&m);
}

START_TEST(keys_colliding_under_the_old_idmap_mixer_spread)
{
	check_crafted_keys_spread(old_idmap_mix, old_idmap_preimage);
}
END_TEST

START_TEST(keys_colliding_under_the_old_u64map_mixer_spread)
{
	check_crafted_keys_spread(old_u64map_mix, old_u64map_preimage);
}
END_TEST

START_TEST(hash_bytes_depends_on_every_byte_and_the_length)
{
	unsigned char buf[64] = { 0 };
	uint64_t h0 = hash_bytes(0, buf, sizeof(buf)), h;
	size_t i;

	/* One flipped bit anywhere (the 16-byte blocks and the tail). */
	for (i = 0; i < sizeof(buf) * 8; i++) {
		buf[i / 8] ^= (unsigned char)(1u << (i % 8));
		h = hash_bytes(0, buf, sizeof(buf));
		ck_assert_uint_ne(h, h0);
		buf[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
	/* Zero padding of the tail does not make lengths collide. */
	for (i = 0; i < sizeof(buf); i++)
		ck_assert_uint_ne(hash_bytes(0, buf, i), hash_bytes(0, buf, i + 1));
	ck_assert_uint_ne(hash_bytes(0, "ab", 2), hash_bytes(1, "ab", 2)); /* the chained h counts */
	ck_assert_uint_eq(hash_bytes(7, "abc", 3), hash_bytes(7, "abc", 3));
	ck_assert_uint_ne(hash64(0, 1), hash64(1, 0));
}
END_TEST

/* What a child process prints with --print-hash: its hashes of fixed inputs. */
static void print_hashes(FILE *f)
{
	fprintf(f, "%016" PRIx64 " %016" PRIx64 "\n", hash64(0, 1), hash_bytes(0, "stk", 3));
}

static void child_hashes(char *out, size_t size)
{
	char self[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;

	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "'%s' --print-hash", self);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(out, (int)size, p));
	ck_assert_int_eq(pclose(p), 0);
}

START_TEST(every_process_draws_its_own_hash_key)
{
	char mine[64], a[64], b[64];
	FILE *f = fmemopen(mine, sizeof(mine), "w");

	ck_assert_ptr_nonnull(f);
	print_hashes(f);
	fclose(f);
	child_hashes(a, sizeof(a));
	child_hashes(b, sizeof(b));
	ck_assert_uint_eq(strlen(a), 34);
	/* The same inputs hash differently in three processes: a file's
	 * collisions found in one run do not carry over to the next. */
	ck_assert_str_ne(mine, a);
	ck_assert_str_ne(mine, b);
	ck_assert_str_ne(a, b);
}
END_TEST


int main(int argc, char **argv)
{
	Suite *s = suite_create("util_idmap");
	TCase *tc = tcase_create("idmap");
	TCase *th = tcase_create("hash");

	if (argc > 1 && strcmp(argv[1], "--print-hash") == 0) {
		print_hashes(stdout);
		return 0;
	}

	tcase_add_test(tc, set_find_and_replace);
	tcase_add_test(tc, many_keys_survive_growth);
	tcase_add_test(tc, reserve_takes_n_keys_without_growing_and_keeps_the_old_ones);
	tcase_add_test(tc, prefetch_changes_nothing);
	tcase_add_test(tc, removal_keeps_every_other_key_findable);
	tcase_add_test(tc, iteration_visits_each_key_once);
	tcase_add_test(tc, clear_empties_and_the_map_is_reusable);
	tcase_add_test(tc, empty_map_finds_nothing_and_free_accepts_null);
	tcase_add_test(tc, key_zero_is_removed_iterated_and_cleared_like_any_key);
	tcase_add_test(tc, zero_initialised_map_is_valid_and_release_empties_it);
	tcase_add_test(tc, random_operations_agree_with_a_plain_array);
	tcase_add_test(tc, removals_leave_no_tombstones_behind);
	suite_add_tcase(s, tc);
	tcase_add_test(th, keys_colliding_under_the_old_idmap_mixer_spread);
	tcase_add_test(th, keys_colliding_under_the_old_u64map_mixer_spread);
	tcase_add_test(th, hash_bytes_depends_on_every_byte_and_the_length);
	tcase_add_test(th, every_process_draws_its_own_hash_key);
	suite_add_tcase(s, th);
	return check_run(s);
}
