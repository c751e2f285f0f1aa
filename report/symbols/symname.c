// SPDX-License-Identifier: BSD-2-Clause
/*
 * The names at an address of an opened module: its symbol, the inline
 * scopes and source lines from DWARF (or the capture's embedded table),
 * demangled, packed into one arena block and cached per module.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "symcache.h"
#include "stk_escape.h"
#include "symbolize_int.h"

static void sym_result__free(struct sym_result *r)
{
	uint32_t i;

	for (i = 0; i < r->nr_lines; i++) {
		if (r->lines[i].name != r->lines[i].raw)
			free((char *)r->lines[i].name);
		free((char *)r->lines[i].raw);
		free((char *)r->lines[i].file);
	}
	free(r->lines);
	free(r);
}

void sym_line__measure(struct sym_line *l)
{
	size_t n = strlen(l->name);

	l->name_len = (uint32_t)n;
	l->plain = strpbrk(l->name, ";\n\r") == NULL && !stk_escape_needed(l->name, n);
}

/* One block in the arena for the result, its lines and their strings:
 * writers touch a result once per frame, so it should be one cache line
 * away, not five mallocs away. */
static struct sym_result *sym_result__pack(struct arena *a, const struct sym_result *t)
{
	size_t sz = sizeof(*t) + t->nr_lines * sizeof(*t->lines);
	struct sym_result *r;
	uint32_t i;
	char *p;

	for (i = 0; i < t->nr_lines; i++) {
		sz += strlen(t->lines[i].name) + 1;
		if (t->lines[i].raw != t->lines[i].name)
			sz += strlen(t->lines[i].raw) + 1;
		if (t->lines[i].file)
			sz += strlen(t->lines[i].file) + 1;
	}
	r = arena__alloc(a, sz);
	if (!r)
		return NULL;
	*r = *t;
	r->lines = (struct sym_line *)(r + 1);
	p = (char *)(r->lines + t->nr_lines);
	for (i = 0; i < t->nr_lines; i++) {
		const struct sym_line *src = &t->lines[i];
		struct sym_line *l = &r->lines[i];
		size_t n;

		*l = *src;
		n = strlen(src->name) + 1;
		l->name = memcpy(p, src->name, n);
		p += n;
		l->raw = l->name;
		if (src->raw != src->name) {
			n = strlen(src->raw) + 1;
			l->raw = memcpy(p, src->raw, n);
			p += n;
		}
		if (src->file) {
			n = strlen(src->file) + 1;
			l->file = memcpy(p, src->file, n);
			p += n;
		}
		sym_line__measure(l);
	}
	return r;
}

static char *die_raw_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n)
		n = dwarf_diename(die);
	return n ? strdup(n) : NULL;
}

static int die_udata(Dwarf_Die *die, unsigned int at, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr(die, at, &a) && dwarf_formudata(&a, v) == 0;
}

static int sym_line__set_name(struct symbolizer *s, struct sym_line *l, char *raw)
{
	char *dm = NULL;

	if (!raw)
		return -ENOMEM;
	l->raw = raw;
	if (!s->opts.no_demangle)
		dm = demangler__demangle(s->dm, raw);
	if (dm && s->opts.short_names)
		demangle__shorten(dm);
	l->name = dm ? dm : raw;
	return 0;
}

/*
 * sym_line__set_name() for a symbol table name: its demangled form is kept,
 * since every sampled address in a function asks for it again and
 * __cxa_demangle() is the dearest step of a C++ lookup.
 */
static int sym_line__set_sym(struct symbolizer *s, struct sym_line *l, const char *symname)
{
	char *none = (char *)&s->demangled, *dm;

	l->raw = l->name = strdup(symname);
	if (!l->raw)
		return -ENOMEM;
	if (s->opts.no_demangle)
		return 0;
	dm = idmap__find_ptr(&s->demangled, (uintptr_t)symname);
	if (!dm) {
		dm = demangler__demangle(s->dm, symname);
		if (dm && s->opts.short_names)
			demangle__shorten(dm);
		if (idmap__set_ptr(&s->demangled, (uintptr_t)symname, dm ? dm : none)) {
			free(dm);
			return -ENOMEM;
		}
		if (!dm)
			dm = none;
	}
	if (dm != none) {
		l->name = strdup(dm);
		if (!l->name) {
			l->name = l->raw;
			return -ENOMEM;
		}
	}
	return 0;
}

