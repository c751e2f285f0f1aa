/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procreds.h - a traced process's file-system credentials, taken by the
 * calling thread while it opens a file that process names (its perf map,
 * its mapped files, anything under /proc/PID/root), so that stkrec, root,
 * opens only what the process itself could.
 *
 * Linux keeps credentials per thread (struct cred of each task); the libc
 * wrappers of setgroups()/setresuid() change them in every thread of the
 * process, the raw system calls in the calling thread only.  So the
 * calling thread takes, by raw syscalls, the process's supplementary
 * groups, fsgid and fsuid (read from /proc/PID/status, its ids as seen
 * from stkrec's user namespace), and of the capabilities that override
 * file permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
 * ...) keeps only those the process has itself in stkrec's user namespace;
 * the kernel then checks every step of the open (the directories searched,
 * the file's mode and ACLs) as it would for the process.  The others
 * (CAP_SYS_PTRACE for /proc/PID/root, CAP_CHECKPOINT_RESTORE or
 * CAP_SYS_ADMIN for /proc/PID/map_files) stay: they reach the process's
 * files, they do not read them.  The thread's own credentials are back
 * before procreds__run() returns; an fd opened meanwhile is read under
 * any credentials.
 */
#ifndef STKREC_PROCREDS_H
#define STKREC_PROCREDS_H

#include <errno.h>
#include <stdint.h>

/* Supplementary groups taken; a process in more is given only these
 * (it may then be refused a file one of the others opens). */
#define PROCREDS_MAX_GROUPS 256

struct procreds {
	uint32_t euid;		/* effective uid: the owner a perf map must have */
	uint32_t fsuid;
	uint32_t fsgid;
	uint32_t nr_groups;
	uint32_t groups[PROCREDS_MAX_GROUPS];
	uint64_t cap_eff;	/* effective capabilities (in its user namespace) */
	int same_userns;	/* its user namespace is stkrec's: its
				 * capabilities count here */
};

/*
 * procreds__read() - the credentials of process @tgid, from
 * @proc_root/@tgid/status (Uid, Gid, Groups, CapEff) and, for its user
 * namespace, @proc_root/@tgid/ns/user (missing, e.g. under a fake
 * @proc_root: taken to be another namespace, so no capability counts).
 *
 * Returns 0, -ESRCH / -ENOENT (no such process), -EBADMSG (a status
 * without those lines) or another -errno.
 */
int procreds__read(const char *proc_root, uint32_t tgid, struct procreds *pc);

/*
 * procreds__run() - on the calling thread, take @pc's file-system
 * credentials, call @fn(@arg), and take the thread's own back.
 *
 * A thread that cannot take another user's ids (stkrec not root, with
 * CAP_BPF and CAP_PERFMON but not CAP_SETUID and CAP_SETGID) calls @fn as
 * itself, without the capabilities that pass file permissions: it opens
 * what stkrec's own user could, never more, whatever the process could.
 *
 * Returns what @fn returned (an fd it opened, or -errno); or, @fn not
 * called, -EPERM when the credentials could not be taken; or -EIO when
 * the thread's own credentials could not be taken back, even at a second
 * try (an fd @fn returned is closed; the thread is left with at most the
 * process's rights, never more, and every later call on it returns -EIO
 * without opening anything).
 */
int procreds__run(const struct procreds *pc, int (*fn)(void *arg), void *arg);

/*
 * procreds__can_take() - the calling thread can take a process's
 * credentials (CAP_SETUID and CAP_SETGID are in its effective set): 1 or 0.
 */
int procreds__can_take(void);

/*
 * procreds__refused() - @err, from an open under procreds__run(), says the
 * process could not open the file itself (-EACCES, -EPERM, with the
 * process's credentials taken).  Not when stkrec opens as itself
 * (procreds__can_take() 0): its refusal says nothing of the process's.
 */
static inline int procreds__refused(int err)
{
	return (err == -EACCES || err == -EPERM) && procreds__can_take();
}

#endif
