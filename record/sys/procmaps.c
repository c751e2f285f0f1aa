// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildid.h"
#include "idmap.h"
#include "procmaps.h"
#include "procreds.h"
#include "readall.h"

/* A file whose build-id was read.  Keyed by device, inode, size and mtime,
 * so a binary rewritten in place (same inode) is read again. */
struct bid_entry {
	uint64_t dev, ino, size, mtime_ns;
	int state;		/* > 0 build-id size, 0 none, < 0 -errno */
	uint8_t id[STK_MAX_BUILD_ID];
};

struct procmaps {
	struct idmap *index;	/* hash of the key -> entry index */
	struct bid_entry *entries;
	size_t nr_entries, cap_entries;
	int vsyscall_read;	/* 1 once vsyscall is known */
	struct procmaps_line vsyscall;	/* end == 0: none */
	int vdso_read;		/* 1 once vdso_state is known */
	int vdso_state;		/* as bid_entry.state */
	uint8_t vdso_id[STK_MAX_BUILD_ID];
	const void *vdso_image;	/* our own vDSO, mapped for our whole life */
	size_t vdso_size;	/* 0: we have none */
	int vdso_size_seen;	/* another process's vDSO of our size was ours */
	/* During a snapshot: its process's credentials, read once at the
	 * first file opened (creds_err: how that went). */
	uint32_t creds_tgid;	/* 0: none held */
	int creds_read, creds_err;
	struct procreds creds;
	struct procmaps_stats stats;
};

/* Parse hex digits at *@p up to @stop; at least one, at most 16. */
static int parse_hex(char **p, char stop, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;
	char c;

	while ((c = **p) != stop) {
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return -EINVAL;
		if (++n > 16)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	(*p)++; /* the separator */
	*out = v;
	return 0;
}

/*
 * The kernel writes a newline in a mapping's path as "\012" (show_map()'s
 * seq_file_path(..., "\n")) and escapes nothing else: turn those back, so
 * the path is the file's name, as the mmap side-band gives it.
 */
static void unescape_newlines(char *path)
{
	char *w;

	/* Most paths have none: copy nothing. */
	path = strstr(path, "\\012");
	if (!path)
		return;
	for (w = path; *path; path++) {
		if (path[0] == '\\' && path[1] == '0' && path[2] == '1' && path[3] == '2') {
			*w++ = '\n';
			path += 3;
		} else {
			*w++ = *path;
		}
	}
	*w = '\0';
}

/*
 * By hand rather than sscanf(): a busy system starts hundreds of processes
 * a second and each snapshot parses every line of its maps.
 * "start-end perms offset major:minor inode   path"
 */
int procmaps__parse_line(char *line, struct procmaps_line *out)
{
	uint64_t start, end, offset, maj, min, inode = 0;
	char *p = line, *nl, perms[4];
	int i;

	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	if (parse_hex(&p, '-', &start) || parse_hex(&p, ' ', &end) || end < start)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!p[i] || p[i] == ' ')
			return -EINVAL;
		perms[i] = p[i];
	}
	if (p[4] != ' ')
		return -EINVAL;
	p += 5;
	if (parse_hex(&p, ' ', &offset) || parse_hex(&p, ':', &maj) || parse_hex(&p, ' ', &min))
		return -EINVAL;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9')
		inode = inode * 10 + (uint64_t)(*p++ - '0');
	if (*p && *p != ' ')
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	out->start = start;
	out->end = end;
	out->offset = offset;
	out->dev = makedev((unsigned int)maj, (unsigned int)min);
	out->inode = inode;
	out->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		    (perms[2] == 'x' ? PROT_EXEC : 0);
	out->path = p;
	unescape_newlines(p);
	return 0;
}

struct procmaps *procmaps__new(void)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->index = idmap__new();
	if (!pm->index) {
		free(pm);
		errno = ENOMEM;
		return NULL;
	}
	return pm;
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	idmap__free(pm->index);
	free(pm->entries);
	free(pm);
}

void procmaps__free_snapshot(struct stk_proc_maps *snap)
{
	size_t i;

	if (!snap || !snap->mappings)
		return;
	for (i = 0; i < snap->nr_mappings; i++)
		free((char *)snap->mappings[i].path);
	free((struct stk_mapping *)snap->mappings);
	snap->mappings = NULL;
	snap->nr_mappings = 0;
}

