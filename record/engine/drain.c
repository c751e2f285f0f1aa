// SPDX-License-Identifier: BSD-2-Clause
/* Emptying a mode's double-buffered counts maps, and the rows ring of
 * samples that sent a new stack, into rows, and writing them (see
 * drain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "drain.h"
#include "mode.h"
#include "ringpos.h"

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
	uint32_t *slots;	/* per row: the interval (slot) it was counted in */
	size_t nr_rows, cap_rows;
	/* With o.slot_off: the intervals' grid (interval s is
	 * [base + s * ns, base + (s + 1) * ns)), the one the last flip came
	 * in, and the times of the flips before and after the rows being
	 * drained were counted (after: 0 for the final drain, the end). */
	uint64_t base, ns;
	uint64_t open;
	uint64_t lo, hi;
	/* Entries the last drain__collect() took from the counts map (with
	 * lanes, a row or more each; the rows ring's are not in the map). */
	size_t last_keys;
	int nr_ended;		/* rows with an end */
	/* The rows ring, its positions (mapped read-only), and what it
	 * brought for each set. */
	struct ring_buffer *ring;
	struct ringpos ring_pos;
	struct ring_keys ring_keys[2];
	int ring_err;
};

void drain__start(struct drain *d, uint64_t base, uint64_t ns)
{
	if (!d->o.slot_off || !ns)
		return;
	d->base = base;
	d->ns = ns;
	d->hi = base;
	*d->o.slot_base = base;
	__atomic_store_n(d->o.slot_ns, ns, __ATOMIC_SEQ_CST);
}

uint64_t drain__interval_end(const struct drain *d, uint64_t now)
{
	if (!d->ns)
		return 0;
	if (now < d->base)
		return d->base + d->ns;
	return d->base + ((now - d->base) / d->ns + 1) * d->ns;
}

uint32_t drain__intervals(struct drain *d, uint32_t max, uint32_t elapsed)
{
	uint32_t q = ringpos__intervals(&d->ring_pos, max, elapsed);

	if (!d->ns)
		return 0;
	return ringpos_fit(d->last_keys, elapsed, d->o.entries / 2, q);
}

uint32_t drain__entries(const struct drain *d)
{
	return d->o.entries;
}

/* The interval open now (the latest a program that already chose its map
 * can have taken its slot in), and the rows about to be drained counted
 * since the last flip and until now (@flip) or the end. */
static void mark_open(struct drain *d, int flip)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	d->open = d->ns && now > d->base ? (now - d->base) / d->ns : 0;
	d->lo = d->hi;
	d->hi = flip ? now : 0;
}

/* Make programs count into the other map, wait the grace period, and
 * return the index (0 or 1) of the now idle map. */
