/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * deferred.h - the user stacks BPF deferred because their tables were
 * not ready (bpf/stkrec.h, STKREC_UW_DEFERRED): the copies of their
 * registers and stack, taken from the "defer_ring" and kept until the
 * placeholder stack is first written, then unwound (unwind_copy.h) into
 * the frames written in its place.  Copies no row referenced are dropped
 * after DEFERRED_FLUSHES flushes; all of them hold at most
 * DEFERRED_MAX_BYTES (a copy past that is dropped, its placeholder then
 * written as its leaf with the "fault" stop).
 */
#ifndef STKREC_DEFERRED_H
#define STKREC_DEFERRED_H

#include <stdint.h>

#include "stkrec.h"
#include "unwind_copy.h"

#define DEFERRED_FLUSHES 4
/* Flushes a copy may wait for a table being built (< DEFERRED_FLUSHES). */
#define DEFERRED_WAIT 2
#define DEFERRED_MAX_BYTES (32u << 20)

struct deferred;
struct unwinder;

struct deferred_stats {
	uint64_t taken;		/* copies taken from the ring */
	uint64_t unwound;	/* placeholders written as the copy's frames */
	uint64_t missing;	/* placeholders whose copy was dropped */
	uint64_t waited;	/* unwinds put off a flush: a table being built */
	uint64_t dropped;	/* copies dropped: over DEFERRED_MAX_BYTES, or
				 * no row referenced them in time */
};

/* Over the ring @ring_fd; copies unwound by @uw (@fp: --unwind=auto)
 * with the mappings @mapping(@ctx, ...) gives.  NULL with errno. */
struct deferred *deferred__new(int ring_fd, struct unwinder *uw, int fp,
			       unwind_copy_mapping_fn mapping, void *ctx);

/* Take the copies waiting in the ring.  Returns how many there were (0
 * for a NULL @d), or -errno. */
int deferred__take(struct deferred *d);

/* The ring's fd for epoll (readable: copies wait), or -1 for a NULL @d. */
int deferred__fd(const struct deferred *d);

/*
 * For stackstore__set_resolver(): @s is a placeholder; into its frames.
 * Returns 1 (@s undefined, the copy kept) when the walk met a table still
 * being built and the copy is younger than DEFERRED_WAIT flushes: asked
 * again at the next flush; else 0.
 */
int deferred__resolve(void *d, struct stkrec_stack *s);

/* @last: the flush that comes is the last of its file (a rotation) or
 * of the recording: no copy waits for it (its rows would reference a
 * stack the file never gets); 0 again after a rotation's.  Accepts NULL. */
void deferred__set_last(struct deferred *d, int last);

/* @now(@ctx of deferred__new(), tgid, leaf pc) says a copy must be
 * unwound at once, table or not (its process exited: its mappings go
 * soon; or its leaf is in an image an exec replaced, known only this
 * flush). */
void deferred__set_now(struct deferred *d, int (*now)(void *ctx, uint32_t tgid, uint64_t pc));

/* The bytes the copies hold (0 for a NULL @d). */
uint64_t deferred__bytes(const struct deferred *d);

/* Copies waiting for their placeholder to be written (0 for a NULL @d). */
size_t deferred__waiting(const struct deferred *d);

/* At the end of a flush: copies older than DEFERRED_FLUSHES go. */
void deferred__age(struct deferred *d);

void deferred__stats(const struct deferred *d, struct deferred_stats *st);

/* Accepts NULL. */
void deferred__free(struct deferred *d);

#endif
