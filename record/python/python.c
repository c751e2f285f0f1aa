// SPDX-License-Identifier: BSD-2-Clause
/*
 * python.c - the recorder's side of Python frames (python.h): per file, is
 * it a CPython interpreter (pyelf.c) and with which offsets (pytables.c);
 * per process, its interpreter's addresses into the BPF "py_procs" map,
 * the check of its layout on the live process (pycode.c) before any of
 * its names is written, and its code objects, read once per (address,
 * fingerprint) and written at the next flush.
 *
 * An interpreter that is not 3.8-3.13, or whose live layout is not its
 * table's, is dropped from the walk and counted (STAT python_unsupported):
 * its stacks keep the native frames, never wrong names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hash.h"
#include "idmap.h"
#include "procmaps.h"
#include "pycode.h"
#include "pyelf.h"
#include "python.h"
#include "stkrec.h"

/* Memory the code objects kept may take. */
#define PY_CODE_BUDGET (64u << 20)
/* A code object's entry in a process's "codes": fingerprint | state. */
#define CODE_NAMED (1ULL << 32)
#define CODE_FAILED (2ULL << 32)
#define CODE_STALE (4ULL << 32)	/* ... because it was freed */

struct pybin {
	int err;		/* 0: an interpreter we read; else why not */
	int checked;		/* a process running this very file passed the
				 * layout check: the layout is the file's */
	struct pyelf pe;
	struct pyoffsets o;
};

struct pyproc {
	uint32_t tgid;
	int state;		/* 0 unchecked, 1 checked, -1 unsupported */
	int exact;		/* @bin is the file it runs (not a guess by version) */
	struct pybin *bin;
	uint64_t runtime, code_type;
	struct idmap *codes;	/* code address -> fingerprint | CODE_* */
};

struct pyrec {
	uint32_t tgid, version;
	struct pycode c;
};

struct python {
	int procs_fd;
	struct ring_buffer *codes_ring;	/* "py_code_ring": code objects the walk met first */
	struct idmap *bins;	/* file key -> struct pybin * */
	struct idmap *procs;	/* tgid -> struct pyproc * */
	struct idmap *counted;	/* tgids counted in st (COUNTED_*) */
	struct pyrec *recs;
	size_t nr_recs, cap_recs, written;
	/* An entry was ever put in "py_procs": until then it is empty (the
	 * kernel's only copy a parent's), and an exit deletes nothing. */
	int installed;
	struct python_stats st;
};

struct python *python__new(int procs_fd)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->procs_fd = procs_fd;
	py->bins = idmap__new();
	py->procs = idmap__new();
	py->counted = idmap__new();
	if (!py->bins || !py->procs || !py->counted) {
		python__free(py);
		return NULL;
	}
	return py;
}

static void proc_free(struct pyproc *p)
{
	if (p)
		idmap__free(p->codes);
	free(p);
}

void python__free(struct python *py)
{
	size_t it = 0, i;
	uint64_t key, val;

	if (!py)
		return;
	while (py->bins && idmap__next(py->bins, &it, &key, &val))
		free((void *)(uintptr_t)val);
	it = 0;
	while (py->procs && idmap__next(py->procs, &it, &key, &val))
		proc_free((void *)(uintptr_t)val);
	ring_buffer__free(py->codes_ring);
	idmap__free(py->bins);
	idmap__free(py->procs);
	idmap__free(py->counted);
	for (i = 0; i < py->nr_recs; i++)
		pycode__release(&py->recs[i].c);
	free(py->recs);
	free(py);
}

static struct pyproc *proc_find(const struct python *py, uint32_t tgid)
{
	uint64_t *v = idmap__find(py->procs, tgid);

	return v ? (struct pyproc *)(uintptr_t)*v : NULL;
}

/* What file @m maps: an interpreter we read, or why not (kept, by file);
 * NULL when it could not be read now. */
static struct pybin *bin_get(struct python *py, uint32_t tgid, const struct stk_mapping *m)
{
	struct procmaps_line l = {
		.start = m->start, .end = m->end, .offset = m->offset,
		.dev = m->dev, .inode = m->inode, .prot = m->prot, .path = m->path,
	};
	uint64_t key = hash_bytes(hash64(hash64(0x5079, m->dev), m->inode), m->build_id,
				  m->build_id_size);
	uint64_t *v = idmap__find(py->bins, key);
	struct pybin *b;
	int fd;

