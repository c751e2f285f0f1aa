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

/* profile.py -f and offcputime -f (@offcpu): both mark missed stacks. */
static int folded_profile(struct strbuf *sb, const struct rsample *s, const struct output_opts *o)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const struct rtask *t = &s->task;
	int err;

	err = render_clean(sb, t->comm, 1);
	if (!err && !o->kernel_only && stack_missed(t->user_ref, t->user))
		err = strbuf__adds(sb, ";[Missed User Stack]");
	else if (!err)
		err = render_frames(sb, t->user, 1, o, ";", "", 0, 1);
	/* profile.py, offcputime: "-" only when both stack ids are ids. */
	if (!err && need_delim && t->kernel_ref >= 0 && t->user_ref >= 0)
		err = strbuf__adds(sb, ";-");
	if (!err && !o->user_only && stack_missed(t->kernel_ref, t->kernel))
		err = strbuf__adds(sb, ";[Missed Kernel Stack]");
	else if (!err)
		err = render_frames(sb, t->kernel, 1, o, ";", "", 0, 1);
	return err;
}

/* target root..leaf, "--", waker leaf..root, waker comm; or "[no waker]"
 * after the "--" (offwaketime -f ends such a line in an empty frame, which
 * flamegraph.pl's format does not allow). */
static int folded_offwake(struct strbuf *sb, const struct rsample *s, const struct output_opts *o)
{
	const struct rtask *w = s->waker, *t = &s->task;
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	int err;

	err = render_clean(sb, t->comm, 1);
	if (!err && !o->kernel_only) {
		if (stack_missed(t->user_ref, t->user))
			err = strbuf__addf(sb, ";[Missed User Stack] %lld", (long long)t->user_ref);
		else
			err = render_frames(sb, t->user, 1, o, ";", "", 0, 1);
	}
	if (!err && !o->user_only) {
		if (need_delim && t->kernel && t->user)
			err = strbuf__adds(sb, ";-");
		if (!err && stack_missed(t->kernel_ref, t->kernel))
			err = strbuf__adds(sb, ";[Missed Kernel Stack]");
		else if (!err)
			err = render_frames(sb, t->kernel, 1, o, ";", "", 0, 1);
	}
	err = err ?: strbuf__adds(sb, ";--");
	if (!err && rtask__none(w))
		return strbuf__adds(sb, ";" NO_WAKER_FRAME);
	if (!err && !o->user_only) {
		if (stack_missed(w->kernel_ref, w->kernel))
			err = strbuf__adds(sb, ";[Missed Kernel Stack]");
		else
			err = render_frames(sb, w->kernel, 0, o, ";", "", 0, 1);
	}
	if (!err && !o->kernel_only) {
		if (need_delim && w->user && w->kernel)
			err = strbuf__adds(sb, ";-");
		if (!err && stack_missed(w->user_ref, w->user))
			err = strbuf__adds(sb, ";[Missed User Stack]");
		else if (!err)
			err = render_frames(sb, w->user, 0, o, ";", "", 0, 1);
	}
	err = err ?: strbuf__adds(sb, ";");
	err = err ?: render_clean(sb, w->comm, 1);
	return err;
}

int out_folded__render(struct strbuf *sb, const struct report *r, const struct rsample *s,
		       const struct output_opts *o)
{
	if (r->kind == REPORT_OFFWAKE)
		return folded_offwake(sb, s, o);
	return folded_profile(sb, s, o);
}

/* folded_profile() in tokens (output.h): the comm, then its frames. */
static int folded_tokens(struct tokens *tk, const struct report *r, const struct rsample *s,
			 const struct output_opts *o)
{
	const struct rtask *t = &s->task;
	struct strbuf *sb;
	int err;

	if (r->kind == REPORT_OFFWAKE)
		return 1;
	sb = tokens__scratch(tk);
	err = render_clean(sb, t->comm, 1);
	err = err ?: tokens__add(tk, strbuf__str(sb), sb->len);
	return err ?: tokens__task_stacks(tk, t, o, 1, "-");
}

int out_folded__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	/* Pieces joined by ';', the last one ending the text. */
	static const struct output_tokens tokens = {
		.fn = folded_tokens, .before = ";", .after = "", .first_bare = 1, .term = ';',
		.last_ends = 1, .folded = 1,
	};

	return output__write_grouped(r, o, f, out_folded__render, &tokens, " ", "\n");
}
