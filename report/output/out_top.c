// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport -f top: the flat profile, one row per function (or binary,
 * process, thread, comm: --by) with its self and total value and share,
 * as perf report --no-children and pprof -top print them (funcs.h says
 * what self and total count).  Off-CPU values are time, in ms.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "funcs.h"
#include "output.h"
#include "textsafe.h"

int out_top__value(struct strbuf *sb, enum report_kind kind, uint64_t v)
{
	if (kind == REPORT_PROFILE)
		return strbuf__addf(sb, "%10" PRIu64, v);
	return strbuf__addf(sb, "%10.1f", (double)v / 1e6);
}

static double share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* The "#" lines: what was counted and what the columns mean. */
static int top_header(struct strbuf *sb, const struct report *r, uint64_t total, int by)
{
	const char *hz = capture__meta(r->cap, "frequency");
	const char *what = by == FUNCS_BY_DSO ? "a binary" : "a function";
	int err;

	if (r->kind == REPORT_PROFILE) {
		err = strbuf__addf(sb, "# %s: %" PRIu64 " samples", report_kind__name(r->kind), total);
		if (!err && hz && *hz) {
			err = strbuf__adds(sb, " at ");
			err = err ?: strbuf__add_escaped(sb, hz, strlen(hz));
			err = err ?: strbuf__adds(sb, " Hz");
		}
	} else {
		err = strbuf__addf(sb, "# %s: values are off-CPU time, ms: %.3f s blocked in %" PRIu64 " blocking events",
				   report_kind__name(r->kind), (double)total / 1e9, r->total_count);
	}
	if (!err && by >= FUNCS_BY_PID)
		return strbuf__adds(sb, "; per task, with its share\n");
	err = err ?: strbuf__addf(sb, "\n# self: %s where %s is the leaf; total: %s where it is in the stack, once per %s even when it recurses\n",
				  r->kind == REPORT_PROFILE ? "samples" : "time blocked", what,
				  r->kind == REPORT_PROFILE ? "samples" : "time blocked",
				  r->kind == REPORT_PROFILE ? "sample" : "event");
	return err;
}

static int top_row(struct strbuf *sb, const struct report *r, const struct func_stat *fn,
		   uint64_t total, int by)
{
	int err;

	err = out_top__value(sb, r->kind, fn->self[0]);
	err = err ?: strbuf__addf(sb, " %6.2f%%", share(fn->self[0], total));
	if (by < FUNCS_BY_PID) {
		err = err ?: out_top__value(sb, r->kind, fn->total[0]);
		err = err ?: strbuf__addf(sb, " %6.2f%%", share(fn->total[0], total));
	}
	err = err ?: strbuf__adds(sb, "  ");
	err = err ?: render_clean_name(sb, fn->name, strlen(fn->name), 0, 0);
	if (!err && fn->module[0]) {
		err = strbuf__adds(sb, by == FUNCS_BY_FUNC ? " (" : " ");
		err = err ?: render_clean(sb, fn->module, 0);
		err = err ?: strbuf__adds(sb, by == FUNCS_BY_FUNC ? ")" : "");
	}
	return err ?: strbuf__adds(sb, "\n");
}

static const char *const key_names[] = {
	"function (module)", "binary", "pid comm", "tid comm", "comm",
};

int out_top__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	const struct func_stat **rows = NULL;
	struct strbuf sb = { 0 };
	struct funcs *fs;
	uint64_t total = 0;
	size_t i, n = 0;
	int err = 0;

	fs = funcs__new((enum funcs_by)o->top_by);
	if (!fs)
		return -errno;
	for (i = 0; !err && i < r->nr_samples; i++) {
		total += sample_value(r, &r->samples[i]);
		err = funcs__add(fs, 0, r, &r->samples[i]);
	}
	err = err ?: funcs__sorted(fs, (enum funcs_sort)o->top_sort, 0, &rows, &n);
	if (!err && o->top_n && o->top_n < n)
		n = o->top_n;
	err = err ?: top_header(&sb, r, total, o->top_by);
	if (!err && o->top_by >= FUNCS_BY_PID)
		err = strbuf__addf(&sb, "%10s %7s  %s\n", r->kind == REPORT_PROFILE ? "samples" : "ms",
				   "share", key_names[o->top_by]);
	else if (!err)
		err = strbuf__addf(&sb, "%10s %7s%10s %7s  %s\n", r->kind == REPORT_PROFILE ? "self"
				   : "self ms", "self%", r->kind == REPORT_PROFILE ? "total" : "total ms",
				   "total%", key_names[o->top_by]);
	for (i = 0; !err && i < n; i++) {
		err = top_row(&sb, r, rows[i], total, o->top_by);
		/* Flush as it goes: a system-wide capture has many rows. */
		if (!err && sb.len > 65536) {
			if (fwrite(sb.buf, 1, sb.len, f) != sb.len)
				err = -EIO;
			strbuf__reset(&sb);
		}
	}
	if (!err && (fwrite(strbuf__str(&sb), 1, sb.len, f) != sb.len || fflush(f) || ferror(f)))
		err = -EIO;
	strbuf__free(&sb);
	free(rows);
	funcs__free(fs);
	return err;
}
