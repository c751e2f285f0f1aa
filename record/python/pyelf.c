// SPDX-License-Identifier: BSD-2-Clause
/*
 * pyelf.c - tells a CPython interpreter's ELF file and what the Python
 * frame walk needs from it (pyelf.h), with libelf: the dynamic (and
 * static) symbol tables for _PyRuntime, PyCode_Type and Py_Version, the
 * PT_LOAD segments, and bytes at a virtual address.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyelf.h"
#include "pytables.h"

int pyelf__name_minor(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	char *end;
	long minor;

	base = base ? base + 1 : path;
	if (strncmp(base, "python3", 7) == 0)
		p = base + 7;
	else if (strncmp(base, "libpython3", 10) == 0)
		p = base + 10;
	else
		return -1;
	if (*p != '.')
		return *p == '\0' || *p == ' ' ? 0 : -1;
	minor = strtol(p + 1, &end, 10);
	if (end == p + 1 || minor < 0 || minor > 255)
		return -1;
	return (int)minor;
}

/* Bytes at virtual address @vaddr of the file into @buf: how many
 * (fewer where the segment's file bytes end; 0 if none). */
static size_t read_vaddr(int fd, const struct pyelf *pe, uint64_t vaddr, void *buf, size_t size)
{
	uint32_t i;
	ssize_t n;

	for (i = 0; i < pe->nr_loads; i++) {
		const struct pyelf_load *l = &pe->loads[i];

		if (vaddr < l->vaddr || vaddr >= l->vaddr + l->filesz)
			continue;
		if (size > l->vaddr + l->filesz - vaddr)
			size = l->vaddr + l->filesz - vaddr;
		n = pread(fd, buf, size, (off_t)(l->offset + (vaddr - l->vaddr)));
		return n > 0 ? (size_t)n : 0;
	}
	return 0;
}

static void find_symbols(Elf *elf, uint64_t *runtime, uint64_t *code_type, uint64_t *version)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			if (strcmp(name, "_PyRuntime") == 0)
				*runtime = sym.st_value;
			else if (strcmp(name, "PyCode_Type") == 0)
				*code_type = sym.st_value;
			else if (strcmp(name, "Py_Version") == 0)
				*version = sym.st_value;
		}
		if (*runtime && *code_type && *version)
			return;
	}
}

int pyelf__inspect(int fd, const char *path, struct pyelf *out)
{
	uint64_t version_at = 0;
	size_t nph, i;
	Elf *elf;
	int err = 0, minor;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    elf_getphdrnum(elf, &nph)) {
		err = -EINVAL;
		goto out;
	}
	for (i = 0; i < nph && out->nr_loads < PYELF_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			out->loads[out->nr_loads++] = (struct pyelf_load){ ph.p_vaddr, ph.p_offset,
									  ph.p_filesz };
	}
	find_symbols(elf, &out->runtime, &out->code_type, &version_at);
	if (!out->runtime || !out->code_type) {
		err = -ENOENT;
		goto out;
	}
	if (version_at) {
		uint32_t hex = 0;

		/* PY_VERSION_HEX: 0x030b02f0 for 3.11.2 */
		if (read_vaddr(fd, out, version_at, &hex, sizeof(hex)) == sizeof(hex))
			out->version = hex >> 16;
	}
	if (!out->version) {
		minor = pyelf__name_minor(path);
		if (minor > 0)
			out->version = PY_VERSION(3, minor);
	}
	if (out->version < PY_VERSION_MIN || out->version > PY_VERSION_MAX) {
		err = -ENOTSUP;
		goto out;
	}
	out->debug_size = read_vaddr(fd, out, out->runtime, out->debug, sizeof(out->debug));
out:
	elf_end(elf);
	return err;
}

int pyelf__bias(const struct pyelf *pe, uint64_t start, uint64_t offset, uint64_t *bias)
{
	uint32_t i;

	for (i = 0; i < pe->nr_loads; i++) {
		const struct pyelf_load *l = &pe->loads[i];
		uint64_t off_al = l->offset & ~(uint64_t)0xfff;

		if (offset >= off_al && offset < l->offset + l->filesz) {
			*bias = start - (l->vaddr + (offset - l->offset));
			return 0;
		}
	}
	return -ENOENT;
}
