// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder_loop.c - a recording's loop (recorder__run()): what wakes it
 * (the events ring, the ring of new stacks, the held sources of wake.h,
 * the workers, the targets), when it flushes (each interval's end, or
 * several intervals on when nothing new comes: plan_next_flush()), rotates
 * and says its status, and what ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "child.h"
#include "clock.h"
#include "deferred.h"
#include "drain.h"
#include "esym.h"
#include "flush.h"
#include "idmap.h"
#include "kobjs.h"
#include "ksymtab.h"
#include "mode.h"
#include "pidns.h"
#include "procs.h"
#include "python.h"
#include "unwinder.h"
#include "recorder_int.h"
#include "rotation.h"
#include "stackstore.h"
#include "stkrec.h"
#include "targets.h"
#include "tcache.h"
#include "worker.h"

#define STATUS_INTERVAL_NS NSEC_PER_SEC
/* Without a pidfd, how often the loop looks at the command's exit. */
#define CHILD_POLL_NS (NSEC_PER_SEC / 10)
/*
 * Intervals a quiet recording's counts stay in the kernel at most: the end
 * of the last of them flushes.  Each interval's rows keep their own chunk
 * (drain.h); a recorder killed with SIGKILL loses this many at most.  A
 * quiet flush costs ~300-450 us of CPU on a 2-vCPU VM, what perf -g -a
 * spends in 2 s of a recording whose stacks repeat: one in 16 s keeps the
 * quiet recorder near a quarter of perf's (docs/performance.md, session
 * 20); --flush-interval bounds the loss to one interval instead.
 */
#define QUIET_INTERVALS_MAX 16

/*
 * New Python code objects, and the new stacks that name them: those the
 * kernel could not copy are read from the process before it frees them or
 * exits (most of a short script's, not only those of its last flush).
 * Returns whether there were any.
 */
static int python_take(struct recorder *rec)
{
	int n = python__take_codes(rec->python);

	stackstore__take_ring(rec->stacks);
	return n > 0;
}

/* The side-band's new records; whether there were any. */
static int sideband_take(struct recorder *rec)
{
	return procs__drain_events(rec->procs);
}

/* Copies of stacks whose tables were not in yet: taken before their
 * ring is full; whether there were any. */
static int deferred_take(struct recorder *rec)
{
	return deferred__take(rec->deferred) > 0;
}

/* The sources the loop holds off between wakes (wake.h), each with what
 * reads it, its epoll tag and its step. */
struct held {
	struct wake *w;
	int (*take)(struct recorder *rec);
	uint32_t tag;
	enum loop_step step;
	/* Whether what it took ends a quiet stretch (recorder__news()), or
	 * NULL: never (it waits in user space for the stretch's flush). */
	int (*news)(const struct recorder *rec);
};

#define NR_HELD 3

/* The held source whose epoll tag is @tag, or NULL. */
static const struct held *held_of(const struct held h[NR_HELD], uint32_t tag)
{
	size_t i;

	for (i = 0; i < NR_HELD; i++)
		if (h[i].tag == tag)
			return &h[i];
	return NULL;
}

/*
 * Copied stacks wait for the flush that writes their placeholders (their
 * flushes counted, not seconds: deferred.h), their processes' mappings
 * kept until then (procs.h), when the tables they need are in: a stretch
 * ends when tables are being built (a copy waits DEFERRED_WAIT flushes
 * for them, and a recording's last flush only until final_until: 150
 * short-lived processes of new binaries unwound in one last flush under
 * load lost a fifth of their stacks to "table pending"), or when the
 * copies hold half of DEFERRED_MAX_BYTES, past which they would be
 * dropped.
 */
static int deferred_news(const struct recorder *rec)
{
	return (rec->uw && unwinder__building(rec->uw)) ||
	       deferred__bytes(rec->deferred) >= DEFERRED_MAX_BYTES / 2;
}

/* New Python code objects: flushed at their interval's end. */
static int python_news(const struct recorder *rec)
{
	(void)rec;
	return 1;
}

