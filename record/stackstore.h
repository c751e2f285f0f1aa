/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stackstore.h - the stacks of a recording: which BPF stacks are in the
 * file already (and under which file id), which are still resident in the
 * BPF "stacks" map, and the frames of new ones queued for the next STCK
 * chunk.  It also keeps that map from filling up (stackstore__evict()).
 *
 * The file numbers stacks 1, 2, 3... in the order they are written, not by
 * their 62-bit BPF hash: small ids cost one or two bytes in every count row
 * instead of nine, and compress.  The BPF id stays internal.
 *
 * Use: stackstore__new() -> stackstore__set_map() -> stackstore__see() for
 * every stack a row references -> stackstore__write() -> stackstore__evict()
 * once per flush -> stackstore__free().
 */
#ifndef STKREC_STACKSTORE_H
#define STKREC_STACKSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"
#include "stkrec.h"

struct stackstore;

struct stackstore_stats {
	uint64_t written;	/* stacks queued for the file */
	uint64_t evicted;	/* deleted from the BPF map to make room (by us) */
	uint64_t missing;	/* referenced but not in the BPF map (a sweep or a
				 * BPF drop raced with a new holder: rare) */
	uint64_t swept;		/* deleted by stackstore__sweep() */
	uint64_t sweeps;	/* stackstore__sweep() runs */
	uint64_t from_ring;	/* new stacks read from the stack ring */
	uint64_t from_map;	/* new stacks read from the map (one syscall each) */
	uint64_t ring_skipped;	/* ring records not kept: malformed, or no memory */
};

struct idmap;

/*
 * stackstore__new() - an empty store for a BPF stacks map of @capacity
 * entries.  Returns NULL with errno = ENOMEM.
 */
struct stackstore *stackstore__new(uint32_t capacity);

/* Frees @ss and the stacks still queued.  Accepts NULL. */
void stackstore__free(struct stackstore *ss);

/* The BPF "stacks" map (u64 id -> struct stkrec_stack) to read and evict
 * from; set once the mode's BPF object is loaded. */
void stackstore__set_map(struct stackstore *ss, int stacks_fd);

/*
 * stackstore__set_ring() - the BPF "stack_ring" (struct stkrec_stack
 * records of new stacks), so that new stacks need no map lookup.  Returns
 * 0 or -errno; without the ring every new stack is looked up.
 */
int stackstore__set_ring(struct stackstore *ss, int ring_fd);

/*
 * stackstore__take_ring() - once a counts map is emptied, before its rows
 * are seen: take the records the ring holds now.  They are kept until the
 * second stackstore__write() after (an off-CPU episode is counted a flush
 * after its stack was stored).  A stack the ring or the cache missed is
 * looked up in the map instead, so this cannot fail.
 */
void stackstore__take_ring(struct stackstore *ss);

/*
 * stackstore__see() - a row drained in flush @seq references *@ref (a BPF
 * stack id, or -errno, which is left alone).  A stack already in the file
 * gets its file id; a new one is taken from the stack ring or read from
 * the BPF map, queued for STCK and numbered.  A stack the map does not have (it never should: only
 * written stacks are deleted) becomes -ENOENT, so the file never
 * references a missing stack.
 * @added: set to the frames of the stack when this call queued it, else to
 *         NULL (borrowed, valid until the next call on @ss).
 *
 * Returns 0 or -ENOMEM.
 */
int stackstore__see(struct stackstore *ss, int64_t *ref, uint64_t seq,
		    const struct stkrec_stack **added);

/*
 * stackstore__write() - write the queued stacks as one STCK chunk, if there
 * are any, and forget them (also on error).  @chunks is incremented when
 * the chunk is written.  Returns 0 or stk_writer__add_stacks()'s -errno.
 */
int stackstore__write(struct stackstore *ss, struct stk_writer *w, uint64_t *chunks);

/*
 * stackstore__evict() - keep room in the BPF stacks map after a flush was
 * written.  @in_map: entries the map holds now (BPF's stored minus dropped
 * minus evicted here); @lost: samples that lost their stack for want of
 * room so far (STAT samples_stack_lost).  Stacks in the file cost only a
 * re-insert if sampled again once deleted (an id is a hash of the frames
 * and does not change).  When fewer than a headroom of entries are free
 * (an eighth of the map, doubled after every flush interval that lost
 * stacks, up to a half, and shrinking back while none are lost), the
 * written stacks referenced longest ago are deleted until the headroom
 * and a sixteenth of the map more are free.  Returns 1 when the headroom
 * is still not free (the map holds stacks the file does not have: see
 * stackstore__sweep()), else 0 (also when out of memory: the next flush
 * tries again).
 */
int stackstore__evict(struct stackstore *ss, uint64_t in_map, uint64_t lost);

/*
 * stackstore__sweep() - when the map stays short of room after stackstore__evict()
 * (of stacks nothing written references: several off-CPU episodes blocked
 * in one stack, all dropped by -m/-M, so no single one could drop it),
 * delete every stack in the map that is in the file, and every other one
 * that @collect_live(@ctx, live) does not put into @live (the stack ids
 * the mode's maps still hold, mode.h live_stacks()).  The map's keys are
 * read before the holders, so a stack is deleted only if it had no holder
 * when they were read; a holder that takes it in the moment between its
 * check and its deletion finds it missing (stack_lookup_missing), never
 * another stack.  Returns 0, -ENOMEM or @collect_live()'s -errno.
 */
int stackstore__sweep(struct stackstore *ss, int (*collect_live)(void *ctx, struct idmap *live),
		      void *ctx);

/* Distinct stacks in the file so far. */
size_t stackstore__count(const struct stackstore *ss);

void stackstore__stats(const struct stackstore *ss, struct stackstore_stats *st);

#endif
