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
#include "strsort.h"
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

void outstream__fail(struct outstream *o, int err)
{
	if (o && err && !o->err)
		o->err = err;
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
	{ "top", 0, out_top__write },
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
	return "text|folded|pprof|svg|top";
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
	char buf[64];
	int err;

	/* [unwind] the marker ending a stack stkrec's unwinder stopped early;
	 * a Python walk's stop, a Python frame of unknown code. */
	name = rframe__marker(f, buf, sizeof(buf));
	if (name)
		return strbuf__adds(sb, name);
	if (!o->addresses)
		return strbuf__adds(sb, "[unknown]");
	if (rframe__kind(f) == RFRAME_KERNEL) {
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

/* The bytes of the UTF-8 character at @s (@left bytes there), 1 for a
 * byte that starts none: a unit the escaper renders whole. */
static size_t char_len(const char *s, size_t left)
{
	unsigned char c = (unsigned char)s[0];
	size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1, i;

	if (n > left)
		return 1;
	for (i = 1; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

int render_clean_name(struct strbuf *sb, const char *s, size_t len, int plain, int folded)
{
	const size_t keep = RENDER_NAME_MAX - (sizeof(RENDER_CUT_MARK) - 1);
	size_t start = sb->len, cut = start, done = 0, k;
	char unit[5];
	int err;

	/* Short enough whatever escaping makes of it (4 bytes a byte at most). */
	if (plain ? len <= RENDER_NAME_MAX : len <= RENDER_NAME_MAX / 4)
		return plain ? strbuf__add(sb, s, len) : render_clean(sb, s, folded);
	/* A character at a time, so the cut falls between two escapes, never
	 * inside one ("\x0" then [...]), and a long name costs no more than
	 * its kept part. */
	while (done < len) {
		k = char_len(s + done, len - done);
		memcpy(unit, s + done, k);
		unit[k] = '\0';
		err = plain ? strbuf__add(sb, unit, k) : render_clean(sb, unit, folded);
		if (err)
			return err;
		done += k;
		if (sb->len - start <= keep)
			cut = sb->len;
		else if (sb->len - start > RENDER_NAME_MAX)
			break;
	}
	if (done >= len && sb->len - start <= RENDER_NAME_MAX)
		return 0;
	sb->len = cut;
	return strbuf__adds(sb, RENDER_CUT_MARK);
}

static int render_name(struct strbuf *sb, const struct sym_line *l, int folded)
{
	return render_clean_name(sb, l->name, l->name_len, l->plain, folded);
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
	if (!rframe__sym(f))
		err = render_unknown(sb, f, o, folded);
	else if (rframe__py(f))	/* QUALNAME (FILE:LINE), whatever --lines says */
		return render_clean_name(sb, rframe__py(f)->display, rframe__py(f)->display_len,
					 rframe__py(f)->display_plain, folded);
	else
		err = render_name(sb, &rframe__sym(f)->lines[i], folded);
	if (err)
		return err;
	if (rframe__kind(f) == RFRAME_KERNEL && o->annotate) {
		err = strbuf__adds(sb, "_[k]");
		if (err)
			return err;
	}
	if (o->lines && rframe__sym(f)) {
		l = &rframe__sym(f)->lines[i];
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

uint64_t output__text_budget(uint64_t size)
{
	return (64ull << 20) + (size > (UINT64_MAX >> 6) ? (UINT64_MAX >> 1) : 32 * size);
}

int group__text(struct groups *g, const struct group *e, struct strbuf *sb, const char **text)
{
	int err;

	if (e->text) {
		*text = e->text;
		return 0;
	}
	strbuf__reset(sb);
	err = g->render(sb, e->r, e->s, g->o);
	*text = strbuf__str(sb);
	return err;
}

/* Past the budget: every text goes, and the groups are rendered again
 * from their samples when they are compared or written. */
static void groups__drop_texts(struct groups *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		g->all[i]->text = NULL;
	arena__free(&g->texts);
	g->held = 0;
	g->dropped = 1;
}

int groups__add(struct groups *g, const char *text, size_t len, int i, uint64_t value,
		const struct report *r, const struct rsample *s)
{
	uint64_t h = hash_bytes(0, text, len);
	struct group *first = idmap__find_ptr(&g->by_hash, h), *e;
	const char *t;
	int err;

	for (e = first; e; e = e->next) {
		if (e->hash != h || e->len != len)
			continue;
		err = group__text(g, e, &g->scratch, &t);
		if (err)
			return err;
		if (memcmp(t, text, len) == 0) {
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
	e = arena__alloc(&g->mem, sizeof(*e));
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	if (!g->dropped && g->held + len + 1 > g->budget)
		groups__drop_texts(g);
	if (!g->dropped) {
		e->text = arena__alloc(&g->texts, len + 1);
		if (!e->text)
			return -ENOMEM;
		memcpy(e->text, text, len);
		e->text[len] = '\0';
		g->held += len + 1;
	}
	e->len = len;
	e->hash = h;
	e->seq = g->n;
	e->r = r;
	e->s = s;
	e->value[i] = value;
	e->next = first;
	if (idmap__set_ptr(&g->by_hash, h, e))
		return -ENOMEM;
	g->all[g->n++] = e;
	return 0;
}

int group__cmp_text(const struct group *x, const struct group *y)
{
	if (x->text && y->text)
		return strcmp(x->text, y->text);
	/* Texts dropped: an order fixed by the texts all the same. */
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	if (x->value[0] != y->value[0])
		return x->value[0] < y->value[0] ? -1 : 1;
	return group__cmp_text(x, y);
}

struct group_key {
	uint64_t value;
	struct group *g;
};

/* By text with strsort() (group_cmp()'s qsort() spent most of a big report's
 * sort in strcmp() of the prefixes that stacks share), then by value with a
 * stable radix sort: value first, text second, as group_cmp().  Texts hold
 * no NUL (rendered escaped), so strsort()'s order is strcmp()'s. */
static int groups__sort_held(struct groups *g)
{
	struct strsort_item *items = malloc(g->n * sizeof(*items));
	struct group_key *keys = malloc(g->n * sizeof(*keys));
	size_t i;

	if (!items || !keys)
		goto fail;
	for (i = 0; i < g->n; i++)
		items[i] = (struct strsort_item){ g->all[i]->text, g->all[i]->len, g->all[i], 0 };
	strsort(items, g->n);
	for (i = 0; i < g->n; i++) {
		struct group *e = items[i].owner;

		keys[i] = (struct group_key){ e->value[0], e };
	}
	free(items);
	items = NULL;
	if (radix_sort_u64((void **)&keys, g->n, sizeof(*keys), 0))
		goto fail;
	for (i = 0; i < g->n; i++)
		g->all[i] = keys[i].g;
	free(keys);
	return 0;
fail:
	free(items);
	free(keys);
	return -ENOMEM;
}

void groups__sort(struct groups *g)
{
	if (g->n < 2)
		return;
	if (!g->dropped && !groups__sort_held(g))
		return;
	qsort(g->all, g->n, sizeof(*g->all), group_cmp);
}

void groups__free(struct groups *g)
{
	arena__free(&g->mem);
	arena__free(&g->texts);
	free(g->all);
	idmap__release(&g->by_hash);
	strbuf__free(&g->scratch);
	memset(g, 0, sizeof(*g));
}

/* fprintf(f, "%s%s%llu%s") for a line per group: tens of thousands of
 * them, and printf's format parsing was most of writing them.  Two
 * unlocked writes a line (only this thread writes @f): the text, then
 * @sep, the value and @end put together. */
static void write_line(FILE *f, const char *text, size_t len, const char *sep, size_t nsep,
		       uint64_t v, const char *end, size_t nend)
{
	char tail[96], num[24], *p = num + sizeof(num);
	size_t nn;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	nn = (size_t)(num + sizeof(num) - p);
	fwrite_unlocked(text, 1, len, f);
	if (nsep + nn + nend <= sizeof(tail)) {
		memcpy(tail, sep, nsep);
		memcpy(tail + nsep, p, nn);
		memcpy(tail + nsep + nn, end, nend);
		fwrite_unlocked(tail, 1, nsep + nn + nend, f);
		return;
	}
	fwrite_unlocked(sep, 1, nsep, f);
	fwrite_unlocked(p, 1, nn, f);
	fwrite_unlocked(end, 1, nend, f);
}

/*
 * output__write_grouped() while the texts fit the budget: every sample's
 * text kept, sorted with strsort(), equal neighbours merged into one group
 * (their values summed), then ordered by value with a stable radix sort.
 * The same lines in the same order as the groups' path below, without a
 * hash of every text nor a table of them: most samples of a system-wide
 * capture are groups of their own, so the table was a miss per sample.
 * 1 when the texts outgrow @budget (nothing written), else 0 or -errno.
 */
static int write_sorted(const struct report *r, const struct output_opts *o, FILE *f,
			output_render_fn render, const char *sep, const char *end,
			uint64_t budget)
{
	struct strsort_item *items = malloc((r->nr_samples ? r->nr_samples : 1) * sizeof(*items));
	struct group_key *keys = malloc((r->nr_samples ? r->nr_samples : 1) * sizeof(*keys));
	size_t nsep = strlen(sep), nend = strlen(end), i, k;
	struct arena texts = { 0 };
	struct strbuf sb = { 0 };
	uint64_t held = 0;
	char *t;
	int err = -ENOMEM;

	if (!items || !keys)
		goto out;
	for (i = 0; i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		strbuf__reset(&sb);
		err = render(&sb, r, s, o);
		if (err)
			goto out;
		err = 1;
		held += sb.len + 1;
		if (held > budget)
			goto out;
		err = -ENOMEM;
		t = arena__alloc(&texts, sb.len + 1);
		if (!t)
			goto out;
		memcpy(t, strbuf__str(&sb), sb.len + 1);
		items[i] = (struct strsort_item){ t, sb.len, (void *)s, 0 };
	}
	strsort(items, r->nr_samples);
	/* keys[k].g: the index of the group's first item, kept in items[k]. */
	for (i = 0, k = 0; i < r->nr_samples; i++) {
		uint64_t v = sample_value(r, items[i].owner);

		if (k && items[k - 1].len == items[i].len &&
		    memcmp(items[k - 1].s, items[i].s, items[i].len) == 0) {
			keys[k - 1].value += v;
			continue;
		}
		items[k] = items[i];
		keys[k] = (struct group_key){ v, (struct group *)(uintptr_t)k };
		k++;
	}
	if (radix_sort_u64((void **)&keys, k, sizeof(*keys), 0))
		goto out;
	for (i = 0; i < k; i++) {
		const struct strsort_item *it = &items[(uintptr_t)keys[i].g];

		write_line(f, it->s, it->len, sep, nsep, out_value(r, keys[i].value), end, nend);
	}
	err = fflush(f) || ferror(f) ? -EIO : 0;
out:
	arena__free(&texts);
	strbuf__free(&sb);
	free(items);
	free(keys);
	return err;
}

/* ---- grouping by tokens ---- */

/* A piece, by its bytes: @end, a last piece (output_tokens.last_ends),
 * which orders as if nothing followed it, not the separator. */
struct token {
	const char *s;
	uint64_t hash;
	uint32_t len;
	uint32_t next;		/* the next piece of the same hash, 0: none */
	uint32_t end_twin;	/* the same bytes as a last piece, 0: none yet */
	uint32_t rank;		/* in the order of the pieces' bytes, from 1 */
	uint8_t end;
};

/* Piece numbers kept in sym_line.out_key (31 bits). */
#define TOKENS_MAX (1u << 30)

struct tokens {
	const struct output_tokens *spec;
	const struct output_opts *o;
	struct token *tok;	/* tok[0] unused: 0 is none */
	size_t n, cap;
	uint32_t *lens;		/* tok[i].len, apart: read once per piece */
	size_t caplens;
	/* Each piece as before PIECE term, side by side (tokens__rank()):
	 * the texts are put together from these few KB, not from the
	 * symbolizer's results all over memory. */
	char *pieces;
	const char **piece;
	struct idmap by_hash;	/* hash -> first piece number */
	uint32_t *ids;		/* every sample's pieces, one after the other */
	size_t nids, capids;
	struct arena mem;	/* @ids and the other big arrays: huge pages
				 * (arena.c), not a 4 KiB fault each */
	struct sym_line **keyed;	/* lines whose out_key was set */
	size_t nkeyed, capkeyed;
	uint32_t unknown;	/* "[unknown]"'s number, 0: none yet */
	uint64_t held;		/* the texts' bytes, with their NULs (the
				 * pieces' own summed once they are all in) */
	size_t nb, na;		/* of spec->before, spec->after */
	size_t extra;		/* nb + na: a piece's bytes of text besides its own */
	struct arena texts;	/* pieces copied */
	struct strbuf tmp, scratch;
};

static uint32_t tokens__find(const struct tokens *tk, const char *s, size_t len, uint64_t h)
{
	uint64_t *v = idmap__find(&tk->by_hash, h);
	uint32_t i;

	for (i = v ? (uint32_t)*v : 0; i; i = tk->tok[i].next) {
		const struct token *t = &tk->tok[i];

		if (t->hash == h && t->len == len && !t->end && memcmp(t->s, s, len) == 0)
			return i;
	}
	return 0;
}

/* The number of the piece @s (@len bytes; copied unless @stable: it lives
 * as long as the report), a new one the first time.  0 when out of memory
 * or numbers. */
static uint32_t tokens__intern(struct tokens *tk, const char *s, size_t len, int stable)
{
	uint64_t h = hash_bytes(0, s, len);
	uint32_t i = tokens__find(tk, s, len, h);
	uint64_t *first;
	char *copy;

	if (i)
		return i;
	if (len > UINT32_MAX || tk->n >= TOKENS_MAX ||
	    array__grow((void **)&tk->tok, &tk->cap, tk->n, sizeof(*tk->tok)) ||
	    array__grow((void **)&tk->lens, &tk->caplens, tk->n, sizeof(*tk->lens)))
		return 0;
	if (!stable) {
		copy = arena__alloc(&tk->texts, len + 1);
		if (!copy)
			return 0;
		memcpy(copy, s, len);
		s = copy;
	}
	first = idmap__find(&tk->by_hash, h);
	i = (uint32_t)tk->n++;
	tk->tok[i] = (struct token){ .s = s, .hash = h, .len = (uint32_t)len,
				     .next = first ? (uint32_t)*first : 0 };
	tk->lens[i] = (uint32_t)len;
	return idmap__set(&tk->by_hash, h, i) ? 0 : i;
}

/* Room for @n more pieces in tk->ids.  0 or -ENOMEM. */
static int tokens__reserve(struct tokens *tk, size_t n)
{
	size_t cap = tk->capids * 2 > tk->nids + n ? tk->capids * 2 : tk->nids + n;
	uint32_t *ids = arena__alloc(&tk->mem, cap * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	if (tk->nids)
		memcpy(ids, tk->ids, tk->nids * sizeof(*ids));
	tk->ids = ids;
	tk->capids = cap;
	return 0;
}

static inline int tokens__push(struct tokens *tk, uint32_t id)
{
	if (!id)
		return -ENOMEM;
	if (tk->nids == tk->capids && tokens__reserve(tk, 1024))
		return -ENOMEM;
	tk->ids[tk->nids++] = id;
	return 0;
}

int tokens__add(struct tokens *tk, const char *s, size_t len)
{
	return tokens__push(tk, tokens__intern(tk, s, len, 0));
}

struct strbuf *tokens__scratch(struct tokens *tk)
{
	strbuf__reset(&tk->scratch);
	return &tk->scratch;
}

/* A line's name, numbered once per line: a big report's million frame
 * lines are a few thousand lines of the symbolizer's.  A name that is not
 * plain is rendered (render_frame_line() of a frame that has the line,
 * @f, bare: the line's name alone). */
static int tokens__line(struct tokens *tk, struct sym_line *l, const struct rframe *f, uint32_t k)
{
	uint32_t id = l->out_key;
	int err;

	if (!id) {
		if (tk->nkeyed == tk->capkeyed &&
		    array__grow((void **)&tk->keyed, &tk->capkeyed, tk->nkeyed, sizeof(*tk->keyed)))
			return -ENOMEM;
		if (l->plain && l->name_len <= RENDER_NAME_MAX) {
			id = tokens__intern(tk, l->name, l->name_len, 1);
		} else {
			strbuf__reset(&tk->tmp);
			err = render_frame_line(&tk->tmp, f, k, tk->o, tk->spec->folded);
			if (err)
				return err;
			id = tokens__intern(tk, strbuf__str(&tk->tmp), tk->tmp.len, 0);
		}
		if (!id)
			return -ENOMEM;
		l->out_key = id;
		tk->keyed[tk->nkeyed++] = l;
	}
	return tokens__push(tk, id);
}

/* One of tokens__task_stacks()'s stacks: @st or its marker. */
static int task_stack(struct tokens *tk, stk_stack_ref ref, const struct rstack *st, int shown,
		      const char *missed, int root_first)
{
	if (shown && stack_missed(ref, st))
		return tokens__adds(tk, missed);
	return tokens__frames(tk, st, root_first);
}

int tokens__task_stacks(struct tokens *tk, const struct rtask *t, const struct output_opts *o,
			int root_first, const char *delim)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	int user_shown = !o->kernel_only, kernel_shown = !o->user_only, err;

	if (root_first)
		err = task_stack(tk, t->user_ref, t->user, user_shown, "[Missed User Stack]", 1);
	else
		err = task_stack(tk, t->kernel_ref, t->kernel, kernel_shown, "[Missed Kernel Stack]", 0);
	if (!err && need_delim && t->kernel_ref >= 0 && t->user_ref >= 0)
		err = tokens__adds(tk, delim);
	if (err)
		return err;
	if (root_first)
		return task_stack(tk, t->kernel_ref, t->kernel, kernel_shown, "[Missed Kernel Stack]", 1);
	return task_stack(tk, t->user_ref, t->user, user_shown, "[Missed User Stack]", 0);
}

int tokens__frames(struct tokens *tk, const struct rstack *st, int root_first)
{
	uint32_t i, j, n, k;
	int err = 0;

	if (!st)
		return 0;
	/* render_frames()'s cases, bare. */
	for (i = 0; !err && i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[root_first ? st->nr_frames - 1 - i : i];
		const struct sym_result *sym = rframe__sym(f);

		/* Most frames: a native one of one line, numbered before. */
		if (sym && sym->nr_lines == 1 && sym->lines[0].out_key &&
		    rframe__kind(f) != RFRAME_PYTHON && tk->nids < tk->capids) {
			tk->ids[tk->nids++] = sym->lines[0].out_key;
			continue;
		}
		if (!sym && rframe__kind(f) != RFRAME_PYTHON && !rframe__unwind_stop(f)) {
			if (!tk->unknown)
				tk->unknown = tokens__intern(tk, "[unknown]", 9, 1);
			err = tokens__push(tk, tk->unknown);
			continue;
		}
		n = rframe__nr_lines(f);
		for (j = 0; !err && j < n; j++) {
			k = root_first ? n - 1 - j : j;
			if (sym && rframe__kind(f) != RFRAME_PYTHON) {
				err = tokens__line(tk, &sym->lines[k], f, k);
				continue;
			}
			strbuf__reset(&tk->tmp);
			err = render_frame_line(&tk->tmp, f, k, tk->o, tk->spec->folded);
			err = err ?: tokens__add(tk, strbuf__str(&tk->tmp), tk->tmp.len);
		}
	}
	return err;
}

/* The last piece of a text: its twin that ends it.  0 or -ENOMEM. */
static int tokens__end_last(struct tokens *tk)
{
	uint32_t *id = &tk->ids[tk->nids - 1], twin = tk->tok[*id].end_twin;

	if (!twin) {
		if (tk->n >= TOKENS_MAX ||
		    array__grow((void **)&tk->tok, &tk->cap, tk->n, sizeof(*tk->tok)) ||
		    array__grow((void **)&tk->lens, &tk->caplens, tk->n, sizeof(*tk->lens)))
			return -ENOMEM;
		twin = (uint32_t)tk->n++;
		tk->lens[twin] = tk->lens[*id];
		tk->tok[twin] = tk->tok[*id];
		tk->tok[twin].next = 0;
		tk->tok[twin].end = 1;
		tk->tok[twin].end_twin = 0;
		tk->tok[*id].end_twin = twin;
	}
	*id = twin;
	return 0;
}

/* A group of samples with one text: the sum of their values, and the
 * pieces of the first. */
struct tokens_group {
	uint64_t value;
	const uint32_t *ids;
	size_t n;
};

/* Groups ahead whose pieces are loaded early. */
#define TOKENS_AHEAD 8

/* Bytes of lines put together before they are written. */
#define TOKENS_BLOCK (1u << 17)

/* write_line()'s @sep, @v and @end, appended.  0 or -ENOMEM. */
static int line_tail(struct strbuf *sb, const char *sep, size_t nsep, uint64_t v, const char *end,
		     size_t nend)
{
	char num[24], *p = num + sizeof(num);
	int err;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	err = strbuf__add(sb, sep, nsep);
	err = err ?: strbuf__add(sb, p, (size_t)(num + sizeof(num) - p));
	return err ?: strbuf__add(sb, end, nend);
}

/* Bytes copied a piece whatever its length, when it has no more: the
 * pieces' buffer and the text's have that much room past their ends. */
#define TOKENS_COPY 32

/* The text of pieces @ids[0..@n) appended to @sb: what the writer's render
 * function gives for the samples that have them.  0 or -ENOMEM. */
static int tokens__text(const struct tokens *tk, struct strbuf *sb, const uint32_t *ids, size_t n)
{
	size_t i, len = 0, k;
	const char *q;
	char *p;
	int err;

	for (i = 0; i < n; i++)
		len += tk->lens[ids[i]] + tk->extra;
	err = strbuf__grow(sb, len + TOKENS_COPY);
	if (err)
		return err;
	p = sb->buf + sb->len;
	for (i = 0; i < n; i++) {
		q = tk->piece[ids[i]];
		k = tk->lens[ids[i]] + tk->extra;
		if (!i && tk->spec->first_bare) {
			q += tk->nb;
			k -= tk->nb;
		}
		if (k <= TOKENS_COPY)
			memcpy(p, q, TOKENS_COPY);
		else
			memcpy(p, q, k);
		p += k;
	}
	*p = '\0';
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

/* tok[].rank: the pieces in the order of their bytes with what follows
 * each (the separator, or for a last piece nothing), as strcmp() orders
 * texts.  No piece with its separator starts another, so the order of
 * two texts is that of their first pieces that differ. */
static int tokens__rank(struct tokens *tk)
{
	struct strsort_item *items = malloc(tk->n * sizeof(*items));
	size_t i, sz = TOKENS_COPY;
	char *p;

	tk->piece = malloc(tk->n * sizeof(*tk->piece));
	if (!items || !tk->piece)
		goto fail;
	for (i = 1; i < tk->n; i++)
		sz += tk->nb + tk->tok[i].len + 1;
	tk->pieces = malloc(sz);
	if (!tk->pieces)
		goto fail;
	for (i = 1, p = tk->pieces; i < tk->n; i++) {
		const struct token *t = &tk->tok[i];

		tk->piece[i] = p;
		memcpy(p, tk->spec->before, tk->nb);
		p += tk->nb;
		memcpy(p, t->s, t->len);
		p[t->len] = tk->spec->term;
		items[i - 1] = (struct strsort_item){ p, t->len + !t->end, (void *)(uintptr_t)i, 0 };
		p += t->len + 1;
	}
	memset(p, 0, TOKENS_COPY);
	strsort(items, tk->n - 1);
	for (i = 0; i + 1 < tk->n; i++)
		tk->tok[(uintptr_t)items[i].owner].rank = (uint32_t)i + 1;
	free(items);
	return 0;
fail:
	free(items);
	return -ENOMEM;
}

/*
 * output__write_grouped() by the samples' tokens: as write_sorted(), with
 * each text's pieces' ranks for its text (a rank in a fixed number of
 * digits of base 255, none of them 0, so strsort() orders the digits as the
 * texts), and a group's text put together from its pieces as it is written
 * (rendering the groups' samples again, in that order, was twice as slow as
 * rendering them all in order: every frame a cache miss).  1 when a
 * sample's text cannot be said in tokens, 2 when the texts would outgrow
 * @budget (nothing written), else 0 or -errno.
 */
static int write_tokens(const struct report *r, const struct output_opts *o, FILE *f,
			const struct output_tokens *spec, const char *sep, const char *end,
			uint64_t budget)
{
	size_t n = r->nr_samples, nsep = strlen(sep), nend = strlen(end), i, k, w, est = 0;
	struct tokens tk = { .spec = spec, .o = o, .n = 1 };
	struct tokens_group *keys = NULL;
	struct strsort_item *items;
	unsigned char *digits;
	uint32_t *dig = NULL;
	struct strbuf sb = { 0 };
	uint64_t *vals;
	size_t *start;
	int err = -ENOMEM;

	if (o->addresses || o->lines || o->annotate)
		return 1;
	start = arena__alloc(&tk.mem, (n + 1) * sizeof(*start));
	vals = arena__alloc(&tk.mem, (n ? n : 1) * sizeof(*vals));
	items = arena__alloc(&tk.mem, (n ? n : 1) * sizeof(*items));
	keys = malloc((n ? n : 1) * sizeof(*keys));	/* radix_sort_u64() replaces it */
	if (!start || !vals || !items || !keys ||
	    array__grow((void **)&tk.tok, &tk.cap, 0, sizeof(*tk.tok)))
		goto out;
	/* Pieces: about a frame line each, and a few more a text. */
	for (i = 0; i < n; i++) {
		const struct rtask *t = &r->samples[i].task;

		est += (t->user ? t->user->nr_frames : 0) + (t->kernel ? t->kernel->nr_frames : 0) + 3;
	}
	if (tokens__reserve(&tk, est + est / 8))
		goto out;
	tk.nb = strlen(spec->before);
	tk.na = strlen(spec->after);
	tk.extra = tk.nb + tk.na;
	for (i = 0; i < n; i++) {
		start[i] = tk.nids;
		vals[i] = sample_value(r, &r->samples[i]);
		err = spec->fn(&tk, r, &r->samples[i], o);
		if (!err && spec->last_ends && tk.nids > start[i])
			err = tokens__end_last(&tk);
		if (err)
			goto out;
		tk.held += 1 - (spec->first_bare ? tk.nb : 0);
	}
	start[n] = tk.nids;
	for (i = 0; i < tk.nids; i++)
		tk.held += tk.lens[tk.ids[i]] + tk.extra;
	err = 2;
	if (tk.held > budget)
		goto out;
	err = tokens__rank(&tk);
	if (err)
		goto out;
	/* Digits a rank: ranks run 1..tk.n - 1. */
	w = tk.n - 1 <= 255 ? 1 : tk.n - 1 <= 255 * 255 ? 2 : tk.n - 1 <= 255 * 255 * 255 ? 3 : 4;
	err = -ENOMEM;
	/* Each piece's digits once (in the first @w of 4 bytes), then copied
	 * 4 bytes a piece in the samples' order, each copy's excess
	 * overwritten by the next (slack at the end): a piece is a load
	 * from 4 bytes a token, not a division per digit from a token's
	 * 40. */
	dig = malloc(tk.n * sizeof(*dig));
	digits = arena__alloc(&tk.mem, tk.nids * w + sizeof(*dig));
	if (!dig || !digits)
		goto out;
	for (i = 1; i < tk.n; i++) {
		unsigned char b[sizeof(*dig)] = { 0 };
		uint32_t v = tk.tok[i].rank - 1;

		for (k = w; k-- > 0; v /= 255)
			b[k] = (unsigned char)(1 + v % 255);
		memcpy(&dig[i], b, sizeof(b));
	}
	for (i = 0; i < tk.nids; i++)
		memcpy(digits + i * w, &dig[tk.ids[i]], sizeof(*dig));
	for (i = 0; i < n; i++)
		items[i] = (struct strsort_item){ (const char *)digits + start[i] * w,
						  (start[i + 1] - start[i]) * w, (void *)(uintptr_t)i, 0 };
	strsort(items, n);
	/* Equal neighbours merged: a group a text.  Then by value, the order
	 * of the texts kept among equal ones. */
	for (i = 0, k = 0; i < n; i++) {
		size_t x = (uintptr_t)items[i].owner;

		if (k && items[i - 1].len == items[i].len &&
		    memcmp(items[i - 1].s, items[i].s, items[i].len) == 0) {
			keys[k - 1].value += vals[x];
			continue;
		}
		keys[k++] = (struct tokens_group){ vals[x], tk.ids + start[x], start[x + 1] - start[x] };
	}
	if (radix_sort_u64((void **)&keys, k, sizeof(*keys), 0))
		goto out;
	/* The lines a block at a time: stdio writes a block that fills its
	 * buffer without copying it there.  Groups are at random in @tk.ids:
	 * a later one's pieces are loaded while this one is put together. */
	for (i = 0; i < k; i++) {
		if (i + TOKENS_AHEAD < k)
			__builtin_prefetch(keys[i + TOKENS_AHEAD].ids);
		err = tokens__text(&tk, &sb, keys[i].ids, keys[i].n);
		err = err ?: line_tail(&sb, sep, nsep, out_value(r, keys[i].value), end, nend);
		if (err)
			goto out;
		if (sb.len >= TOKENS_BLOCK) {
			fwrite_unlocked(sb.buf, 1, sb.len, f);
			strbuf__reset(&sb);
		}
	}
	fwrite_unlocked(sb.buf ? sb.buf : "", 1, sb.len, f);
	err = fflush(f) || ferror(f) ? -EIO : 0;
out:
	for (i = 0; i < tk.nkeyed; i++)
		tk.keyed[i]->out_key = 0;
	free(dig);
	free(tk.keyed);
	free(tk.tok);
	free(tk.lens);
	free(tk.pieces);
	free(tk.piece);
	arena__free(&tk.mem);
	idmap__release(&tk.by_hash);
	arena__free(&tk.texts);
	strbuf__free(&tk.tmp);
	strbuf__free(&tk.scratch);
	strbuf__free(&sb);
	free(keys);
	return err;
}

int output__write_grouped(const struct report *r, const struct output_opts *o, FILE *f,
			  output_render_fn render, const struct output_tokens *tokens,
			  const char *sep, const char *end)
{
	struct strbuf sb = { 0 };
	struct groups g = { 0 };
	const char *text;
	size_t i;
	int err = 0;

	g.budget = output__text_budget(r->cap ? r->cap->summary.file_size : 0);
	err = tokens ? write_tokens(r, o, f, tokens, sep, end, g.budget) : 1;
	if (err == 1)
		err = write_sorted(r, o, f, render, sep, end, g.budget);
	if (err <= 0)
		return err;
	g.render = render;
	g.o = o;
	/* A group per sample at most: no rehash on the way. */
	err = idmap__reserve(&g.by_hash, r->nr_samples);
	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		strbuf__reset(&sb);
		err = render(&sb, r, s, o);
		err = err ?: groups__add(&g, strbuf__str(&sb), sb.len, 0, sample_value(r, s), r, s);
	}
	if (!err) {
		groups__sort(&g);
		for (i = 0; !err && i < g.n; i++) {
			err = group__text(&g, g.all[i], &sb, &text);
			if (!err)
				write_line(f, text, g.all[i]->len, sep, strlen(sep),
					   out_value(r, g.all[i]->value[0]), end, strlen(end));
		}
		if (!err && (fflush(f) || ferror(f)))
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

/* A frame line of the common kind: @before, @len bytes of @name, @after,
 * with one test of room.  @pad holds @before and @after in 16-byte fields
 * (render_frames() checked they fit), copied whole into the slack the room
 * test leaves: fixed-size copies, not calls, for the few bytes around each
 * of a big report's million names. */
static inline int add_line(struct strbuf *sb, const char pad[2][16], size_t nb, const char *name,
			   size_t len, size_t na)
{
	char *p;

	if (sb->len + nb + len + na + 32 > sb->cap) {
		int err = strbuf__grow(sb, nb + len + na + 32);

		if (err)
			return err;
	}
	p = sb->buf + sb->len;
	memcpy(p, pad[0], 16);
	p += nb;
	memcpy(p, name, len);
	p += len;
	memcpy(p, pad[1], 16);
	p += na;
	*p = '\0';
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

int render_frames(struct strbuf *sb, const struct rstack *st, int root_first,
		  const struct output_opts *o, const char *before, const char *after,
		  int addresses, int folded)
{
	/* Measured once: a big report renders millions of frames. */
	size_t nb = strlen(before), na = strlen(after);
	/* A name alone, no address, file or mark: most frames of most reports. */
	int bare = !o->addresses && !o->lines && !o->annotate;
	char pad[2][16] = { { 0 } };
	uint32_t i, j, n;
	int err = 0;

	if (!st)
		return 0;
	if (nb < 16 && na < 16) {
		memcpy(pad[0], before, nb);
		memcpy(pad[1], after, na);
	} else {
		bare = 0;
	}
	for (i = 0; !err && i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[root_first ? st->nr_frames - 1 - i : i];

		/* render_frame_line()'s answer for a frame without a name
		 * that is no marker, as render_unknown() gives it. */
		if (bare && !rframe__sym(f) && rframe__kind(f) != RFRAME_PYTHON &&
		    !rframe__unwind_stop(f)) {
			err = add_line(sb, (const char (*)[16])pad, nb, "[unknown]", 9, na);
			continue;
		}
		n = rframe__nr_lines(f);
		for (j = 0; !err && j < n; j++) {
			const struct sym_line *l;

			/* render_frame_line()'s answer for a plain name that
			 * fits, without its tests. */
			if (bare && rframe__sym(f) && rframe__kind(f) != RFRAME_PYTHON) {
				l = &rframe__sym(f)->lines[root_first ? n - 1 - j : j];
				if (l->plain && l->name_len <= RENDER_NAME_MAX) {
					err = add_line(sb, (const char (*)[16])pad, nb, l->name,
						       l->name_len, na);
					continue;
				}
			}
			err = strbuf__add(sb, before, nb);
			if (!err && addresses && o->addresses)
				err = strbuf__addf(sb, "%016llx ", (unsigned long long)f->addr);
			err = err ?: render_frame_line(sb, f, root_first ? n - 1 - j : j, o, folded);
			if (!err && na)
				err = strbuf__add(sb, after, na);
		}
	}
	return err;
}
