/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * esym.h - embedded symbols (--embed-symbols): for every user address a
 * recording's new stacks hold, the function symbol of its binary that
 * covers it (or the binary's whole table), keyed by build-id, and the
 * line of its process's perf map when it is JIT code; written as ESYM
 * kinds 2 and 3 at each flush, before the MAPS and rows that need them
 * (symbols whose table or perf map the worker still reads: at a later
 * flush).
 *
 * A binary's table is read once a flush needs it, through
 * procmaps__open_mapped() (map_files: deleted files and other mount
 * namespaces work) and only from a file whose build-id is the recorded
 * one (elfsyms__read_build_id()); its covering symbols are written, and
 * it stays, sorted, as a cache under the memory budget (membudget.h): the
 * least recently used tables go when a take needs their room, and a
 * table is read again when an address that no written symbol names
 * comes.  One larger than the room the budget has is read, used and
 * released at once (its symbols still written).  What stays for good per
 * binary is its build-id and 16 bytes per symbol written.
 *
 * With --embed-symbols=full a table is read, written whole and released.
 */
#ifndef STKREC_ESYM_H
#define STKREC_ESYM_H

#include <stddef.h>
#include <stdint.h>

#include "procs.h"
#include "stk.h"

struct membudget;
struct worker;

/* The default is 0, so a zeroed recorder_opts embeds covering symbols. */
enum esym_mode {
	ESYM_COVERING = 0,
	ESYM_FULL,
	ESYM_NONE,
};

/* "none", "covering", "full" */
const char *esym_mode__name(enum esym_mode mode);

struct esym;

struct esym_stats {
	uint64_t binaries;		/* binaries whose symbols were read */
	uint64_t binary_errors;		/* ... that could not be (gone, another build-id, not ELF) */
	uint64_t binaries_refused;	/* of those, the process could not open its
					 * file itself (procreds.h) */
	uint64_t symbols_written;	/* ESYM kind 2 symbols */
	uint64_t addrs_unnamed;		/* addresses in a binary that no symbol covers */
	uint64_t tables_evicted;	/* cached tables dropped for the budget */
	uint64_t tables_reread;		/* tables read again after that */
	uint64_t reread_errors;		/* ... that could not be (the file gone) */
	uint64_t tables_uncached;	/* tables over the room left: used once, released */
	uint64_t symbols_skipped;	/* covering symbols not written: no room to
					 * remember them (or the binary) */
	uint64_t perf_map_files;	/* perf map reads */
	uint64_t perf_map_errors;	/* ... unreadable */
	uint64_t perf_map_refused;	/* ... refused: not the process's to read */
	uint64_t perf_map_symbols;	/* ESYM kind 3 lines */
	uint64_t perf_map_bytes;	/* bytes of perf map files read */
	uint64_t perf_map_bytes_off_loop; /* ... by the reader thread (all, with one) */
	uint64_t perf_map_restarts;	/* files read again from the start */
	uint64_t perf_map_lines_skipped; /* lines not kept: over the cap or budget */
	uint64_t perf_map_misses_skipped; /* JIT addresses unnamed where lines were not kept */
};

/*
 * esym__new() - an empty set whose tables and perf maps are held under
 * budget @mb (NULL: unlimited), which must outlive it; it registers a
 * shrinker there (its cached tables), removed by esym__free().
 * NULL with errno = ENOMEM (also: @mb has no room for another shrinker).
 */
struct esym *esym__new(enum esym_mode mode, struct membudget *mb);
void esym__free(struct esym *e);	/* accepts NULL */

/*
 * esym__queue() - a new user stack of process @tgid (@nr frames, leaf
 * first): its addresses are looked up at the next esym__flush(), when the
 * process's snapshot is current.  Frames but the leaf are return
 * addresses, looked up at address - 1.  A stack is seen once per capture
 * (stackstore.h), so a second process with the very same stack in another
 * binary at the same addresses adds nothing: both non-PIE and identical
 * addresses, all frames.  Returns 0 or -ENOMEM.
 */
int esym__queue(struct esym *e, uint32_t tgid, const uint64_t *ips, uint32_t nr);

/*
 * esym__flush() - look up the queued addresses in @p's snapshots, read
 * the tables they need (one binary at a time), and write the ESYM chunks
 * for the symbols not in the file yet; @chunks is incremented per chunk.
 * Symbols the budget leaves no room for are counted (esym_stats), not an
 * error.  Returns 0, -ENOMEM, or the writer's -errno.
 */
int esym__flush(struct esym *e, struct procs *p, struct stk_writer *w, uint64_t *chunks);

/*
 * esym__new_file() - the file was closed after a flush and another, @w,
 * begins: no symbol is in it, those of the stacks written to it from now
 * on are written again (a table still being read writes into @w).  JIT
 * lines: see perfmaps__new_file().
 */
void esym__new_file(struct esym *e, struct stk_writer *w);

/*
 * esym__set_worker() - read tables and perf maps on @wk (worker.h; it
 * must be freed before @e) rather than during esym__flush(): a flush
 * hands a table it lacks to the worker and writes the symbols its
 * addresses need at the first flush after the table is in, so that no
 * binary holds up a flush (node's table is 0.3 s of reading); so for the
 * lines of perf maps (perfmap.h).  A binary is opened at the flush, on
 * the main thread (procmaps__open_mapped()), and read on the worker; a
 * perf map is opened and read on the worker.
 */
void esym__set_worker(struct esym *e, struct worker *wk);

/* Tables or perf maps are being read on the worker: a flush after they
 * are in names more. */
int esym__reading(const struct esym *e);

/*
 * What the worker read must be written soon: tables read and pinned until
 * a flush uses them hold half the budget (no other is read until then),
 * or perf map lines were read since the last call (JIT code, named at the
 * next flush).  Otherwise what it read waits for any later flush.
 */
int esym__flush_wanted(struct esym *e);

/*
 * esym__new_binary() - 1 if an executable file mapping of @maps (NULL:
 * none) with a build-id is of a binary no earlier call was given (each
 * remembered by a hash of its build-id, 16 bytes): its table is read
 * through its processes only (/proc/PID), so a flush should take their
 * stacks while one still runs.  0 with ESYM_NONE, or out of memory.
 */
int esym__new_binary(struct esym *e, const struct stk_proc_maps *maps);

/* Process @tgid exited (its pid may come back). */
void esym__exited(struct esym *e, uint32_t tgid);

void esym__stats(const struct esym *e, struct esym_stats *st);

#endif
