// SPDX-License-Identifier: BSD-2-Clause
/*
 * mkcapture - write .stk captures for the reporter's tests, from a small
 * line-based script, with addresses taken from real ELF fixtures so the
 * capture is consistent with them (mappings, build-ids, return addresses).
 *
 *   mkcapture [-C DIR] SCRIPT OUT.stk        (SCRIPT "-" is stdin)
 *   mkcapture --synthetic N [--seed S] OUT.stk FILE...
 *   mkcapture --hostile KIND N OUT.stk
 *
 * Script lines ('#' starts a comment; FILE is relative to -C DIR and is
 * recorded as "/FILE" unless as=PATH is given; in any word "\xNN" is the
 * byte NN and "\\" a backslash, so names can hold any byte):
 *   meta KEY VALUE
 *   map PID COMM FILE BASE [as=PATH] [bid=FILE2|bid=none|bid=HEX]
 *   special PID COMM START END PATH          e.g. [vdso]
 *   syms FILE SYMFILE                        take FILE's symbols and code from
 *                                            SYMFILE (an unstripped copy)
 *   stack ID FRAME...                        leaf first
 *       FRAME: 0xADDR | FILE:SYM[+OFF] | FILE:CALLER>CALLEE (return address
 *       after the call), the address of FILE as mapped by the last map line
 *       | py:ADDR:FP:OFF | pyentry:ADDR:FP:OFF (a Python frame word, entry
 *       or not, and its info word: two words; OFF "-" is unknown)
 *       | pystop:REASON (the Python walk's stop word)    (SPEC.md, STCK)
 *   pycode PID VERSION ADDR FP FIRSTLINE QUALNAME FILENAME [TABLEHEX]
 *                      a Python code object of PID (ESYM kind 4; VERSION as
 *                      0x030b; FILENAME "-" is ""; the line table in hex)
 *   ksym ADDR SIZE TYPE NAME [MODULE]
 *   kobj NAME BASE SIZE [BIDHEX]
 *   kernel FILE SLIDE [bid=HEX|bid=FILE2] [nobase] [noksyms]
 *                      FILE is the kernel image (a vmlinux) loaded SLIDE bytes
 *                      above its link address (KASLR): frames FILE:... are
 *                      slid; records kobj [kernel.kallsyms] at _text + SLIDE
 *                      (0 with nobase) up to _etext with FILE's build-id, and
 *                      (unless noksyms) a ksym per function, as kallsyms
 *                      would list them (sized up to the next one)
 *   count PID TID COMM USTACK KSTACK KIP KRET N   stack refs: id, -EFAULT...;
 *                      KIP, KRET: a number or a FILE:... frame
 *   offc TPID TTID TCOMM TU TK WPID WTID WCOMM WU WK N NS
 *   stat NAME VALUE
 *   interval T0 T1     times of the next CNTS/OFFC chunk (default 1 2)
 *   flush              write what is pending as chunks now
 *   noclose            end without the index/trailer (a killed recording)
 *
 * --synthetic: N unique stacks of 4..32 frames, drawn (with a fixed seed)
 * from 30000 addresses in the functions of the given ELF files (.symtab, else
 * .dynsym), each mapped in its own range of one process: the reporter's
 * benchmark input.
 *
 * --hostile: the reader's costly cases, for the benchmark: KIND "kobjs",
 * N distinct kernel objects in KBID chunks of 256; "snapshots", N maps
 * snapshots of N/4 processes (one mapping each, 4 comms, times spread over
 * 60 s) and 2N off-CPU rows of those processes (offwake), as a long
 * offwake capture beside short-lived processes holds.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxelf.h"
#include "stk.h"

#define MAX_TOK 512	/* a stack of 127 native frames and 129 Python words fits */
#define MAX_MAPS 4096

struct loaded {
	char file[4096];	/* real path */
	char syms[4096];	/* where its symbols are read */
	uint64_t bias;
};

struct script {
	const char *dir;
	struct stk_writer *w;
	struct loaded loads[256];
	int nr_loads;
	/* pending chunk contents */
	struct stk_stack *stacks; size_t nr_stacks;
	struct stk_count *counts; size_t nr_counts;
	struct stk_offcpu *offc; size_t nr_offc;
	struct stk_proc_maps procs[64]; size_t nr_procs;
	struct stk_mapping maps[64][64];
	char *paths[MAX_MAPS]; size_t nr_paths;
	char **knames; size_t nr_knames;	/* kernel image function names */
	struct stk_ksym *ksyms; size_t nr_ksyms;
	struct stk_kobj kobjs[64]; size_t nr_kobjs;
	struct stk_stat stats[64]; size_t nr_stats;
	struct stk_kv meta[64]; size_t nr_meta;
	struct pycode { uint32_t pid, version; struct stk_esym_pycode c; } *pycodes;
	size_t nr_pycodes;
	uint64_t t0, t1;
	int noclose;
	int line;
};

