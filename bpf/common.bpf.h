/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.bpf.h - what every stkrec BPF program shares: the task filters,
 * following a command's process tree, the stack store, the statistics and
 * the process events that tell user space when to read /proc/PID/maps.
 *
 * Included by exactly one .bpf.c per skeleton (profile.bpf.c, offcpu.bpf.c),
 * so every skeleton has the same maps with the same names and record/ can
 * drive them the same way.
 */
#ifndef STKREC_COMMON_BPF_H
#define STKREC_COMMON_BPF_H

#include "stkrec.h"

#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

/* Set by user space before load. */
const volatile __u8 filter_tgids = 0;	/* only tasks whose tgid is in "tgids" */
const volatile __u8 filter_tids = 0;	/* only tasks whose tid is in "tids" */
const volatile __u8 follow_children = 0; /* fork adds children of "tgids" */

/* tgid -> the CPython interpreter it runs, for bpf/python.bpf.h; written
 * by user space (record/python/), copied to a child at fork. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct stkrec_py_proc);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} py_procs SEC(".maps");

/* Processes to profile (-p, or -- CMD and everything it starts). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* sized by user space */
} tgids SEC(".maps");

/* Threads to profile (-t). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* sized by user space */
} tids SEC(".maps");

/* The ids of the stacks already sent to user space through "stack_ring":
 * a set, not the frames.  An id is a hash of the frames (never another
 * stack's), and the kernel evicts the ids used longest ago itself, so a
 * full set costs a stack seen again after its eviction one more ring
 * record, never a loss. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 1); /* --stack-storage-size */
} stacks SEC(".maps");

/* Per-CPU room for bpf_get_stack(): a stack is too big for the BPF stack.
 * Slot 0 for the user stack, 1 for the kernel stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stkrec_stack);
	__uint(max_entries, 2);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, STKREC_STATS_STRIDE); /* x possible CPUs */
	__uint(map_flags, BPF_F_MMAPABLE);
} stats SEC(".maps");

/* The sample the program on this CPU is taking: its counts map (0 or 1),
 * read once from counts_idx as it starts (stat_begin()), so that the
 * sample's statistics and its row land in the same set even when user
 * space flips counts_idx meanwhile; and whether it sent a stack to
 * "stack_ring" (stack_store_frames()). */
struct sample_state {
	__u32 set;
	__u32 pushed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sample_state);
	__uint(max_entries, 1);
} stat_set SEC(".maps");

/* Start a sample on counts map @idx (counts_idx, read once): returns it. */
static __always_inline __u32 stat_begin(__u32 idx)
{
	__u32 zero = 0;
	struct sample_state *v = bpf_map_lookup_elem(&stat_set, &zero);

	idx &= 1;
	if (v) {
		v->set = idx;
		v->pushed = 0;
	}
	return idx;
}

/* The counts map (0 or 1) of the sample being taken on this CPU. */
static __always_inline __u32 stat_set_now(void)
{
	__u32 zero = 0;
	struct sample_state *v = bpf_map_lookup_elem(&stat_set, &zero);

	return v ? v->set : 0;
}

/* Did the sample being taken on this CPU send a stack to "stack_ring"? */
static __always_inline __u32 sample_pushed(void)
{
	__u32 zero = 0;
	struct sample_state *v = bpf_map_lookup_elem(&stat_set, &zero);

	return v ? v->pushed : 0;
}

/* The sample being taken on this CPU sent a stack to "stack_ring". */
static __always_inline void sample_mark_pushed(void)
{
	__u32 zero = 0;
	struct sample_state *v = bpf_map_lookup_elem(&stat_set, &zero);

	if (v)
		v->pushed = 1;
}

/* The "stats" key of statistic @idx in the current sample's set. */
static __always_inline __u32 stat_key(__u32 idx)
{
	return stat_set_now() ? idx + STKREC_NR_STATS : idx;
}

/* Processes already announced to user space by a STKREC_EV_NEW_PROC event.
 * Exec and exit remove a process, so it is announced again after an exec
 * (new mappings) and a recycled pid is never mistaken for the old process.
 * It holds the live processes sampled since their last exec: 4096 (320
 * KiB preallocated, where 16384 took 1.3 MiB), as py_procs and exec_mm.
 * Past that the kernel evicts the process sampled longest ago, which
 * costs nothing but time: sampled again, it is announced again (user
 * space snapshots it again), and its exit, unannounced, is found by user
 * space's kill(pid, 0) check (record/procs/procs.c forget_unseen_exits()). */
