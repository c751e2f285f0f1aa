// SPDX-License-Identifier: BSD-2-Clause
/*
 * The .stk writer.  Append-only: every header, chunk and trailer goes out in
 * one write() once complete and is never touched again, so a writer killed
 * at any moment leaves a file whose complete chunks are all readable (unlike
 * a format that patches a size field at exit).  Chunks made while held
 * (stk_writer__hold()) wait complete in memory and go out together, in the
 * order made, in one write() at stk_writer__release().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "stk_int.h"

#define OPTS_HAS(o, f) ((o) && (o)->sz >= offsetof(typeof(*(o)), f) + sizeof((o)->f))

struct stk_writer {
	int fd;
	char *path;			/* the name to rename the temporary to, or NULL */
	char *tmp;			/* the temporary file we created, or NULL */
	int named;			/* renamed to path: it must still name the file */
	dev_t dev;			/* the file's, for that check */
	ino_t ino;
	int failed;			/* first error that left the file incomplete */
	uint64_t bytes;			/* bytes of this writer's, held ones included */
	uint64_t written;		/* of those, bytes in the file */
	int64_t base;			/* file offset where it started, -1 if not a file */
	uint64_t seg_start;		/* offset of this segment's file header */
	uint8_t uuid[16];
	uint32_t seq;
	ZSTD_CCtx *cctx;
	int level, small_level;		/* zstd's, for payloads over/up to STK_SMALL_PAYLOAD */
	int cur_level;			/* the one set in cctx */
	struct sbuf payload;		/* encoded payload, reused */
	uint8_t *out;			/* header + compressed payload, reused */
	size_t out_cap;
	struct stk_index_entry *index;
	size_t nr_index, index_cap;
	int holding;			/* between hold() and release() */
	uint8_t *held;			/* complete chunks not written yet */
	size_t held_len, held_cap;
	uint32_t nr_held;		/* chunks in held[] */
	uint64_t dropped;		/* held chunks a failed write lost */
	char errmsg[256];
};

