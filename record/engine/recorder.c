// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder.c - the recording engine common to all modes: its lifecycle
 * (start, run, finish) and the epoll loop.  The steps of a flush are
 * recorder_flush.c's, their order and error rules flush.h's (everything a
 * row references is in the file before the row); what it says in the STAT
 * and META chunks is recorder_stats.c's.  The stacks (stackstore.c),
 * kernel symbols (ksymtab.c) and processes (procs.c) each keep their own
 * state; the recorder tells them what the rows reference and when to
 * write.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "child.h"
#include "clock.h"
#include "deferred.h"
#include "drain.h"
#include "esym.h"
#include "flush.h"
#include "idmap.h"
#include "kobjs.h"
#include "ksymtab.h"
#include "mode.h"
#include "pidns.h"
#include "procs.h"
#include "python.h"
#include "unwinder.h"
#include "recorder_int.h"
#include "rotation.h"
#include "stackstore.h"
#include "stkrec.h"
#include "targets.h"
#include "tcache.h"
#include "worker.h"

/* 100 ms steps a CMD gets to exit after SIGTERM before SIGKILL. */
#define CMD_TERM_GRACE_STEPS 50

#define STATUS_INTERVAL_NS NSEC_PER_SEC
/* Without a pidfd, how often the loop looks at the command's exit. */
#define CHILD_POLL_NS (NSEC_PER_SEC / 10)
/*
 * Intervals a quiet recording's counts stay in the kernel at most: the end
 * of the last of them flushes.  Each interval's rows keep their own chunk
 * (drain.h); a recorder killed with SIGKILL loses this many at most.  A
 * quiet flush costs ~250 us of CPU on a 2-vCPU VM, what perf -g -a spends
 * in 1.5 s of a recording whose stacks repeat (docs/performance.md).
 */
#define QUIET_INTERVALS_MAX 8

/* epoll data: what became readable. */
#define EV_RINGBUF 0
#define EV_CHILD 1
#define EV_MMAPWATCH 2
#define EV_STACKRING 3
#define EV_WORKER 4
#define EV_READER 5
#define EV_DEFERRED 6
#define EV_PYCODES 7

/* The recorder's threads' nice value, once CMD is forked (root only). */
#define RECORDER_NICE (-10)
#define EV_TARGET 16	/* + i: the i-th pidfd of the -p/-t targets */

static const struct rec_mode_ops *const modes[] = {
	&profile_mode_ops,
	&offcpu_mode_ops,
	&offwake_mode_ops,
	&trace_mode_ops,
};

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

