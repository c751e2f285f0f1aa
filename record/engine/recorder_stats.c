// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder_stats.c - what the recorder says about a recording: the STAT
 * chunk each flush ends with (the BPF statistics summed over the CPUs and
 * the counters of the stacks, symbols, processes and unwinder) and the
 * META chunks written at the start and at the end.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <bpf/bpf.h>

#include "clock.h"
#include "esym.h"
#include "ksymtab.h"
#include "mapfd.h"
#include "meta.h"
#include "events.h"
#include "pidns.h"
#include "procs.h"
#include "python.h"
#include "recorder_int.h"
#include "stackstore.h"
#include "deferred.h"
#include "unwinder.h"
#include "worker.h"

/* recorder__write_stats()'s counters: the BPF ones and room for every one
 * user space adds.  STAT_PUT() appends one to st[] (n of them so far), and
 * one past the room is left out rather than written past the array (the
 * Python counters once overflowed it, and stkrec crashed at exit). */
#define STAT_ROOM (STKREC_NR_STATS + 256)
#define STAT_PUT(name_, value_)                                               \
	do {                                                                  \
		if (n < STAT_ROOM)                                            \
			st[n++] = (struct stk_stat){ (name_), (value_) };    \
	} while (0)

/*
 * Values a STAT carries as last read, read again at most this often (and
 * for a file's last STAT, exactly): each costs more than the rest of a
 * quiet flush's STAT -- cpu_clock_periods a read() of every CPU's event,
 * an IPI to each; heap_in_use_max mallinfo2(), a walk of every arena.
 */
#define STAT_SLOW_NS (10 * NSEC_PER_SEC)

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
	/* bpf/unwind.bpf.h */
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
	[STKREC_STAT_UW_PENDING] = "unwind_table_pending",
	[STKREC_STAT_SAMPLE_EVENTS] = "sample_events",
	[STKREC_STAT_UW_DEFERRED] = "unwind_deferred",
	[STKREC_STAT_UW_DEFER_LOST] = "unwind_defer_lost",
	[STKREC_STAT_USTACK_EXEC] = "stack_none_in_exec",
	[STKREC_STAT_STACKS_STORED] = "stacks_stored",
	[STKREC_STAT_STACK_SET_ERR] = "stack_set_errors",
	[STKREC_STAT_STACK_LOST] = "samples_stack_lost",
	/* bpf/python.bpf.h */
	[STKREC_STAT_PY_STACKS] = "python_stacks",
	[STKREC_STAT_PY_STOP_BASE + STKREC_PY_STOP_DEPTH] = "python_stop_depth",
	[STKREC_STAT_PY_STOP_BASE + STKREC_PY_STOP_FAULT] = "python_stop_fault",
	[STKREC_STAT_PY_STOP_BASE + STKREC_PY_STOP_BADCODE] = "python_stop_bad_code",
	[STKREC_STAT_PY_NO_THREAD] = "python_no_thread_state",
	/* bpf/trace.bpf.c */
	[STKREC_STAT_TRACE_CAPPED] = "trace_events_capped",
	/* bpf/profile.bpf.c */
	[STKREC_STAT_ROWS_RING] = "counts_ring_rows",
	[STKREC_STAT_ROWS_RING_FULL] = "counts_ring_full",
};

/* The statistics user space adds to BPF's: the stacks unwound here end
 * with their markers too, so STAT unwind_stop_* counts every sample the
 * capture shows one on (a deferred stack is one sample's, or one
 * episode's). */
static void add_copy_stats(struct recorder *rec)
{
	struct unwind_copy_stats cs;
	__u32 i;

	if (!rec->deferred)
		return;
	unwinder__copy_stats(rec->uw, &cs);
	for (i = 1; i < STKREC_UW_NR_STOPS; i++)
		rec->bpf_stats[STKREC_STAT_UW_STOP_BASE + i] += cs.stops[i];
	rec->bpf_stats[STKREC_STAT_UW_FP_STEPS] += cs.fp_steps;
}