	if (v)
		return (struct pybin *)(uintptr_t)*v;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	fd = procmaps__open_mapped("/proc", tgid, &l);
	b->err = fd < 0 ? fd : pyelf__inspect(fd, m->path, &b->pe);
	if (fd >= 0)
		close(fd);
	if (!b->err)
		b->err = pytables__get(b->pe.version, &b->o);
	if (!b->err && b->pe.version >= PY_VERSION(3, 13)) {
		int r = pytables__from_debug(b->pe.debug, b->pe.debug_size, b->pe.version, &b->o);

		if (r && r != -ENOENT)
			b->err = r;
	}
	/* A file gone or refused is not remembered (another process may
	 * reach it), and not returned: nothing to tell of it. */
	if ((b->err == -ENOENT || b->err == -ENOTSUP || !b->err) &&
	    idmap__set(py->bins, key, (uint64_t)(uintptr_t)b) == 0)
		return b;
	free(b);
	return NULL;
}

/* "counted": tgid -> COUNTED_* (which STATs count it). */
#define COUNTED_WALKED 1	/* in python_processes */
#define COUNTED_UNSUPPORTED 2	/* in python_unsupported */

/* STAT python_processes: each process once, whatever it exec'd. */
static void count_process(struct python *py, uint32_t tgid)
{
	uint64_t *v = idmap__find(py->counted, tgid);

	if (v && (*v & COUNTED_WALKED))
		return;
	if (v)
		*v |= COUNTED_WALKED;
	else if (idmap__set(py->counted, tgid, COUNTED_WALKED))
		return;
	py->st.processes++;
}

/* STAT python_unsupported: each process once, however often its
 * mappings change; one counted in python_processes leaves it. */
static void count_unsupported(struct python *py, uint32_t tgid)
{
	uint64_t *v = idmap__find(py->counted, tgid);

	if (v && (*v & COUNTED_WALKED)) {
		*v &= ~(uint64_t)COUNTED_WALKED;
		py->st.processes--;
	}
	if (v && (*v & COUNTED_UNSUPPORTED))
		return;
	if (v)
		*v |= COUNTED_UNSUPPORTED;
	else if (idmap__set(py->counted, tgid, COUNTED_UNSUPPORTED))
		return;
	py->st.unsupported++;
}

static void proc_drop(struct python *py, uint32_t tgid)
{
	struct pyproc *p = proc_find(py, tgid);

	if (!p)
		return;
	bpf_map_delete_elem(py->procs_fd, &tgid);
	idmap__remove(py->procs, tgid);
	proc_free(p);
}

/* A process running @bin's interpreter at @runtime, unchecked yet. */
static struct pyproc *proc_new(struct python *py, uint32_t tgid, struct pybin *bin, int exact,
			       uint64_t runtime, uint64_t code_type)
{
	struct pyproc *p = calloc(1, sizeof(*p));

	if (!p || !(p->codes = idmap__new()) ||
	    idmap__set(py->procs, tgid, (uint64_t)(uintptr_t)p)) {
		proc_free(p);
		return NULL;
	}
	p->tgid = tgid;
	p->bin = bin;
	p->runtime = runtime;
	p->code_type = code_type;
	p->exact = exact;
	/* The layout is the file's: checked once in any process of it, so
	 * that one which exits at once (a pool's worker) is named too. */
	p->state = exact && bin->checked;
	count_process(py, tgid);
	return p;
}

static int proc_install(struct python *py, struct pyproc *p)
{
	struct stkrec_py_proc pp = p->bin->o.bpf;

	pp.runtime = p->runtime;
	pp.code_type = p->code_type;
	pp.co_qualname = p->bin->o.co_qualname ? p->bin->o.co_qualname : pp.co_name;
	pp.co_linetable = p->bin->o.co_linetable;
	pp.str_ascii = p->bin->o.str_ascii;
	pp.str_compact = p->bin->o.str_compact;
	/* Before the update: one that fails may have put it there still. */
	py->installed = 1;
	return bpf_map_update_elem(py->procs_fd, &p->tgid, &pp, BPF_ANY) ? -errno : 0;
}

