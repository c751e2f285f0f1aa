// SPDX-License-Identifier: BSD-2-Clause
/*
 * recorder.c - the recording engine common to all modes: its life (new,
 * flush, rotate, finish, free) and what the rows reference.  Its start is
 * recorder_start.c's, its loop (what wakes it, when it flushes)
 * recorder_loop.c's.  The steps of a flush are recorder_flush.c's, their
 * order and error rules flush.h's (everything a row references is in the
 * file before the row); what it says in the STAT and META chunks is
 * recorder_stats.c's.  The stacks (stackstore.c), kernel symbols
 * (ksymtab.c) and processes (procs.c) each keep their own state; the
 * recorder tells them what the rows reference and when to write.
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

/* ---- what the rows reference (mode.h) ------------------------------------ */

/* A process started or exited: it waits for the stretch's flush, unless
 * QUIET_PROCS_MAX did in this stretch. */
static void procs_news(struct recorder *rec)
{
	if (++rec->procs_news >= QUIET_PROCS_MAX)
		rec->news = 1;
}

int recorder__on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rec = ctx;
	const struct stkrec_event *e = data;
	char comm[16];

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case STKREC_EV_NEW_PROC:
		procs_news(rec);
		memcpy(comm, e->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		/* Returning an error would stop ring_buffer__consume(); a
		 * snapshot that fails for lack of memory is retried when a
		 * row of the process is drained. */
		procs__snapshot(rec->procs, e->tgid, comm, rec->seq);
		/* A binary not seen before: its symbols are read through
		 * its processes (/proc/PID), and this one may be gone by
		 * the stretch's flush (a short command then had none). */
		if (esym__new_binary(rec->esym, procs__maps(rec->procs, e->tgid)))
			rec->news = 1;
		pidns__see(rec->pidns, e->tgid, e->ns_tgid, e->pid_ns, mono_ns());
		break;
	case STKREC_EV_EXIT:
		procs_news(rec);
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
		rec->news = 1;
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

/* ---- flushing and rotating (the steps: recorder_flush.c) ---------------- */

/* @final: the recording's last flush; @file_end: its file's last. */
int recorder__flush(struct recorder *rec, int final, int file_end)
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
int recorder__rotate(struct recorder *rec)
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
	err = recorder__open_output(rec);
	if (err)
		return err;
	esym__new_file(rec->esym, rec->w);
	python__new_file(rec->python);
	err = recorder__write_start_meta(rec);
	err = err ?: recorder__write_kernel_info(rec);
	if (!err) {
		err = stk_writer__commit(rec->w);
		if (err)
			recorder__errorf(rec, err, "%s", stk_writer__errmsg(rec->w));
	}
	rec->file_base = rec->w ? stk_writer__bytes(rec->w) : 0;
	rec->file_rows = 0;
	return err;
}


/* ---- finish ------------------------------------------------------------ */

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
