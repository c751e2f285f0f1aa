// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwinder.c - keeps the BPF unwinder's maps (bpf/unwind.bpf.h) current:
 * one table per ELF file (by build-id), rows copied into the mmap'ed rows
 * array, a page index per table, and each traced process's executable
 * mappings with their table and load bias.  This file keeps the processes
 * (their mappings, the pending ones, the BPF procs map); the tables of
 * rows are unwinder_tables.c's.
 *
 * Building is the expensive part (libLLVM: ~950k rows in ~0.2 s), so a
 * table built once is never built again: evicted from the map, or refused
 * for want of room, its rows are kept in memory (as much again as the
 * map holds, least recently used dropped first) and copied back when a
 * process maps the file again.  On a machine that runs compilers all day
 * this is the difference between building libLLVM once and at every
 * clang.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "buildid.h"
#include "idmap.h"
#include "membudget.h"
#include "procmaps.h"
#include "recorder.h"
#include "stkrec.h"
#include "unwinder_int.h"

/* Page index entries: 64 KiB pages, so 2 GiB of text in all. */
#define PAGES_ENTRIES 32768
/* The deferred stacks' copies (8 KiB each) between two looks (the first
 * copy wakes the main loop; while they keep coming it looks every 10 ms at
 * most, a busy loop's look later): 1000 of them. */
#define DEFER_RING_BYTES (8u << 20)
/* Processes with mappings loaded at once (16 KiB each, allocated as used). */
#define PROCS_ENTRIES 8192

int unwinder__bpf_mode(int recorder_unwind)
{
	switch (recorder_unwind) {
	case RECORDER_UNWIND_AUTO: return 1;
	case RECORDER_UNWIND_DWARF: return 2;
	default: return 0;
	}
}

uint64_t unwinder__default_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t m = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 128 : 0;

	if (m < UNWINDER_MIN_MEMORY)
		m = UNWINDER_MIN_MEMORY;
	if (m > UNWINDER_MAX_MEMORY)
		m = UNWINDER_MAX_MEMORY;
	return m & ~((1ull << 20) - 1);
}

int unwinder__configure_obj(struct bpf_object *obj, int bpf_mode, uint64_t memory)
{
	struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");
	struct bpf_map *pages = bpf_object__find_map_by_name(obj, "unwind_pages");
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "unwind_procs");
	struct bpf_map *defer = bpf_object__find_map_by_name(obj, "defer_ring");
	uint64_t nr;
	int err;

	if (!rows || !pages || !procs || !defer)
		return -ENOENT;
	if (!memory)
		memory = unwinder__default_memory();
	/* In chunks: the memory is taken as tables are loaded. */
	nr = memory / sizeof(struct stkrec_unwind_row) / STKREC_UW_CHUNK_ROWS;
	if (nr < 1)
		nr = 1;
	if (nr > UINT32_MAX / 2 / STKREC_UW_CHUNK_ROWS)
		nr = UINT32_MAX / 2 / STKREC_UW_CHUNK_ROWS;
	/* Written by user space only, as tables load: made then, not 32768
	 * entries at map creation (~0.7 ms of start-up; Linux 6.1+ lets the
	 * perf_event program look into such a map, as it does unwind_procs). */
	err = bpf_map__set_map_flags(pages, bpf_map__map_flags(pages) | BPF_F_NO_PREALLOC);
	err = err ?: bpf_map__set_max_entries(rows, bpf_mode ? (uint32_t)nr : 1);
	err = err ?: bpf_map__set_max_entries(pages, bpf_mode ? PAGES_ENTRIES : 1);
	err = err ?: bpf_map__set_max_entries(procs, bpf_mode ? PROCS_ENTRIES : 1);
	err = err ?: bpf_map__set_max_entries(defer, bpf_mode ? DEFER_RING_BYTES : (uint32_t)getpagesize());
	return err;
}

/* The size of the ELF image at @img: its section headers come last. */
static size_t elf_image_size(const void *img)
{
	const Elf64_Ehdr *eh = img;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	return eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
}

