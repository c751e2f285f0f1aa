// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the whole report path of one capture: read it
 * (main_input__load(), as the report and diff read theirs: capture, the
 * --vmlinux check, the pipeline), symbolize it against the ELF fixtures
 * ($(O)/tests/fixtures: --sysroot root, --debug-dir debug and bid, the
 * capture's embedded symbols), run every writer (text, folded, pprof, svg)
 * and the closing summary, then `stkreport info --chunks` on the same file
 * (with --symbols when the flags ask for it).
 *
 * Input: two bytes of options, then the capture.
 *   byte 0  bit 0 fix every CRC first (fuzz_fix_crcs()), so mutations reach
 *                 what the CRCs guard
 *           bit 1 --addresses   bit 2 --lines        bit 3 -U
 *           bit 4 -K (not with -U)                   bit 5 --no-inline,
 *                 info --symbols
 *           bit 6 -d -a, --no-demangle               bit 7 --vmlinux (the
 *                 kernel fixture), svg --inverted
 *   byte 1  0: the whole capture; else --since (low 4 bits) / 2 s and
 *           --until that plus (high 4 bits + 1) s
 */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "fuzz_reporting.h"
#include "output.h"

enum {
	F_FIX_CRCS = 1 << 0,
	F_ADDRESSES = 1 << 1,
	F_LINES = 1 << 2,
	F_USER = 1 << 3,
	F_KERNEL = 1 << 4,
	F_NO_INLINE = 1 << 5,
	F_DECORATE = 1 << 6,
	F_VMLINUX = 1 << 7,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The options of byte 0 and 1, as the front-end would set them. */
static void set_args(struct main_args *a, uint8_t flags, uint8_t slice)
{
	fuzz_fixture_args(a);
	a->oo.addresses = !!(flags & F_ADDRESSES);
	a->ro.sym.lines = a->oo.lines = !!(flags & F_LINES);
	a->ro.user_only = a->oo.user_only = !!(flags & F_USER);
	a->ro.kernel_only = a->oo.kernel_only = !(flags & F_USER) && (flags & F_KERNEL);
	a->ro.sym.no_inline = a->oo.no_inline = !!(flags & F_NO_INLINE);
	a->oo.delimited = a->oo.annotate = a->ro.sym.no_demangle = !!(flags & F_DECORATE);
	a->oo.inverted = !!(flags & F_VMLINUX);
	if (flags & F_VMLINUX)
		a->vmlinux = FX "/kernel/vmlinux";
	if (slice) {
		a->slice.since_ns = (uint64_t)(slice & 0xf) * 500000000u;
		a->slice.until_ns = a->slice.since_ns + (uint64_t)((slice >> 4) + 1) * 1000000000u;
	}
}

static void report_all(const struct main_args *a, const char *path, int lines)
{
	static const char *const formats[] = { "text", "folded", "pprof", "svg" };
	struct main_input in;
	size_t i;

	if (main_input__load(&in, a, path, lines))
		return;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		output_format__find(formats[i])->write(in.r, &a->oo, fuzz_null());
	main_input__status(&in, NULL);
	main_input__release(&in);
}

static void info(const char *path, int symbols)
{
	char *argv[] = { "info", "--chunks", (char *)path, "--symbols", "--sysroot", FX "/root",
			 "--debug-dir", FX "/debug", NULL };

	optind = 0;	/* glibc: start getopt afresh */
	info_main(symbols ? 8 : 3, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct main_args a;
	char path[4200];
	uint8_t *copy;
	size_t n;

	if (size < 2)
		return 0;
	n = size - 2;
	copy = malloc(n ? n : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 2, n);
	if (data[0] & F_FIX_CRCS)
		fuzz_fix_crcs(copy, n);
	snprintf(path, sizeof(path), "%s/in.stk", fuzz_tmpdir());
	if (fuzz_write_file(path, copy, n) == 0) {
		set_args(&a, data[0], data[1]);
		fuzz_quiet(1);
		if (main_args__check(&a) == 0)
			report_all(&a, path, !!(data[0] & F_LINES));
		info(path, !!(data[0] & F_NO_INLINE));
		fuzz_quiet(0);
	}
	free(copy);
	return 0;
}
