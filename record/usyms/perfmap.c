// SPDX-License-Identifier: BSD-2-Clause
/*
 * perfmap.c - JIT symbols from /tmp/perf-PID.map files, queued for ESYM
 * kind 3 chunks (see perfmap.h).
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

#include "hash.h"
#include "idmap.h"
#include "perfmap.h"

/* One process's map as last read. */
struct pmap {
	uint32_t tgid;
	char *text;			/* the file's bytes; names point into it */
	struct stk_esym_sym *syms;	/* sorted by addr */
	size_t n;
	uint64_t dev, ino, size, mtime_ns;	/* the file read; ino 0: none */
	uint64_t checked;		/* flush generation of the last look */
	struct idmap sent;		/* hash of (addr, size, name) of lines queued */
	size_t *queue;			/* indexes into syms to write */
	size_t nq, capq;
};

struct perfmaps {
	int full;
	uint64_t gen;			/* flushes written */
	struct idmap procs;		/* tgid -> struct pmap * */
	struct perfmaps_stats st;
};

struct perfmaps *perfmaps__new(int full)
{
	struct perfmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->full = full;
	pm->gen = 1;
	return pm;
}

static void pmap_free(struct pmap *p)
{
	if (!p)
		return;
	free(p->text);
	free(p->syms);
	free(p->queue);
	idmap__release(&p->sent);
	free(p);
}

void perfmaps__free(struct perfmaps *pm)
{
	size_t it = 0;
	uint64_t v;

	if (!pm)
		return;
	while (idmap__next(&pm->procs, &it, NULL, &v))
		pmap_free((struct pmap *)(uintptr_t)v);
	idmap__release(&pm->procs);
	free(pm);
}

void perfmaps__forget(struct perfmaps *pm, uint32_t tgid)
{
	struct pmap *p = idmap__find_ptr(&pm->procs, tgid);

	if (!p || p->nq)
		return;	/* queued lines go out first */
	idmap__remove(&pm->procs, tgid);
	pmap_free(p);
}

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
		char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end, *name;
		const char *q = p;
		uint64_t start, size;

		if (parse_hex(&q, eol, &start) || q >= eol || *q != ' ')
			goto next;
		q++;
		if (parse_hex(&q, eol, &size) || q >= eol || *q != ' ' || !size)
			goto next;
		name = (char *)q + 1;
		if (eol > name && eol[-1] == '\r')
			eol--;
		if (eol <= name || memchr(name, '\0', (size_t)(eol - name)))
			goto next;
		if (eol - name > (long)STK_MAX_STRING)
			eol = name + STK_MAX_STRING;
		*eol = '\0';
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
	 * the process's user or root, of a size we are willing to read. */
	if (!S_ISREG(st->st_mode) || (st->st_uid != pst.st_uid && st->st_uid != 0)) {
		err = -EPERM;
		goto out;
	}
	if ((uint64_t)st->st_size > PERFMAP_MAX_BYTES) {
		err = -EFBIG;
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

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
}

/* (Re)reads @p's file if it changed.  0, or -ENOMEM; other failures leave
 * what was read before. */
static int pmap_read(struct perfmaps *pm, struct pmap *p, const char *proc_root)
{
	struct stk_esym_sym *syms = NULL;
	struct stat st;
	size_t len = 0;
	char *text;
	long n;
	int fd;

	fd = open_map(proc_root, p->tgid, &st);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ESRCH)
			pm->st.file_errors++;
		return 0;
	}
	if ((uint64_t)st.st_ino == p->ino && (uint64_t)st.st_dev == p->dev &&
	    (uint64_t)st.st_size == p->size && mtime_ns(&st) == p->mtime_ns) {
		close(fd);
		return 0;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size) {
		ssize_t r = pread(fd, text + len, (size_t)st.st_size - len, (off_t)len);

		if (r <= 0)
			break;	/* shorter than it said: what there is */
		len += (size_t)r;
	}
	close(fd);
	/* A line being written has no newline yet: leave it for next time. */
	while (len && text[len - 1] != '\n')
		len--;
	n = perfmap__parse(text, len, &syms);
	if (n < 0) {
		free(text);
		return -ENOMEM;
	}
	pm->st.files_read++;
	/* The queue indexes the old table: it is rebuilt from @sent. */
	p->nq = 0;
	idmap__clear(&p->sent);
	free(p->text);
	free(p->syms);
	p->text = text;
	p->syms = syms;
	p->n = (size_t)n;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->size = (uint64_t)st.st_size;
	p->mtime_ns = mtime_ns(&st);
	return 0;
}

