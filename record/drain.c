// SPDX-License-Identifier: BSD-2-Clause
/* Emptying a mode's double-buffered counts maps (see drain.h). */
#include <errno.h>
#include <time.h>

#include <bpf/bpf.h>

#include "drain.h"

uint32_t drain__flip(uint32_t *idx)
{
	struct timespec grace = { 0, DRAIN_FLIP_GRACE_NS };
	uint32_t idle = __atomic_load_n(idx, __ATOMIC_SEQ_CST);

	__atomic_store_n(idx, idle ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&grace, NULL);
	return idle;
}

int drain__map(int fd, void *keys, size_t key_size, void *values, size_t value_size,
	       uint32_t cap, size_t *n)
{
	char *k = keys, *v = values;
	unsigned char batch[64]; /* opaque batch cursor; hash maps use 4 bytes */
	void *in = NULL;
	__u32 count;
	int err;

	*n = 0;
	/* One lookup-and-delete batch syscall empties the map; the buffers
	 * hold max_entries, so a batch never runs out of room. */
	for (;;) {
		count = cap - (uint32_t)*n;
		if (!count)
			return 0;
		err = bpf_map_lookup_and_delete_batch(fd, in, batch, k + *n * key_size,
						      v + *n * value_size, &count, NULL);
		if (err && errno != ENOENT)
			break;
		*n += count;
		if (err)
			return 0; /* ENOENT: the map is empty */
		in = batch;
	}
	err = -errno;
	if (*n || (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP))
		return err;
	/* No batch operations (before Linux 5.6): key by key.  The map is
	 * idle, so deleting while iterating is safe. */
	while (*n < cap && bpf_map_get_next_key(fd, NULL, k + *n * key_size) == 0) {
		void *key = k + *n * key_size, *val = v + *n * value_size;

		/* A key that vanished meanwhile ends this drain; what is
		 * left is taken at the next flush. */
		if (bpf_map_lookup_and_delete_elem(fd, key, val) &&
		    (bpf_map_lookup_elem(fd, key, val) || bpf_map_delete_elem(fd, key)))
			break;
		(*n)++;
	}
	return 0;
}
