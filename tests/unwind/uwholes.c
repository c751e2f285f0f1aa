// SPDX-License-Identifier: BSD-2-Clause
/*
 * uwholes.c - the unwinder's holes found on real programs, each as a
 * workload with a known stack (tests/e2e/unwind_holes.sh).  Built with
 * frame pointers (-O2 -fno-omit-frame-pointer, mk/unwind.mk) and CFI, as
 * Node.js's binary is, against the distribution's libc (CFI, no frame
 * pointers).
 *
 *   uwholes [-c] nodelike [SECS]  main;nl_outer;nl_trampoline;nl_work:
 *                       nl_trampoline is assembly without CFI that keeps a
 *                       frame-pointer frame (as V8's builtins, which enter
 *                       JIT code); the table walk must cross it by frame
 *                       pointer and go on to _start, where the
 *                       frame-pointer walk alone ends in libc
 *   uwholes [-c] deep N [SECS]    main;deep_rec x N;deep_leaf: a stack
 *                       deeper than the unwinder takes
 *   uwholes vfork N               main;vf_loop;vf_once;__vfork N times, each
 *                       child exiting at once: the parent waits in
 *                       __vfork, whose CFI keeps the return address in rdi
 *                       (off-CPU: N episodes there, each with a known stack)
 *   uwholes spawn N               main;sp_loop;sp_once;posix_spawn N times of
 *                       /bin/true: the parent waits in clone3 until each
 *                       child has exec'd (CLONE_VFORK), just past the
 *                       syscall, where glibc's CFI stops (off-CPU: N
 *                       episodes there, each with a known stack)
 *   uwholes [-c] lazy SECS        main;lz_loop;lz_call, which calls
 *                       libuwctor.so's uwctor_linked() through the PLT:
 *                       uwholes is linked -z lazy, and with LD_BIND_NOT=1
 *                       ld.so binds every call anew, so the time goes to
 *                       ld.so's _dl_fixup under _dl_runtime_resolve, whose
 *                       CFA is on rbx (as a program binding its symbols
 *                       at start-up)
 *   uwholes [-c] ctor SECS        burn in the constructor of libuwctor.so
 *                       (uwctor.c), which ld.so's _dl_init runs from its
 *                       entry point, before the program's: the stack ends
 *                       in ld.so's entry code (glibc runs the program's
 *                       own constructors from __libc_start_main)
 *
 * SECS (default 3) of the clock, or with -c of this process's CPU time, so
 * a recording at F Hz gets about SECS x F samples however busy the
 * machine is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

void uwctor_linked(void); /* libuwctor.so */

volatile uint64_t sink;

static clockid_t run_clock = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec ts;

	clock_gettime(run_clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A local array gives it a frame, so the frame pointers find its caller
 * (GCC sets none up in a leaf that needs no stack, whatever the flags). */
NOINLINE static uint64_t burn(unsigned int n)
{
	volatile uint64_t a[4] = { 1, 2, 3, 4 };
	uint64_t h = n;
	unsigned int i;

	for (i = 0; i < n * 64; i++)
		h = (h ^ a[i & 3]) * 0x100000001B3ULL;
	return h;
}

/* ---- nodelike ---- */

/* Called from the assembly below: global, with C's calling convention. */
NOINLINE void nl_work(void)
{
	sink += burn(2000);
}

void nl_trampoline(void);

/* A frame-pointer frame and no CFI: no .cfi_* directives, so no FDE
 * covers it (the unwind table has a gap there).  No .type either, as
 * ld.so's _start: a code label (STT_NOTYPE), which the report names. */
__asm__(".text\n"
	".globl nl_trampoline\n"
	"nl_trampoline:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call nl_work\n"
	"	pop %rbp\n"
	"	ret\n");

NOINLINE static void nl_outer(double secs)
{
	double end = now() + secs;

	while (now() < end)
		nl_trampoline();
}

/* ---- deep ---- */

NOINLINE static uint64_t deep_leaf(void)
{
	return burn(4000);
}

NOINLINE static uint64_t deep_rec(unsigned int n)
{
	if (n <= 1)
		return deep_leaf();
	return deep_rec(n - 1) + n; /* not a tail call */
}

/* ---- spawn ---- */

extern char **environ;

NOINLINE static pid_t sp_once(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid;

	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
		return -1;
	return pid;
}

NOINLINE static int sp_loop(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pid_t pid = sp_once();

		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}

/* ---- lazy ---- */

NOINLINE static void lz_call(void)
{
	uwctor_linked(); /* through the PLT: bound anew with LD_BIND_NOT */
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void lz_loop(double secs)
{
	double end = now() + secs;
	unsigned int i;

	while (now() < end)
		for (i = 0; i < 1000; i++)
			lz_call();
}

/* ---- vfork ---- */

/* Nothing of the caller's to clobber: the child returns nowhere. */
NOINLINE static pid_t vf_once(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	return pid;
}

NOINLINE static int vf_loop(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pid_t pid = vf_once();

		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: uwholes [-c] nodelike [SECS] | deep N [SECS] | vfork N | "
			"ctor SECS | lazy SECS | spawn N\n");
	return 2;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > i && strcmp(argv[i], "-c") == 0) {
		run_clock = CLOCK_PROCESS_CPUTIME_ID;
		i++;
	}
	if (argc <= i)
		return usage();
	if (strcmp(argv[i], "nodelike") == 0) {
		nl_outer(argc > i + 1 ? atof(argv[i + 1]) : 3);
	} else if (strcmp(argv[i], "deep") == 0 && argc > i + 1) {
		unsigned int n = (unsigned int)atoi(argv[i + 1]);
		double end = now() + (argc > i + 2 ? atof(argv[i + 2]) : 3);

		while (now() < end)
			sink += deep_rec(n);
	} else if (strcmp(argv[i], "vfork") == 0 && argc > i + 1) {
		return vf_loop((unsigned int)atoi(argv[i + 1]));
	} else if (strcmp(argv[i], "spawn") == 0 && argc > i + 1) {
		return sp_loop((unsigned int)atoi(argv[i + 1]));
	} else if (strcmp(argv[i], "lazy") == 0 && argc > i + 1) {
		lz_loop(atof(argv[i + 1]));
	} else if (strcmp(argv[i], "ctor") == 0) {
		uwctor_linked(); /* its constructor did the work */
	} else {
		return usage();
	}
	return 0;
}
