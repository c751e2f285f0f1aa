// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder_start.c - a recording's start (recorder__start()): the mode's
 * BPF programs loaded and attached, the kernel's symbols, the side-band,
 * the unwinder and the Python walk opened, the epoll set the loop waits
 * on (recorder_loop.c), the output file and its first chunks, and CMD
 * started.
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

/* The recorder's threads' nice value, once CMD is forked (root only). */
#define RECORDER_NICE (-10)

/* The stacks the mode's maps still reference (off-CPU), for the stack
 * store (stackstore__set_live()). */
static int add_live(void *ctx, int64_t id)
{
	return id >= 0 ? idmap__set(ctx, (uint64_t)id, 1) : 0;
}

static int collect_live(void *ctx, struct idmap *live)
{
	struct recorder *rec = ctx;

	return rec->ops->live_stacks(rec->mode, add_live, live);
}

/* ---- start ------------------------------------------------------------- */

int recorder__write_kernel_info(struct recorder *rec)
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
int recorder__open_output(struct recorder *rec)
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
	err = recorder__open_output(rec);
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
	err = err ?: recorder__write_kernel_info(rec);
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
	rec->rb = ring_buffer__new(rec->maps.events_fd, recorder__on_event, rec, NULL);
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
