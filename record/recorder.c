// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder.c - the recording engine common to all modes.
 *
 * Each flush writes, in this order: STCK (stacks not in the file yet), KSYM
 * (kernel symbols not in the file yet), MAPS (process snapshots taken since
 * the last flush), the mode's rows (CNTS/OFFC), STAT.  Everything a row
 * references is therefore in the file before the row: a reader of a file
 * cut short by kill -9 or a full disk never sees a count whose stack,
 * mappings or symbols are missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "child.h"
#include "cpulist.h"
#include "idmap.h"
#include "kobjs.h"
#include "kallsyms.h"
#include "meta.h"
#include "mmapwatch.h"
#include "mode.h"
#include "procmaps.h"
#include "unwinder.h" /* [unwind] */
#include "recorder.h"
#include "stkrec.h"

/* 100 ms steps a CMD gets to exit after SIGTERM before SIGKILL. */
#define CMD_TERM_GRACE_STEPS 50

#define NSEC_PER_SEC 1000000000ULL
#define STATUS_INTERVAL_NS NSEC_PER_SEC
/* Ring buffer pages per CPU for the mmap side-band records: 256 KiB holds
 * the exec, mmap and exit records of ~100 processes, and the recorder
 * drains it when a quarter is used. */
#define MMAPWATCH_PAGES 64

/* epoll data: what became readable. */
#define EV_RINGBUF 0
#define EV_CHILD 1
#define EV_MMAPWATCH 2

/* Names of the BPF statistics (STKREC_STAT_* order) in the STAT chunk. */
static const char *const bpf_stat_names[STKREC_NR_STATS] = {
	[STKREC_STAT_SAMPLES] = "samples",
	[STKREC_STAT_COUNTS_FULL] = "counts_map_full",
	[STKREC_STAT_USTACK_EFAULT] = "stack_err_efault_user",
	[STKREC_STAT_KSTACK_EFAULT] = "stack_err_efault_kernel",
	[STKREC_STAT_USTACK_ENOMEM] = "stack_err_enomem_user",
	[STKREC_STAT_KSTACK_ENOMEM] = "stack_err_enomem_kernel",
	[STKREC_STAT_USTACK_OTHER] = "stack_err_other_user",
	[STKREC_STAT_KSTACK_OTHER] = "stack_err_other_kernel",
	[STKREC_STAT_EVENTS_LOST] = "events_lost",
	[STKREC_STAT_FOLLOW_FULL] = "follow_map_full",
	[STKREC_STAT_START_FULL] = "offcpu_start_map_full",
	[STKREC_STAT_WAKER_FULL] = "offcpu_waker_map_full",
	[STKREC_STAT_OFFCPU_FILTERED] = "offcpu_filtered_block_time",
	[STKREC_STAT_BLOCKED_NS] = "offcpu_blocked_ns",
	/* [unwind] bpf/unwind.bpf.h */
	[STKREC_STAT_UW_STACKS] = "unwind_stacks",
	[STKREC_STAT_UW_FB_NOPROC] = "unwind_fallback_no_process",
	[STKREC_STAT_UW_FB_NOREGS] = "unwind_fallback_no_regs",
	[STKREC_STAT_UW_FB_SHORTER] = "unwind_fallback_fp_longer",
	[STKREC_STAT_UW_FP_STEPS] = "unwind_fp_steps",
	[STKREC_STAT_UW_FB_LEAF] = "unwind_fallback_leaf_unmapped",
	[STKREC_STAT_UW_STOP_BASE] = "unwind_stop_none",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_DEPTH] = "unwind_stop_depth",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_FAULT] = "unwind_stop_fault",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_NO_MAP] = "unwind_stop_no_mapping",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_NO_ROW] = "unwind_stop_no_row",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_UNSUPP] = "unwind_stop_unsupported",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_FP] = "unwind_stop_fp",
	[STKREC_STAT_UW_STOP_BASE + STKREC_UW_STOP_LOOP] = "unwind_stop_loop",
};

static const struct rec_mode_ops *const modes[] = {
	&profile_mode_ops,
	&offcpu_mode_ops,
	&offwake_mode_ops,
};

/* A process maps snapshot.  The latest one per live process stays in
 * memory so new user stacks can be checked against it. */
struct snap {
	struct stk_proc_maps maps;
	int pending;		/* not written yet */
	int orphan;		/* replaced or purged: free once written */
	int failed;		/* could not be read: nothing to write */
	uint64_t purge_seq;	/* exited: forget at this flush (0: alive) */
	int from_events;	/* built by the mmap watcher, ... */
	uint64_t mw_gen;	/* ... from this state of the process, */
	uint64_t mw_image;	/* ... of this image of it */
	int superseded;		/* a later one of the same image replaced it
				 * before it was written: not written */
};

struct recorder {
	struct recorder_opts o;
	const struct rec_mode_ops *ops;
	struct rec_mode *mode;
	struct rec_maps maps;
	struct ring_buffer *rb;
	struct stk_writer *w;
	struct child *child;
	struct kallsyms *ks;
	struct procmaps *pm;
	struct mmapwatch *mw;		/* mmap side-band records, or NULL */
	struct unwinder *uw;		/* [unwind] .eh_frame tables, or NULL (fp) */
	char mw_state[128];		/* META mmap_events */
	char uw_state[128];		/* [unwind] META unwind_used */
	int epfd;
	int output_created;
	int write_failed;
	int cmd_exec_errno;
	uint64_t wall_start, mono_start;
	uint64_t t0;			/* start of the interval being recorded */
	uint64_t seq;			/* flushes done */
	uint64_t chunks;
	const char *end_reason;
	int cmd_exit_code;

	/* Stacks: written to the file (BPF id -> file id), resident in the
	 * BPF map (BPF id -> last flush that referenced it), and queued for
	 * the next STCK. */
	struct idmap *written;
	struct idmap *resident;
	uint64_t last_file_id;
	struct stk_stack *pend_stacks;
	size_t nr_pend_stacks, cap_pend_stacks;
	uint64_t *pend_frames;
	size_t nr_pend_frames, cap_pend_frames;
	struct stkrec_stack stack_buf;

	/* Kernel symbols: written (bit per table index) and queued. */
	uint8_t *ksym_written;
	struct stk_ksym *pend_ksyms;
	size_t nr_pend_ksyms, cap_pend_ksyms;
	/* Or, named by the BPF symbolizer (bpf_ksyms): addresses seen, symbol
	 * starts written, addresses waiting to be named; pending KSYM names
	 * are then malloc'ed. */
	int bpf_ksyms;
	struct idmap *kaddrs_seen;
	struct idmap *ksyms_done;
	uint64_t *pend_kaddrs;
	size_t nr_pend_kaddrs, cap_pend_kaddrs;
	struct stkrec_ksym_io *ksym_io;
	uint64_t ktext, ketext;		/* _text, _etext; 0 if unknown */
	uint64_t kinittext, keinittext;	/* _sinittext, _einittext */

	/* Processes: tgid -> struct snap *, and snapshots queued for MAPS. */
	struct idmap *procs;
	struct snap **pend_snaps;
	size_t nr_pend_snaps, cap_pend_snaps;
	struct stk_proc_maps *maps_buf;

	/* User-space statistics. */
	uint64_t st_stacks_written, st_stacks_evicted, st_stack_missing;
	uint64_t st_maps_gone, st_maps_errors, st_resnapshots;
	uint64_t st_ksyms_written, st_kaddr_unknown, st_exits;
	uint64_t st_kaddrs_bpf;		/* kernel addresses named by the BPF symbolizer */
	uint64_t st_maps_events;	/* snapshots built from mmap records */
	uint64_t st_vdso_embedded;	/* 1 once the vDSO's image is in an ESYM chunk */

