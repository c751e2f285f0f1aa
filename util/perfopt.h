/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perfopt.h - perf's options that people type to stkrec and stkreport out
 * of habit (perf record -a -g -e, perf report -i --stdio), and what stk
 * does instead: the one-line hint both tools add to "unknown option".
 * One table for both tools, so the hints say the same thing.
 */
#ifndef STK_UTIL_PERFOPT_H
#define STK_UTIL_PERFOPT_H

enum perfopt_tool {
	PERFOPT_STKREC = 0,
	PERFOPT_STKREPORT,
};

/*
 * perfopt__hint() - the hint for @word, an option as typed that @tool does
 * not have ("-g", "-i", "--stdio"; "--input=x" is matched by its name),
 * when it is a perf habit: what stk does instead, one sentence without a
 * final period.  NULL when @word is not one.  The string is static.
 */
const char *perfopt__hint(enum perfopt_tool tool, const char *word);

/*
 * perfopt__closest() - of the @n words @words, the one within 2 edits
 * (insertions, deletions, substitutions) of @word, the fewest first; NULL
 * when none is.  For "did you mean": a mistyped subcommand.
 */
const char *perfopt__closest(const char *word, const char *const *words, int n);

#endif
