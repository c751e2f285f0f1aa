/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * format_sample.h - a random capture with every chunk type, from a seed.
 *
 * Shared by the format tests (check_format, check_damage) and the
 * stkwrite-sample tool that makes e2e inputs and fuzz seeds: the same seed
 * always gives the same records, so a test can write a capture and compare
 * what it reads back field by field.
 */
#ifndef FORMAT_SAMPLE_H
#define FORMAT_SAMPLE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stk.h"

/* The chunks fs_write() writes, in order (the index follows them). */
static const char *const fs_tags[] = {
	"META", "STCK", "CNTS", "OFFC", "MAPS", "KSYM", "KBID", "ESYM", "STAT", "xtra",
};
#define FS_NR_CHUNKS (sizeof(fs_tags) / sizeof(fs_tags[0]))
#define FS_T0 1000000000ull
#define FS_T1 2000000000ull

struct fs_sample {
	uint64_t rng;
	int small;		/* a few short records per chunk */
	char **pool;		/* every string and array allocated, to free */
	size_t nr_pool, pool_cap;

	struct stk_kv *kv;		size_t nr_kv;
	struct stk_stack *stacks;	size_t nr_stacks;
	struct stk_count *counts;	size_t nr_counts;
	struct stk_offcpu *offcpu;	size_t nr_offcpu;
	struct stk_proc_maps *procs;	size_t nr_procs;
	struct stk_ksym *ksyms;		size_t nr_ksyms;
	struct stk_kobj *kobjs;		size_t nr_kobjs;
	uint8_t esym_build_id[STK_MAX_BUILD_ID];
	uint32_t esym_build_id_size;
	uint8_t *esym_blob;		size_t esym_blob_size;
	struct stk_stat *stats;		size_t nr_stats;
	uint8_t *xtra;			size_t xtra_size;
};

