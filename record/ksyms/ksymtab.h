/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksymtab.h - the kernel symbols a recording needs: for every kernel
 * address its rows and stacks reference, the symbol covering it, queued
 * once for a KSYM chunk.
 *
 * Symbols come from one of two sources.  The mode's BPF symbolizer
 * (struct stkrec_ksym_io, the symbolize_kaddrs program, Linux 5.16+)
 * names addresses with the kernel's own %pS, a batch per BPF_PROG_RUN,
 * without reading all of /proc/kallsyms; else /proc/kallsyms is read once
 * (kallsyms.h) and looked up.  With --kallsyms=full the whole table goes
 * into the file at the start instead (ksymtab__write_all()).
 *
 * Use: ksymtab__new() -> ksymtab__use_bpf() or ksymtab__load_kallsyms() ->
 * ksymtab__see() for every kernel address -> ksymtab__resolve() (BPF) ->
 * ksymtab__write() once per flush -> ksymtab__free().
 */
#ifndef STKREC_KSYMTAB_H
#define STKREC_KSYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct ksymtab;

struct ksymtab_stats {
	uint64_t written;	/* symbols queued for the file */
	uint64_t unknown;	/* kernel addresses no text symbol covers */
	uint64_t named_bpf;	/* addresses named by the BPF symbolizer */
	uint64_t named_known;	/* ... of which inside a symbol it had named
				 * for this file: not run again for them */
};

/* An empty table, no source yet.  NULL with errno = ENOMEM. */
struct ksymtab *ksymtab__new(void);

/* Frees @kt and the symbols still queued.  Accepts NULL. */
void ksymtab__free(struct ksymtab *kt);

/*
 * ksymtab__use_bpf() - name addresses with the BPF symbolizer: @io_fd is
 * the "ksym_io" array, @prog_fd the symbolize_kaddrs program.  Runs it
 * once without addresses to learn the bounds of the kernel's text (0
 * without CAP_SYSLOG).  Returns 0, or the bpf() -errno (then @kt has no
 * source: read /proc/kallsyms instead).
 */
int ksymtab__use_bpf(struct ksymtab *kt, int io_fd, int prog_fd);

/*
 * ksymtab__load_kallsyms() - read the symbol table from @path (normally
 * "/proc/kallsyms") and look addresses up in it.  Returns 0, or
 * kallsyms__load()'s -errno (open()/read(), -ENOMEM).
 */
int ksymtab__load_kallsyms(struct ksymtab *kt, const char *path);

/* 1 when the table ksymtab__load_kallsyms() read has only 0 addresses:
 * kernel.kptr_restrict hides them from this process. */
int ksymtab__kallsyms_hidden(const struct ksymtab *kt);

/*
 * ksymtab__see() - a row or stack references kernel address @addr.  Only
 * kernel-half addresses count (a return IP read above a frame without a
 * frame pointer can be any word).  With the BPF symbolizer the address is
 * queued for ksymtab__resolve(); with /proc/kallsyms its text symbol is
 * queued for KSYM if it is not yet.  When @addr is a symbol's first byte,
 * the symbol covering @addr - 1 is queued too (the BPF symbolizer finds
 * that out in ksymtab__resolve()): a report looks a return address up at
 * address - 1, and which frames it takes as return addresses depends on
 * its options.  With --kallsyms=full
 * (ksymtab__write_all()) or no source, nothing happens.
 * Returns 0 or -ENOMEM.
 */
int ksymtab__see(struct ksymtab *kt, uint64_t addr);

/*
 * ksymtab__resolve() - name the addresses queued by ksymtab__see() with
 * the BPF symbolizer, and queue each symbol not written yet.  A symbol of
 * the core kernel outside its text is data, which no code address is in:
 * such an address counts as unknown.  Nothing to do without the BPF
 * symbolizer.  Returns 0, -ENOMEM, or the bpf() -errno of running it.
 */
int ksymtab__resolve(struct ksymtab *kt);

/*
 * ksymtab__write() - write the queued symbols as one KSYM chunk, if there
 * are any, and forget them (also on error).  @chunks is incremented when
 * the chunk is written.  Returns 0 or stk_writer__add_ksyms()'s -errno.
 */
int ksymtab__write(struct ksymtab *kt, struct stk_writer *w, uint64_t *chunks);

/*
 * ksymtab__write_all() - --kallsyms=full: the whole table read by
 * ksymtab__load_kallsyms(), once, in KSYM chunks small enough to stay far
 * from the format's raw size limit; ksymtab__see() then queues nothing.
 * @chunks is incremented for every chunk written.  Returns 0 or
 * stk_writer__add_ksyms()'s -errno.
 */
int ksymtab__write_all(struct ksymtab *kt, struct stk_writer *w, uint64_t *chunks);

/*
 * ksymtab__new_file() - the file was closed after a flush (nothing
 * queued) and another begins: no symbol is in it, every address seen
 * from now on is named and written again (--kallsyms=full: the caller
 * writes the table again with ksymtab__write_all()).
 */
void ksymtab__new_file(struct ksymtab *kt);

/*
 * ksymtab__text() - the core kernel's text, _text.._etext, from the BPF
 * symbolizer or /proc/kallsyms (0, 0 when neither tells).
 */
void ksymtab__text(const struct ksymtab *kt, uint64_t *text, uint64_t *etext);

void ksymtab__stats(const struct ksymtab *kt, struct ksymtab_stats *st);

#endif