	int nr_cpus_possible;
	uint64_t *stat_vals;		/* per-CPU values of one stat */
	uint64_t bpf_stats[STKREC_NR_STATS];
	char errmsg[512];
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int recorder__errorf(struct recorder *rec, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rec->errmsg, sizeof(rec->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

int recorder__cmd_exec_errno(const struct recorder *rec)
{
	return rec->cmd_exec_errno;
}

const char *recorder__errmsg(const struct recorder *rec)
{
	return rec->errmsg;
}

struct recorder *recorder__new(const struct recorder_opts *opts)
{
	const struct rec_mode_ops *ops = NULL;
	struct recorder *rec;
	size_t i;

	if (!opts || !opts->output || !opts->frequency || !opts->nr_cpus ||
	    !opts->stack_storage_size || !opts->flush_interval_ns) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(opts->mode ? opts->mode : "profile", modes[i]->name) == 0)
			ops = modes[i];
	if (!ops || opts->min_block_us > opts->max_block_us ||
	    (opts->user_threads_only && opts->kernel_threads_only)) {
		errno = EINVAL;
		return NULL;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	rec->o = *opts;
	rec->ops = ops;
	rec->epfd = -1;
	rec->cmd_exit_code = -1;
	rec->end_reason = "error";
	rec->maps.stacks_fd = rec->maps.stats_fd = rec->maps.events_fd = -1;
	rec->maps.tgids_fd = rec->maps.tids_fd = -1;
	rec->maps.ksym_io_fd = rec->maps.ksym_prog_fd = -1;
	rec->maps.unwind.rows_fd = rec->maps.unwind.pages_fd = rec->maps.unwind.procs_fd = -1;
	rec->written = idmap__new();
	rec->resident = idmap__new();
	rec->procs = idmap__new();
	rec->pm = procmaps__new();
	rec->nr_cpus_possible = libbpf_num_possible_cpus();
	if (rec->nr_cpus_possible > 0)
		rec->stat_vals = calloc((size_t)rec->nr_cpus_possible, sizeof(uint64_t));
	if (!rec->written || !rec->resident || !rec->procs || !rec->pm || !rec->stat_vals) {
		recorder__free(rec);
		errno = ENOMEM;
		return NULL;
	}
	return rec;
}

/* ---- writing chunks -------------------------------------------------- */

/* Account for one add_*() call; a failed write fails the recording. */
static int rec_wrote(struct recorder *rec, int err)
{
	if (!err) {
		rec->chunks++;
		return 0;
	}
	if (!rec->write_failed) {
		rec->write_failed = 1;
		recorder__errorf(rec, err, "%s: %s while writing; %llu chunks kept", rec->o.output,
				 strerror(-err), (unsigned long long)rec->chunks);
	}
	return err;
}

static int write_stacks(struct recorder *rec)
{
	size_t i, off = 0;
	int err;

	if (!rec->nr_pend_stacks)
		return 0;
	/* Frames were appended to one growing buffer: point into it now. */
	for (i = 0; i < rec->nr_pend_stacks; i++) {
		rec->pend_stacks[i].frames = rec->pend_frames + off;
		off += rec->pend_stacks[i].nr_frames;
	}
	err = stk_writer__add_stacks(rec->w, rec->pend_stacks, rec->nr_pend_stacks);
	rec->nr_pend_stacks = 0;
	rec->nr_pend_frames = 0;
	return rec_wrote(rec, err);
}

static void free_pend_ksyms(struct recorder *rec)
{
	size_t i;

	/* From the BPF symbolizer the names are ours; from kallsyms, the
	 * table's. */
	for (i = 0; rec->bpf_ksyms && i < rec->nr_pend_ksyms; i++) {
		free((char *)rec->pend_ksyms[i].name);
		free((char *)rec->pend_ksyms[i].module);
	}
	rec->nr_pend_ksyms = 0;
}

static int write_ksyms(struct recorder *rec)
{
	int err;

	if (!rec->nr_pend_ksyms)
		return 0;
	err = stk_writer__add_ksyms(rec->w, rec->pend_ksyms, rec->nr_pend_ksyms);
	free_pend_ksyms(rec);
	return rec_wrote(rec, err);
}

static void snap_free(struct snap *s)
{
	if (!s)
		return;
	procmaps__free_snapshot(&s->maps);
	free(s);
}

/*
 * The vDSO is no file the reporter could find, so its image goes into the
 * capture (as perf copies it into its build-id cache): once, just before
 * the first MAPS chunk with a [vdso] mapping of our vDSO's build-id.  A
 * process with another vDSO (32-bit) keeps its own build-id, unclaimed.
 */
static int write_vdso_esym(struct recorder *rec, const struct stk_proc_maps *maps, size_t n)
{
	uint8_t bid[STK_MAX_BUILD_ID], *blob;
	const void *img;
	size_t size, i, j;
	int bid_size, err;

	if (rec->st_vdso_embedded)
		return 0;
	bid_size = procmaps__vdso_image(rec->pm, &img, &size);
	if (bid_size <= 0 || procmaps__vdso_build_id(rec->pm, bid) != bid_size)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < maps[i].nr_mappings; j++) {
			const struct stk_mapping *m = &maps[i].mappings[j];

			if (strcmp(m->path, "[vdso]") == 0 && m->build_id_size == (uint32_t)bid_size &&
			    memcmp(m->build_id, bid, (size_t)bid_size) == 0)
				break;
		}
		if (j < maps[i].nr_mappings)
			break;
	}
	if (i == n)
		return 0;
	blob = malloc(size + 1);
	if (!blob)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	blob[0] = STK_ESYM_ELF_IMAGE;
	memcpy(blob + 1, img, size);
	err = rec_wrote(rec, stk_writer__add_esym(rec->w, bid, (uint32_t)bid_size, blob, size + 1));
	free(blob);
	if (!err)
		rec->st_vdso_embedded = 1;
	return err;
}

static int write_maps(struct recorder *rec)
{
	size_t i, n = 0;
	int err = 0;

	if (!rec->nr_pend_snaps)
		return 0;
	for (i = 0; i < rec->nr_pend_snaps; i++) {
		struct snap *s = rec->pend_snaps[i];

		if (!s->failed && !s->superseded && s->maps.nr_mappings)
			rec->maps_buf[n++] = s->maps;
	}
	if (n)
		err = write_vdso_esym(rec, rec->maps_buf, n);
	if (n && !err)
		err = rec_wrote(rec, stk_writer__add_maps(rec->w, rec->maps_buf, n));
	for (i = 0; i < rec->nr_pend_snaps; i++) {
		struct snap *s = rec->pend_snaps[i];

		s->pending = 0;
		if (s->orphan)
			snap_free(s);
	}
	rec->nr_pend_snaps = 0;
	return err;
}

/* Sum the per-CPU BPF statistics into rec->bpf_stats. */
static void read_bpf_stats(struct recorder *rec)
{
	__u32 i;
	int c;

	if (rec->maps.stats_fd < 0)
		return;
	for (i = 0; i < STKREC_NR_STATS; i++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(rec->maps.stats_fd, &i, rec->stat_vals))
			continue;
		for (c = 0; c < rec->nr_cpus_possible; c++)
			sum += rec->stat_vals[c];
		rec->bpf_stats[i] = sum;
	}
}

