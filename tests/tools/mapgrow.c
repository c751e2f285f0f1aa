// SPDX-License-Identifier: BSD-2-Clause
/*
 * mapgrow - a JIT with a large perf map that keeps changing, the hostile
 * perf-map writer of make bench's soak (tests/bench/soak.sh, issue 22).
 *
 *   mapgrow MB
 *
 * Writes MB megabytes of /tmp/perf-PID.map lines naming addresses that
 * hold no code, then runs a small loop copied into an anonymous executable
 * mapping, and every half second copies it to the next page of that
 * mapping (as a JIT recompiles) and appends the line naming it.  Each new
 * address is one a recorder that read the map before does not find in it,
 * so it looks at the file again: a file of MB megabytes that changed.
 * Runs until killed.  x86-64 only (the code is x86-64 bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 256

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* mov rcx, 1000000; 1: dec rcx; jnz 1b; ret */
	static const uint8_t code[] = { 0x48, 0xb9, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0,
					0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	double mb = argc > 1 ? atof(argv[1]) : 0;
	unsigned long long line = 0;
	char path[64];
	uint8_t *mem;
	unsigned int page = 0;
	FILE *f;

#if !defined(__x86_64__)
	fprintf(stderr, "mapgrow: x86-64 only\n");
	return 77;
#endif
	if (argc != 2 || mb <= 0) {
		fprintf(stderr, "usage: mapgrow MB\n");
		return 2;
	}
	mem = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mapgrow: mmap");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f) {
		perror("mapgrow: /tmp/perf-PID.map");
		return 1;
	}
	/* Lines of about 64 bytes for addresses from 0x10000000 up. */
	while ((double)ftell(f) < mb * 1048576) {
		fprintf(f, "%llx 40 LazyCompile:~filler_%08llu /app/filler.js:%llu\n",
			0x10000000ULL + line * 64, line, line % 1000);
		line++;
	}
	if (fflush(f)) {
		perror("mapgrow: write");
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	for (;;) {
		uint8_t *at = mem + (size_t)page * 4096 + 0x80;
		void (*fn)(void) = (void (*)(void))(uintptr_t)at;
		double end = now() + 0.5;

		memcpy(at, code, sizeof(code));
		fprintf(f, "%lx %zx LazyCompile:*hot_%u /app/hot.js:%u\n",
			(unsigned long)(uintptr_t)at, sizeof(code), page, page);
		if (fflush(f)) {
			perror("mapgrow: write");
			return 1;
		}
		while (now() < end)
			fn();
		page = (page + 1) % PAGES;
	}
}
