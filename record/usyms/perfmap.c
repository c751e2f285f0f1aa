// SPDX-License-Identifier: BSD-2-Clause
/*
 * perfmap.c - JIT symbols from /tmp/perf-PID.map files, read
 * incrementally on the reader thread, kept under the memory budget on the
 * main thread and written as ESYM kind 3 chunks (see perfmap.h).
 *
 * A read is a job (struct pm_job): the main thread copies into it what
 * the read needs (the file's identity and offset, the room its lines may
 * take, the lookups it answers); the worker opens, reads and parses the
 * file into the job's own buffers, touching nothing else; the main thread,
 * in job_done(), takes the budget for the lines it keeps and merges them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "idmap.h"
#include "membudget.h"
#include "perfmap.h"
#include "procreds.h"
#include "worker.h"

/* A line kept: 16 bytes, and its name in the process's names buffer. */
struct pent {
	uint64_t addr;
	uint32_t size;		/* a JIT's function is smaller than 4 GiB */
	uint32_t name;		/* offset into names, | PENT_SENT once written */
};

#define PENT_SENT 0x80000000u

/* Lines with their names in a buffer of their own (the name: an offset
 * into @names until written): lines written though not kept (over the
 * cap, or --embed-symbols=full), and what a read hands back. */
struct extra {
	struct stk_esym_sym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

struct pm_job;

/* One process's map. */
struct pmap {
	uint32_t tgid;
	uint32_t owner;			/* its uid when its last read was asked for */
	int gone;			/* exited: freed once its lookups are written */
	int behind;			/* the last read stopped before the file's end */
	int want;			/* a read waits for its owner's turn */
	uint64_t want_seq;		/* ... since then: the oldest goes first */
	struct pm_job *job;		/* its read on the worker, or NULL */
	uint64_t dev, ino;		/* the file read (ino 0: none yet) */
	uint64_t offset;		/* read up to here: the end of its last whole line */
	struct pent *ents;		/* sorted by addr, a later line after an earlier */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t names_dead;		/* bytes of names of lines a later one replaced */
	uint64_t charged;		/* budget held: this struct and the arrays */
	uint64_t skipped;		/* lines of this file not kept */
	struct span {			/* lines written though not kept (over the */
		uint64_t start, end;	/* cap): what they name needs no read */
	} *spans;			/* sorted by start */
	size_t nspans, capspans;
	/* The lines of the last RECENT_BYTES a read went through, when it
	 * kept not all it read: a JIT appends a function's line just before
	 * it runs, so a read may pass a line whose code is first sampled
	 * after it; that lookup, at the next flush, finds the line here. */
	struct stk_esym_sym *recent;	/* sorted; names: offsets into recent_names */
	size_t nrecent, caprecent;
	char *recent_names;
	size_t recent_len, recent_cap;
	struct lookup {			/* lookups to answer at the next write */
		uint64_t addr;
		int anon;		/* in an anonymous mapping (else in none) */
		int asked;		/* a read that answers it was asked for */
	} *addrs;
	size_t naddrs, capaddrs;
	/* Lines a read found for lookups it was asked with, not kept (over
	 * the cap or the budget; full: every line): written at the next
	 * write.  Not under the budget: at most a line per lookup (full: the
	 * lines of one read). */
	struct extra found;
};

struct perfmaps {
	int full;
	const char *proc_root;
	struct membudget *mb;
	struct worker *wk;		/* reads files, or NULL: read during a write */
	struct idmap procs;		/* tgid -> struct pmap * */
	struct idmap owners;		/* uid + 1 -> 1: its read is on the worker */
	uint64_t want_seq;
	int err;			/* a job_done()'s -ENOMEM, for the next write */
	struct perfmaps_stats st;
};

/*
 * A read of one file.  The worker reads the fields up to @err's, which
 * the main thread filled before worker__submit(), and writes the fields
 * from @err's on, which the main thread reads in job_done(): the worker's
 * queue lock orders both.
 */
struct pm_job {
	struct worker_job j;		/* first: the worker's */
	struct perfmaps *pm;
	struct pmap *p;
	const char *proc_root;
	uint32_t tgid;
	int full;
	uint64_t dev, ino, offset;	/* the file read before, up to @offset */
	uint64_t room;			/* bytes the lines kept may take */
	uint64_t room_new;		/* ... of a file read again from its start */
	uint64_t *addrs;		/* the lookups it answers, sorted */
	size_t naddrs;
	/* Made on the worker. */
	int err;			/* -ENOMEM */
	int open_err;			/* the file not opened: -errno, nothing read */
	int restart;			/* replaced or shorter: read from its start */
	int behind;			/* stopped before the file's end */
	int off_loop;			/* ran on a thread other than the main one */
	uint64_t ndev, nino;
	uint64_t from, to;		/* the bytes read: [from, to), to a line's end */
	uint64_t skipped;		/* lines not kept (over @room) */
	struct extra kept;		/* the lines to keep, sorted */
	struct extra direct;		/* not kept, covering one of @addrs (full: all) */
	struct extra recent;		/* the lines of the last RECENT_BYTES, sorted */
};

/* Lookups a process may leave for the next read when its file is read in
 * parts, or while it is read; more are dropped (unnamed). */
#define MAX_CARRIED 4096
/* Bytes per pread() of a map. */
#define READ_BLOCK (1u << 20)
/* Lines per chunk. */
#define CHUNK_LINES 50000
/* The tail of a read whose lines stay at hand (see struct pmap). */
#define RECENT_BYTES (64u << 10)
/* Parts of a file one write reads without a worker, at most. */
#define SYNC_PARTS_MAX 64

static void extra_free(struct extra *x)
{
	free(x->syms);
	free(x->names);
	*x = (struct extra){ 0 };
}

struct perfmaps *perfmaps__new(int full, const char *proc_root, struct membudget *mb)
{
	struct perfmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->full = full;
	pm->proc_root = proc_root;
	pm->mb = mb;
	return pm;
}

void perfmaps__set_worker(struct perfmaps *pm, struct worker *wk)
{
	pm->wk = wk;
}

/* Drops what @p holds of its file (replaced, or the process gone). */
static void pmap_reset(struct perfmaps *pm, struct pmap *p)
{
	free(p->ents);
	free(p->names);
	free(p->spans);
	free(p->recent);
	free(p->recent_names);
	p->ents = NULL;
	p->names = NULL;
	p->spans = NULL;
	p->recent = NULL;
	p->recent_names = NULL;
	p->n = p->cap = p->names_len = p->names_cap = p->nspans = p->capspans = 0;
	p->names_dead = 0;
	p->nrecent = p->caprecent = p->recent_len = p->recent_cap = 0;
	membudget__give(pm->mb, p->charged - sizeof(*p));
	p->charged = sizeof(*p);
	p->offset = 0;
	p->behind = 0;
	p->skipped = 0;
}

/* (Never with a read under way: see pmap_idle().) */
static void pmap_free(struct perfmaps *pm, struct pmap *p)
{
	if (!p)
		return;
	pmap_reset(pm, p);
	membudget__give(pm->mb, sizeof(*p));
	extra_free(&p->found);
	free(p->addrs);
	free(p);
}

void perfmaps__free(struct perfmaps *pm)
{
	size_t it = 0;
	uint64_t v;

	if (!pm)
		return;
	while (idmap__next(&pm->procs, &it, NULL, &v))
		pmap_free(pm, (struct pmap *)(uintptr_t)v);
	idmap__release(&pm->procs);
	idmap__release(&pm->owners);
	free(pm);
}

/* Nothing of @p's waits: no lookup, no read, no line to write. */
static int pmap_idle(const struct pmap *p)
{
	return !p->naddrs && !p->job && !p->found.n;
}

void perfmaps__new_file(struct perfmaps *pm)
{
	uint64_t val;
	size_t it = 0, i;

	if (!pm)
		return;
	while (idmap__next(&pm->procs, &it, NULL, &val)) {
		struct pmap *p = (struct pmap *)(uintptr_t)val;

		for (i = 0; i < p->n; i++)
			p->ents[i].name &= ~PENT_SENT;
		p->nspans = 0;
	}
}

void perfmaps__forget(struct perfmaps *pm, uint32_t tgid)
{
	struct pmap *p = idmap__find_ptr(&pm->procs, tgid);

	if (!p)
		return;
	if (!pmap_idle(p)) {
		p->gone = 1;	/* its lookups are answered first */
		return;
	}
	idmap__remove(&pm->procs, tgid);
	pmap_free(pm, p);
}

/* ---- parsing -------------------------------------------------------------- */

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	if (end - *p > 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X'))
		*p += 2;
	for (; *p < end; (*p)++, n++) {
		char c = **p;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n == 16)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

int perfmap__parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
			const char **name, size_t *name_len)
{
	const char *q = line, *eol = line + len;

	if (parse_hex(&q, eol, start) || q >= eol || *q != ' ')
		return -EINVAL;
	q++;
	if (parse_hex(&q, eol, size) || q >= eol || *q != ' ' || !*size)
		return -EINVAL;
	q++;
	if (eol > q && eol[-1] == '\r')
		eol--;
	if (eol <= q || memchr(q, '\0', (size_t)(eol - q)))
		return -EINVAL;
	*name = q;
	*name_len = (size_t)(eol - q) > STK_MAX_STRING ? STK_MAX_STRING : (size_t)(eol - q);
	return 0;
}

static int by_addr(const void *x, const void *y)
{
	const struct stk_esym_sym *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* A later line for the same code (recompiled) wins: keep file order. */
	return a->name < b->name ? -1 : a->name > b->name;
}

long perfmap__parse(char *text, size_t len, struct stk_esym_sym **syms)
{
	struct stk_esym_sym *out = NULL;
	size_t n = 0, cap = 0;
	char *p = text, *end = text + len;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		uint64_t start, size;
		const char *name;
		size_t nlen;

		if (perfmap__parse_line(p, (size_t)(eol - p), &start, &size, &name, &nlen))
			goto next;
		((char *)name)[nlen] = '\0';
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct stk_esym_sym *o = realloc(out, ncap * sizeof(*o));

			if (!o) {
				free(out);
				return -ENOMEM;
			}
			out = o;
			cap = ncap;
		}
		out[n++] = (struct stk_esym_sym){ start, size, name };
next:
		p = nl ? nl + 1 : end;
	}
	if (n)
		qsort(out, n, sizeof(*out), by_addr);
	*syms = out;
	return (long)n;
}