/* A process procs__purge() found gone without its exit: as an exit. */
static void process_gone(void *ctx, uint32_t tgid)
{
	struct recorder *rec = ctx;

	esym__exited(rec->esym, tgid);
	pidns__exited(rec->pidns, tgid);
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
	wake__init(&rec->wk_side);
	wake__init(&rec->wk_defer);
	wake__init(&rec->wk_py);
	rec->cmd_exit_code = -1;
	rec->end_reason = "error";
	rec->maps.stacks_fd = rec->maps.stats_fd = rec->maps.events_fd = -1;
	rec->maps.stack_ring_fd = -1;
	rec->maps.tgids_fd = rec->maps.tids_fd = -1;
	rec->maps.ksym_io_fd = rec->maps.ksym_prog_fd = -1;
	rec->maps.unwind.rows_fd = rec->maps.unwind.pages_fd = rec->maps.unwind.procs_fd = -1;
	rec->maps.py_procs_fd = rec->maps.py_code_ring_fd = -1;
	rec->stacks = stackstore__new(opts->stack_storage_size);
	rec->ksyms = ksymtab__new();
	rec->procs = procs__new();
	membudget__init(&rec->mem, opts->user_memory ? opts->user_memory : RECORDER_USER_MEMORY);
	rec->esym = esym__new(opts->embed_symbols, &rec->mem);
	rec->pidns = pidns__new();
	if (rec->procs)
		procs__set_on_gone(rec->procs, process_gone, rec);
	rec->nr_cpus_possible = libbpf_num_possible_cpus();
	if (rec->nr_cpus_possible > 0)
		rec->stat_vals = calloc((size_t)rec->nr_cpus_possible * STKREC_STAT_SETS *
						STKREC_NR_STATS,
					sizeof(uint64_t));
	if (rec->stat_vals && (opts->rotate_ns || opts->rotate_bytes)) {
		rec->pattern = opts->output;
		rec->rot = rotation__new(opts->keep);
		rec->events_base = calloc((size_t)rec->nr_cpus_possible, sizeof(uint64_t));
		rec->events_last = calloc((size_t)rec->nr_cpus_possible, sizeof(uint64_t));
		if (!rec->rot || !rec->events_base || !rec->events_last ||
		    (rec->stacks && stackstore__keep_written(rec->stacks))) {
			recorder__free(rec);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (!rec->stacks || !rec->ksyms || !rec->procs || !rec->esym || !rec->pidns || !rec->stat_vals) {
		recorder__free(rec);
		errno = ENOMEM;
		return NULL;
	}
	return rec;
}

/* ---- writing chunks -------------------------------------------------- */

/* A failed write fails the recording. */
int recorder__write_err(struct recorder *rec, int err)
{
	if (err && !rec->write_failed) {
		rec->write_failed = 1;
		/* Chunks a flush held that the failed write lost. */
		rec->chunks -= stk_writer__dropped(rec->w);
		recorder__errorf(rec, err, "%s: %s while writing; %llu chunks kept", rec->o.output,
				 strerror(-err), (unsigned long long)rec->chunks);
	}
	return err;
}

/* Account for one add_*() call. */
int recorder__wrote(struct recorder *rec, int err)
{
	if (!err)
		rec->chunks++;
	return recorder__write_err(rec, err);
}

static int add_live(void *ctx, int64_t id)
{
	return id >= 0 ? idmap__set(ctx, (uint64_t)id, 1) : 0;
}

static int collect_live(void *ctx, struct idmap *live)
{
	struct recorder *rec = ctx;

	return rec->ops->live_stacks(rec->mode, add_live, live);
}

/* ---- what the rows reference (mode.h) ------------------------------------ */

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rec = ctx;
	const struct stkrec_event *e = data;
	char comm[16];

	if (size < sizeof(*e))
		return 0;
	rec->news = 1;
	switch (e->type) {
	case STKREC_EV_NEW_PROC:
		memcpy(comm, e->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		/* Returning an error would stop ring_buffer__consume(); a
		 * snapshot that fails for lack of memory is retried when a
		 * row of the process is drained. */
		procs__snapshot(rec->procs, e->tgid, comm, rec->seq);
		pidns__see(rec->pidns, e->tgid, e->ns_tgid, e->pid_ns, mono_ns());
		break;
	case STKREC_EV_EXIT:
		procs__exited(rec->procs, e->tgid, rec->seq);
		esym__exited(rec->esym, e->tgid);
		pidns__exited(rec->pidns, e->tgid);
		break;
	case STKREC_EV_MAPS_CHANGED:
		/* A known process mapped code (a dlopen): its records into
		 * the unwinder and the Python walk now, and again in a
		 * moment for those the kernel was still writing. */
		procs__drain_events(rec->procs);
		wake__hold(&rec->wk_side, mono_ns());
		break;
	case STKREC_EV_COUNTS_FILLING:
		/* Flushed at this interval's end (news), not later. */
		rec->counts_half_full++;
		break;
	case STKREC_EV_MAPS_STALE:
		/* A pending table the stack needs is built in the reload. */
		if (!e->addr || !unwinder__want(rec->uw, e->tgid, e->addr))
			procs__unwind_stale(rec->procs, e->tgid);
		break;
	}
	/*
	 * Each event may read /proc or build a table: on a machine starting
	 * processes faster than that keeps up, taking events until none are
	 * left starved the flushes (a 20 s recording made one; the counts
	 * maps overflowed, the side-band lost records).  Past the deadline,
	 * stop after this one (handled: nothing is lost); the rest wait in
	 * the ring buffer for the next round.
	 */
	if (rec->events_until && mono_ns() >= rec->events_until)
		return -EAGAIN;
	return 0;
}

int recorder__see_task(struct recorder *rec, uint32_t tgid, const char comm[16])
{
	return procs__see(rec->procs, tgid, comm, rec->seq);
}

int recorder__see_image(struct recorder *rec, uint32_t tgid, const char key_comm[16],
			uint64_t image_ns, int64_t user_stack, uint64_t *end_ns)
{
	const struct stkrec_stack *s;
	uint64_t next_end, leaf;
	char comm[16];
	int err;

	memcpy(comm, key_comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	err = procs__see_image(rec->procs, tgid, comm, image_ns, end_ns);
	if (err || !*end_ns || user_stack < 0)
		return err;
	/*
	 * A sample taken in the last steps of execve, once the new image's
	 * registers are set but before sched_process_exec stamps its time,
	 * belongs to the next image: its leaf says so.  Its stack is new
	 * (the new image's addresses are, ASLR'd), so its frames are held
	 * or were written in this flush; one written in an earlier flush
	 * stays in the image it was counted in.
	 */
	s = stackstore__frames(rec->stacks, (uint64_t)user_stack);
	if (!s || !s->nr || procs__image_covers(rec->procs, tgid, image_ns, 0, s->ips[0]))
		return 0;
	leaf = s->ips[0];
	err = procs__see_image(rec->procs, tgid, comm, *end_ns, &next_end);
	if (!err && procs__image_covers(rec->procs, tgid, *end_ns, !next_end, leaf))
		*end_ns = next_end;
	return err;
}

int recorder__see_kaddr(struct recorder *rec, uint64_t addr)
{
	return ksymtab__see(rec->ksyms, addr);
}

void recorder__take_new_stacks(struct recorder *rec)
{
	stackstore__take_ring(rec->stacks);
}

/* A user stack's frames, new in the file: their symbols, and maybe news
 * of their process's mappings. */
int recorder__user_stack_added(void *ctx, uint32_t tgid, const struct stkrec_stack *s)
{
	struct recorder *rec = ctx;
	int err = procs__check_stack(rec->procs, tgid, s, rec->seq);

	uint32_t native = stkrec_native_nr(s->ips, s->nr < STKREC_MAX_NR ? s->nr : STKREC_MAX_NR);

	err = err ?: esym__queue(rec->esym, tgid, (const uint64_t *)s->ips,
				 native < STKREC_MAX_DEPTH ? native : STKREC_MAX_DEPTH);
	/* Its code objects were tried as the stack came out of the ring
	 * (stackstore__set_python()); those not tried then (the process's
	 * layout not checked yet) are now.  Each is read at most once. */
	return err ?: python__see_stack(rec->python, tgid, (const uint64_t *)s->ips + native,
				       s->nr - native);
}

void recorder__prefetch_stack(struct recorder *rec, int64_t ref)
{
	stackstore__prefetch(rec->stacks, ref);
}

/* A new kernel stack's frames need symbols; a new user stack may show
 * that its process mapped more since its snapshot. */
int recorder__see_stack(struct recorder *rec, uint32_t tgid, int64_t *ref)
{
	const struct stkrec_stack *s;
	uint64_t id = (uint64_t)*ref;
	uint32_t i;
	int err;

	err = stackstore__see(rec->stacks, tgid, ref, &s);
	if (err || !s)
		return err;
	if (!(id & STKREC_STACK_KERNEL_BIT))
		return recorder__user_stack_added(rec, tgid, s);
	for (i = 0; i < s->nr && i < STKREC_MAX_DEPTH; i++) {
		err = ksymtab__see(rec->ksyms, s->ips[i]);
		if (err)
			return err;
	}
	return 0;
}

/* ---- flushing (the steps: recorder_flush.c) ----------------------------- */

/* @final: the recording's last flush; @file_end: its file's last. */
static int recorder__flush(struct recorder *rec, int final, int file_end)
{
	struct flush_ctx fc = { .final = final, .file_end = file_end, .t1 = mono_ns(),
				.step_ns_max = rec->flush_step_ns_max };
	int err, err2;

	/* The last interval ends where sampling did, not after the wait
	 * for the tables its stacks need. */
	if (final && rec->t_detached && rec->t_detached > rec->t0 && rec->t_detached < fc.t1)
		fc.t1 = rec->t_detached;

	if (rec->write_failed)
		return -EIO;
	/* A flush's chunks go out together, in one write() when small. */
	stk_writer__hold(rec->w);
	err = flush__run(&recorder__flush_ops, rec, &fc);
	err2 = rec->w ? stk_writer__release(rec->w) : 0;
	if (err2 && !rec->write_failed)
		err2 = recorder__write_err(rec, err2);
	return err ?: (rec->write_failed ? err2 : 0);
}

static void recorder__status(struct recorder *rec, uint64_t now)
{
	struct recorder_status st = {};

	if (!rec->o.on_status)
		return;
	recorder__read_bpf_stats(rec);
	st.elapsed_ns = now - rec->sample_start;
	st.offcpu = rec->ops == &offcpu_mode_ops || rec->ops == &offwake_mode_ops;
	st.trace = rec->ops == &trace_mode_ops;
	st.samples = rec->bpf_stats[STKREC_STAT_SAMPLES];
	st.blocked_ns = rec->bpf_stats[STKREC_STAT_BLOCKED_NS];
	st.stacks = stackstore__count(rec->stacks);
	/* What the capture misses: samples not counted, counted ones
	 * without a stack for want of room, process events.  (Stacks not
	 * stored for episodes -m/-M drop anyway are no loss.) */
	st.lost = rec->bpf_stats[STKREC_STAT_COUNTS_FULL] + rec->bpf_stats[STKREC_STAT_STACK_LOST] +
		  rec->bpf_stats[STKREC_STAT_EVENTS_LOST];
	rec->o.on_status(&st, rec->o.ctx);
}

/* ---- start ------------------------------------------------------------- */

static int write_kernel_info(struct recorder *rec)
{
	uint64_t text, etext;
	struct kobjs ko;
	int err;

	ksymtab__text(rec->ksyms, &text, &etext);
	err = kobjs__read(&ko, "/sys", "/proc/modules", text, etext);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	err = recorder__wrote(rec, stk_writer__add_kobjs(rec->w, ko.objs, ko.n));
	kobjs__free(&ko);
	if (err || !rec->o.kallsyms_full)
		return err;
	/* --kallsyms=full: the whole table, once. */
	return recorder__write_err(rec, ksymtab__write_all(rec->ksyms, rec->w, &rec->chunks));
}

/* Read /proc/kallsyms; refuse if it hides the addresses. */
static int load_kallsyms(struct recorder *rec)
{
	int err = ksymtab__load_kallsyms(rec->ksyms, "/proc/kallsyms");

	if (err)
		return recorder__errorf(rec, err, "/proc/kallsyms: %s", strerror(-err));
	if (ksymtab__kallsyms_hidden(rec->ksyms))
		return recorder__errorf(rec, -EPERM,
					"/proc/kallsyms: kernel addresses are hidden from this process "
					"(kernel.kptr_restrict); run as root with CAP_SYSLOG, "
					"or use -U for user stacks only");
	return 0;
}

/* Kernel symbols from the BPF symbolizer if the mode has one and it runs,
 * else from /proc/kallsyms. */
static int setup_ksyms(struct recorder *rec)
{
	if (rec->o.user_stacks_only || rec->o.kallsyms_full)
		return 0;
	if (rec->maps.ksym_prog_fd >= 0 &&
	    ksymtab__use_bpf(rec->ksyms, rec->maps.ksym_io_fd, rec->maps.ksym_prog_fd) == 0)
		return 0;
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
	ev.data.u32 = EV_STACKRING;
	if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, stackstore__ring_fd(rec->stacks), &ev) < 0)
		return -errno;
	if (rec->child && child__pidfd(rec->child) >= 0) {
		ev.data.u32 = EV_CHILD;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, child__pidfd(rec->child), &ev) < 0)
			return -errno;
	}
	/*
	 * A new process's mappings reach the unwinder at its first sample
	 * (the events ring wakes the loop, which reads the side-band's
	 * records then: most processes a machine starts are never sampled),
	 * a known one's when its next sample sees more code mapped; the
	 * side-band itself wakes the loop each quarter of a CPU's ring
	 * (mmapwatch.c).  The first copy of a stack whose tables are not in
	 * yet (lost once their ring is full) and the first code object a
	 * Python walk meets (read while the process lives) wake it too.
	 * Each is then held off a few ms, so a burst costs a few wakes, a
	 * quiet machine none.
	 */
	if (procs__nr_fds(rec->procs)) {
		size_t nr = procs__nr_fds(rec->procs);
		int *fds = calloc(nr, sizeof(*fds)), err;

		if (!fds)
			return -ENOMEM;
		for (i = 0; i < nr; i++)
			fds[i] = procs__fd(rec->procs, i);
		err = wake__add(&rec->wk_side, rec->epfd, EV_MMAPWATCH, fds, nr);
		free(fds);
		if (err)
			return err;
	}
	if (rec->deferred) {
		int fd = deferred__fd(rec->deferred), err;

		err = wake__add(&rec->wk_defer, rec->epfd, EV_DEFERRED, &fd, 1);
		if (err)
			return err;
	}
	if (python__codes_fd(rec->python) >= 0) {
		int fd = python__codes_fd(rec->python), err;

		err = wake__add(&rec->wk_py, rec->epfd, EV_PYCODES, &fd, 1);
		if (err)
			return err;
	}
	if (rec->worker) {
		ev.data.u32 = EV_WORKER;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, worker__fd(rec->worker), &ev) < 0)
			return -errno;
	}
	if (rec->reader) {
		ev.data.u32 = EV_READER;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, worker__fd(rec->reader), &ev) < 0)
			return -errno;
	}
	for (i = 0; i < targets__nr_fds(rec->targets); i++) {
		ev.data.u32 = EV_TARGET + (uint32_t)i;
		if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, targets__fd(rec->targets, i), &ev) < 0)
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
	uint32_t child_pid;
	int err;

	if (o->no_mmap_events) {
		snprintf(rec->mw_state, sizeof(rec->mw_state), "off (--no-mmap-events)");
		return 0;
	}
	follow = o->cmd ? MMAPWATCH_TREE : o->nr_pids ? MMAPWATCH_LISTED : MMAPWATCH_ALL;
	/* -- CMD: CMD's own pid, whose tree the watcher follows. */
	child_pid = rec->child ? (uint32_t)child__pid(rec->child) : 0;
	err = procs__watch(rec->procs, follow, rec->child ? &child_pid : o->pids,
			   rec->child ? 1 : o->nr_pids);
	if (err == -ENOMEM)
		return recorder__errorf(rec, err, "out of memory");
	if (err) {
		snprintf(rec->mw_state, sizeof(rec->mw_state), "unavailable (%s)", strerror(-err));
		return 0;
	}
	/* MMAP2 build-ids need Linux 5.12+; before, the files are read. */
	snprintf(rec->mw_state, sizeof(rec->mw_state), "%s",
		 procs__kernel_build_ids(rec->procs)
			 ? "on, build-ids from the kernel"
			 : "on, build-ids from the files (kernel before 5.12)");
	return 0;
}

