// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpuwork - a CPU-bound workload with a known call tree and a known split
 * of time, for testing and demonstrating stk.
 *
 *   cpuwork [-s A,B,C] [SECONDS [THREADS]]   (default: 5 seconds, 1 thread)
 *   cpuwork [-s A,B,C] -n ROUNDS [THREADS]   a fixed amount of work instead: each
 *                                    thread runs ROUNDS rounds (for
 *                                    measuring slowdown by elapsed time)
 *   cpuwork -c SECONDS               only read the clock (clock_gettime()
 *                                    in a loop: time in the vDSO, whose
 *                                    frames have no file on disk)
 *   cpuwork -p SECONDS               two phases: the first half of the time
 *                                    only work_a -> leaf_a, the second only
 *                                    work_b -> mid_b -> leaf_b (for time
 *                                    slices: --since/--until)
 *
 * Every thread runs this call tree until SECONDS have passed:
 *
 *   main -> run -> work_a -> leaf_a                60% of samples
 *               -> work_b -> mid_b -> leaf_b       30%
 *               -> work_c -> leaf_c                10%
 *
 * (threads other than the first start from thread_main instead of main).
 * -s A,B,C skews the split to A:B:C (calls of work_a, work_b, work_c per
 * round, 1..100 in all), e.g. -s 3,6,1 for 30/60/10: two recordings with
 * different splits are what stkreport diff's tests compare.
 * All time is spent in the three leaves, which have identical bodies and
 * are called 6, 3 and 1 times per round (in a shuffled order, see run()),
 * so the split holds by call counts whatever the CPU.  The Makefile builds samples with frame pointers and
 * without inlining; noipa also stops GCC from merging the identical leaves
 * into one function, which would make their samples indistinguishable.
 *
 * Exit status 0; 2 on bad arguments.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

/* Iterations of one leaf call: ~100 us, small against a 10 ms sample
 * period, large against the clock read once per round. */
#define LEAF_ITERS 100000

static volatile uint64_t sink;
static double stop_at;
static long rounds; /* > 0: run this many rounds instead of until stop_at */
static int split[3] = { 6, 3, 1 }; /* calls of work_a, work_b, work_c per round */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The three leaves must stay identical: same instructions, same cost.  The
 * volatile local gives each a stack frame: GCC 12 sets up no frame pointer
 * in a leaf that needs no stack, even with -mno-omit-leaf-frame-pointer,
 * and a frame-pointer unwinder would then skip the leaf's caller (work_a
 * would vanish from leaf_a's stacks).
 */
NOINLINE void leaf_a(void)
{
	volatile uint64_t x = sink;
	int i;

	for (i = 0; i < LEAF_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

NOINLINE void leaf_b(void)
{
	volatile uint64_t x = sink;
	int i;

	for (i = 0; i < LEAF_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

NOINLINE void leaf_c(void)
{
	volatile uint64_t x = sink;
	int i;

	for (i = 0; i < LEAF_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

NOINLINE void mid_b(void)
{
	leaf_b();
}

NOINLINE void work_a(void)
{
	leaf_a();
}

NOINLINE void work_b(void)
{
	mid_b();
}

NOINLINE void work_c(void)
{
	leaf_c();
}

/*
 * One round calls work_a 6 times, work_b 3 times and work_c once (or as
 * -s says), in an order shuffled every round.  A fixed order would make the ~1 ms round a
 * periodic signal: at a sampling period close to a multiple of it (99 Hz
 * is 10.1 ms), samples hit the same part of the round for seconds at a
 * time and the measured split drifts by several points.
 */
NOINLINE void run(void)
{
	void (*const works[3])(void) = { work_a, work_b, work_c };
	void (*order[100])(void);
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd; /* per thread */
	long r = 0;
	int i, j, k, n = 0;

	for (k = 0; k < 3; k++)
		for (i = 0; i < split[k]; i++)
			order[n++] = works[k];
	while (rounds ? r++ < rounds : now() < stop_at) {
		for (i = n - 1; i > 0; i--) { /* Fisher-Yates */
			void (*t)(void);

			rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
			j = (int)((rnd >> 33) % (uint64_t)(i + 1));
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < n; i++)
			order[i]();
	}
}

NOINLINE void *thread_main(void *arg)
{
	(void)arg;
	run();
	return NULL;
}

/* -s A,B,C: three counts >= 0, 1..100 in all.  0, or -1. */
static int parse_split(const char *s)
{
	char *end;
	long v;
	int k, sum = 0;

	for (k = 0; k < 3; k++) {
		v = strtol(s, &end, 10);
		if (end == s || v < 0 || v > 100 || *end != (k < 2 ? ',' : '\0'))
			return -1;
		split[k] = (int)v;
		sum += (int)v;
		s = end + (k < 2);
	}
	return sum >= 1 && sum <= 100 ? 0 : -1;
}

/* -c: nearly all samples in the vDSO's clock_gettime. */
NOINLINE static void clock_loop(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		;
}

/* -p: leaf_a until half time, then leaf_b. */
NOINLINE static void phases(double seconds)
{
	double half = now() + seconds / 2, end = now() + seconds;

	while (now() < half)
		work_a();
	while (now() < end)
		work_b();
}

static int usage(void)
{
	fprintf(stderr, "usage: cpuwork [-s A,B,C] [SECONDS [THREADS]]\n"
			"       cpuwork [-s A,B,C] -n ROUNDS [THREADS]\n"
			"       cpuwork -c SECONDS\n"
			"       cpuwork -p SECONDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	long threads = 1, i;
	pthread_t *tids;
	char *end;
	int arg = 1;

	if (argc == 3 && strcmp(argv[1], "-c") == 0) {
		seconds = strtod(argv[2], &end);
		if (*end || !(seconds > 0))
			return usage();
		clock_loop(seconds);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "-p") == 0) {
		seconds = strtod(argv[2], &end);
		if (*end || !(seconds > 0))
			return usage();
		phases(seconds);
		return 0;
	}
	if (argc > arg + 1 && strcmp(argv[arg], "-s") == 0) {
		if (parse_split(argv[arg + 1]))
			return usage();
		arg += 2;
	}
	if (argc > arg + 1 && strcmp(argv[arg], "-n") == 0) {
		rounds = strtol(argv[arg + 1], &end, 10);
		if (*end || rounds < 1)
			return usage();
		arg += 2;
	} else if (argc > arg) {
		seconds = strtod(argv[arg], &end);
		if (*end || !(seconds > 0))
			return usage();
		arg++;
	}
	if (argc > arg) {
		threads = strtol(argv[arg], &end, 10);
		if (*end || threads < 1 || threads > 1024)
			return usage();
		arg++;
	}
	if (argc > arg)
		return usage();
	stop_at = now() + seconds;
	tids = calloc((size_t)threads, sizeof(*tids));
	if (!tids)
		return 1;
	for (i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, thread_main, NULL)) {
			fprintf(stderr, "cpuwork: cannot create thread %ld\n", i);
			return 1;
		}
	run();
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return 0;
}
