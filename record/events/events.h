/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * events.h - the events of `stkrec trace`: parsed from BCC stackcount's
 * and perf's spellings (evspec.c), then resolved on this machine into
 * what the trace mode attaches (evresolve.c): tracepoint ids from
 * tracefs (mounted for the lookup when it is not, and unmounted after),
 * globs expanded, uprobe binaries found, kprobes checked for.
 *
 *   t:CATEGORY:NAME, CATEGORY:NAME   tracepoint (NAME may be a glob)
 *   u:PATH:FUNC, u:LIB:FUNC          uprobe (LIB: libLIB.so in the
 *                                    library directories, or a command)
 *   r:PATH:FUNC                      uretprobe
 *   p:FUNC, k:FUNC                   kprobe; r:FUNC kretprobe
 *   page-faults, context-switches,   software events (also faults,
 *   cpu-migrations, minor-faults,    cs, migrations), every PERIOD-th
 *   major-faults                     (-c)
 */
#ifndef STKREC_EVENTS_H
#define STKREC_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum ev_kind {
	EV_TRACEPOINT = 1,
	EV_UPROBE,
	EV_KPROBE,
	EV_SOFTWARE,
};

/* Longest event spelling accepted. */
#define EV_MAX_SPEC 512

/* One event as written: pointers into the caller's string copy. */
struct ev_spec {
	enum ev_kind kind;
	int retprobe;		/* r: */
	char buf[EV_MAX_SPEC];	/* the fields below point here */
	const char *category;	/* tracepoint */
	const char *name;	/* tracepoint name (glob), or the probed function */
	const char *path;	/* uprobe: PATH or LIB as written */
	uint32_t sw_config;	/* PERF_COUNT_SW_* */
	const char *sw_name;	/* the canonical software event name */
};

/*
 * ev_spec__parse() - @s into @e.  Returns 0 or -EINVAL with a reason in
 * @why (@size bytes), which names what was expected.
 */
int ev_spec__parse(const char *s, struct ev_spec *e, char *why, size_t size);

/* One resolved event, as attached and as named in the capture. */
struct ev_event {
	enum ev_kind kind;
	int retprobe;
	char *name;		/* canonical, for META events: "syscalls:sys_enter_write",
				 * "u:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc",
				 * "p:vfs_write", "page-faults" */
	uint64_t tp_id;		/* tracepoint id (tracefs events/C/N/id) */
	char *path;		/* uprobe binary, absolute */
	char *func;		/* uprobe or kprobe function */
	uint32_t sw_config;
};

struct ev_list {
	struct ev_event *ev;
	size_t n;
	/* Globs matched more tracepoints than --max-probes: those of the
	 * first @capped_spec left out (@capped_matched matched). */
	const char *capped_spec;
	size_t capped_matched;
	/* What the lookup did to tracefs, for the summary: 1 if it mounted it
	 * (and unmounted it after). */
	int mounted_tracefs;
};

/*
 * ev_list__resolve() - resolve the @n specs @specs (as given on the
 * command line) into @out, at most @max_probes events in all (a glob past
 * that is cut and said in @out).  Returns 0, or:
 *  -EINVAL   a spelling not understood, or an event this machine does
 *            not have (no such tracepoint, binary or function): a usage
 *            error; @why says which and what to try
 *  -EOPNOTSUPP  the kernel cannot attach the kind (no kprobes)
 *  -errno    mounting tracefs or reading it failed
 * with @why (@size bytes) set.  @out is empty (ev_list__free()d) on error.
 */
int ev_list__resolve(const char *const *specs, size_t n, size_t max_probes,
		     struct ev_list *out, char *why, size_t size);

/* The names joined by commas, for META `events` (malloc'd), or NULL. */
char *ev_list__names(const struct ev_list *l);

void ev_list__free(struct ev_list *l);

#endif
