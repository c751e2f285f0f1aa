// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile.bpf.c - stkrec's on-CPU sampler: one cpu-clock perf event per CPU
 * runs on_cpu_sample(), which counts (task, user stack, kernel stack,
 * interrupted kernel IP) in the kernel.  User space drains the counts every
 * flush interval; only unique stacks and counts ever cross to user space.
 * A sample that sent a new stack, or whose row was not counted lately,
 * sends its row by "rows_ring" instead.
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
 * clears the drained map's), with the rows of known stacks that went by
 * "rows_ring" instead, and how many of them wake it (half the map;
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
 * The rows of samples that sent a stack of theirs to "stack_ring", and of
 * those whose key no sample on this CPU counted lately (row_lately()):
 * struct stkrec_count_row, count 1.  A stack new to the kernel's set is
 * almost never sampled twice in a flush where stacks never repeat, nor is
 * a known stack's key there (its thread's other stack, or its leaf, is
 * new), and a ring record costs less than a new counts map entry and its
 * drain.  Taken by user space at every flush only (no wakeup): when it is
 * full, the row goes to the counts map.  Sized by user space
 * (record/modes/modeobj.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} rows_ring SEC(".maps");

/* Send @key's row of count 1 in counts set @set and interval @slot (the
 * key's own slot is the map's window) through "rows_ring": 0, or -ENOSPC
 * when the ring is full. */
static __always_inline int row_send(const struct stkrec_count_key *key, __u32 set, __u32 slot)
{
	struct stkrec_count_row *r = bpf_ringbuf_reserve(&rows_ring, sizeof(*r), 0);

	if (!r) {
		stat_inc(STKREC_STAT_ROWS_RING_FULL);
		return -ENOSPC;
	}
	__builtin_memcpy(&r->key, key, sizeof(r->key));
	r->key.slot = slot;
	r->set = set;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	stat_inc(STKREC_STAT_ROWS_RING);
	return 0;
}

/*
 * Tags of the keys (a hash of all but the interval) not in the counts map
 * when sampled lately, per CPU, ROW_LATELY slots: a key found there
 * repeats (a loop's stack, sampled again and again) and is counted in the
 * map, where its later samples add up; one not found (a key counted once
 * in a while, or never again) sends its row by "rows_ring".  A key that
 * repeats sends one row by the ring when its tag is first set, or again
 * after another key took its slot: a second row of the same key in its
 * interval's chunk, which readers sum (SPEC.md CNTS).
 */
#define ROW_LATELY 1024

struct row_tags {
	__u32 tag[ROW_LATELY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct row_tags);
	__uint(max_entries, 1);
} row_lately_tags SEC(".maps");

/* Was @key, not in the counts map, sampled lately on this CPU?  Its tag
 * is set either way. */
static __always_inline int row_lately(const struct stkrec_count_key *key)
{
	__u64 h = (__u64)key->user_stack ^ (__u64)key->kernel_stack * 0x9E3779B97F4A7C15ULL ^
		  ((__u64)key->tid << 32 | key->tgid) * 0xC2B2AE3D27D4EB4FULL ^ key->kernel_ip ^
		  key->kernel_ret_ip * 0x165667B19E3779F9ULL ^ key->image_ns;
	struct row_tags *t;
	__u32 zero = 0, tag, i;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	t = bpf_map_lookup_elem(&row_lately_tags, &zero);
	if (!t)
		return 1;
	i = (__u32)h & (ROW_LATELY - 1);
	tag = (__u32)(h >> 32) | 1;
	if (t->tag[i] == tag)
		return 1;
	t->tag[i] = tag;
	return 0;
}

/* Add @key's sample (its slot: the lanes' window) to lane @lane of its
 * entry in counts map @map: 0, or -ENOENT when it has none yet. */
static __always_inline int count_lane_bump(void *map, const struct stkrec_count_key *key,
					   __u32 lane)
{
	struct stkrec_count_lanes *v = bpf_map_lookup_elem(map, key);

	if (!v)
		return -ENOENT;
	__sync_fetch_and_add(&v->n[lane & (STKREC_COUNT_LANES - 1)], 1);
	return 0;
}

/*
 * @key (its slot: the lanes' window), which a lookup did not find or
 * which was not looked up, into counts map @map with its sample in lane
 * @lane: 1 when added, 0 when it was there after all (counted in it),
 * -ENOSPC when the map is full (count_insert()).
 */
static __always_inline int count_lane_add(void *map, const struct stkrec_count_key *key,
					  __u32 lane)
{
	struct stkrec_count_lanes one = {};
	int err;

	one.n[lane & (STKREC_COUNT_LANES - 1)] = 1;
	err = count_insert(map, key, &one);
	if (err)
		return err;
	count_lane_bump(map, key, lane);
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
	void *map = set ? (void *)&counts1 : (void *)&counts0;
	int err = -ENOENT, pushed, lately;
	__u32 slot;

	if (!key)
		return 0;
	pushed = sample_pushed();
	/* In the map: the window of lanes, the interval's lane. */
	slot = key->slot;
	key->slot = slot / STKREC_COUNT_LANES;
	if (!pushed)
		err = count_lane_bump(map, key, slot);
	if (err) {
		/* Not in the map yet: a sample that sent a stack, or whose
		 * key was not sampled lately, sends its row (its interval)
		 * by the ring, unless full; else a new key in the map.
		 * counts_took() counts the map's new keys and the ring's
		 * rows of known stacks alike (a burst of new keys that goes
		 * by the ring ends a quiet stretch too, before the ring is
		 * full); a new stack's row is not: the stack ring wakes
		 * user space. */
		lately = row_lately(key);	/* its tag set either way */
		if ((pushed || !lately) && !row_send(key, set, slot))
			err = !pushed;
		else
			err = count_lane_add(map, key, slot);
	}
	key->slot = slot;
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
