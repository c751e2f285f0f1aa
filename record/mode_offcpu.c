// SPDX-License-Identifier: BSD-2-Clause
/*
 * mode_offcpu.c - the off-CPU modes: bpf/offcpu.bpf.c on the sched_switch,
 * sched_waking and sched_wakeup_new tracepoints (tp_btf).  "offcpu" counts
 * blocked time by the blocked task's stacks (BCC offcputime); "offwake"
 * also by its waker's stacks (BCC offwaketime).  Rows go into OFFC chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "drain.h"
#include "mode.h"
#include "offcpu.skel.h"
#include "stkrec.h"

/* Entries of each counts map, at least (as profile). */
#define COUNTS_MIN_ENTRIES 8192
/* Processes that -- CMD may have alive at once. */
#define FOLLOW_ENTRIES 65536
/*
 * Threads that can be off CPU at once and tracked ("start"), and wakeups
 * pending ("wakers").  Both maps are preallocated (a sched_switch program
 * runs under the runqueue lock, where allocating is best avoided), about
 * 100 bytes an entry.  A thread not tracked for lack of room is counted
 * (offcpu_start_map_full), never misattributed.
 */
#define START_ENTRIES 32768

struct rec_mode {
	struct offcpu_bpf *skel;
	int unwind;			/* [unwind] unwind_mode for the BPF side */
	int wakers;			/* offwake */
	uint32_t counts_entries;
	struct stkrec_offcpu_key *keys;
	struct stkrec_offcpu_value *values;
	struct stk_offcpu *rows;
	size_t nr_rows, cap_rows;
};

/*
 * 1 if the kernel's sched_switch tracepoint passes prev_state (Linux 5.18+):
 * its BTF type btf_trace_sched_switch is a pointer to a function taking
 * (void *, bool, prev, next, unsigned int).  0 when BTF says otherwise or
 * cannot be read (then the state is read from the task).
 */
static int switch_has_prev_state(void)
{
	const struct btf_type *t;
	struct btf *btf;
	int id, n = 0;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, (__u32)id);
		t = t ? btf__type_by_id(btf, t->type) : NULL;		/* pointer */
		t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
		if (t && btf_is_func_proto(t))
			n = btf_vlen(t);
	}
	btf__free(btf);
	return n >= 5;
}

static void offcpu_free(struct rec_mode *m);

/* Open and load the skeleton; @symbolizer: load symbolize_kaddrs too. */
static int offcpu_load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		       int symbolizer, struct recorder *rec)
{
	uint32_t tgid_entries, tid_entries;
	int wakers = m->wakers;
	int err;

	m->skel = offcpu_bpf__open();
	if (!m->skel)
		return recorder__errorf(rec, -errno, "open BPF object: %s", strerror(errno));
	tgid_entries = follow ? FOLLOW_ENTRIES : (o->nr_pids ? (uint32_t)o->nr_pids : 1);
	tid_entries = o->nr_tids ? (uint32_t)o->nr_tids : 1;

	m->skel->rodata->filter_tgids = follow || o->nr_pids;
	m->skel->rodata->filter_tids = o->nr_tids > 0;
	m->skel->rodata->follow_children = follow != 0;
	m->skel->rodata->user_stacks = !o->kernel_stacks_only;
	m->skel->rodata->kernel_stacks = !o->user_stacks_only;
	m->skel->rodata->unwind_mode = (__u8)m->unwind; /* [unwind] */
	m->skel->rodata->wakers_wanted = wakers != 0;
	m->skel->rodata->threads = o->user_threads_only ? 1 : o->kernel_threads_only ? 2 : 0;
	m->skel->rodata->state_filter = o->state_filter != 0;
	m->skel->rodata->state_mask = o->state_mask;
	m->skel->rodata->min_block_us = o->min_block_us;
	m->skel->rodata->max_block_us = o->max_block_us;
	m->skel->rodata->switch_has_prev_state = (__u8)switch_has_prev_state();
	err = bpf_map__set_max_entries(m->skel->maps.counts0, m->counts_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.counts1, m->counts_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.stacks, o->stack_storage_size);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.tgids, tgid_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.tids, tid_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.start, START_ENTRIES);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.wakers, wakers ? START_ENTRIES : 1);
	/* Only -- CMD follows forks, only offwake needs wakers. */
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_process_fork, follow != 0);
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_sched_waking, wakers != 0);
	err = err ?: bpf_program__set_autoload(m->skel->progs.symbolize_kaddrs, symbolizer);
	err = err ?: unwinder__configure_obj(m->skel->obj, m->unwind, o->unwind_memory); /* [unwind] */
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	err = offcpu_bpf__load(m->skel);
	if (err)
		return recorder__errorf(rec, err, "load BPF programs: %s%s", strerror(-err),
					err == -EPERM ? " (need CAP_BPF and CAP_PERFMON, or root)"
						      : " (run with -v for the verifier's log)");
	return 0;
}

