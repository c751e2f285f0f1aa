// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_format: libstk writer and reader, against SPEC.md.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "check_main.h"
#include "stk.h"
#include "stk_int.h"
#include "../tools/format_sample.h"

/* ---- helpers ---- */

struct tmpfile {
	char path[64];
};

static void tmp_make(struct tmpfile *t)
{
	int fd;

	strcpy(t->path, "/tmp/check_format.XXXXXX");
	fd = mkstemp(t->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static uint8_t *file_load(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*size = st.st_size;
	return buf;
}

static void file_store(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
	close(fd);
}

/* A writer (default options) on a new temporary file @t. */
static struct stk_writer *tmp_writer(struct tmpfile *t)
{
	struct stk_writer *w;

	tmp_make(t);
	w = stk_writer__open(t->path, NULL);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Closes @w, which wrote @t, and opens a reader on what it wrote. */
static struct stk_reader *tmp_reread(struct tmpfile *t, struct stk_writer *w)
{
	struct stk_reader *r;

	ck_assert_int_eq(stk_writer__close(w), 0);
	r = stk_reader__open(t->path);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* Closes @r, the reader of @t, and removes @t. */
static void tmp_close(struct tmpfile *t, struct stk_reader *r)
{
	stk_reader__close(r);
	unlink(t->path);
}

/* Writes the sample of @seed to a new file; returns its bytes. */
static uint8_t *sample_file(struct fs_sample *s, uint64_t seed, int small, size_t *size)
{
	struct stk_writer *w;
	struct tmpfile t;
	uint8_t *buf;

	w = tmp_writer(&t);
	fs_init(s, seed, small);
	ck_assert_int_eq(fs_write(s, w), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	buf = file_load(t.path, size);
	unlink(t.path);
	return buf;
}

/* @na bytes of @a then @nb of @b, in one new buffer. */
static uint8_t *concat(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	uint8_t *buf = malloc(na + nb);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, a, na);
	memcpy(buf + na, b, nb);
	return buf;
}

static void assert_comm(const char *got, const char *want)
{
	ck_assert_str_eq(got, want);
}

static void assert_task(const struct stk_task_stacks *a, const struct stk_task_stacks *b)
{
	ck_assert_uint_eq(a->tgid, b->tgid);
	ck_assert_uint_eq(a->tid, b->tid);
	assert_comm(a->comm, b->comm);
	ck_assert_int_eq(a->user_stack, b->user_stack);
	ck_assert_int_eq(a->kernel_stack, b->kernel_stack);
}

/* Checks that chunk @i of the sample was read back exactly. */
static void assert_sample_chunk(const struct fs_sample *s, size_t i, const struct stk_chunk *ch)
{
	size_t k, j;

	ck_assert_str_eq(ch->tag, fs_tags[i]);
	ck_assert_uint_eq(ch->seq, i);
	switch (i) {
	case 0:
		ck_assert_int_eq(ch->type, STK_CHUNK_META);
		ck_assert_uint_eq(ch->u.meta.n, s->nr_kv);
		for (k = 0; k < s->nr_kv; k++) {
			ck_assert_str_eq(ch->u.meta.kv[k].key, s->kv[k].key);
			ck_assert_str_eq(ch->u.meta.kv[k].value, s->kv[k].value);
		}
		break;
	case 1:
		ck_assert_int_eq(ch->type, STK_CHUNK_STCK);
		ck_assert_uint_eq(ch->u.stck.n, s->nr_stacks);
		for (k = 0; k < s->nr_stacks; k++) {
			const struct stk_stack *a = &ch->u.stck.stacks[k], *b = &s->stacks[k];

			ck_assert_uint_eq(a->id, b->id);
			ck_assert_uint_eq(a->nr_frames, b->nr_frames);
			for (j = 0; j < b->nr_frames; j++)
				ck_assert_uint_eq(a->frames[j], b->frames[j]);
		}
		break;
	case 2:
		ck_assert_int_eq(ch->type, STK_CHUNK_CNTS);
		ck_assert_uint_eq(ch->t0_ns, FS_T0);
		ck_assert_uint_eq(ch->t1_ns, FS_T1);
		ck_assert_uint_eq(ch->u.cnts.n, s->nr_counts);
		for (k = 0; k < s->nr_counts; k++) {
			const struct stk_count *a = &ch->u.cnts.rows[k], *b = &s->counts[k];

			ck_assert_uint_eq(a->tgid, b->tgid);
			ck_assert_uint_eq(a->tid, b->tid);
			assert_comm(a->comm, b->comm);
			ck_assert_int_eq(a->user_stack, b->user_stack);
			ck_assert_int_eq(a->kernel_stack, b->kernel_stack);
			ck_assert_uint_eq(a->kernel_ip, b->kernel_ip);
			ck_assert_uint_eq(a->kernel_ret_ip, b->kernel_ret_ip);
			ck_assert_uint_eq(a->count, b->count);
		}
		break;
	case 3:
		ck_assert_int_eq(ch->type, STK_CHUNK_OFFC);
		ck_assert_uint_eq(ch->u.offc.n, s->nr_offcpu);
		for (k = 0; k < s->nr_offcpu; k++) {
			assert_task(&ch->u.offc.rows[k].target, &s->offcpu[k].target);
			assert_task(&ch->u.offc.rows[k].waker, &s->offcpu[k].waker);
			ck_assert_uint_eq(ch->u.offc.rows[k].count, s->offcpu[k].count);
			ck_assert_uint_eq(ch->u.offc.rows[k].blocked_ns, s->offcpu[k].blocked_ns);
		}
		break;
	case 4:
		ck_assert_int_eq(ch->type, STK_CHUNK_MAPS);
		ck_assert_uint_eq(ch->u.maps.n, s->nr_procs);
		for (k = 0; k < s->nr_procs; k++) {
			const struct stk_proc_maps *a = &ch->u.maps.procs[k], *b = &s->procs[k];

			ck_assert_uint_eq(a->tgid, b->tgid);
			assert_comm(a->comm, b->comm);
			ck_assert_uint_eq(a->time_ns, b->time_ns);
			ck_assert_uint_eq(a->nr_mappings, b->nr_mappings);
			for (j = 0; j < b->nr_mappings; j++) {
				const struct stk_mapping *x = &a->mappings[j], *y = &b->mappings[j];

				ck_assert_uint_eq(x->start, y->start);
				ck_assert_uint_eq(x->end, y->end);
				ck_assert_uint_eq(x->offset, y->offset);
				ck_assert_uint_eq(x->dev, y->dev);
				ck_assert_uint_eq(x->inode, y->inode);
				ck_assert_uint_eq(x->prot, y->prot);
				ck_assert_uint_eq(x->build_id_size, y->build_id_size);
				ck_assert_mem_eq(x->build_id, y->build_id, y->build_id_size);
				ck_assert_str_eq(x->path, y->path);
			}
		}
		break;
	case 5:
		ck_assert_int_eq(ch->type, STK_CHUNK_KSYM);
		ck_assert_uint_eq(ch->u.ksym.n, s->nr_ksyms);
		for (k = 0; k < s->nr_ksyms; k++) {
			const struct stk_ksym *a = &ch->u.ksym.syms[k], *b = &s->ksyms[k];

			ck_assert_uint_eq(a->addr, b->addr);
			ck_assert_uint_eq(a->size, b->size);
			ck_assert_int_eq(a->type, b->type);
			ck_assert_str_eq(a->name, b->name);
			ck_assert_str_eq(a->module, b->module);
		}
		break;
	case 6:
		ck_assert_int_eq(ch->type, STK_CHUNK_KBID);
		ck_assert_uint_eq(ch->u.kbid.n, s->nr_kobjs);
		for (k = 0; k < s->nr_kobjs; k++) {
			const struct stk_kobj *a = &ch->u.kbid.objs[k], *b = &s->kobjs[k];

			ck_assert_str_eq(a->name, b->name);
			ck_assert_uint_eq(a->base, b->base);
			ck_assert_uint_eq(a->size, b->size);
			ck_assert_uint_eq(a->build_id_size, b->build_id_size);
			ck_assert_mem_eq(a->build_id, b->build_id, b->build_id_size);
		}
		break;
	case 7:
		ck_assert_int_eq(ch->type, STK_CHUNK_ESYM);
		ck_assert_uint_eq(ch->u.esym.build_id_size, s->esym_build_id_size);
		ck_assert_mem_eq(ch->u.esym.build_id, s->esym_build_id, s->esym_build_id_size);
		ck_assert_uint_eq(ch->u.esym.blob_size, s->esym_blob_size);
		ck_assert_mem_eq(ch->u.esym.blob, s->esym_blob, s->esym_blob_size);
		break;
	case 8:
		ck_assert_int_eq(ch->type, STK_CHUNK_STAT);
		ck_assert_uint_eq(ch->u.stat.n, s->nr_stats);
		for (k = 0; k < s->nr_stats; k++) {
			ck_assert_str_eq(ch->u.stat.stats[k].name, s->stats[k].name);
			ck_assert_uint_eq(ch->u.stat.stats[k].value, s->stats[k].value);
		}
		break;
	case 9:
		ck_assert_int_eq(ch->type, STK_CHUNK_UNKNOWN);
		ck_assert_uint_eq(ch->u.unknown.size, s->xtra_size);
		ck_assert_mem_eq(ch->u.unknown.payload, s->xtra, s->xtra_size);
		ck_assert_uint_eq(ch->t0_ns, FS_T0);
		ck_assert_uint_eq(ch->t1_ns, FS_T1);
		break;
	default:
		ck_abort_msg("unexpected chunk %zu", i);
	}
}

/* Reads a whole sample file (segment @segment of the reader) and checks it. */
static void assert_sample_segment(struct stk_reader *r, const struct fs_sample *s,
				  uint32_t segment)
{
	struct stk_chunk ch;
	size_t i;

	for (i = 0; i < FS_NR_CHUNKS; i++) {
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
		ck_assert_uint_eq(ch.segment, segment);
		assert_sample_chunk(s, i, &ch);
	}
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_INDX);
	ck_assert_uint_eq(ch.u.indx.n, FS_NR_CHUNKS);
	ck_assert_uint_eq(ch.seq, FS_NR_CHUNKS);
}

/* Rewrites the CRC at the end of the skippable frame at @frame. */
static void frame_fix_crc(uint8_t *frame)
{
	uint32_t n = get_le32(frame + 4);

	put_le32(frame + 8 + n - 4, stk_crc32c(0, frame + 8, n - 4));
}

/* Sets the 32-bit header field at @field of chunk 0 (META, right after the
 * file header) of the capture in @buf, its frame CRC still matching. */
static void first_chunk_put_le32(uint8_t *buf, size_t field, uint32_t v)
{
	uint64_t off = STK_FRAME_PREFIX + STK_FILE_HDR_LEN;

	put_le32(buf + off + STK_FRAME_PREFIX + field, v);
	frame_fix_crc(buf + off);
}

/* Chunk @i of the capture in @buf, read with all before it: its offset
 * and sizes only (its payload is gone with the reader). */
static struct stk_chunk chunk_at(const uint8_t *buf, size_t size, size_t i)
{
	struct stk_reader *r = stk_reader__open_mem(buf, size);
	struct stk_chunk ch;
	size_t k;

	for (k = 0; k <= i; k++)
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	stk_reader__close(r);
	return ch;
}

/* The offset just past chunk @ch's frame. */
static uint64_t chunk_end(const struct stk_chunk *ch)
{
	return ch->offset + STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN + ch->comp_size;
}

/* ---- CRC and varints ---- */

START_TEST(crc32c_matches_known_vector)
{
	ck_assert_uint_eq(stk_crc32c(0, "123456789", 9), 0xE3069283);
	ck_assert_uint_eq(stk_crc32c(0, "", 0), 0);
}
END_TEST

START_TEST(crc32c_chains_across_calls)
{
	uint32_t c = stk_crc32c(0, "1234", 4);

	ck_assert_uint_eq(stk_crc32c(c, "56789", 5), 0xE3069283);
}
END_TEST

START_TEST(varint_round_trips_edge_values)
{
	static const struct { uint64_t v; size_t len; } cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 },
		{ UINT32_MAX, 5 }, { 1ull << 63, 10 }, { UINT64_MAX, 10 },
	};
	uint8_t buf[STK_VARINT_MAX];
	size_t i, n;
	uint64_t v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = stk_varint_encode(buf, cases[i].v);
		ck_assert_uint_eq(n, cases[i].len);
		ck_assert_uint_eq(stk_varint_decode(buf, buf + n, &v), n);
		ck_assert_uint_eq(v, cases[i].v);
		/* one byte short: rejected */
		ck_assert_uint_eq(stk_varint_decode(buf, buf + n - 1, &v), 0);
	}
	n = stk_varint_encode(buf, 300);
	ck_assert_uint_eq(buf[0], 0xAC);
	ck_assert_uint_eq(buf[1], 0x02);
}
END_TEST

