/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rootopen.h - opening a path recorded in a capture under a directory
 * (--sysroot, --debug-dir) without leaving it, and only ever a regular
 * file.
 *
 * A capture may come from anywhere: its paths may hold "..", and a sysroot
 * copied from another machine holds symlinks to absolute paths meant for
 * that machine.  Inside a root, "/" and ".." at the root are the root
 * itself and every symlink is resolved inside it (as chroot would, and as
 * openat2(RESOLVE_IN_ROOT) does); procfs magic links are refused.  No
 * FIFO, device or socket is ever opened for reading (a FIFO would block
 * the open for good), nor is a directory returned.
 */
#ifndef STK_REPORT_ROOTOPEN_H
#define STK_REPORT_ROOTOPEN_H

/* Symlinks followed in one resolution before -ELOOP (the kernel's 40). */
#define ROOTOPEN_MAX_LINKS 40

/*
 * root_open() - open @path inside the directory @rootfd.
 * @rootfd: a directory fd (O_PATH is enough): the root.
 * @path: absolute or relative; either way taken from the root.
 *
 * Uses openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) (Linux 5.6+), and
 * root_open_walk() where openat2 is missing (ENOSYS) or refuses the flags.
 *
 * Returns an fd (O_RDONLY, O_CLOEXEC, blocking) of a regular file, or
 * -ENOENT, -EACCES, -ENOTDIR, -ELOOP (too many symlinks), -EISDIR (a
 * directory), -ENXIO (a FIFO, device or socket: not opened), -ENOMEM,
 * -ENAMETOOLONG.  The caller closes the fd.
 */
int root_open(int rootfd, const char *path);

/*
 * root_open_walk() - root_open() without openat2: one component at a
 * time, each looked at with fstatat(AT_SYMLINK_NOFOLLOW) and opened with
 * O_NOFOLLOW; ".." pops to the parent already opened (never above the
 * root), symlinks are read with readlinkat() and their targets resolved
 * the same way (absolute ones from the root), at most ROOTOPEN_MAX_LINKS.
 * Same returns as root_open().  Public so tests can run it on any kernel.
 */
int root_open_walk(int rootfd, const char *path);

/*
 * regular_open() - open @path (not confined: the host's own paths) for
 * reading without blocking on a FIFO, and keep it only if it is a regular
 * file.  Same returns as root_open().
 */
int regular_open(const char *path);

#endif
