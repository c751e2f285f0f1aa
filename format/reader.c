// SPDX-License-Identifier: BSD-2-Clause
/*
 * The .stk reader.  It trusts nothing: every frame is checked against the
 * bytes that remain, every header against its CRC32C, every payload against
 * its CRC32C and zstd's content checksum, and every length against the
 * format's limits before anything is allocated.
 *
 * This file walks the chunks (segments, the index, decompression) and
 * opens and closes the reader.  Input comes through a bounded window,
 * never a mapping (reader_input.c); the first bytes are checked for the
 * .stk magic before anything else, so /dev/zero is refused at once.
 *
 * Damage never ends the read early.  After an error the reader resumes at
 * the next frame it can prove valid (reader_check.c), so the chunks after
 * a flipped byte are still returned.  Input that simply stops (a capture
 * killed mid-write) yields every complete chunk and then one -ENODATA
 * naming the byte where it stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "reader_int.h"

_Static_assert(STK_MAX_CHUNK_COMP >= ZSTD_COMPRESSBOUND(STK_MAX_CHUNK_RAW),
	       "STK_MAX_CHUNK_COMP must hold any STK_MAX_CHUNK_RAW payload");

static __thread char open_errmsg[512];

const char *stk_open_errmsg(void)
{
	return open_errmsg;
}

/* ---- segments ---- */

static void seg_reset(struct seg_state *s)
{
	struct stk_index_entry *seen = s->seen;
	size_t cap = s->seen_cap;

	memset(s, 0, sizeof(*s));
	s->seen = seen;
	s->seen_cap = cap;
}

/* Adds a segment; @pos is its file header, or the first chunk found when
 * the header is lost (then @h is NULL). */