struct seen_proc {
	__u64 exec_vm;	/* its mm's pages of code when last told */
	__u64 told_ns;	/* ... at this time (bpf_ktime_get_ns()) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct seen_proc);
	__uint(max_entries, 4096);
} seen SEC(".maps");

/* The least time between two STKREC_EV_MAPS_CHANGED of a process (a JIT
 * that flips its code's protection would send one at each sample). */
#define MAPS_CHANGED_NS (20 * 1000000ULL)

/* tgid -> CLOCK_MONOTONIC time of its last exec, so that a sample says
 * which image of its process it was taken in: user space resolves a
 * sample taken in execve, before the new image, in the old one.  It holds
 * the live processes that exec'd during the recording (exit removes
 * them): 4096, as "seen".  Past that the kernel evicts the one used
 * longest ago, whose samples then say 0 (an image begun before the
 * recording).  User space keeps an image an exec replaced only until its
 * rows are written, a flush or two, and resolves 0 in the current image
 * after that, as it would the right time: only a process pushed out
 * within a flush of its exec, behind 4096 newer live ones, could have
 * samples resolved in the image before. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} images SEC(".maps");

#define EVENTS_RING_SIZE (256 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_RING_SIZE);
} events SEC(".maps");

/*
 * Submit event @e: with a wake if @urgent or the ring is half full, else
 * without (bpf/stkrec.h says which are which).  The wake is forced: the
 * ring's own wakes only a consumer that had read everything before, which
 * one not woken for the records before has not.
 */
static __always_inline void events_submit(struct stkrec_event *e, int urgent)
{
	if (!urgent && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < EVENTS_RING_SIZE / 2)
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	else
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Each stack the stacks set did not hold (struct stkrec_stack, cut after
 * its frames): the frames of every stack user space ever sees.  Sized by
 * user space (record/modes/modeobj.c); a full ring loses the stack (counted). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, STKREC_STACK_RING_SIZE);
} stack_ring SEC(".maps");

/* Bytes of "stack_ring" past which a new record wakes user space (half
 * the ring; set before load): it takes the ring then, not only at a flush. */
const volatile __u64 stack_ring_wake = STKREC_STACK_RING_SIZE / 2;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct stkrec_ksym_io);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);	/* user space writes it in place */
} ksym_io SEC(".maps");

/* Add @n to statistic @idx.  A global function: inlined, its two
 * lookups were checked again at each of the dozens of places that count,
 * in every state that reaches them (a tenth of on_cpu_sample's check). */
__noinline int stat_add(__u32 idx, __u64 n)
{
	__u32 key = bpf_get_smp_processor_id() * STKREC_STATS_STRIDE + stat_key(idx);
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	/* This CPU's slot, and programs do not nest on one CPU: no atomics. */
	if (v)
		*v += n;
	return 0;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/*
 * Add @key to counts map @map with value @init, as a program found it
 * missing: 1 when added, 0 when another CPU added it meanwhile (count in
 * what is there), -ENOSPC when the map is full (counted).
 */
static __always_inline int count_insert(void *map, const void *key, const void *init)
{
	long err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);

	if (!err)
		return 1;
	if (err != -EEXIST) {
		stat_inc(STKREC_STAT_COUNTS_FULL);
		return -ENOSPC;
	}
	return 0;
}

/*
 * Count one more of @key in counts map @map (a hash of __u64 counts):
 * 0, 1 when @key was new to the map, or -ENOSPC when the map is full
 * (counted in STAT counts_map_full).  The trace mode's rows; profile's
 * count by interval (count_lane_inc()), off-CPU's carry time too.
 */
