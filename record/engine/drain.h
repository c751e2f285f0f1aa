/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * drain.h - take a mode's in-kernel counts out of its two BPF hash maps,
 * and keep the rows built from them until they are written.
 *
 * Every mode counts into counts0 or counts1, chosen by a counts_idx
 * variable in the skeleton's .bss.  Each flush flips the index, waits a
 * grace period so that programs still writing to the old map finish, and
 * empties the map that is now idle.  The race this accepts: a program
 * running longer than the grace period either lands its count in the
 * entry after the drain (a later interval) or loses it when its entry is
 * being deleted; a count never moves to another key.
 *
 * A mode may also send rows through a "rows_ring" (profile: the samples
 * that sent a new stack, each a key of count 1 followed by its __u32 set,
 * struct stkrec_count_row).  The ring is taken after the grace period,
 * every record reserved by then, and each record's key kept for the drain
 * of its set: the rows of the idle set join its map's rows (the same
 * interval, the same STAT set), those of the set now written wait for the
 * next flush.  The same race: a program running longer than the grace
 * period has its row in a later interval.
 *
 * A mode whose key has a slot (profile) counts each sample with the
 * interval it was taken in, on a grid of the kernel's clock set when
 * sampling starts: a drain writes the rows of each interval in a chunk
 * of their own (split where a flip fell inside one), whenever it comes,
 * so the recorder may drain every few intervals when nothing new comes
 * without a coarser file.
 *
 * A mode hands its struct drain to the recorder (struct rec_maps), which
 * collects, writes and checks for pending rows through it at every flush;
 * the mode only says how one drained entry becomes one row (add_row; an
 * entry of lanes, a row each lane that counted) and which chunk the rows
 * go into (chunk).
 */
#ifndef STKREC_DRAIN_H
#define STKREC_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"
#include "stk.h"

/* How long programs get to finish with the old map after a flip. */
#define DRAIN_FLIP_GRACE_NS 2000000L

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

/* The chunk a mode's rows go into, and so the rows' type. */
enum drain_chunk {
	DRAIN_CNTS,		/* struct stk_count rows (profile) */
	DRAIN_OFFC,		/* struct stk_offcpu rows (offcpu, offwake) */
	DRAIN_TRCE,		/* struct stk_trace_count rows (trace) */
};

struct drain_opts {
	enum drain_chunk chunk;
	int fds[2];		/* the counts0 and counts1 maps */
	int rows_ring_fd;	/* the "rows_ring" (with lanes: rows of count 1), or < 0 */
	uint32_t *idx;		/* the mmap'ed .bss counts_idx */
	/* Offset in the key of a __u32 "slot", the interval the entry was
	 * counted in, and the mmap'ed .bss slot_base and slot_ns the
	 * program computes it from (drain__start()); or 0: the mode has
	 * none, and its rows belong to the interval they are drained in. */
	size_t slot_off;
	uint64_t *slot_base, *slot_ns;
	/* With slot_off, DRAIN_CNTS: a counts map's value is @lanes __u32
	 * counts (struct stkrec_count_lanes), of intervals slot * @lanes + i,
	 * each a row of its own; 0: the value is the row's (a __u64 count). */
	uint32_t lanes;
	/* The mmap'ed .bss counts_new: new keys each counts map took, which
	 * the kernel counts to tell when one is half full; a drained map's
	 * count is cleared.  NULL: the mode has none. */
	uint64_t *fill;
	uint32_t entries;	/* max_entries of each counts map */
	size_t key_size;	/* of the maps' keys and values */
	size_t value_size;
	/*
	 * Build the file row @row from one drained @key and @value, and
	 * report its tasks, stacks and kernel addresses to @rec
	 * (recorder__see_*()).  Returns 0 or -ENOMEM.
	 */
	int (*add_row)(struct recorder *rec, const void *key, const void *value, void *row);
	/*
	 * Optional (NULL: every row belongs to the whole interval): after
	 * add_row(), *@end_ns = the time before which the row's samples were
	 * taken when that is before the interval's end, else 0: a process
	 * image an exec replaced (recorder__see_image()).  0 or -ENOMEM.
	 */
	int (*row_end)(struct recorder *rec, const void *key, uint64_t *end_ns);
	/*
	 * Optional: called for @key DRAIN_PREFETCH rows before add_row() of
	 * it, to start loading what add_row() will look up (the stack store's
	 * slots: a table larger than the caches, one miss a row otherwise).
	 */
	void (*prefetch_row)(struct recorder *rec, const void *key);
};

#define DRAIN_PREFETCH 8

struct drain;

/* Buffers for one map of @o->entries entries (@o is copied), and the
 * rows ring read.  NULL with errno = ENOMEM, EINVAL for an unknown chunk,
 * or the errno of mapping the ring. */
struct drain *drain__new(const struct drain_opts *o);

/* Frees @d and the rows not written.  Accepts NULL. */
void drain__free(struct drain *d);

/*
 * drain__collect() - take this interval's rows out of the kernel: flip
 * the index and drain the map that became idle and the rows ring's rows
 * of its set (@final: sampling is detached, drain both maps and every
 * ring row), turning every entry into a row with add_row(), which
 * reports its tasks, stacks and kernel addresses to @rec.
 * Returns 0 or -errno, with recorder__errorf() called.
 */
int drain__collect(struct drain *d, struct recorder *rec, int final);

/*
 * drain__start() - sampling starts: the intervals are [@base + s * @ns,
 * @base + (s + 1) * @ns) (CLOCK_MONOTONIC), and the kernel counts every
 * sample with its s (a mode with slots; else nothing to do).
 */
void drain__start(struct drain *d, uint64_t base, uint64_t ns);
/* The end of the interval @now is in; 0 without a grid (no slots). */
uint64_t drain__interval_end(const struct drain *d, uint64_t now);
/*
 * drain__intervals() - for how many intervals (@max at most) the counts
 * map may go undrained: 0 when the keys have no slot, else as many as
 * neither what the rows ring took since the last call, nor the entries
 * the last drain took from the counts map, both of the last @elapsed
 * intervals, fill half the ring or the map in.  Call once a flush.
 */
uint32_t drain__intervals(struct drain *d, uint32_t max, uint32_t elapsed);
/* The entries of each counts map. */
uint32_t drain__entries(const struct drain *d);
/* The counts map (0 or 1) the last drain__collect() emptied: no program
 * writes it, nor its set of statistics (STKREC_STAT_SETS), until the next. */
uint32_t drain__idle(const struct drain *d);

/* Write the collected rows as one chunk per interval they were counted
 * in, oldest first, each covering its interval between the flips before
 * and after them (the file's start @file_ns at most; without slots: one
 * chunk of @t0_ns..@t1_ns, the flush's interval), if there are any, then
 * forget them; rows row_end() gave an end go into a chunk per end,
 * covering the interval's start to end - 1, first (SPEC.md, CNTS).
 * @chunks is incremented for every chunk written.
 * Returns 0 or stk_writer__add_*()'s -errno. */
int drain__write(struct drain *d, struct stk_writer *w, uint64_t t0_ns, uint64_t file_ns,
		 uint64_t t1_ns, uint64_t *chunks);

/* Rows collected and not yet written. */
size_t drain__pending(const struct drain *d);

#endif
