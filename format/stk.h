/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stk.h - the .stk capture file: writer and reader.
 *
 * This header is the only contract between stkrec (which writes captures)
 * and stkreport (which reads them).  SPEC.md specifies the bytes; this
 * header specifies the C API of libstk, which implements SPEC.md.
 *
 * libstk links libc and libzstd only.  It never prints and never exits:
 * every failure is returned as a negative errno value, and the reader and
 * writer keep a one-line human readable message describing the last error
 * (stk_reader__errmsg(), stk_writer__errmsg()).
 *
 * Error values used throughout:
 *   -EINVAL           bad argument (a caller bug), e.g. NULL pointer,
 *                     a string or build-id longer than the format allows
 *   -ENOMEM           out of memory
 *   -EBADMSG          corrupt data: bad signature, CRC mismatch, bad
 *                     varint, a length that does not fit, zstd failure
 *   -ENODATA          the input ends inside a header or chunk (truncated)
 *   -EPROTONOSUPPORT  the file needs a newer reader (read version too high)
 *   -ENOTSUP          an unknown critical chunk (tag with an uppercase
 *                     first letter this reader does not know)
 *   -EFBIG            a field exceeds a limit (STK_MAX_*, or the reader's
 *                     limits relative to the input's size)
 *   -EIO              (reader) a file shrank while it was read
 *   other             errno from open()/read()/write()/fstat(), e.g.
 *                     -ENOSPC, -EACCES, -ENOENT
 */
#ifndef STK_H
#define STK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Format versions this libstk writes and reads (see SPEC.md "Versioning"). */
#define STK_FORMAT_READ_VERSION	 1 /* oldest reader version that can read what we write */
#define STK_FORMAT_WRITE_VERSION 1 /* version of the writer */
#define STK_FORMAT_MAX_READ	 1 /* highest read version this reader understands */

/* Release of the stk tools, also written in every file header so that a
 * too-old reader can say which release it needs. */
#define STK_VERSION_MAJOR 0
#define STK_VERSION_MINOR 1
#define STK_VERSION_PATCH 0
#define STK_VERSION_STRING "0.1.0"

/* Hard limits; a reader refuses larger values before allocating (-EFBIG or
 * -EBADMSG) and a writer refuses to produce them (-EFBIG). */
#define STK_MAX_CHUNK_RAW   (256u << 20) /* decompressed payload bytes */
#define STK_MAX_STRING	    4096u	 /* bytes in one string (path, name) */
#define STK_MAX_BUILD_ID    64u		 /* bytes in a build-id */
#define STK_MAX_FRAMES	    1024u	 /* frames in one stack */
/* Memory a reader spends on one decoded chunk's records and strings; a
 * chunk that would need more is refused with -EFBIG.  Decoded records are
 * up to ~24 times larger than their encoding, so this bounds what a
 * hostile STK_MAX_CHUNK_RAW payload can cost. */
#define STK_MAX_DECODED	    (1u << 30)
/* A compressed payload longer than any zstd frame of STK_MAX_CHUNK_RAW
 * bytes can be (ZSTD_COMPRESSBOUND) is refused before it is read. */
#define STK_MAX_CHUNK_COMP  (257u << 20)
/* Limits relative to the input's size S in bytes (a stream: the bytes read
 * so far), so that a small crafted file cannot cost much more than a real
 * capture of its size: a chunk's raw size must be at most
 * STK_CHUNK_RAW_BASE + STK_CHUNK_RAW_PER_BYTE x S (-EFBIG), and decoding
 * one chunk may use at most STK_DECODED_BASE + STK_DECODED_PER_BYTE x S
 * (and STK_MAX_DECODED) bytes.  Real captures compress 3-20 times. */
#define STK_CHUNK_RAW_BASE	(64ull << 20)
#define STK_CHUNK_RAW_PER_BYTE	256ull
#define STK_DECODED_BASE	(256ull << 20)
#define STK_DECODED_PER_BYTE	128ull

/* Chunk tags, as 4 ASCII bytes.  A tag whose first letter is lowercase is
 * ancillary: a reader that does not know it skips it.  Uppercase: critical,
 * a reader that does not know it must refuse the file. */
enum stk_chunk_type {
	STK_CHUNK_UNKNOWN = 0, /* ancillary chunk this reader does not know */
	STK_CHUNK_META,	       /* "META" key/value facts about the capture */
	STK_CHUNK_STCK,	       /* "STCK" stack id -> frames */
	STK_CHUNK_CNTS,	       /* "CNTS" on-CPU sample counts, one interval */
	STK_CHUNK_OFFC,	       /* "OFFC" off-CPU counts and blocked time, one interval */
	STK_CHUNK_MAPS,	       /* "MAPS" process memory maps with build-ids */
	STK_CHUNK_KSYM,	       /* "KSYM" kernel symbols */
	STK_CHUNK_KBID,	       /* "KBID" kernel and module build-ids and bases */
	STK_CHUNK_ESYM,	       /* "ESYM" opaque blob keyed by build-id */
	STK_CHUNK_STAT,	       /* "STAT" counters by name; the last one wins */
	STK_CHUNK_INDX,	       /* "INDX" index of the segment's chunks */
	STK_CHUNK_PIDN,	       /* "pidn" (ancillary) pids in PID namespaces */
	STK_CHUNK_TRCE,	       /* "TRCE" event counts of a trace capture, one interval */
};

/* Returns the 4-letter tag of a known type ("META"...), or NULL. */
const char *stk_chunk_type__tag(enum stk_chunk_type type);

/* ---- Payload records ------------------------------------------------ */

/* A key/value pair (META).  Keys are lowercase ASCII words with '_'. */
struct stk_kv {
	const char *key;
	const char *value;
};

/* A stack (STCK): frames are raw instruction pointers, leaf first, exactly
 * as the kernel returned them.  Ids are unique within a segment; a user and
 * a kernel stack never share an id. */
struct stk_stack {
	uint64_t id;
	uint32_t nr_frames;	/* <= STK_MAX_FRAMES */
	const uint64_t *frames;
};

/* A stack id field in CNTS/OFFC: >= 0 is a stack id present in a STCK chunk
 * of the same segment; < 0 is -errno, why no stack was taken (-EFAULT: no
 * stack in this context, e.g. a kernel thread's user stack; -EEXIST/-ENOMEM:
 * map full; -ENOENT: not requested, e.g. with -U/-K). */
typedef int64_t stk_stack_ref;

/* One on-CPU count row (CNTS). */
struct stk_count {
	uint32_t tgid;		/* process id */
	uint32_t tid;		/* thread id */
	char comm[16];		/* NUL-terminated task comm */
	stk_stack_ref user_stack;
	stk_stack_ref kernel_stack;
	uint64_t kernel_ip;	/* interrupted IP if it was a kernel address, else 0 */
	uint64_t kernel_ret_ip; /* return IP read at regs->bp + 8, else 0 */
	uint64_t count;		/* samples in this interval */
};

/* One event count row (TRCE): @count events of the capture's event
 * @event (its index in META events) in this interval. */
struct stk_trace_count {
	uint32_t event;
	uint32_t tgid;
	uint32_t tid;
	char comm[16];
	stk_stack_ref user_stack;
	stk_stack_ref kernel_stack;
	uint64_t count;
};

/* One side (target or waker) of an off-CPU row. */
struct stk_task_stacks {
	uint32_t tgid;
	uint32_t tid;
	char comm[16];
	stk_stack_ref user_stack;
	stk_stack_ref kernel_stack;
};

/* One off-CPU row (OFFC).  For offcpu captures, the waker has tgid = tid = 0,
 * comm "" and both stacks -ENOENT. */
struct stk_offcpu {
	struct stk_task_stacks target;
	struct stk_task_stacks waker;
	uint64_t count;		/* blocking episodes in this interval */
	uint64_t blocked_ns;	/* total blocked time in this interval */
};

/* One memory mapping of a process (MAPS). */
struct stk_mapping {
	uint64_t start;		/* first address */
	uint64_t end;		/* one past the last address */
	uint64_t offset;	/* file offset of start */
	uint64_t dev;		/* st_dev of the file, as makedev(major, minor) */
	uint64_t inode;
	uint32_t prot;		/* PROT_READ|PROT_WRITE|PROT_EXEC as in /proc/PID/maps */
	uint32_t build_id_size; /* 0 when none could be read; <= STK_MAX_BUILD_ID */
	uint8_t build_id[STK_MAX_BUILD_ID];
	const char *path;	/* as /proc/PID/maps prints it, e.g. "/usr/bin/x (deleted)", "[vdso]" */
};

/* The mappings of one process at one time (MAPS holds one or more). */
struct stk_proc_maps {
	uint32_t tgid;
	char comm[16];
	uint64_t time_ns;	/* CLOCK_MONOTONIC time the snapshot was taken */
	uint32_t nr_mappings;
	const struct stk_mapping *mappings;
};

/* A kernel symbol (KSYM): covers [addr, addr + size). */
struct stk_ksym {
	uint64_t addr;
	uint64_t size;		/* up to the next symbol in /proc/kallsyms */
	char type;		/* kallsyms type letter, e.g. 't', 'T' */
	const char *name;
	const char *module;	/* "" for the kernel image, else the module name */
};

/* A kernel image or module with its build-id (KBID). */
struct stk_kobj {
	const char *name;	/* "[kernel.kallsyms]" or the module name */
	uint64_t base;		/* load address (0 if unknown) */
	uint64_t size;		/* bytes (0 if unknown) */
	uint32_t build_id_size;
	uint8_t build_id[STK_MAX_BUILD_ID];
};

/*
 * A process in another PID namespace than the recorder's (pidn): its pid as
 * the recorder sees it (@tgid, as in every other chunk) and as the process
 * sees itself (@ns_tgid, in its own, innermost namespace).
 */
struct stk_pid_ns {
	uint32_t tgid;
	uint32_t ns_tgid;	/* != tgid, > 0 */
	uint64_t time_ns;	/* CLOCK_MONOTONIC time the recorder learnt it */
	uint64_t pid_ns;	/* the namespace's inode number (/proc/PID/ns/pid), 0 unknown */
};

/* A counter (STAT), e.g. {"samples", 1234}, {"stack_err_eexist", 3}. */
struct stk_stat {
	const char *name;
	uint64_t value;
};

/*
 * Python frames in a user stack (SPEC.md, STCK "Python words").  After a
 * user stack's native frames (and its unwind stop marker, if any) come,
 * when the thread ran a supported CPython, its Python frames, leaf first:
 * words whose top byte is 0x50..0x53, non-canonical addresses under 4- and
 * 5-level paging, so no native frame can be one.
 *
 *   0x50 << 56 | addr           a frame: addr, its code object's address
 *                               (low 56 bits); always followed by its info word
 *   0x51 << 56 | addr           the same, the entry frame of one native
 *                               _PyEval_EvalFrameDefault activation
 *   0x52 << 56 | fp << 32 | off the info word: the code's 24-bit fingerprint
 *                               (ESYM kind 4's) and the instruction offset,
 *                               in 2-byte code units (STK_PY_OFFSET_UNKNOWN)
 *   0x53 << 56 | reason         the Python walk stopped early (last word):
 *                               STK_PY_STOP_*
 */
#define STK_PY_TAG_FRAME	0x50u
#define STK_PY_TAG_ENTRY	0x51u
#define STK_PY_TAG_INFO		0x52u
#define STK_PY_TAG_STOP		0x53u
#define STK_PY_ADDR_MASK	0x00ffffffffffffffULL
#define STK_PY_FP_MAX		0xffffffu
#define STK_PY_OFFSET_UNKNOWN	0xffffffffu
#define STK_PY_MAX_FRAMES	64u	/* Python frames in one stack */
#define STK_PY_STOP_DEPTH	1u	/* more frames than taken */
#define STK_PY_STOP_FAULT	2u	/* a frame could not be read */
#define STK_PY_STOP_BAD_CODE	3u	/* a code object failed the type check */

/* The tag of a frame word: STK_PY_TAG_* for a Python word, else 0. */
static inline unsigned int stk_py_word__tag(uint64_t w)
{
	unsigned int t = (unsigned int)(w >> 56);

	return t >= STK_PY_TAG_FRAME && t <= STK_PY_TAG_STOP ? t : 0;
}

static inline uint64_t stk_py_word__frame(uint64_t addr, int entry)
{
	return (uint64_t)(entry ? STK_PY_TAG_ENTRY : STK_PY_TAG_FRAME) << 56 |
	       (addr & STK_PY_ADDR_MASK);
}

static inline uint64_t stk_py_word__info(uint32_t fingerprint, uint32_t offset)
{
	return (uint64_t)STK_PY_TAG_INFO << 56 |
	       (uint64_t)(fingerprint & STK_PY_FP_MAX) << 32 | offset;
}

static inline uint64_t stk_py_word__stop(uint32_t reason)
{
	return (uint64_t)STK_PY_TAG_STOP << 56 | reason;
}

/* Fields of the words above. */
static inline uint64_t stk_py_word__addr(uint64_t w)
{
	return w & STK_PY_ADDR_MASK;
}

static inline uint32_t stk_py_word__fingerprint(uint64_t w)
{
	return (uint32_t)(w >> 32) & STK_PY_FP_MAX;
}

static inline uint32_t stk_py_word__offset(uint64_t w)
{
	return (uint32_t)w;
}

/* Of a stop word: STK_PY_STOP_*, or another value (an unknown reason). */
static inline uint64_t stk_py_word__reason(uint64_t w)
{
	return w & STK_PY_ADDR_MASK;
}

/* ---- Writer ---------------------------------------------------------- */

struct stk_writer;

struct stk_writer_opts {
	size_t sz;		/* sizeof(struct stk_writer_opts), for growth */
	int compression_level;	/* zstd level; 0 means the default (3) */
	uint64_t wall_start_ns; /* CLOCK_REALTIME at capture start; 0 = now */
	uint64_t mono_start_ns; /* CLOCK_MONOTONIC at capture start; 0 = now */
	/* zstd level of payloads of at most STK_SMALL_PAYLOAD bytes; 0 means
	 * compression_level.  A negative (fast) level skips the entropy
	 * tables whose set-up is most of a small payload's cost. */
	int small_compression_level;
};

#define STK_SMALL_PAYLOAD 4096

/*
 * stk_writer__open() - start a capture at @path and write the file header.
 * @path: where the capture goes.
 * @opts: may be NULL for defaults.
 *
 * Nothing at @path is truncated or removed before the capture has
 * started: the file is created mode 0600 (whatever the umask: captures
 * hold the kernel's addresses) under a temporary name beside @path,
 * ".NAME.XXXXXX", and takes @path's place (rename(), replacing a regular
 * file or a symbolic link there, never following it) at
 * stk_writer__commit() or stk_writer__close().  A character device or a
 * FIFO at @path (/dev/null, a pipe to another program) is written in
 * place, neither truncated nor removed; opening a FIFO waits for its
 * reader.
 *
 * The file is locked (an open file description write lock) while it is
 * written: a second writer with the same @path refuses it (EBUSY), here
 * or at stk_writer__commit().  Best effort: two writers started at once
 * can both get past the check; the one whose file was replaced finds out
 * at stk_writer__close_as().
 *
 * Returns a writer, or NULL with errno set: the open()/mkostemp()/write()
 * errno, EISDIR, EINVAL when @path is something else that cannot hold a
 * capture (a block device, a socket), EAGAIN when it was replaced while
 * being opened, EBUSY when another writer is writing it, or ENOMEM.  On
 * failure nothing is left behind.
 */
struct stk_writer *stk_writer__open(const char *path, const struct stk_writer_opts *opts);

/*
 * stk_writer__commit() - give a capture from stk_writer__open() its name:
 * rename the temporary file over @path.  Until then a killed writer
 * leaves its capture under the temporary name and @path as it was.  Does
 * nothing for a writer from stk_writer__fdopen(), for a device or FIFO, or
 * once done.
 * Returns 0, -EEXIST when @path has become something other than a regular
 * file or a symbolic link (it is left alone), -EBUSY when another writer
 * has started writing a capture there since stk_writer__open(), or the
 * rename() -errno.
 */
int stk_writer__commit(struct stk_writer *w);

/*
 * stk_writer__discard() - abandon a capture: close the fd without index
 * or trailer and free @w.  Before stk_writer__commit(), the temporary
 * file is removed and @path is as it was before stk_writer__open(); after
 * it, the file stays as written so far.  Accepts NULL.
 */
void stk_writer__discard(struct stk_writer *w);

/*
 * stk_writer__fdopen() - as stk_writer__open() on an open fd, which may be a
 * pipe, or a file positioned at its end (the capture is then appended as a
 * new segment).  Consumes @fd: it is closed by stk_writer__close() (and on
 * failure here).
 */
struct stk_writer *stk_writer__fdopen(int fd, const struct stk_writer_opts *opts);

/*
 * The stk_writer__add_*() functions each encode, compress and append one
 * chunk with a single write() (looping only on short writes), or hold it
 * (stk_writer__hold()).  Nothing
 * already written is ever modified.  They return 0, or:
 *   -EINVAL  bad argument (e.g. n > 0 with a NULL array, a string too long)
 *   -EFBIG   the encoded payload exceeds STK_MAX_CHUNK_RAW: split the rows
 *   -ENOMEM, or the write() errno (-ENOSPC, -EIO, ...).
 * After a write error the writer is failed: later calls return -EIO, and
 * stk_writer__close() still closes the fd.  The chunk that failed is not in
 * the file; the chunks before it are complete.
 *
 * @t0_ns, @t1_ns: the CLOCK_MONOTONIC interval the chunk covers (0, 0 when
 * not applicable).  Arrays are only read during the call.
 */
int stk_writer__add_meta(struct stk_writer *w, const struct stk_kv *kv, size_t n);
int stk_writer__add_stacks(struct stk_writer *w, const struct stk_stack *stacks, size_t n);
int stk_writer__add_counts(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			   const struct stk_count *rows, size_t n);
int stk_writer__add_offcpu(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			   const struct stk_offcpu *rows, size_t n);
/* The @n event count rows @rows of [@t0_ns, @t1_ns] as one TRCE chunk;
 * as stk_writer__add_counts(). */
int stk_writer__add_trace(struct stk_writer *w, uint64_t t0_ns, uint64_t t1_ns,
			  const struct stk_trace_count *rows, size_t n);
int stk_writer__add_maps(struct stk_writer *w, const struct stk_proc_maps *procs, size_t n);
int stk_writer__add_ksyms(struct stk_writer *w, const struct stk_ksym *syms, size_t n);
int stk_writer__add_kobjs(struct stk_writer *w, const struct stk_kobj *objs, size_t n);
int stk_writer__add_esym(struct stk_writer *w, const uint8_t *build_id, uint32_t build_id_size,
			 const void *blob, size_t blob_size);

/*
 * ESYM blob kinds (SPEC.md §ESYM): the blob's first byte.  libstk does not
 * look inside blobs; the tools agree on these.  A reader ignores a blob
 * of a kind it does not know.
 */
#define STK_ESYM_ELF_IMAGE 1u	/* then a complete ELF file with that build-id (the vDSO) */
#define STK_ESYM_SYMTAB	   2u	/* then the function symbols of that binary (decoded) */
#define STK_ESYM_PERF_MAP  3u	/* then one process's JIT symbols, /tmp/perf-PID.map (decoded) */
#define STK_ESYM_PYCODE	   4u	/* then one process's Python code objects (decoded) */

/* Where a kind 2 table's symbols came from: its `sources`, OR'ed. */
#define STK_ESYM_SRC_SYMTAB    1u	/* .symtab */
#define STK_ESYM_SRC_DYNSYM    2u	/* .dynsym (the file had no .symtab) */
#define STK_ESYM_SRC_DEBUGDATA 4u	/* .gnu_debugdata's .symtab (minidebuginfo) */

/*
 * A symbol of an ESYM kind 2 or 3 table: covers [addr, addr + size).
 * Kind 2: @addr is a file offset of the binary (a sampled address a in a
 * mapping of it maps to a - start + offset); kind 3: a virtual address of
 * the process.  @name is raw (not demangled), non-empty.
 */
struct stk_esym_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;
};

