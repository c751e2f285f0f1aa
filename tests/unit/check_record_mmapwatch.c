// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_mmapwatch: the mmap watcher's process state from synthetic
 * perf side-band records (MMAP2, COMM exec, FORK, EXIT, LOST, each with
 * its {pid, tid, time} trailer): exec starts a complete process, mappings
 * replace what they overlap, records apply in time order, a fork child
 * copies its parent, threads are not processes, lost records make
 * processes incomplete, -p and -- CMD follow only their processes, exited
 * ones are purged, and snapshots carry the kernel's or the file's
 * build-id; mapping paths are interned, one copy a path, none left once
 * every process holding it is purged.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "buildid.h"
#include "idmap.h"
#include "mmapwatch.h"
#include "mmapwatch_int.h"
#include "procmaps.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* A buffer of records laid out as the kernel writes them. */
struct rbuf {
	uint8_t b[16384];
	size_t len;
};

static void put(struct rbuf *r, const void *p, size_t n)
{
	ck_assert_uint_le(r->len + n, sizeof(r->b));
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

/* Header, @body of @n bytes padded to 8, then the sample_id trailer. */
static void rec(struct rbuf *r, uint32_t type, uint16_t misc, const void *body, size_t n,
		uint32_t pid, uint64_t time)
{
	struct perf_event_header h;
	uint32_t ids[2] = { pid, pid };
	uint8_t zero[8] = {};
	size_t pad = (8 - n % 8) % 8;

	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)(sizeof(h) + n + pad + 16);
	put(r, &h, sizeof(h));
	put(r, body, n);
	put(r, zero, pad);
	put(r, ids, sizeof(ids));
	put(r, &time, sizeof(time));
}

static void exec_rec(struct rbuf *r, uint32_t pid, uint64_t time)
{
	uint8_t body[8 + 16] = {};
	uint32_t ids[2] = { pid, pid };

	memcpy(body, ids, sizeof(ids));
	memcpy(body + 8, "prog", 5);
	rec(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, sizeof(body), pid, time);
}

static void task_rec(struct rbuf *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		     uint64_t time)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} body = { pid, ppid, tid, ppid, time };

	/* The body's time and the trailer: the trailer is what is used. */
	rec(r, type, 0, &body, sizeof(body), pid, time);
}

/* MMAP2; @bid (20 bytes) or NULL for dev/ino. */
static void mmap_rec(struct rbuf *r, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		     uint32_t prot, const uint8_t *bid, uint64_t dev, uint64_t ino,
		     const char *path, uint64_t time)
{
	uint8_t body[4096] = {};
	size_t off = 0, n = strlen(path) + 1;
	uint32_t u32;

	u32 = pid;
	memcpy(body + off, &u32, 4), off += 4;
	memcpy(body + off, &u32, 4), off += 4;
	memcpy(body + off, &addr, 8), off += 8;
	memcpy(body + off, &len, 8), off += 8;
	memcpy(body + off, &pgoff, 8), off += 8;
	if (bid) {
		body[off] = 20;
		memcpy(body + off + 4, bid, 20);
	} else {
		u32 = major(dev);
		memcpy(body + off, &u32, 4);
		u32 = minor(dev);
		memcpy(body + off + 4, &u32, 4);
		memcpy(body + off + 8, &ino, 8);
	}
	off += 24;
	memcpy(body + off, &prot, 4), off += 4;
	u32 = MAP_PRIVATE;
	memcpy(body + off, &u32, 4), off += 4;
	memcpy(body + off, path, n), off += n;
	rec(r, PERF_RECORD_MMAP2, bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0, body, off, pid, time);
}

