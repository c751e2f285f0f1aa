// SPDX-License-Identifier: BSD-2-Clause
/*
 * The diff model (report/ops/diff.c) on small captures written with libstk:
 * exact shares and changes, recursion counted once in a total, functions
 * matched by name when their addresses differ, normalization by time,
 * off-CPU values, the difffolded rows and the capture-level warnings; and
 * the per-function table (funcs.c) and call trees (calltree.c) under them.
 * Frames are kernel frames named by KSYM entries of the same capture, so
 * every expectation is a name, not an address.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "calltree.h"
#include "capture.h"
#include "diff.h"
#include "output.h"
#include "report.h"

#define K(n) (0xffffffff81000000ull + (n) * 0x1000ull)
#define EPS 1e-9

/* A stack of kernel frames, leaf first, and the samples it has. */
struct tstack {
	uint64_t frames[8];
	uint32_t n;
	uint64_t count;
	uint64_t blocked_ns;		/* > 0: an off-CPU row */
};

struct tcap {
	const struct stk_ksym *ksyms;
	size_t nr_ksyms;
	const struct stk_kv *meta;
	size_t nr_meta;
	const struct tstack *stacks;
	size_t nr_stacks;
};

static const struct stk_ksym syms_a[] = {
	{ K(0), 0x1000, 'T', "root", "" }, { K(1), 0x1000, 'T', "hot", "" },
	{ K(2), 0x1000, 'T', "cold", "" }, { K(3), 0x1000, 'T', "rec", "" },
};

/* The same functions at other addresses, as in another build. */
static const struct stk_ksym syms_b[] = {
	{ K(10), 0x1000, 'T', "cold", "" }, { K(11), 0x1000, 'T', "root", "" },
	{ K(12), 0x1000, 'T', "hot", "" }, { K(13), 0x1000, 'T', "rec", "" },
	{ K(14), 0x1000, 't', "hot", "mod" },
};

static struct capture *write_capture(const struct tcap *t)
{
	struct stk_stack st[16];
	struct stk_count rows[16];
	struct stk_offcpu offc[16];
	size_t i, nc = 0, no = 0;
	struct stk_writer *w;
	struct capture *c;
	char path[64];
	int fd;

