// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwinder_int.h - what unwinder.c (the processes and their mappings in
 * the BPF maps) and unwinder_tables.c (one table of rows per ELF file,
 * built, loaded, evicted and kept) share: the unwinder's structs and the
 * two calls the processes make on the tables.  Internal to record/unwind/.
 */
#ifndef STK_UNWINDER_INT_H
#define STK_UNWINDER_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "stkrec.h"
#include "unwind_copy.h"
#include "unwinder.h"

#define MAX_LOADS 16

struct load {
	uint64_t offset, vaddr, filesz;
};

struct table {
	uint32_t id;			/* > 0, a new one each build; its pages
					 * are keyed by it */
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;
	uint64_t dev, inode;		/* key of a file without build-id */
	int failed;			/* -errno: no table for this file */
	uint32_t first, nr;		/* rows in the rows map */
	uint32_t first_page, nr_pages;
	struct table_job *job;		/* being built by the worker, or NULL
					 * (failed is -EINPROGRESS meanwhile) */
	uint32_t refs;			/* processes mapping it */
	uint64_t last_use;
	struct stkrec_unwind_row *saved; /* its rows while not loaded, or NULL */
	uint32_t nr_saved;
	struct load loads[MAX_LOADS];
	size_t nr_loads;
};

struct extent {
	uint32_t start, len;
};

/* A mapping whose table is pending: what building it needs. */
struct pend {
	struct stk_mapping m;		/* m.path owned */
};

struct proc {
	uint32_t tgid;
	uint32_t *tables;		/* ids it references (one ref each) */
	size_t nr;
	struct stkrec_unwind_mapping *um; /* as in its BPF entry, sorted */
	uint32_t nr_um;
	int written;			/* @um is in its BPF entry (the last write took) */
	int entry;			/* a write took once: BPF may hold an entry */
	uint64_t time_ns;		/* the snapshot @um came from (stk_proc_maps.time_ns) */
	struct pend *pend;		/* its pending mappings */
	size_t nr_pend;
};

struct unwinder {
	struct unwinder_maps maps;
	/* The rows map's rows, reserved whole; each chunk is mapped over its
	 * place once created (unwinder_tables.c), the rest is PROT_NONE. */
	struct stkrec_unwind_row *rows;
	size_t rows_bytes;
	uint8_t *chunk_made;		/* per chunk, 1 once made */
	uint32_t nr_chunks;
	/* Chunks are made ahead of the rows in use by a thread of their own
	 * (unwinder_tables.c): putting a map in an array of maps waits for
	 * an RCU grace period (10-30 ms here), which the main loop must not. */
	struct {
		pthread_t thread;
		pthread_mutex_t lock;
		pthread_cond_t cond;
		uint32_t want, made;	/* chunks [0, made) exist */
		int err, stop, running;
	} chunker;
	struct table **tables;
	size_t nr_tables, cap_tables;
	uint32_t next_id;
	struct extent *free_ext;	/* free rows, sorted by start */
	size_t nr_free, cap_free;
	struct idmap *procs;		/* tgid -> struct proc * */
	uint64_t saved_rows;		/* rows of all tables' saved copies */
	uint64_t clock;
	struct unwinder_stats st;
	struct stkrec_unwind_proc pbuf;
	uint32_t pbuf_dirty;	/* pbuf.m[pbuf_dirty..] are zero */
	/* unwinder__want()'s requests, until that process is added. */
	struct { uint32_t tgid; uint64_t addr; } want[16];
	size_t nr_want;
	/* Our vDSO: the same image as every process's of this kernel. */
	const void *vdso;
	size_t vdso_size;
	uint8_t vdso_id[STK_MAX_BUILD_ID];
	int vdso_id_size;
	/* Separate debuginfo: DIR/.build-id/xx/yyyy.debug (not owned). */
	const char *debug_dir;
	/* Builds tables off the main loop, or NULL: built in the call. */
	struct worker *worker;
	/* --user-memory: the saved rows are taken from it (or NULL). */
	struct membudget *mb;
	/* Tables kept between recordings (tcache.h), or NULL. */
	const char *cache_dir;
	uint64_t building;		/* its builds not collected yet */
	struct unwind_copy_stats copy_st;
};

/* The table for mapping @m, or NULL: none (the failure is cached), or
 * with *@pending set, being built by the worker (@urgent: a stack waits
 * for it, so before the others). */
struct table *unwinder__table_get(struct unwinder *u, uint32_t tgid, const struct stk_mapping *m,
				  int urgent, int *pending, int *enomem);
/* The table of mapping @m's file, or NULL. */
struct table *unwinder__table_find(struct unwinder *u, const struct stk_mapping *m);
/* 1 if @m is a mapping of table @t's file. */
int unwinder__table_is(const struct table *t, const struct stk_mapping *m);
/* @t is built (or failed): every process waiting for it gets it (or
 * stops waiting) now.  unwinder.c's, for the worker's results. */
void unwinder__tables_ready(struct unwinder *u, struct table *t);
/* The chunk maker (unwinder_tables.c): the first chunks made at once,
 * then a thread that keeps chunks ahead; without it the unwinder makes
 * them itself.  Stopped before the unwinder is freed. */
int unwinder__chunker_start(struct unwinder *u);
void unwinder__chunker_stop(struct unwinder *u);
/* Load bias of mapping @m of table @t's file, or 0 with -1 returned. */
int unwinder__mapping_bias(const struct table *t, const struct stk_mapping *m, uint64_t *bias);

#endif
