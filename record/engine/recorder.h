/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recorder.h - stkrec's recording engine, shared by every mode: opens the
 * output, loads and attaches a mode's BPF programs, runs the flush loop
 * (counts, new stacks, process maps, kernel symbols, statistics into the
 * .stk file) and shuts down cleanly.  It never prints: the front-end
 * (main.c) gets messages through recorder__errmsg() and the callbacks.
 *
 * Use: recorder__new() -> recorder__start() -> recorder__run() ->
 * recorder__finish() -> recorder__free().
 */
#ifndef STKREC_RECORDER_H
#define STKREC_RECORDER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct ev_list;

struct recorder_status {
	uint64_t elapsed_ns;
	int offcpu;			/* an off-CPU mode: samples are episodes */
	int trace;			/* trace: samples are events */
	uint64_t samples;		/* samples, or blocking episodes (offcpu) */
	uint64_t blocked_ns;		/* offcpu: their total time off CPU */
	uint64_t stacks;		/* distinct stacks written so far */
	uint64_t lost;			/* samples not counted, counted ones without
					 * a stack (ring full), process events lost */
};

/* --unwind: user stacks by frame pointer (bpf_get_stack(), as before .eh_frame
 * unwinding), by unwind table where a mapping has CFI and frame pointer
 * elsewhere (the default), or by unwind table only. */
#define RECORDER_UNWIND_AUTO 0
#define RECORDER_UNWIND_FP 1
#define RECORDER_UNWIND_DWARF 2

/* --user-memory's default: a production box's share. */
#define RECORDER_USER_MEMORY (128ULL << 20)

struct recorder_opts {
	const char *output;		/* file to write */
	const char *mode;		/* "profile" (NULL too), "offcpu", "offwake" or "trace" */
	unsigned int frequency;		/* Hz (profile) */
	const uint32_t *pids;		/* -p: process ids, or NULL */
	size_t nr_pids;
	const uint32_t *tids;		/* -t: thread ids, or NULL */
	size_t nr_tids;
	int user_stacks_only;		/* -U */
	int kernel_stacks_only;		/* -K */
	uint32_t stack_storage_size;	/* entries of the stacks map */
	/* Off-CPU modes only (ignored by profile). */
	int user_threads_only;		/* -u: no kernel threads */
	int kernel_threads_only;	/* -k: kernel threads only */
	uint64_t min_block_us;		/* -m: shorter blocks are not counted */
	uint64_t max_block_us;		/* -M: longer blocks are not counted */
	int state_filter;		/* --state given: only tasks leaving in */
	uint32_t state_mask;		/* ... one of these states (0: running) */
	/* trace mode only: the events (record/events/events.h), every
	 * @trace_period-th of each counted (software events; -c), at most
	 * @rate_cap a second per event (0: no cap). */
	const struct ev_list *events;
	uint64_t trace_period;
	uint64_t rate_cap;
	const int *cpus;		/* CPUs to sample (sorted) */
	size_t nr_cpus;
	const char *cpu_list;		/* -C as given, or NULL, for META */
	uint64_t duration_ns;		/* 0: until stopped */
	uint64_t flush_interval_ns;
	int flush_strict;		/* --flush-interval given: no quiet intervals */
	int kallsyms_full;		/* --kallsyms=full */
	int embed_symbols;		/* --embed-symbols: enum esym_mode (0: covering) */
	int no_mmap_events;		/* --no-mmap-events: /proc/PID/maps only */
	int unwind;			/* --unwind: RECORDER_UNWIND_* */
	int no_python;			/* --python=no: no Python frames */
	uint64_t unwind_memory;		/* bytes of unwind rows at most (0: default) */
	const char *unwind_cache;	/* --unwind-cache: NULL the default
					 * (TCACHE_DIR), "none" no cache */
	const char *btf_cache;		/* --btf-cache: NULL the default
					 * (COREBTF_DIR), "none" no cache */
	uint64_t user_memory;		/* --user-memory: bytes of symbol tables and perf
					 * maps held at once (0: RECORDER_USER_MEMORY) */
	char *const *cmd;		/* -- CMD ARGS, NULL-terminated, or NULL */
	const char *cmdline;		/* stkrec's own command line, for META */
	volatile sig_atomic_t *stop;	/* set (by a signal handler) to stop */
	/* Rotation: a new file every @rotate_ns (0: not by time) or once the
	 * file's flushes hold @rotate_bytes (0: not by size; checked at
	 * each flush, the file's start not counted);
	 * either makes @output a strftime(3) pattern (rotation.h).  @keep:
	 * at most that many files (0: all); @rotate: set (by a signal
	 * handler) to rotate now, or NULL. */
	uint64_t rotate_ns;
	uint64_t rotate_bytes;
	unsigned int keep;
	volatile sig_atomic_t *rotate;
	/* The signal mask with the stop signals unblocked, or NULL: taken
	 * while opening the output and from recorder__run() on (see there). */
	const sigset_t *wait_mask;
	/* Called about once a second while recording, if not NULL. */
	void (*on_status)(const struct recorder_status *st, void *ctx);
	void *ctx;
};

