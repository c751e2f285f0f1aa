/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.bpf.h - the user-stack unwinder: walks a user stack from the
 * task's registers with the .eh_frame tables record/unwind/unwinder.c loads
 * (rows built by record/unwind/unwind_table.c), so stacks are whole in programs
 * built without frame pointers (Debian's libc, python3, ...).
 *
 * Per frame, all bounded: tgid -> sorted mappings (binary search, 10
 * steps) -> (table, bias); {table, page} -> row range; binary search of
 * the rows (STKREC_UW_SEARCH_STEPS steps).  Frames are a bpf_loop
 * (Linux 5.17+) over per-CPU scratch.  Callers are looked up at return
 * address - 1 (the call may be a function's last instruction), except
 * above a signal frame, whose saved pc is exact.  A mapping without a
 * table, or code its table has no row for, takes one frame-pointer step
 * (auto); a mapping whose table is pending also asks user space to build
 * it.
 *
 * Included after common.bpf.h by each program that takes user stacks.
 * With unwind_mode == 0 (--unwind=fp), user_stack_store() takes the
 * frame-pointer stack, as stack_store(ctx, 0), marked where it was cut.
 */
#ifndef STKREC_UNWIND_BPF_H
#define STKREC_UNWIND_BPF_H

#include "stkrec.h"
#include "python.bpf.h"

/* Set by user space before load: 0 fp, 1 auto (tables, else frame
 * pointers), 2 dwarf (tables only). */
const volatile __u8 unwind_mode = 0;

#define UW_MODE_FP 0
#define UW_MODE_AUTO 1
#define UW_MODE_DWARF 2

/* Set by user space: 1 to defer the stacks whose tables are not ready
 * (bpf/stkrec.h, STKREC_UW_DEFERRED) instead of taking frame pointers. */
const volatile __u8 unwind_defer = 0;

/* struct stkrec_defer records; sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} defer_ring SEC(".maps");

/* Per CPU: the deferred stacks so far (their seq, with the CPU's number). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} defer_seq SEC(".maps");

/* uw_walk(): defer this stack; there is no user stack. */
#define UW_DEFER 0xffffffffu
#define UW_NONE 0xfffffffeu

/* A chunk of rows (bpf/stkrec.h); every chunk alike, so the verifier
 * inlines the lookups in it as in any array.  A row as a word: clang
 * gives the BTF of an inner map's struct value only a forward
 * declaration, which libbpf cannot size. */
struct uw_rows_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64); /* struct stkrec_unwind_row */
	__uint(max_entries, STKREC_UW_CHUNK_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE); /* user space memcpy()s tables in */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, 1); /* the row budget in chunks, set by user space */
	__array(values, struct uw_rows_chunk);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct stkrec_unwind_page_key);
	__type(value, struct stkrec_unwind_page);
	__uint(max_entries, 1); /* set by user space */
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stkrec_unwind_proc);
	__uint(max_entries, 1); /* set by user space */
	__uint(map_flags, BPF_F_NO_PREALLOC); /* 16 KiB a process: only live ones */
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stkrec_unwind_state);
	__uint(max_entries, 1);
} unwind_state SEC(".maps");

/* tgid -> when it last asked user space to reload its mappings (tgid |
 * 1 << 31: to build a pending table). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} unwind_stale SEC(".maps");

/* A reload reads /proc/PID/maps and the mapped files' build-ids: on a
 * machine starting processes all the time, reloads every 100 ms were
 * most of a system-wide recorder's CPU. */
#define UW_STALE_NS 1000000000ULL
#define UW_WANT_NS 10000000ULL
/* A reload asked for less than this ago is on its way (the side-band is
 * read every 10 ms): a stack that met a mapping made since is copied and
 * unwound once it is in, not cut there. */
#define UW_RELOAD_COMING_NS 50000000ULL

/* The unwound frames; scratch slot 0 gets the frame-pointer stack to
 * compare with. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stkrec_stack);
	__uint(max_entries, 1);
} unwind_frames SEC(".maps");

#define UW_MAP_STEPS 10 /* 2^10 > STKREC_UW_MAX_MAPPINGS */

/*
 * The two searches are global functions: the verifier checks each once,
 * on its own, instead of in every state of every frame of the loop
 * (bpf_loop callbacks are verified iteration by iteration since Linux
 * 6.7, which made the inlined searches cost a second of load time).
 */

/*
 * The mappings' search steps without a branch on the comparison: clang
 * unrolls its 10 steps, and each branch doubled the states the verifier
 * walked through them (2.4k instructions, a quarter of on_cpu_sample's
 * check).  BPF has no conditional move: 1 if @a <= @b (unsigned, any
 * values: [vsyscall] starts above 2^63), from the borrow of @b - @a.
 */
