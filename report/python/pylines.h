/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pylines.h - the source line of a CPython instruction, decoded offline
 * from its code object's raw line table (ESYM kind 4's `linetable`), with
 * no Python at run time.
 *
 * Three formats, chosen by the interpreter's version:
 *   3.8, 3.9   co_lnotab: (byte offset delta, line delta) byte pairs, the
 *              line delta signed (since 3.6);
 *   3.10       co_linetable (PEP 626): (byte length, signed line delta)
 *              pairs, a line delta of -128 meaning "no line";
 *   3.11-3.13  co_linetable location table (CPython's
 *              Objects/locations.md): entries each covering 1-8 code
 *              units, in short, one-line, no-column, long and
 *              no-location forms.
 */
#ifndef STK_REPORT_PYLINES_H
#define STK_REPORT_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* py_version values: major << 8 | minor, as ESYM kind 4 carries them. */
#define PYLINES_VERSION(major, minor) ((uint32_t)(major) << 8 | (uint32_t)(minor))
#define PYLINES_VERSION_MIN PYLINES_VERSION(3, 8)
#define PYLINES_VERSION_MAX PYLINES_VERSION(3, 13)

/* The info word's offset for "unknown" (format/stk.h's Python words). */
#define PYLINES_OFFSET_UNKNOWN UINT32_MAX

/**
 * pylines__line() - the line of the instruction at @offset of a code object.
 * @py_version: the interpreter's major << 8 | minor (0x0308 .. 0x030d)
 * @firstlineno: the code object's co_firstlineno (the tables are relative to it)
 * @table: the code object's raw line table, @size bytes (may be NULL when
 *         @size is 0); never read past @size, and only as far as the entry
 *         holding @offset
 * @offset: the instruction's offset in 2-byte code units from the start of
 *          the code's bytecode (3.11+: inline caches included)
 * @line: the line, on success; untouched otherwise
 *
 * The answer is CPython's own (PyCode_Addr2Line, co_lines(), co_positions()).
 * 3.10+ tables cover the bytecode from its start: an offset past their end
 * has no line, nor has an instruction the compiler marked as having none
 * (3.10's -128 line delta, 3.11+'s no-location entries).  A 3.8/3.9 lnotab
 * only marks where lines change, so every offset has one: @firstlineno
 * before the first change (and for an empty table), the last line past the
 * end.  @offset PYLINES_OFFSET_UNKNOWN never has a line.
 *
 * @return 0 and *@line set; -ENOENT when the instruction has no line (a
 * caller shows @firstlineno then); -EINVAL when the table is damaged as far
 * as it was read (an odd-length table before 3.11, an entry cut short or not
 * starting with its marker bit, a varint over 32 bits, a line below 0 or
 * past INT32_MAX) or @firstlineno is past INT32_MAX; -ENOTSUP for a
 * @py_version this decoder does not know.
 */
int pylines__line(uint32_t py_version, uint32_t firstlineno, const uint8_t *table, size_t size,
		  uint32_t offset, uint32_t *line);

#endif
