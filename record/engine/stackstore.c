// SPDX-License-Identifier: BSD-2-Clause
/*
 * stackstore.c - the recording's stacks: holding the frames the kernel
 * sends, numbering stacks for the file, queueing new ones for STCK, and
 * forgetting the ones nothing referenced (see stackstore.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "idmap.h"
#include "ringpos.h"
#include "stackstore.h"

/*
 * Every stack the store knows, in one map (a lookup or two per stack
 * instead of one per pool): BPF id -> its file id once written (bit 63
 * clear; the flush it was last used in, modulo 2^23, in bits 40-62), else
 * HELD | pool << 60 | offset of its frames << 8 | frames.
 */
#define HELD		(1ULL << 63)
#define POOL_OLD	2
#define OFF_MASK	((1ULL << 52) - 1)
#define FILE_ID_MASK	((1ULL << 40) - 1)
#define USED_SHIFT	40
#define USED_MASK	((1ULL << 23) - 1)

/*
 * Written stacks not used for WRITTEN_AGE flushes (no row referenced them,
 * the kernel did not send them again) are forgotten once the store knows
 * more than WRITTEN_PER_SET times the kernel's set of them: their ids
 * leave the kernel's set at one flush and the store at the next, so that
 * a stack seen again is sent again and written again under a new file id
 * (a few bytes of STCK) instead of every stack of a long recording being
 * remembered for good (the map grew by ~30 bytes a stack, without end).
 * Three sets' worth (49152 at the default 16384), with what is held, fit
 * a map of 131072 slots (2 MiB, half full at most): four made it double to
 * 4 MiB just before the first sweep.
 */
#define WRITTEN_AGE	64
#define WRITTEN_PER_SET	3
#define RESERVE_AT	4096

static uint64_t held_value(unsigned int pool, size_t off, uint32_t nr)
{
	return HELD | (uint64_t)pool << 60 | (uint64_t)off << 8 | nr;
}

static unsigned int pool_of(uint64_t v)
{
	return (unsigned int)(v >> 60) & 3;
}

static uint32_t held_nr(uint64_t v)
{
	return (uint32_t)(v & 0xff);
}

/* The value of a written stack: @file_id, used in flush @epoch. */
static uint64_t written_value(uint64_t file_id, uint64_t epoch)
{
	return (file_id & FILE_ID_MASK) | (epoch & USED_MASK) << USED_SHIFT;
}

/* Flushes since written value @v was last used, at flush @epoch. */
static uint64_t written_age(uint64_t v, uint64_t epoch)
{
	return (epoch - (v >> USED_SHIFT)) & USED_MASK;
}

/*
 * Ring records taken whose ids are looked up a few records later: the
 * slot of each is prefetched as it comes, so that the lookups of a batch
 * (hundreds at a flush) wait for memory together, not one after another
 * (the map of every stack known is larger than the caches).
 */
#define STAGE		8

/* Frames that came in one flush (or, POOL_OLD, that off-CPU holders
 * keep), the ids they came under, and how many of them are still held
 * there (age() walks the ids only then). */
struct pool {
	uint64_t *frames;
	size_t nr, cap;
	uint64_t *ids;
	size_t nids, capids;
	size_t nheld;
};

/* A ring record staged: its frames in the current pool at @off. */
struct staged {
	uint64_t id;
	size_t off;
	uint32_t nr, tgid, kind;
};

