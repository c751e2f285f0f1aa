// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugin - one of the plugins pluginwork loads in turn (mk/plugin.mk):
 * built once per plugin with PLUGIN_FUNC=pluginN_spin.  Only the name
 * differs, and it has the same length in every plugin, so every plugin's
 * code has the same bytes at the same file offsets: loaded at one address
 * after another is unloaded, the same stack (the same addresses) is
 * another function.
 */
#include <stdint.h>
#include <time.h>

#ifndef PLUGIN_FUNC
#error "build with -DPLUGIN_FUNC=pluginN_spin"
#endif

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns @budget_ns of the process's CPU time (not wall time: a busy
 * machine makes it take longer, never sample less). */
uint64_t PLUGIN_FUNC(uint64_t budget_ns)
{
	uint64_t end = cpu_ns() + budget_ns, x = 1;
	uint32_t i;

	do {
		for (i = 0; i < 200000; i++)
			x = x * 6364136223846793005ull + i;
	} while (cpu_ns() < end);
	return x;
}