static __always_inline __u32 uw_le(__u64 a, __u64 b)
{
	__u64 lt = ((~b & a) | (~(b ^ a) & (b - a))) >> 63;

	barrier_var(lt);
	return 1 - (__u32)lt;
}

/* @lo = @mid if @le, else @hi = @mid. */
static __always_inline void uw_halve(__u32 *lo, __u32 *hi, __u32 mid, __u32 le)
{
	*lo += (mid - *lo) & -le;
	*hi -= (*hi - mid) & (le - 1);
}

/* Index in @proc's mappings of the one holding @pc, or -1. */
__noinline int uw_mapping_idx(const struct stkrec_unwind_proc *proc, __u64 pc)
{
	__u32 lo = 0, hi, i;

	if (!proc)
		return -1;
	/* Not clamped to STKREC_UW_MAX_MAPPINGS here (user space never
	 * writes more; the index is masked): bounds the verifier can track
	 * would make it walk every iteration's range apart. */
	hi = proc->nr;
	if (hi == 0)
		return -1;
	/* The last mapping with start <= pc. */
	for (i = 0; i < UW_MAP_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		uw_halve(&lo, &hi, mid, uw_le(proc->m[mid & (STKREC_UW_MAX_MAPPINGS - 1)].start, pc));
	}
	lo &= STKREC_UW_MAX_MAPPINGS - 1;
	if (pc < proc->m[lo].start || pc >= proc->m[lo].end)
		return -1;
	return (int)lo;
}

/*
 * Per CPU, the rows found lately, by (table, address): a profile's stacks
 * repeat, and each step of the binary search of a table's rows is a cache
 * and TLB miss of its own (tables are megabytes of vmalloc'ed memory),
 * most of the walk's time on the workload.  A slot holds the row's
 * contents, taken on a hit without reading the table: a table's rows
 * never change under its id (ids are never reused; a table unloaded is
 * loaded again from its saved rows, only its rows' place changes, or
 * built again under a new id: its file may be another one by the same
 * device and inode), and a mapping names a table only while it is
 * loaded (only tables no mapping uses are evicted).  Reading the row at
 * the slot's index to check it (two map lookups and a miss in the table)
 * was a third of a frame's time on cpuwork.
 */
#define UW_ROW_CACHE 1024 /* a power of 2 */

struct uw_row_slot {
	__u32 table;
	__u32 rel;
	__u64 row; /* struct stkrec_unwind_row, as a word */
};

struct uw_row_cache {
	struct uw_row_slot s[UW_ROW_CACHE];
};

_Static_assert(sizeof(struct stkrec_unwind_row) == sizeof(__u64), "a row is a word");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_row_cache);
	__uint(max_entries, 1);
} uw_row_cache SEC(".maps");

/* Row @idx of unwind_rows, or NULL (its chunk not created: no table
 * there). */
static __always_inline const struct stkrec_unwind_row *uw_row(__u32 idx)
{
	__u32 c = idx / STKREC_UW_CHUNK_ROWS, i = idx % STKREC_UW_CHUNK_ROWS;
	void *chunk = bpf_map_lookup_elem(&unwind_rows, &c);

	return chunk ? (const struct stkrec_unwind_row *)bpf_map_lookup_elem(chunk, &i) : NULL;
}

/* uw_row_find()'s binary search, a bpf_loop() round a step. */
struct uw_row_search {
	__u32 lo, hi, rel, fail;
};

static long uw_row_step(__u32 index, void *data)
{
	struct uw_row_search *c = data;
	const struct stkrec_unwind_row *r;
	__u32 mid;

	(void)index;
	if (c->hi - c->lo <= 1)
		return 1;
	mid = c->lo + (c->hi - c->lo) / 2;
	r = uw_row(mid);
	if (!r) {
		c->fail = 1;
		return 1;
	}
	if (r->pc <= c->rel)
		c->lo = mid;
	else
		c->hi = mid;
	return 0;
}

/* The row covering ELF address @rel of @table into @out: 0, or -1 if
 * there is none. */
