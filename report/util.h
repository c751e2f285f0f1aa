/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * util.h - small containers shared by the reporter: a growable string
 * buffer and a hash map from 64-bit keys to pointers.
 */
#ifndef STK_REPORT_UTIL_H
#define STK_REPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A growable NUL-terminated string.  Zero-initialised is empty and valid. */
struct strbuf {
	char *buf;		/* NULL until the first append */
	size_t len;
	size_t cap;
};

/* Append @n bytes of @s / a C string / printf output.  0 or -ENOMEM. */
int strbuf__add(struct strbuf *sb, const char *s, size_t n);
int strbuf__adds(struct strbuf *sb, const char *s);
int strbuf__addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string ("" when empty); borrowed until the next append or free. */
const char *strbuf__str(const struct strbuf *sb);
void strbuf__reset(struct strbuf *sb);	/* length 0, keeps the memory */
void strbuf__free(struct strbuf *sb);	/* releases the memory, back to empty */

/*
 * A hash map from uint64_t keys to non-NULL pointers (open addressing).
 * Zero-initialised is an empty, valid map.  It does not own the values.
 */
struct u64map {
	uint64_t *keys;
	void **vals;		/* NULL marks an empty slot */
	size_t cap;		/* power of two, or 0 */
	size_t n;
};

/* The value for @key, or NULL. */
void *u64map__get(const struct u64map *m, uint64_t key);
/* Insert or replace.  @val must not be NULL.  0 or -ENOMEM (map unchanged). */
int u64map__put(struct u64map *m, uint64_t key, void *val);
void u64map__free(struct u64map *m);

/* A well-mixing 64-bit hash step (for composite keys). */
uint64_t hash64(uint64_t h, uint64_t v);
/* FNV-1a style hash of bytes, mixed with hash64. */
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);

/* Lowercase hex of @n bytes into @out (2n+1 bytes). */
void hex_encode(char *out, const uint8_t *p, size_t n);

#endif
