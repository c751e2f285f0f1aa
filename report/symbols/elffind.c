// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding a capture's binaries by build-id.  The order follows gdb's and
 * perf's conventions: the original path, a sysroot, debug directories in
 * the .build-id layout, the system debug directory, then debuginfod.
 * Every candidate's build-id note is read and compared: a path alone never
 * proves anything (the binary may have been rebuilt since the capture).
 *
 * Recorded paths come from the capture, so under --sysroot and --debug-dir
 * they are resolved inside the directory (rootopen.h: ".." and symlinks
 * never leave it), and only regular files are opened, without blocking.
 * The file chosen is handed on as the fd that was checked, under its real
 * name (/proc/self/fd), so nothing opens the recorded name again.
 */
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffind.h"
#include "rootopen.h"
#include "util.h"

#define BID_MAX 64

/* The header gives the prototypes; the library comes from dlopen(). */
struct debuginfod {
	void *so;
	debuginfod_client *client;
	__typeof__(&debuginfod_begin) begin;
	__typeof__(&debuginfod_end) end;
	__typeof__(&debuginfod_find_executable) find_executable;
	__typeof__(&debuginfod_find_debuginfo) find_debuginfo;
};

struct debuginfod *debuginfod__open(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debuginfod *d;
	int err = -ENOSYS;

	if (!urls || !urls[0]) {
		errno = ENOENT;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->so = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->so)
		goto fail;
	d->begin = (__typeof__(d->begin))dlsym(d->so, "debuginfod_begin");
	d->end = (__typeof__(d->end))dlsym(d->so, "debuginfod_end");
	d->find_executable = (__typeof__(d->find_executable))dlsym(d->so,
								 "debuginfod_find_executable");
	d->find_debuginfo = (__typeof__(d->find_debuginfo))dlsym(d->so,
							       "debuginfod_find_debuginfo");
	if (!d->begin || !d->end || !d->find_executable || !d->find_debuginfo)
		goto fail;
	d->client = d->begin();
	if (!d->client)
		goto fail;
	return d;
fail:
	debuginfod__close(d);
	errno = -err;
	return NULL;
}

void debuginfod__close(struct debuginfod *d)
{
	if (!d)
		return;
	if (d->client)
		d->end(d->client);
	if (d->so)
		dlclose(d->so);
	free(d);
}

const char *elf_source__name(enum elf_source src)
{
	switch (src) {
	case ELF_SRC_EMBEDDED: return "embedded";
	case ELF_SRC_PATH: return "path";
	case ELF_SRC_SYSROOT: return "sysroot";
	case ELF_SRC_DEBUG_DIR: return "debug-dir";
	case ELF_SRC_SYSTEM: return "system";
	case ELF_SRC_DEBUGINFOD: return "debuginfod";
	case ELF_SRC_ESYMTAB: return "embedded symbols";
	case ELF_SRC_PERF_MAP: return "perf map";
	default: return "none";
	}
}

/* Reads the build-id and whether the file is separate debuginfo (its
 * .text is NOBITS: objcopy --only-keep-debug keeps headers, not code). */
static int elf_fd__inspect(int fd, uint8_t *bid, int *debug_only)
{
	const void *p = NULL;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	ssize_t n;
	int err;

	elf_version(EV_CURRENT);
	/* Read, not mapped: libelf then preads the headers and the note
	 * asked, where a mapping of the whole file (libLLVM's 100 MB) cost an
	 * mmap and a munmap per candidate (~1.5% of a cached report of a
	 * system-wide capture, ~80 binaries). */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, &p);
	if (n <= 0) {
		err = -ENODATA;
		goto out;
	}
	if (n > BID_MAX) {
		err = -EFBIG;
		goto out;
	}
	memcpy(bid, p, (size_t)n);
	err = (int)n;
	if (debug_only) {
		*debug_only = 0;
		if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
			while ((scn = elf_nextscn(elf, scn))) {
				GElf_Shdr sh;
				const char *name;

				if (!gelf_getshdr(scn, &sh))
					continue;
				name = elf_strptr(elf, shstrndx, sh.sh_name);
				if (name && strcmp(name, ".text") == 0) {
					*debug_only = sh.sh_type == SHT_NOBITS;
					break;
				}
			}
		}
	}
