// SPDX-License-Identifier: BSD-2-Clause
/*
 * mkbounds - the inputs of tests/e2e/report_bounds.sh, which hold the
 * reporter to SPEC.md §7.3's memory bound:
 *
 *   mkbounds zelf IN OUT N
 *       OUT: the ELF IN (64-bit little-endian) with N more sections,
 *       .debug_ranges, .debug_loc, ..., each SHF_COMPRESSED zlib that
 *       declares, and really inflates to, 1 GiB of zeros (~1 MB each).
 *   mkbounds zsym IN OUT
 *       OUT: IN with one more section, .zstrtab, SHT_STRTAB, SHF_COMPRESSED
 *       as above, that IN's .symtab names (sh_link) as its strings: libdwfl
 *       inflates it when it loads the symbol table.
 *   mkbounds xzelf IN OUT
 *       OUT: IN with a .gnu_debugdata (MiniDebugInfo) whose xz stream
 *       inflates to 1 GiB of zeros (~150 KB): libdwfl inflates it for the
 *       symbol table it would hold when IN has no .symtab.
 *   mkbounds capture OUT ELF PATH [embed]
 *       OUT: a profile capture with a few samples in ELF's main(), mapped
 *       from PATH with ELF's build-id; "embed" adds ELF as an image (ESYM).
 *   mkbounds kstack OUT ROWS
 *       OUT: ROWS rows of distinct processes sharing one 1024-frame kernel
 *       stack, every frame in one function whose name is 4096 control
 *       bytes (escaped 4 times as long).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>

#include "fxelf.h"
#include "stk.h"

#define GIB (1ull << 30)
#define CHUNK (1u << 20)

/* A zlib stream of GIB zeros.  After a full flush deflate starts afresh,
 * so every middle chunk compresses to the same bytes: three are deflated,
 * the middle one repeated, and the Adler-32 of the whole written by hand. */
static int zeros_stream(unsigned char **out, size_t *len)
{
	static unsigned char in[CHUNK];
	unsigned char *buf[3] = { NULL, NULL, NULL };
	size_t n[3] = { 0, 0, 0 }, i, reps = GIB / CHUNK - 2, total;
	z_stream z = { 0 };
	unsigned char *p;
	uint32_t adler;
	int k, err = -ENOMEM;

	if (deflateInit(&z, 9) != Z_OK)
		return -ENOMEM;
	for (k = 0; k < 3; k++) {
		buf[k] = malloc(2 * CHUNK);
		if (!buf[k])
			goto out;
		z.next_in = in;
		z.avail_in = CHUNK;
		z.next_out = buf[k];
		z.avail_out = 2 * CHUNK;
		if (deflate(&z, k == 2 ? Z_FINISH : Z_FULL_FLUSH) == Z_STREAM_ERROR)
			goto out;
		n[k] = 2 * CHUNK - z.avail_out;
	}
	/* The last block ends in the Adler-32 of 3 chunks: replace it. */
	n[2] -= 4;
	total = n[0] + reps * n[1] + n[2] + 4;
	p = *out = malloc(total);
	if (!p)
		goto out;
	memcpy(p, buf[0], n[0]);
	p += n[0];
	for (i = 0; i < reps; i++, p += n[1])
		memcpy(p, buf[1], n[1]);
	memcpy(p, buf[2], n[2]);
	p += n[2];
	adler = (uint32_t)(GIB % 65521) << 16 | 1;	/* zeros: s1 stays 1, s2 += 1 */
	p[0] = adler >> 24;
	p[1] = adler >> 16;
	p[2] = adler >> 8;
	p[3] = adler;
	*len = total;
	err = 0;
out:
	deflateEnd(&z);
	for (k = 0; k < 3; k++)
		free(buf[k]);
	return err;
}

/* An xz stream of GIB zeros: one block of CHUNK zeros, repeated, with
 * the index that lists them all. */
static int xz_zeros(unsigned char **out, size_t *len)
{
	static uint8_t in[CHUNK];
	lzma_filter f[2] = { { LZMA_FILTER_LZMA2, NULL }, { LZMA_VLI_UNKNOWN, NULL } };
	lzma_stream_flags fl = { .version = 0, .check = LZMA_CHECK_CRC32 };
	lzma_block b = { .version = 0, .check = LZMA_CHECK_CRC32, .filters = f };
	size_t bcap = lzma_block_buffer_bound(CHUNK), bsz = 0, n = GIB / CHUNK, i, pos;
	unsigned char *blk = malloc(bcap), *p;
	lzma_options_lzma opt;
	lzma_index *idx = lzma_index_init(NULL);
	int err = -ENOMEM;

	if (!blk || !idx || lzma_lzma_preset(&opt, 0))
		goto out;
	f[0].options = &opt;
	err = -EINVAL;
	if (lzma_block_buffer_encode(&b, NULL, in, CHUNK, blk, &bsz, bcap) != LZMA_OK)
		goto out;
	for (i = 0; i < n; i++)
		if (lzma_index_append(idx, NULL, lzma_block_unpadded_size(&b), CHUNK) != LZMA_OK)
			goto out;
	fl.backward_size = lzma_index_size(idx);
	*len = 2 * LZMA_STREAM_HEADER_SIZE + n * bsz + fl.backward_size;
	err = -ENOMEM;
	p = *out = malloc(*len);
	if (!p)
		goto out;
	err = -EINVAL;
	if (lzma_stream_header_encode(&fl, p) != LZMA_OK)
		goto out;
	p += LZMA_STREAM_HEADER_SIZE;
	for (i = 0; i < n; i++, p += bsz)
		memcpy(p, blk, bsz);
	pos = 0;
	if (lzma_index_buffer_encode(idx, p, &pos, fl.backward_size) != LZMA_OK ||
	    lzma_stream_footer_encode(&fl, p + pos) != LZMA_OK)
		goto out;
	err = 0;
out:
	lzma_index_end(idx, NULL);
	free(blk);
	return err;
}

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY), err = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	if (!*buf || read(fd, *buf, *len) != (ssize_t)*len)
		err = -EIO;
	close(fd);
	return err;
}