static void held_sources(struct recorder *rec, struct held h[NR_HELD])
{
	h[0] = (struct held){ &rec->wk_side, sideband_take, EV_MMAPWATCH, LOOP_SIDEBAND, NULL };
	h[1] = (struct held){ &rec->wk_defer, deferred_take, EV_DEFERRED, LOOP_DEFERRED,
			      deferred_news };
	h[2] = (struct held){ &rec->wk_py, python_take, EV_PYCODES, LOOP_RINGS, python_news };
}

/* A main loop step done: its time, if the longest yet.  Returns now. */
static uint64_t loop_step_done(struct recorder *rec, enum loop_step step, uint64_t t0)
{
	uint64_t t1 = mono_ns();

	if (t1 - t0 > rec->loop_max_ns[step])
		rec->loop_max_ns[step] = t1 - t0;
	return t1;
}

/* The status line (stkrec without -q), each second. */
static void recorder__status(struct recorder *rec, uint64_t now)
{
	struct recorder_status st = {};

	if (!rec->o.on_status)
		return;
	recorder__read_bpf_stats(rec);
	st.elapsed_ns = now - rec->sample_start;
	st.offcpu = rec->ops == &offcpu_mode_ops || rec->ops == &offwake_mode_ops;
	st.trace = rec->ops == &trace_mode_ops;
	st.samples = rec->bpf_stats[STKREC_STAT_SAMPLES];
	st.blocked_ns = rec->bpf_stats[STKREC_STAT_BLOCKED_NS];
	st.stacks = stackstore__count(rec->stacks);
	/* What the capture misses: samples not counted, counted ones
	 * without a stack for want of room, process events.  (Stacks not
	 * stored for episodes -m/-M drop anyway are no loss.) */
	st.lost = rec->bpf_stats[STKREC_STAT_COUNTS_FULL] + rec->bpf_stats[STKREC_STAT_STACK_LOST] +
		  rec->bpf_stats[STKREC_STAT_EVENTS_LOST];
	rec->o.on_status(&st, rec->o.ctx);
}

/* Rotating: the file is due to end (its period or a request). */
static int rotation_due(const struct recorder *rec, uint64_t now)
{
	const struct recorder_opts *o = &rec->o;

	return rec->rot && ((o->rotate && *o->rotate) ||
			    (o->rotate_ns && now >= rec->file_start + o->rotate_ns));
}

/*
 * Rotating by size, asked at a flush: the flushes written to this file
 * since its start hold @rotate_bytes.  What every file gets as it opens
 * does not count (with --kallsyms=full, more than a small SIZE: each new
 * file would be due at once), and a file holds the rows of a flush at
 * least (a file of none would be a file of nothing recorded).
 */
static int rotation_size_due(const struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;

	return rec->rot && o->rotate_bytes && rec->file_rows &&
	       stk_writer__bytes(rec->w) - rec->file_base >= o->rotate_bytes;
}

/*
 * Something came (a process, a table, copied stacks, Python code, the
 * stack ring half full): the next flush is at the end of this interval,
 * not later.
 */
static void recorder__news(struct recorder *rec, uint64_t now)
{
	uint64_t end;

	rec->news = 1;
	if (!rec->quiet_planned)
		return;
	end = drain__interval_end(rec->maps.drain, now);
	if (end < rec->next_flush)
		rec->next_flush = end;
}

/*
 * How many intervals the counts may stay in the kernel at most:
 * QUIET_INTERVALS_MAX when the counts map, once the kernel said it is half
 * full, still has room for an interval and a half of samples each a key of
 * its own (-F x CPUs x interval) until the flush at that interval's end; 1
 * (none) when it has not.
 */
static uint32_t quiet_intervals(const struct recorder *rec)
{
	double most = (double)rec->o.frequency * (double)rec->o.nr_cpus *
		      ((double)rec->o.flush_interval_ns / 1e9);

	return drain__entries(rec->maps.drain) / 2 >= most * 1.5 ? QUIET_INTERVALS_MAX : 1;
}

