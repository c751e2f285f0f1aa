// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder_int.h - what recorder.c (the lifecycle), recorder_flush.c (the
 * steps of a flush) and recorder_stats.c (the STAT and META chunks)
 * share: struct recorder and the helpers each calls in another.  Internal
 * to record/engine/.
 */
#ifndef STK_RECORDER_INT_H
#define STK_RECORDER_INT_H

#include <stdint.h>

#include "flush.h"
#include "membudget.h"
#include "mode.h"
#include "recorder.h"
#include "stk.h"
#include "stkrec.h"
#include "wake.h"

#define NSEC_PER_SEC 1000000000ULL

/*
 * Processes that may start or exit in a quiet stretch (recorder_loop.c):
 * each one's snapshot, names and copied stacks wait in user space for the
 * stretch's flush; the next one ends it at its interval's end.
 */
#define QUIET_PROCS_MAX 256

/* The main loop's steps, each timed (its longest run in STAT
 * loop_max_ns_*): what kept a flush or a signal waiting. */
enum loop_step {
	LOOP_FLUSH,		/* a flush (drain, symbols, write) */
	LOOP_SIDEBAND,		/* the side-band: new processes to the unwinder */
	LOOP_DEFERRED,		/* copied stacks taken from their ring */
	LOOP_WORKER,		/* built tables into the maps */
	LOOP_RINGS,		/* the event and stack rings */
	LOOP_STATUS,		/* the status line */
	LOOP_NR_STEPS
};

struct recorder {
	struct recorder_opts o;
	const struct rec_mode_ops *ops;
	struct rec_mode *mode;
	struct rec_maps maps;
	struct ring_buffer *rb;
	struct stk_writer *w;
	struct child *child;
	struct stackstore *stacks;
	struct ksymtab *ksyms;
	struct procs *procs;
	struct unwinder *uw;		/* .eh_frame tables, or NULL (fp) */
	struct python *python;		/* Python frames' interpreters and code objects */
	struct worker *worker;		/* builds them */
	struct worker *reader;		/* reads symbol tables (esym) */
	struct deferred *deferred;	/* the stacks waiting for them, or NULL */
	struct membudget mem;		/* --user-memory: esym's tables and perf maps */
	struct esym *esym;
	struct targets *targets;	/* -p/-t tasks, or NULL */
	struct pidns *pidns;		/* processes in other PID namespaces */
	char mw_state[128];		/* META mmap_events */
	char uw_state[128];		/* META unwind_used */
	int epfd;
	/* Sources read soon after they wake the loop, then held off
	 * (wake.h): the side-band (each quarter of its ring), the copies
	 * ring, the Python codes ring (their first record). */
	struct wake wk_side, wk_defer, wk_py;
	int write_failed;
	int cmd_exec_errno;
	uint64_t wall_start, mono_start;
	uint64_t sample_start;		/* everything attached: DURATION counts from here */
	uint64_t t0;			/* start of the interval being recorded */
	uint64_t t_detached;		/* sampling off (monotonic; 0: not yet) */
	uint64_t final_until;		/* the final flush waits for tables until then */
	uint64_t events_until;		/* stop taking ring buffer events then (0: never) */
	uint64_t seq;			/* flushes done */
	/*
	 * When the next periodic flush is due, and quiet intervals: when
	 * nothing that must reach the file soon came in the interval a flush
	 * ended (news: a counts map half full, symbols read that hold the
	 * next reads back, Python code, a process of a binary not seen
	 * before, QUIET_PROCS_MAX processes started or
	 * exited: procs_news), the next flush
	 * is planned up to QUIET_INTERVALS_MAX intervals later (quiet_planned),
	 * or at the end of the interval in which something comes
	 * (recorder_loop.c plan_next_flush(), recorder__news()).  quiet_k: the
	 * interval of the last flush; quiet_intervals: intervals that ended
	 * without a flush (STAT).
	 */
	uint64_t next_flush;
	int news;
	int quiet_planned;
	uint32_t procs_news;
	uint64_t quiet_k;
	uint64_t quiet_intervals;
	uint64_t counts_half_full;	/* STKREC_EV_COUNTS_FILLING taken (STAT) */
	int pwait2;			/* epoll_pwait2(): 1 works, -1 not, 0 not tried */
	uint64_t chunks;
	const char *end_reason;
	int cmd_exit_code;
	int nr_cpus_possible;
	uint64_t *stat_vals;		/* the stats map's per-CPU values, as last read */
	void *stats_mem;		/* the stats map, mmap'ed on first read */
	size_t stats_len;		/* ... its mapping's length */
	unsigned int stats_read_bad;	/* ... the sets that could not be read */
	int stats_read_fresh;		/* ... by this flush's drain (its STAT sums them) */
	uint64_t bpf_stats[STKREC_NR_STATS];
	/* Each set's sums when its counts map was last drained: what the
	 * rows written so far hold (STAT before the final flush). */
	uint64_t bpf_sets[STKREC_STAT_SETS][STKREC_NR_STATS];
	uint64_t events_busiest;		/* sample_events of the CPU that saw most
						 * (rotating: in this file) */
	uint64_t events_busiest_run;		/* ... in the whole recording */
	uint64_t loop_wakes;		/* the main loop's waits that returned (STAT) */
	uint64_t loop_max_ns[LOOP_NR_STEPS];	/* each step's longest run */
	uint64_t flush_step_ns_max[FLUSH_NR_STEPS];	/* each flush step's longest run */
	uint64_t flush_late_max_ns;	/* the latest a flush started, after its time */
	uint64_t heap_max;		/* the most heap in use at a STAT (mallinfo2) */
	uint64_t periods;		/* cpu_clock_periods, as last read */
	uint64_t slow_read_ns;		/* ... and heap_max: when (monotonic; 0: never) */
	/* Rotating (rot != NULL): -o's pattern, the current file's name
	 * (o.output points here), when its first interval began, and the
	 * raw STAT values at its start (each file's STAT counts from there:
	 * last_stat at the previous file's end) and each CPU's
	 * sample_events then. */
	struct rotation *rot;
	const char *pattern;
	char path[4096];
	uint64_t file_start;
	/* The current file's bytes once its start was written (header,
	 * META, KOBJS, --kallsyms=full's table: --rotate-size does not
	 * count them), and whether a flush wrote rows to it since. */
	uint64_t file_base;
	int file_rows;
	uint64_t setup_ns;
	struct stk_stat *stat_base, *stat_last;
	size_t nr_stat_base, nr_stat_last;
	uint64_t *events_base, *events_last;
	uint64_t stacks_done, bytes_done;	/* of the files closed */
	char keep_err[512];
	char errmsg[512];
};