__noinline long uw_row_find(__u32 table, __u64 rel, struct stkrec_unwind_row *out)
{
	struct stkrec_unwind_page_key pk = { .table = table, .page = (__u32)(rel >> STKREC_UW_PAGE_SHIFT) };
	const struct stkrec_unwind_page *pg;
	const struct stkrec_unwind_row *r;
	struct uw_row_slot *slot = NULL;
	struct uw_row_cache *c;
	__u32 lo, hi, i, zero = 0;

	if (!out || rel > 0xffffffffULL)
		return -1;
	c = bpf_map_lookup_elem(&uw_row_cache, &zero);
	if (c) {
		slot = &c->s[((__u32)rel * 0x9E3779B1u ^ table * 0x85EBCA77u) >> 22 &
			     (UW_ROW_CACHE - 1)];
		if (slot->table == table && slot->rel == (__u32)rel) {
			*(__u64 *)out = slot->row;
			return 0;
		}
	}
	pg = bpf_map_lookup_elem(&unwind_pages, &pk);
	if (!pg || pg->nr == 0)
		return -1;
	lo = pg->first;
	hi = pg->first + pg->nr;
	/* A bpf_loop() (Linux 5.17+): the verifier walked the bounded loop
	 * round by round.  Only on a row cache miss. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		struct uw_row_search c = { .lo = lo, .hi = hi, .rel = (__u32)rel };

		bpf_loop(STKREC_UW_SEARCH_STEPS, uw_row_step, &c, 0);
		if (c.fail)
			return -1;
		lo = c.lo;
	} else {
		for (i = 0; i < STKREC_UW_SEARCH_STEPS; i++) {
			__u32 mid;

			if (hi - lo <= 1)
				break;
			mid = lo + (hi - lo) / 2;
			r = uw_row(mid);
			if (!r)
				return -1;
			if (r->pc <= (__u32)rel)
				lo = mid;
			else
				hi = mid;
		}
	}
	r = uw_row(lo);
	if (!r || r->pc > (__u32)rel)
		return -1;
	*(__u64 *)out = *(const __u64 *)r;
	if (slot) {
		slot->table = table;
		slot->rel = (__u32)rel;
		slot->row = *(const __u64 *)out;
	}
	return 0;
}

/* The current task has a user address space.  A CO-RE read, not a field
 * of bpf_get_current_task_btf(): the verifier checks each such field
 * access by searching the kernel's BTF for the type's trusted variant by
 * name, a linear scan that cost more start-up than the rest of the check. */
static __always_inline int uw_has_mm(void)
{
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm) != NULL;
}

static __always_inline int uw_read(__u64 *out, __u64 addr)
{
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr) ? -1 : 0;
}

/* One frame of the process whose mappings are @proc (NULL: none): record
 * the pc, find the caller.  0 to go on, 1 to stop.  A global function
 * that uw_step() calls: the verifier checks it once, where as
 * bpf_loop()'s callback it was checked again for each round until the
 * rounds' states met. */
