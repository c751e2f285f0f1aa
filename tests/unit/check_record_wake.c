// SPDX-License-Identifier: BSD-2-Clause
/*
 * A held wake source (record/engine/wake.c) over eventfds, in a real epoll
 * set: armed, its first record wakes the loop; fired, nothing of it wakes
 * the loop (a record that comes then included) until it is re-armed, which
 * reports what came meanwhile; a group of fds fires once for all of them;
 * the hold doubles while the source stays busy, up to WAKE_HOLD_MAX_NS,
 * and is back to WAKE_HOLD_MIN_NS once a read after a re-arm finds nothing.
 */
#include <check.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "check_main.h"
#include "wake.h"

#define MS 1000000ull

/* What epoll reports now (no wait): the tag of the one event, or -1. */
static int ready(int epfd)
{
	struct epoll_event ev[4];
	int n = epoll_wait(epfd, ev, 4, 0);

	ck_assert_int_le(n, 1);
	return n == 1 ? (int)ev[0].data.u32 : -1;
}

static void post(int fd)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
}

static void take(int fd)
{
	uint64_t v;

	ck_assert_int_eq(read(fd, &v, sizeof(v)), sizeof(v));
}

START_TEST(fires_once_then_held_until_rearmed)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct wake w;

	ck_assert_int_ge(epfd, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(wake__add(&w, epfd, 7, &fd, 1), 0);
	ck_assert_uint_eq(wake__next(&w), UINT64_MAX);
	ck_assert_int_eq(ready(epfd), -1);
	post(fd);
	ck_assert_int_eq(ready(epfd), 7);
	wake__fired(&w, 100 * MS);
	ck_assert_uint_eq(wake__next(&w), 100 * MS + WAKE_HOLD_MIN_NS);
	/* Held: the record left unread, and a new one, wake nothing. */
	post(fd);
	ck_assert_int_eq(ready(epfd), -1);
	ck_assert(!wake__due(&w, 100 * MS + WAKE_HOLD_MIN_NS - 1));
	ck_assert(wake__due(&w, 100 * MS + WAKE_HOLD_MIN_NS));
	/* Re-armed: what came while held is reported at once. */
	ck_assert_int_eq(wake__rearm(&w, 100 * MS + WAKE_HOLD_MIN_NS), 0);
	ck_assert_uint_eq(wake__next(&w), UINT64_MAX);
	ck_assert_int_eq(ready(epfd), 7);
	wake__fired(&w, 103 * MS);
	take(fd);
	ck_assert_int_eq(wake__rearm(&w, 120 * MS), 0);
	ck_assert_int_eq(ready(epfd), -1);
	wake__free(&w);
	close(fd);
	close(epfd);
}
END_TEST

START_TEST(a_group_fires_once_for_all)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), fds[3], i;
	struct wake w;

	ck_assert_int_ge(epfd, 0);
	for (i = 0; i < 3; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ck_assert_int_ge(fds[i], 0);
	}
	ck_assert_int_eq(wake__add(&w, epfd, 3, fds, 3), 0);
	post(fds[2]);
	ck_assert_int_eq(ready(epfd), 3);
	wake__fired(&w, 10 * MS);
	post(fds[0]);
	post(fds[1]);
	ck_assert_int_eq(ready(epfd), -1);
	ck_assert_int_eq(wake__rearm(&w, 20 * MS), 0);
	ck_assert_int_eq(ready(epfd), 3);
	wake__fired(&w, 20 * MS);
	for (i = 0; i < 3; i++)
		take(fds[i]);
	ck_assert_int_eq(wake__rearm(&w, 40 * MS), 0);
	ck_assert_int_eq(ready(epfd), -1);
	wake__free(&w);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(epfd);
}
END_TEST

START_TEST(hold_grows_while_busy_and_resets_when_quiet)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t t = 1000 * MS, hold = WAKE_HOLD_MIN_NS;
	struct wake w;
	int i;

	ck_assert_int_eq(wake__add(&w, epfd, 1, &fd, 1), 0);
	/* The first fire after a quiet while: the shortest hold. */
	wake__fired(&w, t);
	ck_assert_uint_eq(wake__next(&w), t + WAKE_HOLD_MIN_NS);
	for (i = 0; i < 8; i++) {
		t = wake__next(&w);
		ck_assert_int_eq(wake__rearm(&w, t), 0);
		/* The read after the re-arm found records: busy. */
		wake__read(&w, 1);
		hold = hold * 2 < WAKE_HOLD_MAX_NS ? hold * 2 : WAKE_HOLD_MAX_NS;
		/* Fired right after the re-arm: still busy. */
		wake__fired(&w, t);
		hold = hold * 2 < WAKE_HOLD_MAX_NS ? hold * 2 : WAKE_HOLD_MAX_NS;
		ck_assert_uint_eq(wake__next(&w), t + hold);
	}
	ck_assert_uint_eq(hold, WAKE_HOLD_MAX_NS);
	/* Quiet: the read after the re-arm finds nothing, and the next
	 * fire comes long after. */
	t = wake__next(&w);
	ck_assert_int_eq(wake__rearm(&w, t), 0);
	wake__read(&w, 0);
	wake__fired(&w, t + 1000 * MS);
	ck_assert_uint_eq(wake__next(&w), t + 1000 * MS + WAKE_HOLD_MIN_NS);
	wake__free(&w);
	close(fd);
	close(epfd);
}
END_TEST

START_TEST(free_of_an_initialised_one_does_nothing)
{
	struct wake w;

	wake__init(&w);
	ck_assert_uint_eq(wake__next(&w), UINT64_MAX);
	ck_assert(!wake__due(&w, UINT64_MAX));
	wake__free(&w);
	wake__free(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_wake");
	TCase *tc = tcase_create("wake");

	tcase_add_test(tc, fires_once_then_held_until_rearmed);
	tcase_add_test(tc, a_group_fires_once_for_all);
	tcase_add_test(tc, hold_grows_while_busy_and_resets_when_quiet);
	tcase_add_test(tc, free_of_an_initialised_one_does_nothing);
	suite_add_tcase(s, tc);
	return check_run_fork(s, CK_NOFORK);
}
