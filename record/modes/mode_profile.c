// SPDX-License-Identifier: BSD-2-Clause
/*
 * mode_profile.c - the on-CPU profile mode: bpf/profile.bpf.c on one
 * cpu-clock software event per CPU, in frequency mode (as profile.py).
 * Each event is opened disabled and enabled with its program attached, so
 * that its own count (the time it ran, read() through a duplicate of its
 * fd) says how many sample periods it delivered to the program: STAT
 * cpu_clock_periods, the ground truth for the samples recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drain.h"
#include "mode.h"
#include "modeobj.h"
#include "profile.skel.h"
#include "stkrec.h"

struct rec_mode {
	struct modeobj_btf btf;	/* the minimal kernel BTF while loading */
	struct profile_bpf *skel;
	int *pfds;			/* perf event fd per CPU not owned by a link yet, or -1 */
	struct bpf_link **links;	/* BPF link per CPU */
	int *cfds;			/* our duplicate of each event's fd, to read its count; or -1 */
	uint64_t period_ns;		/* the events' sample period */
	uint64_t periods;		/* elapsed by detach (then cfds are closed) */
	int detached;
	size_t nr_cpus;
	uint32_t counts_entries;
	struct drain *drain;		/* the counts maps, into CNTS rows */
};

static int add_row(struct recorder *rec, const void *key, const void *value, void *row);
static void prefetch_row(struct recorder *rec, const void *key);
static int row_end(struct recorder *rec, const void *key, uint64_t *end_ns);

/* Open and load the skeleton; @symbolizer: load symbolize_kaddrs too. */
static int profile_load(struct rec_mode *m, const struct recorder_opts *o, int follow,
			int symbolizer, int unwind, struct recorder *rec)
{
	const void *elf;
	size_t elf_size;
	int err;

	elf = profile_bpf__elf_bytes(&elf_size);
	m->skel = profile_bpf__open_opts(modeobj__open_opts(&m->btf, o, "profile", elf, elf_size));
	if (!m->skel)
		return recorder__errorf(rec, -errno, "open BPF object: %s", strerror(errno));
	MODEOBJ_SET_RODATA(m->skel->rodata, o, follow, unwind);
	/* Half full of new keys: the kernel says so (quiet stretches). */
	m->skel->rodata->counts_wake = m->counts_entries / 2;
	err = modeobj__configure(m->skel->obj, o, follow, symbolizer, unwind,
				 m->counts_entries, rec);
	if (err)
		return err;
	err = bpf_map__set_max_entries(m->skel->maps.rows_ring, modeobj__rows_ring_bytes(o));
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	err = profile_bpf__load(m->skel);
	modeobj__btf_close(&m->btf);
	return err ? modeobj__load_failed(rec, err) : 0;
}

static void profile_unload(struct rec_mode *m)
{
	modeobj__btf_close(&m->btf);
	profile_bpf__destroy(m->skel);
	m->skel = NULL;
}

static int profile_open(struct rec_mode **out, const struct recorder_opts *o, int follow,
			struct rec_maps *maps, struct recorder *rec)
{
	struct rec_mode *m;
	int symbolizer, unwind, unwind_err, err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	m->counts_entries = modeobj__profile_counts_entries(o);
	err = modeobj__load(m, o, follow, rec, &m->btf, profile_load, profile_unload, &symbolizer,
			    &unwind, &unwind_err);
	err = err ?: modeobj__hand_over(m->skel->obj, &m->skel->bss->counts_idx, symbolizer,
					unwind, unwind_err,
					&(struct drain_opts){
						.chunk = DRAIN_CNTS,
						.entries = m->counts_entries,
						.key_size = sizeof(struct stkrec_count_key),
						.slot_off = offsetof(struct stkrec_count_key,
								     slot),
						.slot_base = (uint64_t *)&m->skel->bss->slot_base,
						.slot_ns = (uint64_t *)&m->skel->bss->slot_ns,
						.fill = (uint64_t *)m->skel->bss->counts_new,
						.lanes = STKREC_COUNT_LANES,
						.value_size = sizeof(struct stkrec_count_lanes),
						.add_row = add_row,
						.row_end = row_end,
						.prefetch_row = prefetch_row,
					},
					&m->drain, maps, rec);
	if (err) {
		profile_mode_ops.free(m);
		return err;
	}
	*out = m;
	return 0;
}