static void die(struct script *s, const char *what)
{
	fprintf(stderr, "mkcapture: line %d: %s\n", s ? s->line : 0, what);
	exit(1);
}

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, (n + 1) * size);
	if (!p) {
		fprintf(stderr, "mkcapture: out of memory\n");
		exit(1);
	}
	return p;
}

static void fullpath(struct script *s, const char *file, char *out, size_t n)
{
	int r;

	if (s->dir && file[0] != '/')
		r = snprintf(out, n, "%s/%s", s->dir, file);
	else
		r = snprintf(out, n, "%s", file);
	if (r < 0 || (size_t)r >= n)
		die(s, "path too long");
}

static int64_t stack_ref(struct script *s, const char *t)
{
	static const struct { const char *n; int64_t v; } names[] = {
		{ "-EFAULT", -EFAULT }, { "-ENOMEM", -ENOMEM }, { "-EEXIST", -EEXIST },
		{ "-ENOENT", -ENOENT },
	};
	size_t i;
	char *end;
	long long v;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(t, names[i].n) == 0)
			return names[i].v;
	v = strtoll(t, &end, 0);
	if (*end)
		die(s, "bad stack reference");
	return v;
}

static uint64_t num(struct script *s, const char *t)
{
	char *end;
	unsigned long long v = strtoull(t, &end, 0);

	if (*end)
		die(s, "bad number");
	return v;
}

static void hex_decode(struct script *s, const char *hex, uint8_t *out, uint32_t *n)
{
	size_t l = strlen(hex), i;

	if (l % 2 || l / 2 > STK_MAX_BUILD_ID)
		die(s, "bad build-id hex");
	for (i = 0; i < l / 2; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die(s, "bad build-id hex");
		out[i] = (uint8_t)b;
	}
	*n = (uint32_t)(l / 2);
}

static struct stk_proc_maps *proc(struct script *s, uint32_t pid, const char *comm)
{
	size_t i;

	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].tgid == pid)
			return &s->procs[i];
	if (s->nr_procs == 64)
		die(s, "too many processes");
	s->procs[i].tgid = pid;
	snprintf(s->procs[i].comm, sizeof(s->procs[i].comm), "%s", comm);
	s->procs[i].mappings = s->maps[i];
	s->procs[i].nr_mappings = 0;
	s->nr_procs++;
	return &s->procs[i];
}

static char *keep(struct script *s, const char *str)
{
	if (s->nr_paths == MAX_MAPS)
		die(s, "too many strings");
	s->paths[s->nr_paths] = strdup(str);
	if (!s->paths[s->nr_paths])
		die(s, "out of memory");
	return s->paths[s->nr_paths++];
}

static void do_map(struct script *s, char **tok, int n)
{
	char file[4096], path[4096], bidfile[4096];
	struct stk_mapping ms[16];
	struct stk_proc_maps *p;
	uint8_t bid[STK_MAX_BUILD_ID];
	uint32_t bid_size = 0;
	uint64_t base;
	int nm, i, bn;

	if (n < 5)
		die(s, "map PID COMM FILE BASE [as=PATH] [bid=...]");
	fullpath(s, tok[3], file, sizeof(file));
	snprintf(path, sizeof(path), "/%s", tok[3]);
	snprintf(bidfile, sizeof(bidfile), "%s", file);
	base = num(s, tok[4]);
	for (i = 5; i < n; i++) {
		if (strncmp(tok[i], "as=", 3) == 0) {
			snprintf(path, sizeof(path), "%s", tok[i] + 3);
		} else if (strcmp(tok[i], "bid=none") == 0) {
			bidfile[0] = '\0';
		} else if (strncmp(tok[i], "bid=0x", 6) == 0) {
			hex_decode(s, tok[i] + 6, bid, &bid_size);
			bidfile[0] = '\0';
		} else if (strncmp(tok[i], "bid=", 4) == 0) {
			fullpath(s, tok[i] + 4, bidfile, sizeof(bidfile));
		} else {
			die(s, "unknown map option");
		}
	}
	if (bidfile[0]) {
		bn = fx_build_id(bidfile, bid);
		if (bn <= 0)
			die(s, "no build-id in file");
		bid_size = (uint32_t)bn;
	}
	nm = fx_mappings(file, base, ms, 16);
	if (nm <= 0)
		die(s, "cannot read ELF segments");
	p = proc(s, (uint32_t)num(s, tok[1]), tok[2]);
	for (i = 0; i < nm; i++) {
		struct stk_mapping *m = &s->maps[p - s->procs][p->nr_mappings];

		if (p->nr_mappings == 64)
			die(s, "too many mappings");
		*m = ms[i];
		m->path = keep(s, path);
		m->build_id_size = bid_size;
		memcpy(m->build_id, bid, bid_size);
		m->inode = 1000 + (uint64_t)s->nr_loads;
		p->nr_mappings++;
	}
	if (s->nr_loads == 256)
		die(s, "too many map lines");
	snprintf(s->loads[s->nr_loads].file, sizeof(s->loads[0].file), "%s", file);
	snprintf(s->loads[s->nr_loads].syms, sizeof(s->loads[0].syms), "%s", file);
	s->loads[s->nr_loads].bias = fx_bias(file, base);
	s->nr_loads++;
}

