// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder's stack store (record/engine/stackstore.c), fed ring records as
 * BPF sends them, against a real BPF LRU hash of the "stacks" set's shape:
 * a stack is numbered once however often it is sent; a held stack no row
 * referenced is forgotten two flushes after it came and its id taken out
 * of the kernel's set (so that it is sent again); one an off-CPU holder
 * still has is kept; a reference to a stack never sent or forgotten is
 * -ENOENT, never another stack; malformed records are skipped.
 * Needs root for the maps (else skipped, 77).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "check_main.h"
#include "idmap.h"
#include "stackstore.h"

static int new_set(uint32_t entries)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "stacks", sizeof(uint64_t), 1, entries,
				NULL);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* A user stack of @nr frames from @base, sent as BPF does: the record into
 * the store, the id into the set.  Returns the id. */
static uint64_t send(struct stackstore *ss, int fd, uint64_t base, uint32_t nr)
{
	struct stkrec_stack s = { .nr = nr, .kind = STKREC_RING_USER };
	uint8_t one = 1;
	uint64_t id;

	for (uint32_t i = 0; i < nr; i++)
		s.ips[i] = base + i;
	id = stkrec_stack_id(s.ips, nr, 0);
	s.id = id;
	stackstore__add_record(ss, &s, sizeof(s) - sizeof(s.ips) + nr * sizeof(uint64_t));
	ck_assert_int_eq(bpf_map_update_elem(fd, &id, &one, BPF_ANY), 0);
	return id;
}

static int64_t see(struct stackstore *ss, uint64_t id, int *added)
{
	const struct stkrec_stack *s;
	int64_t ref = (int64_t)id;

	ck_assert_int_eq(stackstore__see(ss, 1, &ref, &s), 0);
	*added = s != NULL;
	return ref;
}

static int in_set(int fd, uint64_t id)
{
	uint8_t v;

	return bpf_map_lookup_elem(fd, &id, &v) == 0;
}

static struct stk_writer *writer(void)
{
	FILE *f = tmpfile();
	struct stk_writer *w;

	ck_assert_ptr_nonnull(f);
	w = stk_writer__fdopen(dup(fileno(f)), NULL);
	fclose(f);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* A store for a set of @capacity ids, the real set of @set_entries, and a
 * writer: what every case below starts from. */
struct fx {
	struct stackstore *ss;
	struct stk_writer *w;
	int fd;
	uint64_t chunks;
};

static void fx_open(struct fx *f, uint32_t capacity, uint32_t set_entries)
{
	f->ss = stackstore__new(capacity);
	ck_assert_ptr_nonnull(f->ss);
	f->w = writer();
	f->fd = new_set(set_entries);
	f->chunks = 0;
	stackstore__set_map(f->ss, f->fd);
}

static void fx_close(struct fx *f)
{
	stk_writer__discard(f->w);
	stackstore__free(f->ss);
	close(f->fd);
}

static void flush(struct fx *f)
{
	ck_assert_int_eq(stackstore__write(f->ss, f->w, &f->chunks, 0), 0);
}

START_TEST(numbered_once_however_often_sent)
{
	struct stackstore_stats st;
	struct fx f;
	uint64_t a, b;
	int added;

	fx_open(&f, 64, 64);
	a = send(f.ss, f.fd, 0x1000, 3);
	b = send(f.ss, f.fd, 0x2000, 5);
	/* A second CPU met @a at the same moment. */
	send(f.ss, f.fd, 0x1000, 3);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert(added);
	ck_assert_int_eq(see(f.ss, b, &added), 2);
	ck_assert(added);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert(!added);
	flush(&f);
	ck_assert_uint_eq(f.chunks, 1);
	/* The set evicted @a; sent again much later: still file id 1. */
	for (int i = 0; i < 5; i++)
		flush(&f);
	send(f.ss, f.fd, 0x1000, 3);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert(!added);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.written, 2);
	ck_assert_uint_eq(st.from_ring, 2);
	ck_assert_uint_eq(st.resent, 2);
	ck_assert_uint_eq(st.forgotten, 0);
	ck_assert_uint_eq(stackstore__count(f.ss), 2);
	/* Written stacks stay in the set: their rows need nothing more. */
	ck_assert(in_set(f.fd, a) && in_set(f.fd, b));
	fx_close(&f);
}
END_TEST

