// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge tests (report/ops/merge.c) on small captures written with libstk:
 * stacks re-interned by content, kernel data and embedded symbols
 * de-duplicated by build-id, rows kept per interval and aligned to the
 * output's start, self-merge doubling, and every refusal (kinds,
 * frequencies, kernel layouts, reused pids, -o naming an input).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "capture.h"
#include "merge.h"

#define SEC 1000000000ull
#define KBASE 0xffffffff81000000ull

static char dir[64];

struct cap_spec {
	const char *mode, *freq;
	uint64_t mono_start;
	uint64_t kbase;			/* 0: no KBID */
	uint8_t kbid;			/* first byte of the kernel build-id */
	uint32_t map_tgid;		/* 0: no MAPS */
	uint64_t map_start;
	int esym;			/* an ESYM chunk for build-id 0xee */
	const struct stk_stack *stacks;
	size_t nr_stacks;
	const struct stk_count *rows;	/* one CNTS chunk at [start+1 s, start+2 s] */
	size_t nr_rows;
	const struct stk_offcpu *offc;
	size_t nr_offc;
};

static const char *path_of(const char *name)
{
	static char buf[8][128];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void write_capture(const char *name, const struct cap_spec *c)
{
	struct stk_writer_opts o = { .sz = sizeof(o), .wall_start_ns = 1700000000 * SEC,
				     .mono_start_ns = c->mono_start };
	struct stk_kv meta[3];
	size_t nm = 0;
	struct stk_writer *w = stk_writer__open(path_of(name), &o);

	ck_assert_ptr_nonnull(w);
	if (c->mode)
		meta[nm++] = (struct stk_kv){ "mode", c->mode };
	if (c->freq)
		meta[nm++] = (struct stk_kv){ "frequency", c->freq };
	meta[nm++] = (struct stk_kv){ "duration_ns", "3000000000" };
	ck_assert_int_eq(stk_writer__add_meta(w, meta, nm), 0);
	if (c->kbase) {
		struct stk_kobj k = { .name = "[kernel.kallsyms]", .base = c->kbase, .size = 0x100000,
				      .build_id_size = 4, .build_id = { c->kbid, 1, 2, 3 } };
		struct stk_ksym s = { c->kbase, 0x1000, 'T', "kfunc", "" };

		ck_assert_int_eq(stk_writer__add_kobjs(w, &k, 1), 0);
		ck_assert_int_eq(stk_writer__add_ksyms(w, &s, 1), 0);
	}
	if (c->esym) {
		static const uint8_t bid[4] = { 0xee, 0xee, 0xee, 0xee };
		static const uint8_t blob[] = { STK_ESYM_ELF_IMAGE, 0x7f, 'E', 'L', 'F' };

		ck_assert_int_eq(stk_writer__add_esym(w, bid, 4, blob, sizeof(blob)), 0);
	}
	if (c->map_tgid) {
		struct stk_mapping m = { .start = c->map_start, .end = c->map_start + 0x1000,
					 .prot = 5, .path = "/usr/bin/app" };
		struct stk_proc_maps p = { .tgid = c->map_tgid, .comm = "app",
					   .time_ns = c->mono_start, .nr_mappings = 1, .mappings = &m };

		ck_assert_int_eq(stk_writer__add_maps(w, &p, 1), 0);
	}
	if (c->nr_stacks)
		ck_assert_int_eq(stk_writer__add_stacks(w, c->stacks, c->nr_stacks), 0);
	if (c->nr_rows)
		ck_assert_int_eq(stk_writer__add_counts(w, c->mono_start + SEC, c->mono_start + 2 * SEC,
							c->rows, c->nr_rows), 0);
	if (c->nr_offc)
		ck_assert_int_eq(stk_writer__add_offcpu(w, c->mono_start + SEC,
							c->mono_start + 2 * SEC, c->offc, c->nr_offc), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
}

static int merge2(const char *a, const char *b, const char *out, struct merge_result *res)
{
	const char *in[2] = { path_of(a), path_of(b) };

	return merge__captures(in, 2, path_of(out), res);
}

static const uint64_t f12[] = { 0x401000, 0x402000 }, f3[] = { 0x403000 }, f4[] = { 0x404000 };

/* A: id 5 = {1,2}, id 9 = {3}; B: the same stacks under other ids, and
 * one more. */
static const struct stk_stack stacks_a[] = { { 5, 2, f12 }, { 9, 1, f3 } };
static const struct stk_stack stacks_b[] = { { 1, 1, f3 }, { 2, 2, f12 }, { 3, 1, f4 } };
static const struct stk_count rows_a[] = {
	{ .tgid = 10, .tid = 10, .comm = "app", .user_stack = 5, .kernel_stack = -EFAULT, .count = 7 },
	{ .tgid = 10, .tid = 10, .comm = "app", .user_stack = 9, .kernel_stack = -EFAULT, .count = 1 },
};
static const struct stk_count rows_b[] = {
	{ .tgid = 10, .tid = 10, .comm = "app", .user_stack = 2, .kernel_stack = -EFAULT, .count = 3 },
	{ .tgid = 10, .tid = 10, .comm = "app", .user_stack = 3, .kernel_stack = -EFAULT, .count = 4 },
	{ .tgid = 10, .tid = 10, .comm = "app", .user_stack = 77, .kernel_stack = -EFAULT, .count = 2 },
};

static struct cap_spec spec_a(void)
{
	return (struct cap_spec){ .mode = "profile", .freq = "49", .mono_start = 100 * SEC,
				  .kbase = KBASE, .kbid = 0xaa, .map_tgid = 10, .map_start = 0x400000,
				  .esym = 1, .stacks = stacks_a, .nr_stacks = 2, .rows = rows_a,
				  .nr_rows = 2 };
}

static struct cap_spec spec_b(void)
{
	struct cap_spec b = spec_a();

	b.mono_start = 500 * SEC;
	b.stacks = stacks_b;
	b.nr_stacks = 3;
	b.rows = rows_b;
	b.nr_rows = 3;
	return b;
}

/* The count of the row of @c whose user stack has frames @f, or 0. */
static uint64_t count_of(const struct capture *c, const uint64_t *f, uint32_t n)
{
	const struct cap_segment *s = &c->segs[0];
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->nr_counts; i++) {
		const struct cap_stack *st;

		if (s->counts[i]->row.user_stack < 0)
			continue;
		st = cap_segment__stack(s, (uint64_t)s->counts[i]->row.user_stack);
		ck_assert_ptr_nonnull(st);
		if (st->nr_frames == n && memcmp(st->frames, f, n * sizeof(*f)) == 0)
			sum += s->counts[i]->row.count;
	}
	return sum;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_merge.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(stacks_reinterned_by_content)
{
	struct cap_spec a = spec_a(), b = spec_b();
	struct merge_result res;
	struct capture *c;

	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	ck_assert_int_eq(merge2("a.stk", "b.stk", "m.stk", &res), 0);
	ck_assert_uint_eq(res.sources, 2);
	ck_assert_uint_eq(res.stacks_in, 5);
	ck_assert_uint_eq(res.stacks_out, 3);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->nr_segs, 1);
	ck_assert_uint_eq(idmap__count(&c->segs[0].stacks), 3);
	/* A's id 5 and B's id 2 are one stack now: their rows are one key. */
	ck_assert_uint_eq(count_of(c, f12, 2), 10);
	ck_assert_uint_eq(count_of(c, f3, 1), 1);
	ck_assert_uint_eq(count_of(c, f4, 1), 4);
	ck_assert_str_eq(capture__meta(c, "mode"), "profile");
	ck_assert_str_eq(capture__meta(c, "frequency"), "49");
	ck_assert_str_eq(capture__meta(c, "duration_ns"), "6000000000");
	ck_assert_str_eq(capture__meta(c, "merged_sources"), "2");
	ck_assert_ptr_nonnull(strstr(capture__meta(c, "merged_from_1"), "/b.stk"));
	ck_assert_uint_eq(c->segs[0].info.mono_start_ns, 100 * SEC);
	capture__free(c);
}
END_TEST

START_TEST(undefined_stack_becomes_enoent)
{
	struct cap_spec a = spec_a(), b = spec_b();
	struct merge_result res;
	struct capture *c;
	size_t i, found = 0;

	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	ck_assert_int_eq(merge2("a.stk", "b.stk", "m.stk", &res), 0);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	for (i = 0; i < c->segs[0].nr_counts; i++)
		if (c->segs[0].counts[i]->row.user_stack == -ENOENT) {
			ck_assert_uint_eq(c->segs[0].counts[i]->row.count, 2);
			found++;
		}
	ck_assert_uint_eq(found, 1);
	capture__free(c);
}
END_TEST

START_TEST(intervals_aligned_to_the_output_start)
{
	struct cap_spec a = spec_a(), b = spec_b();
	struct merge_result res;
	struct stk_reader *r;
	struct stk_chunk ch;
	int n, rows = 0;

	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	ck_assert_int_eq(merge2("a.stk", "b.stk", "m.stk", &res), 0);
	ck_assert_uint_eq(res.row_chunks, 2);
	r = stk_reader__open(path_of("m.stk"));
	ck_assert_ptr_nonnull(r);
	while ((n = stk_reader__next(r, &ch)) > 0) {
		if (ch.type == STK_CHUNK_CNTS) {
			/* B started at 500 s: its interval moved to A's 100 s. */
			ck_assert_uint_eq(ch.t0_ns, 101 * SEC);
			ck_assert_uint_eq(ch.t1_ns, 102 * SEC);
			rows++;
		}
		if (ch.type == STK_CHUNK_MAPS) {
			/* One process, identical snapshots: written once. */
			ck_assert_uint_eq(ch.u.maps.n, 1);
			ck_assert_uint_eq(ch.u.maps.procs[0].time_ns, 100 * SEC);
		}
	}
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(rows, 2);
	stk_reader__close(r);
}
END_TEST

START_TEST(kernel_data_and_esym_deduplicated_by_build_id)
{
	struct cap_spec a = spec_a(), b = spec_b();
	struct merge_result res;
	struct capture *c;

	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	ck_assert_int_eq(merge2("a.stk", "b.stk", "m.stk", &res), 0);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->nr_kobjs, 1);
	ck_assert_uint_eq(c->kobjs[0].build_id[0], 0xaa);
	ck_assert_uint_eq(ksyms__count(c->ksyms), 1);
	ck_assert_uint_eq(c->nr_esyms, 1);
	ck_assert_uint_eq(c->segs[0].nr_maps, 1);
	capture__free(c);
}
END_TEST

