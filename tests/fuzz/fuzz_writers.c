// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for every output writer on odd but valid captures.
 * fuzz_report.c and fuzz_diffmerge.c feed the reader damaged bytes, which
 * mostly stop at a CRC or a decoder; here the input is a program that
 * libstk's writer (stk_writer__*) turns into two sound, closed captures,
 * A and B, so every input reaches the model and the writers: deep and
 * recursive stacks, names of any bytes and of 4096 of them, counts near
 * 2^64, rows whose stacks are missing, snapshots that move mappings,
 * several segments, ESYM tables and perf maps.  Addresses, mappings and
 * kernel symbols are drawn from $(O)/tests/fuzz/elf.stk (the ELF
 * fixtures: mk/report_fuzz.mk), so most frames are named.
 *
 * Then: the report of A (text, folded, pprof, svg, top, the --callers and
 * --callees trees of main and fx_leaf, the closing summary) with the
 * options and --since/--until slice of the input, diff A B (text, folded,
 * svg, top), merge A B (read back: it must be sound and closed), and
 * `stkreport info --chunks` with the slice.  A capture written by libstk
 * that the reporter cannot load, or a writer that fails on /dev/null
 * other than for memory, is a finding: abort().
 *
 * Input: byte 0 options, byte 1 the slice (as fuzz_report.c's), then ops,
 * each one byte (modulo 13) and its arguments, read as the op needs them
 * (missing bytes read as 0):
 * A frame's byte: < 0x80 a user address of the fixtures, < 0xf0 a kernel
 * one, 0xff the next 8 bytes, 0xfe a Python word (SPEC.md, STCK: the next
 * byte's bits 0-1 pick a frame, entry frame, info or stop word, bits 2-4
 * one of the code objects every process of the fixtures gets (ESYM kind
 * 4, some with a fingerprint no word carries), an info word's offset the
 * byte after), else one near a fixture's address.
 *   byte 0  bits 0-1 mode: profile, offcpu, offwake (3: profile)
 *           bit 2 --lines   bit 3 -U   bit 4 --no-inline   bit 5 -d -a and
 *           --no-demangle   bit 6 diff by time   bit 7 leave out the
 *           fixtures' maps, kernel symbols and objects
 * A row (ops 1, 2) has a side: A and B, A only, or B only; everything
 * else goes to both.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "cmds.h"
#include "fuzz_reporting.h"
#include "merge.h"
#include "output.h"
#define PALETTE FUZZ_BUILD "/tests/fuzz/elf.stk"
#define MAX_ADDRS 256
#define MAX_MAPPINGS 64
#define MAX_ROWS 256
#define MAX_STACKS 64
#define MAX_SYMS 8

enum {
	F_LINES = 1 << 2,
	F_USER = 1 << 3,
	F_NO_INLINE = 1 << 4,
	F_DECORATE = 1 << 5,
	F_NORM_TIME = 1 << 6,
	F_BARE = 1 << 7,
};

enum { MODE_PROFILE, MODE_OFFCPU, MODE_OFFWAKE };

/* What elf.stk holds, copied once: the material of the programs. */
static struct palette {
	uint64_t addrs[MAX_ADDRS];	/* every frame and kernel symbol: */
	size_t nr_addrs, nr_user;	/* the user ones first */
	struct stk_mapping maps[MAX_MAPPINGS];
	uint32_t map_tgid[MAX_MAPPINGS];
	size_t nr_maps;
	struct stk_ksym ksyms[MAX_ADDRS];
	size_t nr_ksyms;
	struct stk_kobj kobjs[16];
	size_t nr_kobjs;
} pal;

/* The input, read as the ops ask. */
struct in {
	const uint8_t *p;
	size_t n;
};

/* What is pending for one capture's next chunks. */
struct side {
	struct stk_writer *w;
	const char *path;
	struct stk_count counts[MAX_ROWS];
	struct stk_offcpu offc[MAX_ROWS];
	size_t nr_counts, nr_offc;
};

/* Both captures and what they share. */
struct gen {
	struct side s[2];
	int mode;
	struct stk_stack stacks[MAX_STACKS];
	uint64_t frames[MAX_STACKS][STK_MAX_FRAMES];
	size_t nr_stacks;
	uint8_t used[256];		/* stack ids of this segment */
	uint64_t t;			/* the next interval's start */
	char strs[16][STK_MAX_STRING + 1];	/* names of the current op */
};

/* The captures A and B, and their merge: in fuzz_tmpdir(). */
static char pa[4200], pb[4200], pm[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t in__u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t in__u64(struct in *in, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)in__u8(in) << (8 * i);
	return v;
}

/* A string of the input: length byte L; L < 0xf0: the next L bytes;
 * else the next (L & 15) + 1 bytes repeated up to 4096 bytes (cut
 * anywhere, so inside a UTF-8 character too).  NUL bytes become 'x'. */
static const char *in__str(struct in *in, char *buf, int nonempty)
{
	uint8_t l = in__u8(in);
	size_t n = l < 0xf0 ? l : STK_MAX_STRING, k = l < 0xf0 ? l : (l & 15u) + 1u, i;

	for (i = 0; i < k; i++) {
		buf[i] = (char)in__u8(in);
		if (!buf[i])
			buf[i] = 'x';
	}
	for (; i < n; i++)
		buf[i] = buf[i % k];
	if (!n && nonempty)
		buf[n++] = 'f';
	buf[n] = '\0';
	return buf;
}

/* The Python code objects of every process of the fixtures (ESYM kind 4):
 * code i at PY_ADDR(i) with fingerprint i + 1 (i < PY_CODES); words name
 * i up to 7, so some name none. */
#define PY_CODES 6
#define PY_ADDR(i) (0x7f5500000000ull + 0x40 * (i))

/* A Python word from the input (in__addr()'s 0xfe). */
static uint64_t in__py_word(struct in *in)
{
	uint8_t c = in__u8(in), i = (c >> 2) & 7, off;

	switch (c & 3) {
	case 0:
	case 1:
		return stk_py_word__frame(PY_ADDR(i), c & 1);
	case 2:
		off = in__u8(in);
		return stk_py_word__info(i + 1u, off == 0xff ? STK_PY_OFFSET_UNKNOWN : off);
	default:
		return stk_py_word__stop(c >> 2);
	}
}

static uint64_t in__addr(struct in *in)
{
	uint8_t b = in__u8(in);

	if (b == 0xff)
		return in__u64(in, 8);
	if (b == 0xfe)
		return in__py_word(in);
	if (b >= 0xf0)	/* near one, before or after */
		return pal.addrs[in__u8(in) % pal.nr_addrs] + (int8_t)in__u8(in);
	if (b < 0x80 && pal.nr_user)
		return pal.addrs[b % pal.nr_user];
	if (pal.nr_addrs > pal.nr_user)
		return pal.addrs[pal.nr_user + b % (pal.nr_addrs - pal.nr_user)];
	return pal.addrs[b % pal.nr_addrs];
}

static stk_stack_ref in__ref(struct in *in)
{
	static const stk_stack_ref errs[] = { -EFAULT, -EEXIST, -ENOMEM, -ENOENT };
	uint8_t b = in__u8(in);

	return b >= 0xfc ? errs[b - 0xfc] : b;
}

/* A count: usually small, sometimes anything (sums past 2^64 saturate). */
static uint64_t in__count(struct in *in)
{
	uint8_t b = in__u8(in);

	return b < 0xf0 ? b + 1u : in__u64(in, 8);
}

static uint32_t in__tgid(struct in *in)
{
	uint8_t b = in__u8(in);

	if (b < 0x80 && pal.nr_maps)
		return pal.map_tgid[b % pal.nr_maps];
	return b;	/* 0 too: the idle task */
}

static void in__comm(struct in *in, char comm[16])
{
	uint8_t b = in__u8(in), i;

	memset(comm, 0, 16);
	if (b < 0x80) {
		snprintf(comm, 16, "fx%u", b & 7);
		return;
	}
	for (i = 0; i < (b & 15); i++)
		comm[i] = (char)(in__u8(in) | 1);
}

static void die(const char *what)
{
	fuzz_quiet(0);
	fprintf(stderr, "fuzz_writers: %s\n", what);
	abort();
}

/* The palette: every mapping, frame, kernel symbol and object of elf.stk. */
static void setup(void)
{
	struct stk_reader *r = stk_reader__open(PALETTE);
	struct stk_chunk ch;
	uint64_t tmp;
	size_t i, k;

	if (!r) {
		fprintf(stderr, "fuzz_writers: %s (run make fixtures)\n", stk_open_errmsg());
		exit(1);
	}
	while (stk_reader__next(r, &ch) > 0) {
		if (ch.type == STK_CHUNK_STCK)
			for (i = 0; i < ch.u.stck.n; i++)
				for (k = 0; k < ch.u.stck.stacks[i].nr_frames &&
					    pal.nr_addrs < MAX_ADDRS; k++)
					if (!stk_py_word__tag(ch.u.stck.stacks[i].frames[k]))
						pal.addrs[pal.nr_addrs++] = ch.u.stck.stacks[i].frames[k];
		if (ch.type == STK_CHUNK_MAPS)
			for (i = 0; i < ch.u.maps.n; i++)
				for (k = 0; k < ch.u.maps.procs[i].nr_mappings &&
					    pal.nr_maps < MAX_MAPPINGS; k++) {
					pal.maps[pal.nr_maps] = ch.u.maps.procs[i].mappings[k];
					pal.maps[pal.nr_maps].path = strdup(pal.maps[pal.nr_maps].path);
					pal.map_tgid[pal.nr_maps++] = ch.u.maps.procs[i].tgid;
				}
		if (ch.type == STK_CHUNK_KSYM)
			for (i = 0; i < ch.u.ksym.n && pal.nr_ksyms < MAX_ADDRS; i++) {
				pal.ksyms[pal.nr_ksyms] = ch.u.ksym.syms[i];
				pal.ksyms[pal.nr_ksyms].name = strdup(ch.u.ksym.syms[i].name);
				pal.ksyms[pal.nr_ksyms].module = strdup(ch.u.ksym.syms[i].module);
				if (pal.nr_addrs < MAX_ADDRS)
					pal.addrs[pal.nr_addrs++] = ch.u.ksym.syms[i].addr + 1;
				pal.nr_ksyms++;
			}
		if (ch.type == STK_CHUNK_KBID)
			for (i = 0; i < ch.u.kbid.n && pal.nr_kobjs < 16; i++) {
				pal.kobjs[pal.nr_kobjs] = ch.u.kbid.objs[i];
				pal.kobjs[pal.nr_kobjs++].name = strdup(ch.u.kbid.objs[i].name);
			}
	}
	stk_reader__close(r);
	/* User addresses first: an input's byte < 0x80 picks one of them. */
	for (i = 0; i < pal.nr_addrs; i++) {
		if (pal.addrs[i] >> 47)
			continue;
		tmp = pal.addrs[pal.nr_user];
		pal.addrs[pal.nr_user++] = pal.addrs[i];
		pal.addrs[i] = tmp;
	}
	if (!pal.nr_addrs || !pal.nr_maps)
		die("no frames or mappings in " PALETTE);
}

/* Writes what is pending of both sides: stacks, then rows, for the
 * interval the input gives (possibly empty, or going back in time). */
static void gen__flush(struct gen *g, struct in *in)
{
	uint64_t t0, t1;
	int i;

	t0 = g->t + in__u8(in) * 250000000ull;
	t1 = t0 + (in__u8(in) % 64) * 100000000ull;
	g->t = t1;
	for (i = 0; i < 2; i++) {
		struct side *s = &g->s[i];

		if (g->nr_stacks)
			stk_writer__add_stacks(s->w, g->stacks, g->nr_stacks);
		if (s->nr_counts)
			stk_writer__add_counts(s->w, t0, t1, s->counts, s->nr_counts);
		if (s->nr_offc)
			stk_writer__add_offcpu(s->w, t0, t1, s->offc, s->nr_offc);
		s->nr_counts = s->nr_offc = 0;
	}
	g->nr_stacks = 0;
}

static void gen__stack(struct gen *g, struct in *in)
{
	uint8_t id = in__u8(in), b = in__u8(in);
	uint32_t nr = b < 0x80 ? b % 48 : (b & 0x7f) * 8 + 8, k;
	struct stk_stack *st;

	if (g->used[id] || g->nr_stacks == MAX_STACKS)
		return;
	g->used[id] = 1;
	st = &g->stacks[g->nr_stacks];
	if (nr > STK_MAX_FRAMES)
		nr = STK_MAX_FRAMES;
	for (k = 0; k < nr; k++)
		g->frames[g->nr_stacks][k] = in__addr(in);
	st->id = id;
	st->nr_frames = nr;
	st->frames = g->frames[g->nr_stacks++];
}

static void task(struct in *in, struct stk_task_stacks *t)
{
	t->tgid = in__tgid(in);
	t->tid = t->tgid + (in__u8(in) & 3);
	in__comm(in, t->comm);
	t->user_stack = in__ref(in);
	t->kernel_stack = in__ref(in);
}

/* One row, of the mode's kind, to the sides its first byte picks. */
static void gen__row(struct gen *g, struct in *in)
{
	uint8_t side = in__u8(in) & 3;
	struct stk_offcpu o = { 0 };
	struct stk_count c = { 0 };
	int i;

	if (g->mode == MODE_PROFILE) {
		c.tgid = in__tgid(in);
		c.tid = c.tgid + (in__u8(in) & 3);
		in__comm(in, c.comm);
		c.user_stack = in__ref(in);
		c.kernel_stack = in__ref(in);
		if (in__u8(in) & 1)
			c.kernel_ip = in__addr(in);
		c.count = in__count(in);
	} else {
		task(in, &o.target);
		if (g->mode == MODE_OFFWAKE) {
			task(in, &o.waker);
		} else {
			o.waker.user_stack = o.waker.kernel_stack = -ENOENT;
		}
		o.count = in__count(in);
		o.blocked_ns = in__count(in) * 1000;
	}
	for (i = 0; i < 2; i++) {
		struct side *s = &g->s[i];

		if (side == 1 + !i)	/* 1: A only, 2: B only */
			continue;
		if (g->mode == MODE_PROFILE && s->nr_counts < MAX_ROWS)
			s->counts[s->nr_counts++] = c;
		else if (g->mode != MODE_PROFILE && s->nr_offc < MAX_ROWS)
			s->offc[s->nr_offc++] = o;
	}
}

/* A snapshot of one process: mappings of the palette, moved, renamed or
 * without their build-id as the input says. */
static void gen__maps(struct gen *g, struct in *in)
{
	struct stk_mapping m[8];
	struct stk_proc_maps p = { 0 };
	uint8_t n = in__u8(in) % 8, i, b;
	int k;

	p.tgid = in__tgid(in);
	in__comm(in, p.comm);
	p.time_ns = g->t + in__u8(in) * 100000000ull;
	for (i = 0; i < n; i++) {
		m[i] = pal.maps[in__u8(in) % pal.nr_maps];
		b = in__u8(in);
		if (b & 1)
			m[i].start += (in__u64(in, 2) - 0x8000) << 12;
		if (b & 2)
			m[i].offset = in__u64(in, 2) << 12;
		if (b & 4)
			m[i].build_id_size = 0;
		if (b & 8)
			m[i].path = in__str(in, g->strs[i], 0);
		m[i].end = m[i].start + ((b & 0x10) ? 0x1000 : m[i].end - m[i].start);
	}
	p.nr_mappings = n;
	p.mappings = m;
	for (k = 0; k < 2; k++)
		stk_writer__add_maps(g->s[k].w, &p, 1);
}

/* An ESYM table: of a mapping's build-id (kind 2), or a perf map. */
static void gen__esym(struct gen *g, struct in *in, int perf_map)
{
	struct stk_esym_sym syms[MAX_SYMS];
	const struct stk_mapping *m = &pal.maps[in__u8(in) % pal.nr_maps];
	uint8_t n = in__u8(in) % MAX_SYMS, i, src = in__u8(in) & 7;
	uint32_t tgid = in__tgid(in);
	int k;

	for (i = 0; i < n; i++) {
		syms[i].addr = perf_map ? in__addr(in) : in__u64(in, 2);
		syms[i].size = in__u64(in, 2);
		syms[i].name = in__str(in, g->strs[i], 1);
	}
	for (k = 0; k < 2; k++) {
		if (perf_map)
			stk_writer__add_esym_perf_map(g->s[k].w, tgid, syms, n);
		else if (m->build_id_size)
			stk_writer__add_esym_symtab(g->s[k].w, m->build_id, m->build_id_size, src,
						    syms, n);
	}
}

static void gen__ksyms(struct gen *g, struct in *in)
{
	struct stk_ksym ks[MAX_SYMS];
	uint8_t n = in__u8(in) % MAX_SYMS, i;
	int k;

	for (i = 0; i < n; i++) {
		ks[i] = pal.ksyms[in__u8(in) % (pal.nr_ksyms ? pal.nr_ksyms : 1)];
		ks[i].addr = in__addr(in) & ~0xfull;
		ks[i].size = in__u64(in, 2);
		ks[i].type = "tTwW"[in__u8(in) & 3];
		ks[i].name = in__str(in, g->strs[i], 1);
		if (!pal.nr_ksyms || (in__u8(in) & 1))
			ks[i].module = "";
	}
	for (k = 0; k < 2; k++)
		stk_writer__add_ksyms(g->s[k].w, ks, n);
}

static void gen__misc(struct gen *g, struct in *in, uint8_t op)
{
	static const char *const keys[] = { "frequency", "hostname", "kernel", "cmdline",
					    "comm", "pid", "duration_ns", "version" };
	static const char *const stats[] = { "samples", "lost", "stack_err_eexist",
					     "stack_err_efault", "maps_reloads" };
	struct stk_pid_ns pn = { 0 };
	struct stk_kobj ko;
	struct stk_stat st;
	struct stk_kv kv;
	int k;

	for (k = 0; k < 2; k++) {
		struct in copy = *in;	/* both sides read the same bytes */

		switch (op) {
		case 7:
			kv.key = keys[in__u8(&copy) % 8];
			kv.value = in__str(&copy, g->strs[0], 0);
			stk_writer__add_meta(g->s[k].w, &kv, 1);
			break;
		case 8:
			st.name = stats[in__u8(&copy) % 5];
			st.value = in__u64(&copy, 8);
			stk_writer__add_stats(g->s[k].w, &st, 1);
			break;
		case 9:
			pn.tgid = in__tgid(&copy);
			pn.ns_tgid = in__u8(&copy) + 1u;
			pn.time_ns = g->t;
			pn.pid_ns = in__u8(&copy);
			stk_writer__add_pid_ns(g->s[k].w, &pn, 1);
			break;
		default:
			if (!pal.nr_kobjs)
				break;
			ko = pal.kobjs[in__u8(&copy) % pal.nr_kobjs];
			ko.base += (in__u64(&copy, 2) - 0x8000) << 12;
			if (in__u8(&copy) & 1)
				ko.name = in__str(&copy, g->strs[0], 1);
			stk_writer__add_kobjs(g->s[k].w, &ko, 1);
			break;
		}
		if (k == 1)
			*in = copy;
	}
}

static int gen__meta(struct gen *g)
{
	static const char *const modes[] = { "profile", "offcpu", "offwake" };
	struct stk_kv kv[] = { { "mode", modes[g->mode] }, { "frequency", "49" } };
	int k, err = 0;

	for (k = 0; !err && k < 2; k++)
		err = stk_writer__add_meta(g->s[k].w, kv, 2);
	return err;
}

/* The code objects of process @tgid, the @i-th of the fixtures: by turns
 * CPython 3.8 (co_lnotab), 3.10 and 3.11 (their line tables of one
 * function), names of every kind (empty file, ';', an escape). */
static void gen__pycode(struct stk_writer *w, uint32_t tgid, size_t i)
{
	static const uint8_t lnotab[] = { 0x00, 0x01, 0x04, 0x01, 0x0c, 0x01, 0x0e, 0x01 };
	static const uint8_t t310[] = { 0x04, 0x01, 0x0c, 0x01, 0x0e, 0x01, 0x04, 0x01 };
	static const uint8_t t311[] = {
		0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89,
		0x58, 0x8c, 0x58, 0xf0, 0x00, 0x01, 0x05, 0x17, 0xf0, 0x00, 0x01, 0x05, 0x17,
		0x88, 0x01, 0xd8, 0x08, 0x0d, 0x90, 0x11, 0x90, 0x51, 0x91, 0x15, 0x89, 0x0e,
		0x88, 0x05, 0x88, 0x05, 0xd8, 0x0b, 0x10, 0x80, 0x4c,
	};
	static const struct { uint32_t version; const uint8_t *t; uint32_t size; } v[] = {
		{ 0x0308, lnotab, sizeof(lnotab) }, { 0x030a, t310, sizeof(t310) },
		{ 0x030b, t311, sizeof(t311) },
	};
	static const char *const names[PY_CODES] = {
		"work", "<module>", "Worker.run", "f.<locals>.g", "semi;colon", "esc\x1b[31m",
	};
	static const char *const files[PY_CODES] = {
		"/srv/app/worker.py", "<string>", "", "/a/b.py", "rel.py", "/x;y/z.py",
	};
	struct stk_esym_pycode c[PY_CODES];
	uint32_t k;

	for (k = 0; k < PY_CODES; k++) {
		c[k] = (struct stk_esym_pycode){
			.addr = PY_ADDR(k), .fingerprint = k + 1, .firstlineno = 10 * k + 1,
			.qualname = names[k], .filename = files[k],
			.linetable = k % 2 ? NULL : v[i % 3].t, .linetable_size = k % 2 ? 0 : v[i % 3].size,
		};
	}
	stk_writer__add_esym_pycode(w, tgid, v[i % 3].version, c, PY_CODES);
}

static void gen__palette(struct gen *g)
{
	struct stk_proc_maps p[MAX_MAPPINGS];
	size_t i, n = 0;
	int k;

	for (i = 0; i < pal.nr_maps; i++) {
		if (n && p[n - 1].tgid == pal.map_tgid[i]) {
			p[n - 1].nr_mappings++;
			continue;
		}
		memset(&p[n], 0, sizeof(p[n]));
		p[n].tgid = pal.map_tgid[i];
		snprintf(p[n].comm, sizeof(p[n].comm), "fx%zu", n);
		p[n].mappings = &pal.maps[i];
		p[n++].nr_mappings = 1;
	}
	for (k = 0; k < 2; k++) {
		stk_writer__add_maps(g->s[k].w, p, n);
		for (i = 0; i < n; i++)
			gen__pycode(g->s[k].w, p[i].tgid, i);
		if (pal.nr_ksyms)
			stk_writer__add_ksyms(g->s[k].w, pal.ksyms, pal.nr_ksyms);
		if (pal.nr_kobjs)
			stk_writer__add_kobjs(g->s[k].w, pal.kobjs, pal.nr_kobjs);
	}
}

/* Ends the segment: a new one appended after the trailer, new stack ids. */
static int gen__segment(struct gen *g, struct in *in)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo) };
	int k, fd;

	gen__flush(g, in);
	wo.mono_start_ns = 1 + (uint64_t)in__u8(in) * 1000000000ull;
	wo.wall_start_ns = wo.mono_start_ns;
	for (k = 0; k < 2; k++) {
		if (stk_writer__close(g->s[k].w)) {
			g->s[k].w = NULL;
			return -EIO;
		}
		g->s[k].w = NULL;
		fd = open(g->s[k].path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		g->s[k].w = stk_writer__fdopen(fd, &wo);
		if (!g->s[k].w)
			return -errno;
	}
	memset(g->used, 0, sizeof(g->used));
	return gen__meta(g);
}

