// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_worker: the per-binary work thread (record/work/worker.c):
 * jobs run in turn between owners, a promoted job first in its owner's
 * queue, results come back on the caller's thread through the fd, and a
 * stop asks the running job to give up and cancels the waiting ones.
 */
#include <check.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check_main.h"
#include "worker.h"

struct tjob {
	struct worker_job j;
	char name;
	int gate;			/* waits for @open (or a stop) */
	int cancelled, done;
	_Atomic int started;
};

static _Atomic int open_gate;
static char order[16];
static _Atomic int nr_order;

static void tjob_run(struct worker_job *wj, const _Atomic int *stop)
{
	struct tjob *t = (struct tjob *)wj;

	atomic_store(&t->started, 1);
	while (t->gate && !atomic_load(&open_gate) && !atomic_load(stop))
		usleep(1000);
	order[atomic_fetch_add(&nr_order, 1)] = t->name;
}

static void tjob_done(struct worker_job *wj, int cancelled)
{
	struct tjob *t = (struct tjob *)wj;

	t->done = 1;
	t->cancelled = cancelled;
}

static void tjob_init(struct tjob *t, char name, uint32_t owner, int gate)
{
	*t = (struct tjob){ .name = name, .gate = gate };
	t->j.owner = owner;
	t->j.run = tjob_run;
	t->j.done = tjob_done;
}

static void reset(void)
{
	atomic_store(&open_gate, 0);
	atomic_store(&nr_order, 0);
	memset(order, 0, sizeof(order));
}

/* Collect until @n jobs are done, waiting on the worker's fd. */
static void collect(struct worker *w, int n)
{
	struct pollfd p = { .fd = worker__fd(w), .events = POLLIN };

	while (n > 0) {
		ck_assert_int_ge(poll(&p, 1, 10000), 1);
		n -= worker__collect(w);
	}
}

START_TEST(owners_are_served_in_turn)
{
	struct worker *w = worker__new(WORKER_NICE_SAME);
	struct tjob gate, a1, a2, a3, b1;

	reset();
	ck_assert_ptr_nonnull(w);
	tjob_init(&gate, 'g', 0, 1);
	tjob_init(&a1, 'a', 1, 0);
	tjob_init(&a2, 'b', 1, 0);
	tjob_init(&a3, 'c', 1, 0);
	tjob_init(&b1, 'X', 2, 0);
	worker__submit(w, &gate.j);
	/* Owner 1 queues three before owner 2's one: it still waits for
	 * only one of them. */
	worker__submit(w, &a1.j);
	worker__submit(w, &a2.j);
	worker__submit(w, &a3.j);
	worker__submit(w, &b1.j);
	atomic_store(&open_gate, 1);
	collect(w, 5);
	ck_assert_str_eq(order, "gaXbc");
	ck_assert(a1.done && !a1.cancelled && b1.done && a3.done);
	worker__free(w);
}
END_TEST

START_TEST(a_promoted_job_goes_first_in_its_queue)
{
	struct worker *w = worker__new(WORKER_NICE_SAME);
	struct tjob gate, a1, a2, a3;
	struct worker_stats st;

	reset();
	tjob_init(&gate, 'g', 0, 1);
	tjob_init(&a1, 'a', 1, 0);
	tjob_init(&a2, 'b', 1, 0);
	tjob_init(&a3, 'c', 1, 0);
	worker__submit(w, &gate.j);
	worker__submit(w, &a1.j);
	worker__submit(w, &a2.j);
	worker__submit(w, &a3.j);
	worker__promote(w, &a3.j);
	atomic_store(&open_gate, 1);
	collect(w, 4);
	ck_assert_str_eq(order, "gcab");
	worker__stats(w, &st);
	ck_assert_uint_eq(st.jobs, 4);
	ck_assert_uint_eq(st.queued, 0);
	ck_assert_uint_ge(st.queued_max, 3);
	worker__free(w);
}
END_TEST

START_TEST(stopping_gives_up_the_running_job_and_cancels_the_rest)
{
	struct worker *w = worker__new(WORKER_NICE_SAME);
	struct tjob gate, a1;

	reset();
	tjob_init(&gate, 'g', 0, 1);
	tjob_init(&a1, 'a', 1, 0);
	worker__submit(w, &gate.j);
	worker__submit(w, &a1.j);
	while (!atomic_load(&gate.started))
		usleep(1000);
	/* The gate never opens: only the stop ends its run. */
	worker__free(w);
	/* Ran, but not collected: cancelled too (its results are not wanted). */
	ck_assert(gate.done && gate.cancelled && a1.done);
	ck_assert(a1.cancelled);
	ck_assert_str_eq(order, "g");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_worker");
	TCase *tc = tcase_create("worker");

	tcase_add_test(tc, owners_are_served_in_turn);
	tcase_add_test(tc, a_promoted_job_goes_first_in_its_queue);
	tcase_add_test(tc, stopping_gives_up_the_running_job_and_cancels_the_rest);
	suite_add_tcase(s, tc);
	return check_run(s);
}