START_TEST(varint_rejects_more_than_ten_bytes)
{
	uint8_t buf[11];
	uint64_t v = 42;

	memset(buf, 0x80, sizeof(buf));
	buf[10] = 0x00;
	ck_assert_uint_eq(stk_varint_decode(buf, buf + sizeof(buf), &v), 0);
	ck_assert_uint_eq(v, 42);
}
END_TEST

START_TEST(varint_rejects_overflow_in_tenth_byte)
{
	uint8_t buf[10];
	uint64_t v;

	memset(buf, 0xff, 9);
	buf[9] = 0x02;		/* bit 64 */
	ck_assert_uint_eq(stk_varint_decode(buf, buf + 10, &v), 0);
	buf[9] = 0x01;		/* bit 63: UINT64_MAX */
	ck_assert_uint_eq(stk_varint_decode(buf, buf + 10, &v), 10);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(varint_accepts_non_minimal_encoding)
{
	static const uint8_t buf[] = { 0x81, 0x80, 0x00 };
	uint64_t v;

	ck_assert_uint_eq(stk_varint_decode(buf, buf + 3, &v), 3);
	ck_assert_uint_eq(v, 1);
}
END_TEST

START_TEST(zigzag_maps_signed_values)
{
	ck_assert_uint_eq(zigzag_encode(0), 0);
	ck_assert_uint_eq(zigzag_encode(-1), 1);
	ck_assert_uint_eq(zigzag_encode(1), 2);
	ck_assert_uint_eq(zigzag_encode(-2), 3);
	ck_assert_uint_eq(zigzag_encode(INT64_MAX), UINT64_MAX - 1);
	ck_assert_uint_eq(zigzag_encode(INT64_MIN), UINT64_MAX);
	ck_assert_int_eq(zigzag_decode(UINT64_MAX), INT64_MIN);
	ck_assert_int_eq(zigzag_decode(3), -2);
}
END_TEST

/* ---- round trips ---- */

START_TEST(round_trip_every_chunk_type_random_contents)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size;

	/* _i is the loop index: seeds 1..8 (tcase_add_loop_test). */
	buf = sample_file(&s, 1000 + _i, _i % 2, &size);
	r = stk_reader__open_mem(buf, size);
	ck_assert_ptr_nonnull(r);
	assert_sample_segment(r, &s, 0);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.file_size, size);
	ck_assert_uint_eq(sum.chunks, FS_NR_CHUNKS + 1);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_uint_eq(sum.bytes_skipped, 0);
	ck_assert_int_eq(sum.closed, 1);
	ck_assert_int_eq(sum.truncated, 0);
	ck_assert_uint_eq(stk_reader__segment_count(r), 1);
	ck_assert_int_eq(stk_reader__segment(r, 0)->closed, 1);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(reading_from_path_matches_reading_from_memory)
{
	struct stk_reader *r;
	struct fs_sample s;
	struct tmpfile t;
	uint8_t *buf;
	size_t size;

	buf = sample_file(&s, 77, 0, &size);
	tmp_make(&t);
	file_store(t.path, buf, size);
	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	assert_sample_segment(r, &s, 0);
	tmp_close(&t, r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(reader_reads_a_pipe_on_stdin)
{
	struct stk_reader *r;
	struct fs_sample s;
	uint8_t *buf;
	size_t size;
	int fds[2];
	pid_t pid;

	buf = sample_file(&s, 78, 0, &size);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(write(fds[1], buf, size) == (ssize_t)size ? 0 : 1);
	}
	close(fds[1]);
	ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	r = stk_reader__open("-");
	ck_assert_ptr_nonnull(r);
	assert_sample_segment(r, &s, 0);
	stk_reader__close(r);
	waitpid(pid, NULL, 0);
	fs_free(&s);
	free(buf);
}
END_TEST

/* Bounds this test's address space (Check runs each test in its own
 * process): an input read whole would fail with ENOMEM here. */
static void limit_memory(size_t mib)
{
	struct rlimit rl = { mib << 20, mib << 20 };

	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
}

/* Feeds @size bytes of @buf, then @zeros zero bytes, into a pipe on stdin. */
static pid_t pipe_stdin(const uint8_t *buf, size_t size, size_t zeros)
{
	static const uint8_t zero[65536];
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t n;

		close(fds[0]);
		if (write(fds[1], buf, size) != (ssize_t)size)
			_exit(1);
		for (; zeros; zeros -= n) {
			n = zeros < sizeof(zero) ? zeros : sizeof(zero);
			if (write(fds[1], zero, n) != (ssize_t)n)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	return pid;
}

START_TEST(file_that_shrinks_while_read_is_one_eio_error)
{
	enum { COPIES = 24 };
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	struct tmpfile t;
	uint8_t *buf, *all;
	size_t size, i, cut;
	int ret, errors = 0, chunks = 0, fd;

	buf = sample_file(&s, 79, 0, &size);
	all = malloc(COPIES * size);
	for (i = 0; i < COPIES; i++)
		memcpy(all + i * size, buf, size);
	tmp_make(&t);
	file_store(t.path, all, COPIES * size);
	ck_assert_uint_gt(COPIES * size, 2u << 20);	/* more than the reader's window */
	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	cut = COPIES * size / 2;
	fd = open(t.path, O_WRONLY);
	ck_assert_int_eq(ftruncate(fd, cut), 0);
	close(fd);
	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret > 0) {
			ck_assert_uint_lt(ch.offset, cut);
			chunks++;
			continue;
		}
		errors++;
		ck_assert_int_eq(ret, -EIO);
		ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r), "the file shrank while being read"));
	}
	ck_assert_int_eq(errors, 1);
	ck_assert_int_gt(chunks, 0);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	tmp_close(&t, r);
	fs_free(&s);
	free(buf);
	free(all);
}
END_TEST

START_TEST(stream_without_the_magic_is_refused_at_once)
{
	limit_memory(256);
	errno = 0;
	ck_assert_ptr_null(stk_reader__open("/dev/zero"));
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_ptr_nonnull(strstr(stk_open_errmsg(), "not an .stk file"));
}
END_TEST

START_TEST(endless_stream_after_a_capture_costs_bounded_memory)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size;
	int ret, errors = 0, chunks = 0;
	pid_t pid;

	buf = sample_file(&s, 80, 1, &size);
	pid = pipe_stdin(buf, size, 400u << 20);
	limit_memory(200);
	r = stk_reader__open("-");
	ck_assert_ptr_nonnull(r);
	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret > 0)
			chunks++;
		else
			errors++;
		if (ret < 0)
			ck_assert_int_eq(ret, -EBADMSG);
	}
	ck_assert_int_eq(chunks, FS_NR_CHUNKS + 1);
	ck_assert_int_eq(errors, 1);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.file_size, size + (400u << 20));
	ck_assert_uint_eq(sum.bytes_skipped, 400u << 20);
	stk_reader__close(r);
	waitpid(pid, NULL, 0);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(stream_resyncs_after_damage_as_memory_does)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint64_t mem_off[64], pipe_off[64];
	size_t size, nm = 0, np = 0, i;
	uint8_t *buf, *two;
	int ret, em = 0, ep = 0;
	pid_t pid;

	buf = sample_file(&s, 81, 0, &size);
	/* The first copy cut in its middle, then an intact one. */
	two = concat(buf, size / 2, buf, size);
	r = stk_reader__open_mem(two, size / 2 + size);
	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret > 0)
			mem_off[nm++] = ch.offset;
		else
			em++;
	}
	stk_reader__close(r);
	pid = pipe_stdin(two, size / 2 + size, 0);
	r = stk_reader__open("-");
	ck_assert_ptr_nonnull(r);
	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret > 0)
			pipe_off[np++] = ch.offset;
		else
			ep++;
	}
	stk_reader__close(r);
	waitpid(pid, NULL, 0);
	ck_assert_int_ge(em, 1);
	ck_assert_int_eq(ep, em);
	ck_assert_uint_eq(np, nm);
	ck_assert_uint_ge(nm, FS_NR_CHUNKS + 1);
	for (i = 0; i < nm; i++)
		ck_assert_uint_eq(pipe_off[i], mem_off[i]);
	fs_free(&s);
	free(buf);
	free(two);
}
END_TEST

