// SPDX-License-Identifier: BSD-2-Clause
/*
 * `stkreport merge`: captures into one (merge.h).  Two passes over every
 * input: the first takes everything but the rows (stacks to intern, maps,
 * kernel data, META, STAT) and decides whether the inputs can be merged at
 * all, before anything is written; the second copies the rows, chunk by
 * chunk, with their stacks' new ids.  A row may name a stack that a later
 * STCK chunk defines (SPEC.md §4.3), so the rows cannot go in the first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "idmap.h"
#include "merge_int.h"
#include "stats.h"
#include "stk.h"
#include "util.h"

static int merge__fail(struct merge *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int merge__fail(struct merge *m, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->res->msg, sizeof(m->res->msg), fmt, ap);
	va_end(ap);
	return err;
}

static struct msrc *merge__source(struct merge *m, size_t index, const char *path,
				  struct stk_reader *r, uint32_t seg)
{
	const struct stk_segment_info *info;
	struct msrc *p;

	if (index >= m->nr_srcs) {
		p = realloc(m->srcs, (index + 1) * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + m->nr_srcs, 0, (index + 1 - m->nr_srcs) * sizeof(*p));
		m->srcs = p;
		m->nr_srcs = index + 1;
	}
	p = &m->srcs[index];
	if (!p->used) {
		p->used = 1;
		p->path = path;
		p->seg = seg;
		info = stk_reader__segment(r, seg);
		if (info)
			p->info = *info;
		p->start = p->info.mono_start_ns;
	}
	return p;
}

/* ---- pass 1 ----------------------------------------------------------- */

static int msrc__meta(struct msrc *s, const struct stk_chunk *ch)
{
	size_t i, j;

	for (i = 0; i < ch->u.meta.n; i++) {
		const struct stk_kv *kv = &ch->u.meta.kv[i];
		char *v = strdup(kv->value);

		if (!v)
			return -ENOMEM;
		for (j = 0; j < s->nr_meta; j++)
			if (strcmp(s->meta[j].key, kv->key) == 0)
				break;
		if (j < s->nr_meta) {	/* a later value replaces an earlier one */
			free((char *)s->meta[j].value);
			s->meta[j].value = v;
			continue;
		}
		if (array__grow((void **)&s->meta, &s->cap_meta, s->nr_meta, sizeof(*s->meta)) ||
		    !(s->meta[s->nr_meta].key = strdup(kv->key))) {
			free(v);
			return -ENOMEM;
		}
		s->meta[s->nr_meta++].value = v;
	}
	return 0;
}

const char *msrc__meta_get(const struct msrc *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->nr_meta; i++)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].value;
	return NULL;
}

/* Stack @st of @s: its output id, interned by frames. */
static int merge__stack(struct merge *m, struct msrc *s, const struct stk_stack *st)
{
	uint64_t h = hash_bytes(0x57c4, st->frames, st->nr_frames * sizeof(uint64_t));
	struct mstack *first = idmap__find_ptr(&m->stack_index, h), *x;

	m->res->stacks_in++;
	if (idmap__find(&s->ids, st->id))
		return 0;	/* ids are unique in a segment; a repeat is the same stack */
	for (x = first; x; x = x->next)
		if (x->nr_frames == st->nr_frames &&
		    memcmp(x->frames, st->frames, st->nr_frames * sizeof(uint64_t)) == 0)
			break;
	if (!x) {
		if (array__grow((void **)&m->stacks, &m->cap_stacks, m->nr_stacks, sizeof(*m->stacks)))
			return -ENOMEM;
		x = arena__alloc(&m->mem, sizeof(*x) + st->nr_frames * sizeof(uint64_t));
		if (!x)
			return -ENOMEM;
		x->frames = (uint64_t *)(x + 1);
		x->nr_frames = st->nr_frames;
		memcpy(x->frames, st->frames, st->nr_frames * sizeof(uint64_t));
		x->id = m->nr_stacks + 1;
		x->next = first;
		if (idmap__set_ptr(&m->stack_index, h, x))
			return -ENOMEM;
		m->stacks[m->nr_stacks++] = x;
	}
	return idmap__set(&s->ids, st->id, x->id);
}

