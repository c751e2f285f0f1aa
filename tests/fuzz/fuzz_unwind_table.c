// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the unwind-table builder (record/unwind/unwind_table.c).
 * stkrec builds tables, as root, from every ELF file a traced process maps
 * executable, and any user can map a file of their own making: its
 * .eh_frame_hdr, .eh_frame and .debug_frame are hostile.  The input picks
 * one of the unwind fixtures (mk/unwind.mk), applies byte edits to a copy
 * in memory and builds its table with elf_memory() and
 * unwind_table__from_elf_debug(), the stripped fixture with its separate
 * debuginfo (edited too, when the edit says so) as the second file.  A
 * table built must have its rows sorted and a lookup of each row's pc
 * must find that row.
 *
 * libdw 0.188 sizes a frame's register array by the highest register
 * number its CFI names: one DW_CFA_restore_extended r243385044 in an FDE
 * cost 1.9 GB (libFuzzer's out-of-memory; the recorder 3.8 GB and 105 s)
 * until the builder refused register numbers past 255 before libdw runs
 * the CFI (its input is in the corpus).
 *
 * Input: byte 0: the fixture (modulo their number).  Then edits, each one
 * byte OP and a 32-bit little-endian OFFSET (modulo the file's size):
 *   OP bit 7      cut the file at OFFSET (the last edit)
 *   OP bit 6      the edit is to the debuginfo file (if there is one)
 *   else          write the next (OP & 7) + 1 bytes of the input at OFFSET
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stk.h"
#include "unwind_table.h"

#define UW FUZZ_BUILD "/tests/unwind"

struct fx {
	const char *name;
	uint8_t *image, *debug;	/* the fixture's bytes, its debuginfo's */
	size_t size, debug_size;
};

static struct fx fxs[] = {
	{ .name = "nofpwork" },		{ .name = "nofpwork_nohdr" },
	{ .name = "nofpwork_static" },	{ .name = "nofpwork_dbgframe" },
	{ .name = "nofpwork_dbgsplit" },	{ .name = "nofpwork_nocfi" },
};
#define NR_FX (sizeof(fxs) / sizeof(fxs[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz_unwind_table: %s %s: %s (run make %s)\n", what, path,
		strerror(errno), UW);
	exit(1);
}

static uint8_t *load(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *image = NULL;
	struct stat st;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || st.st_size <= 0 || !(image = malloc(st.st_size)) ||
	    fread(image, 1, st.st_size, f) != (size_t)st.st_size) {
		free(image);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = st.st_size;
	return image;
}

/* The separate debuginfo of @x, by its build-id note: UW/debug/.build-id/. */
static void load_debug(struct fx *x)
{
	Elf *elf = elf_memory((char *)x->image, x->size);
	char path[4200], hex[2 * STK_MAX_BUILD_ID + 1] = "";
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn)) && !hex[0]) {
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff, i;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !d)
			continue;
		while ((noff = gelf_getnote(d, off, &nh, &off, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz > STK_MAX_BUILD_ID ||
			    nh.n_descsz < 2)
				continue;
			for (i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", ((const uint8_t *)d->d_buf)[doff + i]);
			break;
		}
		(void)noff;
	}
	elf_end(elf);
	if (!hex[0])
		die("no build-id in", x->name);
	snprintf(path, sizeof(path), UW "/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	x->debug = load(path, &x->debug_size);
	if (!x->debug)
		die("cannot read", path);
}

static void setup(void)
{
	char path[4200];
	size_t i;

	elf_version(EV_CURRENT);
	for (i = 0; i < NR_FX; i++) {
		snprintf(path, sizeof(path), UW "/%s", fxs[i].name);
		fxs[i].image = load(path, &fxs[i].size);
		if (!fxs[i].image)
			die("cannot read", path);
		if (strcmp(fxs[i].name, "nofpwork_dbgsplit") == 0)
			load_debug(&fxs[i]);
	}
}

/* Apply the edits of @data to @img (@dbg), as the header says; the sizes
 * as cut. */
static void edit(const uint8_t *data, size_t size, uint8_t *img, size_t *isize, uint8_t *dbg,
		 size_t *dsize)
{
	size_t i = 0;

	while (i + 5 <= size) {
		uint8_t op = data[i];
		int to_dbg = (op & 0x40) && dbg;
		uint8_t *b = to_dbg ? dbg : img;
		size_t *bs = to_dbg ? dsize : isize, n, k;
		uint32_t off;

		memcpy(&off, data + i + 1, 4);
		i += 5;
		if (!*bs)
			return;
		off %= *bs;
		if (op & 0x80) {
			*bs = off;
			return;
		}
		n = (op & 7) + 1;
		for (k = 0; k < n && i < size && off + k < *bs; k++)
			b[off + k] = data[i++];
	}
}

static void check_table(const struct unwind_table *t)
{
	const struct stkrec_unwind_row *r;
	size_t nr, i;

	r = unwind_table__rows(t, &nr);
	for (i = 0; i < nr; i++) {
		if (i && r[i].pc <= r[i - 1].pc)
			abort(); /* rows out of order: BPF's binary search breaks */
		if (unwind_table__lookup(t, r[i].pc) != &r[i])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct unwind_table *t;
	uint8_t *img, *dbg = NULL;
	size_t isize, dsize = 0;
	Elf *elf, *delf = NULL;
	struct fx *x;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size < 1)
		return 0;
	x = &fxs[data[0] % NR_FX];
	isize = x->size;
	img = malloc(isize);
	if (!img)
		return 0;
	memcpy(img, x->image, isize);
	if (x->debug) {
		dsize = x->debug_size;
		dbg = malloc(dsize);
		if (!dbg) {
			free(img);
			return 0;
		}
		memcpy(dbg, x->debug, dsize);
	}
	edit(data + 1, size - 1, img, &isize, dbg, &dsize);
	elf = elf_memory((char *)img, isize);
	if (dbg)
		delf = elf_memory((char *)dbg, dsize);
	if (elf) {
		t = unwind_table__from_elf_debug(elf, delf);
		if (t)
			check_table(t);
		unwind_table__free(t);
	}
	elf_end(delf);
	elf_end(elf);
	free(dbg);
	free(img);
	return 0;
}
