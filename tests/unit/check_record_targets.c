// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_targets: the -p/-t watcher says a target is alive while it
 * runs, gone once it has exited (a zombie not yet reaped included), and
 * a task already gone at the start counts as gone.
 */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "targets.h"

/* A child that waits until it is killed. */
static pid_t spawn_waiter(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

START_TEST(process_alive_then_gone_when_it_exits_unreaped)
{
	int status;
	pid_t pid = spawn_waiter();
	uint32_t id = (uint32_t)pid;
	struct targets *t = targets__open(&id, 1, NULL, 0);
	struct pollfd p;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(targets__nr_fds(t), 1);
	ck_assert_uint_eq(targets__check(t), 1);
	kill(pid, SIGKILL);
	/* The pidfd polls readable once the child has exited, reaped or not. */
	p = (struct pollfd){ .fd = targets__fd(t, 0), .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	ck_assert_uint_eq(targets__check(t), 0);
	targets__free(t);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}
END_TEST

START_TEST(two_targets_alive_until_the_last_is_gone)
{
	pid_t a = spawn_waiter(), b = spawn_waiter();
	uint32_t ids[2] = { (uint32_t)a, (uint32_t)b };
	struct targets *t = targets__open(ids, 2, NULL, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(targets__check(t), 2);
	kill(a, SIGKILL);
	ck_assert_int_eq(waitpid(a, NULL, 0), a);
	ck_assert_uint_eq(targets__check(t), 1);
	kill(b, SIGKILL);
	ck_assert_int_eq(waitpid(b, NULL, 0), b);
	ck_assert_uint_eq(targets__check(t), 0);
	targets__free(t);
}
END_TEST

START_TEST(task_gone_before_the_start_counts_as_gone)
{
	pid_t pid = spawn_waiter();
	uint32_t id = (uint32_t)pid;
	struct targets *t;

	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	t = targets__open(&id, 1, NULL, 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(targets__check(t), 0);
	targets__free(t);
}
END_TEST

static int thread_pipe[2];
static volatile pid_t thread_tid;

static void *thread_main(void *arg)
{
	char c;

	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	while (read(thread_pipe[0], &c, 1) > 0)
		;
	return NULL;
}

START_TEST(thread_alive_then_gone_when_it_exits)
{
	struct targets *t;
	pthread_t th;
	uint32_t id;
	int i;

	ck_assert_int_eq(pipe(thread_pipe), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, thread_main, NULL), 0);
	while (!thread_tid)
		usleep(1000);
	id = (uint32_t)thread_tid;
	t = targets__open(NULL, 0, &id, 1);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(targets__check(t), 1);
	close(thread_pipe[1]);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	/* pthread_join returns at the exit's tid futex wake, before the
	 * kernel has released the task (the pidfd and /proc see it then):
	 * wait for that, a moment at most (bounded, not timed). */
	for (i = 0; i < 5000 && targets__check(t) != 0; i++)
		usleep(1000);
	ck_assert_uint_eq(targets__check(t), 0);
	targets__free(t);
	close(thread_pipe[0]);
}
END_TEST

START_TEST(free_accepts_null)
{
	targets__free(NULL);
	ck_assert_uint_eq(targets__check(NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_targets");
	TCase *tc = tcase_create("targets");

	tcase_add_test(tc, process_alive_then_gone_when_it_exits_unreaped);
	tcase_add_test(tc, two_targets_alive_until_the_last_is_gone);
	tcase_add_test(tc, task_gone_before_the_start_counts_as_gone);
	tcase_add_test(tc, thread_alive_then_gone_when_it_exits);
	tcase_add_test(tc, free_accepts_null);
	suite_add_tcase(s, tc);
	return check_run_fork(s, CK_NOFORK);
}
