// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofpwork.c - a CPU workload with a known call tree, built the way
 * distributions build (-O2, no frame pointers: mk/unwind.mk), for the
 * .eh_frame unwinder's tests.
 *
 * Every round calls the same leaf, burn(), with the same argument through
 * three paths, 5, 3 and 2 times, so a whole-stack profile shows
 *   main;alpha;burn 50%   main;beta;gamma;burn 30%   main;beta;delta;burn 20%
 * by call counts, whatever the CPU, and a frame-pointer walk shows little
 * above burn.  The ten calls of a round come in an order shuffled every
 * round: a fixed order makes the ~0.3 ms round a periodic signal, and a
 * sampling period near a multiple of it (999 Hz is 1.001 ms) hits the same
 * part of the round for seconds at a time (seen: alpha 55% for 50%, on a
 * machine whose rounds took a different time).  burn() keeps a local
 * array, so its frame is more than a return address; qsort() (libc, no
 * frame pointers either) calls back into the program once per round.
 *
 *   nofpwork [-c] [SECONDS]  run for SECONDS (default 3), then exit 0;
 *                        -c: SECONDS of this process's CPU time, not of
 *                        the clock, so a recording at F Hz gets about
 *                        SECONDS x F samples however busy the machine is
 *   nofpwork read        copy stdin to nowhere until EOF: main;reader;read
 *                        blocks on a pipe (off-CPU tests)
 *   nofpwork write N     write a line to stdout every 0.3 s, N times:
 *                        main;writer;write wakes a reader (offwake tests)
 *   nofpwork [-c] edge [SECS] the unwinder's hard cases, for the oracle: deep
 *                        recursion, a signal handler that burns (so
 *                        samples have __restore_rt under them), a frame
 *                        that realigns its stack (CFA from rbp), qsort
 *                        calling back into the program
 */
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint64_t sink;

NOINLINE static uint64_t burn(unsigned int n)
{
	volatile uint64_t a[16];
	uint64_t h = n;
	unsigned int i, j;

	for (i = 0; i < 16; i++)
		a[i] = i * 0x9E3779B97F4A7C15ULL;
	for (j = 0; j < n; j++)
		for (i = 0; i < 16; i++)
			h = (h ^ a[i]) * 0x100000001B3ULL;
	return h;
}

NOINLINE static void alpha(unsigned int n)
{
	sink += burn(n);
}

NOINLINE static void gamma_(unsigned int n)
{
	sink += burn(n) + 1;
}

NOINLINE static void delta(unsigned int n)
{
	sink ^= burn(n);
}

NOINLINE static void beta(unsigned int n, int which)
{
	if (which)
		gamma_(n);
	else
		delta(n);
	sink++;
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

NOINLINE static long reader(void)
{
	char buf[4096];
	long total = 0;
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) > 0)
		total += n;
	return total;
}

NOINLINE static void writer(int n)
{
	struct timespec ts = { 0, 300000000 };

	while (n-- > 0) {
		nanosleep(&ts, NULL);
		if (write(1, "line\n", 5) != 5)
			return;
	}
}

NOINLINE static uint64_t recurse(unsigned int depth)
{
	if (depth == 0)
		return burn(1000);
	return recurse(depth - 1) + depth;
}

/* A 64-byte aligned local makes GCC realign the stack: the CFA is then
 * found through rbp (DW_CFA_def_cfa_expression). */
NOINLINE static uint64_t realigned(unsigned int n)
{
	volatile uint64_t a[8] __attribute__((aligned(64)));
	unsigned int i;

	for (i = 0; i < 8; i++)
		a[i] = i;
	return burn(n) + a[3];
}

static void on_prof(int sig)
{
	(void)sig;
	sink += burn(5000);
}

static int cmp_burn(const void *a, const void *b)
{
	sink += burn(2);
	return *(const int *)a - *(const int *)b;
}

static double now(void);

/* -c: SECONDS are of this process's CPU time. */
static clockid_t run_clock = CLOCK_MONOTONIC;

NOINLINE static void edge(double secs)
{
	struct itimerval it = { { 0, 3000 }, { 0, 3000 } };
	int v[64];
	double end = now() + secs;
	unsigned int i;

	signal(SIGPROF, on_prof);
	setitimer(ITIMER_PROF, &it, NULL);
	while (now() < end) {
		sink += recurse(60);
		sink += realigned(1000);
		for (i = 0; i < 64; i++)
			v[i] = (int)((i * 37) % 64);
		qsort(v, 64, sizeof(v[0]), cmp_burn);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
}

/*
 * The paths of one round, 5:3:2: 0 alpha, 1 beta;gamma_, 2 beta;delta.
 * Static, and shuffled out of main: main then keeps argv in %rbp as
 * before, not the address of a local array, so a frame-pointer walk of
 * nofpwork_nocfi (no table) still takes [rbp] for one garbage frame and
 * is flagged as a frame-pointer stack, as its test expects.
 */
static unsigned char order[10] = { 0, 0, 0, 0, 0, 1, 1, 1, 2, 2 };

NOINLINE static void shuffle(void)
{
	static uint64_t rnd = 0x2545F4914F6CDD1DULL;
	unsigned int i, j;
	unsigned char t;

	for (i = 9; i > 0; i--) { /* Fisher-Yates */
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (unsigned int)((rnd >> 33) % (i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(run_clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int v[8] = { 5, 3, 7, 1, 8, 2, 6, 4 };
	unsigned int round = 0, i;
	double secs, end;

	if (argc > 1 && strcmp(argv[1], "-c") == 0) {
		run_clock = CLOCK_PROCESS_CPUTIME_ID;
		argv++;
		argc--;
	}
	if (argc > 1 && strcmp(argv[1], "read") == 0) {
		printf("%ld bytes\n", reader());
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "write") == 0) {
		writer(argc > 2 ? atoi(argv[2]) : 5);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "edge") == 0) {
		edge(argc > 2 ? atof(argv[2]) : 3.0);
		return 0;
	}
	secs = argc > 1 ? atof(argv[1]) : 3.0;
	end = now() + secs;
	while (now() < end) {
		shuffle();
		for (i = 0; i < 10; i++) {
			if (order[i] == 0)
				alpha(2000);
			else
				beta(2000, order[i] == 1);
		}
		qsort(v, 8, sizeof(v[0]), cmp);
		round++;
	}
	printf("%u rounds\n", round);
	return 0;
}
