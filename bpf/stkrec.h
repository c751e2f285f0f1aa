/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stkrec.h - the structures and constants shared by the BPF programs in bpf/
 * and stkrec's user space in record/.
 *
 * Both sides compile this one header, so the layouts cannot drift.  Only
 * fixed-width types, explicit padding, no bools, enums or pointers: the BPF
 * target and the host must agree on every byte.  These are the kernel-side
 * layouts; record/ converts them to the file's records (format/stk.h), so
 * this header may change without a format change.
 */
#ifndef STKREC_H
#define STKREC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Deepest stack we take: the kernel's default kernel.perf_event_max_stack. */
#define STKREC_MAX_DEPTH 127

/*
 * Python frames (bpf/python.bpf.h) follow a user stack's native frames as
 * words whose top byte is STKREC_PY_TAG_*: addresses no code can be at
 * (non-canonical under 4- and 5-level paging).  SPEC.md, STCK, is the
 * contract: a frame is a code word (its code object's address; the entry
 * tag on the outermost frame of one _PyEval_EvalFrameDefault activation)
 * and an info word (24-bit fingerprint, instruction offset in code
 * units); a stop word ends a walk cut short.
 */
#define STKREC_PY_MAX_FRAMES	63
#define STKREC_PY_TAG_FRAME	0x50ULL
#define STKREC_PY_TAG_ENTRY	0x51ULL
#define STKREC_PY_TAG_INFO	0x52ULL
#define STKREC_PY_TAG_STOP	0x53ULL
#define STKREC_PY_ADDR_MASK	((1ULL << 56) - 1)
#define STKREC_PY_FP_MASK	0xffffffu
#define STKREC_PY_STOP_DEPTH	1 /* more frames than STKREC_PY_MAX_FRAMES */
#define STKREC_PY_STOP_FAULT	2 /* a frame or code object could not be read */
#define STKREC_PY_STOP_BADCODE	3 /* a frame's code failed the type check */
/* Room for a user stack's words: native frames, then 2 per Python frame
 * and a stop word (a power of two: BPF indexes with a mask); a stack holds
 * at most STKREC_MAX_NR (record/ keeps the count in 8 bits). */
#define STKREC_MAX_WORDS	256
#define STKREC_MAX_NR		255

/* Is @w a Python word (then not an address)? */
static __always_inline int stkrec_py_word(__u64 w)
{
	return (w >> 56) >= STKREC_PY_TAG_FRAME && (w >> 56) <= STKREC_PY_TAG_STOP;
}

/* The number of native words of user stack @ips (@nr words): those
 * before its first Python word. */
static __always_inline __u32 stkrec_native_nr(const __u64 *ips, __u32 nr)
{
	__u32 i;

	for (i = 0; i < nr; i++)
		if (stkrec_py_word(ips[i]))
			break;
	return i;
}

/* The fingerprint of a code object, the same in BPF and in the recorder:
 * its first line and the addresses of its name and file name strings (a
 * code object freed and another allocated at its address almost never
 * has all three the same). */
static __always_inline __u32 stkrec_py_fingerprint(__u32 firstlineno, __u64 name, __u64 filename)
{
	__u32 h = firstlineno * 0x9E3779B1u;

	h ^= (__u32)(name >> 4) * 0x85EBCA77u;
	h = (h << 13 | h >> 19) ^ (__u32)(filename >> 4) * 0xC2B2AE3Du;
	h ^= h >> 15;
	return h & STKREC_PY_FP_MASK;
}

/*
 * A code object met for the first time by the walk ("py_code_ring"): what
 * names it, read in the kernel at once, so that one freed right after
 * (a module's body once imported) or in a process that exits before the
 * recorder reads it is named all the same.  Strings are CPython's raw
 * compact data (@kind 1, 2 or 4 bytes a character, as their str object
 * has them), cut at STKREC_PY_NAME_MAX bytes; the line table at
 * STKREC_PY_LT_MAX (user space reads the rest while it can).
 */
#define STKREC_PY_NAME_MAX	256
#define STKREC_PY_LT_MAX	1024
struct stkrec_py_code {
	__u64 addr;		/* the code object */
	__u64 runtime;		/* its process's &_PyRuntime: which interpreter
				 * (a process gone before user space knew it) */
	__u32 tgid;
	__u32 fingerprint;
	__u32 firstlineno;
	__u32 lt_size;		/* the line table's whole size */
	__u32 name_len;		/* characters of the (qual)name */
	__u32 file_len;		/* characters of the file name */
	/* name[], file[]: @kind bytes a character; 0: not read (not a
	 * compact str) */
	__u8 name_kind, file_kind;
	__u8 pad[6];
	__u8 name[STKREC_PY_NAME_MAX];
	__u8 file[STKREC_PY_NAME_MAX];
	__u8 lt[STKREC_PY_LT_MAX];
};

