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
};

struct stackstore *stackstore__new(uint32_t capacity)
{
	struct stackstore *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->stacks_fd = -1;
	ss->capacity = capacity;
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
	free(ss->pend);
	free(ss->frames);
	free(ss);
}

void stackstore__set_map(struct stackstore *ss, int stacks_fd)
{
	ss->stacks_fd = stacks_fd;
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
	if (ss->nr_frames + nr > ss->cap_frames) {
		size_t cap = ss->cap_frames ? ss->cap_frames : 4096;
		uint64_t *p;

		while (cap < ss->nr_frames + nr)
			cap *= 2;
		p = realloc(ss->frames, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ss->frames = p;
		ss->cap_frames = cap;
	}
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
	if (bpf_map_lookup_elem(ss->stacks_fd, &id, &ss->buf)) {
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

void stackstore__evict(struct stackstore *ss, uint64_t seq, uint64_t in_map)
{
	uint32_t cap = ss->capacity;
	size_t it, n = 0, i, pass;
	uint64_t key, val, *victims;

	/* @in_map counts the stacks nothing written references too (BPF
	 * drops most of those itself): they take room all the same. */
	if (in_map < idmap__count(ss->resident))
		in_map = idmap__count(ss->resident);
	if (in_map * 2 <= cap || !idmap__count(ss->resident))
		return;
	victims = malloc(idmap__count(ss->resident) * sizeof(*victims));
	if (!victims)
		return;
	for (pass = 0; pass < 2; pass++) {
		n = 0;
		it = 0;
		/* Resident values are the flush that referenced the stack;
		 * @seq is already one past the flush just written. */
		while (idmap__next(ss->resident, &it, &key, &val))
			if (pass == 1 || val + 1 < seq)
				victims[n++] = key;
		for (i = 0; i < n; i++) {
			/* BPF may have dropped it already (stack_drop()). */
			if (bpf_map_delete_elem(ss->stacks_fd, &victims[i]) == 0) {
				ss->st.evicted++;
				in_map--;
			}
			idmap__remove(ss->resident, victims[i]);
		}
		if (in_map * 4 <= (uint64_t)cap * 3)
			break;
	}
	free(victims);
}

int stackstore__sweep(struct stackstore *ss, int (*collect_live)(void *ctx, struct idmap *live),
		      void *ctx)
{
	size_t n = 0, cap = 0, i;
	uint64_t key, *keys = NULL, *prev = NULL;
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
	while (bpf_map_get_next_key(ss->stacks_fd, prev, &key) == 0 &&
	       n < 2 * (size_t)ss->capacity + 64) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 1024;
			uint64_t *k = realloc(keys, c * sizeof(*k));

			if (!k) {
				err = -ENOMEM;
				goto out;
			}
			keys = k;
			cap = c;
		}
		keys[n++] = key;
		prev = &keys[n - 1];
	}
	err = collect_live(ctx, live);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		/* In the file: whoever holds it gets its file id without
		 * reading the map.  Else only if nothing holds it. */
		if (!idmap__find(ss->written, keys[i]) && idmap__find(live, keys[i]))
			continue;
		if (bpf_map_delete_elem(ss->stacks_fd, &keys[i]) == 0)
			ss->st.swept++;
		idmap__remove(ss->resident, keys[i]);
	}
	ss->st.sweeps++;
out:
	free(keys);
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
