// SPDX-License-Identifier: BSD-2-Clause
/*
 * libdwfl's find_debuginfo callback, on elffind's confined search
 * (debugfind.h says why libdwfl's own is not used).  Public libdwfl API
 * only: the options ride in the module's userdata slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "debugfind.h"
#include "stk.h"

void debugfind__attach(Dwfl_Module *mod, const struct elffind_opts *o)
{
	void **userdata = NULL;

	if (mod && dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) &&
	    userdata)
		*userdata = (void *)o;
}

int debugfind__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct elffind_opts *o = userdata ? *userdata : NULL;
	struct elffind_result res;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n, fd;

	(void)modname;
	(void)base;
	if (!o || !file_name)
		return -1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n < 0 || n > (int)STK_MAX_BUILD_ID)
		n = 0;
	if (elffind__debuginfo(o, file_name, debuglink_file, debuglink_crc, bits,
			       (uint32_t)n, &res) || res.fd < 0 || !res.path) {
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
