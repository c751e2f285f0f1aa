/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report.h - the reporter's pipeline after reading: filters, kernel
 * fix-up, symbolization of each unique (module, address) once, and the
 * frame model every output writer consumes.
 *
 *   capture (capture.h) -> report__new() -> struct report -> writer (output.h)
 *
 * The frame model is structured, not strings: a frame has its kind, raw
 * address, mapping and module, and 1..n symbol lines (inline frames, leaf
 * first) or none (unknown).  Text and folded render names from it; pprof
 * maps it to Mappings, Locations with Lines, and Functions.  A user stack
 * that carries Python words (SPEC.md, STCK) gets its Python frames put in
 * among its native ones (pystack.h), as RFRAME_PYTHON frames.
 */
#ifndef STK_REPORT_REPORT_H
#define STK_REPORT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "symbolize.h"

struct kvmlinux;

enum rframe_kind {
	RFRAME_USER = 0,
	RFRAME_KERNEL = 1,
	RFRAME_PYTHON = 2,		/* a CPython frame: map NULL, addr the
					 * frame's word (or its stop word) */
};

/*
 * 24 bytes: a report holds one per frame of every unique stack (a million
 * for a system-wide capture of a build: its fresh memory is a cost of its
 * own).  A user frame's module is its mapping's (report__map_module());
 * the stack keeps the modules its frames are in (struct rstack's mods).
 * The symbol result, kind and return-ness share a word (results are
 * 8-aligned): read them with rframe__sym(), rframe__kind(),
 * rframe__is_return() and rframe__kernel_dwarf().
 */
struct rframe {
	uint64_t addr;			/* as sampled */
	/* const struct sym_result * (NULL: unknown) | RFRAME_BITS_*. */
	uintptr_t symk;
	union {				/* which one: by kind */
		/* User frames: the mapping covering addr (NULL if none);
		 * Python frames: NULL. */
		const struct stk_mapping *map;
		const struct cap_kobj *kobj;	/* kernel: image or module, or NULL */
	};
};

/* symk's low bits: the kind (RFRAME_BITS_KDWARF: a kernel frame whose sym
 * came from --vmlinux's DWARF, so inline frames are known), and whether it
 * was looked up at addr - 1. */
#define RFRAME_BITS_KIND	3u
#define RFRAME_BITS_KDWARF	3u
#define RFRAME_BITS_RETURN	4u
#define RFRAME_BITS		7u

/* What the low bits hold room for: results hold pointers (and live in
 * arenas or the heap). */
_Static_assert(_Alignof(struct sym_result) > RFRAME_BITS, "sym_result alignment");

static inline const struct sym_result *rframe__sym(const struct rframe *f)
{
	return (const struct sym_result *)(f->symk & ~(uintptr_t)RFRAME_BITS);
}

static inline enum rframe_kind rframe__kind(const struct rframe *f)
{
	unsigned int k = f->symk & RFRAME_BITS_KIND;

	return k == RFRAME_BITS_KDWARF ? RFRAME_KERNEL : (enum rframe_kind)k;
}

static inline int rframe__is_return(const struct rframe *f)
{
	return !!(f->symk & RFRAME_BITS_RETURN);
}

static inline int rframe__kernel_dwarf(const struct rframe *f)
{
	return (f->symk & RFRAME_BITS_KIND) == RFRAME_BITS_KDWARF;
}

/* A frame of @kind, looked up at addr - 1 when @is_return, no symbol yet. */
static inline void rframe__set_kind(struct rframe *f, enum rframe_kind kind, int is_return)
{
	f->symk = (uintptr_t)kind | (is_return ? RFRAME_BITS_RETURN : 0);
}

/* @sym (NULL: unknown; 8-aligned) as @f's result, its kind kept. */
static inline void rframe__set_sym(struct rframe *f, const struct sym_result *sym)
{
	f->symk = (f->symk & RFRAME_BITS) | (uintptr_t)sym;
}

