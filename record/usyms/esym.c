// SPDX-License-Identifier: BSD-2-Clause
/*
 * esym.c - embedded symbols of the recorded binaries and JIT code (see
 * esym.h): which addresses need names, each binary's table as a cache
 * under the memory budget, and the symbols already in the file.
 *
 * What stays per binary for the whole capture is small: its build-id and,
 * for every symbol written, the range of file offsets that symbol surely
 * names (16 bytes each), so that most addresses are answered without the
 * table.  The table itself (tens of MB for a large C++ library) is a cache:
 * kept while the budget has room, dropped least recently used first when
 * a take needs the room, read again when an address it alone can name
 * comes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsyms.h"
#include "esym.h"
#include "hash.h"
#include "idmap.h"
#include "membudget.h"
#include "perfmap.h"
#include "procmaps.h"
#include "procreds.h"
#include "worker.h"

#define PROC_ROOT "/proc"

/* One recorded address waiting for its snapshot. */
struct qaddr {
	uint32_t tgid;
	uint64_t addr;		/* already - 1 for return addresses */
};

/*
 * A symbol written: [start, end) are the file offsets elfsyms__find()
 * surely gives it for, its own extent cut at the next symbol's start.
 */
struct done {
	uint64_t start, end;
};

/* One binary, by build-id. */
struct bin {
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t bid_size;
	int state;		/* 0 not read yet, 1 read once, < 0 -errno: cannot be */
	int all_written;	/* full: the whole table is in the file */
	int pinned;		/* in use: the shrinker leaves its table alone */
	int reading;		/* its table is being read on the worker */
	int in_pend;		/* in esym.pend_bins */
	uint64_t *pend;		/* offsets waiting for that table */
	size_t nr_pend, cap_pend;
	/* Where to open it when its turn on the worker comes. */
	struct src {
		uint32_t tgid;
		struct procmaps_line l;	/* l.path: malloc()ed */
	} src[4];
	int nr_src;
	uint32_t seq;		/* first-seen order: chunks in a stable order */
	uint64_t want_gen;	/* full: the flush that wants its table */
	struct done *done;	/* sorted by start */
	size_t nr_done, cap_done;
	struct elfsyms *t;	/* the table, cached, or NULL */
	struct bin *newer, *older;	/* the cached tables, most recently used first */
	struct bin *next;	/* same hash */
};

/* One lookup that needs a binary's table, for this flush. */
struct want {
	struct bin *b;
	uint64_t off;			/* file offset */
	uint32_t tgid;			/* a process that maps it ... */
	const struct stk_mapping *m;	/* ... there: where to open the file */
};

struct esym {
	enum esym_mode mode;
	struct membudget own;	/* without a budget: an unlimited one */
	struct membudget *mb;
	struct qaddr *q;
	size_t nq, capq;
	struct want *w;
	size_t nw, capw;
	struct idmap bins;	/* hash of build-id -> first struct bin */
	struct bin **all;	/* in first-seen order */
	size_t nr_all, cap_all;
	struct bin *newest, *oldest;	/* the cached tables */
	struct perfmaps *jit;
	struct worker *wk;	/* reads tables, or NULL: read during the flush */
	size_t reading;		/* tables being read there: 0 or 1 */
	uint64_t waiting_bytes;	/* tables read there, pinned until a flush uses them */
	uint64_t jit_reads;	/* perf map reads at the last esym__flush_wanted() */
	struct idmap *announced; /* build-id hashes esym__new_binary() was given */
	/* The writer of the last esym__flush(): a table read on the worker
	 * that is not kept (full, or no room) is used as it comes in. */
	struct stk_writer *wr;
	uint64_t *chunks;
	int werr;		/* its write error, for the next esym__flush() */
	struct bin **taken;	/* bins taken from pend_bins by this flush */
	size_t nr_taken, cap_taken;
	struct bin **pend_bins;	/* the bins with offsets pending */
	size_t nr_pend_bins, cap_pend_bins;
	struct esym_stats st;
	/* The mapping see() met last and its bin: a stack's frames are
	 * mostly in one binary, and hashing its build-id for every frame
	 * was a tenth of a busy recorder's time.  Valid for one
	 * esym__flush() (the snapshots do not change during it). */
	const struct stk_mapping *last_m;
	struct bin *last_b;
	/* The addresses queued since the last esym__flush(), a slot per
	 * hash, the last one wins: the stacks of one program share most of
	 * their frames (a new stack is often an old one with another leaf),
	 * so most frames are queued once a flush, not once a stack.  A slot
	 * counts only when its @gen is this flush's. */
	struct qslot {
		uint64_t addr;
		uint32_t tgid;
		uint32_t gen;
	} *seen;
	uint32_t gen;
};

