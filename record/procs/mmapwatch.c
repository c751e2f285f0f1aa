// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmapwatch.c - executable mappings as they happen, from perf side-band
 * records (see mmapwatch.h).
 *
 * Kernel facts this relies on:
 *  - attr.mmap gives a record for every new executable mapping (mmap,
 *    mprotect to exec, the vDSO at exec); attr.mmap2 adds the device,
 *    inode and protection; attr.build_id (Linux 5.12+) puts the file's
 *    build-id in place of device and inode when the kernel can read it
 *    (PERF_RECORD_MISC_MMAP_BUILD_ID), which it does from the page cache.
 *  - exec emits COMM with PERF_RECORD_MISC_COMM_EXEC (attr.comm_exec,
 *    Linux 3.16+) from begin_new_exec(), before the new image is mapped.
 *  - fork emits FORK from copy_process(), before the child can run, so the
 *    child's records are never older than its FORK; records of different
 *    CPUs are put in time order (sample_id_all + PERF_SAMPLE_TIME, with
 *    use_clockid = CLOCK_MONOTONIC so times compare with the recorder's).
 *  - munmap is not reported: a new mapping replaces the parts of older
 *    ones it overlaps, as it does in the process.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "idmap.h"
#include "mmapwatch.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: every record
 * but SAMPLE ends with this. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

/* PERF_RECORD_MMAP2 up to its file name (include/uapi/linux/perf_event.h). */
struct rec_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct rec_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

/* FORK and EXIT */
struct rec_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct rec_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

struct wmap {
	uint64_t start, end, pgoff, dev, ino;
	uint32_t prot;
	int bid_known;		/* build_id/bid_size are final */
	uint32_t bid_size;
	uint8_t bid[STK_MAX_BUILD_ID];
	char *path;
};

/* Images an exec replaced, kept so that samples taken before the exec
 * (in execve itself, or in a child between fork and exec) can still be
 * resolved in the mappings they were taken in: until the flush after the
 * exec (mmapwatch__purge()), and at most OLD_IMAGES per process (a
 * process that execs faster keeps its latest ones). */
#define OLD_IMAGES 256

struct wold {
	uint64_t start_ns;	/* exec that began it (0: before the watcher saw one) */
	uint64_t end_ns;	/* exec that replaced it */
	uint64_t changed_ns;	/* its last change */
	struct wmap *maps;
	size_t nr;
};

struct wproc {
	int complete;		/* every executable mapping is in maps */
	int exited;
	uint64_t exit_ns;
	uint64_t gen;		/* changes with every change of maps */
	uint64_t image;		/* changes with exec (and a new process) */
	uint64_t changed_ns;	/* time of the last change */
	uint64_t image_ns;	/* exec that began the current image, or 0 */
	struct wmap *maps;	/* sorted by start, not overlapping */
	size_t nr, cap;
	struct wold *old;	/* oldest first */
	size_t nr_old, cap_old;
};

struct wcpu {
	int fd;
	void *base;		/* the mmap'ed control page and data */
	size_t map_size;
};

/* A gathered record: where its bytes are, its time and arrival order. */
struct wrec {
	uint64_t time;
	size_t off;
	size_t seq;
};

struct mmapwatch {
	enum mmapwatch_follow follow;
	struct idmap *procs;	/* tgid -> struct wproc * */
	struct wcpu *cpus;
	size_t nr_cpus;
	size_t page_size;
	int kernel_bids;
	uint32_t root;		/* TREE: the first process added (-- CMD), or 0 */
	uint64_t gen;
	uint8_t *buf;		/* records gathered by one drain */
	size_t len, cap;
	struct wrec *recs;
	size_t nr_recs, cap_recs;
	struct mmapwatch_stats st;
};

static struct wproc *proc_find(const struct mmapwatch *w, uint32_t tgid)
{
	uint64_t *v = idmap__find(w->procs, tgid);

	return v ? (struct wproc *)(uintptr_t)*v : NULL;
}

static void maps_clear(struct wproc *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->maps[i].path);
	p->nr = 0;
}

static void old_free(struct wold *o)
{
	size_t i;

	for (i = 0; i < o->nr; i++)
		free(o->maps[i].path);
	free(o->maps);
	memset(o, 0, sizeof(*o));
}

