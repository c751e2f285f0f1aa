// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmapwatch_procs.c - each watched process's executable mappings as the
 * perf records left them (mmapwatch.c reads and applies the records): the
 * current image and the ones exec replaced, a new mapping punching out
 * what it overlaps, and the snapshots and purges the recorder asks for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idmap.h"
#include "mmapwatch_int.h"
#include "readall.h"

struct wproc *wproc__find(const struct mmapwatch *w, uint32_t tgid)
{
	uint64_t *v = idmap__find(w->procs, tgid);

	return v ? (struct wproc *)(uintptr_t)*v : NULL;
}

void wproc__maps_clear(struct wproc *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		wpath__put(p->maps[i].path);
	p->nr = 0;
}

static void old_free(struct wold *o)
{
	size_t i;

	for (i = 0; i < o->nr; i++)
		wpath__put(o->maps[i].path);
	free(o->maps);
	memset(o, 0, sizeof(*o));
}

void wproc__free(struct wproc *p)
{
	size_t i;

	if (!p)
		return;
	wproc__maps_clear(p);
	free(p->maps);
	for (i = 0; i < p->nr_old; i++)
		old_free(&p->old[i]);
	free(p->old);
	free(p);
}

/* Keep @p's image, which an exec at @time replaces, as an old one (the
 * oldest goes when there are OLD_IMAGES); its maps move there. */
void wproc__keep_old_image(struct wproc *p, uint64_t time)
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
struct wproc *wproc__new(struct mmapwatch *w, uint32_t tgid)
{
	struct wproc *p = calloc(1, sizeof(*p)), *old = wproc__find(w, tgid);

	if (!p)
		return NULL;
	if (idmap__set(w->procs, tgid, (uint64_t)(uintptr_t)p)) {
		free(p);
		return NULL;
	}
	wproc__free(old);
	p->gen = ++w->gen;
	p->image = p->gen;
	return p;
}

void wproc__note(struct mmapwatch *w, struct wproc *p, uint32_t tgid)
{
	if (p->noted)
		return;
	if (w->nr_changed == w->cap_changed) {
		size_t cap = w->cap_changed ? w->cap_changed * 2 : 64;
		uint32_t *n = realloc(w->changed, cap * sizeof(*n));

		if (!n)
			return; /* its first sample loads it instead */
		w->changed = n;
		w->cap_changed = cap;
	}
	w->changed[w->nr_changed++] = tgid;
	p->noted = 1;
}

size_t mmapwatch__take_changed(struct mmapwatch *w, const uint32_t **tgids)
{
	size_t i, n = w->nr_changed;

	for (i = 0; i < n; i++) {
		struct wproc *p = wproc__find(w, w->changed[i]);

		if (p)
			p->noted = 0;
	}
	w->nr_changed = 0;
	*tgids = w->changed;
	return n;
}

int wproc__maps_reserve_exact(struct wproc *p, size_t n)
{
	struct wmap *m;

	if (n <= p->cap)
		return 0;
	m = realloc(p->maps, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->maps = m;
	p->cap = n;
	return 0;
}

int wproc__maps_reserve(struct wproc *p, size_t more)
{
	struct wmap *m;
	size_t cap;

	if (p->nr + more <= p->cap)
		return 0;
	/* 8 holds a small program's (itself, ld.so, libc, the vDSO, each
	 * file's offset-0 mapping): under glibc's 1 KiB, where a request
	 * no longer comes from its per-thread cache and consolidates the
	 * free lists first. */
	cap = p->cap ? p->cap * 2 : 8;
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
int wproc__maps_punch(struct wproc *p, uint64_t start, uint64_t end)
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
	err = wproc__maps_reserve(p, 1);
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
			tail.path = wpath__get(m.path);
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
			wpath__put(m.path);
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
	wproc__maps_clear(p);
	p->complete = 0;
	return err;
}

/* Add mapping @n (its path is taken over) in place of what it overlaps.
 * Returns 0 or -ENOMEM (then @n's path is freed). */
int wkeys__push(uint64_t **keys, size_t *n, size_t *cap, uint64_t key)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		uint64_t *k = realloc(*keys, c * sizeof(*k));

		if (!k)
			return -ENOMEM;
		*keys = k;
		*cap = c;
	}
	(*keys)[(*n)++] = key;
	return 0;
}