/* splitmix64: tiny, seedable, good enough to vary test data. */
static uint64_t fs_rand(struct fs_sample *s)
{
	uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t fs_below(struct fs_sample *s, uint64_t n)
{
	return n ? fs_rand(s) % n : 0;
}

/* A value of random magnitude, so varints of every length appear. */
static uint64_t fs_value(struct fs_sample *s)
{
	unsigned int bits = fs_below(s, 65);

	return bits == 64 ? fs_rand(s) : fs_rand(s) & ((1ull << bits) - 1);
}

static void *fs_alloc(struct fs_sample *s, size_t size)
{
	char **tmp;
	void *p;

	if (s->nr_pool == s->pool_cap) {
		s->pool_cap = s->pool_cap ? 2 * s->pool_cap : 64;
		tmp = realloc(s->pool, s->pool_cap * sizeof(*tmp));
		if (!tmp)
			abort();
		s->pool = tmp;
	}
	p = calloc(1, size ? size : 1);
	if (!p)
		abort();
	s->pool[s->nr_pool++] = p;
	return p;
}

static char *fs_string(struct fs_sample *s, size_t max)
{
	size_t i, n = fs_below(s, max + 1);
	char *str;

	/* Now and then the longest string the format allows. */
	if (!s->small && max == STK_MAX_STRING && fs_below(s, 50) == 0)
		n = STK_MAX_STRING;
	else if (max == STK_MAX_STRING)
		n = fs_below(s, s->small ? 8 : 40);
	str = fs_alloc(s, n + 1);
	for (i = 0; i < n; i++)
		str[i] = 1 + fs_below(s, 255);	/* any byte but NUL */
	return str;
}

static void fs_comm(struct fs_sample *s, char comm[16])
{
	size_t i, n = fs_below(s, 16);

	memset(comm, 0, 16);
	for (i = 0; i < n; i++)
		comm[i] = 'a' + fs_below(s, 26);
}

static void fs_build_id(struct fs_sample *s, uint8_t *id, uint32_t *size)
{
	static const uint32_t sizes[] = { 0, 20, 16, 64, 1 };
	uint32_t i;

	*size = sizes[fs_below(s, 5)];
	for (i = 0; i < *size; i++)
		id[i] = fs_rand(s);
}

static stk_stack_ref fs_ref(struct fs_sample *s)
{
	static const stk_stack_ref errs[] = { -14, -17, -12, -2 };

	return fs_below(s, 4) ? (stk_stack_ref)fs_below(s, 1u << 20) : errs[fs_below(s, 4)];
}

static void fs_task(struct fs_sample *s, struct stk_task_stacks *t)
{
	t->tgid = fs_rand(s);
	t->tid = fs_rand(s);
	fs_comm(s, t->comm);
	t->user_stack = fs_ref(s);
	t->kernel_stack = fs_ref(s);
}

/* Fills @s with random records of every type from @seed. */
static void fs_init(struct fs_sample *s, uint64_t seed, int small)
{
	static const char *const mods[] = { "", "ext4", "xfs", "nf_tables" };
	size_t max = small ? 3 : 40, i, j;

	memset(s, 0, sizeof(*s));
	s->rng = seed;
	s->small = small;

	s->nr_kv = 1 + fs_below(s, max);
	s->kv = fs_alloc(s, s->nr_kv * sizeof(*s->kv));
	for (i = 0; i < s->nr_kv; i++) {
		s->kv[i].key = fs_string(s, STK_MAX_STRING);
		s->kv[i].value = fs_string(s, STK_MAX_STRING);
	}

	s->nr_stacks = 1 + fs_below(s, max);
	s->stacks = fs_alloc(s, s->nr_stacks * sizeof(*s->stacks));
	for (i = 0; i < s->nr_stacks; i++) {
		uint32_t nr = fs_below(s, small ? 4 : 64);
		uint64_t *f, base = fs_rand(s);

		if (!small && fs_below(s, 20) == 0)
			nr = STK_MAX_FRAMES;
		f = fs_alloc(s, (nr ? nr : 1) * sizeof(*f));
		/* Mostly nearby addresses, sometimes far jumps both ways. */
		for (j = 0; j < nr; j++)
			f[j] = fs_below(s, 4) ? base + fs_below(s, 1u << 16) : fs_rand(s);
		s->stacks[i].id = fs_value(s);
		s->stacks[i].nr_frames = nr;
		s->stacks[i].frames = f;
	}

	s->nr_counts = fs_below(s, max + 1);
	s->counts = fs_alloc(s, (s->nr_counts + 1) * sizeof(*s->counts));
	for (i = 0; i < s->nr_counts; i++) {
		struct stk_count *c = &s->counts[i];

		c->tgid = fs_rand(s);
		c->tid = fs_rand(s);
		fs_comm(s, c->comm);
		c->user_stack = fs_ref(s);
		c->kernel_stack = fs_ref(s);
		c->kernel_ip = fs_value(s);
		c->kernel_ret_ip = fs_value(s);
		c->count = fs_value(s);
	}

	s->nr_offcpu = fs_below(s, max + 1);
	s->offcpu = fs_alloc(s, (s->nr_offcpu + 1) * sizeof(*s->offcpu));
	for (i = 0; i < s->nr_offcpu; i++) {
		fs_task(s, &s->offcpu[i].target);
		fs_task(s, &s->offcpu[i].waker);
		s->offcpu[i].count = fs_value(s);
		s->offcpu[i].blocked_ns = fs_value(s);
	}

	s->nr_procs = fs_below(s, max + 1);
	s->procs = fs_alloc(s, (s->nr_procs + 1) * sizeof(*s->procs));
	for (i = 0; i < s->nr_procs; i++) {
		struct stk_proc_maps *p = &s->procs[i];
		struct stk_mapping *m;

		p->tgid = fs_rand(s);
		fs_comm(s, p->comm);
		p->time_ns = fs_value(s);
		p->nr_mappings = fs_below(s, small ? 3 : 30);
		m = fs_alloc(s, (p->nr_mappings + 1) * sizeof(*m));
		for (j = 0; j < p->nr_mappings; j++) {
			m[j].start = fs_value(s);
			m[j].end = fs_value(s);
			if (m[j].end > UINT64_MAX - m[j].start)
				m[j].end = UINT64_MAX;	/* ends at the top of memory */
			else
				m[j].end += m[j].start;
			m[j].offset = fs_value(s);
			m[j].dev = fs_value(s);
			m[j].inode = fs_value(s);
			m[j].prot = fs_below(s, 8);
			fs_build_id(s, m[j].build_id, &m[j].build_id_size);
			m[j].path = fs_string(s, STK_MAX_STRING);
		}
		p->mappings = m;
	}

	s->nr_ksyms = fs_below(s, small ? 4 : 400);
	s->ksyms = fs_alloc(s, (s->nr_ksyms + 1) * sizeof(*s->ksyms));
	for (i = 0; i < s->nr_ksyms; i++) {
		struct stk_ksym *k = &s->ksyms[i];

		k->addr = i && fs_below(s, 8) ? s->ksyms[i - 1].addr + fs_below(s, 4096) : fs_rand(s);
		k->size = fs_value(s);
		k->type = "tTdDbBrR"[fs_below(s, 8)];
		k->name = fs_string(s, STK_MAX_STRING);
		k->module = mods[fs_below(s, 4)];
	}

	s->nr_kobjs = fs_below(s, max + 1);
	s->kobjs = fs_alloc(s, (s->nr_kobjs + 1) * sizeof(*s->kobjs));
	for (i = 0; i < s->nr_kobjs; i++) {
		s->kobjs[i].name = fs_string(s, STK_MAX_STRING);
		s->kobjs[i].base = fs_value(s);
		s->kobjs[i].size = fs_value(s);
		fs_build_id(s, s->kobjs[i].build_id, &s->kobjs[i].build_id_size);
	}

	fs_build_id(s, s->esym_build_id, &s->esym_build_id_size);
	s->esym_blob_size = fs_below(s, small ? 16 : 5000);
	s->esym_blob = fs_alloc(s, s->esym_blob_size);
	for (i = 0; i < s->esym_blob_size; i++)
		s->esym_blob[i] = fs_rand(s);
	/* An opaque blob: not a kind the reader decodes (2, 3, 4). */
	if (s->esym_blob_size && (s->esym_blob[0] == STK_ESYM_SYMTAB ||
				  s->esym_blob[0] == STK_ESYM_PERF_MAP ||
				  s->esym_blob[0] == STK_ESYM_PYCODE))
		s->esym_blob[0] = STK_ESYM_ELF_IMAGE;

	s->nr_stats = fs_below(s, max + 1);
	s->stats = fs_alloc(s, (s->nr_stats + 1) * sizeof(*s->stats));
	for (i = 0; i < s->nr_stats; i++) {
		s->stats[i].name = fs_string(s, STK_MAX_STRING);
		s->stats[i].value = fs_value(s);
	}

	s->xtra_size = fs_below(s, small ? 8 : 300);
	s->xtra = fs_alloc(s, s->xtra_size);
	for (i = 0; i < s->xtra_size; i++)
		s->xtra[i] = fs_rand(s);
}

/* Writes one chunk per entry of fs_tags, in that order.  Returns 0 or -errno. */
static int fs_write(const struct fs_sample *s, struct stk_writer *w)
{
	int err;

	if ((err = stk_writer__add_meta(w, s->kv, s->nr_kv)) ||
	    (err = stk_writer__add_stacks(w, s->stacks, s->nr_stacks)) ||
	    (err = stk_writer__add_counts(w, FS_T0, FS_T1, s->counts, s->nr_counts)) ||
	    (err = stk_writer__add_offcpu(w, FS_T0, FS_T1, s->offcpu, s->nr_offcpu)) ||
	    (err = stk_writer__add_maps(w, s->procs, s->nr_procs)) ||
	    (err = stk_writer__add_ksyms(w, s->ksyms, s->nr_ksyms)) ||
	    (err = stk_writer__add_kobjs(w, s->kobjs, s->nr_kobjs)) ||
	    (err = stk_writer__add_esym(w, s->esym_build_id, s->esym_build_id_size,
					s->esym_blob, s->esym_blob_size)) ||
	    (err = stk_writer__add_stats(w, s->stats, s->nr_stats)) ||
	    (err = stk_writer__add_raw(w, "xtra", FS_T0, FS_T1, s->xtra, s->xtra_size)))
		return err;
	return 0;
}

static void fs_free(struct fs_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr_pool; i++)
		free(s->pool[i]);
	free(s->pool);
	memset(s, 0, sizeof(*s));
}

#endif /* FORMAT_SAMPLE_H */