/*
 * After a periodic flush at @now, rec->next_flush the next interval's end:
 * may the counts stay in the kernel for more intervals?  Yes when nothing
 * that must reach the file soon came in the interval a flush ended
 * (rec->news: not a process that started or exited, a mapping, an unwind
 * table or copied stacks, which wait in user space for the flush that
 * writes the stacks and rows needing them; but a counts map half full,
 * symbols read that hold the next reads back, JIT lines, Python code
 * objects, a process of a binary not seen before (recorder__on_event()),
 * QUIET_PROCS_MAX processes, copies taken while tables are built
 * or tables built while copies wait, half of DEFERRED_MAX_BYTES of
 * copies), and the user did not ask for a
 * flush interval (--flush-interval: a flush at the end of each); for as
 * many intervals as the rings of new stacks and rows and the counts map
 * would take at the rate they filled since the last flush, half of each
 * at most, and QUIET_INTERVALS_MAX.  New stacks wait (their ring wakes the
 * loop when half full), and so do new keys (the kernel says when a counts
 * map is half full of them: STKREC_EV_COUNTS_FILLING); anything that comes
 * meanwhile brings the flush back to its interval's end
 * (recorder__news()).  A recording whose stacks repeat then wakes once
 * every QUIET_INTERVALS_MAX intervals.
 */
static void plan_next_flush(struct recorder *rec, uint64_t now)
{
	uint32_t q = quiet_intervals(rec), elapsed;
	uint64_t k;

	/* The intervals that ended since the last flush without one. */
	k = (now - rec->sample_start) / rec->o.flush_interval_ns;
	if (rec->quiet_planned && k > rec->quiet_k + 1)
		rec->quiet_intervals += k - rec->quiet_k - 1;
	elapsed = k > rec->quiet_k ? (uint32_t)(k - rec->quiet_k) : 1;
	rec->quiet_k = k;
	/* Both rings looked at every flush: what came since the last. */
	q = stackstore__ring_intervals(rec->stacks, q, elapsed);
	q = drain__intervals(rec->maps.drain, q, elapsed);
	rec->quiet_planned = !rec->news && !rec->o.flush_strict && q > 1;
	if (rec->quiet_planned)
		rec->next_flush += (q - 1) * rec->o.flush_interval_ns;
	rec->news = 0;
	rec->procs_news = 0;
}

/*
 * Until when the loop takes side-band events at a stretch: the next flush
 * or status line, and the end of the interval @now is in at the latest
 * (a quiet stretch plans its flush intervals ahead): the copies ring and
 * the other sources are read in between.
 */
static uint64_t events_deadline(const struct recorder *rec, uint64_t now, uint64_t next_status)
{
	uint64_t until = drain__interval_end(rec->maps.drain, now);

	if (!until || until > rec->next_flush)
		until = rec->next_flush;
	return until < next_status ? until : next_status;
}

/*
 * Wait up to @ns for the loop's sources, @rec->o.wait_mask's signals let
 * in: epoll_pwait2() (Linux 5.11) wakes when asked, to the timer slack,
 * so that a flush starts right at its interval's end and the part of the
 * next interval it takes (drain.h) holds next to nothing; before it,
 * epoll_pwait()'s whole milliseconds.
 */
static int loop_wait(struct recorder *rec, struct epoll_event *evs, int nr, uint64_t ns)
{
#ifdef __NR_epoll_pwait2
	struct timespec ts = { (time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC) };
	long n;

	if (rec->pwait2 >= 0) {
		n = syscall(__NR_epoll_pwait2, rec->epfd, evs, nr, &ts, rec->o.wait_mask,
			    (size_t)(_NSIG / 8));
		if (n >= 0)
			rec->pwait2 = 1;
		/* Until it has worked once, any error but a signal says no
		 * (ENOSYS; EPERM from a seccomp filter that does not know it). */
		if (n >= 0 || rec->pwait2 > 0 || errno == EINTR)
			return (int)n;
		rec->pwait2 = -1;
	}
#endif
	return epoll_pwait(rec->epfd, evs, nr, (int)((ns + 999999) / 1000000), rec->o.wait_mask);
}

