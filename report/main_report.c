// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport [options] FILE: the front-end of the symbolized report.  It
 * parses options, runs capture -> report -> writer, and maps failures to
 * exit codes; every message it prints is one line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <zlib.h>
#include <zstd.h>

#include "cmds.h"
#include "funcs.h"
#include "main_args.h"
#include "output.h"
#include "pprof.h"
#include "stk.h"
#include "textsafe.h"
#include "trace_events.h"

#define PROG "stkreport"

/* The release, then the libraries' versions as loaded at run time (which
 * may differ from the headers it was built with).  No libbpf: the
 * reporter never loads it. */
static void print_version(void)
{
	printf(PROG " %s\n", STK_VERSION_STRING);
	printf("elfutils %s\n", dwfl_version(NULL));
	printf("zstd %s\n", ZSTD_versionString());
	printf("zlib %s\n", zlibVersion());
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: stkreport [options] FILE.stk\n"
"       stkreport info [--chunks] [--symbols] [--since S] [--until S] FILE.stk\n"
"       stkreport diff [options] BASE.stk NEW.stk\n"
"       stkreport merge -o OUT.stk IN.stk...\n"
"Symbolize a capture offline and print it.\n"
"\n"
"Output:\n"
"  -f, --format FMT     %s (default text: profile.py's\n"
"                       layout, hottest stack last; folded: one line per\n"
"                       stack, flamegraph.pl; pprof: gzip'd profile.proto for\n"
"                       go tool pprof, with mappings, addresses and source\n"
"                       lines, so -d, -a, --addresses and --lines do not\n"
"                       apply; not to a terminal; svg: an interactive flame\n"
"                       graph for a browser: hover, click to zoom, search;\n"
"                       top: self and total per function, as perf report\n"
"                       --no-children and pprof -top)\n"
"  -n, --top N          top: the first N rows only (default: all)\n"
"      --sort KEY       top: self (default), total or name\n"
"      --by KEY         top: a row per func (default), dso (binary), pid, tid\n"
"                       or comm; alone, it asks for -f top\n"
"      --callers FUNC   text: the callers of the function named FUNC, a tree\n"
"                       bottom-up from it, with the samples of each path\n"
"      --callees FUNC   text: its callees, a tree top-down from it\n"
"      --inverted       svg: an icicle graph, the roots on top\n"
"      --title TEXT     svg: the title (default \"Flame Graph\", \"Off-CPU Time\n"
"                       Flame Graph\" ...)\n"
"      --label KEY=VALUE  pprof: add this label to every sample (repeatable;\n"
"                       e.g. service=api, version=1.2); hostname and\n"
"                       kernel_release are added from the capture unless\n"
"                       given (KEY= drops one)\n"
"  -o, --output FILE    write to FILE instead of stdout\n",
		output_format__names());
	main_args__usage(f);
	fputs(
"  -h, --help           this help\n"
"      --version        print the version (and elfutils', zstd's, zlib's)\n"
"\n"
"At the end one line on stderr tells the share of samples fully symbolized\n"
"and which modules lack symbols and why, and the share of user stacks whose\n"
"unwinding stopped early, by reason.\n"
"Exit status: 0 ok, also for a capture that was not closed (a killed\n"
"recording: what was written is reported, with a warning); 1 failure, or a\n"
"damaged capture (what could be recovered is still reported), or a --pid,\n"
"--tid or --comm filter that keeps no sample, or a partial report (a binary\n"
"whose compressed debug sections declare more than 128 x its size, named\n"
"without its DWARF; one warning line); 2 usage error.\n", f);
}

enum { OPT_VERSION = 1000, OPT_INVERTED, OPT_TITLE, OPT_LABEL, OPT_BY, OPT_SORT, OPT_CALLERS,
       OPT_CALLEES };

static const struct option own_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "top", required_argument, NULL, 'n' },
	{ "by", required_argument, NULL, OPT_BY },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "callers", required_argument, NULL, OPT_CALLERS },
	{ "callees", required_argument, NULL, OPT_CALLEES },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Labels the pprof writer sets per sample: --label cannot take them. */
static const char *const sample_labels[] = {
	"pid", "tid", "comm", "ns_pid", "pid_ns",
	"waker_pid", "waker_tid", "waker_comm", "waker_ns_pid", "waker_pid_ns",
};

/*
 * --label KEY=VALUE into @labels[*n].  KEY as Prometheus label names are
 * ([A-Za-z_][A-Za-z0-9_]*), which both Pyroscope and Parca accept.
 * 0, or 2 (said: a usage error).
 */
static int parse_label(char *arg, struct output_label *labels, size_t *n)
{
	char *eq = strchr(arg, '=');
	size_t i;

	if (!eq || eq == arg)
		return main_args__usage_error("--label wants KEY=VALUE", arg);
	*eq = '\0';
	for (i = 0; arg[i]; i++)
		if (!(arg[i] == '_' || (arg[i] >= 'a' && arg[i] <= 'z') ||
		      (arg[i] >= 'A' && arg[i] <= 'Z') || (i && arg[i] >= '0' && arg[i] <= '9')))
			return main_args__usage_error(
				"--label KEY: letters, digits and '_', not starting with a digit", arg);
	for (i = 0; i < sizeof(sample_labels) / sizeof(sample_labels[0]); i++)
		if (strcmp(arg, sample_labels[i]) == 0)
			return main_args__usage_error("--label: set per sample by stkreport", arg);
	if (*n == OUTPUT_MAX_LABELS)
		return main_args__usage_error("--label: too many (64 at most)", NULL);
	labels[(*n)++] = (struct output_label){ arg, eq + 1 };
	return 0;
}

