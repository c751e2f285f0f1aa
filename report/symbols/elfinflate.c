// SPDX-License-Identifier: BSD-2-Clause
/*
 * The inflated size an ELF's compressed sections declare, from their
 * headers alone (elfinflate.h), with libelf's public API; and what
 * libdwfl inflates to read its symbol table, MiniDebugInfo included.
 */
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "elfinflate.h"

/* The decoder's own memory (its dictionary): xz -9 needs 65 MiB. */
#define XZ_MEMLIMIT	(80ull << 20)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* GNU .zdebug: "ZLIB", the inflated size as 8 bytes big-endian, zlib. */
static uint64_t zdebug_size(Elf_Scn *scn)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p;
	uint64_t v = 0;
	int i;

	/* Anything else libelf refuses to inflate: it costs nothing. */
	if (!d || !d->d_buf || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4) != 0)
		return 0;
	p = (const unsigned char *)d->d_buf + 4;
	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* What @scn declares it inflates to; 0 when it is not compressed. */
static uint64_t section_declared(Elf *elf, Elf_Scn *scn, int names, size_t shstrndx)
{
	const char *name = NULL;
	GElf_Chdr ch;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
	if (names)
		name = elf_strptr(elf, shstrndx, sh.sh_name);
	if (name && strncmp(name, ".zdebug", 7) == 0)
		return zdebug_size(scn);
	return 0;
}

uint64_t elf_inflate__declared(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;
	size_t shstrndx;
	int names;

	if (!elf)
		return 0;
	names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	while ((scn = elf_nextscn(elf, scn)))
		sum = add_sat(sum, section_declared(elf, scn, names, shstrndx));
	return sum;
}

static int is_symtab_type(GElf_Word type)
{
	return type == SHT_SYMTAB || type == SHT_DYNSYM || type == SHT_SYMTAB_SHNDX;
}

/*
 * The sections libdwfl inflates (elf_compress(), elf_compress_gnu()) when
 * it loads a symbol table: the table, the section its sh_link names
 * (whatever its type: that is the one read as strings), the index table.
 * Each section is counted once.
 */
static uint64_t symtab_declared(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;
	size_t shstrndx, n, i;
	unsigned char *mark;
	int names;

	if (!elf || elf_getshdrnum(elf, &n) != 0)
		return 0;
	mark = calloc(n ? n : 1, 1);
	if (!mark)
		return UINT64_MAX;	/* cannot tell: refuse */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !is_symtab_type(sh.sh_type))
			continue;
		mark[elf_ndxscn(scn)] = 1;
		if (sh.sh_link < n)
			mark[sh.sh_link] = 1;
	}
	names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	for (i = 1; i < n; i++)
		if (mark[i] && (scn = elf_getscn(elf, i)))
			sum = add_sat(sum, section_declared(elf, scn, names, shstrndx));
	free(mark);
	return sum;
}

/*
 * Inflates the xz stream(s) @in into a buffer of at most @cap bytes;
 * the bytes they inflate to, or more than @cap when they go past it (the
 * buffer is then not kept).  *@out: the image, malloc'd, when not past.
 * An unreadable stream counts what it gave before it failed: libdwfl's
 * decoder would have stopped there too.
 */
static uint64_t xz_inflate(const void *in, size_t len, uint64_t cap, unsigned char **out)
{
	lzma_stream z = LZMA_STREAM_INIT;
	/* One byte past @cap tells "past it". */
	size_t stop = cap < SIZE_MAX - 1 ? (size_t)cap + 1 : SIZE_MAX;
	unsigned char *buf = NULL, *p;
	size_t size = 0, want;
	uint64_t got = 0;
	lzma_ret ret;

	*out = NULL;
	if (lzma_stream_decoder(&z, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return UINT64_MAX;
	z.next_in = in;
	z.avail_in = len;
	for (;;) {
		if (z.avail_out == 0) {
			if (size >= stop)
				break;	/* got == stop: past @cap */
			want = size ? (size < stop / 2 ? 2 * size : stop) : 64u << 10;
			if (want > stop)
				want = stop;
			p = realloc(buf, want);
			if (!p) {
				got = UINT64_MAX;
				break;
			}
			buf = p;
			z.next_out = buf + size;
			z.avail_out = want - size;
			size = want;
		}
		ret = lzma_code(&z, LZMA_FINISH);
		got = z.total_out;
		if (ret == LZMA_STREAM_END) {
			*out = buf;
			buf = NULL;
			break;
		}
		if (ret == LZMA_MEMLIMIT_ERROR || ret == LZMA_MEM_ERROR) {
			got = UINT64_MAX;
			break;
		}
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
			break;	/* corrupt: what it gave */
		if (ret == LZMA_BUF_ERROR && z.avail_out)
			break;	/* input ended early */
	}
	lzma_end(&z);
	free(buf);
	return got;
}

/* .gnu_debugdata, found by name as libdwfl finds it; NULL if none. */
static Elf_Scn *find_debugdata(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".gnu_debugdata") == 0)
			return scn;
	}
	return NULL;
}

uint64_t elf_inflate__symtab(Elf *elf, uint64_t limit)
{
	unsigned char *img = NULL;
	uint64_t sum, xz;
	Elf_Scn *scn;
	Elf_Data *d;
	Elf *aux;

	sum = symtab_declared(elf);
	if (sum > limit || !(scn = elf ? find_debugdata(elf) : NULL))
		return sum;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return sum;
	xz = xz_inflate(d->d_buf, d->d_size, limit - sum, &img);
	sum = add_sat(sum, xz);
	if (!img)
		return sum;
	/* Its own symbol table may be compressed again. */
	aux = elf_memory((char *)img, (size_t)xz);
	if (aux)
		sum = add_sat(sum, symtab_declared(aux));
	elf_end(aux);
	free(img);
	return sum;
}

uint64_t elf_inflate__limit(uint64_t size)
{
	return size > UINT64_MAX / ELF_INFLATE_PER_BYTE ? UINT64_MAX
							  : size * ELF_INFLATE_PER_BYTE;
}