/* The executable mapping of @tgid holding @addr, for a deferred stack's
 * walk: the process's latest snapshot (its rows' tasks are seen first). */
static const struct stk_mapping *deferred_mapping(void *ctx, uint32_t tgid, uint64_t addr)
{
	return procs__mapping_any(ctx, tgid, addr);
}

/* A copy that cannot wait for its table (deferred__set_now()). */
static int deferred_now(void *ctx, uint32_t tgid, uint64_t pc)
{
	return procs__gone(ctx, tgid) || !procs__mapping(ctx, tgid, pc);
}

/* How long the setup waits for the tables of -p's processes. */
#define SETUP_TABLES_NS (2 * 1000000000ull)

/* How long the end waits for the tables copied stacks still need (a
 * stop signal: a shorter while, the recording stops within 0.5 s). */
#define FINAL_TABLES_NS (1000000000ull)
#define FINAL_TABLES_SIGNAL_NS (200000000ull)

/* How long a rotation waits for them (sampling goes on meanwhile, its
 * rings not read: no longer than a slow flush). */
#define ROTATE_TABLES_NS (200000000ull)

/* Let the worker finish the tables (unwind and symbol tables) queued so
 * far, up to monotonic @until or (if @stoppable) a stop signal. */
void recorder__wait_worker(struct recorder *rec, uint64_t until, int what, int stoppable)
{
	struct pollfd pfd[2] = { { .fd = worker__fd(rec->worker), .events = POLLIN },
				 { .fd = rec->reader ? worker__fd(rec->reader) : -1, .events = POLLIN } };

	while ((((what & WAIT_UNWIND) && rec->uw && unwinder__building(rec->uw)) ||
		((what & WAIT_SYMBOLS) && esym__reading(rec->esym))) &&
	       !(stoppable && rec->o.stop && *rec->o.stop)) {
		uint64_t now = mono_ns();

		if (now >= until)
			break;
		struct timespec ts = { .tv_sec = (time_t)((until - now) / 1000000000ull),
				       .tv_nsec = (long)((until - now) % 1000000000ull) };

		/* The stop signals are taken here as in the main loop's wait. */
		if (ppoll(pfd, 2, &ts, rec->o.wait_mask) < 0 && errno != EINTR)
			break;
		worker__collect(rec->worker);
		if (rec->reader)
			worker__collect(rec->reader);
	}
}

