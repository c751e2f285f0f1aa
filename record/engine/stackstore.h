/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stackstore.h - the stacks of a recording: the frames of new stacks as
 * the kernel sends them (the BPF "stack_ring"), held until a row
 * references them; which stacks are in the file already (and under which
 * file id); and the frames queued for the next STCK chunk.
 *
 * The kernel keeps no frames, only the set of stack ids it has sent (BPF
 * "stacks", an LRU hash that evicts by itself): a stack it sees again
 * after an eviction comes again, and is recognised here by its id (a hash
 * of the frames).  Held frames no row has referenced two flushes after
 * they came (a sample that was not counted, an off-CPU episode -m/-M
 * dropped) are forgotten, and their ids taken out of the kernel's set so
 * that the stack is sent again if it is ever seen again.  Off-CPU modes
 * keep those a blocked task still holds (stackstore__set_live()).
 * Written stacks are remembered (BPF id -> file id) while they are used;
 * once the store knows more than 3 times the kernel's set of them, those
 * no row and no resend used for 64 flushes are forgotten the same way
 * (STAT stacks_written_forgotten), so a long recording's memory does not
 * grow with every stack it ever wrote.
 *
 * The file numbers stacks 1, 2, 3... in the order they are written, not by
 * their 62-bit BPF hash: small ids cost one or two bytes in every count row
 * instead of nine, and compress.  The BPF id stays internal.
 *
 * Use: stackstore__new() -> stackstore__set_map() -> stackstore__set_ring()
 * -> (stackstore__take_ring() -> stackstore__see() for every stack a row
 * references -> stackstore__write()) once per flush -> stackstore__free().
 */
#ifndef STKREC_STACKSTORE_H
#define STKREC_STACKSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"
#include "stkrec.h"

struct stackstore;
struct idmap;

struct stackstore_stats {
	uint64_t written;	/* stacks queued for the file */
	uint64_t missing;	/* referenced, but the frames never came or
				 * were forgotten (a race with a forgetting:
				 * rare); written as -ENOENT */
	uint64_t from_ring;	/* new stacks taken from the stack ring */
	uint64_t resent;	/* ring records of stacks already written or
				 * held (the kernel's set had evicted them) */
	uint64_t forgotten;	/* held stacks no row referenced, forgotten */
	uint64_t ring_skipped;	/* ring records not kept: malformed, or no memory */
	uint64_t late;		/* copied stacks numbered before their table was in,
				 * written at a later flush */
	uint64_t deferred_same;	/* copied stacks whose frames were in the file
				 * already: written as that stack */
	uint64_t written_forgotten; /* written stacks unused for long, forgotten
				 * (sent and written again if seen again) */
};

/*
 * stackstore__new() - an empty store for a kernel set of @capacity ids
 * (--stack-storage-size): unwritten stacks that off-CPU holders keep are
 * held up to that many before the holders are asked which are still
 * wanted.  Returns NULL with errno = ENOMEM.
 */
struct stackstore *stackstore__new(uint32_t capacity);

/* Frees @ss and the stacks still held or queued.  Accepts NULL. */
void stackstore__free(struct stackstore *ss);

/* The BPF "stacks" set (u64 id -> u8) that forgotten ids are taken out
 * of; set once the mode's BPF object is loaded. */
void stackstore__set_map(struct stackstore *ss, int stacks_fd);

/*
 * stackstore__set_ring() - the BPF "stack_ring" (struct stkrec_stack
 * records of new stacks).  Returns 0 or -errno: without the ring no stack
 * can be read (the recording cannot start).
 */
int stackstore__set_ring(struct stackstore *ss, int ring_fd);

/* How many intervals (@max at most) of what the ring took since the last
 * call, @elapsed intervals ago, fill half of it at most (without a ring:
 * @max); no system call.  Call once a flush. */
uint32_t stackstore__ring_intervals(struct stackstore *ss, uint32_t max, uint32_t elapsed);

/* An fd that polls readable when BPF asks for the ring to be taken
 * (half full), or -1 before stackstore__set_ring(). */
int stackstore__ring_fd(const struct stackstore *ss);

/*
 * stackstore__set_live() - off-CPU modes: @collect_live(@ctx, live) puts
 * into @live the stack ids the mode's BPF maps still hold (mode.h
 * live_stacks()).  Stacks they hold are not forgotten however long ago
 * they came.  Without it, every unreferenced stack is forgotten two
 * flushes after it came (profile: a sample counts the stack it stores).
 */
void stackstore__set_live(struct stackstore *ss, int (*collect_live)(void *ctx, struct idmap *live),
			  void *ctx);

/*
 * stackstore__set_python() - call @py_new for each new user stack taken
 * from the ring that holds Python words (bpf/stkrec.h): its process and
 * its @n Python words, so that their code objects are read while the
 * process lives, not at the next flush.
 */
