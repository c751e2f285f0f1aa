// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pipeline between the capture and the writers.  Stacks are resolved
 * once per (maps snapshot, stack id) for user stacks and once per
 * (stack id, kernel IP, return IP) for kernel stacks, and every address
 * once per module by the symbolizer's cache, so the work follows the
 * number of unique stacks and addresses, never the number of samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "idmap.h"
#include "kvmlinux.h"
#include "locmemo.h"
#include "pystack.h"
#include "report.h"

struct stack_ent {
	uint64_t a, b, c, d;
	struct rstack *st;
	struct stack_ent *next;
};

/* A user stack's first resolution (struct report_priv's ufirst): in the
 * array itself, not an entry a pointer away (a miss and 48 bytes of fresh
 * memory a stack of a system-wide capture). */
struct ustack_first {
	const struct cap_maps *maps;
	struct rstack *st;		/* NULL: none yet */
	uint32_t tgid;
};

struct report_priv {
	const struct report_opts *opts;
	/* A user stack resolved, by its cap_stack's index: the first
	 * (maps, tgid) it was resolved for (nearly always the only one: most
	 * rows of a system-wide capture have a stack of their own, and this
	 * spares each a hash lookup).  Others in @ustacks. */
	struct ustack_first *ufirst;
	struct idmap ustacks;		/* hash -> stack_ent chain */
	struct idmap kstacks;
	struct idmap map_mods;		/* (uintptr_t)mapping -> sym_module */
	struct idmap maps_mods;	/* (uintptr_t)cap_maps -> its mappings' modules,
					 * by index (NULL: not asked yet) */
	struct arena mem;		/* stack_ent, rstack and rframe memory */
	struct pystack *py;		/* names Python frames; NULL: --python=no */
	struct rframe *scratch;		/* a stack's native frames, before its
					 * Python frames are put in */
	size_t cap_scratch;
	struct idmap snaps;		/* hash -> maps_ent chain */
	struct locmemo lm;		/* the symbolizer's last answers */
};

/* cap_segment__maps()'s answer for one (segment, tgid, comm, time): rows
 * of a process share them, and each answer takes three binary searches of
 * the segment's snapshots (thousands in a system-wide capture). */
struct maps_ent {
	uint32_t seg, tgid;
	uint64_t time_ns;
	char comm[16];
	const struct cap_maps *maps;
	struct maps_ent *next;
};

const struct rtask report_no_waker;

const char *report_kind__name(enum report_kind k)
{
	switch (k) {
	case REPORT_PROFILE: return "profile";
	case REPORT_OFFCPU: return "offcpu";
	case REPORT_OFFWAKE: return "offwake";
	}
	return "?";
}

const char *unwind_stop__name(unsigned int reason)
{
	static const char *const names[REPORT_UW_NR_STOPS] = {
		"?", "depth", "fault", "no mapping", "no CFI", "unsupported CFI",
		"frame pointer", "loop",
	};

	return reason < REPORT_UW_NR_STOPS ? names[reason] : "?";
}

const char *python_stop__name(unsigned int reason)
{
	static const char *const names[REPORT_PY_NR_STOPS] = { "?", "depth", "fault", "bad code" };

	return reason < REPORT_PY_NR_STOPS ? names[reason] : "?";
}

const char *rframe__marker(const struct rframe *f, char *buf, size_t size)
{
	if (rframe__unwind_stop(f))
		snprintf(buf, size, "[unwind stopped: %s]", unwind_stop__name(rframe__unwind_stop(f)));
	else if (rframe__python_stop(f))
		snprintf(buf, size, "[python stopped: %s]", python_stop__name(rframe__python_stop(f)));
	else if (rframe__kind(f) == RFRAME_PYTHON && !rframe__sym(f))
		snprintf(buf, size, "%s", REPORT_PY_UNKNOWN);
	else
		return NULL;
	return buf;
}

static struct stack_ent *ent_find(struct idmap *m, uint64_t h, uint64_t a, uint64_t b,
				  uint64_t c, uint64_t d)
{
	struct stack_ent *e;

	for (e = idmap__find_ptr(m, h); e; e = e->next)
		if (e->a == a && e->b == b && e->c == c && e->d == d)
			return e;
	return NULL;
}

