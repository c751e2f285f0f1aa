// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind_table.c - build the BPF unwinder's compact rows from an ELF's
 * .eh_frame with libdw (dwarf_getcfi_elf + dwarf_cfi_addrframe), and from
 * its .debug_frame (dwarf_getcfi) where .eh_frame has nothing.
 *
 * .eh_frame_hdr lists every FDE's first address, sorted (static links
 * have none: then dwarf_next_cfi() lists .eh_frame's FDEs); from there each
 * row's end (dwarf_frame_info) is the next row's start, until the next FDE
 * or a gap.  libdw re-runs an FDE's program for each row, which is cheap:
 * FDEs are short (a budget bounds the ones that are not).  We never
 * interpret CFI opcodes ourselves (cfi.c only bounds what libdw will be
 * asked to run, before it runs it); we only match the
 * DWARF expressions libdw hands back against the few shapes the BPF side
 * evaluates, and everything else becomes an "unsupported" row, so the
 * unwinder stops there with a reason instead of guessing.  Two facts the
 * CFI does not state are added: the entry point ends every stack
 * (mark_entry()), and Go's frames keep rbp while a few of its runtime's
 * functions switch stacks (go_row()).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "unwind_table.h"

/* DWARF register numbers, x86-64 psABI. */
#define REG_RBX 3
#define REG_RDI 5
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

struct unwind_table {
	struct stkrec_unwind_row *rows;
	size_t nr, cap;
	struct unwind_table_stats st;
	uint64_t t0;		/* the thread's CPU time when the build started */
	uint32_t checks;	/* over_budget() calls */
	const _Atomic int *stop; /* set: give up (or NULL) */
};

/* Room for one more row.  0 or -ENOMEM. */
static int rows_room(struct unwind_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct stkrec_unwind_row *n;

	if (t->nr < t->cap)
		return 0;
	n = realloc(t->rows, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->rows = n;
	t->cap = cap;
	return 0;
}

static int rows_push(struct unwind_table *t, uint64_t pc, int kind, int cfa_off, int rbp_off,
		     int rbx)
{
	struct stkrec_unwind_row *r;

	t->st.rows_raw++;
	if (pc > UINT32_MAX)
		return -E2BIG;
	if (t->nr) {
		r = &t->rows[t->nr - 1];
		/* Same rule as the row before: it simply covers more. */
		if (r->kind == kind && r->cfa_off == cfa_off && r->rbp_off == rbp_off &&
		    r->rbx == rbx)
			return 0;
		/* A later row at the same address replaces the earlier. */
		if (r->pc == pc) {
			r->kind = (uint8_t)kind;
			r->cfa_off = (uint16_t)cfa_off;
			r->rbp_off = (int8_t)rbp_off;
			r->rbx = (uint8_t)rbx;
			if (t->nr > 1 && r[-1].kind == r->kind && r[-1].cfa_off == r->cfa_off &&
			    r[-1].rbp_off == r->rbp_off && r[-1].rbx == r->rbx)
				t->nr--;
			return 0;
		}
	}
	if (rows_room(t))
		return -ENOMEM;
	r = &t->rows[t->nr++];
	r->pc = (uint32_t)pc;
	r->kind = (uint8_t)kind;
	r->cfa_off = (uint16_t)cfa_off;
	r->rbp_off = (int8_t)rbp_off;
	r->rbx = (uint8_t)rbx;
	return 0;
}

/* "saved at CFA + off": DW_OP_call_frame_cfa; DW_OP_plus_uconst off (off
 * wraps for negative values), or DW_OP_call_frame_cfa alone.  1 if so. */
static int saved_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return 1;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/* GCC/binutils' PLT CFA: rsp + 8 + (((rip & 15) >= N) << 3).  Returns N,
 * or -1 for any other expression. */
static int plt_threshold(const Dwarf_Op *ops, size_t nops)
{
	static const uint8_t shape[] = { DW_OP_breg7,  DW_OP_breg16, DW_OP_lit15,
					 DW_OP_and,    0 /* litN */,  DW_OP_ge,
					 DW_OP_lit3,   DW_OP_shl,    DW_OP_plus };
	size_t i;

	if (nops != sizeof(shape))
		return -1;
	for (i = 0; i < nops; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return -1;
	if (ops[0].number != 8 || ops[1].number != 0 || ops[4].atom < DW_OP_lit0 ||
	    ops[4].atom > DW_OP_lit31)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* The rbp rule as rbp_off (units of 8), or 1 when not expressible. */
static int rbp_rule(Dwarf_Frame *f, int *rbp_off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) != 0)
		return 1;
	if (nops == 0) {
		/* NULL: same value; mem: undefined (clobbered). */
		*rbp_off = ops ? STKREC_UW_RBP_LOST : 0;
		return 0;
	}
	if (!saved_at_cfa(ops, nops, &off) || off % 8 || off == 0 || off / 8 <= STKREC_UW_RBP_LOST ||
	    off / 8 > 127)
		return 1;
	*rbp_off = (int)(off / 8);
	return 0;
}

/* The rbx rule as a row's rbx: 0 unchanged, 1..14 saved at CFA - 8 * n,
 * STKREC_UW_RBX_LOST for anything else (the walk goes on without it).
 * "Undefined" is unchanged: libdw's x86-64 ABI defaults mark register 0
 * (rax) same-value where rbx was meant, so an rbx no CFI mentions reads as
 * undefined; rbx is callee-saved, and no compiler marks it clobbered. */
static int rbx_rule(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(f, REG_RBX, mem, &ops, &nops) != 0)
		return STKREC_UW_RBX_LOST;
	if (nops == 0)
		return 0; /* same value, or unmentioned (above) */
	if (!saved_at_cfa(ops, nops, &off) || off >= 0 || off % 8 ||
	    -off / 8 >= STKREC_UW_RBX_LOST)
		return STKREC_UW_RBX_LOST;
	return (int)(-off / 8);
}

