/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_events.h - the text and folded reports of a trace capture with
 * several events: one report per event (BCC stackcount's layouts), text
 * under a line naming the event, folded with the event as each line's
 * first frame (so a flame graph has a tower per event).
 */
#ifndef STK_REPORT_TRACE_EVENTS_H
#define STK_REPORT_TRACE_EVENTS_H

#include <stdio.h>

#include "capture.h"
#include "output.h"
#include "report.h"

/*
 * trace_events__write() - for each event of @cap that has rows, run the
 * report with @ro (its .event set in turn; @ro is restored) and write it
 * with @write, in the @folded layout or text, to @f.
 * Returns 0, -ENOMEM, -EIO, or the report's -errno.
 */
int trace_events__write(const struct capture *cap, struct report_opts *ro,
			int (*write)(const struct report *r, const struct output_opts *o, FILE *f),
			const struct output_opts *oo, int folded, FILE *f);

#endif
