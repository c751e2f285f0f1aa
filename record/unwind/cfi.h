/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi.h - the few things the unwind-table builder reads of call frame
 * information itself (pointer encodings), and the bounds a file's CFI
 * must keep before libdw is asked to run it: stkrec builds tables, as
 * root, from files any user can map, and libdw 0.188 sizes its state by
 * what the CFI names (cfi.c says how).
 */
#ifndef STKREC_CFI_H
#define STKREC_CFI_H

#include <stdint.h>

#include <elfutils/libdw.h>
#include <gelf.h>

/*
 * cfi__read_ptr() - a pointer of DW_EH_PE encoding @enc at *@p (advanced
 * past it), before its application (pcrel and the like are the caller's).
 * Only the fixed-size formats with the absptr, pcrel, textrel or datarel
 * applications: -ENOTSUP for others (DW_EH_PE_aligned: libdw pads first),
 * -EBADMSG past @end.
 */
int cfi__read_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v);

/* The encoding of @cie's FDE addresses: augmentation 'R' (.eh_frame),
 * else absolute.  0, -ENOTSUP (an augmentation we cannot size) or
 * -EBADMSG. */
int cfi__fde_encoding(const Dwarf_CIE *cie, uint8_t *enc);

/*
 * cfi__eh_frame_ok() - 0 when libdw may run @elf's .eh_frame: every CIE
 * and FDE program of every section of that name (and every CIE an FDE
 * names) within bounds (registers up to 255, remember_state nested 16
 * deep and 4096 in all, 1 MiB), every .eh_frame_hdr pointing only at
 * FDEs of the chain; no .eh_frame at all is fine too.  -EBADMSG else,
 * also for a file without section headers or with PT_GNU_EH_FRAME but
 * no section named .eh_frame; -ENOMEM.
 */
int cfi__eh_frame_ok(Elf *elf);

/* The same for the .debug_frame (and .zdebug_frame, which libdw takes for
 * it) sections of @elf: 0 or -EBADMSG. */
int cfi__debug_frame_ok(Elf *elf);

#endif
