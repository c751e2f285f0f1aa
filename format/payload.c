// SPDX-License-Identifier: BSD-2-Clause
/*
 * Chunk payload encodings (SPEC.md "Payloads"): one encoder and one decoder
 * per chunk type, kept side by side so they cannot drift apart.
 *
 * Decoders never trust a count or a length: a count is checked against the
 * bytes left (each record needs at least a known minimum) before its array
 * is allocated, and all memory comes from the reader's arena, whose budget
 * bounds what one chunk may cost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stk_int.h"

static const char *const tags[] = {
	[STK_CHUNK_META] = "META",
	[STK_CHUNK_STCK] = "STCK",
	[STK_CHUNK_CNTS] = "CNTS",
	[STK_CHUNK_OFFC] = "OFFC",
	[STK_CHUNK_MAPS] = "MAPS",
	[STK_CHUNK_KSYM] = "KSYM",
	[STK_CHUNK_KBID] = "KBID",
	[STK_CHUNK_ESYM] = "ESYM",
	[STK_CHUNK_STAT] = "STAT",
	[STK_CHUNK_INDX] = "INDX",
	[STK_CHUNK_PIDN] = "pidn",
	[STK_CHUNK_TRCE] = "TRCE",
};

const char *stk_chunk_type__tag(enum stk_chunk_type type)
{
	if ((unsigned int)type >= sizeof(tags) / sizeof(tags[0]))
		return NULL;
	return tags[type];
}

enum stk_chunk_type stk_tag_type(const char tag[4])
{
	size_t i;

	for (i = 1; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (memcmp(tags[i], tag, 4) == 0)
			return i;
	return STK_CHUNK_UNKNOWN;
}

/* Minimum encoded bytes of one record of each kind: bounds record counts. */
#define MIN_KV	      2	 /* two empty strings */
#define MIN_STACK     2	 /* id, nr_frames = 0 */
#define MIN_TASK      5	 /* tgid, tid, comm, ustack, kstack */
#define MIN_COUNT     (MIN_TASK + 3)
#define MIN_OFFCPU    (2 * MIN_TASK + 2)
#define MIN_TRACE     (MIN_TASK + 2)	/* event, task, count */
#define MIN_PROC      4	 /* tgid, comm, time, nr_mappings */
#define MIN_MAPPING   8	 /* six varints, build-id, path */
#define MIN_KSYM      5	 /* delta, size, type, module, name */
#define MIN_KOBJ      4	 /* name, base, size, build-id */
#define MIN_STAT      2	 /* name, value */
#define MIN_ESYM_SYM  4	 /* delta, size, name (at least one byte) */
#define MIN_ESYM_CODE 7	 /* addr, fingerprint, firstlineno, qualname (>= 2),
			  * filename, linetable */
#define MIN_INDEX     10 /* tag (4), six varints */
#define MIN_PID_NS    4	 /* tgid, time, ns_tgid, pid_ns */

/* comm[16] is NUL-terminated; a caller that filled all 16 bytes loses one. */
static void sbuf_comm(struct sbuf *b, const char *comm, size_t size)
{
	size_t n = strnlen(comm, size - 1);

	sbuf_varint(b, n);
	sbuf_put(b, comm, n);
}

static void *cur_array(struct cursor *c, size_t n, size_t size)
{
	void *p;

	if (c->err)
		return NULL;
	p = arena_array(c->arena, n, size);
	if (!p)
		cur_fail(c, c->arena->err, "decoded chunk too large");
	return p;
}

/* ---- META ---- */

void stk_encode_meta(struct sbuf *b, const struct stk_kv *kv, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		sbuf_string(b, kv[i].key, "META key missing or too long");
		sbuf_string(b, kv[i].value, "META value missing or too long");
	}
}