void python__add_process(struct python *py, const struct stk_proc_maps *maps)
{
	struct pybin *found = NULL;
	uint64_t runtime = 0, code_type = 0, bias;
	struct pyproc *p;
	uint32_t i;

	if (!py || py->procs_fd < 0)
		return;
	for (i = 0; i < maps->nr_mappings && !found; i++) {
		const struct stk_mapping *m = &maps->mappings[i];
		struct pybin *b;

		if (!m->path || m->path[0] != '/' || pyelf__name_minor(m->path) < 0)
			continue;
		b = bin_get(py, maps->tgid, m);
		if (b && b->err == -ENOTSUP) {
			if (!idmap__find(py->procs, maps->tgid))
				count_unsupported(py, maps->tgid);
			/* Exec'd from a Python we read into one we do not:
			 * its old entry goes. */
			proc_drop(py, maps->tgid);
			return;
		}
		if (!b || b->err || pyelf__bias(&b->pe, m->start, m->offset, &bias))
			continue;
		found = b;
		runtime = b->pe.runtime + bias;
		code_type = b->pe.code_type + bias;
	}
	p = proc_find(py, maps->tgid);
	if (!found) {
		/* Exec'd into something else. */
		proc_drop(py, maps->tgid);
		return;
	}
	if (p && p->state < 0)
		return;
	if (p && (p->bin != found || p->runtime != runtime)) {
		proc_drop(py, maps->tgid);
		p = NULL;
	}
	if (!p && !(p = proc_new(py, maps->tgid, found, 1, runtime, code_type)))
		return;
	/* Always: an exec took the kernel's entry out. */
	proc_install(py, p);
}

void python__remove_process(struct python *py, uint32_t tgid)
{
	if (!py || py->procs_fd < 0)
		return;
	proc_drop(py, tgid);
	/* A forked child the kernel gave its parent's entry and we never
	 * adopted (sampled, but no Python frame yet): gone all the same.
	 * With no entry ever put there, no parent had one to give: a
	 * machine without Python pays no syscall per exit. */
	if (py->installed)
		bpf_map_delete_elem(py->procs_fd, &tgid);
}

/* The layout check, once per process before its first names. */
static int proc_checked(struct python *py, struct pyproc *p)
{
	int err;

	if (p->state)
		return p->state > 0;
	err = pycode__check((pid_t)p->tgid, &p->bin->o, p->runtime, p->code_type);
	if (err == -EPROTO) {
		p->state = -1;
		count_unsupported(py, p->tgid);
		bpf_map_delete_elem(py->procs_fd, &p->tgid);
		return 0;
	}
	if (err)
		return 0; /* not yet, or gone: the next stack tries again */
	p->state = 1;
	if (p->exact)
		p->bin->checked = 1;
	return 1;
}

static int rec_add(struct python *py, const struct pyproc *p, struct pycode *c)
{
	size_t bytes = sizeof(struct pyrec) + strlen(c->qualname) + strlen(c->filename) + 2 +
		       c->linetable_size;

	if (py->st.code_bytes + bytes > PY_CODE_BUDGET) {
		py->st.code_skipped++;
		pycode__release(c);
		return 0;
	}
	if (py->nr_recs == py->cap_recs) {
		size_t cap = py->cap_recs ? py->cap_recs * 2 : 256;
		struct pyrec *r = realloc(py->recs, cap * sizeof(*r));

		if (!r) {
			pycode__release(c);
			return -ENOMEM;
		}
		py->recs = r;
		py->cap_recs = cap;
	}
	py->recs[py->nr_recs++] = (struct pyrec){ p->tgid, p->bin->pe.version, *c };
	py->st.code_bytes += bytes;
	py->st.codes++;
	return 0;
}

/* A process with the interpreter of one we know at @runtime (a fork's
 * child: the same file at the same addresses), or NULL. */
