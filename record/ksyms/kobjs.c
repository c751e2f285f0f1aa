// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "kobjs.h"

static int kobjs__push(struct kobjs *ko, const char *name, uint64_t base, uint64_t size,
		       size_t *cap)
{
	struct stk_kobj *o;

	if (ko->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct stk_kobj *n = realloc(ko->objs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ko->objs = n;
		*cap = ncap;
	}
	o = &ko->objs[ko->n];
	memset(o, 0, sizeof(*o));
	o->name = strdup(name);
	if (!o->name)
		return -ENOMEM;
	o->base = base;
	o->size = size;
	ko->n++;
	return 0;
}

int kobjs__read(struct kobjs *ko, const char *sys_root, const char *proc_modules, uint64_t text,
		uint64_t etext)
{
	char path[4096], line[1024];
	size_t cap = 0;
	FILE *f = NULL;
	int n, err;

	memset(ko, 0, sizeof(*ko));
	err = kobjs__push(ko, "[kernel.kallsyms]", text, etext > text ? etext - text : 0, &cap);
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/kernel/notes", sys_root);
	n = buildid__from_note_file(path, ko->objs[0].build_id, STK_MAX_BUILD_ID);
	ko->objs[0].build_id_size = n > 0 ? (uint32_t)n : 0;

	f = fopen(proc_modules, "re");
	if (!f) {
		err = 0; /* no module support */
		goto out;
	}
	/* "name size refcount deps state address [taint]" */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long size, addr;
		char name[256], deps[512], state[32];
		int refs;
		struct stk_kobj *o;

		if (sscanf(line, "%255s %llu %d %511s %31s %llx", name, &size, &refs, deps, state,
			   &addr) != 6)
			continue;
		err = kobjs__push(ko, name, addr, size, &cap);
		if (err)
			goto out;
		o = &ko->objs[ko->n - 1];
		snprintf(path, sizeof(path), "%s/module/%s/notes/.note.gnu.build-id", sys_root, name);
		n = buildid__from_note_file(path, o->build_id, STK_MAX_BUILD_ID);
		o->build_id_size = n > 0 ? (uint32_t)n : 0;
	}
	err = 0;
out:
	if (f)
		fclose(f);
	if (err)
		kobjs__free(ko);
	return err;
}

void kobjs__free(struct kobjs *ko)
{
	size_t i;

	if (!ko)
		return;
	for (i = 0; i < ko->n; i++)
		free((char *)ko->objs[i].name);
	free(ko->objs);
	ko->objs = NULL;
	ko->n = 0;
}
