/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * modeobj.h - what every mode's BPF object has in common: the maps and
 * programs of bpf/common.bpf.h (stacks, stats, events, tgids, tids, the
 * counts0/counts1 pair, on_process_fork, and the ksym_io/symbolize_kaddrs
 * symbolizer), sized and handed to the recorder the same way whatever
 * the mode.  Each mode keeps its own skeleton; these helpers work on the
 * skeleton's struct bpf_object by map and program name.
 */
#ifndef STKREC_MODEOBJ_H
#define STKREC_MODEOBJ_H

#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "drain.h"
#include "mode.h"

struct btf;

struct bpf_object;

/*
 * modeobj__counts_entries() - entries of each counts map for @o: at least
 * a minimum, since a key is per thread and stack, so an interval can hold
 * more keys than there are stacks.
 */
uint32_t modeobj__counts_entries(const struct recorder_opts *o);

/*
 * modeobj__profile_counts_entries() - entries of each of profile's counts
 * maps for @o: the samples of four flush intervals at -F on every CPU
 * sampled (o->frequency, o->nr_cpus, o->flush_interval_ns; a row is one
 * sample at least), within modeobj__counts_entries()'s minimum and its
 * size.  Other modes count events no frequency bounds.
 */
uint32_t modeobj__profile_counts_entries(const struct recorder_opts *o);

/* The running kernel's BTF, read once for every question the modes ask of
 * it (which tracepoints exist, their arguments), or NULL. */
const struct btf *modeobj__kernel_btf(void);

/*
 * modeobj__btf_has_string() - whether the raw BTF file at @path (e.g.
 * /sys/kernel/btf/vmlinux) has the string @name (at most 125 bytes) in its
 * string section, without parsing its types: a type name no type has is
 * no string of it.
 * @return 1 or 0; -errno if @path cannot be read, -EBADMSG if it is no
 * BTF, -EINVAL if @name is too long.
 */
int modeobj__btf_has_string(const char *path, const char *name);

/*
 * modeobj__stack_ring_bytes() - bytes of the "stack_ring" for @o: 64 a
 * --stack-storage-size entry (a record is 8 bytes and 8 a frame), a power
 * of two, at least 256 KiB (a burst of a few thousand new stacks: an
 * off-CPU recording's threads all blocking at once).  The default 16384
 * gives 1 MiB.  BPF wakes the recorder to take it once half of it is
 * written.
 */
uint32_t modeobj__stack_ring_bytes(const struct recorder_opts *o);

/*
 * modeobj__rows_ring_bytes() - bytes of the profile mode's "rows_ring"
 * for @o: two flush intervals of rows at one a sample period on every CPU
 * (80 bytes a record), a power of two from 64 KiB to 64 MiB: 512 KiB at
 * 999 Hz on 2 CPUs.  Taken at every flush; a row it has no room for goes
 * to the counts map.
 */
uint32_t modeobj__rows_ring_bytes(const struct recorder_opts *o);

/*
 * modeobj__configure() - before load: size the common maps for @o (the
 * counts maps @counts_entries each, the stacks set and its ring by
 * --stack-storage-size; the filter maps for -p, -t or
 * -- CMD, @follow), and load on_process_fork only when following CMD's
 * children and symbolize_kaddrs only with @symbolizer; size the
 * .eh_frame unwinder's maps for @unwind (its BPF mode, 0: off; see
 * record/unwind/unwinder.h).  The mode sets its .rodata itself (MODEOBJ_SET_RODATA()).  Returns 0 or -errno with recorder__errorf() called.
 */
int modeobj__configure(struct bpf_object *obj, const struct recorder_opts *o, int follow,
		       int symbolizer, int unwind, uint32_t counts_entries, struct recorder *rec);

/*
 * MODEOBJ_SET_RODATA() - the .rodata every mode's object shares
 * (bpf/common.bpf.h, bpf/unwind.bpf.h, and user_stacks/kernel_stacks,
 * which every mode's program declares), set for @o, @follow and @unwind
 * (the unwinder's BPF mode) in @rodata, the skeleton's rodata.  A macro:
 * each skeleton has a rodata struct type of its own, with these fields
 * named alike.
 */
