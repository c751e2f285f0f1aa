// SPDX-License-Identifier: BSD-2-Clause
/*
 * flush.c - the order of a flush and what an error in each step does.
 * The steps themselves are the recorder's (recorder.c); this file only
 * says which runs when, so that a test can check the order with fakes.
 */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "flush.h"

enum flush_kind {
	FLUSH_READ,	/* before any chunk: an error ends the flush */
	FLUSH_WRITE,	/* while no step failed: an error is a write error */
	FLUSH_AFTER,	/* whenever the step before it ran */
	FLUSH_ALWAYS,	/* once the writes are done or one failed */
	FLUSH_DONE,	/* only after every step succeeded */
};

/* Flags of a step. */
#define FLUSH_NOT_FINAL 1	/* not on the final flush */
#define FLUSH_ENOMEM_ENDS 2	/* -ENOMEM ends the flush, as a READ step's error */

static const struct flush_step {
	const char *name;
	enum flush_kind kind;
	unsigned int flags;
} flush_steps[FLUSH_NR_STEPS] = {
	[FLUSH_CONSUME] = { "consume", FLUSH_READ, 0 },
	[FLUSH_REFRESH] = { "refresh", FLUSH_READ, 0 },
	[FLUSH_COLLECT] = { "collect", FLUSH_READ, 0 },
	[FLUSH_RESOLVE] = { "resolve", FLUSH_READ, 0 },
	[FLUSH_STCK] = { "STCK", FLUSH_WRITE, 0 },
	[FLUSH_KSYM] = { "KSYM", FLUSH_WRITE, 0 },
	/* Reading binaries' symbols can run out of memory: not the file's fault. */
	[FLUSH_ESYM] = { "ESYM", FLUSH_WRITE, FLUSH_ENOMEM_ENDS },
	/* The ring of new stacks (the only copy of their frames) must not
	 * fill while ESYM reads symbols, however ESYM ended. */
	[FLUSH_TAKE_RING] = { "take_ring", FLUSH_AFTER, 0 },
	[FLUSH_MAPS] = { "MAPS", FLUSH_WRITE, 0 },
	[FLUSH_PIDNS] = { "PIDN", FLUSH_WRITE, 0 },
	[FLUSH_ROWS] = { "rows", FLUSH_WRITE, 0 },
	[FLUSH_COUNT] = { "count", FLUSH_ALWAYS, 0 },
	/* The final STAT comes after the final META (recorder__finish()). */
	[FLUSH_STAT] = { "STAT", FLUSH_WRITE, FLUSH_NOT_FINAL },
	/* Processes that exited before the previous flush have had their
	 * last rows drained and their maps taken only if all went well. */
	[FLUSH_PURGE] = { "purge", FLUSH_DONE, 0 },
	[FLUSH_ADVANCE] = { "advance", FLUSH_DONE, 0 },
};

const char *flush__step_name(enum flush_step_id id)
{
	return (unsigned int)id < FLUSH_NR_STEPS ? flush_steps[id].name : "?";
}

int flush__run(const struct flush_ops *ops, void *ctx, const struct flush_ctx *fc)
{
	int err = 0, ran = 0, e;
	unsigned int i;

	for (i = 0; i < FLUSH_NR_STEPS; i++) {
		const struct flush_step *s = &flush_steps[i];
		int run;

		switch (s->kind) {
		case FLUSH_WRITE:
		case FLUSH_DONE:
			run = !err;
			break;
		case FLUSH_AFTER:
			run = ran;
			break;
		default:
			run = 1;
			break;
		}
		if (s->flags & FLUSH_NOT_FINAL && fc->final)
			run = 0;
		ran = run;
		if (!run)
			continue;
		if (fc->step_ns_max) {
			uint64_t t0 = mono_ns(), t;

			e = ops->run[i](ctx, fc);
			t = mono_ns() - t0;
			if (t > fc->step_ns_max[i])
				fc->step_ns_max[i] = t;
		} else {
			e = ops->run[i](ctx, fc);
		}
		if (!e)
			continue;
		if (s->kind != FLUSH_WRITE || (s->flags & FLUSH_ENOMEM_ENDS && e == -ENOMEM))
			return e;
		err = ops->write_err(ctx, e);
	}
	return err;
}