START_TEST(segment_info_holds_the_file_header_facts)
{
	struct stk_writer_opts opts = {
		.sz = sizeof(opts), .wall_start_ns = 1700000000123456789ull,
		.mono_start_ns = 987654321,
	};
	const struct stk_segment_info *info;
	struct stk_reader *r;
	struct stk_writer *w;
	struct tmpfile t;

	tmp_make(&t);
	w = stk_writer__open(t.path, &opts);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(stk_writer__bytes(w), STK_FRAME_PREFIX + STK_FILE_HDR_LEN);
	r = tmp_reread(&t, w);
	info = stk_reader__segment(r, 0);
	ck_assert_ptr_nonnull(info);
	ck_assert_ptr_null(stk_reader__segment(r, 1));
	ck_assert_uint_eq(info->read_version, STK_FORMAT_READ_VERSION);
	ck_assert_uint_eq(info->write_version, STK_FORMAT_WRITE_VERSION);
	ck_assert_str_eq(info->writer_version, STK_VERSION_STRING);
	ck_assert_uint_eq(info->wall_start_ns, 1700000000123456789ull);
	ck_assert_uint_eq(info->mono_start_ns, 987654321);
	ck_assert_uint_eq(info->offset, 0);
	ck_assert_uint_eq(info->uuid[6] >> 4, 4);		/* RFC 4122 v4 */
	ck_assert_uint_eq(info->uuid[8] & 0xc0, 0x80);
	tmp_close(&t, r);
}
END_TEST

START_TEST(concatenated_files_read_as_two_segments)
{
	struct fs_sample a, b;
	struct stk_read_summary sum;
	const struct stk_segment_info *s0, *s1;
	struct stk_reader *r;
	struct stk_chunk ch;
	uint8_t *ba, *bb, *cat;
	size_t na, nb;

	ba = sample_file(&a, 5, 1, &na);
	bb = sample_file(&b, 6, 0, &nb);
	cat = concat(ba, na, bb, nb);
	r = stk_reader__open_mem(cat, na + nb);
	ck_assert_ptr_nonnull(r);
	assert_sample_segment(r, &a, 0);
	assert_sample_segment(r, &b, 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	ck_assert_uint_eq(stk_reader__segment_count(r), 2);
	s0 = stk_reader__segment(r, 0);
	s1 = stk_reader__segment(r, 1);
	ck_assert_uint_eq(s1->offset, na);
	ck_assert_mem_ne(s0->uuid, s1->uuid, 16);
	ck_assert_int_eq(s0->closed, 1);
	ck_assert_int_eq(s1->closed, 1);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.chunks, 2 * (FS_NR_CHUNKS + 1));
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	stk_reader__close(r);
	fs_free(&a);
	fs_free(&b);
	free(ba);
	free(bb);
	free(cat);
}
END_TEST

/* ---- chunk tags ---- */

START_TEST(unknown_ancillary_chunk_is_returned_as_unknown)
{
	static const uint8_t payload[] = { 1, 2, 3 };
	struct stk_kv kv = { "k", "v" };
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_raw(w, "zNew", 5, 6, payload, sizeof(payload)), 0);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_UNKNOWN);
	ck_assert_str_eq(ch.tag, "zNew");
	ck_assert_uint_eq(ch.u.unknown.size, 3);
	ck_assert_mem_eq(ch.u.unknown.payload, payload, 3);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_META);
	ck_assert_str_eq(ch.u.meta.kv[0].value, "v");
	tmp_close(&t, r);
}
END_TEST

START_TEST(unknown_critical_chunk_is_refused_with_its_tag)
{
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(stk_writer__add_raw(w, "QZZY", 0, 0, "x", 1), 0);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r), "unknown critical chunk 'QZZY'"));
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r), "byte "));
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 1);
	ck_assert_uint_eq(sum.chunks, 1);
	tmp_close(&t, r);
}
END_TEST

START_TEST(chunk_type_tags_match_the_spec)
{
	ck_assert_str_eq(stk_chunk_type__tag(STK_CHUNK_META), "META");
	ck_assert_str_eq(stk_chunk_type__tag(STK_CHUNK_INDX), "INDX");
	ck_assert_ptr_null(stk_chunk_type__tag(STK_CHUNK_UNKNOWN));
	ck_assert_str_eq(stk_chunk_type__tag(STK_CHUNK_PIDN), "pidn");
	ck_assert_str_eq(stk_chunk_type__tag(STK_CHUNK_TRCE), "TRCE");
	ck_assert_ptr_null(stk_chunk_type__tag(STK_CHUNK_TRCE + 1));
	ck_assert_int_eq(stk_tag_type("KSYM"), STK_CHUNK_KSYM);
	ck_assert_int_eq(stk_tag_type("ksym"), STK_CHUNK_UNKNOWN);
}
END_TEST

/* ---- versions ---- */

/* An empty closed file whose header says it needs read version 2 and
 * stkreport 0.3.0. */
static uint8_t *newer_file(size_t *size)
{
	struct stk_writer *w;
	struct tmpfile t;
	uint8_t *buf;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__close(w), 0);
	buf = file_load(t.path, size);
	unlink(t.path);
	put_le16(buf + STK_FRAME_PREFIX + FH_READ_VERSION, STK_FORMAT_MAX_READ + 1);
	put_le32(buf + STK_FRAME_PREFIX + FH_MIN_READER_REL, STK_RELEASE(0, 3, 0));
	frame_fix_crc(buf);
	return buf;
}

START_TEST(newer_read_version_is_refused_at_open)
{
	struct stk_reader *r;
	uint8_t *buf;
	size_t size;

	buf = newer_file(&size);
	errno = 0;
	r = stk_reader__open_mem(buf, size);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
	ck_assert_str_eq(stk_open_errmsg(),
			 "(memory): byte 16: needs stkreport >= 0.3.0 (file read version 2, this reader reads up to 1)");
	free(buf);
}
END_TEST

START_TEST(newer_read_version_in_second_segment_stops_there)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *a, *b, *cat;
	size_t na, nb;

	a = sample_file(&s, 9, 1, &na);
	b = newer_file(&nb);
	cat = concat(a, na, b, nb);
	r = stk_reader__open_mem(cat, na + nb);
	ck_assert_ptr_nonnull(r);
	assert_sample_segment(r, &s, 0);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r), "needs stkreport >= 0.3.0"));
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__close(r);
	fs_free(&s);
	free(a);
	free(b);
	free(cat);
}
END_TEST

/* ---- bad input ---- */

START_TEST(empty_file_is_enodata)
{
	struct tmpfile t;

	tmp_make(&t);
	errno = 0;
	ck_assert_ptr_null(stk_reader__open(t.path));
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_str_eq(stk_open_errmsg() + strlen(t.path), ": empty file");
	errno = 0;
	ck_assert_ptr_null(stk_reader__open_mem("", 0));
	ck_assert_int_eq(errno, ENODATA);
	unlink(t.path);
}
END_TEST

START_TEST(text_file_is_not_an_stk)
{
	static const char text[] = "hello, world\n";

	errno = 0;
	ck_assert_ptr_null(stk_reader__open_mem(text, sizeof(text) - 1));
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_str_eq(stk_open_errmsg(), "(memory): byte 0: not an .stk file (no .stk file header)");
}
END_TEST

START_TEST(missing_file_reports_open_errno)
{
	errno = 0;
	ck_assert_ptr_null(stk_reader__open("/nonexistent/x.stk"));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(stk_open_errmsg(), "/nonexistent/x.stk: No such file or directory");
}
END_TEST