__noinline long uw_frame(const struct stkrec_unwind_proc *proc)
{
	struct stkrec_unwind_row row = {};
	const struct stkrec_unwind_mapping *m;
	const struct stkrec_unwind_row *r;
	struct stkrec_unwind_state *st;
	struct stkrec_stack *f;
	__u64 pc, cfa, ra, bp;
	__u32 zero = 0, n;
	int mi, switched = 0, bp_read = 0;

	st = bpf_map_lookup_elem(&unwind_state, &zero);
	f = bpf_map_lookup_elem(&unwind_frames, &zero);
	if (!st || !f)
		return 1;
	n = st->nr;
	if (n >= STKREC_MAX_DEPTH) {
		st->stop = STKREC_UW_STOP_DEPTH;
		return 1;
	}
	f->ips[n] = st->pc;
	st->nr = n + 1;
	pc = st->pc - (n > 0 && !st->signal ? 1 : 0);
	st->signal = 0;

	mi = proc ? uw_mapping_idx(proc, pc) : -1;
	if (mi < 0) {
		/* JIT code, or a mapping made since the process's mappings
		 * were loaded (a short-lived process sampled before ld.so
		 * mapped libc): user space reloads them. */
		st->stale = 1;
		if (n == 0) {
			/* The leaf itself: the mappings are stale (or it is JIT
			 * code); the frame-pointer stack, as without tables. */
			st->leaf_unknown = 1;
			return 1;
		}
		/* A caller outside every known mapping: JIT code, or a return
		 * address that is no return address (a thread's first frame
		 * above clone3, whose new stack holds whatever it held).
		 * Frame-pointer steps from there walked such garbage 127
		 * frames deep; stop instead, with the reason (after
		 * frame-pointer steps through a file without CFI, those
		 * are what led here). */
		st->stop = st->fp_steps ? STKREC_UW_STOP_FP : STKREC_UW_STOP_NO_MAP;
		return 1;
	}
	m = &proc->m[mi & (STKREC_UW_MAX_MAPPINGS - 1)];
	if (m->table == STKREC_UW_PENDING && !st->want)
		st->want = pc; /* user space builds it on request */
	if (m->table == STKREC_UW_NO_TABLE || m->table == STKREC_UW_PENDING) {
		/* No CFI for this file: one frame-pointer step. */
		if (unwind_mode != UW_MODE_AUTO) {
			st->stop = STKREC_UW_STOP_NO_ROW;
			return 1;
		}
		goto fp_step;
	}
	r = uw_row_find(m->table, pc - m->bias, &row) ? NULL : &row;
	if (!r || r->kind == STKREC_UW_NONE) {
		/* Code without CFI in a file that has some: V8's builtins in
		 * node (which keep frame pointers) between JIT frames and
		 * the C++ that entered them.  As for a file without CFI,
		 * one frame-pointer step (auto): stopping here made auto
		 * take the frame-pointer stack, which ends in libc. */
		if (unwind_mode == UW_MODE_AUTO)
			goto fp_step;
		st->stop = STKREC_UW_STOP_NO_ROW;
		return 1;
	}
	switch (r->kind) {
	case STKREC_UW_CFA_RSP:
		cfa = st->sp + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBP:
		cfa = st->bp + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBX:
		/* ld.so's lazy-binding trampoline: rbx as restored through
		 * its callees' rows (or sampled, in the leaf). */
		if (st->bx_lost) {
			st->stop = STKREC_UW_STOP_UNSUPP;
			return 1;
		}
		cfa = st->bx + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBP_DEREF:
		if (uw_read(&cfa, st->bp - r->cfa_off)) {
			st->stop = STKREC_UW_STOP_FAULT;
			return 1;
		}
		break;
	case STKREC_UW_PLT:
		cfa = st->sp + r->cfa_off + (((st->pc & 15) >= (__u64)r->rbp_off) ? 8 : 0);
		break;
	case STKREC_UW_STACK_SWITCH:
		/* Above the leaf, a return address in Go's systemstack (or
		 * mcall...) is past its switch to g0's stack: the CFA its CFI
		 * gives is on g0's stack, where no caller is (the walk read 0
		 * there and ended in silence).  rbp still holds the frame of
		 * the goroutine's code that called it (restored through the
		 * callee's frame, Go keeps frame pointers): a frame-pointer
		 * step back onto the goroutine's stack, which may lie below
		 * g0's.  (Its caller's own frame is lost, as perf -g loses
		 * it: the return address into it is known only to Go.) */
		if (n > 0) {
			switched = 1;
			goto fp_step;
		}
		cfa = st->sp + r->cfa_off;
		break;
	case STKREC_UW_SIGNAL:
		/* The interrupted context, from the ucontext at rsp. */
		if (uw_read(&bp, st->sp + 120) || uw_read(&cfa, st->sp + 160) ||
		    uw_read(&ra, st->sp + 168)) {
			st->stop = STKREC_UW_STOP_FAULT;
			return 1;
		}
		st->bx_lost = uw_read(&st->bx, st->sp + 128) != 0;
		st->bp = bp;
		st->sp = cfa;
		st->pc = ra;
		st->signal = 1;
		return ra == 0;
	case STKREC_UW_END:
		return 1; /* the outermost frame: a whole stack */
	case STKREC_UW_RA_RDI:
		/* The return address is in rdi: the sampled leaf's only. */
		if (n > 0) {
			st->stop = STKREC_UW_STOP_UNSUPP;
			return 1;
		}
		cfa = st->sp + r->cfa_off;
		break;
	case STKREC_UW_CLONE:
		/* Just past clone's syscall: the child (rax 0) is on its new
		 * stack, outermost; the parent returns to its caller. */
		if (n > 0) {
			st->stop = STKREC_UW_STOP_UNSUPP;
			return 1;
		}
		if (st->ax == 0)
			return 1;
		cfa = st->sp + r->cfa_off;
		break;
	default:
		st->stop = STKREC_UW_STOP_UNSUPP;
		return 1;
	}
	if (r->kind == STKREC_UW_RA_RDI) {
		/* CFA = rsp is fine here: the pc moves, and only once. */
		ra = st->di;
	} else if (cfa <= st->sp) {
		st->stop = STKREC_UW_STOP_LOOP;
		return 1;
	} else if (r->rbp_off == -2 && r->kind != STKREC_UW_PLT) {
		/* rbp saved just below the return address (push %rbp, the
		 * common prologue): both in one read, a read being most of
		 * a step's cost. */
		__u64 pair[2];

		if (bpf_probe_read_user(pair, sizeof(pair), (const void *)(cfa - 16))) {
			st->stop = STKREC_UW_STOP_FAULT;
			return 1;
		}
		st->bp = pair[0];
		ra = pair[1];
		bp_read = 1;
	} else if (uw_read(&ra, cfa - 8)) {
		st->stop = STKREC_UW_STOP_FAULT;
		return 1;
	}
	if (r->rbp_off == STKREC_UW_RBP_LOST) {
		st->bp = 0;
	} else if (r->rbp_off && r->kind != STKREC_UW_PLT && !bp_read) {
		if (uw_read(&st->bp, cfa + (__s64)r->rbp_off * 8)) {
			st->stop = STKREC_UW_STOP_FAULT;
			return 1;
		}
	}
	if (r->rbx == STKREC_UW_RBX_LOST)
		st->bx_lost = 1;
	else if (r->rbx)
		st->bx_lost = uw_read(&st->bx, cfa - (__u64)r->rbx * 8) != 0;
	st->sp = cfa;
caller:
	st->pc = ra;
	return ra == 0; /* a zero return address ends the stack too */
fp_step:
	/* rbp = 0 ends a frame-pointer chain, as it ends the kernel's. */
	bp = st->bp;
	if (bp == 0)
		return 1;
	if ((bp < st->sp && !switched) || uw_read(&ra, bp + 8) || uw_read(&st->bp, bp)) {
		st->stop = STKREC_UW_STOP_FP;
		return 1;
	}
	st->fp_steps++;
	st->sp = bp + 16;
	st->bx_lost = 1; /* whether code without CFI saved it is unknown */
	goto caller;
}

