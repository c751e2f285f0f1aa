/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kmem.h - what a recording's BPF maps cost in kernel memory, and whether
 * the machine has it.  The stacks set (--stack-storage-size ids, an LRU
 * hash) and the two counts maps (modeobj.h) are preallocated hash maps,
 * and the stack ring (64 bytes an id) a buffer: the kernel takes all of
 * their memory when they are created, before the first sample.
 */
#ifndef STKREC_KMEM_H
#define STKREC_KMEM_H

#include <stdint.h>

/*
 * kmem__hash_bytes() - kernel memory of a preallocated BPF hash map of
 * @entries entries of @key_size and @value_size bytes: per entry the
 * element (its header, key and value, each rounded to 8 bytes) and a
 * bucket.  Matches the memlock figure /proc/PID/fdinfo shows (Linux 6.x)
 * within a few percent.
 */
uint64_t kmem__hash_bytes(uint64_t entries, uint32_t key_size, uint32_t value_size);

/*
 * kmem__recording_bytes() - the stacks set of @stack_entries ids, the
 * stack ring of @ring_bytes, and the two counts maps of @counts_entries
 * entries each, for profile (@offcpu 0) or the off-CPU modes (1).
 */
uint64_t kmem__recording_bytes(uint32_t stack_entries, uint32_t ring_bytes,
			       uint32_t counts_entries, int offcpu);

/*
 * kmem__available() - MemAvailable of @meminfo (/proc/meminfo), in bytes,
 * into *@bytes.  Returns 0, -ENOENT when the file has no MemAvailable
 * line (Linux before 3.14), or fopen()'s -errno.
 */
int kmem__available(const char *meminfo, uint64_t *bytes);

#endif
