// SPDX-License-Identifier: BSD-2-Clause
/*
 * cli.c - stkrec's options as one table, shared by every mode: where an
 * option is the same in profile, offcpu/offwake and trace it stands once,
 * the mode-specific ones are marked, and getopt's tables and the three
 * --help texts are made from it.
 */
#include <errno.h>
#include <stddef.h>

#include "cli.h"

#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* Every help line starts the text 29 columns in, as the ones above. */
const struct cli_opt cli__opts[] = {
	{ "frequency", required_argument, 'F', CLI_PROFILE,
	  "  -F, --frequency HZ         sample frequency, Hertz (default " CLI_STR(CLI_DEFAULT_FREQUENCY) "; at most\n"
	  "                             kernel.perf_event_max_sample_rate)\n", NULL },
	{ "pid", required_argument, 'p', CLI_ALL,
	  "  -p, --pid PID[,PID...]     profile these processes only (until they are gone)\n",
	  "  -p, --pid PID[,PID...]     trace these processes only (until they are gone)\n" },
	{ "tid", required_argument, 't', CLI_ALL,
	  "  -t, --tid TID[,TID...]     profile these threads only (until they are gone)\n",
	  "  -t, --tid TID[,TID...]     trace these threads only (until they are gone)\n" },
	{ "user-threads-only", no_argument, 'u', CLI_OFFCPU,
	  "  -u, --user-threads-only    user threads only (no kernel threads)\n", NULL },
	{ "kernel-threads-only", no_argument, 'k', CLI_OFFCPU,
	  "  -k, --kernel-threads-only  kernel threads only (no user threads)\n", NULL },
	{ "user-stacks-only", no_argument, 'U', CLI_ALL,
	  "  -U, --user-stacks-only     user space stacks only (no kernel stacks)\n", NULL },
	{ "kernel-stacks-only", no_argument, 'K', CLI_ALL,
	  "  -K, --kernel-stacks-only   kernel stacks only (no user stacks)\n", NULL },
	{ "min-block-time", required_argument, 'm', CLI_OFFCPU,
	  "  -m, --min-block-time US    count only blocks of at least US microseconds\n"
	  "                             (default 1)\n", NULL },
	{ "max-block-time", required_argument, 'M', CLI_OFFCPU,
	  "  -M, --max-block-time US    count only blocks of at most US microseconds\n"
	  "                             (default unlimited)\n", NULL },
	{ "state", required_argument, CLI_STATE, CLI_OFFCPU,
	  "      --state MASK           only threads that went off CPU in one of these\n"
	  "                             states (a bit mask: 1 interruptible sleep, 2\n"
	  "                             uninterruptible, ...; 0: preempted while running)\n", NULL },
	{ "count", required_argument, 'c', CLI_TRACE,
	  "  -c, --count PERIOD         software events: count every PERIOD-th event\n"
	  "                             (default 1: every one), as perf record -c\n", NULL },
	{ "rate-cap", required_argument, CLI_RATE_CAP, CLI_TRACE,
	  "      --rate-cap N           count at most N events a second of each event\n"
	  "                             (default " CLI_STR(CLI_DEFAULT_RATE_CAP) "; 0: no cap); those over it are\n"
	  "                             counted in STAT trace_events_capped\n", NULL },
	{ "max-probes", required_argument, CLI_MAX_PROBES, CLI_TRACE,
	  "      --max-probes N         attach at most N events (default " CLI_STR(CLI_DEFAULT_MAX_PROBES) "): a glob\n"
	  "                             matching more is cut, with a warning\n", NULL },
	{ "cpu", required_argument, 'C', CLI_PROFILE,
	  "  -C, --cpu LIST             sample these CPUs only, e.g. 0-3,8 (default: all online)\n", NULL },
	/* The kernel memory an entry takes differs: offcpu's counts are bigger. */
	{ "stack-storage-size", required_argument, CLI_STACK_STORAGE, CLI_ALL,
	  "      --stack-storage-size N unique stacks the kernel remembers sending\n"
	  "                             (default " CLI_STR(CLI_DEFAULT_STACK_STORAGE) "), and 64 bytes each (256 KiB at\n"
	  "                             least) of ring for new stacks; preallocated:\n"
	  "                             about 145 bytes of kernel memory per entry, and\n"
	  "                             two counts maps of four flush intervals' samples\n"
	  "                             (-F x CPUs x 4 x --flush-interval entries, 8192\n"
	  "                             at least, at most N if larger, 168 bytes each;\n"
	  "                             16384 at the default -F on up to 41 CPUs:\n"
	  "                             4.9 MiB; 4194304: 579 MiB); more\n"
	  "                             than half of MemAvailable is refused\n",
	  "      --stack-storage-size N unique stacks the kernel remembers sending\n"
	  "                             (default " CLI_STR(CLI_DEFAULT_STACK_STORAGE) "), and 64 bytes each (256 KiB at\n"
	  "                             least) of ring for new stacks; preallocated with\n"
	  "                             the counts maps: about 470 bytes of kernel\n"
	  "                             memory per entry (16384: 7.3 MiB; 4194304:\n"
	  "                             1.9 GiB); more than half of MemAvailable is refused\n" },
	/* profile's help explains these; offcpu's only names the choices. */
	{ "kallsyms", required_argument, CLI_KALLSYMS, CLI_ALL,
	  "      --kallsyms=WHICH       'covering' (default): store the kernel symbols that\n"
	  "                             cover recorded addresses; 'full': the whole table\n",
	  "      --kallsyms=WHICH       'covering' (default) or 'full' kernel symbols\n" },
	{ "embed-symbols", required_argument, CLI_EMBED_SYMBOLS, CLI_ALL,
	  "      --embed-symbols=WHICH  'covering' (default): store the function symbols of\n"
	  "                             the binaries and perf maps (JIT) that cover recorded\n"
	  "                             user addresses; 'full': their whole tables; 'none'\n",
	  "      --embed-symbols=WHICH  'covering' (default), 'full' or 'none' user symbols\n" },
	{ "no-mmap-events", no_argument, CLI_NO_MMAP_EVENTS, CLI_ALL,
	  "      --no-mmap-events       read process mappings from /proc/PID/maps only, not\n"
	  "                             as they happen (short-lived processes then lose\n"
	  "                             their user frames)\n",
	  "      --no-mmap-events       read process mappings from /proc/PID/maps only\n" },
	{ "unwind", required_argument, CLI_UNWIND, CLI_ALL,
	  "      --unwind=HOW           user stacks: 'auto' (default) unwinds with the\n"
	  "                             binaries' .eh_frame tables where they have them\n"
	  "                             and by frame pointer elsewhere; 'dwarf' tables\n"
	  "                             only; 'fp' frame pointers only\n",
	  "      --unwind=HOW           'auto' (default), 'dwarf' or 'fp' user stacks\n" },
	{ "python", required_argument, CLI_PYTHON, CLI_ALL,
	  "      --python=WHETHER       'yes' (default): Python functions in the stacks of\n"
	  "                             CPython 3.8 to 3.13, named from the code objects\n"
	  "                             read while the process lives; 'no': the\n"
	  "                             interpreter's native frames only\n",
	  "      --python=WHETHER       'yes' (default) or 'no' Python frames\n" },
	{ "unwind-memory", required_argument, CLI_UNWIND_MEMORY, CLI_ALL,
	  "      --unwind-memory MB     memory for unwind tables (default 1/128 of RAM,\n"
	  "                             16 to 64)\n", NULL },
	{ "unwind-cache", required_argument, CLI_UNWIND_CACHE, CLI_ALL,
	  "      --unwind-cache DIR     keep unwind tables between recordings in DIR\n"
	  "                             (default /var/cache/stk/unwind; 'none': not)\n", NULL },
	{ "btf-cache", required_argument, CLI_BTF_CACHE, CLI_ALL,
	  "      --btf-cache DIR        keep in DIR, for this boot, the kernel BTF types\n"
	  "                             the BPF programs relocate against (default\n"
	  "                             /var/cache/stk/btf; 'none': parse the kernel's\n"
	  "                             whole BTF at each start)\n", NULL },
	{ "user-memory", required_argument, CLI_USER_MEMORY, CLI_ALL,
	  "      --user-memory MB       memory stkrec keeps symbol tables and perf maps in\n"
	  "                             (default " CLI_STR(CLI_DEFAULT_USER_MEMORY) "); what does not fit is read again\n"
	  "                             when needed, or counted and said at the end\n",
	  "      --user-memory MB       memory kept for symbols and perf maps (default " CLI_STR(CLI_DEFAULT_USER_MEMORY) ")\n" },
	{ "output", required_argument, 'o', CLI_ALL,
	  "  -o, --output FILE          write to FILE (default trace.stk); with --rotate or\n"
	  "                             --rotate-size a strftime(3) pattern of each file's\n"
	  "                             start, local time (default " CLI_DEFAULT_ROTATE_OUTPUT "):\n"
	  "                             a name that exists gets -1, -2... before its\n"
	  "                             extension, never replaced\n", NULL },
	{ "rotate", required_argument, CLI_ROTATE, CLI_ALL,
	  "      --rotate SECS          start a new file every SECS seconds (at least 1),\n"
	  "                             and at SIGHUP; each file is a whole capture\n", NULL },
	{ "rotate-size", required_argument, CLI_ROTATE_SIZE, CLI_ALL,
	  "      --rotate-size SIZE     start a new file once one holds SIZE bytes of\n"
	  "                             recorded data (K, M, G: KiB, MiB, GiB; checked\n"
	  "                             at each flush; what a file starts with is not\n"
	  "                             counted; a file holds a flush's rows at least)\n", NULL },
	{ "keep", required_argument, CLI_KEEP, CLI_ALL,
	  "      --keep N               rotating: delete the oldest files this stkrec wrote\n"
	  "                             beyond the newest N\n", NULL },
	{ "flush-interval", required_argument, CLI_FLUSH_INTERVAL, CLI_ALL,
	  "      --flush-interval SECS  write recorded data every SECS seconds (default:\n"
	  "                             every second; profile: up to every 16th while\n"
	  "                             nothing must be written sooner, each second's\n"
	  "                             counts apart)\n", NULL },
	{ "quiet", no_argument, 'q', CLI_ALL,
	  "  -q, --quiet                no status line and no summary\n", NULL },
	{ "verbose", no_argument, 'v', CLI_ALL,
	  "  -v, --verbose              print libbpf's messages\n", NULL },
	{ "help", no_argument, 'h', CLI_ALL,
	  "  -h, --help                 show this help\n", NULL },
	{ "version", no_argument, CLI_VERSION, CLI_ALL,
	  "      --version              show the version (and libbpf's, elfutils', zstd's)\n", NULL },
	/* Not options: the words around them, in the same columns. */
	{ NULL, 0, 0, CLI_TRACE,
	  "  EVENT                      t:CATEGORY:NAME or CATEGORY:NAME (tracepoint; NAME\n"
	  "                             may be a glob: t:syscalls:sys_enter_*),\n"
	  "                             u:PATH:FUNC or u:LIB:FUNC (uprobe; u:c:malloc;\n"
	  "                             FUNC may be a glob),\n"
	  "                             r:PATH:FUNC (uretprobe), p:FUNC (kprobe),\n"
	  "                             page-faults, context-switches, cpu-migrations,\n"
	  "                             minor-faults, major-faults (software events)\n", NULL },
	{ NULL, 0, 0, CLI_ALL,
	  "  DURATION                   seconds to record from when sampling starts\n"
	  "                             (default: until Ctrl-C); with -- CMD at most\n"
	  "                             that long: CMD then gets SIGTERM\n", NULL },
	{ NULL, 0, 0, CLI_ALL,
	  "  -- CMD [ARGS...]           run CMD once everything is attached, profile it and\n"
	  "                             every process it starts, stop when it exits\n",
	  "  -- CMD [ARGS...]           run CMD once everything is attached, trace it and\n"
	  "                             every process it starts, stop when it exits\n" },
	{},
};