START_TEST(self_merge_doubles)
{
	struct cap_spec a = spec_a();
	struct merge_result res;
	struct capture *c;

	write_capture("a.stk", &a);
	ck_assert_int_eq(merge2("a.stk", "a.stk", "m.stk", &res), 0);
	ck_assert_uint_eq(res.stacks_out, 2);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(count_of(c, f12, 2), 14);
	ck_assert_uint_eq(count_of(c, f3, 1), 2);
	ck_assert_uint_eq(idmap__count(&c->segs[0].stacks), 2);
	capture__free(c);
}
END_TEST

/*
 * A plugin reload (plugin_a, then plugin_b at its address), the same
 * frames under two ids (a recorder numbers a stack again after it forgot
 * it), one per interval: merging the capture with itself is no pid reuse,
 * and the re-interned rows of the two intervals stay apart, each resolved
 * in its own interval's snapshot, as in the capture alone.
 */
START_TEST(self_merge_of_a_plugin_reload_keeps_each_intervals_maps)
{
	static const uint64_t f[] = { 0x7f0000000010ull };
	const struct stk_stack st[] = { { 1, 1, f }, { 2, 1, f } };
	struct stk_writer_opts o = { .sz = sizeof(o), .wall_start_ns = 1700000000 * SEC,
				     .mono_start_ns = 100 * SEC };
	struct stk_kv meta[] = { { "mode", "profile" }, { "frequency", "49" } };
	const char *paths[] = { "/p/plugin_a.so", "/p/plugin_b.so" };
	struct merge_result res;
	struct stk_writer *w;
	struct capture *c;
	uint64_t got[2] = { 0, 0 };
	size_t i;

	w = stk_writer__open(path_of("p.stk"), &o);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, meta, 2), 0);
	ck_assert_int_eq(stk_writer__add_stacks(w, st, 2), 0);
	for (i = 0; i < 2; i++) {
		struct stk_mapping m = { .start = 0x7f0000000000ull, .end = 0x7f0000001000ull,
					 .prot = 5, .inode = i + 1, .path = paths[i] };
		struct stk_proc_maps p = { .tgid = 10, .comm = "app",
					   .time_ns = (101 + i) * SEC + 1,
					   .nr_mappings = 1, .mappings = &m };
		struct stk_count r = { .tgid = 10, .tid = 10, .comm = "app",
				       .user_stack = (int64_t)i + 1, .kernel_stack = -EFAULT,
				       .count = 5 + 2 * i };

		ck_assert_int_eq(stk_writer__add_maps(w, &p, 1), 0);
		ck_assert_int_eq(stk_writer__add_counts(w, (101 + i) * SEC, (102 + i) * SEC, &r, 1), 0);
	}
	ck_assert_int_eq(stk_writer__close(w), 0);
	ck_assert_int_eq(merge2("p.stk", "p.stk", "m.stk", &res), 0);
	ck_assert_uint_eq(res.stacks_out, 1);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	for (i = 0; i < c->segs[0].nr_counts; i++) {
		const struct cap_count *r = c->segs[0].counts[i];
		const struct cap_maps *m = cap_segment__maps(&c->segs[0], 10, "app", r->t1);

		ck_assert_ptr_nonnull(m);
		got[strcmp(m->mappings[0].path, paths[0]) == 0 ? 0 : 1] += r->row.count;
	}
	ck_assert_uint_eq(got[0], 10);
	ck_assert_uint_eq(got[1], 14);
	capture__free(c);
}
END_TEST

