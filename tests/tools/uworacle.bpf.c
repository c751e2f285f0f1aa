// SPDX-License-Identifier: BSD-2-Clause
/*
 * uworacle.bpf.c - the unwinder oracle's sampler (tests/tools/uworacle.c):
 * on every user-mode sample of the traced process, bpf/unwind.bpf.h's
 * walk (the very code stkrec runs) and, beside it, a copy of the
 * registers and of the top of the user stack (as perf's
 * PERF_SAMPLE_STACK_USER), so user space can unwind the same sample with
 * libdwfl and compare frame by frame.  Test-only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "unwind.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ORACLE_STACK 16384

/* DWARF register order (x86-64 psABI): rax rdx rcx rbx rsi rdi rbp rsp
 * r8..r15 rip. */
struct oracle_rec {
	__u32 tgid, tid;
	__u32 nr;		/* BPF frames, stop marker included */
	__u32 stack_len;	/* bytes copied from regs[7] (rsp) up */
	__u64 regs[17];
	__u64 ips[STKREC_MAX_DEPTH];
	__u8 stack[ORACLE_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} oracle SEC(".maps");

/* Samples not compared: their walk met a mapping not loaded yet. */
__u64 stale_skipped = 0;

SEC("perf_event")
int on_oracle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0, nr, len;
	struct stkrec_unwind_state *st;
	struct stkrec_stack *f;
	struct oracle_rec *r;
	__u64 uregs[6];

	if (!task_wanted(tgid, (__u32)pid_tgid))
		return 0;
	uregs[0] = ctx->regs.ip;
	uregs[1] = ctx->regs.sp;
	uregs[2] = ctx->regs.bp;
	uregs[3] = ctx->regs.di;
	uregs[4] = ctx->regs.bx;
	uregs[5] = ctx->regs.ax;
	if ((__s64)uregs[0] < 0)
		return 0; /* kernel mode: the user registers are elsewhere */
	stat_inc(STKREC_STAT_SAMPLES);
	nr = uw_walk(ctx, uregs);
	f = bpf_map_lookup_elem(&unwind_frames, &zero);
	if (!nr || nr == UW_NONE || nr == UW_DEFER || !f)
		return 0; /* the process's tables are not loaded yet (or in execve) */
	st = bpf_map_lookup_elem(&unwind_state, &zero);
	if (!st || st->stale) {
		/* A frame in a mapping made after the last reload (dlopen):
		 * not what this oracle checks (stkrec reloads on it). */
		__sync_fetch_and_add(&stale_skipped, 1);
		return 0;
	}
	r = bpf_ringbuf_reserve(&oracle, sizeof(*r), 0);
	if (!r) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return 0;
	}
	r->tgid = tgid;
	r->tid = (__u32)pid_tgid;
	r->nr = nr;
	r->regs[0] = ctx->regs.ax;
	r->regs[1] = ctx->regs.dx;
	r->regs[2] = ctx->regs.cx;
	r->regs[3] = ctx->regs.bx;
	r->regs[4] = ctx->regs.si;
	r->regs[5] = ctx->regs.di;
	r->regs[6] = ctx->regs.bp;
	r->regs[7] = ctx->regs.sp;
	r->regs[8] = ctx->regs.r8;
	r->regs[9] = ctx->regs.r9;
	r->regs[10] = ctx->regs.r10;
	r->regs[11] = ctx->regs.r11;
	r->regs[12] = ctx->regs.r12;
	r->regs[13] = ctx->regs.r13;
	r->regs[14] = ctx->regs.r14;
	r->regs[15] = ctx->regs.r15;
	r->regs[16] = ctx->regs.ip;
	bpf_probe_read_kernel(r->ips, sizeof(r->ips), f->ips);
	/* Page by page: the stack's mapping may end before 16 KiB (the
	 * main thread's, above main). */
	{
		__u64 sp = uregs[1];
		__u32 first = 4096 - (__u32)(sp & 4095), k;

		len = 0;
		if (first > 4096 || bpf_probe_read_user(r->stack, first & 8191, (void *)sp))
			goto out;
		len = first;
		for (k = 0; k < 3; k++) {
			__u32 off = first + k * 4096;

			if (off > ORACLE_STACK - 4096)
				break;
			if (bpf_probe_read_user(r->stack + off, 4096, (void *)(sp + off)))
				break;
			len = off + 4096;
		}
	}
out:
	r->stack_len = len;
	bpf_ringbuf_submit(r, 0);
	return 0;
}
