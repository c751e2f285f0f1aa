// SPDX-License-Identifier: BSD-2-Clause
/*
 * `stkreport merge`'s writing: the merged capture's META, stacks, kernel
 * data, maps, pidn records and STAT from what pass 1 took, and pass 2's
 * rows with their stacks' new ids (merge.c reads the inputs).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"

/* Chunk sizes of what merge writes in batches. */
#define STACKS_PER_CHUNK 8192
#define KSYMS_PER_CHUNK 65536
#define PROCS_PER_CHUNK 256

/* Room for one batch of @n items: a small merge does not allocate the
 * 2.5 MiB of a full batch of kernel symbols. */
static size_t batch(size_t n, size_t per_chunk)
{
	return n < per_chunk ? (n ? n : 1) : per_chunk;
}

static int meta_add(struct merge *m, struct stk_kv **kv, size_t *n, size_t *cap, const char *key,
		    const char *value)
{
	char *k = arena__strndup(&m->mem, key, strlen(key));
	char *v = arena__strndup(&m->mem, value, strlen(value));

	if (!k || !v || array__grow((void **)kv, cap, *n, sizeof(**kv)))
		return -ENOMEM;
	(*kv)[*n].key = k;
	(*kv)[(*n)++].value = v;
	return 0;
}

int merge__write_meta(struct merge *m, struct stk_writer *w, enum mkind kind)
{
	static const char *const own[] = {
		"mode", "wall_start_ns", "mono_start_ns", "duration_ns", "merged_sources", "merged_by",
	};
	const struct msrc *first = NULL;
	struct stk_kv *kv = NULL;
	size_t nkv = 0, cap = 0, i, j, k, nsrc = 0;
	uint64_t duration = 0;
	int all_duration = 1, err = 0;
	char buf[4200], key[64];

	for (i = 0; i < m->nr_srcs; i++) {
		const struct msrc *s = &m->srcs[i];
		const char *d;

		if (!s->used)
			continue;
		if (!first)
			first = s;
		d = msrc__meta_get(s, "duration_ns");
		if (d)
			duration += strtoull(d, NULL, 10);
		else
			all_duration = 0;
	}
	if (kind != KIND_UNKNOWN)
		err = meta_add(m, &kv, &nkv, &cap, "mode", mkind__name(kind));
	/* A fact of every source alike is a fact of the merge. */
	for (i = 0; !err && first && i < first->nr_meta; i++) {
		const char *key0 = first->meta[i].key, *v0 = first->meta[i].value;
		int same = 1;

		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
			if (strcmp(key0, own[k]) == 0)
				same = 0;
		if (strncmp(key0, "merged_from_", 12) == 0)
			same = 0;
		for (j = 0; same && j < m->nr_srcs; j++) {
			const char *v;

			if (!m->srcs[j].used)
				continue;
			v = msrc__meta_get(&m->srcs[j], key0);
			same = v && strcmp(v, v0) == 0;
		}
		if (same)
			err = meta_add(m, &kv, &nkv, &cap, key0, v0);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)m->wall_start);
	err = err ?: meta_add(m, &kv, &nkv, &cap, "wall_start_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)m->start);
	err = err ?: meta_add(m, &kv, &nkv, &cap, "mono_start_ns", buf);
	if (all_duration && first) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)duration);
		err = err ?: meta_add(m, &kv, &nkv, &cap, "duration_ns", buf);
	}
	err = err ?: meta_add(m, &kv, &nkv, &cap, "merged_by", "stkreport " STK_VERSION_STRING);
	for (i = 0; !err && i < m->nr_srcs; i++) {
		const struct msrc *s = &m->srcs[i];
		char uuid[40];
		size_t b;
		int len = 0;

		if (!s->used)
			continue;
		for (b = 0; b < 16; b++)
			len += snprintf(uuid + len, sizeof(uuid) - len, "%02x%s", s->info.uuid[b],
					b == 3 || b == 5 || b == 7 || b == 9 ? "-" : "");
		snprintf(key, sizeof(key), "merged_from_%zu", nsrc++);
		if (s->seg)
			snprintf(buf, sizeof(buf), "%s %.4000s segment %u", uuid, s->path, s->seg);
		else
			snprintf(buf, sizeof(buf), "%s %.4000s", uuid, s->path);
		err = meta_add(m, &kv, &nkv, &cap, key, buf);
	}
	snprintf(buf, sizeof(buf), "%zu", nsrc);
	err = err ?: meta_add(m, &kv, &nkv, &cap, "merged_sources", buf);
	m->res->sources = nsrc;
	err = err ?: stk_writer__add_meta(w, kv, nkv);
	free(kv);
	return err;
}

int merge__write_stacks(struct merge *m, struct stk_writer *w)
{
	struct stk_stack *st = calloc(batch(m->nr_stacks, STACKS_PER_CHUNK), sizeof(*st));
	size_t i, n = 0;
	int err = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; !err && i < m->nr_stacks; i++) {
		st[n].id = m->stacks[i]->id;
		st[n].nr_frames = m->stacks[i]->nr_frames;
		st[n++].frames = m->stacks[i]->frames;
		if (n == STACKS_PER_CHUNK || i + 1 == m->nr_stacks) {
			err = stk_writer__add_stacks(w, st, n);
			n = 0;
		}
	}
	m->res->stacks_out = m->nr_stacks;
	free(st);
	return err;
}