static int write_stats(struct recorder *rec, uint64_t now)
{
	struct procmaps_stats ps;
	struct stk_stat st[STKREC_NR_STATS + 48];
	size_t n = 0, i, k;

	read_bpf_stats(rec);
	procmaps__stats(rec->pm, &ps);
	for (i = 0; i < STKREC_NR_STATS; i++)
		st[n++] = (struct stk_stat){ bpf_stat_names[i], rec->bpf_stats[i] };
	st[n++] = (struct stk_stat){ "stacks_map_full",
				     rec->bpf_stats[STKREC_STAT_USTACK_ENOMEM] +
					     rec->bpf_stats[STKREC_STAT_KSTACK_ENOMEM] };
	st[n++] = (struct stk_stat){ "duration_ns", now - rec->mono_start };
	st[n++] = (struct stk_stat){ "flushes", rec->seq };
	st[n++] = (struct stk_stat){ "stacks_written", rec->st_stacks_written };
	st[n++] = (struct stk_stat){ "stacks_evicted", rec->st_stacks_evicted };
	st[n++] = (struct stk_stat){ "stack_lookup_missing", rec->st_stack_missing };
	st[n++] = (struct stk_stat){ "processes_snapshotted", ps.snapshots };
	st[n++] = (struct stk_stat){ "processes_exited", rec->st_exits };
	st[n++] = (struct stk_stat){ "maps_err_gone", rec->st_maps_gone };
	st[n++] = (struct stk_stat){ "maps_err_other", rec->st_maps_errors };
	st[n++] = (struct stk_stat){ "maps_resnapshots", rec->st_resnapshots };
	st[n++] = (struct stk_stat){ "build_ids_read", ps.build_ids_read };
	st[n++] = (struct stk_stat){ "build_id_missing", ps.build_id_missing };
	st[n++] = (struct stk_stat){ "build_id_errors", ps.build_id_errors };
	st[n++] = (struct stk_stat){ "ksyms_written", rec->st_ksyms_written };
	st[n++] = (struct stk_stat){ "kaddr_unknown", rec->st_kaddr_unknown };
	/* Says which path named the kernel: absent (0) means /proc/kallsyms. */
	st[n++] = (struct stk_stat){ "kaddrs_named_bpf", rec->st_kaddrs_bpf };
	st[n++] = (struct stk_stat){ "maps_from_events", rec->st_maps_events };
	st[n++] = (struct stk_stat){ "vdso_embedded", rec->st_vdso_embedded };
	st[n++] = (struct stk_stat){ "vdso_other", ps.vdso_other };
	if (rec->mw) {
		struct mmapwatch_stats ms;

		mmapwatch__stats(rec->mw, &ms);
		st[n++] = (struct stk_stat){ "mmap_event_records", ms.records };
		st[n++] = (struct stk_stat){ "mmap_events_lost", ms.lost };
		st[n++] = (struct stk_stat){ "mmap_event_execs", ms.execs };
		st[n++] = (struct stk_stat){ "mmap_event_mappings", ms.mmaps };
		st[n++] = (struct stk_stat){ "mmap_event_build_ids", ms.kernel_build_ids };
		st[n++] = (struct stk_stat){ "mmap_build_ids_read", ms.build_id_reads };
		st[n++] = (struct stk_stat){ "mmap_build_id_errors", ms.build_id_errors };
	}
	if (rec->uw) { /* [unwind] */
		struct unwinder_stats us;

		unwinder__stats(rec->uw, &us);
		st[n++] = (struct stk_stat){ "unwind_tables", us.tables };
		st[n++] = (struct stk_stat){ "unwind_tables_built", us.tables_built };
		st[n++] = (struct stk_stat){ "unwind_rows", us.rows };
		st[n++] = (struct stk_stat){ "unwind_bytes", us.bytes };
		st[n++] = (struct stk_stat){ "unwind_build_ns", us.build_ns };
		st[n++] = (struct stk_stat){ "unwind_processes", us.processes };
		st[n++] = (struct stk_stat){ "unwind_table_err_no_cfi", us.no_cfi };
		st[n++] = (struct stk_stat){ "unwind_table_err_open", us.open_failed };
		st[n++] = (struct stk_stat){ "unwind_table_err_unsupported", us.unsupported };
		st[n++] = (struct stk_stat){ "unwind_table_err_budget", us.refused_budget };
		st[n++] = (struct stk_stat){ "unwind_tables_evicted", us.evicted };
		st[n++] = (struct stk_stat){ "unwind_mappings_dropped", us.mappings_dropped };
		st[n++] = (struct stk_stat){ "unwind_map_errors", us.map_errors };
	}
	/* A counter not in the STAT chunk is 0: leave zeros out (most loss
	 * counters, in most captures), except the ones a reader always wants. */
	for (i = 0, k = 0; i < n; i++)
		if (st[i].value || strcmp(st[i].name, "samples") == 0 ||
		    strcmp(st[i].name, "duration_ns") == 0 || strcmp(st[i].name, "flushes") == 0)
			st[k++] = st[i];
	return rec_wrote(rec, stk_writer__add_stats(rec->w, st, k));
}

/* ---- processes --------------------------------------------------------- */

static int pend_snap(struct recorder *rec, struct snap *s)
{
	if (rec->nr_pend_snaps == rec->cap_pend_snaps) {
		size_t cap = rec->cap_pend_snaps ? rec->cap_pend_snaps * 2 : 64;
		struct snap **p = realloc(rec->pend_snaps, cap * sizeof(*p));
		struct stk_proc_maps *b = realloc(rec->maps_buf, cap * sizeof(*b));

		if (p)
			rec->pend_snaps = p;
		if (b)
			rec->maps_buf = b;
		if (!p || !b)
			return -ENOMEM;
		rec->cap_pend_snaps = cap;
	}
	rec->pend_snaps[rec->nr_pend_snaps++] = s;
	s->pending = 1;
	return 0;
}

/* Take a new snapshot of @tgid now; it replaces the previous one. */
static int snapshot(struct recorder *rec, uint32_t tgid, const char *comm)
{
	struct snap *s, *old = NULL;
	uint64_t *v;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = -ENOENT;
	if (rec->mw) {
		uint64_t gen;
		int exited;

		/* A process whose exec the watcher saw: its mappings as they
		 * are now, even if it has exited or ld.so is still mapping
		 * its libraries (a /proc snapshot then would miss them). */
		mmapwatch__drain(rec->mw);
		if (mmapwatch__complete(rec->mw, tgid, &gen, &exited)) {
			err = mmapwatch__snapshot(rec->mw, rec->pm, tgid, comm, &s->maps);
			if (!err) {
				s->from_events = 1;
				s->mw_gen = gen;
				s->mw_image = mmapwatch__image(rec->mw, tgid);
				rec->st_maps_events++;
				if (exited)
					s->purge_seq = rec->seq + 2;
			}
		}
	}
	if (err && err != -ENOMEM)
		err = procmaps__snapshot(rec->pm, "/proc", tgid, comm, now_ns(CLOCK_MONOTONIC), &s->maps);
	if (err == -ENOMEM) {
		free(s);
		return err;
	}
	if (err) {
		/* Not readable: remember, so it is not retried every flush. */
		s->failed = 1;
		if (err == -ENOENT || err == -ESRCH) {
			rec->st_maps_gone++;
			s->purge_seq = rec->seq + 2; /* gone: its pid may come back */
		} else {
			rec->st_maps_errors++;
		}
	} else if (pend_snap(rec, s)) {
		snap_free(s);
		return -ENOMEM;
	} else if (rec->uw) {
		/* [unwind] tables for its mappings, before its next samples;
		 * on failure they fall back to frame pointers (counted). */
		unwinder__add_process(rec->uw, &s->maps);
	}
	v = idmap__find(rec->procs, tgid);
	if (v)
		old = (struct snap *)(uintptr_t)*v;
	if (idmap__set(rec->procs, tgid, (uint64_t)(uintptr_t)s)) {
		if (s->pending)
			rec->nr_pend_snaps--; /* it was the last one queued */
		snap_free(s);
		return -ENOMEM;
	}
	if (old) {
		/* Not written yet, and the same image: the new one is its
		 * current state, and rows are resolved in the latest
		 * snapshot anyway (refreshes would otherwise write one per
		 * library ld.so maps between two flushes). */
		if (old->pending && old->from_events && s->from_events && !s->failed &&
		    old->mw_image == s->mw_image)
			old->superseded = 1;
		old->orphan = 1;
		if (!old->pending)
			snap_free(old);
	}
	return 0;
}

int recorder__see_task(struct recorder *rec, uint32_t tgid, const char comm[16])
{
	if (tgid == 0 || idmap__find(rec->procs, tgid))
		return 0;
	return snapshot(rec, tgid, comm);
}

/* The process exited: keep its snapshot for rows still to be drained (an
 * interval or two), then forget it. */
static void proc_exited(struct recorder *rec, uint32_t tgid)
{
	uint64_t *v = idmap__find(rec->procs, tgid);

	rec->st_exits++;
	unwinder__remove_process(rec->uw, tgid); /* [unwind] */
	if (v)
		((struct snap *)(uintptr_t)*v)->purge_seq = rec->seq + 2;
}

