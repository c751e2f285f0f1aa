// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

/* Highest capability the kernel knows, or -1. */
static int cap_last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &last) != 1)
		last = -1;
	fclose(f);
	return last;
}

int caps__check_profiling(const char **missing)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	int bpf, perfmon, last;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	last = cap_last_cap();
	if (last >= 0 && last < CAP_BPF) {
		/* Before 5.8 only CAP_SYS_ADMIN allows BPF tracing. */
		*missing = "CAP_SYS_ADMIN";
		return -EPERM;
	}
	bpf = has_cap(data, CAP_BPF);
	perfmon = has_cap(data, CAP_PERFMON);
	if (bpf && perfmon)
		return 0;
	*missing = !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON";
	return -EPERM;
}
