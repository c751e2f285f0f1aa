// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi.c - reading what CFI's encodings say, and bounding what libdw is
 * asked to evaluate before the unwind-table builder (unwind_table.c) hands
 * it a file's CFI (see cfi.h).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

/* Read a pointer of DW_EH_PE encoding @enc at *@p (advanced), before its
 * application (pcrel and the like are the caller's).  Only the fixed-size
 * formats: the ones linkers and compilers write for x86-64. */
int cfi__read_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v)
{
	size_t size;

	/* Applications we know the size of: DW_EH_PE_aligned (padding
	 * first, as libdw reads it) and the rest are not. */
	if ((enc & 0x70) > DW_EH_PE_datarel)
		return -ENOTSUP;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	default: return -ENOTSUP;
	}
	if ((size_t)(end - *p) < size)
		return -EBADMSG;
	*v = 0;
	memcpy(v, *p, size); /* little-endian host and file (x86-64) */
	if ((enc & 0x0f) == DW_EH_PE_sdata4)
		*v = (uint64_t)(int64_t)(int32_t)*v;
	else if ((enc & 0x0f) == DW_EH_PE_sdata2)
		*v = (uint64_t)(int64_t)(int16_t)*v;
	*p += size;
	return 0;
}

/* The encoding of a CIE's FDE addresses: augmentation 'R' (.eh_frame),
 * else absolute (.debug_frame's CIEs have no augmentation). */
int cfi__fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;
	uint64_t v;

	*enc = DW_EH_PE_absptr;
	if (!a || !a[0])
		return 0;
	if (a[0] != 'z')
		return -ENOTSUP;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EBADMSG;
			*enc = *p++;
			break;
		case 'L':
			if (p >= end)
				return -EBADMSG;
			p++;
			break;
		case 'P':
			if (p >= end)
				return -EBADMSG;
			{
				uint8_t penc = *p++;
				int err = cfi__read_ptr(&p, end, penc, &v);

				if (err)
					return err;
			}
			break;
		case 'S':
			break;
		default:
			return -ENOTSUP;
		}
	}
	return 0;
}

/*
 * Bounds on what libdw is asked to evaluate.  Its CFI interpreter sizes a
 * frame's register array by the largest register number the program
 * names: one FDE naming register 243385044 (found by fuzz_unwind_table)
 * cost 3.8 GB and 105 s of a root recorder that builds tables for files
 * any user can map.  So, before libdw runs anything, every CIE's and FDE's
 * program is read through once for its register operands (the one place
 * we read CFI opcodes, and only their operands' lengths and registers;
 * libdw still interprets them); unwind_table.c gives up a table that
 * takes longer than its budget (re-running a long FDE's program per row
 * is quadratic: gcc's cc1, 478k rows, takes ~330 ms).  Checked against
 * every ELF in /usr/bin, /usr/sbin and /usr/lib/x86_64-linux-gnu here
 * (2187): the same rows and errors as without the bounds.
 */
#define UW_MAX_REG 255			/* x86-64's numbers end at 130 */
#define UW_MAX_REMEMBER 16		/* DW_CFA_remember_state nesting */
#define UW_MAX_REMEMBERS 4096		/* ... and in all (cc1: 442 at most) */
#define UW_MAX_PROGRAM (1 << 20)	/* bytes of one CIE's or FDE's program */

static int leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -EBADMSG;
}

static int skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if ((uint64_t)(end - *p) < n)
		return -EBADMSG;
	*p += n;
	return 0;
}

/* The CFA program [@p, @end): every register it names at most UW_MAX_REG,
 * every operand inside it, no opcode libdw does not know either.  @ptr:
 * the size of DW_CFA_set_loc's address. */
