/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash.h - keyed 64-bit hashes for hash tables.  Every process draws its
 * own random key when it starts (getrandom(); without it the kernel's
 * AT_RANDOM bytes, the clock and the pid), so ids, addresses or strings read
 * from a crafted file cannot be chosen to collide: what lands in one bucket
 * in one run is spread in the next.
 *
 * The values differ from run to run: use them to index memory, never store
 * them in a file or let the order of an output depend on them.
 */
#ifndef STK_UTIL_HASH_H
#define STK_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The per-process key, drawn by hash.c before main() runs and only read
 * after that.  Visible here only so that hash64() inlines (a call per
 * hash was 4.5% of a big report's instructions): nothing else reads it.
 */
extern uint64_t hash__key[4];

/* 64 x 64 -> 128-bit multiply, the two halves folded together. */
static inline uint64_t hash__mum(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/*
 * hash64() - hash @v, chained onto @h (a previous hash, or any constant
 * that tells key kinds apart).  Composite keys hash field by field:
 * hash64(hash64(hash64(kind, a), b), c).  Every output bit depends on every
 * bit of @h and @v, so a power-of-two table may use the low bits directly.
 * Two rounds: the first spreads @v and @h over 128 bits, the second mixes
 * its fold again, so a one-bit change of either input flips about half the
 * output bits.
 */
static inline uint64_t hash64(uint64_t h, uint64_t v)
{
	return hash__mum(hash__mum(v ^ hash__key[0], h ^ hash__key[1]) ^ hash__key[2],
			 v ^ hash__key[3]);
}

/*
 * hash_bytes() - hash the @n bytes at @p (any alignment), chained onto @h.
 * The length is part of the hash: "ab" and "ab\0" differ.
 */
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);

#endif