/* A kernel frame's sym came from --vmlinux's DWARF. */
static inline void rframe__set_kernel_dwarf(struct rframe *f)
{
	f->symk |= RFRAME_BITS_KDWARF;
}

/* Offset of the frame in its object: the file offset in the mapping for
 * user frames, addr - base for kernel ones; addr itself when unknown. */
static inline uint64_t rframe__offset(const struct rframe *f)
{
	if (rframe__kind(f) == RFRAME_KERNEL)
		return f->kobj ? f->addr - f->kobj->base : f->addr;
	return f->map ? f->addr - f->map->start + f->map->offset : f->addr;
}

/*
 * [unwind] The marker frame ending a user stack that stkrec's unwinder
 * stopped early (SPEC.md, STCK): 0xfffffffffffff000 | reason, reasons
 * 1..REPORT_UW_NR_STOPS - 1 as named by unwind_stop__name().  The one
 * place that recognises it: 0 for any other frame, else the reason
 * (REPORT_UW_STOP_UNKNOWN for a value SPEC.md does not name).
 */
#define REPORT_UW_MARK		0xfffffffffffff000ULL
#define REPORT_UW_NR_STOPS	8
#define REPORT_UW_STOP_UNKNOWN	REPORT_UW_NR_STOPS

static inline unsigned int rframe__unwind_stop(const struct rframe *f)
{
	unsigned int r;

	if (rframe__kind(f) != RFRAME_USER || f->addr < REPORT_UW_MARK)
		return 0;
	r = (unsigned int)(f->addr & 0xfff);
	return r && r < REPORT_UW_NR_STOPS ? r : REPORT_UW_STOP_UNKNOWN;
}

/* "fault", "no CFI"...; "?" for REPORT_UW_STOP_UNKNOWN. */
const char *unwind_stop__name(unsigned int reason);

/*
 * A named Python frame: an RFRAME_PYTHON frame whose sym is not NULL points
 * at the @sym of one of these (rframe__py()).  @sym has one line: the
 * code's qualname, its co_filename whole, the line of the instruction
 * and co_firstlineno (pprof's Function and Line); @display is what text,
 * folded, svg and diff show, "QUALNAME (FILE:LINE)" with FILE the base name.
 */
struct rpyframe {
	struct sym_result sym;		/* first: &pf->sym is the frame's sym */
	struct sym_line line;
	const char *display;
	uint32_t display_len;
	uint32_t display_plain;		/* as sym_line.plain, for @display */
};

static inline const struct rpyframe *rframe__py(const struct rframe *f)
{
	const struct sym_result *sym = rframe__sym(f);

	return rframe__kind(f) == RFRAME_PYTHON && sym ? (const struct rpyframe *)sym : NULL;
}

/*
 * An RFRAME_PYTHON frame without a name is a marker: the Python walk's stop
 * word ("[python stopped: REASON]"), else a frame whose code object the
 * capture does not describe ("[python: unknown code]", REPORT_PY_UNKNOWN).
 * 0 for any other frame, else the stop's reason (REPORT_PY_STOP_UNKNOWN for
 * one SPEC.md does not name).
 */
#define REPORT_PY_UNKNOWN	"[python: unknown code]"
#define REPORT_PY_NR_STOPS	4
#define REPORT_PY_STOP_UNKNOWN	REPORT_PY_NR_STOPS

static inline unsigned int rframe__python_stop(const struct rframe *f)
{
	uint64_t r;

	if (rframe__kind(f) != RFRAME_PYTHON || rframe__sym(f) ||
	    stk_py_word__tag(f->addr) != STK_PY_TAG_STOP)
		return 0;
	r = stk_py_word__reason(f->addr);
	return r && r < REPORT_PY_NR_STOPS ? (unsigned int)r : REPORT_PY_STOP_UNKNOWN;
}

/* "depth", "fault", "bad code"; "?" for REPORT_PY_STOP_UNKNOWN. */
const char *python_stop__name(unsigned int reason);

