// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel frames from a vmlinux.  This file only decides whether the file
 * may be used (build-id), where the kernel was loaded (the KASLR slide,
 * see kvmlinux.h) and which addresses are its code; the symbolizer does
 * the rest, with the vmlinux as one more module, addressed by ELF virtual
 * address instead of through a process mapping.
 *
 * Real vmlinux files are large (~500 MB with DWARF, ~200k symbols): open
 * reads only the section headers and one pass over .symtab, with a hash
 * lookup per symbol; the symbolizer loads the symbol table and DWARF on
 * the first kernel lookup, and libdw reads DWARF one CU at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elffind.h"
#include "hash.h"
#include "idmap.h"
#include "kvmlinux.h"
#include "util.h"

/* Code: an executable section, [start, end) in vmlinux addresses. */
struct xrange {
	uint64_t start, end;
};

struct kvmlinux {
	struct kvmlinux_info info;
	struct symbolizer *sym;		/* of its own: the report's lists user modules */
	struct sym_module *mod;
	struct xrange *text;		/* sorted by start */
	size_t nr_text;
};

/* A captured kernel-image symbol looked for in the vmlinux's .symtab. */
struct want {
	const char *name;
	uint64_t addr;			/* as recorded (relocated) */
	uint64_t value;			/* st_value of the first match */
	uint32_t found;			/* matches in .symtab: one is unambiguous */
	int ambiguous;			/* captured at two addresses */
	struct want *next;		/* same hash */
};

struct wants {
	struct want *w;
	size_t n;
	struct idmap by_hash;
};

static uint64_t name_hash(const char *name)
{
	return hash_bytes(0, name, strlen(name));
}

static struct want *wants__find(const struct wants *ws, const char *name, uint64_t h)
{
	struct want *w;

	for (w = idmap__find_ptr(&ws->by_hash, h); w; w = w->next)
		if (strcmp(w->name, name) == 0)
			return w;
	return NULL;
}

/* The kernel-image symbols of @k (module ones read "name [module]"). */
static int wants__init(struct wants *ws, const struct ksyms *k)
{
	size_t i, n = ksyms__count(k);
	const char *name;
	uint64_t addr, h;
	struct want *w;

	memset(ws, 0, sizeof(*ws));
	if (!n)
		return 0;
	ws->w = calloc(n, sizeof(*ws->w));
	if (!ws->w)
		return -ENOMEM;
	for (i = 0; (name = ksyms__at(k, i, &addr)); i++) {
		if (strchr(name, ' '))
			continue;
		h = name_hash(name);
		w = wants__find(ws, name, h);
		if (w) {
			/* Captures repeat symbols across flushes; two static
			 * functions may share a name. */
			w->ambiguous |= w->addr != addr;
			continue;
		}
		w = &ws->w[ws->n++];
		*w = (struct want){ .name = name, .addr = addr, .next = idmap__find_ptr(&ws->by_hash, h) };
		if (idmap__set_ptr(&ws->by_hash, h, w))
			return -ENOMEM;
	}
	return 0;
}

static void wants__free(struct wants *ws)
{
	idmap__release(&ws->by_hash);
	free(ws->w);
}

static int xrange_cmp(const void *a, const void *b)
{
	const struct xrange *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int kvmlinux__add_text(struct kvmlinux *kv, size_t *cap, uint64_t start, uint64_t size)
{
	if (!size)
		return 0;
	if (kv->nr_text == *cap) {
		size_t n = *cap ? 2 * *cap : 8;
		struct xrange *p = realloc(kv->text, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		kv->text = p;
		*cap = n;
	}
	kv->text[kv->nr_text++] = (struct xrange){ start, start + size };
	return 0;
}

/* The code ranges: executable sections (.text, .init.text...), else, for a
 * file without section headers, executable segments. */
static int kvmlinux__read_text(struct kvmlinux *kv, Elf *elf, Elf_Scn **symtab)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, n, i;
	int err;

	*symtab = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*symtab = scn;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
						(SHF_ALLOC | SHF_EXECINSTR))
			continue;
		err = kvmlinux__add_text(kv, &cap, sh.sh_addr, sh.sh_size);
		if (err)
			return err;
	}
	if (!kv->nr_text && elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			err = kvmlinux__add_text(kv, &cap, ph.p_vaddr, ph.p_memsz);
			if (err)
				return err;
		}
	}
	if (kv->nr_text)
		qsort(kv->text, kv->nr_text, sizeof(*kv->text), xrange_cmp);
	return 0;
}