/* The per-CPU values of statistic @i of set @set, as read_stats() last
 * read them. */
static const uint64_t *stat_of(const struct recorder *rec, __u32 set, __u32 i)
{
	return rec->stat_vals + (size_t)(set * STKREC_NR_STATS + i) * (size_t)rec->nr_cpus_possible;
}

/*
 * Read sets @set..@set + @nr - 1 of the stats map into rec->stat_vals
 * (the others keep their last values), from the map mmap'ed on first use
 * (no syscall: a batch lookup of every CPU's values was a tenth of a
 * quiet flush).  If it cannot be mapped, the sets read are all zeros and
 * *@bad has a bit per set.
 */
static void read_stats(struct recorder *rec, __u32 set, __u32 nr, unsigned int *bad)
{
	size_t per = (size_t)rec->nr_cpus_possible;
	const volatile uint64_t *blk;
	__u32 s, i;
	int c;

	*bad = 0;
	if (!rec->stats_mem)
		rec->stats_mem = mapfd__map(rec->maps.stats_fd,
					    (size_t)rec->nr_cpus_possible * STKREC_STATS_STRIDE *
						    sizeof(uint64_t),
					    PROT_READ, &rec->stats_len);
	for (s = set; s < set + nr; s++) {
		if (!rec->stats_mem) {
			memset(rec->stat_vals + (size_t)s * STKREC_NR_STATS * per, 0,
			       STKREC_NR_STATS * per * sizeof(uint64_t));
			*bad |= 1u << s;
			continue;
		}
		for (c = 0; c < rec->nr_cpus_possible; c++) {
			blk = (const volatile uint64_t *)rec->stats_mem +
			      (size_t)c * STKREC_STATS_STRIDE + s * STKREC_NR_STATS;
			for (i = 0; i < STKREC_NR_STATS; i++)
				rec->stat_vals[(size_t)(s * STKREC_NR_STATS + i) * per + c] = blk[i];
		}
	}
}

void recorder__unmap_stats(struct recorder *rec)
{
	mapfd__unmap(rec->stats_mem, rec->stats_len);
	rec->stats_mem = NULL;
}

static uint64_t cpu_sum(const struct recorder *rec, const uint64_t *vals)
{
	uint64_t sum = 0;
	int c;

	for (c = 0; c < rec->nr_cpus_possible; c++)
		sum += vals[c];
	return sum;
}

/* Set @set's sums now, as the rows written hold them: called once its
 * counts map is drained, while no program writes either. */
void recorder__freeze_bpf_stats(struct recorder *rec, uint32_t set)
{
	unsigned int bad;
	__u32 i;

	if (rec->maps.stats_fd < 0 || set >= STKREC_STAT_SETS)
		return;
	/* Only this set: the other one's values, as read when its map was
	 * drained, are what the rows written hold. */
	read_stats(rec, set, 1, &bad);
	for (i = 0; i < STKREC_NR_STATS; i++)
		rec->bpf_sets[set][i] = cpu_sum(rec, stat_of(rec, set, i));
	/* The flush's STAT sums this read, not one more (a batch lookup of
	 * every CPU's values, a good part of a quiet flush). */
	rec->stats_read_bad = bad;
	rec->stats_read_fresh = 1;
}

/* rec->stat_vals, as read_stats() read them (@bad: its sets not read),
 * summed into rec->bpf_stats. */