const char *const cli__usage_head[3] = {
	"Usage: stkrec [profile] [OPTIONS] [DURATION]\n"
	"       stkrec [profile] [OPTIONS] [DURATION] -- CMD [ARGS...]\n"
	"\n"
	"Sample stack traces of every CPU at a timed interval and write them, with\n"
	"what is needed to symbolize them later, into a .stk file.  Stacks are\n"
	"counted in the kernel; nothing is symbolized here (see stkreport).\n"
	"\n"
	"Options:\n",
	"Usage: stkrec offcpu|offwake [OPTIONS] [DURATION]\n"
	"       stkrec offcpu|offwake [OPTIONS] [DURATION] -- CMD [ARGS...]\n"
	"\n"
	"offcpu:  time blocked (off CPU), by the blocked thread's user and kernel\n"
	"         stacks (as offcputime).\n"
	"offwake: the same, also by the stacks of the thread that woke it (as\n"
	"         offwaketime).  Report with stkreport; values are microseconds.\n"
	"\n"
	"Options:\n",
	"Usage: stkrec trace EVENT [EVENT...] [OPTIONS] [DURATION]\n"
	"       stkrec trace EVENT [EVENT...] [OPTIONS] [DURATION] -- CMD [ARGS...]\n"
	"\n"
	"Count every EVENT by the user and kernel stacks it happened in (as BCC's\n"
	"stackcount and perf record -e EVENT -g): events, not samples.  Counted in\n"
	"the kernel; report with stkreport.\n"
	"\n"
	"Options:\n",
};

