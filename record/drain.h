/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * drain.h - take a mode's in-kernel counts out of its two BPF hash maps.
 *
 * Every mode counts into counts0 or counts1, chosen by a counts_idx
 * variable in the skeleton's .bss.  Each flush flips the index, waits a
 * grace period so that programs still writing to the old map finish, and
 * empties the map that is now idle.  The race this accepts: a program
 * running longer than the grace period either lands its count in the
 * entry after the drain (a later interval) or loses it when its entry is
 * being deleted; a count never moves to another key.
 */
#ifndef STKREC_DRAIN_H
#define STKREC_DRAIN_H

#include <stddef.h>
#include <stdint.h>

/* How long programs get to finish with the old map after a flip. */
#define DRAIN_FLIP_GRACE_NS 2000000L

/*
 * drain__flip() - make programs count into the other map, wait the grace
 * period, and return the index (0 or 1) of the map that is now idle.
 * @idx: the mmap'ed .bss counts_idx.
 */
uint32_t drain__flip(uint32_t *idx);

/*
 * drain__map() - empty the idle BPF hash map @fd into @keys and @values
 * (arrays of @cap entries of @key_size and @value_size bytes), with one
 * lookup-and-delete batch (Linux 5.6+) or key by key on older kernels.
 * @n: set to the number of entries taken, also when an error stops the
 * drain part way (those entries are out of the map and must be used).
 *
 * Returns 0, or -errno of the failing bpf() call.
 */
int drain__map(int fd, void *keys, size_t key_size, void *values, size_t value_size,
	       uint32_t cap, size_t *n);

#endif
