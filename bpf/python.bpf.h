/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * python.bpf.h - the Python frames of the current thread, appended to its
 * user stack: CPython's own frame chain read from the process's memory,
 * for processes user space found a supported interpreter in (record/python/,
 * the "py_procs" map).  Included by profile.bpf.c and offcpu.bpf.c through
 * unwind.bpf.h, so on-CPU samples, off-CPU episodes and wakers all get them.
 *
 * The thread's PyThreadState is the one whose thread_id (pthread_self())
 * is the thread's fs base: found by walking the interpreter's thread list
 * once, then kept per thread id and checked at every use.  This needs no
 * glibc internals (pthread keys) and works for a thread that does not hold
 * the GIL (blocked in time.sleep or recv).  Frames are written as the words
 * SPEC.md (STCK) defines, leaf first, after the native frames.
 */
#ifndef STKREC_PYTHON_BPF_H
#define STKREC_PYTHON_BPF_H

#include "stkrec.h"

/* "py_procs" (tgid -> its interpreter) is common.bpf.h's: a fork copies
 * the parent's entry there. */

struct py_thread {
	__u64 tstate;
	__u64 fsbase;
};

/* tid -> its PyThreadState, as last found. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct py_thread);
	__uint(max_entries, 4096);
} py_threads SEC(".maps");

/* The frame and code object read at once; offsets into them are masked
 * with PY_OFF_MASK, so the buffers are 8 bytes longer than that. */
#define PY_OFF_MASK 0x7f
#define PY_BUF (PY_OFF_MASK + 1 + 8)
#define PY_CODE_MASK 0xff /* offsets into the code object's buffer */
#define PY_CODE_READ 144 /* covers every field read, 3.8 to 3.13 */
#define PY_MAX_THREADS 64 /* thread states searched for a thread's */

#define PY_SEEN_SLOTS 256