/*
 * stk_writer__add_esym_symtab() - an ESYM kind 2 chunk: function symbols of
 * the binary with build-id @build_id (1..STK_MAX_BUILD_ID bytes), from
 * @sources (STK_ESYM_SRC_*).  Several chunks for one build-id add up.
 * Returns as the other add functions; -EINVAL for an empty build-id or
 * name.
 */
int stk_writer__add_esym_symtab(struct stk_writer *w, const uint8_t *build_id,
				uint32_t build_id_size, uint32_t sources,
				const struct stk_esym_sym *syms, size_t n);

/*
 * stk_writer__add_esym_perf_map() - an ESYM kind 3 chunk: lines of process
 * @tgid's /tmp/perf-@tgid.map (JIT code in anonymous memory).  Several
 * chunks for one tgid add up.
 */
int stk_writer__add_esym_perf_map(struct stk_writer *w, uint32_t tgid,
				  const struct stk_esym_sym *syms, size_t n);

/*
 * A Python code object of one process (ESYM kind 4, SPEC.md): what a
 * reporter needs to name a Python frame of a user stack (the STCK Python
 * words, STK_PY_WORD_* below) that points at it.  Its key is (the chunk's
 * tgid, @addr, @fingerprint).
 */
struct stk_esym_pycode {
	uint64_t addr;			/* the code object's address in the process */
	uint32_t fingerprint;		/* <= STK_PY_FP_MAX; the stack word's */
	uint32_t firstlineno;		/* co_firstlineno */
	const char *qualname;		/* co_qualname (3.11+), else co_name; non-empty */
	const char *filename;		/* co_filename as the process had it; may be "" */
	const uint8_t *linetable;	/* the raw line table (see py_version) */
	uint32_t linetable_size;	/* <= STK_MAX_PY_LINETABLE; 0: none */
};

