// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile.bpf.c - stkrec's on-CPU sampler: one cpu-clock perf event per CPU
 * runs on_cpu_sample(), which counts (task, user stack, kernel stack,
 * interrupted kernel IP) in the kernel.  User space drains the counts every
 * flush interval; only unique stacks and counts ever cross to user space.
 * A sample that sent a new stack sends its row by "rows_ring" instead.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "unwind.bpf.h" /* [unwind] */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u8 user_stacks = 1;	/* 0 with -K */
const volatile __u8 kernel_stacks = 1;	/* 0 with -U */

/*
 * Two counts maps: samples go to counts[counts_idx]; user space flips the
 * index, waits a short grace period so samples in flight finish, then
 * drains the idle map with no program writing to it.
 */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct stkrec_count_key);
	__type(value, struct stkrec_count_lanes);
	__uint(max_entries, 1); /* sized by user space */
};
struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* Written by user space through the mmap'ed .bss. */
__u32 counts_idx = 0;
/* The flush intervals' grid (struct stkrec_count_key's slot): slot_ns is
 * written last, so a program that sees it set sees slot_base too. */
__u64 slot_base = 0;
__u64 slot_ns = 0;

/*
 * New keys each counts map took since user space last drained it (it
 * clears the drained map's), and how many of them wake it (half the map;
 * set before load, 0: none): user space may leave the counts in the kernel
 * for several intervals when the last ones brought few keys (a quiet
 * stretch, record/engine/recorder_loop.c), and a burst of new keys (threads
 * come and go, a workload changes) ends the stretch at the end of its
 * interval instead of filling the map.  COUNTS_TOLD is added once user
 * space was told, so that it is told once a drain.
 */
#define COUNTS_TOLD (1ULL << 62)
__u64 counts_new[2] = {};
const volatile __u64 counts_wake = 0;

/*
 * Counts map @set took a new key: past counts_wake, tell user space (no
 * other wake: the events ring's own comes only to a consumer that had read
 * everything).  A plain atomic add and a read, not the add's fetched value
 * (Linux 5.12+): two CPUs may both tell, which costs an event; a full
 * events ring leaves it untold, to be tried at the next new key.
 */
static __always_inline void counts_took(__u32 set)
{
	__u64 *n = &counts_new[set & 1], seen;
	struct stkrec_event *e;

	if (!counts_wake)
		return;
	__sync_fetch_and_add(n, 1);
	seen = *(volatile __u64 *)n;
	if (seen < counts_wake || seen >= COUNTS_TOLD)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return;
	}
	__sync_fetch_and_add(n, COUNTS_TOLD);
	__builtin_memset(e, 0, sizeof(*e));
	e->type = STKREC_EV_COUNTS_FILLING;
	events_submit(e, 1);
}

/* The flush interval a sample taken now is in: 0 until user space set the
 * grid, or before its start. */
static __always_inline __u32 sample_slot(void)
{
	__u64 ns = *(volatile __u64 *)&slot_ns, now, base;

	if (!ns)
		return 0;
	base = *(volatile __u64 *)&slot_base;
	now = bpf_ktime_get_ns();
	return now > base ? (__u32)((now - base) / ns) : 0;
}
/*
 * The rows of samples that sent a stack of theirs to "stack_ring" (struct
 * stkrec_count_row, count 1): a stack new to the kernel's set is almost
 * never sampled twice in a flush where stacks never repeat, and a ring
 * record costs less than a new counts map entry and its drain.  Taken by
 * user space at every flush only (no wakeup): when it is full, the row
 * goes to the counts map.  Sized by user space (record/modes/modeobj.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} rows_ring SEC(".maps");

/* Send @key's row of count 1 in counts set @set through "rows_ring": 0, or
 * -ENOSPC when the ring is full. */
static __always_inline int row_send(const struct stkrec_count_key *key, __u32 set)
{
	struct stkrec_count_row *r = bpf_ringbuf_reserve(&rows_ring, sizeof(*r), 0);

	if (!r) {
		stat_inc(STKREC_STAT_ROWS_RING_FULL);
		return -ENOSPC;
	}
	__builtin_memcpy(&r->key, key, sizeof(r->key));
	r->set = set;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	stat_inc(STKREC_STAT_ROWS_RING);
	return 0;
}