out:
	elf_end(elf);
	return err;
}

int elf_file__build_id(const char *path, uint8_t *bid)
{
	int fd = regular_open(path);
	int err;

	if (fd < 0)
		return fd == -EISDIR || fd == -ENXIO ? -ENOENT : fd;
	err = elf_fd__inspect(fd, bid, NULL);
	close(fd);
	return err;
}

/* 1: @fd has the build-id (or there is none to compare); 0: not a usable
 * file; -1: an ELF file with a different build-id. */
static int candidate__check(int fd, const uint8_t *bid, uint32_t bid_size, int *debug_only)
{
	uint8_t got[BID_MAX];
	int n = elf_fd__inspect(fd, got, debug_only);

	if (n == -ENOEXEC)
		return 0;
	if (!bid_size)
		return n == -ENODATA || n > 0;
	if (n <= 0)
		return -1;	/* an ELF without a build-id cannot be proven right */
	return (uint32_t)n == bid_size && memcmp(got, bid, bid_size) == 0 ? 1 : -1;
}

/* Where an opened candidate really is: the name the kernel gives its fd
 * (no "..", no symlink), malloc'd; NULL without /proc or memory. */
static char *fd_real_path(int fd)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf));
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return NULL;
	return strndup(buf, (size_t)n);
}

/* How to open a candidate: a plain path, or @name inside @rootfd. */
struct cand {
	const char *path;	/* plain path, when rootfd < 0 */
	int rootfd;
	const char *name;	/* inside rootfd */
};

/* Tries @c; on a match stores it (fd and real path) in @res and returns
 * 1.  Remembers the first mismatching file for the "build-id mismatch"
 * diagnosis.  0: no match; -ENOMEM. */
static int try_candidate(const struct cand *c, enum elf_source src, const uint8_t *bid,
			 uint32_t bid_size, struct elffind_result *res)
{
	int debug_only = 0, fd, r;
	char *real = NULL;

	fd = c->rootfd >= 0 ? root_open(c->rootfd, c->name) : regular_open(c->path);
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	r = candidate__check(fd, bid, bid_size, &debug_only);
	if (r != 0) {
		real = c->rootfd >= 0 ? fd_real_path(fd) : strdup(c->path);
		if (!real) {
			/* Confined, yet its place is unknown (no /proc): a
			 * name to reopen it by would not be safe. */
			int nomem = c->rootfd < 0 || errno == ENOMEM;

			close(fd);
			return nomem ? -ENOMEM : 0;
		}
	}
	if (r < 0 && !res->mismatch_path) {
		res->mismatch_path = real;
		real = NULL;
	}
	if (r <= 0) {
		free(real);
		close(fd);
		return 0;
	}
	res->path = real;
	res->fd = fd;
	res->source = src;
	res->debug_only = debug_only;
	return 1;
}

static int try_plain(const char *path, enum elf_source src, const uint8_t *bid,
		     uint32_t bid_size, struct elffind_result *res)
{
	struct cand c = { .path = path, .rootfd = -1 };

	return try_candidate(&c, src, bid, bid_size, res);
}

/*
 * DIR/.build-id/xx/rest and DIR/.build-id/xx/rest.debug (only the latter
 * with @debug_only: separate debuginfo); with @confine resolved inside DIR
 * (a --debug-dir), else as plain paths (the system's own debug directory,
 * whose links point into the rest of the system).
 */
static int try_build_id_dir(const char *dir, int confine, enum elf_source src,
			    const uint8_t *bid, uint32_t bid_size, struct elffind_result *res,
			    int debug_only)
{
	char hex[2 * BID_MAX + 1];
	struct strbuf sb = { 0 };
	struct cand c = { .rootfd = -1 };
	int r;

	hex_encode(hex, bid, bid_size);
	if (confine) {
		c.rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c.rootfd < 0)
			return 0;
		r = strbuf__addf(&sb, ".build-id/%.2s/%s", hex, hex + 2);
	} else {
		r = strbuf__addf(&sb, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	}
	if (r)
		goto out;
	c.path = c.name = strbuf__str(&sb);
	r = debug_only ? 0 : try_candidate(&c, src, bid, bid_size, res);
	if (r)
		goto out;
	r = strbuf__adds(&sb, ".debug");
	if (r)
		goto out;
	c.path = c.name = strbuf__str(&sb);
	r = try_candidate(&c, src, bid, bid_size, res);
out:
	if (c.rootfd >= 0)
		close(c.rootfd);
	strbuf__free(&sb);
	return r;
}

