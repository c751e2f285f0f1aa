// SPDX-License-Identifier: BSD-2-Clause
/*
 * A multikey quicksort of strings by eight-byte words (strsort.h): a
 * three-way partition on the word at @depth, the equal part then sorted
 * on the next word.  Words are the bytes big-endian, zero-padded past the
 * end, so comparing two words compares the bytes as strcmp() does (no
 * string holds a NUL); two strings with equal words that both end in them
 * are equal.
 */
#include <string.h>

#include "strsort.h"

#define STRSORT_SMALL 12

/* The word at byte @depth of @it, big-endian, zero-padded. */
static uint64_t word_at(const struct strsort_item *it, size_t depth)
{
	const unsigned char *p = (const unsigned char *)it->s + depth;
	size_t left = it->len > depth ? it->len - depth : 0, i;
	uint64_t w = 0;

	if (left >= 8) {
		memcpy(&w, p, 8);
		return __builtin_bswap64(w);
	}
	for (i = 0; i < left; i++)
		w |= (uint64_t)p[i] << (56 - 8 * i);
	return w;
}

static int cmp_from(const struct strsort_item *x, const struct strsort_item *y, size_t depth)
{
	size_t lx = x->len - depth, ly = y->len - depth;
	int c = memcmp(x->s + depth, y->s + depth, lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

static void swap(struct strsort_item *a, size_t i, size_t j)
{
	struct strsort_item t = a[i];

	a[i] = a[j];
	a[j] = t;
}

/* @a[0..n) share their first @depth bytes (and every string is at least
 * that long); @fresh: their words at @depth are in place already. */
static void mkqs(struct strsort_item *a, size_t n, size_t depth, int fresh)
{
	size_t i, j, lt, gt;
	uint64_t v, w;

	while (n > 1) {
		if (n <= STRSORT_SMALL) {	/* insertion sort, from @depth */
			for (i = 1; i < n; i++)
				for (j = i; j > 0 && cmp_from(&a[j - 1], &a[j], depth) > 0; j--)
					swap(a, j - 1, j);
			return;
		}
		if (!fresh)
			for (i = 0; i < n; i++)
				a[i].word = word_at(&a[i], depth);
		/* Median of three words for the pivot. */
		{
			uint64_t x = a[0].word, y = a[n / 2].word, z = a[n - 1].word;

			v = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		}
		/* Dijkstra's three-way partition: [0, lt) < v, [lt, i) == v,
		 * (gt, n) > v. */
		lt = 0;
		gt = n;
		i = 0;
		while (i < gt) {
			w = a[i].word;
			if (w < v)
				swap(a, lt++, i++);
			else if (w > v)
				swap(a, i, --gt);
			else
				i++;
		}
		/* The two smaller parts by recursion, each at most half of
		 * @n (so the recursion is log2(n) deep at most), the largest
		 * by the loop.  The equal part goes on with the next word
		 * unless its strings ended in this one: a zero last byte, and
		 * strings that end together are equal. */
		{
			struct strsort_item *pa[3] = { a, a + lt, a + gt };
			size_t pn[3] = { lt, gt - lt, n - gt }, pd[3] = { depth, depth + 8, depth };
			int k, big = 0;

			if ((v & 0xff) == 0)
				pn[1] = 0;
			for (k = 1; k < 3; k++)
				if (pn[k] > pn[big])
					big = k;
			for (k = 0; k < 3; k++)
				if (k != big)
					mkqs(pa[k], pn[k], pd[k], k != 1);
			a = pa[big];
			n = pn[big];
			depth = pd[big];
			fresh = big != 1;
		}
	}
}

void strsort(struct strsort_item *items, size_t n)
{
	mkqs(items, n, 0, 0);
}
