// SPDX-License-Identifier: BSD-2-Clause
/*
 * A report's samples summed per function, module or task (funcs.h).  Rows
 * are interned by (name, module) in one table shared by both sides, so two
 * builds of a program, whose addresses differ, meet in the same rows.
 * Each resolved stack is turned into its row list once (stacks are shared
 * by many samples); a per-sample stamp counts a recursive function once in
 * its total.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcs.h"
#include "hash.h"
#include "idmap.h"
#include "util.h"

struct func_ent {
	struct func_stat f;		/* first: a func_stat * is a func_ent * */
	uint64_t stamp;			/* the last sample counted in total */
	struct func_ent *next;		/* same hash */
};

struct funcs {
	enum funcs_by by;
	struct idmap by_hash;		/* hash -> func_ent chain */
	struct func_stat **all;		/* in interning order */
	size_t n, cap;
	struct idmap lists[2];		/* by side: rstack * -> func_list */
	uint64_t stamp;
	struct arena mem;
};

struct funcs *funcs__new(enum funcs_by by)
{
	struct funcs *fs;

	if (by > FUNCS_BY_COMM) {
		errno = EINVAL;
		return NULL;
	}
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->by = by;
	return fs;
}

void funcs__free(struct funcs *fs)
{
	if (!fs)
		return;
	free(fs->all);
	idmap__release(&fs->by_hash);
	idmap__release(&fs->lists[0]);
	idmap__release(&fs->lists[1]);
	arena__free(&fs->mem);
	free(fs);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * Row (@name, @key_module), interned; @module is what it shows (the comm
 * of a pid row, which is not part of its key).  NULL when out of memory.
 */
static struct func_ent *funcs__intern(struct funcs *fs, const char *name, const char *key_module,
				      const char *module, uint32_t id)
{
	size_t nl = strlen(name), kl = strlen(key_module), ml = strlen(module);
	uint64_t h = hash_bytes(hash_bytes(0, name, nl + 1), key_module, kl);
	struct func_ent *first = idmap__find_ptr(&fs->by_hash, h), *e;
	char *s;

	for (e = first; e; e = e->next)
		if (strcmp(e->f.name, name) == 0 && (key_module == module
		    ? strcmp(e->f.module, module) == 0 : 1))
			return e;
	if (array__grow((void **)&fs->all, &fs->cap, fs->n, sizeof(*fs->all)))
		return NULL;
	e = arena__alloc(&fs->mem, sizeof(*e) + nl + ml + 2);
	if (!e)
		return NULL;
	s = (char *)(e + 1);
	memcpy(s, name, nl + 1);
	memcpy(s + nl + 1, module, ml + 1);
	e->f.name = s;
	e->f.module = s + nl + 1;
	e->f.id = id;
	e->next = first;
	if (idmap__set_ptr(&fs->by_hash, h, e))
		return NULL;
	fs->all[fs->n++] = &e->f;
	return e;
}

/* A Python frame's module is its source file: "Worker.run (worker.py)". */
static const char *frame_module(const struct rframe *f)
{
	if (rframe__kind(f) == RFRAME_KERNEL)
		return "[kernel]";
	if (rframe__kind(f) == RFRAME_PYTHON)
		return rframe__py(f) && rframe__py(f)->line.file
		       ? base_name(rframe__py(f)->line.file) : "[python]";
	return f->map && f->map->path[0] ? base_name(f->map->path) : "[unknown]";
}

/* The row list of @st on @side, made once per stack: a row per symbol
 * line (functions) or per frame (modules). */
static const struct func_list *funcs__list(struct funcs *fs, int side, const struct rstack *st)
{
	struct func_list *l = idmap__find_ptr(&fs->lists[side], (uintptr_t)st);
	uint32_t i, j, n = 0;

	if (l)
		return l;
	for (i = 0; i < st->nr_frames; i++)
		n += fs->by == FUNCS_BY_FUNC ? rframe__nr_lines(&st->frames[i]) : 1;
	l = arena__alloc(&fs->mem, sizeof(*l) + n * sizeof(l->fn[0]));
	if (!l)
		return NULL;
	for (i = 0; i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[i];
		const char *mod = frame_module(f);
		uint32_t lines = fs->by == FUNCS_BY_FUNC ? rframe__nr_lines(f) : 1;

		for (j = 0; j < lines; j++) {
			struct func_ent *e;

			if (fs->by == FUNCS_BY_FUNC) {
				char buf[64];
				const char *name = rframe__sym(f) ? rframe__sym(f)->lines[j].name
						   : rframe__kind(f) == RFRAME_PYTHON
						   ? rframe__marker(f, buf, sizeof(buf)) : NULL;

				if (!name)
					name = "[unknown]";
				e = funcs__intern(fs, name, mod, mod, 0);
			} else {
				e = funcs__intern(fs, mod, "", "", 0);
			}
			if (!e)
				return NULL;
			l->fn[l->n++] = &e->f;
		}
	}
	return idmap__set_ptr(&fs->lists[side], (uintptr_t)st, l) ? NULL : l;
}

const struct func_list *funcs__stack(struct funcs *fs, int side, const struct rstack *st)
{
	const struct func_list *l;

	if (fs->by != FUNCS_BY_FUNC || side < 0 || side > 1) {
		errno = EINVAL;
		return NULL;
	}
	l = funcs__list(fs, side, st);
	if (!l)
		errno = ENOMEM;
	return l;
}

/* Count @v into the total of every row of @l not yet counted for this
 * sample. */
static void count_total(struct funcs *fs, int side, const struct func_list *l, uint64_t v)
{
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		struct func_ent *e = (struct func_ent *)l->fn[i];

		if (e->stamp == fs->stamp)
			continue;
		e->stamp = fs->stamp;
		e->f.total[side] += v;
	}
}