/* The recorded @path inside @root (a sysroot or debug dir). */
static int try_in_root(const char *root, const char *path, enum elf_source src,
		       const uint8_t *bid, uint32_t bid_size, struct elffind_result *res)
{
	struct cand c = { .name = path };
	int r;

	if (path[0] != '/')
		return 0;
	c.rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.rootfd < 0)
		return 0;
	r = try_candidate(&c, src, bid, bid_size, res);
	close(c.rootfd);
	return r;
}

static int try_debuginfod(struct debuginfod *d, const uint8_t *bid, uint32_t bid_size,
			  struct elffind_result *res)
{
	char *p = NULL;
	int fd, r;

	fd = d->find_executable(d->client, bid, (int)bid_size, &p);
	if (fd < 0)
		fd = d->find_debuginfo(d->client, bid, (int)bid_size, &p);
	if (fd < 0)
		return 0;
	close(fd);
	r = try_plain(p, ELF_SRC_DEBUGINFOD, bid, bid_size, res);
	free(p);
	return r;
}

int elffind__locate(const struct elffind_opts *o, const char *path, const uint8_t *bid,
		    uint32_t bid_size, struct elffind_result *res)
{
	size_t i;
	int r;

	memset(res, 0, sizeof(*res));
	res->fd = -1;
	if (path && path[0] == '/') {
		r = try_plain(path, ELF_SRC_PATH, bid, bid_size, res);
		if (r)
			goto out;
	}
	if (o->sysroot && path) {
		r = try_in_root(o->sysroot, path, ELF_SRC_SYSROOT, bid, bid_size, res);
		if (r)
			goto out;
	}
	for (i = 0; i < o->nr_debug_dirs; i++) {
		if (bid_size) {
			r = try_build_id_dir(o->debug_dirs[i], 1, ELF_SRC_DEBUG_DIR, bid, bid_size,
					     res, 0);
			if (r)
				goto out;
		}
		if (path) {
			r = try_in_root(o->debug_dirs[i], path, ELF_SRC_DEBUG_DIR, bid, bid_size, res);
			if (r)
				goto out;
		}
	}
	/* Without a recorded build-id only the recorded paths are trusted. */
	if (!bid_size) {
		r = 0;
		goto out;
	}
	if (o->system_debug_dir) {
		r = try_build_id_dir(o->system_debug_dir, 0, ELF_SRC_SYSTEM, bid, bid_size, res, 0);
		if (r)
			goto out;
	}
	r = 0;
	if (o->debuginfod)
		r = try_debuginfod(o->debuginfod, bid, bid_size, res);
out:
	if (r < 0) {
		elffind_result__clear(res);
		return r;
	}
	return 0;
}

/* The GNU debuglink CRC (zlib's CRC-32) of the whole file @fd. */
static int fd_crc32(int fd, uint32_t *out)
{
	static uint32_t table[256];
	uint8_t buf[65536];
	uint32_t crc = 0xffffffffu;
	off_t off = 0;
	ssize_t n, i;
	int k, j;

	if (!table[1]) {
		for (k = 0; k < 256; k++) {
			uint32_t c = (uint32_t)k;

			for (j = 0; j < 8; j++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[k] = c;
		}
	}
	for (;;) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		off += n;
	}
	*out = crc ^ 0xffffffffu;
	return 0;
}

/*
 * One debuglink candidate: @name inside @root (confined), or the plain
 * path @name when @root is NULL.  With a build-id it must match; without
 * one, the debuglink CRC must.  Never the binary itself (@self).
 */
static int try_debuglink(const char *root, const char *name, const struct stat *self,
			 const uint8_t *bid, uint32_t bid_size, uint32_t crc,
			 struct elffind_result *res)
{
	struct cand c = { .path = name, .rootfd = -1, .name = name };
	struct stat st;
	uint32_t got;
	int r;