static void do_special(struct script *s, char **tok, int n)
{
	struct stk_proc_maps *p;
	struct stk_mapping *m;

	if (n != 6)
		die(s, "special PID COMM START END PATH");
	p = proc(s, (uint32_t)num(s, tok[1]), tok[2]);
	if (p->nr_mappings == 64)
		die(s, "too many mappings");
	m = &s->maps[p - s->procs][p->nr_mappings++];
	memset(m, 0, sizeof(*m));
	m->start = num(s, tok[3]);
	m->end = num(s, tok[4]);
	m->prot = PROT_READ | PROT_EXEC;
	m->path = keep(s, tok[5]);
}

static int fn_cmp(const void *a, const void *b)
{
	const GElf_Sym *x = a, *y = b;

	return x->st_value < y->st_value ? -1 : x->st_value > y->st_value;
}

/* The functions of kernel image @file at @slide, as KSYM entries. */
static void kernel_ksyms(struct script *s, const char *file, uint64_t slide)
{
	GElf_Sym *fns = NULL;
	char **names = NULL;
	Elf_Scn *scn = NULL;
	size_t n = 0, i;
	int fd;
	Elf *elf = fx_elf_open(file, &fd);

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sy;

			if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC)
				continue;
			fns = grow(fns, n, sizeof(*fns));
			names = grow(names, n, sizeof(*names));
			fns[n] = sy;
			names[n] = strdup(elf_strptr(elf, sh.sh_link, sy.st_name));
			if (!names[n])
				die(s, "out of memory");
			/* Its index in names[] rides along through the sort. */
			fns[n].st_name = (uint32_t)n;
			n++;
		}
	}
	fx_elf_close(elf, fd);
	if (!n)
		die(s, "no functions in the kernel image");
	qsort(fns, n, sizeof(*fns), fn_cmp);
	/* A real vmlinux has ~100k functions: more than keep() holds. */
	s->knames = grow(s->knames, s->nr_knames + n - 1, sizeof(*s->knames));
	memcpy(s->knames + s->nr_knames, names, n * sizeof(*names));
	s->nr_knames += n;
	for (i = 0; i < n; i++) {
		struct stk_ksym *k;

		s->ksyms = grow(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms));
		k = &s->ksyms[s->nr_ksyms++];
		k->addr = fns[i].st_value + slide;
		k->size = i + 1 < n ? fns[i + 1].st_value - fns[i].st_value : fns[i].st_size;
		k->type = GELF_ST_BIND(fns[i].st_info) == STB_LOCAL ? 't' : 'T';
		k->name = names[fns[i].st_name];
		k->module = "";
	}
	free(fns);
	free(names);
}

static void do_kernel(struct script *s, char **tok, int n)
{
	char file[4096], bidfile[4096];
	uint64_t slide, text, etext;
	struct stk_kobj *k;
	int i, base = 1, ksyms = 1, bn;

	if (n < 3)
		die(s, "kernel FILE SLIDE [bid=HEX|bid=FILE2] [nobase] [noksyms]");
	fullpath(s, tok[1], file, sizeof(file));
	slide = num(s, tok[2]);
	if (fx_sym(file, "_text", &text, NULL) || fx_sym(file, "_etext", &etext, NULL))
		die(s, "kernel image without _text and _etext");
	if (s->nr_kobjs == 64 || s->nr_loads == 256)
		die(s, "too many objects");
	k = &s->kobjs[s->nr_kobjs++];
	memset(k, 0, sizeof(*k));
	k->name = "[kernel.kallsyms]";
	k->size = etext - text;
	snprintf(bidfile, sizeof(bidfile), "%s", file);
	for (i = 3; i < n; i++) {
		if (strcmp(tok[i], "nobase") == 0) {
			base = 0;
		} else if (strcmp(tok[i], "noksyms") == 0) {
			ksyms = 0;
		} else if (strncmp(tok[i], "bid=0x", 6) == 0) {
			hex_decode(s, tok[i] + 6, k->build_id, &k->build_id_size);
			bidfile[0] = '\0';
		} else if (strncmp(tok[i], "bid=", 4) == 0) {
			fullpath(s, tok[i] + 4, bidfile, sizeof(bidfile));
		} else {
			die(s, "unknown kernel option");
		}
	}
	if (bidfile[0]) {
		bn = fx_build_id(bidfile, k->build_id);
		if (bn <= 0)
			die(s, "no build-id in file");
		k->build_id_size = (uint32_t)bn;
	}
	k->base = base ? text + slide : 0;
	if (ksyms)
		kernel_ksyms(s, file, slide);
	snprintf(s->loads[s->nr_loads].file, sizeof(s->loads[0].file), "%s", file);
	snprintf(s->loads[s->nr_loads].syms, sizeof(s->loads[0].syms), "%s", file);
	s->loads[s->nr_loads].bias = slide;
	s->nr_loads++;
}

