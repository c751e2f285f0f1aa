// SPDX-License-Identifier: BSD-2-Clause
/* Emptying a mode's double-buffered counts maps into rows, and writing
 * them (see drain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "drain.h"
#include "mode.h"

struct drain {
	struct drain_opts o;
	size_t row_size;
	void *keys, *values;	/* one map's worth of entries */
	char *rows;		/* rows built, not written yet */
	uint64_t *ends;		/* per row: row_end()'s, 0 for the interval's */
	size_t nr_rows, cap_rows;
	int nr_ended;		/* rows with an end */
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

struct drain *drain__new(const struct drain_opts *o)
{
	struct drain *d = calloc(1, sizeof(*d));

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
	return d;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
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

/* Turn @n drained entries into rows, announcing what they need. */
static int add_rows(struct drain *d, struct recorder *rec, size_t n)
{
	const char *k = d->keys, *v = d->values;
	size_t i;
	int err;

	err = rows_reserve(d, n);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	for (i = 0; i < n; i++) {
		err = d->o.add_row(rec, k + i * d->o.key_size, v + i * d->o.value_size,
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

/* Drain one counts map that no program writes to any more. */
static int drain_one(struct drain *d, struct recorder *rec, int fd)
{
	size_t n;
	int err, err2;

	err = drain__map(fd, d->keys, d->o.key_size, d->values, d->o.value_size, d->o.entries, &n);
	if (n)
		recorder__take_new_stacks(rec);
	err2 = n ? add_rows(d, rec, n) : 0;
	if (err)
		return recorder__errorf(rec, err, "drain counts map: %s", strerror(-err));
	return err2;
}

int drain__collect(struct drain *d, struct recorder *rec, int final)
{
	int err;

	if (final) {
		/* Detached: nothing writes either map. */
		err = drain_one(d, rec, d->o.fds[0]);
		return err ?: drain_one(d, rec, d->o.fds[1]);
	}
	return drain_one(d, rec, d->o.fds[drain__flip(d->o.idx)]);
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
