// SPDX-License-Identifier: BSD-2-Clause
/*
 * stackstore.c - the recording's stacks: numbering them for the file,
 * queueing new ones for STCK, and evicting written ones from the BPF
 * stacks map (see stackstore.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "idmap.h"
#include "stackstore.h"

struct stackstore {
	int stacks_fd;
	uint32_t capacity;
	/* Written to the file (BPF id -> file id), resident in the BPF map
	 * (BPF id -> last flush that referenced it). */
	struct idmap *written;
	struct idmap *resident;
	uint64_t last_file_id;
	/* Queued for the next STCK: frames appended to one growing buffer. */
	struct stk_stack *pend;
	size_t nr_pend, cap_pend;
	uint64_t *frames;
	size_t nr_frames, cap_frames;
	struct stkrec_stack buf;
	struct stackstore_stats st;
	uint64_t headroom;	/* free entries stackstore__evict() keeps */
	uint64_t lost;		/* samples_stack_lost at its last call */
	int no_batch;		/* no BPF_MAP_DELETE_BATCH (before 5.6) */
	/* New stacks taken from the stack ring, this flush's and the
	 * previous flush's (an off-CPU episode is counted a flush after its
	 * stack was stored): id -> (offset in frames << 8 | frames). */
	struct ring_buffer *ring;
	struct ring_gen {
		struct idmap *ids;
		uint64_t *frames;
		size_t nr, cap;
	} gen[2];
	int cur;		/* gen[] the ring is taken into */
};

struct stackstore *stackstore__new(uint32_t capacity)
{
	struct stackstore *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->stacks_fd = -1;
	ss->capacity = capacity;
	ss->headroom = capacity / 8 ? capacity / 8 : 1;
	ss->written = idmap__new();
	ss->resident = idmap__new();
	if (!ss->written || !ss->resident) {
		stackstore__free(ss);
		errno = ENOMEM;
		return NULL;
	}
	return ss;
}

void stackstore__free(struct stackstore *ss)
{
	if (!ss)
		return;
	idmap__free(ss->written);
	idmap__free(ss->resident);
	ring_buffer__free(ss->ring);
	for (int i = 0; i < 2; i++) {
		idmap__free(ss->gen[i].ids);
		free(ss->gen[i].frames);
	}
	free(ss->pend);
	free(ss->frames);
	free(ss);
}

void stackstore__set_map(struct stackstore *ss, int stacks_fd)
{
	ss->stacks_fd = stacks_fd;
}