static int purge_procs(struct recorder *rec)
{
	uint64_t key, val, *dead = NULL;
	size_t it = 0, n = 0, cap = 0, i;

	while (idmap__next(rec->procs, &it, &key, &val)) {
		struct snap *s = (struct snap *)(uintptr_t)val;

		if (!s->purge_seq || s->purge_seq > rec->seq)
			continue;
		if (n == cap) {
			uint64_t *d = realloc(dead, (cap ? cap * 2 : 64) * sizeof(*d));

			if (!d)
				break; /* try again next flush */
			dead = d;
			cap = cap ? cap * 2 : 64;
		}
		dead[n++] = key;
	}
	for (i = 0; i < n; i++) {
		struct snap *s = (struct snap *)(uintptr_t)*idmap__find(rec->procs, dead[i]);

		idmap__remove(rec->procs, dead[i]);
		s->orphan = 1;
		if (!s->pending)
			snap_free(s);
	}
	free(dead);
	return 0;
}

/*
 * Snapshots built from mmap records go stale when the process maps more
 * (ld.so mapping libraries after the first sample, dlopen) or execs:
 * take them again, before this flush writes MAPS, so the rows of this
 * interval find every mapping.  A snapshot's time is that of the last
 * change it includes, which is before the interval's end.
 */
static int refresh_event_snaps(struct recorder *rec)
{
	uint64_t key, val, gen, *stale = NULL;
	size_t it = 0, n = 0, cap = 0, i;
	int err = 0, exited;

	if (!rec->mw)
		return 0;
	mmapwatch__drain(rec->mw);
	while (idmap__next(rec->procs, &it, &key, &val)) {
		struct snap *s = (struct snap *)(uintptr_t)val;

		/* Not complete any more (records were lost, or purged): the
		 * snapshot taken stays the best there is. */
		if (!s->from_events || !mmapwatch__complete(rec->mw, (uint32_t)key, &gen, &exited) ||
		    gen == s->mw_gen)
			continue;
		if (n == cap) {
			uint64_t *p = realloc(stale, (cap ? cap * 2 : 64) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			stale = p;
			cap = cap ? cap * 2 : 64;
		}
		stale[n++] = key;
	}
	for (i = 0; i < n && !err; i++) {
		const struct snap *s = (struct snap *)(uintptr_t)*idmap__find(rec->procs, stale[i]);
		char comm[16];

		memcpy(comm, s->maps.comm, sizeof(comm));
		err = snapshot(rec, (uint32_t)stale[i], comm);
	}
	free(stale);
	return err;
}

/* [unwind] @tgid's stack left its mappings as the unwinder knows them:
 * give it the current ones (the recorder's own snapshot is refreshed at
 * the next flush, or when a leaf needs it). */
static void unwind_refresh(struct recorder *rec, uint32_t tgid)
{
	struct stk_proc_maps maps = { 0 };
	char comm[16] = "";
	int err = -ENOENT;

	if (!rec->uw)
		return;
	if (rec->mw) {
		mmapwatch__drain(rec->mw);
		if (mmapwatch__complete(rec->mw, tgid, NULL, NULL))
			err = mmapwatch__snapshot(rec->mw, rec->pm, tgid, comm, &maps);
	}
	if (err)
		err = procmaps__snapshot(rec->pm, "/proc", tgid, comm, now_ns(CLOCK_MONOTONIC), &maps);
	if (!err)
		unwinder__add_process(rec->uw, &maps);
	procmaps__free_snapshot(&maps);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rec = ctx;
	const struct stkrec_event *e = data;
	char comm[16];

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case STKREC_EV_NEW_PROC:
		memcpy(comm, e->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		/* Returning an error would stop ring_buffer__consume(); a
		 * snapshot that fails for lack of memory is retried when a
		 * row of the process is drained. */
		snapshot(rec, e->tgid, comm);
		break;
	case STKREC_EV_EXIT:
		proc_exited(rec, e->tgid);
		break;
	case STKREC_EV_MAPS_STALE: /* [unwind] */
		unwind_refresh(rec, e->tgid);
		break;
	}
	return 0;
}

/* ---- stacks and kernel addresses -------------------------------------- */

static int push_ksym(struct recorder *rec, const struct stk_ksym *sym)
{
	if (rec->nr_pend_ksyms == rec->cap_pend_ksyms) {
		size_t cap = rec->cap_pend_ksyms ? rec->cap_pend_ksyms * 2 : 256;
		struct stk_ksym *p = realloc(rec->pend_ksyms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rec->pend_ksyms = p;
		rec->cap_pend_ksyms = cap;
	}
	rec->pend_ksyms[rec->nr_pend_ksyms++] = *sym;
	rec->st_ksyms_written++;
	return 0;
}

/* 1 if @addr is in the core kernel's text, boot-time init text included
 * (the idle task's stack still returns into it). */
static int kernel_text(const struct recorder *rec, uint64_t addr)
{
	return (addr >= rec->ktext && addr < rec->ketext) ||
	       (addr >= rec->kinittext && addr < rec->keinittext);
}

/*
 * Name the addresses queued by recorder__see_kaddr() with the BPF
 * symbolizer, a batch per BPF_PROG_RUN, and queue each symbol not written
 * yet.  A symbol of the core kernel outside its text is data, which no
 * code address is in: such an address (a return IP read above a frame
 * without frame pointer can be any word) counts as unknown.
 */
static int resolve_kaddrs(struct recorder *rec)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct stkrec_ksym_io *io = rec->ksym_io;
	size_t i, j, nb;
	__u32 zero = 0;
	int err = 0;

	for (i = 0; i < rec->nr_pend_kaddrs && !err; i += nb) {
		nb = rec->nr_pend_kaddrs - i;
		if (nb > STKREC_KSYM_BATCH)
			nb = STKREC_KSYM_BATCH;
		io->nr = (__u32)nb;
		memcpy(io->addrs, rec->pend_kaddrs + i, nb * sizeof(uint64_t));
		if (bpf_map_update_elem(rec->maps.ksym_io_fd, &zero, io, BPF_ANY) ||
		    bpf_prog_test_run_opts(rec->maps.ksym_prog_fd, &opts) ||
		    bpf_map_lookup_elem(rec->maps.ksym_io_fd, &zero, io)) {
			err = -errno;
			return recorder__errorf(rec, err, "name kernel addresses: %s", strerror(-err));
		}
		for (j = 0; j < nb && !err; j++) {
			struct stk_ksym sym;

			io->out[j][STKREC_KSYM_TEXT - 1] = '\0';
			if (kallsyms__parse_symoff(io->out[j], io->addrs[j], &sym) ||
			    (!sym.module[0] && rec->ketext && !kernel_text(rec, sym.addr))) {
				rec->st_kaddr_unknown++;
				continue;
			}
			rec->st_kaddrs_bpf++;
			if (idmap__find(rec->ksyms_done, sym.addr))
				continue;
			sym.name = strdup(sym.name);
			sym.module = strdup(sym.module);
			err = !sym.name || !sym.module ? -ENOMEM : 0;
			err = err ?: idmap__set(rec->ksyms_done, sym.addr, 1);
			err = err ?: push_ksym(rec, &sym);
			if (err) {
				free((char *)sym.name);
				free((char *)sym.module);
			}
		}
	}
	rec->nr_pend_kaddrs = 0;
	return err ? recorder__errorf(rec, err, "out of memory") : 0;
}

/* Run the symbolizer once without addresses: it tells _text and _etext
 * (0 without CAP_SYSLOG).  Returns 0 or -errno. */
static int kernel_text_bounds(struct recorder *rec)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 zero = 0;

	memset(rec->ksym_io, 0, sizeof(*rec->ksym_io));
	if (bpf_map_update_elem(rec->maps.ksym_io_fd, &zero, rec->ksym_io, BPF_ANY) ||
	    bpf_prog_test_run_opts(rec->maps.ksym_prog_fd, &opts) ||
	    bpf_map_lookup_elem(rec->maps.ksym_io_fd, &zero, rec->ksym_io))
		return -errno;
	rec->ktext = rec->ksym_io->text;
	rec->ketext = rec->ksym_io->etext;
	rec->kinittext = rec->ksym_io->inittext;
	rec->keinittext = rec->ksym_io->einittext;
	return 0;
}

