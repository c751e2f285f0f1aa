// SPDX-License-Identifier: BSD-2-Clause
/*
 * info_report.c - the capture -> report step of `stkreport info`'s
 * report-model sections, see info_report.h.
 */
#include <errno.h>

#include "info_report.h"

int info_report__open(const char *path, const struct report_opts *ro, struct capture **cap,
		      struct report **r)
{
	int err;

	*r = NULL;
	*cap = capture__read(path);
	if (!*cap)
		return -errno;
	*r = report__new(*cap, ro);
	if (!*r) {
		err = -errno;
		capture__free(*cap);
		*cap = NULL;
		return err;
	}
	return 0;
}
