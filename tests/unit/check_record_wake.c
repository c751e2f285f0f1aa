// SPDX-License-Identifier: BSD-2-Clause
/*
 * A held wake source (record/engine/wake.c) over eventfds, in a real epoll
 * set: armed, its first record wakes the loop; fired, nothing of it wakes
 * the loop (a record that comes then included) while its reads at the end
 * of each hold find records, each hold twice as long up to
 * WAKE_HOLD_MAX_NS; a read that finds nothing re-arms it (what comes then
 * wakes the loop again) with the shortest hold; a group of fds fires once
 * for all of them.
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

START_TEST(fires_once_then_held_until_a_read_finds_nothing)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t t = 100 * MS;
	struct wake w;

	ck_assert_int_ge(epfd, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(wake__add(&w, epfd, 7, &fd, 1), 0);
	ck_assert_uint_eq(wake__next(&w), UINT64_MAX);
	ck_assert_int_eq(ready(epfd), -1);
	post(fd);
	ck_assert_int_eq(ready(epfd), 7);
	wake__fired(&w, t);
	take(fd);
	ck_assert_uint_eq(wake__next(&w), t + WAKE_HOLD_MIN_NS);
	/* Held: a new record wakes nothing. */
	post(fd);
	ck_assert_int_eq(ready(epfd), -1);
	ck_assert(!wake__due(&w, t + WAKE_HOLD_MIN_NS - 1));
	ck_assert(wake__due(&w, t + WAKE_HOLD_MIN_NS));
	/* The read at the end of the hold found it: held twice as long. */
	t += WAKE_HOLD_MIN_NS;
	take(fd);
	ck_assert_int_eq(wake__read(&w, t, 1), 0);
	ck_assert_uint_eq(wake__next(&w), t + 2 * WAKE_HOLD_MIN_NS);
	post(fd);
	ck_assert_int_eq(ready(epfd), -1);
	/* Then one that finds nothing arms it: what waits is reported. */
	t += 2 * WAKE_HOLD_MIN_NS;
	ck_assert_int_eq(wake__read(&w, t, 0), 1);
	ck_assert_uint_eq(wake__next(&w), UINT64_MAX);
	ck_assert_int_eq(ready(epfd), 7);
	/* Quiet again: the shortest hold. */
	wake__fired(&w, 500 * MS);
	ck_assert_uint_eq(wake__next(&w), 500 * MS + WAKE_HOLD_MIN_NS);
	take(fd);
	ck_assert_int_eq(wake__read(&w, 502 * MS, 0), 1);
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
	/* Re-armed with records waiting in two of them: one event. */
	ck_assert_int_eq(wake__read(&w, 20 * MS, 0), 1);
	ck_assert_int_eq(ready(epfd), 3);
	ck_assert_int_eq(ready(epfd), -1);
	wake__fired(&w, 20 * MS);
	for (i = 0; i < 3; i++)
		take(fds[i]);
	ck_assert_int_eq(wake__read(&w, 40 * MS, 0), 1);
	ck_assert_int_eq(ready(epfd), -1);
	wake__free(&w);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(epfd);
}
END_TEST

START_TEST(hold_grows_to_the_longest_while_busy)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t t = 1000 * MS, hold = WAKE_HOLD_MIN_NS;
	struct wake w;
	int i;

	ck_assert_int_eq(wake__add(&w, epfd, 1, &fd, 1), 0);
	wake__fired(&w, t);
	for (i = 0; i < 8; i++) {
		t = wake__next(&w);
		ck_assert_int_eq(wake__read(&w, t, 1), 0);
		hold = hold * 2 < WAKE_HOLD_MAX_NS ? hold * 2 : WAKE_HOLD_MAX_NS;
		ck_assert_uint_eq(wake__next(&w), t + hold);
	}
	ck_assert_uint_eq(hold, WAKE_HOLD_MAX_NS);
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

	tcase_add_test(tc, fires_once_then_held_until_a_read_finds_nothing);
	tcase_add_test(tc, a_group_fires_once_for_all);
	tcase_add_test(tc, hold_grows_to_the_longest_while_busy);
	tcase_add_test(tc, free_of_an_initialised_one_does_nothing);
	suite_add_tcase(s, tc);
	return check_run_fork(s, CK_NOFORK);
}
