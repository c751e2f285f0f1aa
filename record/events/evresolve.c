// SPDX-License-Identifier: BSD-2-Clause
/*
 * evresolve.c - stkrec trace's events resolved on this machine, before
 * anything is loaded: a tracepoint's id read from tracefs (globs
 * expanded, in name order, at most --max-probes events in all); a
 * uprobe's binary found (a path, libLIB.so in the library directories, or
 * a command in PATH) and its function checked in the ELF symbol tables;
 * kprobes checked for (CONFIG_KPROBE_EVENTS gives the "kprobe" PMU).
 *
 * tracefs: where it is mounted, it is used; where it is not (as perf
 * does), it is mounted on a private temporary directory for the lookup
 * and unmounted (and the directory removed) before this returns, so the
 * machine is left as it was found.  The ids stay valid once read: the
 * perf events are opened by id.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"

#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe/type"

struct tracefs {
	char dir[256];		/* where tracefs is */
	char tmp[64];		/* the directory we mounted it on, or "" */
};

/* tracefs's mount point from /proc/mounts, else mounted by us. */
static int tracefs__open(struct tracefs *t, char *why, size_t size)
{
	struct mntent *m;
	FILE *f;
	int err;

	memset(t, 0, sizeof(*t));
	f = setmntent("/proc/mounts", "r");
	if (f) {
		while ((m = getmntent(f))) {
			if (strcmp(m->mnt_type, "tracefs") == 0 &&
			    strlen(m->mnt_dir) < sizeof(t->dir)) {
				strcpy(t->dir, m->mnt_dir);
				break;
			}
		}
		endmntent(f);
	}
	if (t->dir[0])
		return 0;
	strcpy(t->tmp, "/tmp/stkrec-tracefs.XXXXXX");
	if (!mkdtemp(t->tmp)) {
		err = -errno;
		snprintf(why, size, "tracefs is not mounted, and mkdtemp for it failed: %s",
			 strerror(-err));
		t->tmp[0] = '\0';
		return err;
	}
	if (mount("tracefs", t->tmp, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		err = -errno;
		snprintf(why, size, "tracefs is not mounted, and mounting it failed: %s%s",
			 strerror(-err), err == -ENODEV ? " (a kernel without CONFIG_TRACING?)" : "");
		rmdir(t->tmp);
		t->tmp[0] = '\0';
		return err;
	}
	strcpy(t->dir, t->tmp);
	return 0;
}

/* Unmount what tracefs__open() mounted. */
static void tracefs__close(struct tracefs *t)
{
	if (!t->tmp[0])
		return;
	if (umount2(t->tmp, 0) == 0 || umount2(t->tmp, MNT_DETACH) == 0)
		rmdir(t->tmp);
	t->tmp[0] = '\0';
}

/* The id of tracepoint @cat:@name, or -ENOENT. */
static int64_t tracefs__id(const struct tracefs *t, const char *cat, const char *name)
{
	char path[1024], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", t->dir, cat, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_add(struct ev_list *l, const struct ev_event *e)
{
	struct ev_event *ev = realloc(l->ev, (l->n + 1) * sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	l->ev = ev;
	l->ev[l->n++] = *e;
	return 0;
}

static int add_tracepoint(struct ev_list *l, const char *cat, const char *name, int64_t id)
{
	struct ev_event e = { .kind = EV_TRACEPOINT, .tp_id = (uint64_t)id };

	if (asprintf(&e.name, "%s:%s", cat, name) < 0)
		return -ENOMEM;
	if (list_add(l, &e)) {
		free(e.name);
		return -ENOMEM;
	}
	return 0;
}

/* The tracepoints of @e (a name or a glob) into @l, up to @max in all. */
static int resolve_tracepoint(const struct tracefs *t, const struct ev_spec *e, const char *spec,
			      size_t max, struct ev_list *l, char *why, size_t size)
{
	char path[1024], **names = NULL;
	size_t n = 0, cap = 0, i, matched;
	struct dirent *d;
	int64_t id;
	DIR *dir;
	int err = 0;

	if (!strpbrk(e->name, "*?[")) {
		id = tracefs__id(t, e->category, e->name);
		if (id < 0) {
			snprintf(why, size,
				 "%s: no such tracepoint (see 'perf list tracepoint', or %s/events/%s/)",
				 spec, t->tmp[0] ? "tracefs" : t->dir, e->category);
			return -EINVAL;
		}
		if (l->n >= max) {
			l->capped_spec = spec;
			l->capped_matched = 1;
			return 0;
		}
		return add_tracepoint(l, e->category, e->name, id);
	}
	snprintf(path, sizeof(path), "%s/events/%s", t->dir, e->category);
	dir = opendir(path);
	if (!dir) {
		snprintf(why, size, "%s: no tracepoint category '%s'", spec, e->category);
		return -EINVAL;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || fnmatch(e->name, d->d_name, 0) != 0)
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!nn) {
				err = -ENOMEM;
				break;
			}
			names = nn;
		}
		names[n] = strdup(d->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(dir);
	if (!err && n == 0) {
		snprintf(why, size, "%s: no tracepoint of '%s' matches '%s'", spec, e->category,
			 e->name);
		err = -EINVAL;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0, matched = 0; !err && i < n; i++) {
		id = tracefs__id(t, e->category, names[i]);
		if (id < 0)
			continue; /* a directory of the category that is no event */
		matched++;
		if (l->n >= max) {
			if (!l->capped_spec)
				l->capped_spec = spec;
			continue;
		}
		err = add_tracepoint(l, e->category, names[i], id);
	}
	if (l->capped_spec == spec)
		l->capped_matched = matched;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (err == -ENOMEM)
		snprintf(why, size, "out of memory");
	return err;
}

/* Is @path a regular file we can read? */
static int readable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Does @path start with the ELF magic?  (libc.so is a linker script.) */
static int is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return 0;
	ok = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     memcmp(magic, "\177ELF", 4) == 0;
	close(fd);
	return ok;
}

/* The binary of u:@what:...: a path; libWHAT.so* (or WHAT if it is a
 * library's name) in the library directories; a command in PATH.
 * Returns a malloc'd absolute path, or NULL. */
static char *find_binary(const char *what)
{
	static const char *const libdirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/usr/local/lib", "/usr/lib", "/lib",
	};
	char cand[4096], *r = NULL;
	const char *path;
	size_t i;

	if (strchr(what, '/'))
		return readable_file(what) ? realpath(what, NULL) : NULL;
	for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]) && !r; i++) {
		struct dirent *d;
		size_t best = 0;
		char pre[300];
		DIR *dir;

		/* "c" is libc.so.6; "libc.so.6" is itself. */
		if (strstr(what, ".so"))
			snprintf(pre, sizeof(pre), "%s", what);
		else
			snprintf(pre, sizeof(pre), "lib%s.so", what);
		dir = opendir(libdirs[i]);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			size_t len = strlen(pre);

			/* libNAME.so, or libNAME.so.VERSION: the shortest
			 * name is the one ld.so's links point at first. */
			if (strncmp(d->d_name, pre, len) != 0 ||
			    (d->d_name[len] && d->d_name[len] != '.'))
				continue;
			snprintf(cand, sizeof(cand), "%s/%s", libdirs[i], d->d_name);
			if (!readable_file(cand) || !is_elf(cand))
				continue;
			if (!best || strlen(d->d_name) < best) {
				free(r);
				r = realpath(cand, NULL);
				best = strlen(d->d_name);
			}
		}
		closedir(dir);
	}
	if (r)
		return r;
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, path, what);
		if (len && readable_file(cand) && access(cand, X_OK) == 0)
			return realpath(cand, NULL);
		path += len + (path[len] == ':');
	}
	return NULL;
}

