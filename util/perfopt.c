// SPDX-License-Identifier: BSD-2-Clause
/*
 * perf's habits and what stk does instead (perfopt.h), and the closest
 * word to a mistyped one.
 */
#include <string.h>

#include "perfopt.h"

static const struct {
	enum perfopt_tool tool;
	const char *opt;
	const char *hint;
} hints[] = {
	{ PERFOPT_STKREC, "-a", "stkrec always records every CPU (-C LIST for some, -p/-t for some tasks)" },
	{ PERFOPT_STKREC, "--all-cpus", "stkrec always records every CPU (-C LIST for some, -p/-t for some tasks)" },
	{ PERFOPT_STKREC, "-g", "stkrec always records whole stacks, kernel and user (--unwind=HOW says how)" },
	{ PERFOPT_STKREC, "--call-graph", "stkrec always records whole stacks, kernel and user (--unwind=HOW says how)" },
	{ PERFOPT_STKREC, "-e", "stkrec takes events as words after 'trace': stkrec trace EVENT... (e.g. stkrec trace t:syscalls:sys_enter_write)" },
	{ PERFOPT_STKREC, "--event", "stkrec takes no events: 'stkrec' samples on-CPU stacks (-F HZ), 'stkrec offcpu' and 'stkrec offwake' time blocked" },
	{ PERFOPT_STKREPORT, "-i", "give the capture as an argument: stkreport FILE.stk" },
	{ PERFOPT_STKREPORT, "--input", "give the capture as an argument: stkreport FILE.stk" },
	{ PERFOPT_STKREPORT, "-g", "stkreport always shows whole stacks; -f top for self and total, --callers/--callees FUNC for call trees" },
	{ PERFOPT_STKREPORT, "--call-graph", "stkreport always shows whole stacks; -f top for self and total, --callers/--callees FUNC for call trees" },
	{ PERFOPT_STKREPORT, "--children", "-f top shows each function's self and total" },
	{ PERFOPT_STKREPORT, "--no-children", "-f top shows each function's self and total" },
	{ PERFOPT_STKREPORT, "--stdio", "stkreport prints text by default; -f top for perf report's table" },
};

const char *perfopt__hint(enum perfopt_tool tool, const char *word)
{
	size_t i, n = strcspn(word, "=");

	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (hints[i].tool == tool && strlen(hints[i].opt) == n &&
		    strncmp(hints[i].opt, word, n) == 0)
			return hints[i].hint;
	return NULL;
}

/* Edits from @a to @b, stopping at 3 (only "within 2" matters). */
static int edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[33], prev, tmp, best;

	if (lb > 32 || (la > lb ? la - lb : lb - la) > 2)
		return 3;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			int sub = prev + (a[i - 1] != b[j - 1]);
			int v = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;

			tmp = row[j];
			row[j] = sub < v ? sub : v;
			prev = tmp;
			if (row[j] < best)
				best = row[j];
		}
		if (best > 2)
			return 3;
	}
	return row[lb] > 2 ? 3 : row[lb];
}

const char *perfopt__closest(const char *word, const char *const *words, int n)
{
	const char *best = NULL;
	int i, d, bd = 3;

	for (i = 0; i < n; i++) {
		d = edits(word, words[i]);
		if (d < bd) {
			bd = d;
			best = words[i];
		}
	}
	return best;
}
