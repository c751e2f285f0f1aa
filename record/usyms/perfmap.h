/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perfmap.h - the JIT symbols of traced processes, from the perf map files
 * they write (/tmp/perf-PID.map: `START SIZE name` per line, hex; Node.js
 * --perf-basic-prof, Python 3.12+ -X perf, JVM agents), read while they
 * run and queued for ESYM kind 3 chunks: the lines covering recorded
 * addresses (covering), or all of them (full).
 *
 * The file is in /tmp, where anyone can put one: it is reached through
 * /proc/PID/root (a container's own /tmp), named by the process's pid in
 * its own PID namespace, opened without following symbolic links or
 * opening anything but a regular file owned by the process's user or
 * root, and read up to PERFMAP_MAX_BYTES.
 */
#ifndef STKREC_PERFMAP_H
#define STKREC_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

#define PERFMAP_MAX_BYTES (64u << 20)

struct perfmaps;

struct perfmaps_stats {
	uint64_t files_read;		/* perf map files read (again when they grew) */
	uint64_t file_errors;		/* refused or unreadable (not: absent) */
	uint64_t symbols_written;	/* lines queued for ESYM kind 3 */
};

/* @full: every line, not only covering ones.  NULL with errno = ENOMEM. */
struct perfmaps *perfmaps__new(int full);
void perfmaps__free(struct perfmaps *pm);	/* accepts NULL */

/*
 * perfmaps__see() - recorded address @addr of process @tgid is in memory
 * without a file (JIT code): queue the line of its perf map covering it
 * (all lines with @full), reading the file (@proc_root/@tgid/root/tmp/
 * perf-NSPID.map) the first time or when it has changed since.
 * Returns 0 (also when there is no map or no line), or -ENOMEM.
 */
int perfmaps__see(struct perfmaps *pm, const char *proc_root, uint32_t tgid, uint64_t addr);

/* Writes one ESYM kind 3 chunk per process with queued lines; @chunks is
 * incremented per chunk.  Returns 0 or the writer's -errno. */
int perfmaps__write(struct perfmaps *pm, struct stk_writer *w, uint64_t *chunks);

/* Forget process @tgid (it exited: its pid may come back). */
void perfmaps__forget(struct perfmaps *pm, uint32_t tgid);

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st);

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