static const char *const names[] = { ".debug_ranges", ".debug_loc", ".debug_aranges",
				     ".debug_macinfo" };

enum zelf_kind { ZELF_DEBUG, ZELF_SYMSTR, ZELF_XZ };

static int zelf(const char *in, const char *outp, int nsec, enum zelf_kind kind)
{
	static const char *const symstr[] = { ".zstrtab" }, *const xz[] = { ".gnu_debugdata" };
	const char *const *nm = kind == ZELF_DEBUG ? names : kind == ZELF_SYMSTR ? symstr : xz;
	unsigned char *elf, *z;
	size_t len, zlen, off, shoff, stroff, strsz, i;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh, *shs;
	Elf64_Chdr ch = { ELFCOMPRESS_ZLIB, 0, GIB, 1 };
	FILE *f;
	int err;

	if (nsec < 1 || nsec > 4 || (kind != ZELF_DEBUG && nsec != 1))
		return -EINVAL;
	err = read_file(in, &elf, &len) ?: kind == ZELF_XZ ? xz_zeros(&z, &zlen)
							    : zeros_stream(&z, &zlen);
	if (err)
		return err;
	memcpy(&eh, elf, sizeof(eh));
	sh = (Elf64_Shdr *)(elf + eh.e_shoff);
	shs = calloc(eh.e_shnum + nsec, sizeof(*shs));
	if (!shs)
		return -ENOMEM;
	memcpy(shs, sh, eh.e_shnum * sizeof(*shs));
	f = fopen(outp, "w");
	if (!f)
		return -errno;
	fwrite(elf, 1, len, f);
	off = (len + 7) & ~7ul;
	/* A new section name table: the old one, then the new names. */
	stroff = off;
	strsz = shs[eh.e_shstrndx].sh_size;
	fseek(f, (long)stroff, SEEK_SET);
	fwrite(elf + shs[eh.e_shstrndx].sh_offset, 1, strsz, f);
	for (i = 0; i < (size_t)nsec; i++) {
		Elf64_Shdr *s = &shs[eh.e_shnum + i];

		s->sh_name = (Elf64_Word)strsz;
		fwrite(nm[i], 1, strlen(nm[i]) + 1, f);
		strsz += strlen(nm[i]) + 1;
	}
	shs[eh.e_shstrndx].sh_offset = stroff;
	shs[eh.e_shstrndx].sh_size = strsz;
	off = (stroff + strsz + 7) & ~7ul;
	for (i = 0; i < (size_t)nsec; i++) {
		Elf64_Shdr *s = &shs[eh.e_shnum + i];

		s->sh_type = kind == ZELF_SYMSTR ? SHT_STRTAB : SHT_PROGBITS;
		s->sh_flags = kind == ZELF_XZ ? 0 : SHF_COMPRESSED;
		s->sh_offset = off;
		s->sh_size = (kind == ZELF_XZ ? 0 : sizeof(ch)) + zlen;
		s->sh_addralign = kind == ZELF_XZ ? 1 : 8;
		fseek(f, (long)off, SEEK_SET);
		if (kind != ZELF_XZ)
			fwrite(&ch, 1, sizeof(ch), f);
		fwrite(z, 1, zlen, f);
		off = (off + s->sh_size + 7) & ~7ul;
	}
	/* The symbol table's strings are the new section now. */
	for (i = 0; kind == ZELF_SYMSTR && i < eh.e_shnum; i++)
		if (shs[i].sh_type == SHT_SYMTAB)
			shs[i].sh_link = eh.e_shnum;
	shoff = off;
	fseek(f, (long)shoff, SEEK_SET);
	fwrite(shs, sizeof(*shs), eh.e_shnum + nsec, f);
	eh.e_shoff = shoff;
	eh.e_shnum += nsec;
	fseek(f, 0, SEEK_SET);
	fwrite(&eh, 1, sizeof(eh), f);
	err = fclose(f) ? -errno : 0;
	chmod(outp, 0755);
	return err;
}

static int write_meta(struct stk_writer *w)
{
	struct stk_kv kv[] = { { "mode", "profile" }, { "frequency", "49" } };

	return stk_writer__add_meta(w, kv, 2);
}