/* A growing list of names. */
struct names {
	char **v;
	size_t n, cap;
};

static void names__free(struct names *nm)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	memset(nm, 0, sizeof(*nm));
}

/* Add @name (its first @len bytes) unless it is there. */
static int names__add(struct names *nm, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		if (strlen(nm->v[i]) == len && strncmp(nm->v[i], name, len) == 0)
			return 0;
	if (nm->n == nm->cap) {
		char **v = realloc(nm->v, (nm->cap = nm->cap ? 2 * nm->cap : 16) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		nm->v = v;
	}
	nm->v[nm->n] = strndup(name, len);
	if (!nm->v[nm->n])
		return -ENOMEM;
	nm->n++;
	return 0;
}

/*
 * The functions the ELF file @path defines (.symtab or .dynsym, a
 * version suffix "@@GLIBC_2.2.5" cut off; no IFUNCs) whose name matches @pattern
 * (fnmatch(3); a plain name matches itself only) into @nm, each once.
 * 0, -ENOEXEC if it is no ELF file we can read, -ENOMEM.
 */
static int elf_funcs(const char *path, const char *pattern, struct names *nm)
{
	Elf_Scn *scn = NULL;
	int fd, err = 0;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOEXEC;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = NULL;
		GElf_Shdr sh;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; !err && i < n; i++) {
			char base[256];
			const char *name;
			GElf_Sym sym;
			size_t len;

			/* Not an IFUNC's resolver (strcmp in libc): the
			 * code that runs is the implementation it picks. */
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			len = strcspn(name, "@");
			if (!len || len >= sizeof(base))
				continue;
			memcpy(base, name, len);
			base[len] = '\0';
			if (fnmatch(pattern, base, 0) == 0)
				err = names__add(nm, base, len);
		}
	}
