// SPDX-License-Identifier: BSD-2-Clause
/*
 * offcpu.bpf.c - stkrec's off-CPU modes, one object for both:
 *
 *  offcpu   time blocked, by the blocked task's user and kernel stacks
 *           (as BCC's offcputime);
 *  offwake  the same, also keyed by the task that woke it and the stacks
 *           it was in when it did (as BCC's offwaketime); wakers = 1.
 *
 * sched_switch runs in the context of the task going off CPU (prev): its
 * stacks are taken there and kept in "start" with the time.  When that task
 * is switched in again, its blocked time is added to the counts under its
 * stacks.  sched_waking runs in the waker's own context (sched_wakeup may
 * run later on the wakee's CPU, in whatever task is current there), so the
 * waker's stacks are taken there and kept in "wakers" until the wakee runs.
 * Only aggregates cross to user space, drained every flush interval.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "unwind.bpf.h" /* [unwind] */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h */
#define TASK_DEAD 0x0080

/* Set by user space before load. */
const volatile __u8 user_stacks = 1;	/* 0 with -K */
const volatile __u8 kernel_stacks = 1;	/* 0 with -U */
const volatile __u8 wakers_wanted = 0;	/* offwake */
const volatile __u8 threads = 0;	/* 0 all, 1 user threads only (-u), 2 kernel threads only (-k) */
const volatile __u8 state_filter = 0;	/* --state given */
const volatile __u32 state_mask = 0;	/* --state MASK; 0 means "state == 0" (preempted) */
const volatile __u64 min_block_us = 1;	/* -m */
const volatile __u64 max_block_us = ~0ULL; /* -M */
/* sched_switch has a 4th argument, prev_state, since Linux 5.18: the state
 * the task blocked in, read before a racing wakeup can change __state. */
const volatile __u8 switch_has_prev_state = 0;

/* tid -> struct stkrec_offcpu_start, for tasks that passed the filters. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stkrec_offcpu_start);
	__uint(max_entries, 1); /* sized by user space */
} start SEC(".maps");

/* tid of the wakee -> struct stkrec_offcpu_waker (offwake only). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stkrec_offcpu_waker);
	__uint(max_entries, 1); /* sized by user space */
} wakers SEC(".maps");

/* Two counts maps switched by counts_idx, as in profile.bpf.c. */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct stkrec_offcpu_key);
	__type(value, struct stkrec_offcpu_value);
	__uint(max_entries, 1); /* sized by user space */
};
struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* Written by user space through the mmap'ed .bss. */
__u32 counts_idx = 0;

/* Kernels before 5.14 call the field "state" (and make it a long). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

static __always_inline int thread_wanted(struct task_struct *t)
{
	int kthread = (BPF_CORE_READ(t, flags) & PF_KTHREAD) != 0;

	if (threads == 1)
		return !kthread;
	if (threads == 2)
		return kthread;
	return 1;
}

static __always_inline int state_wanted(__u32 state)
{
	if (!state_filter)
		return 1;
	/* As offwaketime.py: 0 selects preempted (running) tasks, other
	 * values any of the bits (states are partly bit masks). */
	if (state_mask == 0)
		return state == 0;
	return (state & state_mask) != 0;
}

/* Returns 0, or -ENOSPC when the episode was not counted (map full). */
static __always_inline int count_add(void *map, const struct stkrec_offcpu_key *key, __u64 ns)
{
	struct stkrec_offcpu_value one = { 1, ns }, *v;
	long err;

	v = bpf_map_lookup_elem(map, key);
	if (!v) {
		err = bpf_map_update_elem(map, key, &one, BPF_NOEXIST);
		if (!err)
			return 0;
		if (err != -EEXIST) {
			stat_inc(STKREC_STAT_COUNTS_FULL);
			return -ENOSPC;
		}
		/* Another CPU added the same key meanwhile. */
		v = bpf_map_lookup_elem(map, key);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->blocked_ns, ns);
	return 0;
}

/* prev (current) goes off CPU: remember when, and its stacks. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u32 state, __u64 now)
{
	__u32 tid = prev->pid, tgid = prev->tgid;
	struct stkrec_offcpu_start s = {};
	long err;

	/* The idle tasks (pid 0 on every CPU) never block; a dead task
	 * never comes back. */
	if (tid == 0 || (state & TASK_DEAD) || prev->exit_state)
		return;
	if (!task_wanted(tgid, tid) || !thread_wanted(prev) || !state_wanted(state))
		return;
	s.ts = now;
	s.tgid = tgid;
	bpf_get_current_comm(s.comm, sizeof(s.comm));
	s.user_stack = user_stacks ? user_stack_store(ctx, NULL, &s.user_stop) : -ENOENT; /* [unwind] */
	s.kernel_stack = kernel_stacks ? stack_store(ctx, 1) : -ENOENT;
	err = bpf_map_update_elem(&start, &tid, &s, BPF_ANY);
	if (err) {
		stat_inc(STKREC_STAT_START_FULL);
		return;
	}
	proc_announce(tgid, tid, s.comm);
}