/* How the interpreter keeps its frames (struct stkrec_py_proc.model). */
#define STKREC_PY_FRAMEOBJ	1 /* <= 3.10: PyFrameObject, f_back; each its own activation */
#define STKREC_PY_IFRAME311	2 /* 3.11: _PyInterpreterFrame via cframe, is_entry */
#define STKREC_PY_IFRAME312	3 /* 3.12+: _PyInterpreterFrame, C-stack shim frames */
#define STKREC_PY_OWNED_BY_CSTACK 3 /* 3.12+ _PyInterpreterFrame.owner of a shim */
#define STKREC_PY_NO_OFF	0xffff

/*
 * What the walk needs of one process's interpreter ("py_procs": tgid ->
 * this): addresses in the process, the frame model, and byte offsets of
 * the fields it reads (record/python/pytables.c, checked on the live
 * process before names are written).
 */
struct stkrec_py_proc {
	__u64 runtime;		/* &_PyRuntime */
	__u64 code_type;	/* &PyCode_Type */
	__u32 version;		/* major << 8 | minor */
	__u8 model;		/* STKREC_PY_* above */
	__u8 lasti_bytes;	/* <= 3.9: f_lasti counts bytes, not code units */
	__u16 rt_interp_head;	/* _PyRuntime.interpreters.head */
	__u16 is_tstate_head;	/* PyInterpreterState's first thread state */
	__u16 ts_next;		/* PyThreadState.next */
	__u16 ts_thread_id;	/* PyThreadState.thread_id (pthread_self(): the fs base) */
	__u16 ts_frame;		/* .frame (<= 3.10), .cframe (3.11, 3.12), .current_frame (3.13+) */
	__u16 cframe_frame;	/* _PyCFrame.current_frame, or STKREC_PY_NO_OFF */
	__u16 fr_code;		/* f_code / f_executable */
	__u16 fr_back;		/* f_back / previous */
	__u16 fr_instr;		/* f_lasti (int) / prev_instr, instr_ptr (pointer) */
	__u16 fr_entry;		/* 3.11 is_entry, 3.12+ owner (bytes); else STKREC_PY_NO_OFF */
	__u16 fr_size;		/* bytes of a frame read at once */
	__u16 co_firstlineno;	/* int */
	__u16 co_name;		/* PyObject * */
	__u16 co_filename;	/* PyObject * */
	__u16 co_code;		/* 3.11+: co_code_adaptive (the bytecode, inline) */
	__u16 co_qualname;	/* co_qualname (3.11+), else co_name */
	__u16 co_linetable;	/* co_lnotab (<= 3.9), co_linetable */
	__u16 str_ascii;	/* sizeof(PyASCIIObject): compact ASCII data */
	__u16 str_compact;	/* sizeof(PyCompactUnicodeObject): other compact data */
	__u16 pad[2];
};

#define STKREC_COMM_LEN 16

/*
 * In the kernel, a stack's id is a 64-bit hash of its frames, computed in
 * BPF; counts keys carry it as a non-negative __s64 (negative values are
 * -errno), so bit 63 is always clear; bit 62 says "kernel stack", so that a
 * user and a kernel stack with the same frames can never share an id.
 * record/ renumbers stacks 1, 2, 3... in the file: small ids compress.
 */
#define STKREC_STACK_KERNEL_BIT (1ULL << 62)
#define STKREC_STACK_HASH_MASK	((1ULL << 62) - 1)

/* A stack: frames leaf first, @nr of them valid.  In a "stack_ring"
 * record @kind says whose it is, STKREC_RING_USER or STKREC_RING_KERNEL. */
struct stkrec_stack {
	__u32 nr;
	__u32 kind;
	__u32 tgid;	/* a user stack's process (its Python words are that
			 * process's code objects); 0 for kernel stacks */
	__u32 pad;
	__u64 id;	/* a "stack_ring" record: the id BPF named it by,
			 * stkrec_stack_id() of its @nr words (user space
			 * need not hash the frames again) */
	__u64 ips[STKREC_MAX_WORDS]; /* kernel stacks: STKREC_MAX_DEPTH at most */
};

/*
 * A record of the "stack_ring" ring buffer: a stack the kernel's "stacks"
 * set did not hold (it remembers the ids of stacks already sent, not their
 * frames), as struct stkrec_stack cut after its @nr frames, with @kind
 * saying whose it is and @id its id, stkrec_stack_id() of the frames.
 * The only way frames reach user space.  The ring is STKREC_STACK_RING_SIZE
 * bytes at least (record/modes/modeobj.c sizes it by --stack-storage-size);
 * BPF wakes user space once it is half full.
 */
#define STKREC_RING_USER	1
#define STKREC_RING_KERNEL	2
#define STKREC_STACK_RING_SIZE	(1u << 20)

/* A 64-bit multiply-rotate hash over the frames (in the spirit of xxhash's
 * round function).  Collisions are what BPF_F_REUSE_STACKID gets wrong; at
 * 62 bits, a million distinct stacks collide with probability ~1e-7.
 * Shared by BPF, which names stacks by it, and user space, which names the
 * stack_ring's records by it. */
