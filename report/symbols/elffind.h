/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elffind.h - find the ELF file a capture's mapping came from, by build-id.
 *
 * A file is only ever used when its GNU build-id equals the one recorded:
 * a binary rebuilt at the same path is detected and refused.
 */
#ifndef STK_REPORT_ELFFIND_H
#define STK_REPORT_ELFFIND_H

#include <stddef.h>
#include <stdint.h>

/* Where a file was found, in search order. */
enum elf_source {
	ELF_SRC_NONE = 0,
	ELF_SRC_EMBEDDED,	/* an image in the capture (ESYM), e.g. the vDSO */
	ELF_SRC_PATH,		/* the path recorded in the capture */
	ELF_SRC_SYSROOT,	/* --sysroot DIR + path */
	ELF_SRC_DEBUG_DIR,	/* --debug-dir DIR: .build-id/xx/rest[.debug] or DIR + path */
	ELF_SRC_SYSTEM,		/* /usr/lib/debug/.build-id/xx/rest.debug */
	ELF_SRC_DEBUGINFOD,	/* downloaded by libdebuginfod */
	ELF_SRC_ESYMTAB,	/* no file: the capture's symbol table (ESYM kind 2) */
	ELF_SRC_PERF_MAP,	/* no file: the process's perf map in the capture (ESYM kind 3) */
};

/* Name of a source ("embedded", "path", "sysroot", "debug-dir", "system", "debuginfod",
 * "embedded symbols", "perf map"). */
const char *elf_source__name(enum elf_source src);

struct elffind_opts {
	const char *sysroot;		/* NULL: none */
	const char *const *debug_dirs;	/* tried in order */
	size_t nr_debug_dirs;
	const char *system_debug_dir;	/* normally "/usr/lib/debug"; NULL: skipped */
	struct debuginfod *debuginfod;	/* NULL: not asked */
};

/*
 * debuginfod__open() - a debuginfod client, with libdebuginfod loaded now.
 *
 * The library is opened with dlopen() rather than linked: loading it and
 * the ~30 libraries it needs (curl, gnutls, krb5...) and running their
 * constructors costs ~6 ms at every start of the program, several times the
 * whole report of a small capture, for a service only asked when
 * DEBUGINFOD_URLS is set.
 *
 * Returns NULL with errno ENOENT (DEBUGINFOD_URLS unset or empty), ENOSYS
 * (no usable libdebuginfod.so.1), ENOMEM.  Free with debuginfod__close().
 */
struct debuginfod *debuginfod__open(void);
void debuginfod__close(struct debuginfod *d);	/* accepts NULL */

/* Result of a search. */
struct elffind_result {
	enum elf_source source;	/* ELF_SRC_NONE when nothing matched */
	char *path;		/* malloc'd: the file's real path (symlinks and ".."
				 * resolved, for one found in a root), or NULL */
	int fd;			/* that file, open, checked; -1 when none.  Take it
				 * (set -1) or elffind_result__clear() closes it */
	int debug_only;		/* 1 if the file is separate debuginfo, not the binary */
	char *mismatch_path;	/* malloc'd: first file seen whose build-id differed, or NULL */
};

/*
 * elffind__locate() - search for @path with build-id @bid, in this order:
 *   1. @path itself (the host's own file at the recorded path);
 *   2. @path inside o->sysroot;
 *   3. for each o->debug_dirs[i]: DIR/.build-id/xx/rest, then
 *      DIR/.build-id/xx/rest.debug (xx/rest: the build-id in hex), then
 *      @path inside DIR;
 *   then, only with a build-id: 4. o->system_debug_dir/.build-id/xx/rest
 *   and rest.debug; 5. debuginfod.
 * "Inside" a directory is as if it were "/" (root_open(): ".." and
 * symlinks, absolute or not, never leave it); 1, 4 and 5 are the host's
 * own paths.  Only regular files are opened (never a FIFO or device).
 * @path: path as recorded (" (deleted)" already removed).
 * @bid, @bid_size: recorded build-id; with @bid_size 0 the recorded path
 *   (or sysroot + path) is used unverified, since nothing can be compared.
 * @res: filled in; free its strings with elffind_result__clear().
 *
 * Returns 0 (check res->source), or -ENOMEM.
 */
int elffind__locate(const struct elffind_opts *o, const char *path, const uint8_t *bid,
		    uint32_t bid_size, struct elffind_result *res);
void elffind_result__clear(struct elffind_result *res);

/*
 * elffind__debuginfo() - find the separate debuginfo of the binary @file
 * (an absolute path, the file elffind__locate() found), with the same
 * confinement: with a build-id, DIR/.build-id/xx/rest.debug in each
 * o->debug_dirs (inside it) and o->system_debug_dir; then, by its
 * .gnu_debuglink name @debuglink (its last component only), inside the
 * binary's directory: NAME and .debug/NAME; inside each debug dir and
 * inside o->sysroot's /usr/lib/debug: the binary's directory + NAME; and
 * o->system_debug_dir + the binary's directory + NAME.  A file found by
 * name must have build-id @bid, or (without one) the debuglink CRC @crc,
 * and is never @file itself.  Only regular files are opened, without
 * blocking (a FIFO there is skipped).  @res as for elffind__locate().
 * Returns 0 (check res->source), or -ENOMEM.
 */
int elffind__debuginfo(const struct elffind_opts *o, const char *file, const char *debuglink,
		       uint32_t crc, const uint8_t *bid, uint32_t bid_size,
		       struct elffind_result *res);

/*
 * elf_file__build_id() - read the GNU build-id note of the ELF file @path.
 * @bid: STK_MAX_BUILD_ID (64) bytes.
 * Returns the build-id size (> 0), or -ENOENT/-EACCES (open), -ENOEXEC (not
 * ELF), -ENODATA (no build-id note), -EFBIG (longer than 64 bytes).
 */
int elf_file__build_id(const char *path, uint8_t *bid);

#endif
