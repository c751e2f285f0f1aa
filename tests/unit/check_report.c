// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pipeline tests (report/model/report.c): kernel fix-up, filters, missing-stack
 * accounting and capture kinds, on small captures written with libstk.
 * Kernel frames are resolved against KSYM entries in the same capture, so
 * every expectation is a symbol name, not an address.
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
#include "output.h"
#include "report.h"
#include "symbols_info.h"
#include "unwind_info.h"

#define K(n) (0xffffffff81000000ull + (n) * 0x1000ull)

static char path[64];

/* Kernel symbols k0..k9 at K(0)..K(9), one page each. */
static const struct stk_ksym ksyms[] = {
	{ K(0), 0x1000, 'T', "k0", "" }, { K(1), 0x1000, 'T', "k1", "" },
	{ K(2), 0x1000, 'T', "k2", "" }, { K(3), 0x1000, 'T', "k3", "" },
	{ K(4), 0x1000, 'T', "k4", "" }, { K(5), 0x1000, 't', "k5", "mod" },
};

/* A writer on a new temporary capture, named in @file (25 bytes or more). */
static struct stk_writer *capture_writer(char *file)
{
	struct stk_writer *w;
	int fd;

	strcpy(file, "/tmp/check_report.XXXXXX");
	fd = mkstemp(file);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Closes @w and reads the capture it wrote to @file, which it removes. */
static struct capture *capture_reread(struct stk_writer *w, const char *file)
{
	struct capture *c;

	ck_assert_int_eq(stk_writer__close(w), 0);
	c = capture__read(file);
	ck_assert_ptr_nonnull(c);
	unlink(file);
	return c;
}

/* Writes the kernel symbols k0..k5 and the stack @st. */
static void add_kernel_stack(struct stk_writer *w, const struct stk_stack *st)
{
	ck_assert_int_eq(stk_writer__add_ksyms(w, ksyms, sizeof(ksyms) / sizeof(ksyms[0])), 0);
	ck_assert_int_eq(stk_writer__add_stacks(w, st, 1), 0);
}

/* A capture with one kernel stack (leaf first) and one count row. */
static struct capture *capture_with(const uint64_t *frames, uint32_t n, uint64_t kip,
				    uint64_t kret, const struct stk_count *extra, size_t nextra)
{
	struct stk_stack st = { .id = 7, .nr_frames = n, .frames = frames };
	struct stk_count rows[8] = { {
		.tgid = 10, .tid = 11, .comm = "task", .user_stack = -EFAULT, .kernel_stack = 7,
		.kernel_ip = kip, .kernel_ret_ip = kret, .count = 5,
	} };
	struct stk_writer *w;
	struct capture *c;

	ck_assert_uint_le(nextra, 7);
	memcpy(rows + 1, extra, nextra * sizeof(*extra));
	w = capture_writer(path);
	add_kernel_stack(w, &st);
	ck_assert_int_eq(stk_writer__add_counts(w, 1, 2, rows, 1 + nextra), 0);
	c = capture_reread(w, path);
	return c;
}

static struct report *run(const struct capture *c, int skip)
{
	struct report_opts o = { .sz = sizeof(o), .kernel_skip = skip,
				 .sym = { .sz = sizeof(o.sym), .system_debug_dir = "" } };
	struct report *r = report__new(c, &o);