static void decode_meta(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_KV);
	struct stk_kv *kv = cur_array(c, n, sizeof(*kv));

	for (i = 0; i < n && !c->err; i++) {
		kv[i].key = cur_string(c, STK_MAX_STRING);
		kv[i].value = cur_string(c, STK_MAX_STRING);
	}
	ch->u.meta.kv = kv;
	ch->u.meta.n = n;
}

/* ---- STCK ---- */

void stk_encode_stacks(struct sbuf *b, const struct stk_stack *stacks, size_t n)
{
	size_t i, j;
	uint8_t *p;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_stack *s = &stacks[i];

		if (s->nr_frames > STK_MAX_FRAMES || (s->nr_frames && !s->frames)) {
			sbuf_fail(b, -EINVAL, "stack with more than STK_MAX_FRAMES or no frames array");
			return;
		}
		/* The same bytes as below, into room reserved once a stack. */
		p = sbuf_room(b, (2 + (size_t)s->nr_frames) * STK_VARINT_MAX);
		if (p) {
			p = stk_varint_put(p, s->id);
			p = stk_varint_put(p, s->nr_frames);
			for (j = 0; j < s->nr_frames; j++)
				p = stk_varint_put(p, j ? zigzag_encode((int64_t)(s->frames[j] -
										  s->frames[j - 1]))
							: s->frames[0]);
			b->len = (size_t)(p - b->data);
			continue;
		}
		sbuf_varint(b, s->id);
		sbuf_varint(b, s->nr_frames);
		/* Frames of one stack sit close together (same binary), so
		 * deltas from the previous frame are short varints. */
		for (j = 0; j < s->nr_frames; j++) {
			if (j == 0)
				sbuf_varint(b, s->frames[0]);
			else
				sbuf_svarint(b, (int64_t)(s->frames[j] - s->frames[j - 1]));
		}
	}
}

static void decode_stacks(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, j, n = cur_count(c, MIN_STACK);
	struct stk_stack *st = cur_array(c, n, sizeof(*st));

	for (i = 0; i < n && !c->err; i++) {
		uint64_t *frames;
		uint64_t nr;

		st[i].id = cur_varint(c);
		nr = cur_varint(c);
		if (nr > STK_MAX_FRAMES) {
			cur_fail(c, -EFBIG, "stack with more than STK_MAX_FRAMES frames");
			break;
		}
		if (nr > cur_left(c)) {
			cur_fail(c, -EBADMSG, "frame count larger than the payload");
			break;
		}
		frames = cur_array(c, nr, sizeof(*frames));
		for (j = 0; j < nr && !c->err; j++) {
			if (j == 0)
				frames[0] = cur_varint(c);
			else
				frames[j] = frames[j - 1] + (uint64_t)cur_svarint(c);
		}
		st[i].nr_frames = nr;
		st[i].frames = frames;
	}
	ch->u.stck.stacks = st;
	ch->u.stck.n = n;
}

/* ---- CNTS ---- */

void stk_encode_counts(struct sbuf *b, const struct stk_count *rows, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_count *r = &rows[i];
		/* The same bytes as below, into room reserved once a row. */
		uint8_t *p = sbuf_room(b, 8 * STK_VARINT_MAX + sizeof(r->comm));

		if (p) {
			size_t c = strnlen(r->comm, sizeof(r->comm) - 1);

			p = stk_varint_put(p, r->tgid);
			p = stk_varint_put(p, r->tid);
			p = stk_varint_put(p, c);
			memcpy(p, r->comm, c);
			p = stk_varint_put(p + c, zigzag_encode(r->user_stack));
			p = stk_varint_put(p, zigzag_encode(r->kernel_stack));
			p = stk_varint_put(p, r->kernel_ip);
			p = stk_varint_put(p, r->kernel_ret_ip);
			p = stk_varint_put(p, r->count);
			b->len = (size_t)(p - b->data);
			continue;
		}
		sbuf_varint(b, r->tgid);
		sbuf_varint(b, r->tid);
		sbuf_comm(b, r->comm, sizeof(r->comm));
		sbuf_svarint(b, r->user_stack);
		sbuf_svarint(b, r->kernel_stack);
		sbuf_varint(b, r->kernel_ip);
		sbuf_varint(b, r->kernel_ret_ip);
		sbuf_varint(b, r->count);
	}
}