static int program_ok(const uint8_t *p, const uint8_t *end, size_t ptr)
{
	uint64_t reg, n = 0;
	int err = 0, depth = 0, remembers = 0;

	/* libdw re-runs the program for every row: its length bounds a
	 * row's cost (gcc's cc1: 13k opcodes at most). */
	if (end - p > UW_MAX_PROGRAM)
		return -EBADMSG;

	while (p < end && !err) {
		uint8_t op = *p++;

		reg = 0;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore:
			continue;
		case DW_CFA_offset:
			err = leb(&p, end, &n);
			continue;
		}
		switch (op) {
		case DW_CFA_remember_state:
			/* libdw copies the whole frame for each: one byte of
			 * file, 4 KiB of memory.  GCC nests 1-3 deep. */
			if (++depth > UW_MAX_REMEMBER || ++remembers > UW_MAX_REMEMBERS)
				err = -EBADMSG;
			break;
		case DW_CFA_restore_state:
			depth -= depth > 0;
			break;
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc: err = skip(&p, end, ptr); break;
		case DW_CFA_advance_loc1: err = skip(&p, end, 1); break;
		case DW_CFA_advance_loc2: err = skip(&p, end, 2); break;
		case DW_CFA_advance_loc4: err = skip(&p, end, 4); break;
		case DW_CFA_MIPS_advance_loc8: err = skip(&p, end, 8); break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			err = leb(&p, end, &n);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			err = leb(&p, end, &reg);
			break;
		case DW_CFA_register:
			err = leb(&p, end, &reg);
			err = err ?: leb(&p, end, &n);
			reg = n > reg ? n : reg;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			err = leb(&p, end, &reg);
			err = err ?: leb(&p, end, &n);
			break;
		case DW_CFA_def_cfa_expression:
			err = leb(&p, end, &n);
			err = err ?: skip(&p, end, n);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			err = leb(&p, end, &reg);
			err = err ?: leb(&p, end, &n);
			err = err ?: skip(&p, end, n);
			break;
		default:
			err = -EBADMSG;
		}
		if (reg > UW_MAX_REG)
			err = -EBADMSG;
	}
	return err;
}

/* Every program of CFI section @scn (.eh_frame when @eh, else
 * .debug_frame) within program_ok()'s bounds: 0, else -EBADMSG. */
/* The offsets of the FDEs on an .eh_frame's chain (section_ok()): the
 * only ones .eh_frame_hdr may send libdw to (hdr_ok()). */
struct fde_offs {
	uint64_t *v;
	size_t nr, cap;
};

static int offs_push(struct fde_offs *o, uint64_t off)
{
	if (!o)
		return 0;
	if (o->nr == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		uint64_t *n = realloc(o->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		o->v = n;
		o->cap = cap;
	}
	o->v[o->nr++] = off;
	return 0;
}

static int section_ok(Elf *elf, Elf_Scn *scn, bool eh, struct fde_offs *offs)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	Dwarf_CFI_Entry e, c;
	uint8_t enc = DW_EH_PE_absptr;
	bool z = false;
	GElf_Shdr sh;
	Elf_Data *d;
	int r;

	if (!ident || !gelf_getshdr(scn, &sh))
		return -EBADMSG;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EBADMSG;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_size)
		return 0; /* nothing for libdw to run either */
	if (!d->d_buf)
		return -EBADMSG;
	for (; off < d->d_size; off = next) {
		const uint8_t *p, *end;
		uint64_t v;

		r = dwarf_next_cfi(ident, d, eh, off, &next, &e);
		if (r > 0)
			break;
		if (r < 0)
			return -EBADMSG;
		if (dwarf_cfi_cie_p(&e)) {
			if (program_ok(e.cie.initial_instructions, e.cie.initial_instructions_end, 8))
				return -EBADMSG;
			continue;
		}
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_Off cnext;

			cie_off = e.fde.CIE_pointer;
			/* The CIE this FDE names, on the chain or not. */
			if (dwarf_next_cfi(ident, d, eh, cie_off, &cnext, &c) != 0 ||
			    !dwarf_cfi_cie_p(&c) || cfi__fde_encoding(&c.cie, &enc) != 0 ||
			    program_ok(c.cie.initial_instructions, c.cie.initial_instructions_end, 8))
				return -EBADMSG;
			z = c.cie.augmentation && c.cie.augmentation[0] == 'z';
		}
		if (offs_push(offs, off))
			return -ENOMEM;
		/* Initial location, range, augmentation data, then the program. */
		p = e.fde.start;
		end = e.fde.end;
		if (cfi__read_ptr(&p, end, enc, &v) || cfi__read_ptr(&p, end, enc & 0x0f, &v) ||
		    (z && (leb(&p, end, &v) || skip(&p, end, v))))
			return -EBADMSG;
		if (program_ok(p, end, (enc & 0x0f) == DW_EH_PE_absptr ? 8 : (enc & 0x07) == 2 ? 2 :
				       (enc & 0x07) == 3 ? 4 : 8))
			return -EBADMSG;
	}
	return 0;
}