static __always_inline int count_inc(void *map, const void *key)
{
	__u64 one = 1, *v;
	int err;

	v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	err = count_insert(map, key, &one);
	if (err)
		return err;
	v = bpf_map_lookup_elem(map, key);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

static __always_inline int task_wanted(__u32 tgid, __u32 tid)
{
	if (filter_tgids && !bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	return 1;
}

/* stack_hash_id()'s state, for each bpf_loop() round. */
struct stack_hash_ctx {
	const __u64 *ips;
	__u64 h;
	__u32 nr;
};

/* Frames a round hashes: a call each is a few ns a frame. */
#define STACK_HASH_BATCH 8

static long stack_hash_step(__u32 i, void *data)
{
	struct stack_hash_ctx *c = data;
	__u32 j = i * STACK_HASH_BATCH, k;

#pragma unroll
	for (k = 0; k < STACK_HASH_BATCH; k++, j++) {
		if (j >= c->nr || j >= STKREC_MAX_NR)
			return 1;
		c->h = stkrec_stack_hash_add(c->h, c->ips[j]);
	}
	return 0;
}

/*
 * stkrec_stack_id() of the @nr (at most STKREC_MAX_NR) frames at @ips.
 * A bpf_loop() (Linux 5.17+), which the verifier checks once: its
 * bounded loop, up to STKREC_MAX_NR rounds, was checked round by round,
 * twice, most of the verifier's work on the sampling program and a
 * third of the recorder's start-up CPU.  Kernels without bpf_loop() take
 * the loop.
 */
static __always_inline __u64 stack_hash_id(const __u64 *ips, __u32 nr, int kernel)
{
	struct stack_hash_ctx c = { .ips = ips, .nr = nr };

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop))
		return stkrec_stack_id(ips, nr, kernel);
	c.h = stkrec_stack_hash_begin(nr, kernel ? STKREC_P2 : STKREC_P1);
	bpf_loop((nr + STACK_HASH_BATCH - 1) / STACK_HASH_BATCH, stack_hash_step, &c, 0);
	return stkrec_stack_hash_id(stkrec_stack_hash_end(c.h), kernel);
}

/*
 * Name the @nr frames of @s (leaf first) by their id and make sure user
 * space has them: a stack the stacks set does not hold yet is sent to
 * "stack_ring" first, then its id joins the set.  Returns the id, or
 * -ENOMEM when the ring had no room (the stack is lost: counted, and sent
 * again the next time it is seen).  [unwind] Split out of stack_store()
 * so that stacks unwound by bpf/unwind.bpf.h are named exactly like
 * bpf_get_stack()'s.
 *
 * The record is submitted before the id is in the set, so whichever
 * program finds the id there, the frames are in the ring ahead of its
 * count: user space takes the ring after a counts map is drained.  Two
 * CPUs that meet a new stack at once both send it; user space keeps one.
 *
 * A global function (pointer arguments: Linux 5.12+): the verifier
 * checks its 127-step hash loop once, on its own, instead of at every
 * call site in every state that reaches it (the kernel stack's, the
 * frame-pointer stack's and the unwound stack's): a third of the
 * recorder's start-up CPU went to verifying those copies.
 */
__noinline __s64 stack_store_frames(struct stkrec_stack *s, __u32 nr, int kernel)
{
	__u64 id, len, flags;
	__u8 one = 1;

	if (!s)
		return -ENOMEM;
	if (nr > STKREC_MAX_NR)
		nr = STKREC_MAX_NR;
	s->nr = nr;
	id = stack_hash_id(s->ips, nr, kernel);
	/* Sent already (an LRU lookup also marks it used). */
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	s->kind = kernel ? STKREC_RING_KERNEL : STKREC_RING_USER;
	s->tgid = kernel ? 0 : bpf_get_current_pid_tgid() >> 32;
	s->pad = 0;
	s->id = id;
	/* @nr again bounded where the verifier sees it. */
	len = nr;
	barrier_var(len);
	if (len > STKREC_MAX_NR)
		len = STKREC_MAX_NR;
	/* No wakeup for each record: user space takes the ring at its
	 * flush, or once it is half full. */
	flags = bpf_ringbuf_query(&stack_ring, BPF_RB_AVAIL_DATA) >= stack_ring_wake
			? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&stack_ring, s, sizeof(*s) - sizeof(s->ips) + len * sizeof(__u64),
			       flags)) {
		stat_inc(kernel ? STKREC_STAT_KSTACK_ENOMEM : STKREC_STAT_USTACK_ENOMEM);
		return -ENOMEM;
	}
	stat_inc(STKREC_STAT_STACKS_STORED);
	sample_mark_pushed();
	/* An id the set cannot take (no free element on this CPU's list)
	 * only means the stack is sent again when next seen. */
	if (bpf_map_update_elem(&stacks, &id, &one, BPF_ANY))
		stat_inc(STKREC_STAT_STACK_SET_ERR);
	return id;
}

/* A counted sample or episode with stacks @u and @k (ids or -errno): one
 * whose stack the full ring could not take is counted as lost. */
