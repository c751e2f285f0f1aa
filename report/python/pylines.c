// SPDX-License-Identifier: BSD-2-Clause
/* Decodes CPython line tables (3.8-3.13) into the line of one instruction. */
#include <errno.h>

#include "pylines.h"

int pylines__line(uint32_t py_version, uint32_t firstlineno, const uint8_t *table, size_t size,
		  uint32_t offset, uint32_t *line)
{
	(void)py_version;
	(void)firstlineno;
	(void)table;
	(void)size;
	(void)offset;
	(void)line;
	return -ENOTSUP;
}