#define STKREC_P1 0x9E3779B185EBCA87ULL
#define STKREC_P2 0xC2B2AE3D27D4EB4FULL
#define STKREC_P3 0x165667B19E3779F9ULL

static __always_inline __u64 stkrec_rotl64(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* The hash in three parts, for BPF's bpf_loop() form (bpf/common.bpf.h):
 * the seed for @nr frames, one frame @ip in, the end. */
static __always_inline __u64 stkrec_stack_hash_begin(__u32 nr, __u64 seed)
{
	return seed ^ ((__u64)nr * STKREC_P3);
}

static __always_inline __u64 stkrec_stack_hash_add(__u64 h, __u64 ip)
{
	h ^= stkrec_rotl64(ip * STKREC_P2, 31) * STKREC_P1;
	return stkrec_rotl64(h, 27) * STKREC_P1 + STKREC_P3;
}

static __always_inline __u64 stkrec_stack_hash_end(__u64 h)
{
	h ^= h >> 33;
	h *= STKREC_P2;
	h ^= h >> 29;
	h *= STKREC_P3;
	h ^= h >> 32;
	return h;
}

static __always_inline __u64 stkrec_stack_hash(const __u64 *ips, __u32 nr, __u64 seed)
{
	__u64 h = stkrec_stack_hash_begin(nr, seed);
	__u32 i;

	for (i = 0; i < STKREC_MAX_NR; i++) {
		if (i >= nr)
			break;
		h = stkrec_stack_hash_add(h, ips[i]);
	}
	return stkrec_stack_hash_end(h);
}

/* The id of stack hash @h (stkrec_stack_hash() with the seed of its
 * kind), as stkrec_stack_id() gives it. */
static __always_inline __u64 stkrec_stack_hash_id(__u64 h, int kernel)
{
	h &= STKREC_STACK_HASH_MASK;
	return kernel ? h | STKREC_STACK_KERNEL_BIT : h;
}

static __always_inline __u64 stkrec_stack_id(const __u64 *ips, __u32 nr, int kernel)
{
	return stkrec_stack_hash_id(stkrec_stack_hash(ips, nr, kernel ? STKREC_P2 : STKREC_P1), kernel);
}

/* Key of the profile mode's "counts" maps; the value is a struct
 * stkrec_count_lanes. */
struct stkrec_count_key {
	__u32 tgid;
	__u32 tid;
	char comm[STKREC_COMM_LEN];
	__s64 user_stack;	/* stack id, or -errno */
	__s64 kernel_stack;	/* stack id, or -errno */
	__u64 kernel_ip;	/* interrupted IP if it was a kernel address, else 0 */
	__u64 kernel_ret_ip;	/* the word at regs->bp + 8 when kernel_ip is set */
	__u64 image_ns;		/* the process's last exec (bpf_ktime_get_ns()), 0: none seen */
	/* The flush interval the sample was taken in, by the kernel's clock:
	 * (bpf_ktime_get_ns() - slot_base) / slot_ns (.bss, written by user
	 * space as sampling starts; modulo 2^32), 0 before that.  A drain
	 * several intervals apart still writes each interval's rows apart.
	 * In a counts map's key: the interval / STKREC_COUNT_LANES, the
	 * value's lane the rest (a rows_ring record has the interval). */
	__u32 slot;
	__u32 slot_pad;
};

/*
 * Value of the profile mode's "counts" maps: the samples of the key's
 * task and stacks in each of STKREC_COUNT_LANES consecutive flush
 * intervals, interval key.slot * STKREC_COUNT_LANES + i in n[i].  A quiet
 * recording leaves the counts in the kernel for up to 16 intervals: a
 * stack that repeats is then two or three entries to drain, not one an
 * interval.  (A lane counts one interval's samples of one thread, at
 * most -F x --flush-interval: --flush-interval is at most 3600 s.)
 */
#define STKREC_COUNT_LANES 8
struct stkrec_count_lanes {
	__u32 n[STKREC_COUNT_LANES];
};

/*
 * A record of the profile mode's "rows_ring": the row of one sample that
 * sent a stack of its own to "stack_ring" (a stack seen for the first
 * time, or again after the kernel's set evicted it), or whose key was not
 * in the counts map nor sampled lately on its CPU, count 1, instead of a
 * new entry in the counts map: such a row is almost never counted twice
 * (stacks that never repeat), and the ring costs less than a hash insert
 * and its drain.  @set is the counts map (0 or 1) the sample would
 * have gone to, which says the flush interval it belongs to.
 */
struct stkrec_count_row {
	struct stkrec_count_key key;
	__u32 set;
	__u32 pad;
};

/* Key of the trace mode's "counts" maps; the value is a __u64 count of
 * events.  @event is the event's index in the recording's list (its BPF
 * attach cookie). */
struct stkrec_trace_key {
	__u32 event;
	__u32 tgid;
	__u32 tid;
	__u32 pad;
	char comm[STKREC_COMM_LEN];
	__s64 user_stack;	/* stack id, or -errno */
	__s64 kernel_stack;	/* stack id, or -errno */
	__u64 image_ns;		/* as in struct stkrec_count_key */
};

/* Value of the trace mode's "rate" array (one per event): the events of
 * the current second counted, for --rate-cap. */
struct stkrec_trace_rate {
	__u64 second;	/* bpf_ktime_get_ns() / 1e9 of the window */
	__u64 n;	/* events counted in it */
};

/*
 * Key of the off-CPU modes' "counts" maps (offcpu, offwake): the blocked
 * (target) task with the stacks it blocked in, and for offwake the task
 * that woke it with the stacks it was in when it did.  Without a waker
 * (offcpu, preemption, a wakeup not seen) the waker fields are 0 and its
 * stacks -ENOENT.
 */
struct stkrec_offcpu_key {
	__u32 tgid;
	__u32 tid;
	__u32 waker_tgid;
	__u32 waker_tid;
	char comm[STKREC_COMM_LEN];
	char waker_comm[STKREC_COMM_LEN];
	__s64 user_stack;	/* stack id, or -errno */
	__s64 kernel_stack;
	__s64 waker_user_stack;
	__s64 waker_kernel_stack;
};

/* Value of the off-CPU "start" map (tid -> a task off CPU): when it left
 * and the stacks it left in.  User space reads the stack ids only
 * (the stacks a live entry still holds: stackstore__set_live()). */
struct stkrec_offcpu_start {
	__u64 ts;
	__s64 user_stack;
	__s64 kernel_stack;
	__u32 tgid;
	__u32 user_stop; /* STKREC_UW_STOP_* of user_stack's marker, or 0 */
	char comm[STKREC_COMM_LEN];
};

/* Value of the offwake "wakers" map (tid of the wakee -> the task that
 * woke it while it was still off CPU, and its stacks then). */
struct stkrec_offcpu_waker {
	__s64 user_stack;
	__s64 kernel_stack;
	__u32 tgid;
	__u32 tid;
	char comm[STKREC_COMM_LEN];
	__u32 user_stop; /* as in struct stkrec_offcpu_start */
	__u32 pad;
};

/* Value of the off-CPU "counts" maps. */
struct stkrec_offcpu_value {
	__u64 count;		/* blocking episodes */
	__u64 blocked_ns;	/* their total time off CPU */
};

/* Reasons an unwind stopped early: STKREC_UW_STOP_* below. */
#define STKREC_UW_NR_STOPS	8

/*
 * Indices of the per-CPU "stats" array.  Names for the STAT chunk are in
 * record/engine/recorder_stats.c (bpf_stat_names[]); keep both in the same order.
 */
#define STKREC_STAT_SAMPLES		 0 /* samples (off-CPU: episodes) counted */
#define STKREC_STAT_COUNTS_FULL		 1 /* samples dropped: counts map full */
#define STKREC_STAT_USTACK_EFAULT	 2 /* no user stack in that context */
#define STKREC_STAT_KSTACK_EFAULT	 3 /* no kernel stack (sample in user mode) */
#define STKREC_STAT_USTACK_ENOMEM	 4 /* user stack lost: stack ring full */
#define STKREC_STAT_KSTACK_ENOMEM	 5 /* kernel stack lost: stack ring full */
#define STKREC_STAT_USTACK_OTHER	 6 /* any other bpf_get_stack() error */
#define STKREC_STAT_KSTACK_OTHER	 7
#define STKREC_STAT_EVENTS_LOST		 8 /* ring buffer full: process event lost */
#define STKREC_STAT_FOLLOW_FULL		 9 /* a child of CMD not followed: map full */
/* Off-CPU modes (0 in profile captures). */
#define STKREC_STAT_START_FULL		10 /* blocking not tracked: "start" map full */
#define STKREC_STAT_WAKER_FULL		11 /* waker not kept: "wakers" map full */
#define STKREC_STAT_OFFCPU_FILTERED	12 /* episodes outside -m/-M */
#define STKREC_STAT_BLOCKED_NS		13 /* total off-CPU time of the episodes counted */
/* .eh_frame unwinding (bpf/unwind.bpf.h); 0 with --unwind=fp. */
#define STKREC_STAT_UW_STACKS		14 /* user stacks walked with unwind tables */
#define STKREC_STAT_UW_FB_NOPROC	15 /* frame-pointer stack: process not loaded yet */
#define STKREC_STAT_UW_FB_NOREGS	16 /* frame-pointer stack: no user registers */
#define STKREC_STAT_UW_FB_SHORTER	17 /* frame-pointer stack: the tables stopped
					    * earlier than the frame pointers (auto) */
#define STKREC_STAT_UW_FP_STEPS		18 /* frames found by frame pointer (no table) */
#define STKREC_STAT_UW_FB_LEAF		19 /* frame-pointer stack: the leaf is in no
					    * mapping the unwinder knows (yet) */
#define STKREC_STAT_UW_STOP_BASE	20 /* + STKREC_UW_STOP_*: samples (episodes)
					    * counted whose user stack ends with
					    * that marker */
/* The stacks set (common.bpf.h): stacks sent to user space through the
 * stack ring, ids the set could not take (sent again when seen again);
 * samples (episodes) counted with a stack the full ring could not take. */
#define STKREC_STAT_STACKS_STORED	(STKREC_STAT_UW_STOP_BASE + STKREC_UW_NR_STOPS)
#define STKREC_STAT_STACK_SET_ERR	(STKREC_STAT_STACKS_STORED + 1)
#define STKREC_STAT_STACK_LOST		(STKREC_STAT_STACKS_STORED + 2)
#define STKREC_STAT_UW_PENDING		(STKREC_STAT_STACKS_STORED + 3)
					   /* walks that met a mapping whose table
					    * was not built yet (requested) */
/* profile: every cpu-clock overflow the program saw, of any task, before
 * the -p/-t filter: what the kernel really delivered (it throttles). */
#define STKREC_STAT_SAMPLE_EVENTS	(STKREC_STAT_UW_PENDING + 1)
/* Deferred unwinds: user stacks copied for user space to unwind once the
 * tables are ready, and those the full defer ring could not take (taken
 * by frame pointer instead). */
#define STKREC_STAT_UW_DEFERRED		(STKREC_STAT_SAMPLE_EVENTS + 1)
#define STKREC_STAT_UW_DEFER_LOST	(STKREC_STAT_SAMPLE_EVENTS + 2)
/* Samples in execve after the old image was unmapped, before the new one
 * runs: the user registers are the old image's, in no mapping of the
 * task's memory, and no user stack is taken (perf takes none either). */
#define STKREC_STAT_USTACK_EXEC		(STKREC_STAT_SAMPLE_EVENTS + 3)
/* Python frames (bpf/python.bpf.h): samples of a process with a
 * supported interpreter whose thread had a Python stack, and walks cut
 * short (STKREC_PY_STOP_*), and threads whose state was not found. */
#define STKREC_STAT_PY_STACKS		(STKREC_STAT_SAMPLE_EVENTS + 4)
#define STKREC_STAT_PY_STOP_BASE	(STKREC_STAT_PY_STACKS) /* + 1..3 */
#define STKREC_STAT_PY_NO_THREAD	(STKREC_STAT_PY_STACKS + 4)
/* trace mode (bpf/trace.bpf.c): events of wanted tasks over the
 * per-event rate cap (--rate-cap), seen and not counted. */
#define STKREC_STAT_TRACE_CAPPED	(STKREC_STAT_PY_STACKS + 5)
/* profile: samples whose row went through "rows_ring" (a stack of theirs
 * was new, or their key was not counted lately), and those the full ring
 * sent to the counts map instead. */
#define STKREC_STAT_ROWS_RING		(STKREC_STAT_PY_STACKS + 6)
#define STKREC_STAT_ROWS_RING_FULL	(STKREC_STAT_PY_STACKS + 7)
#define STKREC_NR_STATS			(STKREC_STAT_PY_STACKS + 8)
/* The "stats" map holds two sets, one per counts map: a sample's
 * statistics go to the set of the counts map its row goes to (entries
 * [b * STKREC_NR_STATS, (b + 1) * STKREC_NR_STATS) for counts b), so that
 * user space, reading a set once it has drained its map, writes a STAT
 * that says exactly what the rows before it hold. */
#define STKREC_STAT_SETS		2
/* It is a plain array, BPF_F_MMAPABLE, that user space reads in place (a
 * syscall and a copy of every CPU's values were a tenth of a quiet
 * flush): CPU c's block of both sets starts at entry c * STRIDE, each
 * block whole 64-byte lines, so that no two CPUs write one line.  Sized
 * by user space: STRIDE times the possible CPUs. */
#define STKREC_STATS_STRIDE	((STKREC_NR_STATS * STKREC_STAT_SETS + 7) & ~7)

/*
 * Value of the one-element "ksym_io" array, the buffer of the
 * symbolize_kaddrs program that user space runs (BPF_PROG_RUN) to name
 * kernel addresses without reading all of /proc/kallsyms: in, @nr
 * addresses; out, for each, bpf_snprintf("%pS"), i.e.
 * "name+0xoffset/0xsize [module]" or the bare "0x..." address when no
 * symbol covers it; and the bounds of the kernel's text, _text.._etext
 * and _sinittext.._einittext (0 when kallsyms hides them: no CAP_SYSLOG).
 */
#define STKREC_KSYM_BATCH 128
#define STKREC_KSYM_TEXT  128

struct stkrec_ksym_io {
	__u32 nr;
	__u32 want_text;	/* in: 1 to fill text..einittext (their lookups
				 * are a scan of kallsyms each: asked once) */
	__u64 text;
	__u64 etext;
	__u64 inittext;
	__u64 einittext;
	__u64 addrs[STKREC_KSYM_BATCH];
	char out[STKREC_KSYM_BATCH][STKREC_KSYM_TEXT];
};

/*
 * ---- .eh_frame unwinding (record/unwind/unwind_table.c builds the rows,
 * record/unwind/unwinder.c loads them, bpf/unwind.bpf.h walks them) ----
 *
 * One row covers the addresses from its @pc up to the next row's: how to
 * find the caller's registers there.  @pc is the ELF virtual address
 * (file-relative, before the load bias) truncated to 32 bits: a table
 * whose addresses do not fit is refused.  x86-64 only: the return address
 * is at CFA - 8 (rows whose CFI says otherwise are "unsupported"), but
 * for STKREC_UW_RA_RDI.
 */
#define STKREC_UW_NONE		0 /* no CFI covers this address */
#define STKREC_UW_CFA_RSP	1 /* CFA = rsp + cfa_off */
#define STKREC_UW_CFA_RBP	2 /* CFA = rbp + cfa_off */
#define STKREC_UW_PLT		3 /* GCC's PLT expression: CFA = rsp + cfa_off,
				   * + 8 when (rip & 15) >= rbp_off */
#define STKREC_UW_SIGNAL	4 /* __restore_rt: the caller's registers are in
				   * the ucontext at rsp (rbp +120, rsp +160,
				   * rip +168) */
#define STKREC_UW_END		5 /* return address undefined: outermost frame */
#define STKREC_UW_UNSUPPORTED	6 /* a rule we do not evaluate */
#define STKREC_UW_CFA_RBP_DEREF	7 /* CFA = *(rbp - cfa_off) (stack realignment) */
#define STKREC_UW_STACK_SWITCH	8 /* code that switched stacks (Go's systemstack,
				   * mcall, asmcgocall, morestack), whose CFI is
				   * the other stack's: as CFA_RSP in the leaf,
				   * above it the caller by frame pointer */