static __always_inline void stack_lost_count(__s64 u, __s64 k)
{
	if (u == -ENOMEM || k == -ENOMEM)
		stat_inc(STKREC_STAT_STACK_LOST);
}

/*
 * Take the current user (@kernel = 0) or kernel stack, send it to user
 * space unless it was already (stack_store_frames()), and return its id,
 * or -errno: -EFAULT when there is no such stack in this context (a
 * kernel thread's user stack, the kernel stack of a sample taken in user
 * mode), -ENOMEM when the stack ring is full, else bpf_get_stack()'s
 * error.
 */
static __always_inline __s64 stack_store(void *ctx, int kernel)
{
	__u32 slot = kernel ? 1 : 0;
	struct stkrec_stack *s;
	long ret;

	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return -ENOMEM; /* cannot happen: array slot */
	ret = bpf_get_stack(ctx, s->ips, STKREC_MAX_DEPTH * sizeof(__u64),
			    kernel ? 0 : BPF_F_USER_STACK);
	if (ret <= 0) {
		/* 0 bytes: no stack in this context, which is what
		 * bpf_get_stackid() reports as -EFAULT. */
		if (ret == 0 || ret == -EFAULT) {
			stat_inc(kernel ? STKREC_STAT_KSTACK_EFAULT : STKREC_STAT_USTACK_EFAULT);
			return -EFAULT;
		}
		stat_inc(kernel ? STKREC_STAT_KSTACK_OTHER : STKREC_STAT_USTACK_OTHER);
		return ret;
	}
	return stack_store_frames(s, ret / sizeof(__u64), kernel);
}

/*
 * The process id of @task's process in its own (innermost) PID namespace,
 * and that namespace's inode number: the thread group leader's struct pid
 * holds one upid per level, numbers[level] being the innermost (Linux
 * 4.19+ for task->thread_pid).  Read here, while the task runs, because a
 * short-lived process is gone before /proc/PID/status could be read.
 */
static __always_inline __u32 task_ns_tgid(struct task_struct *task, __u64 *pid_ns)
{
	struct pid *pid;
	unsigned int level;

	*pid_ns = 0;
	/* Older kernels (pids[PIDTYPE_PID].pid) load, without namespaced
	 * pids. */
	if (!bpf_core_field_exists(task->thread_pid))
		return 0;
	pid = BPF_CORE_READ(task, group_leader, thread_pid);
	level = BPF_CORE_READ(pid, level);

	*pid_ns = BPF_CORE_READ(pid, numbers[level].ns, ns.inum);
	return (__u32)BPF_CORE_READ(pid, numbers[level].nr);
}

/*
 * Tell user space about a process the first time it is sampled, so it reads
 * its maps (the side-band's records, or /proc/PID/maps while it is alive)
 * now rather than at the next flush; and, once it is known, when its code
 * mappings changed (a dlopen: the side-band's records do not wake user
 * space as they come), at most every MAPS_CHANGED_NS.
 */
static __always_inline void proc_announce(__u32 tgid, __u32 tid, const char *comm)
{
	/* bpf_get_current_task() and a CO-RE read rather than the trusted
	 * bpf_get_current_task_btf() (Linux 5.11+): older kernels load it. */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mm_struct *mm;
	struct seen_proc now, *v;
	struct stkrec_event *e;

	/* The idle task and kernel threads have no maps to read. */
	mm = BPF_CORE_READ(task, mm);
	if (tgid == 0 || !mm)
		return;
	now.exec_vm = BPF_CORE_READ(mm, exec_vm);
	v = bpf_map_lookup_elem(&seen, &tgid);
	if (v && v->exec_vm == now.exec_vm)
		return;
	now.told_ns = bpf_ktime_get_ns();
	if (v && now.told_ns - v->told_ns < MAPS_CHANGED_NS)
		return;
	bpf_map_update_elem(&seen, &tgid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return;
	}
	e->type = v ? STKREC_EV_MAPS_CHANGED : STKREC_EV_NEW_PROC;
	e->tgid = tgid;
	e->tid = tid;
	e->ns_tgid = v ? 0 : task_ns_tgid(task, &e->pid_ns);
	if (v)
		e->pid_ns = 0;
	e->addr = 0;
	__builtin_memcpy(e->comm, comm, STKREC_COMM_LEN);
	events_submit(e, 1);
}

