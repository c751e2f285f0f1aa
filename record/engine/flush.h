/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flush.h - the order of a flush and what an error in each step does
 * (flush.c).  recorder.c supplies the steps; a test can supply fakes,
 * so that the order is checked without root or BPF.
 */
#ifndef STK_FLUSH_H
#define STK_FLUSH_H

#include <stddef.h>
#include <stdint.h>

/* What every step of one flush is told. */
struct flush_ctx {
	int final;		/* the last flush: STAT comes later, after META */
	int file_end;		/* the last flush of its file (a rotation's, or
				 * the final): the symbols being read for its
				 * stacks are waited for (recorder.c's bound) */
	uint64_t t1;		/* end of the interval being flushed (monotonic) */
	uint64_t *step_ns_max;	/* FLUSH_NR_STEPS: each step's longest run, or NULL */
};

/*
 * The steps, in the order a flush runs them.  Everything a row references
 * is written before the rows: STCK, KSYM, ESYM and MAPS before CNTS/OFFC,
 * so that a file cut short never has a count whose stack, symbols or
 * mappings are missing -- but for two kinds of late writes SPEC allows (a
 * chunk may define what an earlier one references): a copied stack whose
 * table was being built (stackstore__retry_late(), up to 2 flushes
 * later) and the symbols of a table read on the worker (esym.h).
 */
enum flush_step_id {
	FLUSH_CONSUME,		/* take the events waiting in the ring buffer */
	FLUSH_REFRESH,		/* snapshot the processes announced (procs__refresh) */
	FLUSH_COLLECT,		/* drain the mode's counts into rows (drain__collect) */
	FLUSH_RESOLVE,		/* name the kernel addresses seen (ksymtab__resolve) */
	FLUSH_STCK,		/* stacks not in the file yet */
	FLUSH_KSYM,		/* kernel symbols not in the file yet */
	FLUSH_ESYM,		/* user and JIT symbols not in the file yet (esym__flush) */
	FLUSH_TAKE_RING,	/* take the ring of new stacks again (ESYM can take long) */
	FLUSH_MAPS,		/* process snapshots taken since the last flush */
	FLUSH_PIDNS,		/* processes of other PID namespaces */
	FLUSH_ROWS,		/* the mode's rows (CNTS/OFFC), if any */
	FLUSH_COUNT,		/* one more flush done (seq) */
	FLUSH_STAT,		/* the STAT chunk (not on the final flush) */
	FLUSH_PURGE,		/* forget processes that exited before the last flush */
	FLUSH_ADVANCE,		/* the next interval starts at t1 */
	FLUSH_NR_STEPS
};

/*
 * What the recorder (or a test) supplies: a function for every step, each
 * returning 0 or -errno, and @write_err, called with the error of a step
 * that writes chunks (it marks the recording's writes failed and returns
 * @err).  A step that fails before any chunk says why itself.
 */
struct flush_ops {
	int (*run[FLUSH_NR_STEPS])(void *ctx, const struct flush_ctx *fc);
	int (*write_err)(void *ctx, int err);
};

/*
 * flush__run() - run the steps of @ops in order with @ctx and @fc:
 *  - CONSUME, REFRESH, COLLECT, RESOLVE read state before any chunk: an
 *    error ends the flush at once and is returned as the step gave it;
 *  - STCK, KSYM, ESYM, MAPS, PIDNS, ROWS and STAT write chunks: each runs
 *    while no step failed; an error goes through @write_err, and the later
 *    writing steps do not run (ESYM's -ENOMEM is no write error: it ends
 *    the flush at once, as a reading step's would);
 *  - TAKE_RING runs whenever ESYM ran and did not end the flush (even if
 *    ESYM failed to write);
 *  - COUNT runs once the writes are done or one failed;
 *  - STAT does not run on the final flush;
 *  - PURGE and ADVANCE run only if every step succeeded.
 * Returns 0 or the first error.
 */
int flush__run(const struct flush_ops *ops, void *ctx, const struct flush_ctx *fc);

/* The name of step @id ("STCK", "take_ring", ...), for tests and traces. */
const char *flush__step_name(enum flush_step_id id);

#endif
