// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfiload - keeps the CPU inside "CFI bomb" libraries (tests/tools/cfibomb.S,
 * tests/e2e/record_slowcfi.sh).
 *
 *   cfiload LIB...
 *
 * dlopen()s each LIB (a path: copies of libcfibomb.so, each under its own
 * build-id), prints "ready" on stdout once all are loaded, then calls each
 * one's cfibomb_run() in turn until it is killed, so that samples land in
 * every library.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void (**run)(void);
	int i, n = argc - 1;

	if (n < 1) {
		fprintf(stderr, "usage: cfiload LIB...\n");
		return 2;
	}
	run = calloc((size_t)n, sizeof(*run));
	if (!run) {
		perror("cfiload");
		return 1;
	}
	for (i = 0; i < n; i++) {
		void *h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "cfiload: %s\n", dlerror());
			return 1;
		}
		*(void **)&run[i] = dlsym(h, "cfibomb_run");
		if (!run[i]) {
			fprintf(stderr, "cfiload: %s: no cfibomb_run\n", argv[i + 1]);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		for (i = 0; i < n; i++)
			run[i]();
}