/*
 * The last flush of a file (@final: of the recording).  A copied stack
 * whose table is being built may be written a flush or two after the rows
 * that reference it (flush.h); there is no later flush in this file, so
 * the tables being built are waited for until monotonic @until (or, not
 * @final, a stop signal), every copy its rows reference is unwound with
 * what is in by then (deferred__set_last()), and the symbols being read
 * for them are waited for as long: the file holds every stack its rows
 * name.  Returns as recorder__flush().
 */
static int recorder__flush_last(struct recorder *rec, int final, uint64_t until)
{
	int err;

	rec->final_until = until;
	deferred__take(rec->deferred);
	deferred__set_last(rec->deferred, 1);
	if (rec->deferred && deferred__waiting(rec->deferred) && rec->worker)
		recorder__wait_worker(rec, until, WAIT_UNWIND, !final);
	err = recorder__flush(rec, final, 1);
	if (!final)
		deferred__set_last(rec->deferred, 0);
	return err;
}

/* The Python frame walk's side (record/python/): before the unwinder,
 * so that the -p processes it loads now are looked at for both. */
static int open_python(struct recorder *rec)
{
	rec->python = python__new(rec->o.no_python ? -1 : rec->maps.py_procs_fd);
	if (!rec->python)
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	if (python__set_code_ring(rec->python, rec->maps.py_code_ring_fd))
		return recorder__errorf(rec, -errno, "python code ring: %s", strerror(errno));
	procs__set_python(rec->procs, rec->python);
	stackstore__set_python(rec->stacks, python__see_words, rec->python);
	return 0;
}

/* The .eh_frame unwinder's manager over the mode's maps, unless it is
 * off; says in uw_state (META unwind_used) what runs. */
static int open_unwinder(struct recorder *rec)
{
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
	unwinder__set_worker(rec->uw, rec->worker);
	unwinder__set_budget(rec->uw, &rec->mem);
	if (!rec->o.unwind_cache || strcmp(rec->o.unwind_cache, "none") != 0)
		unwinder__set_cache_dir(rec->uw, rec->o.unwind_cache ?: TCACHE_DIR);
	/* Samples whose tables are not ready are copied, unwound later. */
	rec->deferred = deferred__new(rec->maps.unwind.defer_fd, rec->uw,
				      rec->o.unwind == RECORDER_UNWIND_AUTO, deferred_mapping, rec->procs);
	if (!rec->deferred)
		return recorder__errorf(rec, -errno, "defer ring: %s", strerror(errno));
	deferred__set_now(rec->deferred, deferred_now);
	stackstore__set_resolver(rec->stacks, deferred__resolve, rec->deferred);
	snprintf(rec->uw_state, sizeof(rec->uw_state), "%s",
		 rec->o.unwind == RECORDER_UNWIND_DWARF ? "dwarf" : "auto");
	/* -p processes run already: their tables before their first sample
	 * (others get them when first seen), waited for a while. */
	procs__set_unwinder(rec->procs, rec->uw, rec->o.pids, rec->o.nr_pids);
	if (rec->o.nr_pids)
		recorder__wait_worker(rec, mono_ns() + SETUP_TABLES_NS, WAIT_UNWIND, 1);
	return 0;
}

uint64_t recorder__setup_ns(const struct recorder *rec)
{
	return rec->setup_ns;
}

const char *recorder__unwind_state(const struct recorder *rec)
{
	return rec->uw_state;
}

/*
 * Open the output that starts at rec->wall_start and rec->mono_start:
 * -o, or (rotating) the name the pattern gives then, claimed first.
 * Returns 0 or -errno with recorder__errorf() called.
 */
static int open_output(struct recorder *rec)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	const struct recorder_opts *o = &rec->o;
	sigset_t blocked;
	int err;

	if (rec->rot) {
		err = rotation__claim(rec->pattern, (time_t)(rec->wall_start / NSEC_PER_SEC),
				      rec->path, sizeof(rec->path));
		if (err == -EEXIST)
			return recorder__errorf(rec, err, "%s: every name up to suffix -%d exists; put more of the time in -o (e.g. %%H%%M%%S)",
						rec->pattern, ROTATION_MAX_SUFFIX);
		if (err == -EINVAL)
			return recorder__errorf(rec, err, "-o %s: the pattern gives no file name", rec->pattern);
		if (err)
			return recorder__errorf(rec, err, "%s: %s", rec->pattern, strerror(-err));
		rec->o.output = rec->path;
	}
	wo.wall_start_ns = rec->wall_start;
	wo.mono_start_ns = rec->mono_start;
	/* zstd level 1: against the default 3, a quarter to a third less
	 * recorder CPU under load (stackfan, 999 Hz on both of this VM's
	 * CPUs) for a file 3% bigger.
	 * stkreport merge keeps 3: it runs once, off the production box. */
	wo.compression_level = 1;
	/* Payloads of at most 4 KiB (a quiet flush's STAT, rows, stacks):
	 * zstd's fast level -1, without the entropy tables whose set-up is
	 * most of such a payload's cost: 7.6 -> 4.1 us for a 1.5 KB STAT,
	 * 4.6 -> 1.5 us for 0.5 KB of rows, for 0-15% more bytes. */
	wo.small_compression_level = -1;
	/* A FIFO's open waits for its reader: a stop ends that wait. */
	if (o->wait_mask)
		sigprocmask(SIG_SETMASK, o->wait_mask, &blocked);
	rec->w = stk_writer__open(o->output, &wo);
	err = rec->w ? 0 : -errno;
	if (o->wait_mask)
		sigprocmask(SIG_SETMASK, &blocked, NULL);
	/* The claimed name goes with a capture that could not start. */
	if (err && rec->rot)
		unlink(rec->path);
	if (err == -EINTR)
		return recorder__errorf(rec, err, "%s: stopped while opening it", o->output);
	if (err == -EINVAL)
		return recorder__errorf(rec, err, "%s: not a regular file, character device or FIFO",
					o->output);
	if (err == -EBUSY)
		return recorder__errorf(rec, err, "%s: another stkrec is writing it; choose another -o",
					o->output);
	if (err)
		return recorder__errorf(rec, err, "%s: %s", o->output, strerror(-err));
	return 0;
}

