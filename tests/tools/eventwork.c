// SPDX-License-Identifier: BSD-2-Clause
/*
 * eventwork - a workload whose events are known exactly, for stkrec trace's
 * tests (tests/e2e/trace_*.sh):
 *
 *   eventwork N M K L [hold|wait]
 *
 * writes_a() does N write(2)s of one byte to /dev/null, writes_b() M;
 * touch_pages() maps K fresh anonymous pages (no transparent huge pages)
 * and touches each once: K page faults there; call_lib() calls
 * evlib_tick() of libeventwork.so L times.  Then it exits, or with "hold"
 * waits in pause(2) for SIGTERM.  With "wait" it first waits for SIGUSR1
 * in sigsuspend(2) (a recorder given its pid is attached by then), then
 * works and holds: /proc/PID/syscall then says pause (34 on x86-64).  It
 * prints nothing: its only writes are those.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

unsigned long evlib_tick(unsigned long n);

static volatile int sink;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) static void writes_a(int fd, long n)
{
	char c = 'a';
	long i;

	for (i = 0; i < n; i++)
		sink += (int)write(fd, &c, 1);
}

__attribute__((noinline)) static void writes_b(int fd, long n)
{
	char c = 'b';
	long i;

	for (i = 0; i < n; i++)
		sink += (int)write(fd, &c, 1);
}

__attribute__((noinline)) static void touch_pages(long k)
{
	long page = sysconf(_SC_PAGESIZE), i;
	volatile char *p;

	if (k <= 0)
		return;
	p = mmap(NULL, (size_t)(k * page), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	/* One fault a page: no huge page may cover several. */
	madvise((void *)p, (size_t)(k * page), MADV_NOHUGEPAGE);
	for (i = 0; i < k; i++)
		p[i * page] = 1;
	sink += p[0];
}

__attribute__((noinline)) static void call_lib(long l)
{
	long i;

	for (i = 0; i < l; i++)
		sink += (int)evlib_tick(1);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 5)
		return 2;
	if (argc > 5 && strcmp(argv[5], "wait") == 0) {
		sigset_t block, old;

		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, &old);
		signal(SIGUSR1, on_usr1);
		while (!go)
			sigsuspend(&old);
	}
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	writes_a(fd, atol(argv[1]));
	writes_b(fd, atol(argv[2]));
	touch_pages(atol(argv[3]));
	call_lib(atol(argv[4]));
	if (argc > 5)
		for (;;)
			pause();
	return sink == -1;
}
