/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * locmemo.h - the symbolizer's last answers for user frames, asked before
 * it: by (module, depth from the stack's root), then by (module, file
 * offset, return-ness) location.  A system-wide capture's stacks are
 * mostly their own (every cc1 its own PIE process, its own stack ids), but
 * they name few locations: the build capture's 979k user frames are 33.5k
 * locations, the ~1000 cc1 processes naming the same ones at other
 * addresses, and the stacks of one program share their outer frames
 * (main, toplev::main, compile_file...) at the same depths.  A frame found
 * here costs a compare or two, not a lookup in the module's cache of
 * 10^4-10^5 addresses (a miss in L2 each).
 *
 * The symbolizer's answer depends on the module, the file offset, return
 * or not, and (a module named from separate debuginfo, which places an
 * address by its page offset alone) the mapping's protection and offset:
 * all of it is the key.  Never for a perf map (named by the absolute
 * address).  The hit path is inline: it runs once per user frame.
 */
#ifndef STK_REPORT_LOCMEMO_H
#define STK_REPORT_LOCMEMO_H

#include <stdint.h>

#include "symbolize.h"

/* The memo by depth: a few module slots (by the module's address), each
 * LOCMEMO_DEPTH depths from the root. */
#define LOCMEMO_MODS 16
#define LOCMEMO_DEPTH 64

/* The table by location: direct-mapped, 4096 slots of 40 bytes (160 KiB,
 * in the CPU's L2; 8192 and more were not faster). */
#define LOCMEMO_LOCS_BITS 12
#define LOCMEMO_LOCS (1u << LOCMEMO_LOCS_BITS)

struct frame_memo {
	const struct sym_module *mod;	/* NULL: empty */
	uint64_t off;			/* in the file: address - start + offset */
	uint64_t map_off;		/* the mapping's offset: separate debuginfo
					 * (no segment offsets) places the address
					 * by its page offset alone */
	const struct sym_result *sym;
	uint32_t prot;
	uint32_t is_return;
};

struct locmemo {
	struct frame_memo memo[LOCMEMO_MODS][LOCMEMO_DEPTH];
	struct frame_memo *locs;	/* LOCMEMO_LOCS slots */
};

/* Empty, its table allocated.  0 or -ENOMEM. */
int locmemo__init(struct locmemo *lm);

void locmemo__release(struct locmemo *lm);

/* The memo slot of module @mod at @depth from the root, or NULL: none
 * kept (too deep, or a perf map). */
static inline struct frame_memo *locmemo__memo(struct locmemo *lm, const struct sym_module *mod,
					       uint32_t depth)
{
	if (depth >= LOCMEMO_DEPTH || mod->source == ELF_SRC_PERF_MAP)
		return NULL;
	return &lm->memo[((uintptr_t)mod >> 6) % LOCMEMO_MODS][depth];
}

/* The location slot of (@mod, @off, @is_return): its answer if it holds
 * that location (frame_memo__hit()), else the one it will hold. */
static inline struct frame_memo *locmemo__loc(struct locmemo *lm, const struct sym_module *mod,
					      uint64_t off, uint32_t is_return)
{
	uint64_t h = ((uintptr_t)mod >> 4) ^ (off << 1) ^ is_return;

	h *= 0x9e3779b97f4a7c15ULL;
	return &lm->locs[h >> (64 - LOCMEMO_LOCS_BITS)];
}

/* @fm (NULL: none) holds the answer for @addr in @map of @mod. */
static inline int frame_memo__hit(const struct frame_memo *fm, const struct sym_module *mod,
				  const struct stk_mapping *map, uint64_t addr, uint32_t is_return)
{
	return fm && fm->mod == mod && fm->off == addr - map->start + map->offset &&
	       fm->map_off == map->offset && fm->is_return == is_return && fm->prot == map->prot;
}

/* locmemo__lookup() when neither slot had the answer: the symbolizer's,
 * then kept in both.  0 or -errno. */
int locmemo__ask(struct locmemo *lm, struct symbolizer *sym, struct sym_module *mod,
		 const struct stk_mapping *map, uint64_t addr, uint32_t is_return,
		 struct frame_memo *fm, const struct sym_result **out);

/*
 * locmemo__lookup() - symbolizer__lookup() of user frame @addr in @map of
 * module @mod (looked up at addr - 1 when @is_return), @depth frames from
 * its stack's root, through @lm.  *@out: the result (NULL: unknown).
 * 0 or -errno.
 */
static inline int locmemo__lookup(struct locmemo *lm, struct symbolizer *sym,
				  struct sym_module *mod, const struct stk_mapping *map,
				  uint64_t addr, uint32_t is_return, uint32_t depth,
				  const struct sym_result **out)
{
	struct frame_memo *fm, *lc;

	if (mod->source == ELF_SRC_PERF_MAP)
		return symbolizer__lookup(sym, mod, map, addr, (int)is_return, out);
	fm = locmemo__memo(lm, mod, depth);
	if (frame_memo__hit(fm, mod, map, addr, is_return)) {
		*out = fm->sym;
		return 0;
	}
	lc = locmemo__loc(lm, mod, addr - map->start + map->offset, is_return);
	if (frame_memo__hit(lc, mod, map, addr, is_return)) {
		*out = lc->sym;
		if (fm)
			*fm = *lc;
		return 0;
	}
	return locmemo__ask(lm, sym, mod, map, addr, is_return, fm, out);
}

/* The location slot of the frame at @addr in @map of @mod, @depth from
 * the root (a frame looked up at addr - 1), loaded early unless the memo
 * by depth has it. */
static inline void locmemo__prefetch(struct locmemo *lm, const struct sym_module *mod,
				     const struct stk_mapping *map, uint64_t addr, uint32_t depth)
{
	if (mod->source != ELF_SRC_PERF_MAP &&
	    !frame_memo__hit(locmemo__memo(lm, mod, depth), mod, map, addr, 1))
		__builtin_prefetch(locmemo__loc(lm, mod, addr - map->start + map->offset, 1));
}

#endif
