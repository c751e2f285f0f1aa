// SPDX-License-Identifier: BSD-2-Clause
/*
 * uwctor.c - libuwctor.so, linked into uwholes (uwholes.c): its
 * constructor burns CPU when the program's arguments are "[-c] ctor
 * SECS", so that samples are taken in a library constructor, which ld.so
 * runs from its entry point (_dl_start_user calls _dl_init) before the
 * program's: stacks whose outermost frame is ld.so's entry code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint64_t uwctor_sink;

/* Referenced by uwholes, so the link keeps the library (--as-needed). */
void uwctor_linked(void)
{
}

NOINLINE static uint64_t ctor_leaf(unsigned int n)
{
	volatile uint64_t a[4] = { 1, 2, 3, 4 };
	uint64_t h = n;
	unsigned int i;

	for (i = 0; i < n * 64; i++)
		h = (h ^ a[i & 3]) * 0x100000001B3ULL;
	return h;
}

NOINLINE static void ctor_burn(clockid_t clock, double secs)
{
	struct timespec ts;
	double end;

	clock_gettime(clock, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + secs;
	do {
		uwctor_sink += ctor_leaf(2000);
		clock_gettime(clock, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
}

/* glibc calls ELF constructors with main's arguments. */
__attribute__((constructor)) static void uwctor(int argc, char **argv)
{
	clockid_t clock = CLOCK_MONOTONIC;
	int i = 1;

	if (argc > i && strcmp(argv[i], "-c") == 0) {
		clock = CLOCK_PROCESS_CPUTIME_ID;
		i++;
	}
	if (argc > i + 1 && strcmp(argv[i], "ctor") == 0)
		ctor_burn(clock, atof(argv[i + 1]));
}
