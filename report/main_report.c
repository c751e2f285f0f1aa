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

#include "capture.h"
#include "cmds.h"
#include "kvmlinux.h"
#include "output.h"
#include "report.h"
#include "stk.h"
#include "textsafe.h"

#define PROG "stkreport"
#define MAX_DEBUG_DIRS 64
#define MAX_IDS 4096

static void usage(FILE *f)
{
	fprintf(f,
"Usage: stkreport [options] FILE.stk\n"
"       stkreport info [--chunks] [--symbols] FILE.stk\n"
"Symbolize a capture offline and print it.\n"
"\n"
"Output:\n"
"  -f, --format FMT     %s (default text: profile.py's\n"
"                       layout, hottest stack last; folded: one line per\n"
"                       stack, flamegraph.pl; pprof: gzip'd profile.proto for\n"
"                       go tool pprof, with mappings, addresses and source\n"
"                       lines, so -d, -a, --addresses and --lines do not\n"
"                       apply; not to a terminal; svg: an interactive flame\n"
"                       graph for a browser: hover, click to zoom, search)\n"
"      --inverted       svg: an icicle graph, the roots on top\n"
"      --title TEXT     svg: the title (default \"Flame Graph\", \"Off-CPU Time\n"
"                       Flame Graph\" ...)\n"
"  -o, --output FILE    write to FILE instead of stdout\n"
"  -d, --delimited      '--' (text) / '-' (folded) between kernel and user frames\n"
"  -a, --annotations    add _[k] to kernel frame names\n"
"      --addresses      print addresses; unknown frames as [module+0xoffset]\n"
"                       (offset in the mapped file) instead of [unknown]\n"
"      --lines          add (file:line) to frames that have debuginfo (default off)\n"
"      --inline         show inlined functions as frames of their own (default on)\n"
"      --no-inline      only the function the code belongs to\n"
"      --no-demangle    keep C++/Rust names as in the binary (default: demangled)\n"
"Filters:\n"
"  -U, --user-stacks-only     user frames only\n"
"  -K, --kernel-stacks-only   kernel frames only\n"
"  -S, --kernel-skip N  skip N kernel frames (default: find the interrupt frames\n"
"                       by the recorded return IP, as profile.py does)\n"
"      --pid PIDS       only these processes (comma-separated)\n"
"      --tid TIDS       only these threads\n"
"      --comm NAME      only tasks with this comm\n"
"Symbols (a file is used only if its build-id is the recorded one):\n"
"      --sysroot DIR    look for recorded paths under DIR too\n"
"      --debug-dir DIR  look in DIR/.build-id/xx/rest[.debug] and DIR/PATH;\n"
"                       repeatable; /usr/lib/debug is always searched\n"
"      --no-debuginfod  do not ask debuginfod (asked when DEBUGINFOD_URLS is set)\n"
"      --kallsyms FILE  kernel symbols from FILE instead of the capture\n"
"      --vmlinux FILE   kernel image frames from FILE: inline frames, --lines\n"
"                       (used only if its build-id is the recorded kernel's)\n"
"  -h, --help           this help\n"
"      --version        print the version\n"
"\n"
"At the end one line on stderr tells the share of samples fully symbolized\n"
"and which modules lack symbols and why.\n"
"Exit status: 0 ok, also for a capture that was not closed (a killed\n"
"recording: what was written is reported, with a warning); 1 failure, or a\n"
"damaged capture (what could be recovered is still reported); 2 usage error.\n",
		output_format__names());
}

enum {
	OPT_PID = 256, OPT_TID, OPT_COMM, OPT_INLINE, OPT_NO_INLINE, OPT_LINES, OPT_ADDRESSES,
	OPT_NO_DEMANGLE, OPT_SYSROOT, OPT_DEBUG_DIR, OPT_NO_DEBUGINFOD, OPT_KALLSYMS,
	OPT_VMLINUX, OPT_VERSION, OPT_INVERTED, OPT_TITLE,
};

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "delimited", no_argument, NULL, 'd' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "kernel-skip", required_argument, NULL, 'S' },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "addresses", no_argument, NULL, OPT_ADDRESSES },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s; try '" PROG " --help'\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return 2;
}