START_TEST(file_cut_inside_first_header_is_enodata)
{
	struct fs_sample s;
	uint8_t *buf;
	size_t size;

	buf = sample_file(&s, 3, 1, &size);
	errno = 0;
	ck_assert_ptr_null(stk_reader__open_mem(buf, 40));
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_ptr_nonnull(strstr(stk_open_errmsg(), "truncated inside the file header"));
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(truncated_file_returns_complete_chunks_then_enodata)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint64_t cut = 0;
	char want[160];
	uint8_t *buf;
	size_t size, i;

	buf = sample_file(&s, 11, 0, &size);
	/* Find chunk 4 (MAPS) and cut in the middle of its payload. */
	ch = chunk_at(buf, size, 4);
	cut = ch.offset + STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN + ch.comp_size / 2;

	r = stk_reader__open_mem(buf, cut);
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
		assert_sample_chunk(&s, i, &ch);
	}
	ck_assert_int_eq(stk_reader__next(r, &ch), -ENODATA);
	snprintf(want, sizeof(want), "byte %llu: truncated at byte %llu after chunk 3 (OFFC); 4 chunks recovered",
		 (unsigned long long)chunk_end(&ch), (unsigned long long)cut);
	ck_assert_str_eq(stk_reader__errmsg(r), want);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.chunks, 4);
	ck_assert_uint_eq(sum.errors, 1);
	ck_assert_int_eq(sum.truncated, 1);
	ck_assert_int_eq(sum.closed, 0);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(file_cut_at_chunk_boundary_ends_cleanly_not_closed)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size, i, end = 0;

	buf = sample_file(&s, 12, 1, &size);
	ch = chunk_at(buf, size, 2);
	end = chunk_end(&ch);
	r = stk_reader__open_mem(buf, end);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.truncated, 0);
	ck_assert_int_eq(sum.closed, 0);
	ck_assert_int_eq(stk_reader__segment(r, 0)->closed, 0);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(flipped_payload_byte_loses_only_that_chunk)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint64_t off = 0, lost;
	char want[96];
	uint8_t *buf;
	size_t size, i;

	buf = sample_file(&s, 13, 0, &size);
	ch = chunk_at(buf, size, 2);
	off = ch.offset;
	lost = chunk_end(&ch) - off;
	buf[off + lost - 1] ^= 0x10;
	r = stk_reader__open_mem(buf, size);
	for (i = 0; i < FS_NR_CHUNKS; i++) {
		if (i == 2) {
			ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
			snprintf(want, sizeof(want), "byte %llu: chunk 2 (CNTS): payload CRC mismatch",
				 (unsigned long long)off);
			ck_assert_str_eq(stk_reader__errmsg(r), want);
			continue;
		}
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
		assert_sample_chunk(&s, i, &ch);
	}
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_INDX);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 1);
	ck_assert_uint_eq(sum.chunks, FS_NR_CHUNKS);
	ck_assert_int_eq(sum.closed, 1);
	ck_assert_uint_eq(sum.bytes_skipped, lost);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(damaged_first_header_still_yields_the_chunks)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size, i;

	buf = sample_file(&s, 14, 1, &size);
	buf[STK_FRAME_PREFIX + FH_WALL_START] ^= 1;
	r = stk_reader__open_mem(buf, size);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
	ck_assert_str_eq(stk_reader__errmsg(r), "byte 0: file header: CRC mismatch");
	for (i = 0; i < FS_NR_CHUNKS; i++) {
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
		ck_assert_uint_eq(ch.segment, 0);
		assert_sample_chunk(&s, i, &ch);
	}
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_INDX);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	ck_assert_uint_eq(stk_reader__segment_count(r), 1);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(raw_size_over_limit_is_efbig_and_reading_goes_on)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size, i;

	buf = sample_file(&s, 15, 1, &size);
	/* chunk 0 (META): claim 256 MiB + 1 raw bytes */
	first_chunk_put_le32(buf, CH_RAW_LEN, STK_MAX_CHUNK_RAW + 1);
	r = stk_reader__open_mem(buf, size);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EFBIG);
	ck_assert_str_eq(stk_reader__errmsg(r),
			 "byte 68: chunk 0 (META): raw size 268435457 over the limit of 268435456 bytes");
	for (i = 1; i < FS_NR_CHUNKS; i++) {
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
		assert_sample_chunk(&s, i, &ch);
	}
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(spliced_chunk_from_another_segment_is_reported)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size;

	buf = sample_file(&s, 16, 1, &size);
	first_chunk_put_le32(buf, CH_SEGMENT_ID, 0x12345678);
	r = stk_reader__open_mem(buf, size);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r),
				     "chunk 0 (META) belongs to another segment (id 12345678"));
	/* It is still a valid chunk: returned in a segment of its own. */
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_str_eq(ch.tag, "META");
	ck_assert_uint_eq(ch.segment, 1);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(chunk_out_of_sequence_is_reported_then_read)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint8_t *buf;
	size_t size;

	buf = sample_file(&s, 17, 1, &size);
	first_chunk_put_le32(buf, CH_SEQ, 7);
	r = stk_reader__open_mem(buf, size);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
	ck_assert_str_eq(stk_reader__errmsg(r), "byte 68: chunk 7 (META) where chunk 0 was expected");
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_uint_eq(ch.seq, 7);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

/*
 * Rebuilds the INDX chunk of a sample file with @delta added to entry @entry's t1,
 * and drops the trailer (whose lengths would no longer match).  Returns the
 * new size; the INDX chunk starts at *indx_off.
 */
static size_t tamper_index(uint8_t *buf, size_t size, size_t entry, uint64_t delta,
			   uint64_t *indx_off)
{
	struct stk_index_entry *e;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct sbuf b = { .limit = 1 << 20 };
	struct cursor c = { 0 };
	struct arena a = { .budget = 1 << 20 };
	uint8_t raw[4096], *h;
	size_t n, raw_len, comp;
	ZSTD_CCtx *cctx;
	uint64_t off = 0;

	r = stk_reader__open_mem(buf, size);
	while (stk_reader__next(r, &ch) > 0)
		if (ch.type == STK_CHUNK_INDX)
			off = ch.offset;
	stk_reader__close(r);
	ck_assert_uint_ne(off, 0);
	h = buf + off + STK_FRAME_PREFIX;
	raw_len = ZSTD_decompress(raw, sizeof(raw), h + STK_CHUNK_HDR_LEN, get_le32(h + CH_COMP_LEN));
	ck_assert(!ZSTD_isError(raw_len));
	c.start = c.p = raw;
	c.end = raw + raw_len;
	c.arena = &a;
	ch.type = STK_CHUNK_INDX;
	ck_assert_int_eq(stk_decode_payload(&c, &ch, &e, &n), 0);
	e[entry].t1_ns += delta;
	stk_encode_index(&b, e, n);
	ck_assert_int_eq(b.err, 0);
	cctx = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	comp = ZSTD_compress2(cctx, h + STK_CHUNK_HDR_LEN, size - off - 56, b.data, b.len);
	ck_assert(!ZSTD_isError(comp));
	ZSTD_freeCCtx(cctx);
	put_le32(h + CH_COMP_LEN, comp);
	put_le32(h + CH_RAW_LEN, b.len);
	put_le32(h + CH_PAYLOAD_CRC, stk_crc32c(0, h + STK_CHUNK_HDR_LEN, comp));
	frame_fix_crc(buf + off);
	sbuf_free(&b);
	arena_free(&a);
	*indx_off = off;
	return off + STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN + comp;
}

START_TEST(index_entry_not_matching_its_chunk_is_reported)
{
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint64_t off;
	char want[96];
	uint8_t *buf;
	size_t size, i;

	buf = sample_file(&s, 18, 1, &size);
	size = tamper_index(buf, size, 2, 1, &off);
	r = stk_reader__open_mem(buf, size);
	for (i = 0; i < FS_NR_CHUNKS; i++)
		ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
	snprintf(want, sizeof(want), "byte %llu: chunk 10 (INDX): index entry does not match its chunk",
		 (unsigned long long)off);
	ck_assert_str_eq(stk_reader__errmsg(r), want);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

START_TEST(rebuilt_index_without_changes_is_accepted)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct fs_sample s;
	uint64_t off;
	uint8_t *buf;
	size_t size;

	/* The control for the test above: rebuilding alone is not what fails. */
	buf = sample_file(&s, 18, 1, &size);
	size = tamper_index(buf, size, 2, 0, &off);
	r = stk_reader__open_mem(buf, size);
	while (stk_reader__next(r, &ch) > 0)
		;
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_uint_eq(sum.chunks, FS_NR_CHUNKS + 1);
	stk_reader__close(r);
	fs_free(&s);
	free(buf);
}
END_TEST

/* ---- absurd lengths, through the payload decoders ---- */

static int decode(enum stk_chunk_type type, const uint8_t *p, size_t n, struct arena *a)
{
	struct stk_index_entry *idx;
	struct stk_chunk ch = { .type = type };
	struct cursor c = { .start = p, .p = p, .end = p + n, .arena = a };
	size_t nr;

	return stk_decode_payload(&c, &ch, &idx, &nr);
}

/* ---- ESYM kinds 2 and 3: symbol tables and perf maps ---- */

START_TEST(esym_symbol_tables_and_perf_maps_round_trip)
{
	static const struct stk_esym_sym tab[] = {
		{ 0x2000, 0x30, "_ZN3foo3barEv" }, { 0x1000, 0x10, "main" }, { 0, 0, "z" },
	};
	static const struct stk_esym_sym jit[] = { { 0x7f0000001000, 0x80, "JIT:spin" } };
	static const uint8_t bid[3] = { 1, 2, 3 };
	struct tmpfile t;
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk ch;
	size_t i;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bid, 3, STK_ESYM_SRC_SYMTAB |
						   STK_ESYM_SRC_DEBUGDATA, tab, 3), 0);
	ck_assert_int_eq(stk_writer__add_esym_perf_map(w, 4321, jit, 1), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_ESYM);
	ck_assert_uint_eq(ch.u.esym.kind, STK_ESYM_SYMTAB);
	ck_assert_uint_eq(ch.u.esym.build_id_size, 3);
	ck_assert_mem_eq(ch.u.esym.build_id, bid, 3);
	ck_assert_uint_eq(ch.u.esym.sources, STK_ESYM_SRC_SYMTAB | STK_ESYM_SRC_DEBUGDATA);
	ck_assert_uint_eq(ch.u.esym.nr_syms, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(ch.u.esym.syms[i].addr, tab[i].addr);
		ck_assert_uint_eq(ch.u.esym.syms[i].size, tab[i].size);
		ck_assert_str_eq(ch.u.esym.syms[i].name, tab[i].name);
	}
	ck_assert_uint_eq(((const uint8_t *)ch.u.esym.blob)[0], STK_ESYM_SYMTAB);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_uint_eq(ch.u.esym.kind, STK_ESYM_PERF_MAP);
	ck_assert_uint_eq(ch.u.esym.build_id_size, 0);
	ck_assert_uint_eq(ch.u.esym.tgid, 4321);
	ck_assert_uint_eq(ch.u.esym.nr_syms, 1);
	ck_assert_uint_eq(ch.u.esym.syms[0].addr, 0x7f0000001000);
	ck_assert_str_eq(ch.u.esym.syms[0].name, "JIT:spin");
	tmp_close(&t, r);
}
END_TEST