static int capture(const char *outp, const char *elf, const char *path, int embed)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	struct stk_mapping maps[8];
	struct stk_proc_maps pm = { 0 };
	uint64_t base = 0x555555554000ull, frames[2], v, sz;
	struct stk_stack st = { 1, 2, frames };
	struct stk_count c = { 100, 100, "zbomb", 1, -EFAULT, 0, 0, 10 };
	uint8_t bid[STK_MAX_BUILD_ID];
	unsigned char *img = NULL, *blob;
	size_t len;
	int n, i, bsz, err;
	struct stk_writer *w;

	bsz = fx_build_id(elf, bid);
	n = fx_mappings(elf, base, maps, 8);
	if (bsz <= 0 || n <= 0 || fx_sym(elf, "main", &v, &sz))
		return -ENOENT;
	base = fx_bias(elf, base);
	frames[0] = base + v + 1;
	frames[1] = base + v + 2;
	for (i = 0; i < n; i++) {
		maps[i].path = path;
		maps[i].build_id_size = (uint32_t)bsz;
		memcpy(maps[i].build_id, bid, bsz);
	}
	pm.tgid = 100;
	strcpy(pm.comm, "zbomb");
	pm.nr_mappings = (uint32_t)n;
	pm.mappings = maps;
	w = stk_writer__open(outp, &wo);
	if (!w)
		return -errno;
	err = write_meta(w) ?: stk_writer__add_maps(w, &pm, 1) ?: stk_writer__add_stacks(w, &st, 1);
	err = err ?: stk_writer__add_counts(w, 1, 2, &c, 1);
	if (!err && embed) {
		err = read_file(elf, &img, &len);
		blob = err ? NULL : malloc(len + 1);
		if (!err && !blob)
			err = -ENOMEM;
		if (!err) {
			blob[0] = STK_ESYM_ELF_IMAGE;
			memcpy(blob + 1, img, len);
			err = stk_writer__add_esym(w, bid, (uint32_t)bsz, blob, len + 1);
			free(blob);
		}
		free(img);
	}
	return err ?: stk_writer__close(w);
}

static int kstack(const char *outp, int rows)
{
	static char name[STK_MAX_STRING + 1];
	static uint64_t frames[STK_MAX_FRAMES];
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	struct stk_ksym ks = { 0xffffffff81000000ull, 0x1000, 't', name, "" };
	struct stk_kobj ko = { "[kernel.kallsyms]", 0xffffffff81000000ull, 0x100000, 0, { 0 } };
	struct stk_stack st = { 7, STK_MAX_FRAMES, frames };
	struct stk_count *c = calloc(rows, sizeof(*c));
	struct stk_writer *w;
	int i, err;

	if (!c)
		return -ENOMEM;
	/* Control bytes (not NUL): each escapes to 4 ("\x01"). */
	for (i = 0; i < (int)STK_MAX_STRING; i++)
		name[i] = (char)(1 + i % 31);
	for (i = 0; i < (int)STK_MAX_FRAMES; i++)
		frames[i] = ks.addr + 0x10 + (uint64_t)(i % 64);
	for (i = 0; i < rows; i++) {
		c[i].tgid = c[i].tid = 1000 + i;
		snprintf(c[i].comm, sizeof(c[i].comm), "w%d", i);
		c[i].user_stack = -EFAULT;
		c[i].kernel_stack = 7;
		c[i].count = 1;
	}
	w = stk_writer__open(outp, &wo);
	if (!w)
		return -errno;
	err = write_meta(w) ?: stk_writer__add_ksyms(w, &ks, 1) ?: stk_writer__add_kobjs(w, &ko, 1);
	err = err ?: stk_writer__add_stacks(w, &st, 1) ?: stk_writer__add_counts(w, 1, 2, c, rows);
	free(c);
	return err ?: stk_writer__close(w);
}

int main(int argc, char **argv)
{
	int err = -EINVAL;

	if (argc == 5 && strcmp(argv[1], "zelf") == 0)
		err = zelf(argv[2], argv[3], atoi(argv[4]), ZELF_DEBUG);
	else if (argc == 4 && strcmp(argv[1], "zsym") == 0)
		err = zelf(argv[2], argv[3], 1, ZELF_SYMSTR);
	else if (argc == 4 && strcmp(argv[1], "xzelf") == 0)
		err = zelf(argv[2], argv[3], 1, ZELF_XZ);
	else if ((argc == 5 || argc == 6) && strcmp(argv[1], "capture") == 0)
		err = capture(argv[2], argv[3], argv[4], argc == 6 && !strcmp(argv[5], "embed"));
	else if (argc == 4 && strcmp(argv[1], "kstack") == 0)
		err = kstack(argv[2], atoi(argv[3]));
	else
		fprintf(stderr, "usage: mkbounds zelf IN OUT N | zsym IN OUT | xzelf IN OUT | capture OUT ELF PATH [embed] | kstack OUT ROWS\n");
	if (err)
		fprintf(stderr, "mkbounds: %s: %s\n", argv[1] ? argv[1] : "", strerror(-err));
	return err ? 1 : 0;
}
