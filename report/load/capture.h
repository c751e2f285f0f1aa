/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture.h - a whole .stk file read into memory, the first stage of the
 * reporter's pipeline: per segment its stacks by id, its count rows summed
 * by key, its off-CPU rows, its process maps by pid and snapshot time;
 * for the file its kernel symbols and objects, META and the last STAT.
 *
 * Everything is copied out of the reader, so the capture owns its memory.
 */
#ifndef STK_REPORT_CAPTURE_H
#define STK_REPORT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "esymtab.h"
#include "idmap.h"
#include "ksyms.h"
#include "slice.h"
#include "stk.h"
#include "util.h"

struct cap_stack {
	uint64_t id;
	uint32_t nr_frames;
	uint32_t index;		/* 0 .. the capture's nr_stacks - 1: a slot in
				 * the callers' arrays of what they derive */
	uint64_t *frames;	/* leaf first, as recorded */
};

/*
 * One on-CPU key with its counts summed over the intervals in which one
 * maps snapshot of its process was in force: rows of equal key from
 * intervals with different snapshots (a library unloaded and another
 * loaded at its address) stay apart, so that each resolves in its own
 * (SPEC.md, MAPS).  Memory follows the unique keys times the snapshots of
 * their process, not the number of flushes.
 */
struct cap_count {
	struct stk_count row;	/* .count is the sum */
	uint32_t event;		/* TRCE: the event's index (META events); CNTS: 0 */
	uint64_t t1;		/* end of the first interval summed into it */
	const struct cap_maps *maps;	/* the snapshot of row.tgid in force at
					 * the end of each of those intervals,
					 * among those read before it; NULL:
					 * none yet */
	struct cap_count *next;	/* same hash */
};

/* One off-CPU key, summed in the same way: target and waker each keep the
 * snapshot of their own process. */
struct cap_offc {
	struct stk_offcpu row;	/* .count and .blocked_ns are sums */
	uint64_t t1;
	const struct cap_maps *target_maps, *waker_maps;
	struct cap_offc *next;
};

/* One snapshot of a process's maps (paths copied). */
struct cap_maps {
	uint32_t tgid;
	char comm[16];
	uint64_t time_ns;
	size_t seq;			/* place in the segment's file order */
	uint32_t nr_mappings;
	struct stk_mapping *mappings;	/* sorted by start */
};

struct cap_segment {
	uint32_t index;
	struct stk_segment_info info;
	struct idmap stacks;		/* id -> struct cap_stack * */
	struct cap_count **counts;	/* in first-seen order */
	size_t nr_counts, cap_counts;
	struct idmap count_keys;	/* key hash -> struct cap_count * chain */
	struct cap_offc **offc;
	size_t nr_offc, cap_offc;
	struct idmap offc_keys;
	struct cap_maps **maps;		/* every snapshot, in file order */
	size_t nr_maps, cap_maps;
	/* The same snapshots sorted by (tgid, time, seq) and by (tgid, comm,
	 * time, seq), for cap_segment__maps(): built once read. */
	struct cap_maps **by_time, **by_comm;
	/* While reading: tgid -> its snapshots so far, sorted by (time, seq),
	 * to tell which one is in force for a row as it is summed. */
	struct idmap maps_read;
	struct stk_pid_ns *pid_ns;	/* pidn records, in file order */
	size_t nr_pid_ns, cap_pid_ns;
	uint64_t t_first, t_last;	/* earliest t0 and latest t1 of CNTS/OFFC kept */
	uint64_t t_start;		/* where --since/--until count from: the
					 * header's mono_start_ns, else (header
					 * lost) the first row chunk's t0 */
	struct arena mem;		/* stacks and count rows */
	/* The snapshots' mapping paths, each kept once (a build's thousand
	 * processes map the same few hundred files): hash -> struct
	 * cap_path chain; the paths in @mem. */
	struct idmap paths;
};

struct cap_kobj {
	size_t next;			/* index + 1 of the next one of the same hash, 0: none */
	char *name;
	uint64_t base, size;
	uint32_t build_id_size;
	uint8_t build_id[STK_MAX_BUILD_ID];
};

