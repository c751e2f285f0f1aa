// SPDX-License-Identifier: BSD-2-Clause
/*
 * kmem.c - the kernel memory a recording's preallocated BPF maps take, and
 * the memory the machine has available (see kmem.h).
 */
#include <errno.h>
#include <stdio.h>

#include "kmem.h"
#include "stkrec.h"

/*
 * kernel/bpf/hashtab.c: an element is struct htab_elem (48 bytes on
 * 64-bit: the list node, the hash, the LRU/free-list union) followed by
 * the key and the value, each rounded up to 8; a bucket is a list head
 * and a lock (16 bytes), one per entry rounded to a power of two (not
 * counted: the figure is a floor, not a ceiling).
 */
#define HTAB_ELEM_BYTES 48
#define HTAB_BUCKET_BYTES 16

static uint64_t round8(uint32_t n)
{
	return ((uint64_t)n + 7) & ~7ULL;
}

uint64_t kmem__hash_bytes(uint64_t entries, uint32_t key_size, uint32_t value_size)
{
	return entries * (HTAB_ELEM_BYTES + round8(key_size) + round8(value_size) +
			  HTAB_BUCKET_BYTES);
}

uint64_t kmem__recording_bytes(uint32_t stack_entries, uint32_t ring_bytes,
			       uint32_t counts_entries, int offcpu)
{
	uint64_t b = kmem__hash_bytes(stack_entries, sizeof(__u64), sizeof(__u8)) + ring_bytes;

	if (offcpu)
		b += 2 * kmem__hash_bytes(counts_entries, sizeof(struct stkrec_offcpu_key),
					  sizeof(struct stkrec_offcpu_value));
	else
		b += 2 * kmem__hash_bytes(counts_entries, sizeof(struct stkrec_count_key),
					  sizeof(struct stkrec_count_lanes));
	return b;
}

int kmem__available(const char *meminfo, uint64_t *bytes)
{
	unsigned long long kb;
	char line[256];
	int err = -ENOENT;
	FILE *f;

	f = fopen(meminfo, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			*bytes = (uint64_t)kb * 1024;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}