static struct pyproc *proc_like(const struct python *py, uint64_t runtime, uint64_t code_type)
{
	uint64_t key, val;
	size_t it = 0;

	while (idmap__next(py->procs, &it, &key, &val)) {
		struct pyproc *q = (struct pyproc *)(uintptr_t)val;

		if (q->runtime == runtime && (!code_type || q->code_type == code_type) &&
		    q->state >= 0)
			return q;
	}
	return NULL;
}

/*
 * A process the walk knows and we do not: a fork's child, which the
 * kernel gave its parent's entry.  Its interpreter is its parent's (the
 * same file at the same addresses): adopted from a process with the same
 * addresses, else from a file of its version.
 */
static struct pyproc *proc_adopt(struct python *py, uint32_t tgid)
{
	struct stkrec_py_proc pp;
	struct pybin *bin = NULL;
	struct pyproc *q;
	uint64_t key, val;
	size_t it = 0;
	int exact = 0;

	if (bpf_map_lookup_elem(py->procs_fd, &tgid, &pp))
		return NULL;
	q = proc_like(py, pp.runtime, pp.code_type);
	if (q) {
		bin = q->bin;
		exact = q->exact;
	}
	while (!bin && idmap__next(py->bins, &it, &key, &val)) {
		struct pybin *b = (struct pybin *)(uintptr_t)val;

		if (!b->err && b->pe.version == pp.version)
			bin = b;
	}
	return bin ? proc_new(py, tgid, bin, exact, pp.runtime, pp.code_type) : NULL;
}

/* A code object as the walk read it when it first met it: named from
 * that, or read again from the process when the kernel had only part. */
static int on_code(void *ctx, void *data, size_t size)
{
	const struct stkrec_py_code *r = data;
	struct python *py = ctx;
	struct pycode c, whole;
	struct pyproc *p, *q;
	uint64_t *v;
	int err;

	if (size < sizeof(*r))
		return 0;
	p = proc_find(py, r->tgid) ?: proc_adopt(py, r->tgid);
	/* A child gone before we heard of it (the kernel dropped its entry
	 * at exit): its parent's interpreter, by the address the walk used. */
	if (!p && (q = proc_like(py, r->runtime, 0)))
		p = proc_new(py, r->tgid, q->bin, q->exact, q->runtime, q->code_type);
	if (!p || !proc_checked(py, p))
		return 0; /* the stack's words are tried from the process */
	v = idmap__find(p->codes, r->addr);
	if (v && (uint32_t)*v == r->fingerprint && (*v & CODE_NAMED))
		return 0;
	/* Read from the process too late, named from the kernel's copy:
	 * not lost after all. */
	if (v && (uint32_t)*v == r->fingerprint && (*v & CODE_FAILED)) {
		if (*v & CODE_STALE)
			py->st.code_stale--;
		else
			py->st.code_failed--;
	}
	err = pycode__from_record(r, &c);
	if (err == -E2BIG &&
	    !pycode__read((pid_t)r->tgid, &p->bin->o, p->code_type, r->addr, r->fingerprint, &whole)) {
		pycode__release(&c);
		c = whole;
		err = 0;
	} else if (err == -E2BIG) {
		py->st.code_partial++;
		err = 0;
	}
	if (err) {
		py->st.code_failed++;
		return 0;
	}
	py->st.code_from_kernel++;
	if (rec_add(py, p, &c))
		return 0;
	idmap__set(p->codes, r->addr, r->fingerprint | CODE_NAMED);
	return 0;
}

int python__set_code_ring(struct python *py, int fd)
{
	if (!py || py->procs_fd < 0 || fd < 0)
		return 0;
	py->codes_ring = ring_buffer__new(fd, on_code, py, NULL);
	return py->codes_ring ? 0 : -errno;
}

int python__take_codes(struct python *py)
{
	return py && py->codes_ring ? ring_buffer__consume(py->codes_ring) : 0;
}

int python__codes_fd(const struct python *py)
{
	return py && py->codes_ring ? ring_buffer__epoll_fd(py->codes_ring) : -1;
}

