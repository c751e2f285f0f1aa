/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perfmap.h - the JIT symbols of traced processes, from the perf map files
 * they write (/tmp/perf-PID.map: `START SIZE name` per line, hex; Node.js
 * --perf-basic-prof, Python 3.12+ -X perf, JVM agents), read while they
 * run and written as ESYM kind 3 chunks: the lines covering recorded
 * addresses (covering), or all of them (full).
 *
 * The file is in /tmp, where anyone can put one: it is reached through
 * /proc/PID/root (a container's own /tmp), named by the process's pid in
 * its own PID namespace, opened without following symbolic links or
 * opening anything but a regular file owned by the process's effective
 * user or by root (perf's rule: perf-map-agent's jmaps chowns a non-root
 * JVM's map to root), and opened with the process's own credentials
 * (procreds.h), so that only what it could read itself is read: a
 * root-only file is refused to a non-root process.
 *
 * A JIT only appends to its map, so a file is read incrementally: its
 * identity (device, inode) and the offset read so far (to the end of its
 * last whole line) are kept, and a lookup that misses asks for a read of
 * only the lines appended since.  A file replaced (another inode) or
 * shorter than that offset is read again from the start.
 *
 * Reads run on the reader thread (worker.h), never on the recorder's main
 * loop: a write only answers lookups from the lines already read, and
 * those a read has not answered yet wait for the first write after it
 * (at the end: as long as the recorder waits for its reader).  A read is
 * a job that bounds itself (PERFMAP_READ_FILE_MAX bytes, PERFMAP_JOB_CPU_NS
 * of CPU time; the rest at the next one), charged to the process's user
 * on the worker (each user but root a share of it), one per user at a
 * time, the process that waited longest next.  The job opens the file,
 * reads and parses it into buffers of its own; the main thread then keeps
 * the lines it has room for under the budget (util/membudget.h is the
 * main thread's alone), so nothing the worker holds is shared.
 *
 * The lines read are kept, sorted, under the memory budget and at most a
 * cap per file (an eighth of the budget); lines beyond it are counted,
 * not kept -- though one that covers an address the read was asked for
 * is still written, and the lines of the last 64 KiB read stay at hand
 * for the next flush's lookups (a JIT writes a line just before its code
 * runs).  (--embed-symbols=full keeps nothing: every new line is
 * written.)
 */
#ifndef STKREC_PERFMAP_H
#define STKREC_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct membudget;
struct worker;

/* Bytes of a perf map one read takes at most (about 10 ms of reading and
 * parsing here), and the CPU time it may take (a slow disk's or a busy
 * machine's); the rest is read by the next. */
#define PERFMAP_READ_FILE_MAX (16u << 20)
#define PERFMAP_JOB_CPU_NS (50 * 1000000ull)
/* --embed-symbols=full: lines read and not yet written, in all, past
 * which no more reads start before the next flush writes them. */
#define PERFMAP_FULL_HELD (32u << 20)
/* The lines kept per file: this share of the budget, at least 1 MiB. */
#define PERFMAP_CAP_SHARE 8
#define PERFMAP_CAP_MIN (1u << 20)

struct perfmaps;

struct perfmaps_stats {
	uint64_t files_read;		/* reads of perf map files (each new part read) */
	uint64_t file_errors;		/* unreadable (not: absent, refused) */
	uint64_t files_refused;		/* reads refused: the process could not
					 * have opened the file, or it is not
					 * its user's */
	uint64_t symbols_written;	/* lines written to ESYM kind 3 */
	uint64_t bytes_read;		/* bytes of perf map files read */
	uint64_t bytes_read_off_loop;	/* ... by a thread other than the main one */
	uint64_t restarts;		/* files read again from the start */
	uint64_t lines_skipped;		/* lines not kept: over the cap or the budget */
	uint64_t misses_skipped;	/* addresses in anonymous mappings no line
					 * named, in a file with lines not kept
					 * (maybe named by one of them) */
};

/*
 * perfmaps__new() - @full: every line, not only covering ones; files under
 * @proc_root ("/proc"; the string must outlive the set), lines kept under
 * budget @mb (which must outlive the set).  NULL with errno = ENOMEM.
 */
struct perfmaps *perfmaps__new(int full, const char *proc_root, struct membudget *mb);
void perfmaps__free(struct perfmaps *pm);	/* accepts NULL */

/*
 * perfmaps__set_worker() - read files on @wk (worker.h), which must be
 * freed before @pm, rather than during perfmaps__write().  Without one
 * (unit tests) a write reads what its lookups need first, as a read on
 * the worker that is done at once.
 */
void perfmaps__set_worker(struct perfmaps *pm, struct worker *wk);

/*
 * perfmaps__see() - recorded address @addr of process @tgid is in memory
 * without a file (JIT code; @anon: in an anonymous mapping, else in none
 * the recorder knows): look for the line of its perf map covering it at
 * the next perfmaps__write().  Returns 0 or -ENOMEM.
 */
int perfmaps__see(struct perfmaps *pm, uint32_t tgid, uint64_t addr, int anon);

/*
 * perfmaps__write() - for each process with addresses seen: write one
 * ESYM kind 3 chunk (more past 50000 lines) of the lines read that cover
 * them (full: of every line read) and were not written before, and ask
 * for a read of what its perf map gained if a lookup misses (full:
 * always), answered at a later write; @chunks is incremented per chunk.
 * Returns 0, -ENOMEM (also: a read's) or the writer's -errno.
 */
int perfmaps__write(struct perfmaps *pm, struct stk_writer *w, uint64_t *chunks);

/* A read is on the worker (or waits for its turn there) that lookups
 * wait for: a write after it is done names more. */
int perfmaps__reading(const struct perfmaps *pm);

/* Forget process @tgid (it exited: its pid may come back), once the
 * addresses it had seen are written. */
/*
 * perfmaps__new_file() - the file was closed and another begins: the
 * lines kept are written again as new lookups need them.  Lines written
 * but not kept (over the cap; --embed-symbols=full: all) are not read
 * again: the addresses they named go unnamed in the later files, unless
 * the JIT writes them again.  Accepts NULL.
 */
void perfmaps__new_file(struct perfmaps *pm);

void perfmaps__forget(struct perfmaps *pm, uint32_t tgid);

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st);

/*
 * perfmap__parse_line() - one line of perf map text (@len bytes, without
 * its newline; a trailing '\r' is allowed): *@start, *@size (> 0) and the
 * name, *@name and *@name_len (cut at STK_MAX_STRING, not
 * NUL-terminated).  Returns 0, or -EINVAL for a malformed line.
 */
int perfmap__parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
			const char **name, size_t *name_len);

/*
 * perfmap__parse() - parse perf map text (@len bytes, need not end in a
 * newline) into *@syms (sorted by address; names point into @text, which
 * is modified).  Malformed lines are skipped.  Returns the number of
 * symbols (*@syms malloc'ed), or -ENOMEM.
 */
long perfmap__parse(char *text, size_t len, struct stk_esym_sym **syms);

/*
 * perfmap__nspid() - process @tgid's pid in its own PID namespace (the last
 * NSpid of @proc_root/@tgid/status), or @tgid when there is none (Linux
 * before 4.1) or on error.
 */
uint32_t perfmap__nspid(const char *proc_root, uint32_t tgid);

#endif