	ck_assert_uint_le(t->nr_stacks, 16);
	snprintf(path, sizeof(path), "/tmp/check_diff.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	if (t->nr_meta)
		ck_assert_int_eq(stk_writer__add_meta(w, t->meta, t->nr_meta), 0);
	ck_assert_int_eq(stk_writer__add_ksyms(w, t->ksyms, t->nr_ksyms), 0);
	for (i = 0; i < t->nr_stacks; i++) {
		const struct tstack *s = &t->stacks[i];
		struct stk_task_stacks ts = {
			.tgid = 10, .tid = 10, .comm = "task", .user_stack = -EFAULT,
			.kernel_stack = (int64_t)i + 1,
		};

		st[i] = (struct stk_stack){ .id = i + 1, .nr_frames = s->n, .frames = s->frames };
		if (s->blocked_ns) {
			offc[no++] = (struct stk_offcpu){
				.target = ts, .count = s->count, .blocked_ns = s->blocked_ns,
				.waker = { .user_stack = -ENOENT, .kernel_stack = -ENOENT },
			};
		} else {
			rows[nc++] = (struct stk_count){
				.tgid = 10, .tid = 10, .comm = "task", .user_stack = -EFAULT,
				.kernel_stack = (int64_t)i + 1, .count = s->count,
			};
		}
	}
	ck_assert_int_eq(stk_writer__add_stacks(w, st, t->nr_stacks), 0);
	if (nc)
		ck_assert_int_eq(stk_writer__add_counts(w, 1, 2, rows, nc), 0);
	if (no)
		ck_assert_int_eq(stk_writer__add_offcpu(w, 1, 2, offc, no), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	c = capture__read(path);
	ck_assert_ptr_nonnull(c);
	unlink(path);
	return c;
}

/* Two reports and their diff, freed together. */
struct pair {
	struct report_opts ro;
	struct output_opts oo;
	struct capture *cap[2];
	struct report *r[2];
	struct diff *d;
};

static void pair_open(struct pair *p, const struct tcap *base, const struct tcap *new,
		      enum diff_normalize how)
{
	struct diff_opts o = { .sz = sizeof(o), .normalize = how };
	int i;

	memset(p, 0, sizeof(*p));
	p->ro = (struct report_opts){ .sz = sizeof(p->ro),
				      .sym = { .sz = sizeof(p->ro.sym), .system_debug_dir = "" } };
	p->cap[0] = write_capture(base);
	p->cap[1] = write_capture(new);
	for (i = 0; i < 2; i++) {
		p->r[i] = report__new(p->cap[i], &p->ro);
		ck_assert_ptr_nonnull(p->r[i]);
	}
	p->d = diff__new(p->r[0], p->r[1], &p->oo, &o);
}

static void pair_close(struct pair *p)
{
	int i;

	diff__free(p->d);
	for (i = 0; i < 2; i++) {
		report__free(p->r[i]);
		capture__free(p->cap[i]);
	}
}

static const struct diff_func *func(const struct diff *d, const char *name, const char *module)
{
	const struct diff_func *f;
	size_t i, n, found = 0, at = 0;

	f = diff__funcs(d, &n);
	for (i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0 && strcmp(f[i].module, module) == 0)
			found++, at = i;
	ck_assert_msg(found == 1, "%s (%s) found %zu times", name, module, found);
	return &f[at];
}

static const struct diff_row *row(const struct diff *d, const char *stack)
{
	const struct diff_row *r;
	size_t i, n;

	r = diff__rows(d, &n);
	for (i = 0; i < n; i++)
		if (strcmp(r[i].stack, stack) == 0)
			return &r[i];
	ck_abort_msg("no row %s", stack);
	return NULL;
}

#define ck_assert_near(a, b) ck_assert_msg((a) - (b) < EPS && (b) - (a) < EPS, \
					   "%s = %.12f, expected %.12f", #a, (double)(a), (double)(b))

/* base: hot 30, cold 70 (both under root); new: hot 60, cold 40. */
static const struct tstack split_base[] = {
	{ { K(1) + 8, K(0) + 8 }, 2, 30, 0 }, { { K(2) + 8, K(0) + 8 }, 2, 70, 0 },
};
static const struct tstack split_new[] = {
	{ { K(12) + 8, K(11) + 8 }, 2, 120, 0 }, { { K(10) + 8, K(11) + 8 }, 2, 80, 0 },
};

START_TEST(shares_and_changes_are_exact_points)
{
	const struct tcap b = { syms_a, 4, NULL, 0, split_base, 2 };
	const struct tcap n = { syms_b, 5, NULL, 0, split_new, 2 };
	const struct diff_func *f;
	const struct diff_func *all;
	struct pair p;
	size_t nf;

	pair_open(&p, &b, &n, DIFF_NORM_SAMPLES);
	ck_assert_ptr_nonnull(p.d);
	ck_assert_uint_eq(diff__side(p.d, DIFF_BASE)->value, 100);
	ck_assert_uint_eq(diff__side(p.d, DIFF_NEW)->value, 200);
	f = func(p.d, "hot", "[kernel]");
	ck_assert_uint_eq(f->self[0], 30);
	ck_assert_uint_eq(f->self[1], 120);
	ck_assert_near(f->self_pct[0], 30.0);
	ck_assert_near(f->self_pct[1], 60.0);
	ck_assert_near(f->self_delta, 30.0);
	ck_assert_near(f->total_delta, 30.0);
	f = func(p.d, "cold", "[kernel]");
	ck_assert_near(f->self_delta, -30.0);
	f = func(p.d, "root", "[kernel]");
	ck_assert_uint_eq(f->self[0], 0);
	ck_assert_uint_eq(f->total[0], 100);
	ck_assert_uint_eq(f->total[1], 200);
	ck_assert_near(f->total_delta, 0.0);
	/* Biggest change first; equal changes by name. */
	all = diff__funcs(p.d, &nf);
	ck_assert_uint_eq(nf, 3);
	ck_assert_str_eq(all[0].name, "cold");
	ck_assert_str_eq(all[1].name, "hot");
	ck_assert_str_eq(all[2].name, "root");
	pair_close(&p);
}
END_TEST

START_TEST(functions_match_by_name_across_addresses_and_rows_are_folded_stacks)
{
	const struct tcap b = { syms_a, 4, NULL, 0, split_base, 2 };
	const struct tcap n = { syms_b, 5, NULL, 0, split_new, 2 };
	static const struct tstack new_mod[] = {
		{ { K(14) + 8, K(11) + 8 }, 2, 50, 0 }, { { K(10) + 8, K(11) + 8 }, 2, 50, 0 },
	};
	const struct tcap m = { syms_b, 5, NULL, 0, new_mod, 2 };
	const struct diff_row *r;
	struct pair p;
	size_t nr;

	pair_open(&p, &b, &n, DIFF_NORM_SAMPLES);
	r = diff__rows(p.d, &nr);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(r[0].stack, "task;root;cold");
	ck_assert_uint_eq(r[0].value[0], 70);
	ck_assert_uint_eq(r[0].value[1], 80);
	ck_assert_str_eq(r[1].stack, "task;root;hot");
	ck_assert_uint_eq(r[1].value[0], 30);
	ck_assert_uint_eq(r[1].value[1], 120);
	pair_close(&p);

	/* A module's "hot" is another function than the kernel image's. */
	pair_open(&p, &b, &m, DIFF_NORM_SAMPLES);
	ck_assert_uint_eq(func(p.d, "hot", "[kernel]")->self[1], 0);
	ck_assert_uint_eq(func(p.d, "hot [mod]", "[kernel]")->self[0], 0);
	ck_assert_uint_eq(func(p.d, "hot [mod]", "[kernel]")->self[1], 50);
	ck_assert_uint_eq(row(p.d, "task;root;hot")->value[1], 0);
	ck_assert_uint_eq(row(p.d, "task;root;hot [mod]")->value[0], 0);
	ck_assert_uint_eq(row(p.d, "task;root;hot [mod]")->value[1], 50);
	pair_close(&p);
}
END_TEST

START_TEST(recursion_counts_once_in_total)
{
	/* rec -> root -> rec -> root (leaf first): rec and root twice each. */
	static const struct tstack s[] = {
		{ { K(3) + 8, K(0) + 8, K(3) + 8, K(0) + 8 }, 4, 10, 0 },
		{ { K(2) + 8, K(0) + 8 }, 2, 30, 0 },
	};
	const struct tcap b = { syms_a, 4, NULL, 0, s, 2 };
	const struct diff_func *f;
	struct pair p;

	pair_open(&p, &b, &b, DIFF_NORM_SAMPLES);
	f = func(p.d, "rec", "[kernel]");
	ck_assert_uint_eq(f->total[0], 10);
	ck_assert_uint_eq(f->self[0], 10);
	ck_assert_near(f->total_pct[0], 25.0);
	f = func(p.d, "root", "[kernel]");
	ck_assert_uint_eq(f->total[0], 40);
	ck_assert_near(f->total_pct[0], 100.0);
	ck_assert_near(f->total_delta, 0.0);
	pair_close(&p);
}
END_TEST

START_TEST(time_normalizes_by_duration_and_frequency)
{
	static const struct stk_kv m2[] = { { "mode", "profile" }, { "frequency", "100" },
					    { "duration_ns", "2000000000" } };
	static const struct stk_kv m4[] = { { "mode", "profile" }, { "frequency", "50" },
					    { "duration_ns", "4000000000" } };
	static const struct stk_kv nofreq[] = { { "mode", "profile" },
						{ "duration_ns", "4000000000" } };
	const struct tcap b = { syms_a, 4, m2, 3, split_base, 2 };
	const struct tcap n = { syms_b, 5, m4, 3, split_new, 2 };
	const struct tcap x = { syms_b, 5, nofreq, 2, split_new, 2 };
	const struct diff_func *f;
	struct pair p;

	/* base: 100 samples in 2 s at 100 Hz = 50% of a CPU, hot 15%;
	 * new: 200 samples in 4 s at 50 Hz = 100%, hot 120 -> 60%. */
	pair_open(&p, &b, &n, DIFF_NORM_TIME);
	ck_assert_ptr_nonnull(p.d);
	f = func(p.d, "hot", "[kernel]");
	ck_assert_near(f->self_pct[0], 15.0);
	ck_assert_near(f->self_pct[1], 60.0);
	ck_assert_near(f->self_delta, 45.0);
	f = func(p.d, "root", "[kernel]");
	ck_assert_near(f->total_pct[0], 50.0);
	ck_assert_near(f->total_pct[1], 100.0);
	pair_close(&p);

	pair_open(&p, &b, &x, DIFF_NORM_TIME);
	ck_assert_ptr_null(p.d);
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_int_eq(diff__normalizable(p.r[0], DIFF_NORM_TIME), 0);
	ck_assert_int_eq(diff__normalizable(p.r[1], DIFF_NORM_TIME), -ENODATA);
	ck_assert_int_eq(diff__normalizable(p.r[1], DIFF_NORM_SAMPLES), 0);
	pair_close(&p);
}
END_TEST

START_TEST(offcpu_compares_blocked_time_not_events)
{
	static const struct stk_kv off[] = { { "mode", "offcpu" }, { "duration_ns", "1000000000" } };
	/* base: hot blocked 100 ms in 1 event, cold 300 ms in 9 events. */
	static const struct tstack sb[] = {
		{ { K(1) + 8, K(0) + 8 }, 2, 1, 100000000 },
		{ { K(2) + 8, K(0) + 8 }, 2, 9, 300000000 },
	};
	static const struct tstack sn[] = {
		{ { K(12) + 8, K(11) + 8 }, 2, 9, 300000000 },
		{ { K(10) + 8, K(11) + 8 }, 2, 1, 100000000 },
	};
	const struct tcap b = { syms_a, 4, off, 2, sb, 2 };
	const struct tcap n = { syms_b, 5, off, 2, sn, 2 };
	const struct diff_func *f;
	struct pair p;

	pair_open(&p, &b, &n, DIFF_NORM_SAMPLES);
	ck_assert_int_eq(diff__side(p.d, DIFF_BASE)->kind, REPORT_OFFCPU);
	ck_assert_uint_eq(diff__side(p.d, DIFF_BASE)->value, 400000000);
	ck_assert_uint_eq(diff__side(p.d, DIFF_BASE)->events, 10);
	f = func(p.d, "hot", "[kernel]");
	ck_assert_uint_eq(f->self[0], 100000000);
	ck_assert_near(f->self_pct[0], 25.0);
	ck_assert_near(f->self_pct[1], 75.0);
	/* Folded rows in microseconds, as -f folded prints off-CPU stacks. */
	ck_assert_uint_eq(row(p.d, "task;root;hot")->value[0], 100000);
	ck_assert_uint_eq(row(p.d, "task;root;hot")->value[1], 300000);
	pair_close(&p);

	/* By time: blocked ns per ns of recording, in percent. */
	pair_open(&p, &b, &n, DIFF_NORM_TIME);
	f = func(p.d, "hot", "[kernel]");
	ck_assert_near(f->self_pct[0], 10.0);
	ck_assert_near(f->self_pct[1], 30.0);
	pair_close(&p);
}
END_TEST

START_TEST(warnings_name_different_kinds_frequencies_and_kernels)
{
	static const struct stk_kv mb[] = { { "mode", "profile" }, { "frequency", "99" },
					    { "kernel_release", "6.1.0" } };
	static const struct stk_kv mn[] = { { "mode", "profile" }, { "frequency", "199" },
					    { "kernel_release", "6.18.0" } };
	static const struct stk_kv mo[] = { { "mode", "offcpu" } };
	static const struct tstack so[] = { { { K(1) + 8 }, 1, 1, 5000 } };
	const struct tcap b = { syms_a, 4, mb, 3, split_base, 2 };
	const struct tcap n = { syms_b, 5, mn, 3, split_new, 2 };
	const struct tcap o = { syms_a, 4, mo, 1, so, 1 };
	const char *const *w;
	struct pair p;
	size_t nw;

	pair_open(&p, &b, &n, DIFF_NORM_SAMPLES);
	w = diff__warnings(p.d, &nw);
	ck_assert_uint_eq(nw, 2);
	ck_assert_str_eq(w[0], "different frequencies: base 99 Hz, new 199 Hz (0: not recorded)");
	ck_assert_str_eq(w[1], "different kernels: base 6.1.0, new 6.18.0");
	pair_close(&p);

	pair_open(&p, &b, &o, DIFF_NORM_SAMPLES);
	w = diff__warnings(p.d, &nw);
	ck_assert_uint_ge(nw, 1);
	ck_assert_str_eq(w[0], "different kinds: base is profile, new is offcpu; their shares measure different things");
	pair_close(&p);

	pair_open(&p, &b, &b, DIFF_NORM_SAMPLES);
	diff__warnings(p.d, &nw);
	ck_assert_uint_eq(nw, 0);
	pair_close(&p);
}
END_TEST

/* root -> hot x30, root -> rec -> rec -> rec x5 (syms_a). */
static const struct tstack views[] = {
	{ { K(1) + 8, K(0) + 8 }, 2, 30, 0 },
	{ { K(3) + 8, K(3) + 8, K(3) + 8, K(0) + 8 }, 4, 5, 0 },
};

static const struct func_stat *stat_of(struct funcs *fs, const char *name)
{
	struct func_stat *const *all;
	size_t i, n;

	all = funcs__all(fs, &n);
	for (i = 0; i < n; i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	ck_abort_msg("no row %s", name);
	return NULL;
}

START_TEST(top_self_total_and_order)
{
	const struct tcap t = { syms_a, 4, NULL, 0, views, 2 };
	const struct func_stat **sorted;
	const struct func_stat *f;
	struct pair p;
	struct funcs *fs;
	size_t i, n;

	pair_open(&p, &t, &t, DIFF_NORM_SAMPLES);
	fs = funcs__new(FUNCS_BY_FUNC);
	ck_assert_ptr_nonnull(fs);
	for (i = 0; i < p.r[0]->nr_samples; i++)
		ck_assert_int_eq(funcs__add(fs, 0, p.r[0], &p.r[0]->samples[i]), 0);
	f = stat_of(fs, "rec");
	ck_assert_uint_eq(f->self[0], 5);
	ck_assert_uint_eq(f->total[0], 5);	/* three frames, once */
	f = stat_of(fs, "root");
	ck_assert_uint_eq(f->self[0], 0);
	ck_assert_uint_eq(f->total[0], 35);
	ck_assert_str_eq(f->module, "[kernel]");
	ck_assert_int_eq(funcs__sorted(fs, FUNCS_SORT_SELF, 0, &sorted, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(sorted[0]->name, "hot");
	ck_assert_str_eq(sorted[1]->name, "rec");
	ck_assert_str_eq(sorted[2]->name, "root");
	free(sorted);
	ck_assert_int_eq(funcs__sorted(fs, FUNCS_SORT_TOTAL, 0, &sorted, &n), 0);
	ck_assert_str_eq(sorted[0]->name, "root");
	free(sorted);
	ck_assert_int_eq(funcs__sorted(fs, FUNCS_SORT_NAME, 0, &sorted, &n), 0);
	ck_assert_str_eq(sorted[0]->name, "hot");
	free(sorted);
	funcs__free(fs);
	fs = funcs__new(FUNCS_BY_PID);
	ck_assert_ptr_nonnull(fs);
	for (i = 0; i < p.r[0]->nr_samples; i++)
		ck_assert_int_eq(funcs__add(fs, 0, p.r[0], &p.r[0]->samples[i]), 0);
	f = stat_of(fs, "10");
	ck_assert_uint_eq(f->self[0], 35);
	ck_assert_uint_eq(f->total[0], 35);
	ck_assert_str_eq(f->module, "task");
	funcs__free(fs);
	pair_close(&p);
}
END_TEST

START_TEST(call_trees_count_each_sample_once)
{
	const struct tcap t = { syms_a, 4, NULL, 0, views, 2 };
	const struct calltree_node *root, *n;
	struct calltree *ct;
	struct pair p;

	pair_open(&p, &t, &t, DIFF_NORM_SAMPLES);
	/* Callees of root: hot 30, rec 5 -> rec 5 -> rec 5. */
	ct = calltree__new(p.r[0], "root", 0);
	ck_assert_ptr_nonnull(ct);
	ck_assert_uint_eq(calltree__total(ct), 35);
	root = calltree__roots(ct);
	ck_assert_ptr_nonnull(root);
	ck_assert_ptr_null(root->next);
	ck_assert_uint_eq(root->value, 35);
	for (n = root->child; n && strcmp(n->fn->name, "rec") != 0; n = n->next)
		;
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->value, 5);
	ck_assert_uint_eq(n->child->value, 5);
	ck_assert_str_eq(n->child->child->fn->name, "rec");
	ck_assert_uint_eq(n->child->child->self, 5);
	calltree__free(ct);
	/* Callers of rec: from its innermost frame, rec 5 <- rec <- rec <- root. */
	ct = calltree__new(p.r[0], "rec", 1);
	ck_assert_ptr_nonnull(ct);
	root = calltree__roots(ct);
	ck_assert_uint_eq(root->value, 5);
	ck_assert_str_eq(root->child->child->child->fn->name, "root");
	calltree__free(ct);
	/* A name no stack has: no root. */
	ct = calltree__new(p.r[0], "nosuch", 1);
	ck_assert_ptr_nonnull(ct);
	ck_assert_ptr_null(calltree__roots(ct));
	calltree__free(ct);
	pair_close(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");

	tcase_add_test(tc, shares_and_changes_are_exact_points);
	tcase_add_test(tc, functions_match_by_name_across_addresses_and_rows_are_folded_stacks);
	tcase_add_test(tc, recursion_counts_once_in_total);
	tcase_add_test(tc, time_normalizes_by_duration_and_frequency);
	tcase_add_test(tc, offcpu_compares_blocked_time_not_events);
	tcase_add_test(tc, warnings_name_different_kinds_frequencies_and_kernels);
	tcase_add_test(tc, top_self_total_and_order);
	tcase_add_test(tc, call_trees_count_each_sample_once);
	suite_add_tcase(s, tc);
	return check_run(s);
}
