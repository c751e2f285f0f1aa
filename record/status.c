// SPDX-License-Identifier: BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>

#include "status.h"

void status__format_seconds(uint64_t ns, char *buf, size_t size)
{
	/* Tenths, rounded down: a status line never claims time not yet spent. */
	snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "s", ns / UINT64_C(1000000000),
		 ns / UINT64_C(100000000) % 10);
}

void status__format(const struct recorder_status *st, char *buf, size_t size)
{
	uint64_t secs = st->elapsed_ns / UINT64_C(1000000000);
	char blocked[32];

	if (st->offcpu) {
		/* Off-CPU modes count blocking episodes, and the time they
		 * lasted (summed over threads, so it can exceed the elapsed
		 * time), not samples. */
		status__format_seconds(st->blocked_ns, blocked, sizeof(blocked));
		snprintf(buf, size,
			 "%" PRIu64 "s  %" PRIu64 " episodes  %s blocked  %" PRIu64
			 " stacks  %" PRIu64 " lost",
			 secs, st->samples, blocked, st->stacks, st->lost);
		return;
	}
	snprintf(buf, size, "%" PRIu64 "s  %" PRIu64 " %s  %" PRIu64 " stacks  %" PRIu64 " lost",
		 secs, st->samples, st->trace ? "events" : "samples", st->stacks, st->lost);
}

void status__format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
}