	if (root) {
		c.rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c.rootfd < 0)
			return 0;
	}
	r = try_candidate(&c, ELF_SRC_DEBUG_DIR, bid, bid_size, res);
	if (c.rootfd >= 0)
		close(c.rootfd);
	if (r <= 0)
		return r;
	if (fstat(res->fd, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
		r = 0;
	else if (!bid_size && (fd_crc32(res->fd, &got) || got != crc))
		r = 0;
	if (!r) {
		char *mismatch = res->mismatch_path;

		res->mismatch_path = NULL;
		elffind_result__clear(res);
		res->mismatch_path = mismatch;
	}
	return r;
}

int elffind__debuginfo(const struct elffind_opts *o, const char *file, const char *debuglink,
		       uint32_t crc, const uint8_t *bid, uint32_t bid_size,
		       struct elffind_result *res)
{
	struct strbuf dir = { 0 }, sb = { 0 };
	const char *base, *slash;
	struct stat self;
	size_t i;
	int r = 0;

	memset(res, 0, sizeof(*res));
	res->fd = -1;
	if (!file || file[0] != '/' || stat(file, &self) < 0)
		return 0;
	if (bid_size) {
		for (i = 0; i < o->nr_debug_dirs && !r; i++)
			r = try_build_id_dir(o->debug_dirs[i], 1, ELF_SRC_DEBUG_DIR, bid, bid_size,
					     res, 1);
		if (!r && o->sysroot) {
			strbuf__reset(&sb);
			r = strbuf__addf(&sb, "%s/usr/lib/debug", o->sysroot);
			r = r ?: try_build_id_dir(strbuf__str(&sb), 1, ELF_SRC_SYSROOT, bid, bid_size,
						  res, 1);
		}
		if (!r && o->system_debug_dir)
			r = try_build_id_dir(o->system_debug_dir, 0, ELF_SRC_SYSTEM, bid, bid_size,
					     res, 1);
		if (r)
			goto out;
	}
	if (!debuglink || !debuglink[0])
		goto out;
	/* A name, never a path: a debuglink is the binary's own claim. */
	base = strrchr(debuglink, '/');
	base = base ? base + 1 : debuglink;
	if (!base[0] || strcmp(base, "..") == 0 || strcmp(base, ".") == 0)
		goto out;
	slash = strrchr(file, '/');
	strbuf__reset(&sb);
	r = strbuf__add(&dir, file, (size_t)(slash - file));
	r = r ?: strbuf__adds(&dir, "");
	if (r)
		goto out;
	/* Beside the binary, resolved inside its directory. */
	r = try_debuglink(slash == file ? "/" : strbuf__str(&dir), base, &self, bid, bid_size,
			  crc, res);
	if (r)
		goto out;
	r = strbuf__addf(&sb, ".debug/%s", base);
	r = r ?: try_debuglink(slash == file ? "/" : strbuf__str(&dir), strbuf__str(&sb), &self,
			       bid, bid_size, crc, res);
	if (r)
		goto out;
	/* DIR + the binary's directory + the name, inside each debug dir. */
	strbuf__reset(&sb);
	r = strbuf__addf(&sb, "%s/%s", strbuf__str(&dir), base);
	for (i = 0; !r && i < o->nr_debug_dirs; i++)
		r = try_debuglink(o->debug_dirs[i], strbuf__str(&sb), &self, bid, bid_size, crc,
				  res);
	if (r)
		goto out;
	if (o->sysroot) {
		strbuf__reset(&sb);
		r = strbuf__addf(&sb, "/usr/lib/debug%s/%s", strbuf__str(&dir), base);
		r = r ?: try_debuglink(o->sysroot, strbuf__str(&sb), &self, bid, bid_size, crc,
				       res);
		if (r)
			goto out;
	}
	if (o->system_debug_dir) {
		strbuf__reset(&sb);
		r = strbuf__addf(&sb, "%s%s/%s", o->system_debug_dir, strbuf__str(&dir), base);
		r = r ?: try_debuglink(NULL, strbuf__str(&sb), &self, bid, bid_size, crc, res);
	}
out:
	strbuf__free(&dir);
	strbuf__free(&sb);
	if (r < 0) {
		elffind_result__clear(res);
		return r;
	}
	return 0;
}

void elffind_result__clear(struct elffind_result *res)
{
	free(res->path);
	free(res->mismatch_path);
	if (res->fd >= 0)
		close(res->fd);
	memset(res, 0, sizeof(*res));
	res->fd = -1;
}
