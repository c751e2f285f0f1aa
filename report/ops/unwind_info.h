/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_info.h - `stkreport info`'s "[unwind]" section: the user stacks
 * whose unwinding stopped early, by reason, as the report model counts
 * them (report.h, struct report_uw_stops).
 */
#ifndef STK_REPORT_UNWIND_INFO_H
#define STK_REPORT_UNWIND_INFO_H

#include <stdio.h>

/*
 * unwind_info__print() - read @path into the report model (no symbol
 * lookups) and print to @f the samples and distinct stacks that stopped
 * early, in all and per reason.  Returns 0, or -errno: the capture could
 * not be opened (message from stk_open_errmsg()), -ENOMEM, or -EIO when
 * writing to @f failed (flushed before returning).
 */
int unwind_info__print(const char *path, FILE *f);

#endif
