// SPDX-License-Identifier: BSD-2-Clause
/* Growable strings, a bump allocator, a growable array, hex and a radix sort
 * for the reporter. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

int strbuf__grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	size_t cap;
	char *p;

	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		return -ENOMEM;
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

int strbuf__adds(struct strbuf *sb, const char *s)
{
	return strbuf__add(sb, s, strlen(s));
}

int strbuf__add_u64(struct strbuf *sb, uint64_t v)
{
	char num[20], *p = num + sizeof(num);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return strbuf__add(sb, p, (size_t)(num + sizeof(num) - p));
}

int strbuf__addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = strbuf__grow(sb, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

const char *strbuf__str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void hex_encode(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The first chunk is small: most arenas hold what one small capture
 * needs, and below 128 KiB malloc does not mmap() (nor does ASan's
 * allocator); each next one is twice the last, up to ARENA_CHUNK. */
#define ARENA_FIRST (1u << 16)
#define ARENA_CHUNK (1u << 20)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;
	size_t mapped;		/* bytes mmap()ed for it, 0: from calloc() */
	char data[];
};

/*
 * A chunk of ARENA_CHUNK bytes or more is mapped on its own, in whole
 * 2 MiB pieces aligned to 2 MiB and marked for transparent huge pages: a
 * big report touches every byte of its arenas (hundreds of MB for a
 * system-wide capture), and faulting them in 4 KiB at a time was a fifth
 * of its time (populating them at mmap() still a tenth: a charge, a clear
 * and a page table entry per page).  Where huge pages are off, the pages
 * fault in one by one.  Falls back to calloc() where mmap() fails.
 * Sets c->size, the room for data.
 */
#define ARENA_HUGE (2ul << 20)

static struct arena_chunk *chunk__new(size_t csize)
{
	size_t len = sizeof(struct arena_chunk) + csize, head, tail;
	struct arena_chunk *c;
	char *p;

	if (csize >= ARENA_CHUNK && len <= SIZE_MAX - 2 * ARENA_HUGE) {
		len = (len + ARENA_HUGE - 1) & ~(ARENA_HUGE - 1);
		p = mmap(NULL, len + ARENA_HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			head = (ARENA_HUGE - ((uintptr_t)p & (ARENA_HUGE - 1))) & (ARENA_HUGE - 1);
			tail = ARENA_HUGE - head;
			if (head)
				munmap(p, head);
			if (tail)
				munmap(p + head + len, tail);
			c = (struct arena_chunk *)(p + head);
			madvise(c, len, MADV_HUGEPAGE);	/* a hint: ignore failure */
			c->mapped = len;
			c->size = len - sizeof(*c);
			return c;
		}
	}
	c = calloc(1, len);
	if (c)
		c->size = csize;
	return c;
}

static void chunk__free(struct arena_chunk *c)
{
	if (c && c->mapped)
		munmap(c, c->mapped);
	else
		free(c);
}


void *arena__alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c;
	size_t csize, next;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (!a->head || a->size - a->used < size) {
		next = !a->head ? ARENA_FIRST : a->size < ARENA_CHUNK / 2 ? 2 * a->size : ARENA_CHUNK;
		csize = size > next / 4 ? size : next;
		/* calloc: fresh pages come zeroed from the kernel anyway. */
		c = chunk__new(csize);
		if (!c)
			return NULL;
		if (a->head && csize != next) {
			/* A big one-off: keep the current chunk for small ones. */
			c->next = a->head->next;
			a->head->next = c;
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->size = c->size;
	}
	p = a->head->data + a->used;
	a->used += size;
	return p;
}

char *arena__strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena__alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void arena__free(struct arena *a)
{
	struct arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		chunk__free(c);
	}
	a->head = NULL;
	a->used = a->size = 0;
}

static uint64_t key_at(const char *elem, size_t key_off)
{
	uint64_t k;

	memcpy(&k, elem + key_off, sizeof(k));
	return k;
}

int array__grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int radix_sort_u64(void **base, size_t n, size_t size, size_t key_off)
{
	char *src = *base, *dst, *t;
	unsigned int shift;
	size_t i;

	if (n < 2)
		return 0;
	dst = malloc(n * size);
	if (!dst)
		return -ENOMEM;
	for (shift = 0; shift < 64; shift += 8) {
		size_t cnt[256] = { 0 }, sum = 0;

		for (i = 0; i < n; i++)
			cnt[(key_at(src + i * size, key_off) >> shift) & 0xff]++;
		if (cnt[(key_at(src, key_off) >> shift) & 0xff] == n)
			continue;	/* one digit for all: nothing moves */
		for (i = 0; i < 256; i++) {
			size_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++) {
			const char *e = src + i * size;

			memcpy(dst + cnt[(key_at(e, key_off) >> shift) & 0xff]++ * size, e, size);
		}
		t = src;
		src = dst;
		dst = t;
	}
	*base = src;
	free(dst);
	return 0;
}
