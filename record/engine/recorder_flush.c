// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder_flush.c - the steps of a recorder's flush, each one call into
 * the part that owns the state (procs, drain, ksymtab, stackstore, esym,
 * pidns) with the recorder's messages for its errors; their order and
 * what an error in each one stops are flush.c's (flush.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "clock.h"
#include "deferred.h"
#include "drain.h"
#include "esym.h"
#include "flush.h"
#include "ksymtab.h"
#include "pidns.h"
#include "procs.h"
#include "python.h"
#include "recorder_int.h"
#include "stackstore.h"

/* Time a flush gives the events waiting before it drains the counts. */
#define FLUSH_EVENTS_NS (NSEC_PER_SEC / 20)

/*
 * The steps of a flush; their order and what an error in each does are
 * flush.c's.  Each takes the recorder as @ctx.
 */
static int flush_consume(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	/* Snapshots of processes announced since the last poll first, so a
	 * row's process is not read twice. */
	if (rec->rb) {
		/* Rows of processes whose events wait are snapshotted as
		 * they are drained (recorder__see_task()). */
		rec->events_until = fc->final ? 0 : fc->t1 + FLUSH_EVENTS_NS;
		ring_buffer__consume(rec->rb);
	}
	return 0;
}

static int flush_refresh(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;
	int err = procs__refresh(rec->procs, rec->seq);

	(void)fc;
	return err ? recorder__errorf(rec, err, "out of memory") : 0;
}

static int flush_collect(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;
	int err;

	/* Copied stacks whose tables were being built: written now if in. */
	err = stackstore__retry_late(rec->stacks, recorder__user_stack_added, rec);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	err = drain__collect(rec->maps.drain, rec, fc->final);
	if (!err && !fc->final)
		recorder__freeze_bpf_stats(rec, drain__idle(rec->maps.drain));
	return err;
}

static int flush_resolve(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;
	int err = ksymtab__resolve(rec->ksyms);

	(void)fc;
	if (err == -ENOMEM)
		return recorder__errorf(rec, err, "out of memory");
	if (err)
		return recorder__errorf(rec, err, "name kernel addresses: %s", strerror(-err));
	return 0;
}

static int flush_stck(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	return stackstore__write(rec->stacks, rec->w, &rec->chunks, fc->final);
}

static int flush_ksym(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	return ksymtab__write(rec->ksyms, rec->w, &rec->chunks);
}

static int flush_esym(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;
	int err = esym__flush(rec->esym, rec->procs, rec->w, &rec->chunks);

	/* A file's last flush: the tables its stacks need, a moment more
	 * (each flush of those writes the ones in and starts the next). */
	while (!err && fc->file_end && rec->reader && esym__reading(rec->esym) &&
	       mono_ns() < rec->final_until) {
		recorder__wait_worker(rec, rec->final_until, WAIT_SYMBOLS, 0);
		err = esym__flush(rec->esym, rec->procs, rec->w, &rec->chunks);
	}
	err = err ?: python__flush(rec->python, rec->w, &rec->chunks);
	if (err == -ENOMEM)
		return recorder__errorf(rec, err, "out of memory");
	return err;
}

static int flush_take_ring(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	/* Reading binaries' symbols can take long: the ring of new
	 * stacks (the only copy of their frames; the drain took it
	 * last) is taken again so that it does not fill meanwhile. */
	stackstore__take_ring(rec->stacks);
	return 0;
}

static int flush_maps(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	return procs__write(rec->procs, rec->w, &rec->chunks);
}

static int flush_pidns(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	return pidns__write(rec->pidns, rec->w, &rec->chunks);
}

static int flush_rows(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;
	int err;

	if (!drain__pending(rec->maps.drain))
		return 0;
	/* Rows counted with their interval (drain.h) are bound by the
	 * file's start, not by this flush's. */
	err = drain__write(rec->maps.drain, rec->w, rec->t0, rec->file_start, fc->t1, &rec->chunks);
	if (!err)
		rec->file_rows = 1;
	return err;
}

static int flush_count(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	rec->seq++;
	return 0;
}

static int flush_stat(void *ctx, const struct flush_ctx *fc)
{
	return recorder__write_stats(ctx, fc->t1, 0);
}

static int flush_purge(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	(void)fc;
	/* Processes that exited before the previous flush have had their
	 * last rows drained and their maps taken by now. */
	procs__purge(rec->procs, rec->seq, rec->t0);
	deferred__age(rec->deferred);
	return 0;
}

static int flush_advance(void *ctx, const struct flush_ctx *fc)
{
	struct recorder *rec = ctx;

	rec->t0 = fc->t1;
	return 0;
}

static int flush_write_err(void *ctx, int err)
{
	return recorder__write_err(ctx, err);
}

const struct flush_ops recorder__flush_ops = {
	.run = {
		[FLUSH_CONSUME] = flush_consume,
		[FLUSH_REFRESH] = flush_refresh,
		[FLUSH_COLLECT] = flush_collect,
		[FLUSH_RESOLVE] = flush_resolve,
		[FLUSH_STCK] = flush_stck,
		[FLUSH_KSYM] = flush_ksym,
		[FLUSH_ESYM] = flush_esym,
		[FLUSH_TAKE_RING] = flush_take_ring,
		[FLUSH_MAPS] = flush_maps,
		[FLUSH_PIDNS] = flush_pidns,
		[FLUSH_ROWS] = flush_rows,
		[FLUSH_COUNT] = flush_count,
		[FLUSH_STAT] = flush_stat,
		[FLUSH_PURGE] = flush_purge,
		[FLUSH_ADVANCE] = flush_advance,
	},
	.write_err = flush_write_err,
};
