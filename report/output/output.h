/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output.h - the reporter's output writers, chosen by name from one table
 * (a new format is one new out_*.c file plus one entry in output.c), and
 * the rendering helpers the text-like writers share.
 */
#ifndef STK_REPORT_OUTPUT_H
#define STK_REPORT_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "idmap.h"
#include "report.h"
#include "util.h"

/* A label for every pprof sample (--label KEY=VALUE). */
struct output_label {
	const char *key;
	const char *value;	/* "" drops a default label of that key */
};

#define OUTPUT_MAX_LABELS 64

struct output_opts {
	int delimited;		/* -d: "--" / "-" between kernel and user frames */
	int annotate;		/* -a: "_[k]" after kernel frame names */
	int addresses;		/* --addresses: addresses in text, [module+0xoff] for unknowns */
	int lines;		/* --lines: " (file:line)" after names */
	int user_only;		/* -U, as given to the pipeline */
	int kernel_only;	/* -K */
	int no_inline;		/* --no-inline: no inline frames were looked up */
	int inverted;		/* --inverted: svg as an icicle graph (root on top) */
	const char *title;	/* --title: svg title, NULL for the default */
	/* pprof: labels added to every sample, after the capture's own
	 * hostname and kernel_release (a key given here replaces those). */
	const struct output_label *labels;
	size_t nr_labels;	/* <= OUTPUT_MAX_LABELS */
	/* -f top: what a row is, its order, how many are printed (0: all). */
	int top_by;		/* enum funcs_by (funcs.h) */
	int top_sort;		/* enum funcs_sort */
	size_t top_n;
	/* --callers / --callees FUNC: the call tree of FUNC (text). */
	const char *tree_func;	/* NULL: none asked */
	int tree_callers;	/* 1 --callers, 0 --callees */
};

struct output_format {
	const char *name;
	int binary;		/* not for a terminal: needs -o or a pipe */
	/* Writes @r to @f.  Returns 0, -ENOMEM, or -EIO (write failed). */
	int (*write)(const struct report *r, const struct output_opts *o, FILE *f);
};

/*
 * An output stream that keeps the first write error: the report, diff and
 * info write through it, so a full disk or a closed pipe is told as it is
 * (ENOSPC, EPIPE), not as a generic EIO from ferror().  Every write after
 * the first failure fails too.
 */
struct outstream;

/*
 * outstream__open() - @path created or truncated (0666 & ~umask), or, for
 * NULL, standard output (its fd is not closed).  A file it created is
 * removed again by outstream__close() when writing failed, so a full disk
 * leaves no partial report.  Returns NULL with errno (the open() errno,
 * ENOMEM).
 */
struct outstream *outstream__open(const char *path);
/* The stream to write to; valid until outstream__close(). */
FILE *outstream__file(struct outstream *o);
/* The writer failed with @err (a -errno; 0 does nothing): outstream__close()
 * is to remove the file it created, a partial or empty report, and return
 * @err unless a write failed first. */
void outstream__fail(struct outstream *o, int err);
/* Flushes, closes and frees @o (accepts NULL).  Returns 0, or the first
 * write's (or close()'s) -errno, e.g. -ENOSPC, -EPIPE, or outstream__fail()'s;
 * then a file it created is removed. */
int outstream__close(struct outstream *o);

/* The format named @name, or NULL. */
const struct output_format *output_format__find(const char *name);
/* Names of all formats, "text|folded|...", for usage messages. */
const char *output_format__names(void);

int out_text__write(const struct report *r, const struct output_opts *o, FILE *f);
int out_folded__write(const struct report *r, const struct output_opts *o, FILE *f);
int out_pprof__write(const struct report *r, const struct output_opts *o, FILE *f);
int out_svg__write(const struct report *r, const struct output_opts *o, FILE *f);
int out_top__write(const struct report *r, const struct output_opts *o, FILE *f);
/* The call tree of o->tree_func (out_tree.c): as the writers, and
 * -ENOENT when no sample has that function. */
int out_tree__write(const struct report *r, const struct output_opts *o, FILE *f);

/* A value of -f top's columns appended to @sb, 10 wide: samples, or for
 * off-CPU captures ms of blocked time (from ns).  0 or -ENOMEM. */
int out_top__value(struct strbuf *sb, enum report_kind kind, uint64_t v);

/* The folded line of @s without its value (what -f folded prints before
 * the count), appended to @sb: diff renders stacks the same way.
 * 0 or -ENOMEM. */