static void writer_msg(struct stk_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void writer_msg(struct stk_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Writes all of @a then @b (may be empty) at the current end with one
 * writev() (more only on short writes); on failure removes what part of
 * them reached the file, so the file still ends at a chunk boundary.  They
 * are already counted in w->bytes. */
static int writer_write2(struct stk_writer *w, const void *a, size_t alen, const void *b,
			 size_t blen)
{
	struct iovec iov[2] = { { (void *)a, alen }, { (void *)b, blen } };
	struct iovec *v = alen ? iov : iov + 1;
	size_t size = alen + blen, left = size;
	int nv = (alen ? 1 : 0) + (blen ? 1 : 0);
	ssize_t n;
	int err;

	while (left) {
		n = writev(w->fd, v, nv);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (n == 0) {
			err = -EIO;
			goto fail;
		}
		left -= n;
		while (nv && (size_t)n >= v->iov_len) {
			n -= v->iov_len;
			v++;
			nv--;
		}
		if (nv) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
	w->written += size;
	return 0;
fail:
	/* Best effort: a pipe cannot be truncated, and the reader copes with a
	 * partial chunk at the end anyway. */
	if (left != size && w->base >= 0 && ftruncate(w->fd, w->base + w->written) < 0)
		errno = 0;
	w->bytes = w->written;
	w->failed = err;
	return err;
}

static int writer_write(struct stk_writer *w, const void *buf, size_t size)
{
	return writer_write2(w, buf, size, NULL, 0);
}

static int writer_header(struct stk_writer *w, uint64_t wall, uint64_t mono)
{
	uint8_t frame[STK_FRAME_PREFIX + STK_FILE_HDR_LEN] = { 0 };
	uint8_t *h = frame + STK_FRAME_PREFIX;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(w->uuid)) {
		n = getrandom(w->uuid + got, sizeof(w->uuid) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += n;
	}
	/* RFC 4122 version 4 (random) UUID, so tools print it as one. */
	w->uuid[6] = (w->uuid[6] & 0x0f) | 0x40;
	w->uuid[8] = (w->uuid[8] & 0x3f) | 0x80;

	put_le32(frame, STK_MAGIC_FILE);
	put_le32(frame + 4, STK_FILE_HDR_LEN);
	memcpy(h + FH_SIGNATURE, STK_SIGNATURE, STK_SIGNATURE_LEN);
	put_le16(h + FH_READ_VERSION, STK_FORMAT_READ_VERSION);
	put_le16(h + FH_WRITE_VERSION, STK_FORMAT_WRITE_VERSION);
	put_le16(h + FH_HEADER_LEN, STK_FILE_HDR_LEN);
	put_le16(h + FH_FLAGS, 0);
	put_le32(h + FH_WRITER_REL, STK_RELEASE_CURRENT);
	put_le32(h + FH_MIN_READER_REL, STK_MIN_READER_RELEASE);
	memcpy(h + FH_UUID, w->uuid, 16);
	put_le64(h + FH_WALL_START, wall ? wall : clock_ns(CLOCK_REALTIME));
	put_le64(h + FH_MONO_START, mono ? mono : clock_ns(CLOCK_MONOTONIC));
	put_le32(h + STK_FILE_HDR_LEN - 4, stk_crc32c(0, h, STK_FILE_HDR_LEN - 4));
	w->seg_start = w->bytes;
	w->bytes += sizeof(frame);
	return writer_write(w, frame, sizeof(frame));
}

/*
 * Where in the file this writer's bytes start, so that a failed write can
 * be cut back without touching what was there before (a new segment may be
 * appended to an existing capture).  -1 when the fd is not a regular file.
 */
static int64_t writer_base(int fd)
{
	struct stat st;
	off_t pos;
	int flags;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0 && (flags & O_APPEND))
		return st.st_size;
	pos = lseek(fd, 0, SEEK_CUR);
	return pos < 0 ? -1 : pos;
}

struct stk_writer *stk_writer__fdopen(int fd, const struct stk_writer_opts *opts)
{
	struct stk_writer *w = NULL;
	uint64_t wall = 0, mono = 0;
	int level = 0, small = 0;
	int err;

	if (fd < 0 || (opts && opts->sz < sizeof(opts->sz))) {
		err = -EINVAL;
		goto fail;
	}
	/* An older caller's opts end early: fields past opts->sz keep defaults. */
	if (OPTS_HAS(opts, compression_level))
		level = opts->compression_level;
	if (OPTS_HAS(opts, wall_start_ns))
		wall = opts->wall_start_ns;
	if (OPTS_HAS(opts, mono_start_ns))
		mono = opts->mono_start_ns;
	if (OPTS_HAS(opts, small_compression_level))
		small = opts->small_compression_level;
	w = calloc(1, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto fail;
	}
	w->fd = fd;
	w->base = writer_base(fd);
	w->payload.limit = STK_MAX_CHUNK_RAW;
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		err = -ENOMEM;
		goto fail;
	}
	w->level = level ? level : 3;
	w->small_level = small ? small : w->level;
	w->cur_level = w->level;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
		err = -EINVAL;
		goto fail;
	}
	err = writer_header(w, wall, mono);
	if (err)
		goto fail;
	return w;
fail:
	if (w) {
		ZSTD_freeCCtx(w->cctx);
		free(w);
	}
	close(fd);
	errno = -err;
	return NULL;
}

/* "DIR/.NAME.XXXXXX" beside @path (NAME cut to fit NAME_MAX), or NULL. */
static char *tmp_template(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dir_len = slash ? (int)(slash - path) + 1 : 0;
	int base_len = (int)strlen(base);
	char *t;

	if (base_len > NAME_MAX - 8)
		base_len = NAME_MAX - 8;
	if (asprintf(&t, "%.*s.%.*s.XXXXXX", dir_len, path, base_len, base) < 0)
		return NULL;
	return t;
}

