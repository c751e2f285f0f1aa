/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbols_info.h - `stkreport info --symbols`: per module of a capture, its
 * samples, build-id, and the file its symbols came from or why none.
 */
#ifndef STK_REPORT_SYMBOLS_INFO_H
#define STK_REPORT_SYMBOLS_INFO_H

#include <stdio.h>

#include "symbolize.h"

/*
 * symbols_info__print() - symbolize every sample of @path as the report
 * would (with @so's search options) and print a "[symbols]" section to @f:
 * one block per module that has samples, most samples first, then one for
 * the kernel.  Returns 0, or -errno with errno's meaning: the capture could
 * not be opened (message from stk_open_errmsg()), -ENOMEM, or -EIO when
 * writing to @f failed (flushed before returning).
 */
int symbols_info__print(const char *path, const struct symbolizer_opts *so, FILE *f);

#endif