static int offcpu_open(struct rec_mode **out, const struct recorder_opts *o, int follow,
		       struct rec_maps *maps, struct recorder *rec, int wakers)
{
	/* Kernel addresses are named by the kernel's %pS, as in profile
	 * mode, unless there are none (-U) or the whole table is kept. */
	int symbolizer = !o->user_stacks_only && !o->kallsyms_full;
	struct rec_mode *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	m->wakers = wakers;
	m->counts_entries = o->stack_storage_size > COUNTS_MIN_ENTRIES ? o->stack_storage_size
								       : COUNTS_MIN_ENTRIES;
	m->unwind = o->kernel_stacks_only ? 0 : unwinder__bpf_mode(o->unwind); /* [unwind] */
	err = offcpu_load(m, o, follow, symbolizer, rec);
	if (err && m->unwind) {
		/* [unwind] The unwinder needs bpf_loop (5.17+) and
		 * bpf_task_pt_regs (5.15+): frame pointers without them. */
		offcpu_bpf__destroy(m->skel);
		m->skel = NULL;
		m->unwind = 0;
		maps->unwind_load_err = err;
		err = offcpu_load(m, o, follow, symbolizer, rec);
	}
	if (err && symbolizer) {
		/* The symbolizer needs Linux 5.16 helpers (bpf_snprintf's %pS
		 * from 5.13, bpf_kallsyms_lookup_name from 5.16); without it
		 * the recorder reads /proc/kallsyms instead. */
		offcpu_bpf__destroy(m->skel);
		m->skel = NULL;
		symbolizer = 0;
		err = offcpu_load(m, o, follow, symbolizer, rec);
	}
	if (err)
		goto fail;
	m->keys = calloc(m->counts_entries, sizeof(*m->keys));
	m->values = calloc(m->counts_entries, sizeof(*m->values));
	if (!m->keys || !m->values) {
		err = recorder__errorf(rec, -ENOMEM, "out of memory");
		goto fail;
	}
	maps->stacks_fd = bpf_map__fd(m->skel->maps.stacks);
	maps->stats_fd = bpf_map__fd(m->skel->maps.stats);
	maps->events_fd = bpf_map__fd(m->skel->maps.events);
	maps->tgids_fd = bpf_map__fd(m->skel->maps.tgids);
	maps->tids_fd = bpf_map__fd(m->skel->maps.tids);
	maps->ksym_io_fd = symbolizer ? bpf_map__fd(m->skel->maps.ksym_io) : -1;
	maps->ksym_prog_fd = symbolizer ? bpf_program__fd(m->skel->progs.symbolize_kaddrs) : -1;
	if (m->unwind) { /* [unwind] */
		maps->unwind.rows_fd = bpf_map__fd(m->skel->maps.unwind_rows);
		maps->unwind.rows_cap = bpf_map__max_entries(m->skel->maps.unwind_rows);
		maps->unwind.pages_fd = bpf_map__fd(m->skel->maps.unwind_pages);
		maps->unwind.procs_fd = bpf_map__fd(m->skel->maps.unwind_procs);
	}
	*out = m;
	return 0;
fail:
	offcpu_free(m);
	return err;
}

static int offcpu_open_offcpu(struct rec_mode **out, const struct recorder_opts *o, int follow,
			      struct rec_maps *maps, struct recorder *rec)
{
	return offcpu_open(out, o, follow, maps, rec, 0);
}

static int offcpu_open_offwake(struct rec_mode **out, const struct recorder_opts *o, int follow,
			       struct rec_maps *maps, struct recorder *rec)
{
	return offcpu_open(out, o, follow, maps, rec, 1);
}

static int offcpu_attach(struct rec_mode *m, const struct recorder_opts *o, struct recorder *rec)
{
	int err;

	(void)o;
	/* One call: the process tracking programs and the scheduler ones. */
	err = offcpu_bpf__attach(m->skel);
	if (err)
		return recorder__errorf(rec, err, "attach scheduler tracepoints: %s%s", strerror(-err),
					err == -ENOENT || err == -EINVAL
						? " (needs tp_btf: Linux 5.5+ with BTF)"
						: "");
	return 0;
}

static void offcpu_detach(struct rec_mode *m)
{
	if (m && m->skel)
		offcpu_bpf__detach(m->skel);
}

