// SPDX-License-Identifier: BSD-2-Clause
/*
 * trace.bpf.c - stkrec's trace mode: stacks at any event (as BCC's
 * stackcount and perf record -e EVENT -g).  One program per kind of
 * attachment, all counting (event, task, user stack, kernel stack) in the
 * kernel: on_raw_tp (raw tracepoints, where the kernel's BTF has the
 * tracepoint and raw tracepoint links take a cookie: Linux 6.10+),
 * on_tracepoint (perf tracepoint events, by the id tracefs gives: the
 * syscalls' and the rest), on_probe (uprobes, uretprobes, kprobes) and on_sw_event
 * (software perf events: page faults, context switches, migrations).
 * Each attachment's BPF cookie is its event's index in the recording's
 * list, so one program serves every event of its kind.  Every event is
 * counted (not sampled), up to --rate-cap a second per event: the events
 * over it are counted in STAT, never dropped silently.
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
const volatile __u64 rate_cap = 0;	/* events a second per event; 0: no cap */

/* Two counts maps switched by counts_idx, as in profile.bpf.c. */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct stkrec_trace_key);
	__type(value, __u64);
	__uint(max_entries, 1); /* sized by user space */
};
struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* event index -> this second's count, for rate_cap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct stkrec_trace_rate);
	__uint(max_entries, 1); /* one per event, sized by user space */
} rate SEC(".maps");

/* Written by user space through the mmap'ed .bss. */
__u32 counts_idx = 0;

/*
 * 1 if event @ev is over its cap this second.  The window is one second
 * of bpf_ktime_get_ns() for all CPUs; two CPUs starting a new second at
 * once may each reset it (a few events more pass), but every event is
 * either counted or capped, never both nor neither.
 */
static __always_inline int over_cap(__u32 ev)
{
	struct stkrec_trace_rate *r;
	__u64 sec;

	if (!rate_cap)
		return 0;
	r = bpf_map_lookup_elem(&rate, &ev);
	if (!r)
		return 0;
	sec = bpf_ktime_get_ns() / 1000000000ull;
	if (r->second != sec) {
		r->second = sec;
		r->n = 0;
	}
	return __sync_fetch_and_add(&r->n, 1) >= rate_cap;
}

/* One event of index @ev in the current task: @uregs the user registers
 * if the context holds them (pc, sp, bp, di, bx, ax), else NULL. */
static __always_inline int trace_event(void *ctx, __u32 ev, const __u64 *uregs)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct stkrec_trace_key key = {};
	__u32 tgid = pid_tgid >> 32;
	__u32 tid = (__u32)pid_tgid;
	__u32 stop = 0, set;
	int err;

	set = stat_begin(*(volatile __u32 *)&counts_idx);
	stat_inc(STKREC_STAT_SAMPLE_EVENTS);
	if (!task_wanted(tgid, tid))
		return 0;
	if (over_cap(ev)) {
		stat_inc(STKREC_STAT_TRACE_CAPPED);
		return 0;
	}
	stat_inc(STKREC_STAT_SAMPLES);

	key.event = ev;
	key.tgid = tgid;
	key.tid = tid;
	{
		__u64 *image = bpf_map_lookup_elem(&images, &tgid);

		key.image_ns = image ? *image : 0;
	}
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	key.user_stack = user_stacks ? user_stack_store(ctx, uregs, &stop) : -ENOENT;
	key.kernel_stack = kernel_stacks ? stack_store(ctx, 1) : -ENOENT;

	if (set)
		err = count_inc(&counts1, &key);
	else
		err = count_inc(&counts0, &key);
	if (err >= 0) {
		stack_lost_count(key.user_stack, key.kernel_stack);
		uw_stop_count(stop, key.user_stack, 1);
	}
	proc_announce(tgid, tid, key.comm);
	return 0;
}

/* Raw tracepoints: no registers, the user stack comes from the task's;
 * the kernel stack starts in the tracing code (bpf_trace_run*), which the
 * report drops. */
SEC("raw_tp")
int on_raw_tp(void *ctx)
{
	return trace_event(ctx, (__u32)bpf_get_attach_cookie(ctx), NULL);
}

/* Tracepoints through perf_event_open(PERF_TYPE_TRACEPOINT): the
 * registers are the kernel's, the user stack comes from the task's. */
SEC("tracepoint")
int on_tracepoint(void *ctx)
{
	return trace_event(ctx, (__u32)bpf_get_attach_cookie(ctx), NULL);
}

/* Uprobes and uretprobes (the registers are the user's) and kprobes. */
SEC("kprobe")
int on_probe(struct pt_regs *ctx)
{
	__u64 uregs[6] = { ctx->ip, ctx->sp, ctx->bp, ctx->di, ctx->bx, ctx->ax };

	return trace_event(ctx, (__u32)bpf_get_attach_cookie(ctx),
			   (__s64)uregs[0] >= 0 ? uregs : NULL);
}

/* Software events: a page fault's registers are the faulting user
 * context's; a context switch's the kernel's. */
SEC("perf_event")
int on_sw_event(struct bpf_perf_event_data *ctx)
{
	__u64 uregs[6] = { ctx->regs.ip, ctx->regs.sp, ctx->regs.bp, ctx->regs.di,
			   ctx->regs.bx, ctx->regs.ax };

	return trace_event(ctx, (__u32)bpf_get_attach_cookie(ctx),
			   (__s64)uregs[0] >= 0 ? uregs : NULL);
}
