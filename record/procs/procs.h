/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procs.h - the processes of a recording: a maps snapshot of every process
 * its rows reference, taken once (and again when it maps more or execs),
 * queued for the next MAPS chunk, and kept while the process lives so new
 * user stacks can be checked against it.
 *
 * Snapshots come from the mmap watcher (mmapwatch.h) for processes whose
 * exec it saw, else from /proc/PID/maps (procmaps.h).  The vDSO's image,
 * which no reporter could find on disk, goes once into an ESYM chunk just
 * before the first MAPS chunk that maps it.
 *
 * Functions taking @seq get the number of flushes done: the flush whose
 * rows are being collected.  A process that exited is forgotten two
 * flushes later, once its last rows are drained and its maps written.
 *
 * Use: procs__new() -> procs__watch() -> procs__see() / procs__snapshot()
 * / procs__exited() / procs__check_stack() while collecting ->
 * procs__refresh() before and procs__write() after collecting ->
 * procs__purge() once per flush -> procs__unwatch() -> procs__free().
 */
#ifndef STKREC_PROCS_H
#define STKREC_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "mmapwatch.h"
#include "procmaps.h"
#include "stk.h"
#include "stkrec.h"

struct procs;

struct procs_stats {
	uint64_t exits;			/* processes seen exiting */
	uint64_t maps_gone;		/* snapshots failed: the process was gone */
	uint64_t maps_errors;		/* ... for another reason */
	uint64_t resnapshots;		/* taken again: a stack left the known mappings */
	uint64_t maps_events;		/* snapshots built from mmap records */
	uint64_t vdso_embedded;		/* 1 once the vDSO's image is in an ESYM chunk */
	uint64_t old_images;		/* snapshots of images an exec replaced, for their rows */
	uint64_t exits_unseen;		/* processes found gone though no exit was seen */
	struct procmaps_stats pm;	/* /proc/PID/maps reader and build-ids */
	int watching;			/* the mmap watcher runs: @mw is valid */
	struct mmapwatch_stats mw;
};

/*
 * procs__new() - no processes, no watcher.  Takes a copy of our own vDSO
 * image now, for its ESYM chunk.  NULL with errno = ENOMEM.
 */
struct procs *procs__new(void);

/* Frees @p, its snapshots and its watcher.  Accepts NULL. */
void procs__free(struct procs *p);

/*
 * procs__watch() - start the mmap watcher for @follow's processes (@pids:
 * -p's, or -- CMD's stopped before its exec, followed from now on; CMD's
 * tree only is watched) on every online CPU, whatever -C says: a
 * process maps on any CPU.  Returns 0, -ENOMEM, or the -errno that keeps
 * the watcher from opening (perf_event_open() refused...): then there is
 * none, and every snapshot comes from /proc/PID/maps.
 */
int procs__watch(struct procs *p, enum mmapwatch_follow follow, const uint32_t *pids,
		 size_t nr_pids);

/* 1 if the watcher runs and the kernel puts build-ids in its records
 * (MMAP2 build-ids need Linux 5.12+). */
int procs__kernel_build_ids(const struct procs *p);

/* The watcher's fds, for epoll (readable: call procs__drain_events()). */
size_t procs__nr_fds(const struct procs *p);
int procs__fd(const struct procs *p, size_t i);

/* Read the mmap records waiting, if there is a watcher.  Returns whether
 * there were any. */
int procs__drain_events(struct procs *p);

/* A number that changes whenever the records read changed the maps or
 * the image of a process followed (0 without a watcher). */
uint64_t procs__events_gen(const struct procs *p);

/* Stop and free the watcher (snapshots taken stay).  Idempotent. */
void procs__unwatch(struct procs *p);

/*
 * procs__snapshot() - take a new snapshot of @tgid (@comm: 16 bytes,
 * NUL-terminated) now; it replaces the previous one.  A process that
 * cannot be read is remembered as such, so it is not retried every
 * flush.  Returns 0 or -ENOMEM.
 */
int procs__snapshot(struct procs *p, uint32_t tgid, const char *comm, uint64_t seq);

/* A row references @tgid: snapshot it if it has none yet, and write its
 * snapshots from now on (procs__write()).  0 or -ENOMEM. */
int procs__see(struct procs *p, uint32_t tgid, const char comm[16], uint64_t seq);

/*
 * procs__see_image() - rows of @tgid sampled in the image begun at
 * @image_ns (see mmapwatch__snapshot_old()): when an exec has replaced
 * it, the watcher's snapshot of that image (named @comm, as the rows)
 * is queued for the next procs__write(), once per image and flush, and
 * *@end_ns is set to the time of that exec; else *@end_ns = 0 and the
 * rows belong to the snapshot procs__see() keeps.  Returns 0 or -ENOMEM.
 */
int procs__see_image(struct procs *p, uint32_t tgid, const char comm[16], uint64_t image_ns,
		     uint64_t *end_ns);

/*
 * procs__image_covers() - 1 if @leaf lies in an executable mapping of the
 * replaced image of @tgid that procs__see_image() found for @image_ns
 * this flush, or with @current of procs__see()'s (current) snapshot.
 */
