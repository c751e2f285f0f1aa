/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pb.h - the few pieces of the protocol buffers wire format that stkreport
 * needs to write a pprof profile: varints, field tags, length-delimited
 * fields (strings, bytes, nested messages) and packed repeated varints.
 *
 * Only writing is supported, and only the proto3 scalar types pprof uses
 * (uint64, int64, bool as varints).  A nested message is built in its own
 * struct pb_buf and then embedded with pb_buf__message(), because its
 * length prefix must come before its bytes.
 *
 * Errors: every function that appends returns 0 or -ENOMEM.  The error is
 * also sticky: once an append failed, later appends to the same buffer do
 * nothing and return the same error, so a caller may encode a whole
 * message and check only the last return value (or pb_buf->err).
 */
#ifndef STK_REPORT_PB_H
#define STK_REPORT_PB_H

#include <stddef.h>
#include <stdint.h>

/* Wire types (protobuf encoding spec, "Message Structure"). */
enum pb_wire_type {
	PB_WIRE_VARINT = 0,
	PB_WIRE_I64 = 1,
	PB_WIRE_LEN = 2,
	PB_WIRE_I32 = 5,
};

/* A varint is at most 10 bytes (64 bits in 7-bit groups). */
#define PB_VARINT_MAX 10

/*
 * A growable byte buffer.  Its fields are public because buffers are
 * meant to live on the stack or inside another struct and be reused as
 * scratch space (pb_buf__reset() keeps the memory).  Read data[0..len);
 * do not write the fields.  A zero-filled struct (or PB_BUF_INIT) is a
 * valid empty buffer.
 */
struct pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err; /* 0, or the first append error (-ENOMEM) */
};

#define PB_BUF_INIT { NULL, 0, 0, 0 }

/*
 * pb__varint_size() - number of bytes the varint encoding of @v takes.
 * @return 1..PB_VARINT_MAX.
 */
size_t pb__varint_size(uint64_t v);

/*
 * pb__encode_varint() - encode @v as a base-128 varint into @out.
 * @out: at least PB_VARINT_MAX bytes.
 * @return the number of bytes written (pb__varint_size(v)).
 */
size_t pb__encode_varint(uint8_t *out, uint64_t v);

/*
 * pb_buf__reset() - empty @b but keep its memory, and clear its error.
 */
void pb_buf__reset(struct pb_buf *b);

/*
 * pb_buf__release() - free @b's memory and leave it empty.  Accepts NULL
 * and an already released buffer.
 */
void pb_buf__release(struct pb_buf *b);

/*
 * pb_buf__raw() - append @len bytes from @data as they are.
 * @return 0 or -ENOMEM (sticky, see above).
 */
int pb_buf__raw(struct pb_buf *b, const void *data, size_t len);

/*
 * pb_buf__varint() - append a bare varint (no tag).
 * @return 0 or -ENOMEM.
 */
int pb_buf__varint(struct pb_buf *b, uint64_t v);

/*
 * pb_buf__tag() - append the key of field @field with wire type @wt.
 * @field: 1..2^29-1 (not checked: field numbers are compile-time constants).
 * @return 0 or -ENOMEM.
 */
int pb_buf__tag(struct pb_buf *b, uint32_t field, enum pb_wire_type wt);

/*
 * pb_buf__uint64() - append field @field = @v as a varint (uint64, bool).
 * Always written, even when @v is 0: leaving out proto3 defaults is the
 * caller's decision (see pb_buf__uint64_nz()).
 * @return 0 or -ENOMEM.
 */
int pb_buf__uint64(struct pb_buf *b, uint32_t field, uint64_t v);

/*
 * pb_buf__uint64_nz() - like pb_buf__uint64(), but writes nothing when @v
 * is 0: a proto3 scalar without presence reads as 0 when absent, so this
 * is the canonical (and shortest) encoding.
 * @return 0 or -ENOMEM.
 */
int pb_buf__uint64_nz(struct pb_buf *b, uint32_t field, uint64_t v);

/*
 * pb_buf__int64_nz() - append int64 field @field = @v unless @v is 0.
 * int64 (not sint64) is two's complement in a varint, so a negative
 * value takes 10 bytes, as protobuf specifies.
 * @return 0 or -ENOMEM.
 */
int pb_buf__int64_nz(struct pb_buf *b, uint32_t field, int64_t v);

/*
 * pb_buf__bytes() - append length-delimited field @field holding @len
 * bytes from @data (string, bytes).  Written even when @len is 0, so a
 * repeated string field can hold "".
 * @return 0 or -ENOMEM.
 */
int pb_buf__bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);

/*
 * pb_buf__message() - append @msg's bytes as the nested message in field
 * @field.  @msg must be another buffer than @b; it is not changed.  If it
 * carries an error, that error is returned and @b is left as it was.
 * @return 0, -ENOMEM, or @msg->err.
 */
int pb_buf__message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);

/*
 * pb_buf__packed_uint64() - append repeated uint64 field @field holding
 * @n values, packed (one length-delimited record of varints, the proto3
 * default).  Writes nothing when @n is 0.
 * @return 0 or -ENOMEM.
 */
int pb_buf__packed_uint64(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);

/*
 * pb_buf__packed_int64() - like pb_buf__packed_uint64() for int64 values
 * (negative values take 10 bytes each).
 * @return 0 or -ENOMEM.
 */
int pb_buf__packed_int64(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n);

#endif