#define MODEOBJ_SET_RODATA(rodata, o, follow, unwind)					\
	do {										\
		(rodata)->filter_tgids = (follow) || (o)->nr_pids;			\
		(rodata)->filter_tids = (o)->nr_tids > 0;				\
		(rodata)->follow_children = (follow) != 0;				\
		(rodata)->user_stacks = !(o)->kernel_stacks_only;			\
		(rodata)->kernel_stacks = !(o)->user_stacks_only;			\
		(rodata)->unwind_mode = (__u8)(unwind);					\
		(rodata)->unwind_defer = (unwind) != 0;					\
		(rodata)->stack_ring_wake = modeobj__stack_ring_bytes(o) / 2;		\
	} while (0)

/* The skeleton's __load() failed with @err: say so.  Returns @err. */
int modeobj__load_failed(struct recorder *rec, int err);

/*
 * A mode's minimal kernel BTF for CO-RE (corebtf.h), while its object is
 * opened and loaded: zeroed with the mode, then modeobj__open_opts() before
 * each open and modeobj__btf_close() after each load.
 */
struct modeobj_btf {
	int fd;			/* the BTF's memfd, or -1 (0: never opened) */
	int open;		/* fd is one */
	int used;		/* the last open was given it */
	int off;		/* the kernel's BTF from now on */
	int err;		/* why not the minimal one: -errno, or 0 */
	char path[40];		/* /proc/self/fd/FD */
	struct bpf_object_open_opts opts;
};

/*
 * modeobj__open_opts() - the open options for the BPF object named @name
 * (the skeleton's, e.g. "profile") whose ELF bytes are @elf (@size): with
 * btf_custom_path the minimal BTF for its CO-RE relocations, made or read
 * from the cache of @o (--btf-cache), unless @btf is off or it cannot be
 * had (@btf->err says why; libbpf then uses the kernel's whole BTF).
 * Returns &@btf->opts.
 */
const struct bpf_object_open_opts *modeobj__open_opts(struct modeobj_btf *btf,
						      const struct recorder_opts *o,
						      const char *name, const void *elf,
						      size_t size);

/* modeobj__btf_close() - the load is done: close @btf's memfd. */
void modeobj__btf_close(struct modeobj_btf *btf);

/*
 * modeobj__load() - open and load the mode's skeleton with @load, with the
 * kernel address symbolizer unless -U or --kallsyms=full make it useless;
 * if that fails (it needs Linux 5.16 helpers), @unload what was opened and
 * @load again without it: the recorder then reads /proc/kallsyms.
 * @symbolizer: set to whether the loaded object has it.
 * The .eh_frame unwinder (its BPF mode for @o, unless -K) is tried first;
 * it needs bpf_loop (5.17+) and bpf_task_pt_regs (5.15+): if the object
 * does not load with it, it loads without (frame pointers), *@unwind is
 * then 0 and *@unwind_err the load's -errno.
 * First of all, a load with the minimal kernel BTF of @btf
 * (modeobj__open_opts()) that fails is tried again with the kernel's.
 * Returns 0 or @load's -errno (recorder__errorf()'d).
 */
int modeobj__load(struct rec_mode *m, const struct recorder_opts *o, int follow,
		  struct recorder *rec, struct modeobj_btf *btf,
		  int (*load)(struct rec_mode *m, const struct recorder_opts *o, int follow,
			      int symbolizer, int unwind, struct recorder *rec),
		  void (*unload)(struct rec_mode *m), int *symbolizer, int *unwind,
		  int *unwind_err);

/*
 * modeobj__hand_over() - after load: a drain of the object's counts0 and
 * counts1 maps (@d, its fds and @idx, the .bss counts_idx, filled in here)
 * into *@drain, owned by the mode; the fds of the common maps (the
 * symbolizer's -1 without @symbolizer, the unwinder's -1 without
 * @unwind; @unwind_err into maps->unwind_load_err) and the drain into
 * @maps.
 * Returns 0 or -ENOMEM (recorder__errorf()'d).
 */
int modeobj__hand_over(const struct bpf_object *obj, uint32_t *idx, int symbolizer,
		       int unwind, int unwind_err, const struct drain_opts *d, struct drain **drain, struct rec_maps *maps,
		       struct recorder *rec);

#endif
