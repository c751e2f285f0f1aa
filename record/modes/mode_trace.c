// SPDX-License-Identifier: BSD-2-Clause
/*
 * mode_trace.c - the trace mode: bpf/trace.bpf.c attached to the events
 * of o->events (record/events/, resolved before the recording starts),
 * each attachment carrying its event's index as its BPF cookie (Linux
 * 5.15+).  Tracepoints are raw tracepoints where the kernel's BTF has
 * them (btf_trace_NAME) and raw tracepoint links take a cookie (Linux
 * 6.10+: struct bpf_raw_tp_link has one): no perf event, and cheaper;
 * else one perf event each, by the id tracefs gives (the syscalls'
 * tracepoints are all of this kind); software events one per CPU (as
 * perf record -a -e EVENT), with -c's period; uprobes and
 * kprobes go through libbpf (the uprobe and kprobe PMUs: no tracefs).
 * The counts (event, task, stacks) become TRCE rows.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "drain.h"
#include "events.h"
#include "mode.h"
#include "modeobj.h"
#include "stkrec.h"
#include "trace.skel.h"

struct rec_mode {
	struct modeobj_btf btf;	/* the minimal kernel BTF while loading */
	struct trace_bpf *skel;
	unsigned char *raw;		/* per event: attached as a raw tracepoint */
	int *raw_fds;			/* their links (-1: none) */
	size_t nr_events;
	struct bpf_link **links;	/* every attachment */
	size_t nr_links, cap_links;
	uint32_t counts_entries;
	struct drain *drain;
};

static int add_row(struct recorder *rec, const void *key, const void *value, void *row);
static int row_end(struct recorder *rec, const void *key, uint64_t *end_ns);

static int has_kind(const struct ev_list *l, enum ev_kind kind)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->ev[i].kind == kind)
			return 1;
	return 0;
}

/* Raw tracepoint links take a BPF cookie (Linux 6.10+). */
static int raw_tp_cookies(const struct btf *btf)
{
	const struct btf_member *mb;
	const struct btf_type *t;
	int id, i;

	id = btf ? btf__find_by_name_kind(btf, "bpf_raw_tp_link", BTF_KIND_STRUCT) : -1;
	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, id);
	mb = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, mb++)
		if (strcmp(btf__name_by_offset(btf, mb->name_off), "cookie") == 0)
			return 1;
	return 0;
}

/* Which tracepoints go raw: those the kernel's BTF has a btf_trace_NAME
 * typedef for (a raw tracepoint of that name), if links take cookies. */
static void choose_raw(struct rec_mode *m, const struct ev_list *l)
{
	const struct btf *btf = modeobj__kernel_btf();
	char name[320];
	size_t i;

	if (!raw_tp_cookies(btf))
		return;
	for (i = 0; i < l->n; i++) {
		const char *tp;

		if (l->ev[i].kind != EV_TRACEPOINT)
			continue;
		tp = strchr(l->ev[i].name, ':');
		snprintf(name, sizeof(name), "btf_trace_%s", tp ? tp + 1 : l->ev[i].name);
		m->raw[i] = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
	}
}

static int needs_perf_tracepoint(const struct rec_mode *m, const struct ev_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->ev[i].kind == EV_TRACEPOINT && !m->raw[i])
			return 1;
	return 0;
}

static int needs_raw(const struct rec_mode *m, const struct ev_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (m->raw[i])
			return 1;
	return 0;
}

static int trace_load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		      int symbolizer, int unwind, struct recorder *rec)
{
	const void *elf;
	size_t elf_size;
	const struct ev_list *l = o->events;
	int err;

	elf = trace_bpf__elf_bytes(&elf_size);
	m->skel = trace_bpf__open_opts(modeobj__open_opts(&m->btf, o, "trace", elf, elf_size));
	if (!m->skel)
		return recorder__errorf(rec, -errno, "open BPF object: %s", strerror(errno));
	MODEOBJ_SET_RODATA(m->skel->rodata, o, follow, unwind);
	m->skel->rodata->rate_cap = o->rate_cap;
	err = modeobj__configure(m->skel->obj, o, follow, symbolizer, unwind,
				 m->counts_entries, rec);
	if (err)
		return err;
	err = bpf_map__set_max_entries(m->skel->maps.rate, (uint32_t)l->n);
	/* Only the programs some event needs: each costs a verification. */
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_tracepoint,
					       needs_perf_tracepoint(m, l));
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_raw_tp, needs_raw(m, l));
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_probe,
					       has_kind(l, EV_UPROBE) || has_kind(l, EV_KPROBE));
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_sw_event,
					       has_kind(l, EV_SOFTWARE));
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	err = trace_bpf__load(m->skel);
	modeobj__btf_close(&m->btf);
	return err ? modeobj__load_failed(rec, err) : 0;
}

