// SPDX-License-Identifier: BSD-2-Clause
/*
 * The options and the capture -> report step that stkreport's symbolizing
 * sub-commands share (main_args.h): one parser, one set of help lines, one
 * set of error messages, so `stkreport` and `stkreport diff` cannot drift.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_tasks.h"
#include "kvmlinux.h"
#include "main_args.h"
#include "perfopt.h"
#include "stk.h"
#include "textsafe.h"

#define PROG "stkreport"

enum {
	OPT_PID = 256, OPT_TID, OPT_COMM, OPT_INLINE, OPT_NO_INLINE, OPT_LINES, OPT_ADDRESSES,
	OPT_NO_DEMANGLE, OPT_SYSROOT, OPT_DEBUG_DIR, OPT_NO_DEBUGINFOD, OPT_KALLSYMS,
	OPT_VMLINUX, OPT_SHORT_NAMES, OPT_EXCLUDE_IDLE, OPT_PYTHON, OPT_SYMBOL_CACHE, OPT_EVENT,
};

static const struct option shared_opts[] = {
	{ "delimited", no_argument, NULL, 'd' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "kernel-skip", required_argument, NULL, 'S' },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "exclude-idle", no_argument, NULL, OPT_EXCLUDE_IDLE },
	{ "event", required_argument, NULL, OPT_EVENT },
	TIME_SLICE_LONG_OPTS,
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "addresses", no_argument, NULL, OPT_ADDRESSES },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "short-names", no_argument, NULL, OPT_SHORT_NAMES },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "symbol-cache", required_argument, NULL, OPT_SYMBOL_CACHE },
};

#define NR_SHARED (sizeof(shared_opts) / sizeof(shared_opts[0]))
_Static_assert(NR_SHARED <= MAIN_ARGS_NR_OPTIONS, "raise MAIN_ARGS_NR_OPTIONS");

void main_args__usage(FILE *f)
{
	fputs(
"  -d, --delimited      '--' (text) / '-' (folded) between kernel and user frames\n"
"  -a, --annotations    add _[k] to kernel frame names\n"
"      --addresses      put each frame's address before its name (every format\n"
"                       but pprof); unknown frames as [module+0xoffset]\n"
"                       (offset in the mapped file) instead of [unknown]\n"
"      --lines          add (file:line) to frames that have debuginfo (default off)\n"
"      --inline         show inlined functions as frames of their own (default on)\n"
"      --no-inline      only the function the code belongs to\n"
"      --no-demangle    keep C++/Rust names as in the binary (default: demangled)\n"
"      --short-names    demangled C++ names without parameter lists and return\n"
"                       types (default: the full demangled name)\n"
"      --python=yes|no  yes (default): CPython frames recorded with a stack put\n"
"                       in place of the interpreter's frames, as\n"
"                       'QUALNAME (FILE:LINE)'; no: native frames only\n"
"Filters:\n"
"  -U, --user-stacks-only     user frames only\n"
"  -K, --kernel-stacks-only   kernel frames only\n"
"  -S, --kernel-skip N  skip N kernel frames (default: find the interrupt frames\n"
"                       by the recorded return IP, as profile.py does)\n"
"      --pid PIDS       only these processes (comma-separated)\n"
"      --tid TIDS       only these threads\n"
"      --comm NAME      only tasks with this comm\n"
"      --exclude-idle   leave out the kernel's idle task (pid 0, comm\n"
"                       swapper/N: CPUs with nothing to run)\n"
"      --event EVENT    trace captures: only this event (its name as stkreport\n"
"                       info lists it, or the end of it after a ':', e.g.\n"
"                       sys_enter_write, or its index from 0)\n"
TIME_SLICE_HELP
"Symbols (a file is used only if its build-id is the recorded one):\n"
"      --sysroot DIR    look for recorded paths under DIR too\n"
"      --debug-dir DIR  look in DIR/.build-id/xx/rest[.debug] and DIR/PATH;\n"
"                       repeatable; /usr/lib/debug is always searched\n"
"      --no-debuginfod  do not ask debuginfod (asked when DEBUGINFOD_URLS is set)\n"
"      --kallsyms FILE  kernel symbols from FILE instead of the capture\n"
"      --vmlinux FILE   kernel image frames from FILE: inline frames, --lines\n"
"                       (used only if its build-id is the recorded kernel's)\n"
"      --symbol-cache DIR  keep what is read from DWARF (inline frames, lines)\n"
"                       and symbol tables in DIR between reports, by\n"
"                       build-id (default\n"
"                       $XDG_CACHE_HOME/stk/symbols or ~/.cache/stk/symbols;\n"
"                       'none': not)\n", f);
}

int main_args__usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s; try '" PROG " --help'\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return 2;
}

int main_args__bad_option(int c, char **argv, const char *cmd)
{
	char word[3] = { '-', (char)optopt, '\0' };
	const char *typed = argv[optind - 1], *hint;
	int long_word = strncmp(typed, "--", 2) == 0;

	/* "--help=1": getopt_long() puts the option's val in optopt, which is
	 * no short option's letter; an unknown long option leaves it 0. */
	if (c == '?' && long_word && optopt && strchr(typed, '=')) {
		textline__printf(stderr, PROG ": option '%.*s' takes no value; try '%s --help'",
				 (int)strcspn(typed, "="), typed, cmd);
		return 2;
	}
	/* A short option not at its word's start ("-dg"): name it alone. */
	if (c == '?' && !long_word && optopt > 0 && optopt < 128)
		typed = word;
	if (c == ':') {
		textline__printf(stderr, PROG ": option '%s' needs a value; try '%s --help'", typed,
				 cmd);
		return 2;
	}
	hint = perfopt__hint(PERFOPT_STKREPORT, typed);
	/* "--input=x": the option's name, not its value. */
	textline__printf(stderr, PROG ": unknown option '%.*s'%s%s; try '%s --help'",
			 (int)strcspn(typed, "="), typed, hint ? ": " : "", hint ? hint : "", cmd);
	return 2;
}

