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

#include "buildid.h"
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

/* A symbol as read, before it becomes a stk_esym_sym (in place: the
 * same size). */
struct raw {
	uint64_t off, size;
	uint32_t name;		/* into the names buffer */
	int bind;		/* enum symalias_bind: which alias names an address */
};

_Static_assert(sizeof(struct raw) == sizeof(struct stk_esym_sym),
	       "a symbol read becomes a symbol out in place");

struct elf {
	struct src src;
	int is64;
	struct shdr *sh;
	size_t nsh;
	struct load ld[MAX_PHDRS];
	size_t nld;
	struct load notes[MAX_PHDRS];	/* PT_NOTE segments */
	size_t nnotes;
	const uint8_t *want_bid;	/* the build-id the file must have, or NULL */
	size_t want_size;
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

/* The most bytes of a header table read at once. */
#define TABLE_READ_MAX (256 * 1024)

/*
 * A table of @n entries of @entsize bytes at @off, read whole into a
 * malloc'ed *@out (one read where there were one per entry), or *@out =
 * NULL when it is larger than TABLE_READ_MAX: then read entry by entry.
 */
static int table_load(const struct src *s, uint64_t off, size_t n, size_t entsize, uint8_t **out)
{
	int err;

	*out = NULL;
	if (!n || n * entsize > TABLE_READ_MAX)
		return 0;
	*out = malloc(n * entsize);
	if (!*out)
		return -ENOMEM;
	err = src_read(s, off, *out, n * entsize);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* @size bytes of entry @i of the table at @off: from @table if loaded. */
static int table_entry(const struct src *s, const uint8_t *table, uint64_t off, size_t entsize,
		       size_t i, void *buf, size_t size)
{
	if (table) {
		memcpy(buf, table + i * entsize, size);
		return 0;
	}
	return src_read(s, off + i * entsize, buf, size);
}

/*
 * The file's GNU build-id is @e->want_bid, found in its PT_NOTE segments
 * as buildid__from_elf_fd() finds it, from the program headers elf_open()
 * read already: 0, else -ESTALE, or a read's -errno / -EBADMSG.
 */
static int check_build_id(const struct elf *e)
{
	uint8_t got[STK_MAX_BUILD_ID], *buf;
	size_t i;
	int n = 0;

	buf = malloc(BUILDID_MAX_NOTES);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < e->nnotes && !n; i++) {
		const struct load *p = &e->notes[i];

		if (p->filesz == 0 || p->filesz > BUILDID_MAX_NOTES)
			continue;
		n = src_read(&e->src, p->offset, buf, p->filesz);
		if (!n)
			n = buildid__from_notes(buf, p->filesz, got, sizeof(got));
	}
	free(buf);
	if (n < 0)
		return n;
	if ((size_t)n != e->want_size || memcmp(got, e->want_bid, e->want_size) != 0)
		return -ESTALE;
	return 0;
}

static int elf_open(struct elf *e)
{
	unsigned char id[EI_NIDENT];
	uint64_t shoff, phoff;
	size_t shentsize, phentsize, phnum, shstrndx, i;
	uint8_t *table;
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
	err = table_load(&e->src, phoff, phnum, phentsize, &table);
	if (err)
		return err;
	for (i = 0; i < phnum; i++) {
		uint64_t vaddr, poff, filesz;
		uint32_t type;

		if (e->is64) {
			Elf64_Phdr p;

			err = table_entry(&e->src, table, phoff, phentsize, i, &p, sizeof(p));
			type = p.p_type, vaddr = p.p_vaddr, poff = p.p_offset, filesz = p.p_filesz;
		} else {
			Elf32_Phdr p;

			err = table_entry(&e->src, table, phoff, phentsize, i, &p, sizeof(p));
			type = p.p_type, vaddr = p.p_vaddr, poff = p.p_offset, filesz = p.p_filesz;
		}
		if (err)
			goto out;
		if (type == PT_LOAD && filesz)
			e->ld[e->nld++] = (struct load){ vaddr, poff, filesz };
		else if (type == PT_NOTE)
			e->notes[e->nnotes++] = (struct load){ vaddr, poff, filesz };
	}
	free(table);
	table = NULL;
	err = e->want_bid ? check_build_id(e) : 0;
	if (err)
		return err;
	e->sh = calloc(e->nsh ? e->nsh : 1, sizeof(*e->sh));
	if (!e->sh)
		return -ENOMEM;
	err = table_load(&e->src, shoff, e->nsh, shentsize, &table);
	if (err)
		return err;
	for (i = 0; i < e->nsh; i++) {
		struct shdr *s = &e->sh[i];

		if (e->is64) {
			Elf64_Shdr h;

			err = table_entry(&e->src, table, shoff, shentsize, i, &h, sizeof(h));
			*s = (struct shdr){ h.sh_name, h.sh_type, h.sh_link, h.sh_offset, h.sh_size,
					    h.sh_entsize };
		} else {
			Elf32_Shdr h;

			err = table_entry(&e->src, table, shoff, shentsize, i, &h, sizeof(h));
			*s = (struct shdr){ h.sh_name, h.sh_type, h.sh_link, h.sh_offset, h.sh_size,
					    h.sh_entsize };
		}
		if (err)
			goto out;
	}
	free(table);
	table = NULL;
	if (shstrndx < e->nsh && e->sh[shstrndx].type == SHT_STRTAB) {
		err = src_dup(&e->src, e->sh[shstrndx].offset, e->sh[shstrndx].size,
			      ELFSYMS_MAX_SECTION, (void **)&e->shstr);
		if (err)
			return err;
		e->shstr_size = e->sh[shstrndx].size;
	}
	return 0;
out:
	free(table);
	return err;
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

/* Symbols read per pread() of a symbol table. */
#define SYM_BLOCK 2730u	/* 64 KiB of Elf64_Sym */

/* Symbols of growing arrays. */
struct acc {
	struct raw *r;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

/*
 * Room for @nsyms more symbols and @nbytes more of names at once: the
 * table's own sizes bound what it adds, and doubling past them would
 * hold up to twice a large table's memory while it is read.
 */
static int acc_reserve(struct acc *a, size_t nsyms, size_t nbytes)
{
	if (a->n + nsyms > a->cap) {
		struct raw *p = realloc(a->r, (a->n + nsyms) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->r = p;
		a->cap = a->n + nsyms;
	}
	if (a->names_len + nbytes > a->names_cap) {
		char *p = realloc(a->names, a->names_len + nbytes);

		if (!p)
			return -ENOMEM;
		a->names = p;
		a->names_cap = a->names_len + nbytes;
	}
	return 0;
}

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
	size_t entsize = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n, i, first = 0;
	uint8_t *syms = NULL, *vers = NULL;
	char *strs = NULL;
	long vi;
	int err;

	if (s->link >= e->nsh || e->sh[s->link].type != SHT_STRTAB)
		return -EBADMSG;
	str = &e->sh[s->link];
	if (s->size > ELFSYMS_MAX_SECTION)
		return -EFBIG;
	err = src_dup(&e->src, str->offset, str->size, ELFSYMS_MAX_SECTION, (void **)&strs);
	if (err)
		goto out;
	/* The symbols a block at a time (the strings are looked up at
	 * random: they are read whole). */
	syms = malloc(SYM_BLOCK * sizeof(Elf64_Sym));
	if (!syms) {
		err = -ENOMEM;
		goto out;
	}
	n = s->size / entsize;
	/* .dynsym spells names bare: .gnu.version says which are kept only
	 * under an older version (glibc's cfree), rule 2 of symalias.h.
	 * Best effort: without it they are ranked as current names. */
	vi = s->type == SHT_DYNSYM ? find_section(e, SHT_GNU_versym, NULL) : -1;
	if (vi >= 0 && e->sh[vi].size / 2 >= n &&
	    src_dup(&e->src, e->sh[vi].offset, n * 2, ELFSYMS_MAX_SECTION, (void **)&vers))
		vers = NULL;
	/* Each name is a string of the table (cut at STK_MAX_STRING). */
	err = acc_reserve(a, n, str->size + 1);
	if (err)
		goto out;
	for (i = 1; i < n; i++) {
		uint64_t value, size, off, room;
		uint32_t name;
		unsigned int type, bind, shndx;
		size_t len;
		struct raw *r;
		const uint8_t *at;

		if (i == 1 || i - first == SYM_BLOCK) {
			size_t k = n - i < SYM_BLOCK ? n - i : SYM_BLOCK;

			first = i;
			err = src_read(&e->src, s->offset + i * entsize, syms, k * entsize);
			if (err)
				goto out;
		}
		at = syms + (i - first) * entsize;
		if (e->is64) {
			Elf64_Sym y;

			memcpy(&y, at, sizeof(y));
			value = y.st_value, size = y.st_size, name = y.st_name;
			type = ELF64_ST_TYPE(y.st_info), bind = ELF64_ST_BIND(y.st_info);
			shndx = y.st_shndx;
		} else {
			Elf32_Sym y;

			memcpy(&y, at, sizeof(y));
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
		if (vers) {
			uint16_t v;

			memcpy(&v, vers + 2 * i, sizeof(v));	/* host order, as checked */
			if (v & 0x8000)
				r->bind |= SYMALIAS_COMPAT;
		}
		a->n++;
	}
out:
	free(vers);
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

static int read_src(const struct src *src, const uint8_t *bid, size_t bid_size,
		    struct elfsyms *out)
{
	struct elf e = { .src = *src, .want_bid = bid, .want_size = bid_size };
	struct acc a = { 0 };
	struct raw best = { 0 };
	size_t i, k, nsyms;
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
	/*
	 * One name per address, by the rule of symalias.h (as stkreport
	 * names it from the file); a sizeless alias takes a size it lacks.
	 * In place: a symbol out takes the room of a symbol read, and out k
	 * is written once read i >= k is (through memcpy(): two types share
	 * the block), so a large table costs no second array.
	 */
	for (i = 0, k = 0; i < a.n; i++) {
		struct stk_esym_sym y;
		struct raw r;

		memcpy(&r, (char *)a.r + i * sizeof(r), sizeof(r));
		if (k) {
			memcpy(&y, (char *)a.r + (k - 1) * sizeof(y), sizeof(y));
			if (y.addr == r.off) {
				if (!y.size)
					y.size = r.size;
				if (symalias__cmp(a.names + r.name, r.bind, a.names + best.name,
						  best.bind) < 0) {
					best = r;
					y.name = (const char *)(uintptr_t)r.name;
				}
				memcpy((char *)a.r + (k - 1) * sizeof(y), &y, sizeof(y));
				continue;
			}
		}
		best = r;
		y = (struct stk_esym_sym){ r.off, r.size, (const char *)(uintptr_t)r.name };
		memcpy((char *)a.r + k * sizeof(y), &y, sizeof(y));
		k++;
	}
	/* Only what stays, so that what a caller accounts for is what it
	 * holds (a shrinking realloc() that fails leaves the larger block,
	 * counted as it is). */
	nsyms = a.cap ? a.cap : 1;
	out->syms = (struct stk_esym_sym *)realloc(a.r, (k ? k : 1) * sizeof(*out->syms));
	if (out->syms) {
		nsyms = k ? k : 1;
	} else if (a.r) {
		out->syms = (struct stk_esym_sym *)(void *)a.r;
	} else {
		err = -ENOMEM;
		goto out;
	}
	a.r = NULL;
	if (a.names_len < a.names_cap) {
		char *p = realloc(a.names, a.names_len ? a.names_len : 1);

		if (p) {
			a.names = p;
			a.names_cap = a.names_len ? a.names_len : 1;
		}
	}
	out->bytes = nsyms * sizeof(*out->syms) + a.names_cap;
	for (i = 0; i < k; i++) {
		char *name = a.names + (uintptr_t)out->syms[i].name;

		/* The name a reporter shows: no symbol version (symalias.h). */
		name[symalias__name_len(name)] = '\0';
		out->syms[i].name = name;
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

	return read_src(&s, NULL, 0, out);
}

int elfsyms__read_mem(const void *img, size_t size, struct elfsyms *out)
{
	struct src s = { .fd = -1, .mem = img, .mem_size = size };

	return read_src(&s, NULL, 0, out);
}

int elfsyms__read_build_id(int fd, const uint8_t *bid, size_t size, struct elfsyms *out)
{
	struct src s = { .fd = fd };

	/* Checked from the headers the symbols are read with: one pass. */
	return read_src(&s, bid, size, out);
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
