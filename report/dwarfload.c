// SPDX-License-Identifier: BSD-2-Clause
/*
 * DWARF from zlib-compressed debug sections, inflated only as far as asked
 * (see dwarfload.h for why).
 *
 * How libdw is made to read our buffers: for each compressed section it
 * would read, libelf's in-memory copy of the section header (the file is
 * never written) loses SHF_COMPRESSED, and libelf's data descriptor for
 * the section is pointed at our inflated buffer; dwarf_begin_elf() then
 * takes that same descriptor as the section's data (elf_getdata() returns
 * it again).  Sections libdw reads but no lookup of ours needs (locations,
 * CFI, macros; lines unless asked) become SHT_NOBITS in that copy, which
 * dwarf_begin_elf() skips, so they are never inflated.
 *
 * .debug_info is one zlib stream: a CU is reached only by inflating all
 * that precedes it.  Its buffer has the full size from the start, so
 * pointers into it stay valid, and the descriptor's d_size is the length
 * inflated so far, which libdw reads whenever it checks an offset.  libdw
 * interns units in order up to the one asked for, so every unit it touches
 * lies in the inflated part.  A unit whose abbreviations allow references
 * outside itself (DW_FORM_ref_addr and kin), or which is not a plain
 * compile unit, makes us inflate the rest at once: then libdw sees exactly
 * what it would have seen.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "dwarfload.h"
#include "idmap.h"
#include "util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The sections libdw 0.188 reads (dwarf_begin_elf.c), by what we do. */
enum {
	SEC_INFO, SEC_ABBREV, SEC_STR, SEC_STR_OFFSETS, SEC_LINE_STR, SEC_ADDR,
	SEC_RANGES, SEC_RNGLISTS, SEC_ARANGES, SEC_LINE, NR_SECS
};

static const char *const sec_names[NR_SECS] = {
	[SEC_INFO] = ".debug_info",
	[SEC_ABBREV] = ".debug_abbrev",
	[SEC_STR] = ".debug_str",
	[SEC_STR_OFFSETS] = ".debug_str_offsets",
	[SEC_LINE_STR] = ".debug_line_str",
	[SEC_ADDR] = ".debug_addr",
	[SEC_RANGES] = ".debug_ranges",
	[SEC_RNGLISTS] = ".debug_rnglists",
	[SEC_ARANGES] = ".debug_aranges",
	[SEC_LINE] = ".debug_line",
};

/* Read by libdw, never needed by a symbol, inline or line lookup. */
static const char *const unused_names[] = {
	".debug_loc", ".debug_loclists", ".debug_frame", ".debug_macro", ".debug_macinfo",
	".debug_pubnames",
};

/* Sections whose presence means more than this loader models. */
static const char *const unsupported_names[] = {
	".debug_types", ".gnu_debugaltlink",
};

/* .debug_info is inflated in steps of at least this much: each inflate()
 * call has a cost, and the next CU asked for is often close by. */
#define INFO_STEP (64u << 10)

/* Largest unit header (DWARF64 v5 skeleton/type unit): what must be inflated
 * before dwarf_next_unit() may read a header. */
#define MAX_UNIT_HEADER 40

struct dw_sec {
	Elf_Scn *scn;		/* NULL: no such section */
	Elf_Data *data;		/* libelf's descriptor, pointed at buf */
	unsigned char *buf;	/* ours, inflated; NULL: the file's bytes are used */
	const unsigned char *raw;	/* the deflated bytes, in the file's mapping */
	size_t raw_size;
	uint64_t size;		/* inflated size */
	uint64_t done;		/* inflated so far */
	uint64_t align;
};

struct arange {
	uint64_t addr, len;
	uint64_t unit;		/* unit header offset in .debug_info, as recorded */
	size_t order;		/* position in the section, for a stable sort */
};

/* A unit of .debug_info, in section order. */
struct unit {
	uint64_t start, end;	/* header offset; one past the unit */
	uint64_t die;		/* offset of its first DIE */
	uint64_t abbrev;	/* its abbreviation table in .debug_abbrev */
};

