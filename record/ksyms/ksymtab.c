// SPDX-License-Identifier: BSD-2-Clause
/*
 * ksymtab.c - the kernel symbols a recording writes to KSYM: naming the
 * kernel addresses it sees, with the BPF %pS symbolizer or /proc/kallsyms,
 * and queueing each symbol once (see ksymtab.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "idmap.h"
#include "kallsyms.h"
#include "mapfd.h"
#include "ksymtab.h"
#include "stkrec.h"

/* Symbols of a --kallsyms=full table per KSYM chunk. */
#define FULL_CHUNK_SYMS 32768

struct ksymtab {
	/* From /proc/kallsyms: the table, and a bit per index written. */
	struct kallsyms *ks;
	uint8_t *written;
	int full;			/* the whole table is in the file */
	/* Or, named by the BPF symbolizer (bpf): addresses seen, symbol
	 * starts written, addresses waiting to be named; pending names are
	 * then malloc'ed. */
	int bpf;
	int io_fd, prog_fd;
	struct idmap *kaddrs_seen;
	struct idmap *ksyms_done;
	uint64_t *pend_kaddrs;
	size_t nr_pend_kaddrs, cap_pend_kaddrs;
	struct stkrec_ksym_io *io;	/* io_buf, or the map's mmap */
	struct stkrec_ksym_io *io_buf;
	size_t io_map_len;		/* io's mapping when it is not io_buf */
	uint64_t text, etext;		/* _text, _etext; 0 if unknown */
	uint64_t inittext, einittext;	/* _sinittext, _einittext */
	/* The core kernel's text symbols named by the BPF symbolizer and
	 * queued for this file, as sorted [start, end) ranges: an address
	 * inside one (past its first byte) needs no run of the symbolizer
	 * (on stacks that repeat, most new addresses are new offsets into
	 * functions seen already). */
	struct krange {
		uint64_t start, end;
	} *ranges;
	size_t nr_ranges, cap_ranges;
	/* Symbols queued for the next KSYM chunk. */
	struct stk_ksym *pend;
	size_t nr_pend, cap_pend;
	struct ksymtab_stats st;
};

struct ksymtab *ksymtab__new(void)
{
	struct ksymtab *kt = calloc(1, sizeof(*kt));

	if (!kt)
		return NULL;
	kt->io_fd = kt->prog_fd = -1;
	kt->io = kt->io_buf = calloc(1, sizeof(*kt->io));
	kt->kaddrs_seen = idmap__new();
	kt->ksyms_done = idmap__new();
	if (!kt->io || !kt->kaddrs_seen || !kt->ksyms_done) {
		ksymtab__free(kt);
		errno = ENOMEM;
		return NULL;
	}
	return kt;
}

static void free_pend(struct ksymtab *kt)
{
	size_t i;

	/* From the BPF symbolizer the names are ours; from kallsyms, the
	 * table's. */
	for (i = 0; kt->bpf && i < kt->nr_pend; i++) {
		free((char *)kt->pend[i].name);
		free((char *)kt->pend[i].module);
	}
	kt->nr_pend = 0;
}

void ksymtab__free(struct ksymtab *kt)
{
	if (!kt)
		return;
	free_pend(kt);
	free(kt->pend);
	kallsyms__free(kt->ks);
	free(kt->written);
	idmap__free(kt->kaddrs_seen);
	idmap__free(kt->ksyms_done);
	free(kt->ranges);
	free(kt->pend_kaddrs);
	if (kt->io != kt->io_buf)
		mapfd__unmap(kt->io, kt->io_map_len);
	free(kt->io_buf);
	free(kt);
}

/* One BPF_PROG_RUN of the symbolizer on kt->io, in and out (copied to and
 * from the map unless it is mmap'ed). */
static int run_symbolizer(struct ksymtab *kt)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 zero = 0;

	if (kt->io != kt->io_buf)
		return bpf_prog_test_run_opts(kt->prog_fd, &opts) ? -errno : 0;
	if (bpf_map_update_elem(kt->io_fd, &zero, kt->io, BPF_ANY) ||
	    bpf_prog_test_run_opts(kt->prog_fd, &opts) ||
	    bpf_map_lookup_elem(kt->io_fd, &zero, kt->io))
		return -errno;
	return 0;
}

