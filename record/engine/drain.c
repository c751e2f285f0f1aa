// SPDX-License-Identifier: BSD-2-Clause
/* Emptying a mode's double-buffered counts maps, and the rows ring of
 * samples that sent a new stack, into rows, and writing them (see
 * drain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "drain.h"
#include "mode.h"

/* How long a flush waits at most for the rows ring's records reserved
 * before it looked to be committed (a program between reserve and submit:
 * a copy of 72 bytes). */
#define RING_WAIT_NS 1000000L

/* Keys taken from the rows ring for one counts set, not rows yet. */
struct ring_keys {
	char *keys;
	size_t n, cap;
};

struct drain {
	struct drain_opts o;
	size_t row_size;
	void *keys, *values;	/* one map's worth of entries */
	char *rows;		/* rows built, not written yet */
	uint64_t *ends;		/* per row: row_end()'s, 0 for the interval's */
	size_t nr_rows, cap_rows;
	int nr_ended;		/* rows with an end */
	/* The rows ring, its positions (mapped read-only), and what it
	 * brought for each set. */
	struct ring_buffer *ring;
	const unsigned long *ring_cons, *ring_prod;
	size_t page;
	struct ring_keys ring_keys[2];
	int ring_err;
};

uint32_t drain__flip(uint32_t *idx)
{
	struct timespec grace = { 0, DRAIN_FLIP_GRACE_NS };
	uint32_t idle = __atomic_load_n(idx, __ATOMIC_SEQ_CST);

	__atomic_store_n(idx, idle ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&grace, NULL);
	return idle;
}

int drain__map(int fd, void *keys, size_t key_size, void *values, size_t value_size,
	       uint32_t cap, size_t *n)
{
	char *k = keys, *v = values;
	unsigned char batch[64]; /* opaque batch cursor; hash maps use 4 bytes */
	void *in = NULL;
	__u32 count;
	int err;

	*n = 0;
	/* One lookup-and-delete batch syscall empties the map; the buffers
	 * hold max_entries, so a batch never runs out of room. */
	for (;;) {
		count = cap - (uint32_t)*n;
		if (!count)
			return 0;
		err = bpf_map_lookup_and_delete_batch(fd, in, batch, k + *n * key_size,
						      v + *n * value_size, &count, NULL);
		if (err && errno != ENOENT)
			break;
		*n += count;
		if (err)
			return 0; /* ENOENT: the map is empty */
		in = batch;
	}
	err = -errno;
	if (*n || (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP))
		return err;
	/* No batch operations (before Linux 5.6): key by key.  The map is
	 * idle, so deleting while iterating is safe. */
	while (*n < cap && bpf_map_get_next_key(fd, NULL, k + *n * key_size) == 0) {
		void *key = k + *n * key_size, *val = v + *n * value_size;

		/* A key that vanished meanwhile ends this drain; what is
		 * left is taken at the next flush. */
		if (bpf_map_lookup_and_delete_elem(fd, key, val) &&
		    (bpf_map_lookup_elem(fd, key, val) || bpf_map_delete_elem(fd, key)))
			break;
		(*n)++;
	}
	return 0;
}

/* One rows ring record: its key kept for its set's drain. */
static int on_ring_row(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	struct ring_keys *rk;
	uint32_t set;

	if (size < d->o.key_size + sizeof(set))
		return 0; /* cannot happen: BPF writes whole rows */
	memcpy(&set, (char *)data + d->o.key_size, sizeof(set));
	rk = &d->ring_keys[set & 1];
	if (rk->n == rk->cap) {
		size_t cap = rk->cap ? rk->cap * 2 : 1024;
		char *k = realloc(rk->keys, cap * d->o.key_size);

		if (!k) {
			d->ring_err = -ENOMEM;
			return -ENOMEM;
		}
		rk->keys = k;
		rk->cap = cap;
	}
	memcpy(rk->keys + rk->n++ * d->o.key_size, data, d->o.key_size);
	return 0;
}

/* The rows ring of @fd, and its consumer and producer positions mapped
 * read-only (the kernel's ring buffer layout: a page each, in that order). */