/*
 * 1 if a writer holds the lock stk_writer__open() takes on its file at
 * @path (an open file description lock, F_OFD_SETLK: closing other fds of
 * the file does not drop it).  0 when none does, or @path is no regular
 * file we can open.
 */
static int locked_by_writer(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int fd, held;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fcntl(fd, F_OFD_GETLK, &fl) == 0 &&
	       fl.l_type != F_UNLCK;
	close(fd);
	return held;
}

/* Removes the temporary if it still is the file open on @w->fd. */
static void tmp_remove(struct stk_writer *w)
{
	struct stat a, b;

	if (w->tmp && fstat(w->fd, &a) == 0 && lstat(w->tmp, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		unlink(w->tmp);
	free(w->tmp);
	w->tmp = NULL;
}

/*
 * Where a capture at @path goes: a character device or FIFO (/dev/null, a
 * pipe to another program) is written in place, never truncated; any
 * other name (none yet, a regular file, a symbolic link) gets a new file
 * beside it that replaces it at stk_writer__commit().  Nothing else is
 * written to (a directory, a block device, a socket).
 * Returns the fd, with *@tmp the temporary's name (malloc'ed) or NULL.
 */
static int open_output(const char *path, char **tmp)
{
	struct stat st;
	int fd, err;

	*tmp = NULL;
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		/* Opening a FIFO waits for its reader, as for any writer. */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
			return fd;
		/* Replaced since: never write into what we did not check. */
		close(fd);
		return -EAGAIN;
	} else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	/* Another writer's capture in the making: not ours to replace. */
	if (S_ISREG(st.st_mode) && locked_by_writer(path))
		return -EBUSY;
	*tmp = tmp_template(path);
	if (!*tmp)
		return -ENOMEM;
	/* O_EXCL, mode 0600 whatever the umask: captures hold kernel addresses. */
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	{
		/* Held until the fd is closed; a filesystem without such
		 * locks (some network ones) only loses the check. */
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		(void)fcntl(fd, F_OFD_SETLK, &fl);
	}
	return fd;
}

struct stk_writer *stk_writer__open(const char *path, const struct stk_writer_opts *opts)
{
	struct stk_writer *w;
	char *tmp = NULL, *name;
	int fd, err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	errno = 0;
	fd = open_output(path, &tmp);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	name = tmp ? strdup(path) : NULL;
	if (tmp && !name) {
		unlink(tmp);
		free(tmp);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	w = stk_writer__fdopen(fd, opts);
	if (!w) {
		err = errno;
		if (tmp)
			unlink(tmp);	/* ours, just made: no header in it */
		free(tmp);
		free(name);
		errno = err;
		return NULL;
	}
	w->tmp = tmp;
	w->path = name;
	return w;
}

int stk_writer__commit(struct stk_writer *w)
{
	struct stat st;
	int err;

	if (!w)
		return -EINVAL;
	if (!w->tmp)
		return 0;
	/* What the name holds now: only a file or a link is replaced, and
	 * not another writer's capture in the making. */
	if (lstat(w->path, &st) == 0) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			writer_msg(w, "%s: not a regular file any more", w->path);
			return -EEXIST;
		}
		if (S_ISREG(st.st_mode) && locked_by_writer(w->path)) {
			writer_msg(w, "%s: another writer started on it meanwhile", w->path);
			return -EBUSY;
		}
	}
	if (rename(w->tmp, w->path) < 0) {
		err = -errno;
		writer_msg(w, "rename to %s: %s", w->path, strerror(-err));
		return err;
	}
	free(w->tmp);
	w->tmp = NULL;
	if (fstat(w->fd, &st) == 0) {
		w->named = 1;
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	return 0;
}

static int index_add(struct stk_writer *w, const struct stk_index_entry *e)
{
	struct stk_index_entry *tmp;
	size_t cap;

	if (w->nr_index == w->index_cap) {
		cap = w->index_cap ? 2 * w->index_cap : 64;
		tmp = realloc(w->index, cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		w->index = tmp;
		w->index_cap = cap;
	}
	w->index[w->nr_index++] = *e;
	return 0;
}

/*
 * chunk_pack() - compress the encoded payload in w->payload and put the
 * chunk header in front of it in w->out, leaving @extra bytes of room after
 * it (for the trailer that follows the index).  Returns the chunk's bytes
 * (header + payload) through @size.
 */
static int chunk_pack(struct stk_writer *w, const char tag[4], uint64_t t0, uint64_t t1,
		      size_t extra, size_t *size)
{
	const size_t hlen = STK_FRAME_PREFIX + STK_CHUNK_HDR_LEN;
	size_t need, comp;
	uint8_t *h, *tmp;
	int level;

	if (w->payload.err) {
		writer_msg(w, "chunk %u (%.4s): %s", w->seq, tag, w->payload.why);
		return w->payload.err;
	}
	need = hlen + ZSTD_compressBound(w->payload.len) + extra;
	if (need > w->out_cap) {
		tmp = realloc(w->out, need);
		if (!tmp) {
			writer_msg(w, "chunk %u (%.4s): out of memory", w->seq, tag);
			return -ENOMEM;
		}
		w->out = tmp;
		w->out_cap = need;
	}
	level = w->payload.len <= STK_SMALL_PAYLOAD ? w->small_level : w->level;
	if (level != w->cur_level) {
		if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level))) {
			writer_msg(w, "chunk %u (%.4s): zstd level %d refused", w->seq, tag, level);
			return -EINVAL;
		}
		w->cur_level = level;
	}
	comp = ZSTD_compress2(w->cctx, w->out + hlen, need - hlen - extra,
			      w->payload.len ? w->payload.data : (const uint8_t *)"", w->payload.len);
	if (ZSTD_isError(comp)) {
		writer_msg(w, "chunk %u (%.4s): zstd: %s", w->seq, tag, ZSTD_getErrorName(comp));
		return -ENOMEM;
	}
	if (comp > UINT32_MAX) {
		writer_msg(w, "chunk %u (%.4s): compressed payload over 4 GiB", w->seq, tag);
		return -EFBIG;
	}

	h = w->out + STK_FRAME_PREFIX;
	put_le32(w->out, STK_MAGIC_CHUNK);
	put_le32(w->out + 4, STK_CHUNK_HDR_LEN);
	memcpy(h + CH_TAG, tag, 4);
	put_le16(h + CH_HEADER_LEN, STK_CHUNK_HDR_LEN);
	put_le16(h + CH_FLAGS, 0);
	put_le32(h + CH_SEQ, w->seq);
	put_le32(h + CH_SEGMENT_ID, get_le32(w->uuid));
	put_le64(h + CH_T0, t0);
	put_le64(h + CH_T1, t1);
	put_le32(h + CH_COMP_LEN, comp);
	put_le32(h + CH_RAW_LEN, w->payload.len);
	put_le32(h + CH_PAYLOAD_CRC, stk_crc32c(0, w->out + hlen, comp));
	put_le32(h + STK_CHUNK_HDR_LEN - 4, stk_crc32c(0, h, STK_CHUNK_HDR_LEN - 4));
	*size = hlen + comp;
	return 0;
}