struct dwarf_load {
	int fd;
	Elf *elf;
	Dwarf *dw;
	void *mem;		/* one mapping for every inflated section */
	size_t mem_size;
	struct dw_sec sec[NR_SECS];
	z_stream zs;		/* .debug_info's */
	int zs_live;
	struct arange *ar;	/* sorted by address */
	size_t nr_ar;
	size_t *grp;		/* first index in ar of each run of one unit */
	size_t nr_grp;
	struct unit *units;	/* read so far, in order */
	size_t nr_units, cap_units;
	uint64_t next_unit;	/* offset of the first unit not read yet */
	struct idmap checked;	/* unit start + 1 -> (void *)1: abbreviations checked */
	uint64_t address_sync;
	uint64_t inflated_other;	/* bytes of the sections other than .debug_info */
	pthread_t helper;	/* inflating the other sections */
	int helper_live;
	int helper_err;		/* read after dwarf_load__join() */
};

uint64_t dwarf_load__address_sync(const struct dwarf_load *d)
{
	return d->address_sync;
}

/* Waits for the helper; then every section but .debug_info is inflated. */
static int dwarf_load__join(struct dwarf_load *d)
{
	if (d->helper_live) {
		pthread_join(d->helper, NULL);
		d->helper_live = 0;
	}
	return d->helper_err;
}

uint64_t dwarf_load__inflated(struct dwarf_load *d)
{
	dwarf_load__join(d);
	return d->sec[SEC_INFO].done + d->inflated_other;
}

void dwarf_load__close(struct dwarf_load *d)
{
	if (!d)
		return;
	dwarf_load__join(d);
	/* libdw and libelf first: they point into our buffers. */
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	if (d->zs_live)
		inflateEnd(&d->zs);
	if (d->mem)
		munmap(d->mem, d->mem_size);
	free(d->ar);
	free(d->grp);
	free(d->units);
	idmap__release(&d->checked);
	free(d);
}

static int name_in(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

static int host_is_le(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

/* Reads the compression header of @s (in the file's own byte order, which
 * dwarf_load__open() made sure is ours).  0, or -ENOTSUP for anything but
 * a zlib stream (libelf 0.188 knows no other). */
static int dw_sec__chdr(struct dw_sec *s, int class, const unsigned char *file, size_t file_size,
			const GElf_Shdr *sh)
{
	uint32_t type;
	size_t hdr;

	if (sh->sh_offset > file_size || file_size - sh->sh_offset < sh->sh_size)
		return -ENOTSUP;
	s->raw = file + sh->sh_offset;
	if (class == ELFCLASS64) {
		Elf64_Chdr ch;

		hdr = sizeof(ch);
		if (sh->sh_size < hdr)
			return -ENOTSUP;
		memcpy(&ch, s->raw, sizeof(ch));
		type = ch.ch_type;
		s->size = ch.ch_size;
		s->align = ch.ch_addralign;
	} else {
		Elf32_Chdr ch;

		hdr = sizeof(ch);
		if (sh->sh_size < hdr)
			return -ENOTSUP;
		memcpy(&ch, s->raw, sizeof(ch));
		type = ch.ch_type;
		s->size = ch.ch_size;
		s->align = ch.ch_addralign;
	}
	if (type != ELFCOMPRESS_ZLIB || !s->size)
		return -ENOTSUP;
	s->raw += hdr;
	s->raw_size = sh->sh_size - hdr;
	/*
	 * Past the zlib header (RFC 1950: deflate, no preset dictionary) the
	 * stream is inflated raw, which spares zlib the Adler-32 of the output
	 * (15% of a report's instructions when it reads libc's debuginfo).
	 * The build-id match is what says this is the right file; a damaged
	 * stream still fails to inflate, or to parse as DWARF.
	 */
	if (s->raw_size < 2 || (s->raw[0] & 0x0f) != 8 || (s->raw[0] >> 4) > 7 ||
	    ((s->raw[0] << 8) | s->raw[1]) % 31 || (s->raw[1] & 0x20))
		return -ENOTSUP;
	s->raw += 2;
	s->raw_size -= 2;
	return 0;
}

/* Hands the section to libdw as our buffer, @size bytes of it, after
 * clearing SHF_COMPRESSED in libelf's copy of its header.  libdw keeps the
 * descriptor and reads the bytes only when a lookup needs them. */
static int dw_sec__install(struct dw_sec *s, uint64_t size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(s->scn, &sh))
		return -EBADMSG;
	sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	if (!gelf_update_shdr(s->scn, &sh))
		return -EBADMSG;
	s->data = elf_getdata(s->scn, NULL);
	if (!s->data)
		return -EBADMSG;
	s->data->d_buf = s->buf;
	s->data->d_size = size;
	s->data->d_type = ELF_T_BYTE;
	s->data->d_align = s->align ? s->align : 1;
	return 0;
}

static int hide_section(Elf_Scn *scn)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return -EBADMSG;
	sh.sh_type = SHT_NOBITS;
	return gelf_update_shdr(scn, &sh) ? 0 : -EBADMSG;
}

