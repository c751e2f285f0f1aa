// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwinder_tables.c - the unwinder's tables, one per ELF file (by
 * build-id): built from the file's CFI (or its separate debuginfo), their
 * rows placed first-fit in the mmap'ed rows map with a page index, and,
 * when the map is full, evicted least recently used with their rows kept
 * in memory to be copied back (unwinder.c says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "buildid.h"
#include "clock.h"
#include "procmaps.h"
#include "procreds.h"
#include "stkrec.h"
#include "membudget.h"
#include "tcache.h"
#include "unwind_table.h"
#include "unwinder_int.h"
#include "worker.h"

/* ---- rows: first-fit extents of the rows map ---- */

static int rows_alloc(struct unwinder *u, uint32_t n, uint32_t *first)
{
	size_t i;

	for (i = 0; i < u->nr_free; i++) {
		if (u->free_ext[i].len < n)
			continue;
		*first = u->free_ext[i].start;
		u->free_ext[i].start += n;
		u->free_ext[i].len -= n;
		if (!u->free_ext[i].len) {
			memmove(&u->free_ext[i], &u->free_ext[i + 1],
				(u->nr_free - i - 1) * sizeof(*u->free_ext));
			u->nr_free--;
		}
		return 0;
	}
	return -ENOSPC;
}

_Static_assert(sizeof(struct stkrec_unwind_row) == sizeof(uint64_t),
	      "bpf/unwind.bpf.h declares a chunk's value as a word");

/* Chunk @c's place in u->rows back to reserved address space. */
static void chunk_unmap(struct unwinder *u, uint32_t c)
{
	mmap(u->rows + (size_t)c * STKREC_UW_CHUNK_ROWS,
	     STKREC_UW_CHUNK_ROWS * sizeof(struct stkrec_unwind_row), PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/*
 * Chunks [@first, @first + @n) of the rows map: each created and mapped
 * over its place in u->rows, then all put in their slots of the rows map
 * (bpf/stkrec.h) in one batch, so BPF meets a chunk only when it can be
 * written, and the batch waits for one RCU grace period, not one each
 * (one by one where the kernel has no batch for arrays of maps).  The
 * slot and the mapping hold a chunk: its fd is not kept (a large
 * --unwind-memory would be thousands of fds).  Returns how many, from
 * @first, were made (> 0), or -errno.
 */
static long chunks_make(struct unwinder *u, uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	size_t bytes = STKREC_UW_CHUNK_ROWS * sizeof(struct stkrec_unwind_row);
	uint32_t *keys = calloc(n, sizeof(*keys)), k = 0, done = 0, i;
	int *fds = calloc(n, sizeof(*fds)), err = 0;

	if (!keys || !fds) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++) {
		void *at = u->rows + (size_t)(first + k) * STKREC_UW_CHUNK_ROWS;

		keys[k] = first + k;
		fds[k] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(uint32_t),
					sizeof(struct stkrec_unwind_row), STKREC_UW_CHUNK_ROWS,
					&opts);
		if (fds[k] < 0) {
			err = -errno;
			break;
		}
		if (mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds[k], 0) ==
		    MAP_FAILED) {
			err = -errno;
			close(fds[k]);
			break;
		}
	}
	done = k;
	if (done && bpf_map_update_batch(u->maps.rows_fd, keys, fds, &done, NULL)) {
		err = -errno;
		/* No batch here: one by one, from where it stopped. */
		for (i = done; i < k; i++, done++)
			if (bpf_map_update_elem(u->maps.rows_fd, &keys[i], &fds[i], BPF_ANY)) {
				err = -errno;
				break;
			}
	}
	for (i = 0; i < k; i++) {
		if (i >= done)
			chunk_unmap(u, first + i);
		else
			u->chunk_made[first + i] = 1;
		close(fds[i]);
	}
out:
	free(keys);
	free(fds);
	return done ? (long)done : err ? err : -EINVAL;
}

/* Chunks made ahead of the rows in use: a table loaded into them waits
 * for nothing, unless tables come faster than this many a grace period. */
#define CHUNKS_AHEAD 4

/* The chunk maker: makes chunks [made, want), in one batch when it can,
 * off the main loop. */
