// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reading a capture into memory.  Rows are summed by key as they arrive,
 * so memory follows the number of unique keys, not the number of flushes;
 * but only rows whose process had one maps snapshot in force at the end
 * of their intervals are summed, since a row's user addresses resolve in
 * that snapshot (SPEC.md, MAPS): a plugin unloaded and another loaded at
 * its address gives two rows of one key that name different functions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "hash.h"
#include "stats.h"

/* What the memory budget charges besides a record's own bytes: a hash
 * table entry (16 bytes at a load of 1/2) and malloc's header. */
#define ENTRY_COST 32
#define MALLOC_COST 16

static __thread char cap_errmsg[256];

const char *capture__errmsg(void)
{
	return cap_errmsg;
}

static struct cap_segment *capture__segment(struct capture *c, uint32_t index,
					    struct stk_reader *r)
{
	struct cap_segment *p;
	const struct stk_segment_info *info;

	while (c->nr_segs <= index) {
		p = realloc(c->segs, (c->nr_segs + 1) * sizeof(*p));
		if (!p)
			return NULL;
		c->segs = p;
		memset(&p[c->nr_segs], 0, sizeof(*p));
		p[c->nr_segs].index = (uint32_t)c->nr_segs;
		info = r ? stk_reader__segment(r, (uint32_t)c->nr_segs) : NULL;
		if (info)
			p[c->nr_segs].info = *info;
		c->nr_segs++;
	}
	return &c->segs[index];
}

/* Rows or stacks of a chunk ahead whose index slot is loaded early. */
#define SEG_AHEAD 8

static int seg__add_stacks(struct capture *c, struct cap_segment *s, const struct stk_stack *st,
			   size_t n, uint64_t *mem)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct cap_stack *cs;

		/* The index is megabytes, probed at random: a later id's
		 * slot loads while this one is looked up. */
		if (i + SEG_AHEAD < n)
			idmap__prefetch(&s->stacks, st[i + SEG_AHEAD].id);
		if (idmap__find_ptr(&s->stacks, st[i].id))
			continue;	/* ids are content-stable: same id, same frames */
		if (c->nr_stacks >= UINT32_MAX)
			return -ENOMEM;
		cs = arena__alloc(&s->mem, sizeof(*cs) + st[i].nr_frames * sizeof(uint64_t));
		if (!cs)
			return -ENOMEM;
		*mem += sizeof(*cs) + st[i].nr_frames * sizeof(uint64_t) + ENTRY_COST;
		cs->id = st[i].id;
		cs->nr_frames = st[i].nr_frames;
		cs->index = (uint32_t)c->nr_stacks++;
		cs->frames = (uint64_t *)(cs + 1);
		memcpy(cs->frames, st[i].frames, st[i].nr_frames * sizeof(uint64_t));
		if (idmap__set_ptr(&s->stacks, cs->id, cs))
			return -ENOMEM;
	}
	return 0;
}

/* The snapshots of one process read so far, sorted by (time, seq). */
struct proc_snaps {
	struct cap_maps **v;
	size_t n, cap;
};

/* Adds snapshot @m to its process's list in @s->maps_read.  stkrec
 * writes a process's snapshots in time order (appended); a merge or a
 * crafted file may not (inserted in place). */
static int seg__index_snapshot(struct cap_segment *s, struct cap_maps *m, uint64_t *mem)
{
	struct proc_snaps *p = idmap__find_ptr(&s->maps_read, m->tgid);
	size_t a, b, mid;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		if (idmap__set_ptr(&s->maps_read, m->tgid, p)) {
			free(p);
			return -ENOMEM;
		}
		*mem += sizeof(*p) + ENTRY_COST + MALLOC_COST;
	}
	if (array__grow((void **)&p->v, &p->cap, p->n, sizeof(*p->v)))
		return -ENOMEM;
	/* After every snapshot of its time or earlier: seq grows in file order. */
	a = 0;
	b = p->n;
	if (b && p->v[b - 1]->time_ns <= m->time_ns)
		a = b;
	while (a < b) {
		mid = a + (b - a) / 2;
		if (p->v[mid]->time_ns <= m->time_ns)
			a = mid + 1;
		else
			b = mid;
	}
	memmove(p->v + a + 1, p->v + a, (p->n - a) * sizeof(*p->v));
	p->v[a] = m;
	p->n++;
	return 0;
}

/*
 * The snapshot of @tgid in force at @t1 among those read so far: the
 * newest taken at or before it, NULL if none.  Rows of one key whose
 * intervals give the same one are summed: no snapshot of the process
 * falls between their ends, so cap_segment__maps() gives them one
 * snapshot whatever their comm.
 */
static const struct cap_maps *seg__snapshot_at(const struct cap_segment *s, uint32_t tgid,
					       uint64_t t1)
{
	const struct proc_snaps *p = idmap__find_ptr(&s->maps_read, tgid);
	size_t a = 0, b, mid;

	if (!p || !p->n)
		return NULL;
	b = p->n;
	if (p->v[b - 1]->time_ns <= t1)
		return p->v[b - 1];
	while (a < b) {
		mid = a + (b - a) / 2;
		if (p->v[mid]->time_ns <= t1)
			a = mid + 1;
		else
			b = mid;
	}
	return a ? p->v[a - 1] : NULL;
}