static uint64_t frame_addr(struct script *s, const char *t)
{
	char buf[4096], file[4096];
	char *colon, *gt, *plus;
	uint64_t v = 0, off = 0;
	int i;

	if (strncmp(t, "0x", 2) == 0)
		return num(s, t);
	snprintf(buf, sizeof(buf), "%s", t);
	colon = strrchr(buf, ':');
	if (!colon)
		die(s, "frame: 0xADDR, FILE:SYM[+OFF] or FILE:CALLER>CALLEE");
	*colon++ = '\0';
	fullpath(s, buf, file, sizeof(file));
	for (i = s->nr_loads - 1; i >= 0; i--)
		if (strcmp(s->loads[i].file, file) == 0)
			break;
	if (i < 0)
		die(s, "frame in a file that no map line loaded");
	gt = strchr(colon, '>');
	if (gt) {
		*gt++ = '\0';
		if (fx_call_ret(s->loads[i].syms, colon, gt, &v))
			die(s, "no such call in the fixture");
	} else {
		plus = strchr(colon, '+');
		if (plus) {
			*plus++ = '\0';
			off = num(s, plus);
		}
		if (fx_sym(s->loads[i].syms, colon, &v, NULL))
			die(s, "no such symbol in the fixture");
		v += off;
	}
	return s->loads[i].bias + v;
}

static void flush(struct script *s)
{
	int err = 0;

	if (s->nr_meta && !err)
		err = stk_writer__add_meta(s->w, s->meta, s->nr_meta);
	if (s->nr_kobjs && !err)
		err = stk_writer__add_kobjs(s->w, s->kobjs, s->nr_kobjs);
	if (s->nr_ksyms && !err)
		err = stk_writer__add_ksyms(s->w, s->ksyms, s->nr_ksyms);
	if (s->nr_procs && !err)
		err = stk_writer__add_maps(s->w, s->procs, s->nr_procs);
	/* ESYM kind 4: one chunk per run of code objects of one process and
	 * version, in script order. */
	for (size_t i = 0, j; i < s->nr_pycodes && !err; i = j) {
		struct stk_esym_pycode c[256];
		size_t k = 0;

		for (j = i; j < s->nr_pycodes && k < 256 && s->pycodes[j].pid == s->pycodes[i].pid &&
		     s->pycodes[j].version == s->pycodes[i].version; j++)
			c[k++] = s->pycodes[j].c;
		err = stk_writer__add_esym_pycode(s->w, s->pycodes[i].pid, s->pycodes[i].version, c,
						  k);
	}
	if (s->nr_stacks && !err)
		err = stk_writer__add_stacks(s->w, s->stacks, s->nr_stacks);
	if (s->nr_counts && !err)
		err = stk_writer__add_counts(s->w, s->t0, s->t1, s->counts, s->nr_counts);
	if (s->nr_offc && !err)
		err = stk_writer__add_offcpu(s->w, s->t0, s->t1, s->offc, s->nr_offc);
	if (s->nr_stats && !err)
		err = stk_writer__add_stats(s->w, s->stats, s->nr_stats);
	if (err) {
		fprintf(stderr, "mkcapture: %s\n", stk_writer__errmsg(s->w));
		exit(1);
	}
	s->nr_meta = s->nr_kobjs = s->nr_ksyms = s->nr_procs = 0;
	s->nr_stacks = s->nr_counts = s->nr_offc = s->nr_stats = 0;
	s->nr_pycodes = 0;
}

/* Python words of a stack token (SPEC.md, STCK): 0 when @t is none, else
 * the words written to @w (2 at most). */