/* The signal trampoline's CFI (glibc's __restore_rt, the vDSO's): every
 * register from the ucontext at rsp.  1 if @f has exactly that shape. */
static int is_sigframe(Dwarf_Frame *f, const Dwarf_Op *cfa, size_t ncfa)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (ncfa != 2 || cfa[0].atom != DW_OP_breg7 || cfa[0].number != 160 ||
	    cfa[1].atom != DW_OP_deref)
		return 0;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) != 0 || nops != 2 ||
	    ops[1].atom != DW_OP_breg7 || ops[1].number != 120)
		return 0;
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops) != 0 || nops != 2 ||
	    ops[1].atom != DW_OP_breg7 || ops[1].number != 168)
		return 0;
	return 1;
}

/* 1 if the rule @ops says "the value is in rdi" (DW_CFA_register). */
static int in_rdi(const Dwarf_Op *ops, size_t nops)
{
	return nops == 1 && ((ops[0].atom == DW_OP_regx && ops[0].number == REG_RDI) ||
			     ops[0].atom == DW_OP_reg0 + REG_RDI);
}

/* 1 if the CFA expression @op is rsp + *@off, 0 <= *@off <= UINT16_MAX. */
static int cfa_rsp(const Dwarf_Op *op, int64_t *off)
{
	if (op->atom == DW_OP_bregx && op->number == REG_RSP)
		*off = (int64_t)op->number2;
	else if (op->atom == DW_OP_breg0 + REG_RSP)
		*off = (int64_t)op->number;
	else
		return 0;
	return *off >= 0 && *off <= UINT16_MAX;
}