static int ent_add(struct report_priv *p, struct idmap *m, uint64_t h, uint64_t a, uint64_t b,
		   uint64_t c, uint64_t d, struct rstack *st)
{
	struct stack_ent *e = arena__alloc(&p->mem, sizeof(*e));

	if (!e)
		return -ENOMEM;
	*e = (struct stack_ent){ a, b, c, d, st, idmap__find_ptr(m, h) };
	return idmap__set_ptr(m, h, e);
}

static struct rstack *rstack__new(struct report_priv *p, uint32_t n)
{
	struct rstack *st = arena__alloc(&p->mem, sizeof(*st) + n * sizeof(*st->frames));

	if (!st)
		return NULL;
	st->frames = (struct rframe *)(st + 1);
	st->nr_frames = n;
	st->nr_native = n;
	st->nr_mods = 0;
	st->mods = NULL;
	st->unknown_mods = 0;
	return st;
}

/* Memory without a file (JIT code, if anything): named by the process's
 * perf map when the capture has one. */
static int map_is_anon(const struct stk_mapping *map)
{
	return !map->inode && !map->build_id_size &&
	       (!map->path[0] || strncmp(map->path, "[anon:", 6) == 0);
}

static struct sym_module *report__module(struct report *r, uint32_t tgid,
					 const struct stk_mapping *map)
{
	struct report_priv *p = r->priv;
	struct sym_module *m = idmap__find_ptr(&p->map_mods, (uintptr_t)map);

	if (m)
		return m;
	if (map_is_anon(map)) {
		m = symbolizer__perf_map_module(r->sym, tgid);
		if (!m && errno == ENOMEM)
			return NULL;
	}
	if (!m)
		m = symbolizer__module(r->sym, map->path, map->build_id, map->build_id_size);
	if (m && idmap__set_ptr(&p->map_mods, (uintptr_t)map, m))
		return NULL;
	return m;
}

/* The module slots of @maps' mappings: a frame's module is then an index
 * away, not a hash lookup per frame (stacks hop between libraries). */
static struct sym_module **report__maps_mods(struct report *r, const struct cap_maps *maps)
{
	struct report_priv *p = r->priv;
	struct sym_module **mods = idmap__find_ptr(&p->maps_mods, (uintptr_t)maps);

	if (mods)
		return mods;
	mods = arena__alloc(&p->mem, (maps->nr_mappings ? maps->nr_mappings : 1) * sizeof(*mods));
	if (!mods)
		return NULL;
	memset(mods, 0, (maps->nr_mappings ? maps->nr_mappings : 1) * sizeof(*mods));
	return idmap__set_ptr(&p->maps_mods, (uintptr_t)maps, mods) ? NULL : mods;
}

