/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idmap.h - a hash map from uint64_t keys to uint64_t values (open
 * addressing, linear probing).  stkrec keeps its sets in it: stack ids
 * written to the file, stacks resident in the BPF map, processes whose
 * maps were read.
 */
#ifndef STKREC_IDMAP_H
#define STKREC_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap;

/* Returns an empty map, or NULL with errno = ENOMEM. */
struct idmap *idmap__new(void);

/* Frees @m (accepts NULL). */
void idmap__free(struct idmap *m);

/*
 * idmap__set() - insert @key with @value, or replace the value of @key.
 * Returns 0 or -ENOMEM (then @m is unchanged).
 */
int idmap__set(struct idmap *m, uint64_t key, uint64_t value);

/*
 * idmap__find() - the value of @key, or NULL if absent.  The pointer may be
 * written through and stays valid until the next idmap__set() or
 * idmap__remove() on @m.
 */
uint64_t *idmap__find(const struct idmap *m, uint64_t key);

/* idmap__remove() - remove @key.  Returns 0 or -ENOENT. */
int idmap__remove(struct idmap *m, uint64_t key);

/* Number of keys in @m. */
size_t idmap__count(const struct idmap *m);

/* Removes every key; keeps the memory. */
void idmap__clear(struct idmap *m);

/*
 * idmap__next() - iterate: start with *@iter = 0; each call returns 1 and
 * fills @key and @value (either may be NULL) until it returns 0 at the end.
 * The map must not be changed during an iteration.
 */
int idmap__next(const struct idmap *m, size_t *iter, uint64_t *key, uint64_t *value);

#endif