static int ring_open(struct drain *d, int fd)
{
	void *cons, *prod;

	d->page = (size_t)sysconf(_SC_PAGESIZE);
	cons = mmap(NULL, d->page, PROT_READ, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	d->ring_cons = cons;
	prod = mmap(NULL, d->page, PROT_READ, MAP_SHARED, fd, (off_t)d->page);
	if (prod == MAP_FAILED)
		return -errno;
	d->ring_prod = prod;
	d->ring = ring_buffer__new(fd, on_ring_row, d, NULL);
	return d->ring ? 0 : -errno;
}

struct drain *drain__new(const struct drain_opts *o)
{
	struct drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->o = *o;
	d->row_size = o->chunk == DRAIN_CNTS ? sizeof(struct stk_count)
		      : o->chunk == DRAIN_TRCE ? sizeof(struct stk_trace_count)
					       : sizeof(struct stk_offcpu);
	if (o->chunk != DRAIN_CNTS && o->chunk != DRAIN_OFFC && o->chunk != DRAIN_TRCE) {
		free(d);
		errno = EINVAL;
		return NULL;
	}
	d->keys = calloc(o->entries, o->key_size);
	d->values = calloc(o->entries, o->value_size);
	if (!d->keys || !d->values) {
		drain__free(d);
		errno = ENOMEM;
		return NULL;
	}
	if (o->rows_ring_fd >= 0 && o->value_size == sizeof(uint64_t)) {
		err = ring_open(d, o->rows_ring_fd);
		if (err) {
			drain__free(d);
			errno = -err;
			return NULL;
		}
	}
	return d;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	ring_buffer__free(d->ring);
	if (d->ring_cons)
		munmap((void *)d->ring_cons, d->page);
	if (d->ring_prod)
		munmap((void *)d->ring_prod, d->page);
	free(d->ring_keys[0].keys);
	free(d->ring_keys[1].keys);
	free(d->keys);
	free(d->values);
	free(d->rows);
	free(d->ends);
	free(d);
}

static int rows_reserve(struct drain *d, size_t more)
{
	uint64_t *ends;
	char *rows;
	size_t cap;

	if (d->nr_rows + more <= d->cap_rows)
		return 0;
	cap = d->cap_rows ? d->cap_rows : 1024;
	while (cap < d->nr_rows + more)
		cap *= 2;
	rows = realloc(d->rows, cap * d->row_size);
	if (!rows)
		return -ENOMEM;
	d->rows = rows;
	ends = realloc(d->ends, cap * sizeof(*ends));
	if (!ends)
		return -ENOMEM;
	d->ends = ends;
	d->cap_rows = cap;
	return 0;
}

/* Turn @n entries, keys @k and values @v (@v_step bytes apart: 0, one
 * value for all), into rows, announcing what they need. */
static int add_rows(struct drain *d, struct recorder *rec, const char *k, const char *v,
		    size_t v_step, size_t n)
{
	size_t i;
	int err;

	err = rows_reserve(d, n);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	for (i = 0; d->o.prefetch_row && i < n && i < DRAIN_PREFETCH; i++)
		d->o.prefetch_row(rec, k + i * d->o.key_size);
	for (i = 0; i < n; i++) {
		if (d->o.prefetch_row && i + DRAIN_PREFETCH < n)
			d->o.prefetch_row(rec, k + (i + DRAIN_PREFETCH) * d->o.key_size);
		err = d->o.add_row(rec, k + i * d->o.key_size, v + i * v_step,
				   d->rows + d->nr_rows * d->row_size);
		d->ends[d->nr_rows] = 0;
		if (!err && d->o.row_end)
			err = d->o.row_end(rec, k + i * d->o.key_size, &d->ends[d->nr_rows]);
		if (err)
			return recorder__errorf(rec, err, "out of memory");
		d->nr_ended += d->ends[d->nr_rows] != 0;
		d->nr_rows++;
	}
	return 0;
}

/*
 * Take the rows ring's records into ring_keys, by set: every record
 * reserved before this call, waiting up to RING_WAIT_NS for those still
 * being written (the ring is read in order: one record not committed
 * yet holds back those after it; they are of the set being drained only
 * if a program ran past the flip's grace, else of the new set, and those
 * not read in time are read at the next flush).
 */
static int take_ring(struct drain *d, struct recorder *rec)
{
	unsigned long want = __atomic_load_n(d->ring_prod, __ATOMIC_ACQUIRE);
	struct timespec nap = { 0, 10000 };
	/* A deadline, not a count of naps: a 10 us nap takes 75-200 us. */
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + RING_WAIT_NS;
	int err;

	for (;;) {
		err = ring_buffer__consume(d->ring);
		if (err < 0)
			break;
		if ((long)(__atomic_load_n(d->ring_cons, __ATOMIC_ACQUIRE) - want) >= 0 ||
		    clock_ns(CLOCK_MONOTONIC) >= until)
			return 0;
		nanosleep(&nap, NULL);
	}
	err = d->ring_err ?: err;
	d->ring_err = 0;
	return recorder__errorf(rec, err, err == -ENOMEM ? "out of memory" : "rows ring: %s",
				strerror(-err));
}

/* Drain counts map @set (0 or 1), which no program writes to any more,
 * and the keys the rows ring brought for it. */
static int drain_one(struct drain *d, struct recorder *rec, uint32_t set)
{
	static const uint64_t one = 1;
	struct ring_keys *rk = &d->ring_keys[set];
	size_t n;
	int err, err2;

	err = drain__map(d->o.fds[set], d->keys, d->o.key_size, d->values, d->o.value_size,
			 d->o.entries, &n);
	/* Every stack a row names was sent before the row was counted. */
	if (n || rk->n)
		recorder__take_new_stacks(rec);
	err2 = n ? add_rows(d, rec, d->keys, d->values, d->o.value_size, n) : 0;
	if (!err2 && rk->n)
		err2 = add_rows(d, rec, rk->keys, (const char *)&one, 0, rk->n);
	rk->n = 0;
	if (err)
		return recorder__errorf(rec, err, "drain counts map: %s", strerror(-err));
	return err2;
}

int drain__collect(struct drain *d, struct recorder *rec, int final)
{
	uint32_t set;
	int err;

	if (final) {
		/* Detached: nothing writes either map, nor the ring. */
		err = d->ring ? take_ring(d, rec) : 0;
		err = err ?: drain_one(d, rec, 0);
		return err ?: drain_one(d, rec, 1);
	}
	set = drain__flip(d->o.idx);
	/* After the grace: the ring holds every row of the idle set (and
	 * some of the next interval's, kept for the next flush). */
	err = d->ring ? take_ring(d, rec) : 0;
	return err ?: drain_one(d, rec, set);
}

uint32_t drain__idle(const struct drain *d)
{
	return __atomic_load_n(d->o.idx, __ATOMIC_SEQ_CST) ^ 1;
}

static int write_rows(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
		      const void *rows, size_t n)
{
	if (d->o.chunk == DRAIN_CNTS)
		return stk_writer__add_counts(w, t0_ns, t1_ns, rows, n);
	if (d->o.chunk == DRAIN_TRCE)
		return stk_writer__add_trace(w, t0_ns, t1_ns, rows, n);
	return stk_writer__add_offcpu(w, t0_ns, t1_ns, rows, n);
}

/*
 * Rows with an end: moved to the front, one run per end in the order
 * found, each written as a chunk ending just before its end; the rest
 * after them.  Their order within a run is kept.
 */
static int write_ended(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
		       size_t *done, uint64_t *chunks)
{
	size_t i, j, n;
	int err = 0;

	*done = 0;
	while (d->nr_ended && !err) {
		uint64_t end = 0;

		/* Gather the rows of the first end left, swapping them to
		 * [*done, *done + n). */
		for (i = *done, n = 0; i < d->nr_rows; i++) {
			if (!d->ends[i] || (end && d->ends[i] != end))
				continue;
			end = d->ends[i];
			j = *done + n++;
			if (i != j) {
				char tmp[sizeof(struct stk_offcpu) > sizeof(struct stk_count)
						 ? sizeof(struct stk_offcpu)
						 : sizeof(struct stk_count)];
				uint64_t e = d->ends[j];

				memcpy(tmp, d->rows + j * d->row_size, d->row_size);
				memcpy(d->rows + j * d->row_size, d->rows + i * d->row_size,
				       d->row_size);
				memcpy(d->rows + i * d->row_size, tmp, d->row_size);
				d->ends[j] = d->ends[i];
				d->ends[i] = e;
			}
		}
		if (!n)
			break;
		end = end - 1 < t0_ns ? t0_ns : end - 1 > t1_ns ? t1_ns : end - 1;
		err = write_rows(d, w, t0_ns, end, d->rows + *done * d->row_size, n);
		*chunks += !err;
		*done += n;
		d->nr_ended -= (int)n;
	}
	return err;
}

int drain__write(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
		 uint64_t *chunks)
{
	size_t done = 0;
	int err;

	if (!d->nr_rows)
		return 0;
	err = write_ended(d, w, t0_ns, t1_ns, &done, chunks);
	if (!err && done < d->nr_rows) {
		err = write_rows(d, w, t0_ns, t1_ns, d->rows + done * d->row_size,
				 d->nr_rows - done);
		*chunks += !err;
	}
	d->nr_rows = 0;
	d->nr_ended = 0;
	return err;
}

size_t drain__pending(const struct drain *d)
{
	return d->nr_rows;
}
