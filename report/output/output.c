// SPDX-License-Identifier: BSD-2-Clause
/* The table of output writers, the output stream they write to, and
 * rendering shared by text and folded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "output.h"
#include "textsafe.h"

struct outstream {
	FILE *f;
	int fd;
	int own;		/* close @fd at the end */
	int err;		/* first write error, -errno */
	char *created;		/* the path, when this stream created the file */
};

static ssize_t outstream_write(void *cookie, const char *buf, size_t size)
{
	struct outstream *o = cookie;
	size_t done = 0;
	ssize_t n;

	if (o->err) {
		errno = -o->err;
		return 0;
	}
	while (done < size) {
		n = write(o->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->err = n < 0 ? -errno : -EIO;
			errno = -o->err;
			return 0;
		}
		done += n;
	}
	return size;
}

struct outstream *outstream__open(const char *path)
{
	cookie_io_functions_t io = { .write = outstream_write };
	struct outstream *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return NULL;
	o->fd = STDOUT_FILENO;
	if (path) {
		/* Created here, it is removed again if writing fails; a file
		 * that was there (or a FIFO, a device) is only written. */
		o->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
		if (o->fd >= 0) {
			o->created = strdup(path);
			if (!o->created) {
				close(o->fd);
				unlink(path);
				free(o);
				errno = ENOMEM;
				return NULL;
			}
		} else if (errno == EEXIST) {
			o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
		}
		if (o->fd < 0) {
			err = errno;
			free(o);
			errno = err;
			return NULL;
		}
		o->own = 1;
	}
	o->f = fopencookie(o, "w", io);
	if (!o->f) {
		if (o->own)
			close(o->fd);
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	/* A block at a time, as stdio would for a file or pipe. */
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return o;
}

FILE *outstream__file(struct outstream *o)
{
	return o->f;
}

int outstream__close(struct outstream *o)
{
	int err;

	if (!o)
		return 0;
	if (fclose(o->f) && !o->err)
		o->err = -EIO;
	if (o->own && close(o->fd) < 0 && !o->err)
		o->err = -errno;
	err = o->err;
	if (err && o->created)
		unlink(o->created);
	free(o->created);
	free(o);
	return err;
}

static const struct output_format formats[] = {
	{ "text", 0, out_text__write },
	{ "folded", 0, out_folded__write },
	{ "pprof", 1, out_pprof__write },
	{ "svg", 0, out_svg__write },
};

const struct output_format *output_format__find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

const char *output_format__names(void)
{
	return "text|folded|pprof|svg";
}

int render_clean(struct strbuf *sb, const char *s, int folded)
{
	int err = 0;
	size_t k;

	/* Newlines -> ' ' and (folded) ';' -> ':' first, as they always were;
	 * every other byte that is not printable text is escaped. */
	for (;;) {
		k = strcspn(s, folded ? ";\n\r" : "\n\r");
		err = strbuf__add_escaped(sb, s, k);
		if (err || !s[k])
			return err;
		err = strbuf__add(sb, s[k] == ';' ? ":" : " ", 1);
		if (err)
			return err;
		s += k + 1;
	}
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int render_unknown(struct strbuf *sb, const struct rframe *f, const struct output_opts *o,
			  int folded)
{
	const char *name;
	int err;

	/* [unwind] the marker ending a stack stkrec's unwinder stopped early. */
	if (rframe__unwind_stop(f))
		return strbuf__addf(sb, "[unwind stopped: %s]",
				    unwind_stop__name(rframe__unwind_stop(f)));
	if (!o->addresses)
		return strbuf__adds(sb, "[unknown]");
	if (f->kind == RFRAME_KERNEL) {
		name = f->kobj ? f->kobj->name : "kernel";
		if (strcmp(name, "[kernel.kallsyms]") == 0)
			name = "kernel.kallsyms";
	} else {
		name = f->map && f->map->path[0] ? base_name(f->map->path) : "unknown";
	}
	err = strbuf__adds(sb, "[");
	err = err ?: render_clean(sb, name, folded);
	err = err ?: strbuf__addf(sb, "+0x%llx]", (unsigned long long)rframe__offset(f));
	return err;
}

int render_frame_line(struct strbuf *sb, const struct rframe *f, uint32_t i,
		      const struct output_opts *o, int folded)
{
	const struct sym_line *l;
	int err = 0;

	/* --addresses: every frame as text prints it, "%016x name" (text
	 * puts the address in a column of its own, render_frames()). */
	if (folded && o->addresses)
		err = strbuf__addf(sb, "%016llx ", (unsigned long long)f->addr);
	if (err)
		return err;
	if (!f->sym)
		err = render_unknown(sb, f, o, folded);
	else if (f->sym->lines[i].plain)
		err = strbuf__add(sb, f->sym->lines[i].name, f->sym->lines[i].name_len);
	else
		err = render_clean(sb, f->sym->lines[i].name, folded);
	if (err)
		return err;
	if (f->kind == RFRAME_KERNEL && o->annotate) {
		err = strbuf__adds(sb, "_[k]");
		if (err)
			return err;
	}
	if (o->lines && f->sym) {
		l = &f->sym->lines[i];
		if (l->file) {
			err = strbuf__adds(sb, " (");
			err = err ?: render_clean(sb, base_name(l->file), folded);
			err = err ?: (l->line ? strbuf__addf(sb, ":%u)", l->line) : strbuf__adds(sb, ")"));
			if (err)
				return err;
		}
	}
	return 0;
}

int groups__add(struct groups *g, const char *text, size_t len, int i, uint64_t value)
{
	uint64_t h = hash_bytes(0, text, len);
	struct group *first = idmap__find_ptr(&g->by_hash, h), *e;

	for (e = first; e; e = e->next) {
		if (e->len == len && memcmp(e->text, text, len) == 0) {
			e->value[i] += value;
			return 0;
		}
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 256;
		struct group **p = realloc(g->all, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		g->all = p;
		g->cap = cap;
	}
	e = arena__alloc(&g->mem, sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->text = (char *)(e + 1);
	memcpy(e->text, text, len);
	e->text[len] = '\0';
	e->len = len;
	e->value[i] = value;
	e->next = first;
	if (idmap__set_ptr(&g->by_hash, h, e))
		return -ENOMEM;
	g->all[g->n++] = e;
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	if (x->value[0] != y->value[0])
		return x->value[0] < y->value[0] ? -1 : 1;
	return strcmp(x->text, y->text);
}

void groups__sort(struct groups *g)
{
	if (g->n)
		qsort(g->all, g->n, sizeof(*g->all), group_cmp);
}

void groups__free(struct groups *g)
{
	arena__free(&g->mem);
	free(g->all);
	idmap__release(&g->by_hash);
	memset(g, 0, sizeof(*g));
}

int output__write_grouped(const struct report *r, const struct output_opts *o, FILE *f,
			  output_render_fn render, const char *sep, const char *end)
{
	struct strbuf sb = { 0 };
	struct groups g = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		strbuf__reset(&sb);
		err = render(&sb, r, s, o);
		err = err ?: groups__add(&g, strbuf__str(&sb), sb.len, 0, sample_value(r, s));
	}
	if (!err) {
		groups__sort(&g);
		for (i = 0; i < g.n; i++)
			fprintf(f, "%s%s%llu%s", g.all[i]->text, sep,
				(unsigned long long)out_value(r, g.all[i]->value[0]), end);
		if (fflush(f) || ferror(f))
			err = -EIO;
	}
	groups__free(&g);
	strbuf__free(&sb);
	return err;
}

int stack_missed(stk_stack_ref ref, const struct rstack *st)
{
	if (ref >= 0)
		return !st;
	return ref != -EFAULT && ref != -ENOENT;
}

int rtask__none(const struct rtask *t)
{
	return !t->tgid && !t->tid && !t->comm[0] && t->user_ref < 0 && t->kernel_ref < 0;
}

int render_frames(struct strbuf *sb, const struct rstack *st, int root_first,
		  const struct output_opts *o, const char *before, const char *after,
		  int addresses, int folded)
{
	uint32_t i, j, n;
	int err = 0;

	if (!st)
		return 0;
	for (i = 0; !err && i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[root_first ? st->nr_frames - 1 - i : i];

		n = rframe__nr_lines(f);
		for (j = 0; !err && j < n; j++) {
			err = strbuf__adds(sb, before);
			if (!err && addresses && o->addresses)
				err = strbuf__addf(sb, "%016llx ", (unsigned long long)f->addr);
			err = err ?: render_frame_line(sb, f, root_first ? n - 1 - j : j, o, folded);
			err = err ?: strbuf__adds(sb, after);
		}
	}
	return err;
}
