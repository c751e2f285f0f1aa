// SPDX-License-Identifier: BSD-2-Clause
/*
 * idmap.c - the hash map of stk (see idmap.h).
 *
 * Slots hold key and value together (16 bytes: a lookup costs one cache
 * miss); key 0 marks an empty slot, and the real key 0 is kept beside the
 * table.  Removal shifts later entries of the probe sequence back instead
 * of leaving tombstones, so lookups never degrade after many removals
 * (stkrec removes the stacks it forgets).  The load factor stays under 1/2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "idmap.h"

#define IDMAP_MIN_CAP 64

static inline size_t home_of(uint64_t key, size_t cap)
{
	return (size_t)hash64(0, key) & (cap - 1);
}

/* The slot holding @key (not 0), or the empty slot where it would go.
 * The table must have slots. */
static size_t idmap__probe(const struct idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, s = home_of(key, m->cap);

	while (m->slots[s].key && m->slots[s].key != key)
		s = (s + 1) & mask;
	return s;
}

/*
 * A table of 2 MiB or more (131072 slots) is mapped on its own, 2 MiB-
 * aligned and marked for transparent huge pages: its lookups land at
 * random, and on 4 KiB pages nearly each one also missed the TLB (in a VM,
 * a two-level page walk); stkreport's indexes of a system-wide capture are
 * such tables.  Smaller ones come from calloc().  Both come zeroed.
 */
#define IDMAP_HUGE (2ul << 20)

static void *slots_alloc(size_t cap)
{
	size_t len = cap * sizeof(struct idmap_slot);
	uintptr_t head;
	char *p;

	if (len < IDMAP_HUGE)
		return calloc(cap, sizeof(struct idmap_slot));
	p = mmap(NULL, len + IDMAP_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (IDMAP_HUGE - ((uintptr_t)p & (IDMAP_HUGE - 1))) & (IDMAP_HUGE - 1);
	if (head)
		munmap(p, head);
	munmap(p + head + len, IDMAP_HUGE - head);
	madvise(p + head, len, MADV_HUGEPAGE);	/* a hint: ignore failure */
	return p + head;
}

static void slots_free(void *p, size_t cap)
{
	size_t len = cap * sizeof(struct idmap_slot);

	if (len < IDMAP_HUGE)
		free(p);
	else if (p)
		munmap(p, len);
}

struct idmap *idmap__new(void)
{
	return calloc(1, sizeof(struct idmap));
}

void idmap__release(struct idmap *m)
{
	slots_free(m->slots, m->cap);
	memset(m, 0, sizeof(*m));
}

void idmap__free(struct idmap *m)
{
	if (!m)
		return;
	idmap__release(m);
	free(m);
}

/* Moves the keys into a table of @cap slots (a power of two, > count). */
static int idmap__rehash(struct idmap *m, size_t cap)
{
	struct idmap_slot *slots;
	size_t i, s;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = slots_alloc(cap);
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		s = home_of(m->slots[i].key, cap);
		while (slots[s].key)
			s = (s + 1) & (cap - 1);
		slots[s] = m->slots[i];
	}
	slots_free(m->slots, m->cap);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static int idmap__grow(struct idmap *m)
{
	return idmap__rehash(m, m->cap ? m->cap * 2 : IDMAP_MIN_CAP);
}

int idmap__reserve(struct idmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : IDMAP_MIN_CAP;

	/* The load factor idmap__set() keeps: (count + 1) * 2 <= cap. */
	if (n > SIZE_MAX / 4)
		return -ENOMEM;
	if (!n || (n + 1) * 2 <= m->cap)
		return 0;
	while ((n + 1) * 2 > cap)
		cap *= 2;
	return cap == m->cap ? 0 : idmap__rehash(m, cap);
}

void idmap__prefetch(const struct idmap *m, uint64_t key)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[home_of(key, m->cap)], 1);
}

int idmap__set(struct idmap *m, uint64_t key, uint64_t value)
{
	size_t s;
	int err;

	if (!key) {
		if (!m->has_zero)
			m->count++;
		m->has_zero = true;
		m->zero_value = value;
		return 0;
	}
	if (m->cap) {
		s = idmap__probe(m, key);
		if (m->slots[s].key) {
			m->slots[s].value = value;
			return 0;
		}
	}
	/* count includes key 0, which takes no slot: a slightly early grow. */
	if ((m->count + 1) * 2 > m->cap) {
		err = idmap__grow(m);
		if (err)
			return err;
	}
	s = idmap__probe(m, key);
	m->slots[s].key = key;
	m->slots[s].value = value;
	m->count++;
	return 0;
}

uint64_t *idmap__find(const struct idmap *m, uint64_t key)
{
	size_t s;

	/* The caller may write the value: as for the slots, @m is const only
	 * in that the set of keys does not change. */
	if (!key)
		return m->has_zero ? (uint64_t *)&m->zero_value : NULL;
	if (!m->cap)
		return NULL;
	s = idmap__probe(m, key);
	return m->slots[s].key ? &m->slots[s].value : NULL;
}

int idmap__remove(struct idmap *m, uint64_t key)
{
	size_t hole, s, home, mask = m->cap - 1;

	if (!key) {
		if (!m->has_zero)
			return -ENOENT;
		m->has_zero = false;
		m->count--;
		return 0;
	}
	if (!m->cap)
		return -ENOENT;
	hole = idmap__probe(m, key);
	if (!m->slots[hole].key)
		return -ENOENT;
	m->slots[hole].key = 0;
	m->count--;
	/* Backward shift: move each following entry into the hole unless its
	 * home slot lies (cyclically) after the hole. */
	for (s = (hole + 1) & mask; m->slots[s].key; s = (s + 1) & mask) {
		home = home_of(m->slots[s].key, m->cap);
		if (((s - home) & mask) < ((s - hole) & mask))
			continue;
		m->slots[hole] = m->slots[s];
		m->slots[s].key = 0;
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
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
	m->has_zero = false;
}

/* *@iter: 0 = key 0, s + 1 = slot s. */
int idmap__next(const struct idmap *m, size_t *iter, uint64_t *key, uint64_t *value)
{
	size_t i = *iter;

	if (i == 0) {
		i = 1;
		if (m->has_zero) {
			if (key)
				*key = 0;
			if (value)
				*value = m->zero_value;
			*iter = 1;
			return 1;
		}
	}
	for (; i <= m->cap; i++) {
		const struct idmap_slot *sl = &m->slots[i - 1];

		if (!sl->key)
			continue;
		if (key)
			*key = sl->key;
		if (value)
			*value = sl->value;
		*iter = i + 1;
		return 1;
	}
	*iter = m->cap + 1;
	return 0;
}

size_t idmap__max_probe(const struct idmap *m)
{
	size_t s, len, max = 0, mask = m->cap - 1;

	for (s = 0; s < m->cap; s++) {
		if (!m->slots[s].key)
			continue;
		len = ((s - home_of(m->slots[s].key, m->cap)) & mask) + 1;
		if (len > max)
			max = len;
	}
	return max;
}