static const uint8_t BID_X[20] = { 0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
static const uint8_t BID_L[20] = { 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
#define RX (PROT_READ | PROT_EXEC)

static struct mmapwatch *w;
static struct procmaps *pm;
static struct rbuf rb;

/* Snapshots end with [vsyscall] where the kernel has one (x86-64), as
 * /proc/PID/maps does. */
static unsigned int vsys_n;

static void setup_all(void)
{
	w = mmapwatch__new(MMAPWATCH_ALL);
	pm = procmaps__new();
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(pm);
	memset(&rb, 0, sizeof(rb));
	{
		struct procmaps_line l;

		vsys_n = (unsigned int)procmaps__vsyscall(pm, &l);
	}
}

static void teardown(void)
{
	mmapwatch__free(w);
	procmaps__free(pm);
}

static void feed(void)
{
	ck_assert_int_eq(mmapwatch__process(w, rb.b, rb.len), 0);
	rb.len = 0;
}

START_TEST(exec_and_mappings_give_a_complete_snapshot_sorted_with_build_ids)
{
	struct stk_proc_maps s;

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x7f0000000000, 0x5000, 0x1000, RX, BID_L, 0, 0, "/lib/libc.so", 12);
	mmap_rec(&rb, 100, 0x555500001000, 0x2000, 0x1000, RX, BID_X, 0, 0, "/bin/x", 11);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.tgid, 100);
	ck_assert_str_eq(s.comm, "x");
	ck_assert_uint_eq(s.time_ns, 12); /* the last change */
	ck_assert_uint_eq(s.nr_mappings, 2 + vsys_n);
	ck_assert_uint_eq(s.mappings[0].start, 0x555500001000);
	ck_assert_uint_eq(s.mappings[0].end, 0x555500003000);
	ck_assert_uint_eq(s.mappings[0].offset, 0x1000);
	ck_assert_uint_eq(s.mappings[0].prot, RX);
	ck_assert_str_eq(s.mappings[0].path, "/bin/x");
	ck_assert_uint_eq(s.mappings[0].build_id_size, 20);
	ck_assert_mem_eq(s.mappings[0].build_id, BID_X, 20);
	ck_assert_str_eq(s.mappings[1].path, "/lib/libc.so");
	ck_assert_mem_eq(s.mappings[1].build_id, BID_L, 20);
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(a_process_seen_only_mapping_is_not_complete)
{
	struct stk_proc_maps s;

	/* Started before the watcher: its other mappings are unknown. */
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, RX, BID_X, 0, 0, "/bin/x", 11);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 0);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), -ENOENT);
}
END_TEST

