/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * buildid.h - read the GNU build-id note (NT_GNU_BUILD_ID) of an ELF file,
 * of an ELF image in memory, or of a raw note section such as
 * /sys/kernel/notes.  Reading a 20-byte note is not symbolizing: it is how
 * the reporter later finds the exact same binary.
 *
 * All readers are bounded: headers and note areas larger than
 * BUILDID_MAX_NOTES bytes are not read.
 */
#ifndef STKREC_BUILDID_H
#define STKREC_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX_NOTES (64u * 1024)

/*
 * buildid__from_notes() - find the GNU build-id in a buffer of ELF notes
 * (4-byte aligned name and descriptor, as in PT_NOTE segments and
 * /sys/kernel/notes).
 * @out, @out_size: receives the build-id (truncated to @out_size).
 *
 * Returns its size (> 0), 0 when the buffer has no GNU build-id note, or
 * -EBADMSG when a note's sizes run past the buffer.
 */
int buildid__from_notes(const void *notes, size_t size, uint8_t *out, size_t out_size);

/*
 * buildid__from_elf_fd() - the build-id of the ELF file open on @fd, read
 * with pread() from its PT_NOTE program headers (both ELF classes, host byte
 * order).
 *
 * Returns its size (> 0), 0 when the file has none, -ENOEXEC when it is not
 * an ELF file of the host's byte order, -EBADMSG for malformed headers, or
 * the pread() -errno.
 */
int buildid__from_elf_fd(int fd, uint8_t *out, size_t out_size);

/* buildid__from_elf_mem() - the same over an ELF image in memory (e.g. the
 * vDSO), @size bytes readable at @img. */
int buildid__from_elf_mem(const void *img, size_t size, uint8_t *out, size_t out_size);

/*
 * buildid__from_note_file() - the build-id in a file that holds raw notes,
 * such as /sys/kernel/notes or /sys/module/NAME/notes/.note.gnu.build-id.
 * Returns as buildid__from_notes(), or the open()/read() -errno.
 */
int buildid__from_note_file(const char *path, uint8_t *out, size_t out_size);

#endif
