// SPDX-License-Identifier: BSD-2-Clause
/*
 * Summing a capture chunk by chunk for `stkreport info`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "stats.h"
#include "util.h"

static struct info_segment *info_segment(struct info *in, uint32_t seg)
{
	struct info_segment *tmp;
	size_t n = (size_t)seg + 1;

	if (seg < in->nr_segs)
		return &in->segs[seg];
	tmp = realloc(in->segs, n * sizeof(*tmp));
	if (!tmp)
		return NULL;
	memset(tmp + in->nr_segs, 0, (n - in->nr_segs) * sizeof(*tmp));
	in->segs = tmp;
	in->nr_segs = n;
	return &in->segs[seg];
}

static int meta_set(struct info_segment *s, const char *key, const char *value)
{
	struct stk_kv *tmp;
	char *v;
	size_t i;

	v = strdup(value);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->nr_meta; i++) {
		if (strcmp(s->meta[i].key, key) == 0) {
			free((char *)s->meta[i].value);
			s->meta[i].value = v;
			return 0;
		}
	}
	tmp = realloc(s->meta, (s->nr_meta + 1) * sizeof(*tmp));
	if (!tmp)
		goto fail;
	s->meta = tmp;
	s->meta[s->nr_meta].key = strdup(key);
	if (!s->meta[s->nr_meta].key)
		goto fail;
	s->meta[s->nr_meta++].value = v;
	return 0;
fail:
	free(v);
	return -ENOMEM;
}

static void interval(struct info_totals *t, const struct stk_chunk *ch)
{
	if (!ch->t1_ns)
		return;
	if (!t->t_first || ch->t0_ns < t->t_first)
		t->t_first = ch->t0_ns;
	if (ch->t1_ns > t->t_last)
		t->t_last = ch->t1_ns;
}

/* Adds everything but the distinct-process count to @t. */
static void totals_add(struct info_totals *t, const struct stk_chunk *ch)
{
	size_t i;

	t->chunks++;
	t->by_type[ch->type < INFO_NR_TYPES ? ch->type : STK_CHUNK_UNKNOWN]++;
	t->bytes_comp += ch->comp_size;
	t->bytes_raw += ch->raw_size;
	switch (ch->type) {
	case STK_CHUNK_CNTS:
		interval(t, ch);
		t->count_rows += ch->u.cnts.n;
		for (i = 0; i < ch->u.cnts.n; i++)
			t->samples = sat_add(t->samples, ch->u.cnts.rows[i].count, &t->saturated);
		break;
	case STK_CHUNK_OFFC:
		interval(t, ch);
		t->offcpu_rows += ch->u.offc.n;
		for (i = 0; i < ch->u.offc.n; i++) {
			t->offcpu_count = sat_add(t->offcpu_count, ch->u.offc.rows[i].count,
						  &t->saturated);
			t->blocked_ns = sat_add(t->blocked_ns, ch->u.offc.rows[i].blocked_ns,
						&t->saturated);
		}
		break;
	case STK_CHUNK_TRCE:
		interval(t, ch);
		t->trace_rows += ch->u.trce.n;
		for (i = 0; i < ch->u.trce.n; i++) {
			const struct stk_trace_count *r = &ch->u.trce.rows[i];

			t->trace_events = sat_add(t->trace_events, r->count, &t->saturated);
			if (r->event < INFO_TRACE_EVENTS)
				t->trace_by_event[r->event] = sat_add(t->trace_by_event[r->event],
								      r->count, &t->saturated);
		}
		break;
	case STK_CHUNK_STCK:
		t->stacks += ch->u.stck.n;
		break;
	case STK_CHUNK_MAPS:
		t->map_snapshots += ch->u.maps.n;
		for (i = 0; i < ch->u.maps.n; i++)
			t->mappings += ch->u.maps.procs[i].nr_mappings;
		break;
	case STK_CHUNK_KSYM:
		t->ksyms += ch->u.ksym.n;
		break;
	case STK_CHUNK_KBID:
		for (i = 0; i < ch->u.kbid.n; i++) {
			if (strcmp(ch->u.kbid.objs[i].name, "[kernel.kallsyms]") == 0)
				t->kernel_images++;
			else
				t->modules++;
		}
		break;
	case STK_CHUNK_ESYM:
		t->esyms++;
		t->esym_syms += ch->u.esym.nr_syms;
		t->esym_pycodes += ch->u.esym.nr_codes;
		t->esym_bytes += ch->comp_size;
		break;
	default:
		break;
	}
}

int info__add_chunk(struct info *in, const struct stk_chunk *ch)
{
	struct info_segment *s = info_segment(in, ch->segment);
	size_t i;
	int err;

	if (!s)
		return -ENOMEM;
	totals_add(&s->t, ch);
	totals_add(&in->total, ch);
	switch (ch->type) {
	case STK_CHUNK_META:
		for (i = 0; i < ch->u.meta.n; i++) {
			err = meta_set(s, ch->u.meta.kv[i].key, ch->u.meta.kv[i].value);
			if (err)
				return err;
		}
		break;
	case STK_CHUNK_STAT:
		/* STAT values are totals, not deltas: the last chunk replaces the rest. */
		return stats__copy(&s->stats, &s->nr_stats, ch->u.stat.stats, ch->u.stat.n);
	case STK_CHUNK_MAPS:
		/* Processes are per segment (pids are reused across captures);
		 * the file total is the sum over segments. */
		for (i = 0; i < ch->u.maps.n; i++) {
			uint64_t key = ch->u.maps.procs[i].tgid;

			if (idmap__find_ptr(&s->tgids, key))
				continue;
			err = idmap__set_ptr(&s->tgids, key, (void *)1);
			if (err)
				return err;
			s->t.procs_with_maps++;
			in->total.procs_with_maps++;
		}
		break;
	default:
		break;
	}
	return 0;
}

const char *info__meta(const struct info *in, size_t seg, const char *key)
{
	size_t i;

	if (seg >= in->nr_segs)
		return NULL;
	for (i = 0; i < in->segs[seg].nr_meta; i++)
		if (strcmp(in->segs[seg].meta[i].key, key) == 0)
			return in->segs[seg].meta[i].value;
	return NULL;
}

void info__free(struct info *in)
{
	size_t i, j;

	for (i = 0; i < in->nr_segs; i++) {
		struct info_segment *s = &in->segs[i];

		for (j = 0; j < s->nr_meta; j++) {
			free((char *)s->meta[j].key);
			free((char *)s->meta[j].value);
		}
		free(s->meta);
		stats__free(&s->stats, &s->nr_stats);
		idmap__release(&s->tgids);
	}
	free(in->segs);
	memset(in, 0, sizeof(*in));
}
