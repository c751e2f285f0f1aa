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

/*
 * The live status line into @buf (truncated to @size):
 *   profile:  "12s  1234 samples  56 stacks  0 lost"
 *   off-CPU:  "12s  1234 episodes  31.4s blocked  56 stacks  0 lost"
 * (blocked: the episodes' total time off CPU, over all threads).
 */
void status__format(const struct recorder_status *st, char *buf, size_t size);

/* @ns as seconds with tenths, rounded down: "0.0s", "31.4s". */
void status__format_seconds(uint64_t ns, char *buf, size_t size);

/* A byte count for humans: "512 B", "12.3 KiB", "4.0 MiB", "1.2 GiB". */
void status__format_size(uint64_t bytes, char *buf, size_t size);

#endif
