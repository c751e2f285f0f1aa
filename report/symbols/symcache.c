// SPDX-License-Identifier: BSD-2-Clause
/*
 * symcache.c - the symbolizer's DWARF-derived frames on disk by build-id
 * (symcache.h).
 *
 * A file, all little-endian as written by this machine (a cache is not
 * shared between machines; the version and magic refuse another layout):
 *
 *   header     struct symcache_header
 *   entries    nr_entries x struct sc_entry: address ranges [lo, hi), those
 *              read without lines first, then those with, each by lo and
 *              none overlapping another of its kind
 *   frames     nr_frames  x struct sc_frame
 *   strings    strings_size bytes of NUL-terminated strings; an offset of
 *              SC_NONE is a NULL string
 *
 * The CRC32C covers everything after the header.  An entry's frames are
 * frames[first .. first + max(nr, 1)), what the DWARF walk gives at every
 * address of its range (symname.c finds the range).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hash.h"
#include "idmap.h"
#include "scopes.h"
#include "stk.h"
#include "cachedir.h"
#include "symcache.h"

#define SC_MAGIC "STKSYMC\001"
#define SC_VERSION 2
#define SC_NONE UINT32_MAX
#define SC_LINES 1u		/* entry flag: file and line numbers read */
#define SC_SUBPROGRAM 1u	/* frame flag */

struct symcache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct symcache_header) */
	uint32_t bid_size;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t nr_entries;
	uint64_t elf_size;
	int64_t elf_mtime_ns;
	uint64_t dbg_size;
	int64_t dbg_mtime_ns;
	uint32_t load_dbg;		/* string offset or SC_NONE */
	uint32_t dbg;			/* string offset or SC_NONE */
	uint32_t nr_frames;
	uint32_t strings_size;
	uint32_t crc;			/* CRC32C of the body */
	uint32_t pad;
};

struct sc_entry {
	uint64_t lo, hi;
	uint32_t first;
	uint16_t nr;
	uint16_t flags;
};

struct sc_frame {
	uint32_t raw, file, line, start_line, flags;
};

/* Growing arrays: entries, frames and interned strings. */
struct sc_table {
	struct sc_entry *e;
	size_t nr_e, cap_e;
	struct sc_frame *f;
	size_t nr_f, cap_f;
	char *s;
	size_t nr_s, cap_s;
	struct idmap interned;		/* string hash -> offset + 1 */
};

