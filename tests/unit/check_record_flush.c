// SPDX-License-Identifier: BSD-2-Clause
/*
 * The order of a flush (record/engine/flush.c), run with fake steps that
 * log their names and fail on demand, so without root or BPF: everything
 * a row references (STCK, KSYM, ESYM, MAPS) is written before the rows;
 * the ring of new stacks is taken again after ESYM, even when ESYM failed
 * to write; the final flush writes no STAT; a failed step stops the later
 * writes and leaves the interval (t0) and the processes (purge) as they
 * were; a write error goes through write_err once, and -ENOMEM of ESYM or
 * any error before the writes ends the flush before it is counted.  The
 * fakes also write real chunks into a file in memory: read back, STCK,
 * KSYM, ESYM and MAPS come before the rows.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "check_main.h"
#include "flush.h"
#include "stk.h"

#define T0 1000
#define T1 2000

struct fake {
	struct stk_writer *w;		/* the writing steps write real chunks, or NULL */
	char log[512];
	enum flush_step_id fail_at;	/* FLUSH_NR_STEPS: none */
	int fail_err;
	int write_errs, write_failed, purged;
	uint64_t seq, t0;
};

/* The smallest chunk that writing step @id writes, through libstk's API. */
static int write_chunk(struct stk_writer *w, enum flush_step_id id, const struct flush_ctx *fc)
{
	static const uint64_t frames[] = { 0x401000, 0x401100 };
	static const uint8_t build_id[20] = { 0xb1 };
	static const uint8_t blob[] = { 0x7f };	/* a kind no reader knows */
	const struct stk_stack stack = { .id = 1, .nr_frames = 2, .frames = frames };
	const struct stk_ksym ksym = { .addr = 0xffffffff81000000, .size = 16, .type = 'T',
				       .name = "schedule", .module = "" };
	const struct stk_mapping map = { .start = 0x400000, .end = 0x402000, .prot = 5,
					 .path = "/bin/fake" };
	const struct stk_proc_maps proc = { .tgid = 42, .comm = "fake", .time_ns = 1,
					    .nr_mappings = 1, .mappings = &map };
	const struct stk_pid_ns pidns = { .tgid = 42, .ns_tgid = 1, .time_ns = 1 };
	const struct stk_count row = { .tgid = 42, .tid = 42, .comm = "fake", .user_stack = 1,
				       .kernel_stack = -ENOENT, .count = 3 };
	const struct stk_stat stat = { "flushes", 1 };

	switch (id) {
	case FLUSH_STCK:
		return stk_writer__add_stacks(w, &stack, 1);
	case FLUSH_KSYM:
		return stk_writer__add_ksyms(w, &ksym, 1);
	case FLUSH_ESYM:
		return stk_writer__add_esym(w, build_id, sizeof(build_id), blob, sizeof(blob));
	case FLUSH_MAPS:
		return stk_writer__add_maps(w, &proc, 1);
	case FLUSH_PIDNS:
		return stk_writer__add_pid_ns(w, &pidns, 1);
	case FLUSH_ROWS:
		return stk_writer__add_counts(w, T0, fc->t1, &row, 1);
	case FLUSH_STAT:
		return stk_writer__add_stats(w, &stat, 1);
	default:
		return 0;
	}
}

static int fake_step(void *ctx, const struct flush_ctx *fc, enum flush_step_id id)
{
	struct fake *f = ctx;
	size_t len = strlen(f->log);

	snprintf(f->log + len, sizeof(f->log) - len, "%s%s", len ? " " : "",
		 flush__step_name(id));
	if (id == f->fail_at)
		return f->fail_err;
	if (f->w)
		ck_assert_int_eq(write_chunk(f->w, id, fc), 0);
	if (id == FLUSH_COUNT)
		f->seq++;
	else if (id == FLUSH_PURGE)
		f->purged++;
	else if (id == FLUSH_ADVANCE)
		f->t0 = fc->t1;
	return 0;
}

#define FAKE(id)                                                         \
	static int fake_##id(void *ctx, const struct flush_ctx *fc)     \
	{                                                                \
		return fake_step(ctx, fc, id);                           \
	}
FAKE(FLUSH_CONSUME)
FAKE(FLUSH_REFRESH)
FAKE(FLUSH_COLLECT)
FAKE(FLUSH_RESOLVE)
FAKE(FLUSH_STCK)
FAKE(FLUSH_KSYM)
FAKE(FLUSH_ESYM)
FAKE(FLUSH_TAKE_RING)
FAKE(FLUSH_MAPS)
FAKE(FLUSH_PIDNS)
FAKE(FLUSH_ROWS)
FAKE(FLUSH_COUNT)
FAKE(FLUSH_STAT)
FAKE(FLUSH_PURGE)
FAKE(FLUSH_ADVANCE)

static int fake_write_err(void *ctx, int err)
{
	struct fake *f = ctx;

	f->write_errs++;
	f->write_failed = 1;
	return err;
}

