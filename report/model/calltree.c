// SPDX-License-Identifier: BSD-2-Clause
/*
 * The call tree of one function (calltree.h), built from each sample's
 * function list (funcs.h), kernel frames leaf first, then user frames.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "util.h"

struct calltree {
	struct funcs *fs;
	struct calltree_node *roots;
	uint64_t total;
	struct arena mem;
};

/* The node of @fn among the children chained at *@head, added when new. */
static struct calltree_node *child_of(struct calltree *t, struct calltree_node **head,
				      const struct func_stat *fn)
{
	struct calltree_node *n;

	for (n = *head; n; n = n->next)
		if (n->fn == fn)
			return n;
	n = arena__alloc(&t->mem, sizeof(*n));
	if (!n)
		return NULL;
	n->fn = fn;
	n->next = *head;
	*head = n;
	return n;
}

/* The sample's functions, leaf first, into @v (grown as needed). */
static int sample_funcs(struct calltree *t, const struct rtask *task,
			const struct func_stat ***v, size_t *cap, size_t *n)
{
	const struct rstack *sts[2] = { task->kernel, task->user };
	const struct func_list *l;
	uint32_t i;
	int k;

	*n = 0;
	for (k = 0; k < 2; k++) {
		if (!sts[k] || !sts[k]->nr_frames)
			continue;
		l = funcs__stack(t->fs, 0, sts[k]);
		if (!l)
			return -ENOMEM;
		for (i = 0; i < l->n; i++) {
			if (array__grow((void **)v, cap, *n, sizeof(**v)))
				return -ENOMEM;
			(*v)[(*n)++] = l->fn[i];
		}
	}
	return 0;
}

static int calltree__add(struct calltree *t, const char *func, int callers,
			 const struct func_stat *const *v, size_t n, uint64_t value)
{
	struct calltree_node *node, **head = &t->roots;
	size_t at = n, i;

	/* Callers: the innermost occurrence; callees: the outermost. */
	for (i = 0; i < n; i++) {
		if (strcmp(v[i]->name, func) != 0)
			continue;
		at = i;
		if (callers)
			break;
	}
	if (at == n)
		return 0;
	for (i = at;; i = callers ? i + 1 : i - 1) {
		node = child_of(t, head, v[i]);
		if (!node)
			return -ENOMEM;
		node->value += value;
		head = &node->child;
		if (callers ? i + 1 == n : i == 0)
			break;
	}
	if (!callers)
		node->self += value;
	return 0;
}

struct calltree *calltree__new(const struct report *r, const char *func, int callers)
{
	const struct func_stat **v = NULL;
	struct calltree *t = NULL;
	size_t i, cap = 0, n;
	int err = -EINVAL;

	if (!r || !func)
		goto fail;
	err = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->fs = funcs__new(FUNCS_BY_FUNC);
	if (!t->fs)
		goto fail;
	for (i = 0; i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		t->total += sample_value(r, s);
		err = sample_funcs(t, &s->task, &v, &cap, &n);
		err = err ?: calltree__add(t, func, callers, v, n, sample_value(r, s));
		if (err)
			goto fail;
	}
	free(v);
	return t;
fail:
	free(v);
	calltree__free(t);
	errno = -err;
	return NULL;
}

void calltree__free(struct calltree *t)
{
	if (!t)
		return;
	funcs__free(t->fs);
	arena__free(&t->mem);
	free(t);
}

const struct calltree_node *calltree__roots(const struct calltree *t)
{
	return t->roots;
}

uint64_t calltree__total(const struct calltree *t)
{
	return t->total;
}
