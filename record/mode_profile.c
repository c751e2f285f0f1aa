// SPDX-License-Identifier: BSD-2-Clause
/*
 * mode_profile.c - the on-CPU profile mode: bpf/profile.bpf.c on one
 * cpu-clock software event per CPU, in frequency mode (as profile.py).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drain.h"
#include "mode.h"
#include "profile.skel.h"
#include "stkrec.h"

/* Entries of each counts map, at least: a key is per thread and stack, so
 * an interval can hold more keys than there are stacks. */
#define COUNTS_MIN_ENTRIES 8192
/* Processes that -- CMD may have alive at once (make -j, test suites). */
#define FOLLOW_ENTRIES 65536

struct rec_mode {
	struct profile_bpf *skel;
	int unwind;			/* [unwind] unwind_mode for the BPF side */
	int *pfds;			/* perf event fd per CPU not owned by a link yet, or -1 */
	struct bpf_link **links;	/* BPF link per CPU */
	size_t nr_cpus;
	uint32_t counts_entries;
	/* Drain buffers for one map, and the rows built from them. */
	struct stkrec_count_key *keys;
	uint64_t *values;
	struct stk_count *rows;
	size_t nr_rows, cap_rows;
};

/* Open and load the skeleton; @symbolizer: load symbolize_kaddrs too. */
static int profile_load(struct rec_mode *m, const struct recorder_opts *o, int follow,
			int symbolizer, struct recorder *rec)
{
	uint32_t tgid_entries, tid_entries;
	int err;

	m->skel = profile_bpf__open();
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
	err = bpf_map__set_max_entries(m->skel->maps.counts0, m->counts_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.counts1, m->counts_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.stacks, o->stack_storage_size);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.tgids, tgid_entries);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.tids, tid_entries);
	/* Only -- CMD follows forks: do not load what would never run. */
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_process_fork, follow != 0);
	err = err ?: bpf_program__set_autoload(m->skel->progs.symbolize_kaddrs, symbolizer);
	err = err ?: unwinder__configure_obj(m->skel->obj, m->unwind, o->unwind_memory); /* [unwind] */
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	err = profile_bpf__load(m->skel);
	if (err)
		return recorder__errorf(rec, err, "load BPF programs: %s%s", strerror(-err),
					err == -EPERM ? " (need CAP_BPF and CAP_PERFMON, or root)"
						      : " (run with -v for the verifier's log)");
	return 0;
}

static int profile_open(struct rec_mode **out, const struct recorder_opts *o, int follow,
			struct rec_maps *maps, struct recorder *rec)
{
	int symbolizer = !o->user_stacks_only && !o->kallsyms_full;
	struct rec_mode *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	m->counts_entries = o->stack_storage_size > COUNTS_MIN_ENTRIES ? o->stack_storage_size
								       : COUNTS_MIN_ENTRIES;
	m->unwind = o->kernel_stacks_only ? 0 : unwinder__bpf_mode(o->unwind); /* [unwind] */
	err = profile_load(m, o, follow, symbolizer, rec);
	if (err && m->unwind) {
		/* [unwind] The unwinder needs bpf_loop (5.17+) and
		 * bpf_task_pt_regs (5.15+): frame pointers without them. */
		profile_bpf__destroy(m->skel);
		m->skel = NULL;
		m->unwind = 0;
		maps->unwind_load_err = err;
		err = profile_load(m, o, follow, symbolizer, rec);
	}
	if (err && symbolizer) {
		/* The symbolizer needs Linux 5.16 helpers; without it the
		 * recorder reads /proc/kallsyms instead. */
		profile_bpf__destroy(m->skel);
		m->skel = NULL;
		symbolizer = 0;
		err = profile_load(m, o, follow, symbolizer, rec);
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
	profile_mode_ops.free(m);
	return err;
}

static int perf_event_open_cpu(unsigned int freq, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq,
	};
	int fd;

	fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int profile_attach(struct rec_mode *m, const struct recorder_opts *o, struct recorder *rec)
{
	size_t i;
	int err;

	m->pfds = malloc(o->nr_cpus * sizeof(*m->pfds));
	m->links = calloc(o->nr_cpus, sizeof(*m->links));
	if (!m->pfds || !m->links)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	for (i = 0; i < o->nr_cpus; i++)
		m->pfds[i] = -1;
	m->nr_cpus = o->nr_cpus;

	/* Process tracking first, so no process sampled is missed. */
	err = profile_bpf__attach(m->skel);
	if (err)
		return recorder__errorf(rec, err, "attach tracepoints: %s", strerror(-err));
	for (i = 0; i < o->nr_cpus; i++) {
		int fd = perf_event_open_cpu(o->frequency, o->cpus[i]);

		if (fd < 0)
			return recorder__errorf(rec, fd, "perf_event_open(cpu %d): %s%s", o->cpus[i],
						strerror(-fd),
						fd == -EACCES || fd == -EPERM
							? " (need CAP_PERFMON or root)"
							: fd == -EINVAL ? " (check kernel.perf_event_max_sample_rate)"
									: "");
		m->pfds[i] = fd;
		m->links[i] = bpf_program__attach_perf_event(m->skel->progs.on_cpu_sample, fd);
		if (!m->links[i]) {
			err = -errno;
			return recorder__errorf(rec, err, "attach BPF program to cpu %d: %s",
						o->cpus[i], strerror(-err));
		}
		/* The link owns the perf event now: bpf_link__destroy()
		 * closes it, and closing it here too would close whatever
		 * took that fd number meanwhile. */
		m->pfds[i] = -1;
	}
	return 0;
}

static void profile_detach(struct rec_mode *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_cpus; i++) {
		bpf_link__destroy(m->links ? m->links[i] : NULL);
		if (m->links)
			m->links[i] = NULL;
		if (m->pfds && m->pfds[i] >= 0) {
			close(m->pfds[i]);
			m->pfds[i] = -1;
		}
	}
	if (m->skel)
		profile_bpf__detach(m->skel);
}

static int rows_reserve(struct rec_mode *m, size_t more)
{
	struct stk_count *rows;
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

/* Turn drained kernel keys into file rows, announcing what they need. */
static int add_rows(struct rec_mode *m, struct recorder *rec, size_t n)
{
	size_t i;
	int err;

	err = rows_reserve(m, n);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	for (i = 0; i < n; i++) {
		const struct stkrec_count_key *k = &m->keys[i];
		struct stk_count *r = &m->rows[m->nr_rows];

		r->tgid = k->tgid;
		r->tid = k->tid;
		memcpy(r->comm, k->comm, sizeof(r->comm));
		r->comm[sizeof(r->comm) - 1] = '\0';
		r->user_stack = k->user_stack;
		r->kernel_stack = k->kernel_stack;
		r->kernel_ip = k->kernel_ip;
		r->kernel_ret_ip = k->kernel_ret_ip;
		r->count = m->values[i];
		err = recorder__see_task(rec, r->tgid, r->comm);
		err = err ?: recorder__see_stack(rec, r->tgid, &r->user_stack);
		err = err ?: recorder__see_stack(rec, r->tgid, &r->kernel_stack);
		if (!err && r->kernel_ip)
			err = recorder__see_kaddr(rec, r->kernel_ip);
		if (!err && r->kernel_ret_ip)
			err = recorder__see_kaddr(rec, r->kernel_ret_ip);
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

static int profile_collect(struct rec_mode *m, struct recorder *rec, int final)
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

static int profile_write(struct rec_mode *m, struct stk_writer *w, uint64_t t0, uint64_t t1)
{
	int err;

	if (!m->nr_rows)
		return 0;
	err = stk_writer__add_counts(w, t0, t1, m->rows, m->nr_rows);
	m->nr_rows = 0;
	return err;
}

static size_t profile_pending(const struct rec_mode *m)
{
	return m->nr_rows;
}

static void profile_free(struct rec_mode *m)
{
	if (!m)
		return;
	profile_detach(m);
	profile_bpf__destroy(m->skel);
	free(m->pfds);
	free(m->links);
	free(m->keys);
	free(m->values);
	free(m->rows);
	free(m);
}

const struct rec_mode_ops profile_mode_ops = {
	.name = "profile",
	.open = profile_open,
	.attach = profile_attach,
	.detach = profile_detach,
	.collect = profile_collect,
	.write = profile_write,
	.pending = profile_pending,
	.free = profile_free,
};