static void decode_counts(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_COUNT);
	struct stk_count *rows = cur_array(c, n, sizeof(*rows));

	for (i = 0; i < n && !c->err; i++) {
		struct stk_count *r = &rows[i];

		r->tgid = cur_u32(c);
		r->tid = cur_u32(c);
		cur_string_fixed(c, r->comm, sizeof(r->comm));
		r->user_stack = cur_svarint(c);
		r->kernel_stack = cur_svarint(c);
		r->kernel_ip = cur_varint(c);
		r->kernel_ret_ip = cur_varint(c);
		r->count = cur_varint(c);
	}
	ch->u.cnts.rows = rows;
	ch->u.cnts.n = n;
}

/* ---- OFFC ---- */

static void encode_task(struct sbuf *b, const struct stk_task_stacks *t)
{
	sbuf_varint(b, t->tgid);
	sbuf_varint(b, t->tid);
	sbuf_comm(b, t->comm, sizeof(t->comm));
	sbuf_svarint(b, t->user_stack);
	sbuf_svarint(b, t->kernel_stack);
}

static void decode_task(struct cursor *c, struct stk_task_stacks *t)
{
	t->tgid = cur_u32(c);
	t->tid = cur_u32(c);
	cur_string_fixed(c, t->comm, sizeof(t->comm));
	t->user_stack = cur_svarint(c);
	t->kernel_stack = cur_svarint(c);
}

void stk_encode_offcpu(struct sbuf *b, const struct stk_offcpu *rows, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		encode_task(b, &rows[i].target);
		encode_task(b, &rows[i].waker);
		sbuf_varint(b, rows[i].count);
		sbuf_varint(b, rows[i].blocked_ns);
	}
}

static void decode_offcpu(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_OFFCPU);
	struct stk_offcpu *rows = cur_array(c, n, sizeof(*rows));

	for (i = 0; i < n && !c->err; i++) {
		decode_task(c, &rows[i].target);
		decode_task(c, &rows[i].waker);
		rows[i].count = cur_varint(c);
		rows[i].blocked_ns = cur_varint(c);
	}
	ch->u.offc.rows = rows;
	ch->u.offc.n = n;
}

/* ---- TRCE ---- */

void stk_encode_trace(struct sbuf *b, const struct stk_trace_count *rows, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_trace_count *r = &rows[i];

		sbuf_varint(b, r->event);
		sbuf_varint(b, r->tgid);
		sbuf_varint(b, r->tid);
		sbuf_comm(b, r->comm, sizeof(r->comm));
		sbuf_svarint(b, r->user_stack);
		sbuf_svarint(b, r->kernel_stack);
		sbuf_varint(b, r->count);
	}
}

static void decode_trace(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_TRACE);
	struct stk_trace_count *rows = cur_array(c, n, sizeof(*rows));

	for (i = 0; i < n && !c->err; i++) {
		struct stk_trace_count *r = &rows[i];

		r->event = cur_u32(c);
		r->tgid = cur_u32(c);
		r->tid = cur_u32(c);
		cur_string_fixed(c, r->comm, sizeof(r->comm));
		r->user_stack = cur_svarint(c);
		r->kernel_stack = cur_svarint(c);
		r->count = cur_varint(c);
	}
	ch->u.trce.rows = rows;
	ch->u.trce.n = n;
}

/* ---- MAPS ---- */