/*
 * Write the held chunks in one write().  On failure they are all lost (the
 * file is cut back to where they started) and counted in w->dropped, and
 * their index entries go: the file holds the chunks before them.
 */
static int held_write(struct stk_writer *w)
{
	uint32_t first = w->seq - w->nr_held;
	int err;

	if (!w->nr_held)
		return 0;
	err = writer_write(w, w->held, w->held_len);
	if (err) {
		writer_msg(w, "write chunks %u-%u: %s", first, w->seq - 1, strerror(-err));
		w->nr_index -= w->nr_held;
		w->dropped += w->nr_held;
	}
	w->held_len = 0;
	w->nr_held = 0;
	return err;
}

/*
 * Put @size bytes of a complete chunk after the held ones, growing the
 * buffer; -ENOMEM leaves everything as it was.  Held chunks that would
 * pass HELD_MAX bytes in all are written first.  A chunk of HELD_BIG bytes
 * or more is not copied (*@direct): it goes out after the held ones in
 * the same writev().  The buffer stays at most HELD_MAX bytes.
 */
#define HELD_MAX (64 * 1024)
#define HELD_BIG (16 * 1024)

static int held_put(struct stk_writer *w, const void *buf, size_t size, int *direct)
{
	size_t cap;
	uint8_t *tmp;
	int err;

	*direct = size >= HELD_BIG;
	if (*direct)
		return 0;
	if (w->held_len + size > HELD_MAX) {
		err = held_write(w);
		if (err)
			return err;
	}
	if (w->held_len + size > w->held_cap) {
		cap = w->held_cap ? w->held_cap : 4096;
		while (cap < w->held_len + size)
			cap *= 2;
		tmp = realloc(w->held, cap);
		if (!tmp)
			return -ENOMEM;
		w->held = tmp;
		w->held_cap = cap;
	}
	memcpy(w->held + w->held_len, buf, size);
	w->held_len += size;
	w->nr_held++;
	return 0;
}

