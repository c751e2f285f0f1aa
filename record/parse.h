/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * parse.h - strict parsers for stkrec's option values.  They accept exactly
 * the documented syntax and reject everything else (no leading spaces,
 * signs, trailing garbage or silent wrap-around, unlike strtoul()).
 */
#ifndef STKREC_PARSE_H
#define STKREC_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * parse__uint() - a decimal integer in [0, @max].
 * Returns 0, -EINVAL (not a plain decimal number: empty, sign, other
 * characters) or -ERANGE (above @max).
 */
int parse__uint(const char *s, uint64_t max, uint64_t *out);

/*
 * parse__id_list() - "ID[,ID...]" of decimal ids in [1, UINT32_MAX - 1]:
 * pids and tids.  Appends to the malloc'ed array *@ids of *@n entries
 * (both may start NULL/0, so repeated options accumulate); duplicates are
 * dropped.  On error *@ids and *@n are unchanged.
 * Returns 0, -EINVAL (syntax, or id 0), -ERANGE or -ENOMEM.
 */
int parse__id_list(const char *s, uint32_t **ids, size_t *n);

/*
 * parse__seconds() - a positive duration in seconds, integer or decimal
 * ("5", "0.5"), at most @max_s seconds, at least 1 ms, into nanoseconds.
 * Returns 0, -EINVAL or -ERANGE.
 */
int parse__seconds(const char *s, uint64_t max_s, uint64_t *ns);

/*
 * parse__size() - a positive number of bytes, decimal, with an optional
 * unit K, M or G (KiB, MiB, GiB: "100M" is 104857600), at most @max.
 * Returns 0, -EINVAL (syntax, or 0) or -ERANGE.
 */
int parse__size(const char *s, uint64_t max, uint64_t *bytes);

#endif