void stk_encode_maps(struct sbuf *b, const struct stk_proc_maps *procs, size_t n)
{
	size_t i, j;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_proc_maps *p = &procs[i];

		if (p->nr_mappings && !p->mappings) {
			sbuf_fail(b, -EINVAL, "process with mappings but no mappings array");
			return;
		}
		sbuf_varint(b, p->tgid);
		sbuf_comm(b, p->comm, sizeof(p->comm));
		sbuf_varint(b, p->time_ns);
		sbuf_varint(b, p->nr_mappings);
		for (j = 0; j < p->nr_mappings && !b->err; j++) {
			const struct stk_mapping *m = &p->mappings[j];

			if (m->end < m->start) {
				sbuf_fail(b, -EINVAL, "mapping ends before it starts");
				return;
			}
			sbuf_varint(b, m->start);
			sbuf_varint(b, m->end - m->start);
			sbuf_varint(b, m->offset);
			sbuf_varint(b, m->dev);
			sbuf_varint(b, m->inode);
			sbuf_varint(b, m->prot);
			sbuf_bytes(b, m->build_id, m->build_id_size, STK_MAX_BUILD_ID,
				   "build-id longer than STK_MAX_BUILD_ID");
			sbuf_string(b, m->path ? m->path : "", "mapping path too long");
		}
	}
}

static void decode_maps(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, j, n = cur_count(c, MIN_PROC);
	struct stk_proc_maps *procs = cur_array(c, n, sizeof(*procs));

	for (i = 0; i < n && !c->err; i++) {
		struct stk_proc_maps *p = &procs[i];
		struct stk_mapping *maps;
		size_t nr;

		p->tgid = cur_u32(c);
		cur_string_fixed(c, p->comm, sizeof(p->comm));
		p->time_ns = cur_varint(c);
		nr = cur_count(c, MIN_MAPPING);
		if (nr > UINT32_MAX) {
			cur_fail(c, -EBADMSG, "mapping count does not fit in 32 bits");
			break;
		}
		maps = cur_array(c, nr, sizeof(*maps));
		for (j = 0; j < nr && !c->err; j++) {
			struct stk_mapping *m = &maps[j];
			const uint8_t *bid;
			uint64_t size;

			m->start = cur_varint(c);
			size = cur_varint(c);
			if (size > UINT64_MAX - m->start) {
				cur_fail(c, -EBADMSG, "mapping end past 2^64");
				break;
			}
			m->end = m->start + size;
			m->offset = cur_varint(c);
			m->dev = cur_varint(c);
			m->inode = cur_varint(c);
			m->prot = cur_u32(c);
			m->build_id_size = cur_bytes(c, &bid, STK_MAX_BUILD_ID);
			if (m->build_id_size)
				memcpy(m->build_id, bid, m->build_id_size);
			m->path = cur_string(c, STK_MAX_STRING);
		}
		p->nr_mappings = nr;
		p->mappings = maps;
	}
	ch->u.maps.procs = procs;
	ch->u.maps.n = n;
}

/* ---- KSYM ---- */

void stk_encode_ksyms(struct sbuf *b, const struct stk_ksym *syms, size_t n)
{
	const char **mods = NULL, **tmp;
	size_t nr_mods = 1, cap = 16, i, last = 0;
	uint64_t prev = 0;
	size_t *idx = NULL;

	/* The module of each symbol becomes an index into a table written
	 * first; symbols of one module are usually adjacent, so the last hit
	 * is tried before searching. */
	mods = malloc(cap * sizeof(*mods));
	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!mods || !idx) {
		sbuf_fail(b, -ENOMEM, "out of memory");
		goto out;
	}
	mods[0] = "";
	for (i = 0; i < n; i++) {
		const char *m = syms[i].module ? syms[i].module : "";
		size_t k;

		if (strcmp(mods[last], m) == 0) {
			idx[i] = last;
			continue;
		}
		for (k = 0; k < nr_mods && strcmp(mods[k], m); k++)
			;
		if (k == nr_mods) {
			if (nr_mods == cap) {
				tmp = realloc(mods, 2 * cap * sizeof(*mods));
				if (!tmp) {
					sbuf_fail(b, -ENOMEM, "out of memory");
					goto out;
				}
				mods = tmp;
				cap *= 2;
			}
			mods[nr_mods++] = m;
		}
		idx[i] = last = k;
	}

	sbuf_varint(b, nr_mods);
	for (i = 0; i < nr_mods; i++)
		sbuf_string(b, mods[i], "KSYM module name too long");
	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_ksym *s = &syms[i];

		sbuf_svarint(b, (int64_t)(s->addr - prev));
		prev = s->addr;
		sbuf_varint(b, s->size);
		sbuf_u8(b, (uint8_t)s->type);
		sbuf_varint(b, idx[i]);
		sbuf_string(b, s->name, "KSYM name missing or too long");
	}