int recorder__see_kaddr(struct recorder *rec, uint64_t addr)
{
	long idx;
	int err;

	/* Only kernel-half addresses: a return IP read above a frame without
	 * a frame pointer can be any word, and is not worth a symbol. */
	if ((int64_t)addr >= 0)
		return 0;
	if (rec->bpf_ksyms) {
		if (idmap__find(rec->kaddrs_seen, addr))
			return 0;
		err = idmap__set(rec->kaddrs_seen, addr, 1);
		if (err)
			return err;
		if (rec->nr_pend_kaddrs == rec->cap_pend_kaddrs) {
			size_t cap = rec->cap_pend_kaddrs ? rec->cap_pend_kaddrs * 2 : 256;
			uint64_t *p = realloc(rec->pend_kaddrs, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			rec->pend_kaddrs = p;
			rec->cap_pend_kaddrs = cap;
		}
		rec->pend_kaddrs[rec->nr_pend_kaddrs++] = addr;
		return 0;
	}
	if (!rec->ks || rec->o.kallsyms_full)
		return 0;
	idx = kallsyms__find(rec->ks, addr);
	if (idx < 0 || !strchr("tTwW", kallsyms__get(rec->ks, (size_t)idx)->type)) {
		/* Code is in text symbols; a data symbol explains nothing. */
		rec->st_kaddr_unknown++;
		return 0;
	}
	if (rec->ksym_written[idx / 8] & (1u << (idx % 8)))
		return 0;
	err = push_ksym(rec, kallsyms__get(rec->ks, (size_t)idx));
	if (err)
		return err;
	rec->ksym_written[idx / 8] |= (uint8_t)(1u << (idx % 8));
	return 0;
}

static int queue_stack(struct recorder *rec, uint64_t id, const struct stkrec_stack *s)
{
	uint32_t nr = s->nr < STKREC_MAX_DEPTH ? s->nr : STKREC_MAX_DEPTH;

	if (rec->nr_pend_stacks == rec->cap_pend_stacks) {
		size_t cap = rec->cap_pend_stacks ? rec->cap_pend_stacks * 2 : 256;
		struct stk_stack *p = realloc(rec->pend_stacks, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rec->pend_stacks = p;
		rec->cap_pend_stacks = cap;
	}
	if (rec->nr_pend_frames + nr > rec->cap_pend_frames) {
		size_t cap = rec->cap_pend_frames ? rec->cap_pend_frames : 4096;
		uint64_t *p;

		while (cap < rec->nr_pend_frames + nr)
			cap *= 2;
		p = realloc(rec->pend_frames, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		rec->pend_frames = p;
		rec->cap_pend_frames = cap;
	}
	memcpy(rec->pend_frames + rec->nr_pend_frames, s->ips, nr * sizeof(uint64_t));
	rec->nr_pend_frames += nr;
	rec->pend_stacks[rec->nr_pend_stacks++] = (struct stk_stack){ .id = id, .nr_frames = nr };
	return 0;
}

/* A new user stack whose leaf IP is outside the process's known mappings
 * means the process mapped something since its snapshot (dlopen, JIT):
 * read its maps again, at most once per flush. */
static int check_user_stack(struct recorder *rec, uint32_t tgid, const struct stkrec_stack *s)
{
	uint64_t *v = idmap__find(rec->procs, tgid);
	struct snap *snap;

	if (!v || !s->nr)
		return 0;
	snap = (struct snap *)(uintptr_t)*v;
	if (snap->failed || snap->purge_seq || procmaps__covers(&snap->maps, s->ips[0]))
		return 0;
	/* Built from mmap records that have not changed since: every
	 * mapping is in it, reading again would add nothing (the stack is
	 * from before an exec, or its leaf is garbage). */
	if (snap->from_events && rec->mw) {
		uint64_t gen;

		if (mmapwatch__complete(rec->mw, tgid, &gen, NULL) && gen == snap->mw_gen)
			return 0;
	}
	if (!snap->pending) {
		rec->st_resnapshots++;
		return snapshot(rec, tgid, snap->maps.comm);
	}
	return 0;
}

/*
 * The file numbers stacks 1, 2, 3... in the order they are written, not by
 * their 62-bit BPF hash: small ids cost one or two bytes in every count row
 * instead of nine, and compress.  The BPF id stays internal.
 */
int recorder__see_stack(struct recorder *rec, uint32_t tgid, int64_t *ref)
{
	uint64_t id, *file_id;
	int err;

	if (*ref < 0)
		return 0;
	id = (uint64_t)*ref;
	file_id = idmap__find(rec->written, id);
	if (file_id) {
		*ref = (int64_t)*file_id;
		/* Re-inserted by BPF if we evicted it: resident again. */
		return idmap__set(rec->resident, id, rec->seq);
	}
	if (bpf_map_lookup_elem(rec->maps.stacks_fd, &id, &rec->stack_buf)) {
		/* Cannot happen: only written stacks are ever deleted. */
		rec->st_stack_missing++;
		*ref = -ENOENT;
		return 0;
	}
	err = queue_stack(rec, rec->last_file_id + 1, &rec->stack_buf);
	err = err ?: idmap__set(rec->written, id, rec->last_file_id + 1);
	err = err ?: idmap__set(rec->resident, id, rec->seq);
	if (err)
		return err;
	*ref = (int64_t)++rec->last_file_id;
	rec->st_stacks_written++;
	if (id & STKREC_STACK_KERNEL_BIT) {
		uint32_t i;

		for (i = 0; i < rec->stack_buf.nr && i < STKREC_MAX_DEPTH; i++) {
			err = recorder__see_kaddr(rec, rec->stack_buf.ips[i]);
			if (err)
				return err;
		}
		return 0;
	}
	return check_user_stack(rec, tgid, &rec->stack_buf);
}

/*
 * Keep room in the BPF stacks map: every stack there is already in the
 * file, so deleting one only costs a re-insert if it is sampled again (its
 * id is a hash of its frames and does not change).  Past half full, drop
 * the stacks not referenced in the interval just flushed (resident values
 * are the flush number that referenced them; rec->seq is already one
 * past it); past three quarters, all.
 */
static void evict_stacks(struct recorder *rec)
{
	uint32_t cap = rec->o.stack_storage_size;
	size_t it, n = 0, i, pass;
	uint64_t key, val, *victims;

	if (idmap__count(rec->resident) * 2 <= cap)
		return;
	victims = malloc(idmap__count(rec->resident) * sizeof(*victims));
	if (!victims)
		return;
	for (pass = 0; pass < 2; pass++) {
		n = 0;
		it = 0;
		while (idmap__next(rec->resident, &it, &key, &val))
			if (pass == 1 || val + 1 < rec->seq)
				victims[n++] = key;
		for (i = 0; i < n; i++) {
			bpf_map_delete_elem(rec->maps.stacks_fd, &victims[i]);
			idmap__remove(rec->resident, victims[i]);
		}
		rec->st_stacks_evicted += n;
		if (idmap__count(rec->resident) * 4 <= (size_t)cap * 3)
			break;
	}
	free(victims);
}

/* ---- flushing ---------------------------------------------------------- */

static int recorder__flush(struct recorder *rec, int final)
{
	uint64_t t1 = now_ns(CLOCK_MONOTONIC);
	int err;

	if (rec->write_failed)
		return -EIO;
	/* Snapshots of processes announced since the last poll first, so a
	 * row's process is not read twice. */
	if (rec->rb)
		ring_buffer__consume(rec->rb);
	err = refresh_event_snaps(rec);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	err = rec->ops->collect(rec->mode, rec, final);
	if (err)
		return err;
	if (rec->bpf_ksyms) {
		err = resolve_kaddrs(rec);
		if (err)
			return err;
	}
	err = write_stacks(rec);
	err = err ?: write_ksyms(rec);
	err = err ?: write_maps(rec);
	if (!err && rec->ops->pending(rec->mode))
		err = rec_wrote(rec, rec->ops->write(rec->mode, rec->w, rec->t0, t1));
	rec->seq++;
	/* The final STAT comes after the final META (recorder__finish()). */
	if (!err && !final)
		err = write_stats(rec, t1);
	if (err)
		return err;
	/* Processes that exited before the previous flush have had their
	 * last rows drained and their maps taken by now. */
	if (rec->mw)
		mmapwatch__purge(rec->mw, rec->t0);
	rec->t0 = t1;
	evict_stacks(rec);
	purge_procs(rec);
	return 0;
}

static void recorder__status(struct recorder *rec, uint64_t now)
{
	struct recorder_status st = {};

	if (!rec->o.on_status)
		return;
	read_bpf_stats(rec);
	st.elapsed_ns = now - rec->mono_start;
	st.offcpu = rec->ops != &profile_mode_ops;
	st.samples = rec->bpf_stats[STKREC_STAT_SAMPLES];
	st.blocked_ns = rec->bpf_stats[STKREC_STAT_BLOCKED_NS];
	st.stacks = idmap__count(rec->written);
	st.stack_fill_pct = (unsigned int)(idmap__count(rec->resident) * 100 / rec->o.stack_storage_size);
	st.lost = rec->bpf_stats[STKREC_STAT_COUNTS_FULL] + rec->bpf_stats[STKREC_STAT_USTACK_ENOMEM] +
		  rec->bpf_stats[STKREC_STAT_KSTACK_ENOMEM] + rec->bpf_stats[STKREC_STAT_USTACK_OTHER] +
		  rec->bpf_stats[STKREC_STAT_KSTACK_OTHER] + rec->bpf_stats[STKREC_STAT_EVENTS_LOST];
	rec->o.on_status(&st, rec->o.ctx);
}

/* ---- start ------------------------------------------------------------- */

static int join_ids(char *buf, size_t size, const uint32_t *ids, size_t n)
{
	size_t len = 0, i;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%u", i ? "," : "", ids[i]);
	return len < size ? 0 : -ENOMEM;
}

static int join_argv(char **out, char *const *argv)
{
	size_t len = 1, i;
	char *s;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return -ENOMEM;
	s[0] = '\0';
	for (i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	*out = s;
	return 0;
}

static int write_start_meta(struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;
	struct meta m = {};
	char *ids = NULL, *cmd = NULL;
	size_t ids_size;
	int err;

	ids_size = (o->nr_pids > o->nr_tids ? o->nr_pids : o->nr_tids) * 11 + 1;
	ids = malloc(ids_size);
	if (!ids) {
		err = -ENOMEM;
		goto out;
	}
	err = meta__add_host(&m);
	err = err ?: meta__add(&m, "mode", "%s", rec->ops->name);
	if (rec->ops == &profile_mode_ops) {
		err = err ?: meta__add(&m, "event", "cpu-clock");
		err = err ?: meta__add(&m, "frequency", "%u", o->frequency);
	} else {
		err = err ?: meta__add(&m, "event", "%s", rec->ops == &offwake_mode_ops
							? "sched_switch,sched_waking"
							: "sched_switch");
		err = err ?: meta__add(&m, "min_block_us", "%llu",
				       (unsigned long long)o->min_block_us);
		err = err ?: meta__add(&m, "max_block_us", "%llu",
				       (unsigned long long)o->max_block_us);
		if (o->state_filter)
			err = err ?: meta__add(&m, "state_filter", "%u", o->state_mask);
		if (o->user_threads_only || o->kernel_threads_only)
			err = err ?: meta__add(&m, "thread_filter", "%s",
					       o->user_threads_only ? "user" : "kernel");
	}
	err = err ?: meta__add(&m, "wall_start_ns", "%llu", (unsigned long long)rec->wall_start);
	err = err ?: meta__add(&m, "mono_start_ns", "%llu", (unsigned long long)rec->mono_start);
	if (o->cmdline)
		err = err ?: meta__add(&m, "command_line", "%s", o->cmdline);
	err = err ?: meta__add(&m, "tool_version", "stkrec %s", STK_VERSION_STRING);
	err = err ?: meta__add(&m, "user_stacks_only", "%d", o->user_stacks_only ? 1 : 0);
	err = err ?: meta__add(&m, "kernel_stacks_only", "%d", o->kernel_stacks_only ? 1 : 0);
	err = err ?: meta__add(&m, "stack_storage_size", "%u", o->stack_storage_size);
	err = err ?: meta__add(&m, "max_stack_depth", "%d", STKREC_MAX_DEPTH);
	err = err ?: meta__add(&m, "flush_interval_ns", "%llu",
			       (unsigned long long)o->flush_interval_ns);
	err = err ?: meta__add(&m, "kallsyms", "%s",
			       o->user_stacks_only ? "none" : o->kallsyms_full ? "full" : "covering");
	err = err ?: meta__add(&m, "mmap_events", "%s", rec->mw_state);
	err = err ?: meta__add(&m, "unwind", "%s", /* [unwind] as requested */
			       o->unwind == RECORDER_UNWIND_FP ? "fp" :
			       o->unwind == RECORDER_UNWIND_DWARF ? "dwarf" : "auto");
	if (o->duration_ns)
		err = err ?: meta__add(&m, "requested_duration_ns", "%llu",
				       (unsigned long long)o->duration_ns);
	if (o->cpu_list)
		err = err ?: meta__add(&m, "cpu_filter", "%s", o->cpu_list);
	if (!err && o->nr_pids) {
		err = join_ids(ids, ids_size, o->pids, o->nr_pids);
		err = err ?: meta__add(&m, "pid_filter", "%s", ids);
	}
	if (!err && o->nr_tids) {
		err = join_ids(ids, ids_size, o->tids, o->nr_tids);
		err = err ?: meta__add(&m, "tid_filter", "%s", ids);
	}
	if (!err && o->cmd) {
		err = join_argv(&cmd, o->cmd);
		err = err ?: meta__add(&m, "target_command", "%s", cmd);
	}
	if (err) {
		err = recorder__errorf(rec, err, "out of memory");
		goto out;
	}
	err = rec_wrote(rec, stk_writer__add_meta(rec->w, m.kv, m.n));
out:
	meta__free(&m);
	free(ids);
	free(cmd);
	return err;
}

static int write_kernel_info(struct recorder *rec)
{
	struct kobjs ko;
	int err;

	if (rec->ks) {
		rec->ktext = kallsyms__addr_of(rec->ks, "_text");
		rec->ketext = kallsyms__addr_of(rec->ks, "_etext");
	}
	err = kobjs__read(&ko, "/sys", "/proc/modules", rec->ktext, rec->ketext);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	err = rec_wrote(rec, stk_writer__add_kobjs(rec->w, ko.objs, ko.n));
	kobjs__free(&ko);
	if (err || !rec->ks || !rec->o.kallsyms_full)
		return err;
	/* --kallsyms=full: the whole table, once.  Split so that no chunk
	 * comes near the format's raw size limit. */
	{
		size_t total = kallsyms__count(rec->ks), i, step = 32768;

		for (i = 0; i < total && !err; i += step) {
			size_t n = total - i < step ? total - i : step;

			err = rec_wrote(rec, stk_writer__add_ksyms(rec->w, kallsyms__get(rec->ks, i), n));
		}
		rec->st_ksyms_written = total;
	}
	return err;
}

/* Read /proc/kallsyms; refuse if it hides the addresses. */
static int load_kallsyms(struct recorder *rec)
{
	rec->ks = kallsyms__load("/proc/kallsyms");
	if (!rec->ks)
		return recorder__errorf(rec, -errno, "/proc/kallsyms: %s", strerror(errno));
	if (kallsyms__all_zero(rec->ks))
		return recorder__errorf(rec, -EPERM,
					"/proc/kallsyms: kernel addresses are hidden from this process "
					"(kernel.kptr_restrict); run as root with CAP_SYSLOG, "
					"or use -U for user stacks only");
	rec->ksym_written = calloc(kallsyms__count(rec->ks) / 8 + 1, 1);
	if (!rec->ksym_written)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	return 0;
}

/* Kernel symbols from the BPF symbolizer if the mode has one and it runs,
 * else from /proc/kallsyms. */
static int setup_ksyms(struct recorder *rec)
{
	if (rec->o.user_stacks_only || rec->o.kallsyms_full)
		return 0;
	if (rec->maps.ksym_prog_fd >= 0) {
		rec->ksym_io = calloc(1, sizeof(*rec->ksym_io));
		rec->kaddrs_seen = idmap__new();
		rec->ksyms_done = idmap__new();
		if (!rec->ksym_io || !rec->kaddrs_seen || !rec->ksyms_done)
			return recorder__errorf(rec, -ENOMEM, "out of memory");
		if (kernel_text_bounds(rec) == 0) {
			rec->bpf_ksyms = 1;
			return 0;
		}
	}
	return load_kallsyms(rec);
}

static int fill_id_map(int fd, const uint32_t *ids, size_t n)
{
	uint8_t one = 1;
	size_t i;

	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &ids[i], &one, BPF_ANY))
			return -errno;
	return 0;
}

static int setup_epoll(struct recorder *rec)
{
	struct epoll_event ev = { .events = EPOLLIN };

	rec->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rec->epfd < 0)
		return -errno;
	size_t i;

	ev.data.u32 = EV_RINGBUF;
	if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(rec->rb), &ev) < 0)
		return -errno;
	if (rec->child && child__pidfd(rec->child) >= 0) {
		ev.data.u32 = EV_CHILD;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, child__pidfd(rec->child), &ev) < 0)
			return -errno;
	}
	for (i = 0; rec->mw && i < mmapwatch__nr_fds(rec->mw); i++) {
		ev.data.u32 = EV_MMAPWATCH;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, mmapwatch__fd(rec->mw, i), &ev) < 0)
			return -errno;
	}
	return 0;
}