int out_folded__render(struct strbuf *sb, const struct report *r, const struct rsample *s,
		       const struct output_opts *o);

/* ---- shared rendering ---- */

/*
 * render_frame_line() - append the display name of line @i (0 = innermost
 * inline) of frame @f: the demangled name, or "[unknown]" (with
 * --addresses "[module+0xoffset]"), then "_[k]" for kernel frames with -a
 * and " (file:line)" with --lines; a Python frame's "QUALNAME (FILE:LINE)"
 * always, a marker's text (rframe__marker()).  @folded: also replace ';' by ':'
 * (a folded line's separator), and with --addresses put the frame's
 * address first, "%016x " as text's column (folded, svg and diff frames
 * then read as text's lines); newlines always become spaces.
 * Returns 0 or -ENOMEM.
 */
int render_frame_line(struct strbuf *sb, const struct rframe *f, uint32_t i,
		      const struct output_opts *o, int folded);

/* Append @s with ';' -> ':' (if @folded) and newlines -> ' '. */
int render_clean(struct strbuf *sb, const char *s, int folded);

/*
 * Identical rendered stacks are merged and their values summed, then
 * sorted by value ascending, ties by text (as profile.py sorts, hottest
 * last; the tie order makes output deterministic).  A group has two sums:
 * the report's writers use value[0]; diff sums one a side (its rows, in
 * g->all's order of first sight, unsorted).
 *
 * The texts are held while they fit in g->budget bytes (SPEC.md §7.3:
 * a 1 KB capture of 1024-frame stacks renders to gigabytes).  Past it they
 * are all dropped: a group keeps the sample it was first rendered from,
 * and is rendered again to be compared or written (g->render), one line
 * at a time; ties are then ordered by a hash of the text, not the text.
 */
struct group {
	char *text;		/* NULL once the texts were dropped */
	size_t len;
	uint64_t hash;
	uint64_t value[2];
	size_t seq;		/* order of first sight */
	const struct report *r;	/* the sample it was first rendered from */
	const struct rsample *s;
	struct group *next;	/* same hash */
};

typedef int (*output_render_fn)(struct strbuf *sb, const struct report *r,
				const struct rsample *s, const struct output_opts *o);

struct groups {
	struct idmap by_hash;
	struct group **all;
	size_t n, cap;
	struct arena mem;	/* the groups */
	struct arena texts;	/* their texts, while held */
	size_t held;		/* bytes in @texts */
	uint64_t budget;	/* set before the first add: output__text_budget() */
	int dropped;		/* the texts were dropped */
	output_render_fn render;	/* set before the first add */
	const struct output_opts *o;
	struct strbuf scratch;
};

/* The texts output may hold for an input of @size bytes: 64 MiB + 32 x it. */
uint64_t output__text_budget(uint64_t size);

/* The most bytes one frame line's name renders to; longer ones end in
 * RENDER_CUT_MARK, so no line grows past a bound whatever the symbols. */
#define RENDER_NAME_MAX 4096
#define RENDER_CUT_MARK "[...]"

/*
 * render_clean_name() - a function's name @s (@len bytes, NUL-terminated
 * there) as render_clean() renders it (@plain: it needs nothing of that,
 * printed as is), at most RENDER_NAME_MAX bytes: past that cut between two
 * characters (never inside an escape) and ended with RENDER_CUT_MARK,
 * RENDER_NAME_MAX bytes in all (SPEC.md §7.3).  Every output's frame and
 * function names go through it.  Returns 0 or -ENOMEM.
 */
int render_clean_name(struct strbuf *sb, const char *s, size_t len, int plain, int folded);

/* @x and @y by text; once texts were dropped, by hash, length, first sight. */
int group__cmp_text(const struct group *x, const struct group *y);

/* The text of @e into @sb (held or rendered again), 0 or -ENOMEM. */
int group__text(struct groups *g, const struct group *e, struct strbuf *sb,
		const char **text);

/*
 * stack_missed() - 1 when the stack @ref names should be shown but is not
 * there ("[Missed User Stack]" as offcputime/offwaketime print): a stack
 * id whose frames are gone, or an error other than "none in this context"
 * (-EFAULT) or "not requested" (-ENOENT).
 */
int stack_missed(stk_stack_ref ref, const struct rstack *st);

/* The frame every output shows for the waker of an offwake row without
 * one (its wakeup was not seen: preempted while runnable, or woken before
 * the recording started), where offwaketime.py prints an empty name. */
#define NO_WAKER_FRAME "[no waker]"

