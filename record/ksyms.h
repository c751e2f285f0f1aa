/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksyms.h - the kernel symbol table from /proc/kallsyms, sorted by
 * address, each symbol sized up to the next one, for finding the symbol
 * that covers a recorded kernel address.  stkrec stores the symbols it
 * finds (KSYM chunks); it never turns addresses into names itself.
 */
#ifndef STKREC_KSYMS_H
#define STKREC_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

/* Size given to the last symbol of the table or of a module, whose end
 * kallsyms does not tell. */
#define KSYMS_LAST_SIZE 4096u

struct ksyms;

/*
 * ksyms__parse() - build a table from kallsyms text ("ADDR TYPE NAME" or
 * "ADDR TYPE NAME\t[MODULE]" per line).  Lines that do not parse are
 * skipped.  When several symbols share an address, the one that covers it
 * is a text symbol if there is one (global before local), else the last
 * one read; the others get size 0.
 *
 * Returns the table, or NULL with errno = ENOMEM.
 */
struct ksyms *ksyms__parse(const char *text, size_t len);

/*
 * ksyms__load() - ksyms__parse() of @path (normally "/proc/kallsyms").
 * Returns NULL with errno from open()/read(), or ENOMEM.
 */
struct ksyms *ksyms__load(const char *path);

void ksyms__free(struct ksyms *ks);

/* Number of symbols; they are indexed 0..count-1 in address order. */
size_t ksyms__count(const struct ksyms *ks);

/* Symbol @i (borrowed, valid until ksyms__free()). */
const struct stk_ksym *ksyms__get(const struct ksyms *ks, size_t i);

/*
 * ksyms__find() - the index of the symbol covering @addr
 * (addr <= @addr < addr + size), or -1.
 */
long ksyms__find(const struct ksyms *ks, uint64_t addr);

/* 1 when every address is 0, as /proc/kallsyms shows them to a reader
 * that kptr_restrict hides them from (or an empty table). */
int ksyms__all_zero(const struct ksyms *ks);

/* Address of the first symbol named @name, or 0. */
uint64_t ksyms__addr_of(const struct ksyms *ks, const char *name);

#endif
