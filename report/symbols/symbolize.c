// SPDX-License-Identifier: BSD-2-Clause
/*
 * ELF symbolization's modules: the registry of modules (one per build-id,
 * or path), the choice of each module's file (the capture's embedded image,
 * else elffind.c), and sampled address to ELF address; the names at that
 * address, and their cache, are symname.c's.  libdwfl does the ELF loading,
 * separate debuginfo (by build-id and .gnu_debuglink), symbol tables, DWARF
 * and source lines.
 *
 * Each module gets its own Dwfl with the module reported at its link-time
 * addresses, so one ELF serves every process that mapped it, whatever its
 * load address there.
 *
 * Where the work would follow the size of the debuginfo rather than the
 * number of addresses, we do it ourselves, giving libdw's answers: symbols
 * are sorted once per module (symtab.c), inline scopes come from a per-CU
 * index of its functions (scopes.c).  Where libdwfl's .debug_aranges know
 * no CU for an address (Go writes none), the CUs' own ranges do (cuaddr.c).
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugfind.h"
#include "demangle.h"
#include "elfinflate.h"
#include "esymtab.h"
#include "hash.h"
#include "idmap.h"
#include "scopes.h"
#include "symbolize_int.h"
#include "symtab.h"

const char *sym_module_status__reason(enum sym_module_status st)
{
	switch (st) {
	case SYM_MOD_PENDING: return "not looked up";
	case SYM_MOD_OK: return "symbols found";
	case SYM_MOD_NOT_FOUND: return "no file found";
	case SYM_MOD_MISMATCH: return "build-id mismatch";
	case SYM_MOD_NO_SYMBOLS: return "stripped, no debuginfo";
	case SYM_MOD_NOT_FILE: return "not a file";
	case SYM_MOD_ERROR: return "unreadable ELF";
	}
	return "?";
}

/* Relative directories would mean "under the binary's directory" to
 * libdwfl, so every user-given directory is made absolute first. */