int python__see_stack(struct python *py, uint32_t tgid, const uint64_t *words, uint32_t n)
{
	struct pyproc *p;
	uint32_t i;
	int err = 0;

	if (!py || py->procs_fd < 0 || !n)
		return 0;
	/* The kernel's copies first: what it read is never stale. */
	python__take_codes(py);
	p = proc_find(py, tgid) ?: proc_adopt(py, tgid);
	if (!p || !proc_checked(py, p))
		return 0;
	for (i = 0; i + 1 < n && !err; i++) {
		uint64_t tag = words[i] >> 56, addr = words[i] & STKREC_PY_ADDR_MASK, *v;
		uint32_t fp;
		struct pycode c;
		int r;

		if ((tag != STKREC_PY_TAG_FRAME && tag != STKREC_PY_TAG_ENTRY) ||
		    words[i + 1] >> 56 != STKREC_PY_TAG_INFO)
			continue;
		fp = (uint32_t)(words[i + 1] >> 32) & STKREC_PY_FP_MASK;
		i++;
		v = idmap__find(p->codes, addr);
		if (v && (uint32_t)*v == fp)
			continue; /* read (or failed) already */
		r = pycode__read((pid_t)tgid, &p->bin->o, p->code_type, addr, fp, &c);
		if (r == -ESTALE)
			py->st.code_stale++;
		else if (r)
			py->st.code_failed++;
		else
			err = rec_add(py, p, &c);
		if (idmap__set(p->codes, addr,
			       fp | (!r ? CODE_NAMED : r == -ESTALE ? CODE_FAILED | CODE_STALE
								      : CODE_FAILED)))
			err = -ENOMEM;
		if (r == -ESRCH)
			break;
	}
	return err;
}

void python__see_words(void *py, uint32_t tgid, const uint64_t *words, uint32_t n)
{
	/* Out of memory: the code objects are tried again with the next
	 * stack that names them. */
	python__see_stack(py, tgid, words, n);
}

static int cmp_tgid(const void *a, const void *b)
{
	const struct pyrec *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

int python__flush(struct python *py, struct stk_writer *w, uint64_t *chunks)
{
	struct stk_esym_pycode *codes = NULL;
	size_t i, j, k;
	int err = 0;

	python__take_codes(py);
	if (!py || py->written >= py->nr_recs)
		return 0;
	/* Stable enough: records of one process keep their relative order
	 * in the file only for readability; the union is what counts. */
	qsort(py->recs + py->written, py->nr_recs - py->written, sizeof(*py->recs), cmp_tgid);
	codes = malloc((py->nr_recs - py->written) * sizeof(*codes));
	if (!codes)
		return -ENOMEM;
	for (i = py->written; i < py->nr_recs && !err; i = j) {
		for (j = i; j < py->nr_recs && py->recs[j].tgid == py->recs[i].tgid; j++) {
			const struct pycode *c = &py->recs[j].c;

			codes[j - i] = (struct stk_esym_pycode){
				.addr = c->addr, .fingerprint = c->fingerprint,
				.firstlineno = c->firstlineno, .qualname = c->qualname,
				.filename = c->filename, .linetable = c->linetable,
				.linetable_size = c->linetable_size,
			};
		}
		err = stk_writer__add_esym_pycode(w, py->recs[i].tgid, py->recs[i].version, codes,
						  j - i);
		if (!err)
			(*chunks)++;
	}
	free(codes);
	if (err)
		return err;
	py->written = py->nr_recs;
	/* Records of processes gone are not needed again. */
	for (i = k = 0; i < py->nr_recs; i++) {
		if (proc_find(py, py->recs[i].tgid)) {
			py->recs[k++] = py->recs[i];
			continue;
		}
		py->st.code_bytes -= sizeof(struct pyrec) + strlen(py->recs[i].c.qualname) +
				     strlen(py->recs[i].c.filename) + 2 + py->recs[i].c.linetable_size;
		pycode__release(&py->recs[i].c);
	}
	py->nr_recs = py->written = k;
	return 0;
}

void python__new_file(struct python *py)
{
	if (py)
		py->written = 0;
}

void python__stats(const struct python *py, struct python_stats *st)
{
	if (py)
		*st = py->st;
	else
		memset(st, 0, sizeof(*st));
}