#define STKREC_UW_RA_RDI	9 /* CFA = rsp + cfa_off, the return address in
				   * rdi (glibc's __vfork pops it there across
				   * the syscall): known in the leaf only, whose
				   * registers were sampled; "unsupported" above */
#define STKREC_UW_CFA_RBX	10 /* CFA = rbx + cfa_off: ld.so's lazy-binding
				   * trampolines (_dl_runtime_resolve_*), which
				   * realign rsp and keep the frame in rbx; rbx
				   * is followed up the walk by the rows' @rbx */
#define STKREC_UW_CLONE		11 /* glibc's clone/clone3 after the syscall,
				   * which has no CFI: in the sampled leaf, rax
				   * 0 (the child) is the outermost frame, else
				   * (the parent) CFA = rsp + cfa_off; no caller
				   * returns here ("unsupported" above the leaf) */

/* rbp_off: the caller's rbp is at CFA + 8 * rbp_off; 0 = rbp unchanged;
 * STKREC_UW_RBP_LOST = not recoverable (the walk continues without it). */
#define STKREC_UW_RBP_LOST	(-128)
/* rbx: the caller's rbx is at CFA - 8 * rbx (1..14); 0 = rbx unchanged;
 * STKREC_UW_RBX_LOST = not recoverable (a later STKREC_UW_CFA_RBX row
 * stops the walk as unsupported).  Callee-saved pushes put it within 14
 * slots of the CFA; anything else is "lost". */
