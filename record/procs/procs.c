// SPDX-License-Identifier: BSD-2-Clause
/*
 * procs.c - the recording's processes: a maps snapshot per process its
 * rows reference, from the mmap watcher or /proc/PID/maps, queued for
 * MAPS, refreshed when stale and forgotten after exit (see procs.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "clock.h"
#include "cpulist.h"
#include "idmap.h"
#include "procs.h"
#include "python.h"
#include "unwinder.h"

/* Ring buffer pages per CPU for the mmap side-band records: 256 KiB holds
 * the exec, mmap and exit records of ~100 processes; the recorder reads
 * them when a sample needs them, at each flush, and is woken each 64 KiB
 * (mmapwatch.c mmapwatch__open()). */
#define MMAPWATCH_PAGES 64

/* A process maps snapshot.  The latest one per live process stays in
 * memory so new user stacks can be checked against it. */
struct snap {
	struct stk_proc_maps maps;
	int pending;		/* not written yet */
	int orphan;		/* replaced or purged: free once written */
	int failed;		/* could not be read: nothing to write */
	uint64_t purge_seq;	/* exited: forget at this flush (0: alive) */
	int from_events;	/* built by the mmap watcher, ... */
	uint64_t mw_gen;	/* ... from this state of the process, */
	uint64_t mw_image;	/* ... of this image of it */
	int superseded;		/* a later one of the same image replaced it
				 * before it was written: not written */
	int referenced;		/* a row references the process: written;
				 * else held back (off-CPU episodes that
				 * -m/-M drop announce processes too) */
	uint64_t taken_seq;	/* the flush it was taken in */
};

struct procs {
	struct procmaps *pm;
	struct mmapwatch *mw;		/* mmap side-band records, or NULL */
	struct unwinder *uw;		/* .eh_frame tables to keep current, or NULL */
	struct python *py;		/* Python interpreters to find, or NULL */
	/* tgid -> struct snap *, and snapshots queued for MAPS. */
	struct idmap *snaps;
	struct snap **pend;
	size_t nr_pend, cap_pend;
	struct stk_proc_maps *maps_buf;
	/* Our vDSO's ESYM blob (kind byte + ELF image), or NULL: none; kept
	 * (a few KiB) for the next file of a rotating recording. */
	uint8_t *vdso_blob;
	int vdso_written;		/* in the file already */
	size_t vdso_blob_size;
	uint8_t vdso_bid[STK_MAX_BUILD_ID];
	int vdso_bid_size;
	/* Replaced images queued this flush (procs__see_image()). */
	struct old_image {
		uint32_t tgid;
		uint64_t image_ns, end_ns;
		const struct snap *snap;	/* pending: valid until procs__write() */
	} *olds;
	size_t nr_olds, cap_olds;
	struct stk_mapping old_map;	/* procs__mapping_any()'s from the watcher */
	uint64_t purges;		/* procs__purge() calls */
	void (*gone)(void *ctx, uint32_t tgid);	/* procs__set_on_gone() */
	void *gone_ctx;
	struct procs_stats st;
};

/* Every so many purges, the snapshots of processes no exit was seen of
 * are checked against the processes alive. */
#define GONE_CHECK_EVERY 16

/*
 * The vDSO is no file the reporter could find, so its image goes into the
 * capture (as perf copies it into its build-id cache).  A process with
 * another vDSO (32-bit) keeps its own build-id, unclaimed.  Copied now so
 * that writing it can only fail as a write does.
 */
static int copy_vdso(struct procs *p)
{
	const void *img;
	size_t size;
	int bid_size;

	bid_size = procmaps__vdso_image(p->pm, &img, &size);
	if (bid_size <= 0 || procmaps__vdso_build_id(p->pm, p->vdso_bid) != bid_size)
		return 0;
	p->vdso_blob = malloc(size + 1);
	if (!p->vdso_blob)
		return -ENOMEM;
	p->vdso_blob[0] = STK_ESYM_ELF_IMAGE;
	memcpy(p->vdso_blob + 1, img, size);
	p->vdso_blob_size = size + 1;
	p->vdso_bid_size = bid_size;
	return 0;
}

