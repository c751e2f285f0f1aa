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

#include <stdint.h>

/* meta__add_ids() - @key with the value "ID,ID,...".  0 or -ENOMEM. */
int meta__add_ids(struct meta *m, const char *key, const uint32_t *ids, size_t n);

/* meta__add_argv() - @key with the words of @argv (NULL-terminated)
 * joined by spaces.  0 or -ENOMEM. */
int meta__add_argv(struct meta *m, const char *key, char *const *argv);

/* Frees the values and the array; @m may be reused after. */
void meta__free(struct meta *m);

#endif