static int perf_event_open_cpu(unsigned int freq, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq,
		/* Enabled by bpf_program__attach_perf_event(), once the
		 * program is on: no period goes by without it. */
		.disabled = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
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
	m->cfds = malloc(o->nr_cpus * sizeof(*m->cfds));
	m->links = calloc(o->nr_cpus, sizeof(*m->links));
	if (!m->pfds || !m->cfds || !m->links)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	for (i = 0; i < o->nr_cpus; i++)
		m->pfds[i] = m->cfds[i] = -1;
	m->nr_cpus = o->nr_cpus;
	/* A cpu-clock event in frequency mode has the fixed period
	 * NSEC_PER_SEC / freq (perf_swevent_init_hrtimer(): an hrtimer needs
	 * no feedback loop). */
	m->period_ns = 1000000000ull / (o->frequency ? o->frequency : 1);

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
		m->cfds[i] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (m->cfds[i] < 0) {
			err = -errno;
			return recorder__errorf(rec, err, "dup perf event fd: %s", strerror(-err));
		}
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

/* Sample periods the events have elapsed: each one's count is the time it
 * ran, in ns.  An event not readable adds nothing. */
static uint64_t profile_event_periods(struct rec_mode *m)
{
	uint64_t v[3], sum = 0;
	size_t i;

	if (m->detached)
		return m->periods;
	for (i = 0; m->cfds && i < m->nr_cpus; i++)
		if (m->cfds[i] >= 0 && read(m->cfds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v[0] / m->period_ns;
	return sum;
}

static void profile_detach(struct rec_mode *m)
{
	size_t i;

	if (!m)
		return;
	/* Read before the programs go: periods after that are no samples. */
	if (!m->detached) {
		m->periods = profile_event_periods(m);
		m->detached = 1;
	}
	for (i = 0; i < m->nr_cpus; i++) {
		if (m->cfds && m->cfds[i] >= 0) {
			close(m->cfds[i]);
			m->cfds[i] = -1;
		}
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

/* One drained counts entry into a CNTS row, announcing what it needs. */
static int add_row(struct recorder *rec, const void *key, const void *value, void *row)
{
	const struct stkrec_count_key *k = key;
	struct stk_count *r = row;
	int err;

	r->tgid = k->tgid;
	r->tid = k->tid;
	memcpy(r->comm, k->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	r->user_stack = k->user_stack;
	r->kernel_stack = k->kernel_stack;
	r->kernel_ip = k->kernel_ip;
	r->kernel_ret_ip = k->kernel_ret_ip;
	memcpy(&r->count, value, sizeof(r->count));
	err = recorder__see_task(rec, r->tgid, r->comm);
	err = err ?: recorder__see_stack(rec, r->tgid, &r->user_stack);
	err = err ?: recorder__see_stack(rec, r->tgid, &r->kernel_stack);
	if (!err && r->kernel_ip)
		err = recorder__see_kaddr(rec, r->kernel_ip);
	if (!err && r->kernel_ret_ip)
		err = recorder__see_kaddr(rec, r->kernel_ret_ip);
	return err;
}

/* What add_row() of @key will look up: its stacks (drain_opts). */
static void prefetch_row(struct recorder *rec, const void *key)
{
	const struct stkrec_count_key *k = key;

	recorder__prefetch_stack(rec, k->user_stack);
	recorder__prefetch_stack(rec, k->kernel_stack);
}

/* A row sampled in a process image an exec has replaced since belongs to
 * that image's snapshot, before the exec (drain.h row_end()). */
static int row_end(struct recorder *rec, const void *key, uint64_t *end_ns)
{
	const struct stkrec_count_key *k = key;

	return recorder__see_image(rec, k->tgid, k->comm, k->image_ns, k->user_stack, end_ns);
}

static void profile_free(struct rec_mode *m)
{
	if (!m)
		return;
	profile_detach(m);
	profile_bpf__destroy(m->skel);
	modeobj__btf_close(&m->btf);
	free(m->pfds);
	free(m->cfds);
	free(m->links);
	drain__free(m->drain);
	free(m);
}

const struct rec_mode_ops profile_mode_ops = {
	.name = "profile",
	.open = profile_open,
	.attach = profile_attach,
	.detach = profile_detach,
	.free = profile_free,
	.event_periods = profile_event_periods,
};
