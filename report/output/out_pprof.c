// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof output: the report as a gzip'd perftools.profiles.Profile for
 * `go tool pprof` and other pprof readers, built with pprof.h.
 *
 * The frame model maps onto profile.proto like this:
 *  - Mapping: one per (process, file), spanning the file's executable
 *    mappings in that process (as perf and pprof's own converters do: it
 *    is what pprof needs to symbolize again), and one per kernel object
 *    ([kernel.kallsyms], and [module] for modules).  Its has_* flags are
 *    set only when they hold for every location in it.
 *  - Location: one per (mapping, address, symbolization), with the
 *    address as sampled (a return address for callers) and the frame's
 *    lines leaf first: inlined functions, then the containing one.  An
 *    address without symbols has no lines, so pprof can symbolize it
 *    itself when it finds the binary.
 *  - Function: name demangled, system_name as in the binary, source file
 *    and declaration line when DWARF gave them.
 *  - Sample: values samples/count and cpu/nanoseconds (count * period,
 *    the period as delivered: profile_period())
 *    for profiles, samples/count and off_cpu/nanoseconds (blocked time)
 *    for off-CPU captures; string labels pid, tid, comm, and for offwake
 *    waker_pid, waker_tid, waker_comm.  Samples with the same locations
 *    and labels are merged.  pprof's values are int64: one past INT64_MAX
 *    (a count near 2^64, its time, their sums) is written as INT64_MAX,
 *    as the report caps sums at 2^64 - 1.
 *
 * Offwake stacks read as offwaketime's folded output: root first, the
 * target's user and kernel frames, a "--" pseudo-frame, then the waker's
 * kernel and user frames in reverse (the waker's root is the leaf).  A
 * stack that was wanted but lost is a "[Missed User Stack]" or "[Missed
 * Kernel Stack]" pseudo-frame, as there; a row without a waker ends in a
 * "[no waker]" pseudo-frame and has no waker labels.  Pseudo-frames have no mapping
 * and address.  -d, -a, --addresses and --lines do not apply: the profile
 * carries mappings, addresses and lines itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "idmap.h"
#include "output.h"
#include "pprof.h"

/* One pprof Mapping while it is being collected. */
struct pmap {
	uint32_t tgid;			/* 0 for kernel objects */
	int kernel;
	const char *filename;
	char *build_id;			/* lowercase hex, or NULL */
	uint64_t start, limit, offset;
	int range_known;		/* start/limit recorded, not observed */
	uint64_t min_addr, max_addr;	/* addresses of its frames */
	/* has_* flags: cleared by the first location they do not hold for. */
	int functions, filenames, line_numbers, inline_frames;
	uint64_t weight;		/* samples with a frame in it */
	size_t stamp;			/* last sample counted in weight, + 1 */
	uint64_t id;			/* pprof's id, once added */
	struct pmap *next;		/* same hash */
};

enum pseudo {
	PSEUDO_NONE = 0,
	PSEUDO_SEPARATOR,		/* "--" between target and waker */
	PSEUDO_MISSED_USER,
	PSEUDO_MISSED_KERNEL,
	PSEUDO_NO_WAKER,		/* the waker of a row without one */
	NR_PSEUDO,
};

static const char *const pseudo_names[NR_PSEUDO] = {
	[PSEUDO_SEPARATOR] = "--",
	[PSEUDO_MISSED_USER] = "[Missed User Stack]",
	[PSEUDO_MISSED_KERNEL] = "[Missed Kernel Stack]",
	[PSEUDO_NO_WAKER] = NO_WAKER_FRAME,
};

/* One entry of a sample's stack, leaf first: a frame or a pseudo-frame. */
struct pent {
	const struct rframe *f;		/* NULL for a pseudo-frame */
	enum pseudo pseudo;
};

struct ploc {
	const struct pmap *pm;
	uint64_t addr;
	const struct sym_result *sym;
	uint64_t id;
	struct ploc *next;
};

/* Merged samples: same locations, same labels. */
struct psample {
	const struct rsample *first;	/* labels come from it */
	uint64_t *loc_ids;
	size_t nr_locs;
	int64_t *values;		/* pp->nr_values */
	struct psample *next;
};

struct pp {
	const struct report *r;
	const struct output_opts *o;
	struct pprof *p;
	struct arena mem;
	struct idmap pmap_of;		/* (uintptr_t)stk_mapping or cap_kobj -> pmap */
	/* The last user mapping pmap__account() asked about and whether its
	 * module's DWARF was read (a stack's frames come in runs of one). */
	const struct stk_mapping *dwarf_map;
	int dwarf_of_map;
	struct idmap pmap_keys;	/* hash of a user pmap's identity -> chain */
	struct pmap **pmaps;		/* in first-seen order */
	size_t nr_pmaps, cap_pmaps;
	struct pmap *kernel_unknown;	/* kernel frames when no object was recorded */
	struct pmap *kernel_outside;	/* kernel frames outside every recorded object */
	struct idmap locs;		/* hash -> ploc chain */
	uint64_t pseudo_ids[NR_PSEUDO];
	struct idmap sample_keys;	/* hash -> psample chain */
	struct psample **samples;
	size_t nr_samples, cap_samples;
	struct pent *ents;		/* the stack being walked */
	size_t nr_ents, cap_ents;
	uint64_t *ids;			/* its location ids */
	size_t cap_ids;
	int64_t period;			/* ns per sample; 0: frequency unknown */
	size_t nr_values;
	int64_t *values;		/* the sample being added's */
	struct pprof_value_type *event_types;	/* trace: one per event */
	char *event_names;		/* their names, NUL-separated */
};