static int dw_sec__inflate_all(struct dwarf_load *d, struct dw_sec *s)
{
	z_stream zs = { 0 };
	int r;

	if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)s->raw;
	zs.avail_in = (uInt)s->raw_size;
	zs.next_out = s->buf;
	zs.avail_out = (uInt)s->size;
	r = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (r != Z_STREAM_END || zs.total_out != s->size)
		return -EBADMSG;
	s->done = s->size;
	d->inflated_other += s->size;
	return 0;
}

/* Inflates .debug_info through offset @want at least, and shows libdw the
 * new length. */
static int info__inflate_to(struct dwarf_load *d, uint64_t want)
{
	struct dw_sec *s = &d->sec[SEC_INFO];

	if (want <= s->done)
		return 0;
	if (want < s->done + INFO_STEP)
		want = s->done + INFO_STEP;
	if (want > s->size)
		want = s->size;
	while (s->done < want) {
		uint64_t n = want - s->done;
		int r;

		d->zs.next_out = s->buf + s->done;
		d->zs.avail_out = n > 1u << 30 ? 1u << 30 : (uInt)n;
		r = inflate(&d->zs, Z_SYNC_FLUSH);
		s->done = (uint64_t)(d->zs.next_out - s->buf);
		if (r == Z_STREAM_END && s->done != s->size)
			return -EBADMSG;
		if (r != Z_OK && r != Z_STREAM_END)
			return -EBADMSG;
		if (r == Z_STREAM_END)
			break;
	}
	if (s->done < want)
		return -EBADMSG;
	if (s->data)
		s->data->d_size = s->done;
	return 0;
}

static uint64_t rd_u(const unsigned char *p, unsigned int n)
{
	uint64_t v = 0;

	if (n == 2) {
		uint16_t x;

		memcpy(&x, p, 2);
		v = x;
	} else if (n == 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		v = x;
	} else if (n == 8) {
		memcpy(&v, p, 8);
	}
	return v;
}

/*
 * Sorts by address, keeping section order among equal addresses as
 * dwarf_getaranges()'s merge sort (glibc's qsort) does: an LSD radix sort
 * is stable, and sorts libc's 37000 ranges in a tenth of qsort's time.
 */
static int aranges_sort(struct dwarf_load *d)
{
	void *ar = d->ar;
	int err = radix_sort_u64(&ar, d->nr_ar, sizeof(*d->ar), offsetof(struct arange, addr));

	d->ar = ar;
	return err;
}

/*
 * Reads .debug_aranges as dwarf_getaranges() does (sets of address/length
 * pairs, each set ended by a 0/0 pair, its length field only telling the
 * offset size), sorted by address, then the runs of one unit, which is how
 * libdwfl finds the CU of an address.  -ENOTSUP when libdw would refuse it.
 */