START_TEST(esym_writer_refuses_tables_without_build_id_or_name)
{
	static const struct stk_esym_sym noname[] = { { 0x1000, 0x10, "" } };
	static const struct stk_esym_sym ok[] = { { 0x1000, 0x10, "f" } };
	static const uint8_t bid[1] = { 7 };
	struct tmpfile t;
	struct stk_writer *w;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bid, 0, 0, ok, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bid, 1, 0, noname, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_perf_map(w, 1, noname, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bid, 1, 0, NULL, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_symtab(w, bid, 1, 0, ok, 1), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	unlink(t.path);
}
END_TEST

START_TEST(esym_malformed_tables_are_corrupt_unknown_kinds_are_not)
{
	/* build-id ab, kind 2, sources 1, n 1, delta, size, name "" */
	static const uint8_t empty_name[] = { 1, 0xab, 2, 1, 1, 0, 0x10, 0 };
	/* no build-id, kind 2 */
	static const uint8_t no_bid[] = { 0, 2, 1, 1, 0, 0x10, 1, 'f' };
	/* a build-id, kind 3 */
	static const uint8_t perf_bid[] = { 1, 0xab, 3, 5, 1, 0, 0x10, 1, 'f' };
	/* n = 2, one symbol */
	static const uint8_t short_n[] = { 1, 0xab, 2, 1, 2, 0, 0x10, 1, 'f' };
	/* kind 9: opaque, whatever follows */
	static const uint8_t unknown[] = { 1, 0xab, 9, 0xff, 0xff, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_ESYM, empty_name, sizeof(empty_name), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, no_bid, sizeof(no_bid), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, perf_bid, sizeof(perf_bid), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, short_n, sizeof(short_n), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, unknown, sizeof(unknown), &a), 0);
	arena_free(&a);
}
END_TEST

/* ---- ESYM kind 4: Python code objects; STCK Python words ---- */

START_TEST(esym_pycode_round_trip)
{
	static const uint8_t lt[] = { 0x80, 0x00, 0xd8, 0x04, 0x00 };
	static uint8_t big[STK_MAX_PY_LINETABLE];
	const struct stk_esym_pycode codes[] = {
		{ 0x7f1234567890, 0xabcdef, 12, "Klass.method", "/srv/app/mod.py", lt, sizeof(lt) },
		{ 0x10, 0, 1, "<module>", "", NULL, 0 },
		{ 0x00ffffffffffffffULL, STK_PY_FP_MAX, 0xffffffff, "f.<locals>.g", "<string>",
		  big, sizeof(big) },
	};
	struct tmpfile t;
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk ch;
	size_t i;

	memset(big, 0xa5, sizeof(big));
	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 4321, 0x030b, codes, 3), 0);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 7, 0x0308, NULL, 0), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_ESYM);
	ck_assert_uint_eq(ch.u.esym.kind, STK_ESYM_PYCODE);
	ck_assert_uint_eq(ch.u.esym.build_id_size, 0);
	ck_assert_uint_eq(ch.u.esym.tgid, 4321);
	ck_assert_uint_eq(ch.u.esym.py_version, 0x030b);
	ck_assert_uint_eq(ch.u.esym.nr_syms, 0);
	ck_assert_uint_eq(ch.u.esym.nr_codes, 3);
	for (i = 0; i < 3; i++) {
		const struct stk_esym_pycode *k = &ch.u.esym.codes[i];

		ck_assert_uint_eq(k->addr, codes[i].addr);
		ck_assert_uint_eq(k->fingerprint, codes[i].fingerprint);
		ck_assert_uint_eq(k->firstlineno, codes[i].firstlineno);
		ck_assert_str_eq(k->qualname, codes[i].qualname);
		ck_assert_str_eq(k->filename, codes[i].filename);
		ck_assert_uint_eq(k->linetable_size, codes[i].linetable_size);
		if (k->linetable_size)
			ck_assert_mem_eq(k->linetable, codes[i].linetable, k->linetable_size);
	}
	ck_assert_uint_eq(((const uint8_t *)ch.u.esym.blob)[0], STK_ESYM_PYCODE);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_uint_eq(ch.u.esym.kind, STK_ESYM_PYCODE);
	ck_assert_uint_eq(ch.u.esym.tgid, 7);
	ck_assert_uint_eq(ch.u.esym.py_version, 0x0308);
	ck_assert_uint_eq(ch.u.esym.nr_codes, 0);
	tmp_close(&t, r);
}
END_TEST

START_TEST(esym_pycode_writer_refuses_what_the_spec_forbids)
{
	static uint8_t big[STK_MAX_PY_LINETABLE + 1];
	const struct stk_esym_pycode ok = { 0x1000, 1, 1, "f", "a.py", NULL, 0 };
	struct stk_esym_pycode bad;
	struct tmpfile t;
	struct stk_writer *w;

	w = tmp_writer(&t);
	bad = ok;
	bad.qualname = "";
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	bad.qualname = NULL;
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	bad = ok;
	bad.filename = NULL;
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	bad = ok;
	bad.fingerprint = STK_PY_FP_MAX + 1;
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	bad = ok;
	bad.linetable_size = 3;
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	bad.linetable = big;
	bad.linetable_size = sizeof(big);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &bad, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, NULL, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, 1, 0x030b, &ok, 1), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	unlink(t.path);
}
END_TEST

START_TEST(esym_pycode_malformed_is_corrupt)
{
	/* no build-id, kind 4, tgid 5, version 0x030b, n 1, addr 0x10, fp 1,
	 * firstlineno 2, qualname "f", filename "a", linetable 1 byte */
	static const uint8_t good[] = { 0, 4, 5, 0x8b, 0x06, 1, 0x10, 1, 2, 1, 'f', 1, 'a', 1, 9 };
	/* the same with a build-id */
	static const uint8_t with_bid[] = { 1, 0xab, 4, 5, 0x8b, 0x06, 1, 0x10, 1, 2, 1, 'f',
					    1, 'a', 1, 9 };
	/* an empty qualname */
	static const uint8_t empty_qual[] = { 0, 4, 5, 0x8b, 0x06, 1, 0x10, 1, 2, 0, 1, 'a', 0 };
	/* fingerprint 0x1000000 */
	static const uint8_t big_fp[] = { 0, 4, 5, 0x8b, 0x06, 1, 0x10, 0x80, 0x80, 0x80, 0x08, 2,
					  1, 'f', 1, 'a', 0 };
	/* n = 2, one record */
	static const uint8_t short_n[] = { 0, 4, 5, 0x8b, 0x06, 2, 0x10, 1, 2, 1, 'f', 1, 'a', 0 };
	/* a huge n in a short payload: refused before anything is allocated */
	static const uint8_t huge_n[] = { 0, 4, 5, 0x8b, 0x06, 0xff, 0xff, 0xff, 0xff, 0x0f };
	/* a line table running past the payload */
	static const uint8_t long_lt[] = { 0, 4, 5, 0x8b, 0x06, 1, 0x10, 1, 2, 1, 'f', 1, 'a',
					   5, 9 };
	/* a line table over STK_MAX_PY_LINETABLE (65537 = 0x81 0x80 0x04) */
	static const uint8_t over_lt[] = { 0, 4, 5, 0x8b, 0x06, 1, 0x10, 1, 2, 1, 'f', 1, 'a',
					   0x81, 0x80, 0x04, 9 };
	/* the tgid over 32 bits */
	static const uint8_t big_tgid[] = { 0, 4, 0x80, 0x80, 0x80, 0x80, 0x10, 0x8b, 0x06, 0 };
	/* trailing bytes */
	static const uint8_t trailing[] = { 0, 4, 5, 0x8b, 0x06, 0, 7 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_ESYM, good, sizeof(good), &a), 0);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, with_bid, sizeof(with_bid), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, empty_qual, sizeof(empty_qual), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, big_fp, sizeof(big_fp), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, short_n, sizeof(short_n), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, huge_n, sizeof(huge_n), &a), -EBADMSG);
	ck_assert_uint_eq(a.used, 0);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, long_lt, sizeof(long_lt), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, over_lt, sizeof(over_lt), &a), -EFBIG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, big_tgid, sizeof(big_tgid), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_ESYM, trailing, sizeof(trailing), &a), -EBADMSG);
	arena_free(&a);
}
END_TEST

START_TEST(python_words_encode_and_decode)
{
	uint64_t f = stk_py_word__frame(0x7f00deadbeef, 0);
	uint64_t e = stk_py_word__frame(0xff7f00deadbeefULL, 1);
	uint64_t i = stk_py_word__info(0xabcdef, 0x1234);
	uint64_t s = stk_py_word__stop(STK_PY_STOP_FAULT);

	ck_assert_uint_eq(f, 0x50007f00deadbeefULL);
	ck_assert_uint_eq(e, 0x51ff7f00deadbeefULL);
	ck_assert_uint_eq(i, 0x52abcdef00001234ULL);
	ck_assert_uint_eq(s, 0x5300000000000002ULL);
	ck_assert_uint_eq(stk_py_word__tag(f), STK_PY_TAG_FRAME);
	ck_assert_uint_eq(stk_py_word__tag(e), STK_PY_TAG_ENTRY);
	ck_assert_uint_eq(stk_py_word__tag(i), STK_PY_TAG_INFO);
	ck_assert_uint_eq(stk_py_word__tag(s), STK_PY_TAG_STOP);
	ck_assert_uint_eq(stk_py_word__addr(e), 0xff7f00deadbeefULL);
	ck_assert_uint_eq(stk_py_word__fingerprint(i), 0xabcdef);
	ck_assert_uint_eq(stk_py_word__offset(i), 0x1234);
	ck_assert_uint_eq(stk_py_word__offset(stk_py_word__info(1, STK_PY_OFFSET_UNKNOWN)),
			  STK_PY_OFFSET_UNKNOWN);
	ck_assert_uint_eq(stk_py_word__reason(s), STK_PY_STOP_FAULT);
	/* Native addresses and the unwind stop marker are not Python words. */
	ck_assert_uint_eq(stk_py_word__tag(0x00007fffdeadbeefULL), 0);
	ck_assert_uint_eq(stk_py_word__tag(0xffffffff81000000ULL), 0);
	ck_assert_uint_eq(stk_py_word__tag(0xfffffffffffff002ULL), 0);
	ck_assert_uint_eq(stk_py_word__tag(0x4fffffffffffffffULL), 0);
	ck_assert_uint_eq(stk_py_word__tag(0x5400000000000000ULL), 0);
}
END_TEST

/* ---- TRCE: event counts of trace captures ---- */

