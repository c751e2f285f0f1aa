// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport merge -o OUT.stk IN.stk...: the front-end of merge.c.  It
 * parses the options, runs the merge and maps its result to an exit code
 * and one line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "main_args.h"
#include "merge.h"
#include "stk.h"
#include "textsafe.h"

#define PROG "stkreport merge"

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: stkreport merge -o OUT.stk IN.stk...\n"
"Merge captures into one: stacks re-interned by content, rows kept per key\n"
"and flush interval, every input starting at the output's start (so\n"
"--since/--until pick the same offset of each), maps, kernel data and\n"
"embedded symbols de-duplicated; META merged_from_N names each source.\n"
"Merging a capture with itself doubles every count.\n"
"\n"
"  -o, --output FILE    the merged capture (required; created mode 0600 under\n"
"                       a temporary name, renamed at the end; never an input)\n"
"  -h, --help           this help\n"
"\n"
"Refused with one line: captures of different kinds (profile, offcpu,\n"
"offwake), profiles of different -F (samples of unequal weight), kernels\n"
"or boots with the kernel at different addresses, a pid reused for another\n"
"process, a damaged input.\n"
"Exit status: 0 ok (an input that was not closed cleanly is merged with a\n"
"warning), 1 refused or failed (nothing written), 2 usage error.\n");
}

static int usage_error(const char *msg)
{
	fprintf(stderr, PROG ": %s; try 'stkreport merge --help'\n", msg);
	return 2;
}

int merge_main(int argc, char **argv)
{
	struct merge_result res;
	const char *out = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return main_args__bad_option(c, argv, PROG);
		}
	}
	if (!out)
		return usage_error("missing -o OUT.stk");
	if (optind == argc)
		return usage_error("missing input captures");
	err = merge__captures((const char *const *)argv + optind, (size_t)(argc - optind), out, &res);
	if (err) {
		/* Paths and reader messages come from the user and the files. */
		textline__printf(stderr, PROG ": %s", res.msg);
		return 1;
	}
	if (res.unclosed)
		textline__printf(stderr, PROG ": warning: %s was not closed cleanly (recording killed?); merged what it holds",
				 res.unclosed);
	return 0;
}
