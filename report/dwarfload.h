/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dwarfload.h - the DWARF of a file whose debug sections are zlib-compressed
 * (distributions' separate debuginfo, e.g. Debian's libc6-dbg), opened
 * without inflating all of them first.
 *
 * libdw 0.188 inflates every .debug_* section when a Dwarf is opened: for
 * libc's debuginfo 10 MB and ~60 ms, most of a small report, when an inline
 * lookup needs only .debug_info up to the CUs asked for, the abbreviation,
 * string, address and range sections, and .debug_line only for source
 * lines.  This loader inflates those itself and hands them to libelf as the
 * sections' data, hides the others from libdw, and lets libdw see
 * .debug_info only as far as it has been inflated, finding CUs through its
 * own reading of .debug_aranges with libdwfl's rules.  What libdw reads is
 * byte for byte what it would have read: answers do not change.
 */
#ifndef STK_REPORT_DWARFLOAD_H
#define STK_REPORT_DWARFLOAD_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct dwarf_load;

/*
 * dwarf_load__open() - open the DWARF of @path (its .debug_info must be
 * zlib-compressed: otherwise libdw maps it for free and this gains nothing).
 * @lines: source lines will be asked for (.debug_line is read).
 *
 * Returns NULL with errno: ENOTSUP when elfutils is not the release this loader was checked
 * against (0.188), or the file is not one this loader
 * handles exactly (uncompressed, zstd or .zdebug sections, no .debug_aranges,
 * type units in .debug_types, a dwz alt file, another byte order...; use
 * libdwfl's loader), ENOMEM, or an open()/libelf failure.
 */
struct dwarf_load *dwarf_load__open(const char *path, int lines);
void dwarf_load__close(struct dwarf_load *d);	/* accepts NULL */

/*
 * dwarf_load__addrdie() - the CU DIE covering DWARF address @addr, chosen as
 * dwfl_module_addrdie() chooses it (the CU of the last .debug_aranges range
 * starting at or below @addr), inflating .debug_info as far as that CU
 * needs.  Returns 0 and fills @cudie (valid until dwarf_load__close()),
 * -ENOENT when no CU covers @addr, -ENOMEM, or -EBADMSG on a damaged
 * section.
 */
int dwarf_load__addrdie(struct dwarf_load *d, uint64_t addr, Dwarf_Die *cudie);

/* The first PT_LOAD segment's end address (p_vaddr + p_memsz) of the file,
 * libdwfl's "address_sync": the DWARF bias of a separate debug file is the
 * binary's bias plus the difference of the two. */
uint64_t dwarf_load__address_sync(const struct dwarf_load *d);

/* Bytes of section data inflated so far, for tests and measurements. */
uint64_t dwarf_load__inflated(struct dwarf_load *d);

#endif
