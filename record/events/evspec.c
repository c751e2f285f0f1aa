// SPDX-License-Identifier: BSD-2-Clause
/*
 * evspec.c - an event as written on stkrec trace's command line into its
 * kind and fields (events.h lists the spellings): BCC stackcount's
 * prefixes (t:, u:, p:) and perf's (CATEGORY:NAME, page-faults).  Only
 * syntax: whether the event exists is evresolve.c's.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "events.h"

static const struct {
	const char *name;
	const char *alias;
	uint32_t config;
} sw_events[] = {
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
};

/* A field of letters, digits, '_', and the glob characters if @glob. */
static int ident_ok(const char *s, int glob)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      (glob && (*s == '*' || *s == '?' || *s == '[' || *s == ']'))))
			return 0;
	return 1;
}

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "%s", msg);
	return -EINVAL;
}

int ev_spec__parse(const char *s, struct ev_spec *e, char *why, size_t size)
{
	char *f[3] = {}, *p;
	size_t i, nf = 0;

	memset(e, 0, sizeof(*e));
	if (!*s)
		return fail(why, size, "empty event");
	if (strlen(s) >= sizeof(e->buf))
		return fail(why, size, "too long an event");
	for (p = (char *)s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == ',' || *p == 0x7f)
			return fail(why, size,
				    "an event has no commas or control characters (give each event as its own word)");
	for (i = 0; i < sizeof(sw_events) / sizeof(sw_events[0]); i++) {
		if (strcmp(s, sw_events[i].name) == 0 ||
		    (sw_events[i].alias && strcmp(s, sw_events[i].alias) == 0)) {
			e->kind = EV_SOFTWARE;
			e->sw_config = sw_events[i].config;
			e->sw_name = sw_events[i].name;
			return 0;
		}
	}
	strcpy(e->buf, s);
	/* Split on ':' into at most 3 fields; a uprobe's PATH has no ':'. */
	f[nf++] = e->buf;
	for (p = e->buf; *p && nf < 3; p++) {
		if (*p == ':') {
			*p = '\0';
			f[nf++] = p + 1;
		}
	}
	if (nf == 3 && strchr(f[2], ':'))
		return fail(why, size, "too many ':' fields");
	if (nf == 1)
		return fail(why, size,
			    "not an event: expected t:CATEGORY:NAME, u:PATH:FUNC, p:FUNC or a software event (page-faults, context-switches, cpu-migrations)");
	if (nf == 3 && (strcmp(f[0], "t") == 0 || strcmp(f[0], "tracepoint") == 0)) {
		e->kind = EV_TRACEPOINT;
		e->category = f[1];
		e->name = f[2];
	} else if (nf == 3 && (strcmp(f[0], "u") == 0 || strcmp(f[0], "r") == 0 ||
			       strcmp(f[0], "uprobe") == 0 || strcmp(f[0], "uretprobe") == 0)) {
		e->kind = EV_UPROBE;
		e->retprobe = f[0][0] == 'r' || strcmp(f[0], "uretprobe") == 0;
		e->path = f[1];
		e->name = f[2];
		if (!*e->path)
			return fail(why, size, "a uprobe needs a binary: u:PATH:FUNC or u:LIB:FUNC (e.g. u:c:malloc)");
		if (!ident_ok(e->name, 1))
			return fail(why, size, "a uprobe's FUNC is a symbol name or a glob (u:c:str*cmp)");
		return 0;
	} else if (nf == 2 && (strcmp(f[0], "p") == 0 || strcmp(f[0], "k") == 0 ||
			       strcmp(f[0], "r") == 0 || strcmp(f[0], "kprobe") == 0 ||
			       strcmp(f[0], "kretprobe") == 0)) {
		e->kind = EV_KPROBE;
		e->retprobe = f[0][0] == 'r' || strcmp(f[0], "kretprobe") == 0;
		e->name = f[1];
		if (!ident_ok(e->name, 0))
			return fail(why, size, "a kprobe is p:FUNC, FUNC a kernel function name");
		return 0;
	} else if (nf == 2) {
		/* perf's CATEGORY:NAME. */
		e->kind = EV_TRACEPOINT;
		e->category = f[0];
		e->name = f[1];
	} else {
		return fail(why, size,
			    "unknown prefix: expected t:, u:, r:, p: or k: (as BCC stackcount), or CATEGORY:NAME");
	}
	if (!ident_ok(e->category, 0) || strchr(e->category, '.'))
		return fail(why, size, "a tracepoint's CATEGORY is a word such as syscalls or sched");
	if (!ident_ok(e->name, 1) || strchr(e->name, '.'))
		return fail(why, size, "a tracepoint's NAME is a word or a glob such as sys_enter_*");
	return 0;
}
