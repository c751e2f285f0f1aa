// SPDX-License-Identifier: BSD-2-Clause
/*
 * Text output in BCC's layouts: profile.py's (and offcputime's) for
 * profile and offcpu captures, offwaketime.py's for offwake captures.
 * Stacks are printed in ascending order of their value, hottest last.
 * Unlike profile.py, addresses are only printed with --addresses (then as
 * profile.py prints them: "%016x name"); inline frames are lines of their own.
 */
#include <errno.h>
#include <string.h>

#include "output.h"

static int text_frames(struct strbuf *sb, const struct rstack *st, int root_first,
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
			err = strbuf__adds(sb, "    ");
			if (!err && o->addresses)
				err = strbuf__addf(sb, "%016llx ", (unsigned long long)f->addr);
			err = err ?: render_frame_line(sb, f, root_first ? n - 1 - j : j, o, 0);
			err = err ?: strbuf__adds(sb, "\n");
		}
	}
	return err;
}

static int has_frames(const struct rstack *st)
{
	return st && st->nr_frames;
}

/* offcputime / offwaketime: a stack that was wanted but not taken. */
static int missed(stk_stack_ref ref, const struct rstack *st)
{
	if (ref >= 0)
		return !st;
	return ref != -EFAULT && ref != -ENOENT;
}

/*
 * profile.py / offcputime layout.  offcputime (@offcpu) differs: it prints
 * the thread id, not the process id (its key is per thread), and marks a
 * missed stack with [Missed Kernel Stack] / [Missed User Stack].
 */
static int text_profile(struct strbuf *sb, const struct rsample *s, const struct output_opts *o,
			int offcpu)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const struct rtask *t = &s->task;
	int err = 0;

	if (offcpu && !o->user_only && missed(t->kernel_ref, t->kernel))
		err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
	else
		err = text_frames(sb, t->kernel, 0, o);
	/* offcputime: "--" only between two stacks that are both there. */
	if (!err && need_delim && has_frames(t->kernel) && (!offcpu || t->user))
		err = strbuf__adds(sb, "    --\n");
	if (!err && offcpu && !o->kernel_only && missed(t->user_ref, t->user))
		err = strbuf__adds(sb, "    [Missed User Stack]\n");
	else if (!err)
		err = text_frames(sb, t->user, 0, o);
	err = err ?: strbuf__addf(sb, "    %-16s ", "-");
	err = err ?: render_clean(sb, t->comm, 0);
	err = err ?: strbuf__addf(sb, " (%u)\n", offcpu ? t->tid : t->tgid);
	return err;
}

/* offwaketime.py layout: waker root..leaf, "--", target leaf..root. */
static int text_offwake(struct strbuf *sb, const struct rsample *s, const struct output_opts *o)
{
	const struct rtask *w = &s->waker, *t = &s->task;
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	int err;

	err = strbuf__addf(sb, "    %-16s ", "waker:");
	err = err ?: render_clean(sb, w->comm, 0);
	err = err ?: strbuf__addf(sb, " %u\n", w->tid);
	if (!err && !o->kernel_only) {
		if (missed(w->user_ref, w->user))
			err = strbuf__addf(sb, "    [Missed User Stack] %lld\n", (long long)w->user_ref);
		else
			err = text_frames(sb, w->user, 1, o);
	}
	if (!err && !o->user_only) {
		if (need_delim && w->user && w->kernel)
			err = strbuf__adds(sb, "    -\n");
		if (!err && missed(w->kernel_ref, w->kernel))
			err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
		else if (!err)
			err = text_frames(sb, w->kernel, 1, o);
	}
	err = err ?: strbuf__addf(sb, "    %-16s %s\n", "--", "--");
	if (!err && !o->user_only) {
		if (missed(t->kernel_ref, t->kernel))
			err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
		else
			err = text_frames(sb, t->kernel, 0, o);
	}
	if (!err && !o->kernel_only) {
		if (need_delim && t->user && t->kernel)
			err = strbuf__adds(sb, "    -\n");
		if (!err && missed(t->user_ref, t->user))
			err = strbuf__adds(sb, "    [Missed User Stack]\n");
		else if (!err)
			err = text_frames(sb, t->user, 0, o);
	}
	err = err ?: strbuf__addf(sb, "    %-16s ", "target:");
	err = err ?: render_clean(sb, t->comm, 0);
	err = err ?: strbuf__addf(sb, " %u\n", t->tid);
	return err;
}

static int text_sample(struct strbuf *sb, const struct report *r, const struct rsample *s,
			 const struct output_opts *o)
{
	if (r->kind == REPORT_OFFWAKE)
		return text_offwake(sb, s, o);
	return text_profile(sb, s, o, r->kind == REPORT_OFFCPU);
}

int out_text__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	return output__write_grouped(r, o, f, text_sample, "        ", "\n\n");
}