int ksymtab__use_bpf(struct ksymtab *kt, int io_fd, int prog_fd)
{
	void *map;
	int err;

	kt->io_fd = io_fd;
	kt->prog_fd = prog_fd;
	/* A BPF_F_MMAPABLE array (Linux 5.5+, before the helpers this needs):
	 * a run is then one syscall, not three with 17 KiB copied each way. */
	map = mapfd__map(io_fd, sizeof(*kt->io), PROT_READ | PROT_WRITE, &kt->io_map_len);
	if (map)
		kt->io = map;
	/* Without addresses, asked for them, it tells _text and _etext;
	 * later runs leave them alone. */
	memset(kt->io, 0, sizeof(*kt->io));
	kt->io->want_text = 1;
	err = run_symbolizer(kt);
	kt->io->want_text = 0;
	if (err)
		return err;
	kt->text = kt->io->text;
	kt->etext = kt->io->etext;
	kt->inittext = kt->io->inittext;
	kt->einittext = kt->io->einittext;
	kt->bpf = 1;
	return 0;
}

int ksymtab__load_kallsyms(struct ksymtab *kt, const char *path)
{
	kt->ks = kallsyms__load(path);
	if (!kt->ks)
		return -errno;
	kt->text = kallsyms__addr_of(kt->ks, "_text");
	kt->etext = kallsyms__addr_of(kt->ks, "_etext");
	kt->written = calloc(kallsyms__count(kt->ks) / 8 + 1, 1);
	return kt->written ? 0 : -ENOMEM;
}

int ksymtab__kallsyms_hidden(const struct ksymtab *kt)
{
	return kt->ks && kallsyms__all_zero(kt->ks);
}