static int dwarf_load__read_aranges(struct dwarf_load *d)
{
	const Elf_Data *s = d->sec[SEC_ARANGES].data;
	const unsigned char *p = s->d_buf, *end = p + s->d_size;
	size_t cap = 0, i;

	while (p < end) {
		const unsigned char *hdr = p;
		unsigned int lbytes = 4, asize, pad;
		uint64_t len, unit;

		if (end - p < 4)
			return -ENOTSUP;
		len = rd_u(p, 4);
		p += 4;
		if (len == 0xffffffffu) {
			if (end - p < 8)
				return -ENOTSUP;
			lbytes = 8;
			p += 8;
		} else if (len >= 0xfffffff0u) {
			return -ENOTSUP;
		}
		if (end - p < 2 || rd_u(p, 2) != 2)
			return -ENOTSUP;
		p += 2;
		if ((size_t)(end - p) < lbytes)
			return -ENOTSUP;
		unit = rd_u(p, lbytes);
		p += lbytes;
		if (unit > d->sec[SEC_INFO].size || d->sec[SEC_INFO].size - unit < 4)
			return -ENOTSUP;
		if (end - p < 2)
			return -ENOTSUP;
		asize = p[0];
		if ((asize != 4 && asize != 8) || p[1] != 0)
			return -ENOTSUP;
		p += 2;
		pad = (2 * asize - (unsigned int)((p - hdr) % (2 * asize))) % (2 * asize);
		if ((size_t)(end - p) < pad)
			return -ENOTSUP;
		p += pad;
		for (;;) {
			uint64_t a, l;

			if ((size_t)(end - p) < 2 * asize)
				return -ENOTSUP;
			a = rd_u(p, asize);
			l = rd_u(p + asize, asize);
			p += 2 * asize;
			if (!a && !l)
				break;
			if (d->nr_ar == cap) {
				size_t n = cap ? 2 * cap : 256;
				struct arange *na = realloc(d->ar, n * sizeof(*na));

				if (!na)
					return -ENOMEM;
				d->ar = na;
				cap = n;
			}
			d->ar[d->nr_ar] = (struct arange){ a, l, unit, d->nr_ar };
			d->nr_ar++;
		}
	}
	if (!d->nr_ar)
		return -ENOTSUP;
	if (aranges_sort(d))
		return -ENOMEM;
	d->grp = calloc(d->nr_ar, sizeof(*d->grp));
	if (!d->grp)
		return -ENOMEM;
	for (i = 0; i < d->nr_ar; i++)
		if (!i || d->ar[i].unit != d->ar[i - 1].unit)
			d->grp[d->nr_grp++] = i;
	return 0;
}

/* dwfl's addrarange(): the run whose first range starts at or below
 * @addr, the gaps between runs counting as the run before; past the last
 * range's end nothing. */
static const struct arange *dwarf_load__find_arange(const struct dwarf_load *d, uint64_t addr)
{
	size_t l = 0, u = d->nr_grp;

	while (l < u) {
		size_t idx = (l + u) / 2;
		uint64_t start = d->ar[d->grp[idx]].addr;

		if (addr < start) {
			u = idx;
			continue;
		}
		if (addr > start) {
			if (idx + 1 < d->nr_grp) {
				if (addr >= d->ar[d->grp[idx + 1]].addr) {
					l = idx + 1;
					continue;
				}
			} else {
				const struct arange *last = &d->ar[d->nr_ar - 1];

				if (addr > last->addr + last->len)
					break;
			}
		}
		return &d->ar[d->grp[idx]];
	}
	return NULL;
}

/* Reads the unit headers up to the unit holding offset @off (inflating
 * them), as libdw interns them. */