static void trace_unload(struct rec_mode *m)
{
	modeobj__btf_close(&m->btf);
	trace_bpf__destroy(m->skel);
	m->skel = NULL;
}

static int trace_open(struct rec_mode **out, const struct recorder_opts *o, int follow,
		      struct rec_maps *maps, struct recorder *rec)
{
	struct rec_mode *m;
	int symbolizer, unwind, unwind_err, err;

	if (!o->events || !o->events->n)
		return recorder__errorf(rec, -EINVAL, "trace: no event");
	m = calloc(1, sizeof(*m));
	if (m) {
		m->raw = calloc(o->events->n, 1);
		m->raw_fds = malloc(o->events->n * sizeof(*m->raw_fds));
	}
	if (!m || !m->raw || !m->raw_fds) {
		trace_mode_ops.free(m);
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	}
	memset(m->raw_fds, -1, o->events->n * sizeof(*m->raw_fds));
	m->nr_events = o->events->n;
	choose_raw(m, o->events);
	m->counts_entries = modeobj__counts_entries(o);
	err = modeobj__load(m, o, follow, rec, &m->btf, trace_load, trace_unload, &symbolizer, &unwind,
			    &unwind_err);
	err = err ?: modeobj__hand_over(m->skel->obj, &m->skel->bss->counts_idx, symbolizer,
					unwind, unwind_err,
					&(struct drain_opts){
						.chunk = DRAIN_TRCE,
						.entries = m->counts_entries,
						.key_size = sizeof(struct stkrec_trace_key),
						.value_size = sizeof(uint64_t),
						.add_row = add_row,
						.row_end = row_end,
					},
					&m->drain, maps, rec);
	if (err) {
		trace_mode_ops.free(m);
		return err;
	}
	*out = m;
	return 0;
}

static int keep_link(struct rec_mode *m, struct bpf_link *link)
{
	if (m->nr_links == m->cap_links) {
		size_t cap = m->cap_links ? 2 * m->cap_links : 16;
		struct bpf_link **l = realloc(m->links, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		m->links = l;
		m->cap_links = cap;
	}
	m->links[m->nr_links++] = link;
	return 0;
}

/* A perf event of @type/@config on @cpu with @prog on it, cookie @idx. */
static int attach_perf(struct rec_mode *m, struct bpf_program *prog, uint32_t type,
		       uint64_t config, uint64_t period, int cpu, uint32_t idx, struct bpf_link **out)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config = config,
		.sample_period = period,
		/* Enabled by the attach, once the program is on. */
		.disabled = 1,
	};
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = idx);
	int fd, err;

	(void)m;
	fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	*out = bpf_program__attach_perf_event_opts(prog, fd, &po);
	if (!*out) {
		err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

/* BPF_RAW_TRACEPOINT_OPEN with a cookie (Linux 6.10+), which libbpf
 * 1.1's bpf_raw_tracepoint_open() cannot pass: the attr's layout is
 * union bpf_attr's raw_tracepoint member.  Returns the link's fd or
 * -errno. */
static int raw_tp_open(const char *name, int prog_fd, uint64_t cookie)
{
	struct {
		uint64_t name;
		uint32_t prog_fd;
		uint32_t pad;
		uint64_t cookie;
	} attr = { (uint64_t)(uintptr_t)name, (uint32_t)prog_fd, 0, cookie };
	int fd;

	fd = (int)syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int attach_one(struct rec_mode *m, const struct recorder_opts *o, uint32_t idx,
		      struct recorder *rec)
{
	const struct ev_event *e = &o->events->ev[idx];
	struct bpf_link *link = NULL;
	size_t c;
	int err;

	if (m->raw[idx]) {
		const char *tp = strchr(e->name, ':');

		m->raw_fds[idx] = raw_tp_open(tp ? tp + 1 : e->name,
					      bpf_program__fd(m->skel->progs.on_raw_tp), idx);
		if (m->raw_fds[idx] < 0)
			return recorder__errorf(rec, m->raw_fds[idx], "%s: attach raw tracepoint: %s",
						e->name, strerror(-m->raw_fds[idx]));
		return 0;
	}
	switch (e->kind) {
	case EV_TRACEPOINT:
	case EV_SOFTWARE:
		/* A tracepoint's programs are the tracepoint's, run on every
		 * CPU once one perf event holds them (the kernel refuses the
		 * same program twice: EEXIST), as libbpf's
		 * attach_tracepoint does; a software event counts on its
		 * own CPU only, so one per CPU. */
		for (c = 0; c < (e->kind == EV_TRACEPOINT ? 1 : o->nr_cpus); c++) {
			err = attach_perf(m, e->kind == EV_TRACEPOINT ? m->skel->progs.on_tracepoint
								      : m->skel->progs.on_sw_event,
					  e->kind == EV_TRACEPOINT ? PERF_TYPE_TRACEPOINT
								   : PERF_TYPE_SOFTWARE,
					  e->kind == EV_TRACEPOINT ? e->tp_id : e->sw_config,
					  e->kind == EV_TRACEPOINT ? 1 : o->trace_period, o->cpus[c],
					  idx, &link);
			if (err)
				return recorder__errorf(rec, err, "%s: attach on cpu %d: %s%s", e->name,
							o->cpus[c], strerror(-err),
							err == -EACCES || err == -EPERM
								? " (need CAP_PERFMON or root)" : "");
			if (keep_link(m, link)) {
				bpf_link__destroy(link);
				return recorder__errorf(rec, -ENOMEM, "out of memory");
			}
		}
		return 0;
	case EV_UPROBE: {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = e->func, .retprobe = e->retprobe != 0,
			    .bpf_cookie = idx);

		link = bpf_program__attach_uprobe_opts(m->skel->progs.on_probe, -1, e->path, 0, &uo);
		break;
	}
	case EV_KPROBE: {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .retprobe = e->retprobe != 0, .bpf_cookie = idx);

		link = bpf_program__attach_kprobe_opts(m->skel->progs.on_probe, e->func, &ko);
		break;
	}
	default:
		return recorder__errorf(rec, -EINVAL, "%s: unknown kind of event", e->name);
	}
	if (!link) {
		err = -errno;
		return recorder__errorf(rec, err, "%s: attach: %s", e->name, strerror(-err));
	}
	if (keep_link(m, link)) {
		bpf_link__destroy(link);
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	}
	return 0;
}

