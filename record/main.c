// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkrec: record stack samples into a .stk file (BPF, aggregated in the
 * kernel).  This front-end parses options, checks them, prints and maps
 * errors to exit codes; recorder.c does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>
#include <zstd.h>

#include "caps.h"
#include "cli.h"
#include "cpulist.h"
#include "parse.h"
#include "perfopt.h"
#include "esym.h"
#include "kmem.h"
#include "modeobj.h"
#include "events.h"
#include "recorder.h"
#include "rotation.h"
#include "status.h"
#include "stk.h"
#include "stk_escape.h"

#define EXIT_USAGE 2
#define EXIT_CMD_NOT_FOUND 127 /* as shells, env and timeout */
#define EXIT_CMD_NOT_EXECUTABLE 126
/* What the steps of main() return to go on to the next, not an exit status. */
#define GO_ON (-1)

#define MAX_STACK_STORAGE (1u << 22)
#define MAX_DURATION_S (100ULL * 365 * 24 * 3600)
#define MAX_FLUSH_INTERVAL_S 3600
#define MAX_USER_MEMORY_MB 16384
_Static_assert((uint64_t)CLI_DEFAULT_USER_MEMORY << 20 == RECORDER_USER_MEMORY,
	       "--help's default of --user-memory is the recorder's");
/* Task states that exist (include/linux/sched.h): up to TASK_FROZEN 0x8000;
 * TASK_STATE_MAX is 0x10000 since Linux 6.1. */
#define TASK_STATE_BITS 0xffffu

#define MAX_ROTATE_S MAX_DURATION_S
#define MAX_KEEP 1000000

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t rotate_requested;
static int status_shown;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* With --rotate or --rotate-size, SIGHUP starts a new file (logrotate's
 * habit) instead of stopping. */
static void on_rotate_signal(int sig)
{
	(void)sig;
	rotate_requested = 1;
}

/* The --help of a kind of mode (CLI_KIND_*), from cli.h's table. */
static void usage(FILE *f, int kind)
{
	static const unsigned int bits[] = { CLI_PROFILE, CLI_OFFCPU, CLI_TRACE };
	const struct cli_opt *c;

	fputs(cli__usage_head[kind], f);
	for (c = cli__opts; c->help; c++)
		if (c->modes & bits[kind])
			fputs(kind != CLI_KIND_PROFILE && c->help_offcpu ? c->help_offcpu : c->help, f);
	fputs(cli__usage_tail_common, f);
	fputs(cli__usage_tail[kind], f);
}


static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * One line on stderr.  The text is escaped as a whole (stk_escape.h):
 * it may name a path or command a traced process or a user chose, and a
 * newline or a terminal escape in one must not split or hijack the line.
 */
static void errorf(const char *fmt, ...)
{
	char msg[2048], esc[STK_ESCAPE_SIZE(sizeof(msg))];
	va_list ap;

	if (status_shown) {
		fputs("\r\033[K", stderr);
		status_shown = 0;
	}
	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	stk_escape(esc, sizeof(esc), msg, strnlen(msg, sizeof(msg)));
	fprintf(stderr, "stkrec: %s\n", esc);
}

static int libbpf_print_verbose(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_print_silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void on_status(const struct recorder_status *st, void *ctx)
{
	char line[160];

	(void)ctx;
	status__format(st, line, sizeof(line));
	/* "\r" and erase-to-end: one line updated in place. */
	fprintf(stderr, "\rstkrec: %s\033[K", line);
	fflush(stderr);
	status_shown = 1;
}

/* The release, then the libraries' versions as loaded at run time (which
 * may differ from the headers it was built with). */
static void print_version(void)
{
	const char *bpf = libbpf_version_string();

	printf("stkrec %s\n", STK_VERSION_STRING);
	printf("libbpf %s\n", bpf[0] == 'v' ? bpf + 1 : bpf);
	printf("elfutils %s\n", dwfl_version(NULL));
	printf("zstd %s\n", ZSTD_versionString());
}

static unsigned long read_max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/*
 * A profile the kernel sampled at well under -F: it throttles perf events
 * whose interrupts take too long (kernel.perf_cpu_time_max_percent, which
 * also lowers perf_event_max_sample_rate as it goes) or that fire more
 * often than perf_event_max_sample_rate / HZ a tick, and a timer can fire
 * late.  The capture holds what was delivered (STAT sample_events,
 * sampled_cpu_time_ns), which stkreport's pprof period is taken from;
 * this says so, below 90% of -F.
 */
static void warn_throttled(const struct recorder_opts *o, const struct recorder_result *res)
{
	/* Judged on the busiest CPU, as stkreport's pprof period: an idle
	 * CPU's late timers miss periods that throttling has no part in. */
	double cpu_s = (double)res->sampled_cpu_time_ns / 1e9 / (double)(res->sampled_cpus ?: 1);
	double hz = cpu_s > 0 ? (double)(res->sampled_cpus ? res->sample_events_busiest
							    : res->sample_events) / cpu_s
			      : 0;
	unsigned long max = read_max_sample_rate();
	char now[96] = "";

	/* As stkreport's pprof period (report/output/out_pprof.c): at least 100
	 * events expected, so that the periods the start and the end of the
	 * recording cut cannot make 10%. */
	if (strcmp(o->mode, "profile") != 0 || cpu_s * o->frequency < 100 ||
	    hz >= 0.9 * o->frequency)
		return;
	if (max && max < o->frequency)
		snprintf(now, sizeof(now), "; kernel.perf_event_max_sample_rate is now %lu", max);
	errorf("warning: -F %u: the kernel delivered %.0f Hz per CPU (it throttles sampling that costs too much%s); pprof's CPU times use the delivered rate",
	       o->frequency, hz, now);
}

/*
 * The tgid of task @id from /proc/ID/status: > 0, or -ENOENT (no such
 * task) or another -errno.
 */
static long task_tgid(uint32_t id)
{
	char path[64], line[256];
	long tgid = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", id);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int is_mode_word(const char *s)
{
	return strcmp(s, "profile") == 0 || strcmp(s, "offcpu") == 0 ||
	       strcmp(s, "offwake") == 0 || strcmp(s, "trace") == 0;
}

/* 0 if @path is a regular file we may execute, else -ENOENT (nothing
 * there), -EISDIR or -EACCES (there, but not runnable). */
static int executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EACCES;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : -EACCES;
}

/*
 * Find @file as execvp() would (a path, or in $PATH): 0 if it can be run,
 * -ENOENT if there is none, -EACCES or -EISDIR if what there is cannot be
 * run (execvp() goes on along $PATH past those, as here).
 */
static int command_find(const char *file)
{
	const char *path = getenv("PATH");
	int err, found = -ENOENT;
	char buf[4096];

	if (strchr(file, '/'))
		return executable(file);
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", file);
		err = executable(buf);
		if (!err)
			return 0;
		/* bash says "Permission denied" for a directory in $PATH. */
		if (err != -ENOENT)
			found = -EACCES;
		path += len;
		if (*path == ':')
			path++;
	}
	return found;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}


