// SPDX-License-Identifier: BSD-2-Clause
/*
 * pidns.c - processes in other PID namespaces, queued for pidn chunks
 * (see pidns.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "idmap.h"
#include "pidns.h"

struct pidns {
	/* tgid -> ns_tgid written or queued for it, so an exec's second
	 * announcement adds nothing. */
	struct idmap known;
	struct stk_pid_ns *queue;
	size_t nr, cap;
	uint64_t recorded;
};

struct pidns *pidns__new(void)
{
	return calloc(1, sizeof(struct pidns));
}

void pidns__free(struct pidns *p)
{
	if (!p)
		return;
	idmap__release(&p->known);
	free(p->queue);
	free(p);
}

int pidns__see(struct pidns *p, uint32_t tgid, uint32_t ns_tgid, uint64_t pid_ns,
	       uint64_t time_ns)
{
	uint64_t *v = idmap__find(&p->known, tgid);
	uint64_t key = (pid_ns << 32) | ns_tgid;
	int err;

	if (ns_tgid == 0 || ns_tgid == tgid || (v && *v == key))
		return 0;
	if (p->nr == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct stk_pid_ns *q = realloc(p->queue, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		p->queue = q;
		p->cap = cap;
	}
	err = idmap__set(&p->known, tgid, key);
	if (err)
		return err;
	p->queue[p->nr++] = (struct stk_pid_ns){
		.tgid = tgid, .ns_tgid = ns_tgid, .time_ns = time_ns, .pid_ns = pid_ns,
	};
	p->recorded++;
	return 0;
}

void pidns__exited(struct pidns *p, uint32_t tgid)
{
	idmap__remove(&p->known, tgid);
}

int pidns__write(struct pidns *p, struct stk_writer *w, uint64_t *chunks)
{
	int err;

	if (!p->nr)
		return 0;
	err = stk_writer__add_pid_ns(w, p->queue, p->nr);
	p->nr = 0;
	if (!err)
		(*chunks)++;
	return err;
}

int pidns__new_file(struct pidns *p, uint64_t time_ns)
{
	uint64_t key, val;
	size_t it = 0, n = 0;

	if (p->cap < idmap__count(&p->known)) {
		struct stk_pid_ns *q = realloc(p->queue, idmap__count(&p->known) * sizeof(*q));

		if (!q)
			return -ENOMEM;
		p->queue = q;
		p->cap = idmap__count(&p->known);
	}
	while (idmap__next(&p->known, &it, &key, &val))
		p->queue[n++] = (struct stk_pid_ns){
			.tgid = (uint32_t)key, .ns_tgid = (uint32_t)val, .time_ns = time_ns,
			.pid_ns = val >> 32,
		};
	p->nr = n;
	return 0;
}

uint64_t pidns__recorded(const struct pidns *p)
{
	return p->recorded;
}