START_TEST(offcpu_self_merge_doubles_time)
{
	static const struct stk_offcpu o[] = { {
		.target = { 10, 10, "app", 5, -EFAULT }, .waker = { 0, 0, "", -ENOENT, -ENOENT },
		.count = 3, .blocked_ns = 1500,
	} };
	struct cap_spec a = spec_a();
	struct merge_result res;
	struct capture *c;

	a.mode = "offcpu";
	a.freq = NULL;
	a.rows = NULL;
	a.nr_rows = 0;
	a.offc = o;
	a.nr_offc = 1;
	write_capture("a.stk", &a);
	ck_assert_int_eq(merge2("a.stk", "a.stk", "m.stk", &res), 0);
	c = capture__read(path_of("m.stk"));
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->segs[0].nr_offc, 1);
	ck_assert_uint_eq(c->segs[0].offc[0]->row.count, 6);
	ck_assert_uint_eq(c->segs[0].offc[0]->row.blocked_ns, 3000);
	ck_assert_str_eq(capture__meta(c, "mode"), "offcpu");
	capture__free(c);
}
END_TEST

/* A refusal: @err, a message naming @what, and nothing at the output. */
static void refused(const char *a, const char *b, int err, const char *what)
{
	struct merge_result res;
	struct stat st;

	ck_assert_int_eq(merge2(a, b, "m.stk", &res), err);
	ck_assert_msg(strstr(res.msg, what), "message '%s' lacks '%s'", res.msg, what);
	ck_assert_int_eq(stat(path_of("m.stk"), &st), -1);
}

