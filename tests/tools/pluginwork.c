// SPDX-License-Identifier: BSD-2-Clause
/*
 * pluginwork - a plugin reload, as a host process does it
 * (tests/e2e/report_plugins.sh): DIR/libplugin1.so ... libpluginN.so
 * loaded one at a time with dlopen(), each burning MS ms of the process's
 * CPU time in its pluginK_spin(), unloaded with dlclose() before the next
 * is loaded.  The plugins have the same size and layout, so the loader
 * puts each where the one before was: one address, N functions.
 *
 *   pluginwork DIR N MS
 *
 * Before loading plugin K it waits for the file DIR/go.K (the test makes
 * it once the recorder has flushed past the previous plugin's samples);
 * prints "plugin K ADDR" (the function's address) once loaded and
 * "closed K T" once unloaded, T the CLOCK_MONOTONIC ns after dlclose().
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_for(const char *path)
{
	const struct timespec nap = { 0, 5 * 1000 * 1000 };

	while (access(path, F_OK) != 0)
		nanosleep(&nap, NULL);
}

int main(int argc, char **argv)
{
	uint64_t (*spin)(uint64_t);
	char lib[4096], fn[32], go[4096];
	uint64_t budget, sink = 0;
	int k, n;
	void *h;

	if (argc != 4 || (n = atoi(argv[2])) < 1 || n > 9 || atoi(argv[3]) < 1) {
		fprintf(stderr, "usage: pluginwork DIR N(1-9) MS\n");
		return 2;
	}
	budget = (uint64_t)atoi(argv[3]) * 1000000ull;
	for (k = 1; k <= n; k++) {
		snprintf(lib, sizeof(lib), "%s/libplugin%d.so", argv[1], k);
		snprintf(fn, sizeof(fn), "plugin%d_spin", k);
		snprintf(go, sizeof(go), "%s/go.%d", argv[1], k);
		wait_for(go);
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "pluginwork: %s\n", dlerror());
			return 1;
		}
		spin = (uint64_t (*)(uint64_t))dlsym(h, fn);
		if (!spin) {
			fprintf(stderr, "pluginwork: %s\n", dlerror());
			return 1;
		}
		printf("plugin %d %p\n", k, (void *)spin);
		fflush(stdout);
		sink += spin(budget);
		if (dlclose(h)) {
			fprintf(stderr, "pluginwork: %s\n", dlerror());
			return 1;
		}
		printf("closed %d %llu\n", k, (unsigned long long)mono_ns());
		fflush(stdout);
	}
	return sink == 42;	/* keeps the work; never 42 in practice */
}
