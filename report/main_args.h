/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main_args.h - front-end code shared by the stkreport sub-commands that
 * symbolize captures (the report, diff): the options they all take
 * (rendering, filters, symbols), parsed in one place so every command
 * accepts the same ones the same way, their --help lines, and the
 * capture -> report step with its error messages.  Like the other main_*.c
 * files it prints (one line on stderr per message); it never exits.
 *
 * A command builds its getopt table with main_args__options() (its own
 * entries first), passes every option it does not handle itself to
 * main_args__parse() (which says "bad option" for one that is not
 * shared), then calls main_args__check() once.  A new shared
 * option (e.g. a time slice) is one table entry, one case and one help
 * line here, and every command has it.
 */
#ifndef STK_REPORT_MAIN_ARGS_H
#define STK_REPORT_MAIN_ARGS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "capture.h"
#include "output.h"
#include "report.h"
#include "slice.h"

#define MAIN_ARGS_MAX_DEBUG_DIRS 64
#define MAIN_ARGS_MAX_IDS 4096

/* getopt short options of the shared set; append to the command's own. */
#define MAIN_ARGS_SHORT "daUKS:"

struct main_args {
	struct report_opts ro;		/* filters and symbol options; .vmlinux unset */
	struct output_opts oo;		/* rendering options */
	const char *vmlinux;		/* --vmlinux FILE, opened per capture */
	int no_debuginfod;
	const char *debug_dirs[MAIN_ARGS_MAX_DEBUG_DIRS];
	uint32_t pids[MAIN_ARGS_MAX_IDS], tids[MAIN_ARGS_MAX_IDS];
	struct time_slice slice;	/* --since/--until: rows read, every capture */
	const char *symbol_cache;	/* --symbol-cache DIR, "none", or NULL: the default */
	char cache_dir[4096];		/* the default's path */
	const char *event;		/* --event, as given, or NULL */
};

/* One capture read and run through the pipeline with a copy of the
 * options (report__new() keeps a pointer to them: they live here). */
struct main_input {
	const char *path;
	struct report_opts ro;
	struct capture *cap;
	struct kvmlinux *vmlinux;	/* --vmlinux, when usable for this capture */
	struct report *r;
	int matched_nothing;		/* main_input__load() failed because the
					 * filters or slice kept no sample */
};

/* Zeroes @a and sets the defaults.  @a is large (the id lists): make it
 * static or allocate it. */
void main_args__init(struct main_args *a);

/*
 * main_args__options() - @own (terminated by a zero entry) followed by the
 * shared long options and a zero entry, into @out of @cap entries.
 * Returns 0, or -ENOSPC when @cap is too small.
 */
int main_args__options(struct option *out, size_t cap, const struct option *own);

/* Upper bound of the shared long options, for sizing main_args__options()'
 * @out: the command's own count plus this plus 1. */
#define MAIN_ARGS_NR_OPTIONS 26

/*
 * main_args__parse() - apply option @c (getopt_long's return) with @arg;
 * the command passes every option it does not handle itself.
 * Returns 0 when it was a shared option, or -EINVAL on a bad value or an
 * option that is not one ("bad option"), said on stderr: then exit 2.
 */
int main_args__parse(struct main_args *a, int c, const char *arg);

/* Checks between options (-U with -K) and applies --no-debuginfod.
 * 0, or -EINVAL (said: exit 2). */
int main_args__check(struct main_args *a);

/* The --help lines of the shared options, after a command's Output lines:
 * the rest of "Output:", then "Filters:" and "Symbols:". */
void main_args__usage(FILE *f);

/* One line on stderr: "stkreport: MSG[: ARG]; try 'stkreport --help'".
 * Returns 2, the usage error exit status. */
int main_args__usage_error(const char *msg, const char *arg);

/*
 * main_args__bad_option() - after getopt_long() returned @c, '?' (not an
 * option) or ':' (no value; the optstring must start with ':' and opterr
 * be 0, so getopt says nothing itself), one line on stderr naming the
 * option as typed, with a hint when it is one of perf's (perfopt.h), and
 * where @cmd's help is ("stkreport diff").  Returns 2, the usage error
 * exit status.
 */
int main_args__bad_option(int c, char **argv, const char *cmd);

/*
 * main_args__unknown_command() - when @word, the first operand of
 * `stkreport [options] FILE`, is no file but looks like a mistyped
 * subcommand or format ("infoo", "top"), one line on stderr naming it and
 * the closest one; with @more_operands (more follow) any word that is no
 * file is taken for one.  A command itself ("stkreport --pid 1 info x")
 * gets its usage line: it comes first.  Returns 2 when it said so, else 0.
 */
int main_args__unknown_command(const char *word, int more_operands);

/*
 * main_input__load() - read @path and run the pipeline with @a's options
 * (--vmlinux opened and checked against this capture).  @lines: look up
 * source lines whatever --lines says (pprof).  Returns 0, or 1 when it
 * failed (said on stderr; @in is then released, with in->matched_nothing
 * set when what failed is that the filters or slice kept no sample).
 */
int main_input__load(struct main_input *in, const struct main_args *a, const char *path,
		     int lines);

/*
 * main_input__status() - what a report says after its output, on stderr:
 * with @label NULL the report's closing lines (missed stacks, the share
 * fully symbolized and why not, damage or an unclosed capture); with a
 * @label ("base", "new") the symbolization line prefixed with it, and the
 * damage lines.  Returns the exit status they imply: 0, or 1 (damaged
 * capture, out of memory).
 */
int main_input__status(const struct main_input *in, const char *label);

void main_input__release(struct main_input *in);	/* accepts a zeroed one */

/* outstream__open() of @path (NULL: stdout), saying on stderr why not
 * when it returns NULL. */
struct outstream *main_output__open(const char *path);

/*
 * main_output__is_input() - 1 when @out (an -o path) is the same regular
 * file (device and inode) as the capture @in ("-": standard input), so
 * opening it for writing would destroy the input before it is read; then
 * a usage error is printed.  0 otherwise (also when @out does not exist).
 */
int main_output__is_input(const char *out, const char *in);

#endif
