// SPDX-License-Identifier: BSD-2-Clause
/*
 * Primitive encodings of the .stk format (SPEC.md "Conventions"): varints,
 * strings and bytes, the writer's growable buffer, and the reader's bounds
 * checked cursor and per-chunk arena.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stk_int.h"

size_t stk_varint_encode(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t stk_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t val = 0;
	size_t i;

	for (i = 0; i < STK_VARINT_MAX && p + i < end; i++) {
		uint8_t b = p[i];

		/* The 10th byte holds bit 63 only: anything more overflows. */
		if (i == STK_VARINT_MAX - 1 && b > 1)
			return 0;
		val |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = val;
			return i + 1;
		}
	}
	return 0;
}

/* ---- sbuf ---- */

void sbuf_fail(struct sbuf *b, int err, const char *why)
{
	if (!b->err) {
		b->err = err;
		b->why = why;
	}
}

void sbuf_reserve(struct sbuf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return;
	if (n > b->limit - b->len) {
		sbuf_fail(b, -EFBIG, "payload exceeds STK_MAX_CHUNK_RAW");
		return;
	}
	if (b->len + n <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		sbuf_fail(b, -ENOMEM, "out of memory");
		return;
	}
	b->data = p;
	b->cap = cap;
}

void sbuf_put(struct sbuf *b, const void *p, size_t n)
{
	sbuf_reserve(b, n);
	if (b->err || !n)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void sbuf_varint(struct sbuf *b, uint64_t v)
{
	sbuf_reserve(b, STK_VARINT_MAX);
	if (b->err)
		return;
	b->len += stk_varint_encode(b->data + b->len, v);
}

void sbuf_svarint(struct sbuf *b, int64_t v)
{
	sbuf_varint(b, zigzag_encode(v));
}

void sbuf_u8(struct sbuf *b, uint8_t v)
{
	sbuf_put(b, &v, 1);
}

void sbuf_string(struct sbuf *b, const char *s, const char *what)
{
	size_t n;

	if (!s) {
		sbuf_fail(b, -EINVAL, what);
		return;
	}
	n = strnlen(s, STK_MAX_STRING + 1);
	if (n > STK_MAX_STRING) {
		sbuf_fail(b, -EINVAL, what);
		return;
	}
	sbuf_varint(b, n);
	sbuf_put(b, s, n);
}

void sbuf_bytes(struct sbuf *b, const void *p, size_t n, size_t max, const char *what)
{
	if (n > max || (n && !p)) {
		sbuf_fail(b, -EINVAL, what);
		return;
	}
	sbuf_varint(b, n);
	sbuf_put(b, p, n);
}

void sbuf_free(struct sbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* ---- arena ---- */

struct arena_block {
	struct arena_block *next;
	size_t size, used;
	max_align_t data[];
};

#define ARENA_BLOCK_MIN (64u << 10)

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_block *b = a->head;
	size_t want;
	void *p;

	if (a->err)
		return NULL;
	/* Round up so every allocation stays aligned for any record type. */
	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (size > a->budget - a->used) {
		a->err = -EFBIG;
		return NULL;
	}
	if (!b || b->size - b->used < size) {
		want = size > ARENA_BLOCK_MIN ? size : ARENA_BLOCK_MIN;
		b = malloc(sizeof(*b) + want);
		if (!b) {
			a->err = -ENOMEM;
			return NULL;
		}
		b->size = want;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = (char *)b->data + b->used;
	b->used += size;
	a->used += size;
	return p;
}

void *arena_array(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		a->err = -EFBIG;
		return NULL;
	}
	/* Zero-length arrays still get a valid, unique pointer. */
	return arena_alloc(a, n ? n * size : 1);
}

void arena_reset(struct arena *a)
{
	struct arena_block *b, *next;

	/* Keep the newest block for the next chunk; free the rest, so one huge
	 * chunk does not pin its memory for the rest of the file. */
	b = a->head;
	if (b) {
		for (next = b->next, b->next = NULL; next; ) {
			struct arena_block *n = next->next;

			free(next);
			next = n;
		}
		if (b->size > 16 * ARENA_BLOCK_MIN) {
			free(b);
			a->head = NULL;
		} else {
			b->used = 0;
		}
	}
	a->used = 0;
	a->err = 0;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *n = b->next;

		free(b);
		b = n;
	}
	a->head = NULL;
	a->used = 0;
}