/* Room for @n native frames in p->scratch.  0 or -ENOMEM. */
static int report__scratch(struct report_priv *p, uint32_t n)
{
	struct rframe *s;

	if (n <= p->cap_scratch)
		return 0;
	s = realloc(p->scratch, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	p->scratch = s;
	p->cap_scratch = n;
	return 0;
}

/*
 * The modules of a stack's user frames in a mapping, as they are met from
 * the leaf (struct rstack's mods): the first REPORT_STACK_MODS, and whether
 * each has a frame without a symbol.
 */
struct modset {
	struct sym_module *seen[REPORT_STACK_MODS];
	uint32_t n;
	int cur;		/* the index of the last module met; -1: not kept */
	uint64_t unknown;
};

/* Empty (not all of it zeroed: a stack each). */
static void modset__init(struct modset *ms)
{
	ms->n = 0;
	ms->cur = -1;
	ms->unknown = 0;
}

/* Module @m met (the next frames are in it until the next call). */
static void modset__meet(struct modset *ms, struct sym_module *m)
{
	uint32_t j;

	for (j = 0; j < ms->n; j++)
		if (ms->seen[j] == m)
			break;
	if (j == ms->n && ms->n < REPORT_STACK_MODS)
		ms->seen[ms->n++] = m;
	ms->cur = j < ms->n ? (int)j : -1;
}

/* A frame of the last module met, named (@sym) or not. */
static void modset__frame(struct modset *ms, const struct sym_result *sym)
{
	if (!sym && ms->cur >= 0)
		ms->unknown |= 1ull << ms->cur;
}

/* @ms kept in @st.  0 or -ENOMEM. */
static int modset__keep(const struct modset *ms, struct report_priv *p, struct rstack *st)
{
	struct sym_module **mods;

	if (!ms->n)
		return 0;
	mods = arena__alloc(&p->mem, ms->n * sizeof(*mods));
	if (!mods)
		return -ENOMEM;
	memcpy(mods, ms->seen, ms->n * sizeof(*mods));
	st->mods = mods;
	st->nr_mods = (uint8_t)ms->n;
	st->unknown_mods = ms->unknown;
	return 0;
}

/* The modules of @st's frames once Python frames were put in among them
 * (and the eval loop frames they replace left out): each user frame's
 * module asked of its mapping (in p->map_mods since it was resolved).
 * 0 or -ENOMEM. */
static int report__stack_mods(struct report *r, struct rstack *st, uint32_t tgid)
{
	struct modset ms;
	struct sym_module *m;
	uint32_t i;

	modset__init(&ms);
	for (i = 0; i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[i];

		if (rframe__kind(f) != RFRAME_USER || !f->map)
			continue;
		m = report__module(r, tgid, f->map);
		if (!m)
			return -ENOMEM;
		modset__meet(&ms, m);
		modset__frame(&ms, rframe__sym(f));
	}
	return modset__keep(&ms, r->priv, st);
}

static int report__user_stack(struct report *r, const struct cap_segment *seg, uint32_t tgid,
			      const struct cap_maps *maps, int64_t ref, const struct rstack **out)
{
	struct report_priv *p = r->priv;
	const struct stk_mapping *last_map = NULL;
	struct sym_module *last_mod = NULL, **mods = NULL;
	struct modset ms;
	const struct cap_stack *cs;
	struct ustack_first *first;
	struct rframe *native;
	struct stack_ent *e;
	struct rstack *st;
	uint32_t i, nn, npw;
	uint64_t h;
	int err;

	*out = NULL;
	if (ref < 0)
		return 0;
	/* The tgid too: two processes may share a stack id (the same native
	 * addresses) and a maps snapshot may be missing, but their Python
	 * frames are named from their own code objects. */
	cs = cap_segment__stack(seg, (uint64_t)ref);
	if (!cs)
		return 0;	/* referenced but not in the file: missing */
	first = &p->ufirst[cs->index];
	if (first->st && first->maps == maps && first->tgid == tgid) {
		*out = first->st;
		return 0;
	}
	h = hash64(hash64(hash64(hash64(1, (uintptr_t)maps), seg->index), (uint64_t)ref), tgid);
	if (first->st) {
		e = ent_find(&p->ustacks, h, (uintptr_t)maps, seg->index, (uint64_t)ref, tgid);
		if (e) {
			*out = e->st;
			return 0;
		}
	}
	/* The native frames, then (SPEC.md, STCK) the Python words. */
	nn = pystack__native_words(cs->frames, cs->nr_frames);
	npw = p->py ? cs->nr_frames - nn : 0;
	if (npw) {
		st = NULL;
		if (report__scratch(p, nn ? nn : 1))	/* a stack of Python words only */
			return -ENOMEM;
		native = p->scratch;
		memset(native, 0, nn * sizeof(*native));
	} else {
		st = rstack__new(p, nn);
		if (!st)
			return -ENOMEM;
		native = st->frames;
	}
	if (maps) {
		mods = report__maps_mods(r, maps);
		if (!mods)
			return -ENOMEM;
	}
	modset__init(&ms);
	for (i = 0; i < nn; i++) {
		struct rframe *f = &native[i];

		/* A frame two ahead in the same mapping (most are): its
		 * location's slot loads while this one is looked up. */
		if (i + 2 < nn && last_map && !p->opts->no_symbols &&
		    cs->frames[i + 2] >= last_map->start && cs->frames[i + 2] < last_map->end)
			locmemo__prefetch(&p->lm, last_mod, last_map, cs->frames[i + 2], nn - 3 - i);
		rframe__set_kind(f, RFRAME_USER, i > 0);
		f->addr = cs->frames[i];
		/* Neighbouring frames are often in one mapping. */
		if (last_map && f->addr >= last_map->start && f->addr < last_map->end)
			f->map = last_map;
		else
			f->map = maps ? cap_maps__find(maps, f->addr) : NULL;
		if (f->map) {
			if (f->map != last_map) {
				struct sym_module **slot = &mods[f->map - maps->mappings];

				if (!*slot)
					*slot = report__module(r, maps->tgid, f->map);
				if (!*slot)
					return -ENOMEM;
				last_map = f->map;
				last_mod = *slot;
				modset__meet(&ms, last_mod);
			}
			if (!p->opts->no_symbols) {
				const struct sym_result *res;

				err = locmemo__lookup(&p->lm, r->sym, last_mod, f->map, f->addr,
						      (uint32_t)(i > 0), nn - 1 - i, &res);
				if (err)
					return err;
				rframe__set_sym(f, res);
			}
			modset__frame(&ms, rframe__sym(f));
		}
	}
	if (npw) {
		st = rstack__new(p, pystack__max_frames(nn, npw));
		if (!st)
			return -ENOMEM;
		err = pystack__merge(p->py, tgid, native, nn, cs->frames + nn, npw, st->frames,
				     &st->nr_frames, &st->nr_python);
		if (err)
			return err;
	}
	for (i = 0; i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[i];

		st->nr_unknown += !rframe__sym(f) && !rframe__python_stop(f);
		if (rframe__python_stop(f))
			st->python_stop = (uint8_t)rframe__python_stop(f);
		else if (rframe__kind(f) == RFRAME_PYTHON && !rframe__sym(f))
			st->python_unknown = 1;
	}
	st->nr_native = nn;
	if (nn) {
		st->unwind_stop = (uint8_t)rframe__unwind_stop(&native[nn - 1]);
		r->uw_stops.stacks[st->unwind_stop] += st->unwind_stop != 0;
	}
	err = npw ? report__stack_mods(r, st, maps ? maps->tgid : tgid) : modset__keep(&ms, p, st);
	if (err)
		return err;
	if (!first->st) {
		*first = (struct ustack_first){ maps, st, tgid };
	} else {
		err = ent_add(p, &p->ustacks, h, (uintptr_t)maps, seg->index, (uint64_t)ref, tgid,
			      st);
		if (err)
			return err;
	}
	*out = st;
	return 0;
}

static const struct cap_kobj *kobj_find(const struct capture *c, uint64_t addr)
{
	const struct cap_kobj *kernel = NULL;
	size_t i;

	for (i = 0; i < c->nr_kobjs; i++) {
		const struct cap_kobj *k = &c->kobjs[i];

		if (k->size && addr >= k->base && addr - k->base < k->size)
			return k;
		if (strcmp(k->name, "[kernel.kallsyms]") == 0)
			kernel = k;
	}
	return kernel;
}

/* The kernel image, or an address in no recorded object. */
static int kobj_is_image(const struct cap_kobj *k)
{
	return !k || strcmp(k->name, "[kernel.kallsyms]") == 0;
}

/* A function of the tracing machinery between a tracepoint and the BPF
 * program that took the stack (bpf_trace_run4, __bpf_trace_sched_switch,
 * __traceiter_sched_switch, a bpf_prog_* symbol). */
static int tracing_frame(const struct sym_result *sym)
{
	static const char *const prefixes[] = {
		"bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_prog_", "__bpf_prog_",
	};
	size_t i;

	if (!sym || !sym->nr_lines)
		return 0;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(sym->lines[0].name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/*
 * Off-CPU stacks are taken by a program on a tracepoint, so they start in
 * the program (an address no captured symbol covers: it was loaded after
 * kallsyms was read) and the tracepoint's calling code.  Which frames those
 * are depends on the kernel build (here bpf_prog, bpf_trace_run4; older
 * kernels add __bpf_trace_sched_switch), so they are found by name: the
 * first frame kept is the one after the last machinery frame among the
 * first few, e.g. __schedule for sched_switch or try_to_wake_up for
 * sched_waking.  Without kernel symbols nothing is recognised and the
 * stack stays whole.
 */
#define TRACING_FRAMES_MAX 8

static uint32_t tracing_prefix(struct report *r, const struct cap_stack *cs)
{
	uint32_t i, start = 0;

	for (i = 0; i < cs->nr_frames && i < TRACING_FRAMES_MAX; i++)
		if (tracing_frame(ksyms__lookup(r->ksyms, i ? cs->frames[i] - 1 : cs->frames[i])))
			start = i + 1;
	return start < cs->nr_frames ? start : 0;
}

/*
 * The kernel fix-up, as profile.py does it: when the recorded stack does
 * not start at the interrupted IP, it starts inside the interrupt/perf
 * machinery; skip up to the frame equal to the recorded return IP and put
 * the interrupted IP first.  A frame is never printed twice.  With -S N, N
 * frames are skipped instead.  If the return IP is not found, the stack is
 * kept whole (with the IP first) rather than dropped as profile.py would.
 */
static int report__kernel_stack(struct report *r, const struct cap_segment *seg, int64_t ref,
				uint64_t kip, uint64_t kret, const struct rstack **out)
{
	struct report_priv *p = r->priv;
	const struct cap_stack *cs;
	struct stack_ent *e;
	struct rstack *st;
	uint32_t start = 0, i, n, prepend = 0;
	uint64_t h;
	int skip = p->opts->kernel_skip;

	*out = NULL;
	if (ref < 0)
		return 0;
	h = hash64(hash64(hash64(hash64(2, seg->index), (uint64_t)ref), kip), kret);
	e = ent_find(&p->kstacks, h, seg->index, (uint64_t)ref, kip, kret);
	if (e) {
		*out = e->st;
		return 0;
	}
	cs = cap_segment__stack(seg, (uint64_t)ref);
	if (!cs)
		return 0;
	n = cs->nr_frames;
	if (skip > 0) {
		start = (uint32_t)skip < n ? (uint32_t)skip : n;
	} else if (r->kind != REPORT_PROFILE || r->trace) {
		/* Off-CPU and trace stacks: taken in a tracing program. */
		start = tracing_prefix(r, cs);
	} else if (kip && !(n && cs->frames[0] == kip) && kret) {
		for (i = 0; i < n; i++)
			if (cs->frames[i] == kret)
				break;
		if (i < n)
			start = i;
	}
	if (kip && !(start < n && cs->frames[start] == kip))
		prepend = 1;
	st = rstack__new(p, n - start + prepend);
	if (!st)
		return -ENOMEM;
	for (i = 0; i < st->nr_frames; i++) {
		struct rframe *f = &st->frames[i];

		const struct sym_result *res = NULL;
		int is_return;

		f->addr = prepend && i == 0 ? kip : cs->frames[start + i - prepend];
		/* After skipped tracing frames, the first kept one is a
		 * return address too. */
		is_return = i > 0 || ((r->kind != REPORT_PROFILE || r->trace) && start > 0);
		rframe__set_kind(f, RFRAME_KERNEL, is_return);
		f->kobj = kobj_find(r->cap, f->addr);
		/* The kernel image from --vmlinux (inline frames, lines);
		 * modules, and whatever it does not cover, from kallsyms. */
		if (p->opts->vmlinux && kobj_is_image(f->kobj)) {
			if (kvmlinux__lookup(p->opts->vmlinux, f->addr, is_return, &res))
				return -ENOMEM;
			if (res && kvmlinux__has_dwarf(p->opts->vmlinux))
				rframe__set_kernel_dwarf(f);
		}
		if (!res)
			res = ksyms__lookup(r->ksyms, is_return ? f->addr - 1 : f->addr);
		rframe__set_sym(f, res);
		st->nr_unknown += !res;
	}
	if (ent_add(p, &p->kstacks, h, seg->index, (uint64_t)ref, kip, kret, st))
		return -ENOMEM;
	*out = st;
	return 0;
}

static int in_list(const uint32_t *list, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

static int report__keep(const struct report_opts *o, const struct stk_task_stacks *t)
{
	if (o->nr_pids && !in_list(o->pids, o->nr_pids, t->tgid))
		return 0;
	if (o->nr_tids && !in_list(o->tids, o->nr_tids, t->tid))
		return 0;
	if (o->comm && strncmp(o->comm, t->comm, sizeof(t->comm)) != 0)
		return 0;
	if (o->exclude_idle && report__is_idle(t->tgid, t->tid))
		return 0;
	return 1;
}

/* profile.py: a wanted stack that is missing for another reason than
 * "no stack in this context" (EFAULT; we add ENOENT, "not requested"). */
static int ref_missing(int64_t ref, const struct rstack *st)
{
	if (ref >= 0)
		return st == NULL;
	return ref != -EFAULT && ref != -ENOENT;
}

/* cap_segment__maps(), remembered.  0 or -ENOMEM. */
static int report__maps(struct report *r, const struct cap_segment *seg, uint32_t tgid,
			const char *comm, uint64_t time_ns, const struct cap_maps **out)
{
	struct report_priv *p = r->priv;
	uint64_t h = hash64(hash64(hash_bytes(hash64(3, seg->index), comm, strnlen(comm, 16)),
				   tgid), time_ns);
	struct maps_ent *e;

	for (e = idmap__find_ptr(&p->snaps, h); e; e = e->next)
		if (e->seg == seg->index && e->tgid == tgid && e->time_ns == time_ns &&
		    strncmp(e->comm, comm, sizeof(e->comm)) == 0) {
			*out = e->maps;
			return 0;
		}
	e = arena__alloc(&p->mem, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct maps_ent){ .seg = seg->index, .tgid = tgid, .time_ns = time_ns,
				.maps = cap_segment__maps(seg, tgid, comm, time_ns),
				.next = idmap__find_ptr(&p->snaps, h) };
	strncpy(e->comm, comm, sizeof(e->comm));
	*out = e->maps;
	return idmap__set_ptr(&p->snaps, h, e);
}

static int report__task(struct report *r, const struct cap_segment *seg,
			const struct stk_task_stacks *t, uint64_t kip, uint64_t kret,
			uint64_t time_ns, struct rtask *out)
{
	const struct report_opts *o = r->priv->opts;
	const struct cap_maps *maps;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->tgid = t->tgid;
	out->tid = t->tid;
	out->ns_tgid = cap_segment__ns_tgid(seg, t->tgid, time_ns, &out->pid_ns);
	memcpy(out->comm, t->comm, sizeof(out->comm));
	out->comm[15] = '\0';
	out->user_ref = t->user_stack;
	out->kernel_ref = t->kernel_stack;
	if (!o->kernel_only) {
		err = report__maps(r, seg, t->tgid, out->comm, time_ns, &maps);
		err = err ?: report__user_stack(r, seg, t->tgid, maps, t->user_stack, &out->user);
		if (err)
			return err;
		if (ref_missing(t->user_stack, out->user)) {
			r->missing_stacks++;
			r->missing_map_full |= t->user_stack == -ENOMEM || t->user_stack == -EEXIST;
		}
	}
	if (!o->user_only) {
		err = report__kernel_stack(r, seg, t->kernel_stack, kip, kret, &out->kernel);
		if (err)
			return err;
		if (ref_missing(t->kernel_stack, out->kernel) &&
		    !(!o->kernel_only && ref_missing(t->user_stack, out->user))) {
			r->missing_stacks++;
			r->missing_map_full |= t->kernel_stack == -ENOMEM || t->kernel_stack == -EEXIST;
		} else if (ref_missing(t->kernel_stack, out->kernel)) {
			r->missing_map_full |= t->kernel_stack == -ENOMEM || t->kernel_stack == -EEXIST;
		}
	}
	return 0;
}

/* The samples live in the report's arena: a system-wide capture's are
 * tens of MB, and the arena's big chunks fault in as huge pages (malloc's
 * in 4 KiB pages, a tenth of the pipeline's faults). */
static int report__add(struct report *r, struct rsample *s, size_t *cap)
{
	if (r->nr_samples == *cap) {
		size_t n = *cap ? 2 * *cap : 256;
		struct rsample *p = arena__alloc(&r->priv->mem, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		if (r->nr_samples)
			memcpy(p, r->samples, r->nr_samples * sizeof(*p));
		r->samples = p;
		*cap = n;
	}
	r->samples[r->nr_samples++] = *s;
	return 0;
}

/* Per-module "fully symbolized" accounting for the summary. */
static void report__account_stack(const struct rstack *st, uint64_t count)
{
	uint32_t j;

	if (!st)
		return;
	for (j = 0; j < st->nr_mods; j++) {
		st->mods[j]->samples += count;
		if (st->unknown_mods & (1ull << j))
			st->mods[j]->unknown_samples += count;
	}
}

static void report__account_stop(struct report *r, const struct rstack *st, uint64_t count)
{
	if (st && st->python_unknown)
		r->py.unknown_count += count;
	if (st && st->python_stop) {
		r->py.stop_count[st->python_stop] += count;
		r->py.stop_total += count;
	}
	if (!st || !st->unwind_stop)
		return;
	r->uw_stops.count[st->unwind_stop] += count;
	r->uw_stops.total_count += count;
}

static int rtask_unknown(const struct rtask *t)
{
	return (t->user && t->user->nr_unknown) || (t->kernel && t->kernel->nr_unknown);
}

static void report__account(struct report *r, const struct rsample *s)
{
	r->total_count += s->count;
	if (!rtask_unknown(&s->task) && !rtask_unknown(s->waker))
		r->symbolized_count += s->count;
	report__account_stack(s->task.user, s->count);
	report__account_stack(s->waker->user, s->count);
	report__account_stop(r, s->task.user, s->count);
	report__account_stop(r, s->waker->user, s->count);
	if (s->task.kernel) {
		r->kernel_samples += s->count;
		if (s->task.kernel->nr_unknown)
			r->kernel_unknown_samples += s->count;
	}
}

static enum report_kind capture_kind(const struct capture *c)
{
	const char *mode = capture__meta(c, "mode");
	size_t i, j, offc = 0;

	if (mode && strcmp(mode, "offwake") == 0)
		return REPORT_OFFWAKE;
	if (mode && strcmp(mode, "offcpu") == 0)
		return REPORT_OFFCPU;
	if (mode && strcmp(mode, "profile") == 0)
		return REPORT_PROFILE;
	for (i = 0; i < c->nr_segs; i++) {
		offc += c->segs[i].nr_offc;
		for (j = 0; j < c->segs[i].nr_offc; j++) {
			const struct stk_task_stacks *w = &c->segs[i].offc[j]->row.waker;

			if (w->tgid || w->user_stack >= 0 || w->kernel_stack >= 0)
				return REPORT_OFFWAKE;
		}
	}
	return offc ? REPORT_OFFCPU : REPORT_PROFILE;
}

/* Rows ahead whose stack index slots are loaded early. */
#define REPORT_AHEAD 4

static int report__run(struct report *r)
{
	const struct report_opts *o = r->priv->opts;
	size_t i, j, n, cap = 0, rows = 0, stacks, recorded = 0;
	int err;

	/* The stacks resolved: one per row at most, and about as many as the
	 * capture holds (a system-wide capture of short-lived processes has
	 * nearly one per row; a long one of a steady workload many rows per
	 * stack, and those must not get tables for every row).  User stacks
	 * by the capture's index of them; kernel ones in a table started at
	 * an eighth of that: they repeat (the build capture's 55k rows have
	 * 4k), and a table sized for every row was 2 MiB of fresh memory
	 * probed at random, 32 times what they fill; growing from there is
	 * three doublings at most. */
	for (i = 0; i < r->cap->nr_segs; i++) {
		rows += r->kind == REPORT_PROFILE ? r->cap->segs[i].nr_counts :
			r->cap->segs[i].nr_offc;
		recorded += idmap__count(&r->cap->segs[i].stacks);
	}
	/* Off-wake rows: a target's stacks and a waker's. */
	stacks = r->kind == REPORT_OFFWAKE ? 2 * rows : rows;
	if (stacks > recorded)
		stacks = recorded;
	/* In the arena: a megabyte of it for a system-wide capture, on
	 * huge pages rather than a fault per 4 KiB. */
	n = (r->cap->nr_stacks ? r->cap->nr_stacks : 1) * sizeof(*r->priv->ufirst);
	r->priv->ufirst = arena__alloc(&r->priv->mem, n);
	if (!r->priv->ufirst || locmemo__init(&r->priv->lm))
		return -ENOMEM;
	memset(r->priv->ufirst, 0, n);
	err = idmap__reserve(&r->priv->kstacks, stacks / 8);
	if (err)
		return err;
	/* A sample per row, but for those filtered out. */
	if (rows) {
		r->samples = arena__alloc(&r->priv->mem, rows * sizeof(*r->samples));
		if (!r->samples)
			return -ENOMEM;
		cap = rows;
	}
	for (i = 0; i < r->cap->nr_segs; i++) {
		const struct cap_segment *seg = &r->cap->segs[i];

		if (r->kind == REPORT_PROFILE) {
			for (j = 0; j < seg->nr_counts; j++) {
				const struct cap_count *c = seg->counts[j];
				const struct stk_count *row = &c->row;
				struct stk_task_stacks t = {
					.tgid = row->tgid, .tid = row->tid,
					.user_stack = row->user_stack, .kernel_stack = row->kernel_stack,
				};
				struct rsample s = { .count = row->count, .segment = seg->index,
						     .event = c->event, .waker = &report_no_waker };

				/* Rows have stacks of their own, at random in
				 * the segment's index: start loading a later
				 * row's while this one is resolved. */
				if (j + REPORT_AHEAD < seg->nr_counts &&
				    seg->counts[j + REPORT_AHEAD]->row.user_stack >= 0)
					cap_segment__prefetch_stack(seg,
						(uint64_t)seg->counts[j + REPORT_AHEAD]->row.user_stack);
				memcpy(t.comm, row->comm, sizeof(t.comm));
				if (o->event && c->event != o->event - 1)
					continue;
				if (!report__keep(o, &t))
					continue;
				err = report__task(r, seg, &t, row->kernel_ip, row->kernel_ret_ip, c->t1,
						   &s.task);
				if (!err)
					err = report__add(r, &s, &cap);
				if (err)
					return err;
				report__account(r, &s);
			}
			continue;
		}
		for (j = 0; j < seg->nr_offc; j++) {
			const struct cap_offc *c = seg->offc[j];
			struct rsample s = {
				.count = c->row.count, .blocked_ns = c->row.blocked_ns,
				.segment = seg->index, .waker = &report_no_waker,
			};

			if (!report__keep(o, &c->row.target))
				continue;
			err = report__task(r, seg, &c->row.target, 0, 0, c->t1, &s.task);
			if (!err && r->kind == REPORT_OFFWAKE) {
				struct rtask *w = arena__alloc(&r->priv->mem, sizeof(*w));

				err = w ? report__task(r, seg, &c->row.waker, 0, 0, c->t1, w) : -ENOMEM;
				s.waker = w;
			}
			if (!err)
				err = report__add(r, &s, &cap);
			if (err)
				return err;
			report__account(r, &s);
		}
	}
	return 0;
}

struct report *report__new(const struct capture *cap, const struct report_opts *opts)
{
	struct symbolizer_opts so;
	struct report *r = NULL;
	int err = -EINVAL;
	size_t i;

	if (!cap || !opts || opts->sz < sizeof(*opts) || (opts->user_only && opts->kernel_only))
		goto fail;
	err = -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto fail;
	r->priv = calloc(1, sizeof(*r->priv));
	if (!r->priv)
		goto fail;
	r->priv->opts = opts;
	r->cap = cap;
	r->kind = capture_kind(cap);
	r->nr_events = capture__nr_events(cap);
	r->trace = r->nr_events > 0;
	if (!opts->no_python) {
		r->priv->py = pystack__new(cap);
		if (!r->priv->py)
			goto fail;
	}
	so = opts->sym;
	if (!so.input_size)	/* embedded images inflate within the capture's bound */
		so.input_size = cap->summary.file_size;
	r->sym = symbolizer__new(&so);
	if (!r->sym) {
		err = -errno;
		goto fail;
	}
	for (i = 0; i < cap->nr_esyms; i++) {
		const struct cap_esym *e = &cap->esyms[i];

		err = symbolizer__add_embedded(r->sym, e->build_id, e->build_id_size, e->elf,
					       e->elf_size);
		if (err)
			goto fail;
	}
	for (i = 0; i < cap->nr_symtabs; i++) {
		const struct cap_symtab *t = &cap->symtabs[i];

		if (t->kind == STK_ESYM_SYMTAB)
			err = symbolizer__add_symtab(r->sym, t->build_id, t->build_id_size, t->t);
		else
			err = symbolizer__add_perf_map(r->sym, t->tgid, t->t);
		if (err)
			goto fail;
	}
	err = -ENOMEM;
	if (opts->kallsyms) {
		r->own_ksyms = ksyms__new();
		if (!r->own_ksyms)
			goto fail;
		err = ksyms__load_kallsyms(r->own_ksyms, opts->kallsyms);
		if (err)
			goto fail;
		r->ksyms = r->own_ksyms;
		r->kernel_syms_source = opts->kallsyms;
	} else {
		r->ksyms = cap->ksyms;
		r->kernel_syms_source = ksyms__count(cap->ksyms) ? "capture" : NULL;
	}
	err = report__run(r);
	if (err)
		goto fail;
	return r;
fail:
	report__free(r);
	errno = -err;
	return NULL;
}

struct sym_module *report__map_module(const struct report *r, const struct stk_mapping *map)
{
	return idmap__find_ptr(&r->priv->map_mods, (uintptr_t)map);
}

void report__free(struct report *r)
{
	if (!r)
		return;
	if (r->priv) {
		arena__free(&r->priv->mem);
		idmap__release(&r->priv->ustacks);
		locmemo__release(&r->priv->lm);
		idmap__release(&r->priv->kstacks);
		idmap__release(&r->priv->map_mods);
		idmap__release(&r->priv->maps_mods);
		idmap__release(&r->priv->snaps);
		pystack__free(r->priv->py);
		free(r->priv->scratch);
		free(r->priv);
	}
	symbolizer__free(r->sym);
	ksyms__free(r->own_ksyms);
	free(r);
}