START_TEST(trace_counts_round_trip_with_their_event_index)
{
	static const struct stk_trace_count rows[] = {
		{ .event = 0, .tgid = 10, .tid = 11, .comm = "eventwork", .user_stack = 1,
		  .kernel_stack = 2, .count = 1000 },
		{ .event = 3, .tgid = 10, .tid = 12, .comm = "x", .user_stack = -14,
		  .kernel_stack = -2, .count = 1 },
	};
	/* n 1, event 0, tgid 1, tid 1, comm "", ustack 0, kstack 0: no count */
	static const uint8_t cut[] = { 1, 0, 1, 1, 0, 0, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct tmpfile t;
	size_t i;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_trace(w, 5, 9, rows, 2), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_TRCE);
	ck_assert_str_eq(ch.tag, "TRCE");
	ck_assert_uint_eq(ch.t0_ns, 5);
	ck_assert_uint_eq(ch.t1_ns, 9);
	ck_assert_uint_eq(ch.u.trce.n, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(ch.u.trce.rows[i].event, rows[i].event);
		ck_assert_uint_eq(ch.u.trce.rows[i].tgid, rows[i].tgid);
		ck_assert_uint_eq(ch.u.trce.rows[i].tid, rows[i].tid);
		ck_assert_str_eq(ch.u.trce.rows[i].comm, rows[i].comm);
		ck_assert_int_eq(ch.u.trce.rows[i].user_stack, rows[i].user_stack);
		ck_assert_int_eq(ch.u.trce.rows[i].kernel_stack, rows[i].kernel_stack);
		ck_assert_uint_eq(ch.u.trce.rows[i].count, rows[i].count);
	}
	tmp_close(&t, r);
	ck_assert_int_eq(decode(STK_CHUNK_TRCE, cut, sizeof(cut), &a), -EBADMSG);
	arena_free(&a);
}
END_TEST

/* ---- pidn: pids in other PID namespaces ---- */

START_TEST(pid_ns_records_round_trip_and_bad_ones_are_refused)
{
	static const struct stk_pid_ns pids[] = {
		{ .tgid = 4321, .ns_tgid = 7, .time_ns = 99, .pid_ns = 4026532000u },
		{ .tgid = 4400, .ns_tgid = 1, .time_ns = 100, .pid_ns = 0 },
	};
	static const struct stk_pid_ns same = { .tgid = 5, .ns_tgid = 5 };
	static const struct stk_pid_ns zero = { .tgid = 5, .ns_tgid = 0 };
	/* n 1, tgid 5, time 0, ns_tgid 5, pid_ns 0 */
	static const uint8_t equal[] = { 1, 5, 0, 5, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk ch;
	struct tmpfile t;
	size_t i;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_pid_ns(w, &same, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_pid_ns(w, &zero, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_pid_ns(w, pids, 2), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(ch.type, STK_CHUNK_PIDN);
	ck_assert_str_eq(ch.tag, "pidn");
	ck_assert_uint_eq(ch.u.pidn.n, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(ch.u.pidn.pids[i].tgid, pids[i].tgid);
		ck_assert_uint_eq(ch.u.pidn.pids[i].ns_tgid, pids[i].ns_tgid);
		ck_assert_uint_eq(ch.u.pidn.pids[i].time_ns, pids[i].time_ns);
		ck_assert_uint_eq(ch.u.pidn.pids[i].pid_ns, pids[i].pid_ns);
	}
	tmp_close(&t, r);
	ck_assert_int_eq(decode(STK_CHUNK_PIDN, equal, sizeof(equal), &a), -EBADMSG);
	arena_free(&a);
}
END_TEST

START_TEST(absurd_record_count_is_refused_before_allocating)
{
	/* n = 2^62, then a few bytes */
	static const uint8_t p[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0, 0, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };
	enum stk_chunk_type t;

	for (t = STK_CHUNK_META; t <= STK_CHUNK_TRCE; t++) {
		if (t == STK_CHUNK_ESYM)
			continue;
		ck_assert_int_eq(decode(t, p, sizeof(p), &a), -EBADMSG);
		ck_assert_uint_eq(a.used, 0);
		arena_reset(&a);
	}
	arena_free(&a);
}
END_TEST

START_TEST(count_just_over_the_payload_is_refused)
{
	/* CNTS: 2 records claimed, bytes for only 1 (8 bytes minimum each) */
	static const uint8_t p[] = { 2, 1, 1, 0, 0, 0, 0, 0, 1 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_CNTS, p, sizeof(p), &a), -EBADMSG);
	ck_assert_uint_eq(a.used, 0);
	arena_free(&a);
}
END_TEST

START_TEST(absurd_string_length_is_refused)
{
	/* META: 1 record, key length 2^35 */
	static const uint8_t p[] = { 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 'a' };
	/* META: 1 record, key length 4097 (over STK_MAX_STRING) */
	static const uint8_t q[] = { 1, 0x81, 0x20, 'a' };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_META, p, sizeof(p), &a), -EFBIG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_META, q, sizeof(q), &a), -EFBIG);
	arena_free(&a);
}
END_TEST

START_TEST(stack_over_frame_limit_is_refused)
{
	/* STCK: 1 stack, id 1, 1025 frames */
	static const uint8_t p[] = { 1, 1, 0x81, 0x08, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_STCK, p, sizeof(p), &a), -EFBIG);
	arena_free(&a);
}
END_TEST

START_TEST(comm_longer_than_15_bytes_is_refused)
{
	static const uint8_t p[] = { 1, 1, 1, 16, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
				     'a', 'a', 'a', 'a', 'a', 'a', 'a', 0, 0, 0, 0, 1 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_CNTS, p, sizeof(p), &a), -EFBIG);
	arena_free(&a);
}
END_TEST

START_TEST(trailing_bytes_after_records_are_refused)
{
	static const uint8_t p[] = { 1, 0, 0, 0x55 };	/* META: one empty kv, then junk */
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_META, p, sizeof(p), &a), -EBADMSG);
	arena_reset(&a);
	ck_assert_int_eq(decode(STK_CHUNK_META, p, sizeof(p) - 1, &a), 0);
	arena_free(&a);
}
END_TEST

START_TEST(payload_error_names_the_byte_that_is_wrong)
{
	/* META: 2 records; "a"="b", then a key "x\0": the NUL is byte 7.
	 * Then a CNTS whose comm is 16 bytes: its length is byte 3. */
	static const uint8_t meta[] = { 2, 1, 'a', 1, 'b', 2, 'x', 0, 1, 'c' };
	static const uint8_t cnts[] = { 1, 1, 1, 16, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
					'a', 'a', 'a', 'a', 'a', 'a', 'a', 0, 0, 0, 0, 1 };
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_raw(w, "META", 0, 0, meta, sizeof(meta)), 0);
	ck_assert_int_eq(stk_writer__add_raw(w, "CNTS", 1, 2, cnts, sizeof(cnts)), 0);
	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r),
				     "chunk 0 (META): byte 7 of the payload: NUL byte inside a string"));
	ck_assert_int_eq(stk_reader__next(r, &ch), -EFBIG);
	ck_assert_ptr_nonnull(strstr(stk_reader__errmsg(r), "chunk 1 (CNTS): byte 3 of the payload: "));
	tmp_close(&t, r);
}
END_TEST

START_TEST(ksym_module_index_out_of_range_is_refused)
{
	/* 1 module "", 1 sym: delta 0, size 0, type 't', module 1, name "" */
	static const uint8_t p[] = { 1, 0, 1, 0, 0, 't', 1, 0 };
	struct arena a = { .budget = STK_MAX_DECODED };

	ck_assert_int_eq(decode(STK_CHUNK_KSYM, p, sizeof(p), &a), -EBADMSG);
	arena_free(&a);
}
END_TEST

START_TEST(decoded_memory_budget_is_enforced)
{
	/* STAT: 200 records "" = 0 decode to 200 * 16 bytes */
	uint8_t p[2 + 400];
	struct arena a = { .budget = 1024 };
	size_t i;

	p[0] = 0xC8;
	p[1] = 0x01;
	for (i = 0; i < 400; i++)
		p[2 + i] = 0;
	ck_assert_int_eq(decode(STK_CHUNK_STAT, p, sizeof(p), &a), -EFBIG);
	arena_reset(&a);
	a.budget = 1 << 20;
	ck_assert_int_eq(decode(STK_CHUNK_STAT, p, sizeof(p), &a), 0);
	arena_free(&a);
}
END_TEST

/* ---- where stk_writer__open() writes ---- */

