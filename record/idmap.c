// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

/*
 * Slots hold key and value; a separate byte array marks used slots, so
 * every 64-bit key (0 included) is valid.  Removal shifts later entries of
 * the probe sequence back instead of leaving tombstones, so lookups never
 * degrade after many removals (stkrec removes stacks it evicts).
 */
struct idmap {
	uint64_t *keys;
	uint64_t *values;
	uint8_t *used;
	size_t cap;	/* power of two, or 0 before the first insert */
	size_t count;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Keys may be hashes already, or small pids: mix them. */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

struct idmap *idmap__new(void)
{
	return calloc(1, sizeof(struct idmap));
}

void idmap__free(struct idmap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->values);
	free(m->used);
	free(m);
}

static int idmap__grow(struct idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = NULL, *values = NULL;
	uint8_t *used = NULL;
	size_t i;

	keys = malloc(cap * sizeof(*keys));
	values = malloc(cap * sizeof(*values));
	used = calloc(cap, 1);
	if (!keys || !values || !used) {
		free(keys);
		free(values);
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t s;

		if (!m->used[i])
			continue;
		s = slot_of(m->keys[i], cap);
		while (used[s])
			s = (s + 1) & (cap - 1);
		used[s] = 1;
		keys[s] = m->keys[i];
		values[s] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	free(m->used);
	m->keys = keys;
	m->values = values;
	m->used = used;
	m->cap = cap;
	return 0;
}

int idmap__set(struct idmap *m, uint64_t key, uint64_t value)
{
	uint64_t *v = idmap__find(m, key);
	size_t s;
	int err;

	if (v) {
		*v = value;
		return 0;
	}
	/* Keep the load factor under 1/2: probes stay short. */
	if ((m->count + 1) * 2 > m->cap) {
		err = idmap__grow(m);
		if (err)
			return err;
	}
	s = slot_of(key, m->cap);
	while (m->used[s])
		s = (s + 1) & (m->cap - 1);
	m->used[s] = 1;
	m->keys[s] = key;
	m->values[s] = value;
	m->count++;
	return 0;
}

uint64_t *idmap__find(const struct idmap *m, uint64_t key)
{
	size_t s;

	if (!m->count)
		return NULL;
	s = slot_of(key, m->cap);
	while (m->used[s]) {
		if (m->keys[s] == key)
			return &m->values[s];
		s = (s + 1) & (m->cap - 1);
	}
	return NULL;
}

int idmap__remove(struct idmap *m, uint64_t key)
{
	uint64_t *v = idmap__find(m, key);
	size_t hole, s, mask = m->cap - 1;

	if (!v)
		return -ENOENT;
	hole = (size_t)(v - m->values);
	m->used[hole] = 0;
	m->count--;
	/* Backward shift: move each following entry into the hole unless its
	 * home slot lies (cyclically) after the hole. */
	for (s = (hole + 1) & mask; m->used[s]; s = (s + 1) & mask) {
		size_t home = slot_of(m->keys[s], m->cap);

		if (((s - home) & mask) < ((s - hole) & mask))
			continue;
		m->keys[hole] = m->keys[s];
		m->values[hole] = m->values[s];
		m->used[hole] = 1;
		m->used[s] = 0;
		hole = s;
	}
	return 0;
}

size_t idmap__count(const struct idmap *m)
{
	return m->count;
}

void idmap__clear(struct idmap *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->count = 0;
}

int idmap__next(const struct idmap *m, size_t *iter, uint64_t *key, uint64_t *value)
{
	size_t i;

	for (i = *iter; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		if (key)
			*key = m->keys[i];
		if (value)
			*value = m->values[i];
		*iter = i + 1;
		return 1;
	}
	*iter = m->cap;
	return 0;
}