static int seg_push(struct stk_reader *r, uint64_t pos, const uint8_t *h)
{
	struct stk_segment_info *info, **tmp;
	uint32_t rel;
	uint32_t cap;

	if (r->nr_segs == r->segs_cap) {
		cap = r->segs_cap ? 2 * r->segs_cap : 4;
		tmp = realloc(r->segs, cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		r->segs = tmp;
		r->segs_cap = cap;
	}
	/* One allocation per segment: stk_reader__segment() pointers stay
	 * valid while more segments are added. */
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	info->offset = pos;
	seg_reset(&r->seg);
	if (h) {
		info->read_version = get_le16(h + FH_READ_VERSION);
		info->write_version = get_le16(h + FH_WRITE_VERSION);
		rel = get_le32(h + FH_WRITER_REL);
		snprintf(info->writer_version, sizeof(info->writer_version), "%u.%u.%u",
			 rel >> 16, (rel >> 8) & 0xff, rel & 0xff);
		memcpy(info->uuid, h + FH_UUID, 16);
		info->wall_start_ns = get_le64(h + FH_WALL_START);
		info->mono_start_ns = get_le64(h + FH_MONO_START);
		r->seg.id = get_le32(h + FH_UUID);
		r->seg.id_known = 1;
		r->seg.offset_known = 1;
	}
	r->segs[r->nr_segs++] = info;
	r->want = WANT_CHUNK;
	return 0;
}

static struct stk_segment_info *seg_info(struct stk_reader *r)
{
	return r->segs[r->nr_segs - 1];
}

static int seen_add(struct stk_reader *r, const struct chunk_hdr *c, uint64_t pos)
{
	struct seg_state *s = &r->seg;
	struct stk_index_entry *e, *tmp;
	size_t cap;

	if (s->nr_seen == s->seen_cap) {
		cap = s->seen_cap ? 2 * s->seen_cap : 64;
		tmp = realloc(s->seen, cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		s->seen = tmp;
		s->seen_cap = cap;
	}
	e = &s->seen[s->nr_seen++];
	memcpy(e->tag, c->tag, 4);
	e->offset = pos - seg_info(r)->offset;
	e->comp_len = c->comp_len;
	e->raw_len = c->raw_len;
	e->seq = c->seq;
	e->t0_ns = c->t0;
	e->t1_ns = c->t1;
	return 0;
}

/* ---- frames ---- */

static int read_file_header(struct stk_reader *r)
{
	const uint8_t *h = NULL;
	uint64_t pos = r->pos;
	const char *why;
	uint32_t rel;
	int err;

	err = check_file_header(r, pos, &why, &h);
	if (err == -ENODATA)
		return reader_fail(r, pos, err, RESUME_CUT, 0, "file header: %s", why);
	if (err == -EPROTONOSUPPORT) {
		rel = get_le32(h + FH_MIN_READER_REL);
		return reader_fail(r, pos + STK_FRAME_PREFIX + FH_READ_VERSION, err, RESUME_STOP, 0,
				   "needs stkreport >= %u.%u.%u (file read version %u, this reader reads up to %u)",
				   rel >> 16, (rel >> 8) & 0xff, rel & 0xff,
				   get_le16(h + FH_READ_VERSION), STK_FORMAT_MAX_READ);
	}
	if (err)
		return reader_fail(r, pos, err, RESUME_SCAN, 0, "file header: %s", why);
	err = seg_push(r, pos, h);
	if (err)
		return reader_fail(r, pos, err, RESUME_STOP, 0, "out of memory");
	r->pos += STK_FRAME_PREFIX + get_le32(h - 4);
	r->covered += STK_FRAME_PREFIX + get_le32(h - 4);
	r->resynced = 0;
	return 0;
}

static int read_trailer(struct stk_reader *r)
{
	uint64_t pos = r->pos, end = pos + STK_FRAME_PREFIX + STK_TRAILER_LEN;
	struct seg_state *s = &r->seg;
	const uint8_t *t = NULL;
	const char *why;
	int err;

	err = check_trailer(r, pos, &why, &t);
	if (err)
		return reader_fail(r, pos, err, err == -ENODATA ? RESUME_CUT : RESUME_SCAN, 0,
				   "trailer: %s", why);
	if (r->want == WANT_HEADER)
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, end,
				   "trailer follows the end of a segment");
	r->want = WANT_HEADER;
	/* Bytes inserted or removed by damage (reported already) shift the
	 * offsets; only a clean segment must match them. */
	if (s->offset_known && !s->errors && get_le64(t + TR_SEG_LEN) != end - seg_info(r)->offset)
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, end,
				   "trailer gives segment length %llu, the segment has %llu bytes",
				   (unsigned long long)get_le64(t + TR_SEG_LEN),
				   (unsigned long long)(end - seg_info(r)->offset));
	if (!s->have_index) {
		/* A lost index was reported already; otherwise it is missing. */
		if (!s->errors)
			return reader_fail(r, pos, -EBADMSG, RESUME_AT, end,
					   "trailer without an index chunk");
	} else if ((s->offset_known && !s->errors && get_le64(t + TR_INDEX_OFF) != s->index_off) ||
		   get_le32(t + TR_CHUNK_COUNT) != s->index_n) {
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, end,
				   "trailer does not match the index chunk");
	}
	seg_info(r)->closed = 1;
	r->pos = end;
	r->covered += end - pos;
	r->resynced = 0;
	return 0;
}

/* Checks INDX entries against the chunks read in this segment. */
static int check_index(struct stk_reader *r, const struct chunk_hdr *c,
		       const struct stk_index_entry *e, size_t n, const char **why)
{
	struct seg_state *s = &r->seg;
	size_t i;

	for (i = 0; i < n; i++) {
		if (e[i].seq != i) {
			*why = "index entries out of order";
			return -EBADMSG;
		}
	}
	/* Chunks lost to damage are missing from what we read; only a clean
	 * segment must match the index one for one. */
	if (!s->errors && (c->seq != n || s->nr_seen != n)) {
		*why = "index does not list the chunks of its segment";
		return -EBADMSG;
	}
	for (i = 0; i < s->nr_seen; i++) {
		const struct stk_index_entry *a = &s->seen[i], *b;

		if (a->seq >= n) {
			*why = "a chunk read is missing from the index";
			return -EBADMSG;
		}
		b = &e[a->seq];
		if (memcmp(a->tag, b->tag, 4) || a->comp_len != b->comp_len ||
		    a->raw_len != b->raw_len || a->t0_ns != b->t0_ns || a->t1_ns != b->t1_ns ||
		    (s->offset_known && !s->errors && a->offset != b->offset)) {
			*why = "index entry does not match its chunk";
			return -EBADMSG;
		}
	}
	return 0;
}