/* Bytes of one code object's line table a chunk may carry (the recorder
 * cuts longer tables to nothing: the frame then shows co_firstlineno). */
#define STK_MAX_PY_LINETABLE 65536u

/*
 * stk_writer__add_esym_pycode() - an ESYM kind 4 chunk: @n code objects of
 * process @tgid, whose interpreter is CPython @py_version (major << 8 |
 * minor, 0x030b for 3.11: says how the line tables are read).  Several
 * chunks for one tgid add up.
 * Returns as the other add functions; -EINVAL for an empty or missing
 * qualname, a NULL filename, a fingerprint > STK_PY_FP_MAX, a line table
 * longer than STK_MAX_PY_LINETABLE (or NULL with a size), a string longer
 * than STK_MAX_STRING.
 */
int stk_writer__add_esym_pycode(struct stk_writer *w, uint32_t tgid, uint32_t py_version,
				const struct stk_esym_pycode *codes, size_t n);

int stk_writer__add_stats(struct stk_writer *w, const struct stk_stat *stats, size_t n);

/* An ancillary "pidn" chunk: processes in other PID namespaces.  -EINVAL
 * for a record whose ns_tgid is 0 or equal to its tgid. */
int stk_writer__add_pid_ns(struct stk_writer *w, const struct stk_pid_ns *pids, size_t n);

