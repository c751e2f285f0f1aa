// SPDX-License-Identifier: BSD-2-Clause
/*
 * The frame tree of a flame graph (flame.h): stacks merged by name from the
 * root, laid out in pixels, colored.  No output here: out_svg.c writes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hash.h"
#include "idmap.h"
#include "util.h"

#define NIL UINT32_MAX

struct fname {
	const char *s;
	uint32_t len;
	uint32_t next;		/* same hash */
};

struct fnode {
	uint32_t name;		/* index into names */
	uint32_t parent;
	uint32_t child;		/* first callee (insertion order until layout) */
	uint32_t sibling;
	uint32_t hnext;		/* same hash in by_key */
	uint32_t nr_children;
	uint32_t kind;
	uint64_t value, base;
};

struct flame {
	struct flame_opts opts;
	struct fnode *nodes;
	size_t nr_nodes, cap_nodes;
	struct fname *names;
	size_t nr_names, cap_names;
	struct idmap by_name;		/* hash of the bytes -> first name index */
	struct idmap by_key;		/* hash of (parent, name) -> first node */
	struct arena mem;		/* name bytes */
	struct flame_frame *scratch;	/* add_folded()'s frames */
	size_t scratch_cap;
	uint64_t base_total, new_total;	/* flame__set_totals(), 0: sums */
	/* Last layout. */
	struct flame_rect *rects;
	size_t nr_rects, cap_rects;
	size_t nr_merged;
	uint32_t max_depth;
	double max_delta;
};