static int decompress(struct stk_reader *r, const struct chunk_hdr *c, const uint8_t *src,
		      const char **why)
{
	unsigned long long csize;
	uint8_t *tmp;
	size_t n;

	/* RFC 8878: magic, then the frame header descriptor, whose bit 2 is
	 * the content checksum flag. */
	if (c->comp_len < 5 || get_le32(src) != ZSTD_MAGICNUMBER) {
		*why = "payload is not a zstd frame";
		return -EBADMSG;
	}
	if (!(src[4] & 0x04)) {
		*why = "zstd frame without a content checksum";
		return -EBADMSG;
	}
	csize = ZSTD_getFrameContentSize(src, c->comp_len);
	if (csize == ZSTD_CONTENTSIZE_ERROR || csize == ZSTD_CONTENTSIZE_UNKNOWN) {
		*why = "zstd frame header without a content size";
		return -EBADMSG;
	}
	if (csize != c->raw_len) {
		*why = "zstd content size differs from the header's raw size";
		return -EBADMSG;
	}
	n = ZSTD_findFrameCompressedSize(src, c->comp_len);
	if (ZSTD_isError(n) || n != c->comp_len) {
		*why = "payload is not exactly one zstd frame";
		return -EBADMSG;
	}
	if (c->raw_len > r->raw_cap) {
		/* raw_len is bounded by STK_MAX_CHUNK_RAW, checked by the caller. */
		tmp = realloc(r->raw, c->raw_len);
		if (!tmp) {
			*why = "out of memory";
			return -ENOMEM;
		}
		r->raw = tmp;
		r->raw_cap = c->raw_len;
	}
	n = ZSTD_decompressDCtx(r->dctx, r->raw, c->raw_len, src, c->comp_len);
	if (ZSTD_isError(n) || n != c->raw_len) {
		*why = ZSTD_isError(n) ? ZSTD_getErrorName(n) : "zstd: short output";
		return -EBADMSG;
	}
	return 0;
}