/*
 * Every section of @elf named @name (not SHT_NOBITS) within
 * section_ok()'s bounds, whichever of them libdw takes: 0, else -EBADMSG.
 * A file without section headers is refused: libdw would find .eh_frame
 * through .eh_frame_hdr alone, in bytes no check has read.
 */
static int sections_ok(Elf *elf, const char *name, bool eh, struct fde_offs *offs,
		       GElf_Shdr *first)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, nr;
	GElf_Shdr sh;
	int found = 0;

	if (elf_getshdrnum(elf, &nr) != 0 || nr == 0 || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    shstrndx == SHN_UNDEF)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		/* libdw 0.188 takes .zdebug_frame for .debug_frame too. */
		if (!n || (strcmp(n, name) != 0 && !(!eh && strcmp(n, ".zdebug_frame") == 0)))
			continue;
		if (section_ok(elf, scn, eh, found ? NULL : offs))
			return -EBADMSG;
		if (!found && first)
			*first = sh;
		found++;
	}
	return found ? 0 : -ENOENT;
}

/* The segment of type @type, or NULL. */
static GElf_Phdr *segment(Elf *elf, uint32_t type, GElf_Phdr *ph)
{
	size_t nph, i;

	if (elf_getphdrnum(elf, &nph) != 0)
		return NULL;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, ph) && ph->p_type == type)
			return ph;
	return NULL;
}

static int off_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * An .eh_frame_hdr (@d, loaded at @vaddr) whose search table sends libdw
 * only to FDEs on the chain of .eh_frame (@eh, its sorted FDE offsets
 * @offs): libdw follows the table's pointers to any offset, so one into
 * another entry's bytes would run a program no check has read.  A table
 * libdw would not use (none, or another encoding) passes.
 */
static int hdr_ok(const uint8_t *p, size_t size, uint64_t vaddr, const GElf_Shdr *eh,
		  const struct fde_offs *offs)
{
	const uint8_t *q = p + 4, *end = p + size;
	uint64_t ptr, count, i;

	if (size < 4 || p[0] != 1 || p[2] == DW_EH_PE_omit || p[3] == DW_EH_PE_omit)
		return 0;
	if (p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || cfi__read_ptr(&q, end, p[1], &ptr) ||
	    cfi__read_ptr(&q, end, p[2], &count))
		return -EBADMSG;
	if ((p[1] & 0x70) == DW_EH_PE_pcrel)
		ptr += vaddr + 4;
	if (ptr != eh->sh_addr || count > (uint64_t)(end - q) / 8)
		return -EBADMSG;
	for (i = 0; i < count; i++) {
		int32_t rel;
		uint64_t off;

		memcpy(&rel, q + 8 * i + 4, 4);
		off = vaddr + (uint64_t)(int64_t)rel - eh->sh_addr;
		if (!offs->nr || !bsearch(&off, offs->v, offs->nr, sizeof(*offs->v), off_cmp))
			return -EBADMSG;
	}
	return 0;
}

/* .eh_frame's programs within bounds, and every .eh_frame_hdr (the
 * segment's and any section of that name) pointing only at its FDEs. */
int cfi__eh_frame_ok(Elf *elf)
{
	struct fde_offs offs = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr eh, sh;
	GElf_Phdr ph;
	size_t shstrndx;
	Elf_Data *d;
	int err;

	err = sections_ok(elf, ".eh_frame", true, &offs, &eh);
	if (err == -ENOENT) {
		/* No section of that name: libdw then reads whatever
		 * PT_GNU_EH_FRAME points at, unchecked. */
		err = segment(elf, PT_GNU_EH_FRAME, &ph) ? -EBADMSG : 0;
		goto out;
	}
	if (err)
		goto out;
	if (offs.nr)
		qsort(offs.v, offs.nr, sizeof(*offs.v), off_cmp);
	if (segment(elf, PT_GNU_EH_FRAME, &ph)) {
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || hdr_ok(d->d_buf, d->d_size, ph.p_vaddr, &eh, &offs)) {
			err = -EBADMSG;
			goto out;
		}
	}
	if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
		err = -EBADMSG;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, ".eh_frame_hdr") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_size && hdr_ok(d->d_buf, d->d_size, sh.sh_addr, &eh, &offs)) {
			err = -EBADMSG;
			goto out;
		}
	}
out:
	free(offs.v);
	return err;
}


int cfi__debug_frame_ok(Elf *elf)
{
	return sections_ok(elf, ".debug_frame", false, NULL, NULL) == -EBADMSG ? -EBADMSG : 0;
}