static int dwarf_load__unit_at(struct dwarf_load *d, uint64_t off, const struct unit **out)
{
	const struct dw_sec *info = &d->sec[SEC_INFO];
	size_t lo, hi;
	int err;

	while (d->next_unit <= off) {
		uint64_t start = d->next_unit, len, end;
		Dwarf_Off next, abbrev;
		size_t hsize;
		unsigned int lbytes = 4;

		err = info__inflate_to(d, start + MAX_UNIT_HEADER);
		if (err)
			return err;
		if (info->done - start < 4)
			return -EBADMSG;
		len = rd_u(info->buf + start, 4);
		if (len == 0xffffffffu) {
			if (info->done - start < 12)
				return -EBADMSG;
			len = rd_u(info->buf + start + 4, 8);
			lbytes = 12;
		}
		if (len > info->size - start - lbytes)
			return -EBADMSG;
		end = start + lbytes + len;
		err = info__inflate_to(d, end);
		if (err)
			return err;
		if (dwarf_next_unit(d->dw, start, &next, &hsize, NULL, &abbrev, NULL, NULL, NULL,
				    NULL) != 0 || next != end)
			return -EBADMSG;
		if (d->nr_units == d->cap_units) {
			size_t n = d->cap_units ? 2 * d->cap_units : 64;
			struct unit *nu = realloc(d->units, n * sizeof(*nu));

			if (!nu)
				return -ENOMEM;
			d->units = nu;
			d->cap_units = n;
		}
		d->units[d->nr_units++] = (struct unit){ start, end, start + hsize, abbrev };
		d->next_unit = end;
	}
	/* As __libdw_findcu(): the unit whose range holds @off. */
	lo = 0;
	hi = d->nr_units;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->units[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -EBADMSG;
	*out = &d->units[lo - 1];
	return 0;
}

static int uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end) {
		unsigned char b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return 0;
	}
	return -EBADMSG;	/* truncated */
}

/* 1 if a DIE of a unit with these abbreviations may point outside it, or
 * its forms cannot be known from the abbreviations alone. */
static int abbrevs_leave_unit(const struct dw_sec *ab, uint64_t off)
{
	const unsigned char *p, *end;
	uint64_t code, tag, name, form, skip;

	if (!ab->data || off >= ab->data->d_size)
		return 1;
	p = (const unsigned char *)ab->data->d_buf + off;
	end = (const unsigned char *)ab->data->d_buf + ab->data->d_size;
	for (;;) {
		if (uleb(&p, end, &code))
			return 1;
		if (!code)
			return 0;
		if (uleb(&p, end, &tag) || p >= end)
			return 1;
		p++;	/* children */
		do {
			if (uleb(&p, end, &name) || uleb(&p, end, &form))
				return 1;
			switch (form) {
			case DW_FORM_ref_addr:
			case DW_FORM_ref_sig8:
			case DW_FORM_indirect:
			case DW_FORM_ref_sup4:
			case DW_FORM_ref_sup8:
			case DW_FORM_strp_sup:
			case DW_FORM_GNU_ref_alt:
			case DW_FORM_GNU_strp_alt:
				return 1;
			case DW_FORM_implicit_const:
				if (uleb(&p, end, &skip))	/* an SLEB128: same length */
					return 1;
				break;
			}
		} while (name || form);
	}
}

int dwarf_load__addrdie(struct dwarf_load *d, uint64_t addr, Dwarf_Die *cudie)
{
	const struct arange *a = dwarf_load__find_arange(d, addr);
	const struct unit *u;
	uint8_t unit_type;
	int err;

	if (!a)
		return -ENOENT;
	err = dwarf_load__unit_at(d, a->unit, &u);
	err = err ?: dwarf_load__join(d);
	if (err)
		return err;
	/* As intern_cu(): an offset at the very end is no CU. */
	if (u->die + 4 >= d->sec[SEC_INFO].size)
		return -ENOENT;
	if (!dwarf_offdie(d->dw, u->die, cudie))
		return -ENOENT;
	if (!idmap__find_ptr(&d->checked, u->start + 1)) {
		/* Before anyone reads a DIE of it: a unit that can lead
		 * elsewhere gets the whole section. */
		if (dwarf_cu_info(cudie->cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL))
			return -EBADMSG;
		if (unit_type != DW_UT_compile || abbrevs_leave_unit(&d->sec[SEC_ABBREV], u->abbrev)) {
			err = info__inflate_to(d, d->sec[SEC_INFO].size);
			if (err)
				return err;
		}
		if (idmap__set_ptr(&d->checked, u->start + 1, (void *)1))
			return -ENOMEM;
	}
	return 0;
}

