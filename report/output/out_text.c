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

/*
 * profile.py / offcputime layout: a stack that was wanted but not taken
 * is [Missed Kernel Stack] / [Missed User Stack], as both print it.
 * offcputime (@offcpu) differs: it prints the thread id, not the process
 * id (its key is per thread).
 */
/* The task's line of a profile.py stack, between its "    " and "\n":
 * "-" in 16 columns, the comm, the process id (offcputime: the thread's).
 * "    %-16s " of "-", and " (%u": printf's format parsing was a fifth of
 * writing a big report. */
static int text_task_line(struct strbuf *sb, const struct rtask *t, int offcpu)
{
	int err;

	err = strbuf__adds(sb, "-                ");
	err = err ?: render_clean(sb, t->comm, 0);
	err = err ?: strbuf__adds(sb, " (");
	err = err ?: strbuf__add_u64(sb, offcpu ? t->tid : t->tgid);
	if (!err && t->ns_tgid)
		err = strbuf__addf(sb, ", ns pid %u", t->ns_tgid);
	err = err ?: strbuf__adds(sb, ")");
	return err;
}

static int text_profile(struct strbuf *sb, const struct rsample *s, const struct output_opts *o,
			int offcpu)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const struct rtask *t = &s->task;
	int err = 0;

	if (!o->user_only && stack_missed(t->kernel_ref, t->kernel))
		err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
	else
		err = render_frames(sb, t->kernel, 0, o, "    ", "\n", 1, 0);
	/* profile.py, offcputime: "--" only when both stack ids are ids. */
	if (!err && need_delim && t->kernel_ref >= 0 && t->user_ref >= 0)
		err = strbuf__adds(sb, "    --\n");
	if (!err && !o->kernel_only && stack_missed(t->user_ref, t->user))
		err = strbuf__adds(sb, "    [Missed User Stack]\n");
	else if (!err)
		err = render_frames(sb, t->user, 0, o, "    ", "\n", 1, 0);
	err = err ?: strbuf__adds(sb, "    ");
	err = err ?: text_task_line(sb, t, offcpu);
	err = err ?: strbuf__adds(sb, "\n");
	return err;
}

/* text_profile() in tokens (output.h): its lines without "    " and "\n". */
static int text_profile_tokens(struct tokens *tk, const struct rsample *s,
			       const struct output_opts *o, int offcpu)
{
	const struct rtask *t = &s->task;
	struct strbuf *sb;
	int err;

	err = tokens__task_stacks(tk, t, o, 0, "--");
	sb = tokens__scratch(tk);
	err = err ?: text_task_line(sb, t, offcpu);
	err = err ?: tokens__add(tk, strbuf__str(sb), sb->len);
	return err;
}

/* The end of a task line: its process's pid in its own PID namespace, when
 * the capture knows it differs (pidn). */
static int ns_pid(struct strbuf *sb, const struct rtask *t)
{
	if (t->ns_tgid)
		return strbuf__addf(sb, " (ns pid %u)\n", t->ns_tgid);
	return strbuf__adds(sb, "\n");
}

/* offwaketime.py layout: waker root..leaf, "--", target leaf..root. */
static int text_offwake(struct strbuf *sb, const struct rsample *s, const struct output_opts *o)
{
	const struct rtask *w = s->waker, *t = &s->task;
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	int err;

	err = strbuf__addf(sb, "    %-16s ", "waker:");
	if (!err && rtask__none(w)) {
		/* offwaketime.py prints an empty name and 0 */
		err = strbuf__adds(sb, NO_WAKER_FRAME "\n");
		goto target;
	}
	err = err ?: render_clean(sb, w->comm, 0);
	err = err ?: strbuf__addf(sb, " %u", w->tid);
	err = err ?: ns_pid(sb, w);
	if (!err && !o->kernel_only) {
		if (stack_missed(w->user_ref, w->user))
			err = strbuf__addf(sb, "    [Missed User Stack] %lld\n", (long long)w->user_ref);
		else
			err = render_frames(sb, w->user, 1, o, "    ", "\n", 1, 0);
	}
	if (!err && !o->user_only) {
		if (need_delim && w->user && w->kernel)
			err = strbuf__adds(sb, "    -\n");
		if (!err && stack_missed(w->kernel_ref, w->kernel))
			err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
		else if (!err)
			err = render_frames(sb, w->kernel, 1, o, "    ", "\n", 1, 0);
	}
target:
	err = err ?: strbuf__addf(sb, "    %-16s %s\n", "--", "--");
	if (!err && !o->user_only) {
		if (stack_missed(t->kernel_ref, t->kernel))
			err = strbuf__adds(sb, "    [Missed Kernel Stack]\n");
		else
			err = render_frames(sb, t->kernel, 0, o, "    ", "\n", 1, 0);
	}
	if (!err && !o->kernel_only) {
		if (need_delim && t->user && t->kernel)
			err = strbuf__adds(sb, "    -\n");
		if (!err && stack_missed(t->user_ref, t->user))
			err = strbuf__adds(sb, "    [Missed User Stack]\n");
		else if (!err)
			err = render_frames(sb, t->user, 0, o, "    ", "\n", 1, 0);
	}
	err = err ?: strbuf__addf(sb, "    %-16s ", "target:");
	err = err ?: render_clean(sb, t->comm, 0);
	err = err ?: strbuf__addf(sb, " %u", t->tid);
	err = err ?: ns_pid(sb, t);
	return err;
}

static int text_sample(struct strbuf *sb, const struct report *r, const struct rsample *s,
			 const struct output_opts *o)
{
	if (r->kind == REPORT_OFFWAKE)
		return text_offwake(sb, s, o);
	return text_profile(sb, s, o, r->kind == REPORT_OFFCPU);
}

static int text_tokens(struct tokens *tk, const struct report *r, const struct rsample *s,
		       const struct output_opts *o)
{
	if (r->kind == REPORT_OFFWAKE)
		return 1;
	return text_profile_tokens(tk, s, o, r->kind == REPORT_OFFCPU);
}

int out_text__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	/* A line is "    " PIECE "\n"; a text ends in its NUL. */
	static const struct output_tokens tokens = {
		.fn = text_tokens, .before = "    ", .after = "\n", .term = '\n',
	};

	return output__write_grouped(r, o, f, text_sample, &tokens, "        ", "\n\n");
}
