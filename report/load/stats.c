// SPDX-License-Identifier: BSD-2-Clause
/* A STAT chunk's counters copied out of the chunk, and freed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void stats__free(struct stk_stat **stats, size_t *nr)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		free((char *)(*stats)[i].name);
	free(*stats);
	*stats = NULL;
	*nr = 0;
}

int stats__copy(struct stk_stat **stats, size_t *nr, const struct stk_stat *src, size_t n)
{
	struct stk_stat *p;
	size_t i;

	stats__free(stats, nr);
	p = calloc(n + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*stats = p;
	for (i = 0; i < n; i++) {
		p[i].name = strdup(src[i].name);
		if (!p[i].name) {
			stats__free(stats, nr);
			return -ENOMEM;
		}
		p[i].value = src[i].value;
		(*nr)++;
	}
	return 0;
}