static int sym_line__set_file(struct sym_line *l, const char *file)
{
	if (!file)
		return 0;
	l->file = strdup(file);
	return l->file ? 0 : -ENOMEM;
}

/* Loads the module's DWARF on first need: 1 if it has some, 0 if not, or
 * -ENOMEM. */
static int module__dwarf(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	Dwarf_Addr bias;

	if (p->dwarf_tried)
		return m->has_dwarf;
	p->scopes = scope_index__new();
	if (!p->scopes)
		return -ENOMEM;
	p->dwarf_tried = 1;
	if (!p->mod || !module__dwarf_allowed(s, m))
		return 0;
	/* A separate debuginfo file found now is measured by the callback
	 * and refused when past its limit, before libdw inflates it. */
	p->df.loading_dwarf = 1;
	m->has_dwarf = dwfl_module_getdwarf(p->mod, &bias) != NULL;
	p->df.loading_dwarf = 0;
	module__dwarf_loaded(m);
	if (m->has_dwarf && !m->debug_path) {
		const char *mainfile = NULL, *debugfile = NULL;

		dwfl_module_info(p->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
		if (debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0))
			m->debug_path = strdup(debugfile);	/* best effort */
	}
	return m->has_dwarf;
}

/*
 * The CU DIE holding module address @pc (*@cudie NULL when none) and the
 * bias of its DWARF addresses; *@own set when libdwfl's aranges did not
 * know @pc and the CUs' own ranges did (cuaddr.h): Go's DWARF, clang's
 * and rustc's have no .debug_aranges.  0 or -ENOMEM.
 */
static int module__addrdie(struct sym_module_priv *p, uint64_t pc, Dwarf_Die **cudie,
			   Dwarf_Addr *bias, int *own)
{
	*own = 0;
	*cudie = dwfl_module_addrdie(p->mod, pc, bias);
	if (*cudie)
		return 0;
	if (!p->cus) {
		p->cus = cu_addr__new(p->mod);
		if (!p->cus)
			return -ENOMEM;
	}
	*cudie = cu_addr__find(p->cus, pc, bias);
	*own = *cudie != NULL;
	return 0;
}

/* The source line of DWARF address @addr in @cudie: its file (borrowed
 * from libdw) and line, as dwfl_lineinfo() gives them. */
static const char *cu_lineinfo(Dwarf_Die *cudie, Dwarf_Addr addr, int *lineno)
{
	Dwarf_Line *dl = dwarf_getsrc_die(cudie, addr);

	if (!dl || dwarf_lineno(dl, lineno) != 0)
		return NULL;
	return dwarf_linesrc(dl, NULL, NULL);
}

/*
 * Narrows [*@lo, *@hi) (DWARF addresses) to the .debug_aranges entry that
 * holds @dpc, when it names @cudie: libdwfl maps every address of an entry
 * to its CU.  0, or -1 when no entry (or another CU) holds @dpc: then the
 * CU of a neighbour address cannot be told.
 */
static int span_cu(struct sym_module_priv *p, Dwarf_Die *cudie, uint64_t dpc, uint64_t *lo,
		   uint64_t *hi)
{
	Dwarf_Addr bias, start;
	Dwarf_Word len;
	Dwarf_Aranges *ar;
	Dwarf_Arange *a;
	Dwarf_Off cuoff;
	Dwarf_Die cu;
	Dwarf *dw = dwfl_module_getdwarf(p->mod, &bias);
	size_t n;

	if (!dw || dwarf_getaranges(dw, &ar, &n) != 0 || !(a = dwarf_getarange_addr(ar, dpc)) ||
	    dwarf_getarangeinfo(a, &start, &len, &cuoff) != 0 ||
	    !dwarf_addrdie(dw, dpc, &cu) || dwarf_dieoffset(&cu) != dwarf_dieoffset(cudie) ||
	    start > dpc || dpc - start >= len)
		return -1;
	if (start > *lo)
		*lo = start;
	if (start + len > start && start + len < *hi)
		*hi = start + len;
	return 0;
}

/*
 * Narrows [*@lo, *@hi) (DWARF addresses) to where @cudie's line table gives
 * the row it gives @dpc: libdwfl takes the last row at or before the
 * address, so the answer changes at each row's address, and at that very
 * address it may take another of the rows there: [a, a + 1) when @dpc is a
 * row's address a, else (a, next row's address).  0, or -1 when @dpc is
 * before every row or the table cannot be read.
 */