/* uw_walk()'s bpf_loop() state: the process's mappings, looked up once
 * a walk rather than twice a frame (a hash lookup each, ~10% of a
 * sample's time on 7-frame stacks). */
struct uw_walk_ctx {
	const struct stkrec_unwind_proc *proc;
};

/* bpf_loop()'s callback: one frame. */
static long uw_step(__u32 index, void *data)
{
	struct uw_walk_ctx *c = data;

	(void)index;
	return uw_frame(c->proc) ? 1 : 0;
}

/* The task's user registers into @st: @uregs (pc, sp, bp, di, bx, ax) when the
 * caller has them, else those saved at the task's kernel entry.  0 or -1. */
static __always_inline int uw_regs(struct stkrec_unwind_state *st, const __u64 *uregs)
{
	struct task_struct *task;
	struct pt_regs *regs;

	if (uregs) {
		st->pc = uregs[0];
		st->sp = uregs[1];
		st->bp = uregs[2];
		st->di = uregs[3];
		st->bx = uregs[4];
		st->ax = uregs[5];
		st->bx_lost = 0;
		return 0;
	}
	if (!uw_has_mm()) /* kernel threads have no user stack */
		return -1;
	task = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return -1;
	if (bpf_probe_read_kernel(&st->pc, sizeof(st->pc), &regs->ip) ||
	    bpf_probe_read_kernel(&st->sp, sizeof(st->sp), &regs->sp) ||
	    bpf_probe_read_kernel(&st->bp, sizeof(st->bp), &regs->bp) ||
	    bpf_probe_read_kernel(&st->di, sizeof(st->di), &regs->di) ||
	    bpf_probe_read_kernel(&st->bx, sizeof(st->bx), &regs->bx) ||
	    bpf_probe_read_kernel(&st->ax, sizeof(st->ax), &regs->ax))
		return -1;
	st->bx_lost = 0;
	/* Past the user half: no user context saved there. */
	if ((__s64)st->pc < 0 || st->pc == 0)
		return -1;
	return 0;
}

/* tgid -> the mm its execve switches to (sched_prepare_exec, Linux 6.10+).
 * By tgid: a thread other than the leader that execs takes the leader's
 * pid in de_thread(), after sched_prepare_exec; one exec of a thread
 * group gets that far. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} exec_mm SEC(".maps");

/*
 * 1 if the current task is in execve past the switch to the new image's
 * memory (exec_mmap()): its user registers are still the old image's
 * until the new one starts, and the "stack" at their sp would be read
 * from the new memory.  There is no user stack to take (perf takes none).
 * Only in execve (task->in_execve) is more than one bit read: the mm the
 * exec switches to, from sched_prepare_exec (Linux 6.10+).  Before that
 * tracepoint there is no telling (bpf_find_vma would take the mm's lock
 * from the scheduler, off-CPU): the walk goes on as it did, and ends in
 * a fault.  CO-RE reads, as in uw_has_mm(), not fields of the trusted
 * task pointer (a linear search of the kernel's BTF each, 4 ms of
 * start-up); a global function, checked once.
 */