/* The command line, as parsed and then checked: what main()'s steps share. */
struct args {
	struct recorder_opts o;
	int offcpu, trace, help, quiet, verbose;
	/* Options of one kind of mode only, as given, to refuse them in the
	 * other with one clear line. */
	const char *profile_only, *offcpu_only, *trace_only;
	char only_buf[3][32];
	/* trace: the EVENT words as given, then resolved. */
	const char **event_args;
	size_t nr_event_args;
	struct ev_list events;
	const char *period_arg;
	uint64_t max_probes;
	const char *freq_arg, *cpu_arg, *mode_word, *duration_arg;
	uint32_t *pids, *tids;
	size_t nr_pids, nr_tids, nr_online;
	int *cpus, *online;
	char **cmd, *cmdline;
	int output_given, keep_given;
};

/* Kernel memory the BPF maps of @a's recording take (kmem.h). */
static uint64_t maps_kmem(const struct args *a)
{
	const struct recorder_opts *o = &a->o;

	/* profile's rows ring too: it grows with -F, CPUs and the flush
	 * interval. */
	return kmem__recording_bytes(o->stack_storage_size, modeobj__stack_ring_bytes(o),
				     a->offcpu || a->trace ? modeobj__counts_entries(o)
							   : modeobj__profile_counts_entries(o),
				     a->offcpu) +
	       (a->offcpu || a->trace ? 0 : modeobj__rows_ring_bytes(o));
}

/*
 * Signals first, before anything else.  SIGINT, SIGTERM and SIGHUP (the
 * terminal closed) only stop the recording: the handler sets a flag,
 * installed without SA_RESTART so that a blocking call they interrupt
 * returns EINTR.  Installed this early because a background job of a
 * non-interactive shell starts with SIGINT ignored (POSIX), and a stop
 * sent while the options are checked or the BPF programs load must
 * neither be lost (stkrec would then run to its end) nor kill stkrec with
 * the default action.  Blocked while stkrec sets up, where an EINTR would
 * only fail the start: a stop stays pending and ends the recording, with
 * a closed file, as soon as it starts.  The recorder takes them (@orig)
 * while it waits for the output's reader and from the start of the
 * recording on, in the wait and in any work that could block.  Only the
 * window between exec and main() remains.
 */
static void signals_setup(sigset_t *orig)
{
	struct sigaction sa = {};
	sigset_t block;

	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, orig);
	/* Even if whoever started us had them blocked: the recorder takes them. */
	sigdelset(orig, SIGINT);
	sigdelset(orig, SIGTERM);
	sigdelset(orig, SIGHUP);
}

/* A word that is not an option: the mode, or DURATION. */
static int parse_word(struct args *a, const char *word)
{
	uint64_t v;

	if (is_mode_word(word)) {
		if (a->mode_word && strcmp(a->mode_word, word) != 0) {
			errorf("two modes given, '%s' and '%s': choose one", a->mode_word, word);
			return EXIT_USAGE;
		}
		a->mode_word = word;
		a->trace = strcmp(word, "trace") == 0;
		a->offcpu = strcmp(word, "profile") != 0 && !a->trace;
		if (strcmp(word, "profile") != 0)
			a->o.mode = word;
		return GO_ON;
	}
	/* trace's EVENTs: after the mode word, any word but a number. */
	if (a->trace && !strchr("0123456789.+-", word[0])) {
		const char **e = realloc(a->event_args, (a->nr_event_args + 1) * sizeof(*e));

		if (!e) {
			errorf("out of memory");
			return 1;
		}
		a->event_args = e;
		a->event_args[a->nr_event_args++] = word;
		return GO_ON;
	}
	if (parse__seconds(word, MAX_DURATION_S, &v)) {
		if (strchr("0123456789.+-", word[0]))
			errorf("duration '%s': expected a positive number of seconds", word);
		else
			errorf("'%s': neither a mode (profile, offcpu, offwake, trace) nor a DURATION in seconds%s",
			       word, strchr(word, ':') || strchr(word, '-')
					     ? " (events follow the mode word: stkrec trace EVENT...)" : "");
		return EXIT_USAGE;
	}
	if (a->duration_arg) {
		errorf("unexpected argument '%s': DURATION is given already ('%s')", word,
		       a->duration_arg);
		return EXIT_USAGE;
	}
	a->duration_arg = word;
	a->o.duration_ns = v;
	return GO_ON;
}