/*
 * Count one sample of @key (its slot: the lanes' window) in lane @lane of
 * @map: 1 when the key is new, 0 when it was there, -ENOSPC when the map
 * is full (count_inc()'s, with lanes).
 */
static __always_inline int count_lane_inc(void *map, const struct stkrec_count_key *key,
					  __u32 lane)
{
	struct stkrec_count_lanes *v, one = {};
	int err;

	lane &= STKREC_COUNT_LANES - 1;
	v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(&v->n[lane], 1);
		return 0;
	}
	one.n[lane] = 1;
	err = count_insert(map, key, &one);
	if (err)
		return err;
	v = bpf_map_lookup_elem(map, key);
	if (v)
		__sync_fetch_and_add(&v->n[lane], 1);
	return 0;
}

/*
 * Count the sample of @key in counts map @set (0 or 1); @stop: the stop
 * reason of its user stack's marker (uw_stop_count()).  A global function:
 * the verifier checks it once, not again for every state the stack walks
 * end in.
 */
__noinline int sample_count(struct stkrec_count_key *key, __u32 set, __u32 stop)
{
	__u32 slot;
	int err;

	if (!key)
		return 0;
	/* A sample that sent a stack: its row by the ring, unless full. */
	if (sample_pushed() && !row_send(key, set)) {
		err = 0;
	} else {
		/* In the map: the window of lanes, the interval's lane. */
		slot = key->slot;
		key->slot = slot / STKREC_COUNT_LANES;
		if (set)
			err = count_lane_inc(&counts1, key, slot);
		else
			err = count_lane_inc(&counts0, key, slot);
		key->slot = slot;
	}
	if (err > 0)
		counts_took(set);
	if (err >= 0) {
		stack_lost_count(key->user_stack, key->kernel_stack);
		uw_stop_count(stop, key->user_stack, 1);
	}
	proc_announce(key->tgid, key->tid, key->comm);
	return 0;
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct stkrec_count_key key = {};
	__u32 tgid = pid_tgid >> 32;
	__u32 tid = (__u32)pid_tgid;
	__u32 stop = 0, set;

	set = stat_begin(*(volatile __u32 *)&counts_idx);
	stat_inc(STKREC_STAT_SAMPLE_EVENTS);
	if (!task_wanted(tgid, tid))
		return 0;
	stat_inc(STKREC_STAT_SAMPLES);

	key.tgid = tgid;
	key.tid = tid;
	key.slot = sample_slot();
	{
		__u64 *image = bpf_map_lookup_elem(&images, &tgid);

		key.image_ns = image ? *image : 0;
	}
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	/* [unwind] user stacks through the .eh_frame unwinder (fp with
	 * --unwind=fp); the sampled registers when the sample hit user mode. */
	if (user_stacks) {
		__u64 uregs[6] = { ctx->regs.ip, ctx->regs.sp, ctx->regs.bp, ctx->regs.di,
				   ctx->regs.bx, ctx->regs.ax };

		key.user_stack = user_stack_store(ctx, (__s64)uregs[0] >= 0 ? uregs : NULL,
						  &stop);
	} else {
		key.user_stack = -ENOENT;
	}
	if (kernel_stacks) {
		/* profile.py's fix-up data, kept raw for the reporter: the
		 * interrupted IP if it is a kernel address (the upper half on
		 * x86-64 and arm64), and the return address above the
		 * interrupted frame. */
		__u64 ip = PT_REGS_IP(&ctx->regs);

		if ((__s64)ip < 0) {
			key.kernel_stack = stack_store(ctx, 1);
			key.kernel_ip = ip;
			bpf_probe_read_kernel(&key.kernel_ret_ip, sizeof(key.kernel_ret_ip),
					      (void *)(PT_REGS_FP(&ctx->regs) + 8));
		} else {
			/* Sampled in user mode: no kernel stack, which
			 * bpf_get_stack() would say after a callchain walk
			 * (half a microsecond a sample, on the workload). */
			stat_inc(STKREC_STAT_KSTACK_EFAULT);
			key.kernel_stack = -EFAULT;
		}
	} else {
		key.kernel_stack = -ENOENT;
	}

	sample_count(&key, set, stop);
	return 0;
}
