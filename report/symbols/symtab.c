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

#include "pltsyms.h"
#include "symalias.h"
#include "symtab.h"
#include "util.h"

/* A function symbol. */
struct fsym {
	uint64_t addr, end;	/* module addresses, [addr, end) */
	const char *name;	/* libdwfl's, or the table's own (no version, @plt) */
	int bind;		/* which alias names an address (symalias.h) */
	int sizeless;		/* st_size 0: ends at the next symbol */
};

struct symtab {
	struct fsym *syms;	/* sorted by addr, one per address */
	size_t nr_syms;
	struct fsym *labels;	/* code labels, sorted, one per address (see below) */
	size_t nr_labels;
	struct arena names;	/* names without their versions, and X@plt */
	void *packed;		/* symtab__unpack()'s buffer, holding the names */
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

static int str_cmp(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return strcmp(*x, *y);
}

/*
 * The names .dynsym holds only under a hidden (non-default) version, such
 * as glibc's cfree: .dynsym spells them bare, so rule 2 of symalias.h
 * needs .gnu.version to tell `cfree` from `free`.  Sorted, borrowed from
 * @elf; *@out NULL when there are none.
 */
static int compat_names(Elf *elf, const char ***out, size_t *n)
{
	Elf_Scn *scn = NULL, *dynsym = NULL, *versym = NULL;
	Elf_Data *sd, *vd;
	GElf_Shdr sh, dsh;
	const char **hidden = NULL, **cur = NULL;
	size_t nh = 0, ch = 0, nc = 0, cc = 0, i, k, nsyms;
	int err = 0;

	*out = NULL;
	*n = 0;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
	}
	if (!dynsym || !versym || !gelf_getshdr(dynsym, &dsh) || !dsh.sh_entsize)
		return 0;
	sd = elf_getdata(dynsym, NULL);
	vd = elf_getdata(versym, NULL);
	if (!sd || !vd)
		return 0;
	nsyms = dsh.sh_size / dsh.sh_entsize;
	/* Most libraries hide no name: the version words alone say so, without
	 * reading and sorting every name (a tenth of opening libstdc++). */
	for (i = 0; i < nsyms; i++) {
		GElf_Versym ver;

		if (!gelf_getversym(vd, (int)i, &ver) || (ver & 0x8000))
			break;
	}
	if (i == nsyms)
		return 0;
	for (i = 0; i < nsyms; i++) {
		GElf_Versym ver;
		GElf_Sym sym;
		const char *name;
		int h;

		if (!gelf_getsym(sd, (int)i, &sym) || !gelf_getversym(vd, (int)i, &ver))
			break;
		name = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (sym.st_shndx == SHN_UNDEF || !name || !name[0])
			continue;
		h = (ver & 0x8000) != 0;
		if (array__grow(h ? (void **)&hidden : (void **)&cur, h ? &ch : &cc, h ? nh : nc,
				sizeof(*hidden))) {
			err = -ENOMEM;
			goto out;
		}
		if (h)
			hidden[nh++] = name;
		else
			cur[nc++] = name;
	}
	if (!nh)
		goto out;
	/* A name hidden under one version but the default of another (glibc's
	 * clock_nanosleep@GLIBC_2.2.5 and @@GLIBC_2.17) is current. */
	qsort(cur, nc, sizeof(*cur), str_cmp);
	for (i = 0, k = 0; i < nh; i++)
		if (!nc || !bsearch(&hidden[i], cur, nc, sizeof(*cur), str_cmp))
			hidden[k++] = hidden[i];
	qsort(hidden, k, sizeof(*hidden), str_cmp);
	*n = k;
	*out = hidden;
	hidden = NULL;
out:
	free(hidden);
	free(cur);
	return err;
}

/* Adds the PLT stubs of @elf, the module's main file, `name@plt`, to
 * t->syms (grown for them).  Local: any symbol of the binary's own at a
 * stub's address is the better name. */
static int symtab__add_plt(struct symtab *t, Elf *elf, GElf_Addr bias)
{
	struct plt_stub *stubs;
	struct fsym *p;
	size_t n, i;
	int err;

	err = pltsyms__read(elf, bias, &t->names, &stubs, &n);
	if (err || !n)
		return err;
	p = realloc(t->syms, (t->nr_syms + n) * sizeof(*p));
	if (!p) {
		free(stubs);
		return -ENOMEM;
	}
	t->syms = p;
	for (i = 0; i < n; i++)
		t->syms[t->nr_syms++] = (struct fsym){ .addr = stubs[i].addr,
			.end = stubs[i].addr + stubs[i].size, .name = stubs[i].name,
			.bind = SYMALIAS_LOCAL };
	free(stubs);
	return 0;
}

/* @name without its version (symalias.h), copied into t->names when it
 * had one; NULL when out of memory. */
static const char *symtab__name(struct symtab *t, const char *name)
{
	size_t len = symalias__name_len(name);

	return name[len] ? arena__strndup(&t->names, name, len) : name;
}