/* ---- stacks, leaf first ------------------------------------------------ */

static int pp__push(struct pp *pp, const struct rframe *f, enum pseudo ps)
{
	if (pp->nr_ents == pp->cap_ents) {
		size_t cap = pp->cap_ents ? 2 * pp->cap_ents : 256;
		struct pent *e = realloc(pp->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		pp->ents = e;
		pp->cap_ents = cap;
	}
	pp->ents[pp->nr_ents++] = (struct pent){ f, ps };
	return 0;
}

/* Frames of @st, leaf first (@root_first: root first). */
static int pp__push_stack(struct pp *pp, const struct rstack *st, int root_first)
{
	uint32_t i;
	int err = 0;

	for (i = 0; st && !err && i < st->nr_frames; i++)
		err = pp__push(pp, &st->frames[root_first ? st->nr_frames - 1 - i : i], PSEUDO_NONE);
	return err;
}

/* offwaketime's "[Missed ... Stack]": wanted but not taken (as out_folded.c). */
/* One side of an offwake sample: @st, or its missed marker. */
static int pp__push_side(struct pp *pp, stk_stack_ref ref, const struct rstack *st,
			 enum pseudo marker, int root_first)
{
	if (stack_missed(ref, st))
		return pp__push(pp, NULL, marker);
	return pp__push_stack(pp, st, root_first);
}

/*
 * The stack of @s, leaf first, into pp->ents.  Profile and offcpu: kernel
 * frames then user frames, as the folded line reads from its end.  Offwake:
 * the reverse of out_folded.c's line without the comms, i.e. waker user
 * root..leaf, waker kernel root..leaf, "--", target kernel leaf..root,
 * target user leaf..root.
 */
static int pp__walk(struct pp *pp, const struct rsample *s)
{
	const struct rtask *t = &s->task, *w = s->waker;
	const struct output_opts *o = pp->o;
	int err = 0;

	pp->nr_ents = 0;
	if (pp->r->kind != REPORT_OFFWAKE) {
		err = pp__push_stack(pp, t->kernel, 0);
		return err ?: pp__push_stack(pp, t->user, 0);
	}
	if (rtask__none(w))
		err = pp__push(pp, NULL, PSEUDO_NO_WAKER);
	if (!err && !rtask__none(w) && !o->kernel_only)
		err = pp__push_side(pp, w->user_ref, w->user, PSEUDO_MISSED_USER, 1);
	if (!err && !rtask__none(w) && !o->user_only)
		err = pp__push_side(pp, w->kernel_ref, w->kernel, PSEUDO_MISSED_KERNEL, 1);
	err = err ?: pp__push(pp, NULL, PSEUDO_SEPARATOR);
	if (!err && !o->user_only)
		err = pp__push_side(pp, t->kernel_ref, t->kernel, PSEUDO_MISSED_KERNEL, 0);
	if (!err && !o->kernel_only)
		err = pp__push_side(pp, t->user_ref, t->user, PSEUDO_MISSED_USER, 0);
	return err;
}

/* ---- mappings ---------------------------------------------------------- */

static struct pmap *pp__new_pmap(struct pp *pp)
{
	struct pmap *pm;

	if (pp->nr_pmaps == pp->cap_pmaps) {
		size_t cap = pp->cap_pmaps ? 2 * pp->cap_pmaps : 64;
		struct pmap **a = realloc(pp->pmaps, cap * sizeof(*a));

		if (!a)
			return NULL;
		pp->pmaps = a;
		pp->cap_pmaps = cap;
	}
	pm = arena__alloc(&pp->mem, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->functions = pm->filenames = pm->line_numbers = pm->inline_frames = 1;
	pm->min_addr = UINT64_MAX;
	pp->pmaps[pp->nr_pmaps++] = pm;
	return pm;
}

static char *pp__hex(struct pp *pp, const uint8_t *b, uint32_t n)
{
	char *s;

	if (!n)
		return NULL;
	s = arena__alloc(&pp->mem, 2 * (size_t)n + 1);
	if (s)
		hex_encode(s, b, n);
	return s;
}

/* The recorded path without the " (deleted)" /proc/PID/maps appends. */
static const char *pp__path(struct pp *pp, const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), d = sizeof(deleted) - 1;

	if (n > d && strcmp(path + n - d, deleted) == 0)
		return arena__strndup(&pp->mem, path, n - d);
	return path;
}

/* The maps snapshot of segment @seg that holds @map. */
static const struct cap_maps *snapshot_of(const struct cap_segment *seg,
					  const struct stk_mapping *map)
{
	size_t i;

	for (i = 0; i < seg->nr_maps; i++) {
		const struct cap_maps *m = seg->maps[i];

		if (map >= m->mappings && map < m->mappings + m->nr_mappings)
			return m;
	}
	return NULL;
}

/*
 * The (process, file) mapping of user frame @f: the union of the file's
 * executable mappings in @f's snapshot, and @f's own mapping.  The union
 * is used only if one offset maps it linearly (address - start + offset
 * is the file offset everywhere), as it does for ELF files; otherwise
 * @f's mapping alone.
 */
static struct pmap *pp__user_pmap(struct pp *pp, const struct rsample *s, const struct rtask *t,
				  const struct rframe *f)
{
	const struct cap_segment *seg = &pp->r->cap->segs[s->segment];
	const struct stk_mapping *map = f->map, *low = map;
	const struct cap_maps *snap = snapshot_of(seg, map);
	uint64_t start = map->start, limit = map->end, h;
	uint32_t tgid = snap ? snap->tgid : t->tgid, i;
	const char *path;
	struct pmap *pm;

	for (i = 0; snap && i < snap->nr_mappings; i++) {
		const struct stk_mapping *m = &snap->mappings[i];

		if (m == map || !(m->prot & PROT_EXEC) || strcmp(m->path, map->path) != 0)
			continue;
		if (m->start - m->offset != map->start - map->offset) {
			start = map->start;
			limit = map->end;
			low = map;
			break;
		}
		if (m->start < start) {
			start = m->start;
			low = m;
		}
		if (m->end > limit)
			limit = m->end;
	}
	path = pp__path(pp, map->path);
	if (!path)
		return NULL;
	h = hash_bytes(hash64(hash64(hash64(tgid, start), limit), low->offset), path, strlen(path));
	for (pm = idmap__find_ptr(&pp->pmap_keys, h); pm; pm = pm->next)
		if (pm->tgid == tgid && pm->start == start && pm->limit == limit &&
		    pm->offset == low->offset && strcmp(pm->filename, path) == 0)
			return pm;
	pm = pp__new_pmap(pp);
	if (!pm)
		return NULL;
	pm->tgid = tgid;
	pm->filename = path;
	pm->start = start;
	pm->limit = limit;
	pm->offset = low->offset;
	pm->range_known = 1;
	pm->build_id = pp__hex(pp, map->build_id, map->build_id_size);
	if (map->build_id_size && !pm->build_id)
		return NULL;
	pm->next = idmap__find_ptr(&pp->pmap_keys, h);
	if (idmap__set_ptr(&pp->pmap_keys, h, pm))
		return NULL;
	return pm;
}

/* A kernel mapping whose range is the one its frames span. */
static struct pmap *pp__kernel_orphan(struct pp *pp, struct pmap **slot, const char *filename)
{
	if (!*slot) {
		*slot = pp__new_pmap(pp);
		if (!*slot)
			return NULL;
		(*slot)->kernel = 1;
		(*slot)->filename = filename;
	}
	return *slot;
}

/*
 * The mapping of kernel frame @f: its kernel object's, named as perf names
 * them ([kernel.kallsyms], [module]).  Without recorded objects, frames go
 * to a [kernel.kallsyms] of the range they span; an address outside every
 * recorded object (e.g. BPF or trampoline code) to "[unknown]", so the
 * kernel's own mapping keeps its range and its has_functions flag.
 */
static struct pmap *pp__kernel_pmap(struct pp *pp, const struct rframe *f)
{
	const struct cap_kobj *k = f->kobj;
	struct pmap *pm;
	char *name;

	if (!k)
		return pp__kernel_orphan(pp, &pp->kernel_unknown, "[kernel.kallsyms]");
	if (k->size && f->addr - k->base >= k->size)
		return pp__kernel_orphan(pp, &pp->kernel_outside, "[unknown]");
	pm = idmap__find_ptr(&pp->pmap_of, (uintptr_t)k);
	if (pm)
		return pm;
	pm = pp__new_pmap(pp);
	if (!pm)
		return NULL;
	pm->kernel = 1;
	if (k->name[0] == '[') {
		pm->filename = k->name;
	} else {
		name = arena__alloc(&pp->mem, strlen(k->name) + 3);
		if (!name)
			return NULL;
		sprintf(name, "[%s]", k->name);
		pm->filename = name;
	}
	pm->start = k->base;
	pm->limit = k->base + k->size;
	pm->range_known = k->size != 0;
	pm->build_id = pp__hex(pp, k->build_id, k->build_id_size);
	if (k->build_id_size && !pm->build_id)
		return NULL;
	if (idmap__set_ptr(&pp->pmap_of, (uintptr_t)k, pm))
		return NULL;
	return pm;
}

/* The pmap of frame @f (NULL for a user frame in no mapping); -ENOMEM in @err. */
static struct pmap *pp__pmap(struct pp *pp, const struct rsample *s, const struct rtask *t,
			     const struct rframe *f, int *err)
{
	struct pmap *pm;

	*err = 0;
	if (rframe__kind(f) == RFRAME_KERNEL) {
		pm = pp__kernel_pmap(pp, f);
	} else if (!f->map) {
		return NULL;
	} else {
		pm = idmap__find_ptr(&pp->pmap_of, (uintptr_t)f->map);
		if (pm)
			return pm;
		pm = pp__user_pmap(pp, s, t, f);
		if (pm && idmap__set_ptr(&pp->pmap_of, (uintptr_t)f->map, pm))
			pm = NULL;
	}
	if (!pm)
		*err = -ENOMEM;
	return pm;
}

/* Whether @f's symbol came where DWARF was read (its module's, for a user
 * frame: --vmlinux's, for a kernel one). */
static int pp__dwarf(struct pp *pp, const struct rframe *f)
{
	const struct sym_module *m;

	if (rframe__kind(f) == RFRAME_KERNEL)
		return rframe__kernel_dwarf(f);
	if (rframe__kind(f) != RFRAME_USER || !f->map)
		return 0;
	if (f->map != pp->dwarf_map) {
		m = report__map_module(pp->r, f->map);
		pp->dwarf_map = f->map;
		pp->dwarf_of_map = m && m->has_dwarf;
	}
	return pp->dwarf_of_map;
}

/* Clears the has_* flags of @pm that location @f does not satisfy; @dwarf:
 * pp__dwarf(). */
static void pmap__account(struct pmap *pm, const struct rframe *f, int dwarf,
			  const struct output_opts *o)
{
	const struct sym_result *sym = rframe__sym(f);
	uint32_t i;

	if (f->addr < pm->min_addr)
		pm->min_addr = f->addr;
	if (f->addr > pm->max_addr)
		pm->max_addr = f->addr;
	if (!sym) {
		pm->functions = pm->filenames = pm->line_numbers = pm->inline_frames = 0;
		return;
	}
	/* Where DWARF was read, the mapping was symbolized with files and
	 * lines: code it does not cover (a PLT stub, crt1's _start) keeps
	 * none, and a sample landing there changes nothing (pprof reads the
	 * flags as "symbolized to this level", not "every address has it"). */
	for (i = 0; !dwarf && i < sym->nr_lines; i++) {
		if (!sym->lines[i].file)
			pm->filenames = 0;
		if (!sym->lines[i].line)
			pm->line_numbers = 0;
	}
	/* Inline frames are known only where DWARF was read and asked for;
	 * kernel symbols come from kallsyms, which has none, unless --vmlinux
	 * gave them. */
	if (o->no_inline || !dwarf)
		pm->inline_frames = 0;
}

/* The task a frame of entry @i belongs to (offwake: waker before "--"). */
static const struct rtask *pp__task_of(const struct pp *pp, const struct rsample *s,
				       size_t i, size_t sep)
{
	return pp->r->kind == REPORT_OFFWAKE && i < sep ? s->waker : &s->task;
}

static size_t pp__separator(const struct pp *pp)
{
	size_t i;

	for (i = 0; i < pp->nr_ents; i++)
		if (pp->ents[i].pseudo == PSEUDO_SEPARATOR)
			return i;
	return pp->nr_ents;
}

/* First pass: every frame's mapping, the has_* flags and the weights. */
static int pp__collect(struct pp *pp)
{
	const struct report *r = pp->r;
	size_t i, j, sep;
	int err = 0;

	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		err = pp__walk(pp, s);
		sep = pp__separator(pp);
		for (j = 0; !err && j < pp->nr_ents; j++) {
			const struct rframe *f = pp->ents[j].f;
			struct pmap *pm;

			if (!f)
				continue;
			pm = pp__pmap(pp, s, pp__task_of(pp, s, j, sep), f, &err);
			if (!pm)
				continue;
			pmap__account(pm, f, pp__dwarf(pp, f), pp->o);
			if (pm->stamp != i + 1) {
				pm->stamp = i + 1;
				pm->weight += s->count;
			}
		}
	}
	return err;
}