int wproc__maps_add(struct wproc *p, struct wmap *n)
{
	int err;

	err = wproc__maps_punch(p, n->start, n->end);
	if (err >= 0)
		err = wproc__maps_reserve(p, 1);
	if (err) {
		wpath__put(n->path);
		wproc__maps_clear(p);
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

int wproc__seed(struct mmapwatch *w, struct wproc *p, uint32_t tgid, uint64_t time)
{
	char path[32], *buf = NULL, *line, *next;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	err = read_all(path, 16384, &buf, &len);
	if (err)
		return err;
	wproc__maps_clear(p);
	p->complete = 1;
	for (line = buf; *line; line = next) {
		struct procmaps_line l;
		struct wmap m = {};

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (procmaps__parse_line(line, &l))
			continue;
		/* What on_mmap2() keeps: executable mappings, and a file's
		 * offset-0 one.  [vsyscall] is no mapping (snapshots add it). */
		if (!(l.prot & PROT_EXEC) && (l.offset != 0 || l.path[0] != '/'))
			continue;
		if (strcmp(l.path, "[vsyscall]") == 0)
			continue;
		m.start = l.start;
		m.end = l.end;
		m.pgoff = l.offset;
		m.dev = l.dev;
		m.ino = l.inode;
		m.prot = l.prot;
		m.path = wpath__intern(w, l.path);
		if (!m.path) {
			wproc__maps_clear(p);
			p->complete = 0;
			err = -ENOMEM;
			break;
		}
		err = wproc__maps_add(p, &m); /* on failure: cleared, incomplete */
		if (err)
			break;
	}
	free(buf);
	p->gen = ++w->gen;
	p->changed_ns = time;
	if (!err && p->nr)
		w->st.seeded++;
	return err;
}

uint64_t mmapwatch__image(const struct mmapwatch *w, uint32_t tgid)
{
	const struct wproc *p = wproc__find(w, tgid);

	return p ? p->image : 0;
}

int mmapwatch__complete(const struct mmapwatch *w, uint32_t tgid, uint64_t *gen, int *exited)
{
	const struct wproc *p = wproc__find(w, tgid);

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

/*
 * Another mapping of @m's file before it, @wm[0..@i), has its build-id:
 * @m takes it (a library's code and its offset-0 headers are one file,
 * read once), as a /proc snapshot does.  1 if it did.
 */
static int same_file_known(struct wmap *wm, size_t i, struct wmap *m)
{
	size_t j;

	if (m->path[0] != '/' || !m->ino)
		return 0;
	for (j = 0; j < i; j++) {
		const struct wmap *k = &wm[j];

		/* A read that found none is not copied: @m's own read
		 * may. */
		if (k->bid_known && k->bid_size && k->ino == m->ino && k->dev == m->dev &&
		    strcmp(k->path, m->path) == 0) {
			m->bid_size = k->bid_size;
			memcpy(m->bid, k->bid, k->bid_size);
			m->bid_known = 1;
			return 1;
		}
	}
	return 0;
}

/* @m as a snapshot's mapping, its path @path. */
static void mapping_of(const struct wmap *m, const char *path, struct stk_mapping *o)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->start = m->start;
	o->end = m->end;
	o->offset = m->pgoff;
	o->dev = m->dev;
	o->inode = m->ino;
	o->prot = m->prot;
	o->build_id_size = m->bid_size;
	memcpy(o->build_id, m->bid, m->bid_size);
}

/* A snapshot of mappings @wm[0..@nr) of @tgid, changed last at @time. */
static int snapshot_of(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid, const char *comm,
		       struct wmap *wm, size_t nr, uint64_t time, struct stk_proc_maps *out)
{
	struct procmaps_line vsys;
	struct stk_mapping *maps;
	char *path;
	size_t i, n = 0;

	maps = calloc(nr + 1, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	/* The process's credentials once for all the files it maps. */
	procmaps__hold_creds(pm, tgid);
	for (i = 0; i < nr; i++) {
		struct wmap *m = &wm[i];
		struct stk_mapping *o = &maps[n];

		if (!(m->prot & PROT_EXEC) && !exec_mapping_of(wm, nr, m))
			continue;
		if (!m->bid_known && !same_file_known(wm, i, m))
			resolve_build_id(w, pm, tgid, m);
		path = strdup(m->path);
		if (!path) {
			procmaps__drop_creds(pm);
			while (n--)
				free((char *)maps[n].path);
			free(maps);
			return -ENOMEM;
		}
		mapping_of(m, path, o);
		n++;
	}
	procmaps__drop_creds(pm);
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
	struct wproc *p = wproc__find(w, tgid);

	memset(out, 0, sizeof(*out));
	if (!p || !p->complete)
		return -ENOENT;
	return snapshot_of(w, pm, tgid, comm, p->maps, p->nr, p->changed_ns, out);
}

int mmapwatch__snapshot_old(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			    const char *comm, uint64_t image_ns, struct stk_proc_maps *out,
			    uint64_t *start_ns, uint64_t *end_ns)
{
	struct wproc *p = wproc__find(w, tgid);
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

int mmapwatch__old_mapping(struct mmapwatch *w, struct procmaps *pm, uint32_t tgid,
			   uint64_t addr, struct stk_mapping *out)
{
	struct wproc *p = wproc__find(w, tgid);
	size_t k, i;

	for (k = p ? p->nr_old : 0; k-- > 0;) {
		for (i = 0; i < p->old[k].nr; i++) {
			struct wmap *m = &p->old[k].maps[i];

			if (!(m->prot & PROT_EXEC) || addr < m->start || addr >= m->end)
				continue;
			resolve_build_id(w, pm, tgid, m);
			mapping_of(m, m->path, out);
			return 0;
		}
	}
	return -ENOENT;
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
		if (wkeys__push(&dead, &n, &cap, key))
			break; /* the rest at the next purge */
	}
	for (i = 0; i < n; i++) {
		wproc__free(wproc__find(w, (uint32_t)dead[i]));
		idmap__remove(w->procs, dead[i]);
	}
	free(dead);
	wpath__prune(w, 0);
}
