// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_damage: exhaustive damage to a small capture with every chunk type,
 * run under ASan+UBSan.  Each flipped byte must be reported (never silently
 * accepted) and must cost only the chunk it hits; each cut must return the
 * complete chunks before it and then say the file is truncated.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "stk.h"
#include "stk_int.h"
#include "../tools/format_sample.h"

/* More calls than any damaged small file can need: a reader that keeps
 * returning without reaching the end has hung. */
#define MAX_CALLS 1000

struct ref_chunk {
	uint64_t start, end;	/* [start, end) bytes of header + payload */
	char tag[5];
	uint32_t seq;
};

struct ref {
	uint8_t *buf;
	size_t size;
	struct ref_chunk chunks[FS_NR_CHUNKS + 1];
	size_t nr;
	struct fs_sample sample;
};

static void ref_make(struct ref *ref, uint64_t seed, int small)
{
	char path[] = "/tmp/check_damage.XXXXXX";
	struct stk_read_summary sum;
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct stat st;
	int fd;

	memset(ref, 0, sizeof(*ref));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	fs_init(&ref->sample, seed, small);
	w = stk_writer__fdopen(dup(fd), NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(fs_write(&ref->sample, w), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ref->size = st.st_size;
	ref->buf = malloc(ref->size);
	ck_assert_int_eq(pread(fd, ref->buf, ref->size, 0), (ssize_t)ref->size);
	close(fd);
	unlink(path);

	r = stk_reader__open_mem(ref->buf, ref->size);
	ck_assert_ptr_nonnull(r);
	while (stk_reader__next(r, &ch) == 1) {
		struct ref_chunk *c = &ref->chunks[ref->nr++];

		c->start = ch.offset;
		c->end = ch.offset + STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN + ch.comp_size;
		memcpy(c->tag, ch.tag, 5);
		c->seq = ch.seq;
	}
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	ck_assert_uint_eq(ref->nr, FS_NR_CHUNKS + 1);
	stk_reader__close(r);
}

static void ref_free(struct ref *ref)
{
	fs_free(&ref->sample);
	free(ref->buf);
}

struct outcome {
	int opened;
	int open_errno;
	uint64_t offsets[MAX_CALLS];	/* offsets of the chunks returned */
	size_t nr;
	int errors;
	int last_err;
	struct stk_read_summary sum;
};

/* Reads @buf to the end, collecting what came back. */
static void read_all(const uint8_t *buf, size_t size, struct outcome *o)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	int calls, ret;

	memset(o, 0, sizeof(*o));
	errno = 0;
	r = stk_reader__open_mem(buf, size);
	if (!r) {
		o->open_errno = errno;
		return;
	}
	o->opened = 1;
	for (calls = 0; calls < MAX_CALLS; calls++) {
		ret = stk_reader__next(r, &ch);
		if (ret == 0)
			break;
		if (ret < 0) {
			o->errors++;
			o->last_err = ret;
			ck_assert_uint_gt(strlen(stk_reader__errmsg(r)), 0);
			ck_assert_int_eq(strncmp(stk_reader__errmsg(r), "byte ", 5), 0);
			continue;
		}
		ck_assert_uint_le(ch.offset + ch.comp_size, size);
		o->offsets[o->nr++] = ch.offset;
	}
	ck_assert_msg(calls < MAX_CALLS, "reader did not reach the end in %d calls", MAX_CALLS);
	/* The end is sticky. */
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &o->sum);
	ck_assert_uint_eq(o->sum.errors, o->errors);
	ck_assert_uint_eq(o->sum.chunks, o->nr);
	stk_reader__close(r);
}

static int returned(const struct outcome *o, uint64_t offset)
{
	size_t i;

	for (i = 0; i < o->nr; i++)
		if (o->offsets[i] == offset)
			return 1;
	return 0;
}

static void check_flip(const struct ref *ref, size_t off, uint8_t mask)
{
	static struct outcome o;
	uint8_t *buf = malloc(ref->size);
	size_t i;

	memcpy(buf, ref->buf, ref->size);
	buf[off] ^= mask;
	read_all(buf, ref->size, &o);
	if (!o.opened) {
		/* Only a damaged magic or signature makes a file unreadable. */
		ck_assert_msg(off < STK_FRAME_PREFIX + STK_SIGNATURE_LEN,
			      "open failed for a flip at byte %zu", off);
		ck_assert_int_eq(o.open_errno, EBADMSG);
		free(buf);
		return;
	}
	ck_assert_msg(o.errors > 0, "flip 0x%02x at byte %zu was not reported", mask, off);
	for (i = 0; i < ref->nr; i++) {
		const struct ref_chunk *c = &ref->chunks[i];
		int hit = off >= c->start && off < c->end;

		if (hit)
			ck_assert_msg(!returned(&o, c->start),
				      "damaged chunk %s at %llu returned (flip at %zu)", c->tag,
				      (unsigned long long)c->start, off);
		else
			ck_assert_msg(returned(&o, c->start),
				      "intact chunk %s at %llu lost (flip at %zu)", c->tag,
				      (unsigned long long)c->start, off);
	}
	free(buf);
}