/* As pprof's own heuristic: a shared library's name has ".so" then the
 * end, a '.' or a '_' (libc.so.6, libfoo.so, ld-linux-x86-64.so.2). */
static int is_library(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	for (p = base ? base + 1 : path; (p = strstr(p, ".so")); p += 3)
		if (p[3] == '\0' || p[3] == '.' || p[3] == '_')
			return 1;
	return 0;
}

/*
 * Adds the mappings.  pprof takes mapping 1 for the main binary, so the
 * one first is the program (not a library, kernel or [special] mapping)
 * with a frame in the most samples; the rest follow in first-seen order.
 */
static int pp__add_mappings(struct pp *pp)
{
	struct pmap *main_pm = NULL;
	size_t i, k;
	int err = 0;

	for (i = 0; i < pp->nr_pmaps; i++) {
		struct pmap *pm = pp->pmaps[i];

		if (pm->kernel || pm->filename[0] == '[' || !pm->filename[0] ||
		    is_library(pm->filename))
			continue;
		if (!main_pm || pm->weight > main_pm->weight)
			main_pm = pm;
	}
	for (k = 0; !err && k <= pp->nr_pmaps; k++) {
		struct pmap *pm;
		struct pprof_mapping m;

		if (k == 0) {
			pm = main_pm;
			if (!pm)
				continue;
		} else {
			pm = pp->pmaps[k - 1];
			if (pm == main_pm)
				continue;
		}
		if (!pm->range_known && pm->min_addr <= pm->max_addr) {
			/* No recorded range: the one its frames span. */
			pm->start = pm->min_addr;
			pm->limit = pm->max_addr + 1;
		}
		m = (struct pprof_mapping){
			.start = pm->start,
			.limit = pm->limit,
			.offset = pm->offset,
			.filename = pm->filename,
			.build_id = pm->build_id,
			.has_functions = pm->functions,
			.has_filenames = pm->functions && pm->filenames,
			.has_line_numbers = pm->functions && pm->line_numbers,
			.has_inline_frames = pm->functions && pm->inline_frames,
		};
		err = pprof__mapping(pp->p, (uint64_t)(uintptr_t)pm, &m, &pm->id);
	}
	return err;
}

