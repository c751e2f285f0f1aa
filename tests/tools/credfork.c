// SPDX-License-Identifier: BSD-2-Clause
/*
 * credfork - a root process that forks, and one side of the fork then runs
 * as nobody (tests/e2e/record_confine.sh: a fork's child does not take the
 * build-ids its parent could read, nor its parent's refusals).
 *
 *   credfork child|parent now|usr1
 *
 * Forks at once (now), or once SIGUSR1 comes (usr1: "ready" on stdout
 * when it may be sent).  child: the child drops to nobody (65534, its
 * groups cleared, with setresgid and setresuid) and spins, the parent
 * waits for it, off the CPU.  parent: the parent drops to nobody, and
 * only then lets the child, which stays root, spin; the parent spins too.
 * Prints "forked PARENT CHILD" on stdout once forked.  Runs until killed
 * (killing the parent kills the child: PR_SET_PDEATHSIG).  Must start as
 * root.
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static int drop(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		perror("credfork: drop to nobody");
		return -1;
	}
	return 0;
}

static void __attribute__((noinline)) spin(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t block, old;
	int child_drops, fds[2];
	char c;
	pid_t pid;

	if (argc != 3 || (strcmp(argv[1], "child") && strcmp(argv[1], "parent")) ||
	    (strcmp(argv[2], "now") && strcmp(argv[2], "usr1"))) {
		fprintf(stderr, "usage: credfork child|parent now|usr1\n");
		return 2;
	}
	child_drops = strcmp(argv[1], "child") == 0;
	if (strcmp(argv[2], "usr1") == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, &old);
		sigaction(SIGUSR1, &sa, NULL);
		printf("ready\n");
		fflush(stdout);
		while (!go)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	if (pipe(fds)) {
		perror("credfork: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("credfork: fork");
		return 1;
	}
	if (pid == 0) {
		if (child_drops && drop())
			_exit(1);
		/* After the drop, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!child_drops && read(fds[0], &c, 1) != 1)
			_exit(1);	/* the parent could not drop */
		spin();
	}
	/* The parent that drops does so first: root on the CPU as little
	 * as it can be once it forked. */
	if (!child_drops && drop())
		return 1;
	printf("forked %d %d\n", (int)getpid(), (int)pid);
	fflush(stdout);
	if (child_drops) {
		waitpid(pid, NULL, 0);
		return 1;
	}
	if (write(fds[1], "x", 1) != 1)
		return 1;
	spin();
	return 0;
}
