/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mapfd.h - the first bytes of a file descriptor mapped shared, whole
 * pages at a time: what user space reads and writes in place of a
 * BPF_F_MMAPABLE array map's values.
 */
#ifndef STK_MAPFD_H
#define STK_MAPFD_H

#include <stddef.h>

/*
 * mapfd__map() - map the first @size bytes of @fd (rounded up to whole
 * pages, the length put in *@len) shared, with protection @prot.  NULL
 * with errno set if the kernel refuses.
 */
void *mapfd__map(int fd, size_t size, int prot, size_t *len);

/* Unmap what mapfd__map() returned, of *@len bytes.  Accepts NULL. */
void mapfd__unmap(void *p, size_t len);

#endif
