/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mode.h - what a recording mode (profile, offcpu, offwake)
 * provides to the recorder, and what the recorder offers back.
 *
 * A mode owns one BPF skeleton.  Every skeleton includes bpf/common.bpf.h,
 * so the maps the recorder drives itself (stacks, stats, events, tgids,
 * tids) exist in all of them under the same names; the mode hands their
 * fds over in struct rec_maps.  Its counts maps it hands over as a struct
 * drain (drain.h), which says how an entry becomes a row of the mode's
 * chunk (CNTS for profile, OFFC for off-CPU modes) and tells the recorder
 * about every task, stack and kernel address in the rows first, so that
 * the recorder writes STCK, MAPS and KSYM before the rows that need them.
 */
#ifndef STKREC_MODE_H
#define STKREC_MODE_H

#include <stdint.h>

#include "recorder.h"
#include "unwinder.h"
#include "stk.h"

struct rec_maps {
	int stacks_fd;	/* u64 id -> struct stkrec_stack */
	int stats_fd;	/* __u64[CPUs][STKREC_STATS_STRIDE], BPF_F_MMAPABLE */
	int events_fd;	/* ring buffer of struct stkrec_event */
	int stack_ring_fd; /* ring buffer of new stacks (struct stkrec_stack) */
	int tgids_fd;	/* u32 -> u8 */
	int tids_fd;	/* u32 -> u8 */
	/* The kernel address symbolizer (struct stkrec_ksym_io and the
	 * symbolize_kaddrs program), or -1: the recorder then reads
	 * /proc/kallsyms instead. */
	int ksym_io_fd;
	int ksym_prog_fd;
	/* The counts maps, into rows (owned by the mode). */
	struct drain *drain;
	/* [unwind] The .eh_frame unwinder's maps (record/unwind/unwinder.h), or -1
	 * when it is off (--unwind=fp, or it could not be loaded:
	 * @unwind_load_err is then the load's -errno). */
	struct unwinder_maps unwind;
	int unwind_load_err;
	/* The Python frame walk's interpreters (tgid -> struct
	 * stkrec_py_proc, bpf/python.bpf.h), or -1. */
	int py_procs_fd;
	int py_code_ring_fd;	/* the code objects it meets first, or -1 */
};

struct rec_mode;

struct rec_mode_ops {
	const char *name;
	/*
	 * Open and load the BPF object configured from @o (filters, map
	 * sizes, -U/-K); @follow says that -- CMD is followed through fork.
	 * Fill @maps.  Returns 0 or -errno with recorder__errorf() called.
	 */
	int (*open)(struct rec_mode **m, const struct recorder_opts *o, int follow,
		    struct rec_maps *maps, struct recorder *rec);
	/* Attach everything; sampling starts.  0 or -errno (errorf'd). */
	int (*attach)(struct rec_mode *m, const struct recorder_opts *o, struct recorder *rec);
	/* Stop sampling: close perf fds and links.  Idempotent. */
	void (*detach)(struct rec_mode *m);
	/*
	 * Optional (NULL: the mode stores stacks only for what it counts).
	 * Call @fn(@ctx, id) for every stack id the mode's BPF maps hold
	 * that no drained row has carried to user space yet (off-CPU: the
	 * threads off CPU now, their wakers, the counts not drained), so
	 * that the stack store forgets only stacks nothing holds
	 * (stackstore__set_live()).
	 * Returns 0 or the first -errno of @fn.
	 */
	int (*live_stacks)(struct rec_mode *m, int (*fn)(void *ctx, int64_t id), void *ctx);
	void (*free)(struct rec_mode *m);
	/*
	 * Optional (NULL: none): the sample periods the mode's perf events
	 * have elapsed since they were enabled, summed over CPUs, from the
	 * kernel's own counts; frozen at detach.  The ground truth STAT
	 * cpu_clock_periods holds for the samples delivered.
	 */
	uint64_t (*event_periods)(struct rec_mode *m);
};

extern const struct rec_mode_ops profile_mode_ops;
extern const struct rec_mode_ops offcpu_mode_ops;	/* mode_offcpu.c */
extern const struct rec_mode_ops offwake_mode_ops;
extern const struct rec_mode_ops trace_mode_ops;	/* mode_trace.c */

/*
 * For modes, while their rows are collected (drain.h add_row()): a row references @tgid (with @comm), so its
 * maps must be in the file.  Returns 0 or -ENOMEM.
 */
int recorder__see_task(struct recorder *rec, uint32_t tgid, const char comm[16]);

/*
 * recorder__see_image() - a row of @tgid (@comm, the BPF key's: not
 * always NUL-terminated) was sampled in the process
 * image that the exec at @image_ns began (0: one begun before the
 * recording, or a child's before its first exec; the BPF key's
 * image_ns).  If an exec has replaced that image since, its snapshot is
 * queued for MAPS (once per flush) and *@end_ns = that exec's time, else
 * 0 (drain.h row_end()); also 0 when the leaf of @user_stack (the BPF
 * stack id) is in the new image only (procs__leaf_in_new_image()).
 * Returns 0 or -ENOMEM.
 */
int recorder__see_image(struct recorder *rec, uint32_t tgid, const char comm[16],
			uint64_t image_ns, int64_t user_stack, uint64_t *end_ns);

/*
 * A row of @tgid references *@ref (a stack id or -errno).  The recorder
 * queues the stack's frames for the STCK chunk if they are not in the file
 * yet.  If the stack cannot be read from the map (it never should), *@ref
 * is replaced by -ENOENT so the file never references a missing stack.
 * Returns 0 or -ENOMEM.
 */
int recorder__see_stack(struct recorder *rec, uint32_t tgid, int64_t *ref);
/* A row a few rows on will reference @ref: start loading what
 * recorder__see_stack() of it looks up (drain_opts prefetch_row()). */
void recorder__prefetch_stack(struct recorder *rec, int64_t ref);
/* A counts map was just emptied: take the new stacks its rows reference
 * from the stack ring (every one was sent before its row was counted). */
void recorder__take_new_stacks(struct recorder *rec);

/* A row references kernel address @addr (interrupted IP, return IP). */
int recorder__see_kaddr(struct recorder *rec, uint64_t addr);

/* Set the error message; returns @err (negative errno) for chaining. */
int recorder__errorf(struct recorder *rec, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
