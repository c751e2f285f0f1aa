// SPDX-License-Identifier: BSD-2-Clause
/*
 * The writers of stkreport diff (diff.h): the text table of the functions
 * that changed most, and FlameGraph's difffolded layout ("stack base new")
 * for differential flame graphs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "flame.h"
#include "textsafe.h"

/* A side's value as the table prints it: samples, or blocked ms. */
static int add_value(struct strbuf *sb, const struct diff_side *s, uint64_t v)
{
	if (s->kind == REPORT_PROFILE)
		return strbuf__addf(sb, " %10" PRIu64, v);
	return strbuf__addf(sb, " %10.1f", (double)v / 1e6);
}

static int func_line(struct strbuf *sb, const struct diff *d, const struct diff_func *fn)
{
	const struct diff_side *b = diff__side(d, DIFF_BASE), *n = diff__side(d, DIFF_NEW);
	int err;

	err = strbuf__addf(sb, "%+8.2f %7.2f%% %7.2f%%", fn->self_delta,
			   fn->self_pct[DIFF_BASE], fn->self_pct[DIFF_NEW]);
	err = err ?: add_value(sb, b, fn->self[DIFF_BASE]);
	err = err ?: add_value(sb, n, fn->self[DIFF_NEW]);
	err = err ?: strbuf__addf(sb, "  %+8.2f %7.2f%% %7.2f%%", fn->total_delta,
				  fn->total_pct[DIFF_BASE], fn->total_pct[DIFF_NEW]);
	err = err ?: add_value(sb, b, fn->total[DIFF_BASE]);
	err = err ?: add_value(sb, n, fn->total[DIFF_NEW]);
	err = err ?: strbuf__adds(sb, "  ");
	err = err ?: render_clean_name(sb, fn->name, strlen(fn->name), 0, 0);
	err = err ?: strbuf__adds(sb, " (");
	err = err ?: render_clean(sb, fn->module, 0);
	err = err ?: strbuf__adds(sb, ")\n");
	return err;
}

static int side_line(struct strbuf *sb, const struct diff *d, int i,
		     const struct diff_print_opts *o)
{
	const struct diff_side *s = diff__side(d, i);
	const char *kernel = capture__meta(s->r->cap, "kernel_release");
	double secs = (double)s->duration_ns / 1e9;
	int err;

	err = strbuf__addf(sb, "%-5s ", i == DIFF_BASE ? "base:" : "new:");
	err = err ?: strbuf__add_escaped(sb, o->paths[i], strlen(o->paths[i]));
	err = err ?: strbuf__addf(sb, ": %s, ", s->r->trace ? "trace" : report_kind__name(s->kind));
	if (err)
		return err;
	if (s->r->trace)
		err = strbuf__addf(sb, "%" PRIu64 " events", s->value);
	else if (s->kind == REPORT_PROFILE)
		err = strbuf__addf(sb, "%" PRIu64 " samples", s->value);
	else
		err = strbuf__addf(sb, "%" PRIu64 " blocking events, %.3f s blocked", s->events,
				   (double)s->value / 1e9);
	if (!err && s->duration_ns)
		err = strbuf__addf(sb, " in %.3f s", secs);
	else if (!err)
		err = strbuf__adds(sb, ", duration not recorded");
	if (!err && s->duration_ns && o->normalize == DIFF_NORM_TIME)
		err = s->kind == REPORT_PROFILE
			? strbuf__addf(sb, " (%.1f samples/s)", (double)s->value / secs)
			: strbuf__addf(sb, " (%.3f s blocked per s)", (double)s->value / 1e9 / secs);
	if (!err && s->frequency)
		err = strbuf__addf(sb, ", %" PRIu64 " Hz", s->frequency);
	if (!err && kernel) {
		err = strbuf__adds(sb, ", kernel ");
		err = err ?: strbuf__add_escaped(sb, kernel, strlen(kernel));
	}
	return err ?: strbuf__adds(sb, "\n");
}

