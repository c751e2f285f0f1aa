// SPDX-License-Identifier: BSD-2-Clause
/*
 * Protocol buffers wire-format writer (see pb.h).  Small on purpose: pprof
 * needs varints and length-delimited records only, and a dependency on
 * libprotobuf(-c) plus generated code would be far more than that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"

size_t pb__varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t pb__encode_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pb_buf__reset(struct pb_buf *b)
{
	b->len = 0;
	b->err = 0;
}

void pb_buf__release(struct pb_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

/* Make room for @extra more bytes; doubling keeps appends amortized O(1). */
static int pb_buf__reserve(struct pb_buf *b, size_t extra)
{
	size_t cap;
	uint8_t *data;

	if (b->err)
		return b->err;
	if (extra <= b->cap - b->len)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return b->err;
	}
	cap = b->cap ? b->cap : 64;
	while (cap - b->len < extra)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->data = data;
	b->cap = cap;
	return 0;
}

int pb_buf__raw(struct pb_buf *b, const void *data, size_t len)
{
	int err;

	err = pb_buf__reserve(b, len);
	if (err)
		return err;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int pb_buf__varint(struct pb_buf *b, uint64_t v)
{
	int err;

	err = pb_buf__reserve(b, PB_VARINT_MAX);
	if (err)
		return err;
	b->len += pb__encode_varint(b->data + b->len, v);
	return 0;
}

int pb_buf__tag(struct pb_buf *b, uint32_t field, enum pb_wire_type wt)
{
	return pb_buf__varint(b, (uint64_t)field << 3 | (uint64_t)wt);
}

int pb_buf__uint64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb_buf__tag(b, field, PB_WIRE_VARINT);
	return pb_buf__varint(b, v);
}

int pb_buf__uint64_nz(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return b->err;
	return pb_buf__uint64(b, field, v);
}

int pb_buf__int64_nz(struct pb_buf *b, uint32_t field, int64_t v)
{
	/* The uint64 conversion is the two's complement protobuf specifies. */
	return pb_buf__uint64_nz(b, field, (uint64_t)v);
}

int pb_buf__bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	pb_buf__tag(b, field, PB_WIRE_LEN);
	pb_buf__varint(b, len);
	return pb_buf__raw(b, data, len);
}

int pb_buf__message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
	if (msg->err)
		return msg->err;
	return pb_buf__bytes(b, field, msg->data, msg->len);
}

int pb_buf__packed_uint64(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return b->err;
	/* Size first, so the values go straight into @b after their length. */
	for (i = 0; i < n; i++)
		len += pb__varint_size(v[i]);
	pb_buf__tag(b, field, PB_WIRE_LEN);
	pb_buf__varint(b, len);
	if (pb_buf__reserve(b, len))
		return b->err;
	for (i = 0; i < n; i++)
		b->len += pb__encode_varint(b->data + b->len, v[i]);
	return 0;
}

int pb_buf__packed_int64(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return b->err;
	for (i = 0; i < n; i++)
		len += pb__varint_size((uint64_t)v[i]);
	pb_buf__tag(b, field, PB_WIRE_LEN);
	pb_buf__varint(b, len);
	if (pb_buf__reserve(b, len))
		return b->err;
	for (i = 0; i < n; i++)
		b->len += pb__encode_varint(b->data + b->len, (uint64_t)v[i]);
	return 0;
}