/* recorder.c: a failed write fails the recording. */
int recorder__write_err(struct recorder *rec, int err);
/* recorder.c: let the worker finish its unwind tables (@what WAIT_UNWIND)
 * and symbol tables (WAIT_SYMBOLS) until @until (monotonic) or, if
 * @stoppable, a stop signal. */
#define WAIT_UNWIND 1
#define WAIT_SYMBOLS 2
void recorder__wait_worker(struct recorder *rec, uint64_t until, int what, int stoppable);
/* recorder.c: stackstore__retry_late()'s @added. */
int recorder__user_stack_added(void *ctx, uint32_t tgid, const struct stkrec_stack *s);
/* recorder.c: account for one add_*() call. */
int recorder__wrote(struct recorder *rec, int err);
/* recorder.c: one flush (@final: the recording's last; @file_end: its
 * file's last); 0 or -errno, a failed write saying so. */
int recorder__flush(struct recorder *rec, int final, int file_end);
/* recorder.c: the current file closed, the next one begun (rotating). */
int recorder__rotate(struct recorder *rec);
/* recorder.c: the events ring's callback (struct stkrec_event). */
int recorder__on_event(void *ctx, void *data, size_t size);

/* recorder_start.c: a file's beginning, the first's or a rotation's: the
 * output opened (-o, or the name the pattern gives; 0 or -errno with
 * recorder__errorf() called), and its kernel objects (and with
 * --kallsyms=full the whole symbol table). */
int recorder__open_output(struct recorder *rec);
int recorder__write_kernel_info(struct recorder *rec);

/* The loop's epoll data (recorder_start.c adds them, recorder_loop.c
 * reads them): what became readable. */
#define EV_RINGBUF 0
#define EV_CHILD 1
#define EV_MMAPWATCH 2
#define EV_STACKRING 3
#define EV_WORKER 4
#define EV_READER 5
#define EV_DEFERRED 6
#define EV_PYCODES 7
#define EV_TARGET 16	/* + i: the i-th pidfd of the -p/-t targets */

/* recorder_stats.c */
void recorder__read_bpf_stats(struct recorder *rec);
void recorder__freeze_bpf_stats(struct recorder *rec, uint32_t set);
void recorder__unmap_stats(struct recorder *rec);
uint64_t recorder__sampled_cpu_time(const struct recorder *rec, uint64_t now);
/* Files a traced process named that it could not open itself, not read
 * (STAT files_refused): build-ids, unwind tables, symbols, perf maps. */
uint64_t recorder__files_refused(const struct recorder *rec);
/* The STAT chunk, at @now (monotonic).  @file_end: the file's last STAT
 * (a rotation's, or the recording's): cpu_clock_periods and
 * heap_in_use_max read now, not as read up to 10 s before. */
int recorder__write_stats(struct recorder *rec, uint64_t now, int file_end);
int recorder__write_start_meta(struct recorder *rec);
int recorder__write_end_meta(struct recorder *rec, uint64_t now);
/* A new file begins: its STAT counts from the values of the last one
 * written.  0 or -ENOMEM. */
int recorder__stats_new_file(struct recorder *rec);

/* The steps of a flush, for flush__run() (recorder_flush.c). */
struct flush_ops;
extern const struct flush_ops recorder__flush_ops;

#endif
