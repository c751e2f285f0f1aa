/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flame.h - the frame tree of a flame graph: stacks merged by frame name
 * from the root up (as flamegraph.pl merges folded lines), laid out in
 * pixels with the frames too narrow to draw merged into their callers, and
 * the colors of the frames.  flame.c builds and lays out the tree;
 * out_svg.c writes it as an interactive SVG (flame__write_svg()) and is
 * the `stkreport -f svg` writer.
 *
 * Two uses:
 *   - one capture: flame__add() (or flame__add_folded()) per stack with
 *     its value (samples, or blocked nanoseconds off-CPU);
 *   - a differential graph (`stkreport diff -f svg`): a flame made with
 *     FLAME_DIFF, fed flame__add_diff() per folded stack with its BASE and
 *     NEW values.  The shape is NEW's (widths are NEW's values; a stack
 *     only in BASE adds no width), each frame colored by the change of its
 *     share: red when its share of NEW's total is larger than its share of
 *     BASE's total, blue when smaller, white when equal; the strongest
 *     change in the graph gets the most saturated color.
 *
 * Typical use:
 *   struct flame *fl = flame__new(&(struct flame_opts){ .sz = sizeof(...),
 *                                 .flags = FLAME_DIFF });
 *   for each line "stack count_base count_new" of a difffolded file:
 *           flame__add_diff(fl, stack, count_base, count_new);
 *   flame__write_svg(fl, &(struct flame_svg_opts){ .sz = sizeof(...) }, f);
 *   flame__free(fl);
 */
#ifndef STK_REPORT_FLAME_H
#define STK_REPORT_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flame;

/* What a frame is; chooses its color family. */
enum flame_kind {
	FLAME_USER = 0,		/* a user-space function */
	FLAME_KERNEL,		/* a kernel function */
	FLAME_INLINED,		/* a function inlined into its caller (DWARF) */
	FLAME_MARKER,		/* not a function: [unknown], [Missed User Stack],
				 * [truncated], the "-"/"--" delimiters, the root */
	FLAME_COMM,		/* the task's comm, first frame of a stack */
	FLAME_PYTHON,		/* a Python function (a CPython frame) */
};
/* Or'ed into a kind: the frame belongs to the waker's stack (offwake). */
#define FLAME_WAKER 0x10
#define FLAME_KIND(k) ((k) & 0x0f)

enum flame_unit {
	FLAME_SAMPLES = 0,	/* values are sample counts */
	FLAME_NSEC,		/* values are nanoseconds (off-CPU time) */
};

enum flame_palette {
	FLAME_PALETTE_CPU = 0,	/* warm colors: red user, orange kernel, aqua
				 * inlined, green Python, gray markers */
	FLAME_PALETTE_OFFCPU,	/* blues (flamegraph.pl's off-CPU convention),
				 * Python teal; waker frames in purple */
};

#define FLAME_DIFF 0x1		/* flame_opts.flags: a differential graph */

struct flame_opts {
	size_t sz;			/* sizeof(struct flame_opts) */
	enum flame_unit unit;
	enum flame_palette palette;
	unsigned int flags;		/* FLAME_DIFF */
};

/* One frame of a stack given to flame__add(): @len bytes at @name (the
 * display text, already escaped by the project's rule), and its kind. */
struct flame_frame {
	const char *name;
	size_t len;
	unsigned int kind;		/* enum flame_kind | FLAME_WAKER */
};

/*
 * flame__new() - an empty tree (only its root, "all").
 * Returns NULL with errno ENOMEM, or EINVAL (@o NULL or @o->sz too small).
 */
struct flame *flame__new(const struct flame_opts *o);
void flame__free(struct flame *f);	/* accepts NULL */

/*
 * flame__add() - merge one stack, @n frames root first, with @value, into
 * @f.  Frames are the same node when their callers are and their names are
 * equal (the kind of the first one added is kept).  Names are copied.
 * Returns 0, -ENOMEM, or -EINVAL (a FLAME_DIFF flame: use flame__add_diff()).
 */
int flame__add(struct flame *f, const struct flame_frame *frames, size_t n, uint64_t value);

/*
 * flame__add_folded() - the same for a folded stack "a;b;c" (root first,
 * ';'-separated, no count).  The kinds come from the names as folded output
 * marks them: "_[k]" at the end (-a) a kernel frame, "_[i]" inlined,
 * "_[w]" a waker frame, a name in brackets ("[unknown]"...) or "-"/"--" a
 * marker, the first frame a comm; anything else a user frame.  After "--"
 * every frame is a waker frame (offwake layout).  Empty frames are kept as
 * empty names.  Returns 0, -ENOMEM or -EINVAL as flame__add().
 */
int flame__add_folded(struct flame *f, const char *folded_stack, uint64_t value);