/* ---- locations and samples --------------------------------------------- */

static int pp__pseudo_location(struct pp *pp, enum pseudo ps, uint64_t *id)
{
	struct pprof_function fn = { .name = pseudo_names[ps] };
	struct pprof_line line = { 0 };
	int err;

	if (pp->pseudo_ids[ps]) {
		*id = pp->pseudo_ids[ps];
		return 0;
	}
	err = pprof__function(pp->p, &fn, &line.function_id);
	err = err ?: pprof__location(pp->p, 0, 0, &line, 1, &pp->pseudo_ids[ps]);
	*id = pp->pseudo_ids[ps];
	return err;
}

/* A module symbol is named "name [module]" (ksyms.h); as in the module,
 * its system_name is the bare name. */
static const char *pp__ksym_name(struct pp *pp, const struct rframe *f, const char *name)
{
	size_t n = strlen(name), m;

	if (!f->kobj || f->kobj->name[0] == '[')
		return name;
	m = strlen(f->kobj->name);
	if (n < m + 3 || name[n - 1] != ']' || name[n - m - 3] != ' ' || name[n - m - 2] != '[' ||
	    strncmp(name + n - m - 1, f->kobj->name, m) != 0)
		return name;
	return arena__strndup(&pp->mem, name, n - m - 3);
}