struct unwinder *unwinder__new(const struct unwinder_maps *maps)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return NULL;
	u->maps = *maps;
	u->procs = idmap__new();
	u->free_ext = malloc(sizeof(*u->free_ext));
	if (!u->procs || !u->free_ext) {
		err = ENOMEM;
		goto fail;
	}
	u->nr_chunks = (maps->rows_cap + STKREC_UW_CHUNK_ROWS - 1) / STKREC_UW_CHUNK_ROWS;
	u->chunk_made = calloc(u->nr_chunks ? u->nr_chunks : 1, 1);
	if (!u->chunk_made) {
		err = ENOMEM;
		goto fail;
	}
	/* Address space only: the chunks are mapped into it as created. */
	u->rows_bytes = (size_t)u->nr_chunks * STKREC_UW_CHUNK_ROWS * sizeof(struct stkrec_unwind_row);
	u->rows = mmap(NULL, u->rows_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (u->rows == MAP_FAILED) {
		err = errno;
		u->rows = NULL;
		goto fail;
	}
	/* The first chunks are made here, before sampling starts, the next
	 * ones ahead by a thread; without the thread, each as a table first
	 * needs it. */
	if (u->nr_chunks && maps->rows_fd >= 0)
		unwinder__chunker_start(u);
	u->free_ext[0] = (struct extent){ 0, maps->rows_cap };
	u->nr_free = u->cap_free = 1;
	u->next_id = 1;
	u->debug_dir = UNWINDER_DEBUG_DIR;
	elf_version(EV_CURRENT);
	u->vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (u->vdso) {
		u->vdso_size = elf_image_size(u->vdso);
		u->vdso_id_size = u->vdso_size ? buildid__from_elf_mem(u->vdso, u->vdso_size, u->vdso_id,
									sizeof(u->vdso_id))
					       : 0;
	}
	return u;
fail:
	unwinder__free(u);
	errno = err;
	return NULL;
}

static void proc_release(struct unwinder *u, struct proc *p)
{
	size_t i, j;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		for (j = 0; j < u->nr_tables; j++)
			if (u->tables[j]->id == p->tables[i] && u->tables[j]->refs)
				u->tables[j]->refs--;
	for (i = 0; i < p->nr_pend; i++)
		free((char *)p->pend[i].m.path);
	free(p->pend);
	free(p->um);
	free(p->tables);
	free(p);
}

/* Write @p's mappings into its BPF entry (@flags: BPF_EXIST, only if it
 * still has one: an exec deletes it, and the old image's must not come
 * back). */
static int proc_write(struct unwinder *u, const struct proc *p, uint64_t flags)
{
	struct stkrec_unwind_proc *pb = &u->pbuf;

	memset(pb, 0, offsetof(struct stkrec_unwind_proc, m));
	pb->nr = p->nr_um;
	memcpy(pb->m, p->um, p->nr_um * sizeof(*p->um));
	/* The rest zero, as the whole was once: only what an earlier
	 * process left there is cleared (16 KiB a process was). */
	if (u->pbuf_dirty > pb->nr)
		memset(pb->m + pb->nr, 0, (u->pbuf_dirty - pb->nr) * sizeof(pb->m[0]));
	u->pbuf_dirty = pb->nr;
	if (bpf_map_update_elem(u->maps.procs_fd, &p->tgid, pb, flags)) {
		if (errno != ENOENT)
			u->st.map_errors++;
		return -errno;
	}
	return 0;
}

