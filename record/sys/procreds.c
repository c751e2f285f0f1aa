// SPDX-License-Identifier: BSD-2-Clause
/* A traced process's file-system credentials, taken by the calling thread
 * for one open (see procreds.h). */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procreds.h"
#include "readall.h"

/*
 * The capabilities the kernel drops from a thread's effective set when its
 * fsuid leaves 0 (CAP_FS_MASK, include/linux/capability.h), those that let
 * an open pass file permissions; CAP_MAC_OVERRIDE is the 33rd, in the
 * second word.
 */
#define FS_CAPS                                                                        \
	((1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH) | \
	 (1ull << CAP_FOWNER) | (1ull << CAP_FSETID) | (1ull << CAP_LINUX_IMMUTABLE) |     \
	 (1ull << CAP_MKNOD) | (1ull << CAP_MAC_OVERRIDE))

/* Parses "NAME:\t<n> <n> ..." at @line into up to @max numbers; how many. */
static int parse_ids(const char *line, uint32_t *out, int max)
{
	const char *p = strchr(line, ':');
	int n = 0;

	if (!p)
		return 0;
	p++;
	while (n < max) {
		char *end;
		unsigned long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v = strtoul(p, &end, 10);
		if (v > UINT32_MAX)
			break;
		out[n++] = (uint32_t)v;
		p = end;
	}
	return n;
}

/* Its user namespace is ours: the same nsfs inode. */
static int same_userns(const char *proc_root, uint32_t tgid)
{
	char path[4096];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/%u/ns/user", proc_root, tgid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/user", &b) < 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int procreds__read(const char *proc_root, uint32_t tgid, struct procreds *pc)
{
	enum { HAVE_UID = 1, HAVE_GID = 2, HAVE_CAPS = 4 };
	char path[4096], *buf = NULL, *line, *nl;
	uint32_t ids[4];
	size_t len;
	int have = 0, err;

	memset(pc, 0, sizeof(*pc));
	snprintf(path, sizeof(path), "%s/%u/status", proc_root, tgid);
	err = read_all(path, 2048, &buf, &len);
	if (err)
		goto out;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		/* Uid: real, effective, saved, file system. */
		if (strncmp(line, "Uid:", 4) == 0 && parse_ids(line, ids, 4) == 4) {
			pc->euid = ids[1];
			pc->fsuid = ids[3];
			have |= HAVE_UID;
		} else if (strncmp(line, "Gid:", 4) == 0 && parse_ids(line, ids, 4) == 4) {
			pc->fsgid = ids[3];
			have |= HAVE_GID;
		} else if (strncmp(line, "Groups:", 7) == 0) {
			pc->nr_groups = (uint32_t)parse_ids(line, pc->groups, PROCREDS_MAX_GROUPS);
		} else if (strncmp(line, "CapEff:", 7) == 0) {
			pc->cap_eff = strtoull(line + 7, NULL, 16);
			have |= HAVE_CAPS;
		}
	}
	/* Without CapEff (not seen on Linux): no capability. */
	if ((have & (HAVE_UID | HAVE_GID)) != (HAVE_UID | HAVE_GID)) {
		err = -EBADMSG;
		goto out;
	}
	pc->same_userns = same_userns(proc_root, tgid);
out:
	free(buf);
	return err;
}

/* The calling thread's credentials, as procreds__run() found them, and
 * what take() changed (restore() gives back only that). */
struct own {
	uint32_t fsuid, fsgid;
	int nr_groups;
	gid_t groups[PROCREDS_MAX_GROUPS];
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	int ids_set, groups_set, caps_set;
};

/*
 * A thread whose own credentials could not be taken back (restore()
 * failed twice) opens nothing more: it may hold another user's fsuid, or
 * lack capabilities stkrec's other work needs.  Per thread, as the
 * credentials are.
 */
static __thread int creds_lost;

static int caps_get(struct __user_cap_header_struct *hdr, struct __user_cap_data_struct *d)
{
	hdr->version = _LINUX_CAPABILITY_VERSION_3;
	hdr->pid = 0;	/* this thread */
	return syscall(SYS_capget, hdr, d) < 0 ? -errno : 0;
}