/* Classify one libdw row into (kind, cfa_off, rbp_off, rbx). */
static void classify(struct unwind_table *t, Dwarf_Frame *f, int signal, int *kind, int *cfa_off,
		     int *rbp_off, int *rbx)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	int n;

	*cfa_off = 0;
	*rbp_off = 0;
	*rbx = 0;
	*kind = STKREC_UW_UNSUPPORTED;
	/* The return address: undefined marks the outermost frame (_start,
	 * clone's child); anything but CFA - 8 we do not follow. */
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops) != 0)
		goto unsupported;
	if (nops == 0 && ops) {
		*kind = STKREC_UW_END;
		t->st.end++;
		return;
	}
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		goto unsupported;
	if (signal) {
		if (!is_sigframe(f, ops, nops))
			goto unsupported;
		*kind = STKREC_UW_SIGNAL;
		t->st.signal++;
		return;
	}
	{
		Dwarf_Op rmem[3], *rops;
		size_t nrops;

		if (dwarf_frame_register(f, REG_RA, rmem, &rops, &nrops) != 0)
			goto unsupported;
		if (in_rdi(rops, nrops)) {
			/* glibc's __vfork: CFA = rsp + off, return address
			 * in rdi (evaluated in the sampled leaf only). */
			if (rbp_rule(f, rbp_off) || nops != 1 || !cfa_rsp(ops, &off))
				goto unsupported;
			*kind = STKREC_UW_RA_RDI;
			*cfa_off = (int)off;
			*rbx = rbx_rule(f);
			t->st.ra_rdi++;
			return;
		}
		if (!saved_at_cfa(rops, nrops, &off) || off != -8)
			goto unsupported;
	}
	if (rbp_rule(f, rbp_off))
		goto unsupported;
	*rbx = rbx_rule(f);
	if (nops == 1 && (ops[0].atom == DW_OP_bregx || ops[0].atom == DW_OP_breg7 ||
			  ops[0].atom == DW_OP_breg6 || ops[0].atom == DW_OP_breg3)) {
		int reg = ops[0].atom == DW_OP_bregx ? (int)ops[0].number : ops[0].atom - DW_OP_breg0;

		off = ops[0].atom == DW_OP_bregx ? (int64_t)ops[0].number2 : (int64_t)ops[0].number;
		if ((reg != REG_RSP && reg != REG_RBP && reg != REG_RBX) || off < 0 ||
		    off > UINT16_MAX)
			goto unsupported;
		*kind = reg == REG_RSP ? STKREC_UW_CFA_RSP :
			reg == REG_RBP ? STKREC_UW_CFA_RBP : STKREC_UW_CFA_RBX;
		*cfa_off = (int)off;
		if (reg == REG_RBX)
			t->st.cfa_rbx++;
		return;
	}
	if (nops == 2 && ops[0].atom == DW_OP_breg6 && ops[1].atom == DW_OP_deref &&
	    (int64_t)ops[0].number <= 0 && (int64_t)ops[0].number >= -UINT16_MAX) {
		/* GCC's realigned frames (main with -mstackrealign, AVX
		 * locals): the CFA was saved just below rbp. */
		*kind = STKREC_UW_CFA_RBP_DEREF;
		*cfa_off = (int)-(int64_t)ops[0].number;
		t->st.rbp_deref++;
		return;
	}
	n = plt_threshold(ops, nops);
	if (n >= 0) {
		*kind = STKREC_UW_PLT;
		*cfa_off = 8;
		*rbp_off = n;
		t->st.plt++;
		return;
	}
unsupported:
	*kind = STKREC_UW_UNSUPPORTED;
	*cfa_off = 0;
	*rbp_off = 0;
	*rbx = 0;
	t->st.unsupported++;
}

/* The FDEs to walk: each one's first address and the CFI that has it. */
struct fde_start {
	uint64_t addr;
	Dwarf_CFI *cfi;
	unsigned int prio; /* the lower wins two FDEs at one address */
};

struct fde_list {
	struct fde_start *v;
	size_t nr, cap;
};

static int fdes_push(struct fde_list *l, uint64_t addr, Dwarf_CFI *cfi, unsigned int prio)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct fde_start *n = realloc(l->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->v = n;
		l->cap = cap;
	}
	l->v[l->nr++] = (struct fde_start){ addr, cfi, prio };
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde_start *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* The FDE start addresses from .eh_frame_hdr (PT_GNU_EH_FRAME), sorted by
 * the linker; -ENOENT without one (static links: GCC passes --eh-frame-hdr
 * to ld for dynamic ones only), -ENOTSUP when it has no table we read. */