/* The options of offcpu and offwake only: -u, -k, -m, -M, --state. */
static int parse_offcpu_option(struct args *a, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'u':
		a->o.user_threads_only = 1;
		break;
	case 'k':
		a->o.kernel_threads_only = 1;
		break;
	case 'm':
	case 'M':
		/* As offwaketime: a positive number of microseconds. */
		if (parse__uint(arg, UINT64_MAX, &v) || v == 0) {
			errorf("-%c %s: expected a positive number of microseconds", opt, arg);
			return EXIT_USAGE;
		}
		if (opt == 'm')
			a->o.min_block_us = v;
		else
			a->o.max_block_us = v;
		break;
	case CLI_STATE:
		if (parse__uint(arg, UINT32_MAX, &v)) {
			errorf("--state %s: expected a task state bit mask, e.g. 2 for uninterruptible sleep",
			       arg);
			return EXIT_USAGE;
		}
		if (v & ~(uint64_t)TASK_STATE_BITS) {
			errorf("--state %s: unknown task state bits 0x%llx (known: 0x%x, see include/linux/sched.h)",
			       arg, (unsigned long long)(v & ~(uint64_t)TASK_STATE_BITS),
			       TASK_STATE_BITS);
			return EXIT_USAGE;
		}
		a->o.state_filter = 1;
		a->o.state_mask = (uint32_t)v;
		break;
	}
	return GO_ON;
}

/* The long-only options with a value: sizes, intervals and choices. */
static int parse_long_option(struct args *a, int opt, const char *arg)
{
	struct recorder_opts *o = &a->o;
	uint64_t v;

	switch (opt) {
	case CLI_STACK_STORAGE:
		if (parse__uint(arg, MAX_STACK_STORAGE, &v) || v == 0) {
			errorf("--stack-storage-size %s: expected a number from 1 to %u", arg,
			       MAX_STACK_STORAGE);
			return EXIT_USAGE;
		}
		o->stack_storage_size = (uint32_t)v;
		break;
	case CLI_FLUSH_INTERVAL:
		if (parse__seconds(arg, MAX_FLUSH_INTERVAL_S, &v)) {
			errorf("--flush-interval %s: expected seconds from 0.001 to %d", arg,
			       MAX_FLUSH_INTERVAL_S);
			return EXIT_USAGE;
		}
		o->flush_interval_ns = v;
		/* Asked for: every interval ends with a flush. */
		o->flush_strict = 1;
		break;
	case CLI_KALLSYMS:
		if (strcmp(arg, "full") == 0) {
			o->kallsyms_full = 1;
		} else if (strcmp(arg, "covering") != 0) {
			errorf("--kallsyms=%s: expected 'covering' or 'full'", arg);
			return EXIT_USAGE;
		}
		break;
	case CLI_EMBED_SYMBOLS:
		if (strcmp(arg, "full") == 0) {
			o->embed_symbols = ESYM_FULL;
		} else if (strcmp(arg, "none") == 0) {
			o->embed_symbols = ESYM_NONE;
		} else if (strcmp(arg, "covering") != 0) {
			errorf("--embed-symbols=%s: expected 'covering', 'full' or 'none'", arg);
			return EXIT_USAGE;
		}
		break;
	case CLI_UNWIND:
		if (strcmp(arg, "auto") == 0) {
			o->unwind = RECORDER_UNWIND_AUTO;
		} else if (strcmp(arg, "dwarf") == 0) {
			o->unwind = RECORDER_UNWIND_DWARF;
		} else if (strcmp(arg, "fp") == 0) {
			o->unwind = RECORDER_UNWIND_FP;
		} else {
			errorf("--unwind=%s: expected 'auto', 'dwarf' or 'fp'", arg);
			return EXIT_USAGE;
		}
		break;
	case CLI_UNWIND_MEMORY: {
		char *end;
		unsigned long long mb;

		errno = 0;
		mb = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || mb < 1 || mb > 16384) {
			errorf("--unwind-memory %s: expected megabytes from 1 to 16384", arg);
			return EXIT_USAGE;
		}
		o->unwind_memory = mb << 20;
		break;
	}
	case CLI_PYTHON:
		if (strcmp(arg, "no") == 0) {
			o->no_python = 1;
		} else if (strcmp(arg, "yes") != 0) {
			errorf("--python=%s: expected 'yes' or 'no'", arg);
			return EXIT_USAGE;
		}
		break;
	case CLI_UNWIND_CACHE:
		if (!*arg) {
			errorf("--unwind-cache: expected a directory or 'none'");
			return EXIT_USAGE;
		}
		o->unwind_cache = arg;
		break;
	case CLI_BTF_CACHE:
		if (!*arg) {
			errorf("--btf-cache: expected a directory or 'none'");
			return EXIT_USAGE;
		}
		o->btf_cache = arg;
		break;
	case CLI_ROTATE:
		if (parse__seconds(arg, MAX_ROTATE_S, &v) || v < 1000000000ULL) {
			errorf("--rotate %s: expected seconds, at least 1 (e.g. --rotate 3600)", arg);
			return EXIT_USAGE;
		}
		o->rotate_ns = v;
		break;
	case CLI_ROTATE_SIZE:
		if (parse__size(arg, UINT64_MAX, &v)) {
			errorf("--rotate-size %s: expected a positive size in bytes, or with K, M or G (e.g. 100M)",
			       arg);
			return EXIT_USAGE;
		}
		o->rotate_bytes = v;
		break;
	case CLI_KEEP:
		if (parse__uint(arg, MAX_KEEP, &v) || v == 0) {
			errorf("--keep %s: expected a number of files from 1 to %d", arg, MAX_KEEP);
			return EXIT_USAGE;
		}
		o->keep = (unsigned int)v;
		a->keep_given = 1;
		break;
	case CLI_USER_MEMORY:
		if (parse__uint(arg, MAX_USER_MEMORY_MB, &v) || v == 0) {
			errorf("--user-memory %s: expected megabytes from 1 to %d", arg,
			       MAX_USER_MEMORY_MB);
			return EXIT_USAGE;
		}
		o->user_memory = v << 20;
		break;
	}
	return GO_ON;
}