int main_args__unknown_command(const char *word, int more_operands)
{
	static const char *const cmds[] = { "info", "diff", "merge" };
	static const char *const usages[] = { "info [options] FILE.stk",
					      "diff [options] BASE.stk NEW.stk",
					      "merge -o OUT.stk IN.stk..." };
	const char *near, *fmt;
	size_t i;

	if (access(word, F_OK) == 0 || strcmp(word, "-") == 0)
		return 0;
	for (i = 0; word[i]; i++)
		if (!((word[i] >= 'a' && word[i] <= 'z') || word[i] == '-'))
			return 0;
	if (!i)
		return 0;
	/* "stkreport --pid 1 info x.stk": the command was there, too late. */
	for (i = 0; i < 3; i++) {
		if (strcmp(word, cmds[i]) == 0) {
			fprintf(stderr, PROG ": the command comes first: '" PROG " %s'; try '"
				PROG " %s --help'\n", usages[i], word);
			return 2;
		}
	}
	fmt = output_format__find(word) ? word : NULL;
	near = perfopt__closest(word, cmds, 3);
	if (!near && !fmt && !more_operands)
		return 0;
	if (fmt)
		textline__printf(stderr, PROG ": unknown command '%s' (did you mean '-f %s'?); try '"
				 PROG " --help'", word, fmt);
	else if (near)
		textline__printf(stderr, PROG ": unknown command '%s' (did you mean '%s'?); try '"
				 PROG " --help'", word, near);
	else
		textline__printf(stderr, PROG ": unknown command '%s' (the commands are info, diff and merge); try '"
				 PROG " --help'", word);
	return 2;
}

void main_args__init(struct main_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ro.sz = sizeof(a->ro);
	a->ro.sym.sz = sizeof(a->ro.sym);
	a->ro.sym.debug_dirs = a->debug_dirs;
	a->slice = TIME_SLICE_ALL;
}

