// SPDX-License-Identifier: BSD-2-Clause
/*
 * jitwork - JIT code as a test sees it: machine code copied into an
 * anonymous executable mapping, named in /tmp/perf-PID.map the way
 * Node.js, Python 3.12 and JVM agents name theirs, then run until it has
 * used SECONDS of CPU time (of the clock, a loaded machine left a few
 * samples).  x86-64 only (the code is x86-64 bytes).
 *
 *   jitwork SECONDS     prints the map file's path once it is written
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* mov rcx, 2000000; 1: dec rcx; jnz 1b; ret */
	static const uint8_t code[] = { 0x48, 0xb9, 0x80, 0x84, 0x1e, 0, 0, 0, 0, 0,
					0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	double end = now() + (argc > 1 ? atof(argv[1]) : 3);
	char path[64];
	void (*fn)(void);
	uint8_t *mem;
	FILE *f;

#if !defined(__x86_64__)
	fprintf(stderr, "jitwork: x86-64 only\n");
	return 77;
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	/* Somewhere inside the page, as a JIT places code. */
	memcpy(mem + 0x100, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx 40 not_this_one\n", (unsigned long)(uintptr_t)mem);
	fprintf(f, "%lx %zx LazyCompile:*jit_spin /app/jit.js:7\n",
		(unsigned long)(uintptr_t)(mem + 0x100), sizeof(code));
	if (fclose(f))
		return 1;
	printf("%s\n", path);
	fflush(stdout);
	fn = (void (*)(void))(uintptr_t)(mem + 0x100);
	while (now() < end)
		fn();
	return 0;
}
