// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_strsort: report/base/strsort.c, the multikey quicksort of strings,
 * against qsort() with strcmp() (shared prefixes, every length around the
 * 8-byte words, bytes over 0x7f, duplicates, a deep common prefix), and
 * groups__sort() of report/output/output.c built on it: value first, then
 * text, as the qsort() it replaced.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "output.h"
#include "strsort.h"

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Sorts @n strings with strsort() and with qsort(strcmp): the same order
 * (equal strings are interchangeable). */
static void check_against_qsort(char **strs, size_t n)
{
	struct strsort_item *items = calloc(n ? n : 1, sizeof(*items));
	char **want = malloc((n ? n : 1) * sizeof(*want));
	size_t i;

	ck_assert_ptr_nonnull(items);
	ck_assert_ptr_nonnull(want);
	for (i = 0; i < n; i++) {
		items[i] = (struct strsort_item){ strs[i], strlen(strs[i]), strs[i], 0 };
		want[i] = strs[i];
	}
	strsort(items, n);
	qsort(want, n, sizeof(*want), str_cmp);
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(items[i].s, want[i]);
		ck_assert_ptr_eq(items[i].owner, items[i].s);	/* carried along */
	}
	free(items);
	free(want);
}

START_TEST(random_strings_with_shared_prefixes_sort_as_strcmp)
{
	/* Few letters and prefixes of many lengths: words equal at one
	 * depth and different at the next, strings ending inside a word, at
	 * its end, and one a prefix of another. */
	static const char alphabet[] = { 'a', 'b', ';', '\x7f', '\x80', '\xff', ' ' };
	size_t n = 5000, i, j, len;
	char **strs = malloc(n * sizeof(*strs));

	ck_assert_ptr_nonnull(strs);
	for (i = 0; i < n; i++) {
		len = rnd() % 40;
		strs[i] = malloc(len + 1);
		ck_assert_ptr_nonnull(strs[i]);
		for (j = 0; j < len; j++)
			strs[i][j] = j < (rnd() % 24) ? 'p' : alphabet[rnd() % sizeof(alphabet)];
		strs[i][len] = '\0';
	}
	check_against_qsort(strs, n);
	for (i = 0; i < n; i++)
		free(strs[i]);
	free(strs);
}
END_TEST

START_TEST(small_counts_duplicates_and_empty_strings)
{
	char *none[1] = { NULL };
	char *one[] = { "x" };
	char *dups[] = { "b", "", "abcdefgh", "abcdefgh", "abcdefghi", "", "abcdefg", "b", "a",
			 "abcdefgh", "abcdefgh\x01", "abcdefgg", "b", "", "zz", "abcdefghabcdefgh" };

	check_against_qsort(none, 0);
	check_against_qsort(one, 1);
	check_against_qsort(dups, sizeof(dups) / sizeof(dups[0]));
}
END_TEST

START_TEST(a_long_common_prefix_is_walked_a_word_at_a_time)
{
	/* 20000 strings that share 2000 bytes and differ after: the equal
	 * part goes 250 words deep (iterated, not recursed). */
	size_t n = 20000, i, pre = 2000;
	char **strs = malloc(n * sizeof(*strs));

	ck_assert_ptr_nonnull(strs);
	for (i = 0; i < n; i++) {
		strs[i] = malloc(pre + 24);
		ck_assert_ptr_nonnull(strs[i]);
		memset(strs[i], 'k', pre);
		snprintf(strs[i] + pre, 24, "%llu", (unsigned long long)(rnd() % 100000));
	}
	check_against_qsort(strs, n);
	for (i = 0; i < n; i++)
		free(strs[i]);
	free(strs);
}
END_TEST

START_TEST(groups_sort_by_value_then_text)
{
	static const char *const texts[] = { "b;x", "a;y", "a", "c;z;z", "a;y;y", "b", "ab" };
	static const uint64_t values[] = { 3, 1, 3, 1, 2, 3, 1 };
	/* "a;y" ends at 2 (the repeat below): after "ab" and "c;z;z" (1),
	 * before "a;y;y" (2); then the 3s by text. */
	static const char *const want[] = { "ab", "c;z;z", "a;y", "a;y;y", "a", "b", "b;x" };
	struct groups g = { 0 };
	size_t i;

	g.budget = 1 << 20;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		ck_assert_int_eq(groups__add(&g, texts[i], strlen(texts[i]), 0, values[i],
					     NULL, NULL), 0);
	/* The same text again adds to its group. */
	ck_assert_int_eq(groups__add(&g, "a;y", 3, 0, 1, NULL, NULL), 0);
	ck_assert_uint_eq(g.n, 7);
	groups__sort(&g);
	for (i = 0; i < 7; i++)
		ck_assert_str_eq(g.all[i]->text, want[i]);
	groups__free(&g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strsort");
	TCase *tc = tcase_create("strsort");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, random_strings_with_shared_prefixes_sort_as_strcmp);
	tcase_add_test(tc, small_counts_duplicates_and_empty_strings);
	tcase_add_test(tc, a_long_common_prefix_is_walked_a_word_at_a_time);
	tcase_add_test(tc, groups_sort_by_value_then_text);
	suite_add_tcase(s, tc);
	return check_run(s);
}