START_TEST(exec_forgets_the_old_image)
{
	struct stk_proc_maps s;
	uint64_t gen1, gen2, image1, image2;

	ck_assert_uint_eq(mmapwatch__image(w, 100), 0);
	exec_rec(&rb, 100, 10);
	feed();
	image1 = mmapwatch__image(w, 100);
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, RX, BID_X, 0, 0, "/bin/sh", 11);
	feed();
	/* Mapping more is the same image; an exec is a new one. */
	ck_assert_uint_ne(image1, 0);
	ck_assert_uint_eq(mmapwatch__image(w, 100), image1);
	mmapwatch__complete(w, 100, &gen1, NULL);
	exec_rec(&rb, 100, 20);
	mmap_rec(&rb, 100, 0x9000, 0x1000, 0, RX, BID_L, 0, 0, "/bin/cpuwork", 21);
	feed();
	mmapwatch__complete(w, 100, &gen2, NULL);
	image2 = mmapwatch__image(w, 100);
	ck_assert_uint_ne(gen1, gen2);
	ck_assert_uint_ne(image1, image2);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "cpuwork", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 1 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/bin/cpuwork");
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(a_new_mapping_replaces_the_parts_it_overlaps)
{
	struct stk_proc_maps s;

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x10000, 0x4000, 0x100000, RX, BID_X, 0, 0, "/a", 11);
	mmap_rec(&rb, 100, 0x20000, 0x1000, 0, RX, BID_X, 0, 0, "/b", 12);
	mmap_rec(&rb, 100, 0x21000, 0x1000, 0, RX, BID_X, 0, 0, "/c", 13);
	/* Inside /a: splits it; over /b and /c: replaces them. */
	mmap_rec(&rb, 100, 0x11000, 0x1000, 0, RX, BID_L, 0, 0, "/new1", 14);
	mmap_rec(&rb, 100, 0x20000, 0x2000, 0, RX, BID_L, 0, 0, "/new2", 15);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 4 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/a");
	ck_assert_uint_eq(s.mappings[0].start, 0x10000);
	ck_assert_uint_eq(s.mappings[0].end, 0x11000);
	ck_assert_uint_eq(s.mappings[0].offset, 0x100000);
	ck_assert_str_eq(s.mappings[1].path, "/new1");
	ck_assert_str_eq(s.mappings[2].path, "/a");
	ck_assert_uint_eq(s.mappings[2].start, 0x12000);
	ck_assert_uint_eq(s.mappings[2].end, 0x14000);
	ck_assert_uint_eq(s.mappings[2].offset, 0x102000);
	ck_assert_str_eq(s.mappings[3].path, "/new2");
	ck_assert_uint_eq(s.mappings[3].end, 0x22000);
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(punches_and_insertions_keep_the_mappings_sorted)
{
	struct stk_proc_maps s;
	uint32_t i;

	exec_rec(&rb, 100, 10);
	/* Mapped out of address order; then data mappings split /a (the
	 * part after the hole must sort before /z) and punch /z's middle
	 * and nothing at all. */
	mmap_rec(&rb, 100, 0x30000, 0x3000, 0, RX, BID_X, 0, 0, "/z", 11);
	mmap_rec(&rb, 100, 0x10000, 0x4000, 0, RX, BID_X, 0, 0, "/a", 12);
	mmap_rec(&rb, 100, 0x08000, 0x1000, 0, RX, BID_L, 0, 0, "/first", 13);
	mmap_rec(&rb, 100, 0x11000, 0x1000, 0x7000, PROT_READ | PROT_WRITE, NULL, 0, 0, "/d", 14);
	mmap_rec(&rb, 100, 0x31000, 0x1000, 0x7000, PROT_READ | PROT_WRITE, NULL, 0, 0, "/d", 15);
	mmap_rec(&rb, 100, 0x50000, 0x1000, 0x7000, PROT_READ | PROT_WRITE, NULL, 0, 0, "/d", 16);
	mmap_rec(&rb, 100, 0x12000, 0x800, 0, RX, BID_L, 0, 0, "/in", 17);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 6 + vsys_n);
	for (i = 0; i + 1 < s.nr_mappings; i++)
		ck_assert_uint_le(s.mappings[i].end, s.mappings[i + 1].start);
	ck_assert_str_eq(s.mappings[0].path, "/first");
	ck_assert_uint_eq(s.mappings[1].end, 0x11000);
	ck_assert_str_eq(s.mappings[2].path, "/in");
	ck_assert_uint_eq(s.mappings[3].start, 0x12800);
	ck_assert_uint_eq(s.mappings[3].end, 0x14000);
	ck_assert_str_eq(s.mappings[4].path, "/z");
	ck_assert_uint_eq(s.mappings[4].end, 0x31000);
	ck_assert_uint_eq(s.mappings[5].start, 0x32000);
	ck_assert_uint_eq(s.mappings[5].offset, 0x2000);
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(records_apply_in_time_order_whatever_the_buffer_order)
{
	struct stk_proc_maps s;

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, RX, BID_X, 0, 0, "/bin/sh", 11);
	/* CPU 1's buffer holds the child's exec, CPU 0's its fork, read in
	 * that order: the fork (t=20) must still come first. */
	exec_rec(&rb, 200, 21);
	mmap_rec(&rb, 200, 0x9000, 0x1000, 0, RX, BID_L, 0, 0, "/bin/cpuwork", 22);
	task_rec(&rb, PERF_RECORD_FORK, 200, 100, 200, 20);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 200, "cpuwork", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 1 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/bin/cpuwork");
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(a_fork_child_has_its_parents_mappings)
{
	struct stk_proc_maps s;

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, RX, BID_X, 0, 0, "/bin/sh", 11);
	task_rec(&rb, PERF_RECORD_FORK, 200, 100, 200, 20);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 200, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 200, "sh", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 1 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/bin/sh");
	ck_assert_mem_eq(s.mappings[0].build_id, BID_X, 20);
	procmaps__free_snapshot(&s);
}
END_TEST