/* The location of frame @f in @pm (NULL: no mapping), added on first use. */
static int pp__location(struct pp *pp, const struct pmap *pm, const struct rframe *f, uint64_t *id)
{
	const struct sym_result *sym = rframe__sym(f);
	struct pprof_line lines[64], *lp = lines;
	uint64_t h = hash64(hash64((uintptr_t)pm, f->addr), (uintptr_t)sym);
	struct ploc *l;
	uint32_t i, n = sym ? sym->nr_lines : 0;
	int err = 0;

	for (l = idmap__find_ptr(&pp->locs, h); l; l = l->next) {
		if (l->pm == pm && l->addr == f->addr && l->sym == sym) {
			*id = l->id;
			return 0;
		}
	}
	l = arena__alloc(&pp->mem, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (n > sizeof(lines) / sizeof(lines[0])) {
		lp = calloc(n, sizeof(*lp));
		if (!lp)
			return -ENOMEM;
	}
	for (i = 0; !err && i < n; i++) {
		const struct sym_line *sl = &sym->lines[i];
		struct pprof_function fn = {
			.name = sl->name,
			.system_name = sl->raw ? sl->raw : sl->name,
			.filename = sl->file,
			.start_line = sl->start_line,
		};

		if (rframe__kind(f) == RFRAME_KERNEL) {
			fn.system_name = pp__ksym_name(pp, f, sl->name);
			if (!fn.system_name)
				err = -ENOMEM;
		}
		/* A Python qualname is no symbol: no system name.  pprof takes a
		 * function whose name is its system name for a mangled one and
		 * "simplifies" it, which leaves nothing of "<module>" or
		 * "<lambda>" (C++ template brackets to it). */
		if (rframe__kind(f) == RFRAME_PYTHON)
			fn.system_name = NULL;
		err = err ?: pprof__function(pp->p, &fn, &lp[i].function_id);
		lp[i].line = sl->line;
	}
	/* A Python marker ([python stopped: depth], [python: unknown code]) is
	 * a function of that name; a Python frame has no machine address (its
	 * word is the code object's), nor a mapping: pprof reads its line. */
	if (!err && !n && rframe__kind(f) == RFRAME_PYTHON) {
		char buf[64];
		struct pprof_function fn = { .name = rframe__marker(f, buf, sizeof(buf)) };

		err = pprof__function(pp->p, &fn, &lp[0].function_id);
		lp[0].line = 0;
		n = 1;
	}
	err = err ?: pprof__location(pp->p, pm ? pm->id : 0,
				     rframe__kind(f) == RFRAME_PYTHON ? 0 : f->addr, lp, n, id);
	if (lp != lines)
		free(lp);
	if (err)
		return err;
	*l = (struct ploc){ pm, f->addr, sym, *id, idmap__find_ptr(&pp->locs, h) };
	return idmap__set_ptr(&pp->locs, h, l);
}

/* Labels tell samples apart as well as locations do. */
static uint64_t task_hash(uint64_t h, const struct rtask *t)
{
	h = hash64(hash64(hash64(h, t->tgid), t->tid), t->ns_tgid);
	return hash_bytes(h, t->comm, strnlen(t->comm, sizeof(t->comm)));
}

static int same_task(const struct rtask *a, const struct rtask *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->ns_tgid == b->ns_tgid &&
	       a->pid_ns == b->pid_ns && strncmp(a->comm, b->comm, sizeof(a->comm)) == 0;
}

/* pprof's int64 values: @a (x @b), capped at INT64_MAX (SPEC-sized
 * captures can hold counts up to 2^64 - 1). */
static int64_t pp_value(uint64_t a, uint64_t b)
{
	uint64_t v;

	if (__builtin_mul_overflow(a, b, &v) || v > INT64_MAX)
		return INT64_MAX;
	return (int64_t)v;
}

static int64_t pp_sum(int64_t a, int64_t b)
{
	int64_t v;

	return __builtin_add_overflow(a, b, &v) ? INT64_MAX : v;
}

/* Adds @s with location ids pp->ids[0..n) to the merged samples. */
static int pp__merge(struct pp *pp, const struct rsample *s, size_t n, const int64_t *values)
{
	int offwake = pp->r->kind == REPORT_OFFWAKE;
	uint64_t h = hash_bytes(task_hash(0, &s->task), pp->ids, n * sizeof(*pp->ids));
	struct psample *ps;
	size_t v;

	if (offwake)
		h = task_hash(h, s->waker);
	for (ps = idmap__find_ptr(&pp->sample_keys, h); ps; ps = ps->next) {
		if (ps->nr_locs == n && (!n || memcmp(ps->loc_ids, pp->ids, n * sizeof(*pp->ids)) == 0) &&
		    same_task(&ps->first->task, &s->task) &&
		    (!offwake || same_task(ps->first->waker, s->waker))) {
			for (v = 0; v < pp->nr_values; v++)
				ps->values[v] = pp_sum(ps->values[v], values[v]);
			return 0;
		}
	}
	if (pp->nr_samples == pp->cap_samples) {
		size_t cap = pp->cap_samples ? 2 * pp->cap_samples : 256;
		struct psample **a = realloc(pp->samples, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		pp->samples = a;
		pp->cap_samples = cap;
	}
	ps = arena__alloc(&pp->mem, sizeof(*ps) + n * sizeof(*pp->ids) +
				    pp->nr_values * sizeof(*values));
	if (!ps)
		return -ENOMEM;
	ps->first = s;
	ps->loc_ids = (uint64_t *)(ps + 1);
	ps->values = (int64_t *)(ps->loc_ids + n);
	if (n)	/* pp->ids is NULL until a sample had a frame */
		memcpy(ps->loc_ids, pp->ids, n * sizeof(*pp->ids));
	ps->nr_locs = n;
	memcpy(ps->values, values, pp->nr_values * sizeof(*values));
	ps->next = idmap__find_ptr(&pp->sample_keys, h);
	if (idmap__set_ptr(&pp->sample_keys, h, ps))
		return -ENOMEM;
	pp->samples[pp->nr_samples++] = ps;
	return 0;
}

/* Second pass: locations of every sample, merged samples. */
static int pp__build_samples(struct pp *pp)
{
	const struct report *r = pp->r;
	size_t i, j, sep;
	int err = 0;

	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];
		int64_t *values = pp->values;

		err = pp__walk(pp, s);
		if (!err && pp->nr_ents > pp->cap_ids) {
			uint64_t *ids = realloc(pp->ids, pp->nr_ents * sizeof(*ids));

			if (!ids)
				err = -ENOMEM;
			else {
				pp->ids = ids;
				pp->cap_ids = pp->nr_ents;
			}
		}
		sep = pp__separator(pp);
		for (j = 0; !err && j < pp->nr_ents; j++) {
			const struct pent *e = &pp->ents[j];
			const struct pmap *pm;

			if (!e->f) {
				err = pp__pseudo_location(pp, e->pseudo, &pp->ids[j]);
				continue;
			}
			pm = pp__pmap(pp, s, pp__task_of(pp, s, j, sep), e->f, &err);
			err = err ?: pp__location(pp, pm, e->f, &pp->ids[j]);
		}
		if (r->trace) {
			/* One value per event: this sample's is its count. */
			memset(values, 0, pp->nr_values * sizeof(*values));
			if (s->event < pp->nr_values)
				values[s->event] = pp_value(s->count, 1);
		} else {
			values[0] = pp_value(s->count, 1);
			values[1] = r->kind == REPORT_PROFILE
					    ? pp_value(s->count, (uint64_t)pp->period)
					    : pp_value(s->blocked_ns, 1);
		}
		err = err ?: pp__merge(pp, s, pp->nr_ents, values);
	}
	return err;
}