/* One pass over .symtab: _text's value and the captured names' values. */
static void symtab__match(Elf *elf, Elf_Scn *symtab, struct wants *ws, uint64_t *text,
			  int *has_text)
{
	Elf_Data *d = elf_getdata(symtab, NULL);
	GElf_Shdr sh;
	size_t i, n;

	*has_text = 0;
	if (!d || !gelf_getshdr(symtab, &sh) || !sh.sh_entsize)
		return;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		const char *name;
		struct want *w;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		if (!*has_text && strcmp(name, "_text") == 0) {
			*text = sym.st_value;
			*has_text = 1;
		}
		if (!ws->n)
			continue;
		w = wants__find(ws, name, name_hash(name));
		if (w && w->found++ == 0)
			w->value = sym.st_value;
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Chooses the slide (kvmlinux.h): the value most unambiguous captured
 * symbols agree on, the _text candidate on a tie or when none matched. */
static int kvmlinux__slide(struct kvmlinux *kv, const struct wants *ws, uint64_t text_cand,
			   int has_text_cand)
{
	struct kvmlinux_info *in = &kv->info;
	size_t i, j, n = 0, best = 0, text_votes = 0;
	uint64_t *d, best_d = 0;

	d = calloc(ws->n ? ws->n : 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < ws->n; i++)
		if (ws->w[i].found == 1 && !ws->w[i].ambiguous)
			d[n++] = ws->w[i].addr - ws->w[i].value;
	qsort(d, n, sizeof(*d), u64_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && d[j] == d[i]; j++)
			;
		if (j - i > best) {
			best = j - i;
			best_d = d[i];
		}
		if (has_text_cand && d[i] == text_cand)
			text_votes = j - i;
	}
	free(d);
	in->ksym_matched = n;
	in->slide_from_text = has_text_cand;
	if (has_text_cand && text_votes == best) {
		in->slide = text_cand;
		in->ksym_votes = text_votes;
	} else if (best) {
		in->slide = best_d;
		in->ksym_votes = best;
	} else {
		in->status = KVMLINUX_NO_SLIDE;
	}
	return 0;
}

static const struct cap_kobj *capture__kernel(const struct capture *cap)
{
	size_t i;

	for (i = 0; i < cap->nr_kobjs; i++)
		if (strcmp(cap->kobjs[i].name, "[kernel.kallsyms]") == 0)
			return &cap->kobjs[i];
	return NULL;
}

/* The slide and code ranges of the matching file at @path. */
static int kvmlinux__read(struct kvmlinux *kv, const char *path, const struct capture *cap)
{
	const struct cap_kobj *k = kv->info.kernel;
	struct wants ws = { 0 };
	Elf_Scn *symtab = NULL;
	uint64_t text = 0;
	int fd, has_text = 0, err;
	Elf *elf = NULL;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	err = kvmlinux__read_text(kv, elf, &symtab);
	if (err)
		goto out;
	err = wants__init(&ws, cap->ksyms);
	if (err)
		goto out;
	if (symtab)
		symtab__match(elf, symtab, &ws, &text, &has_text);
	err = kvmlinux__slide(kv, &ws, k->base - text, has_text && k->base);
out:
	wants__free(&ws);
	elf_end(elf);
	close(fd);
	return err;
}

struct kvmlinux *kvmlinux__open(const char *path, const struct capture *cap,
				const struct symbolizer_opts *opts)
{
	struct kvmlinux_info *in;
	struct symbolizer_opts so;
	struct kvmlinux *kv;
	char *abs = NULL;
	int n, err = -ENOMEM;

	kv = calloc(1, sizeof(*kv));
	if (!kv)
		goto fail;
	in = &kv->info;
	n = elf_file__build_id(path, in->build_id);
	if (n < 0) {
		err = n;
		goto fail;
	}
	in->build_id_size = (uint32_t)n;
	in->kernel = capture__kernel(cap);
	if (!in->kernel || !in->kernel->build_id_size) {
		in->status = KVMLINUX_NO_KERNEL_BID;
		return kv;
	}
	if (in->kernel->build_id_size != in->build_id_size ||
	    memcmp(in->kernel->build_id, in->build_id, in->build_id_size) != 0) {
		in->status = KVMLINUX_MISMATCH;
		return kv;
	}
	err = kvmlinux__read(kv, path, cap);
	if (err)
		goto fail;
	if (in->status != KVMLINUX_OK)
		return kv;
	/* The symbolizer finds modules by absolute path (then by build-id). */
	err = -ENOMEM;
	abs = realpath(path, NULL);
	if (!abs) {
		err = -errno;
		goto fail;
	}
	so = *opts;
	so.sz = sizeof(so);
	so.sysroot = NULL;
	kv->sym = symbolizer__new(&so);
	if (!kv->sym) {
		err = -errno;
		goto fail;
	}
	kv->mod = symbolizer__module(kv->sym, abs, in->build_id, in->build_id_size);
	if (!kv->mod)
		goto fail;
	free(abs);
	return kv;
fail:
	free(abs);
	kvmlinux__free(kv);
	errno = -err;
	return NULL;
}

void kvmlinux__free(struct kvmlinux *kv)
{
	if (!kv)
		return;
	symbolizer__free(kv->sym);
	free(kv->text);
	free(kv);
}

const struct kvmlinux_info *kvmlinux__info(const struct kvmlinux *kv)
{
	return &kv->info;
}

static int kvmlinux__in_text(const struct kvmlinux *kv, uint64_t vaddr)
{
	size_t lo = 0, hi = kv->nr_text;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kv->text[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && vaddr < kv->text[lo - 1].end;
}

int kvmlinux__lookup(struct kvmlinux *kv, uint64_t addr, int is_return,
		     const struct sym_result **res)
{
	uint64_t vaddr;

	*res = NULL;
	if (!kv || kv->info.status != KVMLINUX_OK)
		return 0;
	vaddr = addr - kv->info.slide;
	/* A return address right after a call that ends the code still
	 * belongs to it: test where it is looked up. */
	if (!kvmlinux__in_text(kv, is_return ? vaddr - 1 : vaddr))
		return 0;
	return symbolizer__lookup_vaddr(kv->sym, kv->mod, vaddr, is_return, res);
}

int kvmlinux__has_dwarf(const struct kvmlinux *kv)
{
	return kv && kv->mod && kv->mod->has_dwarf;
}
