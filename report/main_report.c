// SPDX-License-Identifier: BSD-2-Clause
/* Placeholder front-end until the reporter lands: it must not pretend. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "stk.h"

int report_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("stkreport %s\n", STK_VERSION_STRING);
		return 0;
	}
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: stkreport info [--chunks] FILE.stk\n"
		       "       stkreport --version\n"
		       "Symbolized reports are not implemented yet.\n");
		return 0;
	}
	fprintf(stderr, "stkreport: symbolized reports are not implemented yet; try 'stkreport info FILE'\n");
	return 2;
}