__noinline int uw_in_exec_switched(void)
{
	struct task_struct *task;
	__u32 tgid;
	__u64 *mm;

	if (!bpf_core_field_exists(struct task_struct, in_execve) ||
	    !bpf_core_type_exists(btf_trace_sched_prepare_exec))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	if (!BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	mm = bpf_map_lookup_elem(&exec_mm, &tgid);
	return mm && *mm == (__u64)BPF_CORE_READ(task, mm);
}

/* Ask user space to reload @tgid's mappings, building the table of the
 * mapping holding @want if set (JIT code asks at most every UW_STALE_NS,
 * a pending table every UW_WANT_NS, so neither floods the ring buffer).
 * 1 if it asked now or less than UW_RELOAD_COMING_NS ago, 0 if earlier
 * (or it could not). */
static __always_inline int uw_report_stale(__u32 tgid, __u64 want)
{
	/* Apart: a table request must not hold back the reload that brings
	 * a mapping made since (libc, mapped after the first sample). */
	__u32 key = want ? tgid | 0x80000000u : tgid;
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&unwind_stale, &key);
	struct stkrec_event *e;

	if (last && now - *last < (want ? UW_WANT_NS : UW_STALE_NS))
		return now - *last < UW_RELOAD_COMING_NS;
	bpf_map_update_elem(&unwind_stale, &key, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return 0;
	}
	e->type = STKREC_EV_MAPS_STALE;
	e->tgid = tgid;
	e->tid = 0;
	e->ns_tgid = 0;
	e->pid_ns = 0;
	e->addr = want;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	events_submit(e, 1);
	return 1;
}

/*
 * Walk the current task's user stack into unwind_frames.  Returns the
 * number of frames (with the stop marker), or 0 when the frame-pointer
 * stack is to be taken instead: the process has no tables yet, there are
 * no user registers, or (auto) the frame pointers find more frames than
 * the tables did.  Counted in the stats either way.
 */
static __always_inline __u32 uw_walk(void *ctx, const __u64 *user_regs)
{
	struct uw_walk_ctx wc;
	struct stkrec_unwind_state *st;
	struct stkrec_stack *f, *fp;
	__u32 zero = 0, tgid, nr;
	int asked = 0;
	long ret;

	st = bpf_map_lookup_elem(&unwind_state, &zero);
	f = bpf_map_lookup_elem(&unwind_frames, &zero);
	if (!st || !f)
		return 0;
	/* Kernel threads have no user stack: stack_store() says so (EFAULT),
	 * not counted as a fallback. */
	if (!uw_has_mm())
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (uw_regs(st, user_regs)) {
		stat_inc(STKREC_STAT_UW_FB_NOREGS);
		return 0;
	}
	/* Sampled in user mode, the task is in no execve (in_execve is
	 * cleared before the new image runs): most samples ask nothing. */
	if (!user_regs && uw_in_exec_switched()) {
		stat_inc(STKREC_STAT_USTACK_EXEC);
		return UW_NONE;
	}
	st->pc0 = st->pc;
	st->sp0 = st->sp;
	st->bp0 = st->bp;
	st->bx0 = st->bx;
	st->tgid = tgid;
	wc.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!wc.proc) {
		if (unwind_defer)
			return UW_DEFER;
		stat_inc(STKREC_STAT_UW_FB_NOPROC);
		return 0;
	}
	st->nr = 0;
	st->stop = 0;
	st->signal = 0;
	st->fp_steps = 0;
	st->stale = 0;
	st->leaf_unknown = 0;
	st->want = 0;
	bpf_loop(STKREC_MAX_DEPTH + 1, uw_step, &wc, 0);
	if (st->want)
		stat_inc(STKREC_STAT_UW_PENDING);
	if (st->want)
		uw_report_stale(tgid, st->want);
	if (st->stale)
		asked = uw_report_stale(tgid, 0);
	/* A table not built yet: user space unwinds a copy once it is.  (An
	 * address in no known mapping is JIT code as often as a library
	 * mapped since: copying every JIT sample would cost more than it
	 * gives.  Those of the UW_RELOAD_COMING_NS after a reload was asked
	 * for, at most once a second per process, are copied: a process's
	 * first samples in libc, mapped after its exec -- in the leaf, or
	 * above it, as main's caller -- are unwound once the reload has it.) */
	if (unwind_defer && (st->want || (st->stale && asked)))
		return UW_DEFER;
	if (st->leaf_unknown) {
		stat_inc(STKREC_STAT_UW_FB_LEAF);
		return 0;
	}
	stat_inc(STKREC_STAT_UW_STACKS);
	if (st->fp_steps)
		stat_add(STKREC_STAT_UW_FP_STEPS, st->fp_steps);
	nr = st->nr;
	if (!st->stop)
		return nr;
	if (unwind_mode == UW_MODE_AUTO && st->stop != STKREC_UW_STOP_DEPTH) {
		/* Never worse than the frame pointers: take theirs if they
		 * find more. */
		fp = bpf_map_lookup_elem(&scratch, &zero);
		if (fp) {
			ret = bpf_get_stack(ctx, fp->ips, STKREC_MAX_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
			if (ret > 0 && (__u64)ret / sizeof(__u64) > nr) {
				stat_inc(STKREC_STAT_UW_FB_SHORTER);
				return 0;
			}
		}
	}
	/* The last frame says why the walk stopped; the program counts the
	 * stop once it has counted the sample (uw_stop_count()). */
	if (nr >= STKREC_MAX_DEPTH)
		nr = STKREC_MAX_DEPTH - 1;
	f->ips[nr] = STKREC_UW_MARK | st->stop;
	st->mark = st->stop;
	return nr + 1;
}