static int fde_starts(Elf *elf, Dwarf_CFI *cfi, struct fde_list *l)
{
	const uint8_t *p, *end;
	GElf_Phdr ph, *hp = NULL;
	uint64_t count, v;
	Elf_Data *d;
	size_t nph, i;
	int err;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -EBADMSG;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			hp = &ph;
			break;
		}
	if (!hp)
		return -ENOENT;
	d = elf_getdata_rawchunk(elf, (int64_t)hp->p_offset, hp->p_filesz, ELF_T_BYTE);
	if (!d || d->d_size < 4)
		return -EBADMSG;
	p = d->d_buf;
	end = p + d->d_size;
	if (p[0] != 1)
		return -ENOTSUP;
	/* Every linker writes the table as datarel sdata4 pairs. */
	if (p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || p[2] == DW_EH_PE_omit)
		return -ENOTSUP;
	{
		uint8_t ptr_enc = p[1], cnt_enc = p[2];

		p += 4;
		err = cfi__read_ptr(&p, end, ptr_enc, &v);
		err = err ?: cfi__read_ptr(&p, end, cnt_enc, &count);
		if (err)
			return err;
	}
	if (count > (uint64_t)(end - p) / 8)
		return -EBADMSG;
	for (i = 0; i < count; i++) {
		int32_t loc;

		memcpy(&loc, p + 8 * i, 4);
		v = hp->p_vaddr + (uint64_t)(int64_t)loc;
		if (l->nr && v < l->v[l->nr - 1].addr)
			return -EBADMSG;
		err = fdes_push(l, v, cfi, 0);
		if (err)
			return err;
	}
	return 0;
}

/* Executable PT_LOAD segments: an FDE elsewhere describes code the linker
 * discarded (relocated to 0) and would only hide real rows. */
static bool in_text(Elf *elf, uint64_t lo, uint64_t hi)
{
	size_t nph, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    lo >= ph.p_vaddr && hi <= ph.p_vaddr + ph.p_memsz)
			return true;
	return false;
}

/*
 * Every FDE of CFI section @scn (.eh_frame when @eh, else .debug_frame,
 * of @elf or of its separate debuginfo), read with dwarf_next_cfi(): when
 * there is no .eh_frame_hdr to list them, and for .debug_frame.
 * libdw hands back each FDE's raw initial location; its encoding is the
 * CIE's (cfi__fde_encoding()), pc-relative to the field itself in .eh_frame.
 * FDEs of an encoding we do not read are skipped (their code has no rows).
 */
static int fde_scan(Elf *elf, Elf_Scn *scn, bool eh, Dwarf_CFI *cfi, unsigned int prio,
		    struct fde_list *l, uint64_t *skipped)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t enc = DW_EH_PE_omit;
	GElf_Shdr sh;
	Elf_Data *d;
	int err, r;

	if (!ident || !gelf_getshdr(scn, &sh))
		return -EBADMSG;
	/* Separate debuginfo may compress .debug_frame (dwarf_begin_elf()
	 * has then decompressed it already: the flag is gone). */
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EBADMSG;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return -EBADMSG;
	for (; off < d->d_size; off = next) {
		Dwarf_CFI_Entry e;
		const uint8_t *p, *end;
		uint64_t loc, range;

		r = dwarf_next_cfi(ident, d, eh, off, &next, &e);
		if (r > 0)
			break; /* the end (or .eh_frame's zero terminator) */
		if (r < 0)
			return -EBADMSG;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_CFI_Entry c;
			Dwarf_Off cnext;

			cie_off = e.fde.CIE_pointer;
			enc = DW_EH_PE_omit;
			if (dwarf_next_cfi(ident, d, eh, cie_off, &cnext, &c) == 0 &&
			    dwarf_cfi_cie_p(&c) && cfi__fde_encoding(&c.cie, &enc) != 0)
				enc = DW_EH_PE_omit;
		}
		p = e.fde.start;
		end = e.fde.end;
		if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) ||
		    ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel) ||
		    cfi__read_ptr(&p, end, enc, &loc) != 0 || cfi__read_ptr(&p, end, enc & 0x0f, &range) != 0) {
			(*skipped)++;
			continue;
		}
		if ((enc & 0x70) == DW_EH_PE_pcrel)
			loc += sh.sh_addr + (uint64_t)(e.fde.start - (const uint8_t *)d->d_buf);
		if (!range || loc + range < loc || !in_text(elf, loc, loc + range)) {
			(*skipped)++;
			continue;
		}
		err = fdes_push(l, loc, cfi, prio);
		if (err)
			return err;
	}
	return 0;
}

