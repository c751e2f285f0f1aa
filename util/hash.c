// SPDX-License-Identifier: BSD-2-Clause
/*
 * hash.c - keyed hashes with a per-process random key (see hash.h).
 *
 * The unkeyed mixers stk used before (murmur3's fmix64, splitmix64) are
 * bijections with public constants: anyone can invert them and write a file
 * whose 80k stack ids all land in one bucket (3.0 s to report instead of
 * 0.02 s).  Here every step multiplies two 64-bit operands that each carry
 * a secret key into a 128-bit product and folds its halves (the "mum" step
 * of wyhash and of Go's fallback hash): without the key, which inputs
 * collide is unknown, and the fold makes the low bits, the ones a table
 * uses, depend on every input bit.
 */
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"

/*
 * Written once, by hash__init() before main() runs and before any thread
 * exists, and only read after that: a per-process constant, not state.
 */
uint64_t hash__key[4];

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * A constructor, not a lazy first-use check: the key must be the same for
 * every lookup of a table, and a lazy check would race between threads.
 * getrandom() (Linux 3.17+) is asked not to block: early in boot its pool
 * may not be ready, and a profiler must still start.  Whatever it gives is
 * mixed over the fallback: AT_RANDOM (16 random bytes the kernel hands
 * every exec), the clocks, the pid and a stack address (ASLR).
 */
__attribute__((constructor)) static void hash__init(void)
{
	const unsigned char *at_random = (const unsigned char *)getauxval(AT_RANDOM);
	uint64_t rnd[4], state = 0, w;
	struct timespec ts;
	size_t i;

	if (at_random) {
		memcpy(&w, at_random, 8);
		state ^= w;
		memcpy(&w, at_random + 8, 8);
		state = state * 0x100000001b3ull ^ w;
	}
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		state ^= (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		state += (uint64_t)ts.tv_nsec << 20;
	state ^= (uint64_t)getpid() << 32;
	state += (uint64_t)(uintptr_t)&state;
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	for (i = 0; i < 4; i++)
		hash__key[i] = splitmix64(&state) ^ rnd[i];
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t acc = hash64(h, n), a, b;
	size_t i = 0;

	/* Sixteen bytes per multiply: folded lines are long and all get hashed. */
	for (; i + 16 <= n; i += 16)
		acc = hash__mum(load64(c + i) ^ hash__key[1], load64(c + i + 8) ^ acc);
	if (i < n) {
		unsigned char tail[16] = { 0 };

		/* Zero padding is safe: the length went into acc first. */
		memcpy(tail, c + i, n - i);
		a = load64(tail);
		b = load64(tail + 8);
		acc = hash__mum(a ^ hash__key[2], b ^ acc);
	}
	return hash64(acc, n);
}