/* 1 if @s has an executable mapping of a path containing @name. */
static int has_exec(const struct stk_proc_maps *s, const char *name)
{
	uint32_t k;

	for (k = 0; k < s->nr_mappings; k++)
		if ((s->mappings[k].prot & PROT_EXEC) && strstr(s->mappings[k].path, name))
			return 1;
	return 0;
}

/* A process running since before the watcher (here: this test) forks:
 * it is read from /proc once, and its child has those mappings until its
 * exec, which keeps them as its old image.  Before, the child had none
 * (a vfork()ed sh's samples in execve were in no mapping). */
START_TEST(a_fork_of_a_process_running_before_gets_its_mappings_from_proc)
{
	uint32_t me = (uint32_t)getpid(), child = 4190001;
	struct mmapwatch_stats st;
	struct stk_proc_maps s;
	uint64_t start, end;

	task_rec(&rb, PERF_RECORD_FORK, child, me, child, 20);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, me, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, child, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, child, "t", &s), 0);
	ck_assert(has_exec(&s, "libc.so"));
	ck_assert(has_exec(&s, "check_record_mmapwatch"));
	procmaps__free_snapshot(&s);
	exec_rec(&rb, child, 30);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot_old(w, pm, child, "t", 0, &s, &start, &end), 0);
	ck_assert_uint_eq(end, 30);
	ck_assert(has_exec(&s, "libc.so"));
	procmaps__free_snapshot(&s);
	mmapwatch__stats(w, &st);
	ck_assert_uint_eq(st.seeded, 1);
}
END_TEST

/* ... but not when the parent's own exec follows in the same records:
 * /proc would show the image after it. */
START_TEST(a_parent_that_execs_later_is_not_read_from_proc)
{
	uint32_t me = (uint32_t)getpid(), child = 4190002;
	struct mmapwatch_stats st;

	task_rec(&rb, PERF_RECORD_FORK, child, me, child, 20);
	exec_rec(&rb, me, 21);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, child, NULL, NULL), 0);
	mmapwatch__stats(w, &st);
	ck_assert_uint_eq(st.seeded, 0);
}
END_TEST

START_TEST(threads_are_not_processes)
{
	int exited = -1;

	exec_rec(&rb, 100, 10);
	/* A new thread 101 of process 100, which then exits. */
	task_rec(&rb, PERF_RECORD_FORK, 100, 100, 101, 11);
	task_rec(&rb, PERF_RECORD_EXIT, 100, 100, 101, 12);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 101, NULL, NULL), 0);
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, &exited), 1);
	ck_assert_int_eq(exited, 0);
}
END_TEST

START_TEST(an_exited_process_stays_until_purged_after_its_exit)
{
	int exited = 0;

	exec_rec(&rb, 100, 10);
	task_rec(&rb, PERF_RECORD_EXIT, 100, 1, 100, 30);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, &exited), 1);
	ck_assert_int_eq(exited, 1);
	mmapwatch__purge(w, 30);
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 1);
	mmapwatch__purge(w, 31);
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 0);
}
END_TEST

START_TEST(lost_records_make_every_process_incomplete_until_its_next_exec)
{
	struct mmapwatch_stats st;
	uint64_t body[2] = { 1, 7 };

	exec_rec(&rb, 100, 10);
	exec_rec(&rb, 200, 10);
	rec(&rb, PERF_RECORD_LOST, 0, body, sizeof(body), 0, 11);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 0);
	ck_assert_int_eq(mmapwatch__complete(w, 200, NULL, NULL), 0);
	exec_rec(&rb, 200, 12);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 200, NULL, NULL), 1);
	mmapwatch__stats(w, &st);
	ck_assert_uint_eq(st.lost, 7);
	ck_assert_uint_eq(st.records, 4);
	ck_assert_uint_eq(st.execs, 3);
}
END_TEST