static int trace_attach(struct rec_mode *m, const struct recorder_opts *o, struct recorder *rec)
{
	uint32_t i;
	int err;

	/* Process tracking first, so no process an event hits is missed. */
	err = trace_bpf__attach(m->skel);
	if (err)
		return recorder__errorf(rec, err, "attach tracepoints: %s", strerror(-err));
	for (i = 0; i < o->events->n; i++) {
		err = attach_one(m, o, i, rec);
		if (err)
			return err;
	}
	return 0;
}

static void trace_detach(struct rec_mode *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_links; i++)
		bpf_link__destroy(m->links[i]);
	m->nr_links = 0;
	for (i = 0; m->raw_fds && i < m->nr_events; i++) {
		if (m->raw_fds[i] >= 0)
			close(m->raw_fds[i]);
		m->raw_fds[i] = -1;
	}
	if (m->skel)
		trace_bpf__detach(m->skel);
}

/* One drained counts entry into a TRCE row, announcing what it needs. */
static int add_row(struct recorder *rec, const void *key, const void *value, void *row)
{
	const struct stkrec_trace_key *k = key;
	struct stk_trace_count *r = row;
	int err;

	r->event = k->event;
	r->tgid = k->tgid;
	r->tid = k->tid;
	memcpy(r->comm, k->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	r->user_stack = k->user_stack;
	r->kernel_stack = k->kernel_stack;
	memcpy(&r->count, value, sizeof(r->count));
	err = recorder__see_task(rec, r->tgid, r->comm);
	err = err ?: recorder__see_stack(rec, r->tgid, &r->user_stack);
	return err ?: recorder__see_stack(rec, r->tgid, &r->kernel_stack);
}

/* As mode_profile.c's: rows of a replaced process image. */
static int row_end(struct recorder *rec, const void *key, uint64_t *end_ns)
{
	const struct stkrec_trace_key *k = key;

	return recorder__see_image(rec, k->tgid, k->comm, k->image_ns, k->user_stack, end_ns);
}

static void trace_free(struct rec_mode *m)
{
	if (!m)
		return;
	trace_detach(m);
	trace_bpf__destroy(m->skel);
	modeobj__btf_close(&m->btf);
	free(m->links);
	free(m->raw);
	free(m->raw_fds);
	drain__free(m->drain);
	free(m);
}

const struct rec_mode_ops trace_mode_ops = {
	.name = "trace",
	.open = trace_open,
	.attach = trace_attach,
	.detach = trace_detach,
	.free = trace_free,
};