/* "1,2,3" -> @out.  0, or -EINVAL. */
static int parse_ids(const char *s, uint32_t *out, size_t *n)
{
	char *end;

	*n = 0;
	while (*s) {
		unsigned long v;

		if (*n == MAX_IDS)
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

static void hexstr(char *out, const uint8_t *b, uint32_t n)
{
	hex_encode(out, b, n);
}

/* The closing line into @sb: how much is symbolized, and what is missing
 * and why.  0 or -ENOMEM. */
static int summary_line(const struct report *r, struct strbuf *sb)
{
	size_t i, n = symbolizer__nr_modules(r->sym), listed = 0;
	double pct = r->total_count ? 100.0 * (double)r->symbolized_count / (double)r->total_count
				    : 100.0;
	int err;

	err = strbuf__addf(sb, "%.1f%% of %llu %s fully symbolized", pct,
			   (unsigned long long)r->total_count,
			   r->kind == REPORT_PROFILE ? "samples" : "blocking events");
	for (i = 0; i < n && !err; i++) {
		const struct sym_module *m = symbolizer__module_at(r->sym, i);
		char hex[2 * STK_MAX_BUILD_ID + 1];
		const char *why;

		if (!m->unknown_samples)
			continue;
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
static int print_summary(const struct report *r)
{
	struct strbuf sb = { 0 };
	int err = summary_line(r, &sb);

	if (err)
		fprintf(stderr, PROG ": summary: %s\n", strerror(-err));
	else	/* Module paths come from the capture: one escaped line. */
		textline__printf(stderr, PROG ": %s", strbuf__str(&sb));
	strbuf__free(&sb);
	return err ? 1 : 0;
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

int report_main(int argc, char **argv)
{
	static uint32_t pids[MAX_IDS], tids[MAX_IDS];
	const char *debug_dirs[MAX_DEBUG_DIRS];
	struct report_opts ro = { .sz = sizeof(ro), .sym = { .sz = sizeof(ro.sym) } };
	struct output_opts oo = { 0 };
	const struct output_format *fmt = output_format__find("text");
	const char *out_path = NULL, *vmlinux = NULL, *path;
	struct capture *cap = NULL;
	struct report *r = NULL;
	FILE *out = stdout;
	int c, err, ret = 1, no_debuginfod = 0;

	ro.sym.debug_dirs = debug_dirs;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:daUKS:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = output_format__find(optarg);
			if (!fmt)
				return usage_error("unknown format (expected text, folded, pprof or svg)",
						   optarg);
			break;
		case 'o': out_path = optarg; break;
		case 'd': oo.delimited = 1; break;
		case 'a': oo.annotate = 1; break;
		case 'U': ro.user_only = oo.user_only = 1; break;
		case 'K': ro.kernel_only = oo.kernel_only = 1; break;
		case 'S': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v < 0 || v > 1024)
				return usage_error("-S needs a number of frames 0..1024", optarg);
			ro.kernel_skip = (int)v;
			break;
		}
		case OPT_PID:
			if (parse_ids(optarg, pids, &ro.nr_pids))
				return usage_error("--pid needs a comma-separated list of numbers", optarg);
			ro.pids = pids;
			break;
		case OPT_TID:
			if (parse_ids(optarg, tids, &ro.nr_tids))
				return usage_error("--tid needs a comma-separated list of numbers", optarg);
			ro.tids = tids;
			break;
		case OPT_COMM: ro.comm = optarg; break;
		case OPT_INLINE: ro.sym.no_inline = oo.no_inline = 0; break;
		case OPT_NO_INLINE: ro.sym.no_inline = oo.no_inline = 1; break;
		case OPT_LINES: ro.sym.lines = oo.lines = 1; break;
		case OPT_ADDRESSES: oo.addresses = 1; break;
		case OPT_NO_DEMANGLE: ro.sym.no_demangle = 1; break;
		case OPT_SYSROOT: ro.sym.sysroot = optarg; break;
		case OPT_DEBUG_DIR:
			if (ro.sym.nr_debug_dirs == MAX_DEBUG_DIRS)
				return usage_error("too many --debug-dir", NULL);
			debug_dirs[ro.sym.nr_debug_dirs++] = optarg;
			break;
		case OPT_NO_DEBUGINFOD: no_debuginfod = 1; break;
		case OPT_KALLSYMS: ro.kallsyms = optarg; break;
		case OPT_VMLINUX: vmlinux = optarg; break;
		case OPT_INVERTED: oo.inverted = 1; break;
		case OPT_TITLE: oo.title = optarg; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: printf(PROG " %s\n", STK_VERSION_STRING); return 0;
		default: return usage_error("bad option", NULL);
		}
	}
	if (ro.user_only && ro.kernel_only)
		return usage_error("-U and -K exclude each other", NULL);
	if (optind + 1 != argc)
		return usage_error(optind == argc ? "missing capture FILE" : "one capture FILE only",
				   NULL);
	path = argv[optind];
	if (fmt->binary && !out_path && isatty(STDOUT_FILENO))
		return usage_error("binary output to a terminal; use -o FILE or a pipe", NULL);
	/* A profile carries each function's file and line whatever the
	 * options: pprof shows them on demand (-lines, list). */
	if (strcmp(fmt->name, "pprof") == 0)
		ro.sym.lines = 1;
	/* libdwfl asks debuginfod by itself whenever DEBUGINFOD_URLS is set. */
	if (no_debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	else
		ro.sym.debuginfod = 1;

	cap = capture__read(path);
	if (!cap) {
		err = errno;
		if (err == ENOMEM)
			fprintf(stderr, PROG ": %s: out of memory\n", path);
		else
			textline__printf(stderr, PROG ": %s", stk_open_errmsg());
		return 1;
	}
	if (vmlinux && open_vmlinux(cap, vmlinux, &ro.sym, &ro.vmlinux))
		goto out;
	r = report__new(cap, &ro);
	if (!r) {
		err = errno;
		if (ro.kallsyms && err != ENOMEM)
			fprintf(stderr, PROG ": --kallsyms %s: %s\n", ro.kallsyms,
				err == EBADMSG ? "not in /proc/kallsyms format" : strerror(err));
		else
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(err));
		goto out;
	}
	if (out_path) {
		out = fopen(out_path, "we");
		if (!out) {
			fprintf(stderr, PROG ": %s: %s\n", out_path, strerror(errno));
			goto out;
		}
	}
	err = fmt->write(r, &oo, out);
	if (out != stdout && fclose(out) && !err)
		err = -EIO;
	out = stdout;
	if (err) {
		fprintf(stderr, PROG ": writing %s: %s\n", out_path ? out_path : "the report",
			strerror(-err));
		goto out;
	}
	if (r->missing_stacks)
		fprintf(stderr, "WARNING: %llu stack traces %scould not be displayed.%s\n",
			(unsigned long long)r->missing_stacks,
			r->kind == REPORT_OFFWAKE ? "lost and " : "",
			r->missing_map_full ? " Consider increasing --stack-storage-size." : "");
	ret = print_summary(r);
	if (cap->damaged) {
		textline__printf(stderr, PROG ": %s: damaged: %s; reported the %llu chunks recovered", path,
			cap->first_error ? cap->first_error : "unknown damage",
			(unsigned long long)cap->summary.chunks);
		ret = 1;
	} else if (!cap->summary.closed) {
		textline__printf(stderr, PROG ": %s: not closed cleanly (recording killed?)%s%s; reported the %llu chunks written",
			path, cap->first_error ? ": " : "", cap->first_error ? cap->first_error : "",
			(unsigned long long)cap->summary.chunks);
	}
out:
	report__free(r);
	kvmlinux__free(ro.vmlinux);
	capture__free(cap);
	return ret;
}
