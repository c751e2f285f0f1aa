/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli.h - stkrec's command line as data: the one table of options every
 * mode shares (getopt's tables and the --help texts are made from it, so
 * that an option and its help cannot drift apart), and the defaults the
 * help quotes.  Printing and parsing stay in main.c.
 */
#ifndef STKREC_CLI_H
#define STKREC_CLI_H

#include <getopt.h>

#define CLI_DEFAULT_FREQUENCY 49
#define CLI_DEFAULT_STACK_STORAGE 16384
#define CLI_DEFAULT_USER_MEMORY 128	/* MiB: RECORDER_USER_MEMORY */
#define CLI_DEFAULT_ROTATE_OUTPUT "trace-%Y%m%dT%H%M%S.stk"

/* The modes an option applies to (and whose --help shows it). */
#define CLI_PROFILE 1u
#define CLI_OFFCPU 2u /* offcpu and offwake */
#define CLI_TRACE 4u
#define CLI_ALL (CLI_PROFILE | CLI_OFFCPU | CLI_TRACE)

/* The kinds of mode, indexes of the --help texts below. */
#define CLI_KIND_PROFILE 0
#define CLI_KIND_OFFCPU 1
#define CLI_KIND_TRACE 2

#define CLI_DEFAULT_RATE_CAP 100000	/* events a second per event (trace) */
#define CLI_DEFAULT_MAX_PROBES 128	/* events attached at most (trace) */

/* Long-only options' getopt values, above any short option letter. */
enum {
	CLI_STACK_STORAGE = 256,
	CLI_FLUSH_INTERVAL,
	CLI_KALLSYMS,
	CLI_EMBED_SYMBOLS,
	CLI_VERSION,
	CLI_STATE,
	CLI_NO_MMAP_EVENTS,
	CLI_UNWIND,
	CLI_UNWIND_MEMORY,
	CLI_UNWIND_CACHE,
	CLI_BTF_CACHE,
	CLI_USER_MEMORY,
	CLI_ROTATE,
	CLI_ROTATE_SIZE,
	CLI_KEEP,
	CLI_PYTHON,
	CLI_RATE_CAP,
	CLI_MAX_PROBES,
};

struct cli_opt {
	const char *name;	 /* the long name; NULL: a --help row only */
	int has_arg;		 /* no_argument or required_argument */
	int val;		 /* the short letter, or CLI_* */
	unsigned int modes;	 /* CLI_PROFILE, CLI_OFFCPU or CLI_ALL */
	const char *help;	 /* its --help lines */
	const char *help_offcpu; /* offcpu's and trace's where they differ, else NULL */
};

/* In --help's order; ends with a zeroed entry. */
extern const struct cli_opt cli__opts[];

/* --help's text before the options and after them, by mode. */
extern const char *const cli__usage_head[3];
extern const char cli__usage_tail_common[];
extern const char *const cli__usage_tail[3];

/* getopt_long()'s tables of cli__opts, made once by cli__getopt_tables(). */
#define CLI_MAX_OPTS 40
struct cli_getopt {
	char shortopts[2 + 2 * CLI_MAX_OPTS + 1];
	struct option longopts[CLI_MAX_OPTS + 1];
};

/*
 * cli__getopt_tables() - fill @g from cli__opts: optstring "-:" (words in
 * order as 1, ':' for a missing value) and the short letters, and the long
 * options.
 */
void cli__getopt_tables(struct cli_getopt *g);

/* cli__find() - the entry of getopt value @val, or NULL. */
const struct cli_opt *cli__find(int val);

#endif