struct procs *procs__new(void)
{
	struct procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->snaps = idmap__new();
	p->pm = procmaps__new();
	if (!p->snaps || !p->pm || copy_vdso(p)) {
		procs__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void snap_free(struct snap *s)
{
	if (!s)
		return;
	procmaps__free_snapshot(&s->maps);
	free(s);
}

void procs__free(struct procs *p)
{
	uint64_t val;
	size_t it = 0, i;

	if (!p)
		return;
	mmapwatch__free(p->mw);
	if (p->snaps) {
		while (idmap__next(p->snaps, &it, NULL, &val)) {
			struct snap *s = (struct snap *)(uintptr_t)val;

			if (!s->pending)
				snap_free(s);
		}
	}
	for (i = 0; i < p->nr_pend; i++)
		snap_free(p->pend[i]);
	idmap__free(p->snaps);
	procmaps__free(p->pm);
	free(p->pend);
	free(p->maps_buf);
	free(p->vdso_blob);
	free(p->olds);
	free(p);
}

/* ---- the mmap watcher -------------------------------------------------- */

int procs__watch(struct procs *p, enum mmapwatch_follow follow, const uint32_t *pids,
		 size_t nr_pids)
{
	size_t nr_online = 0, i;
	int *online = NULL, err;

	p->mw = mmapwatch__new(follow);
	if (!p->mw)
		return -ENOMEM;
	for (i = 0; i < nr_pids; i++)
		if (mmapwatch__add(p->mw, pids[i]))
			return -ENOMEM;
	err = cpulist__online(&online, &nr_online);
	err = err ?: mmapwatch__open(p->mw, online, nr_online, MMAPWATCH_PAGES);
	free(online);
	if (err && err != -ENOMEM)
		procs__unwatch(p);
	return err;
}

int procs__kernel_build_ids(const struct procs *p)
{
	return p->mw && mmapwatch__kernel_build_ids(p->mw);
}

size_t procs__nr_fds(const struct procs *p)
{
	return p->mw ? mmapwatch__nr_fds(p->mw) : 0;
}

int procs__fd(const struct procs *p, size_t i)
{
	return mmapwatch__fd(p->mw, i);
}

/* A process's mappings, new or changed: to the unwinder and the Python
 * frame walk; and gone. */
static void maps_add(struct procs *p, const struct stk_proc_maps *maps, int exited)
{
	if (p->uw && exited)
		unwinder__add_exited(p->uw, maps);
	else if (p->uw)
		unwinder__add_process(p->uw, maps);
	python__add_process(p->py, maps);
}

static void maps_remove(struct procs *p, uint32_t tgid)
{
	unwinder__remove_process(p->uw, tgid);
	python__remove_process(p->py, tgid);
}

/* The processes the watcher saw exec, map code or exit: their mappings
 * into the unwinder at once (their tables queued), so that their first
 * samples find them -- not only once a sample announced them. */
static void unwind_changed(struct procs *p)
{
	const uint32_t *tgids;
	size_t n, i;

	n = mmapwatch__take_changed(p->mw, &tgids);
	for (i = 0; (p->uw || p->py) && i < n; i++) {
		struct stk_proc_maps maps = { 0 };
		int exited;

		if (!mmapwatch__complete(p->mw, tgids[i], NULL, &exited))
			continue;
		if (exited) {
			maps_remove(p, tgids[i]);
			continue;
		}
		if (mmapwatch__snapshot(p->mw, p->pm, tgids[i], "", &maps) == 0)
			maps_add(p, &maps, 0);
		procmaps__free_snapshot(&maps);
	}
}

int procs__drain_events(struct procs *p)
{
	int found;

	if (!p->mw)
		return 0;
	found = mmapwatch__drain(p->mw);
	unwind_changed(p);
	return found;
}

uint64_t procs__events_gen(const struct procs *p)
{
	return p->mw ? mmapwatch__gen(p->mw) : 0;
}

void procs__unwatch(struct procs *p)
{
	mmapwatch__free(p->mw);
	p->mw = NULL;
}

/* ---- snapshots ----------------------------------------------------------- */

static int pend_snap(struct procs *p, struct snap *s)
{
	if (p->nr_pend == p->cap_pend) {
		size_t cap = p->cap_pend ? p->cap_pend * 2 : 64;
		struct snap **q = realloc(p->pend, cap * sizeof(*q));
		struct stk_proc_maps *b = realloc(p->maps_buf, cap * sizeof(*b));

		if (q)
			p->pend = q;
		if (b)
			p->maps_buf = b;
		if (!q || !b)
			return -ENOMEM;
		p->cap_pend = cap;
	}
	p->pend[p->nr_pend++] = s;
	s->pending = 1;
	return 0;
}

/* Fill @s from the watcher if it saw @tgid's exec: its mappings as they are
 * now, even if it has exited or ld.so is still mapping its libraries (a
 * /proc snapshot then would miss them).  -ENOENT when it cannot. */
static int snapshot_from_events(struct procs *p, struct snap *s, uint32_t tgid,
				const char *comm, uint64_t seq)
{
	uint64_t gen;
	int exited, err;

	if (!p->mw)
		return -ENOENT;
	mmapwatch__drain(p->mw);
	if (!mmapwatch__complete(p->mw, tgid, &gen, &exited))
		return -ENOENT;
	err = mmapwatch__snapshot(p->mw, p->pm, tgid, comm, &s->maps);
	if (err)
		return err;
	s->from_events = 1;
	s->mw_gen = gen;
	s->mw_image = mmapwatch__image(p->mw, tgid);
	p->st.maps_events++;
	if (exited)
		s->purge_seq = seq + 2;
	return 0;
}

int procs__snapshot(struct procs *p, uint32_t tgid, const char *comm, uint64_t seq)
{
	struct snap *s, *old = NULL;
	uint64_t *v;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->taken_seq = seq;
	err = snapshot_from_events(p, s, tgid, comm, seq);
	if (err && err != -ENOMEM)
		err = procmaps__snapshot(p->pm, "/proc", tgid, comm, mono_ns(), &s->maps);
	if (err == -ENOMEM) {
		free(s);
		return err;
	}
	if (err) {
		/* Not readable: remember, so it is not retried every flush. */
		s->failed = 1;
		if (err == -ENOENT || err == -ESRCH) {
			p->st.maps_gone++;
			s->purge_seq = seq + 2; /* gone: its pid may come back */
		} else {
			p->st.maps_errors++;
		}
	} else if (pend_snap(p, s)) {
		snap_free(s);
		return -ENOMEM;
	} else if (p->uw || p->py) {
		/* Tables for its mappings, before its next samples; on
		 * failure they fall back to frame pointers (counted).  Its
		 * exit seen (purge_seq, from the events): no next samples. */
		maps_add(p, &s->maps, s->from_events && s->purge_seq);
	}
	v = idmap__find(p->snaps, tgid);
	if (v)
		old = (struct snap *)(uintptr_t)*v;
	/* Gone (or unreadable) now, but read before: the earlier snapshot
	 * stays the process's, to be written when a row references it
	 * (a held-back one would otherwise be dropped unwritten). */
	if (s->failed && old && !old->failed) {
		if (s->purge_seq && !old->purge_seq)
			old->purge_seq = s->purge_seq;
		snap_free(s);
		return 0;
	}
	if (idmap__set(p->snaps, tgid, (uint64_t)(uintptr_t)s)) {
		if (s->pending)
			p->nr_pend--; /* it was the last one queued */
		snap_free(s);
		return -ENOMEM;
	}
	/* An exited process's, and this one not its image: another process. */
	if (old && old->purge_seq && old->pending && !old->failed &&
	    !(old->from_events && s->from_events && old->mw_image == s->mw_image)) {
		/*
		 * Its pid came back before the flush that drains the exited
		 * process's rows (a quiet stretch holds exits and starts
		 * until its flush): that snapshot is written all the same,
		 * before those rows, which resolve in it by their intervals'
		 * ends (procs__see() will mark the new one only).  It was
		 * announced, so it had samples (only -m/-M's dropped
		 * episodes make this an extra snapshot).
		 */
		old->referenced = 1;
		old->orphan = 1;
	} else if (old) {
		/* The same process (an exited one is purged first). */
		s->referenced = old->referenced;
		/* Not written yet, and the same image: the new one is its
		 * current state, and rows are resolved in the latest
		 * snapshot anyway (refreshes would otherwise write one per
		 * library ld.so maps between two flushes). */
		if (old->pending && old->from_events && s->from_events && !s->failed &&
		    old->mw_image == s->mw_image)
			old->superseded = 1;
		old->orphan = 1;
		if (!old->pending)
			snap_free(old);
	}
	return 0;
}

int procs__see(struct procs *p, uint32_t tgid, const char comm[16], uint64_t seq)
{
	uint64_t *v;
	int err;

	if (tgid == 0)
		return 0;
	v = idmap__find(p->snaps, tgid);
	if (!v) {
		err = procs__snapshot(p, tgid, comm, seq);
		if (err)
			return err;
		v = idmap__find(p->snaps, tgid);
		if (!v)
			return 0;
	}
	((struct snap *)(uintptr_t)*v)->referenced = 1;
	return 0;
}

int procs__see_image(struct procs *p, uint32_t tgid, const char comm[16], uint64_t image_ns,
		     uint64_t *end_ns)
{
	struct stk_proc_maps maps;
	uint64_t start_ns;
	struct snap *s;
	size_t i;
	int err;

	*end_ns = 0;
	if (!p->mw || tgid == 0)
		return 0;
	for (i = 0; i < p->nr_olds; i++)
		if (p->olds[i].tgid == tgid && p->olds[i].image_ns == image_ns) {
			*end_ns = p->olds[i].end_ns;
			return 0;
		}
	if (p->nr_olds == p->cap_olds) {
		size_t cap = p->cap_olds ? p->cap_olds * 2 : 16;
		struct old_image *o = realloc(p->olds, cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		p->olds = o;
		p->cap_olds = cap;
	}
	/* Most rows are of their process's current image: -ENOENT, cheap. */
	err = mmapwatch__snapshot_old(p->mw, p->pm, tgid, comm, image_ns, &maps, &start_ns,
				      end_ns);
	if (err) {
		*end_ns = 0;
		return err == -ENOMEM ? err : 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		procmaps__free_snapshot(&maps);
		*end_ns = 0;
		return -ENOMEM;
	}
	s->maps = maps;
	/* Written once, kept nowhere: procs__see()'s is the current one.
	 * Made for a row of the old image, so referenced: procs__write()
	 * writes only the snapshots rows reference. */
	s->from_events = 1;
	s->orphan = 1;
	s->referenced = 1;
	if (pend_snap(p, s)) {
		snap_free(s);
		*end_ns = 0;
		return -ENOMEM;
	}
	p->olds[p->nr_olds++] = (struct old_image){ tgid, image_ns, *end_ns, s };
	p->st.old_images++;
	return 0;
}

int procs__image_covers(const struct procs *p, uint32_t tgid, uint64_t image_ns, int current,
			uint64_t leaf)
{
	const uint64_t *v;
	size_t i;

	for (i = 0; !current && i < p->nr_olds; i++)
		if (p->olds[i].tgid == tgid && p->olds[i].image_ns == image_ns)
			return procmaps__covers(&p->olds[i].snap->maps, leaf);
	if (!current)
		return 0;
	v = idmap__find(p->snaps, tgid);
	return v && procmaps__covers(&((const struct snap *)(uintptr_t)*v)->maps, leaf);
}

static int is_stale(const struct procs *p, uint64_t key, const struct snap *s, uint64_t seq);

void procs__exited(struct procs *p, uint32_t tgid, uint64_t seq)
{
	uint64_t *v = idmap__find(p->snaps, tgid);
	struct snap *s = v ? (struct snap *)(uintptr_t)*v : NULL;

	p->st.exits++;
	/*
	 * Built from mmap records that changed since (ld.so mapped the
	 * libraries after its first sample): its last state now, while the
	 * watcher has it; procs__refresh() at the flush would be too late
	 * when its pid came back meanwhile (a quiet stretch holds exits and
	 * starts until its flush): the new process's records replace them.
	 */
	maps_remove(p, tgid);
	if (s && p->mw && !s->failed) {
		char comm[16];
		int exited = 0;

		/* Its exit among the records too: the snapshot is taken as
		 * an exited one's (its mappings for the copies it left). */
		mmapwatch__drain(p->mw);
		if (mmapwatch__complete(p->mw, tgid, NULL, &exited) && exited &&
		    is_stale(p, tgid, s, seq)) {
			memcpy(comm, s->maps.comm, sizeof(comm));
			if (procs__snapshot(p, tgid, comm, seq) == 0)
				v = idmap__find(p->snaps, tgid);
		}
	}
	if (v)
		((struct snap *)(uintptr_t)*v)->purge_seq = seq + 2;
}

/* The current mappings of @tgid, from the watcher if it has them whole,
 * else /proc; into the unwinder.  The snapshot is not kept. */
static void unwind_load(struct procs *p, uint32_t tgid)
{
	struct stk_proc_maps maps = { 0 };
	char comm[16] = "";
	int err = -ENOENT, exited = 0;

	if (p->mw) {
		mmapwatch__drain(p->mw);
		if (mmapwatch__complete(p->mw, tgid, NULL, &exited))
			err = mmapwatch__snapshot(p->mw, p->pm, tgid, comm, &maps);
	}
	if (err) {
		exited = 0;
		err = procmaps__snapshot(p->pm, "/proc", tgid, comm, mono_ns(), &maps);
	}
	if (!err)
		maps_add(p, &maps, exited);
	procmaps__free_snapshot(&maps);
}

void procs__set_unwinder(struct procs *p, struct unwinder *uw, const uint32_t *pids,
			 size_t nr_pids)
{
	size_t i;

	p->uw = uw;
	for (i = 0; uw && i < nr_pids; i++) {
		char path[64], comm[16] = "";
		FILE *f;

		if (idmap__find(p->snaps, pids[i]))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/comm", pids[i]);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		/* A snapshot kept, not only the unwinder's mappings: a target
		 * that exits right after its first samples (a burst of trace
		 * events) is gone when their announcement is read, and its
		 * rows would have no maps.  Written once a row references it;
		 * given to the unwinder as every snapshot is. */
		if (procs__snapshot(p, pids[i], comm, 0))
			unwind_load(p, pids[i]);
	}
}

void procs__set_python(struct procs *p, struct python *py)
{
	p->py = py;
}

void procs__unwind_stale(struct procs *p, uint32_t tgid)
{
	if (p->uw)
		unwind_load(p, tgid);
}

int procs__check_stack(struct procs *p, uint32_t tgid, const struct stkrec_stack *s,
		       uint64_t seq)
{
	uint64_t *v = idmap__find(p->snaps, tgid);
	struct snap *snap;

	if (!v || !s->nr)
		return 0;
	snap = (struct snap *)(uintptr_t)*v;
	if (snap->failed || snap->purge_seq || procmaps__covers(&snap->maps, s->ips[0]))
		return 0;
	/* Built from mmap records that have not changed since: every
	 * mapping is in it, reading again would add nothing (the stack is
	 * from before an exec, or its leaf is garbage). */
	if (snap->from_events && p->mw) {
		uint64_t gen;

		if (mmapwatch__complete(p->mw, tgid, &gen, NULL) && gen == snap->mw_gen)
			return 0;
	}
	/* Pending since an earlier flush (held back until a row came):
	 * as stale as a written one. */
	if (!snap->pending || snap->taken_seq != seq) {
		p->st.resnapshots++;
		return procs__snapshot(p, tgid, snap->maps.comm, seq);
	}
	return 0;
}

/* The keys of the snapshots @pick()s, malloc'ed into *@keys; -ENOMEM when
 * they do not all fit (*@keys then holds *@n of them). */
static int collect_keys(const struct procs *p, int (*pick)(const struct procs *p,
							   uint64_t key, const struct snap *s,
							   uint64_t seq),
			uint64_t seq, uint64_t **keys, size_t *n)
{
	uint64_t key, val, *out = NULL;
	size_t it = 0, cap = 0;

	*n = 0;
	while (idmap__next(p->snaps, &it, &key, &val)) {
		if (!pick(p, key, (const struct snap *)(uintptr_t)val, seq))
			continue;
		if (*n == cap) {
			uint64_t *q = realloc(out, (cap ? cap * 2 : 64) * sizeof(*q));

			if (!q) {
				*keys = out;
				return -ENOMEM;
			}
			out = q;
			cap = cap ? cap * 2 : 64;
		}
		out[(*n)++] = key;
	}
	*keys = out;
	return 0;
}

/* Built from mmap records, and the process has changed since.  Not
 * complete any more (records were lost, or purged): the snapshot taken
 * stays the best there is. */
static int is_stale(const struct procs *p, uint64_t key, const struct snap *s, uint64_t seq)
{
	uint64_t gen;
	int exited;

	(void)seq;
	return s->from_events && mmapwatch__complete(p->mw, (uint32_t)key, &gen, &exited) &&
	       gen != s->mw_gen;
}

int procs__refresh(struct procs *p, uint64_t seq)
{
	uint64_t *stale;
	size_t n, i;
	int err;

	if (!p->mw)
		return 0;
	procs__drain_events(p);
	err = collect_keys(p, is_stale, seq, &stale, &n);
	for (i = 0; i < n && !err; i++) {
		const struct snap *s = (struct snap *)(uintptr_t)*idmap__find(p->snaps, stale[i]);
		char comm[16];

		memcpy(comm, s->maps.comm, sizeof(comm));
		err = procs__snapshot(p, (uint32_t)stale[i], comm, seq);
	}
	free(stale);
	return err;
}

/* Exited before the flush @seq - 2. */
static int is_dead(const struct procs *p, uint64_t key, const struct snap *s, uint64_t seq)
{
	(void)p;
	(void)key;
	return s->purge_seq && s->purge_seq <= seq;
}

/*
 * The kernel says a process exited only if it announced it since its last
 * exec (bpf/common.bpf.h "seen"), and the watcher only if no record was
 * lost: a child sampled between fork and exec that exits unsampled after
 * its exec (a shell's loop of commands) left its snapshot behind for good,
 * ~1 KiB each, a few hundred a minute under an exec loop.  One whose pid
 * is free now is forgotten as an exit would (a pid taken again by another
 * process keeps it until that one's first sample replaces it).
 */
static void forget_unseen_exits(struct procs *p, uint64_t seq)
{
	uint64_t key, val;
	size_t it = 0;

	while (idmap__next(p->snaps, &it, &key, &val)) {
		struct snap *s = (struct snap *)(uintptr_t)val;

		if (s->purge_seq || !key || key > INT32_MAX)
			continue;
		if (kill((pid_t)key, 0) < 0 && errno == ESRCH) {
			s->purge_seq = seq + 2;
			p->st.exits_unseen++;
			maps_remove(p, (uint32_t)key);
			if (p->gone)
				p->gone(p->gone_ctx, (uint32_t)key);
		}
	}
}

void procs__set_on_gone(struct procs *p, void (*gone)(void *ctx, uint32_t tgid), void *ctx)
{
	p->gone = gone;
	p->gone_ctx = ctx;
}

void procs__purge(struct procs *p, uint64_t seq, uint64_t before_ns)
{
	uint64_t *dead;
	size_t n, i;

	if (++p->purges % GONE_CHECK_EVERY == 0)
		forget_unseen_exits(p, seq);
	if (p->mw)
		mmapwatch__purge(p->mw, before_ns);
	/* Out of memory: purge those there was room for, the others at the
	 * next flush. */
	collect_keys(p, is_dead, seq, &dead, &n);
	for (i = 0; i < n; i++) {
		struct snap *s = (struct snap *)(uintptr_t)*idmap__find(p->snaps, dead[i]);

		idmap__remove(p->snaps, dead[i]);
		s->orphan = 1;
		if (!s->pending)
			snap_free(s);
	}
	free(dead);
}

const struct stk_mapping *procs__mapping(const struct procs *p, uint32_t tgid, uint64_t addr)
{
	uint64_t *v = idmap__find(p->snaps, tgid);
	const struct snap *s;
	uint32_t i;

	if (!v)
		return NULL;
	s = (const struct snap *)(uintptr_t)*v;
	if (s->failed)
		return NULL;
	for (i = 0; i < s->maps.nr_mappings; i++) {
		const struct stk_mapping *m = &s->maps.mappings[i];

		if ((m->prot & PROT_EXEC) && addr >= m->start && addr < m->end)
			return m;
	}
	return NULL;
}

const struct stk_proc_maps *procs__maps(const struct procs *p, uint32_t tgid)
{
	const uint64_t *v = idmap__find(p->snaps, tgid);
	const struct snap *s = v ? (const struct snap *)(uintptr_t)*v : NULL;

	return s && !s->failed ? &s->maps : NULL;
}

int procs__gone(const struct procs *p, uint32_t tgid)
{
	const uint64_t *v = idmap__find(p->snaps, tgid);

	return !v || ((const struct snap *)(uintptr_t)*v)->purge_seq != 0;
}

const struct stk_mapping *procs__mapping_any(struct procs *p, uint32_t tgid, uint64_t addr)
{
	const struct stk_mapping *m = procs__mapping(p, tgid, addr);
	size_t i;
	uint32_t k;

	for (i = 0; !m && i < p->nr_olds; i++) {
		const struct stk_proc_maps *o = &p->olds[i].snap->maps;

		if (p->olds[i].tgid != tgid)
			continue;
		for (k = 0; k < o->nr_mappings; k++)
			if ((o->mappings[k].prot & PROT_EXEC) && addr >= o->mappings[k].start &&
			    addr < o->mappings[k].end)
				return &o->mappings[k];
	}
	if (!m && p->mw && mmapwatch__old_mapping(p->mw, p->pm, tgid, addr, &p->old_map) == 0)
		return &p->old_map;
	return m;
}

/* ---- writing ------------------------------------------------------------- */

/* Once, just before the first MAPS chunk with a [vdso] mapping of our
 * vDSO's build-id. */
static int write_vdso_esym(struct procs *p, struct stk_writer *w, size_t n, uint64_t *chunks)
{
	size_t i, j;
	int err;

	if (!p->vdso_blob || p->vdso_written)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < p->maps_buf[i].nr_mappings; j++) {
			const struct stk_mapping *m = &p->maps_buf[i].mappings[j];

			if (strcmp(m->path, "[vdso]") == 0 &&
			    m->build_id_size == (uint32_t)p->vdso_bid_size &&
			    memcmp(m->build_id, p->vdso_bid, (size_t)p->vdso_bid_size) == 0)
				break;
		}
		if (j < p->maps_buf[i].nr_mappings)
			break;
	}
	if (i == n)
		return 0;
	err = stk_writer__add_esym(w, p->vdso_bid, (uint32_t)p->vdso_bid_size, p->vdso_blob,
				   p->vdso_blob_size);
	if (err)
		return err;
	(*chunks)++;
	p->vdso_written = 1;
	p->st.vdso_embedded = 1;
	return 0;
}

int procs__write(struct procs *p, struct stk_writer *w, uint64_t *chunks)
{
	size_t i, n = 0, kept = 0;
	int err = 0;

	if (!p->nr_pend)
		return 0;
	for (i = 0; i < p->nr_pend; i++) {
		struct snap *s = p->pend[i];

		if (s->referenced && !s->failed && !s->superseded && s->maps.nr_mappings)
			p->maps_buf[n++] = s->maps;
	}
	if (n)
		err = write_vdso_esym(p, w, n, chunks);
	if (n && !err) {
		err = stk_writer__add_maps(w, p->maps_buf, n);
		if (!err)
			(*chunks)++;
	}
	for (i = 0; i < p->nr_pend; i++) {
		struct snap *s = p->pend[i];

		/* No row yet, still the current one: wait for one. */
		if (!s->referenced && !s->orphan) {
			p->pend[kept++] = s;
			continue;
		}
		s->pending = 0;
		if (s->orphan)
			snap_free(s);
	}
	p->nr_pend = kept;
	p->nr_olds = 0;
	return err;
}

int procs__new_file(struct procs *p)
{
	uint64_t val;
	size_t it = 0;
	int err;

	p->vdso_written = 0;
	while (idmap__next(p->snaps, &it, NULL, &val)) {
		struct snap *s = (struct snap *)(uintptr_t)val;

		if (s->pending || s->failed)
			continue;
		/* Written again once a row of the new file references it. */
		s->referenced = 0;
		err = pend_snap(p, s);
		if (err)
			return err;
	}
	return 0;
}

void procs__stats(const struct procs *p, struct procs_stats *st)
{
	*st = p->st;
	procmaps__stats(p->pm, &st->pm);
	st->watching = p->mw != NULL;
	if (p->mw)
		mmapwatch__stats(p->mw, &st->mw);
	else
		memset(&st->mw, 0, sizeof(st->mw));
}
