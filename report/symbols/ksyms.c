// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel symbols: a sorted array and a binary search, results built lazily.
 * Of aliases the first added text symbol names the address (ksyms.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

/* A symbol with no size (kallsyms gives none for the last one) covers at
 * most this much: more is surely not the same function. */
#define KSYM_MAX_SIZE (1u << 20)

struct ksym {
	uint64_t addr, size;
	size_t seq;			/* order added: the first alias names it */
	int text;			/* a text (code) symbol, by its type letter */
	size_t name_len;		/* of the name without " [module]" */
	char *name;			/* "name" or "name [module]" */
	struct sym_result *res;		/* built on first lookup */
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	int sorted;
};

struct ksyms *ksyms__new(void)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		errno = ENOMEM;
	return k;
}

void ksyms__free(struct ksyms *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->n; i++) {
		if (k->syms[i].res) {
			free(k->syms[i].res->lines);
			free(k->syms[i].res);
		}
		free(k->syms[i].name);
	}
	free(k->syms);
	free(k);
}

int ksyms__add(struct ksyms *k, uint64_t addr, uint64_t size, char type, const char *name,
	       const char *module)
{
	struct ksym *s;
	size_t len;

	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 1024;
		struct ksym *p = realloc(k->syms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		k->syms = p;
		k->cap = cap;
	}
	s = &k->syms[k->n];
	memset(s, 0, sizeof(*s));
	len = strlen(name) + (module && module[0] ? strlen(module) + 3 : 0) + 1;
	s->name = malloc(len);
	if (!s->name)
		return -ENOMEM;
	if (module && module[0])
		snprintf(s->name, len, "%s [%s]", name, module);
	else
		snprintf(s->name, len, "%s", name);
	s->addr = addr;
	s->size = size;
	s->seq = k->n;
	s->text = !type || strchr("tTwW", type) != NULL;
	s->name_len = strlen(name);
	k->n++;
	k->sorted = 0;
	return 0;
}

int ksyms__load_kallsyms(struct ksyms *k, const char *path)
{
	char line[1024], name[512], module[256];
	FILE *f = fopen(path, "re");
	size_t parsed = 0;
	int err = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type;
		int n;

		module[0] = '\0';
		n = sscanf(line, "%llx %c %511s [%255[^]]]", &addr, &type, name, module);
		if (n < 3)
			continue;
		parsed++;
		/* Code only: data symbols never cover a sampled IP. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		err = ksyms__add(k, addr, 0, type, name, module);
		if (err)
			break;
	}
	fclose(f);
	if (!err && !parsed)
		err = -EBADMSG;
	return err;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k->n;
}

const char *ksyms__at(const struct ksyms *k, size_t i, uint64_t *addr)
{
	if (!k || i >= k->n)
		return NULL;
	*addr = k->syms[i].addr;
	return k->syms[i].name;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* The alias that names the address first: text, then as added. */
	if (x->text != y->text)
		return y->text - x->text;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort, drop duplicates (captures repeat symbols across flushes), and give
 * sizeless symbols the gap to the next one. */
static void ksyms__sort(struct ksyms *k)
{
	size_t i, j, w = 0;

	qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	for (i = 0; i < k->n; i++) {
		if (w && k->syms[w - 1].addr == k->syms[i].addr &&
		    strcmp(k->syms[w - 1].name, k->syms[i].name) == 0) {
			if (!k->syms[w - 1].size)
				k->syms[w - 1].size = k->syms[i].size;
			free(k->syms[i].name);
			continue;
		}
		k->syms[w++] = k->syms[i];
	}
	k->n = w;
	/* Aliases (one address, several names) share one size: a lookup
	 * answers with the first of them, which may be a sizeless one
	 * (stkrec writes 0 for all but the last alias, --kallsyms gives no
	 * sizes), and the gap to the next symbol must skip the aliases. */
	for (i = 0; i < k->n; i = j) {
		uint64_t size = 0;

		for (j = i; j < k->n && k->syms[j].addr == k->syms[i].addr; j++)
			if (k->syms[j].size > size)
				size = k->syms[j].size;
		if (!size && j < k->n && k->syms[j].addr - k->syms[i].addr < KSYM_MAX_SIZE)
			size = k->syms[j].addr - k->syms[i].addr;
		else if (!size)
			size = KSYM_MAX_SIZE;
		for (w = i; w < j; w++)
			if (!k->syms[w].size)
				k->syms[w].size = size;
	}
	k->sorted = 1;
}

const struct sym_result *ksyms__lookup(struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi;
	struct ksym *s;

	if (!k || !k->n)
		return NULL;
	if (!k->sorted)
		ksyms__sort(k);
	hi = k->n;
	/* Last symbol with addr <= @addr; aliases at one address: the first. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	while (s > k->syms && s[-1].addr == s->addr)
		s--;
	if (addr - s->addr >= s->size)
		return NULL;
	if (!s->res) {
		s->res = calloc(1, sizeof(*s->res));
		if (!s->res)
			return NULL;
		s->res->lines = calloc(1, sizeof(*s->res->lines));
		if (!s->res->lines) {
			free(s->res);
			s->res = NULL;
			return NULL;
		}
		s->res->nr_lines = 1;
		s->res->lines[0].name = s->name;
		s->res->lines[0].raw = s->name;
		sym_line__measure(&s->res->lines[0]);
	}
	return s->res;
}
