// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmapwatch_int.h - what mmapwatch.c (the perf records: reading and
 * applying them) and mmapwatch_procs.c (each process's mappings as the
 * records left them) share: the watcher's structs and the helpers the
 * records call to change a process.  Internal to record/procs/.
 */
#ifndef STK_MMAPWATCH_INT_H
#define STK_MMAPWATCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mmapwatch.h"

struct wmap {
	uint64_t start, end, pgoff, dev, ino;
	uint32_t prot;
	int bid_known;		/* build_id/bid_size are final */
	uint32_t bid_size;
	uint8_t bid[STK_MAX_BUILD_ID];
	char *path;		/* interned: wpath__get() to copy, wpath__put() to drop */
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
	int noted;		/* in mmapwatch.changed */
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
	struct idmap *paths;	/* hash -> interned path (mmapwatch_paths.c) */
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
	size_t applying;	/* the index in recs being applied */
	/* Processes that exec'ed, mapped code, forked or exited since
	 * mmapwatch__take_changed(). */
	uint32_t *changed;
	size_t nr_changed, cap_changed;
	struct mmapwatch_stats st;
};

/* Note @p (of @tgid) in w->changed. */
void wproc__note(struct mmapwatch *w, struct wproc *p, uint32_t tgid);

/* mmapwatch_paths.c: a mapping's path, shared.  NULL on ENOMEM. */
char *wpath__intern(struct mmapwatch *w, const char *s);
/* Another reference to interned @path (a copy of its mapping). */
char *wpath__get(char *path);
/* Drop a reference to interned @path (NULL: nothing). */
void wpath__put(char *path);
/* Drop the table's paths no mapping holds (@all: every path). */
void wpath__prune(struct mmapwatch *w, int all);

/* mmapwatch_procs.c: one process's state, for the records to change. */
struct wproc *wproc__find(const struct mmapwatch *w, uint32_t tgid);
/* A new, empty entry for @tgid, replacing any older one.  NULL on ENOMEM. */
struct wproc *wproc__new(struct mmapwatch *w, uint32_t tgid);
void wproc__free(struct wproc *p);
void wproc__maps_clear(struct wproc *p);
int wproc__maps_reserve(struct wproc *p, size_t more);
/* Room for @n mappings in all, no more (a fork's copy, which an exec
 * keeps as it is): 0 or -ENOMEM. */
int wproc__maps_reserve_exact(struct wproc *p, size_t n);
/*
 * wproc__seed() - @p's mappings (of @tgid, which the watcher has not seen
 * exec) from /proc/@tgid/maps now; complete from here on, the records
 * that follow keeping it current.  0, or the read's -errno (-ENOENT: gone)
 * or -ENOMEM, and @p is left incomplete.
 */
int wproc__seed(struct mmapwatch *w, struct wproc *p, uint32_t tgid, uint64_t time);
/* Keep @p's image, which an exec at @time replaces, as an old one. */
void wproc__keep_old_image(struct wproc *p, uint64_t time);
/* Remove [@start, @end): the number of mappings changed, or -ENOMEM. */
int wproc__maps_punch(struct wproc *p, uint64_t start, uint64_t end);
/* Add mapping @n (its path is taken over): 0 or -ENOMEM. */
int wproc__maps_add(struct wproc *p, struct wmap *n);
/* Append @key to the growing array *@keys of *@n (room for *@cap): the
 * keys a purge removes once its walk of a table is done.  0 or -ENOMEM. */
int wkeys__push(uint64_t **keys, size_t *n, size_t *cap, uint64_t key);

#endif