int out_diff__text(const struct diff *d, const struct diff_print_opts *o, FILE *f)
{
	const struct diff_side *b = diff__side(d, DIFF_BASE);
	const char *unit = b->kind == REPORT_PROFILE ? "samples" : "blocked ms";
	const char *const *warn;
	const struct diff_func *fn;
	struct strbuf sb = { 0 };
	size_t i, n, nw;
	int err;

	fn = diff__funcs(d, &n);
	if (o->top && o->top < n)
		n = o->top;
	err = strbuf__addf(&sb, "# share: %s, in percent; change: new - base, in points; values: %s\n",
			   o->normalize == DIFF_NORM_TIME
			   ? (b->kind == REPORT_PROFILE ? "of one CPU (samples per second / frequency)"
							: "blocked time per second of recording")
			   : (b->kind == REPORT_PROFILE ? "of all samples" : "of all blocked time"),
			   unit);
	err = err ?: strbuf__addf(&sb, "%-8s %8s %8s %10s %10s  %-8s %8s %8s %10s %10s  %s\n",
				  "self", "base", "new", "base", "new",
				  "total", "base", "new", "base", "new", "function (module)");
	for (i = 0; !err && i < n; i++)
		err = func_line(&sb, d, &fn[i]);
	err = err ?: strbuf__adds(&sb, "\n");
	err = err ?: side_line(&sb, d, DIFF_BASE, o);
	err = err ?: side_line(&sb, d, DIFF_NEW, o);
	warn = diff__warnings(d, &nw);
	for (i = 0; !err && i < nw; i++) {
		err = strbuf__adds(&sb, "warning: ");
		err = err ?: strbuf__add_escaped(&sb, warn[i], strlen(warn[i]));
		err = err ?: strbuf__adds(&sb, "\n");
	}
	if (!err && (fputs(strbuf__str(&sb), f) == EOF || fflush(f) || ferror(f)))
		err = -EIO;
	strbuf__free(&sb);
	return err;
}

int out_diff__folded(struct diff *d, FILE *f)
{
	const struct diff_row *rows;
	struct strbuf sb = { 0 };
	const char *text;
	size_t i, n;
	int err = 0;

	rows = diff__rows(d, &n);
	for (i = 0; !err && i < n; i++) {
		err = diff__row_text(d, &rows[i], &sb, &text);
		if (!err)
			fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", text, rows[i].value[DIFF_BASE],
				rows[i].value[DIFF_NEW]);
	}
	strbuf__free(&sb);
	return err ?: (fflush(f) || ferror(f) ? -EIO : 0);
}

int out_diff__svg(struct diff *d, const char *title, int inverted, FILE *f)
{
	struct strbuf sb = { 0 };
	const char *text;
	int offcpu = diff__side(d, DIFF_NEW)->kind != REPORT_PROFILE;
	/* Off-CPU rows are in folded's microseconds; the graph wants ns. */
	uint64_t scale = offcpu ? 1000 : 1;
	struct flame_opts fo = {
		.sz = sizeof(fo),
		.unit = offcpu ? FLAME_NSEC : FLAME_SAMPLES,
		.palette = offcpu ? FLAME_PALETTE_OFFCPU : FLAME_PALETTE_CPU,
		.flags = FLAME_DIFF,
	};
	struct flame_svg_opts so = { .sz = sizeof(so), .title = title, .inverted = inverted };
	const struct diff_row *rows;
	struct flame *fl;
	size_t i, n;
	int err = 0;

	fl = flame__new(&fo);
	if (!fl)
		return -errno;
	rows = diff__rows(d, &n);
	for (i = 0; i < n && !err; i++) {
		err = diff__row_text(d, &rows[i], &sb, &text);
		err = err ?: flame__add_diff(fl, text, rows[i].value[DIFF_BASE] * scale,
					     rows[i].value[DIFF_NEW] * scale);
	}
	err = err ?: flame__write_svg(fl, &so, f);
	flame__free(fl);
	strbuf__free(&sb);
	return err;
}

