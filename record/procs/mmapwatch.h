/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mmapwatch.h - every executable mapping of the processes stkrec follows,
 * as it happens, from the kernel's perf side-band records: a dummy
 * software event (PERF_COUNT_SW_DUMMY, counts nothing) per CPU with
 * mmap2, build_id, comm_exec and task set, read through its ring buffer.
 *
 * This is how stkrec knows the mappings of processes that live for less
 * than a flush interval, such as the compilers and test binaries of a CI
 * job: by the time the recorder would read /proc/PID/maps they are gone,
 * or were read while ld.so had not mapped the libraries yet.  A process
 * is "complete" when the watcher saw its exec (or its fork from a complete
 * process): then the watcher knows every executable mapping it has, each
 * with the build-id the kernel read when it was mapped (Linux 5.12+).
 *
 * Use: mmapwatch__new() -> mmapwatch__add() (-p, -- CMD) ->
 * mmapwatch__open() -> mmapwatch__drain() when an fd is readable and
 * before using the state -> mmapwatch__snapshot() -> mmapwatch__purge()
 * -> mmapwatch__free().  Tests feed records with mmapwatch__process().
 */
#ifndef STKREC_MMAPWATCH_H
#define STKREC_MMAPWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"
#include "stk.h"

/* Which processes to keep state for (the file only ever gets the ones
 * with samples; this bounds the memory on a busy machine). */
enum mmapwatch_follow {
	MMAPWATCH_ALL,		/* every process started after mmapwatch__open() */
	MMAPWATCH_LISTED,	/* the mmapwatch__add()ed processes only (-p) */
	MMAPWATCH_TREE,		/* the added processes and their descendants (-- CMD) */
};

struct mmapwatch_stats {
	uint64_t records;		/* side-band records read */
	uint64_t lost;			/* records the kernel dropped (ring buffer full) */
	uint64_t execs;			/* execs seen of followed processes */
	uint64_t mmaps;			/* executable mappings recorded */
	uint64_t kernel_build_ids;	/* of which with the kernel's build-id */
	uint64_t snapshots;		/* mmapwatch__snapshot() calls that succeeded */
	uint64_t build_id_reads;	/* build-ids read from the file instead */
	uint64_t build_id_errors;	/* ... that could not be */
	uint64_t seeded;		/* processes running before the watcher saw their
					 * exec, read from /proc when they forked */
};

struct mmapwatch;

/* A watcher with no events open.  NULL with errno = ENOMEM or EINVAL. */
struct mmapwatch *mmapwatch__new(enum mmapwatch_follow follow);

/* Frees @w, closing its events.  Accepts NULL. */
void mmapwatch__free(struct mmapwatch *w);

/*
 * mmapwatch__add() - follow process @tgid (LISTED, TREE).  It is not
 * complete until the watcher sees it exec.  Returns 0 or -ENOMEM.
 */
int mmapwatch__add(struct mmapwatch *w, uint32_t tgid);

/*
 * mmapwatch__open() - open the dummy event on each of @cpus (all online
 * CPUs: a process maps on whichever CPU it runs), each with a ring buffer
 * of @pages pages (a power of 2).  Asks for build-ids in the records;
 * on kernels before 5.12, which refuse that, opens without them (the
 * files' build-ids are then read by path, see mmapwatch__snapshot()).
 * TREE with a process added before: the events are that process's,
 * inherited by every task it starts (the rest of the machine's mappings
 * never reach the rings); otherwise every task's.  As for perf record --
 * CMD, a task of the tree that execs a set-user-ID or file-capability
 * program (its mm no longer dumpable) loses the events, it and what it
 * starts: the kernel reports it as exited, and its mappings then come
 * from /proc/PID/maps when its samples need them.
 * Returns 0, or perf_event_open()'s / mmap()'s -errno (nothing stays open).
 */
int mmapwatch__open(struct mmapwatch *w, const int *cpus, size_t nr_cpus, size_t pages);

/* 1 if the kernel puts build-ids in the records (after a successful open). */
int mmapwatch__kernel_build_ids(const struct mmapwatch *w);

/* Number of event fds, and fd @i, for epoll (readable: records waiting). */
size_t mmapwatch__nr_fds(const struct mmapwatch *w);
int mmapwatch__fd(const struct mmapwatch *w, size_t i);

