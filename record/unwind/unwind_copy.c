// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind_copy.c - a deferred user stack unwound in user space from its
 * copy, with the tables the unwinder holds (see unwind_copy.h): the rows
 * of a table loaded into the rows map, or kept in memory while evicted.
 */
#include <string.h>

#include "unwind_copy.h"
#include "unwinder_int.h"

/* The walk's state, as bpf/unwind.bpf.h's struct stkrec_unwind_state. */
struct walk {
	const struct stkrec_defer *d;
	uint64_t pc, sp, bp;
	uint64_t bx;	/* rbx in this frame, for STKREC_UW_CFA_RBX rows */
	int bx_lost;	/* ... unknown: a row said so, or a frame-pointer step */
	int signal;
	uint32_t fp_steps;
	int pending;
};

/* The 8 bytes at @addr, from the copy only.  0 or -1. */
static int walk_read(const struct walk *w, uint64_t addr, uint64_t *out)
{
	if (addr < w->d->sp || addr - w->d->sp > w->d->size || w->d->size - (addr - w->d->sp) < 8)
		return -1;
	memcpy(out, w->d->stack + (addr - w->d->sp), 8);
	return 0;
}

/* The rows of @t's file, or NULL (*@building: it is being built). */
static const struct stkrec_unwind_row *table_rows(const struct unwinder *u, const struct table *t,
						  uint32_t *nr, int *building)
{
	*building = t->job != NULL;
	if (!t->failed && t->nr) {
		*nr = t->nr;
		return u->rows + t->first;
	}
	if (t->saved) {
		*nr = t->nr_saved;
		return t->saved;
	}
	return NULL;
}

/* The row covering ELF address @rel, or NULL. */
static const struct stkrec_unwind_row *row_of(const struct stkrec_unwind_row *r, uint32_t nr,
					      uint64_t rel)
{
	uint32_t lo = 0, hi = nr;

	if (rel > UINT32_MAX || !nr || r[0].pc > rel)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &r[lo];
}

/* Frame @n's caller into @w: 0 to go on, 1 at the outermost frame, or
 * -STKREC_UW_STOP_* to stop early. */
