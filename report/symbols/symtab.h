/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symtab.h - the function symbols of one libdwfl module, sorted once, for
 * naming addresses by binary search.
 *
 * dwfl_module_addrinfo() scans the whole symbol table on every call
 * (elfutils 0.188), far too slow for 10^5 addresses, and it names an
 * address by the first global alias in table order.  Of the aliases at
 * one address this table keeps the one util/symalias.h prefers (perf's
 * choice: `read` over `__read`, `malloc` over `__libc_malloc`), named
 * without its symbol version (`__libc_start_main`, not
 * `__libc_start_main@@GLIBC_2.34`); a sizeless symbol ends at the next one.
 * PLT stubs, in no symbol table, are named `free@plt` (pltsyms.h).
 */
#ifndef STK_REPORT_SYMTAB_H
#define STK_REPORT_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct symtab;

/*
 * symtab__new() - the STT_FUNC and STT_GNU_IFUNC symbols of @mod (its
 * .symtab, else .dynsym, as dwfl_module_getsymtab() chooses), at module
 * addresses, and its code labels (STT_NOTYPE symbols in executable
 * sections, as perf takes them: hand-written entry code such as ld.so's
 * _start), which name only what no function covers, each up to the next
 * label or function.  An empty table when @mod has none, or is NULL
 * (a module whose symbol table must not be loaded).
 * The names are libdwfl's or the table's: the table must be freed before
 * @mod's Dwfl ends.
 * Returns the table, or NULL with errno ENOMEM.
 */
struct symtab *symtab__new(Dwfl_Module *mod);
void symtab__free(struct symtab *t);	/* accepts NULL */

/*
 * symtab__pack() - @t in a form that needs no ELF to rebuild (what the
 * symbol cache keeps, symcache.h): a malloc()ed buffer in *@out of *@size
 * bytes, native byte order.  A cached table is what symtab__new() chose:
 * when its rules change (which symbols, which alias, where one ends),
 * STAB_VERSION in symcache.c goes up, so that older tables are rebuilt.  Returns 0, -ENOMEM or -EFBIG (names past
 * 4 GiB).
 */
int symtab__pack(const struct symtab *t, void **out, size_t *size);

/*
 * symtab__unpack() - the table symtab__pack() gave @body (@size bytes
 * within the malloc()ed @buf, which the table takes: its names stay there,
 * and it is freed with the table, or at once when NULL is returned).
 * NULL with errno EBADMSG when @body is not such a table (a count, name or
 * order out of bounds), ENOMEM.
 */
struct symtab *symtab__unpack(void *buf, const void *body, size_t size);

/* The name of the function holding module address @addr, or NULL; borrowed
 * from libdwfl or @t, valid while both live. */
const char *symtab__find(const struct symtab *t, uint64_t addr);

#endif