#define UW_BUILD_BUDGET_NS 1000000000ull

static uint64_t budget_ns = UW_BUILD_BUDGET_NS;

void unwind_table__set_budget(uint64_t ns)
{
	budget_ns = ns ? ns : UW_BUILD_BUDGET_NS;
}

/* The budget's clock: the CPU time of the thread building (the worker's,
 * which a busy machine may let run less than its wall time). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Section @name of @elf, or NULL: the first of that name that is not
 * SHT_NOBITS, the one libdw takes (dwarf_getcfi_elf(), dwarf_begin_elf()). */
static Elf_Scn *section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* Past the build's budget, or asked to stop: called before every libdw
 * call (one costs up to a program's length of work, UW_MAX_PROGRAM).  The
 * CPU clock is a system call (~1 us): read before every call it doubled
 * cc1's build, so every 32nd. */
static int over_budget(struct unwind_table *t)
{
	if (t->stop && atomic_load(t->stop))
		return 1;
	if (t->checks++ % 32)
		return 0;
	return thread_cpu_ns() - t->t0 > budget_ns;
}

/*
 * Go.  Its compiler writes .debug_frame with the CFA rule only (rsp +
 * frame size), and keeps frame pointers: a function with a frame saves
 * rbp just below its return address, at CFA - 16 (Go 1.19 stores it
 * right after the "sub $frame, %rsp" its CFI row starts at; later
 * versions push it), which the CFI does not say.  And a few runtime
 * functions switch stacks (to g0's, to the C stack), so that their CFI
 * describes the wrong stack after the switch: a walk through
 * systemstack read a zero return address on g0's stack and ended there
 * silently (4% of a Go program's samples), where perf -g goes on to
 * runtime.goexit.  Their rows become STKREC_UW_STACK_SWITCH: above the
 * leaf, a frame-pointer step, with the rbp the synthesized rule kept.
 */
#define GO_MAX_SWITCHERS 8

struct go_info {
	bool go;		/* a Go binary: .go.buildinfo, .gopclntab or its build-id note */
	size_t nr;
	struct {
		uint64_t lo, hi;
	} sw[GO_MAX_SWITCHERS];	/* the stack-switching functions */
};

/* The runtime's stack-switching functions (asm_amd64.s), "NAME" or, since
 * Go 1.17's register ABI, "NAME.abi0". */
static bool go_switcher(const char *name)
{
	static const char *const fns[] = { "runtime.systemstack", "runtime.mcall",
					   "runtime.asmcgocall", "runtime.morestack" };
	size_t i, n;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		n = strlen(fns[i]);
		if (strncmp(name, fns[i], n) == 0 && (!name[n] || strcmp(name + n, ".abi0") == 0))
			return true;
	}
	return false;
}

/* The switchers' address ranges, from @elf's .symtab.  0, or -ETIME past
 * the build's budget (a crafted file's symbol table can be huge). */
static int go_switchers(struct unwind_table *t, Elf *elf, struct go_info *g)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && g->nr < GO_MAX_SWITCHERS) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 0; i < n && g->nr < GO_MAX_SWITCHERS; i++) {
			const char *name;
			GElf_Sym sym;

			if (i % 4096 == 0 && over_budget(t))
				return -ETIME;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || !sym.st_size)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && go_switcher(name)) {
				g->sw[g->nr].lo = sym.st_value;
				g->sw[g->nr].hi = sym.st_value + sym.st_size;
				g->nr++;
			}
		}
	}
	return 0;
}

/* Whether @elf is a Go binary, and where its switchers are (in @elf's
 * symbol table, else its separate debuginfo @debug's).  0 or -ETIME. */
static int go_info(struct unwind_table *t, Elf *elf, Elf *debug, struct go_info *g)
{
	int err;

	memset(g, 0, sizeof(*g));
	g->go = section(elf, ".go.buildinfo") || section(elf, ".gopclntab") ||
		section(elf, ".note.go.buildid");
	if (!g->go)
		return 0;
	err = go_switchers(t, elf, g);
	if (!err && !g->nr && debug)
		err = go_switchers(t, debug, g);
	return err;
}