/* Profile: a stack no row referenced in the flush it came in or the next
 * leaves the kernel's set; a sample that found its id just before is
 * drained a flush later, so the frames stay that flush more. */
START_TEST(unreferenced_forgotten_after_two_flushes)
{
	struct stackstore_stats st;
	struct fx f;
	uint64_t a, b;
	int added;

	fx_open(&f, 64, 64);
	a = send(f.ss, f.fd, 0x1000, 2);
	b = send(f.ss, f.fd, 0x3000, 2);
	flush(&f);
	/* Still held a flush later (a sample counted after the flip). */
	ck_assert_ptr_nonnull(stackstore__frames(f.ss, a));
	ck_assert_int_eq(see(f.ss, b, &added), 1);
	flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.forgotten, 0);
	ck_assert(!in_set(f.fd, a));
	ck_assert(in_set(f.fd, b));
	ck_assert_ptr_nonnull(stackstore__frames(f.ss, a));
	flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.forgotten, 1);
	ck_assert_uint_eq(stackstore__held(f.ss), 0);
	/* A row that still references it gets no stack, not another one. */
	ck_assert_int_eq(see(f.ss, a, &added), -ENOENT);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.missing, 1);
	/* Sent again, it is taken again. */
	send(f.ss, f.fd, 0x1000, 2);
	ck_assert_int_eq(see(f.ss, a, &added), 2);
	ck_assert(added);
	fx_close(&f);
}
END_TEST

/* Many stacks in one flush, nearly all written: the few that no row
 * referenced, the last to come, still leave two flushes later (the walk
 * of a flush's stacks stops only once none is held), and every stack
 * sent twice among them is numbered once. */
START_TEST(the_few_unreferenced_among_many_are_forgotten)
{
	struct stackstore_stats st;
	uint64_t ids[300];
	struct fx f;
	int added;

	fx_open(&f, 1024, 1024);
	for (int i = 0; i < 300; i++) {
		ids[i] = send(f.ss, f.fd, 0x100000 + (uint64_t)i * 0x100, 4);
		if (i % 7 == 0)
			send(f.ss, f.fd, 0x100000 + (uint64_t)i * 0x100, 4); /* two CPUs */
	}
	for (int i = 0; i < 297; i++)
		ck_assert_int_eq(see(f.ss, ids[i], &added), i + 1);
	ck_assert_uint_eq(stackstore__held(f.ss), 3);
	flush(&f);
	flush(&f);
	flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.from_ring, 300);
	ck_assert_uint_eq(st.resent, 43);
	ck_assert_uint_eq(st.written, 297);
	ck_assert_uint_eq(st.forgotten, 3);
	ck_assert_uint_eq(stackstore__held(f.ss), 0);
	for (int i = 297; i < 300; i++) {
		ck_assert(!in_set(f.fd, ids[i]));
		ck_assert_int_eq(see(f.ss, ids[i], &added), -ENOENT);
	}
	ck_assert_int_eq(see(f.ss, ids[5], &added), 6);
	ck_assert(!added);
	fx_close(&f);
}
END_TEST

/* A stack sent again while it waits to be forgotten (out of the set: the
 * kernel sent it once more) is in use: it stays. */
START_TEST(sent_again_is_young_again)
{
	struct stackstore_stats st;
	struct fx f;
	uint64_t a;
	int added;

	fx_open(&f, 64, 64);
	a = send(f.ss, f.fd, 0x1000, 2);
	flush(&f);
	flush(&f);
	ck_assert(!in_set(f.fd, a));
	send(f.ss, f.fd, 0x1000, 2);
	for (int i = 0; i < 2; i++)
		flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.forgotten, 0);
	ck_assert_uint_eq(st.resent, 1);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert(added);
	fx_close(&f);
}
END_TEST

/* The frames of a stack written in this flush are still there (the
 * recorder reads a row's leaf after its stacks were numbered). */
START_TEST(frames_of_a_stack_written_this_flush)
{
	const struct stkrec_stack *s;
	struct fx f;
	uint64_t a, b;
	int added;

	fx_open(&f, 64, 64);
	a = send(f.ss, f.fd, 0x1000, 3);
	b = send(f.ss, f.fd, 0x5000, 2);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert_int_eq(see(f.ss, b, &added), 2);
	s = stackstore__frames(f.ss, a);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nr, 3);
	ck_assert_uint_eq(s->ips[0], 0x1000);
	ck_assert_uint_eq(s->ips[2], 0x1002);
	s = stackstore__frames(f.ss, b);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nr, 2);
	ck_assert_uint_eq(s->ips[1], 0x5001);
	ck_assert_ptr_null(stackstore__frames(f.ss, a ^ 1));
	fx_close(&f);
}
END_TEST

