/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwinder.h - user-space side of the BPF unwinder (bpf/unwind.bpf.h):
 * builds an unwind table (unwind_table.h) once per ELF file a traced
 * process maps executable, shares it between processes by build-id, and
 * keeps the BPF maps current: the rows (one array, tables are ranges of
 * it), the page index, and each process's mappings -> (table, bias).
 *
 * Tables are built by the worker thread (record/work/worker.h) when one
 * is set: a mapping whose table is being built is pending
 * (STKREC_UW_PENDING: frame pointers meanwhile) until its build is
 * collected, then every process waiting for that file gets it at once.
 *
 * Memory is bounded by the rows map's size: a table that does not fit is
 * first made room for by evicting tables no live process maps (least
 * recently used first), else refused; every refusal is counted.  Rows of
 * tables evicted or refused are kept in user memory (at most as many as
 * the map holds) so that no file is built twice.  A
 * mapping without a table is unwound by frame pointer (auto mode).
 */
#ifndef STKREC_UNWINDER_H
#define STKREC_UNWINDER_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct unwinder;
struct bpf_object;

/* Default budget of unwind rows (--unwind-memory): 1/128 of the
 * machine's memory, from 16 MiB (2M rows: a python3 process ~20 times
 * over) to 64 MiB (8M rows: clang's libLLVM and libclang-cpp are 2M). */
#define UNWINDER_MIN_MEMORY (16ull << 20)
#define UNWINDER_MAX_MEMORY (64ull << 20)
uint64_t unwinder__default_memory(void);

/* The BPF side's unwind_mode (bpf/unwind.bpf.h) for RECORDER_UNWIND_*. */
int unwinder__bpf_mode(int recorder_unwind);

/*
 * unwinder__configure_obj() - before load, size the unwinder's maps in
 * @obj: @bpf_mode 0 (off) makes them one entry each; else the rows map
 * holds @memory bytes of rows (0: unwinder__default_memory()).
 * Returns 0 or libbpf's -errno.
 */
int unwinder__configure_obj(struct bpf_object *obj, int bpf_mode, uint64_t memory);

/* The BPF maps of bpf/unwind.bpf.h, created (loaded) by a mode. */
struct unwinder_maps {
	int rows_fd;		/* "unwind_rows": an array of maps whose slots
				 * take chunks of STKREC_UW_CHUNK_ROWS rows */
	uint32_t rows_cap;	/* the row budget: its slots times
				 * STKREC_UW_CHUNK_ROWS */
	int pages_fd;
	int procs_fd;
	int defer_fd;		/* the "defer_ring" ring buffer */
};

struct unwinder_stats {
	uint64_t tables;		/* tables loaded now */
	uint64_t tables_built;		/* tables built, in total */
	uint64_t rows;			/* rows loaded now */
	uint64_t bytes;			/* bytes of rows and pages loaded now */
	uint64_t build_ns;		/* time spent building tables */
	uint64_t processes;		/* processes with mappings loaded now */
	uint64_t no_cfi;		/* files without CFI (.eh_frame, .debug_frame) */
	uint64_t scanned;		/* tables built without .eh_frame_hdr (static) */
	uint64_t debug_frame;		/* tables with rows from .debug_frame */
	uint64_t debuginfo;		/* of which from separate debuginfo's */
	uint64_t open_failed;		/* files that could not be opened (or not the
					 * file mapped: build-id differs) */
	uint64_t open_refused;		/* of open_failed: opens the process could not
					 * have made itself (procreds.h) */
	uint64_t unsupported;		/* files refused: not x86-64, > 4 GiB, bad CFI */
	uint64_t over_time;		/* builds given up past their CPU budget */
	uint64_t queued;		/* builds handed to the worker, in all */
	uint64_t cached;		/* tables read from the table cache */
	uint64_t cache_stored;		/* tables written to it */
	uint64_t saved_dropped;		/* saved rows dropped or not kept for
					 * --user-memory */
	uint64_t refused_budget;	/* tables refused: no room in the rows map */
	uint64_t evicted;		/* tables evicted to make room */
	uint64_t reloaded;		/* tables loaded again from their saved rows
					 * (evicted or refused before), not rebuilt */
	uint64_t pending;		/* mappings marked pending (lazy), in all */
	uint64_t mappings_dropped;	/* mappings beyond STKREC_UW_MAX_MAPPINGS */
	uint64_t map_errors;		/* BPF map updates that failed */
};

/* A manager over @maps (not owned; they must outlive it).  NULL with
 * errno = ENOMEM, or mmap()'s errno for the rows map. */
struct unwinder *unwinder__new(const struct unwinder_maps *maps);

/* Where separate debuginfo is looked up by build-id, for the .debug_frame
 * of files without one: @dir/.build-id/xx/yyyy.debug. */
#define UNWINDER_DEBUG_DIR "/usr/lib/debug"

/* unwinder__set_debug_dir() - look there instead (@dir: borrowed, must
 * outlive @u; NULL or "": nowhere).  For tests. */
void unwinder__set_debug_dir(struct unwinder *u, const char *dir);

/*
 * unwinder__add_process() - (re)load the mappings of @maps->tgid: build
 * (or queue) or share a table for every executable file mapping, then
 * write the process's sorted mapping list.  Files are opened through
 * /proc/PID/map_files/ (deleted files, other mount namespaces), then
 * /proc/PID/root/PATH, then PATH, and used only when their build-id is
 * the mapping's.  Returns 0, or -ENOMEM; other failures are counted, not
 * returned (the mapping falls back to frame pointers).
 */
int unwinder__add_process(struct unwinder *u, const struct stk_proc_maps *maps);
/* unwinder__add_exited() - the same for a process that has exited: no
 * BPF entry is written (no sample will read it), the copied stacks it
 * left are unwound with these mappings. */
int unwinder__add_exited(struct unwinder *u, const struct stk_proc_maps *maps);

/*
 * unwinder__set_worker() - build tables on @w's thread from now on (NULL:
 * in the call).  @w must outlive @u's builds: worker__free() before
 * unwinder__free().
 */
struct worker;
void unwinder__set_worker(struct unwinder *u, struct worker *w);

/*
 * unwinder__want() - BPF met @tgid's mapping holding @addr pending: its
 * table goes before the other builds (returns 1); or, when the unwinder
 * knows no such pending mapping (the process mapped it since), the next
 * unwinder__add_process() of @tgid builds it first (returns 0: reload the
 * process's mappings).  Accepts NULL.
 */
int unwinder__want(struct unwinder *u, uint32_t tgid, uint64_t addr);

/* unwinder__set_cache_dir() - keep tables between recordings in @dir
 * (record/unwind/tcache.h; borrowed, must outlive @u; NULL: not at all). */
void unwinder__set_cache_dir(struct unwinder *u, const char *dir);

/*
 * unwinder__set_budget() - keep the rows of evicted or refused tables
 * under @mb (--user-memory), dropped least recently used first when
 * another holder needs room (unwinder__shrink(), registered here).
 * Before any table is built; unwinder__free() unregisters it.
 */
struct membudget;
int unwinder__set_budget(struct unwinder *u, struct membudget *mb);
uint64_t unwinder__shrink(void *ctx, uint64_t want);

/* Builds queued and not collected yet. */
uint64_t unwinder__building(const struct unwinder *u);

/* @tgid exited: drop its mappings (its tables stay, unreferenced, until
 * their room is needed). */
void unwinder__remove_process(struct unwinder *u, uint32_t tgid);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st);

/* Accepts NULL. */
void unwinder__free(struct unwinder *u);

#endif