struct stackstore {
	int set_fd;
	uint32_t capacity;
	struct idmap *ids;
	size_t reserve;		/* ids to reserve room for, once RESERVE_AT are known */
	uint64_t last_file_id;
	size_t nheld;
	/* Queued for the next STCK: frames appended to one growing buffer,
	 * pend_off[i] where pend[i]'s start. */
	struct stk_stack *pend;
	size_t *pend_off;
	size_t nr_pend, cap_pend, cap_pend_off;
	uint64_t *frames;
	size_t nr_frames, cap_frames;
	struct stkrec_stack buf;
	struct stackstore_stats st;
	/* Frames from the ring: pool[cur] since the last flush, the other
	 * since the one before; pool[POOL_OLD] what off-CPU holders may
	 * still want, or (profile) what is forgotten at the next flush, its
	 * ids out of the kernel's set already. */
	struct ring_buffer *ring;
	struct ringpos ring_pos;	/* ... its positions */
	struct pool pool[3];
	unsigned int cur;
	struct staged stage[STAGE];
	unsigned int stage_head, nr_staged;
	int (*collect_live)(void *ctx, struct idmap *live);
	void *live_ctx;
	int (*resolve)(void *ctx, struct stkrec_stack *s);
	void *resolve_ctx;
	/* Told of each new user stack with Python words as it arrives. */
	void (*py_new)(void *ctx, uint32_t tgid, const uint64_t *words, uint32_t n);
	void *py_ctx;
	/* Placeholders numbered whose frames wait for a table (resolve()
	 * said later): queued once it is in. */
	struct late {
		uint64_t file_id, seq;
		uint32_t tgid;
		uint32_t nr_py;		/* Python words after the placeholder */
		uint64_t *py;		/* owned; NULL if none */
	} *late;
	size_t nr_late, cap_late;
	/* Ids to take out of the kernel's set (room reserved by age()). */
	uint64_t *unset;
	size_t nr_unset, cap_unset;
	/* Flushes aged; written stacks unused for longer than WRITTEN_AGE
	 * flushes out of the kernel's set since flush @sweep_epoch (0:
	 * none), to leave the map at the next. */
	uint64_t epoch, sweep_epoch, last_sweep;
	/* stackstore__keep_written(): the frames of the stacks written to
	 * this file, by file id (kept_at: file id -> offset << 8 | frames),
	 * to write them again in the next file. */
	int keep;
	struct pool kept;
	struct idmap *kept_at;
};

static void late_clear(struct stackstore *ss);

struct stackstore *stackstore__new(uint32_t capacity)
{
	struct stackstore *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->set_fd = -1;
	ss->capacity = capacity;
	ss->ids = idmap__new();
	if (!ss->ids) {
		free(ss);
		errno = ENOMEM;
		return NULL;
	}
	ss->reserve = (size_t)WRITTEN_PER_SET * (capacity < 16384 ? capacity : 16384);
	return ss;
}

static void pool_free(struct pool *p)
{
	free(p->frames);
	free(p->ids);
	*p = (struct pool){};
}

void stackstore__free(struct stackstore *ss)
{
	if (!ss)
		return;
	idmap__free(ss->ids);
	idmap__free(ss->kept_at);
	pool_free(&ss->kept);
	ring_buffer__free(ss->ring);
	ringpos__close(&ss->ring_pos);
	for (int i = 0; i < 3; i++)
		pool_free(&ss->pool[i]);
	free(ss->unset);
	late_clear(ss);
	free(ss->late);
	free(ss->pend);
	free(ss->pend_off);
	free(ss->frames);
	free(ss);
}

void stackstore__set_map(struct stackstore *ss, int stacks_fd)
{
	ss->set_fd = stacks_fd;
}

void stackstore__set_live(struct stackstore *ss, int (*collect_live)(void *ctx, struct idmap *live),
			  void *ctx)
{
	ss->collect_live = collect_live;
	ss->live_ctx = ctx;
}

/* Room for @need elements of @size bytes in *@buf (*@cap of them): 0 or
 * -ENOMEM. */
