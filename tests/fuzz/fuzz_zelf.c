// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for compressed debug sections, which libdw inflates to
 * the size their headers declare: the reporter measures them first
 * (report/symbols/elfinflate.c) and leaves a file's DWARF unread when they
 * declare more than SPEC.md §7.3 allows.  The input rewrites the debug
 * sections of the fx_pie fixture, and its .symtab and .strtab (which
 * libdwfl inflates when it loads the module): each kept as it is, or zlib-compressed
 * as SHF_COMPRESSED (ELF gABI) or GNU .zdebug_*, with the declared size,
 * type and alignment the input gives and bytes of the stream changed; the
 * image is then embedded in a capture (ESYM kind 1) that samples fx_pie,
 * or put on disk at the mapping's path under a --sysroot, and the capture
 * is reported with DWARF (inline frames, --lines: text, folded, pprof,
 * the closing summary with its warning) and `info --symbols`.
 *
 * The bound is held by running under it: make fuzz passes it
 * -rss_limit_mb and -malloc_limit_mb (mk/report_fuzz.mk); the replay runs
 * the corpus under ASan with max_allocation_size_mb=264 (below), so an
 * allocation past the bound (libdw inflating 1 GiB) aborts it: ASan's
 * default allows allocations of up to 3 GiB, and the replay would pass.
 *
 * Input: byte 0 options, then one byte per debug section of fx_pie, then
 * .symtab and .strtab (in section order, which puts those two last;
 * missing: 0), each followed by the bytes it asks for:
 *   byte 0  bit 0 on disk instead of embedded   bit 1 --lines
 *           bit 2 --no-inline                    bit 3 also info --symbols
 *   section bits 0-1  0 kept, 1 SHF_COMPRESSED zlib, 2 .zdebug, 3
 *                     SHF_COMPRESSED of the type in the next byte
 *           bits 2-3  declared size: 0 the true one, 1 the next 4 bytes,
 *                     2 the next 8, 3 the true one plus the next byte
 *                     (signed)
 *           bit 4     the next 2 bytes give an offset in the compressed
 *                     bytes, the byte after them is XORed there
 *           bit 5     ch_addralign from the next byte (SHF_COMPRESSED)
 *           bit 6     the section is cut to the next byte's length
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cmds.h"
#include "fuzz_common.h"
#include "fxelf.h"
#include "main_args.h"
#include "output.h"

#define ELF_PATH FUZZ_BUILD "/tests/fixtures/root/fx/fx_pie"
#define MAP_PATH "/fx/fx_pie"
#define MAX_DEBUG 16
#define BASE 0x555555554000ull

/* A debug section of the fixture and its zlib stream, made once. */
struct dsec {
	size_t index;
	const char *name;	/* in the fixture's section name table */
	uint8_t *z;		/* zlib of its contents */
	size_t zlen;
};

static struct fixture {
	uint8_t *image;
	size_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	struct dsec d[MAX_DEBUG];
	size_t nr_d;
	uint8_t bid[STK_MAX_BUILD_ID];
	int bid_size;
	struct stk_mapping maps[8];
	int nr_maps;
	uint64_t frames[6];
} fx;

/* The image being built. */
static struct out {
	uint8_t *buf;
	size_t len, cap;
} img;

static char root[1100], disk[1200], cap_path[1100];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_zelf: %s: %s (run make fixtures)\n", what, strerror(errno));
	exit(1);
}

static uint8_t in__u8(const uint8_t **p, size_t *n)
{
	if (!*n)
		return 0;
	(*n)--;
	return *(*p)++;
}

static uint64_t in__u64(const uint8_t **p, size_t *n, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)in__u8(p, n) << (8 * i);
	return v;
}

/* Appends @len bytes at @align (1 or 8); returns their offset. */
static size_t out__put(const void *p, size_t len, size_t align)
{
	size_t off = (img.len + align - 1) & ~(align - 1);

	if (off + len > img.cap) {
		img.cap = 2 * (off + len);
		img.buf = realloc(img.buf, img.cap);
		if (!img.buf)
			die("realloc");
	}
	memset(img.buf + img.len, 0, off - img.len);
	memcpy(img.buf + off, p, len);
	img.len = off + len;
	return off;
}