static int merge__maps(struct merge *m, size_t src, const struct stk_chunk *ch)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < ch->u.maps.n; i++) {
		const struct stk_proc_maps *p = &ch->u.maps.procs[i];
		struct stk_mapping *mm;
		struct msnap *sn;

		if (array__grow((void **)&m->snaps, &m->cap_snaps, m->nr_snaps, sizeof(*m->snaps)))
			return -ENOMEM;
		sn = arena__alloc(&m->mem, sizeof(*sn));
		mm = arena__alloc(&m->mem, (p->nr_mappings + 1) * sizeof(*mm));
		if (!sn || !mm)
			return -ENOMEM;
		sn->src = src;
		sn->p = *p;
		sn->p.comm[15] = '\0';
		sn->p.mappings = mm;
		for (j = 0; j < p->nr_mappings; j++) {
			const char *path = p->mappings[j].path ? p->mappings[j].path : "";

			mm[j] = p->mappings[j];
			mm[j].path = arena__strndup(&m->mem, path, strlen(path));
			if (!mm[j].path)
				return -ENOMEM;
		}
		m->snaps[m->nr_snaps++] = sn;
	}
	return 0;
}

/*
 * Kernel symbols are keyed by address and module: the kernel's text is the
 * same in every source (kernel_check()), but code loaded while recording
 * (BPF programs, whose frames lead every off-CPU stack) may have sat at
 * one address in one capture and another program there in the next.  One
 * symbol per address keeps lookups unambiguous: the larger one, so that
 * every address either source named stays covered.
 */
static int merge__ksyms(struct merge *m, const struct stk_chunk *ch)
{
	size_t i;

	for (i = 0; i < ch->u.ksym.n; i++) {
		const struct stk_ksym *k = &ch->u.ksym.syms[i];
		uint64_t h = hash_bytes(hash64(0x45e, k->addr), k->module, strlen(k->module));
		struct mksym *first = idmap__find_ptr(&m->ksym_index, h), *x;

		for (x = first; x; x = x->next)
			if (x->k.addr == k->addr && strcmp(x->k.module, k->module) == 0)
				break;
		if (x && (k->size <= x->k.size || strcmp(x->k.name, k->name) == 0)) {
			if (k->size > x->k.size)
				x->k.size = k->size;
			continue;
		}
		if (x) {	/* another, larger symbol at this address */
			x->k.size = k->size;
			x->k.type = k->type;
			x->k.name = arena__strndup(&m->mem, k->name, strlen(k->name));
			if (!x->k.name)
				return -ENOMEM;
			continue;
		}
		if (array__grow((void **)&m->ksyms, &m->cap_ksyms, m->nr_ksyms, sizeof(*m->ksyms)))
			return -ENOMEM;
		x = arena__alloc(&m->mem, sizeof(*x));
		if (!x)
			return -ENOMEM;
		x->k = *k;
		x->k.name = arena__strndup(&m->mem, k->name, strlen(k->name));
		x->k.module = arena__strndup(&m->mem, k->module, strlen(k->module));
		x->next = first;
		if (!x->k.name || !x->k.module || idmap__set_ptr(&m->ksym_index, h, x))
			return -ENOMEM;
		m->ksyms[m->nr_ksyms++] = x;
	}
	return 0;
}

static int kobj_eq(const struct stk_kobj *a, const struct stk_kobj *b)
{
	return strcmp(a->name, b->name) == 0 && a->base == b->base && a->size == b->size &&
	       a->build_id_size == b->build_id_size &&
	       memcmp(a->build_id, b->build_id, a->build_id_size) == 0;
}