static void sum_bpf_stats(struct recorder *rec, unsigned int bad)
{
	__u32 i;
	int c;

	for (i = 0; i < STKREC_NR_STATS; i++) {
		const uint64_t *v0 = stat_of(rec, 0, i), *v1 = stat_of(rec, 1, i);
		uint64_t sum0 = cpu_sum(rec, v0), sum1 = cpu_sum(rec, v1);

		if (bad == 3)
			continue;
		for (c = 0; c < rec->nr_cpus_possible; c++) {
			uint64_t v = v0[c] + v1[c];

			if (i != STKREC_STAT_SAMPLE_EVENTS)
				continue;
			if (v > rec->events_busiest_run)
				rec->events_busiest_run = v;
			/* Rotating: this file's events, from each CPU's count
			 * at its start. */
			if (rec->events_last) {
				rec->events_last[c] = v;
				v -= v >= rec->events_base[c] ? rec->events_base[c] : v;
			}
			if (v > rec->events_busiest)
				rec->events_busiest = v;
		}
		rec->bpf_stats[i] = sum0 + sum1;
	}
	add_copy_stats(rec);
}

/* Sum the per-CPU BPF statistics of both sets into rec->bpf_stats: what
 * BPF counted until now (the status line; STAT once sampling is off). */
void recorder__read_bpf_stats(struct recorder *rec)
{
	unsigned int bad;

	rec->stats_read_fresh = 0;
	if (rec->maps.stats_fd < 0)
		return;
	read_stats(rec, 0, STKREC_STAT_SETS, &bad);
	sum_bpf_stats(rec, bad);
}

/* The time the sampling events were attached, times the CPUs: from the
 * attach to the detach, or to @now while they still are. */
uint64_t recorder__sampled_cpu_time(const struct recorder *rec, uint64_t now)
{
	uint64_t end = rec->t_detached ? rec->t_detached : now;

	if (!rec->sample_start || end < rec->sample_start)
		return 0;
	return (end - rec->sample_start) * rec->o.nr_cpus;
}
/* STAT names of the flush steps' longest runs. */
static const char *const flush_step_stat[FLUSH_NR_STEPS] = {
	[FLUSH_CONSUME] = "flush_consume_ns_max",
	[FLUSH_REFRESH] = "flush_refresh_ns_max",
	[FLUSH_COLLECT] = "flush_collect_ns_max",
	[FLUSH_RESOLVE] = "flush_resolve_ns_max",
	[FLUSH_STCK] = "flush_stck_ns_max",
	[FLUSH_KSYM] = "flush_ksym_ns_max",
	[FLUSH_ESYM] = "flush_esym_ns_max",
	[FLUSH_TAKE_RING] = "flush_take_ring_ns_max",
	[FLUSH_MAPS] = "flush_maps_ns_max",
	[FLUSH_PIDNS] = "flush_pidns_ns_max",
	[FLUSH_ROWS] = "flush_rows_ns_max",
	[FLUSH_COUNT] = "flush_count_ns_max",
	[FLUSH_STAT] = "flush_stat_ns_max",
	[FLUSH_PURGE] = "flush_purge_ns_max",
	[FLUSH_ADVANCE] = "flush_advance_ns_max",
};

/*
 * Values that are no counts since the start: the largest or last seen
 * (*_max, peaks, what is loaded now) and the number of CPUs.  A file of a
 * rotating recording gives them as they are; stkreport merge sums them
 * as every STAT value, as it does for captures recorded one after
 * another.
 */
static int stat_is_level(const char *name)
{
	static const char *const levels[] = {
		"sampled_cpus", "rss_peak_bytes", "user_memory_peak_bytes", "vdso_embedded",
		"unwind_tables", "unwind_rows", "unwind_bytes", "unwind_processes",
		"unwind_mappings_pending", "unwind_deferred_table_pending",
		"sample_events_busiest_cpu", "duration_ns",
	};
	size_t len = strlen(name), i;

	if (len > 4 && strcmp(name + len - 4, "_max") == 0)
		return 1;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strcmp(name, levels[i]) == 0)
			return 1;
	return 0;
}

/* Rotating: remember the @n raw values of @st (the next file counts from
 * them), then make @st this file's: each count less its value at the
 * file's start.  0 or -ENOMEM. */