/* A task row: every sample is in exactly one. */
static int funcs__add_task(struct funcs *fs, int side, const struct rtask *t, uint64_t v)
{
	struct func_ent *e;
	char num[16];

	if (fs->by == FUNCS_BY_COMM) {
		e = funcs__intern(fs, t->comm, "", "", 0);
	} else {
		uint32_t id = fs->by == FUNCS_BY_PID ? t->tgid : t->tid;

		snprintf(num, sizeof(num), "%u", id);
		e = funcs__intern(fs, num, "", t->comm, id);
	}
	if (!e)
		return -ENOMEM;
	e->f.self[side] += v;
	e->f.total[side] += v;
	return 0;
}

int funcs__add(struct funcs *fs, int side, const struct report *r, const struct rsample *s)
{
	const struct rtask *t = &s->task;
	const struct func_list *kl = NULL, *ul = NULL;
	uint64_t v = sample_value(r, s);

	if (side < 0 || side > 1)
		return -EINVAL;
	if (fs->by >= FUNCS_BY_PID)
		return funcs__add_task(fs, side, t, v);
	fs->stamp++;
	if (t->kernel && t->kernel->nr_frames && !(kl = funcs__list(fs, side, t->kernel)))
		return -ENOMEM;
	if (t->user && t->user->nr_frames && !(ul = funcs__list(fs, side, t->user)))
		return -ENOMEM;
	/* The leaf: the kernel's when the sample has a kernel stack. */
	if (kl && kl->n)
		kl->fn[0]->self[side] += v;
	else if (ul && ul->n)
		ul->fn[0]->self[side] += v;
	if (kl)
		count_total(fs, side, kl, v);
	if (ul)
		count_total(fs, side, ul, v);
	return 0;
}

struct func_stat *const *funcs__all(const struct funcs *fs, size_t *n)
{
	*n = fs->n;
	return fs->all;
}

/* The key and side of a sort (qsort_r()'s context). */
struct sort_ctx {
	enum funcs_sort how;
	int side;
};

static int cmp_u64_desc(uint64_t x, uint64_t y)
{
	return x == y ? 0 : x > y ? -1 : 1;
}

static int cmp_name(const struct func_stat *x, const struct func_stat *y)
{
	int c;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

static int cmp_stats(const void *a, const void *b, void *ctx)
{
	const struct func_stat *x = *(const struct func_stat *const *)a;
	const struct func_stat *y = *(const struct func_stat *const *)b;
	const struct sort_ctx *k = ctx;
	int c = 0;

	switch (k->how) {
	case FUNCS_SORT_SELF:
		c = cmp_u64_desc(x->self[k->side], y->self[k->side]);
		c = c ?: cmp_u64_desc(x->total[k->side], y->total[k->side]);
		break;
	case FUNCS_SORT_TOTAL:
		c = cmp_u64_desc(x->total[k->side], y->total[k->side]);
		c = c ?: cmp_u64_desc(x->self[k->side], y->self[k->side]);
		break;
	case FUNCS_SORT_NAME:
		break;
	}
	return c ?: cmp_name(x, y);
}

int funcs__sorted(const struct funcs *fs, enum funcs_sort how, int side,
		  const struct func_stat ***out, size_t *n)
{
	struct sort_ctx k = { how, side ? 1 : 0 };
	const struct func_stat **v;

	v = malloc((fs->n ? fs->n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (fs->n)
		memcpy(v, fs->all, fs->n * sizeof(*v));
	qsort_r(v, fs->n, sizeof(*v), cmp_stats, &k);
	*out = v;
	*n = fs->n;
	return 0;
}

int funcs_by__parse(const char *s, enum funcs_by *by)
{
	static const char *const names[] = { "func", "dso", "pid", "tid", "comm" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*by = (enum funcs_by)i;
			return 0;
		}
	return -EINVAL;
}

int funcs_sort__parse(const char *s, enum funcs_sort *how)
{
	static const char *const names[] = { "self", "total", "name" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*how = (enum funcs_sort)i;
			return 0;
		}
	return -EINVAL;
}
