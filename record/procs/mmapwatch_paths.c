// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmapwatch_paths.c - the watcher's mapping paths, interned: one
 * refcounted copy of each file's path, shared by every mapping of it in
 * every process (a machine that starts processes maps the same few
 * libraries in each, and a fork copies its parent's mappings), in place
 * of a string allocated per mapping.  The table holds a reference of its
 * own until the next purge, so a path freed and mapped again within a
 * flush interval (each new process's ld.so and libc) is not allocated
 * again.
 */
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "mmapwatch_int.h"

struct wpath {
	uint32_t refs;		/* the table's one included */
	uint64_t hash;
	char s[];
};

static struct wpath *wpath_of(const char *s)
{
	return (struct wpath *)(void *)((char *)s - offsetof(struct wpath, s));
}

/* FNV-1a. */
static uint64_t hash_of(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	return h;
}

static struct wpath *wpath_new(const char *s, size_t len, uint64_t hash)
{
	struct wpath *p = malloc(sizeof(*p) + len + 1);

	if (!p)
		return NULL;
	p->refs = 1;
	p->hash = hash;
	memcpy(p->s, s, len + 1);
	return p;
}

char *wpath__intern(struct mmapwatch *w, const char *s)
{
	size_t len = strlen(s);
	uint64_t hash = hash_of(s, len);
	struct wpath *p = NULL;
	uint64_t *v;

	v = w->paths ? idmap__find(w->paths, hash) : NULL;
	if (v) {
		p = (struct wpath *)(uintptr_t)*v;
		if (strcmp(p->s, s) == 0) {
			p->refs++;
			return p->s;
		}
		/* Another path of the same hash: this one is not shared. */
		p = wpath_new(s, len, hash);
		return p ? p->s : NULL;
	}
	p = wpath_new(s, len, hash);
	if (!p)
		return NULL;
	/* The table's reference; without room there, the path is the
	 * mapping's alone. */
	if (w->paths && idmap__set(w->paths, hash, (uint64_t)(uintptr_t)p) == 0)
		p->refs++;
	return p->s;
}

char *wpath__get(char *path)
{
	wpath_of(path)->refs++;
	return path;
}

void wpath__put(char *path)
{
	struct wpath *p;

	if (!path)
		return;
	p = wpath_of(path);
	if (--p->refs == 0)
		free(p);
}

void wpath__prune(struct mmapwatch *w, int all)
{
	uint64_t key, val, *dead = NULL;
	size_t it = 0, n = 0, cap = 0, i;

	if (!w->paths)
		return;
	while (idmap__next(w->paths, &it, &key, &val)) {
		struct wpath *p = (struct wpath *)(uintptr_t)val;

		if (p->refs > 1 && !all)
			continue;
		if (wkeys__push(&dead, &n, &cap, key))
			break; /* the rest at the next purge */
	}
	for (i = 0; i < n; i++) {
		struct wpath *p = idmap__find_ptr(w->paths, dead[i]);

		idmap__remove(w->paths, dead[i]);
		wpath__put(p->s);
	}
	free(dead);
}