int main_args__options(struct option *out, size_t cap, const struct option *own)
{
	size_t n = 0, i;

	while (own[n].name)
		n++;
	if (n + NR_SHARED + 1 > cap)
		return -ENOSPC;
	memcpy(out, own, n * sizeof(*out));
	for (i = 0; i < NR_SHARED; i++)
		out[n + i] = shared_opts[i];
	memset(&out[n + NR_SHARED], 0, sizeof(*out));
	return 0;
}

/* "1,2,3" -> @out.  0, or -EINVAL. */
static int parse_ids(const char *s, uint32_t *out, size_t *n)
{
	char *end;

	*n = 0;
	while (*s) {
		unsigned long v;

		if (*n == MAIN_ARGS_MAX_IDS)
			return -EINVAL;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > UINT32_MAX || (*end && *end != ','))
			return -EINVAL;
		out[(*n)++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -EINVAL;
}

static int bad(const char *msg, const char *arg)
{
	main_args__usage_error(msg, arg);
	return -EINVAL;
}

int main_args__parse(struct main_args *a, int c, const char *arg)
{
	struct report_opts *ro = &a->ro;
	struct output_opts *oo = &a->oo;

	switch (c) {
	case 'd': oo->delimited = 1; break;
	case 'a': oo->annotate = 1; break;
	case 'U': ro->user_only = oo->user_only = 1; break;
	case 'K': ro->kernel_only = oo->kernel_only = 1; break;
	case 'S': {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (*end || end == arg || errno || v < 0 || v > 1024)
			return bad("-S needs a number of frames 0..1024", arg);
		ro->kernel_skip = (int)v;
		break;
	}
	case OPT_PID:
		if (parse_ids(arg, a->pids, &ro->nr_pids))
			return bad("--pid needs a comma-separated list of numbers", arg);
		ro->pids = a->pids;
		break;
	case OPT_TID:
		if (parse_ids(arg, a->tids, &ro->nr_tids))
			return bad("--tid needs a comma-separated list of numbers", arg);
		ro->tids = a->tids;
		break;
	case OPT_COMM: ro->comm = arg; break;
	case OPT_EVENT: a->event = arg; break;
	case OPT_EXCLUDE_IDLE: ro->exclude_idle = 1; break;
	case OPT_INLINE: ro->sym.no_inline = oo->no_inline = 0; break;
	case OPT_NO_INLINE: ro->sym.no_inline = oo->no_inline = 1; break;
	case OPT_LINES: ro->sym.lines = oo->lines = 1; break;
	case OPT_ADDRESSES: oo->addresses = 1; break;
	case OPT_NO_DEMANGLE: ro->sym.no_demangle = 1; break;
	case OPT_SHORT_NAMES: ro->sym.short_names = 1; break;
	case OPT_PYTHON:
		if (strcmp(arg, "yes") == 0)
			ro->no_python = 0;
		else if (strcmp(arg, "no") == 0)
			ro->no_python = 1;
		else
			return bad("--python needs yes or no", arg);
		break;
	case OPT_SYSROOT: ro->sym.sysroot = arg; break;
	case OPT_DEBUG_DIR:
		if (ro->sym.nr_debug_dirs == MAIN_ARGS_MAX_DEBUG_DIRS)
			return bad("too many --debug-dir", NULL);
		a->debug_dirs[ro->sym.nr_debug_dirs++] = arg;
		break;
	case OPT_NO_DEBUGINFOD: a->no_debuginfod = 1; break;
	case OPT_KALLSYMS: ro->kallsyms = arg; break;
	case OPT_VMLINUX: a->vmlinux = arg; break;
	case OPT_SYMBOL_CACHE:
		if (!*arg)
			return bad("--symbol-cache needs a directory or 'none'", NULL);
		a->symbol_cache = arg;
		break;
	default:
		switch (time_slice__option(&a->slice, c, arg)) {
		case 1: break;
		case 0: return bad("bad option", NULL);
		default: return bad("--since/--until need seconds from the capture's start", arg);
		}
	}
	return 0;
}

/*
 * --symbol-cache, or the user's cache directory (the XDG base directory
 * rule: $XDG_CACHE_HOME when absolute, else ~/.cache), or none when
 * neither is known.  The symbolizer checks the directory is the user's
 * alone before it reads or writes anything there (symcache.h).
 */
static void symbol_cache_dir(struct main_args *a)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n = -1;

	if (a->symbol_cache) {
		if (strcmp(a->symbol_cache, "none") != 0)
			a->ro.sym.cache_dir = a->symbol_cache;
		return;
	}
	if (x && x[0] == '/')
		n = snprintf(a->cache_dir, sizeof(a->cache_dir), "%s/stk/symbols", x);
	else if (home && home[0] == '/')
		n = snprintf(a->cache_dir, sizeof(a->cache_dir), "%s/.cache/stk/symbols", home);
	if (n > 0 && (size_t)n < sizeof(a->cache_dir))
		a->ro.sym.cache_dir = a->cache_dir;
}