int recorder__start(struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;
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
	rec->wall_start = clock_ns(CLOCK_REALTIME);
	rec->mono_start = mono_ns();
	rec->t0 = rec->mono_start;
	err = open_output(rec);
	if (err)
		return err;
	/* CMD first, stopped before its exec: the watcher's events are
	 * opened on it and see the exec. */
	if (o->cmd) {
		rec->child = child__spawn(o->cmd);
		if (!rec->child) {
			err = recorder__errorf(rec, -errno, "fork: %s", strerror(errno));
			goto fail;
		}
	}
	err = open_mmapwatch(rec);
	err = err ?: recorder__write_start_meta(rec);
	if (err)
		goto fail;
	err = rec->ops->open(&rec->mode, o, rec->child != NULL, &rec->maps, rec);
	if (!err) {
		stackstore__set_map(rec->stacks, rec->maps.stacks_fd);
		if (rec->ops->live_stacks)
			stackstore__set_live(rec->stacks, collect_live, rec);
		/* The only way frames reach user space. */
		err = stackstore__set_ring(rec->stacks, rec->maps.stack_ring_fd);
		if (err)
			err = recorder__errorf(rec, err, "stack ring buffer: %s", strerror(-err));
	}
	if (!err) {
		/*
		 * Ahead of the traced programs (root may; else nice stays 0):
		 * the main loop and the worker at one priority, nice -10.  The
		 * worker: a table samples wait for is worth more than the CPU
		 * it takes (bounded per build and per user), cc1's took 1.4 s
		 * beside two hogs at nice 0, 0.3 s at -10.  The main thread
		 * too, after CMD's fork (CMD keeps the caller's nice): at 0
		 * beside a worker at -10 it had a tenth of their CPU and
		 * flushed 1.3 s late.  The worker inherits it.
		 */
		setpriority(PRIO_PROCESS, (id_t)gettid(), RECORDER_NICE);
		/* Tables (unwind, symbols) are built and read off the main
		 * loop: no file can hold up a flush, a signal or the end. */
		rec->worker = worker__new(WORKER_NICE_SAME);
		/* Symbol tables on a thread of their own: a read never waits
		 * for a table build (CFI bombs' take a second), nor a build
		 * that copied stacks wait for behind reads. */
		rec->reader = rec->worker ? worker__new(WORKER_NICE_SAME) : NULL;
		if (!rec->reader)
			err = recorder__errorf(rec, -errno, "worker thread: %s", strerror(errno));
		else
			esym__set_worker(rec->esym, rec->reader);
	}
	err = err ?: open_python(rec);
	err = err ?: open_unwinder(rec);
	err = err ?: setup_ksyms(rec);
	err = err ?: write_kernel_info(rec);
	if (err)
		goto fail;
	rec->file_base = stk_writer__bytes(rec->w);
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
	if (o->nr_pids || o->nr_tids) {
		rec->targets = targets__open(o->pids, o->nr_pids, o->tids, o->nr_tids);
		if (!rec->targets) {
			err = recorder__errorf(rec, -ENOMEM, "out of memory");
			goto fail;
		}
	}
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
	/* Started: the capture takes -o's place (see stk_writer__open). */
	err = stk_writer__commit(rec->w);
	if (err) {
		err = recorder__errorf(rec, err, "%s", stk_writer__errmsg(rec->w));
		goto fail;
	}
	/* Sampling runs from the attach on; the setup before it (loading,
	 * preallocating the maps: seconds for a big stacks set) does not eat
	 * DURATION, and the first interval starts here. */
	rec->sample_start = mono_ns();
	drain__start(rec->maps.drain, rec->sample_start, o->flush_interval_ns);
	rec->next_flush = rec->sample_start + o->flush_interval_ns;
	rec->t0 = rec->sample_start;
	rec->file_start = rec->sample_start;
	rec->setup_ns = rec->sample_start > rec->mono_start ? rec->sample_start - rec->mono_start : 0;
	return 0;
fail:
	/* Nothing stays attached and no half-made file stays behind. */
	ring_buffer__free(rec->rb);
	rec->rb = NULL;
	procs__unwatch(rec->procs);
	procs__set_unwinder(rec->procs, NULL, NULL, 0);
	procs__set_python(rec->procs, NULL);
	python__free(rec->python);
	rec->python = NULL;
	esym__set_worker(rec->esym, NULL);
	worker__free(rec->reader);
	rec->reader = NULL;
	worker__free(rec->worker);
	rec->worker = NULL;
	deferred__free(rec->deferred);
	rec->deferred = NULL;
	unwinder__free(rec->uw);
	rec->uw = NULL;
	if (rec->mode) {
		rec->ops->detach(rec->mode);
		rec->ops->free(rec->mode);
		rec->mode = NULL;
		rec->maps.drain = NULL;
	}
	child__free(rec->child);
	rec->child = NULL;
	targets__free(rec->targets);
	rec->targets = NULL;
	/* Only the temporary file we made goes: -o is as it was. */
	stk_writer__discard(rec->w);
	rec->w = NULL;
	if (rec->rot)
		unlink(rec->path);	/* claimed by us, empty */
	return err;
}

/* ---- run and finish ---------------------------------------------------- */

/*
 * New Python code objects, and the new stacks that name them: those the
 * kernel could not copy are read from the process before it frees them or
 * exits (most of a short script's, not only those of its last flush).
 * Returns whether there were any.
 */
static int python_take(struct recorder *rec)
{
	int n = python__take_codes(rec->python);

	stackstore__take_ring(rec->stacks);
	return n > 0;
}

/* The side-band's new records; whether there were any. */
static int sideband_take(struct recorder *rec)
{
	return procs__drain_events(rec->procs);
}

/* Copies of stacks whose tables were not in yet: taken before their
 * ring is full; whether there were any. */
static int deferred_take(struct recorder *rec)
{
	return deferred__take(rec->deferred) > 0;
}

/* The sources the loop holds off between wakes (wake.h), each with what
 * reads it, its epoll tag and its step. */
struct held {
	struct wake *w;
	int (*take)(struct recorder *rec);
	uint32_t tag;
	enum loop_step step;
	/* What it takes ends a quiet stretch (recorder__news()); the
	 * side-band reads every process's records: procs__events_gen()
	 * says whether one of ours changed. */
	int news;
};

#define NR_HELD 3

/* The held source whose epoll tag is @tag, or NULL. */
static const struct held *held_of(const struct held h[NR_HELD], uint32_t tag)
{
	size_t i;

	for (i = 0; i < NR_HELD; i++)
		if (h[i].tag == tag)
			return &h[i];
	return NULL;
}

static void held_sources(struct recorder *rec, struct held h[NR_HELD])
{
	h[0] = (struct held){ &rec->wk_side, sideband_take, EV_MMAPWATCH, LOOP_SIDEBAND, 0 };
	h[1] = (struct held){ &rec->wk_defer, deferred_take, EV_DEFERRED, LOOP_DEFERRED, 1 };
	h[2] = (struct held){ &rec->wk_py, python_take, EV_PYCODES, LOOP_RINGS, 1 };
}

/* A main loop step done: its time, if the longest yet.  Returns now. */
static uint64_t loop_step_done(struct recorder *rec, enum loop_step step, uint64_t t0)
{
	uint64_t t1 = mono_ns();

	if (t1 - t0 > rec->loop_max_ns[step])
		rec->loop_max_ns[step] = t1 - t0;
	return t1;
}

