// SPDX-License-Identifier: BSD-2-Clause
/*
 * libdwfl's find_debuginfo callback, on elffind's confined search
 * (debugfind.h says why libdwfl's own is not used).  Public libdwfl API
 * only: the options ride in the module's userdata slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "debugfind.h"
#include "elfinflate.h"
#include "stk.h"

void debugfind__attach(Dwfl_Module *mod, struct debugfind *df)
{
	void **userdata = NULL;

	if (mod && dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) &&
	    userdata)
		*userdata = df;
}

/* Measures the file open on @fd (headers only; libelf maps it).  0 when
 * it may be used, -EFBIG when it is past its limit and to be refused. */
static int measure(struct debugfind *df, int fd)
{
	uint64_t limit;
	struct stat st;
	int err = 0;
	Elf *elf;

	if (fstat(fd, &st) < 0)
		return 0;	/* libdwfl will fail on it the same way */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	df->size = (uint64_t)st.st_size;
	limit = elf_inflate__limit(df->size);
	df->declared = elf_inflate__declared(elf);
	df->over = df->declared > limit;
	/* Not loading DWARF: libdwfl wants its symbol table, and inflates
	 * whatever of it is compressed right away. */
	if (df->over && (df->loading_dwarf || elf_inflate__symtab(elf, limit) > 0)) {
		df->refused = 1;
		err = -EFBIG;
	}
	elf_end(elf);
	return err;
}

int debugfind__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct debugfind *df = userdata ? *userdata : NULL;
	struct elffind_result res;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n, fd;

	(void)modname;
	(void)base;
	if (!df || !df->fo || !file_name)
		return -1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n < 0 || n > (int)STK_MAX_BUILD_ID)
		n = 0;
	if (elffind__debuginfo(df->fo, file_name, debuglink_file, debuglink_crc, bits,
			       (uint32_t)n, &res) || res.fd < 0 || !res.path) {
		elffind_result__clear(&res);
		return -1;
	}
	if (measure(df, res.fd)) {
		elffind_result__clear(&res);
		return -1;
	}
	fd = res.fd;
	*debuginfo_file_name = res.path;
	res.fd = -1;
	res.path = NULL;
	elffind_result__clear(&res);
	return fd;
}
