// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sorted function-symbol table of a module (symtab.h): read once from
 * libdwfl, sorted by address with one preferred name per address, then
 * binary-searched for every lookup; code labels (STT_NOTYPE) apart, for
 * the addresses no function covers.
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
	int sizeless;		/* st_size 0: ends at the next symbol */
};

struct symtab {
	struct fsym *syms;	/* sorted by addr, one per address */
	size_t nr_syms;
	struct fsym *labels;	/* code labels, sorted, one per address (see below) */
	size_t nr_labels;
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
static int fsyms__sort(struct fsym **v, size_t n)
{
	struct fsym *src;
	size_t i, j, run;
	void *syms = *v;
	int err;

	err = radix_sort_u64(&syms, n, sizeof(**v), offsetof(struct fsym, addr));
	if (err)
		return err;
	*v = src = syms;
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

/* The first of @n symbols (sorted) whose address is past @addr. */
static size_t fsym_upper(const struct fsym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if section @shndx of @elf holds code. */
static int exec_section(Elf *elf, GElf_Word shndx)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/*
 * Sort the @n symbols of *@v (which the sort may move), keep the
 * preferred alias at each address, and end each sizeless symbol at the
 * next.  *@n becomes the number kept.  0 or -ENOMEM.
 */
static int fsyms__settle(struct fsym **v, size_t *n)
{
	struct fsym *f;
	size_t i, w = 0;
	int err;

	err = fsyms__sort(v, *n);
	if (err)
		return err;
	f = *v;
	for (i = 0; i < *n; i++) {
		if (w && f[w - 1].addr == f[i].addr)
			continue;
		f[w++] = f[i];
	}
	for (i = 0; i < w; i++)
		if (f[i].end == f[i].addr)
			f[i].end = i + 1 < w ? f[i + 1].addr : f[i].addr + 1;
	*n = w;
	return 0;
}

struct symtab *symtab__new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct symtab *t = calloc(1, sizeof(*t));
	size_t i, k, cap = 0;

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
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(mod, (int)i, &sym, &addr, &shndx,
							   &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		struct fsym f = { .addr = addr, .end = addr + sym.st_size, .name = name,
				  .bind = symalias__elf_bind((unsigned int)bind),
				  .sizeless = sym.st_size == 0 };

		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS || !addr)
			continue;
		if (type == STT_FUNC || type == STT_GNU_IFUNC)
			t->syms[t->nr_syms++] = f;
		/* A label in code (as perf takes them): hand-written entry
		 * code without .type, such as ld.so's _start. */
		else if (type == STT_NOTYPE && name[0] != '$' && name[0] != '.' &&
			 exec_section(elf, shndx)) {
			if (t->nr_labels == cap) { /* few: grown, not sized by @n */
				struct fsym *l;

				cap = cap ? cap * 2 : 16;
				l = realloc(t->labels, cap * sizeof(*l));
				if (!l)
					goto nomem;
				t->labels = l;
			}
			t->labels[t->nr_labels++] = f;
		}
	}
	if (fsyms__settle(&t->syms, &t->nr_syms) || fsyms__settle(&t->labels, &t->nr_labels))
		goto nomem;
	/* A label names only what no function covers, up to the next one;
	 * a sizeless function ends at the next label too (as perf's do:
	 * crtstuff's frame_dummy must not swallow the code after it). */
	for (i = 0; i < t->nr_labels; i++) {
		if (t->labels[i].sizeless && i + 1 == t->nr_labels)
			t->labels[i].end = UINT64_MAX; /* not the addr + 1 of fsyms__settle() */
		k = fsym_upper(t->syms, t->nr_syms, t->labels[i].addr);
		if (k < t->nr_syms && t->syms[k].addr < t->labels[i].end)
			t->labels[i].end = t->syms[k].addr;
		if (k > 0 && t->syms[k - 1].sizeless && t->syms[k - 1].end > t->labels[i].addr &&
		    t->syms[k - 1].addr < t->labels[i].addr)
			t->syms[k - 1].end = t->labels[i].addr;
	}
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
	free(t->labels);
	free(t);
}

const char *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = fsym_upper(t->syms, t->nr_syms, addr), i, back;

	/* Usually the nearest symbol below; look a little further back for
	 * a larger symbol that encloses a smaller one (rare, e.g. asm). */
	for (i = lo, back = 0; i > 0 && back < 8; i--, back++)
		if (addr < t->syms[i - 1].end)
			return t->syms[i - 1].name;
	/* No function: the code label below, if it reaches here. */
	lo = fsym_upper(t->labels, t->nr_labels, addr);
	if (lo > 0 && addr < t->labels[lo - 1].end)
		return t->labels[lo - 1].name;
	return NULL;
}
