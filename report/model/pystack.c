// SPDX-License-Identifier: BSD-2-Clause
/*
 * Python frames put into their native stack (pystack.h): the words read,
 * each frame named once by its code object and line, the frames merged in
 * where the interpreter's evaluation loop ran them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "idmap.h"
#include "pylines.h"
#include "pystack.h"
#include "util.h"

#define EVAL_LOOP "_PyEval_EvalFrameDefault"

/* One named (tgid, code address, info word), chained by hash. */
struct pyent {
	uint32_t tgid;
	uint64_t addr, info;
	const struct rpyframe *pf;	/* NULL: unknown code */
	struct pyent *next;
};

struct pystack {
	const struct capture *cap;
	struct idmap names;		/* hash -> pyent chain */
	struct arena mem;		/* pyents, rpyframes and their texts */
};

struct pystack *pystack__new(const struct capture *cap)
{
	struct pystack *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->cap = cap;
	return ps;
}

void pystack__free(struct pystack *ps)
{
	if (!ps)
		return;
	idmap__release(&ps->names);
	arena__free(&ps->mem);
	free(ps);
}

uint32_t pystack__native_words(const uint64_t *words, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (stk_py_word__tag(words[i]))
			return i;
	return n;
}

int pystack__is_eval_frame(const struct rframe *f)
{
	const char *name;

	if (rframe__kind(f) != RFRAME_USER || !rframe__sym(f) || !rframe__sym(f)->nr_lines)
		return 0;
	/* The function the machine code belongs to: the outermost of its
	 * inline lines, as the binary spells it. */
	name = rframe__sym(f)->lines[rframe__sym(f)->nr_lines - 1].raw;
	if (!name)
		name = rframe__sym(f)->lines[rframe__sym(f)->nr_lines - 1].name;
	return strncmp(name, EVAL_LOOP, sizeof(EVAL_LOOP) - 1) == 0 &&
	       (name[sizeof(EVAL_LOOP) - 1] == '\0' || name[sizeof(EVAL_LOOP) - 1] == '.');
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The name of a frame of code @k at instruction @offset. */
static const struct rpyframe *pystack__name(struct pystack *ps, const struct cap_pycode *k,
					    uint32_t offset)
{
	struct rpyframe *pf = arena__alloc(&ps->mem, sizeof(*pf));
	struct sym_line probe = { 0 };
	uint32_t line = k->firstlineno;
	char num[16];
	size_t ql, bl, nl;
	char *d;

	if (!pf)
		return NULL;
	/* No line (an empty table, an instruction the compiler gave none, a
	 * damaged table): the code's first line, as SPEC.md says. */
	if (offset != STK_PY_OFFSET_UNKNOWN &&
	    pylines__line(k->py_version, k->firstlineno, k->linetable, k->linetable_size, offset,
			  &line))
		line = k->firstlineno;
	ql = strlen(k->qualname);
	bl = strlen(base_name(k->filename));
	nl = (size_t)snprintf(num, sizeof(num), "%u", line);
	d = arena__alloc(&ps->mem, ql + bl + nl + 5);
	if (!d)
		return NULL;
	memcpy(d, k->qualname, ql);
	memcpy(d + ql, " (", 2);
	memcpy(d + ql + 2, base_name(k->filename), bl);
	d[ql + 2 + bl] = ':';
	memcpy(d + ql + 3 + bl, num, nl);
	memcpy(d + ql + 3 + bl + nl, ")", 2);
	probe.name = d;
	sym_line__measure(&probe);
	pf->display = d;
	pf->display_len = probe.name_len;
	pf->display_plain = probe.plain;
	pf->line.name = k->qualname;
	pf->line.raw = k->qualname;
	pf->line.file = k->filename[0] ? k->filename : NULL;
	pf->line.line = line;
	pf->line.start_line = k->firstlineno;
	sym_line__measure(&pf->line);
	pf->sym.nr_lines = 1;
	pf->sym.lines = &pf->line;
	return pf;
}

/* The name of the frame @word with info word @info (0: it had none) of
 * process @tgid, NULL for code the capture does not describe; named once
 * per key.  -ENOMEM in *@err. */
static const struct rpyframe *pystack__lookup(struct pystack *ps, uint32_t tgid, uint64_t word,
					      uint64_t info, int *err)
{
	uint64_t addr = stk_py_word__addr(word);
	uint64_t h = hash64(hash64(hash64(0x9c, tgid), addr), info);
	const struct cap_pycode *k;
	struct pyent *e;

	*err = 0;
	for (e = idmap__find_ptr(&ps->names, h); e; e = e->next)
		if (e->tgid == tgid && e->addr == addr && e->info == info)
			return e->pf;
	e = arena__alloc(&ps->mem, sizeof(*e));
	if (!e) {
		*err = -ENOMEM;
		return NULL;
	}
	e->tgid = tgid;
	e->addr = addr;
	e->info = info;
	k = info ? capture__pycode(ps->cap, tgid, addr, stk_py_word__fingerprint(info)) : NULL;
	if (k) {
		e->pf = pystack__name(ps, k, stk_py_word__offset(info));
		if (!e->pf) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	e->next = idmap__find_ptr(&ps->names, h);
	if (idmap__set_ptr(&ps->names, h, e)) {
		*err = -ENOMEM;
		return NULL;
	}
	return e->pf;
}

/* A Python frame as recorded: its word and its info word (0: none). */
struct pyword {
	uint64_t frame, info;
};

/* The frames of @words into @fr (room for @n), their number returned;
 * the stop word, if any, into *@stop (0: none).  An info word without a
 * frame word, or a native word among them, is skipped; nothing after the
 * stop word is read. */
static uint32_t pywords__parse(const uint64_t *words, uint32_t n, struct pyword *fr,
			       uint64_t *stop)
{
	uint32_t i = 0, nf = 0;

	*stop = 0;
	while (i < n && !*stop) {
		uint64_t w = words[i++];

		switch (stk_py_word__tag(w)) {
		case STK_PY_TAG_FRAME:
		case STK_PY_TAG_ENTRY:
			fr[nf].frame = w;
			fr[nf].info = 0;
			if (i < n && stk_py_word__tag(words[i]) == STK_PY_TAG_INFO)
				fr[nf].info = words[i++];
			nf++;
			break;
		case STK_PY_TAG_STOP:
			*stop = w;
			break;
		default:
			break;
		}
	}
	return nf;
}

int pystack__merge(struct pystack *ps, uint32_t tgid, const struct rframe *native,
		   uint32_t nr_native, const uint64_t *words, uint32_t nr_words, struct rframe *out,
		   uint32_t *nr_out, uint32_t *nr_python)
{
	struct pyword fr[STK_MAX_FRAMES];
	uint32_t i, k = 0, nf, n = 0, py = 0;
	int err, stop_done = 0;
	uint64_t stop;

	if (nr_words > STK_MAX_FRAMES)
		nr_words = STK_MAX_FRAMES;
	nf = pywords__parse(words, nr_words, fr, &stop);
	for (i = 0; i <= nr_native; i++) {
		/* The Python frames one eval loop frame ran; at the root end
		 * (i == nr_native), all that are left. */
		int here = i == nr_native || pystack__is_eval_frame(&native[i]);
		int took = 0;

		while (here && k < nf) {
			const struct rpyframe *pf = pystack__lookup(ps, tgid, fr[k].frame,
								    fr[k].info, &err);
			struct rframe *f = &out[n++];

			if (err)
				return err;
			memset(f, 0, sizeof(*f));
			rframe__set_kind(f, RFRAME_PYTHON, 0);
			f->addr = fr[k].frame;
			rframe__set_sym(f, pf ? &pf->sym : NULL);
			py++;
			took = 1;
			if (stk_py_word__tag(fr[k++].frame) == STK_PY_TAG_ENTRY && i < nr_native)
				break;
		}
		/* The walk's stop, rootward of the last Python frame (or at the
		 * root end when there was none). */
		if (!stop_done && k == nf && (took || i == nr_native)) {
			stop_done = 1;
			if (stop) {
				memset(&out[n], 0, sizeof(out[n]));
				rframe__set_kind(&out[n], RFRAME_PYTHON, 0);
				out[n++].addr = stop;
				py++;
			}
		}
		if (i < nr_native && !took)
			out[n++] = native[i];
	}
	*nr_out = n;
	*nr_python = py;
	return 0;
}