static void setup(void)
{
	static const char *const calls[][2] = {
		{ "fx_mid", "fx_leaf" }, { "fx_root", "fx_mid" }, { "main", "fx_root" },
		{ "fx_outer", "fx_leaf2" }, { "main", "fx_outer" },
	};
	const char *tmp = fuzz_tmpdir(), *strs;
	uint64_t v, bias = fx_bias(ELF_PATH, BASE);
	FILE *f = fopen(ELF_PATH, "rb");
	struct stat st;
	size_t i;
	uLongf zl;

	if (!f || fstat(fileno(f), &st) || !(fx.image = malloc(st.st_size)) ||
	    fread(fx.image, 1, st.st_size, f) != (size_t)st.st_size)
		die(ELF_PATH);
	fclose(f);
	fx.size = st.st_size;
	memcpy(&fx.eh, fx.image, sizeof(fx.eh));
	fx.sh = (Elf64_Shdr *)(fx.image + fx.eh.e_shoff);
	strs = (const char *)fx.image + fx.sh[fx.eh.e_shstrndx].sh_offset;
	for (i = 1; i < fx.eh.e_shnum && fx.nr_d < MAX_DEBUG; i++) {
		struct dsec *d = &fx.d[fx.nr_d];

		/* The symbol table too: libdwfl inflates it as it loads the
		 * module, before any DWARF (elf_inflate__symtab()). */
		if (strncmp(strs + fx.sh[i].sh_name, ".debug_", 7) != 0 &&
		    strcmp(strs + fx.sh[i].sh_name, ".symtab") != 0 &&
		    strcmp(strs + fx.sh[i].sh_name, ".strtab") != 0)
			continue;
		d->index = i;
		d->name = strs + fx.sh[i].sh_name;
		zl = compressBound(fx.sh[i].sh_size);
		d->z = malloc(zl);
		if (!d->z || compress2(d->z, &zl, fx.image + fx.sh[i].sh_offset,
				       fx.sh[i].sh_size, 1) != Z_OK)
			die("compress");
		d->zlen = zl;
		fx.nr_d++;
	}
	fx.bid_size = fx_build_id(ELF_PATH, fx.bid);
	fx.nr_maps = fx_mappings(ELF_PATH, BASE, fx.maps, 8);
	if (!fx.nr_d || fx.bid_size <= 0 || fx.nr_maps <= 0 || fx_sym(ELF_PATH, "fx_leaf", &v, NULL))
		die(ELF_PATH);
	fx.frames[0] = bias + v + 1;
	for (i = 0; i < 5; i++) {
		if (fx_call_ret(ELF_PATH, calls[i][0], calls[i][1], &v))
			die(calls[i][0]);
		fx.frames[i + 1] = bias + v;
	}
	for (i = 0; i < (size_t)fx.nr_maps; i++) {
		fx.maps[i].path = MAP_PATH;
		fx.maps[i].build_id_size = fx.bid_size;
		memcpy(fx.maps[i].build_id, fx.bid, fx.bid_size);
	}
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(disk, sizeof(disk), "%s%s", root, MAP_PATH);
	snprintf(cap_path, sizeof(cap_path), "%s/z.stk", tmp);
	if (mkdir(root, 0700))
		die(root);
	*strrchr(disk, '/') = '\0';
	if (mkdir(disk, 0700))
		die(disk);
	snprintf(disk, sizeof(disk), "%s%s", root, MAP_PATH);
}

/* The fixture with its debug sections rewritten as @data says. */
static void build_image(const uint8_t *data, size_t n)
{
	const Elf64_Shdr *ss = &fx.sh[fx.eh.e_shstrndx];
	Elf64_Shdr sh[128];
	Elf64_Ehdr eh = fx.eh;
	size_t i, k, strsz = ss->sh_size, stroff;
	int zdebug[MAX_DEBUG];

	if (fx.eh.e_shnum > 128)
		die("too many sections");
	memcpy(sh, fx.sh, fx.eh.e_shnum * sizeof(*sh));
	img.len = 0;
	out__put(fx.image, fx.size, 1);
	for (i = 0; i < fx.nr_d; i++) {
		const struct dsec *d = &fx.d[i];
		Elf64_Shdr *s = &sh[d->index];
		uint8_t op = in__u8(&data, &n), zh[12];
		uint64_t declared = s->sh_size;
		Elf64_Chdr ch = { ELFCOMPRESS_ZLIB, 0, 0, 1 };

		zdebug[i] = (op & 3) == 2;
		if (!(op & 3))
			continue;
		switch ((op >> 2) & 3) {
		case 1: declared = in__u64(&data, &n, 4); break;
		case 2: declared = in__u64(&data, &n, 8); break;
		case 3: declared += (int8_t)in__u8(&data, &n); break;
		}
		if ((op & 3) == 3)
			ch.ch_type = in__u8(&data, &n);
		if (op & 0x20)
			ch.ch_addralign = in__u8(&data, &n);
		ch.ch_size = declared;
		if (zdebug[i]) {
			/* GNU: "ZLIB", the size 8 bytes big-endian, the stream. */
			memcpy(zh, "ZLIB", 4);
			for (k = 0; k < 8; k++)
				zh[4 + k] = (uint8_t)(declared >> (56 - 8 * k));
			s->sh_offset = out__put(zh, sizeof(zh), 1);
			s->sh_addralign = 1;
		} else {
			s->sh_offset = out__put(&ch, sizeof(ch), 8);
			s->sh_flags |= SHF_COMPRESSED;
			s->sh_addralign = 8;
		}
		out__put(d->z, d->zlen, 1);
		s->sh_size = img.len - s->sh_offset;
		if (op & 0x10) {
			k = in__u64(&data, &n, 2) % s->sh_size;
			img.buf[s->sh_offset + k] ^= in__u8(&data, &n);
		}
		if (op & 0x40)
			s->sh_size = in__u8(&data, &n) % (s->sh_size + 1);
	}
	/* The names: the old table, then ".zdebug_X" for the renamed. */
	stroff = out__put(fx.image + ss->sh_offset, ss->sh_size, 1);
	for (i = 0; i < fx.nr_d; i++) {
		char name[64];

		if (!zdebug[i])
			continue;
		snprintf(name, sizeof(name), ".z%s", fx.d[i].name + 1);
		out__put(name, strlen(name) + 1, 1);
		sh[fx.d[i].index].sh_name = (Elf64_Word)strsz;
		strsz += strlen(name) + 1;
	}
	sh[fx.eh.e_shstrndx].sh_offset = stroff;
	sh[fx.eh.e_shstrndx].sh_size = strsz;
	eh.e_shoff = out__put(sh, fx.eh.e_shnum * sizeof(*sh), 8);
	memcpy(img.buf, &eh, sizeof(eh));
}