static uint64_t live_id;

static int collect_live(void *ctx, struct idmap *live)
{
	(void)ctx;
	return idmap__set(live, live_id, 1);
}

/* Off-CPU: stacks a blocked task still holds are kept however long it
 * blocks; the others go once more are waiting than the set holds. */
START_TEST(holders_keep_their_stacks)
{
	const struct stkrec_stack *s;
	struct stackstore_stats st;
	struct fx f;
	uint64_t ids[8];
	int added;

	fx_open(&f, 4, 64);
	stackstore__set_live(f.ss, collect_live, NULL);
	for (int i = 0; i < 8; i++)
		ids[i] = send(f.ss, f.fd, 0x1000 * (uint64_t)(i + 1), 4);
	live_id = ids[5];
	for (int i = 0; i < 10; i++)
		flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.forgotten, 7);
	/* All left the set before the holders were asked: whoever finds
	 * one after that sends it again. */
	for (int i = 0; i < 8; i++)
		ck_assert(!in_set(f.fd, ids[i]));
	s = stackstore__frames(f.ss, ids[5]);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nr, 4);
	ck_assert_uint_eq(s->ips[3], 0x6000 + 3);
	/* The episode ends ten flushes later: its stack is there. */
	ck_assert_int_eq(see(f.ss, ids[5], &added), 1);
	ck_assert(added);
	fx_close(&f);
}
END_TEST

/* A long recording: written stacks no row used for 64 flushes are
 * forgotten once there are more than 3 sets' worth of them -- out of the
 * kernel's set at one flush, out of the store at the next -- so the store
 * does not grow with every stack ever written.  Those in use stay: one
 * rows keep referencing, one the kernel keeps sending, one a row
 * references between the two steps.  One forgotten and seen again is sent
 * again and written under a new id. */
START_TEST(written_stacks_unused_for_long_forgotten)
{
	struct stackstore_stats st;
	uint64_t ids[40];
	struct fx f;
	int added, flushes = 0;

	fx_open(&f, 4, 256);
	for (int i = 0; i < 40; i++) {
		ids[i] = send(f.ss, f.fd, 0x10000 * (uint64_t)(i + 1), 3);
		ck_assert_int_eq(see(f.ss, ids[i], &added), i + 1);
	}
	while (in_set(f.fd, ids[3]) && flushes < 200) {
		ck_assert_int_eq(see(f.ss, ids[0], &added), 1);	/* a row, every flush */
		send(f.ss, f.fd, 0x20000, 3);			/* the kernel again */
		flush(&f);
		flushes++;
	}
	/* The first step, 64 flushes on: out of the kernel's set, still known. */
	ck_assert_int_eq(flushes, 64);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.written_forgotten, 0);
	ck_assert(in_set(f.fd, ids[0]) && in_set(f.fd, ids[1]));
	ck_assert(!in_set(f.fd, ids[2]) && !in_set(f.fd, ids[39]));
	/* A sample that found it before it left, drained now. */
	ck_assert_int_eq(see(f.ss, ids[2], &added), 3);
	ck_assert(!added);
	flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.written_forgotten, 37);
	ck_assert_uint_eq(st.forgotten, 0);
	ck_assert_int_eq(see(f.ss, ids[0], &added), 1);
	ck_assert_int_eq(see(f.ss, ids[1], &added), 2);
	ck_assert_int_eq(see(f.ss, ids[2], &added), 3);
	ck_assert(!added);
	/* Forgotten: a row that still named it would find nothing (none
	 * can: it left the set a flush before) ... */
	ck_assert_int_eq(see(f.ss, ids[4], &added), -ENOENT);
	/* ... and sent again it is written again. */
	send(f.ss, f.fd, 0x10000 * 6, 3);
	ck_assert_int_eq(see(f.ss, ids[5], &added), 41);
	ck_assert(added);
	/* Under 3 sets' worth (12) now: nothing more goes, however long. */
	for (int i = 0; i < 200; i++)
		flush(&f);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.written_forgotten, 37);
	ck_assert(in_set(f.fd, ids[5]));
	fx_close(&f);
}
END_TEST

