/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kobjs.h - the running kernel image and its modules, with load addresses
 * and GNU build-ids (the KBID chunk), so a report can find the matching
 * vmlinux and .ko debug files later.
 */
#ifndef STKREC_KOBJS_H
#define STKREC_KOBJS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

struct kobjs {
	struct stk_kobj *objs;	/* [0] is "[kernel.kallsyms]" */
	size_t n;
};

/*
 * kobjs__read() - read the kernel's build-id from @sys_root/kernel/notes,
 * the modules from @proc_modules (name, size, address) and each module's
 * build-id from @sys_root/module/NAME/notes/.note.gnu.build-id.
 * @text, @etext: the kernel's _text and _etext, giving the image's base
 *      and size; 0 when unknown.
 *
 * Missing files are not errors: a kernel without modules has no
 * /proc/modules; an unreadable note leaves build_id_size 0.
 * Returns 0 or -ENOMEM.  Free with kobjs__free().
 */
int kobjs__read(struct kobjs *ko, const char *sys_root, const char *proc_modules, uint64_t text,
		uint64_t etext);

void kobjs__free(struct kobjs *ko);

#endif
