/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcache.h - unwind tables kept on disk by build-id between recordings,
 * so that the next recording of the same binaries starts warm: a table
 * depends only on its file's bytes.  One file per table, DIR/<build-id
 * in hex>.uwt: a header (magic, format version, build-id, row count,
 * CRC32C of the rows) and the rows.  Only the recorder's own user may
 * have written it: the directory and every file must be owned by the
 * effective uid and writable by nobody else, files are opened without
 * following links, and a table is used only if its header, size, CRC
 * and order check out.  The directory is kept under TCACHE_MAX_BYTES,
 * oldest (by modification time) removed first.  Called on the worker
 * thread; no state.
 */
#ifndef STKREC_TCACHE_H
#define STKREC_TCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "stkrec.h"

#define TCACHE_DIR "/var/cache/stk/unwind"
#define TCACHE_MAX_BYTES (256ull << 20)

/*
 * tcache__load() - the rows cached for @id in @dir into *@rows (malloc'ed,
 * *@nr of them), and the @flags they were stored with (the caller's: how
 * the table was built).  Returns 0, -ENOENT (none), -EPERM (the directory or
 * the file is not the recorder's alone: not used), -EBADMSG (damaged:
 * removed), -ENOMEM.
 */
int tcache__load(const char *dir, const uint8_t *id, uint32_t id_size,
		 struct stkrec_unwind_row **rows, size_t *nr, uint32_t *flags);

/*
 * tcache__store() - keep @nr rows for @id in @dir (created 0700 if
 * missing, its parent too), replacing any, then trim the directory to
 * @max_bytes (TCACHE_MAX_BYTES), oldest first.  Returns 0 or -errno (-EPERM: not the recorder's
 * alone).
 */
int tcache__store(const char *dir, const uint8_t *id, uint32_t id_size,
		  const struct stkrec_unwind_row *rows, size_t nr, uint32_t flags, uint64_t max_bytes);

#endif