static void *chunker_run(void *arg)
{
	struct unwinder *u = arg;
	uint32_t c, n;
	long made;

	pthread_mutex_lock(&u->chunker.lock);
	for (;;) {
		while (!u->chunker.stop && u->chunker.made >= u->chunker.want)
			pthread_cond_wait(&u->chunker.cond, &u->chunker.lock);
		if (u->chunker.stop)
			break;
		c = u->chunker.made;
		n = u->chunker.want - c;
		pthread_mutex_unlock(&u->chunker.lock);
		made = chunks_make(u, c, n);
		pthread_mutex_lock(&u->chunker.lock);
		if (made < 0) {
			u->chunker.err = (int)made;
			u->chunker.want = u->chunker.made; /* until asked again */
		} else {
			u->chunker.made += (uint32_t)made;
		}
		pthread_cond_broadcast(&u->chunker.cond);
	}
	pthread_mutex_unlock(&u->chunker.lock);
	return NULL;
}

/* Ask for chunks [0, @need + CHUNKS_AHEAD), within the budget. */
static void chunker_want(struct unwinder *u, uint32_t need)
{
	uint32_t want = need + CHUNKS_AHEAD < u->nr_chunks ? need + CHUNKS_AHEAD : u->nr_chunks;

	/* A failure (ENOMEM, say) stopped the maker: a new need tries
	 * again, as the main thread would without it. */
	if (u->chunker.err && u->chunker.made < need)
		u->chunker.err = 0;
	if (want > u->chunker.want || u->chunker.made < need) {
		if (want > u->chunker.want)
			u->chunker.want = want;
		pthread_cond_signal(&u->chunker.cond);
	}
}

