// SPDX-License-Identifier: BSD-2-Clause
/*
 * threadchurn - a burst of new keys in the kernel's counts map, on cue
 * (tests/e2e/record_counts_fill.sh): STREAMS threads spin until killed;
 * after SIGUSR1 each of them spins in a new thread for each millisecond
 * of CPU time instead (a sample's thread id is in its counts key, so
 * nearly every sample is a key of its own while the stacks repeat, and
 * no process or mapping comes); SIGUSR2 goes back to spinning in place.
 *
 *   threadchurn [STREAMS]
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t churn;

static void on_signal(int sig)
{
	churn = sig == SIGUSR1;
}

/* Spin for a millisecond of this thread's CPU time. */
__attribute__((noinline)) static void *spin_ms(void *arg)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 1000000L);
	return arg;
}

static void *stream(void *arg)
{
	pthread_t t;

	for (;;) {
		if (churn && pthread_create(&t, NULL, spin_ms, NULL) == 0)
			pthread_join(t, NULL);
		else
			spin_ms(NULL);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, i;
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	for (i = 1; i < n; i++)
		if (pthread_create(&t, NULL, stream, NULL))
			return 1;
	stream(NULL);
	return 0;
}