/*
 * mmapwatch__drain() - read every record waiting in the ring buffers and
 * apply them in time order.  Records that do not fit in memory are lost
 * and handled as records the kernel dropped: counted in
 * mmapwatch_stats.lost, and no process is complete until it execs again.
 * Returns whether there were records.
 */
int mmapwatch__drain(struct mmapwatch *w);

/*
 * mmapwatch__process() - apply the records in @buf (@len bytes of whole
 * perf records laid out as in a ring buffer: MMAP2, COMM, FORK, EXIT,
 * LOST with a {pid, tid, time} sample_id trailer), sorted by time first.
 * For tests.  Returns 0, -EINVAL for a malformed record, or -ENOMEM.
 */
int mmapwatch__process(struct mmapwatch *w, const void *buf, size_t len);

/*
 * mmapwatch__take_changed() - the processes that exec'ed, mapped code or
 * exited since the last call (*@tgids: valid until the next drain), as
 * the drains found them; their count.
 */
size_t mmapwatch__take_changed(struct mmapwatch *w, const uint32_t **tgids);

/*
 * mmapwatch__complete() - 1 if the watcher knows every executable mapping
 * of @tgid, else 0.  @gen (may be NULL) receives a number that changes
 * whenever the mappings change, @exited whether the process has exited.
 */
int mmapwatch__complete(const struct mmapwatch *w, uint32_t tgid, uint64_t *gen, int *exited);

/*
 * mmapwatch__image() - a number for @tgid's current image: it changes when
 * the process execs (or its pid is reused), not when it maps more, so two
 * snapshots with the same image differ only by what was mapped in
 * between.  0 if the watcher has no state for @tgid.
 */
uint64_t mmapwatch__image(const struct mmapwatch *w, uint32_t tgid);

/*
 * mmapwatch__snapshot() - the executable mappings of complete process
 * @tgid now, sorted by address, as procmaps__snapshot() gives them (and
 * freed by procmaps__free_snapshot()); time_ns is the CLOCK_MONOTONIC time
 * of its last change (exec or mapping).  Build-ids come from the records,
 * else from the file by path when it is still the same (device, inode),
 * the vDSO's from @pm.
 * Returns 0, -ENOENT (not complete) or -ENOMEM.
 */
int mmapwatch__snapshot(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			const char *comm, struct stk_proc_maps *out);

/*
 * mmapwatch__snapshot_old() - as mmapwatch__snapshot(), of the image of
 * @tgid that a sample with image time @image_ns was taken in, when an exec
 * has replaced it since: @image_ns is the CLOCK_MONOTONIC time of the exec
 * that began the sampled image as the kernel's sched_process_exec saw it,
 * 0 for an image begun before the recording (or a child before its first
 * exec: its parent's mappings).  The watcher keeps the last few images
 * of each process it knew whole.  @start_ns and @end_ns receive the times
 * of the execs that began and ended that image (start 0: none seen);
 * time_ns is its last change, before @end_ns.
 * Returns 0, -ENOENT (@image_ns is of the current image, or the image is
 * not kept) or -ENOMEM.
 */
int mmapwatch__snapshot_old(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			    const char *comm, uint64_t image_ns, struct stk_proc_maps *out,
			    uint64_t *start_ns, uint64_t *end_ns);

/*
 * mmapwatch__old_mapping() - the executable mapping holding @addr in the
 * newest image of @tgid an exec replaced that has one, into @out (its
 * path borrowed from the watcher: valid until the next drain or purge),
 * with its build-id as mmapwatch__snapshot() gives it: for a copied stack
 * of a child between fork and exec, unwound before its row says which
 * image it was taken in.  Returns 0 or -ENOENT.
 */
int mmapwatch__old_mapping(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			   uint64_t addr, struct stk_mapping *out);

/* Forget processes that exited before @before_ns (CLOCK_MONOTONIC), and
 * the images execs replaced before it. */
void mmapwatch__purge(struct mmapwatch *w, uint64_t before_ns);

void mmapwatch__stats(const struct mmapwatch *w, struct mmapwatch_stats *st);

/* A number that changes whenever the maps or the image of a process the
 * watcher follows change (not for records of other processes). */
uint64_t mmapwatch__gen(const struct mmapwatch *w);

#endif
