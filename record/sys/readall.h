/* SPDX-License-Identifier: BSD-2-Clause */
/* readall.h - read a whole file whose size stat() cannot tell (/proc). */
#ifndef STKREC_READALL_H
#define STKREC_READALL_H

#include <stddef.h>

/*
 * read_all() - read @path to EOF into a malloc()ed, NUL-terminated buffer.
 * @hint: expected size in bytes (the first buffer; it doubles as needed).
 * @buf_out, @len_out: the buffer (the caller frees it) and its length
 * without the NUL.  Returns 0, -ENOMEM, or the open()/read() -errno.
 */
int read_all(const char *path, size_t hint, char **buf_out, size_t *len_out);

#endif