static int py_words(struct script *s, const char *t, uint64_t *w)
{
	char buf[256], *f[4];
	int entry = strncmp(t, "pyentry:", 8) == 0, n = 0;
	char *p;

	if (strncmp(t, "pystop:", 7) == 0) {
		w[0] = stk_py_word__stop((uint32_t)num(s, t + 7));
		return 1;
	}
	if (!entry && strncmp(t, "py:", 3) != 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", t);
	for (p = strtok(buf, ":"); p && n < 4; p = strtok(NULL, ":"))
		f[n++] = p;
	if (n != 4)
		die(s, "py:ADDR:FP:OFF or pyentry:ADDR:FP:OFF");
	w[0] = stk_py_word__frame(num(s, f[1]), entry);
	w[1] = stk_py_word__info((uint32_t)num(s, f[2]),
				 strcmp(f[3], "-") ? (uint32_t)num(s, f[3]) : STK_PY_OFFSET_UNKNOWN);
	return 2;
}

static void do_pycode(struct script *s, char **tok, int n)
{
	struct pycode *k;
	size_t l, i;
	uint8_t *lt = NULL;

	if (n != 8 && n != 9)
		die(s, "pycode PID VERSION ADDR FP FIRSTLINE QUALNAME FILENAME [TABLEHEX]");
	if (n == 9) {
		l = strlen(tok[8]);
		if (l % 2)
			die(s, "bad line table hex");
		lt = malloc(l / 2 + 1);
		if (!lt)
			die(s, "out of memory");
		for (i = 0; i < l / 2; i++) {
			unsigned int b;

			if (sscanf(tok[8] + 2 * i, "%2x", &b) != 1)
				die(s, "bad line table hex");
			lt[i] = (uint8_t)b;
		}
	}
	s->pycodes = grow(s->pycodes, s->nr_pycodes, sizeof(*s->pycodes));
	k = &s->pycodes[s->nr_pycodes++];
	k->pid = (uint32_t)num(s, tok[1]);
	k->version = (uint32_t)num(s, tok[2]);
	k->c.addr = num(s, tok[3]);
	k->c.fingerprint = (uint32_t)num(s, tok[4]);
	k->c.firstlineno = (uint32_t)num(s, tok[5]);
	k->c.qualname = keep(s, tok[6]);
	k->c.filename = keep(s, strcmp(tok[7], "-") ? tok[7] : "");
	k->c.linetable = lt;
	k->c.linetable_size = n == 9 ? (uint32_t)(strlen(tok[8]) / 2) : 0;
}

static void task(struct script *s, struct stk_task_stacks *t, char **tok)
{
	t->tgid = (uint32_t)num(s, tok[0]);
	t->tid = (uint32_t)num(s, tok[1]);
	snprintf(t->comm, sizeof(t->comm), "%s", strcmp(tok[2], "-") ? tok[2] : "");
	t->user_stack = stack_ref(s, tok[3]);
	t->kernel_stack = stack_ref(s, tok[4]);
}

/* "\xNN" -> that byte, "\\" -> '\', in place: any byte in a name. */
static char *unescape(char *t)
{
	char *r = t, *w = t;
	unsigned int b;

	while (*r) {
		if (r[0] == '\\' && r[1] == '\\') {
			*w++ = '\\';
			r += 2;
		} else if (r[0] == '\\' && r[1] == 'x' && isxdigit((unsigned char)r[2]) &&
			   isxdigit((unsigned char)r[3]) && sscanf(r + 2, "%2x", &b) == 1) {
			*w++ = (char)b;
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return t;
}

static void do_line(struct script *s, char *line)
{
	char *tok[MAX_TOK];
	int n = 0;
	char *p = strchr(line, '#');

	if (p)
		*p = '\0';
	for (p = strtok(line, " \t\n"); p && n < MAX_TOK; p = strtok(NULL, " \t\n"))
		tok[n++] = unescape(p);
	if (!n)
		return;
	if (strcmp(tok[0], "meta") == 0 && n >= 3) {
		s->meta[s->nr_meta].key = keep(s, tok[1]);
		s->meta[s->nr_meta].value = keep(s, tok[2]);
		s->nr_meta++;
	} else if (strcmp(tok[0], "map") == 0) {
		do_map(s, tok, n);
	} else if (strcmp(tok[0], "syms") == 0 && n == 3) {
		char file[4096];
		int i;

		fullpath(s, tok[1], file, sizeof(file));
		for (i = 0; i < s->nr_loads; i++)
			if (strcmp(s->loads[i].file, file) == 0)
				fullpath(s, tok[2], s->loads[i].syms, sizeof(s->loads[i].syms));
	} else if (strcmp(tok[0], "special") == 0) {
		do_special(s, tok, n);
	} else if (strcmp(tok[0], "stack") == 0 && n >= 2) {
		struct stk_stack *st;
		uint64_t *fr = calloc(2 * (size_t)n, sizeof(*fr));
		int i, k, nf = 0;

		if (!fr)
			die(s, "out of memory");
		for (i = 2; i < n; i++) {
			k = py_words(s, tok[i], fr + nf);
			if (k)
				nf += k;
			else
				fr[nf++] = frame_addr(s, tok[i]);
		}
		s->stacks = grow(s->stacks, s->nr_stacks, sizeof(*s->stacks));
		st = &s->stacks[s->nr_stacks++];
		st->id = num(s, tok[1]);
		st->nr_frames = (uint32_t)nf;
		st->frames = fr;
	} else if (strcmp(tok[0], "pycode") == 0) {
		do_pycode(s, tok, n);
	} else if (strcmp(tok[0], "ksym") == 0 && n >= 5) {
		struct stk_ksym *k;

		s->ksyms = grow(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms));
		k = &s->ksyms[s->nr_ksyms++];
		k->addr = num(s, tok[1]);
		k->size = num(s, tok[2]);
		k->type = tok[3][0];
		k->name = keep(s, tok[4]);
		k->module = keep(s, n > 5 ? tok[5] : "");
	} else if (strcmp(tok[0], "kobj") == 0 && n >= 4) {
		struct stk_kobj *k = &s->kobjs[s->nr_kobjs++];

		memset(k, 0, sizeof(*k));
		k->name = keep(s, tok[1]);
		k->base = num(s, tok[2]);
		k->size = num(s, tok[3]);
		if (n > 4)
			hex_decode(s, tok[4], k->build_id, &k->build_id_size);
	} else if (strcmp(tok[0], "kernel") == 0) {
		do_kernel(s, tok, n);
	} else if (strcmp(tok[0], "count") == 0 && n == 9) {
		struct stk_count *c;

		s->counts = grow(s->counts, s->nr_counts, sizeof(*s->counts));
		c = &s->counts[s->nr_counts++];
		memset(c, 0, sizeof(*c));
		c->tgid = (uint32_t)num(s, tok[1]);
		c->tid = (uint32_t)num(s, tok[2]);
		snprintf(c->comm, sizeof(c->comm), "%s", tok[3]);
		c->user_stack = stack_ref(s, tok[4]);
		c->kernel_stack = stack_ref(s, tok[5]);
		c->kernel_ip = strchr(tok[6], ':') ? frame_addr(s, tok[6]) : num(s, tok[6]);
		c->kernel_ret_ip = strchr(tok[7], ':') ? frame_addr(s, tok[7]) : num(s, tok[7]);
		c->count = num(s, tok[8]);
	} else if (strcmp(tok[0], "offc") == 0 && n == 13) {
		struct stk_offcpu *o;

		s->offc = grow(s->offc, s->nr_offc, sizeof(*s->offc));
		o = &s->offc[s->nr_offc++];
		memset(o, 0, sizeof(*o));
		task(s, &o->target, tok + 1);
		task(s, &o->waker, tok + 6);
		o->count = num(s, tok[11]);
		o->blocked_ns = num(s, tok[12]);
	} else if (strcmp(tok[0], "stat") == 0 && n == 3) {
		s->stats[s->nr_stats].name = keep(s, tok[1]);
		s->stats[s->nr_stats].value = num(s, tok[2]);
		s->nr_stats++;
	} else if (strcmp(tok[0], "interval") == 0 && n == 3) {
		s->t0 = num(s, tok[1]);
		s->t1 = num(s, tok[2]);
	} else if (strcmp(tok[0], "flush") == 0) {
		flush(s);
	} else if (strcmp(tok[0], "noclose") == 0) {
		s->noclose = 1;
	} else {
		die(s, "unknown or malformed line");
	}
}

/* ---- synthetic captures for the benchmark ---- */

#define NR_SITES 20000
#define NR_LEAVES 10000

struct fn {
	uint64_t addr, size;
};

static size_t collect_functions(const char *path, uint64_t bias, struct fn **fns, size_t n)
{
	Elf_Scn *scn = NULL;
	size_t start = n;
	int fd, pass;
	Elf *elf = fx_elf_open(path, &fd);

	/* .symtab, or .dynsym for stripped system libraries. */
	for (pass = 0; pass < 2 && n == start; pass++)
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sy;

			if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC ||
			    sy.st_size < 2 || !sy.st_value || sy.st_shndx == SHN_UNDEF)
				continue;
			*fns = grow(*fns, n, sizeof(**fns));
			(*fns)[n].addr = bias + sy.st_value;
			(*fns)[n].size = sy.st_size;
			n++;
		}
	}
	fx_elf_close(elf, fd);
	return n;
}