/*
 * stk_writer__add_raw() - append a chunk with tag @tag (4 bytes, need not
 * be a known one) and the given raw (uncompressed) payload.  For tests and
 * for future ancillary chunks.  Refuses "INDX" (-EINVAL).
 */
int stk_writer__add_raw(struct stk_writer *w, const char tag[4], uint64_t t0_ns, uint64_t t1_ns,
			const void *payload, size_t size);

/*
 * stk_writer__close() - write the index and trailer, fsync, commit (see
 * stk_writer__commit(); if that fails, the capture stays under its
 * temporary name), close the fd and free @w (always, even on error).
 * Accepts NULL.
 *
 * Returns 0, or the first error that made the file incomplete (then the
 * file has no trailer, and readers report it as not closed cleanly).  No
 * message survives @w: describe the error with strerror(-err).
 */
int stk_writer__close(struct stk_writer *w);

/*
 * stk_writer__close_as() - stk_writer__close(), and when the capture's
 * name no longer holds it (the file was removed, or another put in its
 * place, since stk_writer__commit()), a copy of it is saved beside as
 * "PATH.PID" (or "PATH.PID.N"), whose name goes to @where (@size bytes;
 * "" when none could be made).  Returns as stk_writer__close(), or
 * -ENOENT (removed) or -ESTALE (replaced) when the file was otherwise
 * complete.
 */