static int intern(struct flame *f, const char *s, size_t len, uint32_t *out)
{
	uint64_t h = hash_bytes(0, s, len);
	uint64_t *slot = idmap__find(&f->by_name, h);
	uint32_t i, first = slot ? (uint32_t)*slot : NIL;
	char *copy;

	for (i = first; i != NIL; i = f->names[i].next)
		if (f->names[i].len == len && memcmp(f->names[i].s, s, len) == 0) {
			*out = i;
			return 0;
		}
	if (len > UINT32_MAX || f->nr_names >= NIL - 1)
		return -ENOMEM;
	if (f->nr_names == f->cap_names) {
		size_t cap = f->cap_names ? 2 * f->cap_names : 1024;
		struct fname *p = realloc(f->names, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->names = p;
		f->cap_names = cap;
	}
	copy = arena__strndup(&f->mem, s, len);
	if (!copy)
		return -ENOMEM;
	i = (uint32_t)f->nr_names;
	if (idmap__set(&f->by_name, h, i))
		return -ENOMEM;
	f->names[i] = (struct fname){ .s = copy, .len = (uint32_t)len, .next = first };
	f->nr_names++;
	*out = i;
	return 0;
}

static int new_node(struct flame *f, uint32_t parent, uint32_t name, unsigned int kind,
		    uint32_t *out)
{
	struct fnode *n;

	if (f->nr_nodes >= NIL - 1)
		return -ENOMEM;
	if (f->nr_nodes == f->cap_nodes) {
		size_t cap = f->cap_nodes ? 2 * f->cap_nodes : 4096;
		struct fnode *p = realloc(f->nodes, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->nodes = p;
		f->cap_nodes = cap;
	}
	*out = (uint32_t)f->nr_nodes;
	n = &f->nodes[f->nr_nodes++];
	*n = (struct fnode){ .name = name, .parent = parent, .child = NIL, .sibling = NIL,
			     .hnext = NIL, .kind = kind };
	if (parent != NIL) {
		n->sibling = f->nodes[parent].child;
		f->nodes[parent].child = *out;
		f->nodes[parent].nr_children++;
	}
	return 0;
}

struct flame *flame__new(const struct flame_opts *o)
{
	struct flame *f;
	uint32_t name, root;

	if (!o || o->sz < sizeof(*o)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		goto nomem;
	f->opts = *o;
	if (intern(f, "all", 3, &name) || new_node(f, NIL, name, FLAME_MARKER, &root))
		goto nomem;
	return f;
nomem:
	flame__free(f);
	errno = ENOMEM;
	return NULL;
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	idmap__release(&f->by_name);
	idmap__release(&f->by_key);
	arena__free(&f->mem);
	free(f->nodes);
	free(f->names);
	free(f->rects);
	free(f->scratch);
	free(f);
}

static uint64_t node_key(uint32_t parent, uint32_t name)
{
	return hash64(hash64(0x666c616d65ULL, parent), name);
}

static int index_node(struct flame *f, uint32_t i)
{
	uint64_t h = node_key(f->nodes[i].parent, f->nodes[i].name), *slot;

	slot = idmap__find(&f->by_key, h);
	f->nodes[i].hnext = slot ? (uint32_t)*slot : NIL;
	return idmap__set(&f->by_key, h, i) ? -ENOMEM : 0;
}

/*
 * The callee @name of @parent, made if new.  Most frames have one or two
 * callees: a scan of the list finds them with no hash table miss; only
 * callers with more than FEW_CHILDREN callees index them in by_key (the
 * table was most of the time of a 100k-stack graph).
 */
#define FEW_CHILDREN 8
static int child_of(struct flame *f, uint32_t parent, const char *s, size_t len,
		    unsigned int kind, uint32_t *out)
{
	uint32_t name, i;
	uint64_t *slot;
	int err;

	err = intern(f, s, len, &name);
	if (err)
		return err;
	if (f->nodes[parent].nr_children <= FEW_CHILDREN) {
		for (i = f->nodes[parent].child; i != NIL; i = f->nodes[i].sibling)
			if (f->nodes[i].name == name) {
				*out = i;
				return 0;
			}
	} else {
		slot = idmap__find(&f->by_key, node_key(parent, name));
		for (i = slot ? (uint32_t)*slot : NIL; i != NIL; i = f->nodes[i].hnext)
			if (f->nodes[i].parent == parent && f->nodes[i].name == name) {
				*out = i;
				return 0;
			}
	}
	err = new_node(f, parent, name, kind, &i);
	if (err)
		return err;
	*out = i;
	if (f->nodes[parent].nr_children == FEW_CHILDREN + 1) {
		uint32_t c;

		for (c = f->nodes[parent].child; !err && c != NIL; c = f->nodes[c].sibling)
			err = index_node(f, c);
		return err;
	}
	return f->nodes[parent].nr_children > FEW_CHILDREN ? index_node(f, i) : 0;
}

static int add(struct flame *f, const struct flame_frame *fr, size_t n, uint64_t base,
	       uint64_t value)
{
	uint32_t at = 0;
	size_t i;
	int err;

	f->nodes[0].value += value;
	f->nodes[0].base += base;
	for (i = 0; i < n; i++) {
		err = child_of(f, at, fr[i].name, fr[i].len, fr[i].kind, &at);
		if (err)
			return err;
		f->nodes[at].value += value;
		f->nodes[at].base += base;
	}
	return 0;
}

int flame__add(struct flame *f, const struct flame_frame *frames, size_t n, uint64_t value)
{
	if (f->opts.flags & FLAME_DIFF)
		return -EINVAL;
	return add(f, frames, n, 0, value);
}

static int ends_with(const char *s, size_t len, const char *suf)
{
	size_t k = strlen(suf);

	return len >= k && memcmp(s + len - k, suf, k) == 0;
}

/* The kind folded output gives the frame @s (@len bytes) at @i. */
static unsigned int folded_kind(const char *s, size_t len, size_t i, int waker)
{
	unsigned int w = waker ? FLAME_WAKER : 0;

	if ((len == 1 && s[0] == '-') || (len == 2 && memcmp(s, "--", 2) == 0))
		return FLAME_MARKER;
	if (ends_with(s, len, "_[k]"))
		return FLAME_KERNEL | w;
	if (ends_with(s, len, "_[i]"))
		return FLAME_INLINED | w;
	if (ends_with(s, len, "_[w]"))
		return FLAME_USER | FLAME_WAKER;
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']')
		return FLAME_MARKER | w;
	if (i == 0)
		return FLAME_COMM;
	return FLAME_USER | w;
}

static int add_folded(struct flame *f, const char *stack, uint64_t base, uint64_t value)
{
	struct flame_frame *fr;
	size_t n = 1, i;
	const char *p;
	int waker = 0;

	if (!*stack)
		return add(f, NULL, 0, base, value);
	for (p = stack; *p; p++)
		n += *p == ';';
	if (n > f->scratch_cap) {
		fr = realloc(f->scratch, n * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		f->scratch = fr;
		f->scratch_cap = n;
	}
	fr = f->scratch;
	for (i = 0, p = stack; i < n; i++) {
		size_t len = strcspn(p, ";");

		fr[i].name = p;
		fr[i].len = len;
		fr[i].kind = folded_kind(p, len, i, waker);
		if (len == 2 && memcmp(p, "--", 2) == 0)
			waker = 1;
		/* the waker's comm ends an offwake line */
		if (waker && i == n - 1 && i > 0 && FLAME_KIND(fr[i].kind) == FLAME_USER)
			fr[i].kind = FLAME_COMM | FLAME_WAKER;
		p += len + (p[len] == ';');
	}
	return add(f, fr, n, base, value);
}

int flame__add_folded(struct flame *f, const char *folded_stack, uint64_t value)
{
	if (f->opts.flags & FLAME_DIFF)
		return -EINVAL;
	return add_folded(f, folded_stack, 0, value);
}

int flame__add_diff(struct flame *f, const char *folded_stack, uint64_t base, uint64_t new)
{
	if (!(f->opts.flags & FLAME_DIFF))
		return -EINVAL;
	return add_folded(f, folded_stack, base, new);
}

void flame__set_totals(struct flame *f, uint64_t base_total, uint64_t new_total)
{
	f->base_total = base_total;
	f->new_total = new_total;
}

/* ---- layout ---- */

static int by_name(const void *a, const void *b, void *arg)
{
	const struct flame *f = arg;
	const struct fnode *x = &f->nodes[*(const uint32_t *)a];
	const struct fnode *y = &f->nodes[*(const uint32_t *)b];
	const struct fname *nx = &f->names[x->name], *ny = &f->names[y->name];
	size_t k = nx->len < ny->len ? nx->len : ny->len;
	int c = memcmp(nx->s, ny->s, k);

	return c ? c : (nx->len > ny->len) - (nx->len < ny->len);
}

/* Relink every node's callees in name order. */
static int sort_children(struct flame *f)
{
	uint32_t *tmp = NULL, i, c;
	size_t cap = 0, k, j;

	for (i = 0; i < f->nr_nodes; i++) {
		k = 0;
		for (c = f->nodes[i].child; c != NIL; c = f->nodes[c].sibling)
			k++;
		if (k < 2)
			continue;
		if (k > cap) {
			uint32_t *p = realloc(tmp, k * sizeof(*p));

			if (!p) {
				free(tmp);
				return -ENOMEM;
			}
			tmp = p;
			cap = k;
		}
		k = 0;
		for (c = f->nodes[i].child; c != NIL; c = f->nodes[c].sibling)
			tmp[k++] = c;
		qsort_r(tmp, k, sizeof(*tmp), by_name, f);
		f->nodes[i].child = tmp[0];
		for (j = 0; j + 1 < k; j++)
			f->nodes[tmp[j]].sibling = tmp[j + 1];
		f->nodes[tmp[k - 1]].sibling = NIL;
	}
	free(tmp);
	return 0;
}

static double absd(double v)
{
	return v < 0 ? -v : v;
}

static double share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

static int push_rect(struct flame *f, const struct fnode *n, uint32_t depth, uint64_t start,
		     double scale, const struct flame_layout_opts *o)
{
	const struct fname *nm = &f->names[n->name];
	struct flame_rect *r;

	if (f->nr_rects == f->cap_rects) {
		size_t cap = f->cap_rects ? 2 * f->cap_rects : 1024;
		struct flame_rect *p = realloc(f->rects, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->rects = p;
		f->cap_rects = cap;
	}
	r = &f->rects[f->nr_rects++];
	r->name = nm->s;
	r->len = nm->len;
	r->kind = n->kind;
	r->depth = depth;
	r->start = start;
	r->value = n->value;
	r->base = n->base;
	r->delta = 0;
	if (f->opts.flags & FLAME_DIFF) {
		r->delta = share(n->value, flame__total(f)) - share(n->base, flame__base_total(f));
		if (absd(r->delta) > f->max_delta)
			f->max_delta = absd(r->delta);
	}
	r->x = (double)start * scale;
	r->width = (double)n->value * scale;
	r->y = o->inverted ? o->top + depth * o->frame_height
			   : o->bottom - depth * o->frame_height;
	if (depth > f->max_depth)
		f->max_depth = depth;
	return 0;
}

/* Nodes of the subtree under @i (@i included) with a value. */
static size_t count_subtree(const struct flame *f, uint32_t i)
{
	size_t k = f->nodes[i].value ? 1 : 0;
	uint32_t c;

	/* Recursion depth is bounded by the stack depth (a few hundred). */
	for (c = f->nodes[i].child; c != NIL; c = f->nodes[c].sibling)
		k += count_subtree(f, c);
	return k;
}

struct walk {
	uint32_t node;
	uint32_t depth;
	uint64_t start;
};

int flame__layout(struct flame *f, const struct flame_layout_opts *o)
{
	struct walk *st = NULL;
	size_t nst = 0, cap = 0;
	double scale;
	int err;

	if (!o || o->sz < sizeof(*o) || !(o->width > 0) || o->min_width < 0 ||
	    !(o->frame_height > 0))
		return -EINVAL;
	err = sort_children(f);
	if (err)
		return err;
	f->nr_rects = 0;
	f->nr_merged = 0;
	f->max_depth = 0;
	f->max_delta = 0;
	scale = f->nodes[0].value ? o->width / (double)f->nodes[0].value : 0;
	err = push_rect(f, &f->nodes[0], 0, 0, scale, o);
	if (err)
		return err;
	if (!f->nodes[0].value)
		return 0;
	cap = 256;
	st = malloc(cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[nst++] = (struct walk){ 0, 0, 0 };
	while (nst) {
		struct walk w = st[--nst];
		uint64_t start = w.start;
		uint32_t c;
		size_t first = nst, a, b;

		if (w.node != 0) {
			err = push_rect(f, &f->nodes[w.node], w.depth, w.start, scale, o);
			if (err)
				goto out;
		}
		/* Push callees so that the first by name is popped first. */
		for (c = f->nodes[w.node].child; c != NIL; c = f->nodes[c].sibling) {
			const struct fnode *n = &f->nodes[c];

			if (!n->value)
				continue;
			if ((double)n->value * scale < o->min_width) {
				f->nr_merged += count_subtree(f, c);
				start += n->value;
				continue;
			}
			if (nst == cap) {
				struct walk *p = realloc(st, 2 * cap * sizeof(*p));

				if (!p) {
					err = -ENOMEM;
					goto out;
				}
				st = p;
				cap *= 2;
			}
			st[nst++] = (struct walk){ c, w.depth + 1, start };
			start += n->value;
		}
		for (a = first, b = nst; a + 1 < b; a++, b--) {
			struct walk t = st[a];

			st[a] = st[b - 1];
			st[b - 1] = t;
		}
	}
out:
	free(st);
	return err;
}

size_t flame__nr_rects(const struct flame *f)
{
	return f->nr_rects;
}

const struct flame_rect *flame__rect(const struct flame *f, size_t i)
{
	return i < f->nr_rects ? &f->rects[i] : NULL;
}

size_t flame__nr_merged(const struct flame *f)
{
	return f->nr_merged;
}

uint32_t flame__max_depth(const struct flame *f)
{
	return f->max_depth;
}

uint64_t flame__total(const struct flame *f)
{
	return f->new_total ? f->new_total : f->nodes[0].value;
}

uint64_t flame__base_total(const struct flame *f)
{
	return f->base_total ? f->base_total : f->nodes[0].base;
}

const struct flame_opts *flame__opts(const struct flame *f)
{
	return &f->opts;
}

/* ---- colors ---- */

/* FNV-1a: fixed, unlike hash.h's per-process key, so colors are the same
 * in every run. */
static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* lo + (hi - lo) * v, v = 0..255 */
static unsigned int mix(unsigned int lo, unsigned int hi, unsigned int v)
{
	return lo + (hi - lo) * v / 255;
}

void flame__color(const struct flame *f, const struct flame_rect *r, char out[8])
{
	uint32_t h = name_hash(r->name, r->len);
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;
	unsigned int kind = FLAME_KIND(r->kind), red, green, blue;
	int off = f->opts.palette == FLAME_PALETTE_OFFCPU;

	if (f->opts.flags & FLAME_DIFF) {
		/* white at no change, to full red/blue at the largest change */
		double k = f->max_delta > 0 ? absd(r->delta) / f->max_delta : 0;
		unsigned int d = (unsigned int)(210.0 * k + 0.5);

		red = r->delta < 0 ? 255 - d : 255;
		green = 255 - d;
		blue = r->delta > 0 ? 255 - d : 255;
	} else if (kind == FLAME_MARKER || kind == FLAME_COMM) {
		red = green = blue = kind == FLAME_COMM ? mix(170, 200, a) : mix(150, 175, a);
		if (kind == FLAME_COMM)
			blue = mix(185, 215, a);
	} else if (off && (r->kind & FLAME_WAKER)) {	/* purple */
		red = mix(150, 200, a);
		green = mix(100, 150, b);
		blue = mix(215, 255, c);
	} else if (off && kind == FLAME_PYTHON) {	/* teal */
		red = mix(30, 80, a);
		green = mix(160, 200, b);
		blue = mix(170, 210, c);
	} else if (off) {				/* blue; kernel paler */
		red = kind == FLAME_KERNEL ? mix(110, 160, a) : mix(40, 100, a);
		green = kind == FLAME_KERNEL ? mix(150, 200, a) : mix(90, 150, b);
		blue = mix(210, 255, c);
	} else if (kind == FLAME_KERNEL) {		/* orange */
		red = mix(220, 255, a);
		green = mix(130, 180, b);
		blue = mix(0, 40, c);
	} else if (kind == FLAME_PYTHON) {		/* green */
		red = mix(60, 130, a);
		green = mix(180, 230, b);
		blue = mix(40, 90, c);
	} else if (kind == FLAME_INLINED) {		/* aqua */
		red = mix(50, 110, a);
		green = mix(170, 220, b);
		blue = mix(170, 220, b);
	} else {					/* red, to yellow */
		red = mix(205, 255, a);
		green = mix(40, 110, b);
		blue = mix(30, 70, c);
	}
	out[0] = '#';
	snprintf(out + 1, 7, "%02x%02x%02x", red & 0xff, green & 0xff, blue & 0xff);
}
