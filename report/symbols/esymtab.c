// SPDX-License-Identifier: BSD-2-Clause
/* Symbol tables embedded in a capture, by binary or process (esymtab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "esymtab.h"
#include "symalias.h"
#include "util.h"

struct esym_ent {
	uint64_t addr, size;
	const char *name;
	size_t order;		/* insertion order: the later line wins */
};

struct esymtab {
	struct esym_ent *e;
	size_t n, cap;
	int sorted;
	/* Once sorted: reach[i], the highest end of e[0..i] (each entry's end
	 * as esymtab__find() measures it, capped at UINT64_MAX), so that a
	 * search stops where no earlier entry reaches the address. */
	uint64_t *reach;
	/* Once sorted: e[i].addr, side by side (NULL without memory): the
	 * search's probes land in 8 bytes an entry, not 32 (a stripped
	 * binary's table is searched for every address not yet named). */
	uint64_t *addrs;
	struct arena names;
};

struct esymtab *esymtab__new(void)
{
	return calloc(1, sizeof(struct esymtab));
}

void esymtab__free(struct esymtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->reach);
	free(t->addrs);
	arena__free(&t->names);
	free(t);
}

int esymtab__add(struct esymtab *t, const struct stk_esym_sym *syms, size_t n, int unversion)
{
	size_t i;

	if (t->n + n > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		struct esym_ent *e;

		while (cap < t->n + n)
			cap *= 2;
		e = realloc(t->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	for (i = 0; i < n; i++) {
		const char *s = syms[i].name;
		const char *name = arena__strndup(&t->names, s,
						  unversion ? symalias__name_len(s) : strlen(s));

		if (!name)
			return -ENOMEM;
		t->e[t->n] = (struct esym_ent){ syms[i].addr, syms[i].size, name, t->n };
		t->n++;
	}
	t->sorted = 0;
	free(t->reach);
	t->reach = NULL;
	free(t->addrs);
	t->addrs = NULL;
	return 0;
}

static int by_addr(const void *x, const void *y)
{
	const struct esym_ent *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* An entry's size as esymtab__find() takes it: a symbol without one
 * reaches the next symbol (1 byte for the last). */
static uint64_t ent_size(const struct esymtab *t, size_t i)
{
	if (t->e[i].size)
		return t->e[i].size;
	return i + 1 < t->n ? t->e[i + 1].addr - t->e[i].addr : 1;
}

/* Sorted, and one entry per (addr, size, name): chunks of a covering
 * capture repeat none, but merged captures do.  Then reach[] (or none,
 * without memory: searches then scan as far as they may). */
static void esymtab__sort(struct esymtab *t)
{
	uint64_t end, max = 0;
	size_t i, k;

	qsort(t->e, t->n, sizeof(*t->e), by_addr);
	for (i = 0, k = 0; i < t->n; i++) {
		if (k && t->e[k - 1].addr == t->e[i].addr && t->e[k - 1].size == t->e[i].size &&
		    strcmp(t->e[k - 1].name, t->e[i].name) == 0)
			continue;
		t->e[k++] = t->e[i];
	}
	t->n = k;
	t->sorted = 1;
	free(t->reach);
	free(t->addrs);
	t->addrs = malloc((t->n ? t->n : 1) * sizeof(*t->addrs));
	for (i = 0; t->addrs && i < t->n; i++)
		t->addrs[i] = t->e[i].addr;
	t->reach = malloc((t->n ? t->n : 1) * sizeof(*t->reach));
	for (i = 0; t->reach && i < t->n; i++) {
		end = t->e[i].addr + ent_size(t, i);
		if (end < t->e[i].addr)
			end = UINT64_MAX;
		if (end > max)
			max = end;
		t->reach[i] = max;
	}
}

const char *esymtab__find(struct esymtab *t, uint64_t addr)
{
	size_t lo = 0, hi, steps;

	if (!t->sorted)
		esymtab__sort(t);
	hi = t->n;
	if (t->addrs && hi) {
		/* The entries at or below @addr, counted without branches. */
		const uint64_t *a = t->addrs;
		size_t len = hi, half;

		while (len > 1) {
			half = len / 2;
			lo = a[lo + half] <= addr ? lo + half : lo;
			len -= half;
		}
		lo += a[lo] <= addr;
	}
	while (lo < hi && !t->addrs) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back over the symbols starting at or before @addr, nearest first;
	 * a few suffice (nested or overlapping ones are rare). */
	for (steps = 0; lo > 0 && steps < 64; steps++) {
		const struct esym_ent *e = &t->e[--lo];

		if (t->reach && t->reach[lo] <= addr && t->reach[lo] != UINT64_MAX)
			break;	/* none from here back reaches @addr */
		if (addr - e->addr < ent_size(t, lo))
			return e->name;
	}
	return NULL;
}
