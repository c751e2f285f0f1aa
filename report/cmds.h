/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Front-ends of stkreport's subcommands.  Like main.c they parse options,
 * print and map errors to exit codes (0 ok, 1 failure or damaged input,
 * 2 usage error); the work lives in the other report/ files.
 */
#ifndef STK_REPORT_CMDS_H
#define STK_REPORT_CMDS_H

/* stkreport info [--chunks] [--symbols] FILE: argv[0] is "info". */
int info_main(int argc, char **argv);

/* stkreport diff [options] BASE NEW: argv[0] is "diff".  Also exits 3:
 * --fail-if-regress found a regression. */
int diff_main(int argc, char **argv);
/* stkreport merge -o OUT.stk IN.stk...: argv[0] is "merge". */
int merge_main(int argc, char **argv);

/* stkreport [-f FORMAT] [options] FILE: argv[0] is the program name. */
int report_main(int argc, char **argv);

#endif
