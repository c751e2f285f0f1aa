// SPDX-License-Identifier: BSD-2-Clause
/*
 * esym.c - embedded symbols of the recorded binaries and JIT code (see
 * esym.h): which addresses need names, each binary's table, and the
 * symbols already in the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "elfsyms.h"
#include "esym.h"
#include "hash.h"
#include "idmap.h"
#include "perfmap.h"
#include "procmaps.h"

#define PROC_ROOT "/proc"

/* One recorded address waiting for its snapshot. */
struct qaddr {
	uint32_t tgid;
	uint64_t addr;		/* already - 1 for return addresses */
};

/* One binary, by build-id. */
struct bin {
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t bid_size;
	int state;		/* 1 read, < 0 -errno: could not be read */
	struct elfsyms t;
	uint8_t *sent;		/* per symbol: in the file (or queued) */
	size_t *queue;		/* symbols to write */
	size_t nq, capq;
	struct bin *next;	/* same hash */
};

struct esym {
	enum esym_mode mode;
	struct qaddr *q;
	size_t nq, capq;
	struct idmap bins;	/* hash of build-id -> first struct bin */
	struct bin **all;	/* in first-seen order: chunks in a stable order */
	size_t nr_all, cap_all;
	struct perfmaps *jit;
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

const char *esym_mode__name(enum esym_mode mode)
{
	switch (mode) {
	case ESYM_NONE: return "none";
	case ESYM_COVERING: return "covering";
	case ESYM_FULL: return "full";
	}
	return "?";
}

struct esym *esym__new(enum esym_mode mode)
{
	struct esym *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->mode = mode;
	e->gen = 1;
	e->jit = perfmaps__new(mode == ESYM_FULL);
	e->seen = calloc(SEEN_SLOTS, sizeof(*e->seen));
	if (!e->jit || !e->seen) {
		perfmaps__free(e->jit);
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
	for (i = 0; i < e->nr_all; i++) {
		elfsyms__free(&e->all[i]->t);
		free(e->all[i]->sent);
		free(e->all[i]->queue);
		free(e->all[i]);
	}
	free(e->all);
	idmap__release(&e->bins);
	perfmaps__free(e->jit);
	free(e->q);
	free(e->seen);
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

static struct bin *bin_find(const struct esym *e, const uint8_t *bid, uint32_t n, uint64_t key)
{
	struct bin *b;

	for (b = idmap__find_ptr(&e->bins, key); b; b = b->next)
		if (b->bid_size == n && memcmp(b->bid, bid, n) == 0)
			return b;
	return NULL;
}

/* Reads @b's table from the file @tgid maps at @m, which must have @b's
 * build-id: a path can name a rebuilt file by now. */
static void bin_read(struct esym *e, struct bin *b, uint32_t tgid, const struct stk_mapping *m)
{
	struct procmaps_line l = {
		.start = m->start, .end = m->end, .offset = m->offset, .dev = m->dev,
		.inode = m->inode, .prot = m->prot, .path = m->path,
	};
	uint8_t bid[STK_MAX_BUILD_ID];
	int fd, n;

	fd = procmaps__open_mapped(PROC_ROOT, tgid, &l);
	if (fd < 0) {
		b->state = fd;
		goto out;
	}
	n = buildid__from_elf_fd(fd, bid, sizeof(bid));
	if (n != (int)b->bid_size || memcmp(bid, b->bid, b->bid_size) != 0)
		b->state = -ESTALE;
	else
		b->state = elfsyms__read_fd(fd, &b->t) ?: 1;
	close(fd);
	if (b->state > 0) {
		b->sent = calloc(b->t.n ? b->t.n : 1, 1);
		if (!b->sent) {
			elfsyms__free(&b->t);
			b->state = -ENOMEM;
		}
	}
out:
	if (b->state > 0)
		e->st.binaries++;
	else
		e->st.binary_errors++;
}

/* The binary of mapping @m (with a build-id), read on first sight; NULL
 * only for lack of memory. */
static struct bin *bin_get(struct esym *e, uint32_t tgid, const struct stk_mapping *m)
{
	uint64_t key = hash_bytes(5, m->build_id, m->build_id_size);
	struct bin *b = bin_find(e, m->build_id, m->build_id_size, key);

	if (b)
		return b;
	if (e->nr_all == e->cap_all) {
		size_t cap = e->cap_all ? e->cap_all * 2 : 32;
		struct bin **a = realloc(e->all, cap * sizeof(*a));

		if (!a)
			return NULL;
		e->all = a;
		e->cap_all = cap;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	memcpy(b->bid, m->build_id, m->build_id_size);
	b->bid_size = m->build_id_size;
	b->next = idmap__find_ptr(&e->bins, key);
	if (idmap__set_ptr(&e->bins, key, b)) {
		free(b);
		return NULL;
	}
	e->all[e->nr_all++] = b;
	bin_read(e, b, tgid, m);
	return b;
}

static int bin_queue(struct bin *b, size_t i)
{
	if (b->sent[i])
		return 0;
	if (b->nq == b->capq) {
		size_t cap = b->capq ? b->capq * 2 : 64;
		size_t *q = realloc(b->queue, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		b->queue = q;
		b->capq = cap;
	}
	b->sent[i] = 1;
	b->queue[b->nq++] = i;
	return 0;
}

/* Memory without a file that may hold JIT code: anonymous or named with
 * PR_SET_VMA_ANON_NAME ("[anon:...]"), not the kernel's [vdso] & co.
 * (Mappings from MMAP2 records with a build-id have no inode: the
 * build-id takes its place in the record.) */
static int is_anon(const struct stk_mapping *m)
{
	return !m->inode && !m->build_id_size &&
	       (!m->path[0] || strncmp(m->path, "[anon:", 6) == 0);
}

static int see(struct esym *e, const struct procs *p, const struct qaddr *a)
{
	const struct stk_mapping *m = procs__mapping(p, a->tgid, a->addr);
	struct bin *b;
	size_t i;
	long k;

	if (!m || is_anon(m))
		return perfmaps__see(e->jit, PROC_ROOT, a->tgid, a->addr);
	if (m->path[0] != '/' || !m->build_id_size)
		return 0;	/* [vdso] (kind 1), or nothing to key it by */
	b = m == e->last_m ? e->last_b : bin_get(e, a->tgid, m);
	if (!b)
		return -ENOMEM;
	e->last_m = m;
	e->last_b = b;
	if (b->state <= 0)
		return 0;
	if (e->mode == ESYM_FULL) {
		for (i = 0; i < b->t.n; i++)
			if (bin_queue(b, i))
				return -ENOMEM;
		return 0;
	}
	k = elfsyms__find(&b->t, a->addr - m->start + m->offset);
	if (k < 0) {
		e->st.addrs_unnamed++;
		return 0;
	}
	return bin_queue(b, (size_t)k);
}

static int by_index(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

/* Symbols per chunk: far below STK_MAX_CHUNK_RAW even with long names. */
#define CHUNK_SYMS 50000

static int write_bins(struct esym *e, struct stk_writer *w, uint64_t *chunks)
{
	struct stk_esym_sym *buf = NULL;
	size_t i, j, k;
	int err = 0;

	for (i = 0; i < e->nr_all && !err; i++) {
		struct bin *b = e->all[i];

		if (!b->nq)
			continue;
		if (!buf) {
			buf = malloc(CHUNK_SYMS * sizeof(*buf));
			if (!buf)
				return -ENOMEM;
		}
		qsort(b->queue, b->nq, sizeof(*b->queue), by_index);
		for (j = 0; j < b->nq && !err; j += k) {
			for (k = 0; k < CHUNK_SYMS && j + k < b->nq; k++)
				buf[k] = b->t.syms[b->queue[j + k]];
			err = stk_writer__add_esym_symtab(w, b->bid, b->bid_size, b->t.sources, buf,
							  k);
			if (!err) {
				(*chunks)++;
				e->st.symbols_written += k;
			}
		}
		b->nq = 0;
	}
	free(buf);
	return err;
}

int esym__flush(struct esym *e, struct procs *p, struct stk_writer *w, uint64_t *chunks)
{
	size_t i;
	int err = 0;

	if (e->mode == ESYM_NONE)
		return 0;
	e->last_m = NULL;
	for (i = 0; i < e->nq && !err; i++)
		err = see(e, p, &e->q[i]);
	e->last_m = NULL;
	e->nq = 0;
	/* A new flush: the slots of this one no longer count (a wrap of
	 * @gen, after 4 billion flushes, clears them). */
	if (!++e->gen) {
		memset(e->seen, 0, SEEN_SLOTS * sizeof(*e->seen));
		e->gen = 1;
	}
	if (err)
		return err;
	err = write_bins(e, w, chunks);
	return err ?: perfmaps__write(e->jit, w, chunks);
}

void esym__stats(const struct esym *e, struct esym_stats *st)
{
	struct perfmaps_stats ps;

	*st = e->st;
	perfmaps__stats(e->jit, &ps);
	st->perf_map_files = ps.files_read;
	st->perf_map_errors = ps.file_errors;
	st->perf_map_symbols = ps.symbols_written;
}