START_TEST(every_flipped_byte_is_reported_and_costs_one_chunk)
{
	struct ref ref;
	size_t off;

	ref_make(&ref, 42, 1);
	for (off = 0; off < ref.size; off++) {
		check_flip(&ref, off, 0xff);
		check_flip(&ref, off, 0x01);
	}
	ref_free(&ref);
}
END_TEST

static int at_boundary(const struct ref *ref, size_t cut)
{
	size_t i;

	if (cut == STK_FRAME_PREFIX + STK_FILE_HDR_LEN || cut == ref->size)
		return 1;
	for (i = 0; i < ref->nr; i++)
		if (ref->chunks[i].end == cut)
			return 1;
	return 0;
}

START_TEST(every_cut_returns_the_complete_chunks_then_enodata)
{
	static struct outcome o;
	struct ref ref;
	size_t cut, i, want;

	ref_make(&ref, 43, 1);
	for (cut = 0; cut <= ref.size; cut++) {
		read_all(ref.buf, cut, &o);
		if (cut < STK_FRAME_PREFIX + STK_FILE_HDR_LEN) {
			ck_assert_msg(!o.opened, "cut at %zu opened", cut);
			ck_assert_int_eq(o.open_errno, ENODATA);
			continue;
		}
		ck_assert_msg(o.opened, "cut at %zu did not open", cut);
		for (want = 0; want < ref.nr && ref.chunks[want].end <= cut; want++)
			;
		ck_assert_msg(o.nr == want, "cut at %zu: %zu chunks, want %zu", cut, o.nr, want);
		for (i = 0; i < want; i++)
			ck_assert_uint_eq(o.offsets[i], ref.chunks[i].start);
		if (at_boundary(&ref, cut)) {
			ck_assert_msg(o.errors == 0, "cut at boundary %zu reported an error", cut);
			ck_assert_int_eq(o.sum.truncated, 0);
			ck_assert_int_eq(o.sum.closed, cut == ref.size);
		} else {
			ck_assert_msg(o.errors == 1 && o.last_err == -ENODATA,
				      "cut at %zu: %d errors, last %d", cut, o.errors, o.last_err);
			ck_assert_int_eq(o.sum.truncated, 1);
			ck_assert_int_eq(o.sum.closed, 0);
		}
	}
	ref_free(&ref);
}
END_TEST

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

START_TEST(random_overwrites_are_reported_without_crashing)
{
	static struct outcome o;
	uint64_t seed = 7;
	struct ref ref;
	uint8_t *buf;
	int iter;

	ref_make(&ref, 44, 0);
	buf = malloc(ref.size);
	for (iter = 0; iter < 300; iter++) {
		size_t off = rnd(&seed) % ref.size, len = 1 + rnd(&seed) % 16, i;

		memcpy(buf, ref.buf, ref.size);
		for (i = 0; i < len && off + i < ref.size; i++)
			buf[off + i] = rnd(&seed);
		if (!memcmp(buf, ref.buf, ref.size))
			continue;
		read_all(buf, ref.size, &o);
		ck_assert_msg(!o.opened || o.errors > 0, "overwrite at %zu not reported", off);
	}
	free(buf);
	ref_free(&ref);
}
END_TEST

START_TEST(inserted_garbage_costs_at_most_one_chunk)
{
	static struct outcome o;
	uint64_t seed = 8;
	struct ref ref;
	uint8_t *buf;
	int iter;

	ref_make(&ref, 45, 1);
	buf = malloc(ref.size + 64);
	for (iter = 0; iter < 300; iter++) {
		/* After the first header, so the file still opens. */
		size_t off = STK_FRAME_PREFIX + STK_FILE_HDR_LEN +
			     rnd(&seed) % (ref.size - STK_FRAME_PREFIX - STK_FILE_HDR_LEN);
		size_t len = 1 + rnd(&seed) % 64, i;

		memcpy(buf, ref.buf, off);
		for (i = 0; i < len; i++)
			buf[off + i] = rnd(&seed);
		memcpy(buf + off + len, ref.buf + off, ref.size - off);
		read_all(buf, ref.size + len, &o);
		ck_assert(o.opened);
		ck_assert_msg(o.errors > 0, "insertion at %zu not reported", off);
		ck_assert_msg(o.nr + 1 >= ref.nr, "insertion at %zu: %zu of %zu chunks", off, o.nr,
			      ref.nr);
	}
	free(buf);
	ref_free(&ref);
}
END_TEST