#define STKREC_UW_RBX_LOST	15

struct stkrec_unwind_row {
	__u32 pc;
	__u16 cfa_off;	/* CFA offsets are positive (the deref kind subtracts) */
	__u8 kind : 4;	/* STKREC_UW_* above */
	__u8 rbx : 4;
	__s8 rbp_off;
};

/*
 * The rows of every table live in one array of rows, "unwind_rows"; a
 * table is a range of it.  That array is made of chunks of
 * STKREC_UW_CHUNK_ROWS rows (1 MiB), each an array map of its own in
 * the slots of "unwind_rows" (an array of maps), created by user space
 * when a table is first loaded into its range: a kernel array map is
 * allocated and zeroed whole when created, 64 MiB of rows were most of a
 * recorder's start-up, and most recordings fill a few chunks.  Row i is
 * row i % STKREC_UW_CHUNK_ROWS of chunk i / STKREC_UW_CHUNK_ROWS.
 * "unwind_pages" narrows a lookup: key {table, pc >>
 * STKREC_UW_PAGE_SHIFT} -> the rows that can cover that page (the row
 * covering its first byte up to the last row starting in it), at most
 * 1 << STKREC_UW_SEARCH_STEPS of them so a binary search always ends.
 */
#define STKREC_UW_CHUNK_ROWS	(1u << 17)
#define STKREC_UW_PAGE_SHIFT	16
#define STKREC_UW_SEARCH_STEPS	16

