/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * funcs.h - a report's samples summed per function (or per binary, process,
 * thread or comm): each key's self and total value, on one or two sides
 * (stkreport -f top, and stkreport diff, which matches the two captures'
 * functions here).  Also each resolved stack as its list of functions, the
 * call trees' input (calltree.h).
 *
 *   report(s) -> funcs__add() per sample -> funcs__sorted() -> writers
 *
 * A function is one symbol line of a frame: with inline frames on, an
 * inlined function is a function of its own.  Its name is the symbol's
 * (demangled unless --no-demangle), "[unknown]" for an address without one;
 * its module is the base name of the mapped file for user frames
 * ("[unknown]" outside every mapping) and "[kernel]" for every kernel frame
 * (kernel module symbols carry their module in the name, "name [mod]").
 * Functions are matched by (name, module), never by address, so two builds
 * of a program meet in the same entries.  Only the sampled task's stacks
 * count, not an offwake waker's.
 *
 * Values are samples for profile captures and blocked nanoseconds for
 * off-CPU ones (sample_value()).  As perf report --no-children and pprof
 * -top: a key's self value is what the samples whose leaf it is hold (the
 * kernel leaf when the sample has a kernel stack); its total value is what
 * the samples it appears in hold, each sample once however often the
 * function recurses in it.  By process, thread or comm every sample belongs
 * to exactly one key: self and total are equal.
 */
#ifndef STK_REPORT_FUNCS_H
#define STK_REPORT_FUNCS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

/* What a row is. */
enum funcs_by {
	FUNCS_BY_FUNC = 0,	/* a function in its module */
	FUNCS_BY_DSO,		/* a module (binary file, "[kernel]") */
	FUNCS_BY_PID,		/* a process */
	FUNCS_BY_TID,		/* a thread */
	FUNCS_BY_COMM,		/* a task name */
};

enum funcs_sort {
	FUNCS_SORT_SELF = 0,	/* self value, largest first */
	FUNCS_SORT_TOTAL,	/* total value, largest first */
	FUNCS_SORT_NAME,	/* name (pid/tid: number), then module */
};

struct func_stat {
	const char *name;	/* raw (escape to print): the function; the
				 * module (dso); the comm; the pid or tid
				 * in decimal */
	const char *module;	/* function: its module; pid, tid: the comm of
				 * the first sample seen; else "" */
	uint32_t id;		/* pid, tid; else 0 */
	uint64_t self[2], total[2];	/* values, by side */
};

/* A resolved stack's functions, leaf first (inline lines too). */
struct func_list {
	uint32_t n;
	struct func_stat *fn[];
};

struct funcs;

/* An empty table of rows of kind @by.  NULL with errno ENOMEM or EINVAL. */
struct funcs *funcs__new(enum funcs_by by);
void funcs__free(struct funcs *fs);	/* accepts NULL */

/*
 * funcs__add() - count sample @s of @r (which must outlive @fs) on side
 * @side (0 or 1) into its rows.  0 or -ENOMEM.
 */
int funcs__add(struct funcs *fs, int side, const struct report *r, const struct rsample *s);

/* Every row in the order first seen; *@n the count.  Borrowed until
 * funcs__free(). */
struct func_stat *const *funcs__all(const struct funcs *fs, size_t *n);

/*
 * funcs__sorted() - every row, sorted by @how on side @side: largest
 * first for self and total (ties: the other value, then name and module),
 * name order for FUNCS_SORT_NAME.  *@out a malloc()ed array of *@n
 * borrowed pointers, for the caller to free().  0 or -ENOMEM.
 */
int funcs__sorted(const struct funcs *fs, enum funcs_sort how, int side,
		  const struct func_stat ***out, size_t *n);

/*
 * funcs__stack() - the functions of @st (a stack of a report counted on
 * @side), made once per stack and interned in @fs; FUNCS_BY_FUNC only.
 * NULL with errno ENOMEM, or EINVAL for another kind of table.  Borrowed
 * until funcs__free().
 */
const struct func_list *funcs__stack(struct funcs *fs, int side, const struct rstack *st);

/* "func", "dso", "pid", "tid", "comm" -> *@by: 0, or -EINVAL. */
int funcs_by__parse(const char *s, enum funcs_by *by);
/* "self", "total", "name" -> *@how: 0, or -EINVAL. */
int funcs_sort__parse(const char *s, enum funcs_sort *how);

#endif
