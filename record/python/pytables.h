/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pytables.h - where CPython 3.8 to 3.13 keep what the Python frame walk
 * reads: the offsets of each minor version's structures, from the
 * interpreter's own debug offsets where it publishes them (3.13+).
 */
#ifndef STK_PYTABLES_H
#define STK_PYTABLES_H

#include <stddef.h>
#include <stdint.h>

#include "stkrec.h"

#define PY_VERSION(major, minor) ((uint32_t)(major) << 8 | (minor))
#define PY_VERSION_MIN PY_VERSION(3, 8)
#define PY_VERSION_MAX PY_VERSION(3, 13)

/* What the walk (bpf) and the code reader (the recorder) need. */
struct pyoffsets {
	struct stkrec_py_proc bpf;	/* runtime and code_type left 0 */
	uint16_t co_qualname;		/* 0: none (<= 3.10: co_name is all) */
	uint16_t co_linetable;		/* co_lnotab (<= 3.9), co_linetable */
	uint16_t str_ascii;		/* sizeof(PyASCIIObject): compact ASCII data */
	uint16_t str_compact;		/* sizeof(PyCompactUnicodeObject): other compact data */
	uint16_t ts_interp;		/* PyThreadState.interp */
};

/* pytables__get() - the offsets of CPython @version (PY_VERSION()):
 * 0, or -ENOTSUP for a version without a table. */
int pytables__get(uint32_t version, struct pyoffsets *o);

/*
 * pytables__from_debug() - correct @o from @buf, the first @size bytes of
 * a 3.13+ _PyRuntime (its _Py_DebugOffsets): 0, -ENOENT when @buf is not
 * one (no cookie), -ENOTSUP when it is, for a layout this code does not
 * read (a free-threaded build, another version), -EINVAL when an offset
 * does not fit.
 */
int pytables__from_debug(const uint8_t *buf, size_t size, uint32_t version, struct pyoffsets *o);

#endif /* STK_PYTABLES_H */
