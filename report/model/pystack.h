/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pystack.h - a user stack's Python frames put among its native frames
 * (SPEC.md, STCK "Python words", and ESYM kind 4).
 *
 * A recorded user stack is its native frames, leaf first, then its Python
 * frames, leaf first: a frame word (code object address; the entry flag)
 * and its info word (fingerprint, instruction offset), and maybe a stop
 * word.  Walking the native frames leaf to root, each frame of CPython's
 * evaluation loop (_PyEval_EvalFrameDefault, or a part of it such as
 * _PyEval_EvalFrameDefault.cold) is replaced by the next Python frames, up
 * to and including the next entry frame (all of them when none is marked):
 * one native activation of the loop runs those frames.  A loop frame met
 * when no Python frame is left stays as it is.  The Python frames left at
 * the end go at the root end, and the stop word's marker after the last
 * Python frame.
 *
 * Python frames are named from the capture's code objects by (tgid, code
 * address, fingerprint) and their line from the code's line table
 * (pylines.h); each (tgid, word, info word) is named once.
 */
#ifndef STK_REPORT_PYSTACK_H
#define STK_REPORT_PYSTACK_H

#include <stdint.h>

#include "capture.h"
#include "report.h"

struct pystack;

/* A namer over @cap's code objects (borrowed: must outlive it).  NULL with
 * errno ENOMEM. */
struct pystack *pystack__new(const struct capture *cap);
void pystack__free(struct pystack *ps);	/* accepts NULL */

/* The number of native words of a recorded user stack: the index of its
 * first Python word, @n when it has none. */
uint32_t pystack__native_words(const uint64_t *words, uint32_t n);

/* The most frames pystack__merge() makes of @nr_native native frames and
 * @nr_words Python words. */
static inline uint32_t pystack__max_frames(uint32_t nr_native, uint32_t nr_words)
{
	return nr_native + nr_words;
}

/* 1 when the machine frame @f is one of CPython's evaluation loop. */
int pystack__is_eval_frame(const struct rframe *f);

/*
 * pystack__merge() - the frames of a user stack of process @tgid: its
 * @nr_native native frames @native (resolved, leaf first) with its Python
 * words @words (@nr_words, as recorded after the native ones) put in.
 * @out: room for pystack__max_frames() frames; *@nr_out gets how many
 * were written, *@nr_python how many of those are RFRAME_PYTHON frames.
 * A malformed sequence of words (a frame word without its info word, an
 * info word alone, a word after the stop word) is shown as far as it
 * makes sense, never read past.  Returns 0 or -ENOMEM.
 */
int pystack__merge(struct pystack *ps, uint32_t tgid, const struct rframe *native,
		   uint32_t nr_native, const uint64_t *words, uint32_t nr_words, struct rframe *out,
		   uint32_t *nr_out, uint32_t *nr_python);

#endif
