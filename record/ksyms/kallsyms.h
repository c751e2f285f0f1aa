/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kallsyms.h - the kernel symbol table from /proc/kallsyms, sorted by
 * address, each symbol sized up to the next one, for finding the symbol
 * that covers a recorded kernel address.  stkrec stores the symbols it
 * finds (KSYM chunks); it never turns addresses into names itself.
 */
#ifndef STKREC_KALLSYMS_H
#define STKREC_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

/* Size given to the last symbol of the table or of a module, whose end
 * kallsyms does not tell. */
#define KALLSYMS_LAST_SIZE 4096u

struct kallsyms;

/*
 * kallsyms__parse() - build a table from kallsyms text ("ADDR TYPE NAME" or
 * "ADDR TYPE NAME\t[MODULE]" per line).  Lines that do not parse are
 * skipped.  When several symbols share an address they keep the order
 * they were listed in, and the one that names it (kallsyms__find()) is the
 * first text symbol listed, else the first: the kernel's own choice, the
 * name its %pS prints (the kernel lists aliases non-weak first, then with
 * fewer leading underscores, then in link order), so that stkrec names an
 * address the same from /proc/kallsyms as from its BPF symbolizer.  All
 * aliases share one size.
 *
 * Returns the table, or NULL with errno = ENOMEM.
 */
struct kallsyms *kallsyms__parse(const char *text, size_t len);

/*
 * kallsyms__load() - kallsyms__parse() of @path (normally "/proc/kallsyms").
 * Returns NULL with errno from open()/read(), or ENOMEM.
 */
struct kallsyms *kallsyms__load(const char *path);

void kallsyms__free(struct kallsyms *ks);

/* Number of symbols; they are indexed 0..count-1 in address order. */
size_t kallsyms__count(const struct kallsyms *ks);

/* Symbol @i (borrowed, valid until kallsyms__free()). */
const struct stk_ksym *kallsyms__get(const struct kallsyms *ks, size_t i);

/*
 * kallsyms__find() - the index of the symbol covering @addr
 * (addr <= @addr < addr + size), of its aliases the one that names it (see
 * kallsyms__parse()), or -1.
 */
long kallsyms__find(const struct kallsyms *ks, uint64_t addr);

/* 1 when every address is 0, as /proc/kallsyms shows them to a reader
 * that kptr_restrict hides them from (or an empty table). */
int kallsyms__all_zero(const struct kallsyms *ks);

/*
 * kallsyms__parse_symoff() - read the kernel's "%pS" form of @addr,
 * "name+0xoffset/0xsize" optionally followed by " [module]", into @out:
 * addr = @addr - offset, size, type 't' (%pS does not tell the type),
 * name and module pointing into @s, which is modified.
 * Returns 0, or -ENOENT when @s is a bare address (no symbol covers
 * @addr), or -EINVAL when it does not parse or the offset is not within
 * the size.
 */
int kallsyms__parse_symoff(char *s, uint64_t addr, struct stk_ksym *out);

/* Address of the first symbol named @name, or 0. */
uint64_t kallsyms__addr_of(const struct kallsyms *ks, const char *name);

#endif