int main_args__check(struct main_args *a)
{
	if (a->ro.user_only && a->ro.kernel_only)
		return bad("-U and -K exclude each other", NULL);
	if (time_slice__check(&a->slice))
		return bad("--since must be before --until", NULL);
	/* libdwfl asks debuginfod by itself whenever DEBUGINFOD_URLS is set. */
	if (a->no_debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	else
		a->ro.sym.debuginfod = 1;
	symbol_cache_dir(a);
	return 0;
}

static void hexstr(char *out, const uint8_t *b, uint32_t n)
{
	hex_encode(out, b, n);
}

/*
 * --vmlinux: a file whose build-id is the recorded kernel's gives the
 * kernel image's frames (inline frames, lines).  Returns 0 with *@out the
 * vmlinux, or NULL when it cannot be used (said in one line: the kernel
 * names then come from the capture); 1 when the file cannot be read (said).
 */
static int open_vmlinux(const struct capture *cap, const char *path,
			const struct symbolizer_opts *so, struct kvmlinux **out)
{
	char mine[2 * STK_MAX_BUILD_ID + 1], rec[2 * STK_MAX_BUILD_ID + 1];
	const struct kvmlinux_info *in;
	struct kvmlinux *kv;
	int err;

	*out = NULL;
	kv = kvmlinux__open(path, cap, so);
	if (!kv) {
		err = errno;
		fprintf(stderr, PROG ": --vmlinux %s: %s\n", path,
			err == ENOEXEC ? "not an ELF file" : err == ENODATA ? "no build-id" :
			strerror(err));
		return 1;
	}
	in = kvmlinux__info(kv);
	switch (in->status) {
	case KVMLINUX_OK:
		*out = kv;
		return 0;
	case KVMLINUX_NO_KERNEL_BID:
		fprintf(stderr, PROG ": --vmlinux %s: the capture has no kernel build-id to check it against; not used, kernel names from the capture\n",
			path);
		break;
	case KVMLINUX_MISMATCH:
		hexstr(mine, in->build_id, in->build_id_size);
		hexstr(rec, in->kernel->build_id, in->kernel->build_id_size);
		fprintf(stderr, PROG ": --vmlinux %s: build-id %s, the recorded kernel's is build-id %s; not used, kernel names from the capture\n",
			path, mine, rec);
		break;
	case KVMLINUX_NO_SLIDE:
		fprintf(stderr, PROG ": --vmlinux %s: where the kernel was loaded (KASLR) is unknown: no kernel base and no kernel symbol of the capture found in it; not used, kernel names from the capture\n",
			path);
		break;
	}
	kvmlinux__free(kv);
	return 0;
}

/* "--pid 1,2 --comm x --since 10": the filters given, as typed. */
static int filters_given(const struct main_args *a, struct strbuf *sb)
{
	const struct report_opts *o = &a->ro;
	size_t i;
	int err = 0;

	for (i = 0; i < o->nr_pids && !err; i++)
		err = strbuf__addf(sb, "%s%u", i ? "," : " --pid ", o->pids[i]);
	for (i = 0; i < o->nr_tids && !err; i++)
		err = strbuf__addf(sb, "%s%u", i ? "," : " --tid ", o->tids[i]);
	if (o->comm && !err)
		err = strbuf__addf(sb, " --comm %s", o->comm);
	if (o->exclude_idle && !err)
		err = strbuf__adds(sb, " --exclude-idle");
	if (a->slice.since_ns && !err)
		err = strbuf__addf(sb, " --since %.9g", (double)a->slice.since_ns / 1e9);
	if (a->slice.until_ns != UINT64_MAX && !err)
		err = strbuf__addf(sb, " --until %.9g", (double)a->slice.until_ns / 1e9);
	return err;
}

/* What @cap holds, for the line saying a filter kept nothing: its tasks
 * and, for a time slice (@span), the time its rows cover. */
static int capture_held(const struct capture *cap, int by_tid, int span, struct strbuf *sb)
{
	uint64_t from, to;
	int err;

	if (!capture_tasks__any(cap))
		return strbuf__adds(sb, "no samples at all");
	err = capture_tasks__describe(cap, by_tid, sb);
	if (!err && span && !capture_tasks__span(cap, &from, &to))
		err = strbuf__addf(sb, ", from %.1f s to %.1f s of its start", (double)from / 1e9,
				   (double)to / 1e9);
	return err;
}

/*
 * A filter or time slice (--pid, --tid, --comm, --exclude-idle, --since,
 * --until) that keeps no sample is an error (exit 1), said in one line
 * with what the capture holds: its tasks (and time span, for a slice), read again whole
 * when only a slice was read (not for standard input, read once).
 * Returns 1 when it was (said), else 0.
 */
static int filters_matched_nothing(const struct main_input *in, const struct main_args *a)
{
	const struct report_opts *o = &in->ro;
	struct strbuf want = { 0 }, held = { 0 };
	struct capture *whole = NULL;
	const struct capture *cap = in->cap;
	int err;

	if (in->r->nr_samples)
		return 0;
	if (!o->nr_pids && !o->nr_tids && !o->comm && !o->exclude_idle &&
	    time_slice__all(&a->slice))
		return 0;
	if (!time_slice__all(&a->slice) && strcmp(in->path, "-") != 0) {
		whole = capture__read(in->path);
		if (whole)
			cap = whole;
	}
	err = filters_given(a, &want);
	err = err ?: capture_held(cap, o->nr_tids && !o->nr_pids, !time_slice__all(&a->slice),
				  &held);
	if (err)
		fprintf(stderr, PROG ": %s: no samples match the filters\n", in->path);
	else	/* Comms come from the capture: one escaped line. */
		textline__printf(stderr, PROG ": %s: no samples match%s; the capture holds %s",
				 in->path, strbuf__str(&want), strbuf__str(&held));
	strbuf__free(&want);
	strbuf__free(&held);
	capture__free(whole);
	return 1;
}

/* --event @want: the index (+ 1) of the capture's event named @want (in
 * full, or its end after a ':'; or a number, the index), into in->ro.event;
 * else one line and -1. */
static int main_input__event(struct main_input *in, const char *want)
{
	size_t i, n = capture__nr_events(in->cap), found = 0, hits = 0;
	char name[256], *end;
	unsigned long v;

	if (!n) {
		textline__printf(stderr, PROG ": %s: --event: not a trace capture (mode %s)",
				 in->path, capture__meta(in->cap, "mode") ?: "unknown");
		return -1;
	}
	errno = 0;
	v = strtoul(want, &end, 10);
	if (*want && !*end && !errno && want[0] != '-') {
		if (v >= n) {
			textline__printf(stderr, PROG ": %s: --event %s: the capture has %zu events (0 to %zu; stkreport info lists them)",
					 in->path, want, n, n - 1);
			return -1;
		}
		in->ro.event = v + 1;
		return 0;
	}
	for (i = 0; i < n; i++) {
		size_t len, wl = strlen(want);

		capture__event(in->cap, i, name, sizeof(name));
		len = strlen(name);
		if (strcmp(name, want) == 0) {
			found = i;
			hits = 1;
			break;
		}
		if (len > wl && name[len - wl - 1] == ':' && strcmp(name + len - wl, want) == 0) {
			found = i;
			hits++;
		}
	}
	if (hits != 1) {
		textline__printf(stderr, PROG ": %s: --event %s: %s (stkreport info lists the events)",
				 in->path, want, hits ? "more than one event ends so; give the whole name"
						      : "no such event in the capture");
		return -1;
	}
	in->ro.event = found + 1;
	return 0;
}

int main_input__load(struct main_input *in, const struct main_args *a, const char *path,
		     int lines)
{
	int err;

	memset(in, 0, sizeof(*in));
	in->path = path;
	in->ro = a->ro;
	if (lines)
		in->ro.sym.lines = 1;
	in->cap = capture__read_slice(path, &a->slice);
	if (!in->cap) {
		err = errno;
		if (err == ENOMEM)
			fprintf(stderr, PROG ": %s: out of memory\n", path);
		else if (err == EFBIG)
			textline__printf(stderr, PROG ": %s: %s", path, capture__errmsg());
		else
			textline__printf(stderr, PROG ": %s", stk_open_errmsg());
		return 1;
	}
	if (a->event && main_input__event(in, a->event))
		goto fail;
	if (a->vmlinux && open_vmlinux(in->cap, a->vmlinux, &in->ro.sym, &in->vmlinux))
		goto fail;
	in->ro.vmlinux = in->vmlinux;
	in->r = report__new(in->cap, &in->ro);
	if (!in->r) {
		err = errno;
		if (in->ro.kallsyms && err != ENOMEM)
			fprintf(stderr, PROG ": --kallsyms %s: %s\n", in->ro.kallsyms,
				err == EBADMSG ? "not in /proc/kallsyms format" : strerror(err));
		else
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(err));
		goto fail;
	}
	if (filters_matched_nothing(in, a)) {
		in->matched_nothing = 1;
		goto fail;
	}
	return 0;
fail:
	main_input__release(in);
	return 1;
}

