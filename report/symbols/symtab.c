// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sorted function-symbol table of a module (symtab.h): read once from
 * libdwfl, sorted by address with one preferred name per address, then
 * binary-searched for every lookup.
 */
#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symalias.h"
#include "symtab.h"
#include "util.h"

/* A function symbol. */
struct fsym {
	uint64_t addr, end;	/* module addresses, [addr, end) */
	const char *name;	/* owned by libdwfl, valid while the Dwfl lives */
	enum symalias_bind bind;	/* which alias names an address (symalias.h) */
};

struct symtab {
	struct fsym *syms;	/* sorted by addr, one per address */
	size_t nr_syms;
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return symalias__cmp(x->name, x->bind, y->name, y->bind);
}

/*
 * The order qsort(fsym_cmp) gives, for a fraction of the comparisons: a
 * stable LSD radix sort by address, then each run of aliases at one
 * address by binding and name.  qsort was half of the instructions of a
 * --no-inline report that reads libc's 10000 symbols.
 */
static int symtab__sort(struct symtab *t)
{
	struct fsym *src;
	size_t n = t->nr_syms, i, j, run;
	void *syms = t->syms;
	int err;

	err = radix_sort_u64(&syms, n, sizeof(*t->syms), offsetof(struct fsym, addr));
	if (err)
		return err;
	t->syms = src = syms;
	for (i = 0; i < n; i = run) {
		for (run = i + 1; run < n && src[run].addr == src[i].addr; run++)
			;
		for (j = i + 1; j < run; j++) {	/* insertion sort: stable, runs are short */
			struct fsym x = src[j];
			size_t k = j;

			for (; k > i && fsym_cmp(&src[k - 1], &x) > 0; k--)
				src[k] = src[k - 1];
			src[k] = x;
		}
	}
	return 0;
}

struct symtab *symtab__new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct symtab *t = calloc(1, sizeof(*t));
	size_t i, w = 0;

	if (!t)
		goto nomem;
	if (n <= 0)
		return t;
	t->syms = calloc((size_t)n, sizeof(*t->syms));
	if (!t->syms)
		goto nomem;
	for (i = 0; i < (size_t)n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, (int)i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !name[0] || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    shndx == SHN_UNDEF || !addr)
			continue;
		t->syms[t->nr_syms++] = (struct fsym){
			.addr = addr, .end = addr + sym.st_size, .name = name,
			.bind = symalias__elf_bind((unsigned int)bind),
		};
	}
	if (symtab__sort(t))
		goto nomem;
	/* Drop aliases after the preferred one; sizeless symbols end at the next. */
	for (i = 0; i < t->nr_syms; i++) {
		if (w && t->syms[w - 1].addr == t->syms[i].addr)
			continue;
		t->syms[w++] = t->syms[i];
	}
	t->nr_syms = w;
	for (i = 0; i < t->nr_syms; i++)
		if (t->syms[i].end == t->syms[i].addr)
			t->syms[i].end = i + 1 < t->nr_syms ? t->syms[i + 1].addr : t->syms[i].addr + 1;
	return t;
nomem:
	symtab__free(t);
	errno = ENOMEM;
	return NULL;
}

void symtab__free(struct symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t);
}

const char *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_syms, i, back;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Usually the nearest symbol below; look a little further back for
	 * a larger symbol that encloses a smaller one (rare, e.g. asm). */
	for (i = lo, back = 0; i > 0 && back < 8; i--, back++)
		if (addr < t->syms[i - 1].end)
			return t->syms[i - 1].name;
	return NULL;
}
