// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkrec: record stack samples into a .stk file (BPF, aggregated in the
 * kernel).  This front-end parses options, checks them, prints and maps
 * errors to exit codes; recorder.c does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>
#include <zstd.h>

#include "caps.h"
#include "cpulist.h"
#include "parse.h"
#include "esym.h"
#include "kmem.h"
#include "modeobj.h"
#include "recorder.h"
#include "status.h"
#include "stk.h"
#include "stk_escape.h"

#define EXIT_USAGE 2
#define EXIT_CMD_NOT_FOUND 127 /* as shells, env and timeout */
#define EXIT_CMD_NOT_EXECUTABLE 126

#define DEFAULT_FREQUENCY 49
#define DEFAULT_STACK_STORAGE 16384
#define MAX_STACK_STORAGE (1u << 22)
#define MAX_DURATION_S (100ULL * 365 * 24 * 3600)
#define MAX_FLUSH_INTERVAL_S 3600
/* Task states that exist (include/linux/sched.h): up to TASK_FROZEN 0x8000;
 * TASK_STATE_MAX is 0x10000 since Linux 6.1. */
#define TASK_STATE_BITS 0xffffu

static volatile sig_atomic_t stop_requested;
static int status_shown;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: stkrec [profile] [OPTIONS] [DURATION]\n"
		"       stkrec [profile] [OPTIONS] [DURATION] -- CMD [ARGS...]\n"
		"\n"
		"Sample stack traces of every CPU at a timed interval and write them, with\n"
		"what is needed to symbolize them later, into a .stk file.  Stacks are\n"
		"counted in the kernel; nothing is symbolized here (see stkreport).\n"
		"\n"
		"Options:\n"
		"  -F, --frequency HZ         sample frequency, Hertz (default %d; at most\n"
		"                             kernel.perf_event_max_sample_rate)\n"
		"  -p, --pid PID[,PID...]     profile these processes only (until they are gone)\n"
		"  -t, --tid TID[,TID...]     profile these threads only (until they are gone)\n"
		"  -U, --user-stacks-only     user space stacks only (no kernel stacks)\n"
		"  -K, --kernel-stacks-only   kernel stacks only (no user stacks)\n"
		"  -C, --cpu LIST             sample these CPUs only, e.g. 0-3,8 (default: all online)\n"
		"      --stack-storage-size N unique stacks the kernel remembers sending\n"
		"                             (default %d), and 64 bytes each (256 KiB at\n"
		"                             least) of ring for new stacks; preallocated with\n"
		"                             the counts maps: about 420 bytes of kernel\n"
		"                             memory per entry (16384: 6.5 MiB; 4194304:\n"
		"                             1.7 GiB); more than half of MemAvailable is refused\n"
		"      --kallsyms=WHICH       'covering' (default): store the kernel symbols that\n"
		"                             cover recorded addresses; 'full': the whole table\n"
		"      --embed-symbols=WHICH  'covering' (default): store the function symbols of\n"
		"                             the binaries and perf maps (JIT) that cover recorded\n"
		"                             user addresses; 'full': their whole tables; 'none'\n"
		"      --no-mmap-events       read process mappings from /proc/PID/maps only, not\n"
		"                             as they happen (short-lived processes then lose\n"
		"                             their user frames)\n"
		"      --unwind=HOW           user stacks: 'auto' (default) unwinds with the\n"
		"                             binaries' .eh_frame tables where they have them\n"
		"                             and by frame pointer elsewhere; 'dwarf' tables\n"
		"                             only; 'fp' frame pointers only\n"
		"      --unwind-memory MB     memory for unwind tables (default 16)\n"
		"  -o, --output FILE          write to FILE (default trace.stk)\n"
		"      --flush-interval SECS  write recorded data every SECS seconds (default 1)\n"
		"  -q, --quiet                no status line and no summary\n"
		"  -v, --verbose              print libbpf's messages\n"
		"  -h, --help                 show this help\n"
		"      --version              show the version (and libbpf's, elfutils', zstd's)\n"
		"  DURATION                   seconds to record from when sampling starts\n"
		"                             (default: until Ctrl-C); with -- CMD at most\n"
		"                             that long: CMD then gets SIGTERM\n"
		"  -- CMD [ARGS...]           run CMD once everything is attached, profile it and\n"
		"                             every process it starts, stop when it exits\n"
		"\n"
		"The mode word and DURATION may stand anywhere before --.\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.  With -- CMD: CMD's exit\n"
		"status (128+N if a signal N killed it; 127 if it is not found, 126 if it\n"
		"cannot be executed), 0 if DURATION ended the recording first, or 1 if the\n"
		"recording failed.\n"
		"\n"
		"Examples:\n"
		"  stkrec                     # all CPUs at 49 Hz until Ctrl-C, into trace.stk\n"
		"  stkrec -F 99 10            # 99 Hz for 10 seconds\n"
		"  stkrec -p 185 -o app.stk   # only process 185\n"
		"  stkrec -U 5                # user stacks only\n"
		"  stkrec -- make test        # a command and everything it starts\n"
		"\n"
		"Other modes: stkrec offcpu, stkrec offwake (see stkrec offcpu --help).\n",
		DEFAULT_FREQUENCY, DEFAULT_STACK_STORAGE);
}