/*
 * chunk_emit() - write the chunk packed in w->out (plus @extra bytes after
 * it) with one write(), or hold it, and record it in the index.
 */
static int chunk_emit(struct stk_writer *w, size_t size, size_t extra)
{
	const uint8_t *h = w->out + STK_FRAME_PREFIX;
	struct stk_index_entry e;
	int is_index, direct = 1;
	int err;

	memcpy(e.tag, h + CH_TAG, 4);
	e.offset = w->bytes - w->seg_start;
	e.comp_len = get_le32(h + CH_COMP_LEN);
	e.raw_len = get_le32(h + CH_RAW_LEN);
	e.seq = w->seq;
	e.t0_ns = get_le64(h + CH_T0);
	e.t1_ns = get_le64(h + CH_T1);
	is_index = memcmp(e.tag, "INDX", 4) == 0;
	/* Reserve the index slot first: after the write nothing may fail. */
	if (!is_index) {
		err = index_add(w, &e);
		if (err) {
			writer_msg(w, "chunk %u (%.4s): out of memory", w->seq, e.tag);
			return err;
		}
	}
	if (w->holding) {
		err = held_put(w, w->out, size + extra, &direct);
		if (err) {
			if (!is_index)
				w->nr_index--;
			if (err == -ENOMEM)
				writer_msg(w, "chunk %u (%.4s): out of memory", w->seq, e.tag);
			return err;
		}
	}
	w->bytes += size + extra;
	if (direct) {
		/* The held chunks and this one in one writev(). */
		err = writer_write2(w, w->held, w->held_len, w->out, size + extra);
		if (err) {
			if (!is_index)
				w->nr_index--;
			w->nr_index -= w->nr_held;
			w->dropped += w->nr_held;
			if (w->nr_held)
				writer_msg(w, "write chunks %u-%u (%.4s): %s", w->seq - w->nr_held,
					   w->seq, e.tag, strerror(-err));
			else
				writer_msg(w, "write chunk %u (%.4s): %s", w->seq, e.tag,
					   strerror(-err));
		}
		w->held_len = 0;
		w->nr_held = 0;
		if (err)
			return err;
	}
	w->seq++;
	return 0;
}