static char *abs_dir(const char *d)
{
	char *r = realpath(d, NULL);

	if (r)
		return r;
	return strdup(d);	/* missing dir: harmless, it just never matches */
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s;
	struct strbuf sb = { 0 };
	size_t i;
	int err = -ENOMEM;

	if (!opts || opts->sz < sizeof(*opts)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	s->opts = *opts;
	s->dm = demangler__new();
	if (!s->dm)
		goto fail;
	if (opts->nr_debug_dirs) {
		s->debug_dirs = calloc(opts->nr_debug_dirs, sizeof(*s->debug_dirs));
		if (!s->debug_dirs)
			goto fail;
		for (i = 0; i < opts->nr_debug_dirs; i++) {
			s->debug_dirs[i] = abs_dir(opts->debug_dirs[i]);
			if (!s->debug_dirs[i])
				goto fail;
		}
	}
	if (opts->sysroot) {
		s->sysroot = abs_dir(opts->sysroot);
		if (!s->sysroot)
			goto fail;
	}
	if (!opts->system_debug_dir || opts->system_debug_dir[0]) {
		s->system_debug_dir = strdup(opts->system_debug_dir ? opts->system_debug_dir
								    : "/usr/lib/debug");
		if (!s->system_debug_dir)
			goto fail;
	}
	/* "+": verify the CRC of files found through .gnu_debuglink by name;
	 * "" and ".debug": beside the binary; then our dirs; then the system. */
	if (strbuf__adds(&sb, "+:.debug"))
		goto fail;
	for (i = 0; i < opts->nr_debug_dirs; i++)
		if (strbuf__addf(&sb, ":%s", s->debug_dirs[i]))
			goto fail;
	if (s->sysroot && strbuf__addf(&sb, ":%s/usr/lib/debug", s->sysroot))
		goto fail;
	if (s->system_debug_dir && strbuf__addf(&sb, ":%s", s->system_debug_dir))
		goto fail;
	s->debuginfo_path = sb.buf ? sb.buf : strdup("");
	sb.buf = NULL;
	if (!s->debuginfo_path)
		goto fail;
	s->cb.find_elf = dwfl_build_id_find_elf;
	/* Not dwfl_standard_find_debuginfo: its debuglink lookup opens a
	 * FIFO there and blocks for good (debugfind.h). */
	s->cb.find_debuginfo = debugfind__find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	/* Best effort, as before: without the library we just do not ask. */
	if (opts->debuginfod)
		s->dbgd = debuginfod__open();
	s->fo.sysroot = s->sysroot;
	s->fo.debug_dirs = (const char *const *)s->debug_dirs;
	s->fo.nr_debug_dirs = s->opts.nr_debug_dirs;
	s->fo.system_debug_dir = s->system_debug_dir;
	s->embedded_left = elf_inflate__limit(opts->input_size);
	return s;
fail:
	strbuf__free(&sb);
	symbolizer__free(s);
	errno = -err;
	return NULL;
}

static void sym_module__free(struct symbolizer *s, struct sym_module *m)
{
	(void)s;
	if (!m)
		return;
	if (m->priv) {
		idmap__release(&m->priv->cache);
		symcache__free(m->priv->sc);
		scope_index__free(m->priv->scopes);
		cu_addr__free(m->priv->cus);
		if (m->priv->dwfl)
			dwfl_end(m->priv->dwfl);
		free(m->priv->segs);
		symtab__free(m->priv->syms);
		if (m->priv->esym_fd >= 0)
			close(m->priv->esym_fd);
		free(m->priv);
	}
	free(m->path);
	free(m->elf_path);
	free(m->debug_path);
	free(m->mismatch_path);
	free(m);
}

void symbolizer__free(struct symbolizer *s)
{
	int stored = 0;
	size_t i;
	uint64_t v;

	if (!s)
		return;
	/* Best effort: a cache not written is rebuilt next time. */
	for (i = 0; i < s->nr_mods; i++)
		if (s->mods[i]->priv && symcache__pending(s->mods[i]->priv->sc) &&
		    s->mods[i]->has_dwarf &&
		    symcache__store(s->mods[i]->priv->sc, s->mods[i]->debug_path) == 0)
			stored = 1;
	if (stored || s->tab_stored)
		symcache__trim(s->opts.cache_dir, SYMCACHE_DIR_MAX_BYTES);
	for (i = 0; i < s->nr_mods; i++)
		sym_module__free(s, s->mods[i]);
	free(s->mods);
	free(s->embedded);
	free(s->tabs);
	idmap__release(&s->by_key);
	for (i = 0; idmap__next(&s->demangled, &i, NULL, &v);) {
		char *dm = (char *)(uintptr_t)v;

		if (dm != (char *)&s->demangled)
			free(dm);
	}
	idmap__release(&s->demangled);
	idmap__release(&s->etab_results);
	if (s->debug_dirs)
		for (i = 0; i < s->opts.nr_debug_dirs; i++)
			free(s->debug_dirs[i]);
	free(s->debug_dirs);
	free(s->sysroot);
	free(s->system_debug_dir);
	free(s->debuginfo_path);
	debuginfod__close(s->dbgd);
	demangler__free(s->dm);
	arena__free(&s->results);
	free(s);
}

int symbolizer__add_embedded(struct symbolizer *s, const uint8_t *bid, uint32_t bid_size,
			     const void *image, size_t size)
{
	struct embedded *p;
	size_t i;

	if (!bid_size || bid_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	for (i = 0; i < s->nr_embedded; i++)
		if (s->embedded[i].build_id_size == bid_size &&
		    memcmp(s->embedded[i].build_id, bid, bid_size) == 0)
			return 0;
	p = realloc(s->embedded, (s->nr_embedded + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->embedded = p;
	p = &p[s->nr_embedded++];
	memcpy(p->build_id, bid, bid_size);
	p->build_id_size = bid_size;
	p->image = image;
	p->size = size;
	return 0;
}

static struct symtab_ref *tab_find(const struct symbolizer *s, const uint8_t *bid,
				    uint32_t bid_size, uint32_t tgid)
{
	size_t i;

	for (i = 0; i < s->nr_tabs; i++) {
		struct symtab_ref *r = &s->tabs[i];

		if (r->build_id_size == bid_size &&
		    (bid_size ? memcmp(r->build_id, bid, bid_size) == 0 : r->tgid == tgid))
			return r;
	}
	return NULL;
}

static int tab_add(struct symbolizer *s, const uint8_t *bid, uint32_t bid_size, uint32_t tgid,
		   struct esymtab *t)
{
	struct symtab_ref *p;

	if (tab_find(s, bid, bid_size, tgid))
		return 0;
	p = realloc(s->tabs, (s->nr_tabs + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->tabs = p;
	p = &p[s->nr_tabs++];
	memset(p, 0, sizeof(*p));
	if (bid_size)	/* a perf map's table has none (@bid NULL) */
		memcpy(p->build_id, bid, bid_size);
	p->build_id_size = bid_size;
	p->tgid = tgid;
	p->t = t;
	return 0;
}

int symbolizer__add_symtab(struct symbolizer *s, const uint8_t *bid, uint32_t bid_size,
			   struct esymtab *t)
{
	if (!bid_size || bid_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	return tab_add(s, bid, bid_size, 0, t);
}

int symbolizer__add_perf_map(struct symbolizer *s, uint32_t tgid, struct esymtab *t)
{
	return tab_add(s, NULL, 0, tgid, t);
}

struct sym_module *symbolizer__perf_map_module(struct symbolizer *s, uint32_t tgid)
{
	struct symtab_ref *r = tab_find(s, NULL, 0, tgid);
	struct sym_module *m;
	char name[64];

	errno = 0;
	if (!r)
		return NULL;
	snprintf(name, sizeof(name), "[perf-%u.map]", tgid);
	m = symbolizer__module(s, name, NULL, 0);
	if (m && m->status == SYM_MOD_PENDING) {
		m->priv->etab = r->t;
		m->source = ELF_SRC_PERF_MAP;
		m->status = SYM_MOD_OK;
	}
	return m;
}

size_t symbolizer__nr_modules(const struct symbolizer *s)
{
	return s->nr_mods;
}

struct sym_module *symbolizer__module_at(const struct symbolizer *s, size_t i)
{
	return i < s->nr_mods ? s->mods[i] : NULL;
}

/* "/usr/bin/x (deleted)" is how /proc/PID/maps names a replaced file. */
static char *clean_path(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path);
	size_t d = sizeof(deleted) - 1;

	if (n > d && strcmp(path + n - d, deleted) == 0)
		n -= d;
	return strndup(path, n);
}

static uint64_t module_key(const char *path, const uint8_t *bid, uint32_t bid_size)
{
	if (bid_size)
		return hash_bytes(1, bid, bid_size);
	return hash_bytes(2, path, strlen(path));
}

static int module_matches(const struct sym_module *m, const char *path, const uint8_t *bid,
			  uint32_t bid_size)
{
	if (m->build_id_size != bid_size)
		return 0;
	if (bid_size)
		return memcmp(m->build_id, bid, bid_size) == 0;
	return strcmp(m->path, path) == 0;
}

struct sym_module *symbolizer__module(struct symbolizer *s, const char *path,
				      const uint8_t *bid, uint32_t bid_size)
{
	struct sym_module *m, *first;
	char *clean = NULL;
	uint64_t key;

	if (bid_size > STK_MAX_BUILD_ID)
		bid_size = 0;
	clean = clean_path(path ? path : "");
	if (!clean)
		goto nomem;
	key = module_key(clean, bid, bid_size);
	first = idmap__find_ptr(&s->by_key, key);
	for (m = first; m; m = m->priv->next) {
		if (module_matches(m, clean, bid, bid_size)) {
			free(clean);
			return m;
		}
	}
	if (s->nr_mods == s->cap_mods) {
		size_t cap = s->cap_mods ? 2 * s->cap_mods : 16;
		struct sym_module **p = realloc(s->mods, cap * sizeof(*p));

		if (!p)
			goto nomem;
		s->mods = p;
		s->cap_mods = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->priv = calloc(1, sizeof(*m->priv));
	if (!m->priv) {
		free(m);
		goto nomem;
	}
	m->priv->esym_fd = -1;
	m->priv->df.fo = &s->fo;
	m->path = clean;
	clean = NULL;
	if (bid_size) /* @bid may be NULL then: memcpy() wants a pointer anyway */
		memcpy(m->build_id, bid, bid_size);
	m->build_id_size = bid_size;
	m->priv->next = first;
	if (idmap__set_ptr(&s->by_key, key, m)) {
		sym_module__free(s, m);
		goto nomem;
	}
	s->mods[s->nr_mods++] = m;
	return m;
nomem:
	free(clean);
	errno = ENOMEM;
	return NULL;
}

/* Reads the PT_LOAD segments, which turn file offsets into addresses. */
static int module__read_segs(struct sym_module_priv *p, Elf *elf)
{
	size_t n, i;
	int err = 0;

	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	p->segs = calloc(n ? n : 1, sizeof(*p->segs));
	if (!p->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		p->segs[p->nr_segs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
						      ph.p_memsz, ph.p_flags };
	}
	return err;
}

static int elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return 1;
	return 0;
}

static int module__open(struct symbolizer *s, struct sym_module *m);
static int module__symtab_refused(struct symbolizer *s, struct sym_module *m, Elf *elf);
static void module__refuse(struct sym_module *m, int symtab, uint64_t declared,
			   uint64_t limit);

/* Called for every frame: the test is all it costs once the module is open. */
int symbolizer__open_module(struct symbolizer *s, struct sym_module *m)
{
	return m->status == SYM_MOD_PENDING ? module__open(s, m) : 0;
}

/*
 * @m's function symbols: from the symbol cache when it holds them for the
 * files libdwfl took them from (symcache.h), else read from the ELF (then
 * kept there).  A binary's table is most of opening it (libLLVM's or
 * cc1's: tens of thousands of symbols read, named and sorted), and a
 * cached report opens every binary of the capture.  0 or -ENOMEM.
 */
static int module__symtab(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	struct symcache_tab_id id = { .elf_path = m->elf_path, .dbg = m->debug_path,
				      .bias = p->bias };
	int cache = s->opts.cache_dir && m->build_id_size && m->elf_path &&
		    m->source != ELF_SRC_NONE && m->source != ELF_SRC_EMBEDDED &&
		    m->source != ELF_SRC_ESYMTAB && m->source != ELF_SRC_PERF_MAP;
	const void *body;
	size_t size;
	void *buf;
	int err;

	if (cache) {
		err = symcache__tab_load(s->opts.cache_dir, m->build_id, m->build_id_size, &id,
					 &buf, &body, &size);
		if (err == -ENOMEM)
			return err;
		cache = err != -EPERM && err != -EINVAL;
		if (!err) {
			p->syms = symtab__unpack(buf, body, size);
			if (!p->syms && errno == ENOMEM)
				return -ENOMEM;
			if (p->syms)
				return 0;
			/* Whole by its CRC yet not a table: rebuilt below. */
		}
	}
	p->syms = symtab__new(p->mod);
	if (!p->syms)
		return -ENOMEM;
	if (!cache)
		return 0;
	/* Best effort: a table not kept is read again next time. */
	err = symtab__pack(p->syms, &buf, &size);
	if (err == -ENOMEM)
		return err;
	if (!err) {
		if (!symcache__tab_store(s->opts.cache_dir, m->build_id, m->build_id_size, &id,
					 buf, size))
			s->tab_stored = 1;
		free(buf);
	}
	return 0;
}

/*
 * Reports @file to a new Dwfl as @m's ELF and reads what every lookup
 * needs.  0 with m->status set (SYM_MOD_ERROR when libdwfl refuses the
 * file), or -ENOMEM.
 */
/* Loads @m from @file; @fd: that file already open and checked (consumed),
 * or -1 to let libdwfl open @file. */
static int module__load(struct symbolizer *s, struct sym_module *m, const char *file, int fd)
{
	struct sym_module_priv *p = m->priv;
	const char *mainfile = NULL, *debugfile = NULL, *name;
	GElf_Addr bias = 0;
	struct stat st;
	Elf *elf;
	int err, syms;

	m->status = SYM_MOD_ERROR;
	/* What its compressed sections may inflate to follows its size. */
	p->file_size = 0;
	if (m->source != ELF_SRC_EMBEDDED && (fd >= 0 ? fstat(fd, &st) : stat(file, &st)) == 0)
		p->file_size = (uint64_t)st.st_size;
	p->dwfl = dwfl_begin(&s->cb);
	if (!p->dwfl) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	name = strrchr(m->path, '/');
	name = name ? name + 1 : m->path;
	dwfl_report_begin(p->dwfl);
	/* On success libdwfl owns @fd. */
	p->mod = dwfl_report_elf(p->dwfl, name, file, fd, 0, false);
	dwfl_report_end(p->dwfl, NULL, NULL);
	debugfind__attach(p->mod, &p->df);
	if (!p->mod) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	elf = dwfl_module_getelf(p->mod, &bias);
	if (!elf)
		return 0;
	p->bias = bias;
	err = module__read_segs(p, elf);
	if (err == -ENOMEM)
		return err;
	if (err)
		return 0;
	/* libdwfl inflates the symbol table's compressed sections (and
	 * MiniDebugInfo) as it loads it: measure them first, and past the
	 * limit do not let it (SPEC.md §7.3). */
	if (module__symtab_refused(s, m, elf)) {
		p->syms = symtab__new(NULL);
		if (!p->syms)
			return -ENOMEM;
		m->status = SYM_MOD_NO_SYMBOLS;
		return 0;
	}
	/* This goes looking for separate debuginfo through the callbacks when
	 * the binary has no .symtab.  DWARF is only loaded when a lookup needs
	 * it (module__dwarf()): compressed debuginfo costs ~25 ms for libc's
	 * when libdw inflates it all, wasted when no inline frame or line is
	 * asked. */
	syms = dwfl_module_getsymtab(p->mod);
	if (p->df.refused)	/* its debuginfo's symbol table, past its limit */
		module__refuse(m, 1, p->df.declared, elf_inflate__limit(p->df.size));
	dwfl_module_info(p->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0)) {
		m->debug_path = strdup(debugfile);
		if (!m->debug_path)
			return -ENOMEM;
	}
	/* .dynsym alone names only exported functions: call that stripped.
	 * Not so for an embedded image: the vDSO has only .dynsym, and every
	 * function in it is exported. */
	if (syms <= 0 || (!elf_has_symtab(elf) && !m->debug_path && m->source != ELF_SRC_EMBEDDED))
		m->status = SYM_MOD_NO_SYMBOLS;
	else
		m->status = SYM_MOD_OK;
	/* A stripped file whose table the capture carries is named by that
	 * table (module__open()): its symbols would be read and sorted for
	 * nothing (libLLVM's .dynsym is 30000 of them). */
	if (m->status == SYM_MOD_NO_SYMBOLS && m->build_id_size &&
	    tab_find(s, m->build_id, m->build_id_size, 0))
		return 0;
	return module__symtab(s, m);
}

/*
 * The capture's image for @m's build-id, if any: written to a memfd kept
 * for the module's life, so libdwfl opens it by its
 * /proc/self/fd name like any file.  Returns 1 when @m is loaded from it,
 * 0 to search files instead (no image, or one libdwfl refused or whose
 * build-id note is not @m's), or -ENOMEM.
 */
static int module__open_embedded(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	const struct embedded *e = NULL;
	const unsigned char *bits;
	GElf_Addr bid_vaddr;
	char file[64];
	size_t i, done;
	int err, n;

	for (i = 0; i < s->nr_embedded && !e; i++)
		if (s->embedded[i].build_id_size == m->build_id_size &&
		    memcmp(s->embedded[i].build_id, m->build_id, m->build_id_size) == 0)
			e = &s->embedded[i];
	if (!e)
		return 0;
	p->esym_fd = memfd_create("stk-esym", MFD_CLOEXEC);
	if (p->esym_fd < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	for (done = 0; done < e->size;) {
		ssize_t w = write(p->esym_fd, (const char *)e->image + done, e->size - done);

		if (w <= 0)
			goto refuse;
		done += (size_t)w;
	}
	snprintf(file, sizeof(file), "/proc/self/fd/%d", p->esym_fd);
	m->source = ELF_SRC_EMBEDDED;
	m->elf_path = strdup(m->path);
	if (!m->elf_path)
		return -ENOMEM;
	err = module__load(s, m, file, -1);
	if (err)
		return err;
	n = p->mod ? dwfl_module_build_id(p->mod, &bits, &bid_vaddr) : 0;
	if (m->status != SYM_MOD_ERROR && n == (int)m->build_id_size &&
	    memcmp(bits, m->build_id, m->build_id_size) == 0)
		return 1;
refuse:
	/* Undo, so the file search starts from a clean module. */
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->mod = NULL;
	free(p->segs);
	p->segs = NULL;
	p->nr_segs = 0;
	symtab__free(p->syms);
	p->syms = NULL;
	free(m->elf_path);
	m->elf_path = NULL;
	free(m->debug_path);
	m->debug_path = NULL;
	m->source = ELF_SRC_NONE;
	m->status = SYM_MOD_PENDING;
	close(p->esym_fd);
	p->esym_fd = -1;
	return 0;
}

static int module__open_files(struct symbolizer *s, struct sym_module *m);

/*
 * The files first (a file of the build-id with symbols adds inline frames
 * and lines), then the capture's own table when none gave symbols: the
 * binary is not here, or only stripped, or was rebuilt.
 */
static int module__open(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	struct symtab_ref *r;
	int err = module__open_files(s, m);

	if (err || m->status == SYM_MOD_OK || !m->build_id_size)
		return err;
	r = tab_find(s, m->build_id, m->build_id_size, 0);
	if (!r)
		return 0;
	/* A stripped file's .dynsym names fewer functions than the table
	 * stkrec took from the file it ran (its .symtab or MiniDebugInfo). */
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->mod = NULL;
	symtab__free(p->syms);
	p->syms = NULL;
	p->etab = r->t;
	m->source = ELF_SRC_ESYMTAB;
	m->status = SYM_MOD_OK;
	return 0;
}

static int module__open_files(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	struct elffind_opts fo = {
		.sysroot = s->sysroot,
		.debug_dirs = (const char *const *)s->debug_dirs,
		.nr_debug_dirs = s->opts.nr_debug_dirs,
		.system_debug_dir = s->system_debug_dir,
		.debuginfod = s->dbgd,
	};
	struct elffind_result fr;
	int err, fd;

	if (m->status != SYM_MOD_PENDING)
		return 0;
	/* The capture's own images come first (DESIGN.md section 3). */
	if (m->build_id_size) {
		err = module__open_embedded(s, m);
		if (err)
			return err < 0 ? err : 0;
	}
	if (m->path[0] != '/' && !m->build_id_size) {
		m->status = SYM_MOD_NOT_FILE;
		return 0;
	}
	err = elffind__locate(&fo, m->path[0] == '/' ? m->path : NULL, m->build_id,
			      m->build_id_size, &fr);
	if (err)
		return err;
	m->mismatch_path = fr.mismatch_path;
	fr.mismatch_path = NULL;
	if (fr.source == ELF_SRC_NONE) {
		m->status = m->mismatch_path ? SYM_MOD_MISMATCH : SYM_MOD_NOT_FOUND;
		if (m->path[0] != '/' && !m->mismatch_path)
			m->status = SYM_MOD_NOT_FILE;
		elffind_result__clear(&fr);
		return 0;
	}
	m->source = fr.source;
	m->elf_path = fr.path;
	fr.path = NULL;
	p->debug_only = fr.debug_only;
	fd = fr.fd;
	fr.fd = -1;
	elffind_result__clear(&fr);
	return module__load(s, m, m->elf_path, fd);
}

int module__vaddr(struct sym_module_priv *p, const struct stk_mapping *map, uint64_t addr,
		  uint64_t *vaddr)
{
	const struct seg *g;
	uint64_t off;
	size_t i;

	if (!p->segs || addr < map->start)
		return -ENOENT;
	off = addr - map->start + map->offset;
	if (!p->debug_only) {
		/* Frames come in runs from one segment: try the last one first. */
		g = &p->segs[p->last_seg];
		if (p->last_seg < p->nr_segs && off >= g->offset && off < g->offset + g->filesz) {
			*vaddr = off - g->offset + g->vaddr;
			return 0;
		}
		for (i = 0; i < p->nr_segs; i++) {
			g = &p->segs[i];
			if (off >= g->offset && off < g->offset + g->filesz) {
				p->last_seg = i;
				*vaddr = off - g->offset + g->vaddr;
				return 0;
			}
		}
		return -ENOENT;
	}
	/*
	 * Separate debuginfo keeps the segments' addresses but not their file
	 * offsets (objcopy --only-keep-debug zeroes them), so match by
	 * permission instead: a sampled code address is in the executable
	 * mapping, which is the single PF_X segment of ordinary binaries.
	 */
	if (!(map->prot & PROT_EXEC))
		return -ENOENT;
	for (i = 0; i < p->nr_segs; i++) {
		size_t j, nx = 0;

		g = &p->segs[i];
		if (!(g->flags & PF_X))
			continue;
		for (j = 0; j < p->nr_segs; j++)
			nx += !!(p->segs[j].flags & PF_X);
		if (nx != 1)
			return -ENOENT;
		*vaddr = (g->vaddr & ~(uint64_t)0xfff) + (addr - map->start) +
			 (map->offset & 0xfff);
		return 0;
	}
	return -ENOENT;
}

int symbolizer__vaddr(struct symbolizer *s, struct sym_module *m, const struct stk_mapping *map,
		      uint64_t addr, uint64_t *vaddr)
{
	int err = symbolizer__open_module(s, m);

	return err ? err : module__vaddr(m->priv, map, addr, vaddr);
}

/* @m is named without its DWARF, and also without its symbol table when
 * @symtab; the first reason is the one kept for the warning. */
static void module__refuse(struct sym_module *m, int symtab, uint64_t declared,
			   uint64_t limit)
{
	if (!m->dwarf_refused) {
		m->inflate_declared = declared;
		m->inflate_limit = limit;
	}
	m->dwarf_refused = 1;
	m->symtab_refused |= symtab;
}

static int module__refuse_dwarf(struct sym_module *m, uint64_t declared, uint64_t limit)
{
	module__refuse(m, 0, declared, limit);
	return 0;
}

/* 1 when @m's symbol table (in @elf, its main file) would inflate past
 * its limit: then libdwfl must not load it, nor its DWARF.  An embedded
 * image's bytes are taken from the capture's allowance. */
static int module__symtab_refused(struct symbolizer *s, struct sym_module *m, Elf *elf)
{
	uint64_t declared, limit;

	limit = m->source == ELF_SRC_EMBEDDED ? s->embedded_left
					      : elf_inflate__limit(m->priv->file_size);
	declared = elf_inflate__symtab(elf, limit);
	if (declared > limit) {
		module__refuse(m, 1, declared, limit);
		return 1;
	}
	if (m->source == ELF_SRC_EMBEDDED)
		s->embedded_left -= declared;
	return 0;
}

int module__dwarf_allowed(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	GElf_Addr bias;
	uint64_t declared, limit;

	if (m->symtab_refused)	/* ET_REL's DWARF would load the symbol table */
		return 0;
	/* Headers only: the Elf libdwfl holds, nothing inflated yet. */
	declared = elf_inflate__declared(dwfl_module_getelf(p->mod, &bias));
	limit = m->source == ELF_SRC_EMBEDDED ? s->embedded_left
					      : elf_inflate__limit(p->file_size);
	if (declared > limit)
		return module__refuse_dwarf(m, declared, limit);
	if (p->df.over)	/* debuginfo found for its .symtab, past its limit */
		return module__refuse_dwarf(m, p->df.declared, elf_inflate__limit(p->df.size));
	if (m->source == ELF_SRC_EMBEDDED)
		s->embedded_left -= declared;
	return 1;
}

void module__dwarf_loaded(struct sym_module *m)
{
	struct debugfind *df = &m->priv->df;

	if (df->refused && !m->dwarf_refused)
		module__refuse_dwarf(m, df->declared, elf_inflate__limit(df->size));
}