/*
 * Close the current file with its index and trailer (stk_writer__close_as():
 * a file removed or replaced while written is said so, and saved beside);
 * rotating, remember it and delete what --keep leaves out.  Returns 0 or
 * the first error, with recorder__errorf() called.
 */
static int close_output(struct recorder *rec)
{
	uint64_t bytes = stk_writer__bytes(rec->w);
	char where[PATH_MAX + 32];
	const char *failed;
	int err;

	err = stk_writer__close_as(rec->w, where, sizeof(where));
	rec->w = NULL;
	rec->bytes_done += bytes;
	if (err == -ENOENT || err == -ESTALE) {
		/* rm, or another file put in its place, while recording. */
		return recorder__errorf(rec, err, "%s was %s during the recording; %s%s", rec->o.output,
					err == -ENOENT ? "removed" : "replaced by another file",
					where[0] ? "the capture is saved as "
						 : "the capture is lost: no copy could be made beside it "
						   "(is its directory writable and not full?)",
					where);
	}
	if (err) {
		if (!rec->write_failed)
			recorder__errorf(rec, err, "%s: %s while closing; %llu chunks kept",
					 rec->o.output, strerror(-err), (unsigned long long)rec->chunks);
		return err;
	}
	if (!rec->rot)
		return 0;
	if (rotation__done(rec->rot, rec->o.output))
		return recorder__errorf(rec, -ENOMEM, "out of memory");
	/* A file --keep cannot delete stays: said once, at the end. */
	err = rotation__prune(rec->rot, &failed);
	if (err && !rec->keep_err[0])
		snprintf(rec->keep_err, sizeof(rec->keep_err), "--keep: %s: %s", failed,
			 strerror(-err));
	return 0;
}

/*
 * Rotate: flush, end this file as the end of a recording ends it (META,
 * STAT, index and trailer), and start the next one at the end of the
 * interval just flushed, with what its rows will need written anew: the
 * rows of every interval are in exactly one file.  Returns 0 or -errno
 * (recorder__errmsg() says what failed): the recording stops.
 */
static int recorder__rotate(struct recorder *rec)
{
	uint64_t end, now;
	int err;

	err = recorder__flush_last(rec, 0, mono_ns() + ROTATE_TABLES_NS);
	if (err)
		return err;
	/* The file ends, and the next begins, where its last interval ends. */
	end = rec->t0;
	rec->end_reason = "rotated";
	err = recorder__write_end_meta(rec, end);
	err = err ?: recorder__write_stats(rec, end, 1);
	rec->end_reason = "error";
	if (err)
		return err;
	rec->stacks_done += stackstore__count(rec->stacks);
	err = close_output(rec);
	if (err)
		return err;
	err = recorder__stats_new_file(rec);
	err = err ?: stackstore__new_file(rec->stacks);
	err = err ?: procs__new_file(rec->procs);
	err = err ?: pidns__new_file(rec->pidns, end);
	if (err)
		return recorder__errorf(rec, err, "out of memory");
	ksymtab__new_file(rec->ksyms);
	now = mono_ns();
	rec->mono_start = end;
	rec->wall_start = clock_ns(CLOCK_REALTIME) - (now - end);
	rec->file_start = end;
	err = open_output(rec);
	if (err)
		return err;
	esym__new_file(rec->esym, rec->w);
	python__new_file(rec->python);
	err = recorder__write_start_meta(rec);
	err = err ?: write_kernel_info(rec);
	if (!err) {
		err = stk_writer__commit(rec->w);
		if (err)
			recorder__errorf(rec, err, "%s", stk_writer__errmsg(rec->w));
	}
	rec->file_base = rec->w ? stk_writer__bytes(rec->w) : 0;
	rec->file_rows = 0;
	return err;
}

/* Rotating: the file is due to end (its period or a request). */
static int rotation_due(const struct recorder *rec, uint64_t now)
{
	const struct recorder_opts *o = &rec->o;

	return rec->rot && ((o->rotate && *o->rotate) ||
			    (o->rotate_ns && now >= rec->file_start + o->rotate_ns));
}

/*
 * Rotating by size, asked at a flush: the flushes written to this file
 * since its start hold @rotate_bytes.  What every file gets as it opens
 * does not count (with --kallsyms=full, more than a small SIZE: each new
 * file would be due at once), and a file holds the rows of a flush at
 * least (a file of none would be a file of nothing recorded).
 */
static int rotation_size_due(const struct recorder *rec)
{
	const struct recorder_opts *o = &rec->o;

	return rec->rot && o->rotate_bytes && rec->file_rows &&
	       stk_writer__bytes(rec->w) - rec->file_base >= o->rotate_bytes;
}

/*
 * Something came (a process, a table, copied stacks, Python code, the
 * stack ring half full): the next flush is at the end of this interval,
 * not later.
 */
static void recorder__news(struct recorder *rec, uint64_t now)
{
	uint64_t end;

	rec->news = 1;
	if (!rec->quiet_planned)
		return;
	end = drain__interval_end(rec->maps.drain, now);
	if (end < rec->next_flush)
		rec->next_flush = end;
}

/*
 * After a periodic flush at @now, rec->next_flush the next interval's end:
 * may the counts stay in the kernel for more intervals?  Yes when nothing
 * came in the interval a flush ended (no event, no change to a followed
 * process's maps: procs__events_gen()), and the user did not ask for a
 * flush interval (--flush-interval: a flush at the end of each); for as
 * many intervals as the rings of new stacks and rows and the counts map
 * would take at the rate they filled since the last flush, half of each
 * at most, and QUIET_INTERVALS_MAX.  New stacks wait (their ring wakes the
 * loop when half full), and so do new keys (the kernel says when a counts
 * map is half full of them: STKREC_EV_COUNTS_FILLING); anything that comes
 * meanwhile brings the flush back to its interval's end
 * (recorder__news()).  A recording whose stacks repeat then wakes once
 * every QUIET_INTERVALS_MAX intervals.
 */
/*
 * How many intervals the counts may stay in the kernel at most:
 * QUIET_INTERVALS_MAX when the counts map, once the kernel said it is half
 * full, still has room for an interval and a half of samples each a key of
 * its own (-F x CPUs x interval) until the flush at that interval's end; 1
 * (none) when it has not.
 */
static uint32_t quiet_intervals(const struct recorder *rec)
{
	double most = (double)rec->o.frequency * (double)rec->o.nr_cpus *
		      ((double)rec->o.flush_interval_ns / 1e9);

	return drain__entries(rec->maps.drain) / 2 >= most * 1.5 ? QUIET_INTERVALS_MAX : 1;
}

