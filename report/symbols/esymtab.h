/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * esymtab.h - a symbol table carried by the capture (ESYM kind 2: one
 * binary's functions at file offsets; kind 3: one process's perf map at
 * its addresses), the union of every chunk for its key, sorted once for
 * binary search.
 */
#ifndef STK_REPORT_ESYMTAB_H
#define STK_REPORT_ESYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct esymtab;

/* An empty table.  NULL with errno = ENOMEM. */
struct esymtab *esymtab__new(void);
void esymtab__free(struct esymtab *t);	/* accepts NULL */

/* Adds copies of @syms; with @unversion (a binary's symbols, kind 2) each
 * name without its symbol version (`cfree@GLIBC_2.2.5` is `cfree`, as
 * util/symalias.h shows names: captures of stkrec before it kept them).
 * Returns 0 or -ENOMEM. */
int esymtab__add(struct esymtab *t, const struct stk_esym_sym *syms, size_t n, int unversion);

/*
 * esymtab__find() - the name of the symbol covering @addr, or NULL.  Of
 * symbols covering it the one starting last wins (a perf map's later line
 * for recompiled code at the same place is also the later in file order).
 * A symbol of size 0 covers up to the next one.  Borrowed: valid until
 * esymtab__free().
 */
const char *esymtab__find(struct esymtab *t, uint64_t addr);

#endif
