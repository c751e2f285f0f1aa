// SPDX-License-Identifier: BSD-2-Clause
/*
 * perfmap.c - JIT symbols from /tmp/perf-PID.map files, read
 * incrementally, kept under the memory budget and written as ESYM kind 3
 * chunks (see perfmap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "idmap.h"
#include "membudget.h"
#include "perfmap.h"

/* A line kept: 16 bytes, and its name in the process's names buffer. */
struct pent {
	uint64_t addr;
	uint32_t size;		/* a JIT's function is smaller than 4 GiB */
	uint32_t name;		/* offset into names, | PENT_SENT once written */
};

#define PENT_SENT 0x80000000u

/* Lines written, not kept (over the cap, or --embed-symbols=full): their
 * names in a buffer of their own, for one write. */
struct extra {
	struct stk_esym_sym *syms;	/* name: offset into @names until written */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

/* One process's map. */
struct pmap {
	uint32_t tgid;
	int gone;			/* exited: freed once its lookups are written */
	int behind;			/* the last read stopped before the file's end */
	uint64_t dev, ino;		/* the file read (ino 0: none yet) */
	uint64_t offset;		/* read up to here: the end of its last whole line */
	struct pent *ents;		/* sorted by addr, a later line after an earlier */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t names_dead;		/* bytes of names of lines a later one replaced */
	uint64_t charged;		/* budget held: this struct and the two arrays */
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
	} *addrs;
	size_t naddrs, capaddrs;
};

struct perfmaps {
	int full;
	const char *proc_root;
	struct membudget *mb;
	struct idmap procs;		/* tgid -> struct pmap * */
	uint64_t read_left;		/* bytes this flush may still read */
	size_t next_it;			/* where the next flush starts (idmap__next) */
	struct perfmaps_stats st;
};

/* Lookups a process may leave for the next read when its file is read in
 * parts; more are dropped (unnamed). */
#define MAX_CARRIED 4096
/* Bytes per pread() of a map. */
#define READ_BLOCK (1u << 20)
/* Lines per chunk. */
#define CHUNK_LINES 50000
/* The tail of a read whose lines stay at hand (see struct pmap). */
#define RECENT_BYTES (64u << 10)

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

static void pmap_free(struct perfmaps *pm, struct pmap *p)
{
	if (!p)
		return;
	pmap_reset(pm, p);
	membudget__give(pm->mb, sizeof(*p));
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
	free(pm);
}

void perfmaps__forget(struct perfmaps *pm, uint32_t tgid)
{
	struct pmap *p = idmap__find_ptr(&pm->procs, tgid);

	if (!p)
		return;
	if (p->naddrs) {
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
		char *p, *last = NULL;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		for (p = strtok(line + 6, " \t\n"); p; p = strtok(NULL, " \t\n"))
			last = p;
		if (last)
			pid = (uint32_t)strtoul(last, NULL, 10);
		break;
	}
	fclose(f);
	return pid ? pid : tgid;
}

/* ---- the file --------------------------------------------------------------- */

/*
 * Opens the perf map of @tgid for reading, checked (see perfmap.h), with
 * its stat in @st.  -ENOENT when there is none.
 */