START_TEST(mixed_kinds_refused)
{
	static const struct stk_offcpu o[] = { {
		.target = { 10, 10, "app", 5, -EFAULT }, .waker = { 11, 11, "w", 9, -EFAULT },
		.count = 1, .blocked_ns = 10,
	} };
	struct cap_spec a = spec_a(), b = spec_a(), w = spec_a();

	b.mode = "offcpu";
	b.freq = NULL;
	w.mode = NULL;		/* offwake found from its rows: a waker stack */
	w.freq = NULL;
	w.nr_rows = 0;
	w.offc = o;
	w.nr_offc = 1;
	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	write_capture("w.stk", &w);
	refused("a.stk", "b.stk", -EINVAL, "is a profile capture");
	refused("b.stk", "w.stk", -EINVAL, "an offwake one: refusing to mix kinds");
}
END_TEST

START_TEST(different_frequencies_refused)
{
	struct cap_spec a = spec_a(), b = spec_b();

	b.freq = "99";
	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	refused("a.stk", "b.stk", -EINVAL, "at 99 Hz: refusing to merge");
}
END_TEST

START_TEST(other_kernel_layout_refused)
{
	struct cap_spec a = spec_a(), b = spec_b(), k = spec_b();

	b.kbase = KBASE + 0x200000;
	k.kbid = 0xbb;
	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	write_capture("k.stk", &k);
	refused("a.stk", "b.stk", -EINVAL, "kernel at different addresses");
	refused("a.stk", "k.stk", -EINVAL, "different kernels");
}
END_TEST