static uint64_t rng(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

static int synthetic(size_t nr, uint64_t seed, const char *out, char **files, int nfiles)
{
	struct stk_writer *w = stk_writer__open(out, NULL);
	struct stk_proc_maps pm = { .tgid = 4242, .comm = "synth" };
	struct stk_mapping *maps = NULL;
	struct stk_stack *st = NULL;
	struct stk_count *rows = NULL;
	struct fn *fns = NULL;
	uint64_t *frames = NULL, *sites = NULL;
	size_t nfns = 0, nmaps = 0, i;
	int f, err = 0;

	if (!w) {
		fprintf(stderr, "mkcapture: %s: %s\n", out, strerror(errno));
		return 1;
	}
	for (f = 0; f < nfiles; f++) {
		struct stk_mapping ms[16];
		uint64_t base = 0x7f0000000000ull + (uint64_t)f * 0x10000000ull;
		uint8_t bid[STK_MAX_BUILD_ID];
		uint32_t bn;
		int nm, k, n;

		nm = fx_mappings(files[f], base, ms, 16);
		if (nm <= 0) {
			fprintf(stderr, "mkcapture: %s: not an ELF file\n", files[f]);
			return 1;
		}
		n = fx_build_id(files[f], bid);
		bn = n > 0 ? (uint32_t)n : 0;
		for (k = 0; k < nm; k++) {
			maps = grow(maps, nmaps, sizeof(*maps));
			maps[nmaps] = ms[k];
			maps[nmaps].path = files[f];
			maps[nmaps].build_id_size = bn;
			memcpy(maps[nmaps].build_id, bid, bn);
			nmaps++;
		}
		nfns = collect_functions(files[f], fx_bias(files[f], base), &fns, nfns);
	}
	if (!nfns) {
		fprintf(stderr, "mkcapture: no functions in the given files\n");
		return 1;
	}
	pm.nr_mappings = (uint32_t)nmaps;
	pm.mappings = maps;
	st = calloc(nr, sizeof(*st));
	rows = calloc(nr, sizeof(*rows));
	frames = calloc(nr * 32, sizeof(*frames));
	if (!st || !rows || !frames) {
		fprintf(stderr, "mkcapture: out of memory\n");
		return 1;
	}
	/* Real stacks reuse addresses: return addresses are call sites and
	 * leaves are hot spots.  So frames come from fixed pools (20000 call
	 * sites, 10000 leaf IPs), not from fresh random addresses. */
	sites = calloc(NR_SITES + NR_LEAVES, sizeof(*sites));
	if (!sites) {
		fprintf(stderr, "mkcapture: out of memory\n");
		return 1;
	}
	for (i = 0; i < NR_SITES + NR_LEAVES; i++) {
		const struct fn *fn = &fns[rng(&seed) % nfns];

		sites[i] = fn->addr + 1 + rng(&seed) % (fn->size - 1);
	}
	for (i = 0; i < nr; i++) {
		uint32_t depth = 4 + (uint32_t)(rng(&seed) % 29), d;

		frames[i * 32] = sites[NR_SITES + rng(&seed) % NR_LEAVES];
		for (d = 1; d < depth; d++)
			frames[i * 32 + d] = sites[rng(&seed) % NR_SITES];
		st[i].id = i + 1;
		st[i].nr_frames = depth;
		st[i].frames = &frames[i * 32];
		rows[i].tgid = rows[i].tid = 4242;
		memcpy(rows[i].comm, "synth", 6);
		rows[i].user_stack = (int64_t)(i + 1);
		rows[i].kernel_stack = -EFAULT;
		rows[i].count = 1 + rng(&seed) % 100;
	}
	err = stk_writer__add_maps(w, &pm, 1);
	for (i = 0; !err && i < nr; i += 10000) {
		size_t n = nr - i < 10000 ? nr - i : 10000;

		err = stk_writer__add_stacks(w, st + i, n);
		if (!err)
			err = stk_writer__add_counts(w, 1, 2, rows + i, n);
	}
	if (err) {
		fprintf(stderr, "mkcapture: %s\n", stk_writer__errmsg(w));
		stk_writer__close(w);
		return 1;
	}
	err = stk_writer__close(w);
	free(st);
	free(rows);
	free(frames);
	free(maps);
	free(fns);
	free(sites);
	return err ? 1 : 0;
}

static int hostile(const char *kind, size_t n, const char *out)
{
	static const char *const comms[] = { "sh", "cc1", "ld", "as" };
	struct stk_writer *w = stk_writer__open(out, NULL);
	struct stk_mapping map = { .start = 0x400000, .end = 0x401000, .prot = 5, .path = "/bin/x" };
	struct stk_proc_maps procs[256];
	struct stk_offcpu rows[256];
	struct stk_kobj objs[256];
	struct stk_kv kv = { "mode", NULL };
	char names[256][32];
	size_t i, k, m;
	int err = 0;

	if (!w) {
		fprintf(stderr, "mkcapture: %s: %s\n", out, strerror(errno));
		return 1;
	}
	kv.value = strcmp(kind, "kobjs") == 0 ? "profile" : "offwake";
	err = stk_writer__add_meta(w, &kv, 1);
	for (i = 0; !err && i < n; i += m) {
		m = n - i < 256 ? n - i : 256;
		for (k = 0; k < m; k++) {
			snprintf(names[k], sizeof(names[k]), "mod%zu", i + k);
			objs[k] = (struct stk_kobj){ .name = names[k], .size = 4096,
				.base = 0xffffffffc0000000ull + (i + k) * 4096ull };
			procs[k] = (struct stk_proc_maps){ .tgid = 1000 + (uint32_t)((i + k) % (n / 4 + 1)),
				.time_ns = 1000000000ull + (i + k) * (60000000000ull / n),
				.nr_mappings = 1, .mappings = &map };
			strcpy(procs[k].comm, comms[(i + k) % 4]);
		}
		if (strcmp(kind, "kobjs") == 0)
			err = stk_writer__add_kobjs(w, objs, m);
		else
			err = stk_writer__add_maps(w, procs, m);
	}
	for (i = 0; !err && strcmp(kind, "snapshots") == 0 && i < 2 * n; i += m) {
		m = 2 * n - i < 256 ? 2 * n - i : 256;
		for (k = 0; k < m; k++) {
			rows[k] = (struct stk_offcpu){ .count = 1, .blocked_ns = 1000 };
			rows[k].target = (struct stk_task_stacks){ .tgid = 1000 + (uint32_t)((i + k) % (n / 4 + 1)),
				.tid = (uint32_t)(i + k), .user_stack = -EFAULT, .kernel_stack = -EFAULT };
			strcpy(rows[k].target.comm, comms[(i + k) % 4]);
			rows[k].waker = (struct stk_task_stacks){ .user_stack = -ENOENT, .kernel_stack = -ENOENT };
		}
		err = stk_writer__add_offcpu(w, 1000000000ull + i * (60000000000ull / (2 * n)),
					     1000000000ull + (i + m) * (60000000000ull / (2 * n)), rows, m);
	}
	if (err) {
		fprintf(stderr, "mkcapture: %s: %s\n", out, strerror(-err));
		stk_writer__discard(w);
		return 1;
	}
	err = stk_writer__close(w);
	if (err)
		fprintf(stderr, "mkcapture: %s: %s\n", out, strerror(-err));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct script s = { .t0 = 1, .t1 = 2 };
	char line[65536];
	FILE *in;
	int a = 1;
	size_t i;

	if (argc > 2 && strcmp(argv[1], "--synthetic") == 0) {
		uint64_t seed = 0x9e3779b97f4a7c15ull;
		size_t n = (size_t)strtoull(argv[2], NULL, 0);

		a = 3;
		if (argc > a + 1 && strcmp(argv[a], "--seed") == 0) {
			seed = strtoull(argv[a + 1], NULL, 0) | 1;
			a += 2;
		}
		if (argc < a + 2 || !n) {
			fprintf(stderr, "usage: mkcapture --synthetic N [--seed S] OUT.stk FILE...\n");
			return 2;
		}
		return synthetic(n, seed, argv[a], argv + a + 1, argc - a - 1);
	}
	if (argc == 5 && strcmp(argv[1], "--hostile") == 0)
		return hostile(argv[2], (size_t)strtoull(argv[3], NULL, 0), argv[4]);
	if (argc > 2 && strcmp(argv[1], "-C") == 0) {
		s.dir = argv[2];
		a = 3;
	}
	if (argc != a + 2) {
		fprintf(stderr, "usage: mkcapture [-C DIR] SCRIPT OUT.stk\n"
				"       mkcapture --synthetic N [--seed S] OUT.stk FILE...\n");
		return 2;
	}
	in = strcmp(argv[a], "-") ? fopen(argv[a], "r") : stdin;
	if (!in) {
		fprintf(stderr, "mkcapture: %s: %s\n", argv[a], strerror(errno));
		return 1;
	}
	s.w = stk_writer__open(argv[a + 1], NULL);
	/* As stkrec once started: a "noclose" capture stays at its name. */
	if (!s.w || stk_writer__commit(s.w)) {
		fprintf(stderr, "mkcapture: %s: %s\n", argv[a + 1],
			s.w ? stk_writer__errmsg(s.w) : strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		s.line++;
		do_line(&s, line);
	}
	if (in != stdin)
		fclose(in);
	flush(&s);
	/* A killed recorder leaves no trailer: just stop writing. */
	if (!s.noclose && stk_writer__close(s.w)) {
		fprintf(stderr, "mkcapture: closing %s failed\n", argv[a + 1]);
		return 1;
	}
	for (i = 0; i < s.nr_stacks; i++)
		free((void *)s.stacks[i].frames);
	for (i = 0; i < s.nr_paths; i++)
		free(s.paths[i]);
	for (i = 0; i < s.nr_knames; i++)
		free(s.knames[i]);
	free(s.knames);
	free(s.stacks);
	free(s.counts);
	free(s.offc);
	free(s.ksyms);
	return 0;
}