static int writer_chunk(struct stk_writer *w, const char tag[4], uint64_t t0, uint64_t t1)
{
	size_t size;
	int err;

	err = chunk_pack(w, tag, t0, t1, 0, &size);
	if (err)
		return err;
	return chunk_emit(w, size, 0);
}

/* Common front of every add_*(): state checks and an empty payload buffer. */
static int writer_begin(struct stk_writer *w, uint64_t t0, uint64_t t1)
{
	if (!w)
		return -EINVAL;
	if (w->failed) {
		writer_msg(w, "an earlier write failed: %s", strerror(-w->failed));
		return -EIO;
	}
	if (t1 < t0) {
		writer_msg(w, "chunk %u: interval ends before it starts", w->seq);
		return -EINVAL;
	}
	w->payload.len = 0;
	w->payload.err = 0;
	w->payload.why = NULL;
	return 0;
}

#define ADD_CHECK(w, arr, n)						\
	do {								\
		if ((n) && !(arr)) {					\
			writer_msg(w, "chunk %u: %zu records but no array", \
				   (w)->seq, (size_t)(n));		\
			return -EINVAL;					\
		}							\
	} while (0)

int stk_writer__add_meta(struct stk_writer *w, const struct stk_kv *kv, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, kv, n);
	stk_encode_meta(&w->payload, kv, n);
	return writer_chunk(w, "META", 0, 0);
}

int stk_writer__add_stacks(struct stk_writer *w, const struct stk_stack *stacks, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, stacks, n);
	stk_encode_stacks(&w->payload, stacks, n);
	return writer_chunk(w, "STCK", 0, 0);
}

int stk_writer__add_counts(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			   const struct stk_count *rows, size_t n)
{
	int err = writer_begin(w, t0_ns, t1_ns);

	if (err)
		return err;
	ADD_CHECK(w, rows, n);
	stk_encode_counts(&w->payload, rows, n);
	return writer_chunk(w, "CNTS", t0_ns, t1_ns);
}

int stk_writer__add_offcpu(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			   const struct stk_offcpu *rows, size_t n)
{
	int err = writer_begin(w, t0_ns, t1_ns);

	if (err)
		return err;
	ADD_CHECK(w, rows, n);
	stk_encode_offcpu(&w->payload, rows, n);
	return writer_chunk(w, "OFFC", t0_ns, t1_ns);
}

int stk_writer__add_trace(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			  const struct stk_trace_count *rows, size_t n)
{
	int err = writer_begin(w, t0_ns, t1_ns);

	if (err)
		return err;
	ADD_CHECK(w, rows, n);
	stk_encode_trace(&w->payload, rows, n);
	return writer_chunk(w, "TRCE", t0_ns, t1_ns);
}

int stk_writer__add_maps(struct stk_writer *w, const struct stk_proc_maps *procs, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, procs, n);
	stk_encode_maps(&w->payload, procs, n);
	return writer_chunk(w, "MAPS", 0, 0);
}

int stk_writer__add_ksyms(struct stk_writer *w, const struct stk_ksym *syms, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, syms, n);
	stk_encode_ksyms(&w->payload, syms, n);
	return writer_chunk(w, "KSYM", 0, 0);
}

int stk_writer__add_pid_ns(struct stk_writer *w, const struct stk_pid_ns *pids, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, pids, n);
	stk_encode_pid_ns(&w->payload, pids, n);
	return writer_chunk(w, "pidn", 0, 0);
}

int stk_writer__add_kobjs(struct stk_writer *w, const struct stk_kobj *objs, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, objs, n);
	stk_encode_kobjs(&w->payload, objs, n);
	return writer_chunk(w, "KBID", 0, 0);
}

int stk_writer__add_esym(struct stk_writer *w, const uint8_t *build_id, uint32_t build_id_size,
			 const void *blob, size_t blob_size)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	stk_encode_esym(&w->payload, build_id, build_id_size, blob, blob_size);
	return writer_chunk(w, "ESYM", 0, 0);
}

