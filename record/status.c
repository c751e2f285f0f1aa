// SPDX-License-Identifier: BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>

#include "status.h"

void status__format(const struct recorder_status *st, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 "s  %" PRIu64 " samples  %" PRIu64 " stacks  stack map %u%%  %" PRIu64 " lost",
		 st->elapsed_ns / UINT64_C(1000000000), st->samples, st->stacks, st->stack_fill_pct, st->lost);
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
