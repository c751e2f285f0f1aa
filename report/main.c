// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport: read a .stk capture and report it.  Subcommands:
 *   stkreport info FILE       facts, chunks and validation verdict
 *   stkreport diff BASE NEW   compare two captures by function
 *   stkreport merge -o OUT IN...  captures merged into one
 *   stkreport [options] FILE  symbolized report (text, folded, pprof)
 */
#include <getopt.h>
#include <string.h>

#include "cmds.h"

int main(int argc, char **argv)
{
	/* Each command names a bad option itself, in one line. */
	opterr = 0;
	if (argc > 1 && strcmp(argv[1], "info") == 0)
		return info_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return diff_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);
	return report_main(argc, argv);
}