out:
	free(mods);
	free(idx);
}

static void decode_ksyms(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n, nr_mods = cur_count(c, 1);
	const char **mods = cur_array(c, nr_mods, sizeof(*mods));
	struct stk_ksym *syms;
	uint64_t addr = 0;

	for (i = 0; i < nr_mods && !c->err; i++)
		mods[i] = cur_string(c, STK_MAX_STRING);
	if (!c->err && (nr_mods == 0 || mods[0][0] != '\0'))
		cur_fail(c, -EBADMSG, "KSYM module 0 is not the kernel image \"\"");
	n = cur_count(c, MIN_KSYM);
	syms = cur_array(c, n, sizeof(*syms));
	for (i = 0; i < n && !c->err; i++) {
		uint64_t m;

		addr += (uint64_t)cur_svarint(c);
		syms[i].addr = addr;
		syms[i].size = cur_varint(c);
		syms[i].type = (char)cur_u8(c);
		m = cur_varint(c);
		if (!c->err && m >= nr_mods) {
			cur_fail(c, -EBADMSG, "KSYM module index out of range");
			break;
		}
		syms[i].module = c->err ? NULL : mods[m];
		syms[i].name = cur_string(c, STK_MAX_STRING);
	}
	ch->u.ksym.syms = syms;
	ch->u.ksym.n = n;
}

/* ---- KBID ---- */

void stk_encode_kobjs(struct sbuf *b, const struct stk_kobj *objs, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		sbuf_string(b, objs[i].name, "KBID name missing or too long");
		sbuf_varint(b, objs[i].base);
		sbuf_varint(b, objs[i].size);
		sbuf_bytes(b, objs[i].build_id, objs[i].build_id_size, STK_MAX_BUILD_ID,
			   "build-id longer than STK_MAX_BUILD_ID");
	}
}

static void decode_kobjs(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_KOBJ);
	struct stk_kobj *objs = cur_array(c, n, sizeof(*objs));

	for (i = 0; i < n && !c->err; i++) {
		const uint8_t *bid;

		objs[i].name = cur_string(c, STK_MAX_STRING);
		objs[i].base = cur_varint(c);
		objs[i].size = cur_varint(c);
		objs[i].build_id_size = cur_bytes(c, &bid, STK_MAX_BUILD_ID);
		if (objs[i].build_id_size)
			memcpy(objs[i].build_id, bid, objs[i].build_id_size);
	}
	ch->u.kbid.objs = objs;
	ch->u.kbid.n = n;
}

/* ---- ESYM ---- */

void stk_encode_esym(struct sbuf *b, const uint8_t *build_id, uint32_t build_id_size,
		     const void *blob, size_t blob_size)
{
	sbuf_bytes(b, build_id, build_id_size, STK_MAX_BUILD_ID,
		   "build-id longer than STK_MAX_BUILD_ID");
	if (blob_size && !blob) {
		sbuf_fail(b, -EINVAL, "ESYM blob is NULL");
		return;
	}
	sbuf_put(b, blob, blob_size);
}

