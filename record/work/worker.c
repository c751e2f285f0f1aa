// SPDX-License-Identifier: BSD-2-Clause
/*
 * worker.c - the per-binary work thread (see worker.h): a queue per
 * owner taken round-robin, results handed back through an eventfd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "worker.h"

/*
 * Each owner but root gets a share of one CPU: its jobs' CPU time is
 * taken from a credit that grows by OWNER_SHARE_PCT % of the time that
 * passes, up to OWNER_BURST_NS; an owner out of credit waits.  A user
 * mapping new files whose tables each take the whole build budget (a
 * second) costs the recorder at most this share, not a CPU.  A user's
 * first few large binaries (clang's table: ~1 s) fit in the burst.
 * Root's files are the system's, built once and then cached (tcache.c).
 */
#define OWNER_SHARE_PCT 10
#define OWNER_BURST_NS (4 * 1000000000ll)

struct owner_q {
	uint32_t owner;
	struct worker_job *head, *tail;
	uint64_t used_ns;		/* time its jobs ran, in all */
	int64_t credit_ns;		/* CPU time it may use now (owner != 0) */
	uint64_t credit_t;		/* when credit_ns was last grown */
};

struct worker {
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic int stop;
	int nice;
	int efd;
	/* Under @lock: the waiting jobs, the next owner to serve, the done
	 * ones (newest first). */
	struct owner_q *q;
	size_t nr_q, cap_q, next_q;
	struct worker_job *done;
	struct worker_stats st;
};

/* @q's credit grown to @now; how long until it is positive (0: it is). */
static uint64_t credit_wait(struct owner_q *q, uint64_t now)
{
	uint64_t steps;

	if (!q->owner)
		return 0;
	steps = (now - q->credit_t) / 100;

	/* Whole 100 ns steps: the rest counts at the next look. */
	q->credit_ns += (int64_t)(steps * OWNER_SHARE_PCT);
	if (q->credit_ns > OWNER_BURST_NS)
		q->credit_ns = OWNER_BURST_NS;
	q->credit_t += steps * 100;
	return q->credit_ns > 0 ? 0 : (uint64_t)(-q->credit_ns + 1) * 100 / OWNER_SHARE_PCT;
}

/* The next job: of the owner whose jobs have run the least time so far
 * (round-robin between equals), so that one user's slow files (a second
 * each) cannot hold up another's quick ones, among the owners with
 * credit; NULL if none, with *@sleep_ns the time until an owner waiting
 * for credit has some (0: no job waits).  Under @lock. */
static struct worker_job *take(struct worker *w, struct owner_q **from, uint64_t *sleep_ns)
{
	struct owner_q *best = NULL;
	uint64_t now = mono_ns();
	size_t i, k = 0;

