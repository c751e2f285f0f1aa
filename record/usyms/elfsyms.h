/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elfsyms.h - the function symbols of an ELF file, read with bounded
 * pread()s (never mmap: a traced process can truncate its file under us),
 * from .symtab, else .dynsym, plus the .symtab inside .gnu_debugdata
 * (MiniDebugInfo: an xz-compressed ELF, Fedora and others ship it), at
 * file offsets (SPEC.md ESYM kind 2), sorted, one name per address.
 */
#ifndef STKREC_ELFSYMS_H
#define STKREC_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

/* Limits on what one file may cost. */
#define ELFSYMS_MAX_SECTION   (64u << 20)	/* a symbol or string table */
#define ELFSYMS_MAX_DEBUGDATA (16u << 20)	/* .gnu_debugdata, compressed */
#define ELFSYMS_MAX_INFLATED  (128u << 20)	/* ... and decompressed */

struct elfsyms {
	struct stk_esym_sym *syms;	/* sorted by addr; names point into @names */
	size_t n;
	char *names;
	uint32_t sources;		/* STK_ESYM_SRC_* */
	size_t bytes;			/* heap memory the two arrays hold */
};

/*
 * elfsyms__read_fd() - the STT_FUNC/STT_GNU_IFUNC symbols of the ELF file
 * open on @fd.  A symbol of size 0 extends to the next one.
 * Returns 0 with @out filled (maybe n == 0), -ENOEXEC (not ELF of the
 * host's byte order), -EBADMSG (malformed), -EFBIG (over a limit), -ENOMEM,
 * or the pread() -errno.
 */
int elfsyms__read_fd(int fd, struct elfsyms *out);

/* The same over an image in memory. */
int elfsyms__read_mem(const void *img, size_t size, struct elfsyms *out);

/*
 * elfsyms__read_build_id() - elfsyms__read_fd() of the file open on @fd if
 * its GNU build-id is the @size bytes at @bid (a path may name a rebuilt
 * file by now), else -ESTALE.  A pure function: it touches nothing but
 * @fd (pread() only: no offset moves) and @out, so any thread may run it.
 * The transient memory it needs on top of @out is about the size of the
 * file's string table plus 64 KiB.
 */
int elfsyms__read_build_id(int fd, const uint8_t *bid, size_t size, struct elfsyms *out);

/* Index of the symbol covering file offset @off, or -1. */
long elfsyms__find(const struct elfsyms *t, uint64_t off);

void elfsyms__free(struct elfsyms *t);	/* accepts a zeroed one */

#endif