static uint64_t caps_word(const struct __user_cap_data_struct *d, int effective)
{
	return effective ? (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32
			 : (uint64_t)d[0].permitted | (uint64_t)d[1].permitted << 32;
}

/* Sets the thread's fsuid (@gid: fsgid) to @id; 0 or -EPERM.  The call
 * says no error: it returns the old id, and a second call what is set. */
static int set_fsid(int gid, uint32_t id)
{
	long nr = gid ? SYS_setfsgid : SYS_setfsuid;

	syscall(nr, (long)id);
	return (uint32_t)syscall(nr, -1L) == id ? 0 : -EPERM;
}

static int same_groups(const struct own *o, const struct procreds *pc)
{
	int i;

	if ((uint32_t)o->nr_groups != pc->nr_groups)
		return 0;
	for (i = 0; i < o->nr_groups; i++)
		if ((uint32_t)o->groups[i] != pc->groups[i])
			return 0;
	return 1;
}

/* The thread's effective set is @eff, what it had in @o.  0 or -errno. */
static int caps_set_eff(struct own *o, uint64_t eff)
{
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memcpy(d, o->caps, sizeof(d));
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	if (syscall(SYS_capset, &o->hdr, d) < 0)
		return -errno;
	o->caps_set = 1;
	return 0;
}

/* Can take another user's ids: CAP_SETUID and CAP_SETGID (root, or
 * given them), in the effective set of @o's capabilities. */
static int can_switch(const struct own *o)
{
	uint64_t need = (1ull << CAP_SETUID) | (1ull << CAP_SETGID);

	return (caps_word(o->caps, 1) & need) == need;
}

int procreds__can_take(void)
{
	struct own o;

	return caps_get(&o.hdr, o.caps) == 0 && can_switch(&o);
}

/*
 * Takes @pc on this thread, what it had in @o.  0 or -errno.  A thread
 * that cannot take another user's ids (stkrec not root: CAP_BPF and
 * CAP_PERFMON only) opens as itself, without the capabilities that pass
 * file permissions: never more than its own user could open.
 */
static int take(struct own *o, const struct procreds *pc)
{
	gid_t groups[PROCREDS_MAX_GROUPS];
	uint64_t eff;
	uint32_t i;
	int err;

	err = caps_get(&o->hdr, o->caps);
	if (err)
		return err;
	if (!can_switch(o))
		return caps_set_eff(o, caps_word(o->caps, 1) & ~FS_CAPS);
	o->fsuid = (uint32_t)syscall(SYS_setfsuid, -1L);
	o->fsgid = (uint32_t)syscall(SYS_setfsgid, -1L);
	o->nr_groups = getgroups(PROCREDS_MAX_GROUPS, o->groups);
	if (o->nr_groups < 0)
		return -errno;
	/* Raw: glibc's setgroups() would set every thread's. */
	if (!same_groups(o, pc)) {
		for (i = 0; i < pc->nr_groups; i++)
			groups[i] = (gid_t)pc->groups[i];
		if (syscall(SYS_setgroups, (long)pc->nr_groups, groups) < 0)
			return -errno;
		o->groups_set = 1;
	}
	o->ids_set = 1;
	if (set_fsid(1, pc->fsgid) || set_fsid(0, pc->fsuid))
		return -EPERM;
	/* Of the capabilities that pass file permissions, only the
	 * process's own, and only if they count here (its user namespace
	 * is ours: in one of its own they reach only its own files). */
	eff = caps_word(o->caps, 1) & ~FS_CAPS;
	if (pc->same_userns)
		eff |= pc->cap_eff & caps_word(o->caps, 0) & FS_CAPS;
	return caps_set_eff(o, eff);
}

/* Gives this thread back what take() changed of what @o says it had
 * (nothing it did not read first).  0 or -EIO. */
static int restore(struct own *o)
{
	int err = 0;

	/* fsuid first: back to 0 it raises the file capabilities again. */
	if (o->ids_set && (set_fsid(0, o->fsuid) || set_fsid(1, o->fsgid)))
		err = -EIO;
	if (o->groups_set && syscall(SYS_setgroups, (long)o->nr_groups, o->groups) < 0)
		err = -EIO;
	if (o->caps_set && syscall(SYS_capset, &o->hdr, o->caps) < 0)
		err = -EIO;
	return err;
}

int procreds__run(const struct procreds *pc, int (*fn)(void *arg), void *arg)
{
	struct own o = {};
	int ret, err;

	if (creds_lost)
		return -EIO;
	ret = take(&o, pc);
	if (ret == 0)
		ret = fn(arg);
	else
		ret = -EPERM;
	/* Once more if it fails (each step is idempotent); after that the
	 * thread opens nothing more. */
	err = restore(&o) && restore(&o) ? -EIO : 0;
	if (err) {
		creds_lost = 1;
		if (ret >= 0)
			close(ret);
		ret = err;
	}
	return ret;
}