#define SEEN_SLOTS 4096
/* Offsets one binary may have waiting for its table, at most. */
#define MAX_PEND 65536
/* Files tried for one table (a process may have exited since). */
#define READ_TRIES 4	/* = the size of bin.src[] */
/* Entries of a flush's queues kept for the next one at most. */
#define SHRINK_QUEUE 65536

const char *esym_mode__name(enum esym_mode mode)
{
	switch (mode) {
	case ESYM_NONE: return "none";
	case ESYM_COVERING: return "covering";
	case ESYM_FULL: return "full";
	}
	return "?";
}

/* ---- the cache of tables ---------------------------------------------- */

static void lru_unlink(struct esym *e, struct bin *b)
{
	if (b->newer)
		b->newer->older = b->older;
	else
		e->newest = b->older;
	if (b->older)
		b->older->newer = b->newer;
	else
		e->oldest = b->newer;
	b->newer = b->older = NULL;
}

static void lru_push(struct esym *e, struct bin *b)
{
	b->older = e->newest;
	b->newer = NULL;
	if (e->newest)
		e->newest->newer = b;
	else
		e->oldest = b;
	e->newest = b;
}

/* Frees @b's table; @cached: it was in the cache (and the budget). */
static void table_drop(struct esym *e, struct bin *b, int cached)
{
	if (cached) {
		lru_unlink(e, b);
		membudget__give(e->mb, b->t->bytes);
	}
	elfsyms__free(b->t);
	free(b->t);
	b->t = NULL;
}

/* The budget's shrinker: drop the least recently used tables not in use. */
static uint64_t esym_shrink(void *ctx, uint64_t want)
{
	struct esym *e = ctx;
	struct bin *b = e->oldest, *newer;
	uint64_t freed = 0;

	for (; b && freed < want; b = newer) {
		newer = b->newer;
		if (b->pinned)
			continue;
		freed += b->t->bytes;
		table_drop(e, b, 1);
		e->st.tables_evicted++;
	}
	return freed;
}

/* ---- life ------------------------------------------------------------- */

static void src_clear(struct bin *b);

