/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clock.h - a clock's time in nanoseconds, the one way every part of the
 * recorder reads it (CLOCK_MONOTONIC is the side-band's and BPF's
 * bpf_ktime_get_ns() clock; CLOCK_THREAD_CPUTIME_ID bounds a worker job).
 */
#ifndef STK_UTIL_CLOCK_H
#define STK_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