static void seg__free_maps_read(struct cap_segment *s)
{
	size_t iter = 0;
	uint64_t key, value;

	while (idmap__next(&s->maps_read, &iter, &key, &value)) {
		struct proc_snaps *p = (struct proc_snaps *)(uintptr_t)value;

		free(p->v);
		free(p);
	}
	idmap__release(&s->maps_read);
}

static uint64_t count_key(const struct stk_count *r, const struct cap_maps *maps)
{
	uint64_t h = hash64(r->tgid, r->tid);

	h = hash_bytes(h, r->comm, strnlen(r->comm, sizeof(r->comm)));
	h = hash64(h, (uint64_t)r->user_stack);
	h = hash64(h, (uint64_t)r->kernel_stack);
	h = hash64(h, r->kernel_ip);
	h = hash64(h, r->kernel_ret_ip);
	return hash64(h, (uint64_t)(uintptr_t)maps);
}

static int count_eq(const struct stk_count *a, const struct stk_count *b)
{
	return a->tgid == b->tgid && a->tid == b->tid &&
	       strncmp(a->comm, b->comm, sizeof(a->comm)) == 0 &&
	       a->user_stack == b->user_stack && a->kernel_stack == b->kernel_stack &&
	       a->kernel_ip == b->kernel_ip && a->kernel_ret_ip == b->kernel_ret_ip;
}

static void seg__times(struct cap_segment *s, uint64_t t0, uint64_t t1)
{
	if (!s->t_first || (t0 && t0 < s->t_first))
		s->t_first = t0;
	if (t1 > s->t_last)
		s->t_last = t1;
}

/* What of @v may be added to the capture's @total without passing 2^64. */
static uint64_t capture__take(struct capture *c, uint64_t *total, uint64_t v)
{
	if (v > UINT64_MAX - *total) {
		v = UINT64_MAX - *total;
		c->saturated = 1;
	}
	*total += v;
	return v;
}