void stk_encode_esym_syms(struct sbuf *b, uint8_t kind, const uint8_t *build_id,
			  uint32_t build_id_size, uint32_t extra, const struct stk_esym_sym *syms,
			  size_t n)
{
	uint64_t prev = 0;
	size_t i;

	if (kind == STK_ESYM_SYMTAB && (!build_id_size || !build_id)) {
		sbuf_fail(b, -EINVAL, "ESYM symbol table without a build-id");
		return;
	}
	sbuf_bytes(b, build_id, kind == STK_ESYM_SYMTAB ? build_id_size : 0, STK_MAX_BUILD_ID,
		   "build-id longer than STK_MAX_BUILD_ID");
	sbuf_u8(b, kind);
	sbuf_varint(b, extra);
	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		if (!syms[i].name || !syms[i].name[0]) {
			sbuf_fail(b, -EINVAL, "ESYM symbol without a name");
			return;
		}
		/* Sorted by the writer, deltas are short varints. */
		sbuf_svarint(b, (int64_t)(syms[i].addr - prev));
		prev = syms[i].addr;
		sbuf_varint(b, syms[i].size);
		sbuf_string(b, syms[i].name, "ESYM symbol name too long");
	}
}

/* Kinds 2 and 3 after their kind byte. */
static void decode_esym_syms(struct cursor *c, struct stk_chunk *ch)
{
	struct stk_esym_sym *syms;
	uint64_t addr = 0;
	size_t i, n;

	if (ch->u.esym.kind == STK_ESYM_SYMTAB && !ch->u.esym.build_id_size)
		cur_fail(c, -EBADMSG, "ESYM symbol table without a build-id");
	if (ch->u.esym.kind == STK_ESYM_PERF_MAP && ch->u.esym.build_id_size)
		cur_fail(c, -EBADMSG, "ESYM perf map with a build-id");
	if (ch->u.esym.kind == STK_ESYM_SYMTAB)
		ch->u.esym.sources = cur_u32(c);
	else
		ch->u.esym.tgid = cur_u32(c);
	n = cur_count(c, MIN_ESYM_SYM);
	syms = cur_array(c, n, sizeof(*syms));
	for (i = 0; i < n && !c->err; i++) {
		addr += (uint64_t)cur_svarint(c);
		syms[i].addr = addr;
		syms[i].size = cur_varint(c);
		syms[i].name = cur_string(c, STK_MAX_STRING);
		if (!c->err && !syms[i].name[0])
			cur_fail(c, -EBADMSG, "ESYM symbol without a name");
	}
	ch->u.esym.syms = c->err ? NULL : syms;
	ch->u.esym.nr_syms = c->err ? 0 : n;
}

void stk_encode_esym_pycode(struct sbuf *b, uint32_t tgid, uint32_t py_version,
			    const struct stk_esym_pycode *codes, size_t n)
{
	size_t i;

	sbuf_varint(b, 0);	/* no build-id */
	sbuf_u8(b, STK_ESYM_PYCODE);
	sbuf_varint(b, tgid);
	sbuf_varint(b, py_version);
	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		const struct stk_esym_pycode *k = &codes[i];

		if (!k->qualname || !k->qualname[0]) {
			sbuf_fail(b, -EINVAL, "Python code object without a qualname");
			return;
		}
		if (k->fingerprint > STK_PY_FP_MAX) {
			sbuf_fail(b, -EINVAL, "Python code fingerprint over 24 bits");
			return;
		}
		if (k->linetable_size && !k->linetable) {
			sbuf_fail(b, -EINVAL, "Python line table is NULL");
			return;
		}
		sbuf_varint(b, k->addr);
		sbuf_varint(b, k->fingerprint);
		sbuf_varint(b, k->firstlineno);
		sbuf_string(b, k->qualname, "Python qualname too long");
		sbuf_string(b, k->filename, "Python filename missing or too long");
		sbuf_bytes(b, k->linetable, k->linetable_size, STK_MAX_PY_LINETABLE,
			   "Python line table longer than STK_MAX_PY_LINETABLE");
	}
}