out:
	elf_end(elf);
	close(fd);
	return err;
}

static int uprobe_add(struct ev_list *l, const char *path, const char *func, int ret)
{
	struct ev_event ev = { .kind = EV_UPROBE, .retprobe = ret };

	ev.path = strdup(path);
	ev.func = strdup(func);
	if (!ev.path || !ev.func ||
	    asprintf(&ev.name, "%s:%s:%s", ret ? "r" : "u", path, func) < 0) {
		ev.name = NULL;
		goto nomem;
	}
	if (list_add(l, &ev))
		goto nomem;
	return 0;
nomem:
	free(ev.path);
	free(ev.func);
	free(ev.name);
	return -ENOMEM;
}

/* u:/r: PATH:FUNC, FUNC a name or a glob (u:c:str*cmp): each function of
 * the binary it names, in name order, up to @max events in all. */
static int resolve_uprobe(const struct ev_spec *e, const char *spec, size_t max,
			  struct ev_list *l, char *why, size_t size)
{
	struct names nm = { 0 };
	size_t i;
	char *path;
	int err;

	path = find_binary(e->path);
	if (!path) {
		snprintf(why, size, "%s: no binary or library '%s' (give its path, e.g. u:/usr/bin/bash:readline)",
			 spec, e->path);
		return -EINVAL;
	}
	/* META events joins the names with commas. */
	if (strchr(path, ',')) {
		snprintf(why, size, "%s: %s: a path with a ',' cannot be named in the capture", spec, path);
		free(path);
		return -EINVAL;
	}
	err = elf_funcs(path, e->name, &nm);
	if (err == -ENOEXEC) {
		snprintf(why, size, "%s: %s is not an ELF file we can read", spec, path);
		err = -EINVAL;
	} else if (!err && !nm.n) {
		snprintf(why, size, strpbrk(e->name, "*?[") ? "%s: no function of %s matches '%s' (see nm -D %s)"
							   : "%s: %s has no function '%s' (see nm -D %s)",
			 spec, path, e->name, path);
		err = -EINVAL;
	}
	if (nm.n)
		qsort(nm.v, nm.n, sizeof(*nm.v), name_cmp);
	for (i = 0; !err && i < nm.n; i++) {
		if (l->n >= max) {
			if (!l->capped_spec) {
				l->capped_spec = spec;
				l->capped_matched = nm.n;
			}
			break;
		}
		err = uprobe_add(l, path, nm.v[i], e->retprobe);
		if (err)
			snprintf(why, size, "out of memory");
	}
	names__free(&nm);
	free(path);
	return err;
}

