/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge_int.h - what merge.c (reading the inputs, the checks) and
 * merge_write.c (writing the output) share: the merge's state and the steps
 * each calls of the other.  Not for use outside them.
 */
#ifndef STK_REPORT_MERGE_INT_H
#define STK_REPORT_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "merge.h"
#include "stk.h"
#include "util.h"

enum mkind { KIND_UNKNOWN = 0, KIND_PROFILE, KIND_OFFCPU, KIND_OFFWAKE, KIND_TRACE };

/* @k as META "mode" and the messages name it. */
static inline const char *mkind__name(enum mkind k)
{
	static const char *const names[] = { "unknown", "profile", "offcpu", "offwake", "trace" };

	return names[k];
}

struct mstack {
	uint64_t id;			/* in the output, from 1 */
	uint32_t nr_frames;
	uint64_t *frames;
	struct mstack *next;		/* same hash */
};

struct msnap {
	size_t src;
	struct stk_proc_maps p;		/* mappings and paths in the arena */
	int dup;			/* the same as an earlier one: not written */
};

struct mksym {
	struct stk_ksym k;		/* strings in the arena */
	struct mksym *next;
};

struct mesym {
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;
	void *blob;
	size_t blob_size;
};

/* A pidn record of a source. */
struct mpidn {
	size_t src;
	struct stk_pid_ns p;
};

/* One source: one segment of one input. */
struct msrc {
	const char *path;
	uint32_t seg;			/* segment in its file */
	int used;			/* it had a chunk */
	struct stk_segment_info info;
	uint64_t start;			/* mono_start_ns, else its first row chunk's t0 */
	struct idmap ids;		/* its stack id -> output id */
	struct stk_kv *meta;		/* last value per key (malloc'd strings) */
	size_t nr_meta, cap_meta;
	struct stk_stat *stats;		/* its last STAT chunk (malloc'd names) */
	size_t nr_stats;
	int cnts, offc, waker, trce;	/* kinds of rows seen */
	int has_kernel;			/* kernel_obj is its [kernel.kallsyms] KBID
					 * (not a pointer: srcs is realloc'd) */
	struct stk_kobj kernel_obj;
};

struct merge {
	struct merge_result *res;
	struct msrc *srcs;
	size_t nr_srcs;
	struct mstack **stacks;		/* by output id - 1 */
	size_t nr_stacks, cap_stacks;
	struct idmap stack_index;	/* content hash -> mstack chain */
	struct msnap **snaps;
	size_t nr_snaps, cap_snaps;
	struct mksym **ksyms;
	size_t nr_ksyms, cap_ksyms;
	struct idmap ksym_index;	/* hash -> mksym chain */
	struct stk_kobj *kobjs;
	size_t nr_kobjs;
	struct mesym *esyms;
	size_t nr_esyms;
	struct mpidn *pidns;		/* pidn records, times of their source */
	size_t nr_pidns, cap_pidns;
	uint64_t start, wall_start;	/* the output's */
	struct arena mem;
};

/* @s's value of META @key, or NULL. */
const char *msrc__meta_get(const struct msrc *s, const char *key);
/* @s's time @t on the output's clock: its start mapped to the output's. */
uint64_t merge__shift(const struct merge *m, const struct msrc *s, uint64_t t);

/* The output's chunks written from what pass 1 took: 0 or -errno, the
 * writer's message set. */
int merge__write_meta(struct merge *m, struct stk_writer *w, enum mkind kind);
int merge__write_stacks(struct merge *m, struct stk_writer *w);
int merge__write_kernel(struct merge *m, struct stk_writer *w);
int merge__write_maps(struct merge *m, struct stk_writer *w);
int merge__write_pidns(struct merge *m, struct stk_writer *w);
int merge__write_stats(struct merge *m, struct stk_writer *w);
/* Pass 2: a CNTS or OFFC chunk of @s copied with its stacks' output ids. */
int merge__rows(struct merge *m, const struct msrc *s, const struct stk_chunk *ch,
		struct stk_writer *w);

#endif