/* Kind 4 after its kind byte. */
static void decode_esym_pycode(struct cursor *c, struct stk_chunk *ch)
{
	struct stk_esym_pycode *codes;
	size_t i, n;

	if (ch->u.esym.build_id_size)
		cur_fail(c, -EBADMSG, "ESYM Python code with a build-id");
	ch->u.esym.tgid = cur_u32(c);
	ch->u.esym.py_version = cur_u32(c);
	n = cur_count(c, MIN_ESYM_CODE);
	codes = cur_array(c, n, sizeof(*codes));
	for (i = 0; i < n && !c->err; i++) {
		struct stk_esym_pycode *k = &codes[i];

		k->addr = cur_varint(c);
		k->fingerprint = cur_u32(c);
		if (!c->err && k->fingerprint > STK_PY_FP_MAX)
			cur_fail(c, -EBADMSG, "Python code fingerprint over 24 bits");
		k->firstlineno = cur_u32(c);
		k->qualname = cur_string(c, STK_MAX_STRING);
		if (!c->err && !k->qualname[0])
			cur_fail(c, -EBADMSG, "Python code object without a qualname");
		k->filename = cur_string(c, STK_MAX_STRING);
		k->linetable_size = (uint32_t)cur_bytes(c, &k->linetable, STK_MAX_PY_LINETABLE);
	}
	ch->u.esym.codes = c->err ? NULL : codes;
	ch->u.esym.nr_codes = c->err ? 0 : n;
}

static void decode_esym(struct cursor *c, struct stk_chunk *ch)
{
	const uint8_t *bid;

	ch->u.esym.build_id_size = cur_bytes(c, &bid, STK_MAX_BUILD_ID);
	ch->u.esym.build_id = bid;
	/* The blob is the rest of the payload, which the reader keeps until
	 * the next chunk: no copy. */
	ch->u.esym.blob = c->p;
	ch->u.esym.blob_size = cur_left(c);
	ch->u.esym.kind = 0;
	ch->u.esym.sources = ch->u.esym.tgid = 0;
	ch->u.esym.syms = NULL;
	ch->u.esym.nr_syms = 0;
	ch->u.esym.py_version = 0;
	ch->u.esym.codes = NULL;
	ch->u.esym.nr_codes = 0;
	if (c->err || !cur_left(c)) {
		c->p = c->end;
		return;
	}
	ch->u.esym.kind = *c->p;
	if (ch->u.esym.kind == STK_ESYM_SYMTAB || ch->u.esym.kind == STK_ESYM_PERF_MAP) {
		c->p++;
		decode_esym_syms(c, ch);
		return;
	}
	if (ch->u.esym.kind == STK_ESYM_PYCODE) {
		c->p++;
		decode_esym_pycode(c, ch);
		return;
	}
	c->p = c->end;
}

/* ---- STAT ---- */

void stk_encode_stats(struct sbuf *b, const struct stk_stat *stats, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		sbuf_string(b, stats[i].name, "STAT name missing or too long");
		sbuf_varint(b, stats[i].value);
	}
}

static void decode_stats(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_STAT);
	struct stk_stat *st = cur_array(c, n, sizeof(*st));

	for (i = 0; i < n && !c->err; i++) {
		st[i].name = cur_string(c, STK_MAX_STRING);
		st[i].value = cur_varint(c);
	}
	ch->u.stat.stats = st;
	ch->u.stat.n = n;
}

/* ---- pidn ---- */

void stk_encode_pid_ns(struct sbuf *b, const struct stk_pid_ns *pids, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		if (pids[i].ns_tgid == 0 || pids[i].ns_tgid == pids[i].tgid) {
			sbuf_fail(b, -EINVAL, "pidn record whose ns_tgid is 0 or its tgid");
			break;
		}
		sbuf_varint(b, pids[i].tgid);
		sbuf_varint(b, pids[i].time_ns);
		sbuf_varint(b, pids[i].ns_tgid);
		sbuf_varint(b, pids[i].pid_ns);
	}
}