/* Writes A and B from the program in @in.  0, or -errno. */
static int gen__run(struct gen *g, struct in *in, int bare)
{
	struct stk_writer_opts wo = { .sz = sizeof(wo), .wall_start_ns = 1, .mono_start_ns = 1 };
	int k, err = 0, ops = 0;

	for (k = 0; k < 2; k++) {
		g->s[k].w = stk_writer__open(g->s[k].path, &wo);
		if (!g->s[k].w)
			return -errno;
	}
	if (gen__meta(g))
		return -EIO;
	if (!bare)
		gen__palette(g);
	while (!err && in->n && ops++ < 512) {
		uint8_t op = in__u8(in) % 13;

		switch (op) {
		case 0: gen__stack(g, in); break;
		case 1: case 2: gen__row(g, in); break;
		case 3: gen__maps(g, in); break;
		case 4: gen__esym(g, in, 0); break;
		case 5: gen__ksyms(g, in); break;
		case 6: gen__flush(g, in); break;
		case 10: gen__esym(g, in, 1); break;
		case 11: err = gen__segment(g, in); break;
		default: gen__misc(g, in, op); break;
		}
	}
	if (!err)
		gen__flush(g, in);
	for (k = 0; k < 2; k++) {
		int e = stk_writer__close(g->s[k].w);

		err = err ? err : e;
		g->s[k].w = NULL;
	}
	return err;
}

