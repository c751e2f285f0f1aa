// SPDX-License-Identifier: BSD-2-Clause
/*
 * pltsyms.c - PLT stubs named from the GOT slot each one jumps through
 * (pltsyms.h).  The slot, not the entry's position, ties a stub to its
 * relocation: that holds for .plt, .plt.sec (IBT) and .plt.got alike,
 * whatever order the linker laid them out in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pltsyms.h"

/* A GOT slot and the symbol the dynamic linker puts there. */
struct slot {
	uint64_t addr;
	const char *name;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Adds the named JUMP_SLOT and GLOB_DAT relocations of RELA section @scn. */
static int slots__add_rela(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slot **v,
			   size_t *n, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;
	size_t i, nrel;

	if (!d || !syms || !sh->sh_entsize || !gelf_getshdr(symscn, &symsh))
		return 0;
	nrel = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;
		unsigned long type;

		if (!gelf_getrela(d, (int)i, &r))
			break;
		type = GELF_R_TYPE(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !GELF_R_SYM(r.r_info) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(elf, symsh.sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		if (array__grow((void **)v, cap, *n, sizeof(**v)))
			return -ENOMEM;
		(*v)[(*n)++] = (struct slot){ r.r_offset, name };
	}
	return 0;
}

static const char *slots__find(const struct slot *v, size_t n, uint64_t addr)
{
	struct slot key = { addr, NULL };
	const struct slot *s = bsearch(&key, v, n, sizeof(*v), slot_cmp);

	return s ? s->name : NULL;
}

/*
 * The GOT slot the stub at @p (@len bytes, at address @addr) jumps
 * through, or 0: `[endbr64] [bnd] jmp *disp32(%rip)` at its start.
 */
static uint64_t stub_slot(const uint8_t *p, size_t len, uint64_t addr)
{
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		i = 4;		/* endbr64 */
	if (i < len && p[i] == 0xf2)
		i++;		/* bnd */
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	memcpy(&disp, p + i + 2, sizeof(disp));	/* x86-64: little-endian, as we are */
	return addr + i + 6 + (uint64_t)(int64_t)disp;
}

int pltsyms__read(Elf *elf, uint64_t bias, struct arena *names, struct plt_stub **out, size_t *n)
{
	struct slot *slots = NULL;
	struct plt_stub *stubs = NULL;
	size_t nslots = 0, cslots = 0, nstubs = 0, cstubs = 0, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA) {
			err = slots__add_rela(elf, scn, &sh, &slots, &nslots, &cslots);
			if (err)
				goto out;
		}
	}
	if (!nslots)
		goto out;
	qsort(slots, nslots, sizeof(*slots), slot_cmp);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		Elf_Data *d;
		uint64_t step, off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") &&
			       strcmp(sname, ".plt.got")))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		/* 16-byte entries; .plt.got's are 8 without IBT (sh_entsize). */
		step = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : 16;
		for (off = 0; off + step <= sh.sh_size; off += step) {
			uint64_t slot = stub_slot((const uint8_t *)d->d_buf + off, step,
						  sh.sh_addr + off);
			const char *name = slot ? slots__find(slots, nslots, slot) : NULL;
			size_t len;
			char *s;

			if (!name)
				continue;
			len = strlen(name);
			s = arena__alloc(names, len + 5);
			if (!s || array__grow((void **)&stubs, &cstubs, nstubs, sizeof(*stubs))) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(s, name, len);
			memcpy(s + len, "@plt", 5);
			stubs[nstubs++] = (struct plt_stub){ sh.sh_addr + off + bias, step, s };
		}
	}
out:
	free(slots);
	if (err) {
		free(stubs);
		return err;
	}
	*out = stubs;
	*n = nstubs;
	return 0;
}