	*sleep_ns = 0;
	for (i = 0; i < w->nr_q; i++) {
		struct owner_q *q = &w->q[(w->next_q + i) % w->nr_q];
		uint64_t wait;

		if (!q->head)
			continue;
		wait = credit_wait(q, now);
		if (wait) {
			if (!*sleep_ns || wait < *sleep_ns)
				*sleep_ns = wait;
			continue;
		}
		if (!best || q->used_ns < best->used_ns) {
			best = q;
			k = i;
		}
	}
	if (!best)
		return NULL;
	*from = best;
	w->next_q = (w->next_q + k + 1) % w->nr_q;
	{
		struct worker_job *j = best->head;

		best->head = j->next;
		if (!best->head)
			best->tail = NULL;
		return j;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;

	/*
	 * At the main thread's priority (inherited), no higher: a worker
	 * at nice -10 beside a main thread at 0 left the main loop a tenth
	 * of their CPU while a build ran: flushes 2.5 s late under load.
	 */
	if (w->nice != WORKER_NICE_SAME)
		setpriority(PRIO_PROCESS, (id_t)gettid(), w->nice);
	pthread_mutex_lock(&w->lock);
	while (!atomic_load(&w->stop)) {
		struct owner_q *q = NULL;
		uint64_t sleep_ns, t0, t1, c0;
		struct worker_job *j = take(w, &q, &sleep_ns);
		uint32_t owner;
		size_t i;

		if (!j) {
			if (sleep_ns) {
				struct timespec ts;
				uint64_t until = mono_ns() + sleep_ns;

				w->st.share_waits++;
				ts.tv_sec = (time_t)(until / 1000000000ull);
				ts.tv_nsec = (long)(until % 1000000000ull);
				pthread_cond_timedwait(&w->cond, &w->lock, &ts);
			} else {
				pthread_cond_wait(&w->cond, &w->lock);
			}
			continue;
		}
		t0 = mono_ns();
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (t0 - j->queued_ns > w->st.wait_ns_max)
			w->st.wait_ns_max = t0 - j->queued_ns;
		owner = q->owner;
		pthread_mutex_unlock(&w->lock);
		j->run(j, &w->stop);
		t1 = mono_ns();
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		pthread_mutex_lock(&w->lock);
		/* Found again: the queues may have moved (realloc). */
		for (i = 0; i < w->nr_q; i++)
			if (w->q[i].owner == owner) {
				w->q[i].used_ns += t1 - t0;
				w->q[i].credit_ns -= (int64_t)c0;
			}
		w->st.cpu_ns += c0;
		w->st.jobs++;
		w->st.run_ns += t1 - t0;
		if (t1 - t0 > w->st.run_ns_max)
			w->st.run_ns_max = t1 - t0;
		j->next = w->done;
		w->done = j;
		/* Fails only at 2^64 - 1 uncollected wakeups: harmless. */
		(void)!write(w->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct worker *worker__new(int nice)
{
	struct worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	if (!w)
		return NULL;
	w->efd = -1;
	w->nice = nice;
	pthread_mutex_init(&w->lock, NULL);
	{
		pthread_condattr_t ca;

		/* Timed waits (for an owner's share) on the monotonic clock. */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&w->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		err = errno;
		goto fail;
	}
	/* Signals are the main thread's (its epoll_pwait takes them). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	w->started = 1;
	return w;
fail:
	worker__free(w);
	errno = err;
	return NULL;
}

int worker__fd(const struct worker *w)
{
	return w->efd;
}

void worker__submit(struct worker *w, struct worker_job *j)
{
	struct owner_q *q = NULL;
	size_t i;

	j->next = NULL;
	j->queued_ns = mono_ns();
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->nr_q; i++)
		if (w->q[i].owner == j->owner)
			q = &w->q[i];
	if (!q) {
		if (w->nr_q == w->cap_q) {
			size_t cap = w->cap_q ? w->cap_q * 2 : 8;
			struct owner_q *n = realloc(w->q, cap * sizeof(*n));

			if (!n) {
				/* Out of memory: the job goes to the
				 * first owner's queue rather than nowhere. */
				if (!w->nr_q)
					goto out;
				q = &w->q[0];
				goto add;
			}
			w->q = n;
			w->cap_q = cap;
		}
		q = &w->q[w->nr_q++];
		*q = (struct owner_q){ .owner = j->owner, .credit_ns = OWNER_BURST_NS,
				       .credit_t = j->queued_ns };
	}
add:
	if (j->urgent) {
		j->next = q->head;
		q->head = j;
		if (!q->tail)
			q->tail = j;
	} else {
		if (q->tail)
			q->tail->next = j;
		else
			q->head = j;
		q->tail = j;
	}
	w->st.queued++;
	if (w->st.queued > w->st.queued_max)
		w->st.queued_max = w->st.queued;
	pthread_cond_signal(&w->cond);
out:
	pthread_mutex_unlock(&w->lock);
}

void worker__promote(struct worker *w, struct worker_job *j)
{
	struct worker_job **pp, *prev = NULL;
	size_t i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->nr_q; i++) {
		struct owner_q *q = &w->q[i];

		if (q->owner != j->owner)
			continue;
		for (pp = &q->head; *pp && *pp != j; pp = &(*pp)->next)
			prev = *pp;
		if (!*pp || pp == &q->head)
			break;
		*pp = j->next;
		if (q->tail == j)
			q->tail = prev;
		j->next = q->head;
		q->head = j;
		break;
	}
	j->urgent = 1;
	pthread_mutex_unlock(&w->lock);
}

int worker__collect(struct worker *w)
{
	struct worker_job *list, *rev = NULL, *j;
	uint64_t v;
	int n = 0;

	if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&w->lock);
	list = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->lock);
	/* In the order they finished. */
	while (list) {
		j = list;
		list = j->next;
		j->next = rev;
		rev = j;
	}
	while (rev) {
		j = rev;
		rev = j->next;
		pthread_mutex_lock(&w->lock);
		w->st.queued--;
		pthread_mutex_unlock(&w->lock);
		j->done(j, 0);
		n++;
	}
	return n;
}

void worker__stats(const struct worker *w, struct worker_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&w->lock);
	*st = w->st;
	pthread_mutex_unlock((pthread_mutex_t *)&w->lock);
}

void worker__free(struct worker *w)
{
	struct worker_job *j;
	size_t i;

	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		atomic_store(&w->stop, 1);
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	while ((j = w->done)) {
		w->done = j->next;
		j->done(j, 1);
	}
	for (i = 0; i < w->nr_q; i++)
		while ((j = w->q[i].head)) {
			w->q[i].head = j->next;
			j->done(j, 1);
		}
	free(w->q);
	if (w->efd >= 0)
		close(w->efd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
