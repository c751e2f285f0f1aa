/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * debugfind.h - libdwfl's find_debuginfo callback, confined.
 *
 * libdwfl's standard callback (dwfl_standard_find_debuginfo) opens the
 * .gnu_debuglink candidates with a blocking open() that follows symlinks:
 * a FIFO at a debuglink name beside a capture's binary hangs stkreport for
 * good, and a symlink there leaves --sysroot/--debug-dir.  This one
 * searches with elffind__debuginfo() (elffind.h): regular files only,
 * opened without blocking, resolved inside the directories they are
 * looked for in.
 *
 * It also measures what the file's compressed sections would inflate to
 * (elfinflate.h): a file past its limit is refused while the module's DWARF
 * is being loaded (libdw would inflate it), and while its symbol table is
 * if any of the symbol table's sections is compressed (libdwfl inflates
 * them as it loads it); only marked otherwise (its symbol table is still
 * good; the module's DWARF is then never loaded).
 */
#ifndef STK_REPORT_DEBUGFIND_H
#define STK_REPORT_DEBUGFIND_H

#include <elfutils/libdwfl.h>

#include "elffind.h"

/* One module's search: set by its owner, read back after libdwfl called. */
struct debugfind {
	const struct elffind_opts *fo;	/* where to search; borrowed */
	int loading_dwarf;		/* set around dwfl_module_getdwarf(): refuse
					 * a file past its inflate limit */
	/* The debuginfo file found last and what it would inflate to. */
	uint64_t size, declared;
	int over;			/* declared > elf_inflate__limit(size) */
	int refused;			/* ... and it was refused for that */
};

/*
 * debugfind__find_debuginfo() - a Dwfl_Callbacks.find_debuginfo.  The
 * module's userdata (dwfl_module_info()) must point at the struct
 * debugfind to search with (see debugfind__attach()); a module without
 * one finds nothing.  Returns an open fd (libdwfl takes it) with
 * *@debuginfo_file_name malloc'd, or -1.
 */
int debugfind__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Makes @mod search with @df (borrowed: it must outlive @mod's Dwfl). */
void debugfind__attach(Dwfl_Module *mod, struct debugfind *df);

#endif