static void set_args(struct main_args *a, uint8_t flags, uint8_t slice)
{
	fuzz_fixture_args(a);
	a->oo.addresses = !!(slice & 1);
	a->ro.sym.lines = a->oo.lines = !!(flags & F_LINES);
	a->ro.user_only = a->oo.user_only = !!(flags & F_USER);
	a->ro.sym.no_inline = a->oo.no_inline = !!(flags & F_NO_INLINE);
	a->oo.delimited = a->oo.annotate = a->ro.sym.no_demangle = !!(flags & F_DECORATE);
	a->oo.inverted = !!(slice & 2);
	if (slice >> 2) {
		a->slice.since_ns = (uint64_t)((slice >> 2) & 7) * 500000000u;
		a->slice.until_ns = a->slice.since_ns + (uint64_t)((slice >> 5) + 1) * 1000000000u;
	}
}

static void report(const struct main_args *a, const char *path, int lines)
{
	static const char *const formats[] = { "text", "folded", "pprof", "svg", "top" };
	/* Functions of the fixtures (fx_app.c) for the call trees. */
	static const char *const funcs[] = { "main", "fx_leaf" };
	struct output_opts o = a->oo;
	struct main_input in;
	size_t i;
	int err;

	err = main_input__load(&in, a, path, lines);
	/* Filters or a slice that keep no sample are an error (said on
	 * stderr); any other failure to load what libstk wrote is a bug. */
	if (err && in.matched_nothing)
		return;
	if (err)
		die("a capture written by libstk did not load");
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		err = output_format__find(formats[i])->write(in.r, &a->oo, fuzz_null());
		if (err && err != -ENOMEM)
			die(formats[i]);
	}
	/* --callers and --callees: -ENOENT when no sample has the function. */
	for (i = 0; i < 2 * sizeof(funcs) / sizeof(funcs[0]); i++) {
		o.tree_func = funcs[i / 2];
		o.tree_callers = i & 1;
		err = out_tree__write(in.r, &o, fuzz_null());
		if (err && err != -ENOMEM && err != -ENOENT)
			die(o.tree_callers ? "--callers" : "--callees");
	}
	main_input__status(&in, NULL);
	main_input__release(&in);
}