/* A row of Go's .debug_frame at @addr, classified: Go's rules added. */
static void go_row(const struct go_info *g, uint64_t addr, int *kind, int *cfa_off, int *rbp_off)
{
	size_t i;

	if (*kind != STKREC_UW_CFA_RSP)
		return;
	for (i = 0; i < g->nr; i++)
		if (addr >= g->sw[i].lo && addr < g->sw[i].hi) {
			*kind = STKREC_UW_STACK_SWITCH;
			return;
		}
	if (*rbp_off == 0 && *cfa_off >= 16)
		*rbp_off = -2;
}

/* Walk the FDEs of @l (sorted), each up to the next one's start; the rows
 * of .debug_frame in a Go binary (@g) with Go's rules. */
static int walk(struct unwind_table *t, const struct fde_list *l, const struct go_info *g)
{
	size_t i, j;
	int err = 0;

	for (i = 0; i < l->nr; i = j) {
		uint64_t addr = l->v[i].addr, limit;
		Dwarf_CFI *cfi = l->v[i].cfi;

		/* Two FDEs at one address: the first (the lower prio). */
		for (j = i + 1; j < l->nr && l->v[j].addr == addr; j++)
			;
		limit = j < l->nr ? l->v[j].addr : UINT64_MAX;
		t->st.fdes++;
		while (addr < limit) {
			Dwarf_Addr s, e;
			Dwarf_Frame *f;
			bool signal;
			int kind, cfa_off, rbp_off, rbx;

			if (over_budget(t))
				return -ETIME;
			if (dwarf_cfi_addrframe(cfi, addr, &f) != 0) {
				/* Past this FDE: a gap up to the next. */
				err = rows_push(t, addr, STKREC_UW_NONE, 0, 0, 0);
				break;
			}
			if (dwarf_frame_info(f, &s, &e, &signal) < 0) {
				free(f);
				return -EBADMSG;
			}
			classify(t, f, signal, &kind, &cfa_off, &rbp_off, &rbx);
			free(f);
			if (g->go && l->v[i].prio == 1) /* .debug_frame's: Go's own code */
				go_row(g, addr, &kind, &cfa_off, &rbp_off);
			err = rows_push(t, addr, kind, cfa_off, rbp_off, rbx);
			if (err)
				return err;
			if (e <= addr)
				break;
			addr = e;
		}
		if (err)
			return err;
	}
	return 0;
}

/* How far past the entry point a gap without CFI is taken as the entry
 * code: ld.so's _start and _dl_start_user, the code the kernel enters,
 * are 61 bytes; code past this keeps its "no CFI" stop. */
#define UW_ENTRY_SPAN 256

/* Insert a row {@pc, @kind} at index @i of @t's rows.  0 or -ENOMEM. */
static int rows_insert(struct unwind_table *t, size_t i, uint64_t pc, int kind)
{
	if (rows_room(t))
		return -ENOMEM;
	memmove(&t->rows[i + 1], &t->rows[i], (t->nr - i) * sizeof(t->rows[0]));
	t->rows[i] = (struct stkrec_unwind_row){ .pc = (uint32_t)pc, .kind = (uint8_t)kind };
	t->nr++;
	return 0;
}

/*
 * The entry point (e_entry) is the outermost frame of every stack that
 * reaches it: nothing calls it.  glibc's _start says so in its CFI (return
 * address undefined), but ld.so's entry, the first code of every dynamic
 * program, has no CFI at all, so every stack of a program's start-up
 * (relocation, constructors run by _dl_init) stopped there with "no CFI",
 * where perf ends at _start.  When no row covers e_entry, the gap from it
 * (at most UW_ENTRY_SPAN bytes) gets an END row.  Returns 0 or -errno.
 */