/* offcputime / offwaketime's options. */
static void usage_offcpu(FILE *f)
{
	fprintf(f,
		"Usage: stkrec offcpu|offwake [OPTIONS] [DURATION]\n"
		"       stkrec offcpu|offwake [OPTIONS] [DURATION] -- CMD [ARGS...]\n"
		"\n"
		"offcpu:  time blocked (off CPU), by the blocked thread's user and kernel\n"
		"         stacks (as offcputime).\n"
		"offwake: the same, also by the stacks of the thread that woke it (as\n"
		"         offwaketime).  Report with stkreport; values are microseconds.\n"
		"\n"
		"Options:\n"
		"  -p, --pid PID[,PID...]     trace these processes only (until they are gone)\n"
		"  -t, --tid TID[,TID...]     trace these threads only (until they are gone)\n"
		"  -u, --user-threads-only    user threads only (no kernel threads)\n"
		"  -k, --kernel-threads-only  kernel threads only (no user threads)\n"
		"  -U, --user-stacks-only     user space stacks only (no kernel stacks)\n"
		"  -K, --kernel-stacks-only   kernel stacks only (no user stacks)\n"
		"  -m, --min-block-time US    count only blocks of at least US microseconds\n"
		"                             (default 1)\n"
		"  -M, --max-block-time US    count only blocks of at most US microseconds\n"
		"                             (default unlimited)\n"
		"      --state MASK           only threads that went off CPU in one of these\n"
		"                             states (a bit mask: 1 interruptible sleep, 2\n"
		"                             uninterruptible, ...; 0: preempted while running)\n"
		"      --stack-storage-size N unique stacks the kernel remembers sending\n"
		"                             (default %d), and 64 bytes each (256 KiB at\n"
		"                             least) of ring for new stacks; preallocated with\n"
		"                             the counts maps: about 470 bytes of kernel\n"
		"                             memory per entry (16384: 7.3 MiB; 4194304:\n"
		"                             1.9 GiB); more than half of MemAvailable is refused\n"
		"      --kallsyms=WHICH       'covering' (default) or 'full' kernel symbols\n"
		"      --embed-symbols=WHICH  'covering' (default), 'full' or 'none' user symbols\n"
		"      --no-mmap-events       read process mappings from /proc/PID/maps only\n"
		"      --unwind=HOW           'auto' (default), 'dwarf' or 'fp' user stacks\n"
		"      --unwind-memory MB     memory for unwind tables (default 16)\n"
		"  -o, --output FILE          write to FILE (default trace.stk)\n"
		"      --flush-interval SECS  write recorded data every SECS seconds (default 1)\n"
		"  -q, --quiet                no status line and no summary\n"
		"  -v, --verbose              print libbpf's messages\n"
		"  -h, --help                 show this help\n"
		"      --version              show the version (and libbpf's, elfutils', zstd's)\n"
		"  DURATION                   seconds to record from when sampling starts\n"
		"                             (default: until Ctrl-C); with -- CMD at most\n"
		"                             that long: CMD then gets SIGTERM\n"
		"  -- CMD [ARGS...]           run CMD once everything is attached, trace it and\n"
		"                             every process it starts, stop when it exits\n"
		"\n"
		"The mode word and DURATION may stand anywhere before --.\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error; with -- CMD as for profile.\n"
		"\n"
		"Examples:\n"
		"  stkrec offcpu 5               # all threads for 5 seconds\n"
		"  stkrec offwake -p 185 -m 1000 # process 185, blocks of 1 ms or more\n"
		"  stkrec offcpu -u --state 2    # user threads in uninterruptible sleep\n"
		"  stkrec offwake -- ./server    # a command and everything it starts\n",
		DEFAULT_STACK_STORAGE);
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
	return strcmp(s, "profile") == 0 || strcmp(s, "offcpu") == 0 || strcmp(s, "offwake") == 0;
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

enum {
	OPT_STACK_STORAGE = 256,
	OPT_FLUSH_INTERVAL,
	OPT_KALLSYMS,
	OPT_EMBED_SYMBOLS,
	OPT_VERSION,
	OPT_STATE,
	OPT_NO_MMAP_EVENTS,
	OPT_UNWIND,
	OPT_UNWIND_MEMORY,
};

static const struct option long_opts[] = {
	{ "frequency", required_argument, NULL, 'F' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "user-threads-only", no_argument, NULL, 'u' },
	{ "kernel-threads-only", no_argument, NULL, 'k' },
	{ "min-block-time", required_argument, NULL, 'm' },
	{ "max-block-time", required_argument, NULL, 'M' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "cpu", required_argument, NULL, 'C' },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "embed-symbols", required_argument, NULL, OPT_EMBED_SYMBOLS },
	{ "no-mmap-events", no_argument, NULL, OPT_NO_MMAP_EVENTS },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
	{ "output", required_argument, NULL, 'o' },
	{ "flush-interval", required_argument, NULL, OPT_FLUSH_INTERVAL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{},
};

/* Kernel memory the BPF maps of a recording with @o take (kmem.h). */
static uint64_t maps_kmem(const struct recorder_opts *o, int offcpu)
{
	return kmem__recording_bytes(o->stack_storage_size, modeobj__stack_ring_bytes(o),
				     modeobj__counts_entries(o), offcpu);
}

int main(int argc, char **argv)
{
	struct recorder_opts o = {
		.output = "trace.stk",
		.mode = "profile",
		.frequency = DEFAULT_FREQUENCY,
		.stack_storage_size = DEFAULT_STACK_STORAGE,
		.flush_interval_ns = 1000000000ULL,
		.min_block_us = 1,
		.max_block_us = UINT64_MAX,
	};
	/* Options of one kind of mode only, as given, to refuse them in the
	 * other with one clear line. */
	const char *profile_only = NULL, *offcpu_only = NULL;
	int offcpu = 0;
	const char *freq_arg = NULL, *cpu_arg = NULL, *missing = NULL;
	const char *mode_word = NULL, *duration_arg = NULL;
	int help = 0;
	uint32_t *pids = NULL, *tids = NULL;
	size_t nr_pids = 0, nr_tids = 0, i, nr_online = 0;
	int *cpus = NULL, *online = NULL;
	int opt_argc = argc, quiet = 0, verbose = 0, opt, err, ret = 1;
	char **cmd = NULL, *cmdline = NULL;
	struct recorder_result res = {};
	struct recorder *rec = NULL;
	struct sigaction sa = {};
	sigset_t block, orig;
	uint64_t v;

	/*
	 * Signals first, before anything else.  SIGINT, SIGTERM and SIGHUP
	 * (the terminal closed) only stop the recording: the handler sets a
	 * flag, installed without SA_RESTART so that a blocking call they
	 * interrupt returns EINTR.  Installed this early because a
	 * background job of a non-interactive shell starts with SIGINT
	 * ignored (POSIX), and a stop sent while the options are checked or
	 * the BPF programs load must neither be lost (stkrec would then run
	 * to its end) nor kill stkrec with the default action.  Blocked
	 * while stkrec sets up, where an EINTR would only fail the start:
	 * a stop stays pending and ends the recording, with a closed file,
	 * as soon as it starts.  The recorder takes them (@orig) while it
	 * waits for the output's reader and from the start of the
	 * recording on, in the wait and in any work that could block.  Only
	 * the window between exec and main() remains.
	 */
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
	sigprocmask(SIG_BLOCK, &block, &orig);
	/* Even if whoever started us had them blocked: the recorder takes them. */
	sigdelset(&orig, SIGINT);
	sigdelset(&orig, SIGTERM);
	sigdelset(&orig, SIGHUP);

	cmdline = join_args(argc, argv);
	/* Everything after "--" is CMD; getopt never sees it. */
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			opt_argc = (int)i;
			cmd = argv + i + 1;
			break;
		}
	}
	/*
	 * "-" first: words that are not options come back in order as opt
	 * 1, so the mode word (and DURATION) may stand anywhere before "--"
	 * and an option's value (-o offcpu) is never taken for one.
	 */
	opterr = 0;
	while ((opt = getopt_long(opt_argc, argv, "-:F:p:t:UKukm:M:C:o:qvh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 1:
			if (is_mode_word(optarg)) {
				if (mode_word && strcmp(mode_word, optarg) != 0) {
					errorf("two modes given, '%s' and '%s': choose one", mode_word,
					       optarg);
					ret = EXIT_USAGE;
					goto out;
				}
				mode_word = optarg;
				offcpu = strcmp(optarg, "profile") != 0;
				if (offcpu)
					o.mode = optarg;
				break;
			}
			if (parse__seconds(optarg, MAX_DURATION_S, &v)) {
				if (strchr("0123456789.+-", optarg[0]))
					errorf("duration '%s': expected a positive number of seconds",
					       optarg);
				else
					errorf("'%s': neither a mode (profile, offcpu, offwake) nor a DURATION in seconds",
					       optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			if (duration_arg) {
				errorf("unexpected argument '%s': DURATION is given already ('%s')", optarg,
				       duration_arg);
				ret = EXIT_USAGE;
				goto out;
			}
			duration_arg = optarg;
			o.duration_ns = v;
			break;
		case 'F':
			freq_arg = optarg;
			profile_only = "-F";
			break;
		case 'u':
			o.user_threads_only = 1;
			offcpu_only = "-u";
			break;
		case 'k':
			o.kernel_threads_only = 1;
			offcpu_only = "-k";
			break;
		case 'm':
		case 'M':
			/* As offwaketime: a positive number of microseconds. */
			if (parse__uint(optarg, UINT64_MAX, &v) || v == 0) {
				errorf("-%c %s: expected a positive number of microseconds", opt, optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			if (opt == 'm')
				o.min_block_us = v;
			else
				o.max_block_us = v;
			offcpu_only = opt == 'm' ? "-m" : "-M";
			break;
		case OPT_STATE:
			if (parse__uint(optarg, UINT32_MAX, &v)) {
				errorf("--state %s: expected a task state bit mask, e.g. 2 for uninterruptible sleep",
				       optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			if (v & ~(uint64_t)TASK_STATE_BITS) {
				errorf("--state %s: unknown task state bits 0x%llx (known: 0x%x, see include/linux/sched.h)",
				       optarg, (unsigned long long)(v & ~(uint64_t)TASK_STATE_BITS),
				       TASK_STATE_BITS);
				ret = EXIT_USAGE;
				goto out;
			}
			o.state_filter = 1;
			o.state_mask = (uint32_t)v;
			offcpu_only = "--state";
			break;
		case 'p':
		case 't':
			err = parse__id_list(optarg, opt == 'p' ? &pids : &tids,
					     opt == 'p' ? &nr_pids : &nr_tids);
			if (err == -ENOMEM) {
				errorf("out of memory");
				goto out;
			}
			if (err) {
				errorf("-%c %s: expected a list of %s ids, e.g. 1234,5678", opt, optarg,
				       opt == 'p' ? "process" : "thread");
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case 'U':
			o.user_stacks_only = 1;
			break;
		case 'K':
			o.kernel_stacks_only = 1;
			break;
		case 'C':
			cpu_arg = optarg;
			profile_only = "-C";
			break;
		case 'o':
			if (!*optarg) {
				errorf("-o: empty file name");
				ret = EXIT_USAGE;
				goto out;
			}
			o.output = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			/* After the loop: the mode word may come later. */
			help = 1;
			break;
		case OPT_VERSION:
			print_version();
			ret = 0;
			goto out;
		case OPT_STACK_STORAGE:
			if (parse__uint(optarg, MAX_STACK_STORAGE, &v) || v == 0) {
				errorf("--stack-storage-size %s: expected a number from 1 to %u", optarg,
				       MAX_STACK_STORAGE);
				ret = EXIT_USAGE;
				goto out;
			}
			o.stack_storage_size = (uint32_t)v;
			break;
		case OPT_FLUSH_INTERVAL:
			if (parse__seconds(optarg, MAX_FLUSH_INTERVAL_S, &v)) {
				errorf("--flush-interval %s: expected seconds from 0.001 to %d", optarg,
				       MAX_FLUSH_INTERVAL_S);
				ret = EXIT_USAGE;
				goto out;
			}
			o.flush_interval_ns = v;
			break;
		case OPT_KALLSYMS:
			if (strcmp(optarg, "full") == 0) {
				o.kallsyms_full = 1;
			} else if (strcmp(optarg, "covering") != 0) {
				errorf("--kallsyms=%s: expected 'covering' or 'full'", optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_EMBED_SYMBOLS:
			if (strcmp(optarg, "full") == 0) {
				o.embed_symbols = ESYM_FULL;
			} else if (strcmp(optarg, "none") == 0) {
				o.embed_symbols = ESYM_NONE;
			} else if (strcmp(optarg, "covering") != 0) {
				errorf("--embed-symbols=%s: expected 'covering', 'full' or 'none'", optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_NO_MMAP_EVENTS:
			o.no_mmap_events = 1;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "auto") == 0) {
				o.unwind = RECORDER_UNWIND_AUTO;
			} else if (strcmp(optarg, "dwarf") == 0) {
				o.unwind = RECORDER_UNWIND_DWARF;
			} else if (strcmp(optarg, "fp") == 0) {
				o.unwind = RECORDER_UNWIND_FP;
			} else {
				errorf("--unwind=%s: expected 'auto', 'dwarf' or 'fp'", optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_UNWIND_MEMORY: {
			char *end;
			unsigned long long mb;

			errno = 0;
			mb = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || mb < 1 || mb > 16384) {
				errorf("--unwind-memory %s: expected megabytes from 1 to 16384", optarg);
				ret = EXIT_USAGE;
				goto out;
			}
			o.unwind_memory = mb << 20;
			break;
		}
		case ':':
			errorf("option %s needs a value (see stkrec --help)", argv[optind - 1]);
			ret = EXIT_USAGE;
			goto out;
		default:
			if (optopt)
				errorf("unknown option '-%c' (see stkrec --help)", optopt);
			else
				errorf("unknown option '%s' (see stkrec --help)", argv[optind - 1]);
			ret = EXIT_USAGE;
			goto out;
		}
	}

	if (help) {
		if (offcpu)
			usage_offcpu(stdout);
		else
			usage(stdout);
		ret = 0;
		goto out;
	}

	/* ---- usage checks (exit 2) ---- */
	if (offcpu && profile_only) {
		errorf("%s applies to profile mode only, not %s", profile_only, o.mode);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!offcpu && offcpu_only) {
		errorf("%s applies to offcpu and offwake only (e.g. stkrec offcpu %s ...)", offcpu_only,
		       offcpu_only);
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.user_threads_only && o.kernel_threads_only) {
		errorf("-u and -k cannot be used together (no thread is both a user and a kernel thread)");
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.min_block_us > o.max_block_us) {
		errorf("-m %llu is greater than -M %llu: no block could be counted",
		       (unsigned long long)o.min_block_us, (unsigned long long)o.max_block_us);
		ret = EXIT_USAGE;
		goto out;
	}
	if (cmd && !cmd[0]) {
		errorf("no command after '--'");
		ret = EXIT_USAGE;
		goto out;
	}
	if (cmd && (nr_pids || nr_tids)) {
		errorf("-p/-t cannot be combined with -- CMD (CMD selects what is profiled)");
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.user_stacks_only && o.kernel_stacks_only) {
		errorf("-U and -K cannot be used together (neither gives both kinds of stacks)");
		ret = EXIT_USAGE;
		goto out;
	}
	if (freq_arg) {
		unsigned long max = read_max_sample_rate();

		err = parse__uint(freq_arg, UINT32_MAX, &v);
		if (err == -EINVAL && freq_arg[0] == '-') {
			errorf("-F %s: frequency must be a positive number of Hertz", freq_arg);
			ret = EXIT_USAGE;
			goto out;
		}
		if (err == -EINVAL) {
			errorf("-F %s: not a number; expected Hertz, e.g. -F 99", freq_arg);
			ret = EXIT_USAGE;
			goto out;
		}
		if (!err && v == 0) {
			errorf("-F 0: frequency must be at least 1 Hertz");
			ret = EXIT_USAGE;
			goto out;
		}
		if (err || (max && v > max)) {
			errorf("-F %s: above the kernel's limit of %lu Hz (sysctl kernel.perf_event_max_sample_rate)",
			       freq_arg, max);
			ret = EXIT_USAGE;
			goto out;
		}
		o.frequency = (unsigned int)v;
	}
	err = cpulist__online(&online, &nr_online);
	if (err) {
		errorf("/sys/devices/system/cpu/online: %s", strerror(-err));
		goto out;
	}
	if (cpu_arg) {
		size_t nr, j;

		err = cpulist__parse(cpu_arg, &cpus, &nr);
		if (err == -ENOMEM) {
			errorf("out of memory");
			goto out;
		}
		if (err) {
			errorf("-C %s: not a CPU list; expected e.g. 0-3,8", cpu_arg);
			ret = EXIT_USAGE;
			goto out;
		}
		for (i = 0; i < nr; i++) {
			for (j = 0; j < nr_online && online[j] != cpus[i]; j++)
				;
			if (j == nr_online) {
				char list[256];

				cpulist__format(online, nr_online, list, sizeof(list));
				errorf("-C %s: CPU %d is not online (online: %s)", cpu_arg, cpus[i], list);
				ret = EXIT_USAGE;
				goto out;
			}
		}
		o.cpus = cpus;
		o.nr_cpus = nr;
		o.cpu_list = cpu_arg;
	} else {
		o.cpus = online;
		o.nr_cpus = nr_online;
	}

	/* ---- environment checks (exit 1) ---- */
	{
		uint64_t need = maps_kmem(&o, offcpu);
		uint64_t avail;

		/* Preallocated at load: a size the machine cannot hold
		 * would push it into swap or the OOM killer, or fail
		 * after seconds of trying.  Half of what is available
		 * leaves the rest room to run. */
		if (kmem__available("/proc/meminfo", &avail) == 0 && need > avail / 2) {
			char n[32], a[32];

			status__format_size(need, n, sizeof(n));
			status__format_size(avail, a, sizeof(a));
			errorf("--stack-storage-size %u: the BPF maps would take %s of kernel memory, more than half of the %s available (MemAvailable); choose a smaller size",
			       o.stack_storage_size, n, a);
			goto out;
		}
	}
	err = caps__check_profiling(&missing);
	if (err == -EPERM) {
		if (geteuid() != 0)
			errorf("must run as root, or with CAP_BPF and CAP_PERFMON (missing %s)", missing);
		else
			errorf("missing %s (%s); run as root without dropping capabilities", missing,
			       strcmp(missing, "CAP_BPF") == 0	   ? "needed to load BPF programs"
			       : strcmp(missing, "CAP_PERFMON") == 0 ? "needed to sample all CPUs"
								     : "needed for BPF profiling");
		goto out;
	}
	if (err) {
		errorf("capget: %s", strerror(-err));
		goto out;
	}
	for (i = 0; i < nr_pids; i++) {
		long tgid = task_tgid(pids[i]);

		if (tgid < 0) {
			errorf("-p %u: no such process", pids[i]);
			goto out;
		}
		if ((uint32_t)tgid != pids[i]) {
			errorf("-p %u: is a thread of process %ld (use -t %u for the thread)", pids[i],
			       tgid, pids[i]);
			goto out;
		}
	}
	for (i = 0; i < nr_tids; i++) {
		if (task_tgid(tids[i]) < 0) {
			errorf("-t %u: no such thread", tids[i]);
			goto out;
		}
	}
	if (cmd) {
		err = command_find(cmd[0]);
		/* As bash and env: 127 not found, 126 found but not runnable. */
		if (err == -ENOENT) {
			errorf("%s: command not found", cmd[0]);
			ret = EXIT_CMD_NOT_FOUND;
			goto out;
		}
		if (err) {
			errorf("%s: %s", cmd[0], strerror(-err));
			ret = EXIT_CMD_NOT_EXECUTABLE;
			goto out;
		}
	}

	/* ---- record ---- */
	libbpf_set_print(verbose ? libbpf_print_verbose : libbpf_print_silent);
	o.pids = pids;
	o.nr_pids = nr_pids;
	o.tids = tids;
	o.nr_tids = nr_tids;
	o.cmd = cmd;
	o.cmdline = cmdline;
	o.stop = &stop_requested;
	o.wait_mask = &orig;
	if (!quiet && isatty(STDERR_FILENO))
		o.on_status = on_status;

	rec = recorder__new(&o);
	if (!rec) {
		errorf("%s", strerror(errno));
		goto out;
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
	/* DURATION counts from here, but a setup this long is worth a word
	 * when the preallocation of big maps is what makes it long (a
	 * loaded machine slows any setup: no reason to warn). */
	{
		uint64_t setup = recorder__setup_ns(rec);
		uint64_t maps = maps_kmem(&o, offcpu);

		if (setup > 2000000000ULL && maps >= (256ULL << 20) &&
		    (!o.duration_ns || setup > o.duration_ns / 4)) {
			char t[32], n[32];

			status__format_seconds(setup, t, sizeof(t));
			status__format_size(maps, n, sizeof(n));
			errorf("warning: setup took %s before sampling started (preallocating %s of BPF maps for --stack-storage-size %u); DURATION counts from then",
			       t, n, o.stack_storage_size);
		}
	}
	/* The one line --unwind's fallback to frame pointers gets. */
	if (o.unwind != RECORDER_UNWIND_FP && strncmp(recorder__unwind_state(rec), "fp (", 4) == 0)
		errorf("warning: user stacks by frame pointer only: %s",
		       recorder__unwind_state(rec) + 4);
	err = recorder__run(rec);
	if (err)
		errorf("%s", recorder__errmsg(rec));
	else if (status_shown)
		fputs("\r\033[K", stderr);
	status_shown = 0;
	if (recorder__finish(rec, &res) && !err) {
		err = -EIO;
		errorf("%s", recorder__errmsg(rec));
	}
	if (err)
		goto out;
	if (!quiet && res.end_reason && strcmp(res.end_reason, "targets") == 0) {
		char dur[32] = "";

		if (o.duration_ns)
			status__format_seconds(o.duration_ns, dur, sizeof(dur));
		errorf("%s: nothing left to record, stopped%s%s",
		       nr_pids + nr_tids > 1 ? "every -p/-t target has exited"
		       : nr_pids		 ? "the -p process has exited"
						 : "the -t thread has exited",
		       dur[0] ? " before the DURATION of " : "", dur);
	}
	warn_throttled(&o, &res);
	if (res.stacks_lost)
		errorf("warning: %llu of %llu %s have no stack: the kernel's ring of new stacks was full "
		       "(--stack-storage-size %u); increase --stack-storage-size",
		       (unsigned long long)res.stacks_lost, (unsigned long long)res.samples,
		       offcpu ? "episodes" : "samples", o.stack_storage_size);
	if (!quiet) {
		char size[32];

		status__format_size(res.bytes, size, sizeof(size));
		if (offcpu) {
			char blocked[32];

			status__format_seconds(res.blocked_ns, blocked, sizeof(blocked));
			errorf("wrote %s: %llu blocking episodes (%s blocked), %llu stacks, %s",
			       o.output, (unsigned long long)res.samples, blocked,
			       (unsigned long long)res.stacks, size);
		} else {
			errorf("wrote %s: %llu samples, %llu stacks, %s", o.output,
			       (unsigned long long)res.samples, (unsigned long long)res.stacks, size);
		}
	}
	/* DURATION stopped CMD: the recording is what was asked for. */
	ret = cmd && res.cmd_exit_code >= 0 && strcmp(res.end_reason, "duration") != 0
		      ? res.cmd_exit_code
		      : 0;
out:
	recorder__free(rec);
	free(pids);
	free(tids);
	free(cpus);
	free(online);
	free(cmdline);
	return ret;
}