int unwinder__chunker_start(struct unwinder *u)
{
	uint32_t first = u->nr_chunks < CHUNKS_AHEAD ? u->nr_chunks : CHUNKS_AHEAD;
	sigset_t all, old;
	long made;
	int err;

	pthread_mutex_init(&u->chunker.lock, NULL);
	pthread_cond_init(&u->chunker.cond, NULL);
	/* The first chunks before sampling starts: the first tables wait for
	 * no thread (one grace period of start-up's wall time, not CPU). */
	made = chunks_make(u, 0, first);
	u->chunker.made = made > 0 ? (uint32_t)made : 0;
	u->chunker.want = u->chunker.made;
	/* Signals are the main thread's (its epoll_pwait takes them). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&u->chunker.thread, NULL, chunker_run, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	u->chunker.running = 1;
	return 0;
}

void unwinder__chunker_stop(struct unwinder *u)
{
	if (!u->chunker.running)
		return;
	pthread_mutex_lock(&u->chunker.lock);
	u->chunker.stop = 1;
	pthread_cond_signal(&u->chunker.cond);
	pthread_mutex_unlock(&u->chunker.lock);
	pthread_join(u->chunker.thread, NULL);
	u->chunker.running = 0;
}

/* Make the chunks rows [@first, @first + @n) lie in (they stay until the
 * end: what --unwind-memory bounds is all of them), and have the next
 * ones made ahead.  Waits only if the maker is behind.  0 or -errno. */
static int rows_back(struct unwinder *u, uint32_t first, uint32_t n)
{
	uint32_t need = (first + n - 1) / STKREC_UW_CHUNK_ROWS + 1, c;
	int err = 0;

	if (!u->chunker.running) {
		/* No thread: made here, as needed. */
		for (c = first / STKREC_UW_CHUNK_ROWS; c < need && !err; c++) {
			long made = u->chunk_made[c] ? 1 : chunks_make(u, c, 1);

			err = made < 0 ? (int)made : 0;
		}
	} else {
		pthread_mutex_lock(&u->chunker.lock);
		chunker_want(u, need);
		while (u->chunker.made < need && !u->chunker.err)
			pthread_cond_wait(&u->chunker.cond, &u->chunker.lock);
		if (u->chunker.made < need)
			err = u->chunker.err;
		pthread_mutex_unlock(&u->chunker.lock);
	}
	if (err)
		u->st.map_errors++;
	return err;
}

static int rows_release(struct unwinder *u, uint32_t start, uint32_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < u->nr_free && u->free_ext[i].start < start; i++)
		;
	/* Merge with the neighbours where they touch. */
	if (i > 0 && u->free_ext[i - 1].start + u->free_ext[i - 1].len == start) {
		u->free_ext[i - 1].len += n;
		if (i < u->nr_free && start + n == u->free_ext[i].start) {
			u->free_ext[i - 1].len += u->free_ext[i].len;
			memmove(&u->free_ext[i], &u->free_ext[i + 1],
				(u->nr_free - i - 1) * sizeof(*u->free_ext));
			u->nr_free--;
		}
		return 0;
	}
	if (i < u->nr_free && start + n == u->free_ext[i].start) {
		u->free_ext[i].start = start;
		u->free_ext[i].len += n;
		return 0;
	}
	if (u->nr_free == u->cap_free) {
		size_t cap = u->cap_free * 2;
		struct extent *e = realloc(u->free_ext, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		u->free_ext = e;
		u->cap_free = cap;
	}
	memmove(&u->free_ext[i + 1], &u->free_ext[i], (u->nr_free - i) * sizeof(*u->free_ext));
	u->free_ext[i] = (struct extent){ start, n };
	u->nr_free++;
	return 0;
}

static void saved_drop(struct unwinder *u, struct table *t)
{
	if (!t->saved)
		return;
	free(t->saved);
	t->saved = NULL;
	u->saved_rows -= t->nr_saved;
	if (u->mb)
		membudget__give(u->mb, (uint64_t)t->nr_saved * sizeof(*t->saved));
	t->nr_saved = 0;
}

/* The least recently used saved rows of a table no process maps now. */
static struct table *saved_lru(struct unwinder *u)
{
	struct table *lru = NULL;
	size_t i;

	for (i = 0; i < u->nr_tables; i++)
		if (u->tables[i]->saved && (!lru || u->tables[i]->last_use < lru->last_use))
			lru = u->tables[i];
	return lru;
}

uint64_t unwinder__shrink(void *ctx, uint64_t want)
{
	struct unwinder *u = ctx;
	uint64_t freed = 0;
	struct table *t;

	while (freed < want && (t = saved_lru(u))) {
		freed += (uint64_t)t->nr_saved * sizeof(*t->saved);
		saved_drop(u, t);
		u->st.saved_dropped++;
	}
	return freed;
}

/* Keep a copy of @nr rows at @rows for @t's next load, dropping the least
 * recently used copies of other tables past the budget (as many rows as
 * the map holds).  Without memory for it, the table is built again. */
static void saved_keep(struct unwinder *u, struct table *t, const struct stkrec_unwind_row *rows,
		       uint32_t nr)
{
	saved_drop(u, t);
	if (nr > u->maps.rows_cap)
		return;
	while (u->saved_rows + nr > u->maps.rows_cap) {
		struct table *lru = saved_lru(u);

		if (!lru)
			return;
		saved_drop(u, lru);
	}
	/* Under --user-memory: the budget's shrinkers (this one among them)
	 * make room, else the table is read from the cache or built again
	 * when it is next mapped. */
	if (u->mb && membudget__take(u->mb, (uint64_t)nr * sizeof(*rows))) {
		u->st.saved_dropped++;
		return;
	}
	t->saved = malloc((size_t)nr * sizeof(*rows));
	if (!t->saved) {
		if (u->mb)
			membudget__give(u->mb, (uint64_t)nr * sizeof(*rows));
		return;
	}
	memcpy(t->saved, rows, (size_t)nr * sizeof(*rows));
	t->nr_saved = nr;
	u->saved_rows += nr;
}

/* Take @t's rows and pages out of the maps (its rows saved first). */
static void table_unload(struct unwinder *u, struct table *t)
{
	uint32_t p;

	if (t->nr)
		saved_keep(u, t, &u->rows[t->first], t->nr);

	for (p = 0; p < t->nr_pages; p++) {
		struct stkrec_unwind_page_key k = { t->id, t->first_page + p };

		bpf_map_delete_elem(u->maps.pages_fd, &k);
	}
	/* On failure the rows stay allocated: lost room, never wrong rows. */
	if (rows_release(u, t->first, t->nr) == 0) {
		u->st.rows -= t->nr;
		u->st.bytes -= (uint64_t)t->nr * sizeof(struct stkrec_unwind_row) +
			       (uint64_t)t->nr_pages * (sizeof(struct stkrec_unwind_page_key) +
							sizeof(struct stkrec_unwind_page));
	}
	u->st.tables--;
	t->nr = t->nr_pages = 0;
	t->failed = -ENOSPC;	/* reloaded (saved rows) or rebuilt if mapped again */
}

/* Evict unreferenced tables, least recently used first, until @n rows
 * fit.  Returns 0 once they fit, else -ENOSPC, having evicted nothing
 * when even evicting every unreferenced table would not make the room. */
static int make_room(struct unwinder *u, uint32_t n, uint32_t *first)
{
	uint64_t room = 0;
	size_t i;

	if (rows_alloc(u, n, first) == 0)
		return 0;
	for (i = 0; i < u->nr_free; i++)
		room += u->free_ext[i].len;
	for (i = 0; i < u->nr_tables; i++)
		if (!u->tables[i]->failed && !u->tables[i]->refs)
			room += u->tables[i]->nr;
	if (room < n)
		return -ENOSPC;
	while (rows_alloc(u, n, first) != 0) {
		struct table *lru = NULL;
		size_t i;

		for (i = 0; i < u->nr_tables; i++) {
			struct table *t = u->tables[i];

			if (!t->failed && t->nr && !t->refs && (!lru || t->last_use < lru->last_use))
				lru = t;
		}
		if (!lru)
			return -ENOSPC;
		table_unload(u, lru);
		u->st.evicted++;
	}
	return 0;
}

/* Copy the @nr rows at @r into the rows map and index their pages. */
static int table_load(struct unwinder *u, struct table *t, const struct stkrec_unwind_row *r,
		      size_t nr)
{
	uint32_t p, p0, p1, lo = 0, hi;
	int err;

	if (nr == 0 || nr > UINT32_MAX)
		return -ENOENT;
	err = make_room(u, (uint32_t)nr, &t->first);
	if (err)
		return err;
	err = rows_back(u, t->first, (uint32_t)nr);
	if (err) {
		rows_release(u, t->first, (uint32_t)nr);
		return err;
	}
	memcpy(&u->rows[t->first], r, nr * sizeof(*r));
	t->nr = (uint32_t)nr;
	p0 = r[0].pc >> STKREC_UW_PAGE_SHIFT;
	p1 = r[nr - 1].pc >> STKREC_UW_PAGE_SHIFT;
	t->first_page = p0;
	t->nr_pages = 0;
	for (p = p0; p <= p1; p++) {
		uint64_t page_end = ((uint64_t)p + 1) << STKREC_UW_PAGE_SHIFT;
		struct stkrec_unwind_page_key k = { t->id, p };
		struct stkrec_unwind_page v;

		/* lo: the row covering the page's first byte; hi: one past
		 * the last row starting in the page. */
		while (lo + 1 < nr && r[lo + 1].pc <= (uint64_t)p << STKREC_UW_PAGE_SHIFT)
			lo++;
		hi = lo;
		while (hi < nr && r[hi].pc < page_end)
			hi++;
		if (hi == lo)
			hi = lo + 1;
		if (hi - lo > (1u << STKREC_UW_SEARCH_STEPS)) {
			err = -E2BIG;
			break;
		}
		v.first = t->first + lo;
		v.nr = hi - lo;
		if (bpf_map_update_elem(u->maps.pages_fd, &k, &v, BPF_ANY)) {
			err = -errno;
			u->st.map_errors++;
			break;
		}
		t->nr_pages = p - p0 + 1;
	}
	u->st.tables++;
	u->st.rows += nr;
	u->st.bytes += nr * sizeof(*r) + (uint64_t)t->nr_pages * (sizeof(struct stkrec_unwind_page_key) +
								    sizeof(struct stkrec_unwind_page));
	if (err) {
		table_unload(u, t);
		saved_drop(u, t);
		t->failed = err;
	}
	return err;
}

/*
 * The separate debuginfo of the file with build-id @id, for its
 * .debug_frame: the one path @u->debug_dir/.build-id/xx/yyyy.debug (the
 * recorder's own file system, not the traced process's to plant things
 * in; still opened non-blocking, used only if a regular file with @id).
 * An fd, or -errno (-ENOENT: none).  On the worker thread: reads only
 * @u->debug_dir, which is set before any build.
 */
static int debuginfo_open(const struct unwinder *u, const uint8_t *id, uint32_t id_size)
{
	char path[4096], *p;
	uint8_t got[STK_MAX_BUILD_ID];
	struct stat st;
	uint32_t i;
	int fd, err;

	if (!u->debug_dir || !u->debug_dir[0] || id_size < 2 || id_size > STK_MAX_BUILD_ID ||
	    strlen(u->debug_dir) > sizeof(path) - 128)
		return -ENOENT;
	p = path + sprintf(path, "%s/.build-id/%02x/", u->debug_dir, id[0]);
	for (i = 1; i < id_size; i++)
		p += sprintf(p, "%02x", id[i]);
	strcpy(p, ".debug");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) ||
	    buildid__from_elf_fd(fd, got, sizeof(got)) != (int)id_size || memcmp(got, id, id_size)) {
		err = -ENOENT;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

static int debuginfo_open(const struct unwinder *u, const uint8_t *id, uint32_t id_size);

/* How a table was built (cached with it, so STAT is the same warm). */
#define TJ_SCANNED	1	/* no .eh_frame_hdr: FDEs listed from .eh_frame */
#define TJ_DEBUG_FRAME	2	/* rows from .debug_frame */

/*
 * A table's build: on the worker thread (or in the call, without one),
 * from the files opened on the main thread; nothing of the unwinder is
 * touched until table_finish(), on the main thread.
 */
struct table_job {
	struct worker_job j;
	struct unwinder *u;
	struct table *t;
	int fd, dfd;			/* the file and its debuginfo, or -1 */
	int debuginfo;			/* @dfd was opened */
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;
	Elf *elf;			/* set instead of @fd: the vDSO */
	const char *cache_dir;		/* TCACHE_DIR or the option's, or NULL */
	struct unwind_table *ut;	/* the result built, or NULL */
	struct stkrec_unwind_row *cached; /* or the rows cached, or NULL */
	const struct stkrec_unwind_row *rows; /* either's rows */
	size_t nr;
	uint32_t flags;			/* TJ_*: how it was built */
	int from_cache, stored;		/* read from the cache; written to it */
	int trusted;			/* root's file that only root can write */
	int err;
	struct load loads[MAX_LOADS];
	size_t nr_loads;
	uint64_t ns;			/* how long the build took */
};

static int phdr_loads(Elf *elf, struct table_job *tj)
{
	size_t nph, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -EBADMSG;
	for (i = 0; i < nph && tj->nr_loads < MAX_LOADS; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			tj->loads[tj->nr_loads++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	return tj->nr_loads ? 0 : -ENOEXEC;
}

/* Read the files and build the rows; thread-safe (libelf handles of its
 * own, no shared state). */
static void job_run(struct worker_job *wj, const _Atomic int *stop)
{
	struct table_job *tj = (struct table_job *)wj;
	uint64_t t0 = mono_ns();
	Elf *elf = tj->elf, *debug = NULL;
	int err, own_debug_frame = 0;

	/* Read, not mapped: the process's user may truncate the file under
	 * us, and a mapping would then SIGBUS the recorder. */
	if (!elf && tj->fd >= 0)
		elf = elf_begin(tj->fd, ELF_C_READ, NULL);
	/* CFI only in .debug_frame, and that stripped into a debug package:
	 * read it from there (the recorder's own file system). */
	if (elf)
		own_debug_frame = unwind_table__has_debug_frame(elf);
	if (elf && tj->fd >= 0 && tj->build_id_size && !own_debug_frame) {
		tj->dfd = debuginfo_open(tj->u, tj->build_id, tj->build_id_size);
		tj->debuginfo = tj->dfd >= 0;
		debug = tj->debuginfo ? elf_begin(tj->dfd, ELF_C_READ, NULL) : NULL;
	}
	err = elf ? phdr_loads(elf, tj) : -EBADMSG;
	/* Built before, by this recorder, from a file of this build-id. */
	if (!err && tj->cache_dir && tj->build_id_size && !debug &&
	    tcache__load(tj->cache_dir, tj->build_id, tj->build_id_size, &tj->cached, &tj->nr,
			 &tj->flags) == 0) {
		tj->rows = tj->cached;
		tj->from_cache = 1;
		/* A file stripped of its .debug_frame keeps its build-id: a
		 * table built from such a copy lacks the rows this file's
		 * .debug_frame gives.  Built again (and stored over it). */
		if (own_debug_frame && !(tj->flags & TJ_DEBUG_FRAME)) {
			free(tj->cached);
			tj->cached = NULL;
			tj->rows = NULL;
			tj->from_cache = 0;
		}
	}
	if (!err && !tj->from_cache) {
		tj->ut = unwind_table__build(elf, debug, stop);
		err = tj->ut ? 0 : -errno;
	}
	if (tj->ut) {
		struct unwind_table_stats ts;

		unwind_table__stats(tj->ut, &ts);
		tj->rows = unwind_table__rows(tj->ut, &tj->nr);
		tj->flags = (ts.scanned ? TJ_SCANNED : 0) | (ts.debug_frame_fdes ? TJ_DEBUG_FRAME : 0);
		/* Not with separate debuginfo: installed or removed later,
		 * it would change the table of the same build-id.  Only
		 * root's files: the build-id is the file's to claim, and a
		 * user's file claiming libc's would give every later
		 * recording its table for libc. */
		if (tj->cache_dir && tj->build_id_size && !debug && tj->trusted)
			tj->stored = tcache__store(tj->cache_dir, tj->build_id, tj->build_id_size,
						   tj->rows, tj->nr, tj->flags, TCACHE_MAX_BYTES) == 0;
	}
	tj->err = err;
	elf_end(debug);
	elf_end(elf);
	tj->elf = NULL;
	if (tj->dfd >= 0)
		close(tj->dfd);
	if (tj->fd >= 0)
		close(tj->fd);
	tj->fd = tj->dfd = -1;
	tj->ns = mono_ns() - t0;
}

/* Load the rows built (on the main thread), counting the outcome.
 * Returns 0 or the table's -errno. */
static int table_finish(struct unwinder *u, struct table_job *tj)
{
	struct table *t = tj->t;
	int err = tj->err;

	memcpy(t->loads, tj->loads, sizeof(t->loads));
	t->nr_loads = tj->nr_loads;
	u->st.build_ns += tj->ns;
	u->st.cache_stored += tj->stored;
	if (!tj->rows) {
		if (err == -ENOENT)
			u->st.no_cfi++;
		else if (err == -ETIME)
			u->st.over_time++;
		else if (err != -ENOMEM)
			u->st.unsupported++;
		return err;
	}
	if (tj->from_cache)
		u->st.cached++;
	else
		u->st.tables_built++;
	u->st.scanned += !!(tj->flags & TJ_SCANNED);
	if (tj->flags & TJ_DEBUG_FRAME) {
		u->st.debug_frame++;
		/* The debuginfo is opened only for a file without one. */
		u->st.debuginfo += tj->debuginfo;
	}
	{
		const struct stkrec_unwind_row *r = tj->rows;
		size_t nr = tj->nr;

		err = table_load(u, t, r, nr);
		/* Refused for room: kept, so the next process mapping the
		 * file does not build it again; bigger than the whole map,
		 * it never fits (a failure remembered as any other). */
		if (err == -ENOSPC && nr <= u->maps.rows_cap)
			saved_keep(u, t, r, (uint32_t)nr);
		else if (err == -ENOSPC)
			err = -EFBIG;
	}
	if (err == -ENOSPC || err == -EFBIG)
		u->st.refused_budget++;
	else if (err == -E2BIG)
		u->st.unsupported++;
	return err;
}

static void job_free(struct table_job *tj)
{
	unwind_table__free(tj->ut);
	free(tj->cached);
	elf_end(tj->elf);
	if (tj->dfd >= 0)
		close(tj->dfd);
	if (tj->fd >= 0)
		close(tj->fd);
	free(tj);
}

static void job_done(struct worker_job *wj, int cancelled)
{
	struct table_job *tj = (struct table_job *)wj;
	struct table *t = tj->t;

	if (!cancelled) {
		tj->u->building--;
		t->job = NULL;
		t->failed = table_finish(tj->u, tj);
		unwinder__tables_ready(tj->u, t);
	}
	job_free(tj);
}

/*
 * Open the file of mapping @m of @tgid: the one with @m's build-id.  The
 * paths are the traced process's to change, so only as the recorder's
 * other readers do (procmaps__open_mapped(): map_files, else no symbolic
 * link, only a regular file of the mapped device and inode): a FIFO or a
 * link planted at a mapped path can neither block nor redirect us.
 */
static int open_mapping(uint32_t tgid, const struct stk_mapping *m)
{
	struct procmaps_line l = {
		.start = m->start, .end = m->end, .offset = m->offset,
		.dev = m->dev, .inode = m->inode, .prot = m->prot, .path = m->path,
	};
	uint8_t id[STK_MAX_BUILD_ID];
	int fd;

	fd = procmaps__open_mapped("/proc", tgid, &l);
	if (fd < 0)
		return fd;
	if (!m->build_id_size ||
	    (buildid__from_elf_fd(fd, id, sizeof(id)) == (int)m->build_id_size &&
	     memcmp(id, m->build_id, m->build_id_size) == 0))
		return fd;
	close(fd);
	return -ENOENT;
}

int unwinder__table_is(const struct table *t, const struct stk_mapping *m)
{
	return m->build_id_size ? t->build_id_size == m->build_id_size &&
					  memcmp(t->build_id, m->build_id, m->build_id_size) == 0
				: !t->build_id_size && t->dev == m->dev && t->inode == m->inode;
}

struct table *unwinder__table_find(struct unwinder *u, const struct stk_mapping *m)
{
	size_t i;

	for (i = 0; i < u->nr_tables; i++)
		if (unwinder__table_is(u->tables[i], m))
			return u->tables[i];
	return NULL;
}

/* A new table for mapping @m's file, or NULL. */
static struct table *table_new(struct unwinder *u, const struct stk_mapping *m)
{
	struct table *t;

	if (u->nr_tables == u->cap_tables) {
		size_t cap = u->cap_tables ? u->cap_tables * 2 : 64;
		struct table **n = realloc(u->tables, cap * sizeof(*n));

		if (!n)
			return NULL;
		u->tables = n;
		u->cap_tables = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = u->next_id++;
	memcpy(t->build_id, m->build_id, sizeof(t->build_id));
	t->build_id_size = m->build_id_size;
	t->dev = m->dev;
	t->inode = m->inode;
	u->tables[u->nr_tables++] = t;
	return t;
}

/* Its rows saved before (evicted or refused): back into the map.
 * Returns 0 or the table's -errno (-ENOSPC: still no room, still saved). */
static int table_reload(struct unwinder *u, struct table *t)
{
	/* Taken out of the saved set first: making room may save (and
	 * drop) others. */
	struct stkrec_unwind_row *rows = t->saved;
	uint32_t nr = t->nr_saved;
	int err;

	t->saved = NULL;
	t->nr_saved = 0;
	u->saved_rows -= nr;
	err = table_load(u, t, rows, nr);
	if (err == -ENOSPC) {
		u->st.refused_budget++;
		t->saved = rows; /* still ours to reload */
		t->nr_saved = nr;
		u->saved_rows += nr;
		return err;
	}
	free(rows);
	if (u->mb)
		membudget__give(u->mb, (uint64_t)nr * sizeof(*rows));
	if (!err)
		u->st.reloaded++;
	return err;
}

/* Open mapping @m's file (and its debuginfo) into a job for @t.  NULL
 * with *@err: -EAGAIN (this process's way to the file failed: it may
 * have exited meanwhile, another's may not, so the file is tried again
 * when a process maps it next), -ENOENT (another vDSO), -ENOMEM. */
static struct table_job *job_open(struct unwinder *u, struct table *t, uint32_t tgid,
				  const struct stk_mapping *m, int *err)
{
	struct table_job *tj = calloc(1, sizeof(*tj));
	struct stat st;

	if (!tj) {
		*err = -ENOMEM;
		return NULL;
	}
	tj->u = u;
	tj->t = t;
	tj->fd = tj->dfd = -1;
	tj->j.run = job_run;
	tj->j.done = job_done;
	tj->cache_dir = u->cache_dir;
	if (strcmp(m->path, "[vdso]") == 0) {
		/* Ours, if it is the same image (a 32-bit process has another). */
		if (!u->vdso_size || (m->build_id_size && (m->build_id_size != (uint32_t)u->vdso_id_size ||
							  memcmp(m->build_id, u->vdso_id, m->build_id_size)))) {
			free(tj);
			*err = -ENOENT;
			return NULL;
		}
		tj->elf = elf_memory((char *)u->vdso, u->vdso_size);
		return tj;
	}
	tj->fd = open_mapping(tgid, m);
	if (tj->fd < 0) {
		/* Not this process's to read: another's may be. */
		if (procreds__refused(tj->fd))
			u->st.open_refused++;
		free(tj);
		*err = -EAGAIN;
		return NULL;
	}
	/* Each user's files wait in their own queue. */
	if (fstat(tj->fd, &st) == 0) {
		tj->j.owner = st.st_uid;
		tj->trusted = st.st_uid == 0 && !(st.st_mode & 022);
	}
	memcpy(tj->build_id, m->build_id, sizeof(tj->build_id));
	tj->build_id_size = m->build_id_size;
	return tj;
}

/* The table for mapping @m, or NULL: none (the failure is cached, so the
 * file is not retried at every snapshot), or being built (*@pending). */
struct table *unwinder__table_get(struct unwinder *u, uint32_t tgid, const struct stk_mapping *m,
				  int urgent, int *pending, int *enomem)
{
	struct table *t = unwinder__table_find(u, m);
	struct table_job *tj;
	int err;

	*pending = 0;
	if (t && t->job) {
		if (urgent && !t->job->j.urgent)
			worker__promote(u->worker, &t->job->j);
		*pending = 1;
		return NULL;
	}
	if (t && t->failed != -ENOSPC && t->failed != -EAGAIN)
		return t->failed ? NULL : t;
	if (t && t->saved) {
		t->failed = table_reload(u, t);
		return t->failed ? NULL : t;
	}
	if (!m->path[0] || (m->path[0] == '[' && strcmp(m->path, "[vdso]") != 0))
		return NULL; /* anonymous, [vsyscall]: nothing to read */
	/* Built again (evicted and its saved rows dropped, or its file
	 * unreadable before): under an id of its own, as BPF caches rows by
	 * (id, address) and takes them without reading the table.  Its file
	 * may not be the one it was built from: a file without build-id is
	 * known by device and inode, which a file written over in place, or
	 * created after the first was deleted, has too.  Nothing names the
	 * old id: no process maps it (only tables no process maps are
	 * evicted), and its pages went with its rows. */
	if (t)
		t->id = u->next_id++;
	else if (!(t = table_new(u, m)))
		goto nomem;
	tj = job_open(u, t, tgid, m, &err);
	if (!tj) {
		if (err == -ENOMEM)
			goto nomem;
		u->st.open_failed++;
		t->failed = err;
		return NULL;
	}
	if (u->worker) {
		tj->j.urgent = urgent;
		t->job = tj;
		t->failed = -EINPROGRESS;
		u->st.queued++;
		u->building++;
		worker__submit(u->worker, &tj->j);
		*pending = 1;
		return NULL;
	}
	job_run(&tj->j, NULL);
	t->failed = table_finish(u, tj);
	job_free(tj);
	if (t->failed == -ENOMEM)
		*enomem = 1;
	return t->failed ? NULL : t;
nomem:
	*enomem = 1;
	return NULL;
}

/* Load bias of mapping @m of table @t's file, or 0 with -1 returned. */
int unwinder__mapping_bias(const struct table *t, const struct stk_mapping *m, uint64_t *bias)
{
	size_t i;

	for (i = 0; i < t->nr_loads; i++) {
		const struct load *l = &t->loads[i];
		uint64_t off_al = l->offset & ~(uint64_t)0xfff;

		if (m->offset >= off_al && m->offset < l->offset + l->filesz) {
			/* The mapping starts (m->offset - l->offset) bytes into
			 * the segment, which may be negative by less than a page. */
			*bias = m->start - (l->vaddr + (m->offset - l->offset));
			return 0;
		}
	}
	return -1;
}
