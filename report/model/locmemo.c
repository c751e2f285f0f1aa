// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolizer's last answers for user frames (locmemo.h): the tables'
 * life, and the symbolizer asked when they miss.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "locmemo.h"

int locmemo__init(struct locmemo *lm)
{
	memset(lm->memo, 0, sizeof(lm->memo));
	lm->locs = calloc(LOCMEMO_LOCS, sizeof(*lm->locs));
	return lm->locs ? 0 : -ENOMEM;
}

void locmemo__release(struct locmemo *lm)
{
	free(lm->locs);
	lm->locs = NULL;
}

int locmemo__ask(struct locmemo *lm, struct symbolizer *sym, struct sym_module *mod,
		 const struct stk_mapping *map, uint64_t addr, uint32_t is_return,
		 struct frame_memo *fm, const struct sym_result **out)
{
	uint64_t off = addr - map->start + map->offset;
	struct frame_memo *lc;
	int err;

	err = symbolizer__lookup(sym, mod, map, addr, (int)is_return, out);
	if (err)
		return err;
	/* Opening may have named the module from a perf map after all. */
	if (mod->source == ELF_SRC_PERF_MAP)
		return 0;
	lc = locmemo__loc(lm, mod, off, is_return);
	*lc = (struct frame_memo){ mod, off, map->offset, *out, map->prot, is_return };
	if (fm)
		*fm = *lc;
	return 0;
}