static void proc_free(struct wproc *p)
{
	size_t i;

	if (!p)
		return;
	maps_clear(p);
	free(p->maps);
	for (i = 0; i < p->nr_old; i++)
		old_free(&p->old[i]);
	free(p->old);
	free(p);
}

/* Keep @p's image, which an exec at @time replaces, as an old one (the
 * oldest goes when there are OLD_IMAGES); its maps move there. */
static void keep_old_image(struct wproc *p, uint64_t time)
{
	struct wold *o;

	if (!p->complete || !p->nr)
		return;
	if (p->nr_old == OLD_IMAGES) {
		old_free(&p->old[0]);
		memmove(&p->old[0], &p->old[1], (OLD_IMAGES - 1) * sizeof(p->old[0]));
		p->nr_old--;
	}
	if (p->nr_old == p->cap_old) {
		size_t cap = p->cap_old ? p->cap_old * 2 : 4;
		struct wold *a = realloc(p->old, cap * sizeof(*a));

		if (!a)
			return;	/* its samples resolve as before: in the new image */
		p->old = a;
		p->cap_old = cap;
	}
	o = &p->old[p->nr_old++];
	o->start_ns = p->image_ns;
	o->end_ns = time;
	o->changed_ns = p->changed_ns;
	o->maps = p->maps;
	o->nr = p->nr;
	p->maps = NULL;
	p->nr = p->cap = 0;
}

/* A new, empty entry for @tgid, replacing any older one (the pid of an
 * exited process can be reused).  NULL on ENOMEM. */
static struct wproc *proc_new(struct mmapwatch *w, uint32_t tgid)
{
	struct wproc *p = calloc(1, sizeof(*p)), *old = proc_find(w, tgid);

	if (!p)
		return NULL;
	if (idmap__set(w->procs, tgid, (uint64_t)(uintptr_t)p)) {
		free(p);
		return NULL;
	}
	proc_free(old);
	p->gen = ++w->gen;
	p->image = p->gen;
	return p;
}

