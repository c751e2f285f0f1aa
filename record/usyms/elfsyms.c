// SPDX-License-Identifier: BSD-2-Clause
/*
 * elfsyms.c - function symbols of an ELF file at file offsets, for ESYM
 * kind 2 (see elfsyms.h).  Everything is read with bounded pread()s into
 * buffers of our own, as buildid.c reads notes.
 */
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "symalias.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

#define MAX_SHDRS 65535u
#define MAX_PHDRS 256u

struct src {
	int fd;
	const uint8_t *mem;
	size_t mem_size;
};

struct shdr {
	uint32_t name, type, link;
	uint64_t offset, size, entsize;
};

struct load {
	uint64_t vaddr, offset, filesz;
};

/* A symbol as read, before it becomes a stk_esym_sym. */
struct raw {
	uint64_t off, size;
	uint32_t name;		/* into the names buffer */
	int bind;		/* enum symalias_bind: which alias names an address */
};

struct elf {
	struct src src;
	int is64;
	struct shdr *sh;
	size_t nsh;
	struct load ld[MAX_PHDRS];
	size_t nld;
	char *shstr;
	size_t shstr_size;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t size)
{
	size_t done = 0;

	if (s->mem) {
		if (off > s->mem_size || size > s->mem_size - off)
			return -EBADMSG;
		memcpy(buf, s->mem + off, size);
		return 0;
	}
	while (done < size) {
		ssize_t n = pread(s->fd, (char *)buf + done, size - done, (off_t)(off + done));

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		done += (size_t)n;
	}
	return 0;
}