static int span_line(Dwarf_Die *cudie, uint64_t dpc, uint64_t *lo, uint64_t *hi)
{
	uint64_t below = 0, above = UINT64_MAX;
	Dwarf_Lines *lines;
	size_t n, i;
	int any = 0;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		Dwarf_Addr a;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) != 0)
			return -1;
		if (a <= dpc) {
			if (!any || a > below)
				below = a;
			any = 1;
		} else if (a < above) {
			above = a;
		}
	}
	if (!any)
		return -1;
	if (below == dpc) {
		above = dpc + 1;
	} else {
		below++;
	}
	if (below > *lo)
		*lo = below;
	if (above < *hi)
		*hi = above;
	return 0;
}

/*
 * What DWARF says at module address @pc, before names are demangled or
 * options shape them: the function-like scopes (leaf first), their raw
 * names and declaration lines, and with --lines each frame's file and line
 * (fr[0]: @pc's own, even with no scope; fr[i]: the call site of frame
 * i - 1 when that one was inlined).  This is what symcache.h keeps.
 * @raw: each frame's name, malloc'ed (or NULL), for the caller to free.
 * [*@lo, *@hi): the module addresses around @pc where all of it is the
 * same (span_cu(), scope_index__find_span(), span_line()); [@pc, @pc + 1)
 * where that cannot be told.
 * Returns the number of frames (0: no DWARF frame), or -ENOMEM.
 */
static int module__dwarf_frames(struct symbolizer *s, struct sym_module *m, uint64_t pc,
				struct symcache_frame *d, char **raw, uint64_t *lo, uint64_t *hi)
{
	struct sym_module_priv *p = m->priv;
	struct scope_frame fr[SCOPE_MAX_FRAMES];
	Dwarf_Die *cudie = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Addr dbias = 0;
	size_t nfiles = 0;
	int nfr = 0, own = 0, i, err;

	memset(d, 0, sizeof(*d));
	*lo = pc;
	*hi = pc + 1;
	err = module__dwarf(s, m);
	if (err < 0)
		return err;
	if (err) {
		err = module__addrdie(p, pc, &cudie, &dbias, &own);
		if (err)
			return err;
	}
	if (cudie) {
		uint64_t slo, shi;

		nfr = scope_index__find_span(p->scopes, cudie, pc - dbias, fr, &slo, &shi);
		if (nfr < 0)
			return nfr;
		if (!own && span_cu(p, cudie, pc - dbias, &slo, &shi) == 0 &&
		    (!s->opts.lines || span_line(cudie, pc - dbias, &slo, &shi) == 0) &&
		    slo <= pc - dbias && pc - dbias < shi && slo + dbias >= slo &&
		    shi + dbias >= shi) {
			*lo = slo + dbias;
			*hi = shi + dbias;
		}
		if (s->opts.lines)
			dwarf_getsrcfiles(cudie, &files, &nfiles);
	}
	for (i = 0; i < nfr; i++) {
		int decl;

		memset(&d[i], 0, sizeof(d[i]));
		d[i].subprogram = fr[i].tag == DW_TAG_subprogram;
		raw[i] = die_raw_name(&fr[i].die);
		d[i].raw = raw[i];
		if (s->opts.lines && dwarf_decl_line(&fr[i].die, &decl) == 0 && decl > 0)
			d[i].start_line = (uint32_t)decl;
	}
	if (s->opts.lines) {
		int lineno = 0;
		/* Without DWARF, libdwfl would load it here (and inflate it);
		 * and it finds the CU as dwfl_module_addrdie() does. */
		Dwfl_Line *dl = m->has_dwarf && !own ? dwfl_module_getsrc(p->mod, pc) : NULL;

		if (dl)
			d[0].file = dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL);
		else if (own)
			d[0].file = cu_lineinfo(cudie, pc - dbias, &lineno);
		d[0].line = lineno > 0 ? (uint32_t)lineno : 0;
		/* An inlined call's position is the call site in its caller. */
		for (i = 1; i < nfr; i++) {
			Dwarf_Word cf, cl;

			if (fr[i - 1].tag != DW_TAG_inlined_subroutine)
				break;
			if (die_udata(&fr[i - 1].die, DW_AT_call_file, &cf) && files && cf < nfiles)
				d[i].file = dwarf_filesrc(files, cf, NULL, NULL);
			if (die_udata(&fr[i - 1].die, DW_AT_call_line, &cl))
				d[i].line = (uint32_t)cl;
		}
	}
	return nfr;
}