static int read_chunk(struct stk_reader *r, struct stk_chunk *ch)
{
	struct stk_index_entry *index = NULL;
	struct seg_state *s = &r->seg;
	struct cursor cur = { 0 };
	uint64_t pos = r->pos, end, limit;
	const uint8_t *payload;
	struct chunk_hdr c;
	ssize_t n;
	size_t nr_index = 0;
	const char *why;
	char after[64];
	int err;

	err = check_chunk_header(r, pos, &c, &why);
	if (err) {
		after_last(r, after, sizeof(after));
		return reader_fail(r, pos, err, err == -ENODATA ? RESUME_CUT : RESUME_SCAN, 0,
				   "chunk header %s: %s", after, why);
	}
	/* No zstd frame of at most STK_MAX_CHUNK_RAW bytes is this long:
	 * refused before reading it. */
	if (c.comp_len > STK_MAX_CHUNK_COMP)
		return reader_fail(r, pos, -EFBIG, RESUME_SCAN, 0,
				   "chunk %u (%s): compressed size %u over the limit of %u bytes",
				   c.seq, c.tag, c.comp_len, STK_MAX_CHUNK_COMP);
	n = in_peek(r, c.payload, c.comp_len, &payload);
	if (n >= 0 && (size_t)n < c.comp_len)
		n = -ENODATA;
	if (n < 0)
		return reader_fail(r, pos, n, RESUME_CUT, 0, "chunk %u (%s): payload cut short",
				   c.seq, c.tag);
	end = c.payload + c.comp_len;

	/* Where does this chunk belong?  Errors here leave the chunk itself
	 * valid, so reading resumes at it with the checks relaxed. */
	if (r->want == WANT_HEADER && !r->resynced) {
		r->want = WANT_CHUNK;
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, pos,
				   "chunk %u (%s) after the trailer: its segment header is missing",
				   c.seq, c.tag);
	}
	if (r->want == WANT_TRAILER && !r->resynced) {
		r->want = WANT_CHUNK;
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, pos,
				   "chunk %u (%s) after the index chunk", c.seq, c.tag);
	}
	if (c.segid != s->id || !s->id_known) {
		if (!r->resynced)
			return reader_fail(r, pos, -EBADMSG, RESUME_AT, pos,
					   "chunk %u (%s) belongs to another segment (id %08x, not %08x)",
					   c.seq, c.tag, c.segid, s->id);
		if (s->id_known || s->nr_chunks) {
			/* Chunks of a segment whose header was lost: a
			 * segment of their own, since stack ids are per
			 * segment. */
			err = seg_push(r, pos, NULL);
			if (err)
				return reader_fail(r, pos, err, RESUME_STOP, 0, "out of memory");
		}
		s->id = c.segid;
		s->id_known = 1;
		put_le32(seg_info(r)->uuid, c.segid);
	}
	if (c.seq != s->next_seq && !r->resynced)
		return reader_fail(r, pos, -EBADMSG, RESUME_AT, pos,
				   "chunk %u (%s) where chunk %u was expected", c.seq, c.tag,
				   s->next_seq);
	r->resynced = 0;
	r->want = WANT_CHUNK;
	s->next_seq = c.seq + 1;

	if (c.raw_len > STK_MAX_CHUNK_RAW)
		return reader_fail(r, pos, -EFBIG, RESUME_AT, end,
				   "chunk %u (%s): raw size %u over the limit of %u bytes", c.seq,
				   c.tag, c.raw_len, STK_MAX_CHUNK_RAW);
	/* Relative to the input (a stream: what has arrived, this chunk
	 * included), so a small crafted file cannot make us decompress and
	 * decode hundreds of MiB per chunk. */
	limit = STK_CHUNK_RAW_BASE + STK_CHUNK_RAW_PER_BYTE * r->size;
	if (c.raw_len > limit)
		return reader_fail(r, pos, -EFBIG, RESUME_AT, end,
				   "chunk %u (%s): raw size %u over this input's limit of %llu bytes (64 MiB + 256 x the input size)",
				   c.seq, c.tag, c.raw_len, (unsigned long long)limit);
	/* A payload that fails its CRC says nothing about its length either:
	 * a capture cut inside a chunk and followed by another (cat) has a
	 * comp_len that runs over the next capture's frames.  Scan from the
	 * byte after this header's start, not from its declared end. */
	if (stk_crc32c(0, payload, c.comp_len) != c.payload_crc)
		return reader_fail(r, pos, -EBADMSG, RESUME_SCAN, 0,
				   "chunk %u (%s): payload CRC mismatch", c.seq, c.tag);

	memset(ch, 0, sizeof(*ch));
	ch->type = stk_tag_type(c.tag);
	if (ch->type == STK_CHUNK_UNKNOWN && c.tag[0] >= 'A' && c.tag[0] <= 'Z')
		return reader_fail(r, pos, -ENOTSUP, RESUME_STOP, 0,
				   "chunk %u: unknown critical chunk '%s' (written by a newer stkrec; needs a newer stkreport)",
				   c.seq, c.tag);
	if (ch->type != STK_CHUNK_INDX) {
		err = seen_add(r, &c, pos);
		if (err)
			return reader_fail(r, pos, err, RESUME_STOP, 0, "out of memory");
	}
	err = decompress(r, &c, payload, &why);
	if (err)
		return reader_fail(r, pos, err, err == -ENOMEM ? RESUME_STOP : RESUME_AT, end,
				   "chunk %u (%s): %s", c.seq, c.tag, why);

	r->arena.budget = STK_DECODED_BASE + STK_DECODED_PER_BYTE * r->size;
	if (r->arena.budget > STK_MAX_DECODED || r->arena.budget < STK_DECODED_BASE)
		r->arena.budget = STK_MAX_DECODED;
	cur.start = cur.p = cur.field = r->raw;
	cur.end = r->raw + c.raw_len;
	cur.arena = &r->arena;
	err = stk_decode_payload(&cur, ch, &index, &nr_index);
	if (err)
		return reader_fail(r, pos, err, err == -ENOMEM ? RESUME_STOP : RESUME_AT, end,
				   "chunk %u (%s): byte %zu of the payload: %s", c.seq, c.tag,
				   (size_t)(cur.bad - cur.start), cur.why);
	if (ch->type == STK_CHUNK_INDX) {
		err = check_index(r, &c, index, nr_index, &why);
		if (err)
			return reader_fail(r, pos, err, RESUME_AT, end, "chunk %u (INDX): %s",
					   c.seq, why);
		s->have_index = 1;
		s->index_off = pos - seg_info(r)->offset;
		s->index_n = nr_index;
		r->want = WANT_TRAILER;
	}

	memcpy(ch->tag, c.tag, 5);
	ch->segment = r->nr_segs - 1;
	ch->seq = c.seq;
	ch->offset = pos;
	ch->comp_size = c.comp_len;
	ch->raw_size = c.raw_len;
	ch->t0_ns = c.t0;
	ch->t1_ns = c.t1;

	r->pos = end;
	r->covered += end - pos;
	r->chunks++;
	s->nr_chunks++;
	r->have_last = 1;
	r->last_seq = c.seq;
	memcpy(r->last_tag, c.tag, 5);
	return 1;
}

