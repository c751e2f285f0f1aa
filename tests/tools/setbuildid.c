// SPDX-License-Identifier: BSD-2-Clause
/*
 * setbuildid - writes a new GNU build-id into an ELF file's existing
 * NT_GNU_BUILD_ID note, in place (tests/e2e/record_slowcfi.sh: copies of
 * one library that the kernel and the recorder must take for different
 * files).
 *
 *   setbuildid FILE HEXID
 *
 * HEXID must have as many bytes as the note's descriptor (20 for ld's
 * sha1).  The note is found through the program headers (PT_NOTE), as the
 * kernel's build-id reader finds it; nothing else in FILE changes.
 * 64-bit little-endian ELF only, like the recorder it feeds.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hex_id(const char *s, unsigned char *id, size_t max, size_t *len)
{
	size_t n = strlen(s), i;

	if (n % 2 || n / 2 > max || !n)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		id[i] = (unsigned char)b;
	}
	*len = n / 2;
	return 0;
}

/* The file offset of the build-id's descriptor in the notes [@off, @off +
 * @size) of @fd, and its size; -ENOENT if none. */
static int find_in_notes(int fd, uint64_t off, uint64_t size, uint64_t *desc, size_t *dsz)
{
	unsigned char buf[4096];
	uint64_t p = 0;

	if (size > sizeof(buf))
		size = sizeof(buf);
	if (pread(fd, buf, size, (off_t)off) != (ssize_t)size)
		return -EIO;
	while (p + sizeof(Elf64_Nhdr) <= size) {
		Elf64_Nhdr nh;
		uint64_t name, d;

		memcpy(&nh, buf + p, sizeof(nh));
		name = p + sizeof(nh);
		d = name + ((nh.n_namesz + 3) & ~3u);
		if (d + nh.n_descsz > size)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name, "GNU", 4) == 0) {
			*desc = off + d;
			*dsz = nh.n_descsz;
			return 0;
		}
		p = d + ((nh.n_descsz + 3) & ~3u);
	}
	return -ENOENT;
}

int main(int argc, char **argv)
{
	unsigned char id[64];
	Elf64_Ehdr eh;
	uint64_t desc = 0;
	size_t len, dsz = 0;
	int fd, i, err = -ENOENT;

	if (argc != 3 || hex_id(argv[2], id, sizeof(id), &len)) {
		fprintf(stderr, "usage: setbuildid FILE HEXID\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		fprintf(stderr, "setbuildid: %s: not a 64-bit little-endian ELF file\n", argv[1]);
		return 1;
	}
	for (i = 0; i < eh.e_phnum && err == -ENOENT; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph)) {
			err = -EIO;
			break;
		}
		if (ph.p_type == PT_NOTE)
			err = find_in_notes(fd, ph.p_offset, ph.p_filesz, &desc, &dsz);
	}
	if (!err && dsz != len) {
		fprintf(stderr, "setbuildid: %s: its build-id has %zu bytes, not %zu\n", argv[1], dsz,
			len);
		return 1;
	}
	if (!err && pwrite(fd, id, len, (off_t)desc) != (ssize_t)len)
		err = -errno;
	if (err || close(fd)) {
		fprintf(stderr, "setbuildid: %s: %s\n", argv[1],
			err == -ENOENT ? "no GNU build-id note" : strerror(err ? -err : errno));
		return 1;
	}
	return 0;
}
