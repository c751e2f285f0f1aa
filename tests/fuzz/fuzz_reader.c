// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the .stk reader.  The input picks the mode:
 *
 *   starts with the file header magic   the whole input is a file: open it,
 *                                       read every chunk, take the summary
 *   'F' + a file                        the same after fixing every header
 *                                       and payload CRC, so mutations reach
 *                                       the checks behind the CRCs (lengths,
 *                                       sequence, index, trailer, zstd)
 *   anything else                       byte 0 picks a chunk type and the
 *                                       rest is a decompressed payload for
 *                                       its decoder (no CRC or zstd in the
 *                                       way)
 *
 * Every record returned is walked, so ASan sees any bad pointer or length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stk.h"
#include "stk_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static uint64_t walk_str(const char *s)
{
	return s ? strlen(s) : 0;
}

/* Touches every byte a caller may read from @ch. */
static void walk_chunk(const struct stk_chunk *ch)
{
	uint64_t h = ch->offset + ch->seq + ch->segment + strlen(ch->tag);
	size_t i, j;

	switch (ch->type) {
	case STK_CHUNK_META:
		for (i = 0; i < ch->u.meta.n; i++)
			h += walk_str(ch->u.meta.kv[i].key) + walk_str(ch->u.meta.kv[i].value);
		break;
	case STK_CHUNK_STCK:
		for (i = 0; i < ch->u.stck.n; i++)
			for (j = 0; j < ch->u.stck.stacks[i].nr_frames; j++)
				h += ch->u.stck.stacks[i].frames[j];
		break;
	case STK_CHUNK_CNTS:
		for (i = 0; i < ch->u.cnts.n; i++)
			h += ch->u.cnts.rows[i].count + strlen(ch->u.cnts.rows[i].comm);
		break;
	case STK_CHUNK_OFFC:
		for (i = 0; i < ch->u.offc.n; i++)
			h += ch->u.offc.rows[i].blocked_ns + strlen(ch->u.offc.rows[i].target.comm) +
			     strlen(ch->u.offc.rows[i].waker.comm);
		break;
	case STK_CHUNK_MAPS:
		for (i = 0; i < ch->u.maps.n; i++) {
			const struct stk_proc_maps *p = &ch->u.maps.procs[i];

			h += strlen(p->comm);
			for (j = 0; j < p->nr_mappings; j++)
				h += walk_str(p->mappings[j].path) + p->mappings[j].end +
				     p->mappings[j].build_id[p->mappings[j].build_id_size ?
							     p->mappings[j].build_id_size - 1 : 0];
		}
		break;
	case STK_CHUNK_KSYM:
		for (i = 0; i < ch->u.ksym.n; i++)
			h += walk_str(ch->u.ksym.syms[i].name) + walk_str(ch->u.ksym.syms[i].module) +
			     ch->u.ksym.syms[i].addr;
		break;
	case STK_CHUNK_KBID:
		for (i = 0; i < ch->u.kbid.n; i++)
			h += walk_str(ch->u.kbid.objs[i].name) + ch->u.kbid.objs[i].build_id_size;
		break;
	case STK_CHUNK_ESYM:
		for (i = 0; i < ch->u.esym.build_id_size; i++)
			h += ch->u.esym.build_id[i];
		for (i = 0; i < ch->u.esym.blob_size; i++)
			h += ((const uint8_t *)ch->u.esym.blob)[i];
		for (i = 0; i < ch->u.esym.nr_syms; i++)
			h += walk_str(ch->u.esym.syms[i].name) + ch->u.esym.syms[i].addr +
			     ch->u.esym.syms[i].size;
		for (i = 0; i < ch->u.esym.nr_codes; i++) {
			const struct stk_esym_pycode *k = &ch->u.esym.codes[i];

			h += walk_str(k->qualname) + walk_str(k->filename) + k->addr +
			     k->fingerprint + k->firstlineno;
			if (k->linetable_size)
				h += k->linetable[0] + k->linetable[k->linetable_size - 1];
		}
		break;
	case STK_CHUNK_STAT:
		for (i = 0; i < ch->u.stat.n; i++)
			h += walk_str(ch->u.stat.stats[i].name) + ch->u.stat.stats[i].value;
		break;
	case STK_CHUNK_INDX:
		h += ch->u.indx.n;
		break;
	case STK_CHUNK_PIDN:
		for (i = 0; i < ch->u.pidn.n; i++)
			h += ch->u.pidn.pids[i].tgid + ch->u.pidn.pids[i].ns_tgid +
			     ch->u.pidn.pids[i].time_ns + ch->u.pidn.pids[i].pid_ns;
		break;
	default:
		for (i = 0; i < ch->u.unknown.size; i++)
			h += ((const uint8_t *)ch->u.unknown.payload)[i];
		break;
	}
	sink += h;
}

static void read_file(const uint8_t *data, size_t size)
{
	struct stk_read_summary sum;
	struct stk_reader *r;
	struct stk_chunk ch;
	uint32_t i;
	int ret;

	r = stk_reader__open_mem(data, size);
	if (!r) {
		sink += strlen(stk_open_errmsg());
		return;
	}
	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret > 0)
			walk_chunk(&ch);
		else
			sink += strlen(stk_reader__errmsg(r));
	}
	stk_reader__summary(r, &sum);
	for (i = 0; i < stk_reader__segment_count(r); i++)
		sink += stk_reader__segment(r, i)->offset + strlen(stk_reader__segment(r, i)->writer_version);
	sink += sum.chunks + sum.errors + sum.bytes_skipped;
	stk_reader__close(r);
}

/* Recomputes the CRCs of every frame that parses as one of ours
 * (tests/fuzz/common.c, which every target links). */
void fuzz_fix_crcs(uint8_t *p, size_t size);

static void decode_only(const uint8_t *data, size_t size)
{
	struct stk_chunk ch = { .type = data[0] % (STK_CHUNK_PIDN + 1) };
	struct arena a = { .budget = STK_MAX_DECODED };
	struct cursor c = { .start = data + 1, .p = data + 1, .end = data + size, .arena = &a };
	struct stk_index_entry *idx;
	size_t nr;

	if (stk_decode_payload(&c, &ch, &idx, &nr) == 0)
		walk_chunk(&ch);
	arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size >= 4 && get_le32(data) == STK_MAGIC_FILE) {
		read_file(data, size);
	} else if (size >= 5 && data[0] == 'F' && get_le32(data + 1) == STK_MAGIC_FILE) {
		copy = malloc(size - 1);
		if (!copy)
			return 0;
		memcpy(copy, data + 1, size - 1);
		fuzz_fix_crcs(copy, size - 1);
		read_file(copy, size - 1);
		free(copy);
	} else if (size >= 1) {
		decode_only(data, size);
	}
	return 0;
}