int stk_writer__close_as(struct stk_writer *w, char *where, size_t size);

/*
 * stk_writer__hold() - keep the chunks added from now on complete in memory
 * (each as it would be written), to go out in the order added with one
 * write() at stk_writer__release() or stk_writer__close(): one system call
 * for a burst of small chunks.  Held chunks over 64 KiB in all are
 * written as more come, and a chunk of 16 KiB or more goes out at once,
 * after the held ones in the same writev().  A writer killed meanwhile leaves the file as it
 * would have left it before those chunks were made.
 *
 * stk_writer__release() - write the held chunks and stop holding.  0, or
 * the write() errno (the writer is then failed, as after an add_*() write
 * error): the held chunks are all lost, the file holds the chunks before
 * them, and stk_writer__dropped() counts them -- also when an add_*() call
 * fails writing held chunks to make room.
 */
void stk_writer__hold(struct stk_writer *w);
int stk_writer__release(struct stk_writer *w);
uint64_t stk_writer__dropped(const struct stk_writer *w);

/* Bytes this writer has written so far, held ones included (the file size
 * once they are written, unless it appends to an existing file). */
uint64_t stk_writer__bytes(const struct stk_writer *w);

/* Message of the last error, e.g. "write chunk 12 (CNTS): No space left on
 * device".  Valid until the next call on @w. */
