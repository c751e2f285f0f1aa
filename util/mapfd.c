// SPDX-License-Identifier: BSD-2-Clause
/*
 * mapfd.c - mapping the first bytes of a file descriptor shared, whole
 * pages at a time (see mapfd.h).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "mapfd.h"

void *mapfd__map(int fd, size_t size, int prot, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	*len = (size + page - 1) / page * page;
	p = mmap(NULL, *len, prot, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void mapfd__unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}
