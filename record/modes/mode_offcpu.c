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
#include "modeobj.h"
#include "offcpu.skel.h"
#include "stkrec.h"

/*
 * Threads that can be off CPU at once and tracked ("start"), and wakeups
 * pending ("wakers").  Both maps are preallocated (a sched_switch program
 * runs under the runqueue lock, where allocating is best avoided), about
 * 100 bytes an entry.  A thread not tracked for lack of room is counted
 * (offcpu_start_map_full), never misattributed.
 */
#define START_ENTRIES 32768

struct rec_mode {
	struct modeobj_btf btf;	/* the minimal kernel BTF while loading */
	struct offcpu_bpf *skel;
	int wakers;			/* offwake */
	uint32_t counts_entries;
	struct drain *drain;		/* the counts maps, into OFFC rows */
};

/*
 * 1 if the kernel's sched_switch tracepoint passes prev_state (Linux 5.18+):
 * its BTF type btf_trace_sched_switch is a pointer to a function taking
 * (void *, bool, prev, next, unsigned int).  0 when BTF says otherwise or
 * cannot be read (then the state is read from the task).
 */
static int switch_has_prev_state(void)
{
	const struct btf *btf = modeobj__kernel_btf();
	const struct btf_type *t;
	int id, n = 0;

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
	return n >= 5;
}

static void offcpu_free(struct rec_mode *m);
static int add_row(struct recorder *rec, const void *key, const void *value, void *row);

/* Open and load the skeleton; @symbolizer: load symbolize_kaddrs too. */
static int offcpu_load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		       int symbolizer, int unwind, struct recorder *rec)
{
	const void *elf;
	size_t elf_size;
	int wakers = m->wakers;
	int err;

	elf = offcpu_bpf__elf_bytes(&elf_size);
	m->skel = offcpu_bpf__open_opts(modeobj__open_opts(&m->btf, o, "offcpu", elf, elf_size));
	if (!m->skel)
		return recorder__errorf(rec, -errno, "open BPF object: %s", strerror(errno));
	MODEOBJ_SET_RODATA(m->skel->rodata, o, follow, unwind);
	m->skel->rodata->wakers_wanted = wakers != 0;
	m->skel->rodata->threads = o->user_threads_only ? 1 : o->kernel_threads_only ? 2 : 0;
	m->skel->rodata->state_filter = o->state_filter != 0;
	m->skel->rodata->state_mask = o->state_mask;
	m->skel->rodata->min_block_us = o->min_block_us;
	m->skel->rodata->max_block_us = o->max_block_us;
	m->skel->rodata->switch_has_prev_state = (__u8)switch_has_prev_state();
	err = modeobj__configure(m->skel->obj, o, follow, symbolizer, unwind,
				 m->counts_entries, rec);
	if (err)
		return err;
	err = bpf_map__set_max_entries(m->skel->maps.start, START_ENTRIES);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.wakers, wakers ? START_ENTRIES : 1);
	/* Only offwake needs wakers. */
	err = err ?: bpf_program__set_autoload(m->skel->progs.on_sched_waking, wakers != 0);
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	err = offcpu_bpf__load(m->skel);
	modeobj__btf_close(&m->btf);
	return err ? modeobj__load_failed(rec, err) : 0;
}

static void offcpu_unload(struct rec_mode *m)
{
	modeobj__btf_close(&m->btf);
	offcpu_bpf__destroy(m->skel);
	m->skel = NULL;
}