int stk_reader__next(struct stk_reader *r, struct stk_chunk *chunk)
{
	int err;

	if (!r || !chunk)
		return -EINVAL;
	arena_reset(&r->arena);
	if (r->pending) {
		err = r->pending;
		r->pending = 0;
		return err;
	}
	for (;;) {
		const uint8_t *p;
		ssize_t n;

		if (r->done)
			return 0;
		r->keep = r->pos;
		n = in_peek(r, r->pos, 4, &p);
		if (n == 0) {
			/* The end at a frame boundary: not an error, but a
			 * segment without its trailer is not closed. */
			r->done = 1;
			return 0;
		}
		if (n < 0)
			return reader_fail(r, r->pos, n, RESUME_STOP, 0, "read error");
		if (n < 4)
			return reader_fail(r, r->pos, -ENODATA, RESUME_CUT, 0, "frame magic cut short");
		switch (get_le32(p)) {
		case STK_MAGIC_FILE:
			err = read_file_header(r);
			if (err)
				return err;
			break;
		case STK_MAGIC_CHUNK:
			return read_chunk(r, chunk);
		case STK_MAGIC_TRAILER:
			err = read_trailer(r);
			if (err)
				return err;
			break;
		default:
			return reader_fail(r, r->pos, -EBADMSG, RESUME_SCAN, 0,
					   "no .stk frame here (magic 0x%08x)", get_le32(p));
		}
	}
}

/* ---- open / close ---- */

static void open_msg(const char *name, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* @at: the byte the problem is at, or OPEN_OS_ERROR for what is about the
 * file, not a byte of it: a failed system call (open, read, mmap...), an
 * empty file. */
#define OPEN_OS_ERROR UINT64_MAX

static void open_msg(const char *name, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (at == OPEN_OS_ERROR)
		n = snprintf(open_errmsg, sizeof(open_errmsg), "%s: ", name);
	else
		n = snprintf(open_errmsg, sizeof(open_errmsg), "%s: byte %llu: ", name,
			     (unsigned long long)at);
	if (n < 0 || (size_t)n >= sizeof(open_errmsg))
		return;
	va_start(ap, fmt);
	vsnprintf(open_errmsg + n, sizeof(open_errmsg) - n, fmt, ap);
	va_end(ap);
}

static struct stk_reader *reader_new(void)
{
	struct stk_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	r->arena.budget = STK_MAX_DECODED;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		free(r);
		return NULL;
	}
	return r;
}

/* Checks the first file header; fails only when this is not a readable
 * .stk file at all.  A damaged first header is reported by next(). */
static int reader_start(struct stk_reader *r, const char *name)
{
	static const uint8_t magic[4] = { 0x5A, 0x2A, 0x4D, 0x18 };
	const uint8_t *h = NULL, *p;
	const char *why;
	uint32_t rel;
	ssize_t n;
	int err;

	/* The magic and signature first: only a file that starts as a
	 * capture is read any further (a stream is not buffered first). */
	n = in_peek(r, 0, STK_FRAME_PREFIX + STK_SIGNATURE_LEN, &p);
	if (n < 0) {
		snprintf(open_errmsg, sizeof(open_errmsg), "%s: %s", name, r->io_msg);
		return n;
	}
	if (n == 0) {
		open_msg(name, OPEN_OS_ERROR, "empty file");
		return -ENODATA;
	}
	if (memcmp(p, magic, n < 4 ? n : 4)) {
		open_msg(name, 0, "not an .stk file (no .stk file header)");
		return -EBADMSG;
	}
	if (n > STK_FRAME_PREFIX && memcmp(p + STK_FRAME_PREFIX, STK_SIGNATURE, n - STK_FRAME_PREFIX)) {
		open_msg(name, STK_FRAME_PREFIX, "not an .stk file (bad signature)");
		return -EBADMSG;
	}
	err = check_file_header(r, 0, &why, &h);
	if (r->io_err) {
		snprintf(open_errmsg, sizeof(open_errmsg), "%s: %s", name, r->io_msg);
		return r->io_err;
	}
	if (err == -ENODATA) {
		open_msg(name, 0, "truncated inside the file header (%llu bytes)",
			 (unsigned long long)r->size);
		return err;
	}
	if (err == -EPROTONOSUPPORT) {
		rel = get_le32(h + FH_MIN_READER_REL);
		open_msg(name, STK_FRAME_PREFIX + FH_READ_VERSION,
			 "needs stkreport >= %u.%u.%u (file read version %u, this reader reads up to %u)",
			 rel >> 16, (rel >> 8) & 0xff, rel & 0xff, get_le16(h + FH_READ_VERSION),
			 STK_FORMAT_MAX_READ);
		return err;
	}
	if (err) {
		/* Keep the chunks: an unnamed segment, filled in from the first
		 * valid chunk found after the damage. */
		err = seg_push(r, 0, NULL);
		if (err) {
			open_msg(name, OPEN_OS_ERROR, "out of memory");
			return err;
		}
		r->pending = reader_fail(r, 0, -EBADMSG, RESUME_SCAN, 0, "file header: %s", why);
		return 0;
	}
	err = seg_push(r, 0, h);
	if (err) {
		open_msg(name, OPEN_OS_ERROR, "out of memory");
		return err;
	}
	r->pos = STK_FRAME_PREFIX + get_le32(h - 4);
	r->covered = r->pos;
	return 0;
}