/* Held source @h took something (@found) at @now: news if it must
 * reach the file soon. */
static void held_took(struct recorder *rec, const struct held *h, int found, uint64_t now)
{
	if (found && h->news && h->news(rec))
		recorder__news(rec, now);
}

int recorder__run(struct recorder *rec)
{
	uint64_t start = rec->sample_start, interval = rec->o.flush_interval_ns;
	/* Without a status line, nothing to wake for each second. */
	uint64_t next_status = rec->o.on_status ? start + STATUS_INTERVAL_NS : UINT64_MAX;
	/* DURATION is of sampling: from the attach, not from the start of the
	 * loading (which a loaded machine can make last longer than it). */
	uint64_t deadline = rec->o.duration_ns ? start + rec->o.duration_ns : 0;
	struct epoll_event evs[16];
	struct held held[NR_HELD];
	const struct held *h;
	sigset_t blocked;
	int err, n, i, code;

	held_sources(rec, held);
	/*
	 * The stop signals come in while we work, not only while we wait:
	 * a step that blocks (a read of a file a traced process controls)
	 * then fails with EINTR, as the handlers have no SA_RESTART, and
	 * the flag ends the recording.  They are blocked only from the
	 * last look at the flag into the wait, which takes them, so a stop
	 * is never missed in between.
	 */
	if (rec->o.wait_mask)
		sigprocmask(SIG_SETMASK, rec->o.wait_mask, &blocked);
	for (;;) {
		uint64_t now = mono_ns(), wake;
		uint64_t timeout_ns;

		if (rec->o.stop && *rec->o.stop) {
			rec->end_reason = "signal";
			return 0;
		}
		if (deadline && now >= deadline) {
			rec->end_reason = "duration";
			return 0;
		}
		if (rec->child && child__pidfd(rec->child) < 0 &&
		    child__try_wait(rec->child, &code) == 1) {
			rec->cmd_exit_code = code;
			rec->end_reason = "command";
			return 0;
		}
		if (rotation_due(rec, now)) {
			if (rec->o.rotate)
				*rec->o.rotate = 0;
			err = recorder__rotate(rec);
			if (err)
				return err;
			now = loop_step_done(rec, LOOP_FLUSH, now);
			/* Counts on a grid: the next flush at its interval's end. */
			rec->next_flush = drain__interval_end(rec->maps.drain, now) ?: now + interval;
			rec->quiet_planned = 0;
			/* It drained the counts: the next plan's rate is of what
			 * came since. */
			rec->quiet_k = (now - rec->sample_start) / interval;
		}
		if (now >= rec->next_flush) {
			/* Without pidfds, the targets are looked at here. */
			if (rec->targets && !targets__check(rec->targets)) {
				rec->end_reason = "targets";
				return 0;
			}
			if (now - rec->next_flush > rec->flush_late_max_ns)
				rec->flush_late_max_ns = now - rec->next_flush;
			/* Full: this flush is the file's last. */
			err = rotation_size_due(rec) ? recorder__rotate(rec) : recorder__flush(rec, 0, 0);
			if (err)
				return err;
			/* After a stall, do not flush in a burst to catch up. */
			while (rec->next_flush <= now)
				rec->next_flush += interval;
			plan_next_flush(rec, now);
			now = loop_step_done(rec, LOOP_FLUSH, now);
		}
		if (now >= next_status) {
			recorder__status(rec, now);
			while (next_status <= now)
				next_status += STATUS_INTERVAL_NS;
			now = loop_step_done(rec, LOOP_STATUS, now);
		}
		wake = rec->next_flush < next_status ? rec->next_flush : next_status;
		if (deadline && deadline < wake)
			wake = deadline;
		if (rec->rot && rec->o.rotate_ns && rec->file_start + rec->o.rotate_ns < wake)
			wake = rec->file_start + rec->o.rotate_ns;
		/* Held sources whose hold is over: read for what came while
		 * they were held; armed again if that was nothing, and read
		 * once more (the arming's poll may have taken a wakeup). */
		for (i = 0; i < NR_HELD; i++) {
			if (wake__due(held[i].w, now)) {
				int found = held[i].take(rec);

				if (wake__read(held[i].w, now, found))
					found |= held[i].take(rec);
				held_took(rec, &held[i], found, now);
				now = loop_step_done(rec, held[i].step, now);
			}
			if (wake__next(held[i].w) < wake)
				wake = wake__next(held[i].w);
		}
		timeout_ns = wake > now ? wake - now : 0;
		if (rec->child && child__pidfd(rec->child) < 0 && timeout_ns > CHILD_POLL_NS)
			timeout_ns = CHILD_POLL_NS;
		if (rec->o.wait_mask) {
			sigprocmask(SIG_SETMASK, &blocked, NULL);
			if ((rec->o.stop && *rec->o.stop) || (rec->o.rotate && *rec->o.rotate))
				timeout_ns = 0;
		}
		n = loop_wait(rec, evs, 16, timeout_ns);
		rec->loop_wakes += n >= 0;
		if (rec->o.wait_mask)
			sigprocmask(SIG_SETMASK, rec->o.wait_mask, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			return recorder__errorf(rec, err, "epoll_wait: %s", strerror(-err));
		}
		for (i = 0; i < n; i++) {
			uint64_t t0 = mono_ns();

			/* Anything new: the interval ends with a flush. */
			if (evs[i].data.u32 == EV_STACKRING) {
				/* Half full: taken now, held until a flush. */
				recorder__news(rec, t0);
				stackstore__take_ring(rec->stacks);
				loop_step_done(rec, LOOP_RINGS, t0);
			} else if (evs[i].data.u32 == EV_RINGBUF) {
				rec->events_until = events_deadline(rec, t0, next_status);
				/* News if an event must reach the file soon
				 * (recorder__on_event()). */
				ring_buffer__consume(rec->rb);
				if (rec->news)
					recorder__news(rec, t0);
				loop_step_done(rec, LOOP_RINGS, t0);
			} else if ((h = held_of(held, evs[i].data.u32))) {
				/* Read now, then held off (wake.h). */
				wake__fired(h->w, t0);
				held_took(rec, h, h->take(rec), t0);
				loop_step_done(rec, h->step, t0);
			} else if (evs[i].data.u32 == EV_READER) {
				/* Symbol tables read: their symbols at the next
				 * flush; this interval's when the tables waiting
				 * for it hold the next reads back, or JIT lines
				 * came (esym__flush_wanted()). */
				worker__collect(rec->reader);
				if (esym__flush_wanted(rec->esym))
					recorder__news(rec, t0);
				loop_step_done(rec, LOOP_WORKER, t0);
			} else if (evs[i].data.u32 == EV_WORKER) {
				/* Tables built: into the maps, to their processes;
				 * copies waiting for them unwound at this
				 * interval's flush. */
				worker__collect(rec->worker);
				if (deferred__waiting(rec->deferred))
					recorder__news(rec, t0);
				loop_step_done(rec, LOOP_WORKER, t0);
			} else if (evs[i].data.u32 >= EV_TARGET) {
				/* A pidfd stays readable: watch it no more. */
				epoll_ctl(rec->epfd, EPOLL_CTL_DEL,
					  targets__fd(rec->targets, evs[i].data.u32 - EV_TARGET), NULL);
				if (!targets__check(rec->targets)) {
					rec->end_reason = "targets";
					return 0;
				}
			} else if (child__try_wait(rec->child, &code) == 1) {
				rec->cmd_exit_code = code;
				rec->end_reason = "command";
				return 0;
			}
		}
	}
}