static int mark_entry(struct unwind_table *t, Elf *elf)
{
	uint64_t entry, next, end;
	size_t lo = 0, hi = t->nr;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return 0;
	entry = eh.e_entry;
	if (!entry || entry > UINT32_MAX - UW_ENTRY_SPAN || !t->nr || !in_text(elf, entry, entry + 1))
		return 0;
	/* lo: the first row past the entry. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && t->rows[lo - 1].kind != STKREC_UW_NONE)
		return 0; /* CFI covers it: its own rule */
	next = lo < t->nr ? t->rows[lo].pc : UINT64_MAX;
	end = entry + UW_ENTRY_SPAN < next ? entry + UW_ENTRY_SPAN : next;
	if (end < next) {
		err = rows_insert(t, lo, end, STKREC_UW_NONE);
		if (err)
			return err;
	}
	if (lo > 0 && t->rows[lo - 1].pc == entry) {
		t->rows[lo - 1].kind = STKREC_UW_END;
	} else {
		err = rows_insert(t, lo, entry, STKREC_UW_END);
		if (err)
			return err;
	}
	t->st.entry = 1;
	return 0;
}

/* 1 if @elf's code at @addr is a syscall instruction (0f 05). */
static int is_syscall_at(Elf *elf, uint64_t addr)
{
	const unsigned char *b;
	size_t nph, i;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz ||
		    ph.p_filesz - (addr - ph.p_vaddr) < 2)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (addr - ph.p_vaddr)), 2,
					 ELF_T_BYTE);
		b = d ? d->d_buf : NULL;
		return b && b[0] == 0x0f && b[1] == 0x05;
	}
	return 0;
}

/* The gap glibc's clone and clone3 leave: at most this many bytes. */
#define UW_CLONE_GAP 16

/*
 * glibc's clone() and clone3() end their FDE at the syscall, because the
 * child runs the next instructions on its new stack, and start a new one
 * (return address undefined) where the child goes on to the thread's
 * function: "syscall; test; jl; je; ret" has no CFI.  A parent in that
 * syscall -- every posix_spawn's, blocked until the child execs
 * (CLONE_VFORK), and pthread_create's -- stopped there with "no CFI".
 * Such a gap, right after a row CFA = rsp + 8 and right before a row that
 * ends the stack, starting with a syscall, gets a STKREC_UW_CLONE row:
 * the parent's CFA is still rsp + 8; the child (rax 0) is outermost.
 */
static void mark_clone(struct unwind_table *t, Elf *elf)
{
	size_t i;

	for (i = 1; i + 1 < t->nr; i++) {
		struct stkrec_unwind_row *r = &t->rows[i];

		if (r->kind != STKREC_UW_NONE || r[-1].kind != STKREC_UW_CFA_RSP ||
		    r[-1].cfa_off != 8 || r[-1].rbp_off != 0 || r[1].kind != STKREC_UW_END ||
		    r[1].pc - r->pc > UW_CLONE_GAP || !is_syscall_at(elf, r->pc))
			continue;
		r->kind = STKREC_UW_CLONE;
		r->cfa_off = 8;
		t->st.clone++;
	}
}

/* 1 if .eh_frame (@eh) has a row for @pc. */
static int eh_covers(Dwarf_CFI *eh, uint64_t pc)
{
	Dwarf_Frame *f;

	if (!eh || dwarf_cfi_addrframe(eh, pc, &f) != 0)
		return 0;
	free(f);
	return 1;
}

/*
 * The FDEs of @src's .debug_frame (@src: @elf itself or its separate
 * debuginfo) that start where .eh_frame (@eh) has no rule: code built
 * with -fno-asynchronous-unwind-tables -g has its CFI there only, next to
 * crt1.o's .eh_frame.  *@dw: the Dwarf that owns their CFI, the caller's
 * to end.  -ENOENT when @src has no .debug_frame, or one libdw cannot
 * read (the table is then .eh_frame's), -ENOMEM.
 */
static int debug_frame_fdes(struct unwind_table *t, Elf *elf, Elf *src, Dwarf_CFI *eh,
			    Dwarf **dw, struct fde_list *l)
{
	Elf_Scn *scn = section(src, ".debug_frame");
	size_t n0 = l->nr, i, k;
	Dwarf_CFI *cfi;
	int err;

	if (!scn)
		return -ENOENT;
	*dw = dwarf_begin_elf(src, DWARF_C_READ, NULL);
	/* (After dwarf_begin_elf(): it decompresses the section.)  Past the
	 * bounds: .eh_frame's rows alone, as when it is damaged. */
	if (*dw && cfi__debug_frame_ok(src))
		return -ENOENT;
	if (!*dw)
		return -ENOENT;
	cfi = dwarf_getcfi(*dw);
	if (!cfi)
		return -ENOENT;
	err = fde_scan(elf, scn, false, cfi, 1, l, &t->st.fdes_skipped);
	if (err) {
		/* Damaged: .eh_frame's rows alone, as without it. */
		l->nr = n0;
		return err == -ENOMEM ? err : -ENOENT;
	}
	for (i = k = n0; i < l->nr; i++) {
		if (over_budget(t))
			return -ETIME;
		if (!eh_covers(eh, l->v[i].addr))
			l->v[k++] = l->v[i];
	}
	l->nr = k;
	t->st.debug_frame_fdes = k - n0;
	return 0;
}

