/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idmap.h - the hash map of stk: uint64_t keys to uint64_t values, open
 * addressing with linear probing, hashed with the per-process key of
 * hash.h.  stkrec keeps its sets in it (stack ids written, stacks resident,
 * processes); stkreport its indexes (stack ids, addresses, pointers, and
 * hashes of composite keys whose owners chain the entries that share one).
 *
 * Every 64-bit key (0 included) and every value is valid.  A map lives on
 * the heap (idmap__new() ... idmap__free()) or inside another object: a
 * zero-initialised struct idmap is an empty, valid map, released with
 * idmap__release().  The fields are private to idmap.c.
 */
#ifndef STK_UTIL_IDMAP_H
#define STK_UTIL_IDMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap_slot {
	uint64_t key;		/* 0 marks an empty slot */
	uint64_t value;
};

struct idmap {
	struct idmap_slot *slots; /* key and value side by side: one cache miss */
	size_t cap;		/* power of two, or 0 before the first insert */
	size_t count;		/* keys, key 0 included */
	uint64_t zero_value;	/* key 0 has no slot: its value lives here */
	bool has_zero;
};

/* Returns an empty map, or NULL with errno = ENOMEM. */
struct idmap *idmap__new(void);

/* Frees @m, made by idmap__new() (accepts NULL). */
void idmap__free(struct idmap *m);

/* Frees the memory of an embedded @m; it is then empty and valid again. */
void idmap__release(struct idmap *m);

/*
 * idmap__set() - insert @key with @value, or replace the value of @key.
 * Returns 0 or -ENOMEM (then @m is unchanged).
 */
int idmap__set(struct idmap *m, uint64_t key, uint64_t value);

/*
 * idmap__find() - the value of @key, or NULL if absent.  The pointer may be
 * written through and stays valid until the next idmap__set(),
 * idmap__remove(), idmap__clear() or idmap__release() on @m.
 */
uint64_t *idmap__find(const struct idmap *m, uint64_t key);

/*
 * idmap__reserve() - make room for @n keys in all, so that @m takes them
 * without growing (each growth rehashes every key into a table twice as
 * big: a map filled from empty to a million keys rehashes a million on the
 * way).  Keys already in @m count in @n; a smaller @n does nothing (a map
 * never shrinks).  A caller that knows roughly how many keys come says so
 * once; more than @n still works, with growth from there.
 * Returns 0 or -ENOMEM (then @m is unchanged and still valid).
 */
int idmap__reserve(struct idmap *m, size_t n);

/* idmap__remove() - remove @key.  Returns 0 or -ENOENT. */
int idmap__remove(struct idmap *m, uint64_t key);

/*
 * idmap__prefetch() - start loading the slot @key's lookup begins at, so
 * that an idmap__find() or idmap__set() of it a little later does not
 * wait for memory (a table larger than the caches: one miss a lookup).
 */
void idmap__prefetch(const struct idmap *m, uint64_t key);

/* Number of keys in @m. */
size_t idmap__count(const struct idmap *m);

/* Removes every key; keeps the memory. */
void idmap__clear(struct idmap *m);

/*
 * idmap__next() - iterate: start with *@iter = 0; each call returns 1 and
 * fills @key and @value (either may be NULL) until it returns 0 at the end.
 * The order is the table's, which changes from run to run (hash.h).  The
 * map must not be changed during an iteration.
 */
int idmap__next(const struct idmap *m, size_t *iter, uint64_t *key, uint64_t *value);

/*
 * idmap__max_probe() - the longest probe sequence in @m: 1 when every key
 * sits in its home slot, 0 for a map without slots.  A health figure for
 * tests (crafted keys must not pile up) and diagnostics.
 */
size_t idmap__max_probe(const struct idmap *m);

/* Pointer values.  NULL is not storable: idmap__find_ptr() returns NULL for
 * an absent key. */
static inline int idmap__set_ptr(struct idmap *m, uint64_t key, const void *ptr)
{
	if (!ptr)
		return -EINVAL;
	return idmap__set(m, key, (uint64_t)(uintptr_t)ptr);
}

/* The pointer stored under @key, or NULL. */
static inline void *idmap__find_ptr(const struct idmap *m, uint64_t key)
{
	const uint64_t *v = idmap__find(m, key);

	return v ? (void *)(uintptr_t)*v : NULL;
}

#endif