uint32_t perfmap__nspid(const char *proc_root, uint32_t tgid)
{
	char path[4096], line[512];
	uint32_t pid = tgid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", proc_root, tgid);
	f = fopen(path, "re");
	if (!f)
		return tgid;
	while (fgets(line, sizeof(line), f)) {
		char *p, *last = NULL, *save;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* strtok_r(): the reader thread calls this too. */
		for (p = strtok_r(line + 6, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
			last = p;
		if (last)
			pid = (uint32_t)strtoul(last, NULL, 10);
		break;
	}
	fclose(f);
	return pid ? pid : tgid;
}

/* ---- the file --------------------------------------------------------------- */

/* What the open of a perf map, under its process's credentials, needs. */
struct map_open {
	const char *proc_root;
	uint32_t tgid;
	uint32_t owner;		/* the uid the file must belong to (or root) */
	struct stat *st;
};

/* Under the process's credentials: the kernel checks the way to the file
 * and the file as it would for the process. */
static int map_open_as(void *arg)
{
	struct map_open *mo = arg;
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[4096 + 64], name[64];
	int rootfd, pfd = -1, fd, err;

	snprintf(path, sizeof(path), "%s/%u/root", mo->proc_root, mo->tgid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	snprintf(name, sizeof(name), "tmp/perf-%u.map", perfmap__nspid(mo->proc_root, mo->tgid));
	pfd = (int)syscall(SYS_openat2, rootfd, name, &how, sizeof(how));
	if (pfd < 0 && errno == ENOSYS)
		pfd = openat(rootfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(pfd, mo->st) < 0) {
		err = -errno;
		goto out;
	}
	/* Nothing but a regular file (no FIFO, device, or link), and, as
	 * perf asks of the maps it reads, its user's own or root's (a
	 * non-root JVM's map that perf-map-agent's jmaps chowned to root). */
	if (!S_ISREG(mo->st->st_mode) || (mo->st->st_uid != mo->owner && mo->st->st_uid != 0)) {
		err = -EPERM;
		goto out;
	}
	/* The open that reads: the file's permissions checked here. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : fd;
out:
	if (pfd >= 0)
		close(pfd);
	close(rootfd);
	return err;
}

/*
 * Opens the perf map of @tgid for reading, checked (see perfmap.h), with
 * its stat in @st.  -ENOENT when there is none; -EACCES or -EPERM when
 * the process itself could not have opened it, or it is neither the
 * process's user's nor root's.
 */
static int open_map(const char *proc_root, uint32_t tgid, struct stat *st)
{
	struct map_open mo = { .proc_root = proc_root, .tgid = tgid, .st = st };
	struct procreds pc;
	int err;

	err = procreds__read(proc_root, tgid, &pc);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* perf's rule for the maps it reads (its own user's, or root's), of
	 * the process: its effective user's, or root's.  A root file that
	 * another process shows us there (bound over the map in its own
	 * mount namespace) is read only if the process could read it
	 * itself: the open runs with its credentials. */
	mo.owner = pc.euid;
	return procreds__run(&pc, map_open_as, &mo);
}

/* The per-file cap on what is kept. */
static uint64_t file_cap(const struct perfmaps *pm)
{
	uint64_t cap = pm->mb->limit / PERFMAP_CAP_SHARE;

	return cap < PERFMAP_CAP_MIN ? PERFMAP_CAP_MIN : cap;
}

/*
 * Room for @need elements of @elem bytes in *@arr (capacity *@cap) of @p,
 * under the budget and, when @capped, the file's cap.  0, -ENOSPC or
 * -ENOMEM.
 */
static int pmap_grow(struct perfmaps *pm, struct pmap *p, void **arr, size_t *cap, size_t need,
		     size_t elem, int capped)
{
	uint64_t room = file_cap(pm) > p->charged ? file_cap(pm) - p->charged : 0;
	size_t ncap = *cap ? *cap * 2 : 4096 / elem;
	void *a;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	/* The last steps under the cap: only what fits. */
	if (capped && (ncap - *cap) * elem > room)
		ncap = *cap + room / elem;
	if (ncap < need || membudget__take(pm->mb, (ncap - *cap) * elem))
		return -ENOSPC;
	a = realloc(*arr, ncap * elem);
	if (!a) {
		membudget__give(pm->mb, (ncap - *cap) * elem);
		return -ENOMEM;
	}
	p->charged += (ncap - *cap) * elem;
	*arr = a;
	*cap = ncap;
	return 0;
}

/* Room for @n more lines of @names bytes (names' NULs included) in @p's
 * kept lines, exactly, under the cap and the budget.  0, -ENOSPC or
 * -ENOMEM. */
static int pmap_reserve(struct perfmaps *pm, struct pmap *p, size_t n, size_t names)
{
	size_t ecap = p->n + n > p->cap ? p->n + n : p->cap;
	size_t ncap = p->names_len + names > p->names_cap ? p->names_len + names : p->names_cap;
	uint64_t more = (ecap - p->cap) * sizeof(*p->ents) + (ncap - p->names_cap);
	void *a;

	if (!more)
		return 0;
	if (p->charged + more > file_cap(pm) || membudget__take(pm->mb, more))
		return -ENOSPC;
	p->charged += more;
	if (ecap > p->cap) {
		a = realloc(p->ents, ecap * sizeof(*p->ents));
		if (!a)
			goto nomem;
		p->ents = a;
		p->cap = ecap;
	}
	if (ncap > p->names_cap) {
		a = realloc(p->names, ncap);
		if (!a)
			goto nomem;
		p->names = a;
		p->names_cap = ncap;
	}
	return 0;
nomem:
	/* What was not grown is given back. */
	more = (ecap - p->cap) * sizeof(*p->ents) + (ncap - p->names_cap);
	p->charged -= more;
	membudget__give(pm->mb, more);
	return -ENOMEM;
}

static int extra_add(struct extra *x, uint64_t start, uint64_t size, const char *name,
		     size_t len)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		struct stk_esym_sym *s = realloc(x->syms, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		x->syms = s;
		x->cap = cap;
	}
	if (x->names_len + len + 1 > x->names_cap) {
		size_t cap = x->names_cap ? x->names_cap : 4096;
		char *s;

		while (cap < x->names_len + len + 1)
			cap *= 2;
		s = realloc(x->names, cap);
		if (!s)
			return -ENOMEM;
		x->names = s;
		x->names_cap = cap;
	}
	memcpy(x->names + x->names_len, name, len);
	x->names[x->names_len + len] = '\0';
	x->syms[x->n++] = (struct stk_esym_sym){ start, size, (const char *)(uintptr_t)x->names_len };
	x->names_len += len + 1;
	return 0;
}

/* The name of line @i of @x (before write_lines()). */
static const char *extra_name(const struct extra *x, size_t i)
{
	return x->names + (uintptr_t)x->syms[i].name;
}

/* Moves @src's lines to the end of @dst (its buffers, when @dst has
 * none: a full read's lines are not copied line by line). */
static int extra_take(struct extra *dst, struct extra *src)
{
	size_t i;
	int err = 0;

	if (!dst->n) {
		extra_free(dst);
		*dst = *src;
		*src = (struct extra){ 0 };
		return 0;
	}
	for (i = 0; i < src->n && !err; i++)
		err = extra_add(dst, src->syms[i].addr, src->syms[i].size, extra_name(src, i),
				strlen(extra_name(src, i)));
	if (!err)
		extra_free(src);
	return err;
}

/* The last of the first @n lines of @x (sorted) starting at or before
 * @addr covers it. */
static int extra_covers(const struct extra *x, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr - x->syms[lo - 1].addr < x->syms[lo - 1].size;
}

/* Some address of @addrs[0..n) (sorted) falls in [start, start + size). */
static int covers_addr(const uint64_t *addrs, size_t n, uint64_t start, uint64_t size)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addrs[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && addrs[lo] - start < size;
}

/* ---- the read, on the worker ------------------------------------------------ */

/* One line read: to keep while the job's room lasts, else counted (and
 * handed back if a lookup needs it). */
static int job_line(struct pm_job *jb, const char *line, size_t len, uint64_t *kept)
{
	uint64_t start, size, need;
	const char *name;
	size_t nlen;

	if (perfmap__parse_line(line, len, &start, &size, &name, &nlen))
		return 0;
	if (jb->full)
		return extra_add(&jb->direct, start, size, name, nlen);
	if (size > UINT32_MAX)
		size = UINT32_MAX;
	need = sizeof(struct pent) + nlen + 1;
	if (!jb->skipped && *kept + need <= jb->room) {
		*kept += need;
		return extra_add(&jb->kept, start, size, name, nlen);
	}
	jb->skipped++;
	return covers_addr(jb->addrs, jb->naddrs, start, size)
		       ? extra_add(&jb->direct, start, size, name, nlen) : 0;
}

/*
 * The lines of [@from, @to) of the file on @fd (@at_line: @from is a
 * line's start, else inside one, whose rest is skipped) into the job's
 * recent lines, through @buf (RECENT_BYTES at least).
 */
static int job_recent(struct pm_job *jb, int fd, uint64_t from, uint64_t to, int at_line,
		      char *buf)
{
	ssize_t got = pread(fd, buf, (size_t)(to - from), (off_t)from);
	size_t at = 0;
	int err = 0;

	if (got <= 0)
		return 0;
	if (!at_line) {
		char *nl = memchr(buf, '\n', (size_t)got);

		if (!nl)
			return 0;
		at = (size_t)(nl - buf) + 1;
	}
	while (at < (size_t)got && !err) {
		char *nl = memchr(buf + at, '\n', (size_t)got - at);
		uint64_t start, size;
		const char *name;
		size_t nlen;

		if (!nl)
			break;
		if (!perfmap__parse_line(buf + at, (size_t)(nl - buf) - at, &start, &size, &name,
					 &nlen))
			err = extra_add(&jb->recent, start, size, name, nlen);
		at = (size_t)(nl - buf) + 1;
	}
	if (jb->recent.n > 1)
		qsort(jb->recent.syms, jb->recent.n, sizeof(*jb->recent.syms), by_addr);
	return err;
}

/*
 * On the worker: reads what the file gained since the job's offset (all
 * of it if it was replaced or shrunk), at most PERFMAP_READ_FILE_MAX
 * bytes and PERFMAP_JOB_CPU_NS of this thread's CPU time, and parses its
 * whole lines into the job.  Touches nothing but the job.
 */
static void job_run(struct worker_job *wj, const _Atomic int *stop)
{
	struct pm_job *jb = (struct pm_job *)wj;
	uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), pos, end, kept = 0;
	struct stat st;
	char *buf = NULL;
	int fd, err = 0, skipping = 0;

	jb->off_loop = gettid() != getpid();
	fd = open_map(jb->proc_root, jb->tgid, &st);
	if (fd < 0) {
		jb->open_err = fd;
		return;
	}
	jb->ndev = (uint64_t)st.st_dev;
	jb->nino = (uint64_t)st.st_ino;
	if (jb->ino && (jb->nino != jb->ino || jb->ndev != jb->dev ||
			(uint64_t)st.st_size < jb->offset)) {
		jb->restart = 1;	/* replaced, or rewritten shorter */
		jb->offset = 0;
		jb->room = jb->room_new;
	}
	jb->from = pos = jb->offset;
	end = (uint64_t)st.st_size;
	if (end - pos > PERFMAP_READ_FILE_MAX)
		end = pos + PERFMAP_READ_FILE_MAX;
	if (pos < end) {
		buf = malloc(READ_BLOCK);
		if (!buf) {
			err = -ENOMEM;
			goto out;
		}
	}
	while (pos < end && !err) {
		size_t want = end - pos < READ_BLOCK ? (size_t)(end - pos) : READ_BLOCK, at = 0;
		ssize_t got;
		char *nl;

		/* Its CPU time bounded, the rest for the next read (a
		 * block at least: each read gets on). */
		if (atomic_load(stop) ||
		    (pos > jb->from && clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 > PERFMAP_JOB_CPU_NS)) {
			end = pos;
			break;
		}
		got = pread(fd, buf, want, (off_t)pos);
		if (got <= 0)
			break;	/* shorter than it said: what there is */
		if (skipping) {
			/* The rest of a line longer than a block: not a line. */
			nl = memchr(buf, '\n', (size_t)got);
			if (!nl) {
				pos += (uint64_t)got;
				continue;
			}
			at = (size_t)(nl - buf) + 1;
			skipping = 0;
		}
		while (at < (size_t)got && !err) {
			nl = memchr(buf + at, '\n', (size_t)got - at);
			if (!nl)
				break;
			err = job_line(jb, buf + at, (size_t)(nl - buf) - at, &kept);
			at = (size_t)(nl - buf) + 1;
		}
		if (!at && (size_t)got == READ_BLOCK) {
			skipping = 1;	/* no newline in a whole block */
			at = READ_BLOCK;
		}
		pos += at;
		if (at < (size_t)got && (size_t)got < READ_BLOCK)
			break;	/* a line being written: its newline comes later */
	}
	/* A line being written has no newline yet: it is read next time. */
	jb->to = pos;
	jb->behind = end < (uint64_t)st.st_size;
	if (!err && !jb->full && pos > jb->from)
		err = job_recent(jb, fd, pos - jb->from > RECENT_BYTES ? pos - RECENT_BYTES : jb->from,
				 pos, pos - jb->from <= RECENT_BYTES, buf);
	if (!err && jb->kept.n > 1)
		qsort(jb->kept.syms, jb->kept.n, sizeof(*jb->kept.syms), by_addr);
out:
	jb->err = err;
	free(buf);
	close(fd);
}

/* ---- the read's result, on the main thread ------------------------------------ */

static int by_pent(const void *x, const void *y)
{
	const struct pent *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;	/* file order */
}

/* Sorts the lines added since @n0 (@sorted: they are) into the sorted
 * ones before them. */
static int pmap_merge(struct pmap *p, size_t n0, int sorted)
{
	size_t nn = p->n - n0, i = n0, j = nn, k = p->n;
	struct pent *add;

	if (!nn)
		return 0;
	if (!sorted)
		qsort(p->ents + n0, nn, sizeof(*p->ents), by_pent);
	if (!n0 || p->ents[n0 - 1].addr <= p->ents[n0].addr)
		return 0;	/* appended in order: JITs mostly do */
	add = malloc(nn * sizeof(*add));
	if (!add)
		return -ENOMEM;
	memcpy(add, p->ents + n0, nn * sizeof(*add));
	/* From the end; an old line before a new one at the same address. */
	while (j) {
		if (i && p->ents[i - 1].addr > add[j - 1].addr)
			p->ents[--k] = p->ents[--i];
		else
			p->ents[--k] = add[--j];
	}
	free(add);
	return 0;
}

static int by_name_off(const void *x, const void *y)
{
	uint32_t a = ((const struct pent *)x)->name & ~PENT_SENT;
	uint32_t b = ((const struct pent *)y)->name & ~PENT_SENT;

	return a < b ? -1 : a > b;
}

/*
 * A JIT that compiles anew all the time reuses its code memory: the line
 * of new code at an address replaces the one before it there (a lookup
 * takes the later line already).  Those replaced leave the sorted lines,
 * and once they hold half the names, the names are packed (in place: by
 * offset, each slides down), so that a process's lines take the room of
 * its live code, not of all it ever compiled (V8 under --perf-basic-prof
 * grew its map by 2-5 MiB a minute, 40% of it lines replaced, which the
 * recorder kept up to the file's cap).  Capacities stay: what the lines
 * gain next reuses them.
 */
static void pmap_drop_replaced(struct pmap *p)
{
	size_t i, k = 0, at = 0;

	for (i = 0; i < p->n; i++) {
		if (i + 1 < p->n && p->ents[i + 1].addr == p->ents[i].addr) {
			p->names_dead += strlen(p->names + (p->ents[i].name & ~PENT_SENT)) + 1;
			continue;
		}
		p->ents[k++] = p->ents[i];
	}
	p->n = k;
	if (p->names_dead < 4096 || p->names_dead * 2 < p->names_len)
		return;
	qsort(p->ents, p->n, sizeof(*p->ents), by_name_off);
	for (i = 0; i < p->n; i++) {
		uint32_t off = p->ents[i].name & ~PENT_SENT;
		size_t len = strlen(p->names + off) + 1;

		memmove(p->names + at, p->names + off, len);
		p->ents[i].name = (uint32_t)at | (p->ents[i].name & PENT_SENT);
		at += len;
	}
	p->names_len = at;
	p->names_dead = 0;
	qsort(p->ents, p->n, sizeof(*p->ents), by_pent);
}

/*
 * Keeps the lines @jb read to keep, under the budget: at once if it has
 * the room, else line by line as it has; those it has no room for are
 * counted (and handed on with jb->direct if a lookup needs them).
 */
static int pmap_keep(struct perfmaps *pm, struct pmap *p, struct pm_job *jb)
{
	const struct extra *k = &jb->kept;
	size_t i, n0 = p->n;
	int err = 0, bulk;

	if (!k->n)
		return 0;
	bulk = pmap_reserve(pm, p, k->n, k->names_len);
	if (bulk == -ENOMEM)
		return bulk;
	for (i = 0; i < k->n && !err; i++) {
		const struct stk_esym_sym *s = &k->syms[i];
		const char *name = extra_name(k, i);
		size_t nlen = strlen(name);

		if (bulk) {
			err = pmap_grow(pm, p, (void **)&p->ents, &p->cap, p->n + 1,
					sizeof(*p->ents), 1);
			err = err ?: pmap_grow(pm, p, (void **)&p->names, &p->names_cap,
					       p->names_len + nlen + 1, 1, 1);
			if (err == -ENOSPC) {
				err = 0;
				pm->st.lines_skipped++;
				p->skipped++;
				if (covers_addr(jb->addrs, jb->naddrs, s->addr, s->size))
					err = extra_add(&jb->direct, s->addr, s->size, name, nlen);
				continue;
			}
			if (err)
				break;
		}
		memcpy(p->names + p->names_len, name, nlen + 1);
		p->ents[p->n++] = (struct pent){ s->addr, (uint32_t)s->size,
						 (uint32_t)p->names_len };
		p->names_len += nlen + 1;
	}
	/* In the job's order, sorted, the lines kept. */
	err = err ?: pmap_merge(p, n0, 1);
	if (!err && p->n > n0)
		pmap_drop_replaced(p);
	return err;
}

/* @p's recent lines are now @r's, if the budget has room (else none). */
static void pmap_recent(struct perfmaps *pm, struct pmap *p, const struct extra *r)
{
	p->nrecent = p->recent_len = 0;
	if (!r->n ||
	    pmap_grow(pm, p, (void **)&p->recent, &p->caprecent, r->n, sizeof(*p->recent), 0) ||
	    pmap_grow(pm, p, (void **)&p->recent_names, &p->recent_cap, r->names_len, 1, 0))
		return;
	memcpy(p->recent, r->syms, r->n * sizeof(*r->syms));
	memcpy(p->recent_names, r->names, r->names_len);
	p->nrecent = r->n;
	p->recent_len = r->names_len;
}

static void job_free(struct pm_job *jb)
{
	extra_free(&jb->kept);
	extra_free(&jb->direct);
	extra_free(&jb->recent);
	free(jb->addrs);
	free(jb);
}

static void owners_release(struct perfmaps *pm, uint32_t owner, int next);

/*
 * On the main thread, once the read has run (or instead: @cancelled):
 * what it read becomes @p's, its lines kept under the budget, those found
 * for lookups written at the next perfmaps__write().
 */
static void job_done(struct worker_job *wj, int cancelled)
{
	struct pm_job *jb = (struct pm_job *)wj;
	struct perfmaps *pm = jb->pm;
	struct pmap *p = jb->p;
	uint64_t skipped0 = p->skipped;
	int err = 0;

	p->job = NULL;
	if (cancelled)
		goto out;
	if (jb->open_err) {
		if (procreds__refused(jb->open_err))
			pm->st.files_refused++;
		else if (jb->open_err != -ENOENT && jb->open_err != -ESRCH)
			pm->st.file_errors++;
		/* Nothing more to read: its lookups are answered as they are. */
		p->behind = 0;
		goto out;
	}
	if (jb->err) {
		err = jb->err;
		goto out;
	}
	if (jb->restart) {
		pmap_reset(pm, p);
		pm->st.restarts++;
	}
	p->ino = jb->nino;
	p->dev = jb->ndev;
	p->offset = jb->to;
	p->behind = jb->behind;
	pm->st.files_read++;
	pm->st.bytes_read += jb->to - jb->from;
	if (jb->off_loop)
		pm->st.bytes_read_off_loop += jb->to - jb->from;
	pm->st.lines_skipped += jb->skipped;
	p->skipped += jb->skipped;
	err = pmap_keep(pm, p, jb);
	err = err ?: extra_take(&p->found, &jb->direct);
	if (!err && p->skipped != skipped0)
		pmap_recent(pm, p, &jb->recent);
out:
	if (err && !pm->err)
		pm->err = err;
	if (pm->wk)
		owners_release(pm, jb->j.owner, !cancelled);
	job_free(jb);
}

/* ---- reads asked for, one per owner at a time ------------------------------------ */

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The uid of process @tgid, the worker's fair-share key (0 if gone). */
static uint32_t proc_owner(const struct perfmaps *pm, uint32_t tgid)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u", pm->proc_root, tgid);
	return stat(path, &st) == 0 ? (uint32_t)st.st_uid : 0;
}

/*
 * Asks for a read of @p's file answering its lookups now: on the worker,
 * if its owner has none there (else once it has not: the oldest waiting
 * first), or here without a worker.  0 or -ENOMEM.
 */
static int pmap_submit(struct perfmaps *pm, struct pmap *p)
{
	static const _Atomic int no_stop;
	struct pm_job *jb;
	uint64_t cap = file_cap(pm);
	size_t i;

	if (pm->wk) {
		p->owner = proc_owner(pm, p->tgid);
		if (idmap__find(&pm->owners, (uint64_t)p->owner + 1)) {
			if (!p->want)
				p->want_seq = ++pm->want_seq;
			p->want = 1;
			return 0;
		}
	}
	jb = calloc(1, sizeof(*jb));
	if (!jb)
		return -ENOMEM;
	if (p->naddrs) {
		jb->addrs = malloc(p->naddrs * sizeof(*jb->addrs));
		if (!jb->addrs) {
			free(jb);
			return -ENOMEM;
		}
	}
	if (pm->wk && idmap__set(&pm->owners, (uint64_t)p->owner + 1, 1)) {
		job_free(jb);
		return -ENOMEM;
	}
	for (i = 0; i < p->naddrs; i++) {
		jb->addrs[i] = p->addrs[i].addr;
		p->addrs[i].asked = 1;
	}
	jb->naddrs = p->naddrs;
	if (jb->naddrs > 1)
		qsort(jb->addrs, jb->naddrs, sizeof(*jb->addrs), by_u64);
	jb->pm = pm;
	jb->p = p;
	jb->proc_root = pm->proc_root;
	jb->tgid = p->tgid;
	jb->full = pm->full;
	jb->dev = p->dev;
	jb->ino = p->ino;
	jb->offset = p->offset;
	jb->room = cap > p->charged ? cap - p->charged : 0;
	jb->room_new = cap - sizeof(*p);
	jb->j.owner = p->owner;
	jb->j.run = job_run;
	jb->j.done = job_done;
	p->job = jb;
	p->want = 0;
	if (!pm->wk) {
		job_run(&jb->j, &no_stop);
		job_done(&jb->j, 0);
		return 0;
	}
	worker__submit(pm->wk, &jb->j);
	return 0;
}

/* @p has lookups or lines a read may bring. */
static int pmap_wants_read(const struct perfmaps *pm, const struct pmap *p)
{
	return p->naddrs || p->behind || (pm->full && p->want);
}

/* --embed-symbols=full: bytes of lines read and not written yet, over
 * every process (they are outside the budget until the next write). */
static size_t found_bytes(const struct perfmaps *pm)
{
	size_t it = 0, n = 0;
	uint64_t v;

	while (idmap__next(&pm->procs, &it, NULL, &v)) {
		const struct pmap *p = (const struct pmap *)(uintptr_t)v;

		n += p->found.n * sizeof(*p->found.syms) + p->found.names_len;
	}
	return n;
}

/* @owner's read is done: the read of its process waiting longest next
 * (if @next: not when the worker stops).  With --embed-symbols=full, not
 * one whose last read is still unwritten, nor past PERFMAP_FULL_HELD
 * unwritten in all: the rest wait for the next write, which frees them
 * (between two flushes the worker would otherwise read every waiting
 * process, 16 MiB each). */
static void owners_release(struct perfmaps *pm, uint32_t owner, int next)
{
	struct pmap *first = NULL;
	size_t it = 0;
	uint64_t v;
	int err;

	idmap__remove(&pm->owners, (uint64_t)owner + 1);
	while (idmap__next(&pm->procs, &it, NULL, &v)) {
		struct pmap *p = (struct pmap *)(uintptr_t)v;

		if (!p->want || p->owner != owner)
			continue;
		if (!pmap_wants_read(pm, p))
			p->want = 0;
		else if (pm->full && p->found.n)
			continue;
		else if (!first || p->want_seq < first->want_seq)
			first = p;
	}
	if (first && pm->full && found_bytes(pm) >= PERFMAP_FULL_HELD)
		first = NULL;
	if (next && first) {
		err = pmap_submit(pm, first);
		if (err && !pm->err)
			pm->err = err;
	}
}

/* ---- lookups ------------------------------------------------------------------ */

/* The last line starting at or before @addr that covers it, or -1. */
static long pmap_find(const struct pmap *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->ents[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo--) {
		if (addr - p->ents[lo].addr < p->ents[lo].size)
			return (long)lo;
		if (p->n - lo > 64)
			break;	/* only overlapping neighbours, bounded */
	}
	return -1;
}

/* The last recent line starting at or before @addr that covers it, or -1. */
static long recent_find(const struct pmap *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nrecent;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->recent[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr - p->recent[lo - 1].addr < p->recent[lo - 1].size ? (long)lo - 1 : -1;
}

int perfmaps__see(struct perfmaps *pm, uint32_t tgid, uint64_t addr, int anon)
{
	struct pmap *p = idmap__find_ptr(&pm->procs, tgid);

	if (!p) {
		if (membudget__take(pm->mb, sizeof(*p))) {
			pm->st.lines_skipped++;	/* its line, if it has one */
			return 0;
		}
		p = calloc(1, sizeof(*p));
		if (!p || idmap__set_ptr(&pm->procs, tgid, p)) {
			free(p);
			membudget__give(pm->mb, sizeof(*p));
			return -ENOMEM;
		}
		p->tgid = tgid;
		p->charged = sizeof(*p);
	}
	if (p->naddrs == p->capaddrs) {
		size_t cap = p->capaddrs ? p->capaddrs * 2 : 64;
		struct lookup *a = realloc(p->addrs, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->addrs = a;
		p->capaddrs = cap;
	}
	p->addrs[p->naddrs++] = (struct lookup){ addr, anon, 0 };
	return 0;
}

static int by_lookup(const void *x, const void *y)
{
	const struct lookup *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_sym(const void *x, const void *y)
{
	const struct stk_esym_sym *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* A line written though not kept covers @addr. */
static int span_covers(const struct pmap *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nspans;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->spans[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < p->spans[lo - 1].end;
}

/* Remembers the @n lines of @x (sorted) as written, if the budget has
 * room (else they may be written again: no loss). */
static int span_add(struct perfmaps *pm, struct pmap *p, const struct extra *x, size_t n)
{
	size_t i = p->nspans, j = n, k = p->nspans + n;
	int err;

	if (!n)
		return 0;
	/* Past the file's cap (which the lines kept may fill): a span is
	 * 16 bytes per JIT function sampled, not per line of the file. */
	err = pmap_grow(pm, p, (void **)&p->spans, &p->capspans, p->nspans + n, sizeof(*p->spans), 0);
	if (err)
		return err == -ENOSPC ? 0 : err;
	while (j) {
		const struct stk_esym_sym *s = &x->syms[j - 1];

		if (i && p->spans[i - 1].start > s->addr) {
			p->spans[--k] = p->spans[--i];
		} else {
			p->spans[--k] = (struct span){ s->addr, s->addr + s->size };
			j--;
		}
	}
	p->nspans += n;
	return 0;
}

/*
 * @p's lookups answered from what is read: the lines to write (not
 * written before) into @x, kept lines marked written; those no read has
 * answered yet stay for the next write, and a read for them is asked for
 * (without a worker: done here first).
 */
static int pmap_answer(struct perfmaps *pm, struct pmap *p, struct extra *x)
{
	size_t i, k = 0, direct;
	int err = 0, miss = 0, had = p->naddrs > 0;

	if (p->naddrs > 1)
		qsort(p->addrs, p->naddrs, sizeof(*p->addrs), by_lookup);
	for (i = 0; !pm->full && i < p->naddrs && !err; i++) {
		uint64_t a = p->addrs[i].addr;
		long r;

		/* (The lookups are sorted: the next in a line just taken
		 * from the recent ones falls in the last of them.) */
		if (pmap_find(p, a) >= 0 || span_covers(p, a) ||
		    (x->n && a - x->syms[x->n - 1].addr < x->syms[x->n - 1].size))
			continue;
		/* A line the last read passed (before a read replaces
		 * them): written now, remembered as a span after. */
		r = recent_find(p, a);
		if (r < 0) {
			miss = 1;
			continue;
		}
		err = extra_add(x, p->recent[r].addr, p->recent[r].size,
				p->recent_names + (uintptr_t)p->recent[r].name,
				strlen(p->recent_names + (uintptr_t)p->recent[r].name));
	}
	/* Without a worker the read is here, its answers below: all of
	 * what the file has now, however many parts its bounds make. */
	if (!err && !pm->wk && (pm->full ? had || p->behind : miss || p->behind)) {
		int parts = 0;

		do
			err = pmap_submit(pm, p);
		while (!err && p->behind && ++parts < SYNC_PARTS_MAX);
	}
	/* The lines a read found for lookups, not kept. */
	err = err ?: extra_take(x, &p->found);
	direct = x->n;	/* lines not kept that cover a lookup */
	if (!pm->full && direct > 1)
		qsort(x->syms, direct, sizeof(*x->syms), by_sym);
	for (i = 0; i < p->naddrs && !err; i++) {
		long j = pm->full ? -1 : pmap_find(p, p->addrs[i].addr);
		const char *name;
		struct pent *e;

		if (j < 0) {
			if (pm->full || span_covers(p, p->addrs[i].addr) ||
			    extra_covers(x, direct, p->addrs[i].addr))
				continue;	/* named by a line not kept */
			/* Not read yet (a read is under way or to be asked
			 * for, or the file is read in parts): asked again
			 * after it. */
			if ((p->job || !p->addrs[i].asked || p->behind) && k < MAX_CARRIED)
				p->addrs[k++] = p->addrs[i];
			else if (p->skipped && p->addrs[i].anon)
				pm->st.misses_skipped++;	/* its line may be one not kept */
			continue;
		}
		e = &p->ents[j];
		if (e->name & PENT_SENT)
			continue;
		name = p->names + e->name;
		e->name |= PENT_SENT;
		err = extra_add(x, e->addr, e->size, name, strlen(name));
	}
	p->naddrs = k;
	if (!err && !pm->full)
		err = span_add(pm, p, x, direct);
	/* On the worker: the read the lookups left wait for, the next part
	 * of a file read in parts. */
	if (!err && pm->wk && !p->job && (pm->full ? had || p->behind || p->want : k || p->behind))
		err = pmap_submit(pm, p);
	return err;
}

/* Writes @x's lines of @tgid, sorted, in chunks of CHUNK_LINES; a line
 * there twice (at hand and found by a read) once. */
static int write_lines(struct perfmaps *pm, uint32_t tgid, struct extra *x,
		       struct stk_writer *w, uint64_t *chunks)
{
	size_t i, k, n = 0;
	int err = 0;

	for (i = 0; i < x->n; i++)
		x->syms[i].name = x->names + (uintptr_t)x->syms[i].name;
	if (x->n > 1)
		qsort(x->syms, x->n, sizeof(*x->syms), by_sym);
	for (i = 0; i < x->n; i++) {
		const struct stk_esym_sym *s = &x->syms[i];

		if (n && x->syms[n - 1].addr == s->addr && x->syms[n - 1].size == s->size &&
		    strcmp(x->syms[n - 1].name, s->name) == 0)
			continue;
		x->syms[n++] = *s;
	}
	x->n = n;
	for (i = 0; i < x->n && !err; i += k) {
		k = x->n - i < CHUNK_LINES ? x->n - i : CHUNK_LINES;
		err = stk_writer__add_esym_perf_map(w, tgid, x->syms + i, k);
		if (!err) {
			(*chunks)++;
			pm->st.symbols_written += k;
		}
	}
	x->n = 0;
	x->names_len = 0;
	return err;
}

int perfmaps__write(struct perfmaps *pm, struct stk_writer *w, uint64_t *chunks)
{
	struct extra x = { 0 };
	uint64_t tgid, v;
	size_t it;
	int err = pm->err;

	/* Reads take their turns on the worker (one per owner at a time,
	 * each bounded): a write only answers from what they brought. */
	pm->err = 0;
	for (it = 0; !err && idmap__next(&pm->procs, &it, &tgid, &v);) {
		struct pmap *p = (struct pmap *)(uintptr_t)v;

		if (!p->naddrs && !p->behind && !p->found.n && !p->want)
			continue;
		err = pmap_answer(pm, p, &x);
		err = err ?: write_lines(pm, p->tgid, &x, w, chunks);
	}
	extra_free(&x);
	/* The processes gone, now that their lookups are answered (not
	 * during the iteration: removing moves the map's entries). */
	for (it = 0; idmap__next(&pm->procs, &it, &tgid, &v);) {
		struct pmap *p = (struct pmap *)(uintptr_t)v;

		if (p->gone && pmap_idle(p)) {
			idmap__remove(&pm->procs, tgid);
			pmap_free(pm, p);
			it = 0;
		}
	}
	return err ?: pm->err;
}

int perfmaps__reading(const struct perfmaps *pm)
{
	size_t it = 0;
	uint64_t v;

	while (idmap__next(&pm->procs, &it, NULL, &v)) {
		const struct pmap *p = (const struct pmap *)(uintptr_t)v;

		/* (A read waiting for its owner's turn: while another is
		 * on the worker, whose end gives it the turn.) */
		if ((p->job || (p->want && idmap__find(&pm->owners, (uint64_t)p->owner + 1))) &&
		    (p->naddrs || pm->full))
			return 1;
	}
	return 0;
}

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st)
{
	*st = pm->st;
}