/*
 * rframe__marker() - the text of a frame that has no name but says why:
 * "[unwind stopped: REASON]", "[python stopped: REASON]" or
 * "[python: unknown code]", written into @buf (@size bytes, 48 are
 * enough).  NULL for any other frame.
 */
const char *rframe__marker(const struct rframe *f, char *buf, size_t size);

/* The most modules a resolved stack counts its user frames in. */
#define REPORT_STACK_MODS 64

/* A resolved stack, leaf first.  Shared by every sample that has it. */
struct rstack {
	uint32_t nr_frames;
	struct rframe *frames;
	uint32_t nr_unknown;		/* frames with sym == NULL (but the
					 * Python stop marker) */
	uint32_t nr_python;		/* of the frames, RFRAME_PYTHON ones */
	uint32_t nr_native;		/* native frames recorded (the loop's
					 * that Python frames replaced included):
					 * what max_stack_depth bounds */
	uint8_t unwind_stop;		/* rframe__unwind_stop() of the last
					 * native frame: why unwinding stopped
					 * early, or 0 */
	uint8_t python_stop;		/* rframe__python_stop() of its Python
					 * stop marker, or 0 */
	uint8_t python_unknown;		/* a Python frame of unknown code */
	/* The modules of its user frames, in the order first met (the first
	 * REPORT_STACK_MODS), for the summary's "fully symbolized" counts;
	 * bit i of unknown_mods: a frame in mods[i] has no symbol. */
	uint8_t nr_mods;
	struct sym_module *const *mods;
	uint64_t unknown_mods;
};

/* One side of a sample (the sampled task, or the waker for offwake). */
struct rtask {
	uint32_t tgid, tid;
	uint32_t ns_tgid;			/* tgid in its own PID namespace when
						 * that differs (capture's pidn), else 0 */
	uint64_t pid_ns;			/* that namespace's inode number, or 0 */
	char comm[16];
	stk_stack_ref user_ref, kernel_ref;	/* as recorded (< 0: why missing) */
	const struct rstack *user;		/* NULL: none (missing, filtered, -K) */
	const struct rstack *kernel;		/* after fix-up; NULL: none */
};

struct rsample {
	struct rtask task;
	/* REPORT_OFFWAKE: the waker (in the report's memory); otherwise
	 * &report_no_waker, all zero.  A pointer: a profile's samples are
	 * 104 bytes, not 168 (55k of them in a build's capture). */
	const struct rtask *waker;
	uint64_t count;			/* samples, blocking episodes, or events */
	uint64_t blocked_ns;		/* off-CPU captures */
	uint32_t event;			/* trace captures: the event's index */
	uint32_t segment;		/* side by side: 104 bytes, not 112 */
};

/* The waker of samples that have none (struct rsample's waker). */
extern const struct rtask report_no_waker;

enum report_kind {
	REPORT_PROFILE = 0,		/* CNTS rows */
	REPORT_OFFCPU,			/* OFFC rows without wakers */
	REPORT_OFFWAKE,			/* OFFC rows with waker stacks */
};

struct report_opts {
	size_t sz;			/* sizeof(struct report_opts) */
	int user_only;			/* -U: drop kernel stacks */
	int kernel_only;		/* -K: drop user stacks */
	int kernel_skip;		/* -S N: skip N kernel frames, no ret-IP search */
	const uint32_t *pids;		/* --pid: keep these tgids (NULL: all) */
	size_t nr_pids;
	const uint32_t *tids;		/* --tid */
	size_t nr_tids;
	const char *comm;		/* --comm: exact task comm */
	int exclude_idle;		/* --exclude-idle: drop the idle task's
					 * samples (report__is_idle()) */
	const char *kallsyms;		/* --kallsyms FILE instead of the capture's */
	struct kvmlinux *vmlinux;	/* --vmlinux: kernel-image frames from it
					 * (kvmlinux.h), else NULL; borrowed */
	struct symbolizer_opts sym;	/* symbolization of user frames (and,
					 * via --vmlinux, of kernel ones) */
	int no_symbols;			/* no symbol lookups: counts only (info) */
	int no_python;			/* --python=no: native frames only, the
					 * Python words dropped */
	/* Trace captures: 0 every event's rows, else only those of event
	 * index @event - 1 (--event). */
	size_t event;
};