static const struct flush_ops fake_ops = {
	.run = {
		[FLUSH_CONSUME] = fake_FLUSH_CONSUME,
		[FLUSH_REFRESH] = fake_FLUSH_REFRESH,
		[FLUSH_COLLECT] = fake_FLUSH_COLLECT,
		[FLUSH_RESOLVE] = fake_FLUSH_RESOLVE,
		[FLUSH_STCK] = fake_FLUSH_STCK,
		[FLUSH_KSYM] = fake_FLUSH_KSYM,
		[FLUSH_ESYM] = fake_FLUSH_ESYM,
		[FLUSH_TAKE_RING] = fake_FLUSH_TAKE_RING,
		[FLUSH_MAPS] = fake_FLUSH_MAPS,
		[FLUSH_PIDNS] = fake_FLUSH_PIDNS,
		[FLUSH_ROWS] = fake_FLUSH_ROWS,
		[FLUSH_COUNT] = fake_FLUSH_COUNT,
		[FLUSH_STAT] = fake_FLUSH_STAT,
		[FLUSH_PURGE] = fake_FLUSH_PURGE,
		[FLUSH_ADVANCE] = fake_FLUSH_ADVANCE,
	},
	.write_err = fake_write_err,
};

/* One flush of a fake that fails step @fail_at with @err; returns its error. */
static int run_to(struct fake *f, struct stk_writer *w, int final, enum flush_step_id fail_at,
		  int err)
{
	struct flush_ctx fc = { .final = final, .t1 = T1 };

	memset(f, 0, sizeof(*f));
	f->w = w;
	f->t0 = T0;
	f->fail_at = fail_at;
	f->fail_err = err;
	return flush__run(&fake_ops, f, &fc);
}

static int run(struct fake *f, int final, enum flush_step_id fail_at, int err)
{
	return run_to(f, NULL, final, fail_at, err);
}