static int offcpu_open(struct rec_mode **out, const struct recorder_opts *o, int follow,
		       struct rec_maps *maps, struct recorder *rec, int wakers)
{
	struct rec_mode *m;
	int symbolizer, unwind, unwind_err, err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	m->wakers = wakers;
	m->counts_entries = modeobj__counts_entries(o);
	/* Kernel addresses are named by the kernel's %pS, as in profile
	 * mode, unless there are none (-U) or the whole table is kept. */
	err = modeobj__load(m, o, follow, rec, &m->btf, offcpu_load, offcpu_unload, &symbolizer,
			    &unwind, &unwind_err);
	err = err ?: modeobj__hand_over(m->skel->obj, &m->skel->bss->counts_idx, symbolizer,
					unwind, unwind_err,
					&(struct drain_opts){ .chunk = DRAIN_OFFC,
							      .entries = m->counts_entries,
							      .key_size = sizeof(struct stkrec_offcpu_key),
							      .value_size = sizeof(struct stkrec_offcpu_value),
							      .add_row = add_row },
					&m->drain, maps, rec);
	if (err) {
		offcpu_free(m);
		return err;
	}
	*out = m;
	return 0;
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

/* One drained counts entry into an OFFC row, announcing what it needs. */
static int add_row(struct recorder *rec, const void *key, const void *value, void *row)
{
	const struct stkrec_offcpu_key *k = key;
	const struct stkrec_offcpu_value *v = value;
	struct stk_offcpu *r = row;
	int err;

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
	r->count = v->count;
	r->blocked_ns = v->blocked_ns;
	err = see_side(rec, &r->target);
	return err ?: see_side(rec, &r->waker);
}

/*
 * Every key of @map (a hash map of @key_size-byte keys) and its value into
 * @val, for @each().  A key deleted meanwhile by BPF is skipped; when the
 * key last read is deleted, the kernel starts again from the first, so a
 * map that churns could keep the walk going: past twice its size in steps
 * it gives up with -EAGAIN (the caller then removes nothing).
 */
static int map_each(const struct bpf_map *map, size_t key_size, void *val,
		    int (*each)(const void *key, const void *val, void *arg), void *arg)
{
	unsigned char key[sizeof(struct stkrec_offcpu_key)], next[sizeof(key)];
	uint64_t steps = 2 * (uint64_t)bpf_map__max_entries(map) + 64;
	int fd = bpf_map__fd(map);
	void *prev = NULL;
	int err;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (!steps--)
			return -EAGAIN;
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue;
		err = each(key, val, arg);
		if (err)
			return err;
	}
	return 0;
}

struct live_arg {
	int (*fn)(void *ctx, int64_t id);
	void *ctx;
};

static int live_start(const void *key, const void *val, void *arg)
{
	const struct stkrec_offcpu_start *s = val;
	struct live_arg *a = arg;

	(void)key;
	return a->fn(a->ctx, s->user_stack) ?: a->fn(a->ctx, s->kernel_stack);
}

static int live_waker(const void *key, const void *val, void *arg)
{
	const struct stkrec_offcpu_waker *w = val;
	struct live_arg *a = arg;

	(void)key;
	return a->fn(a->ctx, w->user_stack) ?: a->fn(a->ctx, w->kernel_stack);
}

static int live_count(const void *key, const void *val, void *arg)
{
	const struct stkrec_offcpu_key *k = key;
	struct live_arg *a = arg;
	int err;

	(void)val;
	err = a->fn(a->ctx, k->user_stack) ?: a->fn(a->ctx, k->kernel_stack);
	return err ?: a->fn(a->ctx, k->waker_user_stack) ?: a->fn(a->ctx, k->waker_kernel_stack);
}

static int offcpu_live_stacks(struct rec_mode *m, int (*fn)(void *ctx, int64_t id), void *ctx)
{
	struct live_arg a = { fn, ctx };
	union {
		struct stkrec_offcpu_start s;
		struct stkrec_offcpu_waker w;
		struct stkrec_offcpu_value v;
	} val;
	int err;

	err = map_each(m->skel->maps.start, sizeof(__u32), &val, live_start, &a);
	if (!err && m->wakers)
		err = map_each(m->skel->maps.wakers, sizeof(__u32), &val, live_waker, &a);
	/* Both counts maps: the one BPF adds to, and the one a drain may
	 * have switched from a moment ago. */
	err = err ?: map_each(m->skel->maps.counts0, sizeof(struct stkrec_offcpu_key), &val,
			      live_count, &a);
	err = err ?: map_each(m->skel->maps.counts1, sizeof(struct stkrec_offcpu_key), &val,
			      live_count, &a);
	return err;
}

static void offcpu_free(struct rec_mode *m)
{
	if (!m)
		return;
	offcpu_detach(m);
	offcpu_bpf__destroy(m->skel);
	modeobj__btf_close(&m->btf);
	drain__free(m->drain);
	free(m);
}

const struct rec_mode_ops offcpu_mode_ops = {
	.name = "offcpu",
	.open = offcpu_open_offcpu,
	.attach = offcpu_attach,
	.detach = offcpu_detach,
	.live_stacks = offcpu_live_stacks,
	.free = offcpu_free,
};

const struct rec_mode_ops offwake_mode_ops = {
	.name = "offwake",
	.open = offcpu_open_offwake,
	.attach = offcpu_attach,
	.detach = offcpu_detach,
	.live_stacks = offcpu_live_stacks,
	.free = offcpu_free,
};
