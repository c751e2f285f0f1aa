/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * status.h - the text of stkrec's live status line and final summary.
 * Only formatting: main.c decides whether and where to print.
 */
#ifndef STKREC_STATUS_H
#define STKREC_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"

/* "12s  1234 samples  56 stacks  stack map 3%  0 lost" into @buf. */
void status__format(const struct recorder_status *st, char *buf, size_t size);

/* A byte count for humans: "512 B", "12.3 KiB", "4.0 MiB", "1.2 GiB". */
void status__format_size(uint64_t bytes, char *buf, size_t size);

#endif