/* Where step @name is in @log (a word of it), or -1. */
static int pos(const char *log, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = log; (p = strstr(p, name)); p += n)
		if ((p == log || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return (int)(p - log);
	return -1;
}

#define STEPS_TO_ROWS                                                        \
	"consume refresh collect resolve STCK KSYM ESYM take_ring MAPS PIDN rows"

START_TEST(order_of_a_flush)
{
	struct fake f;

	ck_assert_int_eq(run(&f, 0, FLUSH_NR_STEPS, 0), 0);
	ck_assert_str_eq(f.log, STEPS_TO_ROWS " count STAT purge advance");
	/* What a row references is in the file before the row. */
	ck_assert_int_lt(pos(f.log, "STCK"), pos(f.log, "rows"));
	ck_assert_int_lt(pos(f.log, "KSYM"), pos(f.log, "rows"));
	ck_assert_int_lt(pos(f.log, "ESYM"), pos(f.log, "rows"));
	ck_assert_int_lt(pos(f.log, "MAPS"), pos(f.log, "rows"));
	ck_assert_int_lt(pos(f.log, "ESYM"), pos(f.log, "take_ring"));
	ck_assert_uint_eq(f.seq, 1);
	ck_assert_int_eq(f.purged, 1);
	ck_assert_uint_eq(f.t0, T1);
	ck_assert_int_eq(f.write_errs, 0);
}
END_TEST

START_TEST(final_flush_has_no_stat)
{
	struct fake f;

	ck_assert_int_eq(run(&f, 1, FLUSH_NR_STEPS, 0), 0);
	ck_assert_str_eq(f.log, STEPS_TO_ROWS " count purge advance");
	ck_assert_int_eq(pos(f.log, "STAT"), -1);
	ck_assert_uint_eq(f.t0, T1);
}
END_TEST

/* A write error: the later writes do not run, the flush is counted, the
 * interval and the processes stay for the next try. */
START_TEST(write_error_stops_later_writes)
{
	struct fake f;

	ck_assert_int_eq(run(&f, 0, FLUSH_KSYM, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(f.log, "consume refresh collect resolve STCK KSYM count");
	ck_assert_int_eq(f.write_errs, 1);
	ck_assert(f.write_failed);
	ck_assert_uint_eq(f.seq, 1);
	ck_assert_int_eq(f.purged, 0);
	ck_assert_uint_eq(f.t0, T0);

	ck_assert_int_eq(run(&f, 0, FLUSH_ROWS, -EIO), -EIO);
	ck_assert_str_eq(f.log, STEPS_TO_ROWS " count");
	ck_assert_int_eq(f.write_errs, 1);
	ck_assert_uint_eq(f.t0, T0);

	ck_assert_int_eq(run(&f, 0, FLUSH_STAT, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(f.log, STEPS_TO_ROWS " count STAT");
	ck_assert_int_eq(f.write_errs, 1);
	ck_assert_int_eq(f.purged, 0);
	ck_assert_uint_eq(f.t0, T0);
}
END_TEST

/* ESYM failing to write still takes the ring (its frames are the only copy). */
START_TEST(take_ring_after_esym_write_error)
{
	struct fake f;

	ck_assert_int_eq(run(&f, 0, FLUSH_ESYM, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(f.log, "consume refresh collect resolve STCK KSYM ESYM take_ring count");
	ck_assert_int_eq(f.write_errs, 1);
	ck_assert_uint_eq(f.t0, T0);
	ck_assert_int_eq(f.purged, 0);

	/* No ESYM, no take_ring. */
	ck_assert_int_eq(run(&f, 0, FLUSH_STCK, -ENOSPC), -ENOSPC);
	ck_assert_int_eq(pos(f.log, "take_ring"), -1);
}
END_TEST

/* ESYM out of memory is no write error: the flush ends there, uncounted. */
START_TEST(esym_out_of_memory_ends_flush)
{
	struct fake f;

	ck_assert_int_eq(run(&f, 0, FLUSH_ESYM, -ENOMEM), -ENOMEM);
	ck_assert_str_eq(f.log, "consume refresh collect resolve STCK KSYM ESYM");
	ck_assert_int_eq(f.write_errs, 0);
	ck_assert(!f.write_failed);
	ck_assert_uint_eq(f.seq, 0);
	ck_assert_int_eq(f.purged, 0);
	ck_assert_uint_eq(f.t0, T0);

	/* -ENOMEM of another writing step is a write error. */
	ck_assert_int_eq(run(&f, 0, FLUSH_MAPS, -ENOMEM), -ENOMEM);
	ck_assert_int_eq(f.write_errs, 1);
	ck_assert_uint_eq(f.seq, 1);
}
END_TEST

/* An error before the writes ends the flush as the step gave it: nothing
 * written, not counted, not a write error. */
START_TEST(read_error_ends_flush)
{
	static const enum flush_step_id steps[] = { FLUSH_REFRESH, FLUSH_COLLECT, FLUSH_RESOLVE };
	static const char *const logs[] = {
		"consume refresh",
		"consume refresh collect",
		"consume refresh collect resolve",
	};
	struct fake f;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ck_assert_int_eq(run(&f, 0, steps[i], -EINVAL), -EINVAL);
		ck_assert_str_eq(f.log, logs[i]);
		ck_assert_int_eq(f.write_errs, 0);
		ck_assert_uint_eq(f.seq, 0);
		ck_assert_int_eq(f.purged, 0);
		ck_assert_uint_eq(f.t0, T0);
	}
}
END_TEST

/*
 * The tags of the chunks one flush of the fakes writes into a file in
 * memory, as the reader reads them back, into @tags ("STCK KSYM ...").
 */
static void flush_to_file(int final, enum flush_step_id fail_at, int err, char *tags,
			  size_t size)
{
	int fd = memfd_create("check_record_flush", 0);
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk c;
	struct fake f;
	size_t len = 0;
	void *buf;
	off_t end;

	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(dup(fd), NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(run_to(&f, w, final, fail_at, err), err);
	ck_assert_int_eq(stk_writer__close(w), 0);
	end = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(end, 0);
	buf = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(buf, MAP_FAILED);
	r = stk_reader__open_mem(buf, (size_t)end);
	ck_assert_ptr_nonnull(r);
	tags[0] = 0;
	while ((err = stk_reader__next(r, &c)) == 1) {
		if (c.type == STK_CHUNK_INDX)
			continue;
		len += snprintf(tags + len, size - len, "%s%s", len ? " " : "", c.tag);
		ck_assert_uint_lt(len, size);
	}
	ck_assert_msg(err == 0, "%s", stk_reader__errmsg(r));
	stk_reader__close(r);
	munmap(buf, (size_t)end);
	close(fd);
}

/* Read back, the file has what a row references before the row. */
START_TEST(chunks_read_back_in_order)
{
	char tags[256];

	flush_to_file(0, FLUSH_NR_STEPS, 0, tags, sizeof(tags));
	ck_assert_str_eq(tags, "STCK KSYM ESYM MAPS pidn CNTS STAT");
	flush_to_file(1, FLUSH_NR_STEPS, 0, tags, sizeof(tags));
	ck_assert_str_eq(tags, "STCK KSYM ESYM MAPS pidn CNTS");
	/* A failed MAPS: no rows whose mappings are missing. */
	flush_to_file(0, FLUSH_MAPS, -ENOSPC, tags, sizeof(tags));
	ck_assert_str_eq(tags, "STCK KSYM ESYM");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_flush");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, order_of_a_flush);
	tcase_add_test(tc, final_flush_has_no_stat);
	tcase_add_test(tc, write_error_stops_later_writes);
	tcase_add_test(tc, take_ring_after_esym_write_error);
	tcase_add_test(tc, esym_out_of_memory_ends_flush);
	tcase_add_test(tc, read_error_ends_flush);
	tcase_add_test(tc, chunks_read_back_in_order);
	suite_add_tcase(s, tc);
	return check_run(s);
}
