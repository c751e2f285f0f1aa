// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport diff [options] BASE NEW: the front-end of the comparison of two
 * captures.  It parses options (the report's shared set through
 * main_args.h, plus its own), reads and symbolizes both captures the same
 * way, runs the diff model (diff.h) and a writer, and maps the outcome to
 * exit codes, including 3 for a regression with --fail-if-regress.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "diff.h"
#include "main_args.h"
#include "stk.h"
#include "textsafe.h"

#define PROG "stkreport"

static void usage(FILE *f)
{
	fputs(
"Usage: stkreport diff [options] BASE.stk NEW.stk\n"
"Compare two captures: both are symbolized the same way (each from its own\n"
"maps and build-ids), and functions are matched by name and module file\n"
"name, never by address, so two builds of a program compare.\n"
"\n"
"Output:\n"
"  -f, --format FMT     text (default: the functions whose share changed most,\n"
"                       self and total, in percentage points, with each side's\n"
"                       share and samples; then both captures' totals and\n"
"                       what makes them hard to compare) or folded (\"stack\n"
"                       base new\" per stack, FlameGraph's difffolded layout)\n"
"                       or svg (a differential flame graph: NEW's shape, red\n"
"                       where a frame's share grew, blue where it shrank)\n"
"                       or top (every function's self and total in BASE and\n"
"                       NEW and their change, ordered as --sort says)\n"
"      --inverted       svg: an icicle graph, the roots on top\n"
"      --title TEXT     svg: the title (default \"Differential Flame Graph\")\n"
"  -o, --output FILE    write to FILE instead of stdout\n"
"  -n, --top N          list the N functions that changed most (default 20;\n"
"                       0: all); -f top: the first N\n"
"      --sort KEY       -f top: by NEW's self (default), total, or name\n"
"      --normalize HOW  samples (default): shares of each side's samples (or\n"
"                       blocked time); time: by the recorded duration, as\n"
"                       percent of one CPU (samples per second / frequency), or\n"
"                       for off-CPU captures blocked time per second\n"
"      --fail-if-regress PCT  exit 3 when a function's total share grew by\n"
"                       more than PCT points; each such function on stderr\n", f);
	main_args__usage(f);
	fputs(
"  -h, --help           this help\n"
"\n"
"Off-CPU captures compare blocked time, not blocking events.  One line per\n"
"capture on stderr tells the share fully symbolized.\n"
"Exit status: 0 ok; 1 failure, or a damaged capture, or a partial report (a\n"
"binary named without its DWARF, as stkreport --help says); 2 usage error;\n"
"3 --fail-if-regress found a regression.\n", f);
}

enum { OPT_NORMALIZE = 1000, OPT_FAIL_IF_REGRESS, OPT_INVERTED, OPT_TITLE, OPT_SORT };

static const struct option own_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, 'n' },
	{ "normalize", required_argument, NULL, OPT_NORMALIZE },
	{ "fail-if-regress", required_argument, NULL, OPT_FAIL_IF_REGRESS },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Functions whose total share grew by more than @limit points, on
 * stderr.  Returns how many. */
static size_t regressions(const struct diff *d, double limit)
{
	const struct diff_func *fn;
	size_t i, n, found = 0;

	fn = diff__funcs(d, &n);
	for (i = 0; i < n; i++) {
		if (!(fn[i].total_delta > limit))
			continue;
		found++;
		textline__printf(stderr, PROG ": regression: %s (%s): total %+.2f points (%.2f%% -> %.2f%%), more than %g",
				 fn[i].name, fn[i].module, fn[i].total_delta,
				 fn[i].total_pct[DIFF_BASE], fn[i].total_pct[DIFF_NEW], limit);
	}
	return found;
}