static int resolve_kprobe(const struct ev_spec *e, const char *spec, size_t max,
			  struct ev_list *l, char *why, size_t size)
{
	struct ev_event ev = { .kind = EV_KPROBE, .retprobe = e->retprobe };

	/* CONFIG_KPROBE_EVENTS gives the perf "kprobe" PMU (4.17+) and
	 * tracefs' kprobe_events; without it nothing can attach one. */
	if (access(KPROBE_PMU, R_OK) != 0) {
		snprintf(why, size, "%s: this kernel has no kprobes (CONFIG_KPROBE_EVENTS); trace a tracepoint instead (e.g. t:syscalls:sys_enter_write)",
			 spec);
		return -EOPNOTSUPP;
	}
	if (l->n >= max) {
		if (!l->capped_spec) {
			l->capped_spec = spec;
			l->capped_matched = 1;
		}
		return 0;
	}
	ev.func = strdup(e->name);
	if (!ev.func || asprintf(&ev.name, "%s:%s", e->retprobe ? "r" : "p", e->name) < 0) {
		free(ev.func);
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	if (list_add(l, &ev)) {
		free(ev.func);
		free(ev.name);
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int ev_list__resolve(const char *const *specs, size_t n, size_t max_probes,
		     struct ev_list *out, char *why, size_t size)
{
	struct tracefs t = {};
	struct ev_spec e;
	int err = 0, have_tracefs = 0;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n && !err; i++) {
		char msg[256];

		if (ev_spec__parse(specs[i], &e, msg, sizeof(msg))) {
			snprintf(why, size, "%s: %s", specs[i], msg);
			err = -EINVAL;
			break;
		}
		switch (e.kind) {
		case EV_TRACEPOINT:
			if (!have_tracefs) {
				err = tracefs__open(&t, why, size);
				if (err)
					break;
				have_tracefs = 1;
				out->mounted_tracefs = t.tmp[0] != '\0';
			}
			err = resolve_tracepoint(&t, &e, specs[i], max_probes, out, why, size);
			break;
		case EV_UPROBE:
			err = resolve_uprobe(&e, specs[i], max_probes, out, why, size);
			break;
		case EV_KPROBE:
			err = resolve_kprobe(&e, specs[i], max_probes, out, why, size);
			break;
		case EV_SOFTWARE: {
			struct ev_event ev = { .kind = EV_SOFTWARE, .sw_config = e.sw_config };

			if (out->n >= max_probes) {
				if (!out->capped_spec) {
					out->capped_spec = specs[i];
					out->capped_matched = 1;
				}
				break;
			}
			ev.name = strdup(e.sw_name);
			if (!ev.name || list_add(out, &ev)) {
				free(ev.name);
				snprintf(why, size, "out of memory");
				err = -ENOMEM;
			}
			break;
		}
		}
	}
	if (have_tracefs)
		tracefs__close(&t);
	/* The same event twice would count it twice under two indexes. */
	for (i = 0; !err && i < out->n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(out->ev[i].name, out->ev[j].name) == 0) {
				snprintf(why, size, "%s: given twice", out->ev[i].name);
				err = -EINVAL;
				break;
			}
	if (!err && out->n == 0) {
		snprintf(why, size, "no event to trace");
		err = -EINVAL;
	}
	if (err)
		ev_list__free(out);
	return err;
}

char *ev_list__names(const struct ev_list *l)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < l->n; i++)
		len += strlen(l->ev[i].name) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < l->n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, l->ev[i].name);
	}
	return s;
}

void ev_list__free(struct ev_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->ev[i].name);
		free(l->ev[i].path);
		free(l->ev[i].func);
	}
	free(l->ev);
	memset(l, 0, sizeof(*l));
}