static uint64_t line_key(const struct stk_esym_sym *s)
{
	return hash_bytes(hash64(hash64(3, s->addr), s->size), s->name, strlen(s->name));
}

/* Queues line @i unless written (or queued) before.  0 or -ENOMEM. */
static int pmap_queue(struct pmap *p, size_t i)
{
	uint64_t key = line_key(&p->syms[i]);

	if (idmap__find(&p->sent, key))
		return 0;
	if (p->nq == p->capq) {
		size_t cap = p->capq ? p->capq * 2 : 64;
		size_t *q = realloc(p->queue, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		p->queue = q;
		p->capq = cap;
	}
	if (idmap__set(&p->sent, key, 1))
		return -ENOMEM;
	p->queue[p->nq++] = i;
	return 0;
}

/* The last line starting at or before @addr that covers it, or -1. */
static long pmap_find(const struct pmap *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo--) {
		if (addr - p->syms[lo].addr < p->syms[lo].size)
			return (long)lo;
		if (p->n - lo > 64)
			break;	/* only overlapping neighbours, bounded */
	}
	return -1;
}

int perfmaps__see(struct perfmaps *pm, const char *proc_root, uint32_t tgid, uint64_t addr)
{
	struct pmap *p = idmap__find_ptr(&pm->procs, tgid);
	long i;
	int err;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->tgid = tgid;
		if (idmap__set_ptr(&pm->procs, tgid, p)) {
			free(p);
			return -ENOMEM;
		}
	}
	i = pm->full && p->checked == pm->gen ? -1 : pmap_find(p, addr);
	if (i < 0 && p->checked != pm->gen) {
		/* Once per flush at most: JIT code appends lines as it goes. */
		p->checked = pm->gen;
		err = pmap_read(pm, p, proc_root);
		if (err)
			return err;
		if (pm->full) {
			size_t k;

			for (k = 0; k < p->n; k++)
				if ((err = pmap_queue(p, k)))
					return err;
			return 0;
		}
		i = pmap_find(p, addr);
	}
	return i < 0 ? 0 : pmap_queue(p, (size_t)i);
}

static int by_index(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

int perfmaps__write(struct perfmaps *pm, struct stk_writer *w, uint64_t *chunks)
{
	struct stk_esym_sym *buf = NULL;
	size_t it = 0, cap = 0, i;
	uint64_t v;
	int err = 0;

	pm->gen++;
	while (!err && idmap__next(&pm->procs, &it, NULL, &v)) {
		struct pmap *p = (struct pmap *)(uintptr_t)v;

		if (!p->nq)
			continue;
		if (p->nq > cap) {
			struct stk_esym_sym *b = realloc(buf, p->nq * sizeof(*b));

			if (!b) {
				err = -ENOMEM;
				break;
			}
			buf = b;
			cap = p->nq;
		}
		qsort(p->queue, p->nq, sizeof(*p->queue), by_index);
		for (i = 0; i < p->nq; i++)
			buf[i] = p->syms[p->queue[i]];
		err = stk_writer__add_esym_perf_map(w, p->tgid, buf, p->nq);
		if (!err) {
			(*chunks)++;
			pm->st.symbols_written += p->nq;
		}
		p->nq = 0;
	}
	free(buf);
	return err;
}

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st)
{
	*st = pm->st;
}
