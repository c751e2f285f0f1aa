// SPDX-License-Identifier: BSD-2-Clause
/*
 * Folded output, one line per unique stack, for flamegraph.pl and
 * speedscope: profile.py -f's layout (offcputime -f's for offcpu, value in
 * microseconds) and offwaketime -f's for offwake.  Lines that render the
 * same (e.g. two addresses in one function) are merged and their values
 * summed.  ';' inside a name becomes ':' and newlines become spaces, so a
 * name can never split a frame or a line.
 */
#include <errno.h>
#include <string.h>

#include "output.h"

static int folded_frames(struct strbuf *sb, const struct rstack *st, int root_first,
			 const struct output_opts *o)
{
	uint32_t i, j, n;
	int err = 0;

	if (!st)
		return 0;
	for (i = 0; !err && i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[root_first ? st->nr_frames - 1 - i : i];

		n = rframe__nr_lines(f);
		for (j = 0; !err && j < n; j++) {
			err = strbuf__adds(sb, ";");
			err = err ?: render_frame_line(sb, f, root_first ? n - 1 - j : j, o, 1);
		}
	}
	return err;
}

static int missed(stk_stack_ref ref, const struct rstack *st)
{
	if (ref >= 0)
		return !st;
	return ref != -EFAULT && ref != -ENOENT;
}

/* profile.py -f; offcputime -f (@offcpu) also marks missed stacks. */
static int folded_profile(struct strbuf *sb, const struct rsample *s, const struct output_opts *o,
			  int offcpu)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const struct rtask *t = &s->task;
	int err;

	err = render_clean(sb, t->comm, 1);
	if (!err && offcpu && !o->kernel_only && missed(t->user_ref, t->user))
		err = strbuf__adds(sb, ";[Missed User Stack]");
	else if (!err)
		err = folded_frames(sb, t->user, 1, o);
	/* offcputime: "-" only between two stacks that are both there. */
	if (!err && need_delim && t->kernel && t->kernel->nr_frames && (!offcpu || t->user))
		err = strbuf__adds(sb, ";-");
	if (!err && offcpu && !o->user_only && missed(t->kernel_ref, t->kernel))
		err = strbuf__adds(sb, ";[Missed Kernel Stack]");
	else if (!err)
		err = folded_frames(sb, t->kernel, 1, o);
	return err;
}

/* target root..leaf, "--", waker leaf..root, waker comm. */
static int folded_offwake(struct strbuf *sb, const struct rsample *s, const struct output_opts *o)
{
	const struct rtask *w = &s->waker, *t = &s->task;
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	int err;

	err = render_clean(sb, t->comm, 1);
	if (!err && !o->kernel_only) {
		if (missed(t->user_ref, t->user))
			err = strbuf__addf(sb, ";[Missed User Stack] %lld", (long long)t->user_ref);
		else
			err = folded_frames(sb, t->user, 1, o);
	}
	if (!err && !o->user_only) {
		if (need_delim && t->kernel && t->user)
			err = strbuf__adds(sb, ";-");
		if (!err && missed(t->kernel_ref, t->kernel))
			err = strbuf__adds(sb, ";[Missed Kernel Stack]");
		else if (!err)
			err = folded_frames(sb, t->kernel, 1, o);
	}
	err = err ?: strbuf__adds(sb, ";--");
	if (!err && !o->user_only) {
		if (missed(w->kernel_ref, w->kernel))
			err = strbuf__adds(sb, ";[Missed Kernel Stack]");
		else
			err = folded_frames(sb, w->kernel, 0, o);
	}
	if (!err && !o->kernel_only) {
		if (need_delim && w->user && w->kernel)
			err = strbuf__adds(sb, ";-");
		if (!err && missed(w->user_ref, w->user))
			err = strbuf__adds(sb, ";[Missed User Stack]");
		else if (!err)
			err = folded_frames(sb, w->user, 0, o);
	}
	err = err ?: strbuf__adds(sb, ";");
	err = err ?: render_clean(sb, w->comm, 1);
	return err;
}

static int folded_sample(struct strbuf *sb, const struct report *r, const struct rsample *s,
			 const struct output_opts *o)
{
	if (r->kind == REPORT_OFFWAKE)
		return folded_offwake(sb, s, o);
	return folded_profile(sb, s, o, r->kind == REPORT_OFFCPU);
}

int out_folded__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	return output__write_grouped(r, o, f, folded_sample, " ", "\n");
}
