// SPDX-License-Identifier: BSD-2-Clause
/*
 * membudget.c - the user-space memory budget of stkrec (see membudget.h).
 */
#include <errno.h>
#include <string.h>

#include "membudget.h"

void membudget__init(struct membudget *b, uint64_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

int membudget__add_shrinker(struct membudget *b, uint64_t (*fn)(void *ctx, uint64_t want),
			    void *ctx)
{
	if (b->nr_shrinkers == MEMBUDGET_MAX_SHRINKERS)
		return -ENOSPC;
	b->shrinkers[b->nr_shrinkers++] = (struct membudget_shrinker){ fn, ctx };
	return 0;
}

int membudget__remove_shrinker(struct membudget *b, uint64_t (*fn)(void *ctx, uint64_t want),
			       void *ctx)
{
	unsigned int i;

	for (i = 0; i < b->nr_shrinkers; i++)
		if (b->shrinkers[i].shrink == fn && b->shrinkers[i].ctx == ctx) {
			memmove(&b->shrinkers[i], &b->shrinkers[i + 1],
				(b->nr_shrinkers - i - 1) * sizeof(b->shrinkers[0]));
			b->nr_shrinkers--;
			return 0;
		}
	return -ENOENT;
}

static int fits(const struct membudget *b, uint64_t bytes)
{
	return b->used <= b->limit && bytes <= b->limit - b->used;
}

int membudget__take(struct membudget *b, uint64_t bytes)
{
	unsigned int i;

	if (bytes > b->limit)
		goto refused;
	/* A shrinker that takes while it runs (it should not) gets no
	 * shrinking of its own: no recursion into the caches. */
	for (i = 0; !fits(b, bytes) && !b->shrinking && i < b->nr_shrinkers; i++) {
		b->shrinking = 1;
		b->shrinkers[i].shrink(b->shrinkers[i].ctx, b->used + bytes - b->limit);
		b->shrinking = 0;
	}
	if (!fits(b, bytes))
		goto refused;
	b->used += bytes;
	if (b->used > b->peak)
		b->peak = b->used;
	return 0;
refused:
	b->refused++;
	return -ENOSPC;
}

void membudget__give(struct membudget *b, uint64_t bytes)
{
	/* More than was taken is a holder's bug: never wrap around. */
	b->used = bytes < b->used ? b->used - bytes : 0;
}