static int merge__kobjs(struct merge *m, struct msrc *s, const struct stk_chunk *ch)
{
	struct stk_kobj *p;
	size_t i, j;

	for (i = 0; i < ch->u.kbid.n; i++) {
		const struct stk_kobj *o = &ch->u.kbid.objs[i];

		if (!s->has_kernel && strcmp(o->name, "[kernel.kallsyms]") == 0) {
			s->kernel_obj = *o;
			s->kernel_obj.name = "[kernel.kallsyms]";
			s->has_kernel = 1;
		}
		for (j = 0; j < m->nr_kobjs; j++)
			if (kobj_eq(&m->kobjs[j], o))
				break;
		if (j < m->nr_kobjs)
			continue;
		p = realloc(m->kobjs, (m->nr_kobjs + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->kobjs = p;
		p[m->nr_kobjs] = *o;
		p[m->nr_kobjs].name = arena__strndup(&m->mem, o->name, strlen(o->name));
		if (!p[m->nr_kobjs].name)
			return -ENOMEM;
		m->nr_kobjs++;
	}
	return 0;
}

/*
 * ESYM chunks, copied as they are.  An embedded image (kind 1) describes
 * one binary, named by its build-id: one per build-id is enough (SPEC.md
 * §ESYM).  Symbol tables (kind 2) and perf maps (kind 3) add up chunk by
 * chunk, so each distinct chunk stays; a chunk equal to one kept already
 * (merging a capture with itself, or two of one machine) goes.
 */
static int merge__esym(struct merge *m, const struct stk_chunk *ch)
{
	const uint8_t *blob = ch->u.esym.blob;
	int image = ch->u.esym.blob_size && blob[0] == STK_ESYM_ELF_IMAGE;
	struct mesym *p, *e;
	size_t i;

	if (ch->u.esym.build_id_size > STK_MAX_BUILD_ID)
		return 0;
	for (i = 0; i < m->nr_esyms; i++) {
		e = &m->esyms[i];
		if (e->build_id_size != ch->u.esym.build_id_size ||
		    memcmp(e->build_id, ch->u.esym.build_id, e->build_id_size) != 0)
			continue;
		if (image && e->blob_size && ((const uint8_t *)e->blob)[0] == STK_ESYM_ELF_IMAGE)
			return 0;
		if (e->blob_size == ch->u.esym.blob_size &&
		    memcmp(e->blob, blob, e->blob_size) == 0)
			return 0;
	}
	p = realloc(m->esyms, (m->nr_esyms + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->esyms = p;
	e = &p[m->nr_esyms];
	memset(e, 0, sizeof(*e));
	e->blob_size = ch->u.esym.blob_size;
	e->blob = malloc(e->blob_size ? e->blob_size : 1);
	if (!e->blob)
		return -ENOMEM;
	memcpy(e->blob, ch->u.esym.blob, e->blob_size);
	e->build_id_size = ch->u.esym.build_id_size;
	memcpy(e->build_id, ch->u.esym.build_id, e->build_id_size);
	m->nr_esyms++;
	return 0;
}

static int merge__chunk1(struct merge *m, struct msrc *s, size_t src, const struct stk_chunk *ch)
{
	size_t i;
	int err = 0;

	switch (ch->type) {
	case STK_CHUNK_META:
		return msrc__meta(s, ch);
	case STK_CHUNK_STAT:
		/* The last STAT chunk of a segment wins (SPEC.md §STAT). */
		return stats__copy(&s->stats, &s->nr_stats, ch->u.stat.stats, ch->u.stat.n);
	case STK_CHUNK_STCK:
		for (i = 0; !err && i < ch->u.stck.n; i++)
			err = merge__stack(m, s, &ch->u.stck.stacks[i]);
		return err;
	case STK_CHUNK_MAPS:
		return merge__maps(m, src, ch);
	case STK_CHUNK_KSYM:
		return merge__ksyms(m, ch);
	case STK_CHUNK_KBID:
		return merge__kobjs(m, s, ch);
	case STK_CHUNK_ESYM:
		return merge__esym(m, ch);
	case STK_CHUNK_PIDN:
		for (i = 0; i < ch->u.pidn.n; i++) {
			if (array__grow((void **)&m->pidns, &m->cap_pidns, m->nr_pidns, sizeof(*m->pidns)))
				return -ENOMEM;
			m->pidns[m->nr_pidns++] = (struct mpidn){ src, ch->u.pidn.pids[i] };
		}
		return 0;
	case STK_CHUNK_CNTS:
		s->cnts |= ch->u.cnts.n > 0;
		break;
	case STK_CHUNK_TRCE:
		s->trce |= ch->u.trce.n > 0;
		break;
	case STK_CHUNK_OFFC:
		s->offc |= ch->u.offc.n > 0;
		for (i = 0; i < ch->u.offc.n; i++) {
			const struct stk_task_stacks *w = &ch->u.offc.rows[i].waker;

			s->waker |= w->tgid || w->user_stack >= 0 || w->kernel_stack >= 0;
		}
		break;
	default:
		return 0;	/* INDX is the writer's; unknown ancillary chunks are dropped */
	}
	if (!s->start && ch->t0_ns)
		s->start = ch->t0_ns;	/* header lost: start at the first interval */
	return 0;
}

/* Reads input @file (its sources from @base on); pass 2 when @w is set.
 * Returns 0 or -errno with the message set. */
static int merge__file(struct merge *m, const char *path, size_t base, size_t *nsegs,
		       struct stk_writer *w);

static enum mkind msrc__kind(const struct msrc *s)
{
	const char *mode = msrc__meta_get(s, "mode");

	if (mode && strcmp(mode, "profile") == 0)
		return KIND_PROFILE;
	if (mode && strcmp(mode, "offcpu") == 0)
		return KIND_OFFCPU;
	if (mode && strcmp(mode, "offwake") == 0)
		return KIND_OFFWAKE;
	if ((mode && strcmp(mode, "trace") == 0) || s->trce)
		return KIND_TRACE;
	if (s->offc)
		return s->waker ? KIND_OFFWAKE : KIND_OFFCPU;
	return s->cnts ? KIND_PROFILE : KIND_UNKNOWN;
}

/* ---- the checks ------------------------------------------------------- */

static int kinds_check(struct merge *m, enum mkind *kind)
{
	const struct msrc *first = NULL;
	size_t i;

	*kind = KIND_UNKNOWN;
	for (i = 0; i < m->nr_srcs; i++) {
		const struct msrc *s = &m->srcs[i];
		enum mkind k = s->used ? msrc__kind(s) : KIND_UNKNOWN;
		const char *fa, *fb;

		if (k == KIND_UNKNOWN)
			continue;
		if (!first) {
			first = s;
			*kind = k;
			continue;
		}
		if (k != *kind)
			return merge__fail(m, -EINVAL,
					   "%s is a%s %s capture, %s a%s %s one: refusing to mix kinds (their rows count different things)",
					   first->path, *kind == KIND_OFFCPU || *kind == KIND_OFFWAKE ? "n" : "",
					   mkind__name(*kind), s->path,
					   k == KIND_OFFCPU || k == KIND_OFFWAKE ? "n" : "", mkind__name(k));
		/* A row's event is an index into its capture's list. */
		fa = msrc__meta_get(first, "events");
		fb = msrc__meta_get(s, "events");
		if (k == KIND_TRACE && (!fa || !fb || strcmp(fa, fb) != 0))
			return merge__fail(m, -EINVAL,
					   "%s and %s traced different events (%s; %s): refusing to merge; merge captures of the same events",
					   first->path, s->path, fa ? fa : "none listed", fb ? fb : "none listed");
		fa = msrc__meta_get(first, "frequency");
		fb = msrc__meta_get(s, "frequency");
		if (k == KIND_PROFILE && fa && fb && strcmp(fa, fb) != 0)
			return merge__fail(m, -EINVAL,
					   "%s samples at %s Hz, %s at %s Hz: refusing to merge (a sample would weigh 1/%s s in one and 1/%s s in the other); record both with the same -F",
					   first->path, fa, s->path, fb, fa, fb);
	}
	return 0;
}

/* Kernel addresses of two captures can share one symbol table only when
 * the kernel image is the same and at the same place (same boot, or no
 * KASLR). */
static int kernel_check(struct merge *m)
{
	const struct msrc *first = NULL;
	size_t i;

	for (i = 0; i < m->nr_srcs; i++) {
		const struct msrc *s = &m->srcs[i];
		const struct stk_kobj *a, *b;

		if (!s->used || !s->has_kernel)
			continue;
		if (!first) {
			first = s;
			continue;
		}
		a = &first->kernel_obj;
		b = &s->kernel_obj;
		if (a->base != b->base || (a->build_id_size && b->build_id_size &&
		    (a->build_id_size != b->build_id_size ||
		     memcmp(a->build_id, b->build_id, a->build_id_size) != 0)))
			return merge__fail(m, -EINVAL,
					   "%s and %s were recorded with %s (kernel image at 0x%llx and 0x%llx): their kernel addresses cannot share one capture; merge captures of one boot",
					   first->path, s->path,
					   a->base != b->base ? "the kernel at different addresses (another boot)"
							      : "different kernels",
					   (unsigned long long)a->base, (unsigned long long)b->base);
	}
	return 0;
}

static int snap_cmp(const void *a, const void *b)
{
	const struct msnap *x = *(const struct msnap *const *)a, *y = *(const struct msnap *const *)b;

	if (x->p.tgid != y->p.tgid)
		return x->p.tgid < y->p.tgid ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->p.time_ns < y->p.time_ns ? -1 : x->p.time_ns > y->p.time_ns;
}

static int mapping_same(const struct stk_mapping *a, const struct stk_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->dev == b->dev && a->inode == b->inode && a->prot == b->prot &&
	       a->build_id_size == b->build_id_size &&
	       memcmp(a->build_id, b->build_id, a->build_id_size) == 0 &&
	       strcmp(a->path, b->path) == 0;
}

/* Two snapshots of one pid from two sources describe one process unless a
 * mapping of one overlaps a different mapping of the other. */
static int snaps_conflict(const struct stk_proc_maps *a, const struct stk_proc_maps *b)
{
	uint32_t i, j;

	for (i = 0; i < a->nr_mappings; i++) {
		const struct stk_mapping *x = &a->mappings[i];

		for (j = 0; j < b->nr_mappings; j++) {
			const struct stk_mapping *y = &b->mappings[j];

			if (x->start < y->end && y->start < x->end &&
			    (x->start != y->start || x->offset != y->offset ||
			     strcmp(x->path, y->path) != 0 || x->build_id_size != y->build_id_size ||
			     memcmp(x->build_id, y->build_id, x->build_id_size) != 0))
				return 1;
		}
	}
	return 0;
}

uint64_t merge__shift(const struct merge *m, const struct msrc *s, uint64_t t)
{
	uint64_t d;

	if (!t)
		return 0;
	if (t >= s->start)
		return m->start + (t - s->start);
	d = s->start - t;
	return m->start > d ? m->start - d : 1;
}

static int snap_same(const struct merge *m, const struct msnap *a, const struct msnap *b)
{
	uint32_t i;

	if (a->p.tgid != b->p.tgid || strcmp(a->p.comm, b->p.comm) != 0 ||
	    merge__shift(m, &m->srcs[a->src], a->p.time_ns) !=
	    merge__shift(m, &m->srcs[b->src], b->p.time_ns) ||
	    a->p.nr_mappings != b->p.nr_mappings)
		return 0;
	for (i = 0; i < a->p.nr_mappings; i++)
		if (!mapping_same(&a->p.mappings[i], &b->p.mappings[i]))
			return 0;
	return 1;
}

/*
 * Sorts the snapshots by pid, refuses reused pids, marks duplicates.  A
 * snapshot that another source holds already is a duplicate whatever the
 * other snapshots of that source: a process that loads one plugin where
 * another was has snapshots that differ from each other, and merging its
 * capture with itself is no reuse.
 */
static int maps_check(struct merge *m)
{
	size_t i, j, g;

	if (m->nr_snaps)
		qsort(m->snaps, m->nr_snaps, sizeof(*m->snaps), snap_cmp);
	for (g = 0; g < m->nr_snaps; g = i) {
		for (i = g; i < m->nr_snaps && m->snaps[i]->p.tgid == m->snaps[g]->p.tgid; i++)
			;
		for (j = g; j < i; j++) {
			size_t k;

			for (k = g; k < j && !m->snaps[j]->dup; k++) {
				const struct msnap *a = m->snaps[k], *b = m->snaps[j];

				if (a->src != b->src && !a->dup && snap_same(m, a, b))
					m->snaps[j]->dup = 1;
			}
			for (k = g; k < j && !m->snaps[j]->dup; k++) {
				const struct msnap *a = m->snaps[k], *b = m->snaps[j];

				if (a->src == b->src || a->dup)
					continue;
				if (snaps_conflict(&a->p, &b->p))
					return merge__fail(m, -EINVAL,
							   "pid %u is another process in %s and %s (its mappings differ: the pid was reused): refusing to merge, its rows would be resolved in the wrong process's maps",
							   (unsigned)a->p.tgid, m->srcs[a->src].path,
							   m->srcs[b->src].path);
			}
		}
	}
	return 0;
}

static int merge__file(struct merge *m, const char *path, size_t base, size_t *nsegs,
		       struct stk_writer *w)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct msrc *s;
	int n, err = 0;

	r = stk_reader__open(path);
	if (!r)
		return merge__fail(m, errno ? -errno : -EIO, "%s", stk_open_errmsg());
	while ((n = stk_reader__next(r, &ch)) != 0) {
		if (n == -ENOMEM) {
			err = merge__fail(m, -ENOMEM, "%s: out of memory", path);
			goto out;
		}
		if (n == -ENODATA) {
			m->res->unclosed = path;	/* cut short: merge what it holds */
			continue;
		}
		if (n < 0) {
			err = merge__fail(m, -EBADMSG, "%s: damaged: %s; refusing to merge a damaged capture (see stkreport info %s)",
					  path, stk_reader__errmsg(r), path);
			goto out;
		}
		s = merge__source(m, base + ch.segment, path, r, ch.segment);
		if (!s) {
			err = merge__fail(m, -ENOMEM, "%s: out of memory", path);
			goto out;
		}
		if (!w)
			err = merge__chunk1(m, s, base + ch.segment, &ch);
		else if (ch.type == STK_CHUNK_CNTS || ch.type == STK_CHUNK_OFFC ||
			 ch.type == STK_CHUNK_TRCE)
			err = merge__rows(m, s, &ch, w);
		if (err) {
			if (w)
				merge__fail(m, err, "writing the merged capture: %s",
					    stk_writer__errmsg(w));
			else
				merge__fail(m, err, "%s: %s", path, strerror(-err));
			goto out;
		}
	}
	stk_reader__summary(r, &sum);
	if (!sum.closed)
		m->res->unclosed = path;
	*nsegs = stk_reader__segment_count(r);
out:
	stk_reader__close(r);
	return err;
}

/* The output must not be one of the inputs: it would be replaced while
 * being read a second time. */
static int same_file_check(struct merge *m, const char *const *paths, size_t n, const char *out)
{
	struct stat so, si;
	size_t i;

	if (stat(out, &so) < 0 || !S_ISREG(so.st_mode))
		return 0;	/* new, or a device or FIFO written in place */
	for (i = 0; i < n; i++)
		if (stat(paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return merge__fail(m, -EINVAL, "-o %s is the input %s: refusing to overwrite an input",
					   out, paths[i]);
	return 0;
}

static void merge__free(struct merge *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_srcs; i++) {
		struct msrc *s = &m->srcs[i];

		idmap__release(&s->ids);
		for (j = 0; j < s->nr_meta; j++) {
			free((char *)s->meta[j].key);
			free((char *)s->meta[j].value);
		}
		free(s->meta);
		stats__free(&s->stats, &s->nr_stats);
	}
	free(m->srcs);
	free(m->stacks);
	idmap__release(&m->stack_index);
	free(m->snaps);
	free(m->ksyms);
	idmap__release(&m->ksym_index);
	free(m->kobjs);
	for (i = 0; i < m->nr_esyms; i++)
		free(m->esyms[i].blob);
	free(m->esyms);
	free(m->pidns);
	arena__free(&m->mem);
}

int merge__captures(const char *const *paths, size_t n, const char *out_path,
		    struct merge_result *res)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	struct merge m = { .res = res };
	struct stk_writer *w = NULL;
	size_t *bases = NULL, i, nsegs;
	enum mkind kind;
	int err;

	memset(res, 0, sizeof(*res));
	err = same_file_check(&m, paths, n, out_path);
	if (err)
		goto out;
	bases = calloc(n + 1, sizeof(*bases));
	if (!bases) {
		err = merge__fail(&m, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(paths[i], "-") == 0) {
			err = merge__fail(&m, -EINVAL, "merge reads every input twice: '-' (standard input) cannot be one");
			goto out;
		}
		nsegs = 0;
		err = merge__file(&m, paths[i], bases[i], &nsegs, NULL);
		if (err)
			goto out;
		bases[i + 1] = bases[i] + (nsegs ? nsegs : 1);
	}
	err = kinds_check(&m, &kind);
	if (!err)
		err = kernel_check(&m);
	for (i = 0; i < m.nr_srcs && !m.start; i++) {
		if (m.srcs[i].used && m.srcs[i].start) {
			m.start = m.srcs[i].start;
			m.wall_start = m.srcs[i].info.wall_start_ns;
		}
	}
	if (!err)
		err = maps_check(&m);
	if (err)
		goto out;
	wo.mono_start_ns = m.start ? m.start : 1;
	wo.wall_start_ns = m.wall_start ? m.wall_start : 1;
	w = stk_writer__open(out_path, &wo);
	if (!w) {
		err = merge__fail(&m, -errno, "%s: %s", out_path, strerror(errno));
		goto out;
	}
	err = merge__write_meta(&m, w, kind);
	if (!err)
		err = merge__write_stacks(&m, w);
	if (!err)
		err = merge__write_kernel(&m, w);
	if (!err)
		err = merge__write_maps(&m, w);
	if (!err)
		err = merge__write_pidns(&m, w);
	if (err) {
		merge__fail(&m, err, "writing %s: %s", out_path, stk_writer__errmsg(w));
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = merge__file(&m, paths[i], bases[i], &nsegs, w);
		if (err)
			goto out;
	}
	err = merge__write_stats(&m, w);
	if (err) {
		merge__fail(&m, err, "writing %s: %s", out_path, stk_writer__errmsg(w));
		goto out;
	}
	err = stk_writer__close(w);
	w = NULL;
	if (err)
		merge__fail(&m, err, "writing %s: %s", out_path, strerror(-err));
out:
	stk_writer__discard(w);
	free(bases);
	merge__free(&m);
	return err;
}