static int per_file(struct recorder *rec, struct stk_stat *st, size_t n)
{
	size_t i, j;

	if (n > rec->nr_stat_last) {
		struct stk_stat *p = realloc(rec->stat_last, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rec->stat_last = p;
	}
	memcpy(rec->stat_last, st, n * sizeof(*st));
	rec->nr_stat_last = n;
	for (i = 0; i < n; i++) {
		if (stat_is_level(st[i].name))
			continue;
		/* The names are the same static strings, mostly in order. */
		for (j = 0; j < rec->nr_stat_base; j++) {
			const struct stk_stat *b = &rec->stat_base[(i + j) % rec->nr_stat_base];

			if (b->name == st[i].name || strcmp(b->name, st[i].name) == 0) {
				st[i].value -= b->value <= st[i].value ? b->value : st[i].value;
				break;
			}
		}
	}
	return 0;
}

int recorder__stats_new_file(struct recorder *rec)
{
	struct stk_stat *p = NULL;
	int c;

	if (rec->nr_stat_last) {
		p = malloc(rec->nr_stat_last * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memcpy(p, rec->stat_last, rec->nr_stat_last * sizeof(*p));
	}
	free(rec->stat_base);
	rec->stat_base = p;
	rec->nr_stat_base = rec->nr_stat_last;
	for (c = 0; c < rec->nr_cpus_possible; c++)
		rec->events_base[c] = rec->events_last[c];
	rec->events_busiest = 0;
	return 0;
}

uint64_t recorder__files_refused(const struct recorder *rec)
{
	struct unwinder_stats us = {};
	struct procs_stats ps;
	struct esym_stats es;

	procs__stats(rec->procs, &ps);
	esym__stats(rec->esym, &es);
	if (rec->uw)
		unwinder__stats(rec->uw, &us);
	return ps.pm.files_refused + us.open_refused + es.binaries_refused + es.perf_map_refused;
}

int recorder__write_stats(struct recorder *rec, uint64_t now, int file_end)
{
	struct stackstore_stats ss;
	struct ksymtab_stats ks;
	struct procs_stats ps;
	struct esym_stats es;
	struct python_stats pys;
	struct rusage ru;
	struct stk_stat st[STAT_ROOM];
	size_t n = 0, i, k;
	uint64_t t = mono_ns();
	/* Sampling off, the periods are the ones read at the detach. */
	int slow = file_end || rec->t_detached || !rec->slow_read_ns ||
		   t - rec->slow_read_ns >= STAT_SLOW_NS;

	if (slow)
		rec->slow_read_ns = t;
	if (rec->stats_read_fresh && !rec->t_detached && rec->maps.stats_fd >= 0)
		sum_bpf_stats(rec, rec->stats_read_bad);
	else
		recorder__read_bpf_stats(rec);
	rec->stats_read_fresh = 0;
	if (!rec->t_detached && rec->maps.stats_fd >= 0) {
		/* While sampling: the counts of the samples whose rows are
		 * written, each set as its map was drained, not those still
		 * in a map (every STAT says what the chunks before it hold). */
		for (i = 0; i < STKREC_NR_STATS; i++)
			rec->bpf_stats[i] = rec->bpf_sets[0][i] + rec->bpf_sets[1][i];
		add_copy_stats(rec);
	}
	stackstore__stats(rec->stacks, &ss);
	ksymtab__stats(rec->ksyms, &ks);
	procs__stats(rec->procs, &ps);
	esym__stats(rec->esym, &es);
	for (i = 0; i < STKREC_NR_STATS; i++)
		STAT_PUT(bpf_stat_names[i], rec->bpf_stats[i]);
	STAT_PUT("stacks_map_full",
				     rec->bpf_stats[STKREC_STAT_USTACK_ENOMEM] +
					     rec->bpf_stats[STKREC_STAT_KSTACK_ENOMEM]);
	if (rec->ops->event_periods && rec->mode) {
		if (slow)
			rec->periods = rec->ops->event_periods(rec->mode);
		STAT_PUT("cpu_clock_periods", rec->periods);
	}
	/* Time sampled, as META duration_ns: rates (diff's) divide by it. */
	STAT_PUT("duration_ns", now - rec->file_start);
	/* With sample_events, the rate the kernel delivered (profile): the
	 * CPU time the events were attached for, summed over CPUs (a sum, so
	 * that merged captures add up). */
	if (rec->ops == &profile_mode_ops) {
		STAT_PUT("sampled_cpu_time_ns", recorder__sampled_cpu_time(rec, now));
		/* The busiest CPU's events, and how many CPUs were sampled: a
		 * CPU that idles can miss periods (a late timer in a halted
		 * vCPU fires once for several), which says nothing of the rate
		 * busy CPUs were sampled at; throttling lowers them all. */
		STAT_PUT("sample_events_busiest_cpu", rec->events_busiest);
		STAT_PUT("sampled_cpus", rec->o.nr_cpus);
	}
	STAT_PUT("flushes", rec->seq);
	STAT_PUT("quiet_intervals", rec->quiet_intervals);
	STAT_PUT("counts_half_full", rec->counts_half_full);
	STAT_PUT("stacks_written", ss.written);
	STAT_PUT("stack_lookup_missing", ss.missing);
	STAT_PUT("stacks_from_ring", ss.from_ring);
	STAT_PUT("stacks_resent", ss.resent);
	STAT_PUT("stacks_forgotten", ss.forgotten);
	STAT_PUT("stack_ring_skipped", ss.ring_skipped);
	STAT_PUT("stacks_deferred_same", ss.deferred_same);
	STAT_PUT("stacks_deferred_late", ss.late);
	STAT_PUT("stacks_written_forgotten", ss.written_forgotten);
	STAT_PUT("processes_snapshotted", ps.pm.snapshots);
	STAT_PUT("processes_exited", ps.exits);
	STAT_PUT("processes_exited_unseen", ps.exits_unseen);
	STAT_PUT("maps_err_gone", ps.maps_gone);
	STAT_PUT("maps_err_other", ps.maps_errors);
	STAT_PUT("maps_resnapshots", ps.resnapshots);
	STAT_PUT("build_ids_read", ps.pm.build_ids_read);
	STAT_PUT("build_id_missing", ps.pm.build_id_missing);
	STAT_PUT("build_id_errors", ps.pm.build_id_errors);
	STAT_PUT("ksyms_written", ks.written);
	STAT_PUT("kaddr_unknown", ks.unknown);
	/* Says which path named the kernel: absent (0) means /proc/kallsyms. */
	STAT_PUT("kaddrs_named_bpf", ks.named_bpf);
	STAT_PUT("kaddrs_named_known", ks.named_known);
	STAT_PUT("maps_from_events", ps.maps_events);
	STAT_PUT("maps_replaced_images", ps.old_images);
	STAT_PUT("vdso_embedded", ps.vdso_embedded);
	STAT_PUT("vdso_other", ps.pm.vdso_other);
	STAT_PUT("pid_ns_processes", pidns__recorded(rec->pidns));
	STAT_PUT("esym_binaries", es.binaries);
	STAT_PUT("esym_binary_errors", es.binary_errors);
	STAT_PUT("esym_symbols_written", es.symbols_written);
	STAT_PUT("esym_addrs_unnamed", es.addrs_unnamed);
	STAT_PUT("perf_map_files_read", es.perf_map_files);
	STAT_PUT("perf_map_errors", es.perf_map_errors);
	STAT_PUT("perf_map_refused", es.perf_map_refused);
	STAT_PUT("esym_binaries_refused", es.binaries_refused);
	STAT_PUT("build_ids_refused", ps.pm.files_refused);
	STAT_PUT("files_refused", recorder__files_refused(rec));
	STAT_PUT("perf_map_symbols_written", es.perf_map_symbols);
	STAT_PUT("esym_tables_evicted", es.tables_evicted);
	STAT_PUT("esym_tables_reread", es.tables_reread);
	STAT_PUT("esym_table_reread_errors", es.reread_errors);
	STAT_PUT("esym_tables_uncached", es.tables_uncached);
	STAT_PUT("esym_symbols_skipped", es.symbols_skipped);
	STAT_PUT("perf_map_bytes_read", es.perf_map_bytes);
	STAT_PUT("perf_map_restarts", es.perf_map_restarts);
	STAT_PUT("perf_map_lines_skipped", es.perf_map_lines_skipped);
	STAT_PUT("perf_map_addrs_unnamed_skipped", es.perf_map_misses_skipped);
	python__stats(rec->python, &pys);
	STAT_PUT("python_processes", pys.processes);
	STAT_PUT("python_unsupported", pys.unsupported);
	STAT_PUT("python_codes_written", pys.codes);
	STAT_PUT("python_codes_stale", pys.code_stale);
	STAT_PUT("python_codes_failed", pys.code_failed);
	STAT_PUT("python_codes_skipped", pys.code_skipped);
	STAT_PUT("python_codes_from_kernel", pys.code_from_kernel);
	STAT_PUT("python_codes_partial", pys.code_partial);
	STAT_PUT("python_code_bytes", pys.code_bytes);
	STAT_PUT("user_memory_peak_bytes", rec->mem.peak);
	/* The recorder's own peak resident memory (the kernel's high-water
	 * mark, VmHWM), whatever holds it: what --user-memory bounds and
	 * what it does not (libbpf, buffers, the allocator's slack). */
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		STAT_PUT("rss_peak_bytes", (uint64_t)ru.ru_maxrss * 1024);
	/* The heap in use (glibc's allocated bytes, all arenas, and its
	 * mmap'ed blocks) at its most at a flush that read it: what the
	 * recorder holds itself, without the BPF maps' pages and the
	 * allocator's slack, so that growth shows apart. */
	if (slow) {
		struct mallinfo2 mi = mallinfo2();
		uint64_t used = mi.uordblks + mi.hblkhd;	/* large blocks are mmap'ed */

		if (used > rec->heap_max)
			rec->heap_max = used;
	}
	STAT_PUT("heap_in_use_max", rec->heap_max);
	if (ps.watching) {
		STAT_PUT("mmap_event_records", ps.mw.records);
		STAT_PUT("mmap_events_lost", ps.mw.lost);
		STAT_PUT("mmap_event_execs", ps.mw.execs);
		STAT_PUT("mmap_event_mappings", ps.mw.mmaps);
		STAT_PUT("mmap_event_build_ids", ps.mw.kernel_build_ids);
		STAT_PUT("mmap_build_ids_read", ps.mw.build_id_reads);
		STAT_PUT("mmap_build_id_errors", ps.mw.build_id_errors);
		STAT_PUT("mmap_parents_read", ps.mw.seeded);
	}
	if (rec->uw) {
		struct unwinder_stats us;

		unwinder__stats(rec->uw, &us);
		STAT_PUT("unwind_tables", us.tables);
		STAT_PUT("unwind_tables_built", us.tables_built);
		STAT_PUT("unwind_rows", us.rows);
		STAT_PUT("unwind_bytes", us.bytes);
		STAT_PUT("unwind_build_ns", us.build_ns);
		STAT_PUT("unwind_processes", us.processes);
		STAT_PUT("unwind_tables_scanned", us.scanned);
		STAT_PUT("unwind_tables_debug_frame", us.debug_frame);
		STAT_PUT("unwind_tables_debuginfo", us.debuginfo);
		STAT_PUT("unwind_table_err_no_cfi", us.no_cfi);
		STAT_PUT("unwind_table_err_open", us.open_failed);
		STAT_PUT("unwind_table_err_refused", us.open_refused);
		STAT_PUT("unwind_table_err_unsupported", us.unsupported);
		STAT_PUT("unwind_table_err_budget", us.refused_budget);
		STAT_PUT("unwind_tables_evicted", us.evicted);
		STAT_PUT("unwind_tables_reloaded", us.reloaded);
		STAT_PUT("unwind_mappings_pending", us.pending);
		STAT_PUT("unwind_mappings_dropped", us.mappings_dropped);
		STAT_PUT("unwind_map_errors", us.map_errors);
		STAT_PUT("unwind_table_err_time", us.over_time);
		STAT_PUT("unwind_tables_queued", us.queued);
		STAT_PUT("unwind_tables_cached", us.cached);
		STAT_PUT("unwind_cache_stored", us.cache_stored);
		STAT_PUT("unwind_saved_dropped", us.saved_dropped);
	}
	if (rec->deferred) {
		struct deferred_stats ds;
		struct unwind_copy_stats cs;

		deferred__stats(rec->deferred, &ds);
		unwinder__copy_stats(rec->uw, &cs);
		STAT_PUT("unwind_deferred_unwound", ds.unwound);
		STAT_PUT("unwind_deferred_table_pending", cs.pending);
		STAT_PUT("unwind_deferred_missing", ds.missing);
		STAT_PUT("unwind_deferred_dropped", ds.dropped);
		STAT_PUT("unwind_deferred_waits", ds.waited);
	}
	if (rec->worker) {
		struct worker_stats ws;

		worker__stats(rec->worker, &ws);
		STAT_PUT("worker_jobs", ws.jobs);
		STAT_PUT("worker_queued_max", ws.queued_max);
		STAT_PUT("worker_wait_ns_max", ws.wait_ns_max);
		STAT_PUT("worker_run_ns_max", ws.run_ns_max);
		STAT_PUT("worker_cpu_ns", ws.cpu_ns);
		STAT_PUT("worker_share_waits", ws.share_waits);
	}
	if (rec->reader) {
		struct worker_stats ws;

		worker__stats(rec->reader, &ws);
		STAT_PUT("reader_jobs", ws.jobs);
		STAT_PUT("reader_wait_ns_max", ws.wait_ns_max);
		STAT_PUT("reader_run_ns_max", ws.run_ns_max);
		STAT_PUT("reader_cpu_ns", ws.cpu_ns);
		STAT_PUT("reader_share_waits", ws.share_waits);
		/* Of perf_map_bytes_read: all, the main loop reads none. */
		STAT_PUT("reader_perf_map_bytes", es.perf_map_bytes_off_loop);
	}
	/* What kept the main loop from a flush or a signal. */
	STAT_PUT("flush_late_ns_max", rec->flush_late_max_ns);
	STAT_PUT("loop_flush_ns_max", rec->loop_max_ns[LOOP_FLUSH]);
	for (i = 0; i < FLUSH_NR_STEPS; i++)
		if (rec->flush_step_ns_max[i])
			STAT_PUT(flush_step_stat[i], rec->flush_step_ns_max[i]);
	STAT_PUT("loop_sideband_ns_max", rec->loop_max_ns[LOOP_SIDEBAND]);
	STAT_PUT("loop_deferred_ns_max", rec->loop_max_ns[LOOP_DEFERRED]);
	STAT_PUT("loop_worker_ns_max", rec->loop_max_ns[LOOP_WORKER]);
	STAT_PUT("loop_rings_ns_max", rec->loop_max_ns[LOOP_RINGS]);
	STAT_PUT("loop_status_ns_max", rec->loop_max_ns[LOOP_STATUS]);
	/* What a recording costs between flushes is mostly its wakes. */
	STAT_PUT("loop_wakes", rec->loop_wakes);
	STAT_PUT("loop_sideband_wakes", rec->wk_side.wakes);
	if (rec->rot && per_file(rec, st, n))
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	/* A counter not in the STAT chunk is 0: leave zeros out (most loss
	 * counters, in most captures), except the ones a reader always wants. */
	for (i = 0, k = 0; i < n; i++)
		if (st[i].value || strcmp(st[i].name, "samples") == 0 ||
		    strcmp(st[i].name, "duration_ns") == 0 || strcmp(st[i].name, "flushes") == 0)
			st[k++] = st[i];
	return recorder__wrote(rec, stk_writer__add_stats(rec->w, st, k));
}

int recorder__write_start_meta(struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;
	struct meta m = {};
	int err;

	err = meta__add_host(&m);
	err = err ?: meta__add(&m, "mode", "%s", rec->ops->name);
	if (rec->ops == &profile_mode_ops) {
		err = err ?: meta__add(&m, "event", "cpu-clock");
		err = err ?: meta__add(&m, "frequency", "%u", o->frequency);
	} else if (rec->ops == &trace_mode_ops) {
		char *names = o->events ? ev_list__names(o->events) : NULL;

		err = err ?: names ? meta__add(&m, "events", "%s", names) : -ENOMEM;
		free(names);
		err = err ?: meta__add(&m, "trace_period", "%llu",
				       (unsigned long long)o->trace_period);
		err = err ?: meta__add(&m, "rate_cap", "%llu", (unsigned long long)o->rate_cap);
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
	err = err ?: meta__add(&m, "embed_symbols", "%s", esym_mode__name(o->embed_symbols));
	err = err ?: meta__add(&m, "user_memory_bytes", "%llu", (unsigned long long)rec->mem.limit);
	err = err ?: meta__add(&m, "mmap_events", "%s", rec->mw_state);
	err = err ?: meta__add(&m, "unwind", "%s", /* as requested */
			       o->unwind == RECORDER_UNWIND_FP ? "fp" :
			       o->unwind == RECORDER_UNWIND_DWARF ? "dwarf" : "auto");
	err = err ?: meta__add(&m, "python", "%s", rec->o.no_python ? "no" : "yes");
	if (o->duration_ns)
		err = err ?: meta__add(&m, "requested_duration_ns", "%llu",
				       (unsigned long long)o->duration_ns);
	if (o->cpu_list)
		err = err ?: meta__add(&m, "cpu_filter", "%s", o->cpu_list);
	if (o->nr_pids)
		err = err ?: meta__add_ids(&m, "pid_filter", o->pids, o->nr_pids);
	if (o->nr_tids)
		err = err ?: meta__add_ids(&m, "tid_filter", o->tids, o->nr_tids);
	if (o->cmd)
		err = err ?: meta__add_argv(&m, "target_command", o->cmd);
	if (err)
		err = recorder__errorf(rec, err, "out of memory");
	else
		err = recorder__wrote(rec, stk_writer__add_meta(rec->w, m.kv, m.n));
	meta__free(&m);
	return err;
}

int recorder__write_end_meta(struct recorder *rec, uint64_t now)
{
	struct meta m = {};
	int err;

	err = meta__add(&m, "duration_ns", "%llu", (unsigned long long)(now - rec->file_start));
	/* A rotated file's recording was set up before its start. */
	err = err ?: meta__add(&m, "setup_ns", "%llu", (unsigned long long)
			       (rec->file_start == rec->sample_start ? recorder__setup_ns(rec) : 0));
	err = err ?: meta__add(&m, "unwind_used", "%s", rec->uw_state);
	err = err ?: meta__add(&m, "end_reason", "%s", rec->end_reason);
	if (!err && rec->cmd_exit_code >= 0)
		err = meta__add(&m, "target_exit_status", "%d", rec->cmd_exit_code);
	if (!err)
		err = recorder__wrote(rec, stk_writer__add_meta(rec->w, m.kv, m.n));
	meta__free(&m);
	return err;
}