const char cli__usage_tail_common[] =
	"\n"
	"The mode word and DURATION may stand anywhere before --.\n"
	"\n";

const char *const cli__usage_tail[3] = {
	"Exit status: 0 success, 1 failure, 2 usage error.  With -- CMD: CMD's exit\n"
	"status (128+N if a signal N killed it; 127 if it is not found, 126 if it\n"
	"cannot be executed), 0 if DURATION ended the recording first, or 1 if the\n"
	"recording failed.\n"
	"\n"
	"Examples:\n"
	"  stkrec                     # all CPUs at " CLI_STR(CLI_DEFAULT_FREQUENCY) " Hz until Ctrl-C, into trace.stk\n"
	"  stkrec -F 99 10            # 99 Hz for 10 seconds\n"
	"  stkrec -p 185 -o app.stk   # only process 185\n"
	"  stkrec -U 5                # user stacks only\n"
	"  stkrec --rotate 3600 --keep 48 -o 'web-%Y%m%dT%H%M%S.stk'\n"
	"                             # for days: a file an hour, the last 48 kept\n"
	"  stkrec -- make test        # a command and everything it starts\n"
	"\n"
	"Other modes: stkrec offcpu, stkrec offwake (see stkrec offcpu --help), and\n"
	"stkrec trace EVENT... (see stkrec trace --help).\n",
	"Exit status: 0 success, 1 failure, 2 usage error; with -- CMD as for profile.\n"
	"\n"
	"Examples:\n"
	"  stkrec offcpu 5               # all threads for 5 seconds\n"
	"  stkrec offwake -p 185 -m 1000 # process 185, blocks of 1 ms or more\n"
	"  stkrec offcpu -u --state 2    # user threads in uninterruptible sleep\n"
	"  stkrec offwake -- ./server    # a command and everything it starts\n",
	"Exit status: 0 success, 1 failure, 2 usage error (an EVENT not understood\n"
	"or not on this machine); with -- CMD as for profile.\n"
	"\n"
	"Examples:\n"
	"  stkrec trace t:syscalls:sys_enter_write 5     # who writes, for 5 seconds\n"
	"  stkrec trace page-faults -p 185               # who faults in process 185\n"
	"  stkrec trace u:c:malloc -- ./app              # who calls malloc in ./app\n"
	"  stkrec trace 't:sched:sched_process_*' 10     # a glob (quoted for the shell)\n",
};

/* The table is fixed at compile time: the tables always fit. */
_Static_assert(sizeof(cli__opts) / sizeof(cli__opts[0]) <= CLI_MAX_OPTS + 3,
	       "cli__opts outgrew CLI_MAX_OPTS");

void cli__getopt_tables(struct cli_getopt *g)
{
	const struct cli_opt *c;
	char *s = g->shortopts;
	size_t n = 0;

	*s++ = '-';
	*s++ = ':';
	for (c = cli__opts; c->help; c++) {
		if (!c->name)
			continue;
		g->longopts[n++] = (struct option){ c->name, c->has_arg, NULL, c->val };
		if (c->val < 256) {
			*s++ = (char)c->val;
			if (c->has_arg == required_argument)
				*s++ = ':';
		}
	}
	*s = '\0';
	g->longopts[n] = (struct option){};
}

const struct cli_opt *cli__find(int val)
{
	const struct cli_opt *c;

	for (c = cli__opts; c->help; c++)
		if (c->name && c->val == val)
			return c;
	return NULL;
}
