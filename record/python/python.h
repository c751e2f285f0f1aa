/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * python.h - Python frames on the recorder's side: finds the CPython
 * interpreters traced processes run, tells the BPF walk (bpf/python.bpf.h)
 * where each one's structures are, checks the layout on the live process,
 * reads the code objects its stacks name while the process lives, and
 * writes them into the capture (ESYM kind 4) so a report names them
 * offline.
 */
#ifndef STK_PYTHON_H
#define STK_PYTHON_H

#include <stdint.h>

#include "stk.h"

struct python;

struct python_stats {
	uint64_t processes;	/* processes whose Python frames are walked */
	uint64_t unsupported;	/* processes with an interpreter stkrec cannot read */
	uint64_t codes;		/* code objects read and written */
	uint64_t code_stale;	/* ... freed (or the address reused) before read */
	uint64_t code_failed;	/* ... unreadable (process gone, a damaged object) */
	uint64_t code_skipped;	/* ... not kept: over the memory budget */
	uint64_t code_from_kernel; /* ... named from what the walk read when it met them */
	uint64_t code_partial;	/* ... of which only part could be had (a long name or
				 * line table, the process gone) */
	uint64_t code_bytes;	/* memory the code objects kept take */
};

/* python__new() - with the "py_procs" map @procs_fd of the BPF object
 * (< 0: Python frames off, every call a no-op).  NULL: out of memory. */
struct python *python__new(int procs_fd);
void python__free(struct python *py);

/* python__add_process() - @maps->tgid's mappings, new or changed: find
 * its interpreter and tell the walk, or forget it if it runs none. */
void python__add_process(struct python *py, const struct stk_proc_maps *maps);

/* python__remove_process() - @tgid exec'd or exited. */
void python__remove_process(struct python *py, uint32_t tgid);

/*
 * python__see_stack() - the @n Python words (bpf/stkrec.h) of a new user
 * stack of @tgid: read each code object not read yet, while the process
 * lives.  Returns 0 or -ENOMEM.
 */
int python__see_stack(struct python *py, uint32_t tgid, const uint64_t *words, uint32_t n);

/* python__set_code_ring() - the walk's "py_code_ring" (@fd): the code
 * objects it meets first, read in the kernel.  0 or -errno. */
int python__set_code_ring(struct python *py, int fd);

/* python__take_codes() - name the code objects in that ring now; how
 * many there were, or -errno. */
int python__take_codes(struct python *py);

/* python__codes_fd() - that ring's fd for epoll (readable: code objects
 * wait), or -1 when there is none. */
int python__codes_fd(const struct python *py);

/* python__see_words() - python__see_stack() for stackstore__set_python(). */
void python__see_words(void *py, uint32_t tgid, const uint64_t *words, uint32_t n);

/* python__flush() - write the code objects read since the last flush,
 * one ESYM kind 4 chunk per process; *@chunks counts them. */
int python__flush(struct python *py, struct stk_writer *w, uint64_t *chunks);

/* python__new_file() - a new output file: write every live process's
 * code objects again at the next flush. */
void python__new_file(struct python *py);

void python__stats(const struct python *py, struct python_stats *st);

#endif /* STK_PYTHON_H */
