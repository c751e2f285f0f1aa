/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * meta.h - building the key/value list of a META chunk.
 */
#ifndef STKREC_META_H
#define STKREC_META_H

#include <stddef.h>

#include "stk.h"

struct meta {
	struct stk_kv *kv;	/* keys are string literals; values are owned */
	size_t n, cap;
};

/*
 * meta__add() - append @key (a string literal, not copied) with the value
 * printf(@fmt, ...).  Returns 0 or -ENOMEM.
 */
int meta__add(struct meta *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * meta__add_host() - the facts about this machine: hostname,
 * kernel_release, kernel_version, arch, cpus (online), cpus_possible,
 * page_size, boot_id.  Facts that cannot be read are left out.
 * Returns 0 or -ENOMEM.
 */
int meta__add_host(struct meta *m);

/* Frees the values and the array; @m may be reused after. */
void meta__free(struct meta *m);

#endif
