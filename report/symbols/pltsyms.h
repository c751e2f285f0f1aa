/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pltsyms.h - names for a binary's PLT stubs, `name@plt`, which no symbol
 * table holds: synthesized from its relocations, as objdump -d and perf
 * name them, so that a sample in a stub is `free@plt`, not `[unknown]`.
 */
#ifndef STK_REPORT_PLTSYMS_H
#define STK_REPORT_PLTSYMS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* One stub: [addr, addr + size), named @name ("free@plt"). */
struct plt_stub {
	uint64_t addr, size;
	const char *name;
};

/*
 * pltsyms__read() - the PLT stubs of @elf (the loaded file, x86-64 only:
 * other machines get none), at its addresses plus @bias.  A stub is an
 * entry of .plt, .plt.sec or .plt.got whose indirect jump, `jmp
 * *slot(%rip)` (after an endbr64, with or without a bnd prefix), goes
 * through a GOT slot that a JUMP_SLOT or GLOB_DAT relocation fills with a
 * named symbol; the stub is named for that symbol.  PLT0, the lazy
 * binder's own code, and the lazy .plt entries beside a .plt.sec jump
 * through no such slot and stay unnamed, as perf leaves them.
 * *@out is a malloc()ed array of *@n stubs (NULL, 0 when none), names in
 * @names.  Returns 0 or -ENOMEM; a damaged table gives fewer stubs.
 */
int pltsyms__read(Elf *elf, uint64_t bias, struct arena *names, struct plt_stub **out,
		  size_t *n);

#endif