START_TEST(malformed_records_skipped)
{
	struct stackstore *ss = stackstore__new(64);
	struct stkrec_stack s = { .nr = 2, .kind = STKREC_RING_USER };
	struct stackstore_stats st;
	size_t head = sizeof(s) - sizeof(s.ips);

	ck_assert_ptr_nonnull(ss);
	stackstore__add_record(ss, &s, head - 1);		/* short header */
	stackstore__add_record(ss, &s, head + 8);		/* frames cut */
	s.kind = 7;
	stackstore__add_record(ss, &s, head + 16);		/* unknown kind */
	s.kind = STKREC_RING_KERNEL;
	s.nr = STKREC_MAX_DEPTH + 1;
	stackstore__add_record(ss, &s, sizeof(s));		/* too deep */
	s.kind = STKREC_RING_USER;
	s.nr = STKREC_MAX_NR + 1;
	stackstore__add_record(ss, &s, sizeof(s));		/* too many words */
	stackstore__stats(ss, &st);
	ck_assert_uint_eq(st.ring_skipped, 5);
	ck_assert_uint_eq(st.from_ring, 0);
	ck_assert_uint_eq(stackstore__held(ss), 0);
	stackstore__free(ss);
}
END_TEST

/* A fake resolver: a copy's frames come after late_wait "not yet"s. */
static int late_wait;
static uint32_t late_added_tgid;
static int late_added;

static int fake_resolve(void *ctx, struct stkrec_stack *s)
{
	uint64_t seq = s->ips[1];

	(void)ctx;
	if (late_wait > 0) {
		late_wait--;
		return 1;
	}
	s->nr = 3;
	s->ips[0] = 0x9000 + seq;
	s->ips[1] = 0x9100;
	s->ips[2] = 0x9200;
	return 0;
}

static int on_late(void *ctx, uint32_t tgid, const struct stkrec_stack *s)
{
	(void)ctx;
	ck_assert_uint_eq(s->nr, 3);
	ck_assert_uint_eq(s->ips[1], 0x9100);
	late_added_tgid = tgid;
	late_added++;
	return 0;
}

/* A copied stack whose table is being built: its rows get an id at once,
 * its frames are queued under that id at a later flush; the stacks queued
 * around it keep their own frames (the queue's ids have a gap). */
START_TEST(late_copied_stack_numbered_then_written)
{
	struct stkrec_stack ph = { .nr = 2, .kind = STKREC_RING_USER };
	struct stackstore_stats st;
	const struct stkrec_stack *fr, *added;
	struct fx f;
	uint64_t a, b, p;
	int64_t ref;
	uint8_t one = 1;
	int seen;

	fx_open(&f, 64, 64);
	stackstore__set_resolver(f.ss, fake_resolve, NULL);
	late_wait = 2;
	late_added = 0;
	a = send(f.ss, f.fd, 0x1000, 3);
	ph.ips[0] = STKREC_UW_MARK | STKREC_UW_DEFERRED;
	ph.ips[1] = 77;
	p = stkrec_stack_id(ph.ips, 2, 0);
	ph.id = p;
	stackstore__add_record(f.ss, &ph, sizeof(ph) - sizeof(ph.ips) + 2 * sizeof(uint64_t));
	ck_assert_int_eq(bpf_map_update_elem(f.fd, &p, &one, BPF_ANY), 0);
	ck_assert_int_eq(see(f.ss, a, &seen), 1);
	ref = (int64_t)p;
	ck_assert_int_eq(stackstore__see(f.ss, 42, &ref, &added), 0);
	ck_assert_int_eq(ref, 2);		/* numbered now ... */
	ck_assert_ptr_null(added);		/* ... its frames later */
	b = send(f.ss, f.fd, 0x2000, 4);
	ck_assert_int_eq(see(f.ss, b, &seen), 3);
	/* Each queued stack's own frames, across the gap. */
	fr = stackstore__frames(f.ss, a);
	ck_assert_ptr_nonnull(fr);
	ck_assert_uint_eq(fr->ips[0], 0x1000);
	fr = stackstore__frames(f.ss, b);
	ck_assert_ptr_nonnull(fr);
	ck_assert_uint_eq(fr->ips[0], 0x2000);
	ck_assert_ptr_null(stackstore__frames(f.ss, p));
	flush(&f);
	/* The table still being built: nothing yet. */
	ck_assert_int_eq(stackstore__retry_late(f.ss, on_late, NULL), 0);
	ck_assert_int_eq(late_added, 0);
	flush(&f);
	/* In: written under id 2, said once, with its process. */
	ck_assert_int_eq(stackstore__retry_late(f.ss, on_late, NULL), 0);
	ck_assert_int_eq(late_added, 1);
	ck_assert_uint_eq(late_added_tgid, 42);
	fr = stackstore__frames(f.ss, p);
	ck_assert_ptr_nonnull(fr);
	ck_assert_uint_eq(fr->ips[0], 0x9000 + 77);
	flush(&f);
	ck_assert_int_eq(stackstore__retry_late(f.ss, on_late, NULL), 0);
	ck_assert_int_eq(late_added, 1);
	/* A row meeting the placeholder again gets the same id. */
	ref = (int64_t)p;
	ck_assert_int_eq(stackstore__see(f.ss, 42, &ref, &added), 0);
	ck_assert_int_eq(ref, 2);
	stackstore__stats(f.ss, &st);
	ck_assert_uint_eq(st.late, 1);
	ck_assert_uint_eq(st.written, 3);
	ck_assert_uint_eq(stackstore__count(f.ss), 3);
	fx_close(&f);
}
END_TEST

