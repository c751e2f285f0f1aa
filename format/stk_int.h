/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stk_int.h - libstk internals shared by writer.c, reader.c and payload.c.
 * Not installed, not part of the API; the fuzz target uses it to reach the
 * payload decoders directly.  Every constant here is specified in SPEC.md.
 */
#ifndef STK_INT_H
#define STK_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stk.h"

/* zstd skippable frame magics used by the format (SPEC.md "Frames"). */
#define STK_MAGIC_FILE	  0x184D2A5Au
#define STK_MAGIC_CHUNK	  0x184D2A5Bu
#define STK_MAGIC_TRAILER 0x184D2A5Cu

#define STK_SIGNATURE	  "\x89STK\r\n\x1a\n"
#define STK_SIGNATURE_LEN 8
#define STK_END_MARK	  "STKEND\0\0"

/* Skippable frame prefix: u32 magic, u32 frame size. */
#define STK_FRAME_PREFIX 8

/* Sizes of the header data this version writes (the frame size is 8 more). */
#define STK_FILE_HDR_LEN  60
#define STK_CHUNK_HDR_LEN 48
#define STK_TRAILER_LEN	  32

/* Largest header data a reader accepts: headers may grow, but a frame size
 * beyond this is damage, not a newer header. */
#define STK_MAX_HDR_LEN 1024

/* Offsets inside file header data; the first 24 bytes never move. */
#define FH_SIGNATURE	  0
#define FH_READ_VERSION	  8
#define FH_WRITE_VERSION  10
#define FH_HEADER_LEN	  12
#define FH_FLAGS	  14
#define FH_WRITER_REL	  16
#define FH_MIN_READER_REL 20
#define FH_UUID		  24
#define FH_WALL_START	  40
#define FH_MONO_START	  48

/* Offsets inside chunk header data. */
#define CH_TAG	       0
#define CH_HEADER_LEN  4
#define CH_FLAGS       6
#define CH_SEQ	       8
#define CH_SEGMENT_ID  12
#define CH_T0	       16
#define CH_T1	       24
#define CH_COMP_LEN    32
#define CH_RAW_LEN     36
#define CH_PAYLOAD_CRC 40

/* Offsets inside trailer data. */
#define TR_MARK	       0
#define TR_INDEX_OFF   8
#define TR_SEG_LEN     16
#define TR_CHUNK_COUNT 24
#define TR_CRC	       28

#define STK_RELEASE(maj, min, pat) (((uint32_t)(maj) << 16) | ((uint32_t)(min) << 8) | (pat))
#define STK_RELEASE_CURRENT STK_RELEASE(STK_VERSION_MAJOR, STK_VERSION_MINOR, STK_VERSION_PATCH)
/* The oldest stkreport release that reads STK_FORMAT_READ_VERSION files. */
#define STK_MIN_READER_RELEASE STK_RELEASE(0, 1, 0)

/* ---- little-endian fixed-width fields ---- */

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return p[0] | (uint16_t)p[1] << 8;
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* ---- varints ---- */

#define STK_VARINT_MAX 10

static inline uint64_t zigzag_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t zigzag_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Encodes @v into @out (>= STK_VARINT_MAX bytes); returns the bytes used. */
size_t stk_varint_encode(uint8_t *out, uint64_t v);

/* stk_varint_encode() inline, for encoders that write many fields into
 * room they reserved at once (sbuf_room()): returns the byte after @v's. */
static inline uint8_t *stk_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Decodes a varint from [@p, @end).  Returns the bytes consumed, or 0 when
 * the input ends inside it, it is longer than 10 bytes, or its value does
 * not fit in 64 bits.
 */
size_t stk_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *v);

/* ---- encode buffer (writer side) ---- */

/* A growable byte buffer with a sticky error: -ENOMEM, or -EFBIG when it
 * would exceed @limit, or -EINVAL (set by encoders for bad arguments). */
struct sbuf {
	uint8_t *data;
	size_t len, cap, limit;
	int err;
	const char *why;	/* for -EINVAL: what was wrong */
};

void sbuf_reserve(struct sbuf *b, size_t n);
void sbuf_put(struct sbuf *b, const void *p, size_t n);
void sbuf_varint(struct sbuf *b, uint64_t v);
void sbuf_svarint(struct sbuf *b, int64_t v);
void sbuf_u8(struct sbuf *b, uint8_t v);
/* string: varint length + bytes; NULL or longer than STK_MAX_STRING is -EINVAL */
void sbuf_string(struct sbuf *b, const char *s, const char *what);
/* bytes: varint length + bytes; longer than @max is -EINVAL */
void sbuf_bytes(struct sbuf *b, const void *p, size_t n, size_t max, const char *what);
void sbuf_fail(struct sbuf *b, int err, const char *why);
void sbuf_free(struct sbuf *b);

/*
 * sbuf_room() - where the next @n bytes go, with room for them, for an
 * encoder that writes a record's fields at once (stk_varint_put(), then
 * b->len set past them) instead of a call and a check per field (a
 * quarter of the recorder's CPU on stacks that never repeat was those).
 * NULL after an error, out of memory (the error set), or when @n would
 * pass @limit: then the encoder writes field by field, which fails with
 * -EFBIG only where the bytes themselves would not fit.
 */
static inline uint8_t *sbuf_room(struct sbuf *b, size_t n)
{
	if (b->err || n > b->limit - b->len)
		return NULL;
	if (b->len + n > b->cap) {
		sbuf_reserve(b, n);
		if (b->err)
			return NULL;
	}
	return b->data + b->len;
}

/* ---- arena (reader side) ---- */