/* A fresh directory for one test, and the number of entries it holds. */
static void dir_make(char *dir)
{
	strcpy(dir, "/tmp/check_format_dir.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int dir_entries(const char *dir)
{
	char cmd[128];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

static void dir_remove(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(writer_creates_captures_0600_whatever_the_umask)
{
	char dir[64], path[128];
	struct stat st;
	mode_t old = umask(0);

	dir_make(dir);
	snprintf(path, sizeof(path), "%s/x.stk", dir);
	ck_assert_int_eq(stk_writer__close(stk_writer__open(path, NULL)), 0);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(dir_entries(dir), 1);
	dir_remove(dir);
}
END_TEST

START_TEST(writer_replaces_an_existing_file_only_at_commit)
{
	char dir[64], path[128], buf[16] = "";
	struct stk_writer *w;
	struct stat st;
	int fd;

	dir_make(dir);
	snprintf(path, sizeof(path), "%s/x.stk", dir);
	file_store(path, "old bytes", 9);
	w = stk_writer__open(path, NULL);
	ck_assert_ptr_nonnull(w);
	/* Until then the capture has a name of its own beside it. */
	ck_assert_int_eq(dir_entries(dir), 2);
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 9);
	close(fd);
	ck_assert_str_eq(buf, "old bytes");
	ck_assert_int_eq(stk_writer__commit(w), 0);
	ck_assert_int_eq(dir_entries(dir), 1);
	ck_assert_int_eq(stk_writer__commit(w), 0); /* once done, nothing */
	ck_assert_int_eq(stk_writer__close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 9);
	dir_remove(dir);
}
END_TEST

START_TEST(writer_discarded_before_commit_leaves_the_name_as_it_was)
{
	char dir[64], path[128], link[128], buf[16] = "";
	int fd;

	dir_make(dir);
	snprintf(path, sizeof(path), "%s/x.stk", dir);
	snprintf(link, sizeof(link), "%s/link.stk", dir);
	file_store(path, "old bytes", 9);
	ck_assert_int_eq(symlink("x.stk", link), 0);
	stk_writer__discard(stk_writer__open(path, NULL));
	stk_writer__discard(stk_writer__open(link, NULL));
	snprintf(buf, sizeof(buf), "%s", "");
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 9);
	close(fd);
	ck_assert_str_eq(buf, "old bytes");
	ck_assert_int_eq(readlink(link, buf, sizeof(buf)), 5);
	/* No temporary left, and a new name is not created. */
	ck_assert_int_eq(dir_entries(dir), 2);
	snprintf(path, sizeof(path), "%s/new.stk", dir);
	stk_writer__discard(stk_writer__open(path, NULL));
	ck_assert_int_eq(dir_entries(dir), 2);
	dir_remove(dir);
}
END_TEST

START_TEST(writer_writes_a_fifo_in_place_and_refuses_a_directory)
{
	char dir[64], path[128];
	struct stk_writer *w;
	struct stat st;
	int rfd;

	dir_make(dir);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	w = stk_writer__open(path, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__commit(w), 0);
	stk_writer__discard(w);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	close(rfd);
	errno = 0;
	ck_assert_ptr_null(stk_writer__open(dir, NULL));
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(dir_entries(dir), 1);
	dir_remove(dir);
}
END_TEST

START_TEST(writer_header_failure_leaves_nothing_behind)
{
	char dir[64], path[128];

	dir_make(dir);
	snprintf(path, sizeof(path), "%s/x.stk", dir);
	errno = 0;
	ck_assert_ptr_null(stk_writer__open(path, &(struct stk_writer_opts){ .sz = 1 }));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(dir_entries(dir), 0);
	dir_remove(dir);
}
END_TEST

/* ---- writer errors ---- */

START_TEST(writer_to_dev_full_fails_with_enospc)
{
	errno = 0;
	ck_assert_ptr_null(stk_writer__open("/dev/full", NULL));
	ck_assert_int_eq(errno, ENOSPC);
}
END_TEST

START_TEST(write_error_mid_file_fails_later_calls_with_eio)
{
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	int fd, full;

	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	/* The disk fills up: the writer's fd now points at /dev/full. */
	full = open("/dev/full", O_WRONLY);
	ck_assert_int_ge(full, 0);
	ck_assert_int_eq(dup2(full, fd), fd);
	close(full);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), -ENOSPC);
	ck_assert_str_eq(stk_writer__errmsg(w), "write chunk 1 (META): No space left on device");
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), -EIO);
	ck_assert_int_eq(stk_writer__close(w), -ENOSPC);

	/* What reached the disk is a readable, unclosed capture. */
	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 0);
	tmp_close(&t, r);
}
END_TEST

/* Held chunks reach the file together at release, in their order; the
 * chunks held go into the index as any others. */
START_TEST(held_chunks_reach_the_file_only_at_release)
{
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	struct stat st;
	off_t before;
	int fd, i;

	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	before = st.st_size;
	stk_writer__hold(w);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, before);
	ck_assert_uint_gt(stk_writer__bytes(w), (uint64_t)before);
	ck_assert_int_eq(stk_writer__release(w), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, stk_writer__bytes(w));
	ck_assert_uint_eq(stk_writer__dropped(w), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);

	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	for (i = 0; stk_reader__next(r, &ch) == 1; i++) {
		ck_assert_uint_eq(ch.seq, (uint32_t)i);
		ck_assert_str_eq(ch.tag, i < 4 ? "META" : "INDX");
	}
	ck_assert_int_eq(i, 5);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	tmp_close(&t, r);
}
END_TEST

/* A big chunk is not held: it goes out at once, after the held ones. */
START_TEST(big_chunk_goes_out_at_once_after_the_held_ones)
{
	static uint8_t noise[20000];
	struct stk_kv kv = { "k", "v" };
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	struct stat st;
	uint32_t x = 7;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(noise); i++) {
		x = x * 1103515245 + 12345;
		noise[i] = (uint8_t)(x >> 16);
	}
	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	stk_writer__hold(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(stk_writer__add_raw(w, "xBIG", 0, 0, noise, sizeof(noise)), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, stk_writer__bytes(w));
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(stk_writer__release(w), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);

	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	for (i = 0; stk_reader__next(r, &ch) == 1; i++) {
		ck_assert_uint_eq(ch.seq, (uint32_t)i);
		ck_assert_str_eq(ch.tag, i == 1 ? "xBIG" : i == 3 ? "INDX" : "META");
	}
	ck_assert_uint_eq(i, 4);
	tmp_close(&t, r);
}
END_TEST

/* A failed release loses every held chunk, says how many, and leaves the
 * chunks before them readable. */
START_TEST(failed_release_drops_the_held_chunks_only)
{
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	int fd, full, i;

	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	stk_writer__hold(w);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	full = open("/dev/full", O_WRONLY);
	ck_assert_int_ge(full, 0);
	ck_assert_int_eq(dup2(full, fd), fd);
	close(full);
	ck_assert_int_eq(stk_writer__release(w), -ENOSPC);
	ck_assert_str_eq(stk_writer__errmsg(w), "write chunks 1-3: No space left on device");
	ck_assert_uint_eq(stk_writer__dropped(w), 3);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), -EIO);
	ck_assert_int_eq(stk_writer__close(w), -ENOSPC);

	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 0);
	tmp_close(&t, r);
}
END_TEST

/* @n bytes that zstd cannot shrink. */
static void noise_fill(uint8_t *b, size_t n, uint32_t x)
{
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		b[i] = (uint8_t)(x >> 16);
	}
}

/* Held chunks past 64 KiB go out while holding, a big one at once, and a
 * close while holding writes the rest with the index: every chunk lands
 * at the offset its index entry says (the reader compares them). */