int report_main(int argc, char **argv)
{
	static struct output_label labels[OUTPUT_MAX_LABELS];
	static struct main_args a;
	struct option long_opts[sizeof(own_opts) / sizeof(own_opts[0]) + MAIN_ARGS_NR_OPTIONS];
	const struct output_format *fmt = output_format__find("text");
	const char *out_path = NULL;
	int top_opt = 0, fmt_given = 0;
	struct main_input in = { 0 };
	struct outstream *out = NULL;
	int c, err, ret = 1;

	main_args__init(&a);
	if (main_args__options(long_opts, sizeof(long_opts) / sizeof(long_opts[0]), own_opts))
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:n:h" MAIN_ARGS_SHORT, long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = output_format__find(optarg);
			if (!fmt)
				return main_args__usage_error(
					"unknown format (expected text, folded, pprof, svg or top)", optarg);
			fmt_given = 1;
			break;
		case 'n': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || errno || optarg[0] == '-')
				return main_args__usage_error("-n needs a number of rows", optarg);
			a.oo.top_n = v;
			top_opt = 1;
			break;
		}
		case OPT_BY: {
			enum funcs_by by;

			if (funcs_by__parse(optarg, &by))
				return main_args__usage_error(
					"--by takes func, dso, pid, tid or comm", optarg);
			a.oo.top_by = by;
			top_opt = 1;
			break;
		}
		case OPT_SORT: {
			enum funcs_sort how;

			if (funcs_sort__parse(optarg, &how))
				return main_args__usage_error("--sort takes self, total or name", optarg);
			a.oo.top_sort = how;
			top_opt = 1;
			break;
		}
		case 'o': out_path = optarg; break;
		case OPT_INVERTED: a.oo.inverted = 1; break;
		case OPT_TITLE: a.oo.title = optarg; break;
		case OPT_LABEL:
			if (parse_label(optarg, labels, &a.oo.nr_labels))
				return 2;
			a.oo.labels = labels;
			break;
		case OPT_CALLERS:
		case OPT_CALLEES:
			if (a.oo.tree_func)
				return main_args__usage_error("one --callers or --callees FUNC only",
							      optarg);
			a.oo.tree_func = optarg;
			a.oo.tree_callers = c == OPT_CALLERS;
			break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: print_version(); return 0;
		case '?': case ':': return main_args__bad_option(c, argv, PROG);
		default:
			if (main_args__parse(&a, c, optarg))
				return 2;
		}
	}
	if (main_args__check(&a))
		return 2;
	if (optind < argc && main_args__unknown_command(argv[optind], optind + 1 < argc))
		return 2;
	if (optind + 1 != argc)
		return main_args__usage_error(optind == argc ? "missing capture FILE"
							     : "one capture FILE only", NULL);
	/* --by and the other rows options are the top view's: alone, they
	 * ask for it. */
	if (top_opt && !fmt_given)
		fmt = output_format__find("top");
	if (top_opt && strcmp(fmt->name, "top") != 0)
		return main_args__usage_error("-n, --by and --sort are for -f top", NULL);
	if (a.oo.tree_func && (top_opt || strcmp(fmt->name, "text") != 0))
		return main_args__usage_error("--callers and --callees are a text view: no -f, -n, --by or --sort",
					      NULL);
	if (a.oo.nr_labels && strcmp(fmt->name, "pprof") != 0)
		return main_args__usage_error("--label is for -f pprof", NULL);
	if (fmt->binary && !out_path && isatty(STDOUT_FILENO))
		return main_args__usage_error("binary output to a terminal; use -o FILE or a pipe",
					      NULL);
	if (main_output__is_input(out_path, argv[optind]))
		return 2;
	/* A profile carries each function's file and line whatever the
	 * options: pprof shows them on demand (-lines, list). */
	if (main_input__load(&in, &a, argv[optind], strcmp(fmt->name, "pprof") == 0))
		return 1;
	if (strcmp(fmt->name, "pprof") == 0 && in.r->nr_events > PPROF_MAX_SAMPLE_TYPES) {
		textline__printf(stderr, PROG ": %s: %zu events, more than pprof's %d sample types here; choose one with --event",
				 argv[optind], in.r->nr_events, PPROF_MAX_SAMPLE_TYPES);
		goto out;
	}
	out = main_output__open(out_path);
	if (!out)
		goto out;
	/* A trace capture's events one by one, as stackcount shows one
	 * probe's stacks (pprof has a sample type per event; svg and top
	 * show them together, --event one of them). */
	if (!a.oo.tree_func && in.r->nr_events > 1 && !in.ro.event &&
	    (strcmp(fmt->name, "text") == 0 || strcmp(fmt->name, "folded") == 0))
		err = trace_events__write(in.cap, &in.ro, fmt->write, &a.oo,
					  strcmp(fmt->name, "folded") == 0, outstream__file(out));
	else
		err = (a.oo.tree_func ? out_tree__write : fmt->write)(in.r, &a.oo,
								       outstream__file(out));
	/* The first write's error says what happened (ENOSPC, EPIPE); a
	 * failed writer leaves no partial (or empty) file behind. */
	outstream__fail(out, err);
	err = outstream__close(out);
	if (err == -ENOENT) {	/* only the tree's: nothing written */
		textline__printf(stderr, PROG ": %s: no sample has a function named %s in its stack (of %llu %s); -f top lists them",
				 argv[optind], a.oo.tree_func, (unsigned long long)in.r->total_count,
				 in.r->kind == REPORT_PROFILE ? "samples" : "blocking events");
		goto out;
	}
	if (err) {
		textline__printf(stderr, PROG ": writing %s: %s", out_path ? out_path : "the report",
				 strerror(-err));
		goto out;
	}
	ret = main_input__status(&in, NULL);
out:
	main_input__release(&in);
	return ret;
}
