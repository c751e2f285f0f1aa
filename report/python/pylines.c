// SPDX-License-Identifier: BSD-2-Clause
/*
 * Decodes CPython line tables (3.8-3.13) into the line of one instruction,
 * with no Python at run time.  The formats are CPython's own descriptions
 * (Objects/lnotab_notes.txt, Objects/locations.md); each decoder walks the
 * table from its start only as far as the instruction asked for, as
 * CPython's PyCode_Addr2Line does, bounds-checking every byte it reads.
 */
#include <errno.h>
#include <stdbool.h>

#include "pylines.h"

/*
 * The running line, kept as CPython keeps it: an int.  A table that takes
 * it outside an int is damaged (CPython's own arithmetic would overflow).
 */
static bool line_ok(int64_t line)
{
	return line >= INT32_MIN && line <= INT32_MAX;
}

/* The result for an instruction at @l: lines below 0 are never written. */
static int line_result(int64_t l, uint32_t *line)
{
	if (l < 0 || l > INT32_MAX)
		return -EINVAL;
	*line = (uint32_t)l;
	return 0;
}

/*
 * 3.8, 3.9: co_lnotab, (byte offset increment, line increment) pairs, the
 * line increment signed since 3.6.  An instruction's line is the one
 * reached by the pairs whose offsets are at or before it.  The table does
 * not record the bytecode's length, so every offset has a line.
 */
static int lnotab_line(int64_t l, const uint8_t *t, size_t size, uint64_t want, uint32_t *line)
{
	uint64_t addr = 0;
	size_t i;

	if (size & 1)
		return -EINVAL;
	for (i = 0; i < size; i += 2) {
		addr += t[i];
		if (addr > want)
			break;
		l += (int8_t)t[i + 1];
		if (!line_ok(l))
			return -EINVAL;
	}
	return line_result(l, line);
}

/*
 * 3.10: co_linetable (PEP 626), (byte length, signed line delta) pairs
 * covering the bytecode from offset 0; a delta of -128 marks a range with
 * no line (and leaves the running line alone).  A long range is split
 * into pieces of at most 254 bytes and a big delta into zero-length pairs
 * carrying at most 127 each: a zero-length pair only moves the line.
 */
static int linetable310_line(int64_t l, const uint8_t *t, size_t size, uint64_t want,
			     uint32_t *line)
{
	uint64_t end = 0;
	size_t i;

	if (size & 1)
		return -EINVAL;
	for (i = 0; i < size; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		if (delta != -128) {
			l += delta;
			if (!line_ok(l))
				return -EINVAL;
		}
		end += t[i];
		if (want < end)
			return delta == -128 ? -ENOENT : line_result(l, line);
	}
	return -ENOENT;
}

/*
 * 3.11+ location table: the location entry kinds, bits 3-6 of an entry's
 * first byte (CPython's _PyCodeLocationInfoKind).
 */
enum {
	LOC_SHORT_LAST = 9,	/* 0-9: same line, one byte of columns */
	LOC_ONE_LINE0 = 10,	/* 10-12: line + 0..2, two column bytes */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13,	/* svarint line delta */
	LOC_LONG = 14,		/* svarint line delta, 3 varints (end line, columns) */
	LOC_NONE = 15,		/* no location */
};

/*
 * An entry's next byte: bit 7 clear (bit 7 starts an entry), else the
 * entry is cut short or damaged.
 */
static int loc_byte(const uint8_t *t, size_t size, size_t *i, uint8_t *b)
{
	if (*i >= size || (t[*i] & 0x80))
		return -EINVAL;
	*b = t[(*i)++];
	return 0;
}

/*
 * A varint: 6-bit chunks, least significant first, bit 6 set on all but
 * the last.  CPython writes unsigned ints, so at most 6 chunks and 32 bits.
 */
static int loc_varint(const uint8_t *t, size_t size, size_t *i, uint32_t *val)
{
	uint64_t v = 0;
	unsigned int shift;
	uint8_t b;
	int err;

	for (shift = 0; shift <= 30; shift += 6) {
		err = loc_byte(t, size, i, &b);
		if (err)
			return err;
		v |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40)) {
			if (v > UINT32_MAX)
				return -EINVAL;
			*val = (uint32_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

/* A signed varint: the magnitude shifted left once, the sign in bit 0. */
static int loc_svarint(const uint8_t *t, size_t size, size_t *i, int64_t *val)
{
	uint32_t u;
	int err;

	err = loc_varint(t, size, i, &u);
	if (err)
		return err;
	*val = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

/*
 * Reads the rest of the entry of @kind whose first byte is before *@i:
 * its start line's delta into @delta (0 when it has none), *@i moved past
 * it.  Every byte of the entry is read, so a cut or damaged entry is told
 * apart from a whole one, and the next byte must start an entry.
 */
static int loc_entry(const uint8_t *t, size_t size, size_t *i, unsigned int kind, int64_t *delta)
{
	uint32_t skip;
	uint8_t b;
	int err, n;

	*delta = 0;
	if (kind <= LOC_SHORT_LAST)
		return loc_byte(t, size, i, &b);
	if (kind <= LOC_ONE_LINE2) {
		*delta = kind - LOC_ONE_LINE0;
		err = loc_byte(t, size, i, &b);
		return err ? err : loc_byte(t, size, i, &b);
	}
	if (kind == LOC_NONE)
		return 0;
	err = loc_svarint(t, size, i, delta);
	if (err || kind == LOC_NO_COLUMNS)
		return err;
	/* The long form's end line delta, start and end columns. */
	for (n = 0; n < 3; n++) {
		err = loc_varint(t, size, i, &skip);
		if (err)
			return err;
	}
	return 0;
}

/*
 * 3.11-3.13: the location table, entries each covering 1-8 code units
 * from offset 0, their start lines deltas from the previous entry's
 * (co_firstlineno before the first); a no-location entry leaves the
 * running line alone.
 */
static int loctable_line(int64_t l, const uint8_t *t, size_t size, uint64_t want, uint32_t *line)
{
	uint64_t end = 0;
	size_t i = 0;

	while (i < size) {
		uint8_t first = t[i++];
		unsigned int kind = (first >> 3) & 15;
		int64_t delta;
		int err;

		if (!(first & 0x80))
			return -EINVAL;
		err = loc_entry(t, size, &i, kind, &delta);
		if (err)
			return err;
		l += delta;
		if (!line_ok(l))
			return -EINVAL;
		end += (first & 7) + 1;
		if (want < end)
			return kind == LOC_NONE ? -ENOENT : line_result(l, line);
	}
	return -ENOENT;
}

int pylines__line(uint32_t py_version, uint32_t firstlineno, const uint8_t *table, size_t size,
		  uint32_t offset, uint32_t *line)
{
	if (py_version < PYLINES_VERSION_MIN || py_version > PYLINES_VERSION_MAX)
		return -ENOTSUP;
	if (firstlineno > INT32_MAX || (!table && size))
		return -EINVAL;
	/* The stack's "offset unknown": no instruction, whatever the table says. */
	if (offset == PYLINES_OFFSET_UNKNOWN)
		return -ENOENT;
	if (py_version <= PYLINES_VERSION(3, 9))
		return lnotab_line(firstlineno, table, size, 2 * (uint64_t)offset, line);
	if (py_version == PYLINES_VERSION(3, 10))
		return linetable310_line(firstlineno, table, size, 2 * (uint64_t)offset, line);
	return loctable_line(firstlineno, table, size, offset, line);
}
