/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symcache.h - what the symbolizer derived from a module's DWARF (inline
 * frames, names, lines) around each address it was asked, kept on disk by
 * build-id between reports, so that the next report of the same binaries
 * (of this capture or another) reads no DWARF (for libc's compressed debuginfo, inflating it is most of
 * a small report's time).  One file per build-id, DIR/<build-id in hex>.sym
 * (layout in symcache.c): a header naming the build-id, the files the DWARF
 * came from (size and modification time of the binary and of its separate
 * debuginfo, the debuginfo's path) and a CRC32C of the body; then the
 * address ranges, their frames and a string table.
 *
 * A cache is only an accelerator: it holds, per range of addresses, exactly
 * what the DWARF walk gives at each of them (before demangling or any
 * option shapes it; the ranges are where the walk takes the same DIEs and
 * line row, symname.c), and is used
 * only when its header matches the module as opened now; a file that fails
 * any check (magic, version, build-id, sizes, CRC, bounds, order) is removed
 * and rebuilt, never trusted.  Only the reporter's own user may have written
 * it: the directory and each file must be owned by the effective uid and
 * writable by nobody else, and files are opened without following links.
 * Writes go to a temporary file renamed into place; the directory is kept
 * under SYMCACHE_DIR_MAX_BYTES (and the symbol tables below, under
 * SYMCACHE_TAB_DIR_MAX_BYTES), oldest first; one file holds at most
 * SYMCACHE_MAX_ENTRIES addresses.
 */
#ifndef STK_REPORT_SYMCACHE_H
#define STK_REPORT_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#define SYMCACHE_MAX_ENTRIES (1u << 20)	/* ranges in one file */
#define SYMCACHE_MAX_FILE_BYTES (64ull << 20)
#define SYMCACHE_DIR_MAX_BYTES (256ull << 20)
#define SYMCACHE_TAB_DIR_MAX_BYTES (64ull << 20)

/* One frame as the DWARF walk found it, leaf first (symname.c). */
struct symcache_frame {
	const char *raw;	/* DWARF's name (linkage name, else name), NULL if none */
	const char *file;	/* the frame's source file, NULL if unknown or not read */
	uint32_t line;		/* its line, 0 if unknown */
	uint32_t start_line;	/* its function's declaration line, 0 if unknown */
	uint32_t subprogram;	/* DW_TAG_subprogram (else an inlined subroutine) */
};

/* The files a module's DWARF came from: a cache is used only for the same. */
struct symcache_id {
	const char *elf_path;	/* the binary opened */
	const char *load_dbg;	/* separate debuginfo known before DWARF was read, or NULL */
};

struct symcache;

/*
 * symcache__open() - the cache of build-id @bid in @dir for the module
 * opened from @id: its addresses when the file in @dir matches @id (and
 * *@loaded set to 1), else an empty cache (*@loaded 0) that addresses are
 * added to.  A damaged file is removed.  Nothing is read when @dir is not
 * the reporter's alone (see above): the cache then stays empty and is never
 * stored.
 * Returns 0 with *@out, or -ENOMEM, -EINVAL (@bid_size 0 or too large).
 */
int symcache__open(const char *dir, const uint8_t *bid, uint32_t bid_size,
		   const struct symcache_id *id, struct symcache **out, int *loaded);

/* The debuginfo the loaded cache's DWARF came from (borrowed, valid until
 * symcache__free()), or NULL: the binary's own. */
const char *symcache__debug_path(const struct symcache *sc);

/*
 * symcache__find() - the frames cached for a range holding address @pc: *@nr_frames DWARF
 * frames (0: none, the symbol alone) in @fr (room for @max, at least 1;
 * fr[0] carries the address's file and line even with no DWARF frame).
 * Strings are borrowed until symcache__free().  @lines: file and line
 * numbers are needed; an address cached without them is not found.
 * Returns 0, or -ENOENT (not cached).
 */
int symcache__find(const struct symcache *sc, uint64_t pc, int lines,
		   struct symcache_frame *fr, uint32_t max, uint32_t *nr_frames);

/*
 * symcache__add() - keep @nr_frames frames of @fr (max(@nr_frames, 1)
 * entries; strings copied) for every address of [@lo, @hi): the DWARF walk
 * gives them all the same; @lines: file and line numbers were read (a
 * range with them is found by queries with and without).  A range that
 * overlaps one already added of its kind is not added.  Past
 * SYMCACHE_MAX_ENTRIES ranges, nothing more is.  Returns 0 or -ENOMEM.
 */
int symcache__add(struct symcache *sc, uint64_t lo, uint64_t hi, uint32_t nr_frames,
		  const struct symcache_frame *fr, int lines);

/* 1 when symcache__store() has something to write (@sc may be NULL). */
int symcache__pending(const struct symcache *sc);

/*
 * symcache__store() - write @sc to its file if anything was added since it
 * was opened (temporary file renamed over it), recording @dbg (the
 * separate debuginfo the DWARF came from, or NULL).  Returns 0 (also when there was nothing to write) or -errno:
 * -EPERM (the directory is not the reporter's alone), -EFBIG, -ENOMEM, an
 * I/O error.
 */
int symcache__store(struct symcache *sc, const char *dbg);

/*
 * symcache__trim() - remove the oldest (by modification time) frames' files
 * of @dir while they take more than @max bytes (SYMCACHE_DIR_MAX_BYTES), down
 * to 3/4 of it, so that the next trim is many reports away; the same for
 * its symbol tables' files past SYMCACHE_TAB_DIR_MAX_BYTES.  Nothing when
 * @dir is not the reporter's alone.
 */
void symcache__trim(const char *dir, uint64_t max);

/* Accepts NULL. */
void symcache__free(struct symcache *sc);

/*
 * A module's function symbols (symtab.h's table, packed by symtab__pack())
 * kept beside its frames, DIR/<build-id in hex>.stab, so that a report of
 * binaries seen before reads no ELF symbol table: a header naming the
 * build-id, the module address bias, the binary (size and modification
 * time) and the separate debuginfo the table came from (path, size and
 * modification time), and a CRC32C of what follows; then the packed
 * table.  Written once per binary (it holds every symbol, not the ones
 * asked); checked and trusted exactly as the frames' files are.
 */
struct symcache_tab_id {
	const char *elf_path;	/* the binary opened */
	const char *dbg;	/* the separate debuginfo the symbols came from, or NULL */
	uint64_t bias;		/* the module's (libdwfl's) */
};

/*
 * symcache__tab_load() - the packed table of build-id @bid in @dir when its
 * file matches @id as the files are now: *@size bytes at *@body, within
 * the malloc()ed *@buf (the file read whole: free(*@buf) when done).  A damaged file is removed (then rebuilt by
 * symcache__tab_store()); one of other files is left to be replaced.
 * Returns 0, -ENOENT (none usable: store one), -EBADMSG (damaged, removed:
 * store one), -EPERM (@dir not the reporter's alone: neither read nor to be
 * written), -ENOMEM, or -EINVAL (@bid_size 0 or too large).
 */
int symcache__tab_load(const char *dir, const uint8_t *bid, uint32_t bid_size,
		       const struct symcache_tab_id *id, void **buf, const void **body,
		       size_t *size);

/*
 * symcache__tab_store() - keep @body (@size bytes, symtab__pack()'s) as
 * the table of @bid made from @id's files.  Returns 0 or -errno (-EPERM:
 * @dir not the reporter's alone, -EFBIG, -ENOMEM, an I/O error).
 */
int symcache__tab_store(const char *dir, const uint8_t *bid, uint32_t bid_size,
			const struct symcache_tab_id *id, const void *body, size_t size);

#endif
