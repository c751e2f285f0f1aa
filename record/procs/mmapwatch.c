// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmapwatch.c - executable mappings as they happen, from perf side-band
 * records (see mmapwatch.h): opening the ring buffers, reading and time
 * ordering their records and applying each to its process (whose state
 * mmapwatch_procs.c keeps).
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
#include "mmapwatch_int.h"

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

static void on_mmap2(struct mmapwatch *w, const struct rec_mmap2 *r, size_t size, uint64_t time)
{
	size_t name_max = size - sizeof(*r) - sizeof(struct sample_id);
	struct wproc *p = wproc__find(w, r->pid);
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
		if (wproc__maps_punch(p, r->addr, r->addr + r->len) > 0) {
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
	m.path = wpath__intern(w, anon ? "" : r->filename);
	if (!m.path) {
		wproc__maps_clear(p);
		p->complete = 0;
		return;
	}
	if (wproc__maps_add(p, &m))
		return;
	p->gen = ++w->gen;
	p->changed_ns = time;
	if (m.prot & PROT_EXEC) {
		w->st.mmaps++;
		wproc__note(w, p, r->pid);
	}
}

static void on_exec(struct mmapwatch *w, uint32_t tgid, uint64_t time)
{
	struct wproc *p = wproc__find(w, tgid);

	if (!p && w->follow == MMAPWATCH_ALL)
		p = wproc__new(w, tgid);
	if (!p)
		return;
	/* A new image: nothing of the old one stays mapped. */
	wproc__keep_old_image(p, time);
	wproc__maps_clear(p);
	p->image_ns = time;
	p->complete = 1;
	p->exited = 0;
	p->gen = ++w->gen;
	p->image = p->gen;
	p->changed_ns = time;
	w->st.execs++;
	wproc__note(w, p, tgid);
}

/* 1 if a record after the one being applied is an exec of @tgid. */
static int execs_later(const struct mmapwatch *w, uint32_t tgid)
{
	size_t i;

	for (i = w->applying + 1; i < w->nr_recs; i++) {
		const struct rec_comm *c = (const void *)(w->buf + w->recs[i].off);

		if (c->h.type == PERF_RECORD_COMM && (c->h.misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    c->pid == tgid)
			return 1;
	}
	return 0;
}

static void on_fork(struct mmapwatch *w, const struct rec_task *r, uint64_t time)
{
	struct wproc *parent, *child;
	size_t i;

	/* A thread (same process), or -p: children are not followed. */
	if (r->pid == r->ppid || w->follow == MMAPWATCH_LISTED)
		return;
	parent = wproc__find(w, r->ppid);
	if (!parent && w->follow == MMAPWATCH_ALL)
		parent = wproc__new(w, r->ppid);
	if (!parent)
		return;
	/*
	 * A parent running since before the watcher (a shell loop, make, a
	 * service spawning workers) is read from /proc once: its child's
	 * samples until its exec (a vfork()ed sh in execve) are in those
	 * mappings, and /proc is read too late for them, after the exec.
	 * Not if the parent itself execs later in these records: /proc
	 * would show that image.
	 */
	if (!parent->complete && !execs_later(w, r->ppid) &&
	    wproc__seed(w, parent, r->ppid, time) == 0 && !parent->nr) {
		/* No user mappings: kthreadd, whose children are kernel
		 * threads.  Not followed (read again at its next fork). */
		parent->complete = 0;
		return;
	}
	child = wproc__new(w, r->pid);
	if (!child)
		return;
	child->changed_ns = time;
	/* The child has a copy of its parent's mappings until it execs. */
	if (!parent->complete || wproc__maps_reserve_exact(child, parent->nr ? parent->nr : 1))
		return;
	for (i = 0; i < parent->nr; i++) {
		child->maps[i] = parent->maps[i];
		child->maps[i].path = wpath__get(parent->maps[i].path);
	}
	child->nr = parent->nr;
	child->complete = 1;
	child->changed_ns = parent->changed_ns;
}

static void on_exit_task(struct mmapwatch *w, const struct rec_task *r, uint64_t time)
{
	struct wproc *p;

	if (r->pid != r->tid)
		return; /* a thread, not the process */
	p = wproc__find(w, r->pid);
	if (p) {
		p->exited = 1;
		p->exit_ns = time;
		wproc__note(w, p, r->pid);
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

		wproc__maps_clear(p);
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
	for (i = 0; i < w->nr_recs; i++) {
		w->applying = i;
		apply(w, w->buf + w->recs[i].off, w->recs[i].time);
	}
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

int mmapwatch__drain(struct mmapwatch *w)
{
	uint64_t dropped = 0, records = w->st.records;
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
	return w->st.records != records || dropped;
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
	w->paths = idmap__new();
	if (!w->procs || !w->paths) {
		idmap__free(w->procs);
		idmap__free(w->paths);
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
		wproc__free((struct wproc *)(uintptr_t)val);
	idmap__free(w->procs);
	wpath__prune(w, 1);
	idmap__free(w->paths);
	free(w->buf);
	free(w->recs);
	free(w->changed);
	free(w);
}

int mmapwatch__add(struct mmapwatch *w, uint32_t tgid)
{
	if (wproc__find(w, tgid))
		return 0;
	if (!wproc__new(w, tgid))
		return -ENOMEM;
	if (w->follow == MMAPWATCH_TREE && !w->root && !w->cpus)
		w->root = tgid;
	return 0;
}

/* @pid > 0: that task and, inherited, every task it starts from now on;
 * else every task on @cpu.  A wake each @watermark bytes written. */
static int open_dummy(int cpu, int build_id, int pid, uint32_t watermark)
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
		.watermark = 1,
		.wakeup_watermark = watermark,
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
	uint32_t watermark;
	int err = 0, fd;

	if (!nr_cpus || !pages || (pages & (pages - 1)) || w->cpus)
		return -EINVAL;
	/*
	 * No wake for a process's records as they come: most processes a
	 * busy machine starts are never sampled, and three wakes each (the
	 * first record, the holds of wake.h) cost more than reading them.
	 * They are read when a sample needs them (a process's first sample;
	 * a known process's next sample once its code mappings changed;
	 * with the unwinder, a stack in a mapping not known yet: each wakes
	 * the recorder from the events ring, which reads these first), at
	 * each flush, and at a wake for each quarter of a CPU's ring
	 * written (the kernel counts the watermark from its last wake, not
	 * from what was read).
	 */
	watermark = (uint32_t)(data_size / 4);
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
		fd = open_dummy(cpus[i], w->kernel_bids, (int)w->root, watermark);
		if (fd == -EINVAL && w->kernel_bids && i == 0) {
			/* Before Linux 5.12 the build_id bit is reserved. */
			w->kernel_bids = 0;
			fd = open_dummy(cpus[i], 0, (int)w->root, watermark);
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

uint64_t mmapwatch__gen(const struct mmapwatch *w)
{
	return w->gen;
}

void mmapwatch__stats(const struct mmapwatch *w, struct mmapwatch_stats *st)
{
	*st = w->st;
}