struct stkrec_unwind_page_key {
	__u32 table;
	__u32 page;
};

struct stkrec_unwind_page {
	__u32 first;	/* index in unwind_rows */
	__u32 nr;
};

/*
 * "unwind_procs": tgid -> the process's executable mappings, sorted by
 * start.  @table is 0 for a mapping without a table (no CFI, not built
 * yet, refused): the unwinder takes one frame-pointer step there.
 */
#define STKREC_UW_MAX_MAPPINGS	512
#define STKREC_UW_NO_TABLE	0
/* The file has CFI, but its table is built only once a stack needs it
 * (system-wide recordings): a frame-pointer step, and a request. */
#define STKREC_UW_PENDING	0xffffffffu

struct stkrec_unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;	/* address - bias = the ELF's virtual address */
	__u32 table;
	__u32 pad;
};

struct stkrec_unwind_proc {
	__u32 nr;
	__u32 pad;
	struct stkrec_unwind_mapping m[STKREC_UW_MAX_MAPPINGS];
};

/*
 * A user stack the unwinder stopped before its outermost frame ends with
 * one marker "frame": STKREC_UW_MARK | reason.  The value is in the last
 * page of the address space, which no code occupies (SPEC.md, STCK).
 */
#define STKREC_UW_MARK		0xfffffffffffff000ULL
#define STKREC_UW_STOP_DEPTH	1 /* STKREC_MAX_DEPTH frames taken */
#define STKREC_UW_STOP_FAULT	2 /* the stack could not be read */
#define STKREC_UW_STOP_NO_MAP	3 /* an address in no known mapping */
#define STKREC_UW_STOP_NO_ROW	4 /* no CFI row covers the address */
#define STKREC_UW_STOP_UNSUPP	5 /* a CFI rule the unwinder does not evaluate */
#define STKREC_UW_STOP_FP	6 /* a frame-pointer step (no table) went nowhere */
#define STKREC_UW_STOP_LOOP	7 /* the stack pointer did not move up */