/*
 * flame__add_diff() - for a FLAME_DIFF flame: merge the folded stack
 * @folded_stack (as flame__add_folded() reads it) with its value in the
 * base capture, @base, and in the new one, @new.  Widths come from @new;
 * colors from the shares of @base and @new (see flame__set_totals()).
 * Returns 0, -ENOMEM, or -EINVAL (@f is not a FLAME_DIFF flame).
 */
int flame__add_diff(struct flame *f, const char *folded_stack, uint64_t base, uint64_t new);

/*
 * flame__set_totals() - the totals the shares of a FLAME_DIFF flame are
 * normalized by (e.g. the recorded durations for --normalize=time).
 * Without it (or with 0) each side's total is the sum of its values added.
 */
void flame__set_totals(struct flame *f, uint64_t base_total, uint64_t new_total);

/* ---- layout ---- */

struct flame_layout_opts {
	size_t sz;			/* sizeof(struct flame_layout_opts) */
	double width;			/* px of the whole width (the root's) */
	double min_width;		/* frames narrower than this (px) are not
					 * drawn: merged into their callers */
	double frame_height;		/* px per stack level */
	double top;			/* px: y of the top level */
	double bottom;			/* px: y of the bottom level */
	int inverted;			/* root on top, an icicle graph */
};

/* A frame laid out; valid until the next flame__layout() or flame__free(). */
struct flame_rect {
	const char *name;		/* NUL-terminated display text */
	size_t len;
	unsigned int kind;		/* enum flame_kind | FLAME_WAKER */
	uint32_t depth;			/* 0: the root, "all" */
	uint64_t start;			/* value units left of it, from the root's left */
	uint64_t value;			/* its value, callees included (NEW's for diff) */
	uint64_t base;			/* FLAME_DIFF: BASE's value; else 0 */
	double delta;			/* FLAME_DIFF: share of NEW's total minus
					 * share of BASE's, in percentage points */
	double x, y, width;		/* px; x from the left of the root */
};

/*
 * flame__layout() - lay @f out: every frame whose width is at least
 * @o->min_width px, in depth-first order (a frame before its callees),
 * callees left to right by name (strcmp order, like flamegraph.pl).  The
 * root is always rect 0, also when the tree is empty (width 0 then).
 * Returns 0, -ENOMEM, or -EINVAL (bad @o).
 */
int flame__layout(struct flame *f, const struct flame_layout_opts *o);
size_t flame__nr_rects(const struct flame *f);
const struct flame_rect *flame__rect(const struct flame *f, size_t i);
/* Frames (value > 0) the last layout did not draw for being too narrow. */
size_t flame__nr_merged(const struct flame *f);
/* Deepest level among the drawn frames (0: only the root). */
uint32_t flame__max_depth(const struct flame *f);
/* The root's value (NEW's total for diff), and BASE's sum for diff. */
uint64_t flame__total(const struct flame *f);
uint64_t flame__base_total(const struct flame *f);
/* The flame's options, as given to flame__new(). */
const struct flame_opts *flame__opts(const struct flame *f);

/*
 * flame__color() - the fill color of @r as "#rrggbb" in @out (8 bytes):
 * derived from the frame's name by a fixed hash (the same name always gets
 * the same color, in every run), in the family of its kind and of the
 * flame's palette; for FLAME_DIFF flames, from r->delta (red grew, blue
 * shrank, white unchanged) scaled by the largest |delta| of the layout.
 */
void flame__color(const struct flame *f, const struct flame_rect *r, char out[8]);

/* ---- SVG (out_svg.c) ---- */

struct flame_svg_opts {
	size_t sz;			/* sizeof(struct flame_svg_opts) */
	const char *title;		/* NULL: "Flame Graph", "Off-CPU Time Flame
					 * Graph", "Differential Flame Graph" ... */
	const char *subtitle;		/* a second line under the title, or NULL */
	int inverted;			/* icicle: root on top */
	double width;			/* px of the image; 0: 1200 */
	double min_width;		/* px; 0: 0.1 */
};

/*
 * flame__write_svg() - write @f as a self-contained SVG document on @out:
 * one <g> per frame drawn, holding its name (n), value (v), start (s) and
 * for diff BASE's value (b) as attributes, a <rect> and, when it fits, a
 * <text> label; an inline script gives hover details, click to zoom,
 * "Reset Zoom", search (regular expression or substring, with the matched
 * share), and reads a URL fragment "#search=RE&zoom=A;B;C" (a folded
 * prefix of the frame to zoom into).  Every text is XML-escaped, and bytes
 * that are not printable text are shown as \xNN (format/stk_escape.h).
 * The frames merged for being narrower than the minimum width are told in
 * a line under the title.
 * Returns 0, -ENOMEM, -EINVAL (bad @o), or -EIO when writing @out failed.
 */
int flame__write_svg(struct flame *f, const struct flame_svg_opts *o, FILE *out);

#endif