/* Finds the sections, checks the file is one we read exactly as libdw
 * would, and hides the compressed sections no lookup needs. */
static int dwarf_load__classify(struct dwarf_load *d, int lines)
{
	const unsigned char *file;
	size_t shstrndx, file_size;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int class, err;

	if (!gelf_getehdr(d->elf, &eh))
		return -ENOTSUP;
	if (eh.e_ident[EI_DATA] != (host_is_le() ? ELFDATA2LSB : ELFDATA2MSB))
		return -ENOTSUP;
	class = eh.e_ident[EI_CLASS];
	if (elf_getshdrstrndx(d->elf, &shstrndx))
		return -ENOTSUP;
	file = (const unsigned char *)elf_rawfile(d->elf, &file_size);
	if (!file)
		return -ENOTSUP;
	while ((scn = elf_nextscn(d->elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		size_t len;
		int i;

		if (!gelf_getshdr(scn, &sh))
			return -ENOTSUP;
		name = elf_strptr(d->elf, shstrndx, sh.sh_name);
		if (!name)
			return -ENOTSUP;
		if (strncmp(name, ".zdebug", 7) == 0 || strncmp(name, ".gnu.debuglto_", 14) == 0 ||
		    name_in(name, unsupported_names, ARRAY_SIZE(unsupported_names)))
			return -ENOTSUP;
		if (strncmp(name, ".debug_", 7) != 0 || sh.sh_type == SHT_NOBITS)
			continue;
		len = strlen(name);
		if ((len > 4 && strcmp(name + len - 4, ".dwo") == 0) || (sh.sh_flags & SHF_GROUP))
			return -ENOTSUP;
		for (i = 0; i < NR_SECS; i++)
			if (strcmp(name, sec_names[i]) == 0)
				break;
		if (i == SEC_LINE && !lines)
			i = NR_SECS;
		if (i < NR_SECS) {
			struct dw_sec *s = &d->sec[i];

			if (s->scn)
				return -ENOTSUP;	/* twice: libdw keeps the first */
			s->scn = scn;
			if (sh.sh_flags & SHF_COMPRESSED) {
				err = dw_sec__chdr(s, class, file, file_size, &sh);
				if (err)
					return err;
				if (s->size > UINT32_MAX || s->raw_size > UINT32_MAX)
					return -ENOTSUP;	/* zlib counts in 32 bits */
			}
			continue;
		}
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (strcmp(name, ".debug_line") == 0 ||
		     name_in(name, unused_names, ARRAY_SIZE(unused_names)))) {
			err = hide_section(scn);
			if (err)
				return err;
		}
	}
	/* Uncompressed .debug_info: libdw maps it for free, nothing to gain. */
	if (!d->sec[SEC_INFO].raw || !d->sec[SEC_ARANGES].scn)
		return -ENOTSUP;
	return 0;
}

static uint64_t elf_address_sync(Elf *elf)
{
	GElf_Ehdr eh;
	size_t n, i;

	if (!gelf_getehdr(elf, &eh) || eh.e_type == ET_REL || elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			return ph.p_vaddr + ph.p_memsz;
	}
	return 0;
}

#define HUGE_PAGE (2u << 20)
#define BUF_ALIGN 64

/*
 * The inflated sections get one anonymous mapping, in transparent huge
 * pages where the system allows them (MADV_HUGEPAGE): a page fault costs
 * ~3 us on a VM, and libc's sections are over a thousand 4 KiB pages,
 * ~4 ms of a 30 ms report, against a few 2 MiB faults.  Pages of the
 * .debug_info buffer past what gets inflated are never touched.
 */
static int dwarf_load__map_buffers(struct dwarf_load *d)
{
	size_t total = 0, off = 0, i;
	uintptr_t base;

	for (i = 0; i < NR_SECS; i++)
		if (d->sec[i].raw)
			total += (d->sec[i].size + BUF_ALIGN - 1) & ~(size_t)(BUF_ALIGN - 1);
	d->mem_size = total + HUGE_PAGE;
	d->mem = mmap(NULL, d->mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->mem == MAP_FAILED) {
		d->mem = NULL;
		return -ENOMEM;
	}
	base = ((uintptr_t)d->mem + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	madvise((void *)base, total, MADV_HUGEPAGE);	/* a hint: fine if refused */
	for (i = 0; i < NR_SECS; i++) {
		if (!d->sec[i].raw)
			continue;
		d->sec[i].buf = (unsigned char *)base + off;
		off += (d->sec[i].size + BUF_ALIGN - 1) & ~(size_t)(BUF_ALIGN - 1);
	}
	return 0;
}

/*
 * Inflates every section but .debug_info and .debug_aranges, on another
 * CPU while the caller inflates .debug_info up to the first CU asked for:
 * each is about a fifth of the work for libc.  It only writes its own
 * buffers; libdw reads them after dwarf_load__join().
 */
static void *dwarf_load__helper(void *arg)
{
	struct dwarf_load *d = arg;
	int i;

	for (i = 0; i < NR_SECS && !d->helper_err; i++)
		if (i != SEC_INFO && i != SEC_ARANGES && d->sec[i].raw)
			d->helper_err = dw_sec__inflate_all(d, &d->sec[i]);
	return NULL;
}

/*
 * The elfutils release whose libelf/libdw behaviour this loader was checked
 * against, byte for byte (check_dwarfload): it relies on how libdw 0.188
 * takes section data from libelf and re-reads .debug_info's d_size.  Any
 * other release gets libdwfl's own loader: slower, never wrong.
 */
#define DWARFLOAD_CHECKED_ELFUTILS "0.188"

struct dwarf_load *dwarf_load__open(const char *path, int lines)
{
	struct dwarf_load *d = NULL;
	struct dw_sec *info;
	int err = -ENOTSUP, i;
	const char *ver = dwfl_version(NULL);

	if (!ver || strcmp(ver, DWARFLOAD_CHECKED_ELFUTILS) != 0)
		goto fail;
	err = -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		err = -errno;
		goto fail;
	}
	elf_version(EV_CURRENT);
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		err = -ENOTSUP;
		goto fail;
	}
	err = dwarf_load__classify(d, lines);
	if (err)
		goto fail;
	d->address_sync = elf_address_sync(d->elf);
	err = dwarf_load__map_buffers(d);
	if (err)
		goto fail;
	/* .debug_aranges now, to find CUs; the others by the helper. */
	for (i = 0; i < NR_SECS; i++) {
		struct dw_sec *s = &d->sec[i];

		if (i == SEC_INFO || !s->scn)
			continue;
		if (s->raw) {
			err = i == SEC_ARANGES ? dw_sec__inflate_all(d, s) : 0;
			err = err ?: dw_sec__install(s, s->size);
		} else {
			s->data = elf_getdata(s->scn, NULL);
			err = s->data ? 0 : -EBADMSG;
		}
		if (err)
			goto fail;
	}
	if (pthread_create(&d->helper, NULL, dwarf_load__helper, d) == 0)
		d->helper_live = 1;
	else
		dwarf_load__helper(d);	/* no thread: inflate them here */
	info = &d->sec[SEC_INFO];
	if (inflateInit2(&d->zs, -MAX_WBITS) != Z_OK) {
		err = -ENOMEM;
		goto fail;
	}
	d->zs_live = 1;
	d->zs.next_in = (Bytef *)info->raw;
	d->zs.avail_in = (uInt)info->raw_size;
	/* libdw ignores an empty section: show it a first step. */
	err = info__inflate_to(d, 1);
	err = err ?: dw_sec__install(info, info->done);
	err = err ?: dwarf_load__read_aranges(d);
	if (err)
		goto fail;
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		err = -ENOTSUP;
		goto fail;
	}
	return d;
fail:
	dwarf_load__close(d);
	errno = -err;
	return NULL;
}