const char *stk_writer__errmsg(const struct stk_writer *w);

/* ---- Reader ---------------------------------------------------------- */

struct stk_reader;

/*
 * A decoded chunk.  All pointers are borrowed from the reader and stay
 * valid until the next stk_reader__next() or stk_reader__close().
 */
struct stk_chunk {
	enum stk_chunk_type type;
	char tag[5];		/* NUL-terminated */
	uint32_t segment;	/* 0 for the first segment of a concatenated file */
	uint32_t seq;		/* chunk sequence number in its segment, from 0 */
	uint64_t offset;	/* byte offset of the chunk header in the file */
	uint32_t comp_size;	/* compressed payload bytes */
	uint32_t raw_size;	/* decompressed payload bytes */
	uint64_t t0_ns, t1_ns;
	union {
		struct { const struct stk_kv *kv; size_t n; } meta;
		struct { const struct stk_stack *stacks; size_t n; } stck;
		struct { const struct stk_count *rows; size_t n; } cnts;
		struct { const struct stk_offcpu *rows; size_t n; } offc;
		struct { const struct stk_trace_count *rows; size_t n; } trce;
		struct { const struct stk_proc_maps *procs; size_t n; } maps;
		struct { const struct stk_ksym *syms; size_t n; } ksym;
		struct { const struct stk_kobj *objs; size_t n; } kbid;
		struct {
			const uint8_t *build_id; uint32_t build_id_size;
			const void *blob; size_t blob_size;	/* kind byte and the rest */
			/* Decoded for kinds 2, 3 and 4 (else 0 / NULL): */
			uint32_t kind;		/* blob[0], 0 when the blob is empty */
			uint32_t sources;	/* kind 2: STK_ESYM_SRC_* */
			uint32_t tgid;		/* kinds 3 and 4: the process */
			const struct stk_esym_sym *syms;	/* kinds 2 and 3 */
			size_t nr_syms;
			uint32_t py_version;	/* kind 4: major << 8 | minor */
			const struct stk_esym_pycode *codes;	/* kind 4 */
			size_t nr_codes;
		} esym;
		struct { const struct stk_stat *stats; size_t n; } stat;
		struct { const struct stk_pid_ns *pids; size_t n; } pidn;
		struct { size_t n; } indx;	/* entries (already checked against the chunks read) */
		struct { const void *payload; size_t size; } unknown;
	} u;
};