static int reserve(void **buf, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 4096;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n * size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static int frames_reserve(uint64_t **buf, size_t *cap, size_t need)
{
	void *p = *buf;
	int err = reserve(&p, cap, need, sizeof(uint64_t));

	*buf = p;
	return err;
}

/* Append @id's @nr frames to @p; *@off is where they start.  The id map
 * is not touched (a pointer into it stays valid): 0 or -ENOMEM. */
static int pool_add(struct pool *p, uint64_t id, const uint64_t *ips, uint32_t nr, size_t *off)
{
	void *q = p->ids;
	int err;

	if (p->nr + nr > OFF_MASK)
		return -ENOMEM;
	err = reserve(&q, &p->capids, p->nids + 1, sizeof(*p->ids));
	p->ids = q;
	if (err || frames_reserve(&p->frames, &p->cap, p->nr + nr))
		return -ENOMEM;
	memcpy(p->frames + p->nr, ips, nr * sizeof(uint64_t));
	*off = p->nr;
	p->nr += nr;
	p->ids[p->nids++] = id;
	return 0;
}

static const uint64_t *held_frames(const struct stackstore *ss, uint64_t v)
{
	return ss->pool[pool_of(v)].frames + ((v >> 8) & OFF_MASK);
}

/* Held value @v is held no more (written, dropped, or held again). */
static void unhold(struct stackstore *ss, uint64_t v)
{
	ss->pool[pool_of(v)].nheld--;
	ss->nheld--;
}

/* The held value of frames at @off in pool @pool, counted there. */
static uint64_t hold(struct stackstore *ss, unsigned int pool, size_t off, uint32_t nr)
{
	ss->pool[pool].nheld++;
	ss->nheld++;
	return held_value(pool, off, nr);
}

/* Take @id out of the kernel's set at the next delete_unset(), so that
 * the stack is sent again when next seen (room reserved by age()). */
static void unset(struct stackstore *ss, uint64_t id)
{
	if (ss->nr_unset < ss->cap_unset)
		ss->unset[ss->nr_unset++] = id;
}

/* The oldest staged record: a new stack is held under its id (its frames
 * are in the current pool already); one known already is not added
 * again. */
static void unstage(struct stackstore *ss)
{
	struct staged *e = &ss->stage[ss->stage_head];
	struct pool *p = &ss->pool[ss->cur];
	uint64_t *v;

	ss->stage_head = (ss->stage_head + 1) % STAGE;
	ss->nr_staged--;
	/* Sent again after the kernel's set evicted it (or its id was taken
	 * out), or by two CPUs at once: the frames are the same (the id is
	 * their hash).  One still held is young again: it is in use (its
	 * frames at @off, in the current pool, are the ones held). */
	v = idmap__find(ss->ids, e->id);
	if (v) {
		ss->st.resent++;
		if ((*v & HELD) && pool_of(*v) != ss->cur) {
			unhold(ss, *v);
			*v = hold(ss, ss->cur, e->off, e->nr);
		} else if (!(*v & HELD)) {
			*v = written_value(*v, ss->epoch); /* in the set again: in use */
		}
		return;
	}
	if (ss->py_new && e->kind == STKREC_RING_USER) {
		const uint64_t *ips = p->frames + e->off;
		uint32_t native = stkrec_native_nr((const __u64 *)ips, e->nr);

		if (native < e->nr)
			ss->py_new(ss->py_ctx, e->tgid, ips + native, e->nr - native);
	}
	if (idmap__set(ss->ids, e->id, held_value(ss->cur, e->off, e->nr))) {
		/* Appended but not named: those frames are never read.  Out
		 * of its set the stack is sent again when next seen, rather
		 * than missing for as long as it is in use. */
		ss->st.ring_skipped++;
		unset(ss, e->id);
		return;
	}
	p->nheld++;
	ss->nheld++;
	ss->st.from_ring++;
}

/* Every staged record looked up: the store is as if each had been added
 * as it came. */
static void unstage_all(struct stackstore *ss)
{
	while (ss->nr_staged)
		unstage(ss);
}

/* One ring record of @size bytes at @data: its frames appended to the current pool, its id's
 * lookup started and done STAGE records later (or by unstage_all()). */
static int stage_record(struct stackstore *ss, const void *data, size_t size)
{
	const struct stkrec_stack *r = data;
	size_t head = sizeof(*r) - sizeof(r->ips), off;
	struct staged *e;
	uint64_t id;

	/* A user stack may carry Python words after its native frames. */
	if (size < head || r->nr > (r->kind == STKREC_RING_KERNEL ? STKREC_MAX_DEPTH : STKREC_MAX_NR) ||
	    size < head + r->nr * sizeof(uint64_t) ||
	    (r->kind != STKREC_RING_USER && r->kind != STKREC_RING_KERNEL)) {
		ss->st.ring_skipped++;
		return 0;
	}
	/* Named by BPF (stkrec_stack_id() of the frames): hashing them
	 * again here was 5% of the recorder's CPU on new stacks. */
	id = r->id;
	if (id >> 63 || !(id & STKREC_STACK_KERNEL_BIT) != (r->kind == STKREC_RING_USER)) {
		ss->st.ring_skipped++;
		return 0;
	}
	/* Appended before it is known whether the stack is new: the ring's
	 * record is gone once this returns.  A known one's copy is never
	 * read, and goes with its pool. */
	if (pool_add(&ss->pool[ss->cur], id, (const uint64_t *)r->ips, r->nr, &off)) {
		ss->st.ring_skipped++;
		unset(ss, id);
		return 0;
	}
	idmap__prefetch(ss->ids, id);
	if (ss->nr_staged == STAGE)
		unstage(ss);
	e = &ss->stage[(ss->stage_head + ss->nr_staged++) % STAGE];
	*e = (struct staged){ .id = id, .off = off, .nr = r->nr, .tgid = r->tgid, .kind = r->kind };
	return 0;
}

static int on_ring(void *ctx, void *data, size_t size)
{
	return stage_record(ctx, data, size);
}

int stackstore__add_record(struct stackstore *ss, const void *data, size_t size)
{
	stage_record(ss, data, size);
	unstage_all(ss);
	return 0;
}

int stackstore__set_ring(struct stackstore *ss, int ring_fd)
{
	int err = ringpos__open(&ss->ring_pos, ring_fd);

	if (err)
		return err;
	ss->ring = ring_buffer__new(ring_fd, on_ring, ss, NULL);
	return ss->ring ? 0 : -errno;
}

uint32_t stackstore__ring_intervals(struct stackstore *ss, uint32_t max, uint32_t elapsed)
{
	return ringpos__intervals(&ss->ring_pos, max, elapsed);
}

int stackstore__ring_fd(const struct stackstore *ss)
{
	return ss->ring ? ring_buffer__epoll_fd(ss->ring) : -1;
}

void stackstore__take_ring(struct stackstore *ss)
{
	/* Once it knows RESERVE_AT stacks, the id map is sized for what a
	 * recording of many stacks knows (see WRITTEN_PER_SET), 2 MiB at
	 * most, so that it is not rehashed again and again while it
	 * records; a quiet recording's stays small, its pages touched
	 * once, not faulted in one by one as new ids land across 2 MiB.
	 * Without the memory, it grows as it fills. */
	if (ss->reserve && idmap__count(ss->ids) + ss->nr_staged >= RESERVE_AT) {
		idmap__reserve(ss->ids, ss->reserve);
		ss->reserve = 0;
	}
	if (ss->ring)
		ring_buffer__consume(ss->ring);
	unstage_all(ss);
}

/* Stack @id's @nr frames @ips into ss->buf. */
static const struct stkrec_stack *to_buf(struct stackstore *ss, uint64_t id, const uint64_t *ips,
					 uint32_t nr)
{
	ss->buf.nr = nr;
	ss->buf.kind = id & STKREC_STACK_KERNEL_BIT ? STKREC_RING_KERNEL : STKREC_RING_USER;
	memcpy(ss->buf.ips, ips, nr * sizeof(uint64_t));
	return &ss->buf;
}

/* Keep the Python words of placeholder @s (after its two words) with @l:
 * a late placeholder is rebuilt from @l.  Out of memory: without them. */
static void late_keep_py(struct late *l, const struct stkrec_stack *s)
{
	uint32_t n = s->nr > 2 ? s->nr - 2 : 0;

	l->py = n ? malloc(n * sizeof(*l->py)) : NULL;
	l->nr_py = l->py ? n : 0;
	if (l->py)
		memcpy(l->py, s->ips + 2, n * sizeof(*l->py));
}

static void late_clear(struct stackstore *ss)
{
	for (size_t i = 0; i < ss->nr_late; i++)
		free(ss->late[i].py);
	ss->nr_late = 0;
}

void stackstore__set_python(struct stackstore *ss,
			    void (*py_new)(void *ctx, uint32_t tgid, const uint64_t *words, uint32_t n),
			    void *ctx)
{
	ss->py_new = py_new;
	ss->py_ctx = ctx;
}

void stackstore__set_resolver(struct stackstore *ss, int (*resolve)(void *ctx, struct stkrec_stack *s),
			      void *ctx)
{
	ss->resolve = resolve;
	ss->resolve_ctx = ctx;
}

/* Words before a queued stack's frames in ss->frames: its header (see
 * queue_stack()). */
#define QHEAD (offsetof(struct stkrec_stack, ips) / sizeof(uint64_t))

static struct stkrec_stack *queued(const struct stackstore *ss, size_t i)
{
	return (struct stkrec_stack *)(ss->frames + ss->pend_off[i] - QHEAD);
}

const struct stkrec_stack *stackstore__frames(struct stackstore *ss, uint64_t id)
{
	uint64_t *v = idmap__find(ss->ids, id);
	size_t i;

	if (!v)
		return NULL;
	if (*v & HELD)
		return to_buf(ss, id, held_frames(ss, *v), held_nr(*v));
	/* Written this flush: still queued.  The queue's ids ascend, with
	 * gaps (a copied stack numbered before its frames came, queued
	 * later): searched. */
	{
		size_t lo = 0, hi = ss->nr_pend;

		while (lo < hi) {
			i = lo + (hi - lo) / 2;
			if (ss->pend[i].id < (*v & FILE_ID_MASK))
				lo = i + 1;
			else
				hi = i;
		}
		if (lo == ss->nr_pend || ss->pend[lo].id != (*v & FILE_ID_MASK))
			return NULL;
		i = lo;
	}
	return queued(ss, i);
}

/*
 * Queue stack @file_id, @nr frames @ips of @kind (STKREC_RING_*), for
 * STCK.  ss->frames holds each queued stack as a struct stkrec_stack cut
 * after its frames (QHEAD words of header, then the frames): the copy
 * queued is also what stackstore__see() and stackstore__frames() hand
 * out, with no second copy into ss->buf.  Returns it, or NULL: out of
 * memory.
 */
static const struct stkrec_stack *queue_stack(struct stackstore *ss, uint64_t file_id,
					      uint32_t kind, const uint64_t *ips, uint32_t nr)
{
	struct stkrec_stack *q;
	void *p = ss->pend;
	size_t off;
	int err;

	if (nr > STKREC_MAX_NR)
		nr = STKREC_MAX_NR;
	err = reserve(&p, &ss->cap_pend, ss->nr_pend + 1, sizeof(*ss->pend));
	ss->pend = p;
	p = ss->pend_off;
	err = err ?: reserve(&p, &ss->cap_pend_off, ss->nr_pend + 1, sizeof(*ss->pend_off));
	ss->pend_off = p;
	if (err || frames_reserve(&ss->frames, &ss->cap_frames, ss->nr_frames + QHEAD + nr))
		return NULL;
	ss->pend_off[ss->nr_pend] = ss->nr_frames + QHEAD;
	ss->nr_frames += QHEAD + nr;
	ss->pend[ss->nr_pend] = (struct stk_stack){ .id = file_id, .nr_frames = nr };
	q = queued(ss, ss->nr_pend++);
	q->nr = nr;
	q->kind = kind;
	q->tgid = 0;
	q->pad = 0;
	q->id = 0;
	memcpy(q->ips, ips, nr * sizeof(uint64_t));
	/* Out of memory here: the next file has the kernel send it again. */
	if (ss->keep && !pool_add(&ss->kept, file_id, ips, nr, &off))
		idmap__set(ss->kept_at, file_id, (uint64_t)off << 8 | nr);
	return q;
}

int stackstore__see(struct stackstore *ss, uint32_t tgid, int64_t *ref,
		    const struct stkrec_stack **added)
{
	const struct stkrec_stack *q;
	uint64_t id, *v, real = 0;
	const uint64_t *ips;
	uint32_t nr;

	*added = NULL;
	if (*ref < 0)
		return 0;
	id = (uint64_t)*ref;
	v = idmap__find(ss->ids, id);
	if (!v && ss->ring) {
		/* A record taken before the row was drained waited behind one
		 * another CPU had not committed yet (the ring is read in
		 * order): it may be there now. */
		stackstore__take_ring(ss);
		v = idmap__find(ss->ids, id);
	}
	if (!v) {
		/* Forgotten a moment before a new holder found its id in
		 * the kernel's set, or its record was lost: rare. */
		ss->st.missing++;
		*ref = -ENOENT;
		return 0;
	}
	if (!(*v & HELD)) {
		*v = written_value(*v, ss->epoch);
		*ref = (int64_t)(*v & FILE_ID_MASK);
		return 0;
	}
	ips = held_frames(ss, *v);
	nr = held_nr(*v);
	if (ss->resolve && !(id & STKREC_STACK_KERNEL_BIT) && nr >= 2 &&
	    ips[0] == (STKREC_UW_MARK | STKREC_UW_DEFERRED)) {
		uint64_t *same, seq = ips[1];

		to_buf(ss, id, ips, nr);

		if (ss->resolve(ss->resolve_ctx, &ss->buf) == 1) {
			/* Its table is being built: numbered now (the row
			 * needs the id), written once it is in. */
			if (ss->nr_late == ss->cap_late) {
				size_t cap = ss->cap_late ? ss->cap_late * 2 : 64;
				struct late *l = realloc(ss->late, cap * sizeof(*l));

				if (!l)
					return -ENOMEM;
				ss->late = l;
				ss->cap_late = cap;
			}
			v = idmap__find(ss->ids, id);
			*ref = (int64_t)++ss->last_file_id;
			unhold(ss, *v);
			*v = written_value(ss->last_file_id, ss->epoch);
			ss->late[ss->nr_late] = (struct late){ ss->last_file_id, seq, tgid, 0, NULL };
			late_keep_py(&ss->late[ss->nr_late++], &ss->buf);
			ss->st.written++;
			ss->st.late++;
			return 0;
		}
		real = stkrec_stack_id(ss->buf.ips, ss->buf.nr, 0);
		same = idmap__find(ss->ids, real);
		v = idmap__find(ss->ids, id);
		if (same && !(*same & HELD)) {
			/* The same frames are in the file already: the
			 * sample is theirs (each copied stack written anew
			 * made a python3 capture 3 times bigger). */
			*same = written_value(*same, ss->epoch);
			unhold(ss, *v);
			*v = *same;
			*ref = (int64_t)(*same & FILE_ID_MASK);
			ss->st.deferred_same++;
			return 0;
		}
		ips = (const uint64_t *)ss->buf.ips;
		nr = ss->buf.nr;
	}
	q = queue_stack(ss, ss->last_file_id + 1,
			id & STKREC_STACK_KERNEL_BIT ? STKREC_RING_KERNEL : STKREC_RING_USER, ips, nr);
	if (!q)
		return -ENOMEM;
	/* Written: in place, the map is not resized. */
	*ref = (int64_t)++ss->last_file_id;
	unhold(ss, *v);
	*v = written_value(ss->last_file_id, ss->epoch);
	ss->st.written++;
	*added = q;
	/* A copied stack's frames under their own id too, so that the next
	 * copy of them, or the kernel sending them, finds them written (out
	 * of memory: no sharing, no harm). */
	if (real && !idmap__find(ss->ids, real))
		idmap__set(ss->ids, real, written_value((uint64_t)*ref, ss->epoch));
	return 0;
}

void stackstore__prefetch(struct stackstore *ss, int64_t ref)
{
	if (ref >= 0)
		idmap__prefetch(ss->ids, (uint64_t)ref);
}

/* Drop @id's frames (@v: its held value): a row that references it from
 * now on finds it missing. */
static void drop(struct stackstore *ss, uint64_t id, const uint64_t *v)
{
	unhold(ss, *v);
	idmap__remove(ss->ids, id);
	ss->st.forgotten++;
}

/* Take the ids unset() out of the kernel's set, 256 to a syscall: one
 * the set evicted already is skipped. */
static void delete_unset(struct stackstore *ss)
{
	size_t i = 0, k;
	__u32 count;

	while (ss->set_fd >= 0 && i < ss->nr_unset) {
		k = ss->nr_unset - i < 256 ? ss->nr_unset - i : 256;
		count = (__u32)k;
		if (!bpf_map_delete_batch(ss->set_fd, ss->unset + i, &count, NULL)) {
			i += k;
			continue;
		}
		/* ENOENT stops the batch at the key the set evicted. */
		if (errno == ENOENT && count < k) {
			i += count + 1;
			continue;
		}
		/* Refused (another error): key by key, whatever comes. */
		for (; i < ss->nr_unset; i++)
			bpf_map_delete_elem(ss->set_fd, &ss->unset[i]);
	}
	ss->nr_unset = 0;
}

/* Held value of @id if it is held in pool @pool, else NULL (written,
 * forgotten, or held again in a later pool). */
static uint64_t *held_in(struct stackstore *ss, uint64_t id, unsigned int pool)
{
	uint64_t *v = idmap__find(ss->ids, id);

	return v && (*v & HELD) && pool_of(*v) == pool ? v : NULL;
}

/*
 * Off-CPU: the old pool holds more stacks than the kernel's set: their
 * ids leave the set first, then the holders are asked, and the stacks
 * none holds are dropped.  A holder that found an id before it left is
 * in the maps the walk reads (a blocked task's "start" or "wakers" entry,
 * or a counts row); one after it sends the stack again.  If the walk
 * fails (out of memory), every one is dropped: memory stays bounded, and
 * a blocked task that held one finds it missing (counted).
 */
static void sweep_old(struct stackstore *ss)
{
	struct pool keep = {}, *old = &ss->pool[POOL_OLD];
	struct idmap *live;
	uint64_t *v;
	size_t i, off;

	for (i = 0; i < old->nids; i++)
		if (held_in(ss, old->ids[i], POOL_OLD))
			unset(ss, old->ids[i]);
	delete_unset(ss);
	live = idmap__new();
	if (live && ss->collect_live(ss->live_ctx, live)) {
		idmap__free(live);
		live = NULL;
	}
	for (i = 0; i < old->nids; i++) {
		v = held_in(ss, old->ids[i], POOL_OLD);
		if (!v)
			continue;
		if (live && idmap__find(live, old->ids[i]) &&
		    !pool_add(&keep, old->ids[i], held_frames(ss, *v), held_nr(*v), &off))
			*v = held_value(POOL_OLD, off, held_nr(*v)); /* still held there */
		else
			drop(ss, old->ids[i], v);
	}
	keep.nheld = old->nheld;
	pool_free(old);
	*old = keep;
	idmap__free(live);
}

/*
 * Written stacks unused for WRITTEN_AGE flushes, once there are more than
 * WRITTEN_PER_SET sets' worth of them (looked for every WRITTEN_AGE / 4
 * flushes, a walk of the map): their ids leave the kernel's set now, and
 * the map at the next flush.  A row drained in between (a sample that
 * found the id before it left) or the kernel sending the stack again (one
 * after) uses it again, and it stays.  Off-CPU, a blocked task may hold one: those the holders
 * name stay too.  Without room to unset them, none goes this time.
 */
static void sweep_written(struct stackstore *ss)
{
	uint64_t key, val;
	struct idmap *live = NULL;
	size_t it = 0, n = 0;
	void *q;

	if (ss->sweep_epoch) {
		/* The second step: what is still unused leaves the map. */
		if (ss->collect_live) {
			live = idmap__new();
			if (live && ss->collect_live(ss->live_ctx, live)) {
				idmap__free(live);
				live = NULL;
			}
			if (!live) {
				ss->sweep_epoch = 0;
				return; /* no holders' list: all stay (they are out of the set) */
			}
		}
		while (idmap__next(ss->ids, &it, &key, &val))
			if (!(val & HELD) && written_age(val, ss->epoch) > WRITTEN_AGE &&
			    !(live && idmap__find(live, key)) && n < ss->cap_unset)
				ss->unset[n++] = key; /* room reserved by the first step */
		for (size_t i = 0; i < n; i++)
			idmap__remove(ss->ids, ss->unset[i]);
		ss->st.written_forgotten += n;
		ss->sweep_epoch = 0;
		idmap__free(live);
		return;
	}
	if (idmap__count(ss->ids) - ss->nheld <= (size_t)WRITTEN_PER_SET * ss->capacity ||
	    ss->epoch - ss->last_sweep < WRITTEN_AGE / 4)
		return;
	ss->last_sweep = ss->epoch;
	while (idmap__next(ss->ids, &it, NULL, &val))
		if (!(val & HELD) && written_age(val, ss->epoch) >= WRITTEN_AGE)
			n++;
	if (!n)
		return;
	q = ss->unset;
	if (reserve(&q, &ss->cap_unset, ss->nr_unset + n, sizeof(*ss->unset)))
		return;
	ss->unset = q;
	it = 0;
	while (idmap__next(ss->ids, &it, &key, &val))
		if (!(val & HELD) && written_age(val, ss->epoch) >= WRITTEN_AGE)
			unset(ss, key);
	ss->sweep_epoch = ss->epoch;
}

/*
 * A flush is written.  The stacks that came two flushes ago and that no
 * row referenced leave the kernel's set now, their frames kept one flush
 * more in the old pool: a sample that found the id before it left is
 * counted in the counts map drained at the next flush, which finds them
 * (profile).  Off-CPU holders may keep a stack for as long as they
 * block, so there the old pool keeps them until sweep_old().  The ring is
 * taken into the emptied pool from now on.  Out of memory for the ids to
 * unset: nothing ages this time.
 */
static void age(struct stackstore *ss)
{
	unsigned int prev = ss->cur ^ 1;
	struct pool *p = &ss->pool[prev], *old = &ss->pool[POOL_OLD];
	void *q = ss->unset;
	uint64_t *v;
	size_t i, off;
	int err;

	err = reserve(&q, &ss->cap_unset, ss->nr_unset + 2 * p->nids + old->nids + 1,
		      sizeof(*ss->unset));
	ss->unset = q;
	if (err)
		return;
	if (!ss->collect_live) {
		/* Out of the set since the last flush. */
		for (i = 0; i < old->nids && old->nheld; i++)
			if ((v = held_in(ss, old->ids[i], POOL_OLD)))
				drop(ss, old->ids[i], v);
		old->nr = old->nids = 0;
	}
	/* Most stacks were written by now (a row counted them): the walk,
	 * a lookup each, only while some are still held there. */
	for (i = 0; i < p->nids && p->nheld; i++) {
		v = held_in(ss, p->ids[i], prev);
		if (!v)
			continue;
		if (!pool_add(old, p->ids[i], held_frames(ss, *v), held_nr(*v), &off)) {
			unhold(ss, *v);
			*v = hold(ss, POOL_OLD, off, held_nr(*v));
			if (!ss->collect_live)
				unset(ss, p->ids[i]);
		} else {
			unset(ss, p->ids[i]);
			drop(ss, p->ids[i], v);
		}
	}
	p->nr = p->nids = 0;
	ss->cur = prev;
	/* Asking the holders walks their maps: only once as many stacks as
	 * the kernel's set holds wait for them. */
	if (ss->collect_live && old->nids > ss->capacity)
		sweep_old(ss);
	delete_unset(ss);
	ss->epoch++;
	sweep_written(ss);
	delete_unset(ss);
}

int stackstore__retry_late(struct stackstore *ss,
			  int (*added)(void *ctx, uint32_t tgid, const struct stkrec_stack *s),
			  void *ctx)
{
	size_t i, k = 0;
	int err = 0;

	for (i = 0; i < ss->nr_late; i++) {
		struct late *l = &ss->late[i];
		uint64_t real;

		ss->buf.nr = 2 + l->nr_py;
		ss->buf.kind = STKREC_RING_USER;
		ss->buf.ips[0] = STKREC_UW_MARK | STKREC_UW_DEFERRED;
		ss->buf.ips[1] = l->seq;
		if (l->nr_py)
			memcpy(ss->buf.ips + 2, l->py, l->nr_py * sizeof(l->py[0]));
		if (err || ss->resolve(ss->resolve_ctx, &ss->buf) == 1) {
			ss->late[k++] = *l;
			continue;
		}
		if (!queue_stack(ss, l->file_id, STKREC_RING_USER, (const uint64_t *)ss->buf.ips,
				 ss->buf.nr)) {
			err = -ENOMEM;
			ss->late[k++] = *l;	/* the copy is gone: written as lost */
			continue;
		}
		real = stkrec_stack_id(ss->buf.ips, ss->buf.nr, 0);
		if (!idmap__find(ss->ids, real))
			idmap__set(ss->ids, real, written_value(l->file_id, ss->epoch));
		err = added(ctx, l->tgid, &ss->buf);
		free(l->py);
	}
	ss->nr_late = k;
	return err;
}

int stackstore__write(struct stackstore *ss, struct stk_writer *w, uint64_t *chunks, int final)
{
	size_t i;
	int err = 0;

	if (ss->nr_pend) {
		/* Frames were appended to one growing buffer: point into it. */
		for (i = 0; i < ss->nr_pend; i++)
			ss->pend[i].frames = ss->frames + ss->pend_off[i];
		err = stk_writer__add_stacks(w, ss->pend, ss->nr_pend);
		ss->nr_pend = 0;
		ss->nr_frames = 0;
		if (!err)
			(*chunks)++;
	}
	if (!final) {
		/* Taken every flush, rows or none, so that what came ages. */
		stackstore__take_ring(ss);
		age(ss);
	}
	return err;
}

int stackstore__keep_written(struct stackstore *ss)
{
	ss->kept_at = idmap__new();
	if (!ss->kept_at)
		return -ENOMEM;
	ss->keep = 1;
	return 0;
}

int stackstore__new_file(struct stackstore *ss)
{
	struct pool *p = &ss->pool[ss->cur];
	uint64_t key, val, *k, *v;
	size_t it = 0, n = 0, off, first;
	void *q = ss->unset;

	/* Room to unset every written id, reserved before anything changes. */
	if (reserve(&q, &ss->cap_unset, ss->nr_unset + idmap__count(ss->ids), sizeof(*ss->unset)))
		return -ENOMEM;
	ss->unset = q;
	first = ss->nr_unset;
	/* None waits: the file's last flush unwound every copy its rows
	 * name (deferred__set_last()); had one been left, its frames could
	 * only go to the wrong file. */
	late_clear(ss);
	while (idmap__next(ss->ids, &it, &key, &val)) {
		if (val & HELD)
			continue;
		k = ss->kept_at ? idmap__find(ss->kept_at, val & FILE_ID_MASK) : NULL;
		/* Held again as if just sent: written when a row of the new
		 * file references it, forgotten two flushes on if none does. */
		if (k && !pool_add(p, key, ss->kept.frames + (*k >> 8), (uint32_t)(*k & 0xff), &off)) {
			v = idmap__find(ss->ids, key);
			*v = hold(ss, ss->cur, off, (uint32_t)(*k & 0xff));
			n++;
		} else {
			unset(ss, key);
		}
	}
	/* The rest leave the kernel's set: sent again when next seen. */
	for (size_t i = first; i < ss->nr_unset; i++)
		idmap__remove(ss->ids, ss->unset[i]);
	delete_unset(ss);
	pool_free(&ss->kept);
	if (ss->kept_at)
		idmap__clear(ss->kept_at);
	ss->last_file_id = 0;
	return 0;
}

size_t stackstore__count(const struct stackstore *ss)
{
	return (size_t)ss->last_file_id;
}

size_t stackstore__held(const struct stackstore *ss)
{
	return ss->nheld;
}

void stackstore__stats(const struct stackstore *ss, struct stackstore_stats *st)
{
	*st = ss->st;
}