/* Memory for one decoded chunk, released all at once by arena_reset().
 * Allocations beyond @budget fail with -EFBIG: decoded records are larger
 * than their encoding, and a hostile payload must not size our memory. */
struct arena_block;
struct arena {
	struct arena_block *head;
	size_t used, budget;
	int err;
};

void *arena_alloc(struct arena *a, size_t size);
/* allocation of @n elements of @size, checked for overflow */
void *arena_array(struct arena *a, size_t n, size_t size);
void arena_reset(struct arena *a);
void arena_free(struct arena *a);

/* ---- decode cursor (reader side) ---- */

/* A cursor over a payload with a sticky error: after the first failure every
 * getter returns 0/NULL, @err is -EBADMSG/-EFBIG/-ENOMEM, @why says what and
 * @bad points at the field that was wrong (the start of the last field read,
 * or of the bytes found where none should be). */
struct cursor {
	const uint8_t *start, *p, *end;
	const uint8_t *field;	/* start of the field being read */
	const uint8_t *bad;	/* after a failure: the field that was wrong */
	struct arena *arena;
	int err;
	const char *why;
};

void cur_fail(struct cursor *c, int err, const char *why);
/* cur_varint() for a varint that may be near the end, long or bad. */
uint64_t cur_varint_slow(struct cursor *c);

/* A varint.  Inline, with no bound check per byte while ten bytes are
 * left: a capture's stacks are millions of frame deltas, and the call and
 * checks per byte were most of decoding them. */
static inline uint64_t cur_varint(struct cursor *c)
{
	const uint8_t *p = c->p;
	uint64_t v = 0;
	size_t i;

	if (!c->err && c->end - p >= STK_VARINT_MAX) {
		/* The 10th byte (bit 63 and the overflow check) is the slow
		 * path's. */
		for (i = 0; i < STK_VARINT_MAX - 1; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				c->field = p;
				c->p = p + i + 1;
				return v;
			}
		}
	}
	return cur_varint_slow(c);
}

static inline int64_t cur_svarint(struct cursor *c)
{
	return zigzag_decode(cur_varint(c));
}

uint32_t cur_u32(struct cursor *c);	/* a varint that must fit in 32 bits */
uint8_t cur_u8(struct cursor *c);
/* a record count: each record takes at least @min_bytes, so a count larger
 * than the remaining bytes allow is refused before anything is allocated */
size_t cur_count(struct cursor *c, size_t min_bytes);
/* string into the arena, NUL-terminated; embedded NULs are refused */
const char *cur_string(struct cursor *c, size_t max);
/* string into @out[@size] (NUL-terminated), e.g. a task comm */
void cur_string_fixed(struct cursor *c, char *out, size_t size);
/* bytes: returns the length and a pointer into the payload via @out */
size_t cur_bytes(struct cursor *c, const uint8_t **out, size_t max);

static inline size_t cur_left(const struct cursor *c)
{
	return c->end - c->p;
}

/* ---- payloads (payload.c) ---- */

struct stk_index_entry {
	char tag[4];
	uint64_t offset;	/* of the chunk header frame, from the segment start */
	uint32_t comp_len, raw_len, seq;
	uint64_t t0_ns, t1_ns;
};

/* Maps a 4-byte tag to its type; STK_CHUNK_UNKNOWN when not known. */
enum stk_chunk_type stk_tag_type(const char tag[4]);

/* Encoders: append the payload to @b (errors are left in b->err). */
void stk_encode_meta(struct sbuf *b, const struct stk_kv *kv, size_t n);
void stk_encode_stacks(struct sbuf *b, const struct stk_stack *stacks, size_t n);
void stk_encode_counts(struct sbuf *b, const struct stk_count *rows, size_t n);
void stk_encode_offcpu(struct sbuf *b, const struct stk_offcpu *rows, size_t n);
void stk_encode_trace(struct sbuf *b, const struct stk_trace_count *rows, size_t n);
void stk_encode_maps(struct sbuf *b, const struct stk_proc_maps *procs, size_t n);
void stk_encode_ksyms(struct sbuf *b, const struct stk_ksym *syms, size_t n);
void stk_encode_kobjs(struct sbuf *b, const struct stk_kobj *objs, size_t n);
void stk_encode_esym(struct sbuf *b, const uint8_t *build_id, uint32_t build_id_size,
		     const void *blob, size_t blob_size);
/* ESYM kinds 2 and 3: @key is the build-id (kind 2) or ignored (kind 3);
 * @extra is `sources` (kind 2) or the tgid (kind 3). */
void stk_encode_esym_syms(struct sbuf *b, uint8_t kind, const uint8_t *build_id,
			  uint32_t build_id_size, uint32_t extra, const struct stk_esym_sym *syms,
			  size_t n);
/* ESYM kind 4: Python code objects of process @tgid. */
void stk_encode_esym_pycode(struct sbuf *b, uint32_t tgid, uint32_t py_version,
			    const struct stk_esym_pycode *codes, size_t n);
void stk_encode_stats(struct sbuf *b, const struct stk_stat *stats, size_t n);
void stk_encode_pid_ns(struct sbuf *b, const struct stk_pid_ns *pids, size_t n);
void stk_encode_index(struct sbuf *b, const struct stk_index_entry *e, size_t n);

/*
 * stk_decode_payload() - decode the payload of a chunk of known @chunk->type
 * into @chunk->u, allocating from @c->arena.  For INDX the entries are
 * returned through @index/@nr_index (arena memory).  The payload must be
 * consumed exactly.  Returns 0 or c->err (-EBADMSG, -EFBIG, -ENOMEM).
 */
int stk_decode_payload(struct cursor *c, struct stk_chunk *chunk,
		       struct stk_index_entry **index, size_t *nr_index);

#endif /* STK_INT_H */
