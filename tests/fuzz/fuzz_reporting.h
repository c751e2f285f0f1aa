/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_reporting.h - what the targets that run stkreport's commands share
 * (header-only, as fuzz_common.h, which it includes):
 *
 *   fuzz_fixture_args()  main_args for the ELF fixtures, as the front-end
 *                        would set them for --sysroot, --debug-dir twice,
 *                        no system debug dir and no debuginfod
 *   fuzz_diff()          stkreport diff of two captures: both read and
 *                        symbolized, the diff model, its text, folded and
 *                        svg writers, its warnings and the summaries
 */
#ifndef STK_TESTS_FUZZ_REPORTING_H
#define STK_TESTS_FUZZ_REPORTING_H

#include "diff.h"
#include "fuzz_common.h"
#include "main_args.h"
#include "textsafe.h"

#define FX FUZZ_BUILD "/tests/fixtures"

/* main_args__init(), then the fixtures as where binaries are found. */
static inline void fuzz_fixture_args(struct main_args *a)
{
	main_args__init(a);
	a->ro.sym.sysroot = FX "/root";
	a->debug_dirs[0] = FX "/debug";
	a->debug_dirs[1] = FX "/bid";
	a->ro.sym.nr_debug_dirs = 2;
	a->ro.sym.system_debug_dir = "";
	a->no_debuginfod = 1;
	/* No symbol cache: one input's must not change how the next is
	 * symbolized, nor runs share $HOME/.cache with others or the user. */
	a->symbol_cache = "none";
}

/*
 * Diffs @paths[0] (base) and @paths[1] (new) with @a, normalized by time
 * when @by_time, the svg @inverted.  Returns 0, 1 when they could not be
 * loaded or compared (the command's refusals), or the first writer's
 * error (-ENOMEM, -EIO).
 */
static inline int fuzz_diff(const struct main_args *a, const char *const paths[2], int by_time,
			    int inverted)
{
	struct diff_opts dopts = { .sz = sizeof(dopts) };
	struct diff_print_opts po = { .top = 20 };
	struct main_input in[2] = { { 0 }, { 0 } };
	const char *const *warn;
	struct diff *d = NULL;
	size_t nw;
	int i, err = 1;

	dopts.normalize = po.normalize = by_time ? DIFF_NORM_TIME : DIFF_NORM_SAMPLES;
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
	err = out_diff__text(d, &po, fuzz_null());
	err = err ?: out_diff__folded(d, fuzz_null());
	err = err ?: out_diff__svg(d, NULL, inverted, fuzz_null());
	err = err ?: out_diff__top(d, &po, fuzz_null());
	warn = diff__warnings(d, &nw);
	while (nw--)
		textline__printf(stderr, "warning: %s", warn[nw]);
	for (i = 0; i < 2; i++)
		main_input__status(&in[i], i ? "new" : "base");
out:
	diff__free(d);
	main_input__release(&in[0]);
	main_input__release(&in[1]);
	return err;
}

#endif