/* seg__add_count() of row @r, in force with snapshot @maps, its key @k. */
static int seg__add_keyed(struct capture *cap, struct cap_segment *s, const struct stk_count *r,
			  uint32_t event, uint64_t t1, const struct cap_maps *maps, uint64_t k)
{
	uint64_t n = capture__take(cap, &cap->total_count, r->count);
	struct cap_count *first = idmap__find_ptr(&s->count_keys, k), *c;

	for (c = first; c; c = c->next)
		if (c->maps == maps && c->event == event && count_eq(&c->row, r))
			break;
	if (c) {
		c->row.count += n;
		return 0;
	}
	if (array__grow((void **)&s->counts, &s->cap_counts, s->nr_counts, sizeof(*s->counts)))
		return -ENOMEM;
	c = arena__alloc(&s->mem, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->row = *r;
	c->row.count = n;
	c->row.comm[sizeof(c->row.comm) - 1] = '\0';
	c->event = event;
	cap->mem += sizeof(*c) + sizeof(c) + ENTRY_COST;
	c->t1 = t1;
	c->maps = maps;
	c->next = first;
	if (idmap__set_ptr(&s->count_keys, k, c))
		return -ENOMEM;
	s->counts[s->nr_counts++] = c;
	return 0;
}

/* One CNTS row, or a TRCE row of event @event (CNTS: 0), of the
 * interval ending at @t1, summed into its key's. */
static int seg__add_count(struct capture *cap, struct cap_segment *s, const struct stk_count *r,
			  uint32_t event, uint64_t t1)
{
	const struct cap_maps *maps = seg__snapshot_at(s, r->tgid, t1);

	return seg__add_keyed(cap, s, r, event, t1, maps, hash64(count_key(r, maps), event));
}

/* TRCE rows: CNTS rows with their event and no interrupted IP. */
static int seg__add_trace(struct capture *cap, struct cap_segment *s, const struct stk_chunk *ch)
{
	size_t i;
	int err = 0;

	seg__times(s, ch->t0_ns, ch->t1_ns);
	for (i = 0; !err && i < ch->u.trce.n; i++) {
		const struct stk_trace_count *t = &ch->u.trce.rows[i];
		struct stk_count r = {
			.tgid = t->tgid, .tid = t->tid, .user_stack = t->user_stack,
			.kernel_stack = t->kernel_stack, .count = t->count,
		};

		memcpy(r.comm, t->comm, sizeof(r.comm));
		err = seg__add_count(cap, s, &r, t->event, ch->t1_ns);
	}
	return err;
}

/* CNTS rows, SEG_AHEAD at a time: their snapshots and keys first, the
 * keys' slots of the index (megabytes, at random) loading, then each
 * summed. */
static int seg__add_counts(struct capture *cap, struct cap_segment *s, const struct stk_chunk *ch)
{
	const struct cap_maps *maps[SEG_AHEAD];
	uint64_t keys[SEG_AHEAD];
	size_t i, j, n;
	int err = 0;

	seg__times(s, ch->t0_ns, ch->t1_ns);
	for (i = 0; !err && i < ch->u.cnts.n; i += n) {
		const struct stk_count *rows = &ch->u.cnts.rows[i];

		n = ch->u.cnts.n - i < SEG_AHEAD ? ch->u.cnts.n - i : SEG_AHEAD;
		for (j = 0; j < n; j++) {
			maps[j] = seg__snapshot_at(s, rows[j].tgid, ch->t1_ns);
			keys[j] = hash64(count_key(&rows[j], maps[j]), 0);
			idmap__prefetch(&s->count_keys, keys[j]);
		}
		for (j = 0; !err && j < n; j++)
			err = seg__add_keyed(cap, s, &rows[j], 0, ch->t1_ns, maps[j], keys[j]);
	}
	return err;
}

static uint64_t task_key(uint64_t h, const struct stk_task_stacks *t)
{
	h = hash64(h, ((uint64_t)t->tgid << 32) | t->tid);
	h = hash_bytes(h, t->comm, strnlen(t->comm, sizeof(t->comm)));
	h = hash64(h, (uint64_t)t->user_stack);
	return hash64(h, (uint64_t)t->kernel_stack);
}

static int task_eq(const struct stk_task_stacks *a, const struct stk_task_stacks *b)
{
	return a->tgid == b->tgid && a->tid == b->tid &&
	       strncmp(a->comm, b->comm, sizeof(a->comm)) == 0 &&
	       a->user_stack == b->user_stack && a->kernel_stack == b->kernel_stack;
}

static int seg__add_offc(struct capture *cap, struct cap_segment *s, const struct stk_chunk *ch)
{
	size_t i;

	seg__times(s, ch->t0_ns, ch->t1_ns);
	for (i = 0; i < ch->u.offc.n; i++) {
		const struct stk_offcpu *r = &ch->u.offc.rows[i];
		const struct cap_maps *tm = seg__snapshot_at(s, r->target.tgid, ch->t1_ns);
		const struct cap_maps *wm = seg__snapshot_at(s, r->waker.tgid, ch->t1_ns);
		uint64_t k = task_key(task_key(7, &r->target), &r->waker);
		uint64_t n = capture__take(cap, &cap->total_count, r->count);
		uint64_t ns = capture__take(cap, &cap->total_blocked_ns, r->blocked_ns);
		struct cap_offc *first, *c;

		k = hash64(hash64(k, (uint64_t)(uintptr_t)tm), (uint64_t)(uintptr_t)wm);
		first = idmap__find_ptr(&s->offc_keys, k);
		for (c = first; c; c = c->next)
			if (c->target_maps == tm && c->waker_maps == wm &&
			    task_eq(&c->row.target, &r->target) && task_eq(&c->row.waker, &r->waker))
				break;
		if (c) {
			c->row.count += n;
			c->row.blocked_ns += ns;
			continue;
		}
		if (array__grow((void **)&s->offc, &s->cap_offc, s->nr_offc, sizeof(*s->offc)))
			return -ENOMEM;
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->row = *r;
		c->row.count = n;
		c->row.blocked_ns = ns;
		c->row.target.comm[15] = c->row.waker.comm[15] = '\0';
		cap->mem += sizeof(*c) + sizeof(c) + ENTRY_COST + MALLOC_COST;
		c->t1 = ch->t1_ns;
		c->target_maps = tm;
		c->waker_maps = wm;
		c->next = first;
		if (idmap__set_ptr(&s->offc_keys, k, c)) {
			free(c);
			return -ENOMEM;
		}
		s->offc[s->nr_offc++] = c;
	}
	return 0;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct stk_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A mapping path kept once per segment (struct cap_segment's paths). */
struct cap_path {
	struct cap_path *next;	/* same hash */
	size_t len;
	char s[];
};

static void cap_maps__free(struct cap_maps *m)
{
	if (!m)
		return;
	free(m->mappings);
	free(m);
}

/* @path (@len bytes) as kept in @s, a copy the first time; NULL: out of
 * memory. */
static const char *seg__path(struct cap_segment *s, const char *path, size_t len)
{
	uint64_t h = hash_bytes(0, path, len);
	struct cap_path *first = idmap__find_ptr(&s->paths, h), *c;

	for (c = first; c; c = c->next)
		if (c->len == len && memcmp(c->s, path, len) == 0)
			return c->s;
	c = arena__alloc(&s->mem, sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	c->next = first;
	c->len = len;
	memcpy(c->s, path, len);
	c->s[len] = '\0';
	return idmap__set_ptr(&s->paths, h, c) ? NULL : c->s;
}

static int seg__add_maps(struct cap_segment *s, const struct stk_chunk *ch, uint64_t *mem)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < ch->u.maps.n; i++) {
		const struct stk_proc_maps *p = &ch->u.maps.procs[i];
		struct cap_maps *m;

		if (array__grow((void **)&s->maps, &s->cap_maps, s->nr_maps, sizeof(*s->maps)))
			return -ENOMEM;
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->tgid = p->tgid;
		m->seq = s->nr_maps;
		memcpy(m->comm, p->comm, sizeof(m->comm));
		m->comm[15] = '\0';
		m->time_ns = p->time_ns;
		m->mappings = calloc(p->nr_mappings ? p->nr_mappings : 1, sizeof(*m->mappings));
		if (!m->mappings) {
			free(m);
			return -ENOMEM;
		}
		for (j = 0; j < p->nr_mappings; j++) {
			const char *path = p->mappings[j].path ? p->mappings[j].path : "";

			m->mappings[j] = p->mappings[j];
			m->mappings[j].path = seg__path(s, path, strlen(path));
			if (!m->mappings[j].path) {
				cap_maps__free(m);
				return -ENOMEM;
			}
			m->nr_mappings++;
		}
		qsort(m->mappings, m->nr_mappings, sizeof(*m->mappings), mapping_cmp);
		s->maps[s->nr_maps++] = m;
		if (seg__index_snapshot(s, m, mem))
			return -ENOMEM;
		/* the snapshot, its pointer in maps and the three indexes */
		*mem += sizeof(*m) + 4 * sizeof(m) + 2 * MALLOC_COST;
		for (j = 0; j < m->nr_mappings; j++)
			*mem += sizeof(m->mappings[j]) + strlen(m->mappings[j].path) + 1 + MALLOC_COST;
	}
	return 0;
}

/* Kernel objects are kept once per (name, base): found by hash, since a
 * crafted file can repeat KBID rows by the hundred thousand. */
static int capture__add_kobjs(struct capture *c, const struct stk_chunk *ch)
{
	size_t i, j;
	uint64_t *first;

	for (i = 0; i < ch->u.kbid.n; i++) {
		const struct stk_kobj *o = &ch->u.kbid.objs[i];
		uint64_t h = hash64(hash_bytes(0, o->name, strlen(o->name)), o->base);
		struct cap_kobj *k;

		first = idmap__find(&c->kobj_keys, h);
		for (j = first ? *first : 0; j; j = c->kobjs[j - 1].next)
			if (strcmp(c->kobjs[j - 1].name, o->name) == 0 && c->kobjs[j - 1].base == o->base)
				break;
		if (j)
			continue;
		if (array__grow((void **)&c->kobjs, &c->cap_kobjs, c->nr_kobjs, sizeof(*c->kobjs)))
			return -ENOMEM;
		k = &c->kobjs[c->nr_kobjs];
		memset(k, 0, sizeof(*k));
		k->next = first ? *first : 0;
		if (idmap__set(&c->kobj_keys, h, c->nr_kobjs + 1))
			return -ENOMEM;
		k->name = strdup(o->name);
		if (!k->name)
			return -ENOMEM;
		c->mem += sizeof(*k) + strlen(o->name) + 1 + MALLOC_COST + ENTRY_COST;
		k->base = o->base;
		k->size = o->size;
		k->build_id_size = o->build_id_size <= STK_MAX_BUILD_ID ? o->build_id_size : 0;
		memcpy(k->build_id, o->build_id, k->build_id_size);
		c->nr_kobjs++;
	}
	return 0;
}

static int capture__add_meta(struct capture *c, const struct stk_chunk *ch)
{
	size_t i;
	struct stk_kv *p = realloc(c->meta, (c->nr_meta + ch->u.meta.n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	c->meta = p;
	for (i = 0; i < ch->u.meta.n; i++) {
		char *k = strdup(ch->u.meta.kv[i].key);
		char *v = strdup(ch->u.meta.kv[i].value);

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		p[c->nr_meta].key = k;
		p[c->nr_meta].value = v;
		c->nr_meta++;
		c->mem += sizeof(*p) + strlen(k) + strlen(v) + 2 + 2 * MALLOC_COST;
	}
	return 0;
}

/* ESYM kinds 2 and 3: symbols added to the table of their build-id or
 * tgid, found by hash (a crafted file can hold ESYM chunks by the
 * hundred thousand). */
static int capture__add_symtab(struct capture *c, const struct stk_chunk *ch)
{
	uint32_t kind = ch->u.esym.kind, n = ch->u.esym.build_id_size;
	uint64_t h = kind == STK_ESYM_SYMTAB ? hash_bytes(kind, ch->u.esym.build_id, n)
					     : hash64(kind, ch->u.esym.tgid);
	uint64_t *first = idmap__find(&c->symtab_keys, h);
	struct cap_symtab *p, *t = NULL;
	size_t i;

	for (i = first ? *first : 0; i && !t; i = p->next) {
		p = &c->symtabs[i - 1];
		if (p->kind == kind && p->build_id_size == n &&
		    (kind == STK_ESYM_SYMTAB ? memcmp(p->build_id, ch->u.esym.build_id, n) == 0
					     : p->tgid == ch->u.esym.tgid))
			t = p;
	}
	if (!t) {
		if (array__grow((void **)&c->symtabs, &c->cap_symtabs, c->nr_symtabs, sizeof(*c->symtabs)))
			return -ENOMEM;
		t = &c->symtabs[c->nr_symtabs];
		memset(t, 0, sizeof(*t));
		t->t = esymtab__new();
		if (!t->t)
			return -ENOMEM;
		t->next = first ? *first : 0;
		c->nr_symtabs++;
		if (idmap__set(&c->symtab_keys, h, c->nr_symtabs))
			return -ENOMEM;
		t->kind = kind;
		t->build_id_size = n;
		memcpy(t->build_id, ch->u.esym.build_id, n);
		t->tgid = ch->u.esym.tgid;
		c->mem += sizeof(*t) + 64 + ENTRY_COST;
	}
	for (i = 0; i < ch->u.esym.nr_syms; i++)
		c->mem += 32 + strlen(ch->u.esym.syms[i].name) + 1;
	return esymtab__add(t->t, ch->u.esym.syms, ch->u.esym.nr_syms, kind == STK_ESYM_SYMTAB);
}

static uint64_t pycode_hash(uint32_t tgid, uint64_t addr, uint32_t fp)
{
	return hash64(hash64(hash64(4, tgid), addr), fp);
}

/* Process @tgid's own record of (@addr, @fp), or NULL. */
static const struct cap_pycode *pycode_own(const struct capture *c, uint32_t tgid, uint64_t addr,
					   uint32_t fp)
{
	const struct cap_pycode *k;

	for (k = idmap__find_ptr(&c->pycode_keys, pycode_hash(tgid, addr, fp)); k; k = k->next)
		if (k->tgid == tgid && k->addr == addr && k->fingerprint == fp)
			return k;
	return NULL;
}

const struct cap_pycode *capture__pycode(const struct capture *c, uint32_t tgid, uint64_t addr,
					 uint32_t fp)
{
	const struct cap_pycode *k = pycode_own(c, tgid, addr, fp);

	if (k)
		return k;
	/* A forked child runs its parent's code objects at the parent's
	 * addresses, and the recorder read each once, from whichever
	 * process sent its stack first: the same address and fingerprint
	 * in another process of the capture name it (the fingerprint
	 * holds the name's and file's addresses and the first line, so an
	 * unrelated code object matches both only by a 2^-24 chance). */
	for (k = idmap__find_ptr(&c->pycode_any, pycode_hash(0, addr, fp)); k; k = k->next_any)
		if (k->addr == addr && k->fingerprint == fp)
			return k;
	return NULL;
}

/* ESYM kind 4: the code objects of one process, added to the union of its
 * chunks by (tgid, addr, fingerprint), found by hash (a capture of a big
 * program holds tens of thousands). */
static int capture__add_pycode(struct capture *c, const struct stk_chunk *ch)
{
	uint32_t tgid = ch->u.esym.tgid;
	size_t i;

	for (i = 0; i < ch->u.esym.nr_codes; i++) {
		const struct stk_esym_pycode *in = &ch->u.esym.codes[i];
		uint64_t h = pycode_hash(tgid, in->addr, in->fingerprint);
		size_t ql = strlen(in->qualname), fl = strlen(in->filename);
		struct cap_pycode *k;
		uint8_t *lt = NULL;

		if (pycode_own(c, tgid, in->addr, in->fingerprint))
			continue;
		k = arena__alloc(&c->py_mem, sizeof(*k));
		if (!k)
			return -ENOMEM;
		k->qualname = arena__strndup(&c->py_mem, in->qualname, ql);
		k->filename = arena__strndup(&c->py_mem, in->filename, fl);
		if (in->linetable_size) {
			lt = arena__alloc(&c->py_mem, in->linetable_size);
			if (lt)
				memcpy(lt, in->linetable, in->linetable_size);
		}
		if (!k->qualname || !k->filename || (in->linetable_size && !lt))
			return -ENOMEM;
		k->addr = in->addr;
		k->tgid = tgid;
		k->fingerprint = in->fingerprint;
		k->firstlineno = in->firstlineno;
		k->py_version = ch->u.esym.py_version;
		k->linetable = lt;
		k->linetable_size = in->linetable_size;
		k->next = idmap__find_ptr(&c->pycode_keys, h);
		if (idmap__set_ptr(&c->pycode_keys, h, k))
			return -ENOMEM;
		h = pycode_hash(0, in->addr, in->fingerprint);
		k->next_any = idmap__find_ptr(&c->pycode_any, h);
		if (idmap__set_ptr(&c->pycode_any, h, k))
			return -ENOMEM;
		c->nr_pycodes++;
		c->mem += sizeof(*k) + ql + fl + 2 + in->linetable_size + ENTRY_COST;
	}
	return 0;
}

/* An ESYM chunk (SPEC.md §ESYM): kind 1 images are kept, one per build-id;
 * kinds 2 and 3 merged into tables, kind 4 into the Python code objects;
 * other kinds are for later versions and ignored. */
static int capture__add_esym(struct capture *c, const struct stk_chunk *ch)
{
	const uint8_t *blob = ch->u.esym.blob;
	uint32_t n = ch->u.esym.build_id_size;
	uint64_t h, *first;
	struct cap_esym *e;
	size_t i;

	if (ch->u.esym.kind == STK_ESYM_SYMTAB || ch->u.esym.kind == STK_ESYM_PERF_MAP)
		return capture__add_symtab(c, ch);
	if (ch->u.esym.kind == STK_ESYM_PYCODE)
		return capture__add_pycode(c, ch);

	if (ch->u.esym.blob_size < 2 || blob[0] != STK_ESYM_ELF_IMAGE || !n || n > STK_MAX_BUILD_ID)
		return 0;
	h = hash_bytes(0, ch->u.esym.build_id, n);
	first = idmap__find(&c->esym_keys, h);
	for (i = first ? *first : 0; i; i = c->esyms[i - 1].next)
		if (c->esyms[i - 1].build_id_size == n &&
		    memcmp(c->esyms[i - 1].build_id, ch->u.esym.build_id, n) == 0)
			return 0;
	if (array__grow((void **)&c->esyms, &c->cap_esyms, c->nr_esyms, sizeof(*c->esyms)))
		return -ENOMEM;
	e = &c->esyms[c->nr_esyms];
	memset(e, 0, sizeof(*e));
	e->elf_size = ch->u.esym.blob_size - 1;
	e->elf = malloc(e->elf_size);
	if (!e->elf)
		return -ENOMEM;
	memcpy(e->elf, blob + 1, e->elf_size);
	c->mem += sizeof(*e) + e->elf_size + MALLOC_COST + ENTRY_COST;
	e->build_id_size = n;
	memcpy(e->build_id, ch->u.esym.build_id, n);
	e->next = first ? *first : 0;
	c->nr_esyms++;
	if (idmap__set(&c->esym_keys, h, c->nr_esyms))
		return -ENOMEM;
	return 0;
}

/* Whether the rows of @ch are in @slice (slice.h). */
static int seg__in_slice(struct cap_segment *s, const struct time_slice *slice,
			 const struct stk_chunk *ch)
{
	if (!s->t_start)
		s->t_start = s->info.mono_start_ns ? s->info.mono_start_ns : ch->t0_ns;
	return time_slice__keeps(slice, s->t_start, ch->t0_ns, ch->t1_ns);
}

static int seg__add_pid_ns(struct cap_segment *s, const struct stk_chunk *ch)
{
	size_t i;

	for (i = 0; i < ch->u.pidn.n; i++) {
		if (array__grow((void **)&s->pid_ns, &s->cap_pid_ns, s->nr_pid_ns, sizeof(*s->pid_ns)))
			return -ENOMEM;
		s->pid_ns[s->nr_pid_ns++] = ch->u.pidn.pids[i];
	}
	return 0;
}

static int capture__add_chunk(struct capture *c, struct stk_reader *r, const struct stk_chunk *ch,
			      const struct time_slice *slice)
{
	struct cap_segment *s = capture__segment(c, ch->segment, r);
	size_t i;
	int err = 0;

	if (!s)
		return -ENOMEM;
	if ((ch->type == STK_CHUNK_CNTS || ch->type == STK_CHUNK_OFFC ||
	     ch->type == STK_CHUNK_TRCE) && !seg__in_slice(s, slice, ch))
		return 0;
	switch (ch->type) {
	case STK_CHUNK_STCK:
		err = seg__add_stacks(c, s, ch->u.stck.stacks, ch->u.stck.n, &c->mem);
		break;
	case STK_CHUNK_CNTS:
		err = seg__add_counts(c, s, ch);
		break;
	case STK_CHUNK_OFFC:
		err = seg__add_offc(c, s, ch);
		break;
	case STK_CHUNK_TRCE:
		err = seg__add_trace(c, s, ch);
		break;
	case STK_CHUNK_MAPS:
		err = seg__add_maps(s, ch, &c->mem);
		break;
	case STK_CHUNK_KSYM:
		for (i = 0; !err && i < ch->u.ksym.n; i++) {
			const struct stk_ksym *k = &ch->u.ksym.syms[i];

			err = ksyms__add(c->ksyms, k->addr, k->size, k->type, k->name, k->module);
			c->mem += 48 + strlen(k->name) + 1;
		}
		break;
	case STK_CHUNK_KBID:
		err = capture__add_kobjs(c, ch);
		break;
	case STK_CHUNK_META:
		err = capture__add_meta(c, ch);
		break;
	case STK_CHUNK_STAT:
		/* STAT values are totals: the last chunk wins (SPEC.md §STAT). */
		err = stats__copy(&c->stats, &c->nr_stats, ch->u.stat.stats, ch->u.stat.n);
		break;
	case STK_CHUNK_ESYM:
		err = capture__add_esym(c, ch);
		break;
	case STK_CHUNK_PIDN:
		err = seg__add_pid_ns(s, ch);
		break;
	default:
		break;	/* INDX and unknown ancillary chunks: not needed here */
	}
	return err;
}

static int maps_by_time(const void *a, const void *b)
{
	const struct cap_maps *x = *(const struct cap_maps *const *)a;
	const struct cap_maps *y = *(const struct cap_maps *const *)b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int maps_by_comm(const void *a, const void *b)
{
	const struct cap_maps *x = *(const struct cap_maps *const *)a;
	const struct cap_maps *y = *(const struct cap_maps *const *)b;
	int d;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	d = strncmp(x->comm, y->comm, sizeof(x->comm));
	if (d)
		return d;
	return maps_by_time(a, b);
}

/* The snapshot indexes of @s (a real 60 s offwake capture has 32k
 * snapshots and 77k rows: scanning them all per row took 11 s). */
static int seg__index_maps(struct cap_segment *s)
{
	size_t n = s->nr_maps ? s->nr_maps : 1;

	free(s->by_time);
	free(s->by_comm);
	s->by_time = malloc(n * sizeof(*s->by_time));
	s->by_comm = malloc(n * sizeof(*s->by_comm));
	if (!s->by_time || !s->by_comm)
		return -ENOMEM;
	if (!s->nr_maps) /* s->maps may be NULL: no memcpy/qsort from it */
		return 0;
	memcpy(s->by_time, s->maps, s->nr_maps * sizeof(*s->maps));
	memcpy(s->by_comm, s->maps, s->nr_maps * sizeof(*s->maps));
	qsort(s->by_time, s->nr_maps, sizeof(*s->by_time), maps_by_time);
	qsort(s->by_comm, s->nr_maps, sizeof(*s->by_comm), maps_by_comm);
	return 0;
}

static struct capture *capture__load(struct stk_reader *r, const struct time_slice *slice)
{
	struct stk_chunk ch;
	struct capture *c = calloc(1, sizeof(*c));
	int err = -ENOMEM, n;
	uint64_t size;

	if (!c)
		goto fail;
	c->sliced = !time_slice__all(slice);
	c->ksyms = ksyms__new();
	if (!c->ksyms || !capture__segment(c, 0, r))
		goto fail;
	for (;;) {
		n = stk_reader__next(r, &ch);
		if (n == 0)
			break;
		if (n == -ENOMEM)
			goto fail;
		if (n < 0) {
			/* Keep what was recovered; the tool says what happened. */
			c->nr_errors++;
			if (n != -ENODATA)
				c->damaged = 1;
			if (!c->first_error) {
				c->first_error = strdup(stk_reader__errmsg(r));
				if (!c->first_error)
					goto fail;
			}
			continue;
		}
		err = capture__add_chunk(c, r, &ch, slice);
		if (err)
			goto fail;
		size = stk_reader__size(r);
		if (c->mem > CAPTURE_MEM_BASE + CAPTURE_MEM_PER_BYTE * size) {
			snprintf(cap_errmsg, sizeof(cap_errmsg),
				 "the capture needs more than %llu MiB of memory at byte %llu (chunk %u, %s), over the limit for a %llu-byte input (256 MiB + 128 x its size)",
				 (unsigned long long)(c->mem >> 20),
				 (unsigned long long)ch.offset, ch.seq, ch.tag,
				 (unsigned long long)size);
			err = -EFBIG;
			goto fail;
		}
	}
	stk_reader__summary(r, &c->summary);
	/* Segments seen by the reader but holding no chunk still count. */
	if (!capture__segment(c, stk_reader__segment_count(r) ? stk_reader__segment_count(r) - 1 : 0, r))
		goto fail;
	for (size_t i = 0; i < c->nr_segs; i++) {
		if (seg__index_maps(&c->segs[i]))
			goto fail;
		seg__free_maps_read(&c->segs[i]);
	}
	stk_reader__close(r);
	return c;
fail:
	stk_reader__close(r);
	capture__free(c);
	errno = -err;
	return NULL;
}

struct capture *capture__read(const char *path)
{
	struct stk_reader *r = stk_reader__open(path);

	if (!r)
		return NULL;
	return capture__load(r, NULL);
}

struct capture *capture__read_slice(const char *path, const struct time_slice *slice)
{
	struct stk_reader *r = stk_reader__open(path);

	if (!r)
		return NULL;
	return capture__load(r, slice);
}

static void cap_segment__free(struct cap_segment *s)
{
	size_t i;

	idmap__release(&s->stacks);
	free(s->counts);
	idmap__release(&s->count_keys);
	for (i = 0; i < s->nr_offc; i++)
		free(s->offc[i]);
	free(s->offc);
	idmap__release(&s->offc_keys);
	for (i = 0; i < s->nr_maps; i++)
		cap_maps__free(s->maps[i]);
	free(s->maps);
	free(s->by_time);
	free(s->by_comm);
	seg__free_maps_read(s);
	free(s->pid_ns);
	idmap__release(&s->paths);
	arena__free(&s->mem);
}

void capture__free(struct capture *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr_segs; i++)
		cap_segment__free(&c->segs[i]);
	free(c->segs);
	ksyms__free(c->ksyms);
	for (i = 0; i < c->nr_kobjs; i++)
		free(c->kobjs[i].name);
	free(c->kobjs);
	idmap__release(&c->kobj_keys);
	for (i = 0; i < c->nr_esyms; i++)
		free(c->esyms[i].elf);
	free(c->esyms);
	idmap__release(&c->esym_keys);
	for (i = 0; i < c->nr_symtabs; i++)
		esymtab__free(c->symtabs[i].t);
	free(c->symtabs);
	idmap__release(&c->symtab_keys);
	idmap__release(&c->pycode_keys);
	idmap__release(&c->pycode_any);
	arena__free(&c->py_mem);
	for (i = 0; i < c->nr_meta; i++) {
		free((char *)c->meta[i].key);
		free((char *)c->meta[i].value);
	}
	free(c->meta);
	stats__free(&c->stats, &c->nr_stats);
	free(c->first_error);
	free(c);
}

const char *capture__meta(const struct capture *c, const char *key)
{
	size_t i;

	for (i = c->nr_meta; i-- > 0;)
		if (strcmp(c->meta[i].key, key) == 0)
			return c->meta[i].value;
	return NULL;
}

size_t capture__nr_events(const struct capture *c)
{
	const char *mode = capture__meta(c, "mode"), *ev = capture__meta(c, "events");
	size_t n = 1;

	if (!mode || strcmp(mode, "trace") != 0 || !ev || !*ev)
		return 0;
	for (; *ev; ev++)
		n += *ev == ',';
	return n;
}

int capture__event(const struct capture *c, size_t i, char *buf, size_t size)
{
	const char *ev = capture__meta(c, "events");
	size_t len;

	if (i >= capture__nr_events(c) || !size)
		return -ENOENT;
	for (; i; i--)
		ev = strchr(ev, ',') + 1;
	len = strcspn(ev, ",");
	if (len >= size)
		len = size - 1;
	memcpy(buf, ev, len);
	buf[len] = '\0';
	return 0;
}

uint64_t capture__stat(const struct capture *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_stats; i++)
		if (strcmp(c->stats[i].name, name) == 0)
			return c->stats[i].value;
	return 0;
}

const struct cap_stack *cap_segment__stack(const struct cap_segment *seg, uint64_t id)
{
	return idmap__find_ptr(&seg->stacks, id);
}

void cap_segment__prefetch_stack(const struct cap_segment *seg, uint64_t id)
{
	idmap__prefetch(&seg->stacks, id);
}

/*
 * In @v (@n snapshots sorted by @cmp), the range [*lo, *hi) equal to @key
 * by @cmp's leading fields, found as where @key with time 0 / UINT64_MAX
 * and seq 0 / SIZE_MAX would go.
 */
static void maps_range(struct cap_maps *const *v, size_t n, const struct cap_maps *key,
		       int (*cmp)(const void *, const void *), size_t *lo, size_t *hi)
{
	struct cap_maps k = *key;
	const struct cap_maps *kp = &k;
	size_t a = 0, b = n, m;

	k.time_ns = 0;
	k.seq = 0;
	while (a < b) {
		m = a + (b - a) / 2;
		if (cmp(&v[m], &kp) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	k.time_ns = UINT64_MAX;
	k.seq = SIZE_MAX;
	b = n;
	while (a < b) {
		m = a + (b - a) / 2;
		if (cmp(&v[m], &kp) <= 0)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

/* The last of v[lo, hi) (sorted by time) taken at or before @time_ns, or NULL. */
static const struct cap_maps *maps_at(struct cap_maps *const *v, size_t lo, size_t hi,
				      uint64_t time_ns)
{
	size_t a = lo, b = hi, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (v[m]->time_ns <= time_ns)
			a = m + 1;
		else
			b = m;
	}
	return a > lo ? v[a - 1] : NULL;
}

const struct cap_maps *cap_segment__maps(const struct cap_segment *seg, uint32_t tgid,
					 const char *comm, uint64_t time_ns)
{
	const struct cap_maps *best = NULL, *best_comm = NULL, *oldest = NULL;
	struct cap_maps key = { .tgid = tgid };
	size_t i, lo, hi;

	if (seg->by_time && seg->by_comm) {
		maps_range(seg->by_time, seg->nr_maps, &key, maps_by_time, &lo, &hi);
		if (lo == hi)
			return NULL;
		if (comm) {
			strncpy(key.comm, comm, sizeof(key.comm) - 1);
			maps_range(seg->by_comm, seg->nr_maps, &key, maps_by_comm, &i, &hi);
			best_comm = maps_at(seg->by_comm, i, hi, time_ns);
			if (best_comm)
				return best_comm;
			maps_range(seg->by_time, seg->nr_maps, &key, maps_by_time, &lo, &hi);
		}
		best = maps_at(seg->by_time, lo, hi, time_ns);
		return best ? best : seg->by_time[lo];
	}
	/* Not indexed (a segment being read): every snapshot. */
	for (i = 0; i < seg->nr_maps; i++) {
		const struct cap_maps *m = seg->maps[i];

		if (m->tgid != tgid)
			continue;
		if (!oldest || m->time_ns < oldest->time_ns)
			oldest = m;
		if (m->time_ns > time_ns)
			continue;
		if (!best || m->time_ns >= best->time_ns)
			best = m;
		if (comm && strncmp(m->comm, comm, sizeof(m->comm)) == 0 &&
		    (!best_comm || m->time_ns >= best_comm->time_ns))
			best_comm = m;
	}
	if (best_comm)
		return best_comm;
	return best ? best : oldest;
}

uint32_t cap_segment__ns_tgid(const struct cap_segment *seg, uint32_t tgid, uint64_t time_ns,
			      uint64_t *pid_ns)
{
	const struct stk_pid_ns *best = NULL, *oldest = NULL;
	size_t i;

	for (i = 0; i < seg->nr_pid_ns; i++) {
		const struct stk_pid_ns *p = &seg->pid_ns[i];

		if (p->tgid != tgid)
			continue;
		if (!oldest || p->time_ns < oldest->time_ns)
			oldest = p;
		if (p->time_ns <= time_ns && (!best || p->time_ns >= best->time_ns))
			best = p;
	}
	if (!best)
		best = oldest;
	if (pid_ns)
		*pid_ns = best ? best->pid_ns : 0;
	return best ? best->ns_tgid : 0;
}

const struct stk_mapping *cap_maps__find(const struct cap_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr_mappings;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->mappings[lo - 1].end)
		return NULL;
	return &m->mappings[lo - 1];
}
