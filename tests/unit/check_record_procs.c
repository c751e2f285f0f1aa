// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder's processes (record/procs/procs.c), without the watcher or
 * BPF: a snapshot of a process no exit event was seen of (it exec'ed and
 * exited unsampled: the kernel announces only the exits of processes it
 * announced since their last exec) is forgotten once its pid is free, so
 * that an exec loop does not leave a snapshot behind per child for good;
 * a live process keeps its own.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "procs.h"

START_TEST(snapshot_of_a_process_gone_without_an_exit_event_is_forgotten)
{
	uint64_t here = (uint64_t)(uintptr_t)&check_run_fork, seq;
	struct procs_stats st;
	struct procs *p;
	pid_t child;

	p = procs__new();
	ck_assert_ptr_nonnull(p);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)child, "child", 1), 0);
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)getpid(), "self", 1), 0);
	/* Forked from us: our code is mapped in it too. */
	ck_assert_ptr_nonnull(procs__mapping(p, (uint32_t)child, here));
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	/* No exit event (procs__exited()) comes: found gone at the 16th
	 * purge, forgotten two flushes later, as an exit seen then would. */
	for (seq = 2; seq < 2 + 16; seq++)
		procs__purge(p, seq, 0);
	procs__stats(p, &st);
	ck_assert_uint_eq(st.exits_unseen, 1);
	ck_assert(procs__gone(p, (uint32_t)child));
	ck_assert_ptr_nonnull(procs__mapping(p, (uint32_t)child, here));
	for (; seq < 2 + 18; seq++)
		procs__purge(p, seq, 0);
	ck_assert_ptr_null(procs__mapping(p, (uint32_t)child, here));
	/* A live process keeps its snapshot, however many checks. */
	for (; seq < 2 + 64; seq++)
		procs__purge(p, seq, 0);
	ck_assert(!procs__gone(p, (uint32_t)getpid()));
	ck_assert_ptr_nonnull(procs__mapping(p, (uint32_t)getpid(), here));
	procs__stats(p, &st);
	ck_assert_uint_eq(st.exits_unseen, 1);
	procs__free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_procs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, snapshot_of_a_process_gone_without_an_exit_event_is_forgotten);
	suite_add_tcase(s, tc);
	return check_run(s);
}