struct stk_reader *stk_reader__open_mem(const void *buf, size_t size)
{
	struct stk_reader *r;
	int err;

	if (!buf && size) {
		errno = EINVAL;
		return NULL;
	}
	r = reader_new();
	if (!r) {
		open_msg("(memory)", OPEN_OS_ERROR, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	r->mem = size ? buf : (const uint8_t *)"";
	r->size = size;
	r->eof = 1;
	err = reader_start(r, "(memory)");
	if (err) {
		stk_reader__close(r);
		errno = -err;
		return NULL;
	}
	return r;
}

struct stk_reader *stk_reader__open(const char *path)
{
	struct stk_reader *r = NULL;
	struct stat st;
	int fd = -1;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if (strcmp(path, "-") == 0)
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	else
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		open_msg(path, OPEN_OS_ERROR, "%s", strerror(-err));
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		open_msg(path, OPEN_OS_ERROR, "%s", strerror(-err));
		goto fail;
	}
	r = reader_new();
	if (!r) {
		err = -ENOMEM;
		open_msg(path, OPEN_OS_ERROR, "out of memory");
		goto fail;
	}
	/* A regular file is read by pread() below the size it has now; any
	 * other input (pipe, device, socket) in order as it arrives. */
	r->fd = fd;
	fd = -1;
	r->seekable = S_ISREG(st.st_mode);
	r->size = r->seekable ? (uint64_t)st.st_size : 0;
	r->eof = r->seekable;
	err = reader_start(r, path);
	if (err)
		goto fail;
	return r;
fail:
	if (fd >= 0)
		close(fd);
	stk_reader__close(r);
	errno = -err;
	return NULL;
}

void stk_reader__close(struct stk_reader *r)
{
	uint32_t i;

	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->win);
	for (i = 0; i < r->nr_segs; i++)
		free(r->segs[i]);
	free(r->segs);
	free(r->seg.seen);
	ZSTD_freeDCtx(r->dctx);
	free(r->raw);
	arena_free(&r->arena);
	free(r);
}

const char *stk_reader__errmsg(const struct stk_reader *r)
{
	return r ? r->errmsg : "no reader";
}

uint64_t stk_reader__size(const struct stk_reader *r)
{
	return r ? r->size : 0;
}

uint32_t stk_reader__segment_count(const struct stk_reader *r)
{
	return r ? r->nr_segs : 0;
}

const struct stk_segment_info *stk_reader__segment(const struct stk_reader *r, uint32_t i)
{
	if (!r || i >= r->nr_segs)
		return NULL;
	return r->segs[i];
}

void stk_reader__summary(const struct stk_reader *r, struct stk_read_summary *s)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	if (!r)
		return;
	s->file_size = r->size;
	s->chunks = r->chunks;
	s->errors = r->errors;
	s->bytes_skipped = r->size - r->covered;
	s->truncated = r->truncated;
	s->closed = r->nr_segs > 0;
	for (i = 0; i < r->nr_segs; i++)
		if (!r->segs[i]->closed)
			s->closed = 0;
}
