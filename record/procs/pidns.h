/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pidns.h - the processes of a recording that live in another PID
 * namespace than the recorder's (containers, unshare --pid): the pid each
 * has there, learnt from the BPF programs' new-process events, queued for
 * the next pidn chunk (SPEC.md, pidn).
 *
 * Use: pidns__new() -> pidns__see() / pidns__exited() as events arrive ->
 * pidns__write() once per flush -> pidns__free().
 */
#ifndef STKREC_PIDNS_H
#define STKREC_PIDNS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct pidns;

/* An empty table.  NULL with errno = ENOMEM. */
struct pidns *pidns__new(void);

/* Frees @p.  Accepts NULL. */
void pidns__free(struct pidns *p);

/*
 * pidns__see() - process @tgid (the recorder's pid) is @ns_tgid in its own
 * PID namespace, whose inode number is @pid_ns, as learnt at @time_ns
 * (CLOCK_MONOTONIC).  Nothing to do when @ns_tgid is 0 or @tgid (the
 * recorder's namespace), or when this is what was queued or written for
 * @tgid already (an exec announces a process again).  Returns 0 or
 * -ENOMEM.
 */
int pidns__see(struct pidns *p, uint32_t tgid, uint32_t ns_tgid, uint64_t pid_ns,
	       uint64_t time_ns);

/* @tgid exited: its pid may be reused, by a process that needs its own
 * record. */
void pidns__exited(struct pidns *p, uint32_t tgid);

/*
 * pidns__write() - write the records queued since the last call as one
 * pidn chunk (none when there are none) and forget the queue (also on
 * error).  @chunks is incremented for the chunk written.  Returns 0 or
 * stk_writer__add_pid_ns()'s -errno.
 */
int pidns__write(struct pidns *p, struct stk_writer *w, uint64_t *chunks);

/*
 * pidns__new_file() - the file was closed after a flush and another
 * begins: every process known to live in another namespace is queued
 * again, as learnt at @time_ns (the new file's start), for its first
 * pidn chunk.  Returns 0 or -ENOMEM (nothing changed).
 */
int pidns__new_file(struct pidns *p, uint64_t time_ns);

/* Processes recorded with another pid, in all. */
uint64_t pidns__recorded(const struct pidns *p);

#endif
