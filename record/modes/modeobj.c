// SPDX-License-Identifier: BSD-2-Clause
/*
 * modeobj.c - sizing, loading and handing over the maps every mode's BPF
 * object shares (bpf/common.bpf.h), see modeobj.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "corebtf.h"
#include "modeobj.h"
#include "stkrec.h"
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

/*
 * A counts map takes the rows of one flush interval, and a row is a
 * sample at least: a cpu-clock event fires once a period (1/F s), no more,
 * so an interval holds F x CPUs x interval rows at most.  Four intervals'
 * worth leaves room for flushes three intervals late, or for a quiet
 * stretch, which the kernel ends once a map is half full of new keys
 * (record/engine/recorder_loop.c quiet_intervals()).  At the default
 * 49 Hz that is the minimum up to 41 CPUs: 2 x 2.1 MiB less kernel memory
 * than counts maps of --stack-storage-size (16384) entries.
 */
#define PROFILE_COUNTS_INTERVALS 4

uint32_t modeobj__profile_counts_entries(const struct recorder_opts *o)
{
	uint32_t most = modeobj__counts_entries(o);
	double want = (double)o->frequency * (double)o->nr_cpus * PROFILE_COUNTS_INTERVALS *
		      ((double)o->flush_interval_ns / 1e9);

	if (want >= most)
		return most;
	return want > COUNTS_MIN_ENTRIES ? (uint32_t)want + 1 : COUNTS_MIN_ENTRIES;
}

uint32_t modeobj__stack_ring_bytes(const struct recorder_opts *o)
{
	uint64_t want = (uint64_t)o->stack_storage_size * 64, n = 256 * 1024;

	while (n < want && n < (1ULL << 30))
		n <<= 1;
	return (uint32_t)n;
}

/* Bytes a "rows_ring" record takes: its 8-byte header and the row. */
#define ROWS_RING_RECORD (8 + sizeof(struct stkrec_count_row))

uint32_t modeobj__rows_ring_bytes(const struct recorder_opts *o)
{
	double want = (double)o->frequency * (double)o->nr_cpus * ROWS_RING_RECORD * 2 *
		      ((double)o->flush_interval_ns / 1e9);
	uint64_t n = 64 * 1024;

	while (n < want && n < (64ULL << 20))
		n <<= 1;
	return (uint32_t)n;
}

static int set_entries(struct bpf_object *obj, const char *name, uint32_t n)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__set_max_entries(map, n) : -ENOENT;
}

static int set_flags(struct bpf_object *obj, const char *name, uint32_t flags)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__set_map_flags(map, bpf_map__map_flags(map) | flags) : -ENOENT;
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

/*
 * 1 if the string @name is in the string section of the BTF at @path, 0 if
 * not, -errno if it cannot be read.  The section is read in pieces into
 * one buffer, each piece overlapping the one before by the needle's
 * length, so that a string across two pieces is seen.
 */
int modeobj__btf_has_string(const char *path, const char *name)
{
	char buf[65536], needle[128];
	size_t len = strlen(name) + 2, have = 0;
	struct btf_header h;
	uint64_t off, end;
	ssize_t n;
	int fd, found = 0, err = 0;

	if (len > sizeof(needle))
		return -EINVAL;
	needle[0] = '\0';
	memcpy(needle + 1, name, len - 1);	/* with its terminating NUL */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || h.magic != BTF_MAGIC || h.hdr_len < sizeof(h)) {
		err = n < 0 ? -errno : -EBADMSG;
		goto out;
	}
	off = (uint64_t)h.hdr_len + h.str_off;
	end = off + h.str_len;
	while (off < end && !found) {
		size_t want = sizeof(buf) - have;

		if (want > end - off)
			want = (size_t)(end - off);
		n = pread(fd, buf + have, want, (off_t)off);
		if (n <= 0) {
			err = n < 0 ? -errno : -EBADMSG;
			goto out;
		}
		off += (uint64_t)n;
		have += (size_t)n;
		found = memmem(buf, have, needle, len) != NULL;
		if (have >= len) {
			memmove(buf, buf + have - (len - 1), len - 1);
			have = len - 1;
		}
	}
out:
	close(fd);
	return err ? err : found;
}