/*
 * The cache of @m's DWARF-derived frames, opened on first need: only for
 * a file found by build-id (an image from the capture is accounted against
 * the capture, and tables carry no DWARF).  A cache that matches the files
 * opened says what reading the DWARF said of the module (that it has some,
 * and the debuginfo it came from), so that none is read.  0 or -ENOMEM.
 */
static int module__symcache(struct symbolizer *s, struct sym_module *m)
{
	struct sym_module_priv *p = m->priv;
	struct symcache_id id = { .elf_path = m->elf_path, .load_dbg = m->debug_path };
	const char *dbg;
	int err, loaded;

	if (p->sc_tried)
		return 0;
	p->sc_tried = 1;
	if (!s->opts.cache_dir || !m->build_id_size || !p->mod || p->dwarf_tried ||
	    m->dwarf_refused || m->symtab_refused || !m->elf_path ||
	    m->source == ELF_SRC_NONE || m->source == ELF_SRC_EMBEDDED ||
	    m->source == ELF_SRC_ESYMTAB || m->source == ELF_SRC_PERF_MAP)
		return 0;
	err = symcache__open(s->opts.cache_dir, m->build_id, m->build_id_size, &id, &p->sc,
			     &loaded);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (!loaded)
		return 0;
	dbg = symcache__debug_path(p->sc);
	if (dbg && !m->debug_path) {
		m->debug_path = strdup(dbg);
		if (!m->debug_path)
			return -ENOMEM;
	}
	m->has_dwarf = 1;
	return 0;
}

/*
 * module__dwarf_frames() through the cache: from it when it has @pc, else
 * from DWARF (then kept in it).  *@nfr frames in @d; @raw: names to free.
 * 0 or -ENOMEM.
 */
static int module__frames(struct symbolizer *s, struct sym_module *m, uint64_t pc,
			  struct symcache_frame *d, char **raw, int *nfr)
{
	struct sym_module_priv *p = m->priv;
	uint64_t lo, hi;
	uint32_t n;
	int err;

	err = module__symcache(s, m);
	if (err)
		return err;
	if (p->sc && symcache__find(p->sc, pc, s->opts.lines, d, SCOPE_MAX_FRAMES, &n) == 0) {
		*nfr = (int)n;
		return 0;
	}
	*nfr = module__dwarf_frames(s, m, pc, d, raw, &lo, &hi);
	if (*nfr < 0)
		return *nfr;
	if (p->sc && !m->has_dwarf) {	/* nothing to keep */
		symcache__free(p->sc);
		p->sc = NULL;
	}
	if (p->sc)
		return symcache__add(p->sc, lo, hi, (uint32_t)*nfr, d, s->opts.lines);
	return 0;
}

/* Builds the result for module address @pc; *out = NULL when unknown. */
static int module__resolve(struct symbolizer *s, struct sym_module *m, uint64_t pc,
			   struct sym_result **out)
{
	struct sym_module_priv *p = m->priv;
	struct symcache_frame d[SCOPE_MAX_FRAMES];
	char *raws[SCOPE_MAX_FRAMES] = { 0 };
	struct sym_result *r = NULL;
	const char *symname;
	int nfr = 0, first, i, err = -ENOMEM;