void main_input__release(struct main_input *in)
{
	report__free(in->r);
	kvmlinux__free(in->vmlinux);
	capture__free(in->cap);
	in->r = NULL;
	in->vmlinux = NULL;
	in->cap = NULL;
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* "; 3.1% of samples' user stacks stopped early (fault 2.0%, no CFI 1.1%)" */
static int summary_uw_stops(const struct report *r, struct strbuf *sb)
{
	const struct report_uw_stops *u = &r->uw_stops;
	unsigned int k, listed = 0;
	int err;

	err = strbuf__addf(sb, "; %.1f%% of %s' user stacks stopped early (",
			   share(u->total_count, r->total_count),
			   r->trace ? "events" : r->kind == REPORT_PROFILE ? "samples" : "blocking events");
	for (k = 1; k <= REPORT_UW_STOP_UNKNOWN && !err; k++)
		if (u->count[k])
			err = strbuf__addf(sb, "%s%s %.1f%%", listed++ ? ", " : "",
					   unwind_stop__name(k), share(u->count[k], r->total_count));
	return err ?: strbuf__adds(sb, ")");
}

/* "; 2.0% of samples' Python stacks stopped early (depth 1.5%, fault 0.5%)" */
static int summary_py_stops(const struct report *r, struct strbuf *sb)
{
	unsigned int k, listed = 0;
	int err;

	err = strbuf__addf(sb, "; %.1f%% of %s' Python stacks stopped early (",
			   share(r->py.stop_total, r->total_count),
			   r->kind == REPORT_PROFILE ? "samples" : "blocking events");
	for (k = 1; k <= REPORT_PY_STOP_UNKNOWN && !err; k++)
		if (r->py.stop_count[k])
			err = strbuf__addf(sb, "%s%s %.1f%%", listed++ ? ", " : "",
					   python_stop__name(k), share(r->py.stop_count[k], r->total_count));
	return err ?: strbuf__adds(sb, ")");
}

/* Modules without symbols the closing line names at most, so that it stays
 * one short line on a system-wide capture (hundreds of modules): the ones
 * with the most samples affected; stkreport info --symbols lists all. */
#define SUMMARY_MAX_MODULES 3

/* 1 if module @i is among the SUMMARY_MAX_MODULES with the most unknown
 * samples (ties: the first), else 0. */
static int summary_listed(const struct report *r, size_t i)
{
	const struct sym_module *m = symbolizer__module_at(r->sym, i);
	size_t j, n = symbolizer__nr_modules(r->sym), above = 0;

	for (j = 0; j < n; j++) {
		const struct sym_module *o = symbolizer__module_at(r->sym, j);

		if (o->unknown_samples > m->unknown_samples ||
		    (o->unknown_samples == m->unknown_samples && j < i))
			above++;
	}
	return above < SUMMARY_MAX_MODULES;
}

/* The closing line into @sb: how much is symbolized, and what is missing
 * and why.  0 or -ENOMEM. */
static int summary_line(const struct report *r, struct strbuf *sb)
{
	size_t i, n = symbolizer__nr_modules(r->sym), listed = 0, unlisted = 0;
	double pct = r->total_count ? 100.0 * (double)r->symbolized_count / (double)r->total_count
				    : 100.0;
	int err;

	err = strbuf__addf(sb, "%.1f%% of %llu %s fully symbolized", pct,
			   (unsigned long long)r->total_count,
			   r->trace ? "events" : r->kind == REPORT_PROFILE ? "samples" : "blocking events");
	for (i = 0; i < n && !err; i++) {
		const struct sym_module *m = symbolizer__module_at(r->sym, i);
		char hex[2 * STK_MAX_BUILD_ID + 1];
		const char *why;

		if (!m->unknown_samples)
			continue;
		if (!summary_listed(r, i)) {
			unlisted++;
			continue;
		}
		why = m->status == SYM_MOD_OK ? "some addresses have no symbol"
					      : sym_module_status__reason(m->status);
		err = strbuf__adds(sb, listed++ ? ", " : "; no symbols for: ");
		if (!err)
			err = strbuf__adds(sb, m->path[0] ? m->path : "[anon]");
		if (!err && m->build_id_size) {
			hexstr(hex, m->build_id, m->build_id_size);
			err = strbuf__addf(sb, " (build-id %s: %s", hex, why);
		} else if (!err) {
			err = strbuf__addf(sb, " (%s", why);
		}
		if (!err && m->status == SYM_MOD_MISMATCH && m->mismatch_path)
			err = strbuf__addf(sb, ": %s has another one", m->mismatch_path);
		if (!err)
			err = strbuf__adds(sb, ")");
	}
	if (!err && unlisted)
		err = strbuf__addf(sb, " and %zu more module%s (stkreport info --symbols lists them)",
				   unlisted, unlisted > 1 ? "s" : "");
	if (!err && r->py.unknown_count) {
		err = strbuf__adds(sb, listed++ ? ", " : "; no symbols for: ");
		err = err ?: strbuf__addf(sb, "[python] (%.1f%% of %s have a frame of code the capture does not describe)",
					  share(r->py.unknown_count, r->total_count),
					  r->kind == REPORT_PROFILE ? "samples" : "blocking events");
	}
	if (!err && r->uw_stops.total_count)
		err = summary_uw_stops(r, sb);
	if (!err && r->py.stop_total)
		err = summary_py_stops(r, sb);
	if (!err && r->kernel_unknown_samples) {
		err = strbuf__adds(sb, listed++ ? ", " : "; no symbols for: ");
		if (!err)
			err = strbuf__addf(sb, "[kernel] (%s)", r->kernel_syms_source
					   ? "some addresses not in the kernel symbols"
					   : "no kernel symbols in the capture; try --kallsyms");
	}
	return err;
}

/* Prints the closing line; 1 when out of memory (said), else 0. */
static int print_summary(const struct report *r, const char *label)
{
	struct strbuf sb = { 0 };
	int err = summary_line(r, &sb);

	if (err)
		fprintf(stderr, PROG ": summary: %s\n", strerror(-err));
	else	/* Module paths come from the capture: one escaped line. */
		textline__printf(stderr, PROG ": %s%s%s", label ? label : "", label ? ": " : "",
				 strbuf__str(&sb));
	strbuf__free(&sb);
	return err ? 1 : 0;
}

/* One line for the modules whose DWARF (or symbol table) was not read for
 * what their compressed sections declare (SPEC.md §7.3): 1 when there
 * were some. */
static int print_dwarf_refused(const struct main_input *in)
{
	const struct report *r = in->r;
	const struct sym_module *first = NULL;
	size_t i, n = symbolizer__nr_modules(r->sym), more = 0;

	for (i = 0; i < n; i++) {
		const struct sym_module *m = symbolizer__module_at(r->sym, i);

		if (!m->dwarf_refused)
			continue;
		if (first)
			more++;
		else
			first = m;
	}
	if (!first)
		return 0;
	textline__printf(stderr, PROG ": %s: %s: compressed sections declare %llu KiB inflated, over the limit of %llu KiB (%s): %s%s%.0zu%s",
			 in->path, first->path[0] ? first->path : "[anon]",
			 (unsigned long long)(first->inflate_declared >> 10),
			 (unsigned long long)(first->inflate_limit >> 10),
			 first->source == ELF_SRC_EMBEDDED ? "128 x the capture's size for its images"
							   : "128 x the file's size",
			 first->symtab_refused ? "its symbol table not read, nor its DWARF"
					       : "named from its symbol table, without DWARF",
			 more ? "; and " : "", more, more ? " more modules" : "");
	return 1;
}

int main_input__status(const struct main_input *in, const char *label)
{
	const struct capture *cap = in->cap;
	const struct report *r = in->r;
	int ret;

	if (!label && r->missing_stacks)
		fprintf(stderr, "WARNING: %llu stack traces %scould not be displayed.%s\n",
			(unsigned long long)r->missing_stacks,
			r->kind == REPORT_OFFWAKE ? "lost and " : "",
			r->missing_map_full ? " Consider increasing --stack-storage-size." : "");
	ret = print_summary(r, label);
	if (r->sym && print_dwarf_refused(in))
		ret = 1;
	if (cap->saturated) {
		textline__printf(stderr, PROG ": %s: counts sum past 2^64 (a crafted capture?): capped at %llu, the shares are not to be trusted",
				 in->path, (unsigned long long)UINT64_MAX);
		ret = 1;
	}
	if (cap->damaged) {
		textline__printf(stderr, PROG ": %s: damaged: %s; reported the %llu chunks recovered",
			in->path, cap->first_error ? cap->first_error : "unknown damage",
			(unsigned long long)cap->summary.chunks);
		ret = 1;
	} else if (!cap->summary.closed) {
		textline__printf(stderr, PROG ": %s: not closed cleanly (recording killed?)%s%s; reported the %llu chunks written",
			in->path, cap->first_error ? ": " : "",
			cap->first_error ? cap->first_error : "",
			(unsigned long long)cap->summary.chunks);
	}
	return ret;
}

struct outstream *main_output__open(const char *path)
{
	struct outstream *out = outstream__open(path);

	if (!out)
		textline__printf(stderr, PROG ": %s: %s", path ? path : "stdout", strerror(errno));
	return out;
}

int main_output__is_input(const char *out, const char *in)
{
	struct stat so, si;

	if (!out || stat(out, &so) < 0 || !S_ISREG(so.st_mode))
		return 0;
	if (strcmp(in, "-") == 0 ? fstat(STDIN_FILENO, &si) < 0 : stat(in, &si) < 0)
		return 0;
	if (so.st_dev != si.st_dev || so.st_ino != si.st_ino)
		return 0;
	textline__printf(stderr, PROG ": -o %s is the capture being read (%s); write elsewhere",
			 out, in);
	return 1;
}