/* User stacks that ended in an unwind stop marker, by reason (index
 * 1..REPORT_UW_STOP_UNKNOWN; 0 unused).  Offwake counts both sides. */
struct report_uw_stops {
	uint64_t count[REPORT_UW_STOP_UNKNOWN + 1];	/* sample counts */
	uint64_t stacks[REPORT_UW_STOP_UNKNOWN + 1];	/* distinct stacks */
	uint64_t total_count;				/* all reasons */
};

/* Python stacks: samples with a frame of code the capture does not
 * describe, and with a stop marker, by reason (1..REPORT_PY_STOP_UNKNOWN).
 * Offwake counts both sides. */
struct report_py_stats {
	uint64_t unknown_count;
	uint64_t stop_count[REPORT_PY_STOP_UNKNOWN + 1];
	uint64_t stop_total;
};

struct report {
	enum report_kind kind;		/* trace captures: REPORT_PROFILE, @trace set */
	int trace;			/* a trace capture (counts are events) */
	size_t nr_events;		/* its events (capture__nr_events()) */
	const struct capture *cap;
	struct rsample *samples;	/* in capture order (the report's memory) */
	size_t nr_samples;
	uint64_t total_count;		/* sum of sample counts kept */
	uint64_t symbolized_count;	/* ... of samples with no unknown frame */
	/* profile.py's "stack traces could not be displayed": keys whose
	 * stack was wanted but missing for another reason than EFAULT. */
	uint64_t missing_stacks;
	int missing_map_full;		/* one was -ENOMEM or -EEXIST (map full) */
	uint64_t kernel_samples, kernel_unknown_samples;
	struct report_uw_stops uw_stops;
	struct report_py_stats py;
	const char *kernel_syms_source;	/* "capture", the --kallsyms path, or NULL: none */
	struct symbolizer *sym;
	struct ksyms *ksyms;		/* the capture's, or --kallsyms' */
	struct ksyms *own_ksyms;	/* loaded from --kallsyms, owned */
	struct report_priv *priv;
};

/*
 * report__new() - run the pipeline over @cap (which must outlive the report).
 * Returns NULL with errno: ENOMEM, EINVAL (bad opts), or the --kallsyms
 * open errno (ENOENT...), EBADMSG (--kallsyms unparsable).
 */
struct report *report__new(const struct capture *cap, const struct report_opts *opts);
void report__free(struct report *r);	/* accepts NULL */

/* The module of user frames in @map (a mapping of @r's frames), or NULL. */
struct sym_module *report__map_module(const struct report *r, const struct stk_mapping *map);

/* Number of display lines of @f (its inline depth, 1 when unknown). */
static inline uint32_t rframe__nr_lines(const struct rframe *f)
{
	return rframe__sym(f) ? rframe__sym(f)->nr_lines : 1;
}

/* The value a sample contributes: count for profiles, blocked
 * nanoseconds (output.h's out_value() prints microseconds) for off-CPU. */
static inline uint64_t sample_value(const struct report *r, const struct rsample *s)
{
	return r->kind == REPORT_PROFILE ? s->count : s->blocked_ns;
}

/*
 * report__is_idle() - 1 when a sample of task @tgid/@tid is of the kernel's
 * idle task: pid 0 and tid 0, the per-CPU task whose comm is "swapper/N"
 * (what a CPU runs when nothing else is runnable; an interrupt taken there
 * is sampled as it).  Only tgid and tid count, not the comm, which any task
 * may set to "swapper/0".
 */
static inline int report__is_idle(uint32_t tgid, uint32_t tid)
{
	return tgid == 0 && tid == 0;
}

/* "profile", "offcpu" or "offwake". */
const char *report_kind__name(enum report_kind k);

#endif