static void plan_next_flush(struct recorder *rec, uint64_t now)
{
	uint64_t gen = procs__events_gen(rec->procs), k;
	uint32_t q = quiet_intervals(rec), elapsed;

	/* The intervals that ended since the last flush without one. */
	k = (now - rec->sample_start) / rec->o.flush_interval_ns;
	if (rec->quiet_planned && k > rec->quiet_k + 1)
		rec->quiet_intervals += k - rec->quiet_k - 1;
	elapsed = k > rec->quiet_k ? (uint32_t)(k - rec->quiet_k) : 1;
	rec->quiet_k = k;
	/* Both rings looked at every flush: what came since the last. */
	q = stackstore__ring_intervals(rec->stacks, q, elapsed);
	q = drain__intervals(rec->maps.drain, q, elapsed);
	rec->quiet_planned = !rec->news && gen == rec->quiet_gen && !rec->o.flush_strict && q > 1;
	if (rec->quiet_planned)
		rec->next_flush += (q - 1) * rec->o.flush_interval_ns;
	rec->news = 0;
	rec->quiet_gen = gen;
}

/*
 * Until when the loop takes side-band events at a stretch: the next flush
 * or status line, and the end of the interval @now is in at the latest
 * (a quiet stretch plans its flush intervals ahead): the copies ring and
 * the other sources are read in between.
 */
static uint64_t events_deadline(const struct recorder *rec, uint64_t now, uint64_t next_status)
{
	uint64_t until = drain__interval_end(rec->maps.drain, now);

	if (!until || until > rec->next_flush)
		until = rec->next_flush;
	return until < next_status ? until : next_status;
}

/*
 * Wait up to @ns for the loop's sources, @rec->o.wait_mask's signals let
 * in: epoll_pwait2() (Linux 5.11) wakes when asked, to the timer slack,
 * so that a flush starts right at its interval's end and the part of the
 * next interval it takes (drain.h) holds next to nothing; before it,
 * epoll_pwait()'s whole milliseconds.
 */
static int loop_wait(struct recorder *rec, struct epoll_event *evs, int nr, uint64_t ns)
{
#ifdef __NR_epoll_pwait2
	struct timespec ts = { (time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC) };
	long n;

	if (rec->pwait2 >= 0) {
		n = syscall(__NR_epoll_pwait2, rec->epfd, evs, nr, &ts, rec->o.wait_mask,
			    (size_t)(_NSIG / 8));
		if (n >= 0)
			rec->pwait2 = 1;
		/* Until it has worked once, any error but a signal says no
		 * (ENOSYS; EPERM from a seccomp filter that does not know it). */
		if (n >= 0 || rec->pwait2 > 0 || errno == EINTR)
			return (int)n;
		rec->pwait2 = -1;
	}
#endif
	return epoll_pwait(rec->epfd, evs, nr, (int)((ns + 999999) / 1000000), rec->o.wait_mask);
}

/* Held source @h took something (@found) at @now: news if it is ours. */
static void held_took(struct recorder *rec, const struct held *h, int found, uint64_t now)
{
	if (found && (h->news || procs__events_gen(rec->procs) != rec->quiet_gen))
		recorder__news(rec, now);
}

int recorder__run(struct recorder *rec)
{
	uint64_t start = rec->sample_start, interval = rec->o.flush_interval_ns;
	/* Without a status line, nothing to wake for each second. */
	uint64_t next_status = rec->o.on_status ? start + STATUS_INTERVAL_NS : UINT64_MAX;
	/* DURATION is of sampling: from the attach, not from the start of the
	 * loading (which a loaded machine can make last longer than it). */
	uint64_t deadline = rec->o.duration_ns ? start + rec->o.duration_ns : 0;
	struct epoll_event evs[16];
	struct held held[NR_HELD];
	const struct held *h;
	sigset_t blocked;
	int err, n, i, code;

	held_sources(rec, held);
	/*
	 * The stop signals come in while we work, not only while we wait:
	 * a step that blocks (a read of a file a traced process controls)
	 * then fails with EINTR, as the handlers have no SA_RESTART, and
	 * the flag ends the recording.  They are blocked only from the
	 * last look at the flag into the wait, which takes them, so a stop
	 * is never missed in between.
	 */
	if (rec->o.wait_mask)
		sigprocmask(SIG_SETMASK, rec->o.wait_mask, &blocked);
	for (;;) {
		uint64_t now = mono_ns(), wake;
		uint64_t timeout_ns;

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
		if (rotation_due(rec, now)) {
			if (rec->o.rotate)
				*rec->o.rotate = 0;
			err = recorder__rotate(rec);
			if (err)
				return err;
			now = loop_step_done(rec, LOOP_FLUSH, now);
			/* Counts on a grid: the next flush at its interval's end. */
			rec->next_flush = drain__interval_end(rec->maps.drain, now) ?: now + interval;
			rec->quiet_planned = 0;
			/* It drained the counts: the next plan's rate is of what
			 * came since. */
			rec->quiet_k = (now - rec->sample_start) / interval;
		}
		if (now >= rec->next_flush) {
			/* Without pidfds, the targets are looked at here. */
			if (rec->targets && !targets__check(rec->targets)) {
				rec->end_reason = "targets";
				return 0;
			}
			if (now - rec->next_flush > rec->flush_late_max_ns)
				rec->flush_late_max_ns = now - rec->next_flush;
			/* Full: this flush is the file's last. */
			err = rotation_size_due(rec) ? recorder__rotate(rec) : recorder__flush(rec, 0, 0);
			if (err)
				return err;
			/* After a stall, do not flush in a burst to catch up. */
			while (rec->next_flush <= now)
				rec->next_flush += interval;
			plan_next_flush(rec, now);
			now = loop_step_done(rec, LOOP_FLUSH, now);
		}
		if (now >= next_status) {
			recorder__status(rec, now);
			while (next_status <= now)
				next_status += STATUS_INTERVAL_NS;
			now = loop_step_done(rec, LOOP_STATUS, now);
		}
		wake = rec->next_flush < next_status ? rec->next_flush : next_status;
		if (deadline && deadline < wake)
			wake = deadline;
		if (rec->rot && rec->o.rotate_ns && rec->file_start + rec->o.rotate_ns < wake)
			wake = rec->file_start + rec->o.rotate_ns;
		/* Held sources whose hold is over: read for what came while
		 * they were held; armed again if that was nothing, and read
		 * once more (the arming's poll may have taken a wakeup). */
		for (i = 0; i < NR_HELD; i++) {
			if (wake__due(held[i].w, now)) {
				int found = held[i].take(rec);

				if (wake__read(held[i].w, now, found))
					found |= held[i].take(rec);
				held_took(rec, &held[i], found, now);
				now = loop_step_done(rec, held[i].step, now);
			}
			if (wake__next(held[i].w) < wake)
				wake = wake__next(held[i].w);
		}
		timeout_ns = wake > now ? wake - now : 0;
		if (rec->child && child__pidfd(rec->child) < 0 && timeout_ns > CHILD_POLL_NS)
			timeout_ns = CHILD_POLL_NS;
		if (rec->o.wait_mask) {
			sigprocmask(SIG_SETMASK, &blocked, NULL);
			if ((rec->o.stop && *rec->o.stop) || (rec->o.rotate && *rec->o.rotate))
				timeout_ns = 0;
		}
		n = loop_wait(rec, evs, 16, timeout_ns);
		rec->loop_wakes += n >= 0;
		if (rec->o.wait_mask)
			sigprocmask(SIG_SETMASK, rec->o.wait_mask, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			return recorder__errorf(rec, err, "epoll_wait: %s", strerror(-err));
		}
		for (i = 0; i < n; i++) {
			uint64_t t0 = mono_ns();

			/* Anything new: the interval ends with a flush. */
			if (evs[i].data.u32 == EV_STACKRING) {
				/* Half full: taken now, held until a flush. */
				recorder__news(rec, t0);
				stackstore__take_ring(rec->stacks);
				loop_step_done(rec, LOOP_RINGS, t0);
			} else if (evs[i].data.u32 == EV_RINGBUF) {
				rec->events_until = events_deadline(rec, t0, next_status);
				if (ring_buffer__consume(rec->rb))
					recorder__news(rec, t0);
				loop_step_done(rec, LOOP_RINGS, t0);
			} else if ((h = held_of(held, evs[i].data.u32))) {
				/* Read now, then held off (wake.h). */
				wake__fired(h->w, t0);
				held_took(rec, h, h->take(rec), t0);
				loop_step_done(rec, h->step, t0);
			} else if (evs[i].data.u32 == EV_READER) {
				/* Symbol tables read: their symbols at the next flush. */
				recorder__news(rec, t0);
				worker__collect(rec->reader);
				loop_step_done(rec, LOOP_WORKER, t0);
			} else if (evs[i].data.u32 == EV_WORKER) {
				/* Tables built: into the maps, to their processes. */
				recorder__news(rec, t0);
				worker__collect(rec->worker);
				loop_step_done(rec, LOOP_WORKER, t0);
			} else if (evs[i].data.u32 >= EV_TARGET) {
				/* A pidfd stays readable: watch it no more. */
				epoll_ctl(rec->epfd, EPOLL_CTL_DEL,
					  targets__fd(rec->targets, evs[i].data.u32 - EV_TARGET), NULL);
				if (!targets__check(rec->targets)) {
					rec->end_reason = "targets";
					return 0;
				}
			} else if (child__try_wait(rec->child, &code) == 1) {
				rec->cmd_exit_code = code;
				rec->end_reason = "command";
				return 0;
			}
		}
	}
}

