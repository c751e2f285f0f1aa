/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * util.h - small helpers of the reporter: a growable string buffer, a bump
 * allocator, a growable array, hex encoding and a radix sort.  The hash map
 * and the hashes both tools use are util/idmap.h and util/hash.h.
 */
#ifndef STK_REPORT_UTIL_H
#define STK_REPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable NUL-terminated string.  Zero-initialised is empty and valid. */
struct strbuf {
	char *buf;		/* NULL until the first append */
	size_t len;
	size_t cap;
};

/* Room for @extra more bytes and the NUL.  0 or -ENOMEM. */
int strbuf__grow(struct strbuf *sb, size_t extra);

/* Append @n bytes of @s / a C string / printf output.  0 or -ENOMEM.
 * Inline: writers append a few bytes millions of times. */
static inline int strbuf__add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		int err = strbuf__grow(sb, n);

		if (err)
			return err;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf__adds(struct strbuf *sb, const char *s);
int strbuf__add_u64(struct strbuf *sb, uint64_t v);	/* in decimal, as "%llu" */
int strbuf__addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string ("" when empty); borrowed until the next append or free. */
const char *strbuf__str(const struct strbuf *sb);
void strbuf__reset(struct strbuf *sb);	/* length 0, keeps the memory */
void strbuf__free(struct strbuf *sb);	/* releases the memory, back to empty */

/*
 * A bump allocator: many small objects that live and die together (stacks,
 * frames, symbol results, rendered lines) cost one malloc per 1 MiB and
 * sit next to each other in memory.  Zero-initialised is empty and valid.
 */
struct arena {
	struct arena_chunk *head;
	size_t used, size;	/* of head */
};

/* @size bytes, 8-aligned, zeroed; NULL when out of memory.  Valid until
 * arena__free(). */
void *arena__alloc(struct arena *a, size_t size);
/* Copy of @n bytes of @s plus a NUL, or NULL. */
char *arena__strndup(struct arena *a, const char *s, size_t n);
void arena__free(struct arena *a);

/*
 * array__grow() - room in *@arr (*@cap elements of @size bytes) for element
 * @n: doubles the capacity (16 the first time) once @n reaches it.
 * 0 or -ENOMEM (then *@arr and *@cap are unchanged).
 */
int array__grow(void **arr, size_t *cap, size_t n, size_t size);

/* Lowercase hex of @n bytes into @out (2n+1 bytes). */
void hex_encode(char *out, const uint8_t *p, size_t n);

/*
 * radix_sort_u64() - stable LSD radix sort of @n elements of @size bytes at
 * *@base, by the uint64_t at byte @key_off of each.  Stability keeps the
 * order qsort() gives equal keys when the input is pre-ordered by the
 * secondary key.  *@base may be replaced by another malloc()ed array (the
 * old one is freed).  Returns 0 or -ENOMEM (then *@base is unchanged).
 */
int radix_sort_u64(void **base, size_t n, size_t size, size_t key_off);

/* @a + @b, capped at UINT64_MAX (then *@saturated is set to 1): counts
 * read from a crafted capture can sum past 2^64. */
static inline uint64_t sat_add(uint64_t a, uint64_t b, int *saturated)
{
	if (b > UINT64_MAX - a) {
		*saturated = 1;
		return UINT64_MAX;
	}
	return a + b;
}

#endif
