/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - ELF symbolization with libdwfl (user binaries through the
 * capture's mappings, a vmlinux through kernel addresses, kvmlinux.h), and
 * the symbol part of the reporter's frame model.
 *
 * A sym_module is one ELF identity (build-id, or path when none was
 * recorded), shared by every process that mapped it.  Each unique
 * (module, address) is looked up once and cached; results are owned by
 * the symbolizer and stay valid until symbolizer__free().
 */
#ifndef STK_REPORT_SYMBOLIZE_H
#define STK_REPORT_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "elffind.h"
#include "stk.h"
#include "util.h"

/* One source-level frame.  A machine frame has 1..n of them, leaf first:
 * the innermost inlined function, ..., the function the code belongs to. */
struct sym_line {
	const char *name;	/* demangled (unless disabled); never NULL */
	const char *raw;	/* the name as in the binary (mangled) */
	const char *file;	/* source file, NULL if unknown or not asked for */
	uint32_t line;		/* 0 if unknown */
	uint32_t start_line;	/* line of the function's declaration, 0 if unknown */
	uint32_t name_len;	/* strlen(name) */
	uint32_t plain : 1;	/* name has no ';', '\n', '\r' nor anything stk_escape()
				 * changes: prints as is */
	uint32_t out_key : 31;	/* the writers' while they group (output.c): the
				 * number they gave name, 0 (as made here) otherwise */
};

/* Sets name_len and plain for @l->name. */
void sym_line__measure(struct sym_line *l);

/* Symbols of one address.  nr_lines == 0 never happens: unknown addresses
 * get a NULL result instead. */
struct sym_result {
	uint32_t nr_lines;
	uint32_t inlined;	/* nr_lines - 1 came from DWARF inline scopes */
	struct sym_line *lines;
};

/* Why a module has no (or incomplete) symbols. */
enum sym_module_status {
	SYM_MOD_PENDING = 0,	/* not looked for yet */
	SYM_MOD_OK,		/* symbols found */
	SYM_MOD_NOT_FOUND,	/* no file with this build-id anywhere */
	SYM_MOD_MISMATCH,	/* only files with another build-id */
	SYM_MOD_NO_SYMBOLS,	/* found, but stripped and no debuginfo */
	SYM_MOD_NOT_FILE,	/* [vdso], [heap], anonymous memory... */
	SYM_MOD_ERROR,		/* found but unreadable by libdwfl */
};

/* One-line reason for a status ("no file found", "build-id mismatch"...). */
const char *sym_module_status__reason(enum sym_module_status st);

struct sym_module_priv;

struct sym_module {
	char *path;			/* as recorded, without " (deleted)" */
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;		/* 0: none recorded */
	enum sym_module_status status;
	enum elf_source source;		/* where the ELF came from */
	char *elf_path;			/* the file used, or NULL */
	char *debug_path;		/* separate debuginfo used, or NULL */
	char *mismatch_path;		/* a file refused for its build-id, or NULL */
	int has_dwarf;			/* DWARF loaded (lines, inlines); only tried
					 * when a lookup needed it */
	/* Its DWARF was not read: the compressed sections of its file (or
	 * separate debuginfo) declare @inflate_declared bytes inflated, past
	 * @inflate_limit (elfinflate.h; for an embedded image, what was left
	 * of the capture's).  Named from its symbol table alone. */
	int dwarf_refused;
	/* ... nor its symbol table (nor its separate debuginfo's): libdwfl
	 * would inflate it when loading the module.  Named from the
	 * capture's table, if any, else not. */
	int symtab_refused;
	uint64_t inflate_declared, inflate_limit;
	/* Accounting by the caller (the pipeline), for summaries. */
	uint64_t samples;		/* samples with a frame in this module */
	uint64_t unknown_samples;	/* ... of which a frame stayed unknown */
	struct sym_module_priv *priv;
};

struct symbolizer_opts {
	size_t sz;			/* sizeof(struct symbolizer_opts) */
	const char *sysroot;
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	const char *system_debug_dir;	/* NULL: "/usr/lib/debug"; "" to skip */
	int no_demangle;
	int short_names;		/* demangled C++ names without parameters and return type */
	int no_inline;			/* outermost function only */
	int lines;			/* fill sym_line.file/line */
	int debuginfod;			/* ask debuginfod (if DEBUGINFOD_URLS is set) */
	/* The capture's size: the images embedded in it may inflate their
	 * compressed sections to ELF_INFLATE_PER_BYTE times it, all together
	 * (a file from disk: times its own size).  0: no embedded image's. */
	uint64_t input_size;
	/* Where what is derived from DWARF is kept between reports, by
	 * build-id (symcache.h); NULL: nowhere. */
	const char *cache_dir;
};

struct symbolizer;

/* Returns a symbolizer, or NULL with errno (ENOMEM, EINVAL). */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);	/* accepts NULL */

