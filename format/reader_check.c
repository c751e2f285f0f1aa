// SPDX-License-Identifier: BSD-2-Clause
/*
 * reader_check.c - the reader's frame checks (each header against the
 * bytes that remain, its CRC32C and the format's limits) and what it does
 * after an error: resume at the next frame it can prove valid (a header
 * whose CRC matches), so the chunks after a flipped byte are still
 * returned, or, where the input simply stops, say where.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reader_int.h"

static void reader_msg(struct stk_reader *r, uint64_t at, const char *fmt, va_list ap)
{
	int n = snprintf(r->errmsg, sizeof(r->errmsg), "byte %llu: ", (unsigned long long)at);

	vsnprintf(r->errmsg + n, sizeof(r->errmsg) - n, fmt, ap);
}

static void tag_copy(char out[5], const uint8_t *tag)
{
	int i;

	/* Tags come from the file: keep the message printable whatever they are. */
	for (i = 0; i < 4; i++)
		out[i] = tag[i] >= 0x20 && tag[i] < 0x7f ? tag[i] : '?';
	out[4] = '\0';
}

static int tag_valid(const uint8_t *tag)
{
	int i;

	for (i = 0; i < 4; i++) {
		uint8_t ch = tag[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (i > 0 && ch >= '0' && ch <= '9')))
			return 0;
	}
	return 1;
}

/* ---- frame checks: 0 valid, -ENODATA runs past the end, else damage ---- */

/* Common part: the frame at @pos fits and its data ends with a valid CRC.
 * *@data points at the frame's data until the next in_peek(). */
static int check_frame(struct stk_reader *r, uint64_t pos, uint32_t min, uint32_t max,
		       const char **why, const uint8_t **data)
{
	const uint8_t *p;
	uint32_t fsize;
	ssize_t n;

	n = in_peek(r, pos, STK_FRAME_PREFIX, &p);
	if (n < 0) {
		*why = "read error";
		return n;
	}
	if (n < STK_FRAME_PREFIX) {
		*why = "frame header cut short";
		return -ENODATA;
	}
	fsize = get_le32(p + 4);
	if (fsize < min || fsize > max) {
		*why = "bad frame size";
		return -EBADMSG;
	}
	n = in_peek(r, pos, STK_FRAME_PREFIX + fsize, &p);
	if (n < 0) {
		*why = "read error";
		return n;
	}
	if (n < STK_FRAME_PREFIX + fsize) {
		*why = "frame cut short";
		return -ENODATA;
	}
	p += STK_FRAME_PREFIX;
	*data = p;
	if (get_le32(p + fsize - 4) != stk_crc32c(0, p, fsize - 4)) {
		*why = "CRC mismatch";
		return -EBADMSG;
	}
	return 0;
}

/* *@hp: the header data, as check_frame()'s @data (also for -EPROTONOSUPPORT). */
int check_file_header(struct stk_reader *r, uint64_t pos, const char **why,
		      const uint8_t **hp)
{
	const uint8_t *h;
	int err;

	err = check_frame(r, pos, STK_FILE_HDR_LEN, STK_MAX_HDR_LEN, why, &h);
	if (err)
		return err;
	*hp = h;
	if (memcmp(h + FH_SIGNATURE, STK_SIGNATURE, STK_SIGNATURE_LEN)) {
		*why = "bad signature";
		return -EBADMSG;
	}
	if (get_le16(h + FH_HEADER_LEN) != get_le32(h - 4)) {
		*why = "header length does not match its frame";
		return -EBADMSG;
	}
	if (get_le16(h + FH_READ_VERSION) == 0) {
		*why = "read version 0";
		return -EBADMSG;
	}
	if (get_le16(h + FH_READ_VERSION) > STK_FORMAT_MAX_READ) {
		*why = "needs a newer reader";
		return -EPROTONOSUPPORT;
	}
	if (get_le16(h + FH_FLAGS)) {
		*why = "unknown file header flags";
		return -EBADMSG;
	}
	return 0;
}

int check_chunk_header(struct stk_reader *r, uint64_t pos, struct chunk_hdr *c,
		       const char **why)
{
	const uint8_t *h;
	int err;

	err = check_frame(r, pos, STK_CHUNK_HDR_LEN, STK_MAX_HDR_LEN, why, &h);
	if (err)
		return err;
	c->hdr_len = get_le32(h - 4);
	tag_copy(c->tag, h + CH_TAG);
	c->seq = get_le32(h + CH_SEQ);
	c->segid = get_le32(h + CH_SEGMENT_ID);
	c->t0 = get_le64(h + CH_T0);
	c->t1 = get_le64(h + CH_T1);
	c->comp_len = get_le32(h + CH_COMP_LEN);
	c->raw_len = get_le32(h + CH_RAW_LEN);
	c->payload_crc = get_le32(h + CH_PAYLOAD_CRC);
	c->payload = pos + STK_FRAME_PREFIX + c->hdr_len;
	if (get_le16(h + CH_HEADER_LEN) != c->hdr_len) {
		*why = "header length does not match its frame";
		return -EBADMSG;
	}
	if (get_le16(h + CH_FLAGS)) {
		*why = "unknown chunk flags";
		return -EBADMSG;
	}
	if (!tag_valid(h + CH_TAG)) {
		*why = "tag is not 4 letters or digits";
		return -EBADMSG;
	}
	if (c->t1 < c->t0) {
		*why = "interval ends before it starts";
		return -EBADMSG;
	}
	return 0;
}