/* Rotating: a new file holds no stack yet.  A stack written to the last
 * file gets a new file id from 1 and its frames again (the kernel does
 * not send it again: it is still in its set); one no row of the new file
 * references is forgotten two flushes on, as one just sent. */
START_TEST(new_file_writes_written_stacks_again_from_id_1)
{
	const struct stkrec_stack *s;
	int64_t ref;
	struct fx f;
	uint64_t a, b;
	int added;

	fx_open(&f, 64, 64);
	ck_assert_int_eq(stackstore__keep_written(f.ss), 0);
	a = send(f.ss, f.fd, 0x1000, 3);
	b = send(f.ss, f.fd, 0x2000, 5);
	ck_assert_int_eq(see(f.ss, a, &added), 1);
	ck_assert_int_eq(see(f.ss, b, &added), 2);
	flush(&f);
	ck_assert_uint_eq(stackstore__count(f.ss), 2);

	ck_assert_int_eq(stackstore__new_file(f.ss), 0);
	ck_assert_uint_eq(stackstore__count(f.ss), 0);
	ck_assert_uint_eq(stackstore__held(f.ss), 2);
	/* @b first now: numbered in the new file's order, frames again. */
	ref = (int64_t)b;
	ck_assert_int_eq(stackstore__see(f.ss, 1, &ref, &s), 0);
	ck_assert_int_eq(ref, 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nr, 5);
	ck_assert_uint_eq(s->ips[0], 0x2000);
	ck_assert_uint_eq(s->ips[4], 0x2004);
	ck_assert_int_eq(see(f.ss, b, &added), 1);
	ck_assert(!added);
	flush(&f);
	flush(&f);
	/* @a: no row in the new file for two flushes: out of the set and
	 * forgotten, sent again when next seen. */
	ck_assert(!in_set(f.fd, a));
	ck_assert(in_set(f.fd, b));
	flush(&f);
	ck_assert_int_eq(see(f.ss, a, &added), -ENOENT);
	a = send(f.ss, f.fd, 0x1000, 3);
	ck_assert_int_eq(see(f.ss, a, &added), 2);
	ck_assert(added);
	fx_close(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_stackstore");
	TCase *tc = tcase_create("core");

	if (check_probed(bpf_map_create(BPF_MAP_TYPE_LRU_HASH, NULL, 8, 1, 1, NULL), "BPF maps"))
		return 77;
	tcase_add_test(tc, numbered_once_however_often_sent);
	tcase_add_test(tc, unreferenced_forgotten_after_two_flushes);
	tcase_add_test(tc, sent_again_is_young_again);
	tcase_add_test(tc, the_few_unreferenced_among_many_are_forgotten);
	tcase_add_test(tc, frames_of_a_stack_written_this_flush);
	tcase_add_test(tc, holders_keep_their_stacks);
	tcase_add_test(tc, written_stacks_unused_for_long_forgotten);
	tcase_add_test(tc, malformed_records_skipped);
	tcase_add_test(tc, late_copied_stack_numbered_then_written);
	tcase_add_test(tc, new_file_writes_written_stacks_again_from_id_1);
	suite_add_tcase(s, tc);
	return check_run(s);
}
