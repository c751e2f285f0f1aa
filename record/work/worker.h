/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * worker.h - the thread that does stkrec's per-binary work (building
 * unwind tables) off the main loop, so that no file a traced process maps
 * can delay a drain, a flush, a signal or the end of a recording.
 *
 * Jobs wait in one queue per owner (the uid owning the file); the next
 * job is the one of the owner whose jobs have run the least time so far:
 * one user's hostile files (a second each) cannot hold up another's quick
 * ones; and each owner but root (uid 0) gets a tenth of a CPU over time
 * (a burst of 4 s first): past it, its jobs wait.  An urgent job (a sample is waiting for it) goes
 * before its owner's others.  run() is called on the worker thread and
 * must bound its own time, and give up once *@stop is set; done() is
 * called on the main thread, from worker__collect(), which the main loop
 * calls when worker__fd() is readable.  Only the main thread calls
 * worker__*().
 */
#ifndef STKREC_WORKER_H
#define STKREC_WORKER_H

#include <stdint.h>

struct worker;

struct worker_job {
	uint32_t owner;				/* the fair-share key: a uid */
	/* On the worker thread. */
	void (*run)(struct worker_job *j, const _Atomic int *stop);
	/* On the main thread, once run() has returned, or instead of it
	 * (@cancelled: the worker stopped first).  Frees the job. */
	void (*done)(struct worker_job *j, int cancelled);
	/* The worker's. */
	struct worker_job *next;
	int urgent;
	uint64_t queued_ns;
};

struct worker_stats {
	uint64_t jobs;			/* jobs run, in all */
	uint64_t queued;		/* waiting or running now */
	uint64_t queued_max;		/* the most ever waiting at once */
	uint64_t wait_ns_max;		/* the longest a job waited to start */
	uint64_t run_ns;		/* time spent in run(), in all */
	uint64_t run_ns_max;		/* the longest one run() */
	uint64_t cpu_ns;		/* the worker's CPU time in run(), in all */
	uint64_t share_waits;		/* waits for an owner's share to grow */
};

/* Start the thread, at nice @nice (WORKER_NICE_SAME: the caller's).
 * NULL with errno. */
#define WORKER_NICE_SAME 100
struct worker *worker__new(int nice);

/* Readable (an eventfd) when done jobs wait for worker__collect(). */
int worker__fd(const struct worker *w);

/* Queue @j (the worker's until its done()). */
void worker__submit(struct worker *w, struct worker_job *j);

/* Move @j, if it is still waiting, to the front of its owner's queue. */
void worker__promote(struct worker *w, struct worker_job *j);

/* Call done() of every job finished since the last call; returns how
 * many. */
int worker__collect(struct worker *w);

void worker__stats(const struct worker *w, struct worker_stats *st);

/* Stop the thread (a running job is asked to give up, then waited for),
 * then done(cancelled) for every job not collected.  Accepts NULL. */
void worker__free(struct worker *w);

#endif
