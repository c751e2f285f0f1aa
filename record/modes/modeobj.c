// SPDX-License-Identifier: BSD-2-Clause
/*
 * modeobj.c - sizing, loading and handing over the maps every mode's BPF
 * object shares (bpf/common.bpf.h), see modeobj.h.
 */
#include <errno.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "modeobj.h"
#include "unwinder.h"

/* Entries of each counts map, at least. */
#define COUNTS_MIN_ENTRIES 8192
/* Processes that -- CMD may have alive at once (make -j, test suites). */
#define FOLLOW_ENTRIES 65536

uint32_t modeobj__counts_entries(const struct recorder_opts *o)
{
	return o->stack_storage_size > COUNTS_MIN_ENTRIES ? o->stack_storage_size
							  : COUNTS_MIN_ENTRIES;
}

uint32_t modeobj__stack_ring_bytes(const struct recorder_opts *o)
{
	uint64_t want = (uint64_t)o->stack_storage_size * 64, n = 256 * 1024;

	while (n < want && n < (1ULL << 30))
		n <<= 1;
	return (uint32_t)n;
}

static int set_entries(struct bpf_object *obj, const char *name, uint32_t n)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__set_max_entries(map, n) : -ENOENT;
}

const struct btf *modeobj__kernel_btf(void)
{
	static struct btf *btf;
	static int tried;

	if (!tried) {
		tried = 1;
		btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
}

static int set_autoload(struct bpf_object *obj, const char *name, int load)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	return prog ? bpf_program__set_autoload(prog, load != 0) : -ENOENT;
}

int modeobj__configure(struct bpf_object *obj, const struct recorder_opts *o, int follow,
		       int symbolizer, int unwind, uint32_t counts_entries, struct recorder *rec)
{
	uint32_t tgid_entries = follow ? FOLLOW_ENTRIES : (o->nr_pids ? (uint32_t)o->nr_pids : 1);
	uint32_t tid_entries = o->nr_tids ? (uint32_t)o->nr_tids : 1;
	int err;

	err = set_entries(obj, "counts0", counts_entries);
	err = err ?: set_entries(obj, "counts1", counts_entries);
	err = err ?: set_entries(obj, "stacks", o->stack_storage_size);
	err = err ?: set_entries(obj, "stack_ring", modeobj__stack_ring_bytes(o));
	err = err ?: set_entries(obj, "tgids", tgid_entries);
	err = err ?: set_entries(obj, "tids", tid_entries);
	/* Forks matter to -- CMD (followed) and to Python frames (a child
	 * inherits its parent's interpreter): do not load what would never
	 * run. */
	err = err ?: set_autoload(obj, "on_process_fork", follow || !o->no_python);
	err = err ?: set_autoload(obj, "symbolize_kaddrs", symbolizer);
	/* sched_prepare_exec (Linux 6.10+), as bpf/unwind.bpf.h's
	 * bpf_core_type_exists() sees it: the mm an execve switches to. */
	err = err ?: set_autoload(obj, "on_prepare_exec",
				  unwind && modeobj__kernel_btf() &&
				  btf__find_by_name_kind(modeobj__kernel_btf(),
							 "btf_trace_sched_prepare_exec",
							 BTF_KIND_TYPEDEF) > 0);
	err = err ?: unwinder__configure_obj(obj, unwind, o->unwind_memory);
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	return 0;
}

int modeobj__load_failed(struct recorder *rec, int err)
{
	return recorder__errorf(rec, err, "load BPF programs: %s%s", strerror(-err),
				err == -EPERM ? " (need CAP_BPF and CAP_PERFMON, or root)"
					      : " (run with -v for the verifier's log)");
}

int modeobj__load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		  struct recorder *rec,
		  int (*load)(struct rec_mode *m, const struct recorder_opts *o, int follow,
			      int symbolizer, int unwind, struct recorder *rec),
		  void (*unload)(struct rec_mode *m), int *symbolizer, int *unwind,
		  int *unwind_err)
{
	int err;

	*symbolizer = !o->user_stacks_only && !o->kallsyms_full;
	*unwind = o->kernel_stacks_only ? 0 : unwinder__bpf_mode(o->unwind);
	*unwind_err = 0;
	err = load(m, o, follow, *symbolizer, *unwind, rec);
	if (err && *unwind) {
		/* Frame pointers where the unwinder cannot load. */
		unload(m);
		*unwind = 0;
		*unwind_err = err;
		err = load(m, o, follow, *symbolizer, 0, rec);
	}
	if (err && *symbolizer) {
		/* The symbolizer needs Linux 5.16 helpers (bpf_snprintf's %pS
		 * from 5.13, bpf_kallsyms_lookup_name from 5.16); without it
		 * the recorder reads /proc/kallsyms instead. */
		unload(m);
		*symbolizer = 0;
		err = load(m, o, follow, 0, *unwind, rec);
	}
	return err;
}

int modeobj__hand_over(const struct bpf_object *obj, uint32_t *idx, int symbolizer,
		       int unwind, int unwind_err, const struct drain_opts *d, struct drain **drain, struct rec_maps *maps,
		       struct recorder *rec)
{
	struct drain_opts opts = *d;

	opts.fds[0] = bpf_object__find_map_fd_by_name(obj, "counts0");
	opts.fds[1] = bpf_object__find_map_fd_by_name(obj, "counts1");
	opts.idx = idx;
	*drain = drain__new(&opts);
	if (!*drain)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	maps->stacks_fd = bpf_object__find_map_fd_by_name(obj, "stacks");
	maps->stats_fd = bpf_object__find_map_fd_by_name(obj, "stats");
	maps->events_fd = bpf_object__find_map_fd_by_name(obj, "events");
	maps->stack_ring_fd = bpf_object__find_map_fd_by_name(obj, "stack_ring");
	maps->tgids_fd = bpf_object__find_map_fd_by_name(obj, "tgids");
	maps->tids_fd = bpf_object__find_map_fd_by_name(obj, "tids");
	maps->ksym_io_fd = symbolizer ? bpf_object__find_map_fd_by_name(obj, "ksym_io") : -1;
	maps->ksym_prog_fd =
		symbolizer ? bpf_program__fd(bpf_object__find_program_by_name(obj, "symbolize_kaddrs"))
			   : -1;
	if (unwind) {
		const struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");

		maps->unwind.rows_fd = bpf_map__fd(rows);
		maps->unwind.rows_cap = bpf_map__max_entries(rows);
		maps->unwind.pages_fd = bpf_object__find_map_fd_by_name(obj, "unwind_pages");
		maps->unwind.procs_fd = bpf_object__find_map_fd_by_name(obj, "unwind_procs");
		maps->unwind.defer_fd = bpf_object__find_map_fd_by_name(obj, "defer_ring");
	}
	maps->unwind_load_err = unwind_err;
	maps->py_procs_fd = bpf_object__find_map_fd_by_name(obj, "py_procs");
	maps->drain = *drain;
	return 0;
}