/* The process's pid in its own PID namespace, and which namespace, when
 * the capture knows it differs (pidn): what the container calls it. */
static size_t ns_labels(struct pprof_label *l, const struct rtask *t, const char *prefix,
			char *nspid, char *pidns, size_t size)
{
	if (!t->ns_tgid)
		return 0;
	snprintf(nspid, size, "%" PRIu32, t->ns_tgid);
	l[0] = (struct pprof_label){ .key = *prefix ? "waker_ns_pid" : "ns_pid", .str = nspid };
	if (!t->pid_ns)
		return 1;
	snprintf(pidns, size, "%" PRIu64, t->pid_ns);
	l[1] = (struct pprof_label){ .key = *prefix ? "waker_pid_ns" : "pid_ns", .str = pidns };
	return 2;
}

/*
 * The labels every sample gets: the capture's host name and kernel release
 * (META), so profiles of many machines pushed into one backend stay apart,
 * then --label's, a key of which replaces a default (an empty value drops
 * it).  Into @out (room for OUTPUT_MAX_LABELS + 2); returns how many.
 */
static size_t common_labels(const struct pp *pp, const struct output_opts *o,
			    struct pprof_label *out)
{
	static const char *const defaults[] = { "hostname", "kernel_release" };
	size_t n = 0, i, j;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		const char *v = capture__meta(pp->r->cap, defaults[i]);