struct recorder_result {
	const char *end_reason;	/* "duration", "signal", "command", "targets"
				 * (every -p/-t task gone), "error" */
	int cmd_exit_code;	/* CMD's status as a shell gives it, or -1 */
	uint64_t samples;	/* samples, or blocking episodes (off-CPU modes) */
	uint64_t sample_events;	/* profile: cpu-clock overflows seen, all tasks */
	uint64_t sampled_cpu_time_ns;	/* profile: time sampled, summed over CPUs */
	uint64_t sample_events_busiest;	/* profile: the events of the CPU that saw most */
	uint64_t sampled_cpus;		/* profile: CPUs sampled */
	uint64_t blocked_ns;	/* off-CPU modes: total time blocked */
	uint64_t stacks;	/* distinct stacks written (rotating: the sum
				 * of each file's) */
	uint64_t stacks_lost;	/* samples (episodes) counted whose stack the
				 * full stacks map could not take */
	uint64_t chunks;	/* chunks written */
	uint64_t bytes;		/* file size (rotating: of every file written) */
	/* Rotating: files written (those --keep deleted included), the first
	 * and the last one's names, files deleted, and what a deletion that
	 * failed said ("" if none). */
	uint64_t files;
	char first_output[4096], last_output[4096];
	uint64_t files_deleted;
	char keep_error[512];
	/* What --user-memory left out (STAT esym_symbols_skipped,
	 * perf_map_lines_skipped, perf_map_addrs_unnamed_skipped), for the
	 * line that says so. */
	uint64_t user_memory;		/* the budget, bytes */
	uint64_t symbols_skipped;
	uint64_t perf_map_lines_skipped;
	uint64_t perf_map_addrs_unnamed;
	/* Opens of files a traced process named that it could not have
	 * opened itself (STAT files_refused: a file once for each use),
	 * not read; of them, perf maps. */
	uint64_t files_refused;
	uint64_t perf_maps_refused;
};

struct recorder;

/*
 * recorder__new() - check and copy @opts (pointed-to arrays must outlive
 * the recorder).  Returns NULL with errno = EINVAL (e.g. an unknown mode,
 * min_block_us > max_block_us) or ENOMEM.
 */
struct recorder *recorder__new(const struct recorder_opts *opts);

/*
 * recorder__start() - everything up to sampling: read kallsyms, open the
 * output (before anything is attached, so a bad path fails early), write
 * META and KBID, fork CMD, load and attach the BPF programs, release CMD.
 * On failure nothing stays attached and the output file is removed.
 *
 * Returns 0 or -errno (recorder__errmsg() says what failed):
 * -EPERM for kernel addresses hidden by kptr_restrict, the output's
 * open() errno, -ENOENT/-EACCES when CMD cannot be executed, libbpf's and
 * perf_event_open()'s errors.
 */
int recorder__start(struct recorder *rec);

/*
 * recorder__run() - record until the duration ends, *opts.stop is set,
 * CMD exits or every -p/-t task is gone, flushing every flush interval.
 * Rotating, it closes the file after a flush and starts the next when
 * the period or size is reached or *opts.rotate is set: the rows of one
 * flush are in one file, so the files partition the samples.  With opts.wait_mask, the
 * stop signals are taken while it works too (it needs their handlers
 * without SA_RESTART: a call they interrupt returns EINTR), and stay
 * unblocked when it returns, for recorder__finish().  Returns 0 or -errno:
 * a write error such as -ENOSPC stops the recording (complete chunks stay
 * in the file).
 */
int recorder__run(struct recorder *rec);

/*
 * recorder__finish() - stop sampling (every link and perf fd closed),
 * final flush, final META (duration, end reason) and STAT, close the file
 * with its index and trailer; stop CMD with SIGTERM if it still runs and
 * reap it.  Fills @res (may be NULL).  Returns 0 or the first error.
 */
int recorder__finish(struct recorder *rec, struct recorder_result *res);

/*
 * recorder__cmd_exec_errno() - after recorder__start() failed: the errno of
 * CMD's execvp() (e.g. ENOENT, EACCES) if that is what failed, else 0.
 */
int recorder__cmd_exec_errno(const struct recorder *rec);

/* After recorder__start(): the time from the capture's start to the
 * moment sampling began (loading BPF, preallocating the maps), ns.
 * DURATION counts from that moment; META setup_ns says it too. */
uint64_t recorder__setup_ns(const struct recorder *rec);

/* [unwind] What unwinds user stacks, after recorder__start(): "auto",
 * "dwarf", "fp", or "fp (the unwinder did not load: REASON)".  Valid for
 * the life of @rec. */
const char *recorder__unwind_state(const struct recorder *rec);

/* Message for the last error, e.g. "perf_event_open(cpu 3): Permission
 * denied".  Valid until the next call on @rec. */
const char *recorder__errmsg(const struct recorder *rec);

/* Frees @rec; detaches and closes anything still open.  Accepts NULL. */
void recorder__free(struct recorder *rec);

#endif