void stackstore__set_python(struct stackstore *ss,
			    void (*py_new)(void *ctx, uint32_t tgid, const uint64_t *words, uint32_t n),
			    void *ctx);

/*
 * stackstore__set_resolver() - a user stack whose frames are a deferred
 * placeholder (bpf/stkrec.h, STKREC_UW_DEFERRED) is given to
 * @resolve(@ctx, frames) when it is first written, which puts the real
 * frames in its place and returns 0, or returns 1: not yet (its id is
 * given to its rows, its frames written by stackstore__retry_late()).
 */
void stackstore__set_resolver(struct stackstore *ss, int (*resolve)(void *ctx, struct stkrec_stack *s),
			      void *ctx);

/*
 * stackstore__take_ring() - take the records the ring holds now: at a
 * flush once a counts map is emptied, before its rows are seen (every
 * stack a drained row references was sent before the row was counted),
 * and whenever the ring's fd polls readable.  Cannot fail: a record with
 * no room to keep it is counted (ring_skipped) and its stack goes missing.
 */
void stackstore__take_ring(struct stackstore *ss);

/*
 * stackstore__see() - a row drained in this flush references *@ref (a BPF
 * stack id, or -errno, which is left alone).  A stack already in the file
 * gets its file id; a held one is queued for STCK and numbered.  One whose
 * frames are not held becomes -ENOENT (STAT stack_lookup_missing), so the
 * file never references a missing stack.
 * @added: set to the frames of the stack when this call queued it, else to
 *         NULL (borrowed, valid until the next call on @ss).
 *
 * Returns 0 or -ENOMEM.
 */
int stackstore__see(struct stackstore *ss, uint32_t tgid, int64_t *ref,
		    const struct stkrec_stack **added);

/* Start loading what stackstore__see() of *@ref will look up (a row a
 * few rows ahead of the one being seen); -errno refs are left alone. */
void stackstore__prefetch(struct stackstore *ss, int64_t ref);

/*
 * stackstore__retry_late() - placeholders whose unwinding waited for a
 * table (@resolve returned 1) are resolved again; those that are now
 * written go to STCK under the id their rows have, and @added(@ctx,
 * their process, frames) is called for each, as @added of
 * stackstore__see() would say.  At a flush, before the rows are drained.
 * Returns 0 or the first error (-ENOMEM, or @added's).
 */
int stackstore__retry_late(struct stackstore *ss,
			   int (*added)(void *ctx, uint32_t tgid, const struct stkrec_stack *s),
			   void *ctx);

/*
 * stackstore__frames() - the frames of BPF stack @id if they are held and
 * not written yet (borrowed, valid until the next call on @ss), else NULL.
 */
const struct stkrec_stack *stackstore__frames(struct stackstore *ss, uint64_t id);

/*
 * stackstore__write() - write the queued stacks as one STCK chunk, if there
 * are any, and forget them (also on error); then take the ring (whether or
 * not rows were drained) and age the held stacks by one flush, forgetting
 * the unreferenced ones (see the top of this file).
 * @chunks is incremented when the chunk is written.  @final: the last
 * flush (nothing is aged).  Returns 0 or stk_writer__add_stacks()'s -errno.
 */
int stackstore__write(struct stackstore *ss, struct stk_writer *w, uint64_t *chunks, int final);

/*
 * stackstore__keep_written() - a rotating recording: keep the frames of
 * the stacks written to the current file (memory: about what its STCK
 * chunks hold, uncompressed), for stackstore__new_file().  Once, before
 * the first flush.  Returns 0 or -ENOMEM.
 */
int stackstore__keep_written(struct stackstore *ss);

/*
 * stackstore__new_file() - the file was closed after a flush and another
 * begins: no stack is in it yet, file ids start again at 1.  The stacks
 * written to the last file are held again (from the frames kept), as if
 * the kernel had just sent them, so that the new file's rows find them
 * and the file holds every stack its rows reference; those whose frames
 * were not kept leave the kernel's set, to be sent again when next seen.
 * The closed file's last flush must have written every copied stack its
 * rows reference (no resolver answered "later" then): one still waiting
 * is given up.  Returns 0 or -ENOMEM (nothing changed).
 */
int stackstore__new_file(struct stackstore *ss);

/* Distinct stacks in the file so far. */
size_t stackstore__count(const struct stackstore *ss);

/* Stacks held, not written yet. */
size_t stackstore__held(const struct stackstore *ss);

void stackstore__stats(const struct stackstore *ss, struct stackstore_stats *st);

/*
 * stackstore__add_record() - what stackstore__take_ring() does with one
 * ring record of @size bytes (exposed for tests): 0 always.
 */
int stackstore__add_record(struct stackstore *ss, const void *data, size_t size);

#endif