/* A malloc'ed copy of @size bytes at @off, bounded by @max. */
static int src_dup(const struct src *s, uint64_t off, uint64_t size, uint64_t max, void **out)
{
	void *p;
	int err;

	*out = NULL;
	if (size > max)
		return -EFBIG;
	p = malloc(size ? size : 1);
	if (!p)
		return -ENOMEM;
	err = src_read(s, off, p, size);
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

static int elf_open(struct elf *e)
{
	unsigned char id[EI_NIDENT];
	uint64_t shoff, phoff;
	size_t shentsize, phentsize, phnum, shstrndx, i;
	int err;

	err = src_read(&e->src, 0, id, sizeof(id));
	if (err)
		return err == -EBADMSG ? -ENOEXEC : err;
	if (memcmp(id, ELFMAG, SELFMAG) != 0 || id[EI_DATA] != HOST_ELFDATA ||
	    (id[EI_CLASS] != ELFCLASS64 && id[EI_CLASS] != ELFCLASS32))
		return -ENOEXEC;
	e->is64 = id[EI_CLASS] == ELFCLASS64;
	if (e->is64) {
		Elf64_Ehdr h;

		err = src_read(&e->src, 0, &h, sizeof(h));
		shoff = h.e_shoff, phoff = h.e_phoff, shentsize = h.e_shentsize;
		phentsize = h.e_phentsize, phnum = h.e_phnum, e->nsh = h.e_shnum;
		shstrndx = h.e_shstrndx;
		if (!err && ((e->nsh && shentsize < sizeof(Elf64_Shdr)) ||
			     (phnum && phentsize < sizeof(Elf64_Phdr))))
			err = -EBADMSG;
	} else {
		Elf32_Ehdr h;

		err = src_read(&e->src, 0, &h, sizeof(h));
		shoff = h.e_shoff, phoff = h.e_phoff, shentsize = h.e_shentsize;
		phentsize = h.e_phentsize, phnum = h.e_phnum, e->nsh = h.e_shnum;
		shstrndx = h.e_shstrndx;
		if (!err && ((e->nsh && shentsize < sizeof(Elf32_Shdr)) ||
			     (phnum && phentsize < sizeof(Elf32_Phdr))))
			err = -EBADMSG;
	}
	if (err)
		return err;
	if (phnum > MAX_PHDRS || e->nsh > MAX_SHDRS)
		return -EBADMSG;
	for (i = 0; i < phnum; i++) {
		uint64_t off = phoff + i * phentsize, vaddr, poff, filesz;
		uint32_t type;

		if (e->is64) {
			Elf64_Phdr p;

			err = src_read(&e->src, off, &p, sizeof(p));
			type = p.p_type, vaddr = p.p_vaddr, poff = p.p_offset, filesz = p.p_filesz;
		} else {
			Elf32_Phdr p;

			err = src_read(&e->src, off, &p, sizeof(p));
			type = p.p_type, vaddr = p.p_vaddr, poff = p.p_offset, filesz = p.p_filesz;
		}
		if (err)
			return err;
		if (type == PT_LOAD && filesz)
			e->ld[e->nld++] = (struct load){ vaddr, poff, filesz };
	}
	e->sh = calloc(e->nsh ? e->nsh : 1, sizeof(*e->sh));
	if (!e->sh)
		return -ENOMEM;
	for (i = 0; i < e->nsh; i++) {
		uint64_t off = shoff + i * shentsize;
		struct shdr *s = &e->sh[i];

		if (e->is64) {
			Elf64_Shdr h;

			err = src_read(&e->src, off, &h, sizeof(h));
			*s = (struct shdr){ h.sh_name, h.sh_type, h.sh_link, h.sh_offset, h.sh_size,
					    h.sh_entsize };
		} else {
			Elf32_Shdr h;

			err = src_read(&e->src, off, &h, sizeof(h));
			*s = (struct shdr){ h.sh_name, h.sh_type, h.sh_link, h.sh_offset, h.sh_size,
					    h.sh_entsize };
		}
		if (err)
			return err;
	}
	if (shstrndx < e->nsh && e->sh[shstrndx].type == SHT_STRTAB) {
		err = src_dup(&e->src, e->sh[shstrndx].offset, e->sh[shstrndx].size,
			      ELFSYMS_MAX_SECTION, (void **)&e->shstr);
		if (err)
			return err;
		e->shstr_size = e->sh[shstrndx].size;
	}
	return 0;
}

static void elf_close(struct elf *e)
{
	free(e->sh);
	free(e->shstr);
}

static long find_section(const struct elf *e, uint32_t type, const char *name)
{
	size_t i;

	for (i = 0; i < e->nsh; i++) {
		const struct shdr *s = &e->sh[i];

		if (s->type != type)
			continue;
		if (!name)
			return (long)i;
		if (e->shstr && s->name < e->shstr_size &&
		    strnlen(e->shstr + s->name, e->shstr_size - s->name) < e->shstr_size - s->name &&
		    strcmp(e->shstr + s->name, name) == 0)
			return (long)i;
	}
	return -1;
}

/* Symbols of growing arrays. */
struct acc {
	struct raw *r;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static int acc_name(struct acc *a, const char *s, size_t len, uint32_t *at)
{
	if (a->names_len + len + 1 > UINT32_MAX)
		return -EFBIG;
	if (a->names_len + len + 1 > a->names_cap) {
		size_t cap = a->names_cap ? a->names_cap : 4096;
		char *p;

		while (cap < a->names_len + len + 1)
			cap *= 2;
		p = realloc(a->names, cap);
		if (!p)
			return -ENOMEM;
		a->names = p;
		a->names_cap = cap;
	}
	memcpy(a->names + a->names_len, s, len);
	a->names[a->names_len + len] = '\0';
	*at = (uint32_t)a->names_len;
	a->names_len += len + 1;
	return 0;
}

/* File offset of virtual address @v through @ld's PT_LOADs, or -1. */
static int vaddr_to_off(const struct load *ld, size_t nld, uint64_t v, uint64_t *off, uint64_t *room)
{
	size_t i;

	for (i = 0; i < nld; i++)
		if (v >= ld[i].vaddr && v - ld[i].vaddr < ld[i].filesz) {
			*off = v - ld[i].vaddr + ld[i].offset;
			*room = ld[i].filesz - (v - ld[i].vaddr);
			return 0;
		}
	return -1;
}

/* Adds the function symbols of section @idx of @e (a SHT_SYMTAB or
 * SHT_DYNSYM), placed by @ld (the binary's segments: for .gnu_debugdata,
 * the outer file's). */
static int add_symbols(struct acc *a, const struct elf *e, long idx, const struct load *ld,
		       size_t nld)
{
	const struct shdr *s = &e->sh[idx], *str;
	size_t entsize = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n, i;
	uint8_t *syms = NULL;
	char *strs = NULL;
	int err;

	if (s->link >= e->nsh || e->sh[s->link].type != SHT_STRTAB)
		return -EBADMSG;
	str = &e->sh[s->link];
	err = src_dup(&e->src, s->offset, s->size, ELFSYMS_MAX_SECTION, (void **)&syms);
	err = err ?: src_dup(&e->src, str->offset, str->size, ELFSYMS_MAX_SECTION, (void **)&strs);
	if (err)
		goto out;
	n = s->size / entsize;
	for (i = 1; i < n; i++) {
		uint64_t value, size, off, room;
		uint32_t name;
		unsigned int type, bind, shndx;
		size_t len;
		struct raw *r;

		if (e->is64) {
			Elf64_Sym y;

			memcpy(&y, syms + i * entsize, sizeof(y));
			value = y.st_value, size = y.st_size, name = y.st_name;
			type = ELF64_ST_TYPE(y.st_info), bind = ELF64_ST_BIND(y.st_info);
			shndx = y.st_shndx;
		} else {
			Elf32_Sym y;

			memcpy(&y, syms + i * entsize, sizeof(y));
			value = y.st_value, size = y.st_size, name = y.st_name;
			type = ELF32_ST_TYPE(y.st_info), bind = ELF32_ST_BIND(y.st_info);
			shndx = y.st_shndx;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF || !value ||
		    name >= str->size)
			continue;
		len = strnlen(strs + name, str->size - name);
		if (!len || len == str->size - name)
			continue;
		if (len > STK_MAX_STRING)
			len = STK_MAX_STRING;
		if (vaddr_to_off(ld, nld, value, &off, &room))
			continue;
		if (a->n == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 1024;
			struct raw *p = realloc(a->r, cap * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			a->r = p;
			a->cap = cap;
		}
		r = &a->r[a->n];
		err = acc_name(a, strs + name, len, &r->name);
		if (err)
			goto out;
		r->off = off;
		r->size = size < room ? size : room;
		r->bind = (int)symalias__elf_bind(bind);
		a->n++;
	}
out:
	free(syms);
	free(strs);
	return err;
}

/* .gnu_debugdata: an xz stream holding an ELF whose .symtab has the local
 * functions .dynsym lacks. */
static int add_debugdata(struct acc *a, const struct elf *e, long idx, const struct load *ld,
			 size_t nld)
{
	const struct shdr *s = &e->sh[idx];
	uint64_t memlimit = 64u << 20;
	size_t in_pos = 0, out_pos = 0, cap = 1u << 20;
	uint8_t *in = NULL, *out = NULL;
	struct elf inner = { .src = { .fd = -1 } };
	lzma_ret ret;
	long sym;
	int err;

	err = src_dup(&e->src, s->offset, s->size, ELFSYMS_MAX_DEBUGDATA, (void **)&in);
	if (err)
		return err;
	for (;;) {
		uint8_t *p = realloc(out, cap);

		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		out = p;
		ret = lzma_stream_buffer_decode(&memlimit, 0, NULL, in, &in_pos, s->size, out,
						&out_pos, cap);
		if (ret == LZMA_OK || ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_BUF_ERROR || cap >= ELFSYMS_MAX_INFLATED) {
			err = ret == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
			goto out;
		}
		/* The buffer decoder starts over with a larger buffer. */
		cap *= 2;
		in_pos = out_pos = 0;
	}
	inner.src.mem = out;
	inner.src.mem_size = out_pos;
	err = elf_open(&inner);
	if (err)
		goto out;
	sym = find_section(&inner, SHT_SYMTAB, NULL);
	if (sym >= 0)
		err = add_symbols(a, &inner, sym, ld, nld);
out:
	elf_close(&inner);
	free(in);
	free(out);
	return err;
}

static int by_off(const void *x, const void *y)
{
	const struct raw *a = x, *b = y;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static int read_src(const struct src *src, struct elfsyms *out)
{
	struct elf e = { .src = *src };
	struct acc a = { 0 };
	size_t i, k, best_i = 0;
	long sym, dd;
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_open(&e);
	if (err)
		goto out;
	sym = find_section(&e, SHT_SYMTAB, NULL);
	if (sym >= 0) {
		out->sources |= STK_ESYM_SRC_SYMTAB;
	} else {
		sym = find_section(&e, SHT_DYNSYM, NULL);
		if (sym >= 0)
			out->sources |= STK_ESYM_SRC_DYNSYM;
	}
	if (sym >= 0)
		err = add_symbols(&a, &e, sym, e.ld, e.nld);
	dd = find_section(&e, SHT_PROGBITS, ".gnu_debugdata");
	if (!err && dd >= 0 && add_debugdata(&a, &e, dd, e.ld, e.nld) == 0)
		out->sources |= STK_ESYM_SRC_DEBUGDATA;	/* best effort: it is an extra */
	if (err)
		goto out;
	if (a.n)	/* none: a.r is NULL, and qsort(NULL, 0) undefined */
		qsort(a.r, a.n, sizeof(*a.r), by_off);
	out->syms = calloc(a.n ? a.n : 1, sizeof(*out->syms));
	if (!out->syms) {
		err = -ENOMEM;
		goto out;
	}
	/* One name per address, by the rule of symalias.h (as stkreport
	 * names it from the file); a sizeless alias takes a size it lacks. */
	for (i = 0, k = 0; i < a.n; i++) {
		if (k && out->syms[k - 1].addr == a.r[i].off) {
			const struct raw *best = &a.r[best_i];

			if (!out->syms[k - 1].size)
				out->syms[k - 1].size = a.r[i].size;
			if (symalias__cmp(a.names + a.r[i].name, (enum symalias_bind)a.r[i].bind,
					  a.names + best->name, (enum symalias_bind)best->bind) < 0) {
				best_i = i;
				out->syms[k - 1].name = (const char *)(uintptr_t)a.r[i].name;
			}
			continue;
		}
		best_i = i;
		out->syms[k].addr = a.r[i].off;
		out->syms[k].size = a.r[i].size;
		out->syms[k].name = (const char *)(uintptr_t)a.r[i].name;
		k++;
	}
	for (i = 0; i < k; i++) {
		out->syms[i].name = a.names + (uintptr_t)out->syms[i].name;
		/* Sizeless (hand-written assembly): up to the next one. */
		if (!out->syms[i].size && i + 1 < k)
			out->syms[i].size = out->syms[i + 1].addr - out->syms[i].addr;
	}
	out->n = k;
	out->names = a.names;
	a.names = NULL;
out:
	free(a.r);
	free(a.names);
	elf_close(&e);
	if (err) {
		free(out->syms);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

int elfsyms__read_fd(int fd, struct elfsyms *out)
{
	struct src s = { .fd = fd };

	return read_src(&s, out);
}

int elfsyms__read_mem(const void *img, size_t size, struct elfsyms *out)
{
	struct src s = { .fd = -1, .mem = img, .mem_size = size };

	return read_src(&s, out);
}

long elfsyms__find(const struct elfsyms *t, uint64_t off)
{
	size_t lo = 0, hi = t->n;

	/* The last symbol starting at or before @off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	lo--;
	if (off - t->syms[lo].addr < (t->syms[lo].size ? t->syms[lo].size : 1))
		return (long)lo;
	/* Inside an earlier, larger one (a nested local label)? */
	if (lo && off - t->syms[lo - 1].addr < t->syms[lo - 1].size)
		return (long)(lo - 1);
	return -1;
}

void elfsyms__free(struct elfsyms *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	memset(t, 0, sizeof(*t));
}
