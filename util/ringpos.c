// SPDX-License-Identifier: BSD-2-Clause
/*
 * ringpos.c - a BPF ring buffer's positions mapped read-only (see
 * ringpos.h).
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringpos.h"

int ringpos__open(struct ringpos *rp, int fd)
{
	void *p;
	int err;

	*rp = (struct ringpos){ .page = (size_t)sysconf(_SC_PAGESIZE) };
	p = mmap(NULL, rp->page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	rp->cons = p;
	p = mmap(NULL, rp->page, PROT_READ, MAP_SHARED, fd, (off_t)rp->page);
	if (p == MAP_FAILED) {
		err = -errno;
		ringpos__close(rp);
		return err;
	}
	rp->prod = p;
	return 0;
}

void ringpos__close(struct ringpos *rp)
{
	if (rp->cons)
		munmap((void *)rp->cons, rp->page);
	if (rp->prod)
		munmap((void *)rp->prod, rp->page);
	rp->cons = rp->prod = NULL;
}
