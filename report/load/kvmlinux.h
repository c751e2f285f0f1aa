/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kvmlinux.h - kernel frames symbolized from a vmlinux (--vmlinux FILE):
 * function names, inline frames and source lines from its symbol table
 * and DWARF.  Lookups go through the same ELF symbolizer as user frames
 * (symbolize.h), so kernel frames get the same frame model (struct
 * sym_result, inline lines leaf first, file:line) as user ones.
 *
 * A vmlinux is used only when its GNU build-id is the one the capture
 * recorded for the kernel image (KBID "[kernel.kallsyms]").  Only the
 * kernel image is covered: module frames keep their captured names.
 *
 * KASLR: recorded addresses are the relocated ones; the vmlinux has the
 * link-time ones.  The slide between them comes from the capture alone:
 *   - KBID's base for "[kernel.kallsyms]" is the runtime address of _text
 *     (stkrec reads it from kallsyms), so base - st_value(_text) is one
 *     candidate;
 *   - each captured kernel-image symbol (KSYM) whose name is unique in the
 *     vmlinux's .symtab gives addr - st_value as another.
 * The slide is the value most KSYM symbols agree on (ties: the _text
 * candidate's), or the _text candidate when no KSYM symbol matches.
 * Nothing at all: no slide, and the vmlinux is not used.
 */
#ifndef STK_REPORT_KVMLINUX_H
#define STK_REPORT_KVMLINUX_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "stk.h"
#include "symbolize.h"

/* Whether the vmlinux can be used, and why not. */
enum kvmlinux_status {
	KVMLINUX_OK = 0,
	KVMLINUX_NO_KERNEL_BID,		/* the capture recorded no kernel build-id */
	KVMLINUX_MISMATCH,		/* the file's build-id is another one */
	KVMLINUX_NO_SLIDE,		/* nothing tells where the kernel was loaded */
};

/* What kvmlinux__open() found, for the front-end's messages. */
struct kvmlinux_info {
	enum kvmlinux_status status;
	uint8_t build_id[STK_MAX_BUILD_ID];	/* the file's */
	uint32_t build_id_size;
	const struct cap_kobj *kernel;	/* the capture's "[kernel.kallsyms]", or NULL */
	uint64_t slide;			/* runtime address - vmlinux address */
	int slide_from_text;		/* the _text candidate was available */
	size_t ksym_votes;		/* captured symbols agreeing with the slide */
	size_t ksym_matched;		/* captured symbols found once in the vmlinux */
};

struct kvmlinux;

/*
 * kvmlinux__open() - check @path against @cap's kernel build-id and, if it
 * matches, work out the KASLR slide from @cap's KBID base and KSYM symbols
 * (@cap must outlive the kvmlinux: its info points into it).
 * Nothing else is read yet: the symbol table and DWARF are loaded by the
 * first lookup, DWARF per CU as lookups need it.
 * @opts: how to symbolize (lines, inline, demangling, debug dirs for a
 *   vmlinux without DWARF); copied.  Its sysroot is not used.
 *
 * Returns a kvmlinux whose info's status says whether it can be used (only
 * KVMLINUX_OK looks anything up), or NULL with errno: the open() errno
 * (ENOENT, EACCES...), ENOEXEC (not ELF), ENODATA (no build-id note),
 * ENOMEM.
 */
struct kvmlinux *kvmlinux__open(const char *path, const struct capture *cap,
				const struct symbolizer_opts *opts);
void kvmlinux__free(struct kvmlinux *kv);	/* accepts NULL */

/* What open found; valid until kvmlinux__free(). */
const struct kvmlinux_info *kvmlinux__info(const struct kvmlinux *kv);

/*
 * kvmlinux__lookup() - symbols of the recorded kernel address @addr.
 * @is_return: a return address (every frame but the leaf), looked up at
 *   @addr - 1.
 * @res: set to the result (owned by @kv, valid until kvmlinux__free()), or
 *   to NULL when @kv is not usable, @addr is not in the vmlinux's code
 *   (a module, BPF code...), or no symbol covers it.
 *
 * Returns 0, or -ENOMEM.
 */
int kvmlinux__lookup(struct kvmlinux *kv, uint64_t addr, int is_return,
		     const struct sym_result **res);

/* 1 when lookups read the vmlinux's DWARF (inline frames are known). */
int kvmlinux__has_dwarf(const struct kvmlinux *kv);

#endif