	ck_assert_ptr_nonnull(r);
	return r;
}

/* Kernel frame names of the first sample, leaf first, ';'-joined. */
static const char *kernel_names(const struct report *r)
{
	static char buf[256];
	const struct rstack *k;
	uint32_t i;

	buf[0] = '\0';
	ck_assert_uint_ge(r->nr_samples, 1);
	k = r->samples[0].task.kernel;
	if (!k)
		return "(none)";
	for (i = 0; i < k->nr_frames; i++) {
		const struct sym_result *s = rframe__sym(&k->frames[i]);

		if (i)
			strcat(buf, ";");
		strcat(buf, s ? s->lines[0].name : "?");
	}
	return buf;
}

START_TEST(stack_starting_at_interrupted_ip_is_kept_as_is)
{
	uint64_t f[] = { K(3) + 8, K(2) + 8, K(1) + 8 };
	struct capture *c = capture_with(f, 3, K(3) + 8, K(1) + 8, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k3;k2;k1");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(interrupt_frames_are_skipped_up_to_return_ip_and_ip_prepended)
{
	/* k0, k4: interrupt machinery; interrupted in k3, returning into k2. */
	uint64_t f[] = { K(0) + 8, K(4) + 8, K(2) + 8, K(1) + 8 };
	struct capture *c = capture_with(f, 4, K(3) + 8, K(2) + 8, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k3;k2;k1");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(return_ip_not_in_stack_keeps_every_frame_with_ip_first)
{
	uint64_t f[] = { K(0) + 8, K(2) + 8 };
	struct capture *c = capture_with(f, 2, K(3) + 8, K(4) + 8, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k3;k0;k2");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(fixed_skip_drops_n_frames_then_puts_the_ip_first)
{
	uint64_t f[] = { K(0) + 8, K(4) + 8, K(2) + 8, K(1) + 8 };
	struct capture *c = capture_with(f, 4, K(3) + 8, K(2) + 8, NULL, 0);
	struct report *r = run(c, 3);

	ck_assert_str_eq(kernel_names(r), "k3;k1");
	report__free(r);
	r = run(c, 1000);	/* more than the stack: only the IP */
	ck_assert_str_eq(kernel_names(r), "k3");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(no_interrupted_ip_means_no_fixup)
{
	uint64_t f[] = { K(0) + 8, K(2) + 8 };
	struct capture *c = capture_with(f, 2, 0, 0, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k0;k2");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(return_addresses_are_looked_up_at_pc_minus_1)
{
	/* A return address at the very start of k2 belongs to a call that
	 * ended k1; the leaf (the interrupted IP) is taken as it is. */
	uint64_t f[] = { K(3), K(2) };
	struct capture *c = capture_with(f, 2, K(3), 0, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k3;k1");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(module_symbols_carry_the_module_name)
{
	uint64_t f[] = { K(5) + 8 };
	struct capture *c = capture_with(f, 1, 0, 0, NULL, 0);
	struct report *r = run(c, 0);

	ck_assert_str_eq(kernel_names(r), "k5 [mod]");
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(missing_stacks_are_counted_as_profile_py_does)
{
	uint64_t f[] = { K(1) + 8 };
	struct stk_count extra[] = {
		/* kernel thread: EFAULT user stack is normal, not missing */
		{ .tgid = 1, .tid = 1, .comm = "kt", .user_stack = -EFAULT, .kernel_stack = 7, .count = 1 },
		/* a full map */
		{ .tgid = 2, .tid = 2, .comm = "a", .user_stack = -EEXIST, .kernel_stack = 7, .count = 1 },
		/* both missing: one stack trace, not two */
		{ .tgid = 3, .tid = 3, .comm = "b", .user_stack = -EINVAL, .kernel_stack = -EINVAL, .count = 1 },
		/* an id that is not in the file */
		{ .tgid = 4, .tid = 4, .comm = "c", .user_stack = 99, .kernel_stack = 7, .count = 1 },
	};
	struct capture *c = capture_with(f, 1, 0, 0, extra, 4);
	struct report *r = run(c, 0);

	ck_assert_uint_eq(r->nr_samples, 5);
	ck_assert_uint_eq(r->missing_stacks, 3);
	ck_assert_int_eq(r->missing_map_full, 1);
	ck_assert_uint_eq(r->total_count, 9);
	/* No "mode" in META: the kind comes from the chunks (CNTS). */
	ck_assert_ptr_null(capture__meta(c, "mode"));
	ck_assert_int_eq(r->kind, REPORT_PROFILE);
	report__free(r);
	capture__free(c);
}
END_TEST

START_TEST(filters_keep_only_matching_tasks)
{
	uint64_t f[] = { K(1) + 8 };
	struct stk_count extra[] = {
		{ .tgid = 20, .tid = 21, .comm = "other", .user_stack = -EFAULT, .kernel_stack = 7, .count = 2 },
		{ .tgid = 10, .tid = 12, .comm = "task", .user_stack = -EFAULT, .kernel_stack = 7, .count = 3 },
	};
	struct capture *c = capture_with(f, 1, 0, 0, extra, 2);
	uint32_t pid = 10, tid = 12;
	struct report_opts o = { .sz = sizeof(o), .sym = { .sz = sizeof(o.sym) } };
	struct report *r;

	o.pids = &pid;
	o.nr_pids = 1;
	r = report__new(c, &o);
	ck_assert_uint_eq(r->nr_samples, 2);
	ck_assert_uint_eq(r->total_count, 8);
	report__free(r);
	o.tids = &tid;
	o.nr_tids = 1;
	r = report__new(c, &o);
	ck_assert_uint_eq(r->nr_samples, 1);
	ck_assert_uint_eq(r->total_count, 3);
	report__free(r);
	o.nr_pids = o.nr_tids = 0;
	o.comm = "other";
	r = report__new(c, &o);
	ck_assert_uint_eq(r->nr_samples, 1);
	ck_assert_uint_eq(r->samples[0].task.tgid, 20);
	report__free(r);
	o.comm = NULL;
	o.kernel_only = o.user_only = 1;
	ck_assert_ptr_null(report__new(c, &o));
	ck_assert_int_eq(errno, EINVAL);
	capture__free(c);
}
END_TEST

START_TEST(folded_merges_identical_lines_and_sorts_hottest_last)
{
	uint64_t f[] = { K(1) + 8 };
	struct stk_count extra[] = {
		/* same rendering as the first row (another thread): merged */
		{ .tgid = 10, .tid = 12, .comm = "task", .user_stack = -EFAULT, .kernel_stack = 7, .count = 4 },
		{ .tgid = 30, .tid = 30, .comm = "x;y", .user_stack = -EFAULT, .kernel_stack = 7, .count = 6 },
	};
	struct capture *c = capture_with(f, 1, 0, 0, extra, 2);
	struct report *r = run(c, 0);
	struct output_opts oo = { .annotate = 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);

	ck_assert_int_eq(out_folded__write(r, &oo, mf), 0);
	fclose(mf);
	ck_assert_str_eq(buf, "x:y;k1_[k] 6\ntask;k1_[k] 9\n");
	free(buf);
	report__free(r);
	capture__free(c);
}
END_TEST

/* Counts of a crafted capture that sum past 2^64 are capped, not wrapped:
 * the capture's total is UINT64_MAX, and so is every sum made of it. */
START_TEST(counts_summing_past_2_64_saturate)
{
	uint64_t f[] = { K(1) + 8 };
	struct stk_count extra[] = {
		{ .tgid = 10, .tid = 11, .comm = "task", .user_stack = -EFAULT, .kernel_stack = 7,
		  .count = UINT64_MAX - 2 },
		{ .tgid = 30, .tid = 30, .comm = "other", .user_stack = -EFAULT, .kernel_stack = 7,
		  .count = 100 },
	};
	struct capture *c = capture_with(f, 1, 0, 0, extra, 2);
	struct report *r = run(c, 0);
	struct output_opts oo = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);

	ck_assert_int_eq(c->saturated, 1);
	ck_assert_uint_eq(c->total_count, UINT64_MAX);
	ck_assert_uint_eq(r->total_count, UINT64_MAX);
	ck_assert_int_eq(out_folded__write(r, &oo, mf), 0);
	fclose(mf);
	/* 5 + (2^64 - 3) = 2^64 - 3 + 5 capped: the first key holds all but
	 * what the total leaves, the last row gets nothing. */
	ck_assert_str_eq(buf, "other;k1 0\ntask;k1 18446744073709551615\n");
	free(buf);
	report__free(r);
	capture__free(c);
}
END_TEST

/* The snapshot index answers exactly what a scan of every snapshot does,
 * for many processes, comms and equal times (file order breaks ties). */
START_TEST(maps_index_matches_a_scan_of_every_snapshot)
{
	static const char *const comms[] = { "sh", "cc1", "ld", "worker" };
	enum { NR = 600 };
	struct stk_mapping map = { .start = 0x1000, .end = 0x2000, .prot = 5, .path = "/bin/x" };
	struct stk_proc_maps *procs = calloc(NR, sizeof(*procs));
	struct cap_segment plain;
	struct stk_writer *w;
	struct capture *c;
	uint64_t rng = 42;
	int i, q;

	for (i = 0; i < NR; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		procs[i].tgid = 1 + (rng >> 33) % 40;
		strcpy(procs[i].comm, comms[(rng >> 40) % 4]);
		procs[i].time_ns = 100 * ((rng >> 45) % 20);
		procs[i].nr_mappings = 1;
		procs[i].mappings = &map;
	}
	w = capture_writer(path);
	ck_assert_int_eq(stk_writer__add_maps(w, procs, NR / 2), 0);
	ck_assert_int_eq(stk_writer__add_maps(w, procs + NR / 2, NR / 2), 0);
	c = capture_reread(w, path);
	ck_assert_ptr_nonnull(c->segs[0].by_time);
	plain = c->segs[0];
	plain.by_time = plain.by_comm = NULL;
	for (q = 0; q < 20000; q++) {
		uint32_t tgid;
		const char *comm;
		uint64_t t;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		tgid = (rng >> 33) % 42;
		comm = (rng >> 40) % 5 == 4 ? NULL : comms[(rng >> 40) % 5];
		t = 50 * ((rng >> 45) % 45);
		ck_assert_ptr_eq(cap_segment__maps(&c->segs[0], tgid, comm, t),
				 cap_segment__maps(&plain, tgid, comm, t));
	}
	capture__free(c);
	free(procs);
}
END_TEST

/* KBID rows repeated across chunks are kept once per (name, base). */
START_TEST(kernel_objects_are_kept_once_per_name_and_base)
{
	struct stk_kobj objs[300];
	struct stk_writer *w;
	struct capture *c;
	char names[100][16];
	int i, k;

	for (i = 0; i < 300; i++) {
		snprintf(names[i % 100], sizeof(names[0]), "mod%d", i % 100);
		objs[i] = (struct stk_kobj){ .name = names[i % 100], .base = 0x1000 * (i % 150) };
	}
	w = capture_writer(path);
	for (k = 0; k < 3; k++)
		ck_assert_int_eq(stk_writer__add_kobjs(w, objs, 300), 0);
	c = capture_reread(w, path);
	/* (i % 100, i % 150) over i < 300: 300 distinct pairs (lcm 300). */
	ck_assert_uint_eq(c->nr_kobjs, 300);
	for (i = 0; i < 300; i++) {
		ck_assert_str_eq(c->kobjs[i].name, objs[i].name);
		ck_assert_uint_eq(c->kobjs[i].base, objs[i].base);
	}
	capture__free(c);
}
END_TEST

/* A small crafted file that would need far more memory than its size
 * allows (zstd'd zeros declaring 1024-frame stacks by the ten thousand)
 * is refused with one message, before it takes it all. */
START_TEST(capture_over_its_memory_budget_is_refused)
{
	enum { PER_CHUNK = 12000, CHUNKS = 4 };
	static uint64_t frames[STK_MAX_FRAMES];
	struct stk_stack *st = calloc(PER_CHUNK, sizeof(*st));
	struct stk_writer *w;
	struct capture *c;
	struct stat sb;
	int i, k;

	w = capture_writer(path);
	for (k = 0; k < CHUNKS; k++) {
		for (i = 0; i < PER_CHUNK; i++)
			st[i] = (struct stk_stack){ .id = (uint64_t)k * PER_CHUNK + i,
						    .nr_frames = STK_MAX_FRAMES, .frames = frames };
		ck_assert_int_eq(stk_writer__add_stacks(w, st, PER_CHUNK), 0);
	}
	ck_assert_int_eq(stk_writer__close(w), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	/* What it would hold is far over the budget for its size. */
	ck_assert_uint_gt((uint64_t)CHUNKS * PER_CHUNK * sizeof(frames),
			  CAPTURE_MEM_BASE + CAPTURE_MEM_PER_BYTE * (uint64_t)sb.st_size);
	errno = 0;
	c = capture__read(path);
	k = errno;
	unlink(path);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(k, EFBIG);
	ck_assert_ptr_nonnull(strstr(capture__errmsg(), "over the limit for a"));
	ck_assert_ptr_nonnull(strstr(capture__errmsg(), "(256 MiB + 128 x its size)"));
	free(st);
}
END_TEST

/* A process in another PID namespace: its pidn record gives the rows their
 * namespaced pid (the newest record by the interval's end, else the
 * oldest), which text shows beside the host pid; others show none. */
START_TEST(pid_namespace_records_name_the_namespaced_pid)
{
	static const struct stk_pid_ns pids[] = {
		{ .tgid = 10, .ns_tgid = 7, .time_ns = 1, .pid_ns = 4026532000u },
		{ .tgid = 10, .ns_tgid = 9, .time_ns = 500, .pid_ns = 4026532001u },
	};
	uint64_t f[] = { K(1) + 8 };
	struct stk_stack st = { .id = 7, .nr_frames = 1, .frames = f };
	struct stk_count rows[] = {
		{ .tgid = 10, .tid = 11, .comm = "task", .user_stack = -EFAULT, .kernel_stack = 7,
		  .count = 5 },
		{ .tgid = 30, .tid = 30, .comm = "host", .user_stack = -EFAULT, .kernel_stack = 7,
		  .count = 6 },
	};
	struct output_opts oo = { 0 };
	const struct cap_segment *seg;
	struct stk_writer *w;
	struct capture *c;
	struct report *r;
	uint64_t ino = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *mf;

	w = capture_writer(path);
	add_kernel_stack(w, &st);
	ck_assert_int_eq(stk_writer__add_pid_ns(w, pids, 2), 0);
	ck_assert_int_eq(stk_writer__add_counts(w, 1, 2, rows, 2), 0);
	c = capture_reread(w, path);
	seg = &c->segs[0];
	ck_assert_uint_eq(cap_segment__ns_tgid(seg, 10, 2, &ino), 7);
	ck_assert_uint_eq(ino, 4026532000u);
	ck_assert_uint_eq(cap_segment__ns_tgid(seg, 10, 600, &ino), 9);
	ck_assert_uint_eq(cap_segment__ns_tgid(seg, 10, 0, NULL), 7);
	ck_assert_uint_eq(cap_segment__ns_tgid(seg, 30, 600, &ino), 0);
	ck_assert_uint_eq(ino, 0);
	r = run(c, 0);
	ck_assert_uint_eq(r->nr_samples, 2);
	mf = open_memstream(&buf, &len);
	ck_assert_int_eq(out_text__write(r, &oo, mf), 0);
	fclose(mf);
	ck_assert_ptr_nonnull(strstr(buf, "    -                task (10, ns pid 7)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "    -                host (30)\n"));
	free(buf);
	report__free(r);
	capture__free(c);
}
END_TEST

/* A process that execs within an interval: its rows counted before the
 * exec carry the old comm and must get the old image's maps. */
START_TEST(maps_snapshot_follows_the_rows_comm_across_exec)
{
	struct stk_mapping sh_map = { .start = 0x1000, .end = 0x2000, .prot = 5, .path = "/bin/sh" };
	struct stk_mapping cc_map = { .start = 0x1000, .end = 0x3000, .prot = 5, .path = "/usr/bin/cc1" };
	struct stk_proc_maps procs[] = {
		{ .tgid = 10, .comm = "sh", .time_ns = 100, .nr_mappings = 1, .mappings = &sh_map },
		{ .tgid = 10, .comm = "cc1", .time_ns = 200, .nr_mappings = 1, .mappings = &cc_map },
	};
	const struct cap_segment *seg;
	struct stk_writer *w;
	struct capture *c;

	w = capture_writer(path);
	ck_assert_int_eq(stk_writer__add_maps(w, procs, 2), 0);
	c = capture_reread(w, path);
	ck_assert_uint_eq(c->nr_segs, 1);
	seg = &c->segs[0];
	/* both snapshots precede the interval end (300) */
	ck_assert_str_eq(cap_segment__maps(seg, 10, "sh", 300)->mappings[0].path, "/bin/sh");
	ck_assert_str_eq(cap_segment__maps(seg, 10, "cc1", 300)->mappings[0].path, "/usr/bin/cc1");
	/* a thread name no snapshot has: the newest snapshot, as before */
	ck_assert_str_eq(cap_segment__maps(seg, 10, "worker", 300)->mappings[0].path, "/usr/bin/cc1");
	/* a snapshot taken after the interval is not preferred for its comm */
	ck_assert_str_eq(cap_segment__maps(seg, 10, "cc1", 150)->mappings[0].path, "/bin/sh");
	ck_assert_ptr_null(cap_segment__maps(seg, 11, "sh", 300));
	capture__free(c);
}
END_TEST

START_TEST(kernel_symbol_aliases_at_one_address_cover_the_function)
{
	/* /proc/kallsyms names one address several times (__x64_sys_foo and
	 * __ia32_sys_foo).  --kallsyms gives no sizes, and stkrec
	 * --kallsyms=full writes 0 for every alias but the last: either way
	 * the address range up to the next symbol is the function's. */
	struct ksyms *k = ksyms__new();
	const struct sym_result *s;

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 0, "b_alias", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 0, "a_alias", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x2000, 0, 0, "next", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x3000, 0, 0, "c_alias", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x3000, 0x80, 0, "d_sized", NULL), 0);
	s = ksyms__lookup(k, 0x1010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->lines[0].name, "b_alias");
	s = ksyms__lookup(k, 0x1fff);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->lines[0].name, "b_alias");
	s = ksyms__lookup(k, 0x3010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->lines[0].name, "c_alias");
	ck_assert_ptr_null(ksyms__lookup(k, 0x3080));
	ksyms__free(k);
}
END_TEST

/* Of a captured function's aliases (--kallsyms=full writes them all, in
 * the order /proc/kallsyms lists them) the report names it by the first
 * text symbol, as --kallsyms does and as the kernel's %pS does. */
START_TEST(kernel_aliases_are_named_by_the_first_text_symbol_listed)
{
	struct ksyms *k = ksyms__new();
	const struct sym_result *s;

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 'd', "data_at_it", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 't', "__do_sys_vfork", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 'T', "__ia32_sys_vfork", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 'T', "__x64_sys_vfork", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x2000, 0, 'W', "weak_fn", "mod"), 0);
	ck_assert_int_eq(ksyms__add(k, 0x2000, 0, 't', "a_weak_fn_local", "mod"), 0);
	ck_assert_int_eq(ksyms__add(k, 0x3000, 0, 'T', "end", NULL), 0);
	ck_assert_int_eq(ksyms__add(k, 0x1000, 0, 'T', "__do_sys_vfork", NULL), 0);	/* again */
	s = ksyms__lookup(k, 0x1010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->lines[0].name, "__do_sys_vfork");
	s = ksyms__lookup(k, 0x2010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->lines[0].name, "weak_fn [mod]");
	ksyms__free(k);
}
END_TEST

/* info --symbols (symbols_info.c) says when its output could not be
 * written, instead of returning 0 with the section lost. */
START_TEST(symbols_section_that_cannot_be_written_is_eio)
{
	uint64_t frames[] = { K(1) + 8 };
	struct stk_stack st = { .id = 7, .nr_frames = 1, .frames = frames };
	struct stk_count row = { .tgid = 10, .tid = 11, .comm = "task", .user_stack = -EFAULT,
				 .kernel_stack = 7, .count = 5 };
	struct symbolizer_opts so = { .sz = sizeof(so), .system_debug_dir = "" };
	char file[] = "/tmp/check_report.XXXXXX", buf[4096];
	struct stk_writer *w;
	FILE *f;
	size_t n;

	w = capture_writer(file);
	add_kernel_stack(w, &st);
	ck_assert_int_eq(stk_writer__add_counts(w, 1, 2, &row, 1), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	f = tmpfile();
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(symbols_info__print(file, &so, f), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\n[symbols]\nsamples: 5\n"));
	fclose(f);
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(symbols_info__print(file, &so, f), -EIO);
	fclose(f);
	unlink(file);
}
END_TEST

/* [unwind] User stacks ending in the unwinder's stop marker are counted by
 * reason in the report model (samples and distinct stacks), rendered as
 * one marker frame, and listed by info's [unwind] section. */
START_TEST(unwind_stops_are_counted_by_reason)
{
	uint64_t f1[] = { 0x1000, 0x2000, 0xfffffffffffff002ull };	/* fault */
	uint64_t f2[] = { 0x1000, 0xfffffffffffff002ull };		/* fault */
	uint64_t f3[] = { 0x1000, 0x3000, 0xfffffffffffff004ull };	/* no CFI */
	uint64_t f4[] = { 0x1000, 0x2000 };				/* whole */
	uint64_t f5[] = { 0x1000, 0xfffffffffffff099ull };		/* unknown reason */
	struct stk_stack st[] = {
		{ .id = 1, .nr_frames = 3, .frames = f1 }, { .id = 2, .nr_frames = 2, .frames = f2 },
		{ .id = 3, .nr_frames = 3, .frames = f3 }, { .id = 4, .nr_frames = 2, .frames = f4 },
		{ .id = 5, .nr_frames = 2, .frames = f5 },
	};
	struct stk_count rows[] = {
		{ .tgid = 10, .tid = 10, .comm = "a", .user_stack = 1, .kernel_stack = -EFAULT, .count = 3 },
		{ .tgid = 10, .tid = 11, .comm = "a", .user_stack = 2, .kernel_stack = -EFAULT, .count = 2 },
		{ .tgid = 10, .tid = 12, .comm = "a", .user_stack = 3, .kernel_stack = -EFAULT, .count = 4 },
		{ .tgid = 10, .tid = 13, .comm = "a", .user_stack = 3, .kernel_stack = -EFAULT, .count = 1 },
		{ .tgid = 10, .tid = 14, .comm = "a", .user_stack = 4, .kernel_stack = -EFAULT, .count = 10 },
		{ .tgid = 10, .tid = 15, .comm = "a", .user_stack = 5, .kernel_stack = -EFAULT, .count = 1 },
	};
	struct output_opts oo = { 0 };
	struct strbuf sb = { 0 };
	char file[] = "/tmp/check_report.XXXXXX", buf[4096];
	struct stk_writer *w;
	struct capture *c;
	struct report *r;
	size_t n, i;
	FILE *f;

	w = capture_writer(file);
	ck_assert_int_eq(stk_writer__add_stacks(w, st, 5), 0);
	ck_assert_int_eq(stk_writer__add_counts(w, 1, 2, rows, 6), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	c = capture__read(file);
	ck_assert_ptr_nonnull(c);
	r = run(c, 0);
	ck_assert_uint_eq(r->total_count, 21);
	ck_assert_uint_eq(r->uw_stops.total_count, 11);
	ck_assert_uint_eq(r->uw_stops.count[2], 5);
	ck_assert_uint_eq(r->uw_stops.stacks[2], 2);
	ck_assert_uint_eq(r->uw_stops.count[4], 5);
	ck_assert_uint_eq(r->uw_stops.stacks[4], 1);
	ck_assert_uint_eq(r->uw_stops.count[REPORT_UW_STOP_UNKNOWN], 1);
	ck_assert_uint_eq(r->uw_stops.stacks[REPORT_UW_STOP_UNKNOWN], 1);
	for (i = 0; i <= REPORT_UW_STOP_UNKNOWN; i++)
		if (i != 2 && i != 4 && i != REPORT_UW_STOP_UNKNOWN)
			ck_assert_uint_eq(r->uw_stops.count[i] + r->uw_stops.stacks[i], 0);
	/* The marker is one frame, named, never symbolized as an address. */
	ck_assert_int_eq(r->samples[2].task.user->unwind_stop, 4);
	ck_assert_int_eq(render_frame_line(&sb, &r->samples[2].task.user->frames[2], 0, &oo, 1), 0);
	ck_assert_str_eq(strbuf__str(&sb), "[unwind stopped: no CFI]");
	ck_assert_int_eq(r->samples[4].task.user->unwind_stop, 0);
	strbuf__free(&sb);
	report__free(r);
	capture__free(c);

	f = tmpfile();
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(unwind_info__print(file, f), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "\n[unwind]\n"
			 "unwind stopped early: 11 samples (52.4%) of 21\n"
			 "unwind stopped: fault 5 samples (23.8%), 2 stacks\n"
			 "unwind stopped: no CFI 5 samples (23.8%), 1 stacks\n"
			 "unwind stopped: ? 1 samples (4.8%), 1 stacks\n");
	fclose(f);
	unlink(file);
}
END_TEST

/*
 * A plugin reload: library A mapped at 0x7f0000000000 in the first flush
 * interval, library B at the same address in the second, the same stack
 * (same id) sampled in both.  The two rows have equal keys, but each
 * interval's samples resolve in the snapshot in force then (SPEC.md, MAPS):
 * func_A 5, func_B 7, not 12 of whichever interval came first.  The same
 * for off-CPU rows (target and waker).
 */
#define PLUGIN_BASE 0x7f0000000000ull

static void add_plugin_interval(struct stk_writer *w, int kind, uint64_t t0, uint64_t t1,
				const char *path, uint8_t bid, uint64_t count)
{
	struct stk_mapping m = {
		.start = PLUGIN_BASE, .end = PLUGIN_BASE + 0x1000, .offset = 0x1000,
		.dev = 1, .inode = bid, .prot = 5, .build_id_size = 4,
		.build_id = { bid, bid, bid, bid }, .path = path,
	};
	struct stk_proc_maps p = { .tgid = 10, .comm = "host", .time_ns = t0 + 1,
				   .nr_mappings = 1, .mappings = &m };
	struct stk_count row = { .tgid = 10, .tid = 10, .comm = "host", .user_stack = 1,
				 .kernel_stack = -EFAULT, .count = count };
	struct stk_task_stacks task = { .tgid = 10, .tid = 10, .comm = "host", .user_stack = 1,
					.kernel_stack = -EFAULT };
	struct stk_offcpu orow = { .target = task, .waker = task, .count = count,
				   .blocked_ns = 1000 * count };

	orow.waker.tid = 11;
	ck_assert_int_eq(stk_writer__add_maps(w, &p, 1), 0);
	if (kind == REPORT_PROFILE)
		ck_assert_int_eq(stk_writer__add_counts(w, t0, t1, &row, 1), 0);
	else
		ck_assert_int_eq(stk_writer__add_offcpu(w, t0, t1, &orow, 1), 0);
}

static char *plugin_reload_folded(int kind)
{
	uint64_t frames[] = { PLUGIN_BASE + 0x10 };
	struct stk_stack st = { .id = 1, .nr_frames = 1, .frames = frames };
	struct stk_esym_sym fa = { .addr = 0x1000, .size = 0x100, .name = "func_A" };
	struct stk_esym_sym fb = { .addr = 0x1000, .size = 0x100, .name = "func_B" };
	struct stk_kv mode = { "mode", kind == REPORT_PROFILE ? "profile" : "offwake" };
	uint8_t bida[4] = { 0xa, 0xa, 0xa, 0xa }, bidb[4] = { 0xb, 0xb, 0xb, 0xb };
	char file[] = "/tmp/check_report.XXXXXX";
	struct output_opts oo = { 0 };
	struct stk_writer *w;
	struct capture *c;
	struct report *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *mf;

	w = capture_writer(file);
	ck_assert_int_eq(stk_writer__add_meta(w, &mode, 1), 0);
	ck_assert_int_eq(stk_writer__add_stacks(w, &st, 1), 0);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bida, 4, STK_ESYM_SRC_SYMTAB, &fa, 1), 0);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bidb, 4, STK_ESYM_SRC_SYMTAB, &fb, 1), 0);
	add_plugin_interval(w, kind, 1000, 2000, "/nonexistent/plugin_a.so", 0xa, 5);
	add_plugin_interval(w, kind, 2000, 3000, "/nonexistent/plugin_b.so", 0xb, 7);
	c = capture_reread(w, file);
	r = run(c, 0);
	mf = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(mf);
	ck_assert_int_eq(out_folded__write(r, &oo, mf), 0);
	fclose(mf);
	report__free(r);
	capture__free(c);
	return buf;
}

START_TEST(equal_rows_of_two_intervals_resolve_in_their_own_maps)
{
	char *buf = plugin_reload_folded(REPORT_PROFILE);

	ck_assert_str_eq(buf, "host;func_A 5\nhost;func_B 7\n");
	free(buf);
	buf = plugin_reload_folded(REPORT_OFFWAKE);
	ck_assert_str_eq(buf, "host;func_A;--;func_A;host 5\nhost;func_B;--;func_B;host 7\n");
	free(buf);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, stack_starting_at_interrupted_ip_is_kept_as_is);
	tcase_add_test(tc, interrupt_frames_are_skipped_up_to_return_ip_and_ip_prepended);
	tcase_add_test(tc, return_ip_not_in_stack_keeps_every_frame_with_ip_first);
	tcase_add_test(tc, fixed_skip_drops_n_frames_then_puts_the_ip_first);
	tcase_add_test(tc, no_interrupted_ip_means_no_fixup);
	tcase_add_test(tc, return_addresses_are_looked_up_at_pc_minus_1);
	tcase_add_test(tc, module_symbols_carry_the_module_name);
	tcase_add_test(tc, missing_stacks_are_counted_as_profile_py_does);
	tcase_add_test(tc, filters_keep_only_matching_tasks);
	tcase_add_test(tc, folded_merges_identical_lines_and_sorts_hottest_last);
	tcase_add_test(tc, counts_summing_past_2_64_saturate);
	tcase_add_test(tc, maps_index_matches_a_scan_of_every_snapshot);
	tcase_add_test(tc, kernel_objects_are_kept_once_per_name_and_base);
	tcase_add_test(tc, maps_snapshot_follows_the_rows_comm_across_exec);
	tcase_add_test(tc, pid_namespace_records_name_the_namespaced_pid);
	tcase_add_test(tc, kernel_symbol_aliases_at_one_address_cover_the_function);
	tcase_add_test(tc, kernel_aliases_are_named_by_the_first_text_symbol_listed);
	tcase_add_test(tc, symbols_section_that_cannot_be_written_is_eio);
	tcase_add_test(tc, unwind_stops_are_counted_by_reason);
	tcase_add_test(tc, equal_rows_of_two_intervals_resolve_in_their_own_maps);
	suite_add_tcase(su, tc);
	/* Hundreds of MB written and read: generous, not a timing assertion. */
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, capture_over_its_memory_budget_is_refused);
	suite_add_tcase(su, tc);
	return check_run(su);
}