int diff_main(int argc, char **argv)
{
	static struct main_args a;
	struct option long_opts[sizeof(own_opts) / sizeof(own_opts[0]) + MAIN_ARGS_NR_OPTIONS];
	struct diff_print_opts po = { .top = 20 };
	struct diff_opts dopts = { .sz = sizeof(dopts) };
	struct main_input in[2] = { { 0 }, { 0 } };
	const char *out_path = NULL;
	double limit = -1;
	int folded = 0, inverted = 0, c, err, ret = 1, i;	/* folded: 1 folded, 2 svg, 3 top */
	const char *title = NULL;
	struct diff *d = NULL;
	struct outstream *out;
	FILE *f;
	char *end;

	main_args__init(&a);
	if (main_args__options(long_opts, sizeof(long_opts) / sizeof(long_opts[0]), own_opts))
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:n:h" MAIN_ARGS_SHORT, long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				folded = 0;
			else if (strcmp(optarg, "folded") == 0)
				folded = 1;
			else if (strcmp(optarg, "svg") == 0)
				folded = 2;
			else if (strcmp(optarg, "top") == 0)
				folded = 3;
			else
				return main_args__usage_error(
					"unknown diff format (expected text, folded, svg or top)", optarg);
			break;
		case 'o': out_path = optarg; break;
		case OPT_INVERTED: inverted = 1; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_SORT:
			if (funcs_sort__parse(optarg, &po.sort))
				return main_args__usage_error("--sort takes self, total or name", optarg);
			break;
		case 'n': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || errno || optarg[0] == '-')
				return main_args__usage_error("-n needs a number of functions", optarg);
			po.top = v;
			break;
		}
		case OPT_NORMALIZE:
			if (strcmp(optarg, "samples") == 0)
				dopts.normalize = DIFF_NORM_SAMPLES;
			else if (strcmp(optarg, "time") == 0)
				dopts.normalize = DIFF_NORM_TIME;
			else
				return main_args__usage_error(
					"--normalize takes samples or time", optarg);
			break;
		case OPT_FAIL_IF_REGRESS:
			errno = 0;
			limit = strtod(optarg, &end);
			if (*end || end == optarg || errno || !(limit >= 0 && limit <= 100))
				return main_args__usage_error(
					"--fail-if-regress needs percentage points 0..100", optarg);
			break;
		case 'h': usage(stdout); return 0;
		case '?': case ':': return main_args__bad_option(c, argv, PROG " diff");
		default:
			if (main_args__parse(&a, c, optarg))
				return 2;
		}
	}
	if (main_args__check(&a))
		return 2;
	if (argc - optind != 2)
		return main_args__usage_error("diff needs two captures, BASE and NEW", NULL);
	po.paths[DIFF_BASE] = argv[optind];
	po.paths[DIFF_NEW] = argv[optind + 1];
	po.normalize = dopts.normalize;
	for (i = 0; i < 2; i++)
		if (main_output__is_input(out_path, po.paths[i]))
			return 2;
	for (i = 0; i < 2; i++)
		if (main_input__load(&in[i], &a, po.paths[i], 0))
			goto out;
	/* Trace captures compare event for event: the same list, or the
	 * one --event named (by name, in each). */
	if ((in[0].r->trace || in[1].r->trace) && !a.event) {
		const char *e0 = capture__meta(in[0].cap, "events");
		const char *e1 = capture__meta(in[1].cap, "events");

		if (!in[0].r->trace || !in[1].r->trace || !e0 || !e1 || strcmp(e0, e1) != 0) {
			textline__printf(stderr, PROG ": %s and %s did not count the same events (%s; %s): compare one with --event NAME",
					 po.paths[0], po.paths[1], e0 ? e0 : capture__meta(in[0].cap, "mode") ?: "?",
					 e1 ? e1 : capture__meta(in[1].cap, "mode") ?: "?");
			goto out;
		}
	}
	for (i = 0; i < 2; i++) {
		if (diff__normalizable(in[i].r, dopts.normalize)) {
			textline__printf(stderr, PROG ": %s: --normalize=time needs the recorded duration%s; try --normalize=samples",
					 po.paths[i], in[i].r->kind == REPORT_PROFILE
					 ? " and sampling frequency" : "");
			goto out;
		}
	}
	d = diff__new(in[DIFF_BASE].r, in[DIFF_NEW].r, &a.oo, &dopts);
	if (!d) {
		fprintf(stderr, PROG ": diff: %s\n", strerror(errno));
		goto out;
	}
	out = main_output__open(out_path);
	if (!out)
		goto out;
	f = outstream__file(out);
	err = folded == 3 ? out_diff__top(d, &po, f) : folded == 2 ? out_diff__svg(d, title, inverted, f)
	      : folded ? out_diff__folded(d, f) : out_diff__text(d, &po, f);
	/* The first write's error says what happened (ENOSPC, EPIPE); a
	 * failed writer leaves no partial (or empty) file behind. */
	outstream__fail(out, err);
	err = outstream__close(out);
	if (err) {
		textline__printf(stderr, PROG ": writing %s: %s", out_path ? out_path : "the diff",
				 strerror(-err));
		goto out;
	}
	if (folded) {	/* The text output ends with them; the others have no room. */
		const char *const *warn;
		size_t nw, k;

		warn = diff__warnings(d, &nw);
		for (k = 0; k < nw; k++)
			textline__printf(stderr, PROG ": warning: %s", warn[k]);
	}
	ret = 0;
	for (i = 0; i < 2; i++)
		ret |= main_input__status(&in[i], i == DIFF_BASE ? "base" : "new");
	/* A failure (exit 1) wins over a regression, which is still said. */
	if (limit >= 0 && regressions(d, limit) && !ret)
		ret = 3;
out:
	diff__free(d);
	main_input__release(&in[DIFF_BASE]);
	main_input__release(&in[DIFF_NEW]);
	return ret;
}