START_TEST(listed_follows_the_added_processes_only)
{
	mmapwatch__free(w);
	w = mmapwatch__new(MMAPWATCH_LISTED);
	ck_assert_int_eq(mmapwatch__add(w, 100), 0);
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 0);
	exec_rec(&rb, 100, 10);
	exec_rec(&rb, 300, 10);
	task_rec(&rb, PERF_RECORD_FORK, 101, 100, 101, 11);
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, 300, NULL, NULL), 0);
	ck_assert_int_eq(mmapwatch__complete(w, 101, NULL, NULL), 0);
}
END_TEST

START_TEST(tree_follows_the_command_and_its_descendants)
{
	mmapwatch__free(w);
	w = mmapwatch__new(MMAPWATCH_TREE);
	ck_assert_int_eq(mmapwatch__add(w, 100), 0);
	task_rec(&rb, PERF_RECORD_FORK, 101, 100, 101, 10);	/* before 100's exec */
	exec_rec(&rb, 100, 11);
	task_rec(&rb, PERF_RECORD_FORK, 102, 100, 102, 12);
	task_rec(&rb, PERF_RECORD_FORK, 103, 102, 103, 13);	/* a grandchild */
	exec_rec(&rb, 101, 14);
	exec_rec(&rb, 999, 15);					/* a stranger */
	feed();
	ck_assert_int_eq(mmapwatch__complete(w, 100, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, 101, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, 102, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, 103, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__complete(w, 999, NULL, NULL), 0);
}
END_TEST

START_TEST(data_mappings_are_dropped_and_anon_exec_has_no_path)
{
	struct stk_proc_maps s;

	exec_rec(&rb, 100, 10);
	/* A data file at offset 0 with no executable mapping, and a file's
	 * non-zero offset: not kept. */
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, PROT_READ | PROT_WRITE, NULL, 0, 0, "/data", 11);
	mmap_rec(&rb, 100, 0x5000, 0x1000, 0x3000, PROT_READ, NULL, 0, 0, "/lib", 11);
	mmap_rec(&rb, 100, 0x2000, 0x1000, 0, PROT_READ | PROT_WRITE | PROT_EXEC, NULL, 0, 0,
		 "//anon", 12);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 1 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "");
	ck_assert_uint_eq(s.mappings[0].build_id_size, 0);
	procmaps__free_snapshot(&s);
}
END_TEST

START_TEST(a_files_offset0_mapping_is_kept_as_in_proc_and_data_mappings_punch_holes)
{
	struct stk_proc_maps s;
	uint64_t gen1, gen2;

	exec_rec(&rb, 100, 10);
	/* As ld.so maps a library: the whole span read-only at offset 0,
	 * then the segments over it. */
	mmap_rec(&rb, 100, 0x10000, 0x8000, 0, PROT_READ, BID_L, 0, 0, "/lib/l.so", 11);
	mmap_rec(&rb, 100, 0x11000, 0x3000, 0x1000, RX, BID_L, 0, 0, "/lib/l.so", 12);
	mmap_rec(&rb, 100, 0x14000, 0x4000, 0x4000, PROT_READ | PROT_WRITE, BID_L, 0, 0,
		 "/lib/l.so", 13);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 2 + vsys_n);
	ck_assert_uint_eq(s.mappings[0].start, 0x10000);
	ck_assert_uint_eq(s.mappings[0].end, 0x11000);
	ck_assert_uint_eq(s.mappings[0].offset, 0);
	ck_assert_uint_eq(s.mappings[0].prot, PROT_READ);
	ck_assert_mem_eq(s.mappings[0].build_id, BID_L, 20);
	ck_assert_uint_eq(s.mappings[1].start, 0x11000);
	ck_assert_uint_eq(s.mappings[1].prot, RX);
	ck_assert_uint_eq(s.time_ns, 13);
	procmaps__free_snapshot(&s);

	/* An anonymous mapping elsewhere changes nothing... */
	mmapwatch__complete(w, 100, &gen1, NULL);
	mmap_rec(&rb, 100, 0x900000, 0x1000, 0, PROT_READ | PROT_WRITE, NULL, 0, 0, "//anon", 14);
	feed();
	mmapwatch__complete(w, 100, &gen2, NULL);
	ck_assert_uint_eq(gen1, gen2);
	/* ... over the code, it replaces it. */
	mmap_rec(&rb, 100, 0x11000, 0x3000, 0, PROT_READ | PROT_WRITE, NULL, 0, 0, "//anon", 15);
	feed();
	mmapwatch__complete(w, 100, &gen2, NULL);
	ck_assert_uint_ne(gen1, gen2);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 0 + vsys_n); /* no code left: no offset-0 mapping either */
	ck_assert_uint_eq(s.time_ns, 15);
	procmaps__free_snapshot(&s);
}
END_TEST