int check_trailer(struct stk_reader *r, uint64_t pos, const char **why,
		  const uint8_t **tp)
{
	const uint8_t *t;
	int err;

	err = check_frame(r, pos, STK_TRAILER_LEN, STK_TRAILER_LEN, why, &t);
	if (err)
		return err;
	*tp = t;
	if (memcmp(t + TR_MARK, STK_END_MARK, 8)) {
		*why = "bad end mark";
		return -EBADMSG;
	}
	return 0;
}

/*
 * Finds the first offset >= @from where a frame starts that can be proved
 * valid: a file header, chunk header or trailer whose CRC matches.  A chunk
 * whose payload is cut still counts: it is the real next frame.  Returns
 * r->size when there is none.
 */
static uint64_t find_frame(struct stk_reader *r, uint64_t from)
{
	/* bytes 1..3 of the little-endian magics 0x184D2A5A..5C */
	static const uint8_t tail[3] = { 0x2A, 0x4D, 0x18 };
	uint64_t pos = from + 1, at;	/* frames start at >= pos */
	const uint8_t *p, *q, *h;
	struct chunk_hdr c;
	const char *why;
	size_t len;
	ssize_t n;
	int err;

	for (;;) {
		/* A stream keeps only what the scan has not passed yet. */
		if (pos > r->keep)
			r->keep = pos;
		/* The rest of the window while it is long enough: checking a
		 * candidate must not cost a new window each time. */
		len = WINDOW;
		if (!r->mem && pos >= r->win_off && r->win_off + r->win_len - pos >= 4096)
			len = r->win_off + r->win_len - pos;
		n = in_peek(r, pos, len, &p);
		if (n < 4)
			return n < 0 ? r->pos : r->size;
		q = memmem(p + 1, n - 1, tail, sizeof(tail));
		if (!q) {
			pos += n - 3;	/* a tail may start in the last 2 bytes */
			continue;
		}
		at = pos + (q - 1 - p);
		err = -EBADMSG;
		switch (q[-1]) {
		case 0x5A:
			err = check_file_header(r, at, &why, &h);
			if (err == -EPROTONOSUPPORT)
				err = 0;
			break;
		case 0x5B:
			err = check_chunk_header(r, at, &c, &why);
			break;
		case 0x5C:
			err = check_trailer(r, at, &why, &h);
			break;
		}
		if (err == 0)
			return at;
		if (r->io_err)
			return r->pos;
		pos = at + 1;
	}
}

void after_last(const struct stk_reader *r, char *buf, size_t size)
{
	if (r->have_last)
		snprintf(buf, size, "after chunk %u (%s)", r->last_seq, r->last_tag);
	else
		snprintf(buf, size, "(no chunk read yet)");
}

/*
 * reader_fail() - record an error at byte @at and decide where reading goes
 * on (@how; @resume_pos for RESUME_AT).  Returns the errno for next().
 */
int reader_fail(struct stk_reader *r, uint64_t at, int err, enum resume how,
		uint64_t resume_pos, const char *fmt, ...)
{
	char after[64];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	reader_msg(r, at, fmt, ap);
	va_end(ap);
	r->errors++;
	r->seg.errors++;
	if (r->io_err)
		goto io_error;

	switch (how) {
	case RESUME_AT:
		r->pos = resume_pos;
		r->resynced = 1;
		break;
	case RESUME_STOP:
		r->done = 1;
		break;
	case RESUME_SCAN:
	case RESUME_CUT:
		r->pos = find_frame(r, at);
		r->resynced = 1;
		if (r->io_err)
			goto io_error;
		if (how == RESUME_SCAN || r->pos < r->size) {
			/* A cut frame followed by valid ones is damage, not
			 * the end of the input. */
			if (how == RESUME_CUT) {
				err = -EBADMSG;
				n = strlen(r->errmsg);
				snprintf(r->errmsg + n, sizeof(r->errmsg) - n,
					 " (overlaps the frame at byte %llu)",
					 (unsigned long long)r->pos);
			}
			break;
		}
		after_last(r, after, sizeof(after));
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "byte %llu: truncated at byte %llu %s; %llu chunks recovered",
			 (unsigned long long)at, (unsigned long long)r->size, after,
			 (unsigned long long)r->chunks);
		r->truncated = 1;
		r->done = 1;
		err = -ENODATA;
		break;
	}
	return err;

io_error:
	/* The input itself failed (or a file shrank): nothing after this can
	 * be trusted to be what the file held. */
	snprintf(r->errmsg, sizeof(r->errmsg), "%s", r->io_msg);
	r->done = 1;
	return r->io_err;
}