/*
 * The mmap watcher (mmapwatch.h), for the processes this capture can
 * sample: -p's, -- CMD's tree, or all.  Without it (--no-mmap-events, or
 * perf_event_open() refused) every snapshot comes from /proc/PID/maps, as
 * META mmap_events says; that is no reason not to record.
 * Returns 0 or -ENOMEM.
 */
static int open_mmapwatch(struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;
	enum mmapwatch_follow follow;
	size_t nr_online = 0, i;
	int *online = NULL, err;

	if (o->no_mmap_events) {
		snprintf(rec->mw_state, sizeof(rec->mw_state), "off (--no-mmap-events)");
		return 0;
	}
	follow = o->cmd ? MMAPWATCH_TREE : o->nr_pids ? MMAPWATCH_LISTED : MMAPWATCH_ALL;
	rec->mw = mmapwatch__new(follow);
	if (!rec->mw)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	for (i = 0; i < o->nr_pids; i++)
		if (mmapwatch__add(rec->mw, o->pids[i]))
			return recorder__errorf(rec, -ENOMEM, "out of memory");
	/* Every online CPU, whatever -C says: a process maps on any CPU. */
	err = cpulist__online(&online, &nr_online);
	err = err ?: mmapwatch__open(rec->mw, online, nr_online, MMAPWATCH_PAGES);
	free(online);
	if (err == -ENOMEM)
		return recorder__errorf(rec, err, "out of memory");
	if (err) {
		snprintf(rec->mw_state, sizeof(rec->mw_state), "unavailable (%s)", strerror(-err));
		mmapwatch__free(rec->mw);
		rec->mw = NULL;
		return 0;
	}
	/* MMAP2 build-ids need Linux 5.12+; before, the files are read. */
	snprintf(rec->mw_state, sizeof(rec->mw_state), "%s",
		 mmapwatch__kernel_build_ids(rec->mw) ? "on, build-ids from the kernel"
						      : "on, build-ids from the files (kernel before 5.12)");
	return 0;
}

