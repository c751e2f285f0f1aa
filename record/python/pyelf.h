/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pyelf.h - is this ELF file a CPython interpreter (python3.X or
 * libpython3.X.so), and which: the symbols the Python frame walk starts
 * from, its version, and its 3.13+ debug offsets, read from the file.
 */
#ifndef STK_PYELF_H
#define STK_PYELF_H

#include <stddef.h>
#include <stdint.h>

#define PYELF_MAX_LOADS 16
#define PYELF_DEBUG_SIZE 584 /* the _Py_DebugOffsets of 3.13 */

struct pyelf {
	uint64_t runtime;	/* _PyRuntime's virtual address in the file */
	uint64_t code_type;	/* PyCode_Type's */
	uint32_t version;	/* PY_VERSION(): from Py_Version, else the file's name */
	uint32_t nr_loads;
	struct pyelf_load {
		uint64_t vaddr, offset, filesz;
	} loads[PYELF_MAX_LOADS];
	uint8_t debug[PYELF_DEBUG_SIZE]; /* the start of _PyRuntime, if in the file */
	size_t debug_size;
};

/* The file name of a mapping that may be an interpreter: python3.X,
 * libpython3.X.so..., (their basenames).  Returns the minor version from
 * the name (X), 0 when the name says none (python3), or -1: not one. */
int pyelf__name_minor(const char *path);

/*
 * pyelf__inspect() - read ELF file @fd (named @path in a mapping): 0 with
 * @out filled, -ENOENT when it exports no _PyRuntime and PyCode_Type (not
 * an interpreter), -ENOTSUP when its version cannot be told or is not
 * 3.8-3.13, -EINVAL for a damaged file.
 */
int pyelf__inspect(int fd, const char *path, struct pyelf *out);

/* pyelf__bias() - the load bias of the file mapped at @start from file
 * offset @offset: 0 with *@bias, or -ENOENT if no segment holds @offset. */
int pyelf__bias(const struct pyelf *pe, uint64_t start, uint64_t offset, uint64_t *bias);

#endif /* STK_PYELF_H */
