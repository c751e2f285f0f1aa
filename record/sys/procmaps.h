/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procmaps.h - snapshots of /proc/PID/maps with the GNU build-id of every
 * mapped ELF file, taken while the process is alive.
 *
 * A snapshot keeps the executable mappings, plus the offset-0 mapping of
 * each file that has an executable mapping (so the reporter can compute
 * the file's load bias); data mappings tell a report nothing.  Build-ids are read
 * through /proc/PID/map_files/START-END, which works for deleted files and
 * other mount namespaces, else through /proc/PID/root/PATH, and are cached
 * by (device, inode) so a library is read once.
 */
#ifndef STKREC_PROCMAPS_H
#define STKREC_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "stk.h"

/* One parsed line of /proc/PID/maps. */
struct procmaps_line {
	uint64_t start, end, offset, dev, inode;
	uint32_t prot;		/* PROT_READ|PROT_WRITE|PROT_EXEC */
	const char *path;	/* points into the parsed line; "" when anonymous */
};

/*
 * procmaps__parse_line() - parse one maps line (without or with its
 * trailing newline, which is removed).  @line is modified: the path is
 * terminated in place.
 * Returns 0 or -EINVAL.
 */
int procmaps__parse_line(char *line, struct procmaps_line *out);

struct procmaps;

/* A reader with its build-id cache.  NULL with errno = ENOMEM. */
struct procmaps *procmaps__new(void);
void procmaps__free(struct procmaps *pm);

/*
 * procmaps__snapshot() - read /proc/@tgid/maps now.
 * @proc_root: "/proc" (tests may pass another directory laid out alike).
 * @comm: recorded with the snapshot (16 bytes, NUL-terminated).
 * @out: receives the snapshot; its arrays and strings are malloc'ed and
 *       freed by procmaps__free_snapshot().
 *
 * Mappings whose build-id cannot be read get build_id_size 0 and count in
 * procmaps__stats().  Returns 0, or -ENOENT (the process is gone), -EACCES
 * / -EPERM, -ENOMEM or another read error.
 */
int procmaps__snapshot(struct procmaps *pm, const char *proc_root, uint32_t tgid,
		       const char *comm, uint64_t time_ns, struct stk_proc_maps *out);

void procmaps__free_snapshot(struct stk_proc_maps *snap);

/*
 * procmaps__file_build_id() - the build-id of the file that process @tgid
 * maps at @l (a line of its maps, or a mapping an MMAP2 record told),
 * through the cache, into @id (STK_MAX_BUILD_ID bytes).
 * @proc_root: as for procmaps__snapshot().
 *
 * The file is opened with the process's own credentials (procreds.h),
 * so only if the process could open it itself; it is reached through
 * /proc/PID/map_files, else by @l->path in the process's root.  A process
 * gone (no credentials to take): by @l->path in ours, only the mapped
 * (@l->dev, @l->inode), and only if its mode lets someone read it (not
 * an execute-only binary).  A path is the
 * traced process's to change, so it is resolved without following any
 * symbolic link, and only a regular file is read, never opened before it
 * is known to be one (no FIFO, device or terminal is ever opened).  With
 * @l->inode != 0 the file must be (@l->dev, @l->inode).
 * Returns its size (> 0), 0 when the file has none, -ESTALE when the path
 * now names another file, -EINVAL when it names no regular file (a
 * symbolic link included), -ELOOP when a directory on the way is a
 * symbolic link, -EACCES or -EPERM when the process could not open it
 * (procreds__refused()), or the open()/read() -errno.
 */
int procmaps__file_build_id(struct procmaps *pm, const char *proc_root, uint32_t tgid,
			    const struct procmaps_line *l, uint8_t *id);

/*
 * procmaps__hold_creds() - the files of process @tgid whose build-ids are
 * read from now until procmaps__drop_creds() share one read of its
 * credentials, as a procmaps__snapshot() does (procmaps__file_build_id()
 * reads them again for each file otherwise): for a snapshot made
 * elsewhere (the mmap watcher's).
 */
void procmaps__hold_creds(struct procmaps *pm, uint32_t tgid);
void procmaps__drop_creds(struct procmaps *pm);

/*
 * procmaps__open_mapped() - open the file process @tgid maps at @l for
 * reading, as procmaps__file_build_id() reaches it (with the process's
 * credentials: map_files, else the path in the process's root without
 * following any symbolic link, only a regular file, the mapped (@l->dev,
 * @l->inode) when @l->inode != 0).  Any thread: the credentials are
 * taken by the calling thread for the open only.
 * Returns the fd (O_RDONLY|O_CLOEXEC; the caller closes it), or -errno as
 * procmaps__file_build_id().
 */
int procmaps__open_mapped(const char *proc_root, uint32_t tgid, const struct procmaps_line *l);

/*
 * procmaps__vdso_build_id() - the build-id of the vDSO (the same image in
 * every process of this kernel and ABI; read once, from our own).
 * Returns its size, or 0 if it has none or cannot be read.
 */
int procmaps__vdso_build_id(struct procmaps *pm, uint8_t *id);

/*
 * procmaps__vdso_image() - our own vDSO's ELF image: *@img, *@size bytes,
 * valid for the life of the process.  Returns its build-id size (> 0), or
 * 0 (no vDSO, or one without a build-id; *@img and *@size untouched).
 */
int procmaps__vdso_image(struct procmaps *pm, const void **img, size_t *size);

/*
 * procmaps__proc_vdso_build_id() - the build-id of the [vdso] mapped at
 * [@start, @end) in process @tgid, read from its memory
 * (@proc_root/@tgid/mem), into @id (STK_MAX_BUILD_ID bytes).  A process
 * may have another vDSO than ours (a 32-bit process); one that differs
 * counts in procmaps_stats.vdso_other.  When its memory cannot be read,
 * ours is assumed if the mapping has our vDSO's size.
 * Returns the build-id size, or 0 when unknown.
 */
int procmaps__proc_vdso_build_id(struct procmaps *pm, const char *proc_root, uint32_t tgid,
				 uint64_t start, uint64_t end, uint8_t *id);

/*
 * procmaps__vsyscall() - the [vsyscall] page (x86-64: the same fixed
 * address in every process, never mmap'ed, so no mmap record tells it), as
 * our own /proc/self/maps shows it (read once).  Returns 1 and fills @out
 * (path "[vsyscall]"), or 0 when there is none.
 */
int procmaps__vsyscall(struct procmaps *pm, struct procmaps_line *out);

/*
 * procmaps__covers() - 1 if @addr lies in an executable mapping of @snap.
 */
int procmaps__covers(const struct stk_proc_maps *snap, uint64_t addr);

struct procmaps_stats {
	uint64_t snapshots;		/* successful snapshots */
	uint64_t build_ids_read;	/* distinct files whose build-id was read */
	uint64_t build_id_missing;	/* files with no build-id note */
	uint64_t build_id_errors;	/* mappings whose file could not be opened, or
					 * files that could not be parsed */
	uint64_t vdso_other;		/* [vdso] mappings read with another build-id than ours */
	uint64_t files_refused;		/* mappings whose file the process could
					 * not open itself (procreds.h) */
};

void procmaps__stats(const struct procmaps *pm, struct procmaps_stats *st);

#endif