START_TEST(reused_pid_refused)
{
	struct cap_spec a = spec_a(), b = spec_b();

	b.map_start = 0x400800;	/* pid 10 with another mapping there */
	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	refused("a.stk", "b.stk", -EINVAL, "pid 10 is another process");
}
END_TEST

START_TEST(output_naming_an_input_refused)
{
	struct cap_spec a = spec_a(), b = spec_b();
	struct merge_result res;
	struct stat before, after;

	write_capture("a.stk", &a);
	write_capture("b.stk", &b);
	ck_assert_int_eq(stat(path_of("b.stk"), &before), 0);
	ck_assert_int_eq(merge2("a.stk", "b.stk", "b.stk", &res), -EINVAL);
	ck_assert_ptr_nonnull(strstr(res.msg, "is the input"));
	ck_assert_int_eq(stat(path_of("b.stk"), &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	ck_assert_uint_eq(before.st_size, after.st_size);
}
END_TEST

START_TEST(output_mode_0600)
{
	struct cap_spec a = spec_a();
	struct merge_result res;
	struct stat st;

	write_capture("a.stk", &a);
	umask(022);
	ck_assert_int_eq(merge2("a.stk", "a.stk", "m.stk", &res), 0);
	ck_assert_int_eq(stat(path_of("m.stk"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
}
END_TEST

static Suite *merge_suite(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("merge");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stacks_reinterned_by_content);
	tcase_add_test(tc, undefined_stack_becomes_enoent);
	tcase_add_test(tc, intervals_aligned_to_the_output_start);
	tcase_add_test(tc, kernel_data_and_esym_deduplicated_by_build_id);
	tcase_add_test(tc, self_merge_doubles);
	tcase_add_test(tc, offcpu_self_merge_doubles_time);
	tcase_add_test(tc, self_merge_of_a_plugin_reload_keeps_each_intervals_maps);
	tcase_add_test(tc, mixed_kinds_refused);
	tcase_add_test(tc, different_frequencies_refused);
	tcase_add_test(tc, other_kernel_layout_refused);
	tcase_add_test(tc, reused_pid_refused);
	tcase_add_test(tc, output_naming_an_input_refused);
	tcase_add_test(tc, output_mode_0600);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(merge_suite());
}