/* A capture sampling fx_pie in its functions, the image embedded or not. */
static int write_capture(int embed)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	struct stk_kv kv[] = { { "mode", "profile" }, { "frequency", "49" } };
	struct stk_proc_maps pm = { 0 };
	const uint64_t *f = fx.frames;
	uint64_t s1[] = { f[0], f[1], f[2], f[3] }, s2[] = { f[0] + 0x20, f[4], f[5] };
	struct stk_stack st[] = { { 1, 4, s1 }, { 2, 3, s2 } };
	struct stk_count c[] = { { 100, 100, "fx_pie", 1, -EFAULT, 0, 0, 10 },
				 { 100, 101, "fx_pie", 2, -EFAULT, 0, 0, 5 } };
	struct stk_writer *w;
	uint8_t *blob = NULL;
	int err;

	pm.tgid = 100;
	strcpy(pm.comm, "fx_pie");
	pm.nr_mappings = (uint32_t)fx.nr_maps;
	pm.mappings = fx.maps;
	w = stk_writer__open(cap_path, &wo);
	if (!w)
		return -errno;
	err = stk_writer__add_meta(w, kv, 2) ?: stk_writer__add_maps(w, &pm, 1);
	err = err ?: stk_writer__add_stacks(w, st, 2) ?: stk_writer__add_counts(w, 1, 2, c, 2);
	if (!err && embed) {
		blob = malloc(img.len + 1);
		if (!blob) {
			err = -ENOMEM;
		} else {
			blob[0] = STK_ESYM_ELF_IMAGE;
			memcpy(blob + 1, img.buf, img.len);
			err = stk_writer__add_esym(w, fx.bid, (uint32_t)fx.bid_size, blob,
						   img.len + 1);
			free(blob);
		}
	}
	if (err) {
		stk_writer__discard(w);
		return err;
	}
	return stk_writer__close(w);
}

static void report(uint8_t flags)
{
	static const char *const formats[] = { "text", "folded", "pprof" };
	static struct main_args a;
	char *argv[] = { "info", "--symbols", "--sysroot", root, cap_path, NULL };
	struct main_input in;
	size_t i;

	main_args__init(&a);
	a.ro.sym.sysroot = root;
	a.ro.sym.nr_debug_dirs = 0;
	a.ro.sym.system_debug_dir = "";
	a.no_debuginfod = 1;
	a.symbol_cache = "none";	/* each input alone (fuzz_reporting.h) */
	a.oo.addresses = 1;
	a.ro.sym.lines = a.oo.lines = !!(flags & 2);
	a.ro.sym.no_inline = a.oo.no_inline = !!(flags & 4);
	if (main_args__check(&a) == 0 && main_input__load(&in, &a, cap_path, a.oo.lines) == 0) {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			output_format__find(formats[i])->write(in.r, &a.oo, fuzz_null());
		main_input__status(&in, NULL);
		main_input__release(&in);
	}
	if (flags & 8) {
		optind = 0;
		info_main(5, argv);
	}
}

/* Once, before the first input (libFuzzer and the replay): the fixture,
 * its zlib streams, the directories. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags;

	if (size < 1)
		return 0;
	flags = data[0];
	build_image(data + 1, size - 1);
	unlink(disk);
	if (flags & 1 && fuzz_write_file(disk, img.buf, img.len))
		return 0;
	if (write_capture(!(flags & 1)))
		return 0;
	fuzz_quiet(1);
	report(flags);
	fuzz_quiet(0);
	return 0;
}

#ifndef FUZZ_LIBFUZZER
const char *__asan_default_options(void);

/* The replay's bound, as -malloc_limit_mb=264 is libFuzzer's; common.c's
 * options kept. */
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0:max_allocation_size_mb=264";
}
#endif
