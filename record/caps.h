/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * caps.h - does this process have the capabilities BPF profiling needs?
 */
#ifndef STKREC_CAPS_H
#define STKREC_CAPS_H

/*
 * caps__check_profiling() - loading BPF programs needs CAP_BPF and opening
 * system-wide perf events CAP_PERFMON (Linux 5.8+), or CAP_SYS_ADMIN for
 * both.  Reads the effective set with capget().
 * @missing: on -EPERM, receives "CAP_BPF", "CAP_PERFMON" or
 *           "CAP_BPF and CAP_PERFMON" (or "CAP_SYS_ADMIN" on kernels
 *           older than 5.8, which have neither).
 *
 * Returns 0 when allowed, -EPERM when not, or capget()'s -errno.
 */
int caps__check_profiling(const char **missing);

#endif
