// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport: read a .stk capture and report it.  Subcommands:
 *   stkreport info FILE       facts, chunks and validation verdict
 *   stkreport diff BASE NEW   compare two captures by function
 *   stkreport merge -o OUT IN...  captures merged into one
 *   stkreport [options] FILE  symbolized report (text, folded, pprof)
 */
#include <getopt.h>
#include <malloc.h>
#include <string.h>

#include "cmds.h"

int main(int argc, char **argv)
{
	/* A report allocates tens of MB in pieces of every size, frees some
	 * (tables that grew) and keeps the rest to the end: let freed memory
	 * be reused, not returned to the kernel and faulted in again page by
	 * page (malloc's mmap()ed blocks above its threshold, its trimmed top).
	 * 6% of the CPU of a cached report of a system-wide capture; the peak
	 * is what it was.  Hints: a failure changes nothing. */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_TOP_PAD, 64 << 20);
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