/* Keep a copy of pending mapping @m in @p. */
static int proc_pend(struct proc *p, const struct stk_mapping *m, size_t cap)
{
	struct pend *d;

	if (!p->pend && !(p->pend = calloc(cap, sizeof(*p->pend))))
		return -ENOMEM;
	d = &p->pend[p->nr_pend];
	d->m = *m;
	d->m.path = strdup(m->path);
	if (!d->m.path)
		return -ENOMEM;
	p->nr_pend++;
	return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct stkrec_unwind_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* 1 if BPF asked for the table of mapping @m of @tgid. */
static int wanted(const struct unwinder *u, uint32_t tgid, const struct stk_mapping *m)
{
	size_t i;

	for (i = 0; i < u->nr_want; i++)
		if (u->want[i].tgid == tgid && u->want[i].addr >= m->start && u->want[i].addr < m->end)
			return 1;
	return 0;
}

/* @tgid's requests are answered (or its mappings no longer have them). */
static void want_forget(struct unwinder *u, uint32_t tgid)
{
	size_t i, k = 0;

	for (i = 0; i < u->nr_want; i++)
		if (u->want[i].tgid != tgid)
			u->want[k++] = u->want[i];
	u->nr_want = k;
}

/*
 * @p is what @old wrote, and the BPF entry still holds it: the same
 * snapshot of the process (the mmap watcher's for one state of it is
 * given twice, when it changes and when a sample announces it), the same
 * mappings and tables.  A new image has another snapshot, as does every
 * /proc one; an exec deletes the entry, but only the exec's records make
 * that snapshot, and a write that failed (also an EXIST one after an
 * exec) leaves @written 0.  Writing again would copy the whole entry
 * (16 KiB) into the kernel for nothing, for every new process.
 */
static int same_entry(const struct proc *old, const struct proc *p)
{
	return old && old->written && p->time_ns && old->time_ns == p->time_ns &&
	       old->nr_um == p->nr_um && memcmp(old->um, p->um, p->nr_um * sizeof(*p->um)) == 0;
}

static int add_process(struct unwinder *u, const struct stk_proc_maps *maps, int gone)
{
	struct stkrec_unwind_proc *pb = &u->pbuf;
	struct proc *p = NULL, *old = NULL;
	uint64_t *v;
	uint32_t i;
	int enomem = 0, pending;

	p = calloc(1, sizeof(*p));
	if (!p || (maps->nr_mappings && !(p->tables = calloc(maps->nr_mappings, sizeof(*p->tables))))) {
		free(p);
		return -ENOMEM;
	}
	p->tgid = maps->tgid;
	/* pbuf is scratch here: proc_write() zeroes what this leaves. */
	pb->nr = 0;
	u->clock++;
	for (i = 0; i < maps->nr_mappings; i++) {
		const struct stk_mapping *m = &maps->mappings[i];
		struct stkrec_unwind_mapping *um;
		struct table *t;
		uint64_t bias = 0;

		if (!(m->prot & 4 /* PROT_EXEC */))
			continue;
		if (pb->nr == STKREC_UW_MAX_MAPPINGS) {
			u->st.mappings_dropped++;
			continue;
		}
		t = unwinder__table_get(u, maps->tgid, m, wanted(u, maps->tgid, m), &pending, &enomem);
		if (t && unwinder__mapping_bias(t, m, &bias) != 0)
			t = NULL;
		um = &pb->m[pb->nr++];
		um->start = m->start;
		um->end = m->end;
		um->bias = bias;
		um->table = t ? t->id : pending ? STKREC_UW_PENDING : STKREC_UW_NO_TABLE;
		u->st.pending += pending;
		if (pending && proc_pend(p, m, maps->nr_mappings))
			enomem = 1, um->table = STKREC_UW_NO_TABLE;
		if (t) {
			t->refs++;
			t->last_use = u->clock;
			p->tables[p->nr++] = t->id;
		}
	}
	if (pb->nr > u->pbuf_dirty)
		u->pbuf_dirty = pb->nr;
	want_forget(u, maps->tgid);
	qsort(pb->m, pb->nr, sizeof(pb->m[0]), cmp_mapping);
	p->um = malloc((pb->nr ? pb->nr : 1) * sizeof(*p->um));
	if (!p->um) {
		proc_release(u, p);
		return -ENOMEM;
	}
	memcpy(p->um, pb->m, pb->nr * sizeof(*p->um));
	p->nr_um = pb->nr;
	p->time_ns = maps->time_ns;
	v = idmap__find(u->procs, maps->tgid);
	if (v)
		old = (struct proc *)(uintptr_t)*v;
	else
		u->st.processes++;
	/*
	 * A failure is counted (and the next snapshot writes again).  A
	 * process that has exited takes no more samples: no BPF entry (16
	 * KiB copied into the kernel, and deleted again at its exit, for
	 * most of the short processes a machine starts); its copied stacks
	 * are unwound from @p in user space all the same.
	 */
	if (gone) {
		p->entry = old && old->entry;
		p->written = 0;
	} else {
		p->written = same_entry(old, p) || proc_write(u, p, BPF_ANY) == 0;
		p->entry = p->written || (old && old->entry);
	}
	if (idmap__set(u->procs, maps->tgid, (uint64_t)(uintptr_t)p)) {
		proc_release(u, p);
		return -ENOMEM;
	}
	proc_release(u, old);
	return enomem ? -ENOMEM : 0;
}

int unwinder__add_process(struct unwinder *u, const struct stk_proc_maps *maps)
{
	return add_process(u, maps, 0);
}

int unwinder__add_exited(struct unwinder *u, const struct stk_proc_maps *maps)
{
	return add_process(u, maps, 1);
}

void unwinder__set_worker(struct unwinder *u, struct worker *w)
{
	u->worker = w;
}

void unwinder__tables_ready(struct unwinder *u, struct table *t)
{
	size_t it = 0, i, j;
	uint64_t key, val;

	while (idmap__next(u->procs, &it, &key, &val)) {
		struct proc *p = (struct proc *)(uintptr_t)val;
		int changed = 0;

		for (i = 0; i < p->nr_pend;) {
			struct stk_mapping *m = &p->pend[i].m;
			uint64_t bias = 0;

			if (!unwinder__table_is(t, m)) {
				i++;
				continue;
			}
			for (j = 0; j < p->nr_um; j++) {
				if (p->um[j].start != m->start || p->um[j].table != STKREC_UW_PENDING)
					continue;
				if (!t->failed && unwinder__mapping_bias(t, m, &bias) == 0) {
					p->um[j].table = t->id;
					p->um[j].bias = bias;
					t->refs++;
					t->last_use = u->clock;
					p->tables[p->nr++] = t->id;
				} else {
					p->um[j].table = STKREC_UW_NO_TABLE;
				}
				changed = 1;
			}
			free((char *)m->path);
			p->pend[i] = p->pend[--p->nr_pend];
		}
		/* BPF_EXIST: only into an entry a write made (none for a
		 * process added after its exit). */
		if (changed && p->entry)
			p->written = proc_write(u, p, BPF_EXIST) == 0;
	}
}

/* Hurry the pending table of @tgid's mapping holding @addr.  1 if there
 * was one. */
static int want_now(struct unwinder *u, uint32_t tgid, uint64_t addr)
{
	uint64_t *v = idmap__find(u->procs, tgid);
	struct proc *p;
	struct table *t;
	int pending, enomem = 0;
	size_t i;

	if (!v)
		return 0;
	p = (struct proc *)(uintptr_t)*v;
	for (i = 0; i < p->nr_pend; i++)
		if (addr >= p->pend[i].m.start && addr < p->pend[i].m.end)
			break;
	if (i == p->nr_pend) {
		/* Built already (BPF asked again meanwhile): nothing to do.
		 * In no mapping we know: the process mapped more. */
		for (i = 0; i < p->nr_um; i++)
			if (addr >= p->um[i].start && addr < p->um[i].end)
				return 1;
		return 0;
	}
	u->clock++;
	t = unwinder__table_get(u, tgid, &p->pend[i].m, 1, &pending, &enomem);
	/* Ready now (no worker, or its rows were saved): given out here. */
	if (!pending) {
		struct table key = { 0 }, *k = t;

		if (!k) {
			/* Failed: every process waiting for the file stops. */
			const struct stk_mapping *m = &p->pend[i].m;

			memcpy(key.build_id, m->build_id, sizeof(key.build_id));
			key.build_id_size = m->build_id_size;
			key.dev = m->dev;
			key.inode = m->inode;
			key.failed = -ENOENT;
			k = &key;
		}
		unwinder__tables_ready(u, k);
	}
	return 1;
}

int unwinder__want(struct unwinder *u, uint32_t tgid, uint64_t addr)
{
	size_t i;

	if (!u || !tgid)
		return 0;
	if (want_now(u, tgid, addr))
		return 1;
	for (i = 0; i < u->nr_want; i++)
		if (u->want[i].tgid == tgid && u->want[i].addr == addr)
			return 0;
	if (u->nr_want == sizeof(u->want) / sizeof(u->want[0])) {
		/* Full: the oldest goes (BPF asks again). */
		memmove(&u->want[0], &u->want[1], (u->nr_want - 1) * sizeof(u->want[0]));
		u->nr_want--;
	}
	u->want[u->nr_want].tgid = tgid;
	u->want[u->nr_want].addr = addr;
	u->nr_want++;
	return 0;
}

void unwinder__remove_process(struct unwinder *u, uint32_t tgid)
{
	struct proc *p;
	uint64_t *v;

	if (!u)
		return;
	v = idmap__find(u->procs, tgid);
	if (!v)
		return;
	p = (struct proc *)(uintptr_t)*v;
	/* Never written (it had exited): nothing to delete. */
	if (p->entry)
		bpf_map_delete_elem(u->maps.procs_fd, &tgid);
	proc_release(u, p);
	idmap__remove(u->procs, tgid);
	u->st.processes--;
}

int unwinder__set_budget(struct unwinder *u, struct membudget *mb)
{
	int err = membudget__add_shrinker(mb, unwinder__shrink, u);

	if (!err)
		u->mb = mb;
	return err;
}

void unwinder__set_cache_dir(struct unwinder *u, const char *dir)
{
	u->cache_dir = dir;
}

uint64_t unwinder__building(const struct unwinder *u)
{
	return u->building;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->st;
}

void unwinder__set_debug_dir(struct unwinder *u, const char *dir)
{
	u->debug_dir = dir;
}

void unwinder__free(struct unwinder *u)
{
	size_t i = 0;
	uint64_t key, val;

	if (!u)
		return;
	unwinder__chunker_stop(u);
	if (u->mb)
		membudget__remove_shrinker(u->mb, unwinder__shrink, u);
	if (u->procs) {
		while (idmap__next(u->procs, &i, &key, &val))
			proc_release(u, (struct proc *)(uintptr_t)val);
		idmap__free(u->procs);
	}
	for (i = 0; i < u->nr_tables; i++) {
		free(u->tables[i]->saved);
		free(u->tables[i]);
	}
	free(u->tables);
	free(u->free_ext);
	if (u->rows)
		munmap(u->rows, u->rows_bytes);
	free(u->chunk_made);
	free(u);
}