int stk_writer__add_esym_symtab(struct stk_writer *w, const uint8_t *build_id,
				uint32_t build_id_size, uint32_t sources,
				const struct stk_esym_sym *syms, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, syms, n);
	stk_encode_esym_syms(&w->payload, STK_ESYM_SYMTAB, build_id, build_id_size, sources,
			     syms, n);
	return writer_chunk(w, "ESYM", 0, 0);
}

int stk_writer__add_esym_perf_map(struct stk_writer *w, uint32_t tgid,
				  const struct stk_esym_sym *syms, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, syms, n);
	stk_encode_esym_syms(&w->payload, STK_ESYM_PERF_MAP, NULL, 0, tgid, syms, n);
	return writer_chunk(w, "ESYM", 0, 0);
}

int stk_writer__add_esym_pycode(struct stk_writer *w, uint32_t tgid, uint32_t py_version,
				const struct stk_esym_pycode *codes, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, codes, n);
	stk_encode_esym_pycode(&w->payload, tgid, py_version, codes, n);
	return writer_chunk(w, "ESYM", 0, 0);
}

int stk_writer__add_stats(struct stk_writer *w, const struct stk_stat *stats, size_t n)
{
	int err = writer_begin(w, 0, 0);

	if (err)
		return err;
	ADD_CHECK(w, stats, n);
	stk_encode_stats(&w->payload, stats, n);
	return writer_chunk(w, "STAT", 0, 0);
}

static int tag_valid(const char tag[4])
{
	int i;

	for (i = 0; i < 4; i++) {
		char ch = tag[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (i > 0 && ch >= '0' && ch <= '9')))
			return 0;
	}
	return 1;
}

int stk_writer__add_raw(struct stk_writer *w, const char tag[4], uint64_t t0_ns, uint64_t t1_ns,
			const void *payload, size_t size)
{
	int err = writer_begin(w, t0_ns, t1_ns);

	if (err)
		return err;
	if (!tag || !tag_valid(tag) || memcmp(tag, "INDX", 4) == 0 || (size && !payload)) {
		writer_msg(w, "chunk %u: bad raw chunk tag or payload", w->seq);
		return -EINVAL;
	}
	sbuf_put(&w->payload, payload, size);
	return writer_chunk(w, tag, t0_ns, t1_ns);
}

/*
 * The capture's name no longer holds it (removed, or replaced by another
 * file): copy it from @w->fd to a new file beside, "PATH.PID" (or with a
 * suffix), whose name goes to @where.  0 or -errno.
 */
static int save_copy(struct stk_writer *w, char *where, size_t size)
{
	char *name = NULL;
	uint8_t buf[65536];
	off_t off = 0;
	int fd = -1, err = 0, i;
	ssize_t n;

	for (i = 0; i < 100 && fd < 0; i++) {
		free(name);
		if ((i ? asprintf(&name, "%s.%d.%d", w->path, (int)getpid(), i)
		       : asprintf(&name, "%s.%d", w->path, (int)getpid())) < 0)
			return -ENOMEM;
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST) {
			err = -errno;
			break;
		}
	}
	if (fd < 0) {
		free(name);
		return err ?: -EEXIST;
	}
	while ((n = pread(w->fd, buf, sizeof(buf), off)) > 0) {
		ssize_t done = 0;

		while (done < n) {
			ssize_t k = write(fd, buf + done, (size_t)(n - done));

			if (k < 0) {
				err = -errno;
				goto out;
			}
			done += k;
		}
		off += n;
	}
	if (n < 0)
		err = -errno;
	if (!err && fsync(fd) < 0)
		err = -errno;
out:
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err)
		unlink(name);
	else
		snprintf(where, size, "%s", name);
	free(name);
	return err;
}

int stk_writer__close(struct stk_writer *w)
{
	return stk_writer__close_as(w, NULL, 0);
}