static int open_map(const char *proc_root, uint32_t tgid, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[4096 + 64], name[64];
	int rootfd = -1, pfd = -1, fd = -1, err;
	struct stat pst;

	snprintf(path, sizeof(path), "%s/%u", proc_root, tgid);
	/* The process's owner: /proc/PID belongs to its effective uid. */
	if (stat(path, &pst) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%u/root", proc_root, tgid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	snprintf(name, sizeof(name), "tmp/perf-%u.map", perfmap__nspid(proc_root, tgid));
	pfd = (int)syscall(SYS_openat2, rootfd, name, &how, sizeof(how));
	if (pfd < 0 && errno == ENOSYS)
		pfd = openat(rootfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(pfd, st) < 0) {
		err = -errno;
		goto out;
	}
	/* Nothing but a regular file (no FIFO, device, or link), written by
	 * the process's user or root. */
	if (!S_ISREG(st->st_mode) || (st->st_uid != pst.st_uid && st->st_uid != 0)) {
		err = -EPERM;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : fd;
out:
	if (pfd >= 0)
		close(pfd);
	close(rootfd);
	return err;
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

/* Some lookup of @p (sorted) falls in [start, start + size). */
static int covers_lookup(const struct pmap *p, uint64_t start, uint64_t size)
{
	size_t lo = 0, hi = p->naddrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->addrs[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->naddrs && p->addrs[lo].addr - start < size;
}

/* One line read: kept, or counted (and written if a lookup needs it). */
static int pmap_line(struct perfmaps *pm, struct pmap *p, const char *line, size_t len,
		     struct extra *x)
{
	uint64_t start, size;
	const char *name;
	size_t nlen;
	int err;

	if (perfmap__parse_line(line, len, &start, &size, &name, &nlen))
		return 0;
	if (pm->full)
		return extra_add(x, start, size, name, nlen);
	if (size > UINT32_MAX)
		size = UINT32_MAX;
	err = pmap_grow(pm, p, (void **)&p->ents, &p->cap, p->n + 1, sizeof(*p->ents), 1);
	err = err ?: pmap_grow(pm, p, (void **)&p->names, &p->names_cap,
			       p->names_len + nlen + 1, 1, 1);
	if (err == -ENOSPC) {
		pm->st.lines_skipped++;
		p->skipped++;
		return covers_lookup(p, start, size) ? extra_add(x, start, size, name, nlen) : 0;
	}
	if (err)
		return err;
	memcpy(p->names + p->names_len, name, nlen);
	p->names[p->names_len + nlen] = '\0';
	p->ents[p->n++] = (struct pent){ start, (uint32_t)size, (uint32_t)p->names_len };
	p->names_len += nlen + 1;
	return 0;
}

static int by_pent(const void *x, const void *y)
{
	const struct pent *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;	/* file order */
}

/* Sorts the lines read since @n0 into the sorted ones before it. */
static int pmap_merge(struct pmap *p, size_t n0)
{
	size_t nn = p->n - n0, i = n0, j = nn, k = p->n;
	struct pent *add;

	if (!nn)
		return 0;
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
 * Keeps the lines of [@from, @to) of the file on @fd (@from: a line's
 * start, or inside one: that part is skipped) as @p's recent lines, into
 * @buf (RECENT_BYTES at least), under the budget (without room: none).
 */
static void recent_build(struct perfmaps *pm, struct pmap *p, int fd, uint64_t from, uint64_t to,
			 int at_line, char *buf)
{
	ssize_t got = pread(fd, buf, (size_t)(to - from), (off_t)from);
	size_t at = 0;

	p->nrecent = p->recent_len = 0;
	if (got <= 0)
		return;
	if (!at_line) {
		char *nl = memchr(buf, '\n', (size_t)got);

		if (!nl)
			return;
		at = (size_t)(nl - buf) + 1;
	}
	while (at < (size_t)got) {
		char *nl = memchr(buf + at, '\n', (size_t)got - at);
		uint64_t start, size;
		const char *name;
		size_t nlen;

		if (!nl)
			break;
		if (!perfmap__parse_line(buf + at, (size_t)(nl - buf) - at, &start, &size, &name,
					 &nlen)) {
			if (pmap_grow(pm, p, (void **)&p->recent, &p->caprecent, p->nrecent + 1,
				      sizeof(*p->recent), 0) ||
			    pmap_grow(pm, p, (void **)&p->recent_names, &p->recent_cap,
				      p->recent_len + nlen + 1, 1, 0))
				break;
			memcpy(p->recent_names + p->recent_len, name, nlen);
			p->recent_names[p->recent_len + nlen] = '\0';
			p->recent[p->nrecent++] = (struct stk_esym_sym){
				start, size, (const char *)(uintptr_t)p->recent_len };
			p->recent_len += nlen + 1;
		}
		at = (size_t)(nl - buf) + 1;
	}
	if (p->nrecent > 1)
		qsort(p->recent, p->nrecent, sizeof(*p->recent), by_addr);
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

/*
 * Reads what @p's file gained since the last read (all of it if it was
 * replaced or shrunk), at most PERFMAP_READ_FILE_MAX bytes and what is
 * left of this flush's PERFMAP_READ_MAX.  0, or -ENOMEM;
 * a file that cannot be read leaves what was read before.
 */
static int pmap_read(struct perfmaps *pm, struct pmap *p, struct extra *x)
{
	uint64_t pos, end, first, skipped0 = p->skipped;
	size_t n0;
	struct stat st;
	char *buf = NULL;
	int fd, err = 0, skipping = 0;

	fd = open_map(pm->proc_root, p->tgid, &st);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ESRCH)
			pm->st.file_errors++;
		return 0;
	}
	if (p->ino && ((uint64_t)st.st_ino != p->ino || (uint64_t)st.st_dev != p->dev ||
		       (uint64_t)st.st_size < p->offset)) {
		pmap_reset(pm, p);	/* replaced, or rewritten shorter */
		pm->st.restarts++;
	}
	p->ino = (uint64_t)st.st_ino;
	p->dev = (uint64_t)st.st_dev;
	first = pos = p->offset;
	end = (uint64_t)st.st_size;
	if (end - pos > PERFMAP_READ_FILE_MAX)
		end = pos + PERFMAP_READ_FILE_MAX;
	if (end - pos > pm->read_left)
		end = pos + pm->read_left;
	n0 = p->n;
	if (pos < end) {
		buf = malloc(READ_BLOCK);
		if (!buf) {
			err = -ENOMEM;
			goto out;
		}
	}
	while (pos < end && !err) {
		size_t want = end - pos < READ_BLOCK ? (size_t)(end - pos) : READ_BLOCK, at = 0;
		ssize_t got = pread(fd, buf, want, (off_t)pos);
		char *nl;

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
			err = pmap_line(pm, p, buf + at, (size_t)(nl - buf) - at, x);
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
	p->offset = pos;
	p->behind = end < (uint64_t)st.st_size;
	pm->read_left -= pos - first < pm->read_left ? pos - first : pm->read_left;
	if (!err && p->skipped != skipped0)
		recent_build(pm, p, fd, pos - first > RECENT_BYTES ? pos - RECENT_BYTES : first, pos,
			     pos - first <= RECENT_BYTES, buf);
	pm->st.files_read++;
	pm->st.bytes_read += pos - first;
	err = err ?: pmap_merge(p, n0);
	if (!err && p->n > n0)
		pmap_drop_replaced(p);
out:
	free(buf);
	close(fd);
	return err;
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
	p->addrs[p->naddrs++] = (struct lookup){ addr, anon };
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

/*
 * @p's lookups answered: the lines to write (not written before) into
 * @x, kept lines marked written; those a read in parts has not reached
 * yet stay for the next write.
 */
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

static int pmap_answer(struct perfmaps *pm, struct pmap *p, struct extra *x)
{
	size_t i, k = 0, miss = 0, direct;
	int err = 0;

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
		/* A line the last read passed (before this read replaces
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
	if (!err && (pm->full || miss || p->behind))
		err = pmap_read(pm, p, x);
	direct = x->n;	/* lines read, not kept, that cover a lookup */
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
			/* Not read yet: asked again after the next part. */
			if (p->behind && k < MAX_CARRIED)
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
	return err;
}

/* Writes @x's lines of @tgid, sorted, in chunks of CHUNK_LINES. */
static int write_lines(struct perfmaps *pm, uint32_t tgid, struct extra *x,
		       struct stk_writer *w, uint64_t *chunks)
{
	size_t i, k;
	int err = 0;

	for (i = 0; i < x->n; i++)
		x->syms[i].name = x->names + (uintptr_t)x->syms[i].name;
	if (x->n > 1)
		qsort(x->syms, x->n, sizeof(*x->syms), by_sym);
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
	size_t it, start = pm->next_it, stop = (size_t)-1;
	uint64_t tgid, v;
	int err = 0, pass;

	/* The bytes a flush reads are bounded over all files, which take
	 * turns being first: one process's map cannot hold up a flush, nor
	 * keep the others' lines from being read. */
	pm->read_left = PERFMAP_READ_MAX;
	for (pass = 0; pass < 2 && !err; pass++) {
		it = pass ? 0 : start;
		while (!err && (pass == 0 || it < start) && idmap__next(&pm->procs, &it, &tgid, &v)) {
			struct pmap *p = (struct pmap *)(uintptr_t)v;

			if (pass && it > start)
				break;
			if (!p->naddrs && !p->behind)
				continue;
			if (!pm->read_left && stop == (size_t)-1)
				stop = it - 1;	/* the first left without a read */
			err = pmap_answer(pm, p, &x);
			err = err ?: write_lines(pm, p->tgid, &x, w, chunks);
		}
	}
	pm->next_it = stop == (size_t)-1 ? 0 : stop;
	free(x.syms);
	free(x.names);
	/* The processes gone, now that their lookups are answered (not
	 * during the iteration: removing moves the map's entries). */
	for (it = 0; idmap__next(&pm->procs, &it, &tgid, &v);) {
		struct pmap *p = (struct pmap *)(uintptr_t)v;

		if (p->gone) {
			idmap__remove(&pm->procs, tgid);
			pmap_free(pm, p);
			it = 0;
		}
	}
	return err;
}

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st)
{
	*st = pm->st;
}