int procmaps__covers(const struct stk_proc_maps *snap, uint64_t addr)
{
	size_t i;

	for (i = 0; i < snap->nr_mappings; i++) {
		const struct stk_mapping *m = &snap->mappings[i];

		if ((m->prot & PROT_EXEC) && addr >= m->start && addr < m->end)
			return 1;
	}
	return 0;
}

void procmaps__stats(const struct procmaps *pm, struct procmaps_stats *st)
{
	*st = pm->stats;
}

static uint64_t key_hash(const struct stat *st)
{
	uint64_t h = (uint64_t)st->st_dev * 0x9E3779B185EBCA87ULL;

	h ^= (uint64_t)st->st_ino * 0xC2B2AE3D27D4EB4FULL;
	h ^= (uint64_t)st->st_size * 0x165667B19E3779F9ULL;
	h ^= (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
	return h;
}

static struct bid_entry *cache_find(struct procmaps *pm, const struct stat *st)
{
	uint64_t *idx = idmap__find(pm->index, key_hash(st));
	struct bid_entry *e;

	if (!idx)
		return NULL;
	e = &pm->entries[*idx];
	if (e->dev != (uint64_t)st->st_dev || e->ino != (uint64_t)st->st_ino ||
	    e->size != (uint64_t)st->st_size ||
	    e->mtime_ns != (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec)
		return NULL; /* a hash collision: read it again, never trust it */
	return e;
}

static void cache_add(struct procmaps *pm, const struct stat *st, int state, const uint8_t *id)
{
	struct bid_entry *e;

	if (pm->nr_entries == pm->cap_entries) {
		size_t cap = pm->cap_entries ? pm->cap_entries * 2 : 64;
		struct bid_entry *n = realloc(pm->entries, cap * sizeof(*n));

		if (!n)
			return; /* only a cache */
		pm->entries = n;
		pm->cap_entries = cap;
	}
	if (idmap__set(pm->index, key_hash(st), pm->nr_entries))
		return;
	e = &pm->entries[pm->nr_entries++];
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
	e->state = state;
	if (state > 0)
		memcpy(e->id, id, (size_t)state);
}

/*
 * Build-id of the file open on @fd (closed here), through the cache, or 0
 * / -errno.  With @inode != 0, the file must be that (@dev, @inode), else
 * -ESTALE: a path can name another file by now.
 */
static int fd_build_id(struct procmaps *pm, int fd, uint64_t dev, uint64_t inode, uint8_t *id)
{
	struct bid_entry *e;
	struct stat st;
	int n;

	if (fstat(fd, &st) < 0) {
		n = -errno;
		close(fd);
		pm->stats.build_id_errors++;
		return n;
	}
	if (inode && ((uint64_t)st.st_ino != inode || (uint64_t)st.st_dev != dev)) {
		close(fd);
		pm->stats.build_id_errors++;
		return -ESTALE;
	}
	e = cache_find(pm, &st);
	if (e) {
		close(fd);
		if (e->state > 0)
			memcpy(id, e->id, (size_t)e->state);
		return e->state;
	}
	n = buildid__from_elf_fd(fd, id, STK_MAX_BUILD_ID);
	close(fd);
	if (n > 0)
		pm->stats.build_ids_read++;
	else if (n == 0)
		pm->stats.build_id_missing++;
	else
		pm->stats.build_id_errors++;
	cache_add(pm, &st, n, id);
	return n;
}

/*
 * A path a traced process names is the process's to change: by the time
 * we open it, it may be a FIFO (an open() for reading blocks until a
 * writer comes, forever), a device (opening one has effects of its own), a
 * terminal, or a symbolic link to any of these or to a file of ours.  So
 * the file is looked up with O_PATH, which opens nothing, checked on that
 * fd (a regular file, and the mapped one where the device and inode are
 * known), and only then opened for reading through /proc/self/fd, which
 * reopens that same inode without resolving any path again.  O_NONBLOCK
 * and O_NOCTTY stay as a second guard.  @readable: the file must grant
 * someone read permission (see open_gone()).
 */
static int reopen_regular(int pfd, uint64_t dev, uint64_t inode, int readable)
{
	char self[64];
	struct stat st;
	int fd, err;

	if (fstat(pfd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (inode && ((uint64_t)st.st_ino != inode || (uint64_t)st.st_dev != dev)) {
		err = -ESTALE;
		goto out;
	}
	if (readable && !(st.st_mode & 0444)) {
		err = -EACCES;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : fd;
out:
	close(pfd);
	return err;
}

/*
 * O_PATH fd of @path under @dirfd.  The kernel writes mapping paths with
 * d_path(), which resolves every symbolic link, so a path that meets one
 * has been tampered with: RESOLVE_NO_SYMLINKS (openat2, Linux 5.6+;
 * before it, O_NOFOLLOW guards the last component only).  @in_root:
 * @dirfd is the process's root, ".." stops there (RESOLVE_IN_ROOT).
 */
static int open_path(int dirfd, const char *path, int in_root)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (in_root ? RESOLVE_IN_ROOT : 0),
	};
	int fd;

	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(dirfd, in_root && path[0] == '/' ? path + 1 : path,
			    O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* What an open of a mapped file needs. */
struct mapped_open {
	const char *proc_root;
	uint32_t tgid;
	const struct procmaps_line *l;
};

static int is_deleted(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path);

	return len > sizeof(deleted) - 1 &&
	       strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0;
}

/* Under the process's credentials (procreds.h): the kernel checks the
 * file, and the directories on a path, as for the process. */
static int open_mapped_as(void *arg)
{
	const struct mapped_open *mo = arg;
	const struct procmaps_line *l = mo->l;
	char path[4096 + 64];
	int pfd, rootfd, err;

	/* The mapped file itself, whatever its path names now; needs
	 * CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN and a live process.  The
	 * link is the kernel's own ("magic"), so it is followed. */
	snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, mo->proc_root,
		 mo->tgid, l->start, l->end);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd >= 0)
		return reopen_regular(pfd, l->dev, l->inode, 0);
	err = -errno;
	if (l->path[0] != '/' || is_deleted(l->path))
		return err;
	/* The path in the process's root (its mount namespace, its
	 * chroot); gone since its credentials were read, in ours. */
	snprintf(path, sizeof(path), "%s/%u/root", mo->proc_root, mo->tgid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	pfd = open_path(rootfd >= 0 ? rootfd : AT_FDCWD, l->path, rootfd >= 0);
	if (rootfd >= 0)
		close(rootfd);
	if (pfd < 0)
		return pfd;
	return reopen_regular(pfd, l->dev, l->inode, 0);
}

/*
 * The process is gone, and its credentials with it: the path in our root,
 * only the file it mapped (@l->inode, which it opened for reading to map
 * it, but for the executable and its interpreter, which exec maps when it
 * may only execute them), and only a file someone may read (not an
 * execute-only binary).
 */
static int open_gone(const struct procmaps_line *l)
{
	int pfd;

	if (l->path[0] != '/' || is_deleted(l->path) || !l->inode)
		return -ESRCH;
	pfd = open_path(AT_FDCWD, l->path, 0);
	if (pfd < 0)
		return pfd;
	return reopen_regular(pfd, l->dev, l->inode, 1);
}

/* Opens @l's file with @pc, else (@creds_err: why there are none) as the
 * process is gone. */
static int open_mapped(const char *proc_root, uint32_t tgid, const struct procmaps_line *l,
		       const struct procreds *pc, int creds_err)
{
	struct mapped_open mo = { .proc_root = proc_root, .tgid = tgid, .l = l };

	if (pc)
		return procreds__run(pc, open_mapped_as, &mo);
	if (creds_err == -ENOENT || creds_err == -ESRCH)
		return open_gone(l);
	return creds_err;
}

int procmaps__open_mapped(const char *proc_root, uint32_t tgid, const struct procmaps_line *l)
{
	struct procreds pc;
	int err = procreds__read(proc_root, tgid, &pc);

	return open_mapped(proc_root, tgid, l, err ? NULL : &pc, err);
}

void procmaps__hold_creds(struct procmaps *pm, uint32_t tgid)
{
	pm->creds_tgid = tgid;
	pm->creds_read = 0;
}

void procmaps__drop_creds(struct procmaps *pm)
{
	pm->creds_tgid = 0;
}

int procmaps__file_build_id(struct procmaps *pm, const char *proc_root, uint32_t tgid,
			    const struct procmaps_line *l, uint8_t *id)
{
	int fd;

	if (pm->creds_tgid == tgid) {
		if (!pm->creds_read) {
			pm->creds_err = procreds__read(proc_root, tgid, &pm->creds);
			pm->creds_read = 1;
		}
		fd = open_mapped(proc_root, tgid, l, pm->creds_err ? NULL : &pm->creds,
				 pm->creds_err);
	} else {
		fd = procmaps__open_mapped(proc_root, tgid, l);
	}
	if (fd < 0) {
		if (procreds__refused(fd))
			pm->stats.files_refused++;
		else
			pm->stats.build_id_errors++;
		return fd;
	}
	return fd_build_id(pm, fd, l->dev, l->inode, id);
}

/* Size of our own [vDSO] mapping, or 0. */
static uint64_t self_vdso_size(unsigned long base)
{
	char line[512];
	uint64_t size = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct procmaps_line l;

		if (procmaps__parse_line(line, &l) == 0 && l.start == base) {
			size = l.end - l.start;
			break;
		}
	}
	fclose(f);
	return size;
}

int procmaps__vsyscall(struct procmaps *pm, struct procmaps_line *out)
{
	char line[512];
	FILE *f;

	if (!pm->vsyscall_read) {
		pm->vsyscall_read = 1;
		f = fopen("/proc/self/maps", "re");
		while (f && fgets(line, sizeof(line), f)) {
			struct procmaps_line l;

			if (procmaps__parse_line(line, &l) == 0 && strcmp(l.path, "[vsyscall]") == 0) {
				pm->vsyscall = l;
				pm->vsyscall.path = "[vsyscall]";
				break;
			}
		}
		if (f)
			fclose(f);
	}
	if (!pm->vsyscall.end)
		return 0;
	*out = pm->vsyscall;
	return 1;
}

/* Our own vDSO, read once, bounded by our own mapping. */
static void vdso_read_self(struct procmaps *pm)
{
	unsigned long base;

	if (pm->vdso_read)
		return;
	pm->vdso_read = 1;
	base = getauxval(AT_SYSINFO_EHDR);
	pm->vdso_size = base ? self_vdso_size(base) : 0;
	pm->vdso_image = (const void *)base;
	pm->vdso_state = pm->vdso_size ? buildid__from_elf_mem(pm->vdso_image, pm->vdso_size,
							       pm->vdso_id, sizeof(pm->vdso_id))
				       : 0;
}

int procmaps__vdso_build_id(struct procmaps *pm, uint8_t *id)
{
	vdso_read_self(pm);
	if (pm->vdso_state <= 0)
		return 0;
	memcpy(id, pm->vdso_id, (size_t)pm->vdso_state);
	return pm->vdso_state;
}

int procmaps__vdso_image(struct procmaps *pm, const void **img, size_t *size)
{
	vdso_read_self(pm);
	if (pm->vdso_state <= 0)
		return 0;
	*img = pm->vdso_image;
	*size = pm->vdso_size;
	return pm->vdso_state;
}

/* The vDSO is a few pages; anything larger is not one we know. */
#define VDSO_MAX_SIZE (1u << 20)

int procmaps__proc_vdso_build_id(struct procmaps *pm, const char *proc_root, uint32_t tgid,
				 uint64_t start, uint64_t end, uint8_t *id)
{
	size_t size = end > start ? end - start : 0;
	char path[4096];
	uint8_t *buf = NULL;
	ssize_t got = -1;
	int fd, n;

	vdso_read_self(pm);
	if (!size || size > VDSO_MAX_SIZE)
		return 0;
	/* Once one process's vDSO of our size proved to be ours, the others
	 * of that size are taken to be too (the kernel's images differ in
	 * size, below): reading each new process's memory was a sixth of a
	 * system-wide recorder's CPU on a machine starting processes all
	 * the time. */
	if (pm->vdso_size_seen && size == pm->vdso_size && pm->vdso_state > 0) {
		memcpy(id, pm->vdso_id, (size_t)pm->vdso_state);
		return pm->vdso_state;
	}
	/* Root (or a ptrace-capable caller) reads any process's memory; the
	 * vDSO pages are ordinary pages there (gdb reads them the same way). */
	snprintf(path, sizeof(path), "%s/%u/mem", proc_root, tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		buf = malloc(size);
		if (buf)
			got = pread(fd, buf, size, (off_t)start);
		close(fd);
	}
	n = got == (ssize_t)size ? buildid__from_elf_mem(buf, size, id, STK_MAX_BUILD_ID) : 0;
	free(buf);
	if (n > 0) {
		if (n != pm->vdso_state || memcmp(id, pm->vdso_id, (size_t)n) != 0)
			pm->stats.vdso_other++;
		else if (size == pm->vdso_size)
			pm->vdso_size_seen = 1;
		return n;
	}
	/* Unreadable (the process is gone or has exec'd since, or we may not
	 * ptrace it): the kernel's vDSO images (64-bit, 32-bit, x32) differ
	 * in size, so one of our size is taken to be ours. */
	if (size != pm->vdso_size || pm->vdso_state <= 0)
		return 0;
	memcpy(id, pm->vdso_id, (size_t)pm->vdso_state);
	return pm->vdso_state;
}

/* Index of the first executable mapping of the same file as @l, or -1. */
static long exec_mapping_of(const struct procmaps_line *lines, size_t n, const struct procmaps_line *l)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((lines[i].prot & PROT_EXEC) && lines[i].inode == l->inode &&
		    lines[i].dev == l->dev && strcmp(lines[i].path, l->path) == 0)
			return (long)i;
	return -1;
}

int procmaps__snapshot(struct procmaps *pm, const char *proc_root, uint32_t tgid,
		       const char *comm, uint64_t time_ns, struct stk_proc_maps *out)
{
	struct procmaps_line *lines = NULL;
	struct stk_mapping *maps = NULL;
	size_t len = 0, nr = 0, cap = 0, nmaps = 0, i;
	char path[4096], *text = NULL, *p, *end;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, tgid);
	err = read_all(path, 16384, &text, &len);
	if (err == -ESRCH)	/* the process exited while we read */
		err = -ENOENT;
	if (err)
		goto out;
	for (p = text; p < text + len; p = end + 1) {
		end = strchr(p, '\n');
		if (!end)
			end = text + len;
		*end = '\0';
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct procmaps_line *n = realloc(lines, ncap * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				goto out;
			}
			lines = n;
			cap = ncap;
		}
		if (procmaps__parse_line(p, &lines[nr]) == 0)
			nr++;
	}
	maps = calloc(nr ? nr : 1, sizeof(*maps));
	if (!maps) {
		err = -ENOMEM;
		goto out;
	}
	/* The process's credentials once for all its files. */
	procmaps__hold_creds(pm, tgid);
	for (i = 0; i < nr; i++) {
		const struct procmaps_line *l = &lines[i];
		struct stk_mapping *m = &maps[nmaps];
		size_t j;
		int n = 0;

		/* Executable mappings, and the offset-0 mapping of each file
		 * with one (the reporter's load bias); data mappings tell a
		 * report nothing. */
		if (!(l->prot & PROT_EXEC) &&
		    !(l->inode && l->offset == 0 && exec_mapping_of(lines, nr, l) >= 0))
			continue;
		m->path = strdup(l->path);
		if (!m->path) {
			err = -ENOMEM;
			goto out;
		}
		nmaps++;
		m->start = l->start;
		m->end = l->end;
		m->offset = l->offset;
		m->dev = l->dev;
		m->inode = l->inode;
		m->prot = l->prot;
		/* Each file once per snapshot: a library has several mappings. */
		for (j = 0; j < nmaps - 1; j++)
			if (l->inode && maps[j].inode == l->inode && maps[j].dev == l->dev &&
			    strcmp(maps[j].path, l->path) == 0)
				break;
		if (l->inode && j < nmaps - 1) {
			n = (int)maps[j].build_id_size;
			memcpy(m->build_id, maps[j].build_id, (size_t)n);
		} else if (l->inode)
			n = procmaps__file_build_id(pm, proc_root, tgid, l, m->build_id);
		else if (strcmp(l->path, "[vdso]") == 0)
			n = procmaps__proc_vdso_build_id(pm, proc_root, tgid, l->start, l->end,
							 m->build_id);
		m->build_id_size = n > 0 ? (uint32_t)n : 0;
	}
	out->tgid = tgid;
	/* Up to its NUL: a caller's string may be shorter than 16 bytes. */
	memcpy(out->comm, comm, strnlen(comm, sizeof(out->comm) - 1));
	out->time_ns = time_ns;
	out->nr_mappings = (uint32_t)nmaps;
	out->mappings = maps;
	maps = NULL;
	pm->stats.snapshots++;
	err = 0;
out:
	procmaps__drop_creds(pm);
	if (maps) {
		for (i = 0; i < nmaps; i++)
			free((char *)maps[i].path);
		free(maps);
	}
	free(lines);
	free(text);
	return err;
}