int stk_writer__close_as(struct stk_writer *w, char *where, size_t where_size)
{
	uint8_t *t;
	uint64_t index_off;
	size_t size;
	int err = 0;

	if (where && where_size)
		where[0] = '\0';
	if (!w)
		return 0;
	if (w->failed) {
		err = w->failed;
		goto out;
	}
	err = writer_begin(w, 0, 0);
	if (err)
		goto out;
	/* The index, then the trailer right after it, in one write(): the
	 * trailer's segment length needs the index's compressed size. */
	stk_encode_index(&w->payload, w->index, w->nr_index);
	index_off = w->bytes - w->seg_start;
	err = chunk_pack(w, "INDX", 0, 0, STK_FRAME_PREFIX + STK_TRAILER_LEN, &size);
	if (err)
		goto out;
	t = w->out + size;
	put_le32(t, STK_MAGIC_TRAILER);
	put_le32(t + 4, STK_TRAILER_LEN);
	t += STK_FRAME_PREFIX;
	memcpy(t + TR_MARK, STK_END_MARK, 8);
	put_le64(t + TR_INDEX_OFF, index_off);
	put_le64(t + TR_SEG_LEN, index_off + size + STK_FRAME_PREFIX + STK_TRAILER_LEN);
	put_le32(t + TR_CHUNK_COUNT, w->nr_index);
	put_le32(t + TR_CRC, stk_crc32c(0, t, TR_CRC));
	/* Held chunks and the index go out together. */
	err = chunk_emit(w, size, STK_FRAME_PREFIX + STK_TRAILER_LEN);
	err = err ?: held_write(w);
	w->holding = 0;
	if (err)
		goto out;
	/* A pipe or a character device cannot be synced; that is no error. */
	if (fsync(w->fd) < 0 && errno != EINVAL && errno != EROFS) {
		err = -errno;
		writer_msg(w, "fsync: %s", strerror(-err));
	}
out:
	/* Not committed yet: the file, complete or not, takes its name now
	 * (its complete chunks are readable, as after a kill). */
	if (w->tmp) {
		int err2 = stk_writer__commit(w);

		if (err2 && !err)
			err = err2;	/* the capture stays under w->tmp */
		free(w->tmp);
	} else if (w->named && !err) {
		/* Removed or replaced while it was written: saved beside. */
		struct stat st;
		int err2 = 0;

		if (lstat(w->path, &st) < 0)
			err2 = -ENOENT;
		else if (st.st_dev != w->dev || st.st_ino != w->ino)
			err2 = -ESTALE;
		if (err2 && where && where_size)
			save_copy(w, where, where_size);
		if (err2 && !err)
			err = err2;
	}
	if (close(w->fd) < 0 && !err) {
		err = -errno;
		writer_msg(w, "close: %s", strerror(-err));
	}
	free(w->path);
	ZSTD_freeCCtx(w->cctx);
	sbuf_free(&w->payload);
	free(w->out);
	free(w->held);
	free(w->index);
	free(w);
	return err;
}

void stk_writer__hold(struct stk_writer *w)
{
	if (w)
		w->holding = 1;
}

int stk_writer__release(struct stk_writer *w)
{
	if (!w)
		return -EINVAL;
	w->holding = 0;
	if (w->failed)
		return w->failed;
	return held_write(w);
}

uint64_t stk_writer__dropped(const struct stk_writer *w)
{
	return w ? w->dropped : 0;
}

uint64_t stk_writer__bytes(const struct stk_writer *w)
{
	return w ? w->bytes : 0;
}

const char *stk_writer__errmsg(const struct stk_writer *w)
{
	return w ? w->errmsg : "no writer";
}

void stk_writer__discard(struct stk_writer *w)
{
	if (!w)
		return;
	tmp_remove(w);
	close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	sbuf_free(&w->payload);
	free(w->out);
	free(w->held);
	free(w->index);
	free(w->path);
	free(w);
}