/* The order of -f top: @how on NEW's values (names: base's too). */
struct top_ctx {
	enum funcs_sort how;
};

static int top_cmp(const void *a, const void *b, void *ctx)
{
	const struct diff_func *x = *(const struct diff_func *const *)a;
	const struct diff_func *y = *(const struct diff_func *const *)b;
	const struct top_ctx *k = ctx;
	uint64_t kx = 0, ky = 0, tx, ty;
	int c;

	if (k->how == FUNCS_SORT_SELF) {
		kx = x->self[DIFF_NEW];
		ky = y->self[DIFF_NEW];
	} else if (k->how == FUNCS_SORT_TOTAL) {
		kx = x->total[DIFF_NEW];
		ky = y->total[DIFF_NEW];
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	/* Then what BASE had, so functions gone from NEW stay in order. */
	tx = k->how == FUNCS_SORT_TOTAL ? x->total[DIFF_BASE] : x->self[DIFF_BASE];
	ty = k->how == FUNCS_SORT_TOTAL ? y->total[DIFF_BASE] : y->self[DIFF_BASE];
	if (k->how != FUNCS_SORT_NAME && tx != ty)
		return tx > ty ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

int out_diff__top(const struct diff *d, const struct diff_print_opts *o, FILE *f)
{
	const struct diff_side *b = diff__side(d, DIFF_BASE);
	struct top_ctx k = { o->sort };
	const struct diff_func *fn, **v;
	struct strbuf sb = { 0 };
	size_t i, n, shown;
	int err;

	fn = diff__funcs(d, &n);
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = &fn[i];
	qsort_r(v, n, sizeof(*v), top_cmp, &k);
	shown = o->top && o->top < n ? o->top : n;
	err = strbuf__addf(&sb, "# self and total per function, base and new; values: %s; change: new - base, in points of %s\n",
			   b->kind == REPORT_PROFILE ? "samples" : "off-CPU time, ms",
			   o->normalize == DIFF_NORM_TIME ? "the time-normalized share"
			   : b->kind == REPORT_PROFILE ? "the share of all samples"
			   : "the share of all blocked time");
	err = err ?: strbuf__addf(&sb, "%10s %10s %8s %10s %10s %8s  %s\n", "self base", "self new",
				  "change", "total base", "total new", "change", "function (module)");
	for (i = 0; !err && i < shown; i++) {
		err = out_top__value(&sb, b->kind, v[i]->self[DIFF_BASE]);
		err = err ?: strbuf__adds(&sb, " ");
		err = err ?: out_top__value(&sb, diff__side(d, DIFF_NEW)->kind, v[i]->self[DIFF_NEW]);
		err = err ?: strbuf__addf(&sb, " %+8.2f ", v[i]->self_delta);
		err = err ?: out_top__value(&sb, b->kind, v[i]->total[DIFF_BASE]);
		err = err ?: strbuf__adds(&sb, " ");
		err = err ?: out_top__value(&sb, diff__side(d, DIFF_NEW)->kind, v[i]->total[DIFF_NEW]);
		err = err ?: strbuf__addf(&sb, " %+8.2f  ", v[i]->total_delta);
		err = err ?: render_clean_name(&sb, v[i]->name, strlen(v[i]->name), 0, 0);
		err = err ?: strbuf__adds(&sb, " (");
		err = err ?: render_clean(&sb, v[i]->module, 0);
		err = err ?: strbuf__adds(&sb, ")\n");
	}
	err = err ?: strbuf__adds(&sb, "\n");
	err = err ?: side_line(&sb, d, DIFF_BASE, o);
	err = err ?: side_line(&sb, d, DIFF_NEW, o);
	if (!err && (fputs(strbuf__str(&sb), f) == EOF || fflush(f) || ferror(f)))
		err = -EIO;
	strbuf__free(&sb);
	free(v);
	return err;
}