/*
 * A deferred user stack: the sample met a mapping whose table was not
 * built yet (or a process, or a leaf, the unwinder did not know yet), so
 * BPF copied its registers and the top of its stack into the
 * "defer_ring" (struct stkrec_defer) and stored the placeholder stack
 * {STKREC_UW_MARK | STKREC_UW_DEFERRED, seq}; user space unwinds the copy
 * when the placeholder is first written and writes those frames in its
 * place (perf --call-graph dwarf's method, for these samples only).
 * Never in a file.
 */
#define STKREC_UW_DEFERRED	0x800
#define STKREC_DEFER_CHUNK	1024	/* the stack is copied in chunks ... */
#define STKREC_DEFER_CHUNKS	16	/* ... up to the first unreadable one: 16 KiB,
					 * twice perf's default (make's and ld's stacks
					 * run past 8 KiB from leaf to main) */
#define STKREC_DEFER_STACK	(STKREC_DEFER_CHUNK * STKREC_DEFER_CHUNKS)

struct stkrec_defer {
	__u64 seq;		/* the placeholder's second frame */
	__u64 pc, sp, bp;	/* the user registers */
	__u64 di;		/* rdi, for a leaf of kind STKREC_UW_RA_RDI */
	__u64 bx;		/* rbx, for rows of kind STKREC_UW_CFA_RBX */
	__u64 ax;		/* rax, for a leaf of kind STKREC_UW_CLONE */
	__u32 tgid;
	__u32 size;		/* bytes of stack copied from sp */
	__u8 stack[STKREC_DEFER_STACK];
};

/* Per-CPU scratch of the unwinder (too big for the BPF stack). */
struct stkrec_unwind_state {
	__u64 pc, sp, bp;
	__u32 tgid;
	__u32 nr;
	__u32 stop;
	__u32 signal;	/* the previous frame was a signal frame: pc is exact */
	__u32 fp_steps;
	__u32 stale;	/* an address in no known mapping was met */
	__u32 leaf_unknown; /* ... and it was the leaf's */
	__u32 mark;	/* the stop reason of the marker the stack taken ends
			 * with; 0: no marker (whole, or frame pointers) */
	__u64 want;	/* an address in a mapping whose table is pending, or 0 */
	__u64 pc0, sp0, bp0; /* the registers the walk started from */
	__u64 di;	/* the leaf's rdi (STKREC_UW_RA_RDI) */
	__u64 bx, bx0;	/* rbx in this frame (STKREC_UW_CFA_RBX), the leaf's */
	__u64 ax;	/* the leaf's rax (STKREC_UW_CLONE) */
	__u32 bx_lost;	/* ... not known: a row said so, or a frame-pointer step */
	__u32 pad;
};

/* Ring buffer events, BPF -> user space.  Each wakes user space, which
 * acts on it while the process lives, but EXIT: that waits for the loop's
 * next wake or flush, or for the ring to be half full (events_submit(),
 * bpf/common.bpf.h). */
#define STKREC_EV_NEW_PROC 1 /* first sample of a process (or first since its exec) */
#define STKREC_EV_EXIT	   2 /* a process announced before has exited */
#define STKREC_EV_MAPS_STALE 3 /* [unwind] a user stack left the process's known
				* mappings: reload them (at most every second);
				* or (@addr set) it met a mapping whose table is
				* pending: build that one (at most every 10 ms) */
#define STKREC_EV_MAPS_CHANGED 4 /* a process announced before has more or
				  * less code mapped (a dlopen) since it was
				  * announced or last said so */
#define STKREC_EV_COUNTS_FILLING 5 /* profile: a counts map took half its
				    * entries in new keys since user space
				    * last drained it (no process named) */

