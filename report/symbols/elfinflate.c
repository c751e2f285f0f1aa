// SPDX-License-Identifier: BSD-2-Clause
/*
 * The inflated size an ELF's compressed sections declare, from their
 * headers alone (elfinflate.h), with libelf's public API.
 */
#include <string.h>

#include "elfinflate.h"

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* GNU .zdebug: "ZLIB", the inflated size as 8 bytes big-endian, zlib. */
static uint64_t zdebug_size(Elf_Scn *scn)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p;
	uint64_t v = 0;
	int i;

	/* Anything else libelf refuses to inflate: it costs nothing. */
	if (!d || !d->d_buf || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4) != 0)
		return 0;
	p = (const unsigned char *)d->d_buf + 4;
	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

uint64_t elf_inflate__declared(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;
	size_t shstrndx;
	int names;

	if (!elf)
		return 0;
	names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = NULL;
		GElf_Chdr ch;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED) {
			sum = add_sat(sum, gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX);
			continue;
		}
		if (names)
			name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strncmp(name, ".zdebug", 7) == 0)
			sum = add_sat(sum, zdebug_size(scn));
	}
	return sum;
}

uint64_t elf_inflate__limit(uint64_t size)
{
	return size > UINT64_MAX / ELF_INFLATE_PER_BYTE ? UINT64_MAX
							  : size * ELF_INFLATE_PER_BYTE;
}