struct symcache {
	char *path;			/* DIR/<hex>.sym, NULL: never stored */
	char *dir;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t bid_size;
	uint64_t elf_size;		/* the binary's, when opened */
	int64_t elf_mtime_ns;
	char *load_dbg;
	/* What the file held (one buffer: header and body). */
	void *buf;
	const struct symcache_header *h;
	const struct sc_entry *le;
	const struct sc_frame *lf;
	const char *ls;
	/* Added since, in the order of the file's entries. */
	struct sc_table added;
};

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static void sc_table__release(struct sc_table *t)
{
	free(t->e);
	free(t->f);
	free(t->s);
	idmap__release(&t->interned);
	memset(t, 0, sizeof(*t));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Offset of @str in @t's strings (added once), or SC_NONE for NULL. */
static int sc_table__intern(struct sc_table *t, const char *str, uint32_t *off)
{
	uint64_t h, *v;
	size_t n;

	*off = SC_NONE;
	if (!str)
		return 0;
	n = strlen(str) + 1;
	h = hash_bytes(3, str, n);
	v = idmap__find(&t->interned, h);
	if (v && strcmp(t->s + *v - 1, str) == 0) {
		*off = (uint32_t)(*v - 1);
		return 0;
	}
	if (t->nr_s + n >= SC_NONE || grow((void **)&t->s, &t->cap_s, t->nr_s + n, 1))
		return -ENOMEM;
	memcpy(t->s + t->nr_s, str, n);
	*off = (uint32_t)t->nr_s;
	t->nr_s += n;
	/* A colliding hash keeps its first string: the second is stored twice. */
	if (!v && idmap__set(&t->interned, h, *off + 1ull))
		return -ENOMEM;
	return 0;
}

/* Appends an entry for [lo, hi); its place is the caller's to keep. */
static int sc_table__append(struct sc_table *t, uint64_t lo, uint64_t hi, uint32_t nr,
			    const struct symcache_frame *fr, int lines)
{
	uint32_t i, n = nr ? nr : 1;
	struct sc_entry *e;
	int err;

	if (grow((void **)&t->e, &t->cap_e, t->nr_e + 1, sizeof(*t->e)) ||
	    grow((void **)&t->f, &t->cap_f, t->nr_f + n, sizeof(*t->f)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct sc_frame *f = &t->f[t->nr_f + i];

		err = sc_table__intern(t, fr[i].raw, &f->raw);
		err = err ?: sc_table__intern(t, fr[i].file, &f->file);
		if (err)
			return err;
		f->line = fr[i].line;
		f->start_line = fr[i].start_line;
		f->flags = fr[i].subprogram ? SC_SUBPROGRAM : 0;
	}
	e = &t->e[t->nr_e++];
	e->lo = lo;
	e->hi = hi;
	e->first = (uint32_t)t->nr_f;
	e->nr = (uint16_t)nr;
	e->flags = lines ? SC_LINES : 0;
	t->nr_f += n;
	return 0;
}

static void hex_of(char *out, const uint8_t *b, uint32_t n)
{
	static const char x[] = "0123456789abcdef";
	uint32_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = x[b[i] >> 4];
		out[2 * i + 1] = x[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The string at @off of a loaded table, or NULL. */
static const char *str_at(const char *s, uint32_t off)
{
	return off == SC_NONE ? NULL : s + off;
}

/* The file's order: entries without lines first, then by lo. */
static int entry_cmp(const struct sc_entry *a, const struct sc_entry *b)
{
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Checks the file's body against its header: every count, offset and
 * string within bounds, entries in order.  0 or -EBADMSG. */
static int symcache__check(struct symcache *sc, size_t size)
{
	const struct symcache_header *h = sc->buf;
	const struct sc_entry *e;
	const struct sc_frame *f;
	const char *s;
	uint64_t body;
	uint32_t i, j;

	if (size < sizeof(*h) || memcmp(h->magic, SC_MAGIC, 8) || h->version != SC_VERSION ||
	    h->header_size != sizeof(*h) || h->bid_size != sc->bid_size ||
	    memcmp(h->bid, sc->bid, sc->bid_size) || h->nr_entries > SYMCACHE_MAX_ENTRIES ||
	    h->nr_frames > SCOPE_MAX_FRAMES * (uint64_t)SYMCACHE_MAX_ENTRIES)
		return -EBADMSG;
	body = (uint64_t)h->nr_entries * sizeof(*e) + (uint64_t)h->nr_frames * sizeof(*f) +
	       h->strings_size;
	if (size != sizeof(*h) + body || stk_crc32c(0, h + 1, (size_t)body) != h->crc)
		return -EBADMSG;
	e = (const void *)(h + 1);
	f = (const void *)(e + h->nr_entries);
	s = (const char *)(f + h->nr_frames);
	if (h->strings_size && s[h->strings_size - 1] != '\0')
		return -EBADMSG;
	if ((h->load_dbg != SC_NONE && h->load_dbg >= h->strings_size) ||
	    (h->dbg != SC_NONE && h->dbg >= h->strings_size))
		return -EBADMSG;
	for (i = 0; i < h->nr_entries; i++) {
		uint32_t n = e[i].nr ? e[i].nr : 1;

		if (e[i].lo >= e[i].hi || (i && entry_cmp(&e[i - 1], &e[i]) >= 0) ||
		    (i && e[i - 1].flags == e[i].flags && e[i - 1].hi > e[i].lo) ||
		    e[i].nr > SCOPE_MAX_FRAMES ||
		    e[i].first > h->nr_frames || n > h->nr_frames - e[i].first ||
		    (e[i].flags & ~SC_LINES))
			return -EBADMSG;
		for (j = e[i].first; j < e[i].first + n; j++)
			if ((f[j].raw != SC_NONE && f[j].raw >= h->strings_size) ||
			    (f[j].file != SC_NONE && f[j].file >= h->strings_size) ||
			    (f[j].flags & ~SC_SUBPROGRAM))
				return -EBADMSG;
	}
	sc->h = h;
	sc->le = e;
	sc->lf = f;
	sc->ls = s;
	return 0;
}

/* 1 when the loaded header describes the files of @id as they are now. */
static int symcache__matches(const struct symcache *sc, const struct symcache_id *id)
{
	const struct symcache_header *h = sc->h;
	const char *ld = str_at(sc->ls, h->load_dbg), *dbg = str_at(sc->ls, h->dbg);
	struct stat st;

	if (h->elf_size != sc->elf_size || h->elf_mtime_ns != sc->elf_mtime_ns)
		return 0;
	if (!ld != !id->load_dbg || (ld && strcmp(ld, id->load_dbg)))
		return 0;
	if (dbg && (stat(dbg, &st) < 0 || (uint64_t)st.st_size != h->dbg_size ||
		    mtime_ns(&st) != h->dbg_mtime_ns))
		return 0;
	return 1;
}

/* Reads sc->path into sc->buf if it is ours and whole: 0, -ENOENT
 * (missing, or not ours: ignored), -EBADMSG (damaged: removed), -ENOMEM. */
static int symcache__read(struct symcache *sc)
{
	struct stat st;
	ssize_t n;
	int fd, err;

	fd = cachedir__open(sc->path, &st);
	if (fd < 0)
		return -ENOENT;	/* missing, or not ours: ignored */
	err = -EBADMSG;
	if ((uint64_t)st.st_size > SYMCACHE_MAX_FILE_BYTES ||
	    (size_t)st.st_size < sizeof(struct symcache_header))
		goto bad;
	sc->buf = malloc((size_t)st.st_size);
	if (!sc->buf) {
		err = -ENOMEM;
		goto out;
	}
	n = read(fd, sc->buf, (size_t)st.st_size);
	if (n != st.st_size || symcache__check(sc, (size_t)n))
		goto bad;
	err = 0;
	goto out;
bad:
	/* Damaged (a crash mid-write cannot do this: files are renamed into
	 * place whole): not used, and removed to be rebuilt. */
	unlink(sc->path);
	free(sc->buf);
	sc->buf = NULL;
out:
	close(fd);
	return err;
}

int symcache__open(const char *dir, const uint8_t *bid, uint32_t bid_size,
		   const struct symcache_id *id, struct symcache **out, int *loaded)
{
	char hex[2 * STK_MAX_BUILD_ID + 1];
	struct symcache *sc;
	struct stat st;
	int err = -ENOMEM;

	*out = NULL;
	*loaded = 0;
	if (!bid_size || bid_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	memcpy(sc->bid, bid, bid_size);
	sc->bid_size = bid_size;
	if (id->load_dbg && !(sc->load_dbg = strdup(id->load_dbg)))
		goto fail;
	/* No identity for the binary: nothing can be checked, nothing kept. */
	if (!id->elf_path || stat(id->elf_path, &st) < 0) {
		*out = sc;
		return 0;
	}
	sc->elf_size = (uint64_t)st.st_size;
	sc->elf_mtime_ns = mtime_ns(&st);
	hex_of(hex, bid, bid_size);
	sc->dir = strdup(dir);
	if (!sc->dir || asprintf(&sc->path, "%s/%s.sym", dir, hex) < 0) {
		sc->path = NULL;
		goto fail;
	}
	err = cachedir__ok(dir);
	if (err == -ENOENT) {
		*out = sc;	/* made when first stored */
		return 0;
	}
	if (err) {	/* someone else's: neither read nor written */
		free(sc->path);
		sc->path = NULL;
		*out = sc;
		return 0;
	}
	err = symcache__read(sc);
	if (err == -ENOMEM)
		goto fail;
	if (!err && !symcache__matches(sc, id)) {
		/* Another file than the one cached: rebuilt. */
		free(sc->buf);
		sc->buf = NULL;
		sc->h = NULL;
	}
	*loaded = sc->h != NULL;
	*out = sc;
	return 0;
fail:
	symcache__free(sc);
	return -ENOMEM;
}

const char *symcache__debug_path(const struct symcache *sc)
{
	return sc->h ? str_at(sc->ls, sc->h->dbg) : NULL;
}

/* The entry of @e (@n, in the file's order) with lines flags @flags
 * whose range holds @pc, or NULL. */
static const struct sc_entry *range_find(const struct sc_entry *e, size_t n, uint16_t flags,
					 uint64_t pc)
{
	size_t lo = 0, hi = n;

	/* The first entry past (flags, pc); the one before it may hold pc. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].flags < flags || (e[mid].flags == flags && e[mid].lo <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && e[lo - 1].flags == flags && e[lo - 1].lo <= pc && pc < e[lo - 1].hi)
		return &e[lo - 1];
	return NULL;
}

/* Entry @e of a table with frames @f and strings @s, as frames. */
static void entry_frames(const struct sc_entry *e, const struct sc_frame *f, const char *s,
			 struct symcache_frame *fr)
{
	uint32_t i, n = e->nr ? e->nr : 1;

	for (i = 0; i < n; i++) {
		const struct sc_frame *x = &f[e->first + i];

		fr[i].raw = str_at(s, x->raw);
		fr[i].file = str_at(s, x->file);
		fr[i].line = x->line;
		fr[i].start_line = x->start_line;
		fr[i].subprogram = !!(x->flags & SC_SUBPROGRAM);
	}
}

int symcache__find(const struct symcache *sc, uint64_t pc, int lines,
		   struct symcache_frame *fr, uint32_t max, uint32_t *nr_frames)
{
	size_t nr_l = sc->h ? sc->h->nr_entries : 0;
	const struct sc_entry *e = NULL;
	const struct sc_frame *f = NULL;
	const char *str = NULL;
	uint16_t flags;

	/* What was added wins: it was read after the file. */
	for (flags = lines ? SC_LINES : 0; !e && flags <= SC_LINES; flags++) {
		e = range_find(sc->added.e, sc->added.nr_e, flags, pc);
		f = sc->added.f;
		str = sc->added.s;
		if (!e) {
			e = range_find(sc->le, nr_l, flags, pc);
			f = sc->lf;
			str = sc->ls;
		}
	}
	if (!e || (e->nr ? e->nr : 1u) > max)
		return -ENOENT;
	entry_frames(e, f, str, fr);
	*nr_frames = e->nr;
	return 0;
}

int symcache__add(struct symcache *sc, uint64_t lo, uint64_t hi, uint32_t nr_frames,
		  const struct symcache_frame *fr, int lines)
{
	struct sc_table *t = &sc->added;
	size_t total = t->nr_e + (sc->h ? sc->h->nr_entries : 0), at;
	struct sc_entry e;
	int err;

	if (!sc->path || lo >= hi || nr_frames > SCOPE_MAX_FRAMES || total >= SYMCACHE_MAX_ENTRIES)
		return 0;
	err = sc_table__append(t, lo, hi, nr_frames, fr, lines);
	if (err)
		return err;
	/* Into the file's order, unless it overlaps an entry of its kind
	 * (it cannot, as ranges are found; but never two answers). */
	e = t->e[--t->nr_e];
	for (at = t->nr_e; at > 0 && entry_cmp(&t->e[at - 1], &e) > 0; at--)
		;
	if ((at > 0 && t->e[at - 1].flags == e.flags && t->e[at - 1].hi > e.lo) ||
	    (at < t->nr_e && t->e[at].flags == e.flags && e.hi > t->e[at].lo))
		return 0;
	memmove(&t->e[at + 1], &t->e[at], (t->nr_e - at) * sizeof(e));
	t->e[at] = e;
	t->nr_e++;
	return 0;
}

/* The file's body: loaded entries and added ones merged in the file's
 * order, an added one first where they overlap, with one string table. */
static int symcache__merge(const struct symcache *sc, struct sc_table *out)
{
	struct symcache_frame fr[SCOPE_MAX_FRAMES];
	size_t nr_l = sc->h ? sc->h->nr_entries : 0, i = 0, j = 0;
	const struct sc_entry *last = NULL;
	struct sc_entry kept = { 0 };
	int err;

	while (i < nr_l || j < sc->added.nr_e) {
		const struct sc_entry *e;

		if (j < sc->added.nr_e && (i == nr_l || entry_cmp(&sc->added.e[j], &sc->le[i]) <= 0)) {
			e = &sc->added.e[j++];
			entry_frames(e, sc->added.f, sc->added.s, fr);
		} else {
			e = &sc->le[i++];
			entry_frames(e, sc->lf, sc->ls, fr);
		}
		if (last && kept.flags == e->flags && kept.hi > e->lo)
			continue;
		err = sc_table__append(out, e->lo, e->hi, e->nr, fr, e->flags & SC_LINES);
		if (err)
			return err;
		kept = *e;
		last = &kept;
	}
	return 0;
}

void symcache__trim(const char *dir, uint64_t max)
{
	if (!cachedir__ok(dir)) {
		cachedir__trim(dir, ".sym", max);
		cachedir__trim(dir, ".stab", SYMCACHE_TAB_DIR_MAX_BYTES);
	}
}

int symcache__pending(const struct symcache *sc)
{
	return sc && sc->path && sc->added.nr_e;
}

int symcache__store(struct symcache *sc, const char *dbg)
{
	struct symcache_header h = { .version = SC_VERSION, .header_size = sizeof(h) };
	struct sc_table out = { 0 };
	struct stat st;
	uint32_t crc;
	uint64_t body;
	int err;

	if (!sc || !sc->path || !sc->added.nr_e)
		return 0;
	err = symcache__merge(sc, &out);
	err = err ?: sc_table__intern(&out, sc->load_dbg, &h.load_dbg);
	err = err ?: sc_table__intern(&out, dbg, &h.dbg);
	if (err)
		goto out;
	if (dbg) {
		if (stat(dbg, &st) < 0) {
			err = -errno;
			goto out;
		}
		h.dbg_size = (uint64_t)st.st_size;
		h.dbg_mtime_ns = mtime_ns(&st);
	}
	body = out.nr_e * sizeof(*out.e) + out.nr_f * sizeof(*out.f) + out.nr_s;
	err = -EFBIG;
	if (sizeof(h) + body > SYMCACHE_MAX_FILE_BYTES || out.nr_s >= SC_NONE)
		goto out;
	memcpy(h.magic, SC_MAGIC, 8);
	h.bid_size = sc->bid_size;
	memcpy(h.bid, sc->bid, sc->bid_size);
	h.nr_entries = (uint32_t)out.nr_e;
	h.nr_frames = (uint32_t)out.nr_f;
	h.strings_size = (uint32_t)out.nr_s;
	h.elf_size = sc->elf_size;
	h.elf_mtime_ns = sc->elf_mtime_ns;
	crc = stk_crc32c(0, out.e, out.nr_e * sizeof(*out.e));
	crc = stk_crc32c(crc, out.f, out.nr_f * sizeof(*out.f));
	h.crc = stk_crc32c(crc, out.s, out.nr_s);
	err = cachedir__make(sc->dir);
	if (!err) {
		struct iovec iov[4] = {
			{ &h, sizeof(h) },
			{ out.e, out.nr_e * sizeof(*out.e) },
			{ out.f, out.nr_f * sizeof(*out.f) },
			{ out.s, out.nr_s },
		};

		err = cachedir__store(sc->path, iov, 4);
	}
out:
	sc_table__release(&out);
	return err;
}

void symcache__free(struct symcache *sc)
{
	if (!sc)
		return;
	sc_table__release(&sc->added);
	free(sc->buf);
	free(sc->path);
	free(sc->dir);
	free(sc->load_dbg);
	free(sc);
}

/*
 * A symbol table's file (symcache.h):
 *
 *   header     struct stab_header
 *   dbg        dbg_size_path bytes: the debuginfo's path, NUL-padded to 8
 *   body       body_size bytes: symtab__pack()'s table
 *
 * The CRC32C covers dbg and body.
 */
#define STAB_MAGIC "STKSYMT\001"
#define STAB_VERSION 1		/* up with the layout, and with symtab__new()'s rules */

struct stab_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct stab_header) */
	uint32_t bid_size;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t dbg_path_size;		/* 0: no debuginfo */
	uint64_t elf_size;
	int64_t elf_mtime_ns;
	uint64_t dbg_size;
	int64_t dbg_mtime_ns;
	uint64_t bias;
	uint64_t body_size;
	uint32_t crc;			/* CRC32C of dbg and body */
	uint32_t pad;
};

/* The header @id's files give now (no magic, sizes nor CRC yet): 0, or
 * -ENOENT when a file cannot be stat()ed. */
static int stab_identity(const struct symcache_tab_id *id, const uint8_t *bid,
			 uint32_t bid_size, struct stab_header *h)
{
	struct stat st;

	memset(h, 0, sizeof(*h));
	if (!id->elf_path || stat(id->elf_path, &st) < 0)
		return -ENOENT;
	h->elf_size = (uint64_t)st.st_size;
	h->elf_mtime_ns = mtime_ns(&st);
	if (id->dbg) {
		if (stat(id->dbg, &st) < 0)
			return -ENOENT;
		h->dbg_size = (uint64_t)st.st_size;
		h->dbg_mtime_ns = mtime_ns(&st);
		h->dbg_path_size = (uint32_t)((strlen(id->dbg) + 1 + 7) & ~(size_t)7);
	}
	h->bias = id->bias;
	h->bid_size = bid_size;
	memcpy(h->bid, bid, bid_size);
	return 0;
}

/* DIR/<hex>.stab in *@path (malloc()ed).  0, -ENOMEM. */
static int stab_path(const char *dir, const uint8_t *bid, uint32_t bid_size, char **path)
{
	char hex[2 * STK_MAX_BUILD_ID + 1];

	hex_of(hex, bid, bid_size);
	if (asprintf(path, "%s/%s.stab", dir, hex) < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Whether the file's header @f describes the files of @now: 1 or 0. */
static int stab_matches(const struct stab_header *f, const struct stab_header *now,
			const char *fdbg, const char *dbg)
{
	return f->elf_size == now->elf_size && f->elf_mtime_ns == now->elf_mtime_ns &&
	       f->bias == now->bias && f->dbg_path_size == now->dbg_path_size &&
	       (!dbg || (f->dbg_size == now->dbg_size && f->dbg_mtime_ns == now->dbg_mtime_ns &&
			 strcmp(fdbg, dbg) == 0));
}

int symcache__tab_load(const char *dir, const uint8_t *bid, uint32_t bid_size,
		       const struct symcache_tab_id *id, void **out, const void **body,
		       size_t *size)
{
	struct stab_header now, h;
	char *path = NULL, *buf = NULL;
	struct stat st;
	ssize_t n;
	int fd = -1, err;

	*out = NULL;
	*body = NULL;
	*size = 0;
	if (!bid_size || bid_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	if (stab_identity(id, bid, bid_size, &now))
		return -ENOENT;
	err = cachedir__ok(dir);
	if (err)	/* missing (made when stored), or not ours (never used) */
		return err == -ENOENT ? err : -EPERM;
	err = stab_path(dir, bid, bid_size, &path);
	if (err)
		return err;
	fd = cachedir__open(path, &st);
	if (fd < 0) {	/* missing, or not ours: ignored */
		err = -ENOENT;
		goto out;
	}
	err = -EBADMSG;
	if ((uint64_t)st.st_size > SYMCACHE_MAX_FILE_BYTES || (size_t)st.st_size < sizeof(h))
		goto bad;
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	n = read(fd, buf, (size_t)st.st_size);
	if (n != st.st_size)
		goto bad;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, STAB_MAGIC, 8) || h.version != STAB_VERSION ||
	    h.header_size != sizeof(h) || h.bid_size != bid_size || memcmp(h.bid, bid, bid_size) ||
	    h.dbg_path_size % 8 || h.pad ||
	    /* Each size within the file, not only their sum (which wraps). */
	    h.dbg_path_size > (uint64_t)st.st_size - sizeof(h) ||
	    h.body_size != (uint64_t)st.st_size - sizeof(h) - h.dbg_path_size ||
	    stk_crc32c(0, buf + sizeof(h), (size_t)st.st_size - sizeof(h)) != h.crc ||
	    (h.dbg_path_size && buf[sizeof(h) + h.dbg_path_size - 1] != '\0'))
		goto bad;
	err = -ENOENT;
	if (!stab_matches(&h, &now, buf + sizeof(h), id->dbg))
		goto out;	/* of other files: replaced when stored */
	*size = (size_t)h.body_size;
	*body = buf + sizeof(h) + h.dbg_path_size;
	*out = buf;
	buf = NULL;
	err = 0;
	goto out;
bad:
	/* Damaged (files are renamed into place whole): removed, rebuilt. */
	unlink(path);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	return err;
}

int symcache__tab_store(const char *dir, const uint8_t *bid, uint32_t bid_size,
			const struct symcache_tab_id *id, const void *body, size_t size)
{
	static const char zeros[8];
	struct stab_header h;
	char *path = NULL;
	size_t dlen = 0;
	int err;

	if (!bid_size || bid_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	if (stab_identity(id, bid, bid_size, &h))
		return -ENOENT;
	if (sizeof(h) + (uint64_t)h.dbg_path_size + size > SYMCACHE_MAX_FILE_BYTES)
		return -EFBIG;
	memcpy(h.magic, STAB_MAGIC, 8);
	h.version = STAB_VERSION;
	h.header_size = sizeof(h);
	h.body_size = size;
	if (id->dbg) {
		dlen = strlen(id->dbg);
		h.crc = stk_crc32c(0, id->dbg, dlen);
		h.crc = stk_crc32c(h.crc, zeros, h.dbg_path_size - dlen);
	}
	h.crc = stk_crc32c(h.crc, body, size);
	err = cachedir__make(dir);
	err = err ?: stab_path(dir, bid, bid_size, &path);
	if (!err) {
		struct iovec iov[4] = {
			{ &h, sizeof(h) },
			{ (void *)id->dbg, dlen },	/* the path, padded to 8 */
			{ (void *)zeros, id->dbg ? h.dbg_path_size - dlen : 0 },
			{ (void *)body, size },
		};

		err = cachedir__store(path, iov, 4);
	}
	free(path);
	return err;
}
