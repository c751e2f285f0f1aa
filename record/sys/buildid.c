// SPDX-License-Identifier: BSD-2-Clause
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "readall.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

/* The most program headers we look at; real binaries have about a dozen. */
#define MAX_PHDRS 256
/* The most bytes of program headers read at once. */
#define PHDRS_READ_MAX (64 * 1024)

static size_t align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

int buildid__from_notes(const void *notes, size_t size, uint8_t *out, size_t out_size)
{
	const uint8_t *p = notes;
	size_t off = 0;

	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh; /* same layout as Elf32_Nhdr: three 32-bit words */
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh.n_namesz > size - name_off)
			return -EBADMSG;
		desc_off = name_off + align4(nh.n_namesz);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			return -EBADMSG;
		next = desc_off + align4(nh.n_descsz);
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < out_size ? nh.n_descsz : out_size;

			memcpy(out, p + desc_off, n);
			return (int)n;
		}
		if (next <= off || next > size)
			break;
		off = next;
	}
	return 0;
}

/* Reads @size bytes at @off from an fd or from memory. */
struct elf_src {
	int fd;
	const uint8_t *mem;
	size_t mem_size;
};

static int src_read(const struct elf_src *src, uint64_t off, void *buf, size_t size)
{
	ssize_t n;

	if (src->mem) {
		if (off > src->mem_size || size > src->mem_size - off)
			return -EBADMSG;
		memcpy(buf, src->mem + off, size);
		return 0;
	}
	n = pread(src->fd, buf, size, (off_t)off);
	if (n < 0)
		return -errno;
	if ((size_t)n != size)
		return -EBADMSG;
	return 0;
}

/* Program header fields we use, class-independent. */
struct phdr {
	uint32_t type;
	uint64_t offset;
	uint64_t filesz;
};

static int read_phdrs(const struct elf_src *src, struct phdr *ph, size_t *nr)
{
	unsigned char ident[EI_NIDENT];
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} eh;
	union {
		Elf64_Phdr p64;
		Elf32_Phdr p32;
	} p;
	uint64_t phoff;
	size_t phentsize, phnum, i;
	uint8_t *table;
	int is64, err;

	err = src_read(src, 0, ident, sizeof(ident));
	if (err)
		return err == -EBADMSG ? -ENOEXEC : err;
	if (memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != HOST_ELFDATA)
		return -ENOEXEC;
	if (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32)
		return -ENOEXEC;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	/* Both classes name the fields alike; only the widths differ. */
	err = src_read(src, 0, &eh, is64 ? sizeof(eh.e64) : sizeof(eh.e32));
	if (err)
		return err;
	phoff = is64 ? eh.e64.e_phoff : eh.e32.e_phoff;
	phentsize = is64 ? eh.e64.e_phentsize : eh.e32.e_phentsize;
	phnum = is64 ? eh.e64.e_phnum : eh.e32.e_phnum;
	if (phnum && phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -EBADMSG;
	if (phnum > MAX_PHDRS)
		return -EBADMSG;
	/* The whole table in one read (a new binary's build-id is read by
	 * every recorder seeing its first process), header by header only
	 * when its entries are padded past PHDRS_READ_MAX. */
	table = phnum && phnum * phentsize <= PHDRS_READ_MAX ? malloc(phnum * phentsize) : NULL;
	if (table) {
		err = src_read(src, phoff, table, phnum * phentsize);
		if (err)
			goto out;
	}
	for (i = 0; i < phnum; i++) {
		if (table)
			memcpy(&p, table + i * phentsize, is64 ? sizeof(p.p64) : sizeof(p.p32));
		else
			err = src_read(src, phoff + i * phentsize, &p,
				       is64 ? sizeof(p.p64) : sizeof(p.p32));
		if (err)
			goto out;
		ph[i].type = is64 ? p.p64.p_type : p.p32.p_type;
		ph[i].offset = is64 ? p.p64.p_offset : p.p32.p_offset;
		ph[i].filesz = is64 ? p.p64.p_filesz : p.p32.p_filesz;
	}
	*nr = phnum;
out:
	free(table);
	return err;
}

static int from_src(const struct elf_src *src, uint8_t *out, size_t out_size)
{
	struct phdr *ph = NULL;
	uint8_t *buf = NULL;
	size_t nr = 0, i;
	int err;

	ph = calloc(MAX_PHDRS, sizeof(*ph));
	buf = malloc(BUILDID_MAX_NOTES);
	if (!ph || !buf) {
		err = -ENOMEM;
		goto out;
	}
	err = read_phdrs(src, ph, &nr);
	if (err)
		goto out;
	for (i = 0; i < nr; i++) {
		if (ph[i].type != PT_NOTE || ph[i].filesz == 0 || ph[i].filesz > BUILDID_MAX_NOTES)
			continue;
		err = src_read(src, ph[i].offset, buf, ph[i].filesz);
		if (err)
			goto out;
		err = buildid__from_notes(buf, ph[i].filesz, out, out_size);
		if (err)
			goto out; /* found (> 0) or malformed (< 0) */
	}
	err = 0;
out:
	free(ph);
	free(buf);
	return err;
}

int buildid__from_elf_fd(int fd, uint8_t *out, size_t out_size)
{
	struct elf_src src = { .fd = fd };

	return from_src(&src, out, out_size);
}

int buildid__from_elf_mem(const void *img, size_t size, uint8_t *out, size_t out_size)
{
	struct elf_src src = { .fd = -1, .mem = img, .mem_size = size };

	return from_src(&src, out, out_size);
}

int buildid__from_note_file(const char *path, uint8_t *out, size_t out_size)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	/* sysfs note files are small and may return short reads; as with
	 * PT_NOTE segments, only the first BUILDID_MAX_NOTES bytes count. */
	err = read_all(path, BUILDID_MAX_NOTES, &buf, &len);
	if (!err)
		err = buildid__from_notes((uint8_t *)buf, len < BUILDID_MAX_NOTES ? len : BUILDID_MAX_NOTES,
					  out, out_size);
	free(buf);
	return err;
}