static void merge(const char *const *paths, const char *out)
{
	struct merge_result res;
	struct capture *cap;

	unlink(out);
	if (merge__captures(paths, 2, out, &res))
		return;
	cap = capture__read(out);
	if (!cap || cap->damaged || !cap->summary.closed)
		die("merge succeeded but wrote an unsound capture");
	capture__free(cap);
}

static void info(const char *path, uint8_t slice)
{
	char since[32], until[32];
	char *argv[] = { "info", "--chunks", "--since", since, "--until", until, (char *)path,
			 NULL };

	snprintf(since, sizeof(since), "%u", slice & 15);
	snprintf(until, sizeof(until), "%u", (slice & 15) + (slice >> 4) + 1);
	optind = 0;
	info_main(7, argv);
}

/* Once, before the first input (libFuzzer and the replay): the palette
 * and the paths. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	snprintf(pa, sizeof(pa), "%s/a.stk", fuzz_tmpdir());
	snprintf(pb, sizeof(pb), "%s/b.stk", fuzz_tmpdir());
	snprintf(pm, sizeof(pm), "%s/merged.stk", fuzz_tmpdir());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct main_args a;
	static struct gen g;
	const char *paths[2] = { pa, pb };
	struct in in = { data + 2, size > 2 ? size - 2 : 0 };
	int err;

	if (size < 2)
		return 0;
	memset(&g, 0, sizeof(g) - sizeof(g.strs));
	g.s[0].path = pa;
	g.s[1].path = pb;
	g.mode = (data[0] & 3) % 3;
	g.t = 1;
	if (gen__run(&g, &in, !!(data[0] & F_BARE)))
		return 0;
	set_args(&a, data[0], data[1]);
	fuzz_quiet(1);
	if (main_args__check(&a) == 0) {
		report(&a, pa, !!(data[0] & F_LINES));
		err = fuzz_diff(&a, paths, !!(data[0] & F_NORM_TIME), !!(data[0] & F_USER));
		if (err < 0 && err != -ENOMEM)
			die("a diff writer failed");
	}
	merge(paths, pm);
	info(pa, data[1]);
	fuzz_quiet(0);
	return 0;
}