/* Room for @need frames in *@buf (*@cap of them): 0 or -ENOMEM. */
static int frames_reserve(uint64_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	uint64_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/* One stack_ring record: kept for stackstore__see() for two flushes.  A
 * malformed one (never written by our programs) is skipped. */
static int on_ring(void *ctx, void *data, size_t size)
{
	struct stackstore *ss = ctx;
	struct ring_gen *g = &ss->gen[ss->cur];
	const struct stkrec_stack *r = data;
	size_t head = sizeof(*r) - sizeof(r->ips);
	uint64_t id;

	/* Skipped (malformed, or no memory): looked up if referenced. */
	if (size < head || r->nr > STKREC_MAX_DEPTH || size < head + r->nr * sizeof(uint64_t) ||
	    (r->shared != STKREC_RING_USER && r->shared != STKREC_RING_KERNEL) ||
	    frames_reserve(&g->frames, &g->cap, g->nr + r->nr)) {
		ss->st.ring_skipped++;
		return 0;
	}
	id = stkrec_stack_id(r->ips, r->nr, r->shared == STKREC_RING_KERNEL);
	if (idmap__set(g->ids, id, (uint64_t)g->nr << 8 | r->nr)) {
		ss->st.ring_skipped++;
		return 0;
	}
	memcpy(g->frames + g->nr, r->ips, r->nr * sizeof(uint64_t));
	g->nr += r->nr;
	return 0;
}

int stackstore__set_ring(struct stackstore *ss, int ring_fd)
{
	ss->gen[0].ids = idmap__new();
	ss->gen[1].ids = idmap__new();
	if (ss->gen[0].ids && ss->gen[1].ids)
		ss->ring = ring_buffer__new(ring_fd, on_ring, ss, NULL);
	if (!ss->ring) {
		int err = ss->gen[0].ids && ss->gen[1].ids ? -errno : -ENOMEM;

		idmap__free(ss->gen[0].ids);
		idmap__free(ss->gen[1].ids);
		ss->gen[0].ids = ss->gen[1].ids = NULL;
		return err;
	}
	return 0;
}

void stackstore__take_ring(struct stackstore *ss)
{
	if (!ss->ring)
		return;
	/* A record the cache had no room for, or a consume error: those
	 * stacks are looked up in the map, as without the ring. */
	ring_buffer__consume(ss->ring);
}

/* A flush is written: the older generation goes, the ring is taken into
 * it from now on. */
static void ring_next_gen(struct stackstore *ss)
{
	struct ring_gen *g;

	if (!ss->ring)
		return;
	ss->cur ^= 1;
	g = &ss->gen[ss->cur];
	idmap__clear(g->ids);
	g->nr = 0;
}

/* Stack @id in ss->buf, from the ring if it brought it, else from the
 * map: 0 or -ENOENT. */
static int read_stack(struct stackstore *ss, uint64_t id)
{
	for (int i = 0; ss->ring && i < 2; i++) {
		const struct ring_gen *g = &ss->gen[ss->cur ^ i];
		uint64_t *v = idmap__find(g->ids, id);

		if (!v)
			continue;
		ss->buf.nr = (uint32_t)(*v & 0xff);
		ss->buf.shared = 0;
		memcpy(ss->buf.ips, g->frames + (*v >> 8), ss->buf.nr * sizeof(uint64_t));
		ss->st.from_ring++;
		return 0;
	}
	if (bpf_map_lookup_elem(ss->stacks_fd, &id, &ss->buf))
		return -ENOENT;
	ss->st.from_map++;
	return 0;
}

static int queue_stack(struct stackstore *ss, uint64_t id, const struct stkrec_stack *s)
{
	uint32_t nr = s->nr < STKREC_MAX_DEPTH ? s->nr : STKREC_MAX_DEPTH;

	if (ss->nr_pend == ss->cap_pend) {
		size_t cap = ss->cap_pend ? ss->cap_pend * 2 : 256;
		struct stk_stack *p = realloc(ss->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ss->pend = p;
		ss->cap_pend = cap;
	}
	if (frames_reserve(&ss->frames, &ss->cap_frames, ss->nr_frames + nr))
		return -ENOMEM;
	memcpy(ss->frames + ss->nr_frames, s->ips, nr * sizeof(uint64_t));
	ss->nr_frames += nr;
	ss->pend[ss->nr_pend++] = (struct stk_stack){ .id = id, .nr_frames = nr };
	return 0;
}

int stackstore__see(struct stackstore *ss, int64_t *ref, uint64_t seq,
		    const struct stkrec_stack **added)
{
	uint64_t id, *file_id;
	int err;

	*added = NULL;
	if (*ref < 0)
		return 0;
	id = (uint64_t)*ref;
	file_id = idmap__find(ss->written, id);
	if (file_id) {
		*ref = (int64_t)*file_id;
		/* Re-inserted by BPF if we evicted it: resident again. */
		return idmap__set(ss->resident, id, seq);
	}
	if (read_stack(ss, id)) {
		/* Cannot happen: only written stacks are ever deleted. */
		ss->st.missing++;
		*ref = -ENOENT;
		return 0;
	}
	err = queue_stack(ss, ss->last_file_id + 1, &ss->buf);
	err = err ?: idmap__set(ss->written, id, ss->last_file_id + 1);
	err = err ?: idmap__set(ss->resident, id, seq);
	if (err)
		return err;
	*ref = (int64_t)++ss->last_file_id;
	ss->st.written++;
	*added = &ss->buf;
	return 0;
}

int stackstore__write(struct stackstore *ss, struct stk_writer *w, uint64_t *chunks)
{
	size_t i, off = 0;
	int err;

	ring_next_gen(ss);
	if (!ss->nr_pend)
		return 0;
	/* Frames were appended to one growing buffer: point into it now. */
	for (i = 0; i < ss->nr_pend; i++) {
		ss->pend[i].frames = ss->frames + off;
		off += ss->pend[i].nr_frames;
	}
	err = stk_writer__add_stacks(w, ss->pend, ss->nr_pend);
	ss->nr_pend = 0;
	ss->nr_frames = 0;
	if (!err)
		(*chunks)++;
	return err;
}

struct victim {
	uint64_t seq, key;
	int gone;		/* no longer in the map */
};

static int victim_cmp(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Moves the @need victims referenced longest ago to the front of @v.  The
 * values are flush numbers, few and close together: counted, not sorted
 * (a sort of a full map took a tenth of the recorder's time under churn).
 */
static void oldest_first(struct victim *v, size_t n, size_t need)
{
	uint64_t lo = UINT64_MAX, hi = 0, cut, range;
	size_t i, j, below = 0, *counts;

	for (i = 0; i < n; i++) {
		lo = v[i].seq < lo ? v[i].seq : lo;
		hi = v[i].seq > hi ? v[i].seq : hi;
	}
	if (!n || need >= n)
		return;
	range = hi - lo + 1;
	counts = range <= 1u << 20 ? calloc(range, sizeof(*counts)) : NULL;
	if (!counts) {
		qsort(v, n, sizeof(*v), victim_cmp);
		return;
	}
	for (i = 0; i < n; i++)
		counts[v[i].seq - lo]++;
	/* @cut: the flush whose stacks complete @need; those before it go
	 * whole, then as many of its own as are still needed. */
	for (cut = 0; below + counts[cut] < need; cut++)
		below += counts[cut];
	free(counts);
	for (i = j = 0; i < n && j < need; i++) {
		if (v[i].seq - lo < cut || (v[i].seq - lo == cut && below < need)) {
			struct victim t = v[j];

			below += v[i].seq - lo == cut;
			v[j++] = v[i];
			v[i] = t;
		}
	}
}

/* Delete the keys of @n victims from the map, in batches of one syscall
 * (key by key before Linux 5.6, and for a batch the kernel refused
 * whole).  Each victim's .gone says whether it has left the map (deleted
 * now, or dropped by BPF before); @deleted counts those deleted now. */
static void delete_keys(struct stackstore *ss, struct victim *v, size_t n, uint64_t *deleted)
{
	uint64_t keys[256];
	size_t i = 0, k, j;
	__u32 count;
	int err;

	while (i < n) {
		k = n - i < 256 ? n - i : 256;
		for (j = 0; j < k; j++)
			keys[j] = v[i + j].key;
		if (!ss->no_batch) {
			count = (__u32)k;
			err = bpf_map_delete_batch(ss->stacks_fd, keys, &count, NULL);
			/* @count is the kernel's only when it ran the batch:
			 * all of it, or up to a key BPF dropped already
			 * (stack_drop()), which is gone too. */
			if (!err || errno == ENOENT) {
				for (j = 0; j < count && j < k; j++)
					v[i + j].gone = 1;
				*deleted += count < k ? count : k;
				if (err && count < k)
					v[i + count].gone = 1;
				i += err && count < k ? count + 1 : k;
				continue;
			}
			if (errno == EINVAL || errno == ENOTSUP || errno == 524 /* ENOTSUPP */)
				ss->no_batch = 1;
			/* Stopped part way (count < k: the kernel wrote it
			 * back): those before it are deleted. */
			if (count < k) {
				for (j = 0; j < count; j++)
					v[i + j].gone = 1;
				*deleted += count;
				i += count;
				k -= count;
				for (j = 0; j < k; j++)
					keys[j] = v[i + j].key;
			}
		}
		for (j = 0; j < k; j++) {
			if (bpf_map_delete_elem(ss->stacks_fd, &keys[j]) == 0) {
				v[i + j].gone = 1;
				(*deleted)++;
			} else if (errno == ENOENT) {
				v[i + j].gone = 1;
			}
		}
		i += k;
	}
}

int stackstore__evict(struct stackstore *ss, uint64_t in_map, uint64_t lost)
{
	uint64_t cap = ss->capacity, floor = cap / 8 ? cap / 8 : 1, key, val, deleted = 0;
	size_t it = 0, n = 0, need;
	struct victim *v;

	/* Samples lost their stack for want of room since the last call:
	 * keep more room from now on; else let it shrink back. */
	if (lost > ss->lost) {
		ss->headroom = ss->headroom * 2 < cap / 2 ? ss->headroom * 2 : cap / 2;
		if (ss->headroom < floor)
			ss->headroom = floor;
	} else if (ss->headroom > floor) {
		ss->headroom -= ss->headroom / 4;
		if (ss->headroom < floor)
			ss->headroom = floor;
	}
	ss->lost = lost;
	/* @in_map counts the stacks nothing written references too (BPF
	 * drops most of those itself): they take room all the same. */
	if (in_map < idmap__count(ss->resident))
		in_map = idmap__count(ss->resident);
	if (in_map + ss->headroom <= cap)
		return 0;
	if (!idmap__count(ss->resident))
		return 1;
	/* Down to the headroom and a sixteenth more, so that a map at the
	 * edge does not evict a few stacks at every flush. */
	need = in_map + ss->headroom + cap / 16 - cap;
	v = malloc(idmap__count(ss->resident) * sizeof(*v));
	if (!v)
		return 0;
	while (idmap__next(ss->resident, &it, &key, &val))
		v[n++] = (struct victim){ .seq = val, .key = key };
	if (need > n)
		need = n;
	/* The stacks referenced longest ago first: the ones sampled now
	 * stay, and a working set that fits the map never churns. */
	oldest_first(v, n, need);
	delete_keys(ss, v, need, &deleted);
	/* Those still in the map (a delete that failed) stay resident. */
	for (it = 0; it < need; it++)
		if (v[it].gone)
			idmap__remove(ss->resident, v[it].key);
	ss->st.evicted += deleted;
	free(v);
	return in_map - (deleted < in_map ? deleted : in_map) + ss->headroom > cap;
}

int stackstore__sweep(struct stackstore *ss, int (*collect_live)(void *ctx, struct idmap *live),
		      void *ctx)
{
	size_t n = 0, cap = 0, i, k;
	uint64_t key, prev, deleted = 0;
	struct victim *v = NULL;
	struct idmap *live;
	int err = 0;

	live = idmap__new();
	if (!live)
		return -ENOMEM;
	/* The keys first, then what holds them: a stack stored after the
	 * keys were taken is not a candidate, one taken by a new holder
	 * before the holders are read is held. */
	/* A walk restarts when BPF deletes the key it stands on: bounded,
	 * the keys read so far are candidates enough. */
	while (bpf_map_get_next_key(ss->stacks_fd, n ? &prev : NULL, &key) == 0 &&
	       n < 2 * (size_t)ss->capacity + 64) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 1024;
			struct victim *nv = realloc(v, c * sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
			cap = c;
		}
		v[n++] = (struct victim){ .key = key };
		prev = key;
	}
	err = collect_live(ctx, live);
	if (err)
		goto out;
	/* In the file: whoever holds it gets its file id without reading
	 * the map.  Else only if nothing holds it. */
	for (i = k = 0; i < n; i++)
		if (idmap__find(ss->written, v[i].key) || !idmap__find(live, v[i].key))
			v[k++] = v[i];
	delete_keys(ss, v, k, &deleted);
	ss->st.swept += deleted;
	for (i = 0; i < k; i++)
		if (v[i].gone)
			idmap__remove(ss->resident, v[i].key);
	ss->st.sweeps++;
out:
	free(v);
	idmap__free(live);
	return err;
}

size_t stackstore__count(const struct stackstore *ss)
{
	return idmap__count(ss->written);
}

void stackstore__stats(const struct stackstore *ss, struct stackstore_stats *st)
{
	*st = ss->st;
}