int merge__write_kernel(struct merge *m, struct stk_writer *w)
{
	struct stk_ksym *ks;
	size_t i, n = 0;
	int err = 0;

	for (i = 0; !err && i < m->nr_esyms; i++)
		err = stk_writer__add_esym(w, m->esyms[i].build_id, m->esyms[i].build_id_size,
					   m->esyms[i].blob, m->esyms[i].blob_size);
	if (!err && m->nr_kobjs)
		err = stk_writer__add_kobjs(w, m->kobjs, m->nr_kobjs);
	if (err || !m->nr_ksyms)
		return err;
	ks = calloc(batch(m->nr_ksyms, KSYMS_PER_CHUNK), sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	for (i = 0; !err && i < m->nr_ksyms; i++) {
		ks[n++] = m->ksyms[i]->k;
		if (n == KSYMS_PER_CHUNK || i + 1 == m->nr_ksyms) {
			err = stk_writer__add_ksyms(w, ks, n);
			n = 0;
		}
	}
	free(ks);
	return err;
}

int merge__write_maps(struct merge *m, struct stk_writer *w)
{
	struct stk_proc_maps *p = calloc(PROCS_PER_CHUNK, sizeof(*p));
	size_t i, n = 0;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (i = 0; !err && i < m->nr_snaps; i++) {
		const struct msnap *sn = m->snaps[i];

		if (!sn->dup) {
			p[n] = sn->p;
			p[n++].time_ns = merge__shift(m, &m->srcs[sn->src], sn->p.time_ns);
		}
		if (n && (n == PROCS_PER_CHUNK || i + 1 == m->nr_snaps)) {
			err = stk_writer__add_maps(w, p, n);
			n = 0;
		}
	}
	free(p);
	return err;
}

/* Pids keep their numbers in a merge, so their pidn records stay as they
 * are, at the times of the moved intervals. */
int merge__write_pidns(struct merge *m, struct stk_writer *w)
{
	struct stk_pid_ns *p;
	size_t i;
	int err;

	if (!m->nr_pidns)
		return 0;
	p = calloc(m->nr_pidns, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (i = 0; i < m->nr_pidns; i++) {
		p[i] = m->pidns[i].p;
		p[i].time_ns = merge__shift(m, &m->srcs[m->pidns[i].src], p[i].time_ns);
	}
	err = stk_writer__add_pid_ns(w, p, m->nr_pidns);
	free(p);
	return err;
}

int merge__write_stats(struct merge *m, struct stk_writer *w)
{
	struct stk_stat *out = NULL;
	size_t n = 0, cap = 0, i, j, k;
	int err = 0;

	for (i = 0; i < m->nr_srcs; i++) {
		const struct msrc *s = &m->srcs[i];

		for (j = 0; s->used && j < s->nr_stats; j++) {
			for (k = 0; k < n; k++)
				if (strcmp(out[k].name, s->stats[j].name) == 0)
					break;
			if (k == n) {
				if (array__grow((void **)&out, &cap, n, sizeof(*out))) {
					free(out);
					return -ENOMEM;
				}
				out[n].name = s->stats[j].name;
				out[n++].value = 0;
			}
			out[k].value += s->stats[j].value;
		}
	}
	if (n)
		err = stk_writer__add_stats(w, out, n);
	free(out);
	return err;
}

/* A row's stack reference in the output: an id the output defines, the
 * same -errno, or -ENOENT ("lost") for an id no STCK chunk defined. */
static int64_t ref_map(const struct msrc *s, int64_t ref)
{
	uint64_t *id;

	if (ref < 0)
		return ref;
	id = idmap__find(&s->ids, (uint64_t)ref);
	return id ? (int64_t)*id : -ENOENT;
}

static void task_map(const struct msrc *s, struct stk_task_stacks *t)
{
	t->user_stack = ref_map(s, t->user_stack);
	t->kernel_stack = ref_map(s, t->kernel_stack);
}

int merge__rows(struct merge *m, const struct msrc *s, const struct stk_chunk *ch,
		struct stk_writer *w)
{
	uint64_t t0 = merge__shift(m, s, ch->t0_ns), t1 = merge__shift(m, s, ch->t1_ns);
	size_t i, n = ch->type == STK_CHUNK_CNTS ? ch->u.cnts.n
		      : ch->type == STK_CHUNK_TRCE ? ch->u.trce.n : ch->u.offc.n;
	void *rows;
	int err;

	if (t1 < t0)
		t1 = t0;
	if (ch->type == STK_CHUNK_CNTS) {
		struct stk_count *r = malloc((n ? n : 1) * sizeof(*r));

		if (!r)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			r[i] = ch->u.cnts.rows[i];
			r[i].user_stack = ref_map(s, r[i].user_stack);
			r[i].kernel_stack = ref_map(s, r[i].kernel_stack);
		}
		rows = r;
		err = stk_writer__add_counts(w, t0, t1, r, n);
	} else if (ch->type == STK_CHUNK_TRCE) {
		struct stk_trace_count *r = malloc((n ? n : 1) * sizeof(*r));

		if (!r)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			r[i] = ch->u.trce.rows[i];
			r[i].user_stack = ref_map(s, r[i].user_stack);
			r[i].kernel_stack = ref_map(s, r[i].kernel_stack);
		}
		rows = r;
		err = stk_writer__add_trace(w, t0, t1, r, n);
	} else {
		struct stk_offcpu *r = malloc((n ? n : 1) * sizeof(*r));

		if (!r)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			r[i] = ch->u.offc.rows[i];
			task_map(s, &r[i].target);
			task_map(s, &r[i].waker);
		}
		rows = r;
		err = stk_writer__add_offcpu(w, t0, t1, r, n);
	}
	free(rows);
	m->res->row_chunks += !err;
	return err;
}
