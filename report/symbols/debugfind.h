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
 */
#ifndef STK_REPORT_DEBUGFIND_H
#define STK_REPORT_DEBUGFIND_H

#include <elfutils/libdwfl.h>

#include "elffind.h"

/*
 * debugfind__find_debuginfo() - a Dwfl_Callbacks.find_debuginfo.  The
 * module's userdata (dwfl_module_info()) must point at the struct
 * elffind_opts to search with (see debugfind__attach()); a module without
 * one finds nothing.  Returns an open fd (libdwfl takes it) with
 * *@debuginfo_file_name malloc'd, or -1.
 */
int debugfind__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Makes @mod search with @o (borrowed: it must outlive @mod's Dwfl). */
void debugfind__attach(Dwfl_Module *mod, const struct elffind_opts *o);

#endif