/*
 * Copy the registers uw_walk() started from and up to STKREC_DEFER_STACK
 * bytes of stack above sp into the defer ring, and put the placeholder
 * stack in unwind_frames.  Its frame count (2), or 0 when the ring is
 * full (frame pointers then).  A global function: the verifier checks
 * its unrolled copy once.
 */
__noinline __u32 uw_defer(void)
{
	struct stkrec_unwind_state *st;
	struct stkrec_defer *d;
	struct stkrec_stack *f;
	__u32 zero = 0, size = 0;
	__u64 *seq;

	st = bpf_map_lookup_elem(&unwind_state, &zero);
	f = bpf_map_lookup_elem(&unwind_frames, &zero);
	seq = bpf_map_lookup_elem(&defer_seq, &zero);
	if (!st || !f || !seq)
		return 0;
	d = bpf_ringbuf_reserve(&defer_ring, sizeof(*d), 0);
	if (!d) {
		stat_inc(STKREC_STAT_UW_DEFER_LOST);
		return 0;
	}
	d->seq = (__u64)bpf_get_smp_processor_id() << 40 | ++*seq;
	d->pc = st->pc0;
	d->sp = st->sp0;
	d->bp = st->bp0;
	d->di = st->di;
	d->bx = st->bx0;
	d->ax = st->ax;
	d->tgid = st->tgid;
	/* Up to the first chunk that cannot be read: the top of the stack,
	 * or a page not resident (what perf's copy also stops at). */
#pragma unroll
	for (int i = 0; i < STKREC_DEFER_CHUNKS; i++) {
		if (bpf_probe_read_user(d->stack + i * STKREC_DEFER_CHUNK, STKREC_DEFER_CHUNK,
					(const void *)(st->sp0 + i * STKREC_DEFER_CHUNK)))
			break;
		size += STKREC_DEFER_CHUNK;
	}
	d->size = size;
	f->ips[0] = STKREC_UW_MARK | STKREC_UW_DEFERRED;
	f->ips[1] = d->seq;
	/* The first copy after user space emptied the ring wakes it (the
	 * kernel wakes only when the consumer has caught up), so copies
	 * are taken soon after they start, not by polling; user space
	 * holds off a few ms before it listens again (record/engine/wake.h). */
	bpf_ringbuf_submit(d, 0);
	stat_inc(STKREC_STAT_UW_DEFERRED);
	return 2;
}

/*
 * Count @n samples (episodes) whose user stack ends with the marker of
 * stop reason @stop (user_stack_store()'s, 0: none): STAT unwind_stop_*
 * is the sum of the counts whose stack has that marker, what the report
 * shows.  Called by a program once the sample is in its counts map, so
 * a walk whose frame-pointer stack was taken instead (auto), a sample
 * the full counts map dropped, an episode -m/-M filtered out, or a stack
 * the full ring lost count no stop that the file does not show.
 */
static __always_inline void uw_stop_count(__u32 stop, __s64 stack, __u64 n)
{
	if (stop && stop < STKREC_UW_NR_STOPS && stack >= 0)
		stat_add(STKREC_STAT_UW_STOP_BASE + stop, n);
}

/* One frame-pointer hop of uw_fp_deeper(): st->bp = *st->bp; st->stop
 * set if it could not be read. */
static long uw_fp_hop(__u32 index, void *unused)
{
	struct stkrec_unwind_state *st;
	__u32 zero = 0;

	(void)index;
	(void)unused;
	st = bpf_map_lookup_elem(&unwind_state, &zero);
	if (!st)
		return 1;
	if (uw_read(&st->bp, st->bp)) {
		st->stop = 1;
		return 1;
	}
	return 0;
}

/*
 * 1 if the frame-pointer chain of the current task's user stack goes on
 * past the STKREC_MAX_DEPTH frames bpf_get_stack() took (it takes no
 * more than the kernel.perf_event_max_stack sysctl, 127 by default, and
 * cannot say whether it cut).  The kernel's walk (x86's
 * perf_callchain_user()) takes the pc, then one return address per
 * frame record {next rbp, return address} from regs->bp on: after
 * STKREC_MAX_DEPTH - 1 hops, a record it can still read is a frame it
 * left out.  Only for stacks that deep, and only where bpf_loop and
 * bpf_task_pt_regs exist (the frame-pointer fallback also loads on
 * kernels without them: there, no marker).
 */