/* [unwind] The .eh_frame unwinder's manager over the mode's maps, unless
 * it is off; says in uw_state (META unwind_used) what runs. */
static int open_unwinder(struct recorder *rec)
{
	size_t i;

	if (rec->maps.unwind.rows_fd < 0) {
		if (rec->maps.unwind_load_err)
			snprintf(rec->uw_state, sizeof(rec->uw_state),
				 "fp (the unwinder did not load: %s)", strerror(-rec->maps.unwind_load_err));
		else
			snprintf(rec->uw_state, sizeof(rec->uw_state), "fp");
		return 0;
	}
	rec->uw = unwinder__new(&rec->maps.unwind);
	if (!rec->uw)
		return recorder__errorf(rec, -errno, "unwind tables: %s", strerror(errno));
	snprintf(rec->uw_state, sizeof(rec->uw_state), "%s",
		 rec->o.unwind == RECORDER_UNWIND_DWARF ? "dwarf" : "auto");
	/* -p processes run already: their tables before their first sample
	 * (others get them when first sampled). */
	for (i = 0; i < rec->o.nr_pids; i++) {
		struct stk_proc_maps maps = { 0 };
		char comm[16] = "";

		if (procmaps__snapshot(rec->pm, "/proc", rec->o.pids[i], comm, now_ns(CLOCK_MONOTONIC),
				       &maps) == 0)
			unwinder__add_process(rec->uw, &maps);
		procmaps__free_snapshot(&maps);
	}
	return 0;
}

const char *recorder__unwind_state(const struct recorder *rec)
{
	return rec->uw_state;
}

