// SPDX-License-Identifier: BSD-2-Clause
/*
 * jitbloat - a JIT with a large perf map that keeps growing, as an
 * unprivileged process can write one (tests/e2e/record_usermem.sh): JIT
 * code in anonymous executable memory named by the first line of its
 * /tmp/perf-PID.map, then MB megabytes of lines naming other addresses;
 * then, every half second, the code compiled again at a new address (as a
 * JIT recompiles), its line and a few more appended, until the process is
 * killed.  Each new address makes new stacks, whose frames a recorder
 * looks up in the map again.  x86-64 only (the code is x86-64 bytes).
 *
 *   jitbloat MB     prints the map file's path once it is written
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

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A line for an address that holds no code: 0x10000000 up, 64 bytes apart. */
static int junk_line(FILE *f, uint64_t i)
{
	return fprintf(f, "%llx 40 LazyCompile:~bloat_function_%08llu /app/bloat.js:%llu\n",
		       (unsigned long long)(0x10000000ULL + i * 64), (unsigned long long)i,
		       (unsigned long long)(i % 1000));
}

#define SLOTS 256

/* "Compiles" the hot function into page @slot of @mem and names it in
 * the map @f: jit_hot_SLOT. */
static int compile(FILE *f, uint8_t *mem, unsigned int slot)
{
	/* mov rcx, 2000000; 1: dec rcx; jnz 1b; ret */
	static const uint8_t code[] = { 0x48, 0xb9, 0x80, 0x84, 0x1e, 0, 0, 0, 0, 0,
					0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	uint8_t *page = mem + slot * 4096;

	memcpy(page + 0x100, code, sizeof(code));
	fprintf(f, "%lx %zx LazyCompile:*jit_hot_%u /app/jit.js:7\n",
		(unsigned long)(uintptr_t)(page + 0x100), sizeof(code), slot);
	return fflush(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t bytes = (uint64_t)(argc > 1 ? atof(argv[1]) : 64) * (1 << 20), i = 0;
	unsigned int slot = 0;
	double next;
	char path[64];
	void (*fn)(void);
	uint8_t *mem;
	FILE *f;

#if !defined(__x86_64__)
	fprintf(stderr, "jitbloat: x86-64 only\n");
	return 77;
#endif
	/* A page per compilation, SLOTS of them, used in turn; one mapping,
	 * writable and executable from the start (no mprotect() that would
	 * split it), so that every snapshot of the process's maps holds it. */
	mem = mmap(NULL, SLOTS * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || compile(f, mem, slot))
		return 1;
	while ((uint64_t)ftell(f) < bytes)
		if (junk_line(f, i++) < 0)
			return 1;
	if (fflush(f))
		return 1;
	printf("%s\n", path);
	fflush(stdout);
	for (next = now() + 0.5;;) {
		fn = (void (*)(void))(uintptr_t)(mem + slot * 4096 + 0x100);
		fn();
		if (now() < next)
			continue;
		next = now() + 0.5;
		slot = (slot + 1) % SLOTS;
		if (compile(f, mem, slot))
			return 1;
		junk_line(f, i++);
		junk_line(f, i++);
		fflush(f);
	}
}