static int rows_reserve(struct rec_mode *m, size_t more)
{
	struct stk_offcpu *rows;
	size_t cap;

	if (m->nr_rows + more <= m->cap_rows)
		return 0;
	cap = m->cap_rows ? m->cap_rows : 1024;
	while (cap < m->nr_rows + more)
		cap *= 2;
	rows = realloc(m->rows, cap * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	m->rows = rows;
	m->cap_rows = cap;
	return 0;
}

static void copy_comm(char dst[16], const char src[STKREC_COMM_LEN])
{
	memcpy(dst, src, 16);
	dst[15] = '\0';
}

/* Report one side's task and stacks to the recorder. */
static int see_side(struct recorder *rec, struct stk_task_stacks *t)
{
	int err = 0;

	if (t->tgid)
		err = recorder__see_task(rec, t->tgid, t->comm);
	err = err ?: recorder__see_stack(rec, t->tgid, &t->user_stack);
	err = err ?: recorder__see_stack(rec, t->tgid, &t->kernel_stack);
	return err;
}

static int add_rows(struct rec_mode *m, struct recorder *rec, size_t n)
{
	size_t i;
	int err;

	err = rows_reserve(m, n);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	for (i = 0; i < n; i++) {
		const struct stkrec_offcpu_key *k = &m->keys[i];
		struct stk_offcpu *r = &m->rows[m->nr_rows];

		memset(r, 0, sizeof(*r));
		r->target.tgid = k->tgid;
		r->target.tid = k->tid;
		copy_comm(r->target.comm, k->comm);
		r->target.user_stack = k->user_stack;
		r->target.kernel_stack = k->kernel_stack;
		r->waker.tgid = k->waker_tgid;
		r->waker.tid = k->waker_tid;
		copy_comm(r->waker.comm, k->waker_comm);
		r->waker.user_stack = k->waker_user_stack;
		r->waker.kernel_stack = k->waker_kernel_stack;
		r->count = m->values[i].count;
		r->blocked_ns = m->values[i].blocked_ns;
		err = see_side(rec, &r->target);
		err = err ?: see_side(rec, &r->waker);
		if (err)
			return recorder__errorf(rec, err, "out of memory");
		m->nr_rows++;
	}
	return 0;
}

/* Drain one counts map that no program writes to any more. */
static int drain_map(struct rec_mode *m, struct recorder *rec, int fd)
{
	size_t n;
	int err, err2;

	err = drain__map(fd, m->keys, sizeof(*m->keys), m->values, sizeof(*m->values),
			 m->counts_entries, &n);
	err2 = n ? add_rows(m, rec, n) : 0;
	if (err)
		return recorder__errorf(rec, err, "drain counts map: %s", strerror(-err));
	return err2;
}

static int offcpu_collect(struct rec_mode *m, struct recorder *rec, int final)
{
	int err;

	if (final) {
		/* Detached: nothing writes either map. */
		err = drain_map(m, rec, bpf_map__fd(m->skel->maps.counts0));
		return err ?: drain_map(m, rec, bpf_map__fd(m->skel->maps.counts1));
	}
	if (drain__flip(&m->skel->bss->counts_idx))
		return drain_map(m, rec, bpf_map__fd(m->skel->maps.counts1));
	return drain_map(m, rec, bpf_map__fd(m->skel->maps.counts0));
}

static int offcpu_write(struct rec_mode *m, struct stk_writer *w, uint64_t t0, uint64_t t1)
{
	int err;

	if (!m->nr_rows)
		return 0;
	err = stk_writer__add_offcpu(w, t0, t1, m->rows, m->nr_rows);
	m->nr_rows = 0;
	return err;
}

static size_t offcpu_pending(const struct rec_mode *m)
{
	return m->nr_rows;
}

static void offcpu_free(struct rec_mode *m)
{
	if (!m)
		return;
	offcpu_detach(m);
	offcpu_bpf__destroy(m->skel);
	free(m->keys);
	free(m->values);
	free(m->rows);
	free(m);
}

const struct rec_mode_ops offcpu_mode_ops = {
	.name = "offcpu",
	.open = offcpu_open_offcpu,
	.attach = offcpu_attach,
	.detach = offcpu_detach,
	.collect = offcpu_collect,
	.write = offcpu_write,
	.pending = offcpu_pending,
	.free = offcpu_free,
};

const struct rec_mode_ops offwake_mode_ops = {
	.name = "offwake",
	.open = offcpu_open_offwake,
	.attach = offcpu_attach,
	.detach = offcpu_detach,
	.collect = offcpu_collect,
	.write = offcpu_write,
	.pending = offcpu_pending,
	.free = offcpu_free,
};