START_TEST(damaged_second_segment_header_keeps_its_chunks_apart)
{
	static struct outcome o;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct ref a, b;
	uint8_t *buf;
	size_t i, size;

	ref_make(&a, 46, 1);
	ref_make(&b, 47, 1);
	size = a.size + b.size;
	buf = malloc(size);
	memcpy(buf, a.buf, a.size);
	memcpy(buf + a.size, b.buf, b.size);
	buf[a.size + STK_FRAME_PREFIX + FH_MONO_START] ^= 0x40;
	read_all(buf, size, &o);
	ck_assert(o.opened);
	ck_assert_int_eq(o.errors, 1);
	ck_assert_uint_eq(o.nr, a.nr + b.nr);
	for (i = 0; i < b.nr; i++)
		ck_assert_uint_eq(o.offsets[a.nr + i], a.size + b.chunks[i].start);
	ck_assert_int_eq(o.sum.closed, 1);

	/* b's chunks form a segment of their own: stack ids must not mix. */
	r = stk_reader__open_mem(buf, size);
	while (stk_reader__next(r, &ch) != 0)
		;
	ck_assert_uint_eq(stk_reader__segment_count(r), 2);
	ck_assert_uint_eq(stk_reader__segment(r, 1)->offset, a.size + b.chunks[0].start);
	stk_reader__close(r);
	free(buf);
	ref_free(&a);
	ref_free(&b);
}
END_TEST

/* A capture cut inside a chunk and followed by intact captures (cat): the
 * cut chunk's declared length runs over the next captures' headers and
 * chunks.  Its payload CRC fails; everything after its header must still
 * be found, not skipped with the length. */
START_TEST(cut_capture_followed_by_intact_ones_loses_only_the_cut_chunk)
{
	enum { NR_INTACT = 9 };
	static struct outcome o;
	struct ref a, b;
	size_t i, k, big = 1, cut, size;
	uint8_t *buf;

	ref_make(&a, 48, 0);
	ref_make(&b, 49, 0);
	/* The chunk with the longest payload, cut right after its header. */
	for (i = 1; i < a.nr; i++)
		if (a.chunks[i].end - a.chunks[i].start > a.chunks[big].end - a.chunks[big].start)
			big = i;
	cut = a.chunks[big].start + STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN + 1;
	/* Its span covers the next capture's header and chunks, and ends
	 * inside the file (else it is a cut, which was always scanned). */
	ck_assert_uint_gt(a.chunks[big].end - cut, b.chunks[2].end);
	ck_assert_uint_lt(a.chunks[big].end - cut, (NR_INTACT - 1) * b.size);
	size = cut + NR_INTACT * b.size;
	buf = malloc(size);
	memcpy(buf, a.buf, cut);
	for (k = 0; k < NR_INTACT; k++)
		memcpy(buf + cut + k * b.size, b.buf, b.size);
	read_all(buf, size, &o);
	ck_assert(o.opened);
	ck_assert_int_eq(o.errors, 1);
	ck_assert_uint_eq(o.nr, big + NR_INTACT * b.nr);
	for (k = 0; k < NR_INTACT; k++)
		for (i = 0; i < b.nr; i++)
			ck_assert_uint_eq(o.offsets[big + k * b.nr + i], cut + k * b.size + b.chunks[i].start);
	free(buf);
	ref_free(&a);
	ref_free(&b);
}
END_TEST

static Suite *damage_suite(void)
{
	Suite *s = suite_create("damage");
	TCase *tc = tcase_create("exhaustive");

	/* Exhaustive loops under sanitizers: generous, not a timing assertion. */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, every_flipped_byte_is_reported_and_costs_one_chunk);
	tcase_add_test(tc, every_cut_returns_the_complete_chunks_then_enodata);
	tcase_add_test(tc, random_overwrites_are_reported_without_crashing);
	tcase_add_test(tc, inserted_garbage_costs_at_most_one_chunk);
	tcase_add_test(tc, damaged_second_segment_header_keeps_its_chunks_apart);
	tcase_add_test(tc, cut_capture_followed_by_intact_ones_loses_only_the_cut_chunk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(damage_suite());
}