struct esym *esym__new(enum esym_mode mode, struct membudget *mb)
{
	struct esym *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->mode = mode;
	e->gen = 1;
	membudget__init(&e->own, UINT64_MAX);
	e->mb = mb ? mb : &e->own;
	e->jit = perfmaps__new(mode == ESYM_FULL, PROC_ROOT, e->mb);
	e->seen = calloc(SEEN_SLOTS, sizeof(*e->seen));
	e->announced = idmap__new();
	if (!e->jit || !e->seen || !e->announced ||
	    membudget__add_shrinker(e->mb, esym_shrink, e)) {
		perfmaps__free(e->jit);
		idmap__free(e->announced);
		free(e->seen);
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

void esym__free(struct esym *e)
{
	size_t i;

	if (!e)
		return;
	/* The budget may outlive us: no shrinker of ours may stay in it
	 * with tables it would free; give back what we hold. */
	for (i = 0; i < e->nr_all; i++) {
		struct bin *b = e->all[i];

		if (b->t)
			table_drop(e, b, 1);
		membudget__give(e->mb, sizeof(*b) + b->cap_done * sizeof(*b->done));
		free(b->done);
		free(b->pend);
		src_clear(b);
		free(b);
	}
	membudget__remove_shrinker(e->mb, esym_shrink, e);
	free(e->all);
	free(e->pend_bins);
	free(e->taken);
	idmap__release(&e->bins);
	perfmaps__free(e->jit);
	free(e->q);
	free(e->w);
	free(e->seen);
	idmap__free(e->announced);
	free(e);
}

int esym__queue(struct esym *e, uint32_t tgid, const uint64_t *ips, uint32_t nr)
{
	uint32_t i;

	if (e->mode == ESYM_NONE)
		return 0;
	if (e->nq + nr > e->capq) {
		size_t cap = e->capq ? e->capq : 1024;
		struct qaddr *q;

		while (cap < e->nq + nr)
			cap *= 2;
		q = realloc(e->q, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		e->q = q;
		e->capq = cap;
	}
	for (i = 0; i < nr; i++) {
		uint64_t addr = ips[i] - (i > 0);
		struct qslot *sl;

		if (!ips[i])
			continue;
		/* Queued already this flush: the same lookup, the same answer. */
		sl = &e->seen[((addr ^ tgid) * 0x9E3779B97F4A7C15ULL) >> 52];
		if (sl->gen == e->gen && sl->addr == addr && sl->tgid == tgid)
			continue;
		*sl = (struct qslot){ .addr = addr, .tgid = tgid, .gen = e->gen };
		e->q[e->nq].tgid = tgid;
		e->q[e->nq].addr = addr;
		e->nq++;
	}
	return 0;
}

void esym__exited(struct esym *e, uint32_t tgid)
{
	perfmaps__forget(e->jit, tgid);
}

/* ---- what is in the file ------------------------------------------------ */

/* Index of the last written symbol starting at or before @off, or -1. */
static long done_find(const struct bin *b, uint64_t off)
{
	size_t lo = 0, hi = b->nr_done;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->done[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* A symbol written names @off for sure. */
static int done_covers(const struct bin *b, uint64_t off)
{
	long i = done_find(b, off);

	return i >= 0 && off < b->done[i].end;
}

/* The symbol starting at @start was written. */
static int done_has(const struct bin *b, uint64_t start)
{
	long i = done_find(b, start);

	return i >= 0 && b->done[i].start == start;
}

/*
 * Room in @b->done for @n more, under the budget.  0 or -ENOSPC / -ENOMEM.
 */
static int done_reserve(struct esym *e, struct bin *b, size_t n)
{
	size_t cap = b->cap_done ? b->cap_done : 16;
	struct done *d;

	if (b->nr_done + n <= b->cap_done)
		return 0;
	while (cap < b->nr_done + n)
		cap *= 2;
	if (membudget__take(e->mb, (cap - b->cap_done) * sizeof(*d)))
		return -ENOSPC;
	d = realloc(b->done, cap * sizeof(*d));
	if (!d) {
		membudget__give(e->mb, (cap - b->cap_done) * sizeof(*d));
		return -ENOMEM;
	}
	b->done = d;
	b->cap_done = cap;
	return 0;
}

/* Merges @n new entries (sorted, none in @b->done yet) into @b->done,
 * which has room for them. */
static void done_merge(struct bin *b, const struct done *add, size_t n)
{
	size_t i = b->nr_done, j = n, k = b->nr_done + n;

	while (j) {
		if (i && b->done[i - 1].start > add[j - 1].start)
			b->done[--k] = b->done[--i];
		else
			b->done[--k] = add[--j];
	}
	b->nr_done += n;
}

/* ---- binaries ---------------------------------------------------------- */

static struct bin *bin_find(const struct esym *e, const uint8_t *bid, uint32_t n, uint64_t key)
{
	struct bin *b;

	for (b = idmap__find_ptr(&e->bins, key); b; b = b->next)
		if (b->bid_size == n && memcmp(b->bid, bid, n) == 0)
			return b;
	return NULL;
}

/* The binary of mapping @m (with a build-id).  NULL with *@err -ENOMEM,
 * or -ENOSPC when the budget has no room for one more. */
static struct bin *bin_get(struct esym *e, const struct stk_mapping *m, int *err)
{
	uint64_t key = hash_bytes(5, m->build_id, m->build_id_size);
	struct bin *b = bin_find(e, m->build_id, m->build_id_size, key);

	if (b)
		return b;
	*err = -ENOMEM;
	if (e->nr_all == e->cap_all) {
		size_t cap = e->cap_all ? e->cap_all * 2 : 32;
		struct bin **a = realloc(e->all, cap * sizeof(*a));

		if (!a)
			return NULL;
		e->all = a;
		e->cap_all = cap;
	}
	if (membudget__take(e->mb, sizeof(*b))) {
		*err = -ENOSPC;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		goto fail;
	memcpy(b->bid, m->build_id, m->build_id_size);
	b->bid_size = m->build_id_size;
	b->seq = (uint32_t)e->nr_all;
	b->next = idmap__find_ptr(&e->bins, key);
	if (idmap__set_ptr(&e->bins, key, b))
		goto fail;
	e->all[e->nr_all++] = b;
	return b;
fail:
	free(b);
	membudget__give(e->mb, sizeof(*b));
	return NULL;
}

static void src_clear(struct bin *b)
{
	int i;

	for (i = 0; i < b->nr_src; i++)
		free((char *)b->src[i].l.path);
	b->nr_src = 0;
}

/* Remembers where @b's lookups @w[0..n) map it (up to 4 processes). */
static void src_save(struct bin *b, const struct want *w, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i < n && b->nr_src < READ_TRIES; i++) {
		const struct stk_mapping *m = w[i].m;
		struct src *sr = &b->src[b->nr_src];

		if (!m)
			continue;
		for (k = 0; k < b->nr_src; k++)
			if (b->src[k].tgid == w[i].tgid)
				break;
		if (k < b->nr_src)
			continue;
		sr->tgid = w[i].tgid;
		sr->l = (struct procmaps_line){
			.start = m->start, .end = m->end, .offset = m->offset, .dev = m->dev,
			.inode = m->inode, .prot = m->prot, .path = strdup(m->path),
		};
		if (sr->l.path)
			b->nr_src++;
	}
}

/*
 * Opens the files of @b's lookups @w[0..n) (their mappings, in their
 * processes), up to READ_TRIES: a process may have exited since.  Puts
 * the fds in @fds; returns how many, or -errno of the last failure.
 */
static int bin_open(const struct want *w, size_t n, int *fds)
{
	int err = -ENOENT, fd, nfd = 0, tries = 0;
	size_t i;

	for (i = 0; i < n && tries < READ_TRIES; i++) {
		const struct stk_mapping *m = w[i].m;
		struct procmaps_line l;

		/* Pending lookups have no mapping; another process of the
		 * same mapping fails the same way. */
		if (!m || (i && w[i].tgid == w[i - 1].tgid && w[i].m == w[i - 1].m))
			continue;
		l = (struct procmaps_line){
			.start = m->start, .end = m->end, .offset = m->offset, .dev = m->dev,
			.inode = m->inode, .prot = m->prot, .path = m->path,
		};
		tries++;
		fd = procmaps__open_mapped(PROC_ROOT, w[i].tgid, &l);
		if (fd < 0)
			err = fd;
		else
			fds[nfd++] = fd;
	}
	return nfd ? nfd : err;
}

/* Reads @bid's table from the first of @fds[0..nfd) that is the file
 * (-ENOENT, -ESRCH: try the next).  Any thread. */
static int table_read(const uint8_t *bid, uint32_t bid_size, const int *fds, int nfd,
		      struct elfsyms *t)
{
	int err = -ENOENT, i;

	for (i = 0; i < nfd; i++) {
		err = elfsyms__read_build_id(fds[i], bid, bid_size, t);
		if (err != -ENOENT && err != -ESRCH)
			break;	/* read, or the file itself is wrong */
	}
	return err;
}

/* The outcome of reading @b's table (@err, or b->t read), counted. */
static void bin_read_done(struct esym *e, struct bin *b, int err)
{
	if (!b->state) {
		b->state = err ? err : 1;
		if (procreds__refused(err))
			e->st.binaries_refused++;
		if (err)
			e->st.binary_errors++;
		else
			e->st.binaries++;
	} else if (err) {
		e->st.reread_errors++;
	} else {
		e->st.tables_reread++;
	}
}

/*
 * Reads @b's table through the mappings of @w[0..n), here, into a new
 * b->t.  Returns 0, or -errno (nothing kept).
 */
static int bin_read(struct bin *b, const struct want *w, size_t n)
{
	int fds[READ_TRIES], nfd, err, i;

	b->t = calloc(1, sizeof(*b->t));
	if (!b->t)
		return -ENOMEM;
	nfd = bin_open(w, n, fds);
	err = nfd < 0 ? nfd : table_read(b->bid, b->bid_size, fds, nfd, b->t);
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	if (err) {
		free(b->t);
		b->t = NULL;
	}
	return err;
}

/* ---- tables read on the worker ------------------------------------------ */

struct read_job {
	struct worker_job j;
	struct esym *e;
	struct bin *b;
	int fds[READ_TRIES], nfd;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t bid_size;
	struct elfsyms *t;
	int err;
};

static void read_job_run(struct worker_job *wj, const _Atomic int *stop)
{
	struct read_job *rj = (struct read_job *)wj;

	/* Bounded by elfsyms' limits; given up between files on stop. */
	rj->err = atomic_load(stop) ? -ECANCELED
				    : table_read(rj->bid, rj->bid_size, rj->fds, rj->nfd, rj->t);
}

/* Remembers @b as having offsets pending. */
static int pend_bin_add(struct esym *e, struct bin *b)
{
	if (b->in_pend)
		return 0;
	if (e->nr_pend_bins == e->cap_pend_bins) {
		size_t cap = e->cap_pend_bins ? e->cap_pend_bins * 2 : 16;
		struct bin **a = realloc(e->pend_bins, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		e->pend_bins = a;
		e->cap_pend_bins = cap;
	}
	e->pend_bins[e->nr_pend_bins++] = b;
	b->in_pend = 1;
	return 0;
}

/* @b's lookups will not be named: no table. */
static void pend_drop(struct esym *e, struct bin *b)
{
	e->st.addrs_unnamed += b->nr_pend;
	b->nr_pend = 0;
	free(b->pend);
	b->pend = NULL;
	b->cap_pend = 0;
	src_clear(b);
}

/* A table read on the worker is used (or given up): no longer waiting. */
static void unpin(struct esym *e, struct bin *b)
{
	if (b->pinned && b->t)
		e->waiting_bytes -= b->t->bytes < e->waiting_bytes ? b->t->bytes : e->waiting_bytes;
	b->pinned = 0;
}

static void submit_next(struct esym *e);
static int want_add(struct esym *e, const struct want *wt);
static int write_syms(struct esym *e, const struct bin *b, const struct elfsyms *t,
		      const size_t *idx, size_t n, struct stk_writer *w, uint64_t *chunks);
static int bin_cover(struct esym *e, struct bin *b, const struct want *wt, size_t n,
		     struct stk_writer *w, uint64_t *chunks);
static int by_bin_off(const void *x, const void *y);

/* @b's table, just read and not kept (full, or no room in the budget):
 * the symbols its pending lookups need (full: all) written at once, as a
 * flush would, and the table released. */
static void use_now(struct esym *e, struct bin *b)
{
	size_t i, nw = e->nw;
	int err = 0;

	if (e->mode == ESYM_FULL) {
		err = write_syms(e, b, b->t, NULL, b->t->n, e->wr, e->chunks);
		b->all_written = !err;
	} else {
		e->st.tables_uncached++;
		for (i = 0; i < b->nr_pend && !err; i++)
			err = want_add(e, &(struct want){ b, b->pend[i], 0, NULL });
		if (!err && e->nw - nw > 1)
			qsort(e->w + nw, e->nw - nw, sizeof(*e->w), by_bin_off);
		err = err ?: bin_cover(e, b, e->w + nw, e->nw - nw, e->wr, e->chunks);
		e->nw = nw;
	}
	if (err && !e->werr)
		e->werr = err;
	b->nr_pend = 0;
	table_drop(e, b, 0);
}

/* On the main thread: the table is in.  Kept (room in the budget): its
 * offsets are looked up at the next flush, the table pinned till then.
 * Not kept: used now.  A read is submitted only by or after an
 * esym__flush(), so e->wr is set. */
static void read_job_done(struct worker_job *wj, int cancelled)
{
	struct read_job *rj = (struct read_job *)wj;
	struct esym *e = rj->e;
	struct bin *b = rj->b;
	int i;

	for (i = 0; i < rj->nfd; i++)
		close(rj->fds[i]);
	b->reading = 0;
	e->reading--;
	if (cancelled && !rj->err)
		rj->err = -ECANCELED;
	bin_read_done(e, b, rj->err);
	if (rj->err) {
		elfsyms__free(rj->t);
		free(rj->t);
		pend_drop(e, b);
	} else {
		b->t = rj->t;
		if (e->mode != ESYM_FULL && membudget__take(e->mb, b->t->bytes) == 0) {
			b->pinned = 1;
			e->waiting_bytes += b->t->bytes;
			lru_push(e, b);
		} else {
			use_now(e, b);
		}
	}
	free(rj);
	if (!cancelled)
		submit_next(e);
}

/* Hands the reading of @b's table to the worker, opened through its
 * saved sources.  0 or -errno (nothing to open it with). */
static int bin_submit(struct esym *e, struct bin *b)
{
	struct read_job *rj = calloc(1, sizeof(*rj));
	int err = -ENOENT, fd, i;

	if (!rj)
		return -ENOMEM;
	rj->t = calloc(1, sizeof(*rj->t));
	if (!rj->t) {
		free(rj);
		return -ENOMEM;
	}
	for (i = 0; i < b->nr_src; i++) {
		fd = procmaps__open_mapped(PROC_ROOT, b->src[i].tgid, &b->src[i].l);
		if (fd < 0)
			err = fd;
		else
			rj->fds[rj->nfd++] = fd;
	}
	src_clear(b);
	if (!rj->nfd) {
		free(rj->t);
		free(rj);
		return err;
	}
	rj->e = e;
	rj->b = b;
	memcpy(rj->bid, b->bid, b->bid_size);
	rj->bid_size = b->bid_size;
	/* Not charged to the file's owner: one read at a time for every
	 * binary of every user, each bounded by elfsyms' limits. */
	rj->j.owner = 0;
	rj->j.run = read_job_run;
	rj->j.done = read_job_done;
	b->reading = 1;
	e->reading++;
	worker__submit(e->wk, &rj->j);
	return 0;
}

/*
 * One table at a time on the worker: at most one table beyond the cache
 * (one with no room is used as it comes in), as when they were read
 * during the flush.  The next: the first binary waiting, in the order
 * they were met.
 */
static void submit_next(struct esym *e)
{
	size_t i;
	int err;

	/* Tables read, kept and not used yet (pinned: the shrinker cannot
	 * free them) take at most half the budget. */
	for (i = 0; i < e->nr_pend_bins && !e->reading &&
		    (!e->waiting_bytes || e->waiting_bytes < e->mb->limit / 2); i++) {
		struct bin *b = e->pend_bins[i];

		if (b->reading || b->t || !b->nr_src)
			continue;
		err = bin_submit(e, b);
		if (err)
			pend_drop(e, b);	/* tried again at its next lookup */
	}
}

/* @b's lookups @w[0..n) wait for its table. */
static void pend_add(struct esym *e, struct bin *b, const struct want *w, size_t n)
{
	size_t i = 0;

	if (pend_bin_add(e, b))
		goto skip;
	if (b->nr_pend + n > b->cap_pend) {
		size_t cap = b->cap_pend ? b->cap_pend : 64;
		uint64_t *p;

		while (cap < b->nr_pend + n)
			cap *= 2;
		if (cap > MAX_PEND)
			cap = MAX_PEND;
		p = cap > b->cap_pend ? realloc(b->pend, cap * sizeof(*p)) : NULL;
		if (p) {
			b->pend = p;
			b->cap_pend = cap;
		}
	}
	for (i = 0; i < n && b->nr_pend < b->cap_pend; i++)
		b->pend[b->nr_pend++] = w[i].off;
	if (i == n)
		return;
skip:
	e->st.symbols_skipped += n - i;
}

/* Symbols per chunk: far below STK_MAX_CHUNK_RAW even with long names. */
#define CHUNK_SYMS 50000

/* Writes the @n symbols @idx (indexes into @t, sorted) of @b. */
static int write_syms(struct esym *e, const struct bin *b, const struct elfsyms *t,
		      const size_t *idx, size_t n, struct stk_writer *w, uint64_t *chunks)
{
	struct stk_esym_sym *buf;
	size_t j, k;
	int err = 0;

	if (!n)
		return 0;
	buf = malloc((n < CHUNK_SYMS ? n : CHUNK_SYMS) * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (j = 0; j < n && !err; j += k) {
		for (k = 0; k < CHUNK_SYMS && j + k < n; k++)
			buf[k] = t->syms[idx ? idx[j + k] : j + k];
		err = stk_writer__add_esym_symtab(w, b->bid, b->bid_size, t->sources, buf, k);
		if (!err) {
			(*chunks)++;
			e->st.symbols_written += k;
		}
	}
	free(buf);
	return err;
}

static int by_index(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

/* The covering symbols of @b for the lookups @wt[0..n): the ones not in
 * the file yet are written and remembered. */
static int bin_cover(struct esym *e, struct bin *b, const struct want *wt, size_t n,
		     struct stk_writer *w, uint64_t *chunks)
{
	const struct elfsyms *t = b->t;
	struct done *add = NULL;
	size_t *idx, i, k = 0;
	int err = 0;

	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		long s = elfsyms__find(t, wt[i].off);

		if (s < 0)
			e->st.addrs_unnamed++;
		else if (!done_has(b, t->syms[s].addr))
			idx[k++] = (size_t)s;
	}
	if (k > 1) {
		size_t u = 1;

		qsort(idx, k, sizeof(*idx), by_index);
		for (i = 1; i < k; i++)
			if (idx[i] != idx[u - 1])
				idx[u++] = idx[i];
		k = u;
	}
	if (!k)
		goto out;
	err = done_reserve(e, b, k);
	if (err == -ENOSPC) {
		/* No room to remember them: not written, rather than written
		 * again at every flush that meets them. */
		e->st.symbols_skipped += k;
		err = 0;
		goto out;
	}
	add = err ? NULL : malloc(k * sizeof(*add));
	if (!add) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < k; i++) {
		const struct stk_esym_sym *s = &t->syms[idx[i]];
		uint64_t end = s->addr + (s->size ? s->size : 1);

		if (idx[i] + 1 < t->n && t->syms[idx[i] + 1].addr < end)
			end = t->syms[idx[i] + 1].addr;
		add[i] = (struct done){ s->addr, end };
	}
	err = write_syms(e, b, t, idx, k, w, chunks);
	if (!err)
		done_merge(b, add, k);
out:
	free(add);
	free(idx);
	return err;
}

/*
 * The lookups @wt[0..n) of binary @b (sorted by offset): its table from
 * the cache or read (kept in the cache if the budget has room, else
 * released once used), then its symbols written.
 */
static int bin_flush(struct esym *e, struct bin *b, const struct want *wt, size_t n,
		     struct stk_writer *w, uint64_t *chunks)
{
	int err, cached = b->t != NULL;

	/* Read on the worker for this flush: waiting no more. */
	if (b->pinned && !b->reading)
		unpin(e, b);

	if (b->reading || (!b->t && e->wk)) {
		/* Read on the worker: named at a flush after it is in. */
		if (!b->reading)
			src_save(b, wt, n);
		pend_add(e, b, wt, n);
		return 0;
	}
	if (cached) {
		lru_unlink(e, b);
		lru_push(e, b);
	} else if (!b->t) {
		/* Out of memory too: that binary's failure, not the flush's. */
		err = bin_read(b, wt, n);
		bin_read_done(e, b, err);
		if (err)
			return 0;
	}
	/* Pinned: a take (ours below, or the budget's shrinker) must not
	 * free it under us. */
	b->pinned = 1;
	if (!cached && e->mode != ESYM_FULL) {
		if (membudget__take(e->mb, b->t->bytes) == 0) {
			cached = 1;
			lru_push(e, b);
		} else {
			/* Larger than the room there is: used once, then
			 * released (its symbols still written). */
			e->st.tables_uncached++;
		}
	}
	if (e->mode == ESYM_FULL) {
		err = write_syms(e, b, b->t, NULL, b->t->n, w, chunks);
		b->all_written = !err;
	} else {
		err = bin_cover(e, b, wt, n, w, chunks);
	}
	b->pinned = 0;
	if (!cached)
		table_drop(e, b, 0);
	return err;
}

/* ---- a flush ------------------------------------------------------------ */

/* Memory without a file that may hold JIT code: anonymous or named with
 * PR_SET_VMA_ANON_NAME ("[anon:...]"), not the kernel's [vdso] & co.
 * (Mappings from MMAP2 records with a build-id have no inode: the
 * build-id takes its place in the record.) */
static int is_anon(const struct stk_mapping *m)
{
	return !m->inode && !m->build_id_size &&
	       (!m->path[0] || strncmp(m->path, "[anon:", 6) == 0);
}

static int want_add(struct esym *e, const struct want *wt)
{
	if (e->nw == e->capw) {
		size_t cap = e->capw ? e->capw * 2 : 1024;
		struct want *p = realloc(e->w, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->w = p;
		e->capw = cap;
	}
	e->w[e->nw++] = *wt;
	return 0;
}

/* Address @a: a JIT line to look for, or a binary's lookup for later,
 * unless a symbol written already names it. */
static int see(struct esym *e, const struct procs *p, const struct qaddr *a)
{
	const struct stk_mapping *m = procs__mapping(p, a->tgid, a->addr);
	struct bin *b;
	uint64_t off;
	int err = 0;

	if (!m || is_anon(m))
		return perfmaps__see(e->jit, a->tgid, a->addr, m != NULL);
	if (m->path[0] != '/' || !m->build_id_size)
		return 0;	/* [vdso] (kind 1), or nothing to key it by */
	b = m == e->last_m ? e->last_b : bin_get(e, m, &err);
	if (!b) {
		if (err != -ENOSPC)
			return err;
		e->st.symbols_skipped++;	/* not even the binary fits */
		return 0;
	}
	e->last_m = m;
	e->last_b = b;
	if (b->state < 0 || b->all_written)
		return 0;
	off = a->addr - m->start + m->offset;
	if (e->mode == ESYM_FULL) {
		if (b->want_gen == e->gen)
			return 0;	/* one lookup is the whole table */
		b->want_gen = e->gen;
	} else if (done_covers(b, off)) {
		return 0;
	}
	return want_add(e, &(struct want){ b, off, a->tgid, m });
}

static int by_bin_off(const void *x, const void *y)
{
	const struct want *a = x, *b = y;

	if (a->b->seq != b->b->seq)
		return a->b->seq < b->b->seq ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

void esym__new_file(struct esym *e, struct stk_writer *w)
{
	size_t i;

	/* A table read on the worker now writes into the new file. */
	if (e->wr)
		e->wr = w;
	for (i = 0; i < e->nr_all; i++) {
		e->all[i]->nr_done = 0;
		e->all[i]->all_written = 0;
	}
	e->last_m = NULL;
	perfmaps__new_file(e->jit);
}

int esym__flush(struct esym *e, struct procs *p, struct stk_writer *w, uint64_t *chunks)
{
	size_t i, j;
	int err = 0;

	if (e->mode == ESYM_NONE)
		return 0;
	e->wr = w;
	e->chunks = chunks;
	if (e->werr) {
		err = e->werr;
		e->werr = 0;
		return err;
	}
	e->last_m = NULL;
	e->nw = 0;
	for (i = 0; i < e->nq && !err; i++)
		err = see(e, p, &e->q[i]);
	e->last_m = NULL;
	e->nq = 0;
	/* The lookups that waited for tables read since. */
	for (i = 0, j = 0; i < e->nr_pend_bins; i++) {
		struct bin *b = e->pend_bins[i];
		size_t k;

		if (b->reading || (!b->t && b->state >= 0 && b->nr_src)) {
			e->pend_bins[j++] = b;	/* still waiting */
			continue;
		}
		b->in_pend = 0;
		if (!b->t) {
			pend_drop(e, b);
			continue;
		}
		if (!err && e->nr_taken == e->cap_taken) {
			size_t cap = e->cap_taken ? e->cap_taken * 2 : 16;
			struct bin **a = realloc(e->taken, cap * sizeof(*a));

			if (a) {
				e->taken = a;
				e->cap_taken = cap;
			} else {
				err = -ENOMEM;
			}
		}
		if (!err)
			e->taken[e->nr_taken++] = b;
		for (k = 0; k < b->nr_pend && !err; k++)
			err = want_add(e, &(struct want){ b, b->pend[k], 0, NULL });
		if (err)
			unpin(e, b);
		else
			b->nr_pend = 0;	/* wanted now */
		pend_drop(e, b);
	}
	e->nr_pend_bins = j;
	if (!err && e->nw > 1)
		qsort(e->w, e->nw, sizeof(*e->w), by_bin_off);
	/* One binary at a time: at most one table read beyond the cache. */
	for (i = 0; i < e->nw && !err; i = j) {
		for (j = i + 1; j < e->nw && e->w[j].b == e->w[i].b; j++)
			;
		err = bin_flush(e, e->w[i].b, &e->w[i], j - i, w, chunks);
	}
	e->nw = 0;
	/* Tables read for this flush that an error left unused. */
	for (i = 0; i < e->nr_taken; i++)
		if (e->taken[i]->pinned)
			unpin(e, e->taken[i]);
	e->nr_taken = 0;
	/* A burst of new stacks (a recording's first flush) leaves no large
	 * queues behind: they are not under the budget. */
	if (e->capw > SHRINK_QUEUE) {
		free(e->w);
		e->w = NULL;
		e->capw = 0;
	}
	if (e->capq > SHRINK_QUEUE) {
		free(e->q);
		e->q = NULL;
		e->capq = 0;
	}
	/* A new flush: the slots of this one no longer count (a wrap of
	 * @gen, after 4 billion flushes, clears them). */
	if (!++e->gen) {
		memset(e->seen, 0, SEEN_SLOTS * sizeof(*e->seen));
		e->gen = 1;
	}
	/* The tables this flush found missing: the first one's turn. */
	submit_next(e);
	return err ?: perfmaps__write(e->jit, w, chunks);
}

void esym__set_worker(struct esym *e, struct worker *wk)
{
	e->wk = wk;
	perfmaps__set_worker(e->jit, wk);
}

int esym__flush_wanted(struct esym *e)
{
	struct perfmaps_stats ps;
	uint64_t seen;

	if (!e)
		return 0;
	perfmaps__stats(e->jit, &ps);
	seen = e->jit_reads;
	e->jit_reads = ps.files_read;
	return ps.files_read != seen ||
	       (e->waiting_bytes && e->waiting_bytes >= e->mb->limit / 2);
}

int esym__new_binary(struct esym *e, const struct stk_proc_maps *maps)
{
	const struct stk_mapping *m;
	uint32_t i;
	uint64_t key;
	int found = 0;

	if (!e || !maps || e->mode == ESYM_NONE || !e->announced)
		return 0;
	for (i = 0; i < maps->nr_mappings; i++) {
		m = &maps->mappings[i];
		/* [vdso]: its image goes into the file as it is. */
		if (!(m->prot & PROT_EXEC) || !m->build_id_size || m->path[0] != '/')
			continue;
		key = hash_bytes(5, m->build_id, m->build_id_size);
		if (idmap__find(e->announced, key) || idmap__set(e->announced, key, 1))
			continue;
		found = 1;
	}
	return found;
}

int esym__reading(const struct esym *e)
{
	return e->reading > 0 || perfmaps__reading(e->jit);
}

void esym__stats(const struct esym *e, struct esym_stats *st)
{
	struct perfmaps_stats ps;

	*st = e->st;
	perfmaps__stats(e->jit, &ps);
	st->perf_map_files = ps.files_read;
	st->perf_map_errors = ps.file_errors;
	st->perf_map_refused = ps.files_refused;
	st->perf_map_symbols = ps.symbols_written;
	st->perf_map_bytes = ps.bytes_read;
	st->perf_map_bytes_off_loop = ps.bytes_read_off_loop;
	st->perf_map_restarts = ps.restarts;
	st->perf_map_lines_skipped = ps.lines_skipped;
	st->perf_map_misses_skipped = ps.misses_skipped;
}
