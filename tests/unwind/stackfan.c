// SPDX-License-Identifier: BSD-2-Clause
/*
 * stackfan.c - a CPU workload with many distinct stacks, for the
 * recorder's load figures in make bench: every call descends DEPTH levels
 * through fan_0() or fan_1(), chosen by the bits of a counter, to one
 * leaf, so a run goes through 2^DEPTH distinct call paths (16384 at the
 * default 14), each as often as the others.
 *
 *   stackfan [-d DEPTH] SECONDS [THREADS]   (default 1 thread)
 *
 * Built with frame pointers (mk/unwind.mk), so perf -g and stkrec
 * --unwind=fp see the same stacks as the .eh_frame unwinder.  Exit
 * status 0; 2 on bad arguments.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

static unsigned int depth = 14;
static double seconds;
volatile uint64_t sink;

NOINLINE static uint64_t fan_leaf(uint64_t path)
{
	uint64_t h = path;
	unsigned int i;

	/* ~10 us of work: a few samples per path over a long run. */
	for (i = 0; i < 4000; i++)
		h = (h ^ i) * 0x100000001B3ULL;
	return h;
}

NOINLINE static uint64_t fan_1(uint64_t path, unsigned int d);

NOINLINE static uint64_t fan_0(uint64_t path, unsigned int d)
{
	if (d == 0)
		return fan_leaf(path);
	return ((path >> (d - 1)) & 1 ? fan_1 : fan_0)(path, d - 1) + 1;
}

NOINLINE static uint64_t fan_1(uint64_t path, unsigned int d)
{
	if (d == 0)
		return fan_leaf(path);
	return ((path >> (d - 1)) & 1 ? fan_1 : fan_0)(path, d - 1) + 3;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	uint64_t path = (uint64_t)(uintptr_t)arg, h = 0;
	double end = now() + seconds;
	unsigned int i;

	while (now() < end)
		for (i = 0; i < 64; i++)
			h += fan_0(path++, depth);
	sink = h;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[256];
	long threads = 1, i;
	int a = 1;

	if (a + 1 < argc && strcmp(argv[a], "-d") == 0) {
		depth = (unsigned int)atoi(argv[a + 1]);
		a += 2;
	}
	if (a >= argc || depth < 1 || depth > 24)
		goto usage;
	seconds = atof(argv[a]);
	if (a + 1 < argc)
		threads = atol(argv[a + 1]);
	if (seconds <= 0 || threads < 1 || threads > 256)
		goto usage;
	/* Threads start apart in the path space. */
	for (i = 1; i < threads; i++)
		if (pthread_create(&th[i], NULL, run, (void *)(uintptr_t)(i << 20)))
			return 1;
	run(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
usage:
	fprintf(stderr, "usage: stackfan [-d DEPTH] SECONDS [THREADS]\n");
	return 2;
}
