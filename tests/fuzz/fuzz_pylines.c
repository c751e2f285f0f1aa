// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the Python line table decoder (report/python/
 * pylines.h).  The input:
 *
 *   byte 0       the version: 0x08..0x0d are 3.8..3.13, any other byte b
 *                is 3.b (unsupported: -ENOTSUP)
 *   bytes 1-4    firstlineno, little-endian
 *   bytes 5-8    an offset, little-endian
 *   the rest     the line table, exactly that long (libFuzzer's buffer)
 *
 * The offset, each of the first 64 and one past any table (a walk of the
 * whole table) are decoded; any answer but 0 with a line up to INT32_MAX,
 * -ENOENT, -EINVAL or -ENOTSUP, or a line written on failure, aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "pylines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void decode(uint32_t version, uint32_t first, const uint8_t *t, size_t size,
		   uint32_t off)
{
	uint32_t line = 0xdeadbeef;
	int err = pylines__line(version, first, t, size, off, &line);

	if (err == 0 ? line > INT32_MAX :
	    (err != -ENOENT && err != -EINVAL && err != -ENOTSUP) || line != 0xdeadbeef)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t version, first, off;

	if (size < 9)
		return 0;
	version = PYLINES_VERSION(3, data[0]);
	first = le32(data + 1);
	off = le32(data + 5);
	decode(version, first, data + 9, size - 9, off);
	for (off = 0; off < 64; off++)
		decode(version, first, data + 9, size - 9, off);
	decode(version, first, data + 9, size - 9, PYLINES_OFFSET_UNKNOWN - 1);
	return 0;
}