/* An ELF image embedded in the capture (ESYM kind 1), e.g. the vDSO. */
struct cap_esym {
	size_t next;			/* index + 1 of the next of the same hash, 0: none */
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;		/* > 0 */
	void *elf;			/* the image (copied) */
	size_t elf_size;
};

/* A symbol table embedded in the capture: ESYM kind 2 (a binary's, by
 * build-id) or 3 (a process's perf map, by tgid), all its chunks merged. */
struct cap_symtab {
	size_t next;			/* index + 1 of the next of the same hash, 0: none */
	uint32_t kind;			/* STK_ESYM_SYMTAB or STK_ESYM_PERF_MAP */
	uint8_t build_id[STK_MAX_BUILD_ID];
	uint32_t build_id_size;		/* kind 2 */
	uint32_t tgid;			/* kind 3 */
	struct esymtab *t;
};

/* A Python code object of one process (ESYM kind 4), keyed by (tgid,
 * addr, fingerprint); the first record of a key is kept (SPEC.md: they
 * describe the same code object).  Strings and table copied. */
struct cap_pycode {
	struct cap_pycode *next;	/* same hash */
	struct cap_pycode *next_any;	/* same hash of (addr, fp) alone */
	uint64_t addr;
	uint32_t tgid;
	uint32_t fingerprint;
	uint32_t firstlineno;
	uint32_t py_version;		/* major << 8 | minor */
	const char *qualname;		/* non-empty */
	const char *filename;		/* may be "" */
	const uint8_t *linetable;
	uint32_t linetable_size;
};

struct capture {
	struct cap_segment *segs;
	size_t nr_segs;
	struct ksyms *ksyms;		/* from every KSYM chunk */
	size_t nr_stacks;		/* cap_stacks kept, all segments */
	struct cap_kobj *kobjs;
	size_t nr_kobjs, cap_kobjs;
	struct idmap kobj_keys;		/* hash of (name, base) -> index + 1 of the first */
	struct cap_esym *esyms;		/* one per build-id, first chunk wins */
	size_t nr_esyms, cap_esyms;
	struct cap_symtab *symtabs;	/* one per build-id or tgid */
	size_t nr_symtabs, cap_symtabs;
	struct idmap esym_keys, symtab_keys;	/* key hash -> index + 1 of the first */
	struct idmap pycode_keys;	/* hash of (tgid, addr, fp) -> cap_pycode chain */
	struct idmap pycode_any;	/* hash of (addr, fp) -> cap_pycode chain (next_any) */
	size_t nr_pycodes;
	struct arena py_mem;		/* the cap_pycodes, their strings and tables */
	struct stk_kv *meta;		/* every META pair, in order (copied) */
	size_t nr_meta;
	int sliced;			/* read with --since/--until: rows of a part */
	struct stk_stat *stats;		/* the last STAT chunk (copied) */
	size_t nr_stats;
	/* Sums of every count and blocked_ns kept.  A crafted file can make
	 * them pass 2^64: the rows are then capped so that these never wrap
	 * (so neither does any sum of rows made later: by stack, function,
	 * flame graph node) and @saturated is set, for one warning. */
	uint64_t total_count, total_blocked_ns;
	int saturated;
	/* Bytes held, roughly (what each record costs here, with the hash
	 * entries and allocator overhead), against CAPTURE_MEM_BASE +
	 * CAPTURE_MEM_PER_BYTE x the input's size. */
	uint64_t mem;
	/* What reading found. */
	struct stk_read_summary summary;
	int damaged;			/* a chunk failed verification (CRC, format...) */
	char *first_error;		/* its reader message, or NULL */
	uint64_t nr_errors;
};

/*
 * The memory a capture may hold, relative to the input's size S (SPEC.md
 * §7.3): CAPTURE_MEM_BASE + CAPTURE_MEM_PER_BYTE x S.  Real captures hold
 * well under 30 times their size (records compress 3 to 20 times); a
 * crafted one (a few KB of zstd'd zeros declaring 1024-frame stacks by the
 * thousand) would need gigabytes.
 */
