// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the symbolizer's own ELF and DWARF handling: the
 * files stkreport opens are not its own, so they are damaged here.  A
 * fixed capture ($(O)/tests/fuzz/elf.stk, made by mkcapture from
 * tests/fuzz/elf.spec) samples the ELF fixtures; the input picks one of
 * its binaries (or the kernel fixture), applies byte edits to a copy,
 * writes it where stkreport looks (in a temporary --debug-dir under its
 * build-id path, or under a temporary --sysroot at its recorded path, or
 * as the --vmlinux file), and runs the report with lines and inline frames
 * (text and pprof) and `info --symbols` against it.
 *
 * Input: byte 0: the binary (low 7 bits, modulo the number of binaries
 * plus one: the last is the kernel); bit 7: at its path under the sysroot
 * instead of the debug dir.  Then edits, each one byte OP and a 32-bit
 * little-endian OFFSET (modulo the file size), then:
 *   OP bit 7      cut the file at OFFSET (the last edit)
 *   else          write the next (OP & 7) + 1 bytes of the input at OFFSET
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture.h"
#include "cmds.h"
#include "fuzz_common.h"
#include "main_args.h"
#include "output.h"

#define FX FUZZ_BUILD "/tests/fixtures"
#define CAPTURE FUZZ_BUILD "/tests/fuzz/elf.stk"
#define MAX_BINS 16

struct bin {
	uint8_t *image;		/* the fixture's bytes */
	size_t size;
	char debug_path[4200];	/* where it goes in the debug dir ... */
	char root_path[4200];	/* ... or under the sysroot */
};

static struct bin bins[MAX_BINS + 1];	/* the last: the kernel */
static size_t nr_bins;
static char root[1100], debug[1100], vmlinux[1100];
static uint8_t *edited;
static size_t edited_cap;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz_elf: %s %s: %s (run make fixtures)\n", what, path, strerror(errno));
	exit(1);
}

static int load(const char *path, uint8_t **image, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f)
		return -1;
	if (fstat(fileno(f), &st) || !(*image = malloc(st.st_size)) ||
	    fread(*image, 1, st.st_size, f) != (size_t)st.st_size) {
		fclose(f);
		return -1;
	}
	*size = st.st_size;
	if (*size > edited_cap)
		edited_cap = *size;
	return fclose(f);
}

/* mkdir -p of @path's directory. */
static void mkdirs(const char *path)
{
	char d[4200], *p;

	snprintf(d, sizeof(d), "%s", path);
	for (p = d + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(d, 0700) && errno != EEXIST)
			die("mkdir", d);
		*p = '/';
	}
}

