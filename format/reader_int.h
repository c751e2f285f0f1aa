// SPDX-License-Identifier: BSD-2-Clause
/*
 * reader_int.h - what the reader's three files share: the reader's state,
 * the input window (reader_input.c), the frame checks and the recovery
 * after damage (reader_check.c), for the walk over the chunks (reader.c).
 * Internal to libstk; the public API is stk.h.
 */
#ifndef STK_READER_INT_H
#define STK_READER_INT_H

#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#include "stk_int.h"


/* Bytes read at a time from a file, and scanned at a time for a frame. */
#define WINDOW (1u << 20)

enum want {
	WANT_CHUNK,	/* inside a segment: a chunk, a new segment, or the end */
	WANT_TRAILER,	/* after the index: the trailer */
	WANT_HEADER,	/* after a trailer: a file header or the end */
};

/* How reader_fail() goes on after an error. */
enum resume {
	RESUME_SCAN,	/* look for the next valid frame after the error */
	RESUME_AT,	/* continue at a known position (the frame was valid) */
	RESUME_CUT,	/* the frame runs past the end: scan, else truncated */
	RESUME_STOP,	/* cannot go on (unsupported): end after this */
};

/* Verification state of the segment being read. */
struct seg_state {
	uint32_t id;			/* segment id in its chunk headers */
	int id_known;			/* 0 when the file header was damaged */
	int offset_known;		/* 0 for a segment found without its header */
	uint32_t next_seq;
	uint64_t errors;		/* errors while in this segment */
	uint64_t nr_chunks;		/* chunks read in this segment */
	int have_index;
	uint64_t index_off;		/* of INDX, from the segment start */
	uint32_t index_n;
	struct stk_index_entry *seen;	/* chunks read, to check the index */
	size_t nr_seen, seen_cap;
};

struct stk_reader {
	/* Input: a caller's buffer, a regular file read with pread(), or a
	 * stream (pipe, device) read in order. */
	const uint8_t *mem;		/* stk_reader__open_mem() buffer, or NULL */
	int fd;				/* file or stream, else -1 */
	int seekable;			/* regular file: pread() anywhere below size */
	uint64_t size;			/* input size; a stream: bytes read so far */
	int eof;			/* a stream's size is final */
	uint8_t *win;			/* bytes [win_off, win_off + win_len) */
	size_t win_len, win_cap;
	uint64_t win_off;
	uint64_t keep;			/* a stream: bytes from here on may still be needed */
	int io_err;			/* sticky input error (-EIO, read() errno) */
	char io_msg[160];

	uint64_t pos;			/* next frame to read */
	enum want want;
	int done;			/* next() returns 0 from now on */
	int resynced;			/* the last step skipped damage */
	int pending;			/* error found by open, returned by next() */

	struct stk_segment_info **segs;
	uint32_t nr_segs, segs_cap;
	struct seg_state seg;

	/* last chunk returned, for "after chunk N (TAG)" */
	int have_last;
	uint32_t last_seq;
	char last_tag[5];

	ZSTD_DCtx *dctx;
	uint8_t *raw;
	size_t raw_cap;
	struct arena arena;

	uint64_t chunks, errors, covered;
	int truncated;
	char errmsg[320];
};

struct chunk_hdr {
	uint32_t hdr_len;		/* frame data bytes */
	char tag[5];
	uint32_t seq, segid, comp_len, raw_len, payload_crc;
	uint64_t t0, t1;
	uint64_t payload;		/* offset of the zstd frame */
};

/* reader_input.c */
ssize_t in_peek(struct stk_reader *r, uint64_t pos, size_t len, const uint8_t **p);

/* reader_check.c: 0 valid, -ENODATA runs past the end, else damage */
int check_file_header(struct stk_reader *r, uint64_t pos, const char **why, const uint8_t **hp);
int check_chunk_header(struct stk_reader *r, uint64_t pos, struct chunk_hdr *c, const char **why);
int check_trailer(struct stk_reader *r, uint64_t pos, const char **why, const uint8_t **tp);
void after_last(const struct stk_reader *r, char *buf, size_t size);
int reader_fail(struct stk_reader *r, uint64_t at, int err, enum resume how,
		uint64_t resume_pos, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#endif