/* The watcher's snapshot of a real process equals the /proc one (but for
 * device and inode, which records with build-ids do not carry).  The
 * watcher follows that process only (MMAPWATCH_TREE, as -- CMD's: its
 * events attached to it, inherited), so that other processes' mappings on
 * a busy machine cannot fill its rings and lose its records: the check
 * then holds however loaded the machine is.  Needs perf_event_open() on
 * every CPU: passes trivially without privileges. */
START_TEST(a_real_process_snapshot_equals_its_proc_maps)
{
	struct stk_proc_maps ev, pr;
	struct mmapwatch_stats ms;
	int cpus[1024], nr = 0, i, status, go[2];
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	char *argv[] = { "sleep", "5", NULL };
	pid_t pid;
	uint32_t k;
	char c;

	for (i = 0; i < ncpu && nr < 1024; i++)
		cpus[nr++] = i;
	if (geteuid() != 0)
		return;
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Execs once the watcher follows it. */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	mmapwatch__free(w);
	w = mmapwatch__new(MMAPWATCH_TREE);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(mmapwatch__add(w, (uint32_t)pid), 0);
	if (mmapwatch__open(w, cpus, (size_t)nr, 16) != 0) {
		close(go[1]);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	close(go[1]);
	/* Until ld.so is done and sleep sleeps. */
	for (i = 0; i < 500; i++) {
		char buf[64], st[64] = "";
		FILE *f;

		usleep(10000);
		snprintf(buf, sizeof(buf), "/proc/%d/wchan", pid);
		f = fopen(buf, "re");
		if (f && fgets(st, sizeof(st), f) && strstr(st, "nanosleep")) {
			fclose(f);
			break;
		}
		if (f)
			fclose(f);
	}
	mmapwatch__drain(w);
	/* The drain lost nothing (it would have made the process incomplete). */
	mmapwatch__stats(w, &ms);
	ck_assert_uint_eq(ms.lost, 0);
	ck_assert_int_eq(mmapwatch__complete(w, (uint32_t)pid, NULL, NULL), 1);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, (uint32_t)pid, "sleep", &ev), 0);
	ck_assert_int_eq(procmaps__snapshot(pm, "/proc", (uint32_t)pid, "sleep", 0, &pr), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_assert_uint_eq(ev.nr_mappings, pr.nr_mappings);
	for (k = 0; k < ev.nr_mappings; k++) {
		ck_assert_uint_eq(ev.mappings[k].start, pr.mappings[k].start);
		ck_assert_uint_eq(ev.mappings[k].end, pr.mappings[k].end);
		ck_assert_uint_eq(ev.mappings[k].offset, pr.mappings[k].offset);
		ck_assert_uint_eq(ev.mappings[k].prot, pr.mappings[k].prot);
		ck_assert_str_eq(ev.mappings[k].path, pr.mappings[k].path);
		ck_assert_uint_eq(ev.mappings[k].build_id_size, pr.mappings[k].build_id_size);
		ck_assert_mem_eq(ev.mappings[k].build_id, pr.mappings[k].build_id,
				 pr.mappings[k].build_id_size);
	}
	ck_assert_uint_gt(ev.nr_mappings, 3);
	procmaps__free_snapshot(&ev);
	procmaps__free_snapshot(&pr);
}
END_TEST

