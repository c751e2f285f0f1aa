/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fxelf.h - ELF helpers for the reporter's tests (header-only, included by
 * tests/tools/mkcapture.c and tests/unit/check_symbolize.c): symbol
 * addresses, call return addresses and the mappings a loader would create,
 * all read from the real fixture files so captures stay consistent with them.
 */
#ifndef STK_TESTS_FXELF_H
#define STK_TESTS_FXELF_H

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stk.h"

#define FX_PAGE 0x1000ull

static inline Elf *fx_elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

static inline void fx_elf_close(Elf *elf, int fd)
{
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* Value and size of symbol @name (.symtab, else .dynsym).  0 or -ENOENT. */
static inline int fx_sym(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT, pass;
	Elf *elf = fx_elf_open(path, &fd);

	if (!elf)
		return -ENOENT;
	for (pass = 0; pass < 2 && err; pass++) {
		scn = NULL;
		while (err && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t i;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				if (!gelf_getsym(d, (int)i, &s) || !s.st_value)
					continue;
				n = elf_strptr(elf, sh.sh_link, s.st_name);
				if (n && strcmp(n, name) == 0) {
					*value = s.st_value;
					if (size)
						*size = s.st_size;
					err = 0;
					break;
				}
			}
		}
	}
	fx_elf_close(elf, fd);
	return err;
}

/* Bytes of the file at ELF address @vaddr (from the PT_LOAD holding it). */
static inline int fx_read_vaddr(const char *path, uint64_t vaddr, void *buf, size_t n)
{
	size_t nph, i;
	int fd, err = -ENOENT;
	Elf *elf = fx_elf_open(path, &fd);

	if (!elf)
		return -ENOENT;
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (vaddr >= ph.p_vaddr && vaddr + n <= ph.p_vaddr + ph.p_filesz) {
				off_t off = (off_t)(ph.p_offset + (vaddr - ph.p_vaddr));

				err = pread(fd, buf, n, off) == (ssize_t)n ? 0 : -EIO;
				break;
			}
		}
	}
	fx_elf_close(elf, fd);
	return err;
}

/*
 * ELF address just after the first `call CALLEE` (e8 rel32) inside CALLER:
 * the return address a stack walk finds for CALLER's frame.  0 or -ENOENT.
 */
static inline int fx_call_ret(const char *path, const char *caller, const char *callee,
			      uint64_t *ret)
{
	uint64_t cs, csize, target;
	unsigned char code[4096];
	uint64_t i;

	if (fx_sym(path, caller, &cs, &csize) || fx_sym(path, callee, &target, NULL))
		return -ENOENT;
	if (csize > sizeof(code) || fx_read_vaddr(path, cs, code, csize))
		return -ENOENT;
	for (i = 0; i + 5 <= csize; i++) {
		int32_t rel;

		if (code[i] != 0xe8)
			continue;
		memcpy(&rel, code + i + 1, 4);
		if (cs + i + 5 + (uint64_t)(int64_t)rel == target) {
			*ret = cs + i + 5;
			return 0;
		}
	}
	return -ENOENT;
}

/* GNU build-id of @path into @bid (64 bytes): its size, or -ENOENT. */
static inline int fx_build_id(const char *path, uint8_t *bid)
{
	Elf_Scn *scn = NULL;
	int fd, n = -ENOENT;
	Elf *elf = fx_elf_open(path, &fd);

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0 && nh.n_descsz <= 64) {
				memcpy(bid, (char *)d->d_buf + doff, nh.n_descsz);
				n = (int)nh.n_descsz;
			}
		}
	}
	fx_elf_close(elf, fd);
	return n;
}

/* ELF type (ET_EXEC, ET_DYN) of @path, or -ENOENT. */
static inline int fx_elf_type(const char *path)
{
	GElf_Ehdr eh;
	int fd, t = -ENOENT;
	Elf *elf = fx_elf_open(path, &fd);

	if (elf && gelf_getehdr(elf, &eh))
		t = eh.e_type;
	fx_elf_close(elf, fd);
	return t;
}

/*
 * The mappings a loader creates for @path loaded at @base (ignored for
 * ET_EXEC): one per PT_LOAD, page aligned, with prot from p_flags.  Paths
 * and build-ids are left to the caller.  Returns the count or -ENOENT.
 * The runtime address of ELF address v is then fx_bias(path, base) + v.
 */
static inline int fx_mappings(const char *path, uint64_t base, struct stk_mapping *out, int max)
{
	GElf_Ehdr eh;
	size_t nph, i;
	int fd, n = 0;
	uint64_t bias;
	Elf *elf = fx_elf_open(path, &fd);

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph)) {
		fx_elf_close(elf, fd);
		return -ENOENT;
	}
	bias = eh.e_type == ET_EXEC ? 0 : base;
	for (i = 0; i < nph && n < max; i++) {
		GElf_Phdr ph;
		struct stk_mapping *m = &out[n];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		memset(m, 0, sizeof(*m));
		m->start = bias + (ph.p_vaddr & ~(FX_PAGE - 1));
		m->end = bias + ((ph.p_vaddr + ph.p_memsz + FX_PAGE - 1) & ~(FX_PAGE - 1));
		m->offset = ph.p_offset & ~(FX_PAGE - 1);
		m->prot = ((ph.p_flags & PF_R) ? PROT_READ : 0) |
			  ((ph.p_flags & PF_W) ? PROT_WRITE : 0) |
			  ((ph.p_flags & PF_X) ? PROT_EXEC : 0);
		n++;
	}
	fx_elf_close(elf, fd);
	return n;
}

static inline uint64_t fx_bias(const char *path, uint64_t base)
{
	return fx_elf_type(path) == ET_EXEC ? 0 : base;
}

#endif