START_TEST(held_chunks_spilled_and_closed_land_where_indexed)
{
	static uint8_t noise[20000];
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	struct stat st;
	off_t header;
	int fd, i;

	noise_fill(noise, sizeof(noise), 11);
	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(fstat(fd, &st), 0);
	header = st.st_size;
	stk_writer__hold(w);
	for (i = 0; i < 30; i++)
		ck_assert_int_eq(stk_writer__add_raw(w, i == 10 ? "xBIG" : "xNOI", i, i + 1,
						     i == 10 ? noise : noise + i * 300,
						     i == 10 ? 20000 : 6000), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_gt(st.st_size, header + 20000);
	ck_assert_uint_lt((uint64_t)st.st_size, stk_writer__bytes(w));
	ck_assert_int_eq(stk_writer__close(w), 0);

	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	for (i = 0; stk_reader__next(r, &ch) == 1; i++) {
		ck_assert_uint_eq(ch.seq, (uint32_t)i);
		ck_assert_str_eq(ch.tag, i == 30 ? "INDX" : i == 10 ? "xBIG" : "xNOI");
	}
	ck_assert_int_eq(i, 31);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	tmp_close(&t, r);
}
END_TEST

/* The file may grow only part of the way (RLIMIT_FSIZE): the held
 * chunks that reached it are cut off again, the file ends where they
 * started, and all are counted lost. */
START_TEST(release_cut_short_leaves_the_file_at_a_chunk_boundary)
{
	static uint8_t noise[3000];
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct rlimit old, rl;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	struct stat st;
	off_t before;
	int fd, i;

	noise_fill(noise, sizeof(noise), 5);
	tmp_make(&t);
	fd = open(t.path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	before = st.st_size;
	stk_writer__hold(w);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(stk_writer__add_raw(w, "xNOI", 0, 0, noise, sizeof(noise)), 0);
	/* Room for two of the five and part of a third. */
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	rl = old;
	rl.rlim_cur = before + 7000;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(stk_writer__release(w), -EFBIG);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	ck_assert_uint_eq(stk_writer__dropped(w), 5);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, before);
	ck_assert_int_eq(stk_writer__close(w), -EFBIG);

	r = stk_reader__open(t.path);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_str_eq(ch.tag, "META");
	ck_assert_int_eq(stk_reader__next(r, &ch), 0);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	tmp_close(&t, r);
}
END_TEST

START_TEST(writer_refuses_bad_arguments_and_stays_usable)
{
	char *long_str = malloc(STK_MAX_STRING + 2);
	uint64_t frames[STK_MAX_FRAMES + 1] = { 0 };
	struct stk_stack big = { .id = 1, .nr_frames = STK_MAX_FRAMES + 1, .frames = frames };
	struct stk_kobj kobj = { .name = "k", .build_id_size = STK_MAX_BUILD_ID + 1 };
	struct stk_kv bad = { "k", NULL }, good = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	int n = 0;

	memset(long_str, 'x', STK_MAX_STRING + 1);
	long_str[STK_MAX_STRING + 1] = '\0';
	w = tmp_writer(&t);
	bad.value = long_str;
	ck_assert_int_eq(stk_writer__add_meta(w, &bad, 1), -EINVAL);
	bad.value = NULL;
	ck_assert_int_eq(stk_writer__add_meta(w, &bad, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_meta(w, NULL, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_stacks(w, &big, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_kobjs(w, &kobj, 1), -EINVAL);
	ck_assert_int_eq(stk_writer__add_raw(w, "INDX", 0, 0, "", 0), -EINVAL);
	ck_assert_int_eq(stk_writer__add_raw(w, "1abc", 0, 0, "", 0), -EINVAL);
	ck_assert_int_eq(stk_writer__add_raw(w, "ab c", 0, 0, "", 0), -EINVAL);
	ck_assert_int_eq(stk_writer__add_counts(w, 5, 4, NULL, 0), -EINVAL);
	/* exactly STK_MAX_STRING is fine */
	long_str[STK_MAX_STRING] = '\0';
	good.value = long_str;
	ck_assert_int_eq(stk_writer__add_meta(w, &good, 1), 0);

	r = tmp_reread(&t, w);
	ck_assert_int_eq(stk_reader__next(r, &ch), 1);
	ck_assert_uint_eq(ch.seq, 0);
	ck_assert_uint_eq(strlen(ch.u.meta.kv[0].value), STK_MAX_STRING);
	while (stk_reader__next(r, &ch) > 0)
		n++;
	ck_assert_int_eq(n, 1);	/* INDX */
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	tmp_close(&t, r);
	free(long_str);
}
END_TEST

START_TEST(writer_appends_a_segment_to_an_existing_capture)
{
	struct stk_kv kv = { "k", "v" };
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_writer *w;
	struct stk_chunk ch;
	struct tmpfile t;
	int fd, n = 0;

	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	fd = open(t.path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(stk_writer__add_meta(w, &kv, 1), 0);

	r = tmp_reread(&t, w);
	while (stk_reader__next(r, &ch) > 0)
		n++;
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(stk_reader__segment_count(r), 2);
	stk_reader__summary(r, &sum);
	ck_assert_uint_eq(sum.errors, 0);
	ck_assert_int_eq(sum.closed, 1);
	tmp_close(&t, r);
}
END_TEST

START_TEST(chunk_over_raw_limit_is_efbig_for_the_writer)
{
	struct stk_writer *w;
	struct tmpfile t;
	void *big = calloc(1, STK_MAX_CHUNK_RAW + 1);

	ck_assert_ptr_nonnull(big);
	w = tmp_writer(&t);
	ck_assert_int_eq(stk_writer__add_raw(w, "xbig", 0, 0, big, STK_MAX_CHUNK_RAW + 1), -EFBIG);
	ck_assert_int_eq(stk_writer__close(w), 0);
	unlink(t.path);
	free(big);
}
END_TEST

START_TEST(zstd_level_option_is_honoured)
{
	struct stk_writer_opts o1 = { .sz = sizeof(o1), .compression_level = 1 };
	struct stk_writer_opts o19 = { .sz = sizeof(o19), .compression_level = 19 };
	struct stk_writer *w1, *w19;
	struct tmpfile t1, t19;
	struct fs_sample s;

	fs_init(&s, 21, 0);
	tmp_make(&t1);
	tmp_make(&t19);
	w1 = stk_writer__open(t1.path, &o1);
	w19 = stk_writer__open(t19.path, &o19);
	ck_assert_int_eq(fs_write(&s, w1), 0);
	ck_assert_int_eq(fs_write(&s, w19), 0);
	/* Level 19 never compresses this sample worse than level 1. */
	ck_assert_uint_le(stk_writer__bytes(w19), stk_writer__bytes(w1));
	ck_assert_int_eq(stk_writer__close(w1), 0);
	ck_assert_int_eq(stk_writer__close(w19), 0);
	unlink(t1.path);
	unlink(t19.path);
	fs_free(&s);
}
END_TEST

/* Payloads of at most STK_SMALL_PAYLOAD bytes take small_compression_level,
 * bigger ones compression_level. */
START_TEST(small_payload_level_applies_to_small_payloads_only)
{
	struct stk_writer_opts oa = { .sz = sizeof(oa), .compression_level = 1 };
	struct stk_writer_opts ob = { .sz = sizeof(ob), .compression_level = 1,
				      .small_compression_level = -5 };
	static uint8_t text[STK_SMALL_PAYLOAD + 2000];
	struct stk_writer *wa, *wb;
	struct tmpfile ta, tb;
	uint64_t a0, b0, a1, b1;
	uint32_t x = 1;
	size_t i;

	/* Few distinct bytes, no long repeats: entropy coding is what
	 * compresses it. */
	for (i = 0; i < sizeof(text); i++) {
		x = x * 1103515245 + 12345;
		text[i] = "aaaaaaaabbbbccde"[(x >> 16) & 15];
	}
	tmp_make(&ta);
	tmp_make(&tb);
	wa = stk_writer__open(ta.path, &oa);
	wb = stk_writer__open(tb.path, &ob);
	ck_assert_ptr_nonnull(wa);
	ck_assert_ptr_nonnull(wb);
	a0 = stk_writer__bytes(wa);
	b0 = stk_writer__bytes(wb);
	ck_assert_int_eq(stk_writer__add_raw(wa, "XSML", 0, 0, text, STK_SMALL_PAYLOAD), 0);
	ck_assert_int_eq(stk_writer__add_raw(wb, "XSML", 0, 0, text, STK_SMALL_PAYLOAD), 0);
	a1 = stk_writer__bytes(wa);
	b1 = stk_writer__bytes(wb);
	ck_assert_uint_gt(b1 - b0, a1 - a0);
	ck_assert_int_eq(stk_writer__add_raw(wa, "XBIG", 0, 0, text, sizeof(text)), 0);
	ck_assert_int_eq(stk_writer__add_raw(wb, "XBIG", 0, 0, text, sizeof(text)), 0);
	ck_assert_uint_eq(stk_writer__bytes(wb) - b1, stk_writer__bytes(wa) - a1);
	ck_assert_int_eq(stk_writer__close(wa), 0);
	ck_assert_int_eq(stk_writer__close(wb), 0);
	unlink(ta.path);
	unlink(tb.path);
}
END_TEST

static Suite *format_suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc;

	tc = tcase_create("codec");
	tcase_add_test(tc, crc32c_matches_known_vector);
	tcase_add_test(tc, crc32c_chains_across_calls);
	tcase_add_test(tc, varint_round_trips_edge_values);
	tcase_add_test(tc, varint_rejects_more_than_ten_bytes);
	tcase_add_test(tc, varint_rejects_overflow_in_tenth_byte);
	tcase_add_test(tc, varint_accepts_non_minimal_encoding);
	tcase_add_test(tc, zigzag_maps_signed_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("round_trip");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, round_trip_every_chunk_type_random_contents, 1, 9);
	tcase_add_test(tc, reading_from_path_matches_reading_from_memory);
	tcase_add_test(tc, reader_reads_a_pipe_on_stdin);
	tcase_add_test(tc, file_that_shrinks_while_read_is_one_eio_error);
	tcase_add_test(tc, stream_without_the_magic_is_refused_at_once);
	tcase_add_test(tc, endless_stream_after_a_capture_costs_bounded_memory);
	tcase_add_test(tc, stream_resyncs_after_damage_as_memory_does);
	tcase_add_test(tc, segment_info_holds_the_file_header_facts);
	tcase_add_test(tc, concatenated_files_read_as_two_segments);
	tcase_add_test(tc, unknown_ancillary_chunk_is_returned_as_unknown);
	tcase_add_test(tc, unknown_critical_chunk_is_refused_with_its_tag);
	tcase_add_test(tc, chunk_type_tags_match_the_spec);
	tcase_add_test(tc, esym_symbol_tables_and_perf_maps_round_trip);
	tcase_add_test(tc, esym_writer_refuses_tables_without_build_id_or_name);
	tcase_add_test(tc, esym_pycode_round_trip);
	tcase_add_test(tc, esym_pycode_writer_refuses_what_the_spec_forbids);
	tcase_add_test(tc, pid_ns_records_round_trip_and_bad_ones_are_refused);
	tcase_add_test(tc, trace_counts_round_trip_with_their_event_index);
	tcase_add_test(tc, newer_read_version_is_refused_at_open);
	tcase_add_test(tc, newer_read_version_in_second_segment_stops_there);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad_input");
	tcase_add_test(tc, empty_file_is_enodata);
	tcase_add_test(tc, text_file_is_not_an_stk);
	tcase_add_test(tc, missing_file_reports_open_errno);
	tcase_add_test(tc, file_cut_inside_first_header_is_enodata);
	tcase_add_test(tc, truncated_file_returns_complete_chunks_then_enodata);
	tcase_add_test(tc, file_cut_at_chunk_boundary_ends_cleanly_not_closed);
	tcase_add_test(tc, flipped_payload_byte_loses_only_that_chunk);
	tcase_add_test(tc, damaged_first_header_still_yields_the_chunks);
	tcase_add_test(tc, raw_size_over_limit_is_efbig_and_reading_goes_on);
	tcase_add_test(tc, spliced_chunk_from_another_segment_is_reported);
	tcase_add_test(tc, chunk_out_of_sequence_is_reported_then_read);
	tcase_add_test(tc, index_entry_not_matching_its_chunk_is_reported);
	tcase_add_test(tc, rebuilt_index_without_changes_is_accepted);
	tcase_add_test(tc, absurd_record_count_is_refused_before_allocating);
	tcase_add_test(tc, count_just_over_the_payload_is_refused);
	tcase_add_test(tc, absurd_string_length_is_refused);
	tcase_add_test(tc, stack_over_frame_limit_is_refused);
	tcase_add_test(tc, comm_longer_than_15_bytes_is_refused);
	tcase_add_test(tc, trailing_bytes_after_records_are_refused);
	tcase_add_test(tc, ksym_module_index_out_of_range_is_refused);
	tcase_add_test(tc, payload_error_names_the_byte_that_is_wrong);
	tcase_add_test(tc, decoded_memory_budget_is_enforced);
	tcase_add_test(tc, esym_malformed_tables_are_corrupt_unknown_kinds_are_not);
	tcase_add_test(tc, esym_pycode_malformed_is_corrupt);
	tcase_add_test(tc, python_words_encode_and_decode);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writer_to_dev_full_fails_with_enospc);
	tcase_add_test(tc, write_error_mid_file_fails_later_calls_with_eio);
	tcase_add_test(tc, held_chunks_reach_the_file_only_at_release);
	tcase_add_test(tc, big_chunk_goes_out_at_once_after_the_held_ones);
	tcase_add_test(tc, failed_release_drops_the_held_chunks_only);
	tcase_add_test(tc, held_chunks_spilled_and_closed_land_where_indexed);
	tcase_add_test(tc, release_cut_short_leaves_the_file_at_a_chunk_boundary);
	tcase_add_test(tc, writer_refuses_bad_arguments_and_stays_usable);
	tcase_add_test(tc, writer_appends_a_segment_to_an_existing_capture);
	tcase_add_test(tc, chunk_over_raw_limit_is_efbig_for_the_writer);
	tcase_add_test(tc, zstd_level_option_is_honoured);
	tcase_add_test(tc, small_payload_level_applies_to_small_payloads_only);
	tcase_add_test(tc, writer_creates_captures_0600_whatever_the_umask);
	tcase_add_test(tc, writer_replaces_an_existing_file_only_at_commit);
	tcase_add_test(tc, writer_discarded_before_commit_leaves_the_name_as_it_was);
	tcase_add_test(tc, writer_writes_a_fifo_in_place_and_refuses_a_directory);
	tcase_add_test(tc, writer_header_failure_leaves_nothing_behind);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(format_suite());
}