struct stkrec_event {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 ns_tgid;	/* NEW_PROC: tgid in the process's own PID namespace
			 * (= tgid in the initial one); else 0 */
	char comm[STKREC_COMM_LEN];
	__u64 pid_ns;	/* NEW_PROC: that namespace's inode number; else 0 */
	__u64 addr;	/* MAPS_STALE: the address whose table is pending, or 0 */
};

/*
 * The layout rules above, enforced: each struct has the size its fields
 * add up to (no padding the compiler inserted, which BPF and the host
 * could place differently), and every 64-bit field is 8-byte aligned.
 * __builtin_offsetof and _Static_assert work alike in clang --target=bpf
 * (where vmlinux.h gives no <stddef.h>) and in the C11 host build.
 */
#define STKREC_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(struct type) == (size), "struct " #type ": size")
#define STKREC_ASSERT_AT(type, field, off)                         \
	_Static_assert(__builtin_offsetof(struct type, field) == (off), \
		       "struct " #type ": offset of " #field)

STKREC_ASSERT_AT(stkrec_stack, id, 16);
STKREC_ASSERT_AT(stkrec_stack, ips, 24);
STKREC_ASSERT_SIZE(stkrec_stack, 24 + 8 * STKREC_MAX_WORDS);
STKREC_ASSERT_SIZE(stkrec_py_proc, 64);
STKREC_ASSERT_AT(stkrec_py_code, name, 48);
STKREC_ASSERT_SIZE(stkrec_py_code, 48 + STKREC_PY_NAME_MAX * 2 + STKREC_PY_LT_MAX);

STKREC_ASSERT_AT(stkrec_count_key, comm, 8);
STKREC_ASSERT_AT(stkrec_count_key, user_stack, 8 + STKREC_COMM_LEN);
STKREC_ASSERT_AT(stkrec_count_key, kernel_ret_ip, 8 + STKREC_COMM_LEN + 24);
STKREC_ASSERT_AT(stkrec_count_key, image_ns, 8 + STKREC_COMM_LEN + 32);
STKREC_ASSERT_AT(stkrec_count_key, slot, 8 + STKREC_COMM_LEN + 40);
STKREC_ASSERT_SIZE(stkrec_count_key, 8 + STKREC_COMM_LEN + 48);
STKREC_ASSERT_SIZE(stkrec_count_lanes, 4 * STKREC_COUNT_LANES);

STKREC_ASSERT_AT(stkrec_count_row, set, 8 + STKREC_COMM_LEN + 48);
STKREC_ASSERT_SIZE(stkrec_count_row, 8 + STKREC_COMM_LEN + 56);

STKREC_ASSERT_AT(stkrec_trace_key, comm, 16);
STKREC_ASSERT_AT(stkrec_trace_key, user_stack, 16 + STKREC_COMM_LEN);
STKREC_ASSERT_SIZE(stkrec_trace_key, 40 + STKREC_COMM_LEN);
STKREC_ASSERT_SIZE(stkrec_trace_rate, 16);

STKREC_ASSERT_AT(stkrec_offcpu_key, comm, 16);
STKREC_ASSERT_AT(stkrec_offcpu_key, user_stack, 16 + 2 * STKREC_COMM_LEN);
STKREC_ASSERT_AT(stkrec_offcpu_key, waker_kernel_stack, 16 + 2 * STKREC_COMM_LEN + 24);
STKREC_ASSERT_SIZE(stkrec_offcpu_key, 16 + 2 * STKREC_COMM_LEN + 32);

STKREC_ASSERT_SIZE(stkrec_offcpu_value, 16);

STKREC_ASSERT_AT(stkrec_offcpu_start, user_stack, 8);
STKREC_ASSERT_SIZE(stkrec_offcpu_start, 32 + STKREC_COMM_LEN);
STKREC_ASSERT_AT(stkrec_offcpu_waker, comm, 24);
STKREC_ASSERT_SIZE(stkrec_offcpu_waker, 32 + STKREC_COMM_LEN);

STKREC_ASSERT_AT(stkrec_ksym_io, text, 8);
STKREC_ASSERT_AT(stkrec_ksym_io, addrs, 40);
STKREC_ASSERT_AT(stkrec_ksym_io, out, 40 + 8 * STKREC_KSYM_BATCH);
STKREC_ASSERT_SIZE(stkrec_ksym_io, 40 + 8 * STKREC_KSYM_BATCH + STKREC_KSYM_BATCH * STKREC_KSYM_TEXT);

STKREC_ASSERT_AT(stkrec_event, comm, 16);
STKREC_ASSERT_AT(stkrec_event, pid_ns, 16 + STKREC_COMM_LEN);
STKREC_ASSERT_AT(stkrec_event, addr, 24 + STKREC_COMM_LEN);
STKREC_ASSERT_SIZE(stkrec_event, 32 + STKREC_COMM_LEN);

#undef STKREC_ASSERT_SIZE
#undef STKREC_ASSERT_AT

#endif /* STKREC_H */
