// SPDX-License-Identifier: BSD-2-Clause
/*
 * ringpos.c - a BPF ring buffer's positions mapped read-only, and its size
 * (see ringpos.h).
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "ringpos.h"

int ringpos__open(struct ringpos *rp, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;
	int err;

	*rp = (struct ringpos){ .page = (size_t)sysconf(_SC_PAGESIZE) };
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	rp->size = info.max_entries;
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

uint32_t ringpos__intervals(struct ringpos *rp, uint32_t max, uint32_t elapsed)
{
	unsigned long prod, came;

	if (!rp->prod)
		return max;
	prod = ringpos__prod(rp);
	came = prod - rp->mark;
	rp->mark = prod;
	return ringpos_fit(came, elapsed, rp->size / 2, max);
}
