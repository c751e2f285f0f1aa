// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport --callers FUNC / --callees FUNC: the call tree of one function
 * (calltree.h) as indented text, the heaviest branch first, each line
 * with the value of the paths through it and its share of all samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "output.h"

static int by_value_desc(const void *a, const void *b)
{
	const struct calltree_node *x = *(const struct calltree_node *const *)a;
	const struct calltree_node *y = *(const struct calltree_node *const *)b;
	int c;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	c = strcmp(x->fn->name, y->fn->name);
	return c ? c : strcmp(x->fn->module, y->fn->module);
}

/* @first and its siblings, heaviest first, each before its own children;
 * @depth levels of indent.  Written out as it goes. */
static int tree_lines(struct strbuf *sb, const struct report *r, const struct calltree_node *first,
		      uint64_t total, unsigned int depth, FILE *f)
{
	const struct calltree_node *n, **v;
	size_t i, k = 0;
	int err = 0;

	for (n = first; n; n = n->next)
		k++;
	v = malloc((k ? k : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (n = first, i = 0; n; n = n->next)
		v[i++] = n;
	qsort(v, k, sizeof(*v), by_value_desc);
	for (i = 0; !err && i < k; i++) {
		err = out_top__value(sb, r->kind, v[i]->value);
		err = err ?: strbuf__addf(sb, " %6.2f%%  %*s", total ? 100.0 * (double)v[i]->value /
					  (double)total : 0.0, (int)(2 * depth), "");
		err = err ?: render_clean_name(sb, v[i]->fn->name, strlen(v[i]->fn->name), 0, 0);
		err = err ?: strbuf__adds(sb, " (");
		err = err ?: render_clean(sb, v[i]->fn->module, 0);
		err = err ?: strbuf__adds(sb, ")\n");
		if (!err && sb->len > 65536) {
			if (fwrite(sb->buf, 1, sb->len, f) != sb->len)
				err = -EIO;
			strbuf__reset(sb);
		}
		if (!err && v[i]->child)
			err = tree_lines(sb, r, v[i]->child, total, depth + 1, f);
	}
	free(v);
	return err;
}

int out_tree__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	const int callers = o->tree_callers;
	const struct calltree_node *roots;
	struct strbuf sb = { 0 };
	struct calltree *t;
	int err;

	t = calltree__new(r, o->tree_func, callers);
	if (!t)
		return -errno;
	roots = calltree__roots(t);
	if (!roots) {
		err = -ENOENT;
		goto out;
	}
	err = strbuf__adds(&sb, callers ? "# callers of " : "# callees of ");
	err = err ?: render_clean_name(&sb, o->tree_func, strlen(o->tree_func), 0, 0);
	err = err ?: strbuf__addf(&sb, ", %s: each line holds the %s of the paths through it, and their share of all\n",
				  callers ? "bottom-up (each function's callers under it)"
					  : "top-down (each function's callees under it)",
				  r->kind == REPORT_PROFILE ? "samples" : "off-CPU time, ms,");
	err = err ?: strbuf__addf(&sb, "%10s %7s  %s\n", r->kind == REPORT_PROFILE ? "samples" : "ms",
				  "share", callers ? "function (module), then its callers"
						   : "function (module), then its callees");
	err = err ?: tree_lines(&sb, r, roots, calltree__total(t), 0, f);
	if (!err && (fwrite(strbuf__str(&sb), 1, sb.len, f) != sb.len || fflush(f) || ferror(f)))
		err = -EIO;
out:
	strbuf__free(&sb);
	calltree__free(t);
	return err;
}