static __always_inline int uw_fp_deeper(const __u64 *user_regs)
{
	struct stkrec_unwind_state *st;
	__u32 zero = 0;
	__u64 rec[2];

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) ||
	    !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return 0;
	st = bpf_map_lookup_elem(&unwind_state, &zero);
	if (!st || uw_regs(st, user_regs))
		return 0;
	st->stop = 0;
	bpf_loop(STKREC_MAX_DEPTH - 1, uw_fp_hop, NULL, 0);
	if (st->stop)
		return 0;
	return bpf_probe_read_user(rec, sizeof(rec), (const void *)st->bp) == 0;
}

/*
 * The current task's user stack, unwound with the tables, stored as
 * stack_store() stores frame-pointer stacks; or the frame-pointer stack
 * when uw_walk() says so.  @user_regs: pc, sp, bp, di, bx, ax as sampled if the
 * sample was taken in user mode, else NULL (the registers saved at the
 * task's kernel entry are used).  @stop: the stop reason of the
 * stack's marker, or 0 (for uw_stop_count()).  One stack_store_frames()
 * call site: each costs the verifier a 127-step hash loop.
 */
static __always_inline __s64 user_stack_store(void *ctx, const __u64 *user_regs, __u32 *stop)
{
	struct stkrec_unwind_state *st;
	struct stkrec_stack *s;
	__u32 zero = 0, nr;
	long ret;

	*stop = 0;
	nr = 0;
	if (unwind_mode != UW_MODE_FP) {
		st = bpf_map_lookup_elem(&unwind_state, &zero);
		if (!st)
			return -ENOMEM;
		st->mark = 0;
		nr = uw_walk(ctx, user_regs);
		if (nr == UW_NONE) {
			stat_inc(STKREC_STAT_USTACK_EFAULT);
			return -EFAULT;
		}
		if (nr == UW_DEFER)
			nr = uw_defer();
		*stop = nr ? st->mark : 0;
	}
	s = bpf_map_lookup_elem(nr ? (void *)&unwind_frames : (void *)&scratch, &zero);
	if (!s)
		return -ENOMEM;
	if (!nr) {
		/* As stack_store(ctx, 0). */
		ret = bpf_get_stack(ctx, s->ips, STKREC_MAX_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
		if (ret == 0 || ret == -EFAULT) {
			stat_inc(STKREC_STAT_USTACK_EFAULT);
			return -EFAULT;
		}
		if (ret < 0) {
			stat_inc(STKREC_STAT_USTACK_OTHER);
			return ret;
		}
		nr = ret / sizeof(__u64);
		/* Cut at the depth with more frames above: say so where it
		 * was cut, as the table walk does (the leaf side is kept). */
		if (nr >= STKREC_MAX_DEPTH && uw_fp_deeper(user_regs)) {
			s->ips[STKREC_MAX_DEPTH - 1] = STKREC_UW_MARK | STKREC_UW_STOP_DEPTH;
			*stop = STKREC_UW_STOP_DEPTH;
		}
	}
	nr = py_walk(s, nr, bpf_get_current_pid_tgid() >> 32);
	return stack_store_frames(s, nr, 0);
}

/*
 * After an exec the process's mappings are another image's: forget them
 * at once, so no sample is unwound with the old tables (a non-PIE binary
 * exec'ing another is mapped at the same addresses).  A process of -p or
 * -- CMD has user space load the new image's mappings now, so that its
 * first samples are unwound (the binary and ld.so are mapped by now; the
 * libraries ld.so maps next are loaded when a stack first meets them);
 * other processes are loaded when first sampled (a busy machine execs
 * far more than it samples).  Until then, frame-pointer stacks.
 */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec_unwind, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct stkrec_event *e;

	/* Another image: its interpreter, if any, is found anew. */
	bpf_map_delete_elem(&py_procs, &tgid);
	if (unwind_mode == UW_MODE_FP)
		return 0;
	bpf_map_delete_elem(&exec_mm, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (!filter_tgids || !bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return 0;
	}
	e->type = STKREC_EV_MAPS_STALE;
	e->tgid = tgid;
	e->tid = 0;
	e->ns_tgid = 0;
	e->pid_ns = 0;
	e->addr = 0;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	events_submit(e, 1);
	return 0;
}

/* The mm an execve switches to, for uw_in_exec_switched(); loaded only
 * where the kernel has this tracepoint (unwinder__configure_obj()). */
SEC("raw_tp/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u64 mm = (__u64)BPF_CORE_READ(bprm, mm);

	if (unwind_mode != UW_MODE_FP)
		bpf_map_update_elem(&exec_mm, &tgid, &mm, BPF_ANY);
	return 0;
}
#pragma clang diagnostic pop

#endif /* STKREC_UNWIND_BPF_H */