#define CAPTURE_MEM_BASE	(256ull << 20)
#define CAPTURE_MEM_PER_BYTE	128ull

/*
 * capture__read() - read @path ("-" for stdin) completely.
 * A damaged or truncated file still gives a capture of what was recovered
 * (see ->damaged, ->summary.truncated, ->summary.closed).
 * Returns NULL with errno: the reader's open errno (message from
 * stk_open_errmsg()), ENOMEM, or EFBIG: the capture needs more memory than
 * its size allows (message from capture__errmsg()).
 */
struct capture *capture__read(const char *path);

/*
 * capture__read_slice() - as capture__read(), keeping only the CNTS, OFFC
 * and TRCE rows of the flush intervals in @slice (slice.h; NULL: all).  Every
 * other chunk (stacks, maps, kernel data, META, STAT) is read whole.
 */
struct capture *capture__read_slice(const char *path, const struct time_slice *slice);

void capture__free(struct capture *c);	/* accepts NULL */

/* After capture__read*() failed with EFBIG in this thread: what was over
 * the limit, e.g. "the capture needs more than 269 MiB (limit for a
 * 12345-byte input: 256 MiB + 128 x its size) at byte 9876". */
const char *capture__errmsg(void);

/* META value for @key (the last one), or NULL. */
const char *capture__meta(const struct capture *c, const char *key);

/* A trace capture's events (META events, in index order, split at its
 * commas): how many (0: not a trace capture), and the name of event @i
 * into @buf (@size bytes, cut to fit): 0, or -ENOENT for no such event. */
size_t capture__nr_events(const struct capture *c);
int capture__event(const struct capture *c, size_t i, char *buf, size_t size);

/* The last STAT value named @name, or 0. */
uint64_t capture__stat(const struct capture *c, const char *name);

/* Stack @id of @seg, or NULL. */
const struct cap_stack *cap_segment__stack(const struct cap_segment *seg, uint64_t id);

/* Starts loading what cap_segment__stack(@seg, @id) reads first, for a
 * caller that will ask for it a little later (idmap__prefetch()). */
void cap_segment__prefetch_stack(const struct cap_segment *seg, uint64_t id);

/*
 * cap_segment__maps() - the maps snapshot of @tgid that applies to a row
 * of task comm @comm (may be NULL) counted up to @time_ns: the newest one
 * taken at or before @time_ns whose comm is @comm, else the newest one taken
 * at or before it, else the oldest one.  Rows carry no time within their
 * interval, but exec changes the comm: a row counted before an exec in the
 * same interval has the old comm, and so gets the old image's snapshot.
 * NULL when the process has no snapshot in @seg.
 */
const struct cap_maps *cap_segment__maps(const struct cap_segment *seg, uint32_t tgid,
					 const char *comm, uint64_t time_ns);

/*
 * cap_segment__ns_tgid() - the pid process @tgid has in its own PID
 * namespace, for a row counted up to @time_ns: from the newest pidn record
 * of @tgid taken at or before @time_ns, else the oldest one (SPEC.md,
 * pidn).  0 when it has none (the recorder's namespace).  @pid_ns (may be
 * NULL) gets the namespace's inode number, 0 when unknown.
 */
uint32_t cap_segment__ns_tgid(const struct cap_segment *seg, uint32_t tgid, uint64_t time_ns,
			      uint64_t *pid_ns);

/*
 * capture__pycode() - the Python code object of process @tgid at @addr
 * with fingerprint @fp (ESYM kind 4), else of another process at @addr with
 * @fp (a forked child runs its parent's), or NULL: the capture describes none
 * (a frame of it is then shown as unknown code).  Valid until
 * capture__free().
 */
const struct cap_pycode *capture__pycode(const struct capture *c, uint32_t tgid, uint64_t addr,
					 uint32_t fp);

/* The mapping of @m containing @addr, or NULL. */
const struct stk_mapping *cap_maps__find(const struct cap_maps *m, uint64_t addr);

#endif