int recorder__finish(struct recorder *rec, struct recorder_result *res)
{
	int err = 0, err2, code;

	if (rec->write_failed)
		rec->end_reason = "error";
	/* Stop sampling first: the final drain then races with nothing. */
	if (rec->mode) {
		rec->ops->detach(rec->mode);
		if (!rec->t_detached)
			rec->t_detached = mono_ns();
	}
	if (rec->w && !rec->write_failed) {
		uint64_t end;

		/* Stacks copied for want of a table are unwound at this last
		 * flush, and its symbols written: the tables being built and
		 * read for them, a moment more (less after a stop signal). */
		err = recorder__flush_last(rec, 1, mono_ns() +
			(strcmp(rec->end_reason ?: "", "signal") ? FINAL_TABLES_NS
								 : FINAL_TABLES_SIGNAL_NS));
		/* One end time: META's duration_ns and STAT's are the same. */
		end = mono_ns();
		if (!err)
			err = recorder__write_end_meta(rec, end);
		if (!err)
			err = recorder__write_stats(rec, end, 1);
	}
	/* The final flush has taken every snapshot it needs. */
	procs__unwatch(rec->procs);
	if (rec->w) {
		char msg[sizeof(rec->errmsg)];

		/* The first error is the one said. */
		memcpy(msg, rec->errmsg, sizeof(msg));
		err2 = close_output(rec);
		if (err)
			memcpy(rec->errmsg, msg, sizeof(msg));
		else
			err = err2;
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
		struct esym_stats es;
		struct stat st;

		recorder__read_bpf_stats(rec);
		res->end_reason = rec->end_reason;
		res->cmd_exit_code = rec->cmd_exit_code;
		res->samples = rec->bpf_stats[STKREC_STAT_SAMPLES];
		res->sample_events = rec->bpf_stats[STKREC_STAT_SAMPLE_EVENTS];
		res->sampled_cpu_time_ns = recorder__sampled_cpu_time(rec, mono_ns());
		res->sample_events_busiest = rec->events_busiest_run;
		res->sampled_cpus = rec->o.nr_cpus;
		res->blocked_ns = rec->bpf_stats[STKREC_STAT_BLOCKED_NS];
		res->stacks = rec->stacks_done + stackstore__count(rec->stacks);
		res->stacks_lost = rec->bpf_stats[STKREC_STAT_STACK_LOST];
		res->chunks = rec->chunks;
		esym__stats(rec->esym, &es);
		res->user_memory = rec->mem.limit;
		res->symbols_skipped = es.symbols_skipped;
		res->perf_map_lines_skipped = es.perf_map_lines_skipped;
		res->perf_map_addrs_unnamed = es.perf_map_misses_skipped;
		res->bytes = rec->bytes_done;
		res->files_refused = recorder__files_refused(rec);
		res->perf_maps_refused = es.perf_map_refused;
		if (!rec->rot && stat(rec->o.output, &st) == 0)
			res->bytes = (uint64_t)st.st_size;
		if (rec->rot) {
			res->files = rotation__files(rec->rot);
			snprintf(res->first_output, sizeof(res->first_output), "%s",
				 rotation__first(rec->rot) ?: "");
			snprintf(res->last_output, sizeof(res->last_output), "%s",
				 rotation__last(rec->rot) ?: "");
			res->files_deleted = rotation__deleted(rec->rot);
		}
		snprintf(res->keep_error, sizeof(res->keep_error), "%s", rec->keep_err);
	}
	return err;
}

void recorder__free(struct recorder *rec)
{
	if (!rec)
		return;
	if (rec->mode) {
		rec->ops->detach(rec->mode);
		rec->ops->free(rec->mode);
	}
	ring_buffer__free(rec->rb);
	if (rec->procs) {
		procs__set_unwinder(rec->procs, NULL, NULL, 0);
		procs__set_python(rec->procs, NULL);
	}
	python__free(rec->python);
	/* The worker's builds reference the unwinder's tables, the
	 * reader's reads esym's binaries. */
	worker__free(rec->reader);
	worker__free(rec->worker);
	deferred__free(rec->deferred);
	rec->deferred = NULL;
	unwinder__free(rec->uw);
	if (rec->w)
		stk_writer__close(rec->w);
	child__free(rec->child);
	targets__free(rec->targets);
	wake__free(&rec->wk_side);
	wake__free(&rec->wk_defer);
	wake__free(&rec->wk_py);
	if (rec->epfd >= 0)
		close(rec->epfd);
	procs__free(rec->procs);
	esym__free(rec->esym);
	pidns__free(rec->pidns);
	stackstore__free(rec->stacks);
	ksymtab__free(rec->ksyms);
	recorder__unmap_stats(rec);
	free(rec->stat_vals);
	free(rec->stat_base);
	free(rec->stat_last);
	free(rec->events_base);
	free(rec->events_last);
	rotation__free(rec->rot);
	free(rec);
}