int recorder__start(struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	int err;

	/* The whole symbol table first: refusing to run must not leave a
	 * file.  Otherwise the mode's BPF symbolizer names kernel addresses
	 * as they come, and /proc/kallsyms is read only without one. */
	if (!o->user_stacks_only && o->kallsyms_full) {
		err = load_kallsyms(rec);
		if (err)
			return err;
	}

	/* The output, before anything is attached. */
	rec->wall_start = now_ns(CLOCK_REALTIME);
	rec->mono_start = now_ns(CLOCK_MONOTONIC);
	rec->t0 = rec->mono_start;
	wo.wall_start_ns = rec->wall_start;
	wo.mono_start_ns = rec->mono_start;
	rec->w = stk_writer__open(o->output, &wo);
	if (!rec->w)
		return recorder__errorf(rec, -errno, "%s: %s", o->output, strerror(errno));
	rec->output_created = 1;
	err = open_mmapwatch(rec);
	err = err ?: write_start_meta(rec);
	if (err)
		goto fail;

	if (o->cmd) {
		rec->child = child__spawn(o->cmd);
		if (!rec->child) {
			err = recorder__errorf(rec, -errno, "fork: %s", strerror(errno));
			goto fail;
		}
		/* Stopped before its exec: the watcher sees the exec. */
		if (rec->mw && mmapwatch__add(rec->mw, (uint32_t)child__pid(rec->child))) {
			err = recorder__errorf(rec, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	err = rec->ops->open(&rec->mode, o, rec->child != NULL, &rec->maps, rec);
	err = err ?: open_unwinder(rec); /* [unwind] */
	err = err ?: setup_ksyms(rec);
	err = err ?: write_kernel_info(rec);
	if (err)
		goto fail;
	err = fill_id_map(rec->maps.tgids_fd, o->pids, o->nr_pids);
	err = err ?: fill_id_map(rec->maps.tids_fd, o->tids, o->nr_tids);
	if (!err && rec->child) {
		uint32_t pid = (uint32_t)child__pid(rec->child);

		err = fill_id_map(rec->maps.tgids_fd, &pid, 1);
	}
	if (err) {
		err = recorder__errorf(rec, err, "fill filter maps: %s", strerror(-err));
		goto fail;
	}
	rec->rb = ring_buffer__new(rec->maps.events_fd, on_event, rec, NULL);
	if (!rec->rb) {
		err = recorder__errorf(rec, -errno, "ring buffer: %s", strerror(errno));
		goto fail;
	}
	err = rec->ops->attach(rec->mode, o, rec);
	if (err)
		goto fail;
	err = setup_epoll(rec);
	if (err) {
		err = recorder__errorf(rec, err, "epoll: %s", strerror(-err));
		goto fail;
	}
	if (rec->child) {
		err = child__release(rec->child);
		if (err) {
			rec->cmd_exec_errno = -err;
			err = recorder__errorf(rec, err, "%s: %s", o->cmd[0], strerror(-err));
			goto fail;
		}
	}
	return 0;
fail:
	/* Nothing stays attached and no half-made file stays behind. */
	ring_buffer__free(rec->rb);
	rec->rb = NULL;
	mmapwatch__free(rec->mw);
	rec->mw = NULL;
	unwinder__free(rec->uw); /* [unwind] */
	rec->uw = NULL;
	if (rec->mode) {
		rec->ops->detach(rec->mode);
		rec->ops->free(rec->mode);
		rec->mode = NULL;
	}
	child__free(rec->child);
	rec->child = NULL;
	stk_writer__close(rec->w);
	rec->w = NULL;
	unlink(o->output);
	rec->output_created = 0;
	return err;
}

/* ---- run and finish ---------------------------------------------------- */

int recorder__run(struct recorder *rec)
{
	uint64_t start = rec->mono_start, interval = rec->o.flush_interval_ns;
	uint64_t next_flush = start + interval, next_status = start + STATUS_INTERVAL_NS;
	uint64_t deadline = rec->o.duration_ns ? start + rec->o.duration_ns : 0;
	struct epoll_event evs[16];
	int err, n, i, code;

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC), wake;
		int timeout_ms;

		if (rec->o.stop && *rec->o.stop) {
			rec->end_reason = "signal";
			return 0;
		}
		if (deadline && now >= deadline) {
			rec->end_reason = "duration";
			return 0;
		}
		if (rec->child && child__pidfd(rec->child) < 0 &&
		    child__try_wait(rec->child, &code) == 1) {
			rec->cmd_exit_code = code;
			rec->end_reason = "command";
			return 0;
		}
		if (now >= next_flush) {
			err = recorder__flush(rec, 0);
			if (err)
				return err;
			/* After a stall, do not flush in a burst to catch up. */
			while (next_flush <= now)
				next_flush += interval;
		}
		if (now >= next_status) {
			recorder__status(rec, now);
			while (next_status <= now)
				next_status += STATUS_INTERVAL_NS;
		}
		wake = next_flush < next_status ? next_flush : next_status;
		if (deadline && deadline < wake)
			wake = deadline;
		timeout_ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		if (rec->child && child__pidfd(rec->child) < 0 && timeout_ms > 100)
			timeout_ms = 100;
		n = epoll_pwait(rec->epfd, evs, 16, timeout_ms, rec->o.wait_mask);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			return recorder__errorf(rec, err, "epoll_wait: %s", strerror(-err));
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.u32 == EV_RINGBUF) {
				ring_buffer__consume(rec->rb);
			} else if (evs[i].data.u32 == EV_MMAPWATCH) {
				mmapwatch__drain(rec->mw);
			} else if (child__try_wait(rec->child, &code) == 1) {
				rec->cmd_exit_code = code;
				rec->end_reason = "command";
				return 0;
			}
		}
	}
}

static int write_end_meta(struct recorder *rec, uint64_t now)
{
	struct meta m = {};
	int err;

	err = meta__add(&m, "duration_ns", "%llu", (unsigned long long)(now - rec->mono_start));
	err = err ?: meta__add(&m, "unwind_used", "%s", rec->uw_state); /* [unwind] */
	err = err ?: meta__add(&m, "end_reason", "%s", rec->end_reason);
	if (!err && rec->cmd_exit_code >= 0)
		err = meta__add(&m, "target_exit_status", "%d", rec->cmd_exit_code);
	if (!err)
		err = rec_wrote(rec, stk_writer__add_meta(rec->w, m.kv, m.n));
	meta__free(&m);
	return err;
}

int recorder__finish(struct recorder *rec, struct recorder_result *res)
{
	int err = 0, err2, code;

	if (rec->write_failed)
		rec->end_reason = "error";
	/* Stop sampling first: the final drain then races with nothing. */
	if (rec->mode)
		rec->ops->detach(rec->mode);
	if (rec->w && !rec->write_failed) {
		err = recorder__flush(rec, 1);
		if (!err)
			err = write_end_meta(rec, now_ns(CLOCK_MONOTONIC));
		if (!err)
			err = write_stats(rec, now_ns(CLOCK_MONOTONIC));
	}
	/* The final flush has taken every snapshot it needs. */
	mmapwatch__free(rec->mw);
	rec->mw = NULL;
	if (rec->w) {
		uint64_t bytes = stk_writer__bytes(rec->w);

		err2 = stk_writer__close(rec->w);
		rec->w = NULL;
		if (err2 && !err) {
			err = err2;
			if (!rec->write_failed)
				recorder__errorf(rec, err, "%s: %s while closing; %llu chunks kept",
						 rec->o.output, strerror(-err), (unsigned long long)rec->chunks);
		}
		if (res)
			res->bytes = bytes;
	}
	if (rec->child) {
		/* Stopped by duration or signal: CMD goes too, as with perf.
		 * A CMD that ignores SIGTERM gets SIGKILL after a grace period
		 * (as timeout -k does): stkrec waits with SIGINT blocked, so a
		 * second Ctrl-C could not end the wait. */
		if (rec->cmd_exit_code < 0 && child__try_wait(rec->child, &code) == 0) {
			struct timespec step = { 0, 100000000L };
			int i;

			child__kill(rec->child, SIGTERM);
			for (i = 0; i < CMD_TERM_GRACE_STEPS; i++) {
				if (child__try_wait(rec->child, &code) != 0)
					break;
				nanosleep(&step, NULL);
			}
			if (i == CMD_TERM_GRACE_STEPS)
				child__kill(rec->child, SIGKILL);
		}
		if (child__wait(rec->child, &code) == 0)
			rec->cmd_exit_code = code;
	}
	if (res) {
		struct stat st;

		read_bpf_stats(rec);
		res->end_reason = rec->end_reason;
		res->cmd_exit_code = rec->cmd_exit_code;
		res->samples = rec->bpf_stats[STKREC_STAT_SAMPLES];
		res->blocked_ns = rec->bpf_stats[STKREC_STAT_BLOCKED_NS];
		res->stacks = idmap__count(rec->written);
		res->stacks_lost = rec->bpf_stats[STKREC_STAT_USTACK_ENOMEM] +
				   rec->bpf_stats[STKREC_STAT_KSTACK_ENOMEM];
		res->chunks = rec->chunks;
		if (stat(rec->o.output, &st) == 0)
			res->bytes = (uint64_t)st.st_size;
	}
	return err;
}

void recorder__free(struct recorder *rec)
{
	uint64_t val;
	size_t it = 0, i;

	if (!rec)
		return;
	if (rec->mode) {
		rec->ops->detach(rec->mode);
		rec->ops->free(rec->mode);
	}
	ring_buffer__free(rec->rb);
	mmapwatch__free(rec->mw);
	unwinder__free(rec->uw); /* [unwind] */
	if (rec->w)
		stk_writer__close(rec->w);
	child__free(rec->child);
	if (rec->epfd >= 0)
		close(rec->epfd);
	if (rec->procs) {
		while (idmap__next(rec->procs, &it, NULL, &val)) {
			struct snap *s = (struct snap *)(uintptr_t)val;

			if (!s->pending)
				snap_free(s);
		}
	}
	for (i = 0; i < rec->nr_pend_snaps; i++)
		snap_free(rec->pend_snaps[i]);
	idmap__free(rec->procs);
	idmap__free(rec->written);
	idmap__free(rec->resident);
	procmaps__free(rec->pm);
	kallsyms__free(rec->ks);
	free(rec->ksym_written);
	free_pend_ksyms(rec);
	idmap__free(rec->kaddrs_seen);
	idmap__free(rec->ksyms_done);
	free(rec->pend_kaddrs);
	free(rec->ksym_io);
	free(rec->pend_stacks);
	free(rec->pend_frames);
	free(rec->pend_ksyms);
	free(rec->pend_snaps);
	free(rec->maps_buf);
	free(rec->stat_vals);
	free(rec);
}