/*
 * rtask__none() - 1 when @t is no task: the waker of an offwake row
 * without one, recorded as tgid 0, tid 0, an empty comm and no stacks
 * (SPEC.md, OFFC).  The idle task that an interrupt woke from is a task:
 * it has a comm ("swapper/N").
 */
int rtask__none(const struct rtask *t);

/*
 * render_frames() - append every frame line of @st (inline frames
 * included), root first when @root_first, each as @before, the address
 * (with --addresses, when @addresses), the name, then @after.  @folded
 * selects folded-safe names (see render_frame_line()).  0 or -ENOMEM.
 */
int render_frames(struct strbuf *sb, const struct rstack *st, int root_first,
		  const struct output_opts *o, const char *before, const char *after,
		  int addresses, int folded);

/*
 * Tokens: a writer's text of a sample cut into pieces at its separators
 * (text's lines between "    " and "\n", folded's frames between ';'),
 * each piece a number, the same for the same bytes.  A writer that can
 * say its text so groups and orders the samples without holding their
 * texts (output__write_grouped()): a system-wide report's are tens of MB
 * of fresh memory, its tokens a few.  The pieces hold no separator (a
 * name's ';' or newline is rendered as render_clean() does), so comparing
 * two token lists piece by piece orders them as their texts.
 */
struct tokens;

/* Adds @sample's tokens to @tk with the calls below: 0, -ENOMEM, or 1
 * when this sample's text cannot be said so (then every text is
 * rendered). */
typedef int (*output_tokens_fn)(struct tokens *tk, const struct report *r,
				const struct rsample *s, const struct output_opts *o);

/* A text is its pieces, each as @before PIECE @after, but the first one
 * without @before when @first_bare; @after is "" or the one byte @term.
 * The writer's render function makes the same bytes (the report's texts
 * are written from the pieces). */
struct output_tokens {
	output_tokens_fn fn;
	const char *before, *after;
	int first_bare;
	char term;		/* the byte after each piece (in the text) */
	int last_ends;		/* the last piece ends the text (folded: no
				 * ';' after it) */
	int folded;		/* the pieces' rendering (render_frame_line()) */
};

/* A piece of @len bytes at @s (copied when new).  0 or -ENOMEM. */
int tokens__add(struct tokens *tk, const char *s, size_t len);
static inline int tokens__adds(struct tokens *tk, const char *s)
{
	return tokens__add(tk, s, strlen(s));
}
/* An empty buffer the writer may render a piece into before
 * tokens__add(). */
struct strbuf *tokens__scratch(struct tokens *tk);
/* A piece per frame line of @st, as render_frames() renders them without
 * --addresses, --lines nor -a.  0 or -ENOMEM. */
int tokens__frames(struct tokens *tk, const struct rstack *st, int root_first);
/* tokens__task_stacks() - @t's two stacks as tokens, each or its "[Missed
 * ... Stack]" as @o shows them: user then kernel, roots first (@root_first,
 * folded's order), or kernel then user, leaves first (text's); @delim
 * between them when both are there and @o->delimited.  0 or -errno. */
int tokens__task_stacks(struct tokens *tk, const struct rtask *t, const struct output_opts *o,
			int root_first, const char *delim);

/*
 * output__write_grouped() - render every sample of @r into one text with
 * @render, merge samples whose texts are equal (summing their values), and
 * print the texts sorted by value, hottest last (profile.py's order), each
 * as TEXT @sep VALUE @end.  The text and folded writers are this with their
 * own renderer.  With @tokens (NULL: none), the samples are grouped and
 * ordered by their tokens, and each group's text put together from them
 * as it is written: the same bytes.  Returns 0, -ENOMEM, or -EIO when writing @f
 * failed.
 */
int output__write_grouped(const struct report *r, const struct output_opts *o, FILE *f,
			  output_render_fn render, const struct output_tokens *tokens,
			  const char *sep, const char *end);

/* Adds @value to value[@i] of the group of @text (@len bytes, rendered
 * from sample @s of @r with g->render), a new one the first time.
 * 0 or -ENOMEM. */
int groups__add(struct groups *g, const char *text, size_t len, int i, uint64_t value,
		const struct report *r, const struct rsample *s);
void groups__sort(struct groups *g);	/* by value[0]; then read g->all[0..n) */
void groups__free(struct groups *g);

static inline uint64_t out_value(const struct report *r, uint64_t v)
{
	return r->kind == REPORT_PROFILE ? v : v / 1000;
}

#endif
