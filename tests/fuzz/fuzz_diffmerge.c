// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the two-capture commands: diff (both captures read
 * and symbolized against the ELF fixtures as fuzz_report.c does, the diff
 * model, its text, folded and svg writers and its warnings) and merge
 * (merge__captures() into a file, which is then read back: a merge that
 * succeeded must have written a sound, closed capture, else abort()).
 *
 * Input: one byte of options, two bytes (little-endian) giving the length
 * of BASE, BASE, then NEW (the rest).
 *   byte 0  bit 0 fix every CRC of both first    bit 1 --normalize time
 *           bit 2 --lines        bit 3 -U        bit 4 --no-inline
 *           bit 5 merge NEW with BASE (the other order)
 *           bit 6 merge BASE with itself too (every snapshot a duplicate)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "diff.h"
#include "fuzz_common.h"
#include "main_args.h"
#include "merge.h"
#include "textsafe.h"

#define FX FUZZ_BUILD "/tests/fixtures"

enum {
	F_FIX_CRCS = 1 << 0,
	F_NORM_TIME = 1 << 1,
	F_LINES = 1 << 2,
	F_USER = 1 << 3,
	F_NO_INLINE = 1 << 4,
	F_SWAP = 1 << 5,
	F_SELF = 1 << 6,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void set_args(struct main_args *a, uint8_t flags)
{
	main_args__init(a);
	a->ro.sym.sysroot = FX "/root";
	a->debug_dirs[0] = FX "/debug";
	a->debug_dirs[1] = FX "/bid";
	a->ro.sym.nr_debug_dirs = 2;
	a->ro.sym.system_debug_dir = "";
	a->no_debuginfod = 1;
	a->ro.sym.lines = a->oo.lines = !!(flags & F_LINES);
	a->ro.user_only = a->oo.user_only = !!(flags & F_USER);
	a->ro.sym.no_inline = a->oo.no_inline = !!(flags & F_NO_INLINE);
}

static void diff(const struct main_args *a, const char *const paths[2], uint8_t flags)
{
	struct diff_opts dopts = { .sz = sizeof(dopts) };
	struct diff_print_opts po = { .top = 20 };
	struct main_input in[2] = { { 0 }, { 0 } };
	const char *const *warn;
	struct diff *d = NULL;
	size_t nw;
	int i;

	dopts.normalize = po.normalize = flags & F_NORM_TIME ? DIFF_NORM_TIME : DIFF_NORM_SAMPLES;
	po.paths[0] = paths[0];
	po.paths[1] = paths[1];
	for (i = 0; i < 2; i++)
		if (main_input__load(&in[i], a, paths[i], 0))
			goto out;
	for (i = 0; i < 2; i++)
		if (diff__normalizable(in[i].r, dopts.normalize))
			goto out;
	d = diff__new(in[0].r, in[1].r, &a->oo, &dopts);
	if (!d)
		goto out;
	out_diff__text(d, &po, fuzz_null());
	out_diff__folded(d, fuzz_null());
	out_diff__svg(d, NULL, flags & F_SWAP, fuzz_null());
	warn = diff__warnings(d, &nw);
	while (nw--)
		textline__printf(stderr, "warning: %s", warn[nw]);
	for (i = 0; i < 2; i++)
		main_input__status(&in[i], i ? "new" : "base");
out:
	diff__free(d);
	main_input__release(&in[0]);
	main_input__release(&in[1]);
}

/* Merges @paths[0..@n) into @out and reads the result back. */
static void merge(const char *const *paths, size_t n, const char *out)
{
	struct merge_result res;
	struct capture *cap;

	unlink(out);
	if (merge__captures(paths, n, out, &res))
		return;
	cap = capture__read(out);
	if (!cap || cap->damaged || !cap->summary.closed) {
		fuzz_quiet(0);
		fprintf(stderr, "fuzz_diffmerge: merge succeeded but wrote %s: %s\n",
			!cap ? "an unreadable capture" : cap->damaged ? "a damaged capture"
			: "an unclosed capture", cap && cap->first_error ? cap->first_error : "");
		abort();
	}
	capture__free(cap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct main_args a;
	char pa[4200], pb[4200], pm[4200];
	const char *paths[3];
	size_t na, nb;
	uint8_t *copy;
	int ok;

	if (size < 3)
		return 0;
	na = data[1] | (size_t)data[2] << 8;
	if (na > size - 3)
		na = size - 3;
	nb = size - 3 - na;
	copy = malloc(size - 3 ? size - 3 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 3, size - 3);
	if (data[0] & F_FIX_CRCS) {
		fuzz_fix_crcs(copy, na);
		fuzz_fix_crcs(copy + na, nb);
	}
	snprintf(pa, sizeof(pa), "%s/base.stk", fuzz_tmpdir());
	snprintf(pb, sizeof(pb), "%s/new.stk", fuzz_tmpdir());
	snprintf(pm, sizeof(pm), "%s/merged.stk", fuzz_tmpdir());
	ok = fuzz_write_file(pa, copy, na) == 0 && fuzz_write_file(pb, copy + na, nb) == 0;
	free(copy);
	if (!ok)
		return 0;
	set_args(&a, data[0]);
	fuzz_quiet(1);
	main_args__check(&a);
	paths[0] = data[0] & F_SWAP ? pb : pa;
	paths[1] = data[0] & F_SWAP ? pa : pb;
	paths[2] = pa;
	diff(&a, paths, data[0]);
	merge(paths, data[0] & F_SELF ? 3 : 2, pm);
	fuzz_quiet(0);
	return 0;
}