/* Facts of one segment, from its file header (and trailer if any). */
struct stk_segment_info {
	uint32_t read_version, write_version;
	char writer_version[16];	/* "0.1.0": release of the writing tool */
	uint8_t uuid[16];
	uint64_t wall_start_ns, mono_start_ns;
	uint64_t offset;		/* byte offset of the file header */
	int closed;			/* 1 if its trailer was read and verified */
};

/*
 * stk_reader__open() - open @path ("-" is stdin) and read its first file
 * header.  Nothing is mapped or read whole: a regular file is read with
 * pread() a window at a time below the size it had when opened (if it
 * shrinks meanwhile, next() fails once with -EIO and then ends); a pipe or
 * device is read in order, keeping only the bytes of the frame being read
 * (at most a header and one payload of STK_MAX_CHUNK_COMP bytes), so
 * endless input costs bounded memory and input that does not start with
 * the .stk magic is refused after its first bytes.
 * Returns NULL with errno set: the open() errno, ENODATA (empty or shorter
 * than a file header), EBADMSG (not an .stk file: no file header magic or
 * signature at byte 0), EPROTONOSUPPORT (needs a newer reader).  A first
 * header that is damaged but still recognisable does not fail here: the
 * first stk_reader__next() reports it and the chunks after it are read.  A message for that errno is not available through a
 * reader; stk_open_errmsg() describes it.
 */