START_TEST(without_the_kernels_build_id_the_file_is_read_if_still_the_same)
{
	char self[PATH_MAX];
	uint8_t want[STK_MAX_BUILD_ID];
	struct stk_proc_maps s;
	struct mmapwatch_stats st;
	struct stat sb;
	ssize_t n;
	int fd, wn;

	/* This test binary has a build-id (the Makefile links with one). */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	ck_assert_int_eq(stat(self, &sb), 0);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	wn = buildid__from_elf_fd(fd, want, sizeof(want));
	close(fd);
	ck_assert_int_gt(wn, 0);

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x1000, 0x1000, 0, RX, NULL, sb.st_dev, sb.st_ino, self, 11);
	/* The same path, but the mapped file was another one. */
	mmap_rec(&rb, 100, 0x3000, 0x1000, 0, RX, NULL, sb.st_dev, sb.st_ino + 1, self, 12);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "x", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 2 + vsys_n);
	ck_assert_uint_eq(s.mappings[0].build_id_size, (unsigned int)wn);
	ck_assert_mem_eq(s.mappings[0].build_id, want, (size_t)wn);
	ck_assert_uint_eq(s.mappings[0].inode, (uint64_t)sb.st_ino);
	ck_assert_uint_eq(s.mappings[0].dev, (uint64_t)sb.st_dev);
	ck_assert_uint_eq(s.mappings[1].build_id_size, 0);
	procmaps__free_snapshot(&s);
	mmapwatch__stats(w, &st);
	ck_assert_uint_eq(st.build_id_reads, 1);
	ck_assert_uint_eq(st.build_id_errors, 1);
	ck_assert_uint_eq(st.kernel_build_ids, 0);
}
END_TEST

/* Mapping paths are interned: one copy a path, whatever the processes,
 * fork copies, split mappings and old images that hold it; each holder's
 * reference dropped as it goes (exec, a reused pid, exit and purge), so
 * that none is left once every process is purged (a reference leaked
 * keeps its path; one dropped twice frees it under another holder). */
START_TEST(paths_are_interned_and_released_with_their_last_mapping)
{
	struct stk_proc_maps s;
	uint32_t i;

	exec_rec(&rb, 100, 10);
	mmap_rec(&rb, 100, 0x1000, 0x2000, 0, RX, BID_X, 0, 0, "/bin/sh", 11);
	mmap_rec(&rb, 100, 0x10000, 0x4000, 0, RX, BID_L, 0, 0, "/lib/libc.so", 12);
	task_rec(&rb, PERF_RECORD_FORK, 200, 100, 200, 20);
	task_rec(&rb, PERF_RECORD_FORK, 300, 100, 300, 21);
	/* 200 splits its copy of libc; 300 execs (its copy becomes an old
	 * image); 100 maps libc a second time. */
	mmap_rec(&rb, 200, 0x11000, 0x1000, 0x7000, PROT_READ | PROT_WRITE, NULL, 0, 0, "/d", 22);
	exec_rec(&rb, 300, 23);
	mmap_rec(&rb, 300, 0x1000, 0x1000, 0, RX, BID_L, 0, 0, "/bin/ls", 24);
	mmap_rec(&rb, 100, 0x20000, 0x1000, 0, RX, BID_L, 0, 0, "/lib/libc.so", 25);
	feed();
	ck_assert_uint_eq(idmap__count(w->paths), 3); /* sh, libc, ls */

	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 200, "sh", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 3 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/bin/sh");
	ck_assert_str_eq(s.mappings[1].path, "/lib/libc.so");
	ck_assert_uint_eq(s.mappings[1].end, 0x11000);
	ck_assert_str_eq(s.mappings[2].path, "/lib/libc.so");
	ck_assert_uint_eq(s.mappings[2].start, 0x12000);
	procmaps__free_snapshot(&s);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 100, "sh", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 3 + vsys_n);
	for (i = 1; i < 3; i++)
		ck_assert_str_eq(s.mappings[i].path, "/lib/libc.so");
	procmaps__free_snapshot(&s);
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 300, "ls", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 1 + vsys_n);
	ck_assert_str_eq(s.mappings[0].path, "/bin/ls");
	procmaps__free_snapshot(&s);

	/* 200 exits and its pid is reused by another child of 100: the old
	 * entry's references go with it. */
	task_rec(&rb, PERF_RECORD_EXIT, 200, 100, 200, 30);
	task_rec(&rb, PERF_RECORD_FORK, 200, 100, 200, 31);
	feed();
	ck_assert_int_eq(mmapwatch__snapshot(w, pm, 200, "sh", &s), 0);
	ck_assert_uint_eq(s.nr_mappings, 3 + vsys_n);
	ck_assert_str_eq(s.mappings[2].path, "/lib/libc.so");
	ck_assert_uint_eq(s.mappings[2].start, 0x20000);
	procmaps__free_snapshot(&s);
	/* A purge while they live keeps every path. */
	mmapwatch__purge(w, 32);
	ck_assert_uint_eq(idmap__count(w->paths), 3);

	/* 300's exec'd image goes first: /bin/ls stays, held by 300. */
	task_rec(&rb, PERF_RECORD_EXIT, 100, 1, 100, 40);
	task_rec(&rb, PERF_RECORD_EXIT, 200, 100, 200, 41);
	feed();
	mmapwatch__purge(w, 42);
	ck_assert_uint_eq(idmap__count(w->paths), 1);
	task_rec(&rb, PERF_RECORD_EXIT, 300, 100, 300, 50);
	feed();
	mmapwatch__purge(w, 51);
	ck_assert_int_eq(mmapwatch__complete(w, 300, NULL, NULL), 0);
	ck_assert_uint_eq(idmap__count(w->paths), 0);
}
END_TEST