static int push_ksym(struct ksymtab *kt, const struct stk_ksym *sym)
{
	if (kt->nr_pend == kt->cap_pend) {
		size_t cap = kt->cap_pend ? kt->cap_pend * 2 : 256;
		struct stk_ksym *p = realloc(kt->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		kt->pend = p;
		kt->cap_pend = cap;
	}
	kt->pend[kt->nr_pend++] = *sym;
	kt->st.written++;
	return 0;
}

/* Value in kaddrs_seen: an address a row or stack holds, or only the one
 * before a recorded address that starts a symbol (see ksymtab__see()). */
#define KADDR_RECORDED 1
#define KADDR_BEFORE 2

/* The index of the first range of kt->ranges that ends after @addr. */
static size_t range_after(const struct ksymtab *kt, uint64_t addr)
{
	size_t lo = 0, hi = kt->nr_ranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kt->ranges[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if @addr is inside a symbol written, past its first byte (at its
 * first byte, the address before it needs naming too: ksymtab__see()). */
static int in_range(const struct ksymtab *kt, uint64_t addr)
{
	size_t i = range_after(kt, addr);

	return i < kt->nr_ranges && kt->ranges[i].start < addr;
}

/* Remember the symbol [@start, @start + @size) as written.  Symbols do
 * not overlap; one that would (a table changed under us) is left out. */
static int add_range(struct ksymtab *kt, uint64_t start, uint64_t size)
{
	size_t i;

	if (!size || start + size < start)
		return 0;
	i = range_after(kt, start);
	if (i < kt->nr_ranges && kt->ranges[i].start < start + size)
		return 0;
	if (kt->nr_ranges == kt->cap_ranges) {
		size_t cap = kt->cap_ranges ? kt->cap_ranges * 2 : 256;
		struct krange *p = realloc(kt->ranges, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		kt->ranges = p;
		kt->cap_ranges = cap;
	}
	memmove(kt->ranges + i + 1, kt->ranges + i, (kt->nr_ranges - i) * sizeof(*kt->ranges));
	kt->ranges[i] = (struct krange){ start, start + size };
	kt->nr_ranges++;
	return 0;
}

static int queue_kaddr(struct ksymtab *kt, uint64_t addr, uint64_t how)
{
	uint64_t *v = idmap__find(kt->kaddrs_seen, addr);
	int err;

	if (v) {
		/* Named already; only its count as unknown may change. */
		if (how == KADDR_RECORDED)
			*v = KADDR_RECORDED;
		return 0;
	}
	err = idmap__set(kt->kaddrs_seen, addr, how);
	if (err)
		return err;
	/* In a symbol written: named, as the symbolizer would name it. */
	if (in_range(kt, addr)) {
		kt->st.named_bpf += how == KADDR_RECORDED;
		kt->st.named_known += how == KADDR_RECORDED;
		return 0;
	}
	if (kt->nr_pend_kaddrs == kt->cap_pend_kaddrs) {
		size_t cap = kt->cap_pend_kaddrs ? kt->cap_pend_kaddrs * 2 : 256;
		uint64_t *p = realloc(kt->pend_kaddrs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		kt->pend_kaddrs = p;
		kt->cap_pend_kaddrs = cap;
	}
	kt->pend_kaddrs[kt->nr_pend_kaddrs++] = addr;
	return 0;
}

/* Queue the /proc/kallsyms text symbol covering @addr; @recorded says
 * whether an address without one counts as unknown.  Sets *@start when
 * that symbol starts at @addr. */
static int see_kallsyms(struct ksymtab *kt, uint64_t addr, int recorded, int *start)
{
	const struct stk_ksym *s;
	long idx;
	int err;

	*start = 0;
	idx = kallsyms__find(kt->ks, addr);
	s = idx < 0 ? NULL : kallsyms__get(kt->ks, (size_t)idx);
	if (!s || !strchr("tTwW", s->type)) {
		/* Code is in text symbols; a data symbol explains nothing. */
		kt->st.unknown += recorded;
		return 0;
	}
	*start = s->addr == addr;
	if (kt->written[idx / 8] & (1u << (idx % 8)))
		return 0;
	err = push_ksym(kt, s);
	if (err)
		return err;
	kt->written[idx / 8] |= (uint8_t)(1u << (idx % 8));
	return 0;
}

/*
 * A report looks a leaf address up as is and a return address at address
 * - 1, and which frames are which depends on its options (the fix-up of
 * the interrupted IP, -S): so both are covered.  They differ only when the
 * address starts a symbol: a call to a function that does not return, as
 * the last instruction of its caller, leaves a return address equal to the
 * next symbol's first byte (x86_64_start_reservations calling
 * start_kernel).
 */
int ksymtab__see(struct ksymtab *kt, uint64_t addr)
{
	int err, start;

	if ((int64_t)addr >= 0)
		return 0;
	if (kt->bpf)
		return queue_kaddr(kt, addr, KADDR_RECORDED);
	if (!kt->ks || kt->full)
		return 0;
	err = see_kallsyms(kt, addr, 1, &start);
	if (!err && start && (int64_t)(addr - 1) < 0)
		err = see_kallsyms(kt, addr - 1, 0, &start);
	return err;
}

/* 1 if @addr is in the core kernel's text, boot-time init text included
 * (the idle task's stack still returns into it). */
static int kernel_text(const struct ksymtab *kt, uint64_t addr)
{
	return (addr >= kt->text && addr < kt->etext) ||
	       (addr >= kt->inittext && addr < kt->einittext);
}

/*
 * 1 if @name is what %pS calls a JIT-compiled BPF program,
 * "bpf_prog_<16 hex digit tag>[_<name>]", or a BPF trampoline,
 * "bpf_trampoline_<digits>".  %pS gives these no module (the kernel's
 * bpf_address_lookup() clears it) though they are no part of the core
 * kernel; /proc/kallsyms lists them under [bpf].
 */
static int bpf_jit_name(const char *name)
{
	const char *p;
	int i;

	if (strncmp(name, "bpf_prog_", 9) == 0) {
		for (i = 0, p = name + 9; i < 16; i++, p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
				return 0;
		return *p == '\0' || *p == '_';
	}
	if (strncmp(name, "bpf_trampoline_", 15) == 0) {
		for (p = name + 15; *p >= '0' && *p <= '9'; p++)
			;
		return p > name + 15 && *p == '\0';
	}
	return 0;
}

/*
 * Queue the symbol %pS named for io->addrs[@j], if it is one.  A symbol of
 * the core kernel outside its text is data, which no code address is in:
 * such an address (a return IP read above a frame without frame pointer
 * can be any word) counts as unknown.  A BPF program's code (off-CPU
 * stacks start in ours; an interrupt can land in any) is no core kernel
 * symbol: it is written under [bpf], as /proc/kallsyms has it.
 */
static int take_name(struct ksymtab *kt, size_t j)
{
	struct stkrec_ksym_io *io = kt->io;
	struct stk_ksym sym;
	int err;

	uint64_t addr = io->addrs[j], *how = idmap__find(kt->kaddrs_seen, addr);
	int recorded = how && *how == KADDR_RECORDED;

	io->out[j][STKREC_KSYM_TEXT - 1] = '\0';
	if (kallsyms__parse_symoff(io->out[j], addr, &sym)) {
		kt->st.unknown += recorded;
		return 0;
	}
	if (!sym.module[0] && bpf_jit_name(sym.name) && !kernel_text(kt, sym.addr)) {
		sym.module = "bpf";
	} else if (!sym.module[0] && kt->etext && !kernel_text(kt, sym.addr)) {
		kt->st.unknown += recorded;
		return 0;
	}
	kt->st.named_bpf += recorded;
	/* At a symbol's first byte: the address before it too, for a report
	 * that looks it up as a return address (see ksymtab__see()).  It is
	 * named in a later batch of this ksymtab__resolve(). */
	if (sym.addr == addr && (int64_t)(addr - 1) < 0) {
		err = queue_kaddr(kt, addr - 1, KADDR_BEFORE);
		if (err)
			return err;
	}
	if (idmap__find(kt->ksyms_done, sym.addr))
		return 0;
	sym.name = strdup(sym.name);
	sym.module = strdup(sym.module);
	err = !sym.name || !sym.module ? -ENOMEM : 0;
	err = err ?: idmap__set(kt->ksyms_done, sym.addr, 1);
	/* The core kernel's text does not change; modules and BPF
	 * programs can go, and others come in their place. */
	if (!err && !sym.module[0])
		err = add_range(kt, sym.addr, sym.size);
	err = err ?: push_ksym(kt, &sym);
	if (err) {
		free((char *)sym.name);
		free((char *)sym.module);
	}
	return err;
}

int ksymtab__resolve(struct ksymtab *kt)
{
	struct stkrec_ksym_io *io = kt->io;
	size_t i, j, nb;
	int err = 0;

	for (i = 0; i < kt->nr_pend_kaddrs && !err; i += nb) {
		nb = kt->nr_pend_kaddrs - i;
		if (nb > STKREC_KSYM_BATCH)
			nb = STKREC_KSYM_BATCH;
		io->nr = (__u32)nb;
		memcpy(io->addrs, kt->pend_kaddrs + i, nb * sizeof(uint64_t));
		err = run_symbolizer(kt);
		if (err)
			return err;
		for (j = 0; j < nb && !err; j++)
			err = take_name(kt, j);
	}
	kt->nr_pend_kaddrs = 0;
	return err;
}

int ksymtab__write(struct ksymtab *kt, struct stk_writer *w, uint64_t *chunks)
{
	int err;

	if (!kt->nr_pend)
		return 0;
	err = stk_writer__add_ksyms(w, kt->pend, kt->nr_pend);
	free_pend(kt);
	if (!err)
		(*chunks)++;
	return err;
}

int ksymtab__write_all(struct ksymtab *kt, struct stk_writer *w, uint64_t *chunks)
{
	size_t total, i, n;
	int err = 0;

	if (!kt->ks)
		return 0;
	kt->full = 1;
	total = kallsyms__count(kt->ks);
	for (i = 0; i < total && !err; i += FULL_CHUNK_SYMS) {
		n = total - i < FULL_CHUNK_SYMS ? total - i : FULL_CHUNK_SYMS;
		err = stk_writer__add_ksyms(w, kallsyms__get(kt->ks, i), n);
		if (!err)
			(*chunks)++;
	}
	kt->st.written += total;
	return err;
}

void ksymtab__new_file(struct ksymtab *kt)
{
	if (kt->written)
		memset(kt->written, 0, kallsyms__count(kt->ks) / 8 + 1);
	idmap__clear(kt->kaddrs_seen);
	idmap__clear(kt->ksyms_done);
	kt->nr_ranges = 0;
}

void ksymtab__text(const struct ksymtab *kt, uint64_t *text, uint64_t *etext)
{
	*text = kt->text;
	*etext = kt->etext;
}

void ksymtab__stats(const struct ksymtab *kt, struct ksymtab_stats *st)
{
	*st = kt->st;
}