struct stk_reader *stk_reader__open(const char *path);

/*
 * stk_reader__open_mem() - as stk_reader__open() over a caller buffer.
 * @buf must stay valid and unchanged until stk_reader__close().
 */
struct stk_reader *stk_reader__open_mem(const void *buf, size_t size);

/*
 * stk_open_errmsg() - the message for the last failed stk_reader__open*()
 * in this thread, e.g. "trace.stk: byte 0: not an .stk file (bad signature)"
 * or "trace.stk: byte 8: needs stkreport >= 0.3.0 (file read version 2, this
 * reader 1)".  Borrowed; valid until the next open in this thread.
 */
const char *stk_open_errmsg(void);

/*
 * stk_reader__next() - read, verify and decode the next chunk into @chunk.
 *
 * Returns 1 with @chunk filled, 0 at the end of the input, or a negative
 * errno (-EBADMSG, -ENODATA, -ENOTSUP, -EPROTONOSUPPORT, -EFBIG, -ENOMEM,
 * -EIO or a read() errno) with stk_reader__errmsg() describing it with its
 * byte offset.  After -EIO, a read() errno or -ENOMEM the next call
 * returns 0.
 *
 * After -EBADMSG or -EFBIG (damage in the middle) the reader resynchronises
 * at the next valid chunk header or segment header, so calling again
 * continues with the chunks after the damage.  After -ENODATA (truncated
 * input), -ENOTSUP or -EPROTONOSUPPORT the next call returns 0.
 * Index chunks are verified against the chunks read and returned too.
 */
int stk_reader__next(struct stk_reader *r, struct stk_chunk *chunk);

/* Message of the last error, "byte 1234: chunk 7 (CNTS): payload CRC
 * mismatch".  Valid until the next call on @r. */
const char *stk_reader__errmsg(const struct stk_reader *r);

/* Bytes of input: a file's size when opened, a buffer's, or for a pipe the
 * bytes read so far (what the limits relative to the input count). */
uint64_t stk_reader__size(const struct stk_reader *r);

/* Segments seen so far (>= 1 after a successful open).  @i < count. */
uint32_t stk_reader__segment_count(const struct stk_reader *r);
const struct stk_segment_info *stk_reader__segment(const struct stk_reader *r, uint32_t i);

/* Summary after reading to the end (0 returned by next()). */
struct stk_read_summary {
	uint64_t file_size;
	uint64_t chunks;	/* chunks read and verified (including INDX) */
	uint64_t errors;	/* errors returned by next() */
	uint64_t bytes_skipped; /* bytes not covered by verified headers/chunks */
	int closed;		/* 1 if every segment ended with a verified trailer */
	int truncated;		/* 1 if the input ended inside a header or chunk */
};
void stk_reader__summary(const struct stk_reader *r, struct stk_read_summary *s);

/* Close and free (accepts NULL). */
void stk_reader__close(struct stk_reader *r);

/* ---- Helpers --------------------------------------------------------- */

/* CRC32C (Castagnoli), as used by the format.  @crc is the previous value
 * (0 to start). */
uint32_t stk_crc32c(uint32_t crc, const void *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* STK_H */
