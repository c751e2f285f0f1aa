// SPDX-License-Identifier: BSD-2-Clause
/*
 * offwork - an off-CPU workload with known blocking stacks and a known
 * waker, for testing and demonstrating stkrec offcpu / offwake.
 *
 *   offwork [-l] [SECONDS [PERIOD_MS]]    (default: 5 seconds, 10 ms)
 *
 * Two threads share a pipe:
 *
 *   ow-waiter: waiter_main -> waiter_loop -> waiter_block -> read(pipe)
 *              blocked nearly all the time, woken by every write;
 *   ow-writer: writer_main -> writer_loop -> writer_sleep  (PERIOD_MS)
 *                                         -> writer_wake  -> write(pipe)
 *                                         -> writer_nap   (100 us)
 *
 * so offwake shows waiter_block's stack on the target side and
 * writer_wake's on the waker side; the waiter's blocked time is the run
 * time; the writer blocks PERIOD_MS in writer_sleep and ~100 us in
 * writer_nap (for -m/-M tests).  When SECONDS have passed the writer
 * closes the pipe and the waiter reads EOF.  On start it prints
 * "pid P waiter T writer T" and flushes, for tests that filter by id.
 *
 * Debian's glibc is built without frame pointers: a thread blocked inside
 * libc's read() has a user stack whose first frame is in read() while %rbp
 * still holds its caller's frame, so a frame-pointer unwinder goes from
 * read() straight to the caller's caller and waiter_block vanishes.  So by
 * default the syscalls go through sys3() below, a function of this file
 * (built with frame pointers) that makes the syscall itself.  -l uses
 * libc's read(), write() and nanosleep() instead, to show the difference.
 *
 * Exit status 0; 2 on bad arguments; 1 if a syscall fails.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

#define NAP_NS 100000L

static int use_libc;
static long period_ms = 10;
static double stop_at;
static int pipe_fd[2];
/* Thread ids, printed once both threads have set them. */
static pid_t waiter_tid, writer_tid;
static pthread_barrier_t started;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A three-argument syscall made here, in a function with a frame: the
 * kernel's frame-pointer walk of a thread blocked in it starts at its
 * return address and follows %rbp through every caller.  The volatile
 * local makes GCC set up the frame (it omits it in a leaf that needs no
 * stack, even with -mno-omit-leaf-frame-pointer).  Returns the kernel's
 * value: >= 0, or -errno.
 */
NOINLINE long sys3(long nr, long a, long b, long c)
{
	volatile long frame = nr;
	long ret;

#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(frame), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = frame;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	ret = x0;
#else
	ret = syscall(frame, a, b, c);
	if (ret < 0)
		ret = -errno;
#endif
	return ret;
}

static long do_read(int fd, void *buf, size_t n)
{
	long r;

	if (!use_libc)
		return sys3(SYS_read, fd, (long)buf, (long)n);
	r = read(fd, buf, n);
	return r < 0 ? -errno : r;
}

static long do_write(int fd, const void *buf, size_t n)
{
	long r;

	if (!use_libc)
		return sys3(SYS_write, fd, (long)buf, (long)n);
	r = write(fd, buf, n);
	return r < 0 ? -errno : r;
}

static long do_sleep(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	if (!use_libc)
		return sys3(SYS_nanosleep, (long)&ts, 0, 0);
	return nanosleep(&ts, NULL) ? -errno : 0;
}

/* The waiter's known blocking function. */
NOINLINE long waiter_block(int fd)
{
	char buf[64];

	return do_read(fd, buf, sizeof(buf));
}

NOINLINE long waiter_loop(int fd)
{
	long r, total = 0;

	while ((r = waiter_block(fd)) > 0)
		total += r;
	return r < 0 ? r : total;
}

NOINLINE void *waiter_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "ow-waiter");
	waiter_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	return (void *)(waiter_loop(pipe_fd[0]) < 0 ? 1L : 0L);
}

NOINLINE long writer_sleep(void)
{
	return do_sleep(period_ms * 1000000L);
}

/* The waker's known function: its write wakes the waiter. */
NOINLINE long writer_wake(int fd)
{
	return do_write(fd, "x", 1);
}

NOINLINE long writer_nap(void)
{
	return do_sleep(NAP_NS);
}

NOINLINE long writer_loop(int fd)
{
	long err = 0;

	while (!err && now() < stop_at) {
		err = writer_sleep();
		if (!err && writer_wake(fd) != 1)
			err = -EIO;
		if (!err)
			err = writer_nap();
	}
	return err;
}

NOINLINE void *writer_main(void *arg)
{
	long err;

	(void)arg;
	pthread_setname_np(pthread_self(), "ow-writer");
	writer_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	err = writer_loop(pipe_fd[1]);
	close(pipe_fd[1]); /* the waiter reads EOF */
	return (void *)(err ? 1L : 0L);
}

static int usage(void)
{
	fprintf(stderr, "usage: offwork [-l] [SECONDS [PERIOD_MS]]\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t waiter, writer;
	void *wret, *rret;
	double seconds = 5;
	char *end;
	int arg = 1;

	if (argc > arg && strcmp(argv[arg], "-l") == 0) {
		use_libc = 1;
		arg++;
	}
	if (argc > arg) {
		seconds = strtod(argv[arg++], &end);
		if (*end || !(seconds > 0))
			return usage();
	}
	if (argc > arg) {
		period_ms = strtol(argv[arg++], &end, 10);
		if (*end || period_ms < 1 || period_ms > 10000)
			return usage();
	}
	if (argc > arg)
		return usage();
	if (pipe(pipe_fd)) {
		perror("offwork: pipe");
		return 1;
	}
	stop_at = now() + seconds;
	pthread_barrier_init(&started, NULL, 3);
	if (pthread_create(&waiter, NULL, waiter_main, NULL) ||
	    pthread_create(&writer, NULL, writer_main, NULL)) {
		fprintf(stderr, "offwork: cannot create threads\n");
		return 1;
	}
	pthread_barrier_wait(&started);
	printf("pid %d waiter %d writer %d\n", (int)getpid(), (int)waiter_tid, (int)writer_tid);
	fflush(stdout);
	pthread_join(writer, &wret);
	pthread_join(waiter, &rret);
	return wret || rret ? 1 : 0;
}
