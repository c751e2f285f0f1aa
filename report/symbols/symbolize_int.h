/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize_int.h - what symbolize.c (the modules: found, opened, an address
 * mapped to ELF) and symname.c (the names at an ELF address) share: the
 * symbolizer's and a module's private state.  Not for use outside them.
 */
#ifndef STK_REPORT_SYMBOLIZE_INT_H
#define STK_REPORT_SYMBOLIZE_INT_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "cuaddr.h"
#include "debugfind.h"
#include "esymtab.h"
#include "idmap.h"
#include "scopes.h"
#include "symbolize.h"
#include "symcache.h"
#include "symtab.h"

struct seg {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;
};

struct sym_module_priv {
	struct symtab *syms;		/* function symbols, or NULL until loaded */
	int dwarf_tried;		/* module__dwarf() ran */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t bias;			/* module address = ELF vaddr + bias */
	struct seg *segs;
	size_t nr_segs;
	size_t last_seg;		/* where the last address was (a guess) */
	int debug_only;			/* segment offsets are not the binary's */
	int esym_fd;			/* memfd holding the embedded image, or -1 */
	struct esymtab *etab;		/* the capture's table names it (kind 2 or 3), or NULL */
	struct idmap cache;		/* lookup address -> struct sym_result* or &unknown */
	struct scope_index *scopes;	/* inline scopes, or NULL until DWARF is read */
	struct cu_addr *cus;		/* CUs by their own ranges, or NULL until
					 * libdwfl's aranges first miss */
	struct sym_module *next;	/* same hash */
	struct debugfind df;		/* its find_debuginfo callback's state */
	uint64_t file_size;		/* its file's, from disk; 0 for an image */
	struct symcache *sc;		/* DWARF-derived frames kept between
					 * reports (symcache.h), or NULL */
	int sc_tried;			/* module__symcache() ran */
};

/* An ELF image from the capture (ESYM), borrowed. */
struct embedded {
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;
	const void *image;
	size_t size;
};

/* A symbol table from the capture (ESYM kind 2 by build-id, 3 by tgid). */
struct symtab_ref {
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;		/* 0: a perf map */
	uint32_t tgid;
	struct esymtab *t;
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct embedded *embedded;
	size_t nr_embedded;
	struct symtab_ref *tabs;
	size_t nr_tabs;
	char **debug_dirs;		/* absolute copies */
	char *sysroot;
	char *system_debug_dir;		/* NULL: skipped */
	char *debuginfo_path;		/* for libdwfl's standard find_elf */
	struct elffind_opts fo;		/* where debugfind looks for debuginfo */
	Dwfl_Callbacks cb;
	struct demangler *dm;
	struct debuginfod *dbgd;
	struct sym_module **mods;
	size_t nr_mods, cap_mods;
	struct idmap by_key;		/* key hash -> first sym_module */
	struct sym_result unknown;	/* cache marker for "no symbol" */
	struct idmap demangled;	/* symbol name (libdwfl's, stable) -> its
					 * demangled copy, or &demangled: none */
	struct idmap etab_results;	/* a capture table's name (its pointer) ->
					 * its result: the addresses of a function
					 * share one */
	struct arena results;		/* every cached sym_result, packed */
	uint64_t embedded_left;		/* what embedded images may still inflate */
	int tab_stored;			/* a symbol table was written to the cache */
};

/* symbolizer__vaddr() of an open module: 0, or -ENOENT when @addr is in
 * none of its segments. */
int module__vaddr(struct sym_module_priv *p, const struct stk_mapping *map, uint64_t addr,
		  uint64_t *vaddr);

/*
 * module__dwarf_allowed() - 1 when @m's DWARF may be loaded: its file's
 * compressed sections, and those of any separate debuginfo found so far,
 * declare no more than their limit (elfinflate.h); then an embedded
 * image's declared bytes are taken from the capture's allowance.  0 (and
 * m->dwarf_refused set) when not.
 */
int module__dwarf_allowed(struct symbolizer *s, struct sym_module *m);

/* After dwfl_module_getdwarf(): notes a debuginfo file the callback refused. */
void module__dwarf_loaded(struct sym_module *m);

#endif