/* The binaries of the capture, by build-id, and the kernel image. */
static void setup(void)
{
	const char *tmp = fuzz_tmpdir();
	struct capture *cap = capture__read(CAPTURE);
	char hex[2 * STK_MAX_BUILD_ID + 1], orig[4200];
	size_t s, m, k, i;

	if (!cap)
		die("cannot read", CAPTURE);
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(debug, sizeof(debug), "%s/debug", tmp);
	snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", tmp);
	if (mkdir(root, 0700) || mkdir(debug, 0700))
		die("mkdir", root);
	for (s = 0; s < cap->nr_segs; s++) {
		for (m = 0; m < cap->segs[s].nr_maps; m++) {
			const struct cap_maps *cm = cap->segs[s].maps[m];

			for (k = 0; k < cm->nr_mappings && nr_bins < MAX_BINS; k++) {
				const struct stk_mapping *mp = &cm->mappings[k];
				struct bin *b = &bins[nr_bins];

				if (!mp->build_id_size || mp->path[0] != '/')
					continue;
				hex_encode(hex, mp->build_id, mp->build_id_size);
				snprintf(b->debug_path, sizeof(b->debug_path), "%s/.build-id/%.2s/%s.debug",
					 debug, hex, hex + 2);
				for (i = 0; i < nr_bins; i++)
					if (!strcmp(bins[i].debug_path, b->debug_path))
						break;
				if (i < nr_bins)
					continue;
				snprintf(b->root_path, sizeof(b->root_path), "%s%s", root, mp->path);
				/* Its debuginfo when it is stripped, else the file. */
				snprintf(orig, sizeof(orig), "%s/debug/.build-id/%.2s/%s.debug", FX, hex,
					 hex + 2);
				if (load(orig, &b->image, &b->size)) {
					snprintf(orig, sizeof(orig), "%s/root%s", FX, mp->path);
					if (load(orig, &b->image, &b->size))
						die("cannot read", orig);
				}
				mkdirs(b->debug_path);
				mkdirs(b->root_path);
				nr_bins++;
			}
		}
	}
	capture__free(cap);
	if (!nr_bins)
		die("no binaries with a build-id in", CAPTURE);
	if (load(FX "/kernel/vmlinux", &bins[nr_bins].image, &bins[nr_bins].size))
		die("cannot read", FX "/kernel/vmlinux");
	snprintf(bins[nr_bins].root_path, sizeof(bins[nr_bins].root_path), "%s", vmlinux);
	snprintf(bins[nr_bins].debug_path, sizeof(bins[nr_bins].debug_path), "%s", vmlinux);
	edited = malloc(edited_cap);
	if (!edited)
		die("out of memory", "");
}

/* Applies the edits of @data to a copy of @b; returns the new size. */
static size_t edit(const struct bin *b, const uint8_t *data, size_t size)
{
	size_t pos = 0, n = b->size, w, i;
	uint32_t off;

	memcpy(edited, b->image, n);
	while (pos + 5 <= size && n) {
		uint8_t op = data[pos];

		off = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16 |
		      (uint32_t)data[pos + 4] << 24;
		off %= n;
		pos += 5;
		if (op & 0x80) {
			n = off;
			break;
		}
		w = (op & 7) + 1;
		for (i = 0; i < w && pos < size && off + i < n; i++)
			edited[off + i] = data[pos++];
	}
	return n;
}

static void report(const char *vmlinux_path)
{
	static struct main_args a;
	static const char *const formats[] = { "text", "pprof" };
	char *argv[] = { "info", "--symbols", "--sysroot", root, "--debug-dir", debug,
			 CAPTURE, NULL };
	struct main_input in;
	size_t i;

	main_args__init(&a);
	a.ro.sym.sysroot = root;
	a.debug_dirs[0] = debug;
	a.ro.sym.nr_debug_dirs = 1;
	a.ro.sym.system_debug_dir = "";
	a.no_debuginfod = 1;
	a.symbol_cache = "none";	/* each input alone (fuzz_reporting.h) */
	a.ro.sym.lines = a.oo.lines = 1;
	a.oo.addresses = 1;
	a.vmlinux = vmlinux_path;
	main_args__check(&a);
	if (main_input__load(&in, &a, CAPTURE, 1) == 0) {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			output_format__find(formats[i])->write(in.r, &a.oo, fuzz_null());
		main_input__status(&in, NULL);
		main_input__release(&in);
	}
	if (!vmlinux_path) {
		optind = 0;
		info_main(7, argv);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct bin *b;
	const char *path;
	size_t i, n;

	if (!nr_bins)
		setup();
	if (size < 1)
		return 0;
	for (i = 0; i <= nr_bins; i++) {
		unlink(bins[i].debug_path);
		unlink(bins[i].root_path);
	}
	b = &bins[(data[0] & 0x7f) % (nr_bins + 1)];
	path = b == &bins[nr_bins] ? vmlinux : data[0] & 0x80 ? b->root_path : b->debug_path;
	n = edit(b, data + 1, size - 1);
	if (fuzz_write_file(path, edited, n))
		return 0;
	fuzz_quiet(1);
	report(b == &bins[nr_bins] ? vmlinux : NULL);
	fuzz_quiet(0);
	return 0;
}