/*
 * Run by user space (BPF_PROG_RUN, Linux 5.16+ for the helpers): name the
 * kernel addresses in ksym_io.  The kernel's own %pS gives the covering
 * symbol, its size and module, so stkrec need not read and sort the whole
 * of /proc/kallsyms (over 100k lines, most of stkrec's start-up cost) to
 * name the few hundred addresses a capture holds.
 */
SEC("syscall")
int symbolize_kaddrs(void *ctx)
{
	struct stkrec_ksym_io *io;
	__u32 zero = 0, i;
	long ret;

	(void)ctx;
	io = bpf_map_lookup_elem(&ksym_io, &zero);
	if (!io)
		return 1;
	for (i = 0; i < STKREC_KSYM_BATCH; i++) {
		if (i >= io->nr)
			break;
		bpf_snprintf(io->out[i], STKREC_KSYM_TEXT, "%pS", &io->addrs[i], sizeof(__u64));
	}
	/* The kernel's text bounds do not change: asked for once (each
	 * lookup walks kallsyms by name, ~20 us).  -EPERM without
	 * CAP_SYSLOG (as kallsyms would show zeros). */
	if (!io->want_text)
		return 0;
	ret = bpf_kallsyms_lookup_name("_text", sizeof("_text"), 0, &io->text);
	ret = ret ?: bpf_kallsyms_lookup_name("_etext", sizeof("_etext"), 0, &io->etext);
	ret = ret ?: bpf_kallsyms_lookup_name("_sinittext", sizeof("_sinittext"), 0, &io->inittext);
	ret = ret ?: bpf_kallsyms_lookup_name("_einittext", sizeof("_einittext"), 0, &io->einittext);
	if (ret)
		io->text = io->etext = io->inittext = io->einittext = 0;
	return 0;
}

/* BPF_PROG() defines a ctx parameter these programs do not use.  raw_tp,
 * not tp_btf: the same raw tracepoint, its arguments read through CO-RE
 * rather than as typed pointers, so that libbpf need not parse the
 * kernel's whole BTF to find the tracepoints' BTF ids (~10 ms of stkrec's
 * start-up; corebtf.c hands it a minimal BTF for CO-RE instead). */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"

/* Children of followed processes are followed too (attached only for
 * -- CMD).  Threads share their tgid, which is already in the map. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct stkrec_py_proc *pp;
	__u8 one = 1;

	if (ptgid == ctgid)
		return 0;
	/* A forked interpreter (multiprocessing, a pre-forking server) has
	 * its parent's: walked from its first sample. */
	pp = bpf_map_lookup_elem(&py_procs, &ptgid);
	if (pp)
		bpf_map_update_elem(&py_procs, &ctgid, pp, BPF_ANY);
	if (!follow_children)
		return 0;
	if (!bpf_map_lookup_elem(&tgids, &ptgid))
		return 0;
	if (bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY))
		stat_inc(STKREC_STAT_FOLLOW_FULL);
	return 0;
}

/* After an exec the process has new mappings: announce it again. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u64 now = bpf_ktime_get_ns();

	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_update_elem(&images, &tgid, &now, BPF_ANY);
	return 0;
}

/* When the last thread of a process exits, forget it (and tell user space):
 * its pid may be reused by an unrelated process.  signal->live drops to 0
 * before this tracepoint (read through CO-RE, as the tracepoint's
 * group_dead argument is new). */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct stkrec_event *e;

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (follow_children)
		bpf_map_delete_elem(&tgids, &tgid);
	bpf_map_delete_elem(&images, &tgid);
	/* Only processes user space knows about: it can drop their state.
	 * Another (a forked interpreter never sampled, which on_process_fork
	 * gave its parent's entry) has its Python entry dropped here: user
	 * space never hears of it, and left behind such entries fill the
	 * map, after which no process gets one. */
	if (bpf_map_delete_elem(&seen, &tgid) != 0) {
		bpf_map_delete_elem(&py_procs, &tgid);
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STKREC_STAT_EVENTS_LOST);
		return 0;
	}
	e->type = STKREC_EV_EXIT;
	e->tgid = tgid;
	e->tid = BPF_CORE_READ(task, pid);
	e->ns_tgid = 0;
	e->pid_ns = 0;
	e->addr = 0;
	BPF_CORE_READ_INTO(&e->comm, task, comm);
	events_submit(e, 0);
	return 0;
}

#pragma clang diagnostic pop

#endif /* STKREC_COMMON_BPF_H */