static int build(struct unwind_table *t, Elf *elf, Elf *debug)
{
	struct fde_list l = { 0 };
	struct go_info go;
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	Elf_Scn *scn;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(elf, &eh))
		return -EBADMSG;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	t->t0 = thread_cpu_ns();
	if (cfi__eh_frame_ok(elf))
		return -EBADMSG;
	cfi = dwarf_getcfi_elf(elf);
	err = cfi ? fde_starts(elf, cfi, &l) : 0;
	if (err == -ENOENT || err == -ENOTSUP) {
		/* No .eh_frame_hdr, or one without its table (ld writes that
		 * when it cannot sort .eh_frame): list its FDEs ourselves. */
		l.nr = 0;
		scn = section(elf, ".eh_frame");
		err = scn ? fde_scan(elf, scn, true, cfi, 0, &l, &t->st.fdes_skipped) : 0;
		if (!err && scn)
			t->st.scanned = 1;
	}
	if (err)
		goto out;
	/* .debug_frame where .eh_frame says nothing: the file's own, else
	 * the separate debuginfo's (strip moves it there). */
	err = debug_frame_fdes(t, elf, elf, cfi, &dw, &l);
	if (err == -ENOENT && debug && !dw)
		err = debug_frame_fdes(t, elf, debug, cfi, &dw, &l);
	if (err && err != -ENOENT)
		goto out;
	if (!l.nr) {
		err = -ENOENT;
		goto out;
	}
	qsort(l.v, l.nr, sizeof(*l.v), fde_cmp);
	err = go_info(t, elf, debug, &go);
	if (err)
		goto out;
	t->st.go_switchers = go.nr;
	err = walk(t, &l, &go);
	err = err ?: mark_entry(t, elf);
	if (!err)
		mark_clone(t, elf);
out:
	dwarf_cfi_end(cfi);
	dwarf_end(dw);
	free(l.v);
	return err;
}

struct unwind_table *unwind_table__from_elf_debug(Elf *elf, Elf *debug)
{
	return unwind_table__build(elf, debug, NULL);
}

struct unwind_table *unwind_table__build(Elf *elf, Elf *debug, const _Atomic int *stop)
{
	struct unwind_table *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->stop = stop;
	err = build(t, elf, debug);
	if (err) {
		unwind_table__free(t);
		errno = -err;
		return NULL;
	}
	t->st.rows = t->nr;
	return t;
}

int unwind_table__has_debug_frame(Elf *elf)
{
	return section(elf, ".debug_frame") != NULL;
}

struct unwind_table *unwind_table__from_elf(Elf *elf)
{
	return unwind_table__from_elf_debug(elf, NULL);
}

struct unwind_table *unwind_table__from_file(const char *path)
{
	struct unwind_table *t = NULL;
	Elf *elf = NULL;
	int fd, err;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		err = EBADMSG;
		goto out;
	}
	t = unwind_table__from_elf(elf);
	err = t ? 0 : errno;
out:
	elf_end(elf);
	close(fd);
	errno = err;
	return t;
}

const struct stkrec_unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *nr)
{
	*nr = t->nr;
	return t->rows;
}

const struct stkrec_unwind_row *unwind_table__lookup(const struct unwind_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nr;

	if (pc > UINT32_MAX || !t->nr || pc < t->rows[0].pc)
		return NULL;
	/* The last row whose pc <= @pc. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

void unwind_table__stats(const struct unwind_table *t, struct unwind_table_stats *st)
{
	*st = t->st;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}