struct symtab *symtab__new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct symtab *t = calloc(1, sizeof(*t));
	const char **compat = NULL;
	size_t i, k, cap = 0, ncompat = 0;
	GElf_Addr bias = 0;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);

	if (!t || compat_names(main_elf, &compat, &ncompat))
		goto nomem;
	if (n > 0) {
		t->syms = calloc((size_t)n, sizeof(*t->syms));
		if (!t->syms)
			goto nomem;
	}
	for (i = 0; n > 0 && i < (size_t)n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(mod, (int)i, &sym, &addr, &shndx,
							   &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		struct fsym f = { .addr = addr, .end = addr + sym.st_size,
				  .bind = symalias__elf_bind((unsigned int)bind),
				  .sizeless = sym.st_size == 0 };

		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS || !addr)
			continue;
		/* Rule 2 of symalias.h, for a name spelled without its version. */
		if (symalias__compat_name(name) ||
		    (ncompat && bsearch(&name, compat, ncompat, sizeof(*compat), str_cmp)))
			f.bind |= SYMALIAS_COMPAT;
		f.name = symtab__name(t, name);
		if (!f.name)
			goto nomem;
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
	free(compat);
	compat = NULL;
	if (symtab__add_plt(t, main_elf, bias))
		goto nomem;
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
	free(compat);
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
	arena__free(&t->names);
	free(t->packed);
	free(t);
}

/* symtab__pack()'s layout: a header, nr_syms then nr_labels records, the
 * names (NUL-terminated, at the records' offsets). */
struct symtab_packed {
	uint32_t nr_syms, nr_labels;
	uint32_t names_size, pad;
};

struct symtab_prec {
	uint64_t addr, end;
	uint32_t name;		/* offset in the names */
	uint8_t bind, sizeless;
	uint16_t pad;
};

int symtab__pack(const struct symtab *t, void **out, size_t *size)
{
	struct symtab_packed h = { (uint32_t)t->nr_syms, (uint32_t)t->nr_labels, 0, 0 };
	size_t i, n = t->nr_syms + t->nr_labels, names = 0, off;
	struct symtab_prec *rec;
	char *buf, *nm;

	*out = NULL;
	*size = 0;
	for (i = 0; i < n; i++) {
		const struct fsym *f = i < t->nr_syms ? &t->syms[i] : &t->labels[i - t->nr_syms];

		names += strlen(f->name) + 1;
	}
	if (names > UINT32_MAX || n > UINT32_MAX / sizeof(*rec))
		return -EFBIG;
	h.names_size = (uint32_t)names;
	buf = malloc(sizeof(h) + n * sizeof(*rec) + names);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	rec = (struct symtab_prec *)(buf + sizeof(h));
	nm = (char *)(rec + n);
	for (i = 0, off = 0; i < n; i++) {
		const struct fsym *f = i < t->nr_syms ? &t->syms[i] : &t->labels[i - t->nr_syms];
		size_t len = strlen(f->name) + 1;

		rec[i] = (struct symtab_prec){ .addr = f->addr, .end = f->end,
					       .name = (uint32_t)off, .bind = (uint8_t)f->bind,
					       .sizeless = (uint8_t)f->sizeless };
		memcpy(nm + off, f->name, len);
		off += len;
	}
	*out = buf;
	*size = sizeof(h) + n * sizeof(*rec) + names;
	return 0;
}

/* @n records of @rec into @v, sorted by address with one per address as
 * symtab__new() leaves them (symtab__find() searches them).  0 or -EBADMSG. */
static int symtab__unpack_recs(struct fsym *v, const struct symtab_prec *rec, size_t n,
			       const char *names, uint32_t names_size)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct symtab_prec r;

		memcpy(&r, &rec[i], sizeof(r));
		if (r.name >= names_size || (i && r.addr <= v[i - 1].addr) ||
		    r.bind > (SYMALIAS_LOCAL | SYMALIAS_COMPAT) || r.sizeless > 1)
			return -EBADMSG;
		v[i] = (struct fsym){ .addr = r.addr, .end = r.end, .name = names + r.name,
				      .bind = r.bind, .sizeless = r.sizeless };
	}
	return 0;
}

struct symtab *symtab__unpack(void *buf, const void *body, size_t size)
{
	const struct symtab_prec *rec;
	struct symtab_packed h;
	struct symtab *t = NULL;
	const char *names;
	uint64_t n;
	int err = -EBADMSG;

	if (size < sizeof(h))
		goto fail;
	memcpy(&h, body, sizeof(h));
	n = (uint64_t)h.nr_syms + h.nr_labels;
	if (h.pad || size != sizeof(h) + n * sizeof(*rec) + h.names_size ||
	    (h.names_size && ((const char *)body)[size - 1] != '\0'))
		goto fail;
	rec = (const struct symtab_prec *)((const char *)body + sizeof(h));
	names = (const char *)(rec + n);
	err = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->packed = buf;
	buf = NULL;
	/* Not zeroed: symtab__unpack_recs() writes every entry (libLLVM's
	 * 60000 were cleared for nothing). */
	t->syms = malloc((h.nr_syms ? h.nr_syms : 1) * sizeof(*t->syms));
	t->labels = malloc((h.nr_labels ? h.nr_labels : 1) * sizeof(*t->labels));
	if (!t->syms || !t->labels)
		goto fail;
	err = symtab__unpack_recs(t->syms, rec, h.nr_syms, names, h.names_size);
	err = err ?: symtab__unpack_recs(t->labels, rec + h.nr_syms, h.nr_labels, names,
					 h.names_size);
	if (err)
		goto fail;
	t->nr_syms = h.nr_syms;
	t->nr_labels = h.nr_labels;
	return t;
fail:
	free(buf);
	symtab__free(t);
	errno = -err;
	return NULL;
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