static int maps_reserve(struct wproc *p, size_t more)
{
	struct wmap *m;
	size_t cap;

	if (p->nr + more <= p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 16;
	while (cap < p->nr + more)
		cap *= 2;
	m = realloc(p->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->maps = m;
	p->cap = cap;
	return 0;
}

/*
 * Remove [@start, @end) from the mappings, as a new mapping there does in
 * the process: what it covers goes, what it splits stays on both sides.
 * Returns the number of mappings it changed, or -ENOMEM (then the process
 * is no longer complete).
 */
static int maps_punch(struct wproc *p, uint64_t start, uint64_t end)
{
	struct wmap tail = {};
	size_t i = 0, k = 0, tail_at = 0, lo = 0, hi = p->nr;
	int err, changed = 0;

	/* Sorted and not overlapping, so the ends are sorted too: find the
	 * first mapping ending after @start.  If it starts at or after @end,
	 * nothing overlaps: the common case (a process's data mappings fall
	 * where no mapping kept here is; an ASan binary makes thousands a
	 * second, and copying every mapping for each was a system-wide
	 * recorder's largest cost). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nr || p->maps[lo].start >= end)
		return 0;
	/* Room for an old mapping split in two. */
	err = maps_reserve(p, 1);
	if (err)
		goto fail;
	for (i = 0; i < p->nr; i++) {
		struct wmap m = p->maps[i];

		if (m.end <= start || m.start >= end) {
			p->maps[k++] = m;
			continue;
		}
		changed++;
		if (m.start < start && m.end > end) {
			/* Only one old mapping can contain the new one: they
			 * do not overlap. */
			tail = m;
			tail.path = strdup(m.path);
			if (!tail.path) {
				err = -ENOMEM;
				goto fail;
			}
			tail.pgoff += end - m.start;
			tail.start = end;
			m.end = start;
			p->maps[k++] = m;
			tail_at = k;
		} else if (m.start < start) {
			m.end = start;
			p->maps[k++] = m;
		} else if (m.end > end) {
			m.pgoff += end - m.start;
			m.start = end;
			p->maps[k++] = m;
		} else {
			free(m.path);
		}
	}
	if (tail.path) {
		/* Right after its left part: the order stays sorted. */
		memmove(p->maps + tail_at + 1, p->maps + tail_at, (k - tail_at) * sizeof(*p->maps));
		p->maps[tail_at] = tail;
		k++;
	}
	p->nr = k;
	return changed;
fail:
	/* Slots 0..k-1 and i..nr-1 hold the live mappings; k..i-1 copies or
	 * freed ones.  Close the gap, then drop everything. */
	memmove(p->maps + k, p->maps + i, (p->nr - i) * sizeof(*p->maps));
	p->nr = k + (p->nr - i);
	maps_clear(p);
	p->complete = 0;
	return err;
}

/* Add mapping @n (its path is taken over) in place of what it overlaps.
 * Returns 0 or -ENOMEM (then @n's path is freed). */
static int maps_add(struct wproc *p, struct wmap *n)
{
	int err;

	err = maps_punch(p, n->start, n->end);
	if (err >= 0)
		err = maps_reserve(p, 1);
	if (err) {
		free(n->path);
		maps_clear(p);
		p->complete = 0;
		return err;
	}
	{
		/* Into its place: the others are sorted. */
		size_t lo = 0, hi = p->nr;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (p->maps[mid].start < n->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(p->maps + lo + 1, p->maps + lo, (p->nr - lo) * sizeof(*p->maps));
		p->maps[lo] = *n;
		p->nr++;
	}
	return 0;
}

static void on_mmap2(struct mmapwatch *w, const struct rec_mmap2 *r, size_t size, uint64_t time)
{
	size_t name_max = size - sizeof(*r) - sizeof(struct sample_id);
	struct wproc *p = proc_find(w, r->pid);
	struct wmap m = {};
	int anon;

	if (!p || !p->complete || !memchr(r->filename, '\0', name_max))
		return;
	/*
	 * Executable mappings are kept, and a file's offset-0 mapping (its
	 * ELF headers: where the reporter finds the load bias, as in a /proc
	 * snapshot); any other mapping only replaces what it overlaps.
	 */
	anon = strcmp(r->filename, "//anon") == 0;
	if (!(r->prot & PROT_EXEC) && (r->pgoff != 0 || r->filename[0] != '/' || anon)) {
		if (maps_punch(p, r->addr, r->addr + r->len) > 0) {
			p->gen = ++w->gen;
			p->changed_ns = time;
		}
		return;
	}
	m.start = r->addr;
	m.end = r->addr + r->len;
	m.pgoff = r->pgoff;
	m.prot = r->prot;
	if (r->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.bid_known = 1;
		m.bid_size = r->build_id_size < STK_MAX_BUILD_ID ? r->build_id_size : STK_MAX_BUILD_ID;
		if (m.bid_size > sizeof(r->build_id))
			m.bid_size = sizeof(r->build_id);
		memcpy(m.bid, r->build_id, m.bid_size);
		w->st.kernel_build_ids++;
	} else {
		m.dev = makedev(r->maj, r->min);
		m.ino = r->ino;
	}
	/* Anonymous executable memory (JIT) is "//anon" here and nameless
	 * in /proc/PID/maps: keep /proc's spelling. */
	m.path = strdup(anon ? "" : r->filename);
	if (!m.path) {
		maps_clear(p);
		p->complete = 0;
		return;
	}
	if (maps_add(p, &m))
		return;
	p->gen = ++w->gen;
	p->changed_ns = time;
	if (m.prot & PROT_EXEC)
		w->st.mmaps++;
}

static void on_exec(struct mmapwatch *w, uint32_t tgid, uint64_t time)
{
	struct wproc *p = proc_find(w, tgid);

	if (!p && w->follow == MMAPWATCH_ALL)
		p = proc_new(w, tgid);
	if (!p)
		return;
	/* A new image: nothing of the old one stays mapped. */
	keep_old_image(p, time);
	maps_clear(p);
	p->image_ns = time;
	p->complete = 1;
	p->exited = 0;
	p->gen = ++w->gen;
	p->image = p->gen;
	p->changed_ns = time;
	w->st.execs++;
}

static void on_fork(struct mmapwatch *w, const struct rec_task *r, uint64_t time)
{
	struct wproc *parent, *child;
	size_t i;

	/* A thread (same process), or -p: children are not followed. */
	if (r->pid == r->ppid || w->follow == MMAPWATCH_LISTED)
		return;
	parent = proc_find(w, r->ppid);
	if (!parent)
		return;
	child = proc_new(w, r->pid);
	if (!child)
		return;
	child->changed_ns = time;
	/* The child has a copy of its parent's mappings until it execs. */
	if (!parent->complete || maps_reserve(child, parent->nr))
		return;
	for (i = 0; i < parent->nr; i++) {
		child->maps[i] = parent->maps[i];
		child->maps[i].path = strdup(parent->maps[i].path);
		if (!child->maps[i].path) {
			maps_clear(child);
			return;
		}
		child->nr++;
	}
	child->complete = 1;
	child->changed_ns = parent->changed_ns;
}

static void on_exit_task(struct mmapwatch *w, const struct rec_task *r, uint64_t time)
{
	struct wproc *p;

	if (r->pid != r->tid)
		return; /* a thread, not the process */
	p = proc_find(w, r->pid);
	if (p) {
		p->exited = 1;
		p->exit_ns = time;
	}
}

/* Records were dropped: any process may have missed a mapping or an exec.
 * Its state can no longer be trusted; /proc is read instead while it
 * lives.  Entries stay, so -- CMD's process tree is still followed. */
static void on_lost(struct mmapwatch *w, uint64_t n)
{
	uint64_t val;
	size_t it = 0;

	w->st.lost += n;
	while (idmap__next(w->procs, &it, NULL, &val)) {
		struct wproc *p = (struct wproc *)(uintptr_t)val;

		maps_clear(p);
		p->complete = 0;
		p->gen = ++w->gen;
	}
}

static void apply(struct mmapwatch *w, const void *rec, uint64_t time)
{
	const struct perf_event_header *h = rec;

	w->st.records++;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (h->size >= sizeof(struct rec_mmap2) + sizeof(struct sample_id) + 1)
			on_mmap2(w, rec, h->size, time);
		break;
	case PERF_RECORD_COMM:
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			on_exec(w, ((const struct rec_comm *)rec)->pid, time);
		break;
	case PERF_RECORD_FORK:
		if (h->size >= sizeof(struct rec_task))
			on_fork(w, rec, time);
		break;
	case PERF_RECORD_EXIT:
		if (h->size >= sizeof(struct rec_task))
			on_exit_task(w, rec, time);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(struct rec_lost))
			on_lost(w, ((const struct rec_lost *)rec)->lost);
		break;
	}
}

/* Append one record (@size bytes, in up to two pieces) to the batch. */
static int gather(struct mmapwatch *w, const void *a, size_t na, const void *b, size_t nb)
{
	size_t size = na + nb;
	struct sample_id sid;

	if (w->len + size > w->cap) {
		size_t cap = w->cap ? w->cap : 65536;
		uint8_t *p;

		while (cap < w->len + size)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (!p)
			return -ENOMEM;
		w->buf = p;
		w->cap = cap;
	}
	if (w->nr_recs == w->cap_recs) {
		size_t cap = w->cap_recs ? w->cap_recs * 2 : 1024;
		struct wrec *r = realloc(w->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		w->recs = r;
		w->cap_recs = cap;
	}
	memcpy(w->buf + w->len, a, na);
	if (nb)
		memcpy(w->buf + w->len + na, b, nb);
	memcpy(&sid, w->buf + w->len + size - sizeof(sid), sizeof(sid));
	w->recs[w->nr_recs] = (struct wrec){ sid.time, w->len, w->nr_recs };
	w->nr_recs++;
	w->len += size;
	return 0;
}

static int wrec_cmp(const void *a, const void *b)
{
	const struct wrec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Apply the gathered records in time order, then forget them. */
static void apply_gathered(struct mmapwatch *w)
{
	size_t i;

	qsort(w->recs, w->nr_recs, sizeof(*w->recs), wrec_cmp);
	for (i = 0; i < w->nr_recs; i++)
		apply(w, w->buf + w->recs[i].off, w->recs[i].time);
	w->nr_recs = 0;
	w->len = 0;
}

int mmapwatch__process(struct mmapwatch *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t off = 0;
	int err;

	while (off < len) {
		struct perf_event_header h;

		if (len - off < sizeof(h))
			return -EINVAL;
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) + sizeof(struct sample_id) || h.size > len - off ||
		    h.size % 8)
			return -EINVAL;
		err = gather(w, p + off, h.size, NULL, 0);
		if (err)
			return err;
		off += h.size;
	}
	apply_gathered(w);
	return 0;
}

/* Take every whole record out of one CPU's ring buffer.  -ENOMEM: the
 * records that did not fit were dropped. */
static int cpu_gather(struct mmapwatch *w, struct wcpu *c)
{
	struct perf_event_mmap_page *mp = c->base;
	size_t data_off = mp->data_offset ? mp->data_offset : w->page_size;
	size_t size = mp->data_size ? mp->data_size : c->map_size - w->page_size;
	const uint8_t *data = (const uint8_t *)c->base + data_off;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	int err = 0;

	while (tail < head) {
		size_t pos = tail & (size - 1), first;
		struct perf_event_header h;

		/* Records are 8-byte aligned and the size a power of 2: a
		 * header never wraps, a record may. */
		memcpy(&h, data + pos, sizeof(h));
		if (h.size < sizeof(h) + sizeof(struct sample_id) || h.size > head - tail) {
			tail = head; /* cannot happen: skip what is there */
			break;
		}
		first = size - pos < h.size ? size - pos : h.size;
		err = gather(w, data + pos, first, data, h.size - first);
		if (err) {
			tail = head;
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

void mmapwatch__drain(struct mmapwatch *w)
{
	uint64_t dropped = 0;
	size_t i;

	for (i = 0; i < w->nr_cpus; i++)
		if (cpu_gather(w, &w->cpus[i]))
			dropped++;
	apply_gathered(w);
	/* Out of memory: what was left in a ring buffer is gone, as if the
	 * kernel had dropped it, so no process state can be trusted (it
	 * was before: the records applied are older than those dropped). */
	if (dropped)
		on_lost(w, dropped);
}

struct mmapwatch *mmapwatch__new(enum mmapwatch_follow follow)
{
	struct mmapwatch *w;

	if (follow != MMAPWATCH_ALL && follow != MMAPWATCH_LISTED && follow != MMAPWATCH_TREE) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->follow = follow;
	w->page_size = (size_t)sysconf(_SC_PAGESIZE);
	w->procs = idmap__new();
	if (!w->procs) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

static void close_cpus(struct mmapwatch *w)
{
	size_t i;

	for (i = 0; i < w->nr_cpus; i++) {
		if (w->cpus[i].base)
			munmap(w->cpus[i].base, w->cpus[i].map_size);
		if (w->cpus[i].fd >= 0)
			close(w->cpus[i].fd);
	}
	free(w->cpus);
	w->cpus = NULL;
	w->nr_cpus = 0;
}

void mmapwatch__free(struct mmapwatch *w)
{
	uint64_t val;
	size_t it = 0;

	if (!w)
		return;
	close_cpus(w);
	while (idmap__next(w->procs, &it, NULL, &val))
		proc_free((struct wproc *)(uintptr_t)val);
	idmap__free(w->procs);
	free(w->buf);
	free(w->recs);
	free(w);
}

int mmapwatch__add(struct mmapwatch *w, uint32_t tgid)
{
	if (proc_find(w, tgid))
		return 0;
	if (!proc_new(w, tgid))
		return -ENOMEM;
	if (w->follow == MMAPWATCH_TREE && !w->root && !w->cpus)
		w->root = tgid;
	return 0;
}

/* @pid > 0: that task and, inherited, every task it starts from now on;
 * else every task on @cpu. */
static int open_dummy(int cpu, size_t data_size, int build_id, int pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		/* Non-executable mappings too: they replace older mappings,
		 * and a file's offset-0 one is kept (see on_mmap2()). */
		.mmap_data = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.build_id = build_id ? 1 : 0,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* Wake the recorder when a quarter is used, not per record:
		 * it drains before every flush anyway. */
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(data_size / 4),
		.inherit = pid > 0,
	};
	int fd;

	fd = (int)syscall(SYS_perf_event_open, &attr, pid > 0 ? pid : -1, cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mmapwatch__open(struct mmapwatch *w, const int *cpus, size_t nr_cpus, size_t pages)
{
	size_t i, data_size = pages * w->page_size;
	int err = 0, fd;

	if (!nr_cpus || !pages || (pages & (pages - 1)) || w->cpus)
		return -EINVAL;
	w->cpus = calloc(nr_cpus, sizeof(*w->cpus));
	if (!w->cpus)
		return -ENOMEM;
	for (i = 0; i < nr_cpus; i++)
		w->cpus[i].fd = -1;
	w->nr_cpus = nr_cpus;
	w->kernel_bids = 1;
	/*
	 * -- CMD: the events follow CMD's tree only (as perf record -- CMD's
	 * do), so the mmaps of the rest of a busy machine neither fill the
	 * rings, which lost the tree's own records under load, nor cost a
	 * read.  -p and system-wide: every task's, filtered here.
	 */
	for (i = 0; i < nr_cpus; i++) {
		fd = open_dummy(cpus[i], data_size, w->kernel_bids, (int)w->root);
		if (fd == -EINVAL && w->kernel_bids && i == 0) {
			/* Before Linux 5.12 the build_id bit is reserved. */
			w->kernel_bids = 0;
			fd = open_dummy(cpus[i], data_size, 0, (int)w->root);
		}
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		w->cpus[i].fd = fd;
		w->cpus[i].map_size = data_size + w->page_size;
		w->cpus[i].base = mmap(NULL, w->cpus[i].map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				       fd, 0);
		if (w->cpus[i].base == MAP_FAILED) {
			err = -errno;
			w->cpus[i].base = NULL;
			goto fail;
		}
	}
	return 0;
fail:
	close_cpus(w);
	return err;
}

int mmapwatch__kernel_build_ids(const struct mmapwatch *w)
{
	return w->kernel_bids;
}

size_t mmapwatch__nr_fds(const struct mmapwatch *w)
{
	return w->nr_cpus;
}

int mmapwatch__fd(const struct mmapwatch *w, size_t i)
{
	return i < w->nr_cpus ? w->cpus[i].fd : -1;
}

uint64_t mmapwatch__image(const struct mmapwatch *w, uint32_t tgid)
{
	const struct wproc *p = proc_find(w, tgid);

	return p ? p->image : 0;
}

int mmapwatch__complete(const struct mmapwatch *w, uint32_t tgid, uint64_t *gen, int *exited)
{
	const struct wproc *p = proc_find(w, tgid);

	if (gen)
		*gen = p ? p->gen : 0;
	if (exited)
		*exited = p ? p->exited : 0;
	return p && p->complete;
}

/* 1 if the file of offset-0 mapping @d also has an executable mapping in
 * @p (the same path, and the same file by device and inode or by the
 * kernel's build-id), as procmaps keeps them. */
static int exec_mapping_of(const struct wmap *maps, size_t nr, const struct wmap *d)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct wmap *m = &maps[i];

		if (!(m->prot & PROT_EXEC) || strcmp(m->path, d->path) != 0)
			continue;
		if (m->ino && d->ino && (m->ino != d->ino || m->dev != d->dev))
			continue;
		if (m->bid_known && d->bid_known &&
		    (m->bid_size != d->bid_size || memcmp(m->bid, d->bid, m->bid_size) != 0))
			continue;
		return 1;
	}
	return 0;
}

/* The build-id of @m, read from its file if the record had none (the
 * vDSO's from the memory of @tgid, which may have another one than ours). */
static void resolve_build_id(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			     struct wmap *m)
{
	int n = 0;

	if (m->bid_known)
		return;
	if (strcmp(m->path, "[vdso]") == 0)
		n = procmaps__proc_vdso_build_id(pm, "/proc", tgid, m->start, m->end, m->bid);
	else if (m->path[0] == '/' && m->ino) {
		struct procmaps_line l = {
			.start = m->start, .end = m->end, .offset = m->pgoff,
			.dev = m->dev, .inode = m->ino, .prot = m->prot, .path = m->path,
		};

		n = procmaps__file_build_id(pm, "/proc", tgid, &l, m->bid);
	}
	if (n > 0)
		w->st.build_id_reads++;
	else if (m->path[0] == '/')
		w->st.build_id_errors++;
	m->bid_size = n > 0 ? (uint32_t)n : 0;
	m->bid_known = 1;
}

/* A snapshot of mappings @wm[0..@nr) of @tgid, changed last at @time. */
static int snapshot_of(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid, const char *comm,
		       struct wmap *wm, size_t nr, uint64_t time, struct stk_proc_maps *out)
{
	struct procmaps_line vsys;
	struct stk_mapping *maps;
	size_t i, n = 0;

	maps = calloc(nr + 1, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct wmap *m = &wm[i];
		struct stk_mapping *o = &maps[n];

		if (!(m->prot & PROT_EXEC) && !exec_mapping_of(wm, nr, m))
			continue;
		resolve_build_id(w, pm, tgid, m);
		o->path = strdup(m->path);
		if (!o->path) {
			while (n--)
				free((char *)maps[n].path);
			free(maps);
			return -ENOMEM;
		}
		n++;
		o->start = m->start;
		o->end = m->end;
		o->offset = m->pgoff;
		o->dev = m->dev;
		o->inode = m->ino;
		o->prot = m->prot;
		o->build_id_size = m->bid_size;
		memcpy(o->build_id, m->bid, m->bid_size);
	}
	/* As /proc/PID/maps has it: above every mapping, so still sorted. */
	if (procmaps__vsyscall(pm, &vsys) && (!n || maps[n - 1].end <= vsys.start)) {
		maps[n].path = strdup(vsys.path);
		if (!maps[n].path) {
			while (n--)
				free((char *)maps[n].path);
			free(maps);
			return -ENOMEM;
		}
		maps[n].start = vsys.start;
		maps[n].end = vsys.end;
		maps[n].prot = vsys.prot;
		n++;
	}
	out->tgid = tgid;
	/* Up to its NUL: a caller's string may be shorter than 16 bytes. */
	memcpy(out->comm, comm, strnlen(comm, sizeof(out->comm) - 1));
	out->time_ns = time;
	out->nr_mappings = (uint32_t)n;
	out->mappings = maps;
	w->st.snapshots++;
	return 0;
}

int mmapwatch__snapshot(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			const char *comm, struct stk_proc_maps *out)
{
	struct wproc *p = proc_find(w, tgid);

	memset(out, 0, sizeof(*out));
	if (!p || !p->complete)
		return -ENOENT;
	return snapshot_of(w, pm, tgid, comm, p->maps, p->nr, p->changed_ns, out);
}

int mmapwatch__snapshot_old(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			    const char *comm, uint64_t image_ns, struct stk_proc_maps *out,
			    uint64_t *start_ns, uint64_t *end_ns)
{
	struct wproc *p = proc_find(w, tgid);
	struct wold *o = NULL;
	size_t k;

	memset(out, 0, sizeof(*out));
	/* The image began by the last exec at or before @image_ns (the
	 * sample's exec time is taken after the exec's COMM record). */
	if (!p || image_ns >= p->image_ns)
		return -ENOENT;
	for (k = p->nr_old; k-- > 0;)
		if (p->old[k].start_ns <= image_ns) {
			o = &p->old[k];
			break;
		}
	if (!o || image_ns >= o->end_ns)
		return -ENOENT;
	*start_ns = o->start_ns;
	*end_ns = o->end_ns;
	return snapshot_of(w, pm, tgid, comm, o->maps, o->nr,
			   o->changed_ns < o->end_ns ? o->changed_ns : o->end_ns - 1, out);
}

void mmapwatch__purge(struct mmapwatch *w, uint64_t before_ns)
{
	uint64_t key, val, *dead = NULL;
	size_t it = 0, n = 0, cap = 0, i;

	while (idmap__next(w->procs, &it, &key, &val)) {
		struct wproc *p = (struct wproc *)(uintptr_t)val;
		size_t k = 0, j;

		/* Images replaced before @before_ns: their rows are written. */
		while (k < p->nr_old && p->old[k].end_ns < before_ns)
			old_free(&p->old[k++]);
		for (j = 0; k && j + k < p->nr_old; j++)
			p->old[j] = p->old[j + k];
		p->nr_old -= k;
		if (!p->exited || p->exit_ns >= before_ns)
			continue;
		if (n == cap) {
			uint64_t *d = realloc(dead, (cap ? cap * 2 : 64) * sizeof(*d));

			if (!d)
				break; /* the rest at the next purge */
			dead = d;
			cap = cap ? cap * 2 : 64;
		}
		dead[n++] = key;
	}
	for (i = 0; i < n; i++) {
		proc_free(proc_find(w, (uint32_t)dead[i]));
		idmap__remove(w->procs, dead[i]);
	}
	free(dead);
}

void mmapwatch__stats(const struct mmapwatch *w, struct mmapwatch_stats *st)
{
	*st = w->st;
}