/* ---- cursor ---- */

void cur_fail(struct cursor *c, int err, const char *why)
{
	if (!c->err) {
		c->err = err;
		c->why = why;
		c->bad = c->field ? c->field : c->p;
	}
	c->p = c->end;
}

uint64_t cur_varint_slow(struct cursor *c)
{
	uint64_t v = 0;
	size_t n;

	if (c->err)
		return 0;
	c->field = c->p;
	n = stk_varint_decode(c->p, c->end, &v);
	if (!n) {
		cur_fail(c, -EBADMSG, c->p < c->end ? "bad varint" : "record cut short");
		return 0;
	}
	c->p += n;
	return v;
}

uint32_t cur_u32(struct cursor *c)
{
	uint64_t v = cur_varint(c);

	if (v > UINT32_MAX) {
		cur_fail(c, -EBADMSG, "value does not fit in 32 bits");
		return 0;
	}
	return v;
}

uint8_t cur_u8(struct cursor *c)
{
	if (c->err)
		return 0;
	c->field = c->p;
	if (c->p >= c->end) {
		cur_fail(c, -EBADMSG, "record cut short");
		return 0;
	}
	return *c->p++;
}

size_t cur_count(struct cursor *c, size_t min_bytes)
{
	uint64_t n = cur_varint(c);

	if (c->err)
		return 0;
	if (n > cur_left(c) / (min_bytes ? min_bytes : 1)) {
		cur_fail(c, -EBADMSG, "record count larger than the payload");
		return 0;
	}
	return n;
}

static const uint8_t *cur_span(struct cursor *c, size_t max, size_t *len)
{
	uint64_t n = cur_varint(c);
	const uint8_t *p;

	*len = 0;
	if (c->err)
		return NULL;
	if (n > max) {
		cur_fail(c, -EFBIG, "length over the format's limit");
		return NULL;
	}
	if (n > cur_left(c)) {
		cur_fail(c, -EBADMSG, "length past the end of the payload");
		return NULL;
	}
	p = memchr(c->p, 0, n);
	if (p) {
		c->field = p;
		cur_fail(c, -EBADMSG, "NUL byte inside a string");
		return NULL;
	}
	p = c->p;
	c->p += n;
	*len = n;
	return p;
}

const char *cur_string(struct cursor *c, size_t max)
{
	const uint8_t *p;
	size_t n;
	char *s;

	p = cur_span(c, max, &n);
	if (c->err)
		return NULL;
	s = arena_alloc(c->arena, n + 1);
	if (!s) {
		cur_fail(c, c->arena->err, "decoded chunk too large");
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

void cur_string_fixed(struct cursor *c, char *out, size_t size)
{
	const uint8_t *p;
	size_t n;

	out[0] = '\0';
	p = cur_span(c, size - 1, &n);
	if (c->err)
		return;
	memcpy(out, p, n);
	out[n] = '\0';
}

size_t cur_bytes(struct cursor *c, const uint8_t **out, size_t max)
{
	uint64_t n = cur_varint(c);

	*out = NULL;
	if (c->err)
		return 0;
	if (n > max) {
		cur_fail(c, -EFBIG, "length over the format's limit");
		return 0;
	}
	if (n > cur_left(c)) {
		cur_fail(c, -EBADMSG, "length past the end of the payload");
		return 0;
	}
	*out = c->p;
	c->p += n;
	return n;
}