int procs__image_covers(const struct procs *p, uint32_t tgid, uint64_t image_ns, int current,
			uint64_t leaf);

/* @tgid exited: keep its snapshot for rows still to be drained (an
 * interval or two), then forget it. */
void procs__exited(struct procs *p, uint32_t tgid, uint64_t seq);

struct unwinder;

/*
 * procs__set_unwinder() - keep @uw's (borrowed; NULL: none) process
 * mappings current: every snapshot taken from now on is given to it and
 * every exit removes one.  @pids (-p) run already: they are snapshotted
 * now (kept until a row references them) and their tables loaded, before
 * their first sample.
 */
void procs__set_unwinder(struct procs *p, struct unwinder *uw, const uint32_t *pids,
			 size_t nr_pids);

/*
 * procs__set_python() - keep @py's (borrowed; NULL: none) interpreters
 * current, as procs__set_unwinder() keeps the unwinder's.  Before
 * procs__set_unwinder(): the processes it loads now go to both.
 */
struct python;
void procs__set_python(struct procs *p, struct python *py);

/* The BPF unwinder met an address of @tgid outside the mappings it knows:
 * give it the current ones (the snapshot is refreshed at the next flush,
 * or when a leaf needs it). */
void procs__unwind_stale(struct procs *p, uint32_t tgid);

/*
 * procs__check_stack() - @s is a new user stack of @tgid.  A leaf IP
 * outside the process's known mappings means it mapped something since
 * its snapshot (dlopen, JIT): read its maps again, at most once per flush.
 * Returns 0 or -ENOMEM.
 */
int procs__check_stack(struct procs *p, uint32_t tgid, const struct stkrec_stack *s,
		       uint64_t seq);

/*
 * procs__refresh() - snapshots built from mmap records go stale when the
 * process maps more (ld.so mapping libraries after the first sample,
 * dlopen) or execs: take them again, before this flush writes MAPS, so
 * the rows of this interval find every mapping.  Returns 0 or -ENOMEM.
 */
int procs__refresh(struct procs *p, uint64_t seq);

/*
 * procs__write() - write the snapshots queued since the last call of
 * processes a row referenced (procs__see()) as one MAPS chunk; the others
 * stay queued until a row references them or they are replaced (no MAPS
 * for a process the file has no row of), the vDSO's ESYM chunk first if
 * this is the first to map our vDSO, and forget what was written (also on
 * error).  @chunks is incremented for every chunk written.  Returns 0 or stk_writer__add_*()'s -errno.
 */
int procs__write(struct procs *p, struct stk_writer *w, uint64_t *chunks);

/*
 * procs__new_file() - the file was closed after a flush and another
 * begins: the latest snapshot of every process known is queued again,
 * written to the new file once a row there references the process (as
 * procs__write() does), and the vDSO's image with the first that maps
 * it.  Returns 0 or -ENOMEM (the snapshots queued so far stay queued).
 */
int procs__new_file(struct procs *p);

/*
 * procs__purge() - after flush @seq - 1 was written (@seq: flushes done),
 * forget the processes that exited before the previous flush, in the
 * watcher too (those that exited before @before_ns, CLOCK_MONOTONIC):
 * their last rows are drained and their maps taken by now.
 */
void procs__purge(struct procs *p, uint64_t seq, uint64_t before_ns);

/*
 * procs__set_on_gone() - call @gone(@ctx, tgid) for each process
 * procs__purge() finds gone though no exit was seen of it (the kernel
 * tells the exit of processes it announced since their exec only): what
 * else the recorder holds for it goes as for an exit.
 */
void procs__set_on_gone(struct procs *p, void (*gone)(void *ctx, uint32_t tgid), void *ctx);

void procs__stats(const struct procs *p, struct procs_stats *st);

/*
 * procs__mapping() - the executable mapping holding @addr in the latest
 * snapshot of @tgid, or NULL.  Borrowed: valid until the next call that
 * snapshots or purges.
 */
const struct stk_mapping *procs__mapping(const struct procs *p, uint32_t tgid, uint64_t addr);

/* The latest snapshot of @tgid, or NULL (none, or not readable).
 * Borrowed, as procs__mapping()'s. */
const struct stk_proc_maps *procs__maps(const struct procs *p, uint32_t tgid);

/* Process @tgid has exited (its snapshot goes at a coming flush), or has
 * none. */
int procs__gone(const struct procs *p, uint32_t tgid);

/*
 * procs__mapping_any() - procs__mapping(), else the executable mapping
 * holding @addr in an image of @tgid an exec replaced, met by this
 * flush's rows (procs__see_image()) or, newest first, kept by the mmap
 * watcher: a stack copied in the last steps of an execve (a vfork()ed sh
 * running a command) is of the image before.  Borrowed, as
 * procs__mapping()'s (the watcher's: until the next call).
 */
const struct stk_mapping *procs__mapping_any(struct procs *p, uint32_t tgid, uint64_t addr);

#endif
