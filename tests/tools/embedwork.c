// SPDX-License-Identifier: BSD-2-Clause
/*
 * embedwork - a workload whose samples fall in its own functions and in a
 * shared library of its own (libembedwork.so, found beside it through
 * $ORIGIN), so that tests/e2e/report_embed.sh can delete both files and
 * check that the capture alone names them.
 *
 *   embedwork SECONDS
 *
 * SECONDS of its own CPU time, not of the clock: on a loaded machine a
 * wall-clock run got 3 to 6 samples and missed functions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

void embedlib_spin(void);

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Half the time here, half in the library. */
static NOINLINE void embedwork_own(void)
{
	volatile uint64_t x = 0;
	int i;

	for (i = 0; i < 100000; i++)
		x += (uint64_t)i * 3;
	sink += x;
}

NOINLINE void embedwork_loop(double secs)
{
	double end = now() + secs;

	while (now() < end) {
		embedwork_own();
		embedlib_spin();
	}
}

int main(int argc, char **argv)
{
	embedwork_loop(argc > 1 ? atof(argv[1]) : 3);
	return 0;
}