/* Remember a mode-specific option as given ("-F", "--state"), for
 * check_usage()'s line if the mode turns out to be the other. */
static void note_mode_only(struct args *a, const struct cli_opt *c)
{
	int i = c->modes == CLI_OFFCPU ? CLI_KIND_OFFCPU
		: c->modes == CLI_TRACE ? CLI_KIND_TRACE : CLI_KIND_PROFILE;
	char *buf = a->only_buf[i];

	if (c->val < 256)
		snprintf(buf, sizeof(a->only_buf[i]), "-%c", c->val);
	else
		snprintf(buf, sizeof(a->only_buf[i]), "--%s", c->name);
	if (i == CLI_KIND_OFFCPU)
		a->offcpu_only = buf;
	else if (i == CLI_KIND_TRACE)
		a->trace_only = buf;
	else
		a->profile_only = buf;
}

/* One option getopt_long() returned: @opt, with its value @arg. */
static int parse_option(struct args *a, int opt, const char *arg, char **argv)
{
	const struct cli_opt *c = cli__find(opt);
	int err;

	if (c && c->modes != CLI_ALL)
		note_mode_only(a, c);
	switch (opt) {
	case 1:
		return parse_word(a, arg);
	case 'u':
	case 'k':
	case 'm':
	case 'M':
	case CLI_STATE:
		return parse_offcpu_option(a, opt, arg);
	case 'F':
		a->freq_arg = arg;
		break;
	case 'c':
		a->period_arg = arg;
		break;
	case CLI_RATE_CAP:
	case CLI_MAX_PROBES: {
		uint64_t v;

		if (parse__uint(arg, opt == CLI_RATE_CAP ? UINT64_MAX : 100000, &v) ||
		    (opt == CLI_MAX_PROBES && v == 0)) {
			errorf(opt == CLI_RATE_CAP
				       ? "--rate-cap %s: expected a number of events a second (0: no cap)"
				       : "--max-probes %s: expected a number from 1 to 100000",
			       arg);
			return EXIT_USAGE;
		}
		if (opt == CLI_RATE_CAP)
			a->o.rate_cap = v;
		else
			a->max_probes = v;
		break;
	}
	case 'C':
		a->cpu_arg = arg;
		break;
	case 'p':
	case 't':
		err = parse__id_list(arg, opt == 'p' ? &a->pids : &a->tids,
				     opt == 'p' ? &a->nr_pids : &a->nr_tids);
		if (err == -ENOMEM) {
			errorf("out of memory");
			return 1;
		}
		if (err) {
			errorf("-%c %s: expected a list of %s ids, e.g. 1234,5678", opt, arg,
			       opt == 'p' ? "process" : "thread");
			return EXIT_USAGE;
		}
		break;
	case 'U':
		a->o.user_stacks_only = 1;
		break;
	case 'K':
		a->o.kernel_stacks_only = 1;
		break;
	case 'o':
		if (!*arg) {
			errorf("-o: empty file name");
			return EXIT_USAGE;
		}
		a->o.output = arg;
		a->output_given = 1;
		break;
	case 'q':
		a->quiet = 1;
		break;
	case 'v':
		a->verbose = 1;
		break;
	case 'h':
		/* After the loop: the mode word may come later. */
		a->help = 1;
		break;
	case CLI_VERSION:
		print_version();
		return 0;
	case CLI_NO_MMAP_EVENTS:
		a->o.no_mmap_events = 1;
		break;
	case ':':
		errorf("option %s needs a value (see stkrec --help)", argv[optind - 1]);
		return EXIT_USAGE;
	case '?': {
		char word[3] = { '-', (char)optopt, '\0' };
		const char *typed = argv[optind - 1], *hint;

		/* "--help=1": optopt is the long option's val, not a letter
		 * typed; only a single-dash word names its option by optopt. */
		if (strncmp(typed, "--", 2) == 0 && optopt && strchr(typed, '=')) {
			errorf("option '%.*s' takes no value (see stkrec --help)",
			       (int)strcspn(typed, "="), typed);
			return EXIT_USAGE;
		}
		if (strncmp(typed, "--", 2) != 0 && optopt)
			typed = word;
		hint = perfopt__hint(PERFOPT_STKREC, typed);

		/* perf record's habits (-a, -g, -e) get what stkrec does instead. */
		errorf("unknown option '%.*s'%s%s (see stkrec --help)", (int)strcspn(typed, "="),
		       typed, hint ? ": " : "", hint ? hint : "");
		return EXIT_USAGE;
	}
	default:
		return parse_long_option(a, opt, arg);
	}
	return GO_ON;
}