struct py_scratch {
	__u8 frame[PY_BUF];
	__u8 code[PY_CODE_MASK + 1 + 8];
	/* The walk's state, kept here rather than in registers: each step
	 * is verified once (py_step()), and the loop around it stays simple. */
	__u64 at;	/* the next frame to read */
	__u32 n;	/* words in the stack */
	__u32 frames;	/* Python frames written */
	__u32 stop;	/* STKREC_PY_STOP_*, or 0 */
	__s32 last;	/* the word of the last frame written, or -1 */
	__u32 pad;
	/* py_codes_seen's keys met lately on this CPU, by their low bits:
	 * most frames of a sample were in the last one, and a look here
	 * is cheaper than one in the shared LRU set. */
	__u64 seen[PY_SEEN_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_scratch);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

/* (tgid, code object, fingerprint) already sent through py_code_ring. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 8192);
} py_codes_seen SEC(".maps");

/* struct stkrec_py_code records, taken by user space every 20 ms. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} py_code_ring SEC(".maps");

static __always_inline __u64 py_u64(const __u8 *buf, __u16 off)
{
	return *(const __u64 *)(buf + (off & PY_OFF_MASK));
}

static __always_inline int py_read(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* The current thread's PyThreadState in @pp's interpreter, or 0. */
/* py_tstate()'s search, a bpf_loop() round each thread state. */
struct py_tstate_ctx {
	const struct stkrec_py_proc *pp;
	__u64 fsbase, ts, found;
};

static long py_tstate_step(__u32 i, void *data)
{
	struct py_tstate_ctx *c = data;
	__u64 v;

	(void)i;
	if (!c->ts || py_read(&v, c->ts + c->pp->ts_thread_id))
		return 1;
	if (v == c->fsbase) {
		c->found = c->ts;
		return 1;
	}
	if (py_read(&c->ts, c->ts + c->pp->ts_next))
		c->ts = 0;
	return 0;
}

static __always_inline __u64 py_tstate(const struct stkrec_py_proc *pp, __u32 tid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct py_thread *t, nt;
	__u64 fsbase, ts, v, interp;
	int i;

	fsbase = BPF_CORE_READ(task, thread.fsbase);
	if (!fsbase)
		return 0;
	t = bpf_map_lookup_elem(&py_threads, &tid);
	if (t && t->fsbase == fsbase && !py_read(&v, t->tstate + pp->ts_thread_id) && v == fsbase)
		return t->tstate;
	if (py_read(&interp, pp->runtime + pp->rt_interp_head) || !interp ||
	    py_read(&ts, interp + pp->is_tstate_head))
		return 0;
	/* A bpf_loop() (Linux 5.17+) where there is one: the verifier checks
	 * the bounded loop round by round, most of py_walk()'s check. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		struct py_tstate_ctx c = { .pp = pp, .fsbase = fsbase, .ts = ts };

		bpf_loop(PY_MAX_THREADS, py_tstate_step, &c, 0);
		ts = c.found;
	} else {
		for (i = 0; i < PY_MAX_THREADS && ts; i++) {
			if (py_read(&v, ts + pp->ts_thread_id))
				return 0;
			if (v == fsbase)
				break;
			if (py_read(&ts, ts + pp->ts_next))
				return 0;
		}
		if (i == PY_MAX_THREADS)
			ts = 0;
	}
	if (!ts)
		return 0;
	nt.tstate = ts;
	nt.fsbase = fsbase;
	bpf_map_update_elem(&py_threads, &tid, &nt, BPF_ANY);
	return ts;
}

/* The compact str object at @str into @out (@max bytes): its length in
 * characters and kind (bytes a character), 0 if it is not one. */
static __always_inline void py_str(const struct stkrec_py_proc *pp, __u64 str, __u8 *out,
				   __u32 *len, __u8 *kind)
{
	__u64 head[3];	/* ob_refcnt, ob_type, length */
	__u32 state, n;

	*len = 0;
	*kind = 0;
	if (bpf_probe_read_user(head, sizeof(head), (const void *)str) ||
	    bpf_probe_read_user(&state, sizeof(state), (const void *)(str + 32)))
		return;
	/* compact (bit 5); ASCII (bit 6): data after PyASCIIObject */
	if (!(state >> 5 & 1) || (__s64)head[2] < 0)
		return;
	*kind = state >> 6 & 1 ? 1 : state >> 2 & 7;
	*len = head[2] > 0xffffffffULL ? 0xffffffffu : (__u32)head[2];
	n = *len > STKREC_PY_NAME_MAX ? STKREC_PY_NAME_MAX : *len * *kind;
	if (n > STKREC_PY_NAME_MAX - 1)
		n = STKREC_PY_NAME_MAX - 1;
	/* A bound the verifier sees, whatever the compiler made of the above. */
	asm volatile("%[n] &= 0xff" : [n] "+r"(n));
	if (bpf_probe_read_user(out, n, (const void *)(str + (state >> 6 & 1 ? pp->str_ascii
									     : pp->str_compact))))
		*kind = 0;
}

/*
 * Send code object @code (first met by this walk: not in py_codes_seen)
 * to user space with what names it, read now.  A global function: it is
 * verified once, apart from the walk.
 */
__noinline int py_code_emit(const struct stkrec_py_proc *pp, struct py_scratch *sc,
			    __u64 code, __u32 tgid, __u32 fp)
{
	struct stkrec_py_code *r;
	const __u8 *co;
	__u64 key, lt, ltsize, *slot;
	__u8 one = 1;

	if (!pp || !sc)
		return 0;
	co = sc->code;
	key = (code ^ (__u64)tgid << 48) * STKREC_P1 ^ fp;
	slot = &sc->seen[(key >> 7) & (PY_SEEN_SLOTS - 1)];
	if (*slot == key)
		return 0;
	if (bpf_map_lookup_elem(&py_codes_seen, &key)) {
		*slot = key;
		return 0;
	}
	r = bpf_ringbuf_reserve(&py_code_ring, sizeof(*r), 0);
	if (!r)
		return 0; /* user space reads it from the process */
	bpf_map_update_elem(&py_codes_seen, &key, &one, BPF_ANY);
	r->addr = code;
	r->runtime = pp->runtime;
	r->tgid = tgid;
	r->fingerprint = fp;
	r->firstlineno = *(const __u32 *)(co + (pp->co_firstlineno & PY_CODE_MASK));
	r->lt_size = 0;
	py_str(pp, *(const __u64 *)(co + (pp->co_qualname & PY_CODE_MASK)), r->name, &r->name_len,
	       &r->name_kind);
	py_str(pp, *(const __u64 *)(co + (pp->co_filename & PY_CODE_MASK)), r->file, &r->file_len,
	       &r->file_kind);
	lt = *(const __u64 *)(co + (pp->co_linetable & PY_CODE_MASK));
	/* A bytes object: ob_size at 16, the bytes at 32. */
	if (!bpf_probe_read_user(&ltsize, sizeof(ltsize), (const void *)(lt + 16)) &&
	    ltsize <= 0xffffffffULL) {
		__u32 n = ltsize < STKREC_PY_LT_MAX ? (__u32)ltsize : STKREC_PY_LT_MAX;

		if (n > STKREC_PY_LT_MAX - 1)
			n = STKREC_PY_LT_MAX - 1;
		asm volatile("%[n] &= 0x3ff" : [n] "+r"(n));
		if (!bpf_probe_read_user(r->lt, n, (const void *)(lt + 32)))
			r->lt_size = (__u32)ltsize;
	}
	/* The first after user space emptied the ring wakes it: new code
	 * objects, and the new stacks that name them, are looked at while
	 * the process lives (record/engine/wake.h). */
	bpf_ringbuf_submit(r, 0);
	*slot = key;
	return 1;
}

/*
 * One frame of the walk: read frame @sc->at, write its words to @s (a shim
 * frame writes none: it marks the frame before it as its activation's
 * entry) and move on to the frame it was called from.  Returns 1 to go on,
 * 0 when the walk is over (@sc->stop says why, if early).  A global
 * function: the verifier checks it once, not once per iteration.
 */
__noinline int py_step(struct stkrec_stack *s, struct py_scratch *sc,
		       const struct stkrec_py_proc *pp)
{
	__u64 code, back, instr, base, tag;
	__u32 n, off, fp;

	if (!s || !sc || !pp || !sc->at)
		return 0;
	n = sc->n;
	if (sc->frames >= STKREC_PY_MAX_FRAMES || n + 2 >= STKREC_MAX_NR) {
		sc->stop = STKREC_PY_STOP_DEPTH;
		return 0;
	}
	if (bpf_probe_read_user(sc->frame, pp->fr_size & PY_OFF_MASK, (const void *)sc->at)) {
		sc->stop = STKREC_PY_STOP_FAULT;
		return 0;
	}
	code = py_u64(sc->frame, pp->fr_code);
	back = py_u64(sc->frame, pp->fr_back);
	if (pp->model == STKREC_PY_IFRAME312 &&
	    sc->frame[pp->fr_entry & PY_OFF_MASK] == STKREC_PY_OWNED_BY_CSTACK) {
		/* A shim: the frame before it began its activation. */
		if (sc->last >= 0)
			s->ips[sc->last & (STKREC_MAX_WORDS - 1)] |= 1ULL << 56;
		sc->at = back;
		return 1;
	}
	if (bpf_probe_read_user(sc->code, PY_CODE_READ, (const void *)code)) {
		sc->stop = STKREC_PY_STOP_FAULT;
		return 0;
	}
	if (py_u64(sc->code, 8) != pp->code_type) { /* ob_type */
		sc->stop = STKREC_PY_STOP_BADCODE;
		return 0;
	}
	fp = stkrec_py_fingerprint(*(__u32 *)(sc->code + (pp->co_firstlineno & PY_CODE_MASK)),
				   *(__u64 *)(sc->code + (pp->co_name & PY_CODE_MASK)),
				   *(__u64 *)(sc->code + (pp->co_filename & PY_CODE_MASK)));
	py_code_emit(pp, sc, code, (__u32)(bpf_get_current_pid_tgid() >> 32), fp);
	tag = STKREC_PY_TAG_FRAME;
	if (pp->model == STKREC_PY_FRAMEOBJ) {
		__s32 lasti = *(__s32 *)(sc->frame + (pp->fr_instr & PY_OFF_MASK));

		off = lasti < 0 ? 0xffffffffu : pp->lasti_bytes ? (__u32)lasti / 2 : (__u32)lasti;
		tag = STKREC_PY_TAG_ENTRY; /* every frame its own activation */
	} else {
		instr = py_u64(sc->frame, pp->fr_instr);
		base = code + pp->co_code;
		off = instr >= base && instr - base < 0x100000000ULL ? (instr - base) / 2 : 0xffffffffu;
		if (pp->model == STKREC_PY_IFRAME311 && sc->frame[pp->fr_entry & PY_OFF_MASK])
			tag = STKREC_PY_TAG_ENTRY;
	}
	s->ips[n & (STKREC_MAX_WORDS - 1)] = tag << 56 | (code & STKREC_PY_ADDR_MASK);
	s->ips[(n + 1) & (STKREC_MAX_WORDS - 1)] = STKREC_PY_TAG_INFO << 56 | (__u64)fp << 32 | off;
	sc->last = n;
	sc->n = n + 2;
	sc->frames++;
	sc->at = back;
	return 1;
}

/* py_walk()'s bpf_loop() state. */
struct py_walk_ctx {
	struct stkrec_stack *s;
	struct py_scratch *sc;
	const struct stkrec_py_proc *pp;
};

static long py_walk_step(__u32 i, void *data)
{
	struct py_walk_ctx *c = data;

	(void)i;
	return !py_step(c->s, c->sc, c->pp);
}

/*
 * Append the current thread's Python frames to @s after its @nr words
 * (native frames, at most STKREC_MAX_DEPTH) if process @tgid runs a
 * supported interpreter; returns the new number of words.  A global
 * function: inlined, the verifier walked it (and its thread search) once
 * for every way a program reaches it, 27 ms of a recording's start-up.
 */
__noinline __u32 py_walk(struct stkrec_stack *s, __u32 nr, __u32 tgid)
{
	const struct stkrec_py_proc *pp;
	struct py_scratch *sc;
	__u32 zero = 0, n;
	__u64 ts, frame;
	int i;

	if (!s || nr > STKREC_MAX_DEPTH)
		return nr;
	pp = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!pp)
		return nr;
	sc = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!sc)
		return nr;
	ts = py_tstate(pp, (__u32)bpf_get_current_pid_tgid());
	if (!ts) {
		stat_inc(STKREC_STAT_PY_NO_THREAD);
		return nr;
	}
	if (py_read(&frame, ts + pp->ts_frame))
		return nr;
	if (pp->cframe_frame != STKREC_PY_NO_OFF && frame &&
	    py_read(&frame, frame + pp->cframe_frame))
		return nr;
	sc->at = frame;
	sc->n = nr;
	sc->frames = 0;
	sc->stop = 0;
	sc->last = -1;
	/* Shim frames (3.12+) take steps too: a few more than frames.  A
	 * bpf_loop() (Linux 5.17+) where there is one: the verifier checks
	 * the bounded loop round by round. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		struct py_walk_ctx c = { .s = s, .sc = sc, .pp = pp };

		bpf_loop(STKREC_PY_MAX_FRAMES + 16, py_walk_step, &c, 0);
	} else {
		for (i = 0; i < STKREC_PY_MAX_FRAMES + 16; i++)
			if (!py_step(s, sc, pp))
				break;
	}
	if (!sc->stop && sc->at)
		sc->stop = STKREC_PY_STOP_DEPTH;
	n = sc->n;
	if (sc->stop && sc->stop <= STKREC_PY_STOP_BADCODE && n < STKREC_MAX_NR) {
		s->ips[n & (STKREC_MAX_WORDS - 1)] = STKREC_PY_TAG_STOP << 56 | sc->stop;
		n++;
		stat_inc(STKREC_STAT_PY_STOP_BASE + sc->stop);
	}
	if (sc->frames)
		stat_inc(STKREC_STAT_PY_STACKS);
	return n > STKREC_MAX_NR ? STKREC_MAX_NR : n;
}

#endif /* STKREC_PYTHON_BPF_H */
