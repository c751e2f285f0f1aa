/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksyms.h - kernel symbol table of a capture (KSYM chunks) or of a
 * kallsyms file (--kallsyms), and kernel address lookups.
 *
 * Names of module symbols read "name [module]", as BCC's
 * ksym(show_module) prints them.
 */
#ifndef STK_REPORT_KSYMS_H
#define STK_REPORT_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

struct ksyms;

/* Returns an empty table, or NULL with errno ENOMEM. */
struct ksyms *ksyms__new(void);
void ksyms__free(struct ksyms *k);	/* accepts NULL */

/*
 * ksyms__add() - add a symbol covering [@addr, @addr + @size); @size 0 means
 * "up to the next symbol".  @type is its kallsyms type letter ('T', 't',
 * 'W'...; 0 when unknown: as 'T').  @module NULL or "" for the kernel
 * image.  Of several symbols at one address a lookup answers with the
 * first text symbol added, else the first added: added in the order a
 * kallsyms file or a capture lists them, that is the kernel's own choice,
 * the name %pS prints (/proc/kallsyms lists aliases as the kernel ranks
 * them: non-weak first, then fewer leading underscores, then link order;
 * a capture named by %pS holds that one, and stkrec writes a
 * --kallsyms=full table in the order it read).  One rule for a capture's
 * table and --kallsyms, which tools/perf does not follow (it names an
 * address by the last alias listed).  Strings are copied.  Returns 0,
 * -ENOMEM.
 */
int ksyms__add(struct ksyms *k, uint64_t addr, uint64_t size, char type, const char *name,
	       const char *module);

/*
 * ksyms__load_kallsyms() - add the text symbols of a /proc/kallsyms-format
 * file ("ADDR TYPE NAME [MODULE]").  Returns 0, the fopen() errno, or
 * -EBADMSG when no line parses.
 */
int ksyms__load_kallsyms(struct ksyms *k, const char *path);

/* Number of symbols. */
size_t ksyms__count(const struct ksyms *k);

/*
 * ksyms__at() - symbol @i, 0 <= @i < ksyms__count(), for walking the table
 * (e.g. to match names against a vmlinux): sets *@addr and returns its name
 * ("name", or "name [module]"), owned by @k; NULL when @i is out of range.
 * The order is unspecified, and a ksyms__lookup() may reorder the table and
 * drop duplicates: do not interleave the two.
 */
const char *ksyms__at(const struct ksyms *k, size_t i, uint64_t *addr);

/*
 * ksyms__lookup() - the symbol covering @addr (sorting the table on first
 * use after adds).  Returns a result owned by @k (valid until ksyms__free()),
 * or NULL when no symbol covers @addr or memory ran out.
 */
const struct sym_result *ksyms__lookup(struct ksyms *k, uint64_t addr);

#endif
