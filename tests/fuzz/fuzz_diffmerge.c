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
#include "fuzz_reporting.h"
#include "merge.h"

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
	fuzz_fixture_args(a);
	a->ro.sym.lines = a->oo.lines = !!(flags & F_LINES);
	a->ro.user_only = a->oo.user_only = !!(flags & F_USER);
	a->ro.sym.no_inline = a->oo.no_inline = !!(flags & F_NO_INLINE);
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
	fuzz_diff(&a, paths, !!(data[0] & F_NORM_TIME), !!(data[0] & F_SWAP));
	merge(paths, data[0] & F_SELF ? 3 : 2, pm);
	fuzz_quiet(0);
	return 0;
}