/*
 * 1 if the kernel has the sched_prepare_exec tracepoint (Linux 6.10+), as
 * bpf/unwind.bpf.h's bpf_core_type_exists() sees it: its BTF typedef
 * btf_trace_sched_prepare_exec, whose name is a string of the BTF.
 * Looking for the string reads 2 MB in 64 KiB pieces; parsing the BTF
 * (libbpf's btf__parse()) was ~10 ms of page faults, a fifth of stkrec's
 * start-up, and libbpf parses it again for CO-RE (it cannot be handed
 * ours).  Where the string section cannot be read, the parsed BTF says.
 */
static int kernel_has_prepare_exec(void)
{
	int r = modeobj__btf_has_string("/sys/kernel/btf/vmlinux", "btf_trace_sched_prepare_exec");

	if (r >= 0)
		return r;
	return modeobj__kernel_btf() &&
	       btf__find_by_name_kind(modeobj__kernel_btf(), "btf_trace_sched_prepare_exec",
				      BTF_KIND_TYPEDEF) > 0;
}

static int set_autoload(struct bpf_object *obj, const char *name, int load)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	return prog ? bpf_program__set_autoload(prog, load != 0) : -ENOENT;
}

/*
 * Hash maps made as entries come (BPF_F_NO_PREALLOC: py_procs,
 * unwind_procs, unwind_pages, tgids) are refused in perf_event programs
 * before Linux 6.1 ("perf_event programs can only use preallocated hash
 * map") and warned about in tracing ones: there, every one is
 * preallocated (more kernel memory and start-up, nothing lost).
 */
static int prealloc_where_needed(struct bpf_object *obj)
{
	struct bpf_map *map;
	struct utsname u;
	unsigned int major = 0, minor = 0;
	int err = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2 ||
	    major > 6 || (major == 6 && minor >= 1))
		return 0;
	bpf_object__for_each_map(map, obj) {
		enum bpf_map_type t = bpf_map__type(map);
		uint32_t f = bpf_map__map_flags(map);

		if ((t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH) &&
		    (f & BPF_F_NO_PREALLOC))
			err = err ?: bpf_map__set_map_flags(map, f & ~BPF_F_NO_PREALLOC);
	}
	return err;
}

int modeobj__configure(struct bpf_object *obj, const struct recorder_opts *o, int follow,
		       int symbolizer, int unwind, uint32_t counts_entries, struct recorder *rec)
{
	uint32_t tgid_entries = follow ? FOLLOW_ENTRIES : (o->nr_pids ? (uint32_t)o->nr_pids : 1);
	uint32_t tid_entries = o->nr_tids ? (uint32_t)o->nr_tids : 1;
	int ncpu = libbpf_num_possible_cpus();
	int err;

	/* -- CMD's 65536 processes preallocated were ~4 MiB and 1.5 ms of
	 * start-up (each entry made at map creation); made as forks come
	 * instead, like py_procs (Linux 6.1+ lets a perf_event program use
	 * such a map, as the programs' py_procs needs anyway). */
	err = set_flags(obj, "tgids", BPF_F_NO_PREALLOC);
	err = err ?: set_entries(obj, "counts0", counts_entries);
	err = err ?: set_entries(obj, "counts1", counts_entries);
	err = err ?: set_entries(obj, "stacks", o->stack_storage_size);
	err = err ?: set_entries(obj, "stack_ring", modeobj__stack_ring_bytes(o));
	err = err ?: set_entries(obj, "tgids", tgid_entries);
	err = err ?: set_entries(obj, "tids", tid_entries);
	err = err ?: (ncpu > 0 ? 0 : ncpu < 0 ? ncpu : -EINVAL);
	err = err ?: set_entries(obj, "stats", STKREC_STATS_STRIDE * (uint32_t)ncpu);
	/* Python frames off: the walk is loaded (the programs reference its
	 * maps) but never runs, as no process gets an interpreter; its maps
	 * at their smallest (a ring is a page at least) leave 1.3 MiB of
	 * kernel memory unused. */
	if (o->no_python) {
		err = err ?: set_entries(obj, "py_procs", 1);
		err = err ?: set_entries(obj, "py_threads", 1);
		err = err ?: set_entries(obj, "py_codes_seen", 1);
		err = err ?: set_entries(obj, "py_code_ring", (uint32_t)sysconf(_SC_PAGESIZE));
	}
	/* Forks matter to -- CMD (followed) and to Python frames (a child
	 * inherits its parent's interpreter): do not load what would never
	 * run. */
	err = err ?: set_autoload(obj, "on_process_fork", follow || !o->no_python);
	err = err ?: set_autoload(obj, "symbolize_kaddrs", symbolizer);
	/* sched_prepare_exec (Linux 6.10+), as bpf/unwind.bpf.h's
	 * bpf_core_type_exists() sees it: the mm an execve switches to. */
	err = err ?: set_autoload(obj, "on_prepare_exec", unwind && kernel_has_prepare_exec());
	err = err ?: unwinder__configure_obj(obj, unwind, o->unwind_memory);
	err = err ?: prealloc_where_needed(obj);
	if (err)
		return recorder__errorf(rec, err, "configure BPF object: %s", strerror(-err));
	return 0;
}