		for (j = 0; v && j < o->nr_labels; j++)
			if (strcmp(o->labels[j].key, defaults[i]) == 0)
				v = NULL;
		if (v && *v)
			out[n++] = (struct pprof_label){ .key = defaults[i], .str = v };
	}
	for (i = 0; i < o->nr_labels && i < OUTPUT_MAX_LABELS; i++) {
		/* The last of several --label with one key wins. */
		for (j = i + 1; j < o->nr_labels; j++)
			if (strcmp(o->labels[j].key, o->labels[i].key) == 0)
				break;
		if (j == o->nr_labels && *o->labels[i].value)
			out[n++] = (struct pprof_label){ .key = o->labels[i].key,
							 .str = o->labels[i].value };
	}
	return n;
}

static int pp__add_samples(struct pp *pp)
{
	char pid[12], tid[12], wpid[12], wtid[12], nspid[24], pidns[24], wnspid[24], wpidns[24];
	struct pprof_label common[OUTPUT_MAX_LABELS + 2];
	size_t i, n, nr_common = common_labels(pp, pp->o, common);
	int err = 0;

	for (i = 0; !err && i < pp->nr_samples; i++) {
		const struct psample *ps = pp->samples[i];
		const struct rtask *t = &ps->first->task, *w = ps->first->waker;
		char comm[sizeof(t->comm) + 1], wcomm[sizeof(w->comm) + 1];
		int waker;
		struct pprof_label labels[10 + OUTPUT_MAX_LABELS + 2] = {
			{ .key = "pid", .str = pid },
			{ .key = "tid", .str = tid },
			{ .key = "comm", .str = comm },
			{ .key = "waker_pid", .str = wpid },
			{ .key = "waker_tid", .str = wtid },
			{ .key = "waker_comm", .str = wcomm },
		};

		/* Strings, not numbers: pprof drops a number label that is 0
		 * without a unit, and pid 0 (the idle task) is a real one. */
		snprintf(pid, sizeof(pid), "%" PRIu32, t->tgid);
		snprintf(tid, sizeof(tid), "%" PRIu32, t->tid);
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(t->comm), t->comm);
		snprintf(wpid, sizeof(wpid), "%" PRIu32, w->tgid);
		snprintf(wtid, sizeof(wtid), "%" PRIu32, w->tid);
		snprintf(wcomm, sizeof(wcomm), "%.*s", (int)sizeof(w->comm), w->comm);
		/* An offwake row without a waker has no waker labels. */
		waker = pp->r->kind == REPORT_OFFWAKE && !rtask__none(w);
		n = waker ? 6 : 3;
		n += ns_labels(labels + n, t, "", nspid, pidns, sizeof(nspid));
		if (waker)
			n += ns_labels(labels + n, w, "waker_", wnspid, wpidns, sizeof(wnspid));
		memcpy(labels + n, common, nr_common * sizeof(*common));
		n += nr_common;
		err = pprof__add_sample(pp->p, ps->loc_ids, ps->nr_locs, ps->values, pp->nr_values,
					labels, n);
	}
	return err;
}

/* ---- the profile ------------------------------------------------------- */

static int64_t meta_num(const struct capture *c, const char *key)
{
	const char *v = capture__meta(c, key);
	char *end;
	long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	return *end || errno || n < 0 ? 0 : (int64_t)n;
}

/* Start: META wall_start_ns, else the first file header's.  Length: META
 * duration_ns, else STAT duration_ns, else the span of the intervals. */
static void capture_times(const struct capture *c, int64_t *start, int64_t *duration)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;
	size_t i;

	*start = meta_num(c, "wall_start_ns");
	if (!*start && c->nr_segs)
		*start = (int64_t)c->segs[0].info.wall_start_ns;
	*duration = meta_num(c, "duration_ns");
	if (!*duration)
		*duration = (int64_t)capture__stat(c, "duration_ns");
	for (i = 0; !*duration && i < c->nr_segs; i++) {
		const struct cap_segment *s = &c->segs[i];

		if (!s->t_last)
			continue;	/* no rows: its interval is unknown, not 0 */
		if (s->t_first < t0)
			t0 = s->t_first;
		if (s->t_last > t1)
			t1 = s->t_last;
	}
	if (!*duration && t1 > t0)
		*duration = (int64_t)(t1 - t0);
}

/* What the capture was, for `pprof -comments`. */
static int pp__comments(struct pp *pp)
{
	static const char *const keys[] = {
		"mode", "event", "frequency", "hostname", "kernel_release", "command_line",
		"tool_version",
	};
	struct strbuf sb = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = capture__meta(pp->r->cap, keys[i]);

		if (!v)
			continue;
		strbuf__reset(&sb);
		err = strbuf__addf(&sb, "%s: %s", keys[i], v);
		err = err ?: pprof__add_comment(pp->p, strbuf__str(&sb));
	}
	strbuf__free(&sb);
	return err;
}