	*out = NULL;
	memset(d, 0, sizeof(d[0]));
	symname = symtab__find(p->syms, pc);
	if (!s->opts.no_inline || s->opts.lines) {
		err = module__frames(s, m, pc, d, raws, &nfr);
		if (err)
			goto out;
		err = -ENOMEM;
	}
	if (!nfr && !symname) {
		err = 0;
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	r->nr_lines = nfr ? (uint32_t)nfr : 1;
	r->lines = calloc(r->nr_lines, sizeof(*r->lines));
	if (!r->lines)
		goto out;
	if (!nfr) {
		err = sym_line__set_sym(s, &r->lines[0], symname);
		if (err)
			goto out;
	}
	for (i = 0; i < nfr; i++) {
		struct sym_line *l = &r->lines[i];
		const char *raw = NULL;

		/* The outermost function is named as its symbol (what every
		 * profiler shows, e.g. "foo.cold"); inlined ones from DWARF. */
		if (!(i == nfr - 1 && d[i].subprogram && symname))
			raw = d[i].raw;
		if (raw)
			err = sym_line__set_name(s, l, strdup(raw));
		else if (symname)
			err = sym_line__set_sym(s, l, symname);
		else
			err = sym_line__set_name(s, l, strdup("[unknown]"));
		if (err)
			goto out;
		if (s->opts.lines)
			l->start_line = d[i].start_line;
	}
	if (s->opts.lines) {
		for (i = 0; i < (int)r->nr_lines; i++) {
			err = sym_line__set_file(&r->lines[i], d[i].file);
			if (err)
				goto out;
			r->lines[i].line = d[i].line;
		}
	}
	if (s->opts.no_inline && r->nr_lines > 1) {
		/* Keep only the outermost function. */
		first = (int)r->nr_lines - 1;
		for (i = 0; i < first; i++) {
			struct sym_line *l = &r->lines[i];

			if (l->name != l->raw)
				free((char *)l->name);
			free((char *)l->raw);
			free((char *)l->file);
		}
		r->lines[0] = r->lines[first];
		r->nr_lines = 1;
	}
	r->inlined = r->nr_lines - 1;
	*out = sym_result__pack(&s->results, r);
	err = *out ? 0 : -ENOMEM;
out:
	for (i = 0; i < SCOPE_MAX_FRAMES; i++)
		free(raws[i]);
	if (r)
		sym_result__free(r);
	return err;
}

/*
 * @key (a file offset or a perf map address, already - 1 for a return
 * address) named by @m's embedded table: searched every time, its result
 * kept by name.  No cache by address: the report asks a location once,
 * then its own table (report.c) answers, and a stripped binary's table
 * (cc1's: 29k addresses a build capture) was a megabyte of hash table, a
 * miss to memory a probe and fresh memory as it grew; the search's keys
 * are a few hundred KB, side by side (esymtab.c).
 */
static int module__lookup_etab(struct symbolizer *s, struct sym_module *m, uint64_t key,
			       const struct sym_result **res)
{
	const char *name = esymtab__find(m->priv->etab, key);
	struct sym_result *r, t = { 0 };
	struct sym_line line = { 0 };
	int err;

	r = name ? idmap__find_ptr(&s->etab_results, (uintptr_t)name) : &s->unknown;
	if (!r) {
		t.nr_lines = 1;
		t.lines = &line;
		err = sym_line__set_sym(s, &line, name);
		if (!err) {
			sym_line__measure(&line);
			r = sym_result__pack(&s->results, &t);
		}
		if (line.name != line.raw)
			free((char *)line.name);
		free((char *)line.raw);
		if (err || !r || idmap__set_ptr(&s->etab_results, (uintptr_t)name, r))
			return -ENOMEM;
	}
	*res = r == &s->unknown ? NULL : r;
	return 0;
}

int symbolizer__lookup(struct symbolizer *s, struct sym_module *m, const struct stk_mapping *map,
		       uint64_t addr, int is_return, const struct sym_result **res)
{
	uint64_t vaddr;
	int err;

	*res = NULL;
	/* Opened already, nearly always: no call (one a frame). */
	err = m->status == SYM_MOD_PENDING ? symbolizer__open_module(s, m) : 0;
	if (err)
		return err;
	if (m->priv->etab) {
		uint64_t key = m->source == ELF_SRC_PERF_MAP ? addr : addr - map->start + map->offset;

		if (addr < map->start)
			return 0;
		return module__lookup_etab(s, m, key - (is_return && key ? 1 : 0), res);
	}
	if (!m->priv->mod || module__vaddr(m->priv, map, addr, &vaddr))
		return 0;
	return symbolizer__lookup_vaddr(s, m, vaddr, is_return, res);
}

int symbolizer__lookup_vaddr(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			     int is_return, const struct sym_result **res)
{
	struct sym_module_priv *p = m->priv;
	struct sym_result *r;
	uint64_t pc;
	int err;

	*res = NULL;
	err = m->status == SYM_MOD_PENDING ? symbolizer__open_module(s, m) : 0;
	if (err)
		return err;
	if (!p->mod)
		return 0;
	pc = vaddr + p->bias - (is_return && vaddr ? 1 : 0);
	r = idmap__find_ptr(&p->cache, pc);
	if (!r) {
		err = module__resolve(s, m, pc, &r);
		if (err)
			return err;
		err = idmap__set_ptr(&p->cache, pc, r ? r : &s->unknown);
		if (err)
			return err;
	}
	*res = r == &s->unknown ? NULL : r;
	return 0;
}