/*
 * symbolizer__add_embedded() - an ELF image carried by the capture (ESYM),
 * the first place searched for a module with build-id @bid (before any
 * file); it is used only if its own build-id note is @bid.  A second image
 * for the same build-id is ignored.
 * @image: borrowed, @size bytes; must stay valid until symbolizer__free().
 * Returns 0, -EINVAL (@bid_size 0 or > STK_MAX_BUILD_ID), -ENOMEM.
 */
int symbolizer__add_embedded(struct symbolizer *s, const uint8_t *bid, uint32_t bid_size,
			     const void *image, size_t size);

struct esymtab;

/*
 * symbolizer__add_symtab() - the capture's symbol table (ESYM kind 2) for
 * the binary with build-id @bid: a module with that build-id is named
 * from it when no file of that build-id with a .symtab (or debuginfo) is
 * found; a found file is better: it gives inline frames and lines.  A
 * second table for one build-id is ignored (the capture merges chunks).
 * @t: borrowed until symbolizer__free().
 * Returns 0, -EINVAL (@bid_size 0 or > STK_MAX_BUILD_ID), -ENOMEM.
 */
int symbolizer__add_symtab(struct symbolizer *s, const uint8_t *bid, uint32_t bid_size,
			   struct esymtab *t);

/*
 * symbolizer__add_perf_map() - the capture's perf map of process @tgid
 * (ESYM kind 3), for its mappings without a file (JIT code).
 * @t: borrowed until symbolizer__free().  Returns 0 or -ENOMEM.
 */
int symbolizer__add_perf_map(struct symbolizer *s, uint32_t tgid, struct esymtab *t);

/*
 * symbolizer__perf_map_module() - the module of process @tgid's perf map
 * (path "[perf-TGID.map]"), or NULL when the capture has none for it
 * (errno 0) or for lack of memory (errno ENOMEM).
 */
struct sym_module *symbolizer__perf_map_module(struct symbolizer *s, uint32_t tgid);

/*
 * symbolizer__module() - the module for a mapping's file (interned: the same
 * build-id, or path when @bid_size is 0, always gives the same module).
 * Nothing is opened yet.  Returns NULL with errno ENOMEM.
 */
struct sym_module *symbolizer__module(struct symbolizer *s, const char *path,
				      const uint8_t *bid, uint32_t bid_size);

/* Modules in the order they were first asked for; valid until free. */
size_t symbolizer__nr_modules(const struct symbolizer *s);
struct sym_module *symbolizer__module_at(const struct symbolizer *s, size_t i);

/*
 * symbolizer__lookup() - symbols of @addr, sampled in @map of module @m.
 * @is_return: @addr is a return address (every frame but the leaf): it is
 *   looked up at @addr - 1, inside the call instruction, so a call that ends
 *   a function is not credited to the next one.
 * @res: set to the result, or to NULL when the address has no symbol.
 *
 * Opens the module on first use (its status tells what happened).
 * Returns 0, or -ENOMEM.
 */
int symbolizer__lookup(struct symbolizer *s, struct sym_module *m, const struct stk_mapping *map,
		       uint64_t addr, int is_return, const struct sym_result **res);

/*
 * symbolizer__lookup_vaddr() - as symbolizer__lookup(), for an address
 * already turned into an ELF virtual address of @m (e.g. a kernel address
 * minus its KASLR slide): no mapping is involved.  @is_return: looked up at
 * @vaddr - 1.  Returns 0, or -ENOMEM.
 */
int symbolizer__lookup_vaddr(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			     int is_return, const struct sym_result **res);

/* Opens @m now if not yet done (status set).  0 or -ENOMEM. */
int symbolizer__open_module(struct symbolizer *s, struct sym_module *m);

/* ELF virtual address of @addr in @map of @m (opening @m), for tools and
 * tests.  0 and *vaddr set, -ENOENT when it falls in no loadable segment or
 * the module has no file, -ENOMEM. */
int symbolizer__vaddr(struct symbolizer *s, struct sym_module *m, const struct stk_mapping *map,
		      uint64_t addr, uint64_t *vaddr);

#endif
