/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge.h - `stkreport merge`: several captures into one, written with
 * libstk's writer (one segment, SPEC.md conformant).
 *
 * Every segment of every input is a source.  In the output:
 *  - stacks are re-interned by content (equal frames, one id), and every
 *    row refers to its stack's new id;
 *  - rows are kept per key and per interval: one CNTS/OFFC chunk per input
 *    chunk, its interval moved so that every source starts at the
 *    output's start (the first source's): --since/--until then select the
 *    same offset of every source, and the timeline sums them;
 *  - MAPS snapshots move with their source's times (an identical snapshot,
 *    as a capture merged with itself has, is written once); KSYM symbols
 *    (one per address: the larger where two sources disagree, as
 *    BPF programs loaded at one address in turn make them), KBID objects
 *    and ESYM images (by build-id) are de-duplicated;
 *  - META keeps the keys every source has with the same value, with
 *    duration_ns summed, and tells the sources: merged_sources, and per
 *    source merged_from_N = "UUID PATH"; STAT counters are summed.
 *
 * Refused (nothing is written): captures of different kinds (profile,
 * offcpu, offwake), profiles of different sampling frequencies (samples
 * of unequal weight cannot be summed into one profile), a kernel image
 * at another address or with another build-id (another boot or kernel:
 * kernel addresses cannot share one symbol table), a pid whose mappings
 * differ between sources (pid reuse: rows would be resolved in the wrong
 * process's maps), a damaged input, and an output that is one of the
 * inputs.
 */
#ifndef STK_REPORT_MERGE_H
#define STK_REPORT_MERGE_H

#include <stddef.h>
#include <stdint.h>

struct merge_result {
	size_t sources;			/* segments merged */
	uint64_t stacks_in, stacks_out;	/* stack records read / written */
	uint64_t row_chunks;		/* CNTS/OFFC chunks written */
	const char *unclosed;		/* an input not closed cleanly (borrowed from
					 * @paths), or NULL: merged what it holds */
	char msg[512];			/* on failure: why, one line, no program name */
};

/*
 * merge__captures() - merge the captures @paths[0..@n) into @out_path.
 * @out_path is written as stkrec writes (stk_writer__open(): mode 0600,
 * a temporary name renamed over @out_path at the end; a FIFO or device
 * written in place).  @res is filled in either case.
 *
 * Returns 0, or a negative errno with @res->msg saying why:
 *   -EINVAL  refused (see above) or @out_path is one of the inputs
 *   -EBADMSG an input is damaged
 *   -ENOMEM, or the open/read/write errno.
 * On failure nothing is left at @out_path that was not there before.
 */
int merge__captures(const char *const *paths, size_t n, const char *out_path,
		    struct merge_result *res);

#endif