/* The whole command line into @a; --help and --version end here. */
static int parse_args(struct args *a, int argc, char **argv)
{
	struct cli_getopt g;
	int opt_argc = argc, opt, ret;
	size_t i;

	cli__getopt_tables(&g);
	a->cmdline = join_args(argc, argv);
	/* Everything after "--" is CMD; getopt never sees it. */
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			opt_argc = (int)i;
			a->cmd = argv + i + 1;
			break;
		}
	}
	/*
	 * "-" first: words that are not options come back in order as opt
	 * 1, so the mode word (and DURATION) may stand anywhere before "--"
	 * and an option's value (-o offcpu) is never taken for one.
	 */
	opterr = 0;
	while ((opt = getopt_long(opt_argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		ret = parse_option(a, opt, optarg, argv);
		if (ret != GO_ON)
			return ret;
	}
	if (a->help) {
		usage(stdout, a->trace ? CLI_KIND_TRACE : a->offcpu ? CLI_KIND_OFFCPU : CLI_KIND_PROFILE);
		return 0;
	}
	return GO_ON;
}

/* -F HZ: a positive number, at most kernel.perf_event_max_sample_rate. */
static int check_frequency(struct args *a)
{
	unsigned long max = read_max_sample_rate();
	const char *f = a->freq_arg;
	uint64_t v;
	int err;

	err = parse__uint(f, UINT32_MAX, &v);
	if (err == -EINVAL && f[0] == '-') {
		errorf("-F %s: frequency must be a positive number of Hertz", f);
		return EXIT_USAGE;
	}
	if (err == -EINVAL) {
		errorf("-F %s: not a number; expected Hertz, e.g. -F 99", f);
		return EXIT_USAGE;
	}
	if (!err && v == 0) {
		errorf("-F 0: frequency must be at least 1 Hertz");
		return EXIT_USAGE;
	}
	if (err || (max && v > max)) {
		errorf("-F %s: above the kernel's limit of %lu Hz (sysctl kernel.perf_event_max_sample_rate)",
		       f, max);
		return EXIT_USAGE;
	}
	a->o.frequency = (unsigned int)v;
	return GO_ON;
}

/* The CPUs to sample: -C's, each of them online, or every online one. */
static int check_cpus(struct args *a)
{
	size_t nr, i, j;
	int err;

	err = cpulist__online(&a->online, &a->nr_online);
	if (err) {
		errorf("/sys/devices/system/cpu/online: %s", strerror(-err));
		return 1;
	}
	if (!a->cpu_arg) {
		a->o.cpus = a->online;
		a->o.nr_cpus = a->nr_online;
		return GO_ON;
	}
	err = cpulist__parse(a->cpu_arg, &a->cpus, &nr);
	if (err == -ENOMEM) {
		errorf("out of memory");
		return 1;
	}
	if (err) {
		errorf("-C %s: not a CPU list; expected e.g. 0-3,8", a->cpu_arg);
		return EXIT_USAGE;
	}
	for (i = 0; i < nr; i++) {
		for (j = 0; j < a->nr_online && a->online[j] != a->cpus[i]; j++)
			;
		if (j == a->nr_online) {
			char list[256];

			cpulist__format(a->online, a->nr_online, list, sizeof(list));
			errorf("-C %s: CPU %d is not online (online: %s)", a->cpu_arg, a->cpus[i],
			       list);
			return EXIT_USAGE;
		}
	}
	a->o.cpus = a->cpus;
	a->o.nr_cpus = nr;
	a->o.cpu_list = a->cpu_arg;
	return GO_ON;
}

/*
 * --rotate, --rotate-size and --keep together with -o.  Without them, -o
 * is a name as given ('%' included); with them, a pattern, which must
 * name files: a device or FIFO cannot take a capture after another.
 */
static int check_rotation(struct args *a)
{
	struct recorder_opts *o = &a->o;
	char name[4096];
	struct stat st;
	int err;

	if (!o->rotate_ns && !o->rotate_bytes) {
		if (a->keep_given) {
			errorf("--keep applies to a rotating recording only (add --rotate SECS or --rotate-size SIZE)");
			return EXIT_USAGE;
		}
		return GO_ON;
	}
	if (!a->output_given)
		o->output = CLI_DEFAULT_ROTATE_OUTPUT;
	err = rotation__expand(o->output, time(NULL), name, sizeof(name));
	if (err) {
		errorf("-o %s: %s", o->output,
		       err == -ENAMETOOLONG ? "the pattern gives too long a name"
					    : "the pattern gives no file name");
		return EXIT_USAGE;
	}
	if (lstat(name, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		errorf("-o %s: %s is not a regular file: rotating needs a file name pattern",
		       o->output, name);
		return EXIT_USAGE;
	}
	return GO_ON;
}

/* trace: at least one EVENT, each spelt right (whether this machine has
 * it is resolve_events()'s), and -c's PERIOD. */
static int check_trace(struct args *a)
{
	char why[512];
	struct ev_spec e;
	uint64_t v;
	size_t i;

	if (!a->nr_event_args) {
		errorf("trace: no EVENT given (e.g. stkrec trace t:syscalls:sys_enter_write; see stkrec trace --help)");
		return EXIT_USAGE;
	}
	for (i = 0; i < a->nr_event_args; i++) {
		if (ev_spec__parse(a->event_args[i], &e, why, sizeof(why))) {
			errorf("trace: %s: %s", a->event_args[i], why);
			return EXIT_USAGE;
		}
	}
	a->o.trace_period = 1;
	if (a->period_arg) {
		if (parse__uint(a->period_arg, UINT64_MAX >> 1, &v) || v == 0) {
			errorf("-c %s: expected a positive number of events (every PERIOD-th is counted)",
			       a->period_arg);
			return EXIT_USAGE;
		}
		a->o.trace_period = v;
	}
	return GO_ON;
}

/* trace: the events resolved on this machine (tracefs, binaries,
 * kprobes); a glob cut by --max-probes gets a warning. */
static int resolve_events(struct args *a)
{
	char why[1024];
	int err;

	err = ev_list__resolve(a->event_args, a->nr_event_args,
			       a->max_probes ? a->max_probes : CLI_DEFAULT_MAX_PROBES, &a->events,
			       why, sizeof(why));
	if (err) {
		errorf("%s", why);
		return err == -EINVAL ? EXIT_USAGE : 1;
	}
	if (a->events.capped_spec)
		errorf("warning: %s: %zu events match, more than --max-probes %llu allows: %zu events attached in all",
		       a->events.capped_spec, a->events.capped_matched,
		       (unsigned long long)(a->max_probes ? a->max_probes : CLI_DEFAULT_MAX_PROBES),
		       a->events.n);
	a->o.events = &a->events;
	return GO_ON;
}

/* The options together: what no recording could satisfy (exit 2). */
static int check_usage(struct args *a)
{
	const struct recorder_opts *o = &a->o;

	if ((a->offcpu || a->trace) && a->profile_only) {
		errorf("%s applies to profile mode only, not %s", a->profile_only, o->mode);
		return EXIT_USAGE;
	}
	if (!a->offcpu && a->offcpu_only) {
		errorf("%s applies to offcpu and offwake only (e.g. stkrec offcpu %s ...)",
		       a->offcpu_only, a->offcpu_only);
		return EXIT_USAGE;
	}
	if (!a->trace && a->trace_only) {
		errorf("%s applies to trace only (e.g. stkrec trace page-faults %s ...)",
		       a->trace_only, a->trace_only);
		return EXIT_USAGE;
	}
	if (a->trace && check_trace(a) != GO_ON)
		return EXIT_USAGE;
	if (o->user_threads_only && o->kernel_threads_only) {
		errorf("-u and -k cannot be used together (no thread is both a user and a kernel thread)");
		return EXIT_USAGE;
	}
	if (o->min_block_us > o->max_block_us) {
		errorf("-m %llu is greater than -M %llu: no block could be counted",
		       (unsigned long long)o->min_block_us, (unsigned long long)o->max_block_us);
		return EXIT_USAGE;
	}
	if (a->cmd && !a->cmd[0]) {
		errorf("no command after '--'");
		return EXIT_USAGE;
	}
	if (a->cmd && (a->nr_pids || a->nr_tids)) {
		errorf("-p/-t cannot be combined with -- CMD (CMD selects what is profiled)");
		return EXIT_USAGE;
	}
	if (o->user_stacks_only && o->kernel_stacks_only) {
		errorf("-U and -K cannot be used together (neither gives both kinds of stacks)");
		return EXIT_USAGE;
	}
	if (a->freq_arg && check_frequency(a) != GO_ON)
		return EXIT_USAGE;
	if (check_rotation(a) != GO_ON)
		return EXIT_USAGE;
	return check_cpus(a);
}

/* CAP_BPF and CAP_PERFMON, or root. */
static int check_caps(void)
{
	const char *missing = NULL;
	int err = caps__check_profiling(&missing);

	if (err == -EPERM) {
		if (geteuid() != 0)
			errorf("must run as root, or with CAP_BPF and CAP_PERFMON (missing %s)", missing);
		else
			errorf("missing %s (%s); run as root without dropping capabilities", missing,
			       strcmp(missing, "CAP_BPF") == 0	   ? "needed to load BPF programs"
			       : strcmp(missing, "CAP_PERFMON") == 0 ? "needed to sample all CPUs"
								     : "needed for BPF profiling");
		return 1;
	}
	if (err) {
		errorf("capget: %s", strerror(-err));
		return 1;
	}
	return GO_ON;
}

/* -p's processes and -t's threads exist, and -p's are processes. */
static int check_targets(const struct args *a)
{
	size_t i;

	for (i = 0; i < a->nr_pids; i++) {
		long tgid = task_tgid(a->pids[i]);

		if (tgid < 0) {
			errorf("-p %u: no such process", a->pids[i]);
			return 1;
		}
		if ((uint32_t)tgid != a->pids[i]) {
			errorf("-p %u: is a thread of process %ld (use -t %u for the thread)",
			       a->pids[i], tgid, a->pids[i]);
			return 1;
		}
	}
	for (i = 0; i < a->nr_tids; i++) {
		if (task_tgid(a->tids[i]) < 0) {
			errorf("-t %u: no such thread", a->tids[i]);
			return 1;
		}
	}
	return GO_ON;
}

/* What this machine must give a recording: kernel memory, capabilities,
 * the targets, CMD (exit 1, or 127/126 for CMD as a shell would). */
static int check_environment(struct args *a)
{
	uint64_t need = maps_kmem(a);
	uint64_t avail;
	int err;

	/* Preallocated at load: a size the machine cannot hold would push
	 * it into swap or the OOM killer, or fail after seconds of trying.
	 * Half of what is available leaves the rest room to run. */
	if (kmem__available("/proc/meminfo", &avail) == 0 && need > avail / 2) {
		char n[32], m[32];

		status__format_size(need, n, sizeof(n));
		status__format_size(avail, m, sizeof(m));
		errorf("--stack-storage-size %u: the BPF maps would take %s of kernel memory, more than half of the %s available (MemAvailable); choose a smaller size",
		       a->o.stack_storage_size, n, m);
		return 1;
	}
	err = check_caps();
	if (err != GO_ON)
		return err;
	if (a->trace) {
		err = resolve_events(a);
		if (err != GO_ON)
			return err;
	}
	err = check_targets(a);
	if (err != GO_ON || !a->cmd)
		return err;
	err = command_find(a->cmd[0]);
	/* As bash and env: 127 not found, 126 found but not runnable. */
	if (err == -ENOENT) {
		errorf("%s: command not found", a->cmd[0]);
		return EXIT_CMD_NOT_FOUND;
	}
	if (err) {
		errorf("%s: %s", a->cmd[0], strerror(-err));
		return EXIT_CMD_NOT_EXECUTABLE;
	}
	return GO_ON;
}

/* The warnings a started recording may deserve before it samples. */
static void warn_started(const struct args *a, struct recorder *rec)
{
	const struct recorder_opts *o = &a->o;
	/* DURATION counts from here, but a setup this long is worth a word
	 * when the preallocation of big maps is what makes it long (a
	 * loaded machine slows any setup: no reason to warn). */
	uint64_t setup = recorder__setup_ns(rec);
	uint64_t maps = maps_kmem(a);

	if (setup > 2000000000ULL && maps >= (256ULL << 20) &&
	    (!o->duration_ns || setup > o->duration_ns / 4)) {
		char t[32], n[32];

		status__format_seconds(setup, t, sizeof(t));
		status__format_size(maps, n, sizeof(n));
		errorf("warning: setup took %s before sampling started (preallocating %s of BPF maps for --stack-storage-size %u); DURATION counts from then",
		       t, n, o->stack_storage_size);
	}
	/* The one line --unwind's fallback to frame pointers gets. */
	if (o->unwind != RECORDER_UNWIND_FP && strncmp(recorder__unwind_state(rec), "fp (", 4) == 0)
		errorf("warning: user stacks by frame pointer only: %s",
		       recorder__unwind_state(rec) + 4);
}

/* The recording itself: new, start, run, finish into @res. */
static int record(struct args *a, sigset_t *orig, struct recorder_result *res)
{
	struct recorder_opts *o = &a->o;
	struct recorder *rec;
	int err, ret = 1;

	libbpf_set_print(a->verbose ? libbpf_print_verbose : libbpf_print_silent);
	o->pids = a->pids;
	o->nr_pids = a->nr_pids;
	o->tids = a->tids;
	o->nr_tids = a->nr_tids;
	o->cmd = a->cmd;
	o->cmdline = a->cmdline;
	o->stop = &stop_requested;
	if (o->rotate_ns || o->rotate_bytes) {
		struct sigaction sa = {};

		/* As the stop signals' handler: no SA_RESTART. */
		sa.sa_handler = on_rotate_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGHUP, &sa, NULL);
		o->rotate = &rotate_requested;
	}
	o->wait_mask = orig;
	if (!a->quiet && isatty(STDERR_FILENO))
		o->on_status = on_status;

	rec = recorder__new(o);
	if (!rec) {
		errorf("%s", strerror(errno));
		return 1;
	}
	err = recorder__start(rec);
	if (err) {
		errorf("%s", recorder__errmsg(rec));
		/* As a shell: 127 not found, 126 found but not executable. */
		if (recorder__cmd_exec_errno(rec))
			ret = recorder__cmd_exec_errno(rec) == ENOENT ? EXIT_CMD_NOT_FOUND
								       : EXIT_CMD_NOT_EXECUTABLE;
		goto out;
	}
	warn_started(a, rec);
	err = recorder__run(rec);
	if (err)
		errorf("%s", recorder__errmsg(rec));
	else if (status_shown)
		fputs("\r\033[K", stderr);
	status_shown = 0;
	if (recorder__finish(rec, res) && !err) {
		err = -EIO;
		errorf("%s", recorder__errmsg(rec));
	}
	if (!err)
		ret = GO_ON;
out:
	recorder__free(rec);
	return ret;
}

/*
 * What --user-memory left out of the capture, in one line: symbols with no
 * room to be remembered as written, and perf map lines not kept (with the
 * JIT addresses that then found no name).  Tables dropped from the cache
 * and read again cost time, not names: STAT only.
 */
static void warn_user_memory(const struct recorder_result *res)
{
	char what[256] = "";
	size_t n = 0;

	if (!res->symbols_skipped && !res->perf_map_lines_skipped)
		return;
	if (res->symbols_skipped)
		n += (size_t)snprintf(what, sizeof(what), "%llu symbol%s not embedded",
				      (unsigned long long)res->symbols_skipped,
				      res->symbols_skipped == 1 ? "" : "s");
	if (res->perf_map_lines_skipped && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%llu perf map line%s not kept",
				      n ? ", " : "", (unsigned long long)res->perf_map_lines_skipped,
				      res->perf_map_lines_skipped == 1 ? "" : "s");
	if (res->perf_map_addrs_unnamed && n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, " (%llu JIT address%s left unnamed)",
			 (unsigned long long)res->perf_map_addrs_unnamed,
			 res->perf_map_addrs_unnamed == 1 ? "" : "es");
	errorf("--user-memory %llu MiB reached: %s; raise --user-memory",
	       (unsigned long long)(res->user_memory >> 20), what);
}

/*
 * Files a traced process named (its perf map, its binaries) that it could
 * not have read itself: not read, so their names are missing.  One line.
 * The count is of opens refused: one file is tried for each use (its
 * build-id, its unwind table, its symbols), so it may count up to three.
 */
static void warn_refused(const struct recorder_result *res)
{
	if (!res->files_refused)
		return;
	errorf("warning: files named by traced processes not read: the process could not read them itself (%llu open%s refused, a file once for each use: build-id, unwind table, symbols; STAT files_refused)%s",
	       (unsigned long long)res->files_refused, res->files_refused == 1 ? "" : "s",
	       res->perf_maps_refused ? "; a perf map must also be owned by its process's user or root" : "");
}

/* The lines after a recording, and stkrec's exit status for it. */
static int summarize(const struct args *a, const struct recorder_result *res)
{
	const struct recorder_opts *o = &a->o;

	if (!a->quiet && res->end_reason && strcmp(res->end_reason, "targets") == 0) {
		char dur[32] = "";

		if (o->duration_ns)
			status__format_seconds(o->duration_ns, dur, sizeof(dur));
		errorf("%s: nothing left to record, stopped%s%s",
		       a->nr_pids + a->nr_tids > 1 ? "every -p/-t target has exited"
		       : a->nr_pids		   ? "the -p process has exited"
						   : "the -t thread has exited",
		       dur[0] ? " before the DURATION of " : "", dur);
	}
	warn_throttled(o, res);
	if (res->stacks_lost)
		errorf("warning: %llu of %llu %s have no stack: the kernel's ring of new stacks was full "
		       "(--stack-storage-size %u); increase --stack-storage-size",
		       (unsigned long long)res->stacks_lost, (unsigned long long)res->samples,
		       a->offcpu ? "episodes" : a->trace ? "events" : "samples", o->stack_storage_size);
	warn_user_memory(res);
	warn_refused(res);
	if (res->keep_error[0])
		errorf("warning: %s (more files kept than --keep %u)", res->keep_error, o->keep);
	if (!a->quiet && res->files) {
		char size[32], deleted[64] = "";

		status__format_size(res->bytes, size, sizeof(size));
		if (res->files_deleted)
			snprintf(deleted, sizeof(deleted), ", %llu deleted by --keep",
				 (unsigned long long)res->files_deleted);
		errorf("wrote %llu file%s, %s to %s%s: %llu %s, %llu stacks, %s",
		       (unsigned long long)res->files, res->files == 1 ? "" : "s", res->first_output,
		       res->last_output, deleted, (unsigned long long)res->samples,
		       a->offcpu ? "blocking episodes" : a->trace ? "events" : "samples",
		       (unsigned long long)res->stacks,
		       size);
	} else if (!a->quiet) {
		char size[32];

		status__format_size(res->bytes, size, sizeof(size));
		if (a->offcpu) {
			char blocked[32];

			status__format_seconds(res->blocked_ns, blocked, sizeof(blocked));
			errorf("wrote %s: %llu blocking episodes (%s blocked), %llu stacks, %s",
			       o->output, (unsigned long long)res->samples, blocked,
			       (unsigned long long)res->stacks, size);
		} else {
			errorf("wrote %s: %llu %s, %llu stacks, %s", o->output,
			       (unsigned long long)res->samples, a->trace ? "events" : "samples",
			       (unsigned long long)res->stacks, size);
		}
	}
	/* DURATION stopped CMD: the recording is what was asked for. */
	return a->cmd && res->cmd_exit_code >= 0 && strcmp(res->end_reason, "duration") != 0
		       ? res->cmd_exit_code
		       : 0;
}

int main(int argc, char **argv)
{
	struct args a = {
		.o = {
			.output = "trace.stk",
			.mode = "profile",
			.frequency = CLI_DEFAULT_FREQUENCY,
			.stack_storage_size = CLI_DEFAULT_STACK_STORAGE,
			.flush_interval_ns = 1000000000ULL,
			.min_block_us = 1,
			.max_block_us = UINT64_MAX,
			.user_memory = RECORDER_USER_MEMORY,
			.rate_cap = CLI_DEFAULT_RATE_CAP,
			.trace_period = 1,
		},
	};
	struct recorder_result res = {};
	sigset_t orig;
	int ret;

	/*
	 * Large blocks (symbol tables, perf maps) from mmap(), and back to
	 * the system when freed.  glibc's default threshold rises to the
	 * size of the largest block freed, after which tables of that size
	 * come from the heap, whose holes stay resident: recording 12 tables
	 * of 20 MB in turn under --user-memory 32, that varied the peak RSS
	 * from 73 to 129 MB.  Setting the threshold fixes it.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	signals_setup(&orig);
	ret = parse_args(&a, argc, argv);
	if (ret == GO_ON)
		ret = check_usage(&a);
	if (ret == GO_ON)
		ret = check_environment(&a);
	if (ret == GO_ON)
		ret = record(&a, &orig, &res);
	if (ret == GO_ON)
		ret = summarize(&a, &res);
	ev_list__free(&a.events);
	free(a.event_args);
	free(a.pids);
	free(a.tids);
	free(a.cpus);
	free(a.online);
	free(a.cmdline);
	return ret;
}