static int walk_step(struct unwinder *u, struct walk *w, uint32_t n, int fp,
		     unwind_copy_mapping_fn mapping, void *ctx)
{
	const struct stkrec_unwind_row *rows = NULL, *r;
	const struct stk_mapping *m;
	uint64_t pc, cfa, ra, bp, bias = 0;
	uint32_t nr = 0;
	struct table *t;
	int building = 0, switched = 0;

	pc = w->pc - (n > 0 && !w->signal ? 1 : 0);
	w->signal = 0;
	m = mapping(ctx, w->d->tgid, pc);
	if (!m)
		return -(w->fp_steps ? STKREC_UW_STOP_FP : STKREC_UW_STOP_NO_MAP);
	t = unwinder__table_find(u, m);
	if (t && (rows = table_rows(u, t, &nr, &building)) && unwinder__mapping_bias(t, m, &bias))
		rows = NULL;
	/* Being built, or not even queued (its mapping not loaded yet):
	 * a file's, or the vDSO's; anonymous memory (JIT) never gets one. */
	w->pending |= building || (!t && m->path[0] &&
				   (m->path[0] != '[' || strcmp(m->path, "[vdso]") == 0));
	if (!rows) {
		if (!fp)
			return -STKREC_UW_STOP_NO_ROW;
		goto fp_step;
	}
	r = row_of(rows, nr, pc - bias);
	if (!r || r->kind == STKREC_UW_NONE) {
		/* Code without CFI in a file that has some (V8's builtins). */
		if (fp)
			goto fp_step;
		return -STKREC_UW_STOP_NO_ROW;
	}
	switch (r->kind) {
	case STKREC_UW_CFA_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBP:
		cfa = w->bp + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBX:
		/* ld.so's lazy-binding trampoline. */
		if (w->bx_lost)
			return -STKREC_UW_STOP_UNSUPP;
		cfa = w->bx + r->cfa_off;
		break;
	case STKREC_UW_CFA_RBP_DEREF:
		if (walk_read(w, w->bp - r->cfa_off, &cfa))
			return -STKREC_UW_STOP_FAULT;
		break;
	case STKREC_UW_PLT:
		cfa = w->sp + r->cfa_off + (((w->pc & 15) >= (uint64_t)r->rbp_off) ? 8 : 0);
		break;
	case STKREC_UW_STACK_SWITCH:
		/* Past Go's switch to g0's stack: back by frame pointer. */
		if (n > 0) {
			switched = 1;
			goto fp_step;
		}
		cfa = w->sp + r->cfa_off;
		break;
	case STKREC_UW_SIGNAL:
		if (walk_read(w, w->sp + 120, &bp) || walk_read(w, w->sp + 160, &cfa) ||
		    walk_read(w, w->sp + 168, &ra))
			return -STKREC_UW_STOP_FAULT;
		w->bx_lost = walk_read(w, w->sp + 128, &w->bx) != 0;
		w->bp = bp;
		w->sp = cfa;
		w->pc = ra;
		w->signal = 1;
		return ra == 0;
	case STKREC_UW_END:
		return 1;
	case STKREC_UW_RA_RDI:
		/* The return address is in rdi: the copied leaf's only. */
		if (n > 0)
			return -STKREC_UW_STOP_UNSUPP;
		cfa = w->sp + r->cfa_off;
		break;
	case STKREC_UW_CLONE:
		/* Past clone's syscall: the child (rax 0) is outermost. */
		if (n > 0)
			return -STKREC_UW_STOP_UNSUPP;
		if (w->d->ax == 0)
			return 1;
		cfa = w->sp + r->cfa_off;
		break;
	default:
		return -STKREC_UW_STOP_UNSUPP;
	}
	if (r->kind == STKREC_UW_RA_RDI)
		ra = w->d->di; /* CFA = rsp is fine: the pc moves, once */
	else if (cfa <= w->sp)
		return -STKREC_UW_STOP_LOOP;
	else if (walk_read(w, cfa - 8, &ra))
		return -STKREC_UW_STOP_FAULT;
	if (r->rbp_off == STKREC_UW_RBP_LOST)
		w->bp = 0;
	else if (r->rbp_off && r->kind != STKREC_UW_PLT && walk_read(w, cfa + (int64_t)r->rbp_off * 8, &w->bp))
		return -STKREC_UW_STOP_FAULT;
	if (r->rbx == STKREC_UW_RBX_LOST)
		w->bx_lost = 1;
	else if (r->rbx)
		w->bx_lost = walk_read(w, cfa - (uint64_t)r->rbx * 8, &w->bx) != 0;
	w->sp = cfa;
	w->pc = ra;
	return ra == 0;
fp_step:
	/* rbp = 0 ends a frame-pointer chain. */
	bp = w->bp;
	if (bp == 0)
		return 1;
	if ((bp < w->sp && !switched) || walk_read(w, bp + 8, &ra) || walk_read(w, bp, &w->bp))
		return -STKREC_UW_STOP_FP;
	w->fp_steps++;
	w->sp = bp + 16;
	w->bx_lost = 1; /* whether code without CFI saved it is unknown */
	w->pc = ra;
	return ra == 0;
}

int unwinder__unwind_copy(struct unwinder *u, const struct stkrec_defer *d, int fp,
			  unwind_copy_mapping_fn mapping, void *ctx, int last, struct stkrec_stack *out)
{
	struct walk w = { .d = d, .pc = d->pc, .sp = d->sp, .bp = d->bp, .bx = d->bx };
	uint32_t n = 0;
	int r = 0;

	while (!r) {
		if (n >= STKREC_MAX_DEPTH) {
			r = -STKREC_UW_STOP_DEPTH;
			break;
		}
		out->ips[n] = w.pc;
		r = walk_step(u, &w, n, fp, mapping, ctx);
		n++;
	}
	if (r < 0) {
		/* The last frame says why the walk stopped. */
		if (n >= STKREC_MAX_DEPTH)
			n = STKREC_MAX_DEPTH - 1;
		out->ips[n++] = STKREC_UW_MARK | (uint64_t)-r;
	}
	out->nr = n;
	if (w.pending && !last)
		return 1;	/* tried again later: counted then */
	if (r < 0 && -r < STKREC_UW_NR_STOPS)
		u->copy_st.stops[-r]++;
	u->copy_st.unwound++;
	u->copy_st.pending += w.pending;
	u->copy_st.fp_steps += w.fp_steps;
	return w.pending;
}

void unwinder__copy_stats(const struct unwinder *u, struct unwind_copy_stats *st)
{
	*st = u->copy_st;
}
