/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strsort.h - sorting many long strings in strcmp() order: a multikey
 * quicksort (Bentley and Sedgewick's) on eight bytes of the strings at a
 * time, so a prefix that many strings share is compared once per level,
 * not once per comparison as qsort() with strcmp() does.  A system-wide
 * report's text groups are tens of thousands of stacks of a kilobyte that
 * mostly share their first frames.
 */
#ifndef STK_REPORT_STRSORT_H
#define STK_REPORT_STRSORT_H

#include <stddef.h>
#include <stdint.h>

struct strsort_item {
	const char *s;		/* @len bytes, no NUL among them */
	size_t len;
	void *owner;		/* the caller's, carried along */
	uint64_t word;		/* strsort()'s */
};

/*
 * strsort() - order @items by their strings as strcmp() would (unsigned
 * bytes; a string before every longer one it starts).  Equal strings end
 * in no particular order among themselves.
 */
void strsort(struct strsort_item *items, size_t n);

#endif
