// SPDX-License-Identifier: BSD-2-Clause
/*
 * tcache.c - unwind tables on disk by build-id (see tcache.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stk.h"
#include "cachedir.h"
#include "tcache.h"

#define TCACHE_MAGIC "STKUWT01"
#define TCACHE_VERSION 3 /* 2: rows say where rbx is (STKREC_UW_CFA_RBX); 3: clone */

struct tcache_header {
	char magic[8];
	uint32_t version;
	uint32_t row_size;		/* sizeof(struct stkrec_unwind_row) */
	uint32_t id_size;
	uint8_t id[STK_MAX_BUILD_ID];
	uint32_t crc;			/* CRC32C of the rows */
	uint32_t flags;			/* the caller's */
	uint32_t pad;
	uint64_t nr;
};

static int path_of(char *out, size_t size, const char *dir, const uint8_t *id, uint32_t id_size,
		   const char *suffix)
{
	char hex[2 * STK_MAX_BUILD_ID + 1];
	uint32_t i;
	int n;

	if (!id_size || id_size > STK_MAX_BUILD_ID)
		return -EINVAL;
	for (i = 0; i < id_size; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	n = snprintf(out, size, "%s/%s%s", dir, hex, suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int tcache__load(const char *dir, const uint8_t *id, uint32_t id_size,
		 struct stkrec_unwind_row **rows, size_t *nr, uint32_t *flags)
{
	struct tcache_header h;
	struct stkrec_unwind_row *r = NULL;
	char path[PATH_MAX];
	struct stat st;
	size_t i, bytes;
	int fd, err;

	*rows = NULL;
	*nr = 0;
	err = path_of(path, sizeof(path), dir, id, id_size, ".uwt");
	err = err ?: cachedir__ok(dir);
	if (err)
		return err == -EINVAL || err == -ENAMETOOLONG ? -ENOENT : err;
	fd = cachedir__open(path, &st);
	if (fd < 0)
		return fd;
	err = -EBADMSG;
	if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h.magic, TCACHE_MAGIC, 8) ||
	    h.version != TCACHE_VERSION || h.row_size != sizeof(*r) || h.id_size != id_size ||
	    memcmp(h.id, id, id_size) || !h.nr || h.nr > (1ull << 28) ||
	    (uint64_t)st.st_size != sizeof(h) + h.nr * sizeof(*r))
		goto bad;
	bytes = (size_t)h.nr * sizeof(*r);
	r = malloc(bytes);
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	if (read(fd, r, bytes) != (ssize_t)bytes || stk_crc32c(0, r, bytes) != h.crc)
		goto bad;
	for (i = 1; i < h.nr; i++)
		if (r[i].pc <= r[i - 1].pc)
			goto bad;
	*rows = r;
	*nr = (size_t)h.nr;
	*flags = h.flags;
	r = NULL;
	err = 0;
	goto out;
bad:
	/* Damaged (a crash mid-write cannot do this: files are renamed
	 * into place whole): not used, and removed. */
	unlink(path);
out:
	free(r);
	close(fd);
	return err;
}

/*
 * What @dir held after the last trim plus what was stored since (0: not
 * known yet): a directory of thousands of tables is scanned when this
 * passes the cap, not at every store (that scan was most of a table's
 * cost: 4000 files, ~8 ms).  Only the worker thread stores.
 */
static uint64_t dir_bytes;

int tcache__store(const char *dir, const uint8_t *id, uint32_t id_size,
		  const struct stkrec_unwind_row *rows, size_t nr, uint32_t flags, uint64_t max_bytes)
{
	struct tcache_header h = { .version = TCACHE_VERSION, .row_size = sizeof(*rows) };
	size_t bytes = nr * sizeof(*rows);
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)rows, bytes } };
	char path[PATH_MAX];
	int err;

	err = path_of(path, sizeof(path), dir, id, id_size, ".uwt");
	if (err)
		return err;
	if (!nr || sizeof(h) + bytes > max_bytes)
		return -EFBIG;
	err = cachedir__make(dir);
	if (err)
		return err;
	memcpy(h.magic, TCACHE_MAGIC, 8);
	h.id_size = id_size;
	memcpy(h.id, id, id_size);
	h.nr = nr;
	h.flags = flags;
	h.crc = stk_crc32c(0, rows, bytes);
	err = cachedir__store(path, iov, 2);
	if (err)
		return err;
	dir_bytes += sizeof(h) + bytes;
	if (dir_bytes == sizeof(h) + bytes || dir_bytes > max_bytes)
		dir_bytes = cachedir__trim(dir, ".uwt", max_bytes) ?: 1;
	return 0;
}