START_TEST(malformed_records_are_einval)
{
	uint8_t junk[8] = { 10, 0, 0, 0, 0, 0, 8, 0 }; /* MMAP2 of 8 bytes: no trailer */
	struct perf_event_header h = { PERF_RECORD_MMAP2, 0, 4096 };

	ck_assert_int_eq(mmapwatch__process(w, junk, sizeof(junk)), -EINVAL);
	ck_assert_int_eq(mmapwatch__process(w, &h, sizeof(h)), -EINVAL); /* size past the end */
	ck_assert_int_eq(mmapwatch__process(w, junk, 5), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_mmapwatch");
	TCase *tc = tcase_create("mmapwatch");

	tcase_add_checked_fixture(tc, setup_all, teardown);
	tcase_add_test(tc, exec_and_mappings_give_a_complete_snapshot_sorted_with_build_ids);
	tcase_add_test(tc, a_process_seen_only_mapping_is_not_complete);
	tcase_add_test(tc, exec_forgets_the_old_image);
	tcase_add_test(tc, a_new_mapping_replaces_the_parts_it_overlaps);
	tcase_add_test(tc, records_apply_in_time_order_whatever_the_buffer_order);
	tcase_add_test(tc, a_fork_child_has_its_parents_mappings);
	tcase_add_test(tc, a_fork_of_a_process_running_before_gets_its_mappings_from_proc);
	tcase_add_test(tc, a_parent_that_execs_later_is_not_read_from_proc);
	tcase_add_test(tc, threads_are_not_processes);
	tcase_add_test(tc, an_exited_process_stays_until_purged_after_its_exit);
	tcase_add_test(tc, lost_records_make_every_process_incomplete_until_its_next_exec);
	tcase_add_test(tc, listed_follows_the_added_processes_only);
	tcase_add_test(tc, tree_follows_the_command_and_its_descendants);
	tcase_add_test(tc, data_mappings_are_dropped_and_anon_exec_has_no_path);
	tcase_add_test(tc, a_files_offset0_mapping_is_kept_as_in_proc_and_data_mappings_punch_holes);
	tcase_add_test(tc, a_real_process_snapshot_equals_its_proc_maps);
	tcase_add_test(tc, without_the_kernels_build_id_the_file_is_read_if_still_the_same);
	tcase_add_test(tc, malformed_records_are_einval);
	tcase_add_test(tc, punches_and_insertions_keep_the_mappings_sorted);
	tcase_add_test(tc, paths_are_interned_and_released_with_their_last_mapping);
	suite_add_tcase(s, tc);
	return check_run(s);
}
