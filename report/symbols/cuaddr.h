/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cuaddr.h - the compilation unit holding an address, from the CUs' own
 * address ranges, for DWARF without .debug_aranges.
 *
 * libdwfl finds an address's CU (dwfl_module_addrdie(), and through it
 * dwfl_module_getsrc()) from .debug_aranges alone, and takes a file
 * without that section to cover no address at all (elfutils 0.188;
 * sourceware bug 22288).  Go writes none, nor do clang (by default) and
 * rustc; their CU DIEs say what they cover (DW_AT_low_pc/DW_AT_high_pc or
 * DW_AT_ranges), which is what this index reads, once per module, when
 * libdwfl's lookup first comes back empty.
 */
#ifndef STK_REPORT_CUADDR_H
#define STK_REPORT_CUADDR_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

/* The address ranges of one module's CUs, sorted. */
struct cu_addr;

/*
 * cu_addr__new() - reads the ranges of every CU of @mod, whose DWARF must
 * already be loaded (dwfl_module_getdwarf()).  A CU whose ranges cannot
 * be read is left out.  @mod is borrowed: free the index before it.
 * Returns the index (maybe empty), or NULL with errno ENOMEM.
 */
struct cu_addr *cu_addr__new(Dwfl_Module *mod);
/* Accepts NULL. */
void cu_addr__free(struct cu_addr *ca);

/*
 * cu_addr__find() - the CU DIE whose ranges hold module address @pc (the
 * first in .debug_info order when several do), as dwfl_module_addrdie()
 * returns it; *@bias: what to subtract from @pc for a DWARF address.
 * Returns NULL when no CU holds @pc.  The DIE is libdwfl's, valid while
 * @mod is.
 */
Dwarf_Die *cu_addr__find(const struct cu_addr *ca, uint64_t pc, Dwarf_Addr *bias);

#endif
