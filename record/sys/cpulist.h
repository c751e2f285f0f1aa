/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpulist.h - CPU lists as the kernel prints them ("0-3,8,10-11"), used by
 * -C and /sys/devices/system/cpu/online.
 */
#ifndef STKREC_CPULIST_H
#define STKREC_CPULIST_H

#include <stddef.h>

/* Highest CPU number accepted: the kernel's NR_CPUS limit is 8192. */
#define CPULIST_MAX_CPU 8191

/*
 * cpulist__parse() - parse @str into a sorted array of distinct CPU
 * numbers.  Accepts "N", "N-M" ranges (N <= M) and commas, with an optional
 * trailing newline; no spaces, no empty items.
 * @cpus: receives a malloc'ed array (the caller frees it).
 * @n: receives its length (>= 1 on success).
 *
 * Returns 0, -EINVAL (syntax, a reversed range, a CPU above
 * CPULIST_MAX_CPU, or an empty list) or -ENOMEM.
 */
int cpulist__parse(const char *str, int **cpus, size_t *n);

/*
 * cpulist__online() - the online CPUs, from
 * /sys/devices/system/cpu/online.  Same ownership as cpulist__parse().
 * Returns 0, the open()/read() -errno, -EINVAL or -ENOMEM.
 */
int cpulist__online(int **cpus, size_t *n);

/*
 * cpulist__format() - print @cpus (sorted) back as "0-3,8" into @buf.
 * Returns the length the full string needs (as snprintf()).
 */
int cpulist__format(const int *cpus, size_t n, char *buf, size_t size);

#endif
