/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corebtf.h - a minimal kernel BTF for a BPF object's CO-RE relocations,
 * made once per boot and kept in a cache directory, so that libbpf need
 * not parse the kernel's whole BTF (5+ MB, ~150k types) at each start:
 * its parse and the CO-RE candidate search over it were ~15 ms, a third
 * of stkrec's start-up.  What bpftool's `gen min_core_btf` makes, built
 * here with libbpf's public btf__*() API only.
 */
#ifndef STKREC_COREBTF_H
#define STKREC_COREBTF_H

#include <stddef.h>
#include <stdint.h>

struct btf;

/* Where the minimal BTFs are kept unless told otherwise. */
#define COREBTF_DIR "/var/cache/stk/btf"

/*
 * corebtf__minimize() - the types of @vmlinux that the CO-RE relocations
 * of the BPF object @obj (its ELF bytes, @obj_size) can match, each
 * struct or union with all its members (names, offsets, bitfields) but
 * only those named on some relocation's access path, or anonymous, with
 * their real types; the others' types are a placeholder int, as libbpf's
 * matching looks at a member's type only once its name matched.  Every
 * type of the kernel's whose name a relocation's root has is kept, so the
 * candidates libbpf finds, and what it computes from them, are the ones
 * the whole BTF gives.  (Relocations asking for a kernel type's id,
 * bpf_core_type_id_kernel(), would get the minimal BTF's ids: refused.)
 *
 * @out gets a new BTF for btf__free().  Returns 0, -EBADMSG when @obj has
 * no .BTF or its .BTF.ext cannot be read, -EOPNOTSUPP for a relocation
 * kind it cannot serve, -ENOMEM, or libbpf's -errno.
 */
int corebtf__minimize(const struct btf *vmlinux, const void *obj, size_t obj_size,
		      struct btf **out);

/*
 * corebtf__open() - a file descriptor (a sealed memfd, O_CLOEXEC) holding
 * the minimal BTF for @obj on this boot of this kernel: read from @dir
 * when a file there was made for this boot (/proc/sys/kernel/random/boot_id),
 * this release and these bytes of @obj, and is whole (its CRC); otherwise
 * made from /sys/kernel/btf/vmlinux and stored there (a directory that
 * cannot be made ours alone, cachedir__make(), gives -EACCES: made at each
 * start it would cost more than libbpf's own parse).
 * A damaged or foreign file is made again, never used.  @dir NULL: no
 * cache, made each time.  @made, if not NULL, is set to 1 when it was made
 * rather than read.  Pass "/proc/self/fd/FD" as
 * bpf_object_open_opts.btf_custom_path and close it after the load.
 * Returns the fd or -errno.
 */
int corebtf__open(const char *dir, const char *name, const void *obj, size_t obj_size,
		  int *made);

#endif /* STKREC_COREBTF_H */
