// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

struct child {
	pid_t pid;
	int go_fd;	/* write end: one byte lets the child exec */
	int err_fd;	/* read end: the exec errno, or EOF once exec succeeded */
	int pidfd;
	int released;
	int reaped;
	int exit_code;
};

static void child_main(int go_fd, int err_fd, char *const argv[])
{
	sigset_t none;
	char c;
	int e;

	/* Blocked and ignored signals survive exec: give CMD the defaults
	 * (stkrec blocks SIGINT/SIGTERM and ignores SIGPIPE). */
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* EOF instead of the byte: stkrec gave up (or died) before release. */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	close(go_fd);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

struct child *child__spawn(char *const argv[])
{
	int go[2] = { -1, -1 }, er[2] = { -1, -1 };
	struct child *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->go_fd = c->err_fd = c->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		err = -errno;
		goto fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		err = -errno;
		goto fail;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(er[0]);
		child_main(go[0], er[1], argv);
	}
	close(go[0]);
	close(er[1]);
	c->go_fd = go[1];
	c->err_fd = er[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	return c;
fail:
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (er[0] >= 0) {
		close(er[0]);
		close(er[1]);
	}
	free(c);
	errno = -err;
	return NULL;
}

pid_t child__pid(const struct child *c)
{
	return c->pid;
}

int child__pidfd(const struct child *c)
{
	return c->pidfd;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static int child__reap(struct child *c, int flags, int *exit_code)
{
	int status;
	pid_t r;

	if (c->reaped) {
		*exit_code = c->exit_code;
		return 1;
	}
	do
		r = waitpid(c->pid, &status, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	c->reaped = 1;
	c->exit_code = exit_code_of(status);
	*exit_code = c->exit_code;
	return 1;
}

int child__release(struct child *c)
{
	char go = 1;
	int e, code;
	ssize_t n;

	if (write(c->go_fd, &go, 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	c->released = 1;
	/* The error pipe is close-on-exec: EOF means the exec succeeded. */
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		child__reap(c, 0, &code);
		return -e;
	}
	return 0;
}

int child__try_wait(struct child *c, int *exit_code)
{
	return child__reap(c, WNOHANG, exit_code);
}

int child__wait(struct child *c, int *exit_code)
{
	int r = child__reap(c, 0, exit_code);

	return r < 0 ? r : 0;
}

int child__kill(struct child *c, int sig)
{
	if (c->reaped)
		return 0;
	if (kill(c->pid, sig) < 0)
		return -errno;
	return 0;
}

void child__free(struct child *c)
{
	int code;

	if (!c)
		return;
	if (!c->released && !c->reaped) {
		kill(c->pid, SIGKILL);
		child__reap(c, 0, &code);
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}