/*
 * Nanoseconds a sample stands for.  Nominally 1e9 / -F, but the kernel
 * throttles sampling that costs too much (perf_cpu_time_max_percent) and
 * timers fire late, so a profile asked at 100 kHz may get a tenth of it:
 * then every sample stands for more CPU time.  stkrec counts what was
 * delivered (STAT sample_events: every cpu-clock overflow, of any task, over
 * sampled_cpu_time_ns of CPU time; on the busiest CPU, STAT
 * sample_events_busiest_cpu over sampled_cpu_time_ns / sampled_cpus, when the
 * capture has them); below 90% of -F that rate wins, as
 * stkrec's warning says (the same rule, record/main.c).  Captures without those counts keep 1e9 / -F.
 */
static int64_t profile_period(const struct capture *c, int64_t hz)
{
	uint64_t events = capture__stat(c, "sample_events");
	uint64_t cpu_ns = capture__stat(c, "sampled_cpu_time_ns");
	uint64_t busiest = capture__stat(c, "sample_events_busiest_cpu");
	uint64_t cpus = capture__stat(c, "sampled_cpus");
	int64_t nominal = hz ? 1000000000 / hz : 0;
	double expected;

	/* Judged on the busiest CPU where the capture says which: an idle
	 * CPU misses periods (a halted vCPU's late timer fires once for
	 * several) that say nothing of how busy CPUs were sampled, while
	 * throttling lowers every CPU's rate. */
	if (busiest && cpus) {
		events = busiest;
		cpu_ns /= cpus;
	}
	if (!nominal || !events || !cpu_ns)
		return nominal;
	/* events < 0.9 * expected, expected = cpu_ns * hz / 1e9, and enough
	 * expected (100) that a period cut by the start or the end of the
	 * recording cannot make 10%. */
	expected = (double)cpu_ns * (double)hz / 1e9;
	if (expected >= 100 && (double)events < 0.9 * expected)
		return cpu_ns / events > INT64_MAX ? INT64_MAX : (int64_t)(cpu_ns / events);
	return nominal;
}

static struct pprof *pp__profile(struct pp *pp)
{
	static const struct pprof_value_type profile_types[] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" },
	};
	static const struct pprof_value_type offcpu_types[] = {
		{ "samples", "count" }, { "off_cpu", "nanoseconds" },
	};
	const struct capture *c = pp->r->cap;
	struct pprof_opts po = { 0 };
	int64_t hz = meta_num(c, "frequency");

	capture_times(c, &po.time_nanos, &po.duration_nanos);
	if (pp->r->trace) {
		/* Trace captures: a sample type per event, named as the
		 * event (go tool pprof -sample_index=NAME), counting events. */
		size_t i, n = pp->r->nr_events;
		char *name;

		if (n > PPROF_MAX_SAMPLE_TYPES) {
			errno = E2BIG;
			return NULL;
		}
		pp->event_types = calloc(n, sizeof(*pp->event_types));
		pp->event_names = malloc(n * 256);
		if (!pp->event_types || !pp->event_names) {
			errno = ENOMEM;
			return NULL;
		}
		for (i = 0, name = pp->event_names; i < n; i++, name += 256) {
			capture__event(c, i, name, 256);
			pp->event_types[i] = (struct pprof_value_type){ name, "count" };
		}
		po.sample_types = pp->event_types;
		pp->nr_values = n;
		po.default_sample_type = pp->event_types[0].type;
	} else if (pp->r->kind == REPORT_PROFILE) {
		po.sample_types = profile_types;
		/* Without a frequency there is no time per sample: count only. */
		pp->period = profile_period(c, hz);
		pp->nr_values = pp->period ? 2 : 1;
		if (pp->period) {
			po.period_type = profile_types[1];
			po.period = pp->period;
			po.default_sample_type = "cpu";
		}
	} else {
		po.sample_types = offcpu_types;
		pp->nr_values = 2;
		po.default_sample_type = "off_cpu";
	}
	po.nr_sample_types = pp->nr_values;
	/* Room for two whatever the types: a profile's second value is
	 * computed (and not used) when it has no frequency. */
	pp->values = calloc(pp->nr_values > 2 ? pp->nr_values : 2, sizeof(*pp->values));
	if (!pp->values) {
		errno = ENOMEM;
		return NULL;
	}
	return pprof__new(&po);
}

static void pp__free(struct pp *pp)
{
	free(pp->values);
	free(pp->event_types);
	free(pp->event_names);
	pprof__free(pp->p);
	arena__free(&pp->mem);
	idmap__release(&pp->pmap_of);
	idmap__release(&pp->pmap_keys);
	idmap__release(&pp->locs);
	idmap__release(&pp->sample_keys);
	free(pp->pmaps);
	free(pp->samples);
	free(pp->ents);
	free(pp->ids);
}

int out_pprof__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	struct pp pp = { .r = r, .o = o };
	int err;

	pp.p = pp__profile(&pp);
	if (!pp.p) {
		err = -errno;
		goto out;
	}
	err = pp__comments(&pp);
	err = err ?: pp__collect(&pp);
	err = err ?: pp__add_mappings(&pp);
	err = err ?: pp__build_samples(&pp);
	err = err ?: pp__add_samples(&pp);
	err = err ?: pprof__write_file(pp.p, f);
	if (!err) {
		/* Most of the bytes are still buffered: say why they failed
		 * (ENOSPC, EPIPE...), not just that they did. */
		errno = 0;
		if (fflush(f) || ferror(f))
			err = errno ? -errno : -EIO;
	}
out:
	pp__free(&pp);
	return err;
}