const struct bpf_object_open_opts *modeobj__open_opts(struct modeobj_btf *btf,
						      const struct recorder_opts *o,
						      const char *name, const void *elf,
						      size_t size)
{
	const char *dir = o->btf_cache ?: COREBTF_DIR;
	int fd;

	modeobj__btf_close(btf);
	btf->used = 0;
	memset(&btf->opts, 0, sizeof(btf->opts));
	btf->opts.sz = sizeof(btf->opts);
	/* Without a cache it would be made at each start: more work than
	 * libbpf's own parse. */
	if (btf->off || !strcmp(dir, "none"))
		return &btf->opts;
	fd = corebtf__open(dir, name, elf, size, NULL);
	if (fd < 0) {
		btf->err = fd;
		btf->off = 1;
		return &btf->opts;
	}
	btf->fd = fd;
	btf->open = 1;
	btf->used = 1;
	snprintf(btf->path, sizeof(btf->path), "/proc/self/fd/%d", fd);
	btf->opts.btf_custom_path = btf->path;
	return &btf->opts;
}

void modeobj__btf_close(struct modeobj_btf *btf)
{
	if (btf->open)
		close(btf->fd);
	btf->open = 0;
	btf->fd = -1;
	btf->opts.btf_custom_path = NULL;
}

int modeobj__load_failed(struct recorder *rec, int err)
{
	return recorder__errorf(rec, err, "load BPF programs: %s%s", strerror(-err),
				err == -EPERM ? " (need CAP_BPF and CAP_PERFMON, or root)"
					      : " (run with -v for the verifier's log)");
}

int modeobj__load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		  struct recorder *rec, struct modeobj_btf *btf,
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
	if (err && btf->used) {
		/* Not with the minimal BTF: libbpf's own way, the kernel's
		 * whole BTF (a load that fails for another reason fails
		 * again, and is handled below). */
		unload(m);
		btf->off = 1;
		btf->err = err;
		err = load(m, o, follow, *symbolizer, *unwind, rec);
	}
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
	/* profile's only: the others have none (-ENOENT). */
	opts.rows_ring_fd = bpf_object__find_map_fd_by_name(obj, "rows_ring");
	*drain = drain__new(&opts);
	if (!*drain) {
		int err = errno;

		if (err == ENOMEM)
			return recorder__errorf(rec, -err, "out of memory");
		return recorder__errorf(rec, -err, "rows ring: %s", strerror(err));
	}
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
		maps->unwind.rows_cap = bpf_map__max_entries(rows) * STKREC_UW_CHUNK_ROWS;
		maps->unwind.pages_fd = bpf_object__find_map_fd_by_name(obj, "unwind_pages");
		maps->unwind.procs_fd = bpf_object__find_map_fd_by_name(obj, "unwind_procs");
		maps->unwind.defer_fd = bpf_object__find_map_fd_by_name(obj, "defer_ring");
	}
	maps->unwind_load_err = unwind_err;
	maps->py_procs_fd = bpf_object__find_map_fd_by_name(obj, "py_procs");
	maps->py_code_ring_fd = bpf_object__find_map_fd_by_name(obj, "py_code_ring");
	maps->drain = *drain;
	return 0;
}
