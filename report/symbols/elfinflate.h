/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elfinflate.h - what an ELF's compressed sections would cost once
 * inflated, read from their headers before libelf or libdw inflate
 * anything, and the limit they are held to (SPEC.md §7.3).
 *
 * libdw inflates every compressed debug section of a file it opens
 * (SHF_COMPRESSED, or GNU .zdebug_*), to the size the section declares:
 * a 1 MB zlib stream of zeros declaring 1 GiB costs 1 GiB and seconds.
 * Real debuginfo inflates 3 to 10 times, so a file (or, for images
 * embedded in the capture, the capture) may inflate to ELF_INFLATE_PER_BYTE
 * times its size; past that its DWARF is not read.
 */
#ifndef STK_REPORT_ELFINFLATE_H
#define STK_REPORT_ELFINFLATE_H

#include <gelf.h>
#include <stdint.h>

#define ELF_INFLATE_PER_BYTE	128ull

/*
 * elf_inflate__declared() - the bytes @elf's compressed sections declare
 * they inflate to: ch_size of each SHF_COMPRESSED section (gelf_getchdr(),
 * no inflating) plus the big-endian size after "ZLIB" of each .zdebug_*
 * one.  A compressed section whose header cannot be read counts as
 * UINT64_MAX (libdw would refuse it, but nothing says what it costs).
 * The sum saturates at UINT64_MAX.
 */
uint64_t elf_inflate__declared(Elf *elf);

/*
 * elf_inflate__symtab() - the bytes libdwfl inflates to load @elf's symbol
 * table (dwfl_module_getsymtab()), which it does when the module is
 * loaded, before any DWARF: the declared size (as above) of each
 * compressed SHT_SYMTAB, SHT_DYNSYM and SHT_SYMTAB_SHNDX section and of
 * the section each names by sh_link; plus, for .gnu_debugdata
 * (MiniDebugInfo, xz), what it inflates to and that image's own symbol
 * table sections.  An xz stream's index or headers could lie, so it is
 * inflated here, into at most what is left of @limit, and dropped: the
 * result is then past @limit (UINT64_MAX when liblzma cannot decode it
 * in its memory limit).  Saturates at UINT64_MAX.
 */
uint64_t elf_inflate__symtab(Elf *elf, uint64_t limit);

/* @size bytes times ELF_INFLATE_PER_BYTE, saturating. */
uint64_t elf_inflate__limit(uint64_t size);

#endif