static void decode_pid_ns(struct cursor *c, struct stk_chunk *ch)
{
	size_t i, n = cur_count(c, MIN_PID_NS);
	struct stk_pid_ns *p = cur_array(c, n, sizeof(*p));

	for (i = 0; i < n && !c->err; i++) {
		p[i].tgid = cur_u32(c);
		p[i].time_ns = cur_varint(c);
		p[i].ns_tgid = cur_u32(c);
		p[i].pid_ns = cur_varint(c);
		if (!c->err && (p[i].ns_tgid == 0 || p[i].ns_tgid == p[i].tgid))
			cur_fail(c, -EBADMSG, "pidn record whose ns_tgid is 0 or its tgid");
	}
	ch->u.pidn.pids = p;
	ch->u.pidn.n = n;
}

/* ---- INDX ---- */

void stk_encode_index(struct sbuf *b, const struct stk_index_entry *e, size_t n)
{
	size_t i;

	sbuf_varint(b, n);
	for (i = 0; i < n && !b->err; i++) {
		sbuf_put(b, e[i].tag, 4);
		sbuf_varint(b, e[i].offset);
		sbuf_varint(b, e[i].comp_len);
		sbuf_varint(b, e[i].raw_len);
		sbuf_varint(b, e[i].seq);
		sbuf_varint(b, e[i].t0_ns);
		sbuf_varint(b, e[i].t1_ns);
	}
}

static void decode_index(struct cursor *c, struct stk_index_entry **out, size_t *nr)
{
	size_t i, n = cur_count(c, MIN_INDEX);
	struct stk_index_entry *e = cur_array(c, n, sizeof(*e));

	for (i = 0; i < n && !c->err; i++) {
		if (cur_left(c) < 4) {
			c->field = c->p;
			cur_fail(c, -EBADMSG, "record cut short");
			break;
		}
		memcpy(e[i].tag, c->p, 4);
		c->p += 4;
		e[i].offset = cur_varint(c);
		e[i].comp_len = cur_u32(c);
		e[i].raw_len = cur_u32(c);
		e[i].seq = cur_u32(c);
		e[i].t0_ns = cur_varint(c);
		e[i].t1_ns = cur_varint(c);
	}
	*out = e;
	*nr = n;
}

int stk_decode_payload(struct cursor *c, struct stk_chunk *ch,
		       struct stk_index_entry **index, size_t *nr_index)
{
	switch (ch->type) {
	case STK_CHUNK_META:
		decode_meta(c, ch);
		break;
	case STK_CHUNK_STCK:
		decode_stacks(c, ch);
		break;
	case STK_CHUNK_CNTS:
		decode_counts(c, ch);
		break;
	case STK_CHUNK_OFFC:
		decode_offcpu(c, ch);
		break;
	case STK_CHUNK_TRCE:
		decode_trace(c, ch);
		break;
	case STK_CHUNK_MAPS:
		decode_maps(c, ch);
		break;
	case STK_CHUNK_KSYM:
		decode_ksyms(c, ch);
		break;
	case STK_CHUNK_KBID:
		decode_kobjs(c, ch);
		break;
	case STK_CHUNK_ESYM:
		decode_esym(c, ch);
		break;
	case STK_CHUNK_STAT:
		decode_stats(c, ch);
		break;
	case STK_CHUNK_PIDN:
		decode_pid_ns(c, ch);
		break;
	case STK_CHUNK_INDX:
		*index = NULL;
		*nr_index = 0;
		decode_index(c, index, nr_index);
		ch->u.indx.n = *nr_index;
		break;
	default:
		ch->u.unknown.payload = c->p;
		ch->u.unknown.size = cur_left(c);
		c->p = c->end;
		break;
	}
	if (!c->err && c->p != c->end) {
		c->field = c->p;
		cur_fail(c, -EBADMSG, "trailing bytes after the last record");
	}
	return c->err;
}