/* next comes back on CPU: count the time it was away. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct stkrec_offcpu_key key = {};
	__u32 tid = next->pid, stop, waker_stop = 0;
	struct stkrec_offcpu_waker *w = NULL;
	struct stkrec_offcpu_start *s;
	__u64 delta, us;
	int err;

	if (tid == 0)
		return;
	s = bpf_map_lookup_elem(&start, &tid);
	if (!s)
		return; /* left before we attached, or filtered out */
	delta = now - s->ts;
	key.tgid = s->tgid;
	key.tid = tid;
	__builtin_memcpy(key.comm, s->comm, sizeof(key.comm));
	key.user_stack = s->user_stack;
	key.kernel_stack = s->kernel_stack;
	stop = s->user_stop;
	bpf_map_delete_elem(&start, &tid);

	key.waker_user_stack = -ENOENT;
	key.waker_kernel_stack = -ENOENT;
	if (wakers_wanted)
		w = bpf_map_lookup_elem(&wakers, &tid);
	if (w) {
		key.waker_tgid = w->tgid;
		key.waker_tid = w->tid;
		__builtin_memcpy(key.waker_comm, w->comm, sizeof(key.waker_comm));
		key.waker_user_stack = w->user_stack;
		key.waker_kernel_stack = w->kernel_stack;
		waker_stop = w->user_stop;
		bpf_map_delete_elem(&wakers, &tid);
	}

	/* -m/-M in whole microseconds, as offwaketime.py compares them. */
	us = delta / 1000;
	if (us < min_block_us || us > max_block_us) {
		/* Its stacks were sent at switch-out and waking; user space
		 * forgets the ones no counted episode references. */
		stat_inc(STKREC_STAT_OFFCPU_FILTERED);
		return;
	}
	stat_inc(STKREC_STAT_SAMPLES);
	/* Per-CPU running total, so the status line can show blocked time
	 * without draining the counts maps. */
	stat_add(STKREC_STAT_BLOCKED_NS, delta);
	if (stat_set_now())
		err = count_add(&counts1, &key, delta);
	else
		err = count_add(&counts0, &key, delta);
	if (err)
		return;
	if (key.user_stack == -ENOMEM || key.kernel_stack == -ENOMEM ||
	    key.waker_user_stack == -ENOMEM || key.waker_kernel_stack == -ENOMEM)
		stat_inc(STKREC_STAT_STACK_LOST);
	/* Episodes, both sides in offwake, as the report counts them. */
	uw_stop_count(stop, key.user_stack, 1);
	uw_stop_count(waker_stop, key.waker_user_stack, 1);
}

/* BPF_PROG() names arguments a program may not use. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"

/*
 * Only the three arguments every kernel has are declared; prev_state is
 * read from ctx[3] when the kernel has it, a branch the verifier drops as
 * dead (switch_has_prev_state is a constant once loaded) on older ones.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 state;

	stat_begin(*(volatile __u32 *)&counts_idx);
	state = switch_has_prev_state ? (__u32)ctx[3] : task_state(prev);
	switch_out(ctx, prev, state, now);
	switch_in(next, now);
	return 0;
}

/* Runs in the waker's context, before the wakee can run. */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = p->pid;
	struct stkrec_offcpu_waker w = {};

	/* Only wakees we are timing; anything else is not worth a stack. */
	if (!bpf_map_lookup_elem(&start, &tid))
		return 0;
	stat_begin(*(volatile __u32 *)&counts_idx);
	w.tgid = pid_tgid >> 32;
	w.tid = (__u32)pid_tgid;
	bpf_get_current_comm(w.comm, sizeof(w.comm));
	w.user_stack = user_stacks ? user_stack_store(ctx, NULL, &w.user_stop) : -ENOENT; /* [unwind] */
	w.kernel_stack = kernel_stacks ? stack_store(ctx, 1) : -ENOENT;
	/* A second wakeup before the wakee ran replaces the first waker. */
	if (bpf_map_update_elem(&wakers, &tid, &w, BPF_ANY)) {
		stat_inc(STKREC_STAT_WAKER_FULL);
		return 0;
	}
	proc_announce(w.tgid, w.tid, w.comm);
	return 0;
}

/*
 * A new task's first wakeup (fork, clone) does not go through sched_waking
 * and it has never been off CPU: its tid is new, so whatever "start" or
 * "wakers" hold under it belongs to a task that had it before and must not
 * be charged to this one.
 */
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_sched_wakeup_new, struct task_struct *p)
{
	__u32 tid = p->pid;

	bpf_map_delete_elem(&start, &tid);
	if (wakers_wanted)
		bpf_map_delete_elem(&wakers, &tid);
	return 0;
}

#pragma clang diagnostic pop