static uint32_t flip(struct drain *d)
{
	struct timespec grace = { 0, DRAIN_FLIP_GRACE_NS };
	uint32_t idle = __atomic_load_n(d->o.idx, __ATOMIC_SEQ_CST);

	__atomic_store_n(d->o.idx, idle ^ 1, __ATOMIC_SEQ_CST);
	mark_open(d, 1);
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

/* The rows ring of @fd, and its positions. */
static int ring_open(struct drain *d, int fd)
{
	int err = ringpos__open(&d->ring_pos, fd);

	if (err)
		return err;
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
	if (o->lanes && (o->chunk != DRAIN_CNTS || !o->slot_off ||
			 o->value_size != o->lanes * sizeof(uint32_t))) {
		drain__free(d);
		errno = EINVAL;
		return NULL;
	}
	if (o->rows_ring_fd >= 0 && o->lanes) {
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
	ringpos__close(&d->ring_pos);
	free(d->ring_keys[0].keys);
	free(d->ring_keys[1].keys);
	free(d->keys);
	free(d->values);
	free(d->rows);
	free(d->ends);
	free(d->slots);
	free(d);
}

static int rows_reserve(struct drain *d, size_t more)
{
	uint32_t *slots;
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
	slots = realloc(d->slots, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	d->slots = slots;
	d->cap_rows = cap;
	return 0;
}

/* One row of @key, counted @value (a drained value, or a lane's count),
 * in interval @slot. */
static int add_one_row(struct drain *d, struct recorder *rec, const char *key, const void *value,
		       uint32_t slot)
{
	int err = d->o.add_row(rec, key, value, d->rows + d->nr_rows * d->row_size);

	d->ends[d->nr_rows] = 0;
	d->slots[d->nr_rows] = slot;
	if (!err && d->o.row_end)
		err = d->o.row_end(rec, key, &d->ends[d->nr_rows]);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	d->nr_ended += d->ends[d->nr_rows] != 0;
	d->nr_rows++;
	return 0;
}

/*
 * Turn @n entries, keys @k and values @v (@v_step bytes apart: 0, one
 * value for all), into rows, announcing what they need.  With @lanes
 * (o.lanes, a counts map's entries), a value is that many __u32 counts of
 * intervals slot * @lanes + j: a row each lane that counted.
 */
static int add_rows(struct drain *d, struct recorder *rec, const char *k, const char *v,
		    size_t v_step, size_t n, uint32_t lanes)
{
	uint32_t j, slot = 0;
	size_t i, rows = lanes ? 0 : n;
	uint64_t count;
	int err;

	for (i = 0; lanes && i < n; i++)
		for (j = 0; j < lanes; j++)
			rows += ((const uint32_t *)(v + i * v_step))[j] != 0;
	err = rows_reserve(d, rows);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	for (i = 0; d->o.prefetch_row && i < n && i < DRAIN_PREFETCH; i++)
		d->o.prefetch_row(rec, k + i * d->o.key_size);
	for (i = 0; i < n; i++) {
		const char *key = k + i * d->o.key_size;
		const uint32_t *l = (const uint32_t *)(v + i * v_step);

		if (d->o.prefetch_row && i + DRAIN_PREFETCH < n)
			d->o.prefetch_row(rec, k + (i + DRAIN_PREFETCH) * d->o.key_size);
		if (d->o.slot_off)
			memcpy(&slot, key + d->o.slot_off, sizeof(slot));
		if (!lanes) {
			err = add_one_row(d, rec, key, l, slot);
			if (err)
				return err;
			continue;
		}
		for (j = 0; j < lanes; j++) {
			if (!l[j])
				continue;
			count = l[j];
			err = add_one_row(d, rec, key, &count, slot * lanes + j);
			if (err)
				return err;
		}
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
	unsigned long want = ringpos__prod(&d->ring_pos);
	struct timespec nap = { 0, 10000 };
	/* A deadline, not a count of naps: a 10 us nap takes 75-200 us. */
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + RING_WAIT_NS;
	int err;

	for (;;) {
		err = ring_buffer__consume(d->ring);
		if (err < 0)
			break;
		if (ringpos__reached(&d->ring_pos, want) ||
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
	d->last_keys = n;
	/* Empty (no program writes it): its new keys count from none. */
	if (d->o.fill)
		__atomic_store_n(&d->o.fill[set], 0, __ATOMIC_RELAXED);
	/* Every stack a row names was sent before the row was counted. */
	if (n || rk->n)
		recorder__take_new_stacks(rec);
	err2 = n ? add_rows(d, rec, d->keys, d->values, d->o.value_size, n, d->o.lanes) : 0;
	/* The ring's rows: count 1, the whole interval in the key. */
	if (!err2 && rk->n)
		err2 = add_rows(d, rec, rk->keys, (const char *)&one, 0, rk->n, 0);
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
		mark_open(d, 0);
		err = d->ring ? take_ring(d, rec) : 0;
		err = err ?: drain_one(d, rec, 0);
		return err ?: drain_one(d, rec, 1);
	}
	set = flip(d);
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

/* Swap rows @i and @j with what is kept per row. */
static void swap_rows(struct drain *d, size_t i, size_t j)
{
	char tmp[sizeof(struct stk_offcpu) > sizeof(struct stk_count) ? sizeof(struct stk_offcpu)
								       : sizeof(struct stk_count)];
	uint64_t e = d->ends[j];
	uint32_t sl = d->slots[j];

	if (i == j)
		return;
	memcpy(tmp, d->rows + j * d->row_size, d->row_size);
	memcpy(d->rows + j * d->row_size, d->rows + i * d->row_size, d->row_size);
	memcpy(d->rows + i * d->row_size, tmp, d->row_size);
	d->ends[j] = d->ends[i];
	d->ends[i] = e;
	d->slots[j] = d->slots[i];
	d->slots[i] = sl;
}

/*
 * Rows [@from, @to) with an end: moved to the front of that range, one run
 * per end in the order found, each written as a chunk ending just before
 * its end; *@done is set to where the rows without one start.  Their order
 * within a run is kept.
 */
static int write_ended(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
		       size_t from, size_t to, size_t *done, uint64_t *chunks)
{
	size_t i, n;
	int err = 0;

	*done = from;
	while (d->nr_ended && !err) {
		uint64_t end = 0;

		/* Gather the rows of the first end left, swapping them to
		 * [*done, *done + n). */
		for (i = *done, n = 0; i < to; i++) {
			if (!d->ends[i] || (end && d->ends[i] != end))
				continue;
			end = d->ends[i];
			swap_rows(d, i, *done + n++);
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

/* Write rows [@from, @to), which cover @t0_ns..@t1_ns. */
static int write_range(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
		       size_t from, size_t to, uint64_t *chunks)
{
	size_t done;
	int err;

	err = write_ended(d, w, t0_ns, t1_ns, from, to, &done, chunks);
	if (!err && done < to) {
		err = write_rows(d, w, t0_ns, t1_ns, d->rows + done * d->row_size, to - done);
		*chunks += !err;
	}
	return err;
}

/* How many intervals before the open one slot @sl is (one after it,
 * which cannot be, counts as the open one). */
static uint32_t slot_age(const struct drain *d, uint32_t sl)
{
	uint32_t age = (uint32_t)d->open - sl;

	return age > UINT32_MAX / 2 ? 0 : age;
}

int drain__write(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t file_ns,
		 uint64_t t1_ns, uint64_t *chunks)
{
	size_t i, j, from;
	int err = 0;

	if (!d->nr_rows)
		return 0;
	if (!d->o.slot_off || !d->ns)
		err = write_range(d, w, t0_ns, t1_ns, 0, d->nr_rows, chunks);
	/* One chunk of rows per interval, oldest first, covering it from
	 * the flip before to the flip after them (or @t1_ns, the final
	 * drain's end), not before the file's @file_ns; the rows of each
	 * gathered in front of the later ones'. */
	for (from = 0; d->o.slot_off && d->ns && from < d->nr_rows && !err; from = j) {
		uint32_t age = slot_age(d, d->slots[from]);
		uint64_t s, a, b, lo = d->lo > file_ns ? d->lo : file_ns;
		uint64_t hi = d->hi ? d->hi : t1_ns;

		for (i = from; i < d->nr_rows; i++)
			if (slot_age(d, d->slots[i]) > age)
				age = slot_age(d, d->slots[i]);
		for (i = j = from; i < d->nr_rows; i++)
			if (slot_age(d, d->slots[i]) == age)
				swap_rows(d, i, j++);
		s = d->open >= age ? d->open - age : 0;
		a = d->base + s * d->ns;
		b = a + d->ns;
		a = a < lo ? lo : a > hi ? hi : a;
		b = b < a ? a : b > hi ? hi : b;
		err = write_range(d, w, a, b, from, j, chunks);
	}
	d->nr_rows = 0;
	d->nr_ended = 0;
	return err;
}

size_t drain__pending(const struct drain *d)
{
	return d->nr_rows;
}
