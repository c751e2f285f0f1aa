/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * info_report.h - the capture -> report step the report-model sections of
 * `stkreport info` share ("[symbols]", "[unwind]"): one read, one pipeline
 * run, one way to fail.
 */
#ifndef STK_REPORT_INFO_REPORT_H
#define STK_REPORT_INFO_REPORT_H

#include "capture.h"
#include "report.h"

/*
 * info_report__open() - read @path into *@cap and run the pipeline over it
 * with @ro (which must outlive the report) into *@r.  Returns 0, or -errno
 * with both NULL: the capture could not be read (message from
 * stk_open_errmsg()) or the pipeline failed.  Release with report__free()
 * and capture__free().
 */
int info_report__open(const char *path, const struct report_opts *ro, struct capture **cap,
		      struct report **r);

#endif
