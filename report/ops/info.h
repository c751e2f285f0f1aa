/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * info.h - facts and totals of a capture, summed chunk by chunk as they
 * are read (nothing but the totals is kept, so any size of file works).
 * Used by `stkreport info`; anything that wants "how many samples, stacks,
 * processes..." without building the whole capture can use it too.
 */
#ifndef STK_REPORT_INFO_H
#define STK_REPORT_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "stk.h"
#include "util.h"

#define INFO_NR_TYPES (STK_CHUNK_TRCE + 1)
/* Events whose TRCE counts info totals one by one (stkrec's default
 * --max-probes is 128); the others count in the total only. */
#define INFO_TRACE_EVENTS 256

/* Totals of one segment, or of the whole file. */
struct info_totals {
	uint64_t chunks;
	uint64_t by_type[INFO_NR_TYPES];	/* index: enum stk_chunk_type */
	uint64_t bytes_comp, bytes_raw;		/* payload bytes */
	uint64_t t_first, t_last;		/* earliest t0, latest t1 of CNTS/OFFC; 0 if none */
	uint64_t count_rows, samples;		/* CNTS rows and the sum of their counts */
	uint64_t offcpu_rows, offcpu_count, blocked_ns;
	uint64_t trace_rows, trace_events;	/* TRCE */
	uint64_t trace_by_event[INFO_TRACE_EVENTS];	/* the first events' */
	uint64_t stacks;			/* STCK records */
	uint64_t procs_with_maps;		/* distinct tgids in MAPS */
	uint64_t map_snapshots, mappings;
	uint64_t ksyms;				/* KSYM records */
	uint64_t kernel_images, modules;	/* KBID rows: the kernel, the others */
	uint64_t esyms;				/* ESYM chunks (binaries with embedded symbols) */
	uint64_t esym_syms;			/* symbols of ESYM kinds 2 and 3 */
	uint64_t esym_pycodes;			/* Python code objects of ESYM kind 4 */
	uint64_t esym_bytes;			/* ESYM payload bytes, compressed */
	int saturated;				/* a sum passed 2^64: capped */
};

struct info_segment {
	struct info_totals t;
	struct stk_kv *meta;		/* META pairs, a later value replaces an earlier one */
	size_t nr_meta;
	struct stk_stat *stats;		/* the last STAT chunk */
	size_t nr_stats;
	struct idmap tgids;		/* tgids seen in MAPS (values unused) */
};

struct info {
	struct info_segment *segs;	/* indexed by stk_chunk.segment */
	size_t nr_segs;
	struct info_totals total;
};

/* Zero-initialised struct info is empty and valid. */

/*
 * info__add_chunk() - count @ch (as returned by stk_reader__next()) into
 * its segment's totals and the file's.  Copies what it keeps (META, STAT).
 * Returns 0 or -ENOMEM.
 */
int info__add_chunk(struct info *in, const struct stk_chunk *ch);

/* The META value for @key in segment @seg, or NULL. */
const char *info__meta(const struct info *in, size_t seg, const char *key);

/* Frees what @in holds; @in is empty and valid afterwards. */
void info__free(struct info *in);

#endif
