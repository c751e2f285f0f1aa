// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_esym: the pieces of --embed-symbols — an ELF file's
 * function symbols at file offsets (elfsyms.c), the tables as a cache
 * under the memory budget (esym.c), and perf maps: parsing, reading only
 * what was appended, the cap on what is kept (perfmap.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "elfsyms.h"
#include "esym.h"
#include "membudget.h"
#include "perfmap.h"
#include "procmaps.h"
#include "procs.h"
#include "worker.h"

/* A local function with a name of its own, to look up in our own file. */
__attribute__((noinline, noipa)) static int elfsyms_fixture_fn(int x)
{
	return x * 3 + 1;
}

/* The file offset of our own address @a, through /proc/self/maps, as a
 * reporter turns a sampled address into one. */
static uint64_t self_file_offset(uint64_t a)
{
	char line[4096];
	uint64_t off = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		struct procmaps_line l;

		if (procmaps__parse_line(line, &l) == 0 && a >= l.start && a < l.end) {
			off = a - l.start + l.offset;
			break;
		}
	}
	fclose(f);
	return off;
}

START_TEST(own_function_is_found_at_its_file_offset)
{
	struct elfsyms t;
	uint64_t off = self_file_offset((uint64_t)(uintptr_t)elfsyms_fixture_fn);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	long i;

	ck_assert_int_eq(elfsyms_fixture_fn(1), 4);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_fd(fd, &t), 0);
	close(fd);
	ck_assert_uint_gt(t.n, 10);
	ck_assert(t.sources & STK_ESYM_SRC_SYMTAB);
	i = elfsyms__find(&t, off);
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(t.syms[i].name, "elfsyms_fixture_fn");
	ck_assert_uint_eq(t.syms[i].addr, off);
	/* Sorted, one per address, each with a size. */
	for (i = 1; i < (long)t.n; i++)
		ck_assert_uint_gt(t.syms[i].addr, t.syms[i - 1].addr);
	elfsyms__free(&t);
}
END_TEST

/* A call that does not return, as the last instruction of its caller:
 * the return address is past the caller's end. */
static jmp_buf noreturn_jb;
static uint64_t noreturn_ret;

__attribute__((noinline, noipa, noreturn)) static void esym_fixture_noreturn(void)
{
	noreturn_ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	longjmp(noreturn_jb, 1);
}

__attribute__((noinline, noipa)) static void esym_fixture_ends_in_noreturn(void)
{
	esym_fixture_noreturn();
}

/*
 * --embed-symbols=covering stores the symbol a report names a return
 * address by, the one covering address - 1: here the caller, although
 * the return address itself is past its end.
 */
START_TEST(covering_symbols_of_a_return_address_at_a_function_end)
{
	struct procs *p = procs__new();
	struct esym *e = esym__new(ESYM_COVERING, NULL);
	struct stk_writer *w;
	struct stk_reader *r;
	struct stk_chunk c;
	struct elfsyms t;
	uint64_t ips[2], chunks = 0, off;
	char path[64];
	int fd, rfd, found = 0;
	long k;
	size_t i;

	if (setjmp(noreturn_jb) == 0)
		esym_fixture_ends_in_noreturn();
	ck_assert_uint_ne(noreturn_ret, 0);
	/* The fixture holds: the return address is not in the caller. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_fd(fd, &t), 0);
	close(fd);
	off = self_file_offset(noreturn_ret);
	k = elfsyms__find(&t, off);
	ck_assert(k < 0 || strcmp(t.syms[k].name, "esym_fixture_ends_in_noreturn") != 0);
	k = elfsyms__find(&t, off - 1);
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(t.syms[k].name, "esym_fixture_ends_in_noreturn");
	elfsyms__free(&t);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)getpid(), "check", 0), 0);
	ips[0] = (uint64_t)(uintptr_t)elfsyms_fixture_fn;
	ips[1] = noreturn_ret;
	ck_assert_int_eq(esym__queue(e, (uint32_t)getpid(), ips, 2), 0);
	fd = memfd_create("check_esym", 0);
	ck_assert_int_ge(fd, 0);
	rfd = dup(fd);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(esym__flush(e, p, w, &chunks), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	r = stk_reader__open(path);
	ck_assert_ptr_nonnull(r);
	while (stk_reader__next(r, &c) > 0)
		for (i = 0; c.type == STK_CHUNK_ESYM && i < c.u.esym.nr_syms; i++)
			found += strcmp(c.u.esym.syms[i].name, "esym_fixture_ends_in_noreturn") == 0;
	ck_assert_int_eq(found, 1);
	stk_reader__close(r);
	close(rfd);
	esym__free(e);
	procs__free(p);
}
END_TEST

START_TEST(not_elf_and_truncated_files_are_refused)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file, but long enough for a header\n";
	uint8_t hdr[64];
	struct elfsyms t;
	int fd;

	ck_assert_int_eq(elfsyms__read_mem(text, sizeof(text), &t), -ENOEXEC);
	ck_assert_ptr_null(t.syms);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(read(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	close(fd);
	/* Only the ELF header: its section headers lie past the end. */
	ck_assert_int_eq(elfsyms__read_mem(hdr, sizeof(hdr), &t), -EBADMSG);
}
END_TEST

START_TEST(perf_map_lines_parse_and_bad_ones_are_skipped)
{
	char text[] = "7f0000001000 40 first\n"
		      "0x7f0000000100 0x10 with prefix\r\n"
		      "garbage line\n"
		      "7f0000002000 0 size zero\n"
		      "7f0000003000 20\n"
		      "12345678901234567 10 too long\n"
		      "7f0000004000 8 LazyCompile:*f /a b.js:1";
	struct stk_esym_sym *s = NULL;
	long n = perfmap__parse(text, strlen(text), &s);

	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(s[0].addr, 0x7f0000000100);
	ck_assert_uint_eq(s[0].size, 0x10);
	ck_assert_str_eq(s[0].name, "with prefix");
	ck_assert_uint_eq(s[1].addr, 0x7f0000001000);
	ck_assert_str_eq(s[1].name, "first");
	ck_assert_str_eq(s[2].name, "LazyCompile:*f /a b.js:1");
	free(s);
}
END_TEST

START_TEST(nspid_of_ourselves_is_our_pid_outside_a_namespace)
{
	/* The tests run in the initial PID namespace. */
	ck_assert_uint_eq(perfmap__nspid("/proc", (uint32_t)getpid()), (uint32_t)getpid());
	ck_assert_uint_eq(perfmap__nspid("/nonexistent", 42), 42);
}
END_TEST

/* ---- a capture in memory, for what one flush writes ----------------------- */

struct sink {
	int rfd;
	struct stk_writer *w;
};

static void sink_open(struct sink *s)
{
	int fd = memfd_create("check_esym", 0);

	ck_assert_int_ge(fd, 0);
	s->rfd = dup(fd);
	s->w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(s->w);
}

/*
 * Closes @s and counts the symbols of ESYM kind @kind it holds, named
 * @name (NULL: any); the names, ';'-separated, into @names if not NULL.
 */
static int sink_close(struct sink *s, uint32_t kind, const char *name, char *names, size_t size)
{
	struct stk_reader *r;
	struct stk_chunk c;
	char path[64];
	size_t i;
	int n = 0;

	ck_assert_int_eq(stk_writer__close(s->w), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->rfd);
	r = stk_reader__open(path);
	ck_assert_ptr_nonnull(r);
	if (names)
		names[0] = '\0';
	while (stk_reader__next(r, &c) > 0)
		for (i = 0; c.type == STK_CHUNK_ESYM && c.u.esym.kind == kind && i < c.u.esym.nr_syms; i++) {
			if (name && strcmp(c.u.esym.syms[i].name, name) != 0)
				continue;
			n++;
			if (names && strlen(names) + strlen(c.u.esym.syms[i].name) + 2 < size) {
				strcat(names, c.u.esym.syms[i].name);
				strcat(names, ";");
			}
		}
	stk_reader__close(r);
	close(s->rfd);
	return n;
}

/* esym__flush() of @ip (a leaf) of ours: the kind 2 symbols named @name it wrote. */
static int esym_flush_one(struct esym *e, struct procs *p, uint64_t ip, const char *name)
{
	struct sink s;
	uint64_t chunks = 0;

	ck_assert_int_eq(esym__queue(e, (uint32_t)getpid(), &ip, 1), 0);
	sink_open(&s);
	ck_assert_int_eq(esym__flush(e, p, s.w, &chunks), 0);
	return sink_close(&s, STK_ESYM_SYMTAB, name, NULL, 0);
}

/* The bytes of the table of the file mapped at our address @a. */
static size_t table_bytes_at(struct procs *p, uint64_t a)
{
	const struct stk_mapping *m = procs__mapping(p, (uint32_t)getpid(), a);
	struct elfsyms t;
	size_t bytes;
	int fd;

	ck_assert_ptr_nonnull(m);
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_build_id(fd, m->build_id, m->build_id_size, &t), 0);
	close(fd);
	bytes = t.bytes;
	ck_assert_uint_ge(bytes, t.n * sizeof(*t.syms));
	elfsyms__free(&t);
	return bytes;
}

START_TEST(read_build_id_refuses_another_build_id)
{
	uint8_t bid[20] = { 1, 2, 3 };
	struct elfsyms t;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfsyms__read_build_id(fd, bid, sizeof(bid), &t), -ESTALE);
	ck_assert_ptr_null(t.syms);
	close(fd);
}
END_TEST

/*
 * Two tables (our own and libc's) under a budget that holds one: the
 * second evicts the first; an address a written symbol names needs no
 * table; another address of ours reads our table again.
 */
START_TEST(tables_are_a_cache_under_the_budget)
{
	struct procs *p = procs__new();
	uint64_t own = (uint64_t)(uintptr_t)elfsyms_fixture_fn;
	uint64_t own2 = (uint64_t)(uintptr_t)esym_fixture_ends_in_noreturn;
	uint64_t lib = (uint64_t)(uintptr_t)getpid;
	struct esym_stats st;
	struct membudget b;
	size_t a_bytes, l_bytes;
	struct esym *e;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)getpid(), "check", 0), 0);
	a_bytes = table_bytes_at(p, own);
	l_bytes = table_bytes_at(p, lib);
	/* Room for the larger one and the small records, not for both. */
	ck_assert_uint_gt(a_bytes < l_bytes ? a_bytes : l_bytes, 16384);
	membudget__init(&b, (a_bytes > l_bytes ? a_bytes : l_bytes) + 16384);
	e = esym__new(ESYM_COVERING, &b);
	ck_assert_ptr_nonnull(e);

	ck_assert_int_eq(esym_flush_one(e, p, own, "elfsyms_fixture_fn"), 1);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.binaries, 1);
	ck_assert_uint_eq(st.tables_evicted, 0);
	ck_assert_uint_ge(b.used, a_bytes);

	esym_flush_one(e, p, lib, NULL);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.binaries, 2);
	ck_assert_uint_eq(st.tables_evicted, 1);

	/* Named by what was written: no table read, nothing new. */
	ck_assert_int_eq(esym_flush_one(e, p, own, NULL), 0);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.tables_reread, 0);

	ck_assert_int_eq(esym_flush_one(e, p, own2, "esym_fixture_ends_in_noreturn"), 1);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.tables_reread, 1);
	ck_assert_uint_eq(st.tables_evicted, 2);
	ck_assert_uint_eq(st.tables_uncached, 0);
	ck_assert_uint_eq(st.symbols_skipped, 0);
	ck_assert_uint_le(b.peak, b.limit);
	esym__free(e);
	ck_assert_uint_eq(b.used, 0);		/* all given back */
	ck_assert_uint_eq(b.nr_shrinkers, 0);
	procs__free(p);
}
END_TEST

/* A table larger than the whole budget: read, used, released; its
 * symbols written all the same.  No room even for the binary: counted. */
START_TEST(a_table_over_the_budget_is_used_once)
{
	struct procs *p = procs__new();
	uint64_t own = (uint64_t)(uintptr_t)elfsyms_fixture_fn;
	uint64_t own2 = (uint64_t)(uintptr_t)esym_fixture_ends_in_noreturn;
	struct esym_stats st;
	struct membudget b;
	struct esym *e;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(procs__snapshot(p, (uint32_t)getpid(), "check", 0), 0);
	membudget__init(&b, 4096);
	e = esym__new(ESYM_COVERING, &b);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(esym_flush_one(e, p, own, "elfsyms_fixture_fn"), 1);
	ck_assert_int_eq(esym_flush_one(e, p, own2, "esym_fixture_ends_in_noreturn"), 1);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.tables_uncached, 2);
	ck_assert_uint_eq(st.tables_reread, 1);
	ck_assert_uint_eq(st.symbols_skipped, 0);
	ck_assert_uint_le(b.peak, 4096);
	esym__free(e);

	membudget__init(&b, 8);
	e = esym__new(ESYM_COVERING, &b);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(esym_flush_one(e, p, own, NULL), 0);
	esym__stats(e, &st);
	ck_assert_uint_eq(st.symbols_skipped, 1);
	ck_assert_uint_eq(st.binaries, 0);
	esym__free(e);
	procs__free(p);
}
END_TEST

/* ---- perf maps under a fake /proc: DIR/4242/{status,root/tmp/perf-4242.map} */

#define FAKE_PID 4242


struct fakeproc {
	char root[64];
	char map[128];
};

static void fake_open(struct fakeproc *f)
{
	char path[256];
	FILE *st;

	strcpy(f->root, "/tmp/check_esym.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->root));
	snprintf(path, sizeof(path), "%s/%d", f->root, FAKE_PID);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/root", f->root, FAKE_PID);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/root/tmp", f->root, FAKE_PID);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/status", f->root, FAKE_PID);
	st = fopen(path, "w");
	ck_assert_ptr_nonnull(st);
	fputs("Name:\tjit\n", st);
	check_put_own_creds(st);
	fclose(st);
	snprintf(f->map, sizeof(f->map), "%s/%d/root/tmp/perf-%d.map", f->root, FAKE_PID, FAKE_PID);
}

static void fake_close(struct fakeproc *f)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	ck_assert_int_eq(system(cmd), 0);
}

/* Writes @text to the map: "a" appends, "w" rewrites the same file,
 * "new" replaces it with another one (another inode). */
static void map_put(const struct fakeproc *f, const char *how, const char *text)
{
	FILE *m;

	if (strcmp(how, "new") == 0) {
		ck_assert_int_eq(unlink(f->map), 0);
		how = "w";
	}
	m = fopen(f->map, how);
	ck_assert_ptr_nonnull(m);
	fputs(text, m);
	ck_assert_int_eq(fclose(m), 0);
}

/* perfmaps__see() of @addr and a write: the lines written, in @names. */
static int pm_write_one(struct perfmaps *pm, uint64_t addr, char *names, size_t size)
{
	struct sink s;
	uint64_t chunks = 0;

	ck_assert_int_eq(perfmaps__see(pm, FAKE_PID, addr, 1), 0);
	sink_open(&s);
	ck_assert_int_eq(perfmaps__write(pm, s.w, &chunks), 0);
	return sink_close(&s, STK_ESYM_PERF_MAP, NULL, names, size);
}

START_TEST(perf_maps_are_read_incrementally_and_again_when_replaced)
{
	struct fakeproc f;
	struct perfmaps_stats st;
	struct membudget b;
	struct perfmaps *pm;
	char names[256];

	fake_open(&f);
	membudget__init(&b, 64u << 20);
	pm = perfmaps__new(0, f.root, &b);
	ck_assert_ptr_nonnull(pm);
	map_put(&f, "w", "1000 10 one\n2000 10 two\n");
	ck_assert_int_eq(pm_write_one(pm, 0x1005, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "one;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.bytes_read, 24);

	/* Appended: a whole line and one being written. */
	map_put(&f, "a", "3000 10 three\n4000 10 fo");
	ck_assert_int_eq(pm_write_one(pm, 0x3004, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "three;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.bytes_read, 24 + 14);	/* only the new whole line */
	ck_assert_uint_eq(st.files_read, 2);
	map_put(&f, "a", "ur\n");
	ck_assert_int_eq(pm_write_one(pm, 0x4001, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "four;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.bytes_read, 24 + 14 + 13);

	/* Known and written: no read, nothing again. */
	ck_assert_int_eq(pm_write_one(pm, 0x2001, names, sizeof(names)), 1);
	ck_assert_int_eq(pm_write_one(pm, 0x2001, names, sizeof(names)), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, 3);

	/* Replaced by another file: read from its start at the next miss. */
	map_put(&f, "new", "1000 10 uno\n5000 10 five\n");
	ck_assert_int_eq(pm_write_one(pm, 0x5001, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "five;");
	ck_assert_int_eq(pm_write_one(pm, 0x1001, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "uno;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.restarts, 1);

	/* Rewritten shorter, the same file: from the start too. */
	map_put(&f, "w", "6000 10 six\n");
	ck_assert_int_eq(pm_write_one(pm, 0x6001, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "six;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.restarts, 2);
	ck_assert_uint_eq(st.lines_skipped, 0);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

/*
 * A map larger than its cap: the lines past it are counted, not kept; one
 * covering an address looked up when it is read is written all the same,
 * and so is one among the last read (a JIT's newest function, sampled
 * after the read that passed its line); one needed later and further back
 * is not there (counted).
 */
START_TEST(perf_map_lines_over_the_cap_are_counted)
{
	struct fakeproc f;
	struct perfmaps_stats st;
	uint64_t reads;
	struct membudget b;
	struct perfmaps *pm;
	char names[256];
	FILE *m;
	int i;

	fake_open(&f);
	membudget__init(&b, 2 * PERFMAP_CAP_MIN);	/* the cap: 1 MiB */
	pm = perfmaps__new(0, f.root, &b);
	ck_assert_ptr_nonnull(pm);
	m = fopen(f.map, "w");
	ck_assert_ptr_nonnull(m);
	for (i = 0; i < 100000; i++)	/* 2.8 MB kept, were they all */
		fprintf(m, "%x 10 line_%06d\n", 0x100000 + i * 0x10, i);
	fputs("7f0000000000 100 target\n", m);
	ck_assert_int_eq(fclose(m), 0);

	ck_assert_int_eq(pm_write_one(pm, 0x7f0000000010, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "target;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_gt(st.lines_skipped, 50000);
	ck_assert_uint_lt(st.lines_skipped, 100000);
	/* The cap, and the lines of the last 64 KiB read (and the line written). */
	ck_assert_uint_le(b.peak, PERFMAP_CAP_MIN + (256u << 10));
	/* Named by that line, which was written: nothing to read or write.
	 * (One read, or more parts where the CPU is slow: the bound.) */
	reads = st.files_read;
	ck_assert_int_eq(pm_write_one(pm, 0x7f0000000020, names, sizeof(names)), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, reads);
	ck_assert_uint_eq(st.misses_skipped, 0);
	/* An early line was kept; the last ones read stay at hand. */
	ck_assert_int_eq(pm_write_one(pm, 0x100005, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "line_000000;");
	ck_assert_int_eq(pm_write_one(pm, 0x100000 + 99999 * 0x10, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "line_099999;");
	/* One in the middle was neither kept nor is at hand: counted. */
	ck_assert_int_eq(pm_write_one(pm, 0x100000 + 50000 * 0x10, names, sizeof(names)), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.misses_skipped, 1);
	ck_assert_uint_eq(st.files_read, reads + 1);

	/*
	 * A JIT appends two functions' lines; a read for the first passes the
	 * second, whose code is sampled only after: named at the next write,
	 * without another read.
	 */
	map_put(&f, "a", "7f0000001000 100 later\n7f0000002000 100 sampled_later\n");
	ck_assert_int_eq(pm_write_one(pm, 0x7f0000001010, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "later;");
	ck_assert_int_eq(pm_write_one(pm, 0x7f0000002010, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "sampled_later;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, reads + 2);
	ck_assert_uint_eq(st.misses_skipped, 1);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

/*
 * A JIT that keeps compiling into the same code memory: each new line at
 * an address replaces the one before it.  What the recorder keeps stays
 * that of the live lines, not of every line read (20000 lines over 100
 * addresses here: 770 KiB kept before, 100 KiB now), and a lookup gets the latest
 * line, a line written once and then replaced is written again, renamed.
 */
START_TEST(perf_map_lines_replaced_at_their_address_are_dropped)
{
	struct fakeproc f;
	struct perfmaps_stats st;
	struct membudget b;
	struct perfmaps *pm;
	char names[256], want[64];
	int gen = 0;
	FILE *m;

	fake_open(&f);
	membudget__init(&b, 64u << 20);
	pm = perfmaps__new(0, f.root, &b);
	ck_assert_ptr_nonnull(pm);
	map_put(&f, "w", "");
	for (int round = 0; round < 10; round++) {
		m = fopen(f.map, "a");
		ck_assert_ptr_nonnull(m);
		for (int i = 0; i < 2000; i++, gen++)
			fprintf(m, "%x 10 gen_%05d\n", 0x100000 + (gen % 100) * 0x10, gen);
		/* A new function, sampled: a lookup that misses reads the map. */
		fprintf(m, "%x 10 fresh_%d\n", 0x200000 + round * 0x10, round);
		ck_assert_int_eq(fclose(m), 0);
		ck_assert_int_eq(pm_write_one(pm, 0x200000 + (uint64_t)round * 0x10 + 1, names,
					      sizeof(names)), 1);
		snprintf(want, sizeof(want), "fresh_%d;", round);
		ck_assert_str_eq(names, want);
		/* The latest line at an address names it. */
		ck_assert_int_eq(pm_write_one(pm, 0x100000 + 7 * 0x10 + 3, names, sizeof(names)), 1);
		snprintf(want, sizeof(want), "gen_%05d;", gen - 100 + 7);
		ck_assert_str_eq(names, want);
	}
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, 10);
	ck_assert_uint_eq(st.lines_skipped, 0);
	/* 110 live lines: their 16 bytes and names, in arrays that doubled. */
	ck_assert_uint_le(b.used, 128u << 10);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

/* ---- perf maps read on the reader thread ------------------------------------ */

/* perfmaps__write() with @addr seen (0: none): the lines written, in
 * @names. */
static int pm_write(struct perfmaps *pm, uint64_t addr, char *names, size_t size)
{
	struct sink s;
	uint64_t chunks = 0;

	if (addr)
		ck_assert_int_eq(perfmaps__see(pm, FAKE_PID, addr, 1), 0);
	sink_open(&s);
	ck_assert_int_eq(perfmaps__write(pm, s.w, &chunks), 0);
	return sink_close(&s, STK_ESYM_PERF_MAP, NULL, names, size);
}

/* Waits for the worker's reads and hands their results over (as the
 * recorder's main loop does when the worker's fd is readable). */
static void pm_collect(struct worker *wk, const struct perfmaps *pm)
{
	struct pollfd p = { .fd = worker__fd(wk), .events = POLLIN };

	while (perfmaps__reading(pm)) {
		ck_assert_int_ge(poll(&p, 1, 10000), 1);
		worker__collect(wk);
	}
}

/* Perf maps of @full mode under budget @bytes, read on a worker of their
 * own (*@wk, freed by the caller). */
static struct perfmaps *pm_with_worker(struct fakeproc *f, struct membudget *b, size_t bytes,
				       int full, struct worker **wk)
{
	struct perfmaps *pm;

	membudget__init(b, bytes);
	pm = perfmaps__new(full, f->root, b);
	*wk = worker__new(WORKER_NICE_SAME);
	ck_assert_ptr_nonnull(pm);
	ck_assert_ptr_nonnull(*wk);
	perfmaps__set_worker(pm, *wk);
	return pm;
}

/*
 * Waits for the reads under way, then writes (@names: the lines), until
 * no read is asked for: the lookups are answered, however many parts the
 * reads' bounds (bytes, CPU time) cut the file into.
 */
static int pm_settle(struct worker *wk, struct perfmaps *pm, char *names, size_t size)
{
	size_t used = 0;
	int n = 0;

	names[0] = '\0';
	do {
		pm_collect(wk, pm);
		n += pm_write(pm, 0, names + used, size - used);
		used = strlen(names);
	} while (perfmaps__reading(pm));
	return n;
}

/*
 * With a worker, a write never reads: it asks the worker for the lines
 * its lookups miss and writes them at the first write after they are in
 * (the bytes read on the worker's thread, not this one); a file that
 * grows is read on from where it was; a lookup no line names is dropped
 * once a read asked for it is in, not read for again.
 */
START_TEST(perf_maps_are_read_on_the_worker_and_written_at_the_next_write)
{
	struct fakeproc f;
	struct perfmaps_stats st;
	struct membudget b;
	struct perfmaps *pm;
	struct worker *wk;
	char names[256];

	fake_open(&f);
	pm = pm_with_worker(&f, &b, 64u << 20, 0, &wk);
	map_put(&f, "w", "1000 10 one\n2000 10 two\n");

	/* The write asks for the read; nothing read or written yet. */
	ck_assert_int_eq(pm_write(pm, 0x1005, names, sizeof(names)), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.bytes_read, 0);
	ck_assert_int_eq(perfmaps__reading(pm), 1);
	pm_collect(wk, pm);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, 1);
	ck_assert_uint_eq(st.bytes_read, 24);
	ck_assert_uint_eq(st.bytes_read_off_loop, 24);
	/* The next write names it, from what the worker read. */
	ck_assert_int_eq(pm_write(pm, 0, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "one;");
	ck_assert_int_eq(perfmaps__reading(pm), 0);

	/* Known: answered at once, no read. */
	ck_assert_int_eq(pm_write(pm, 0x2001, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "two;");
	ck_assert_int_eq(perfmaps__reading(pm), 0);

	/* Grown: only what it gained is read. */
	map_put(&f, "a", "3000 10 three\n");
	ck_assert_int_eq(pm_write(pm, 0x3004, names, sizeof(names)), 0);
	ck_assert_int_eq(pm_settle(wk, pm, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "three;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.bytes_read, 24 + 14);
	ck_assert_uint_eq(st.bytes_read_off_loop, 24 + 14);
	ck_assert_uint_eq(st.files_read, 2);

	/* No line names it: one read, then dropped. */
	ck_assert_int_eq(pm_write(pm, 0x9000, names, sizeof(names)), 0);
	ck_assert_int_eq(pm_settle(wk, pm, names, sizeof(names)), 0);
	ck_assert_int_eq(perfmaps__reading(pm), 0);
	ck_assert_int_eq(pm_write(pm, 0, names, sizeof(names)), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, 3);
	ck_assert_uint_eq(st.symbols_written, 3);

	worker__free(wk);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

/* --embed-symbols=full with a worker: every line a read brings is
 * written at the next write, each once; a grown file's new lines too. */
START_TEST(perf_map_full_read_on_the_worker_writes_every_line)
{
	struct fakeproc f;
	struct membudget b;
	struct perfmaps *pm;
	struct worker *wk;
	char names[256];

	fake_open(&f);
	pm = pm_with_worker(&f, &b, 64u << 20, 1, &wk);
	map_put(&f, "w", "1000 10 one\n2000 10 two\n");
	ck_assert_int_eq(pm_write(pm, 0x1005, names, sizeof(names)), 0);
	ck_assert_int_eq(pm_settle(wk, pm, names, sizeof(names)), 2);
	ck_assert_str_eq(names, "one;two;");
	map_put(&f, "a", "3000 10 three\n");
	ck_assert_int_eq(pm_write(pm, 0x1006, names, sizeof(names)), 0);
	ck_assert_int_eq(pm_settle(wk, pm, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "three;");
	ck_assert_int_eq(pm_write(pm, 0, names, sizeof(names)), 0);
	worker__free(wk);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

/*
 * With a worker, a line past the file's cap that covers a lookup the
 * read was asked for is still written, at the write after the read; the
 * budget never holds more than the cap and the recent lines.
 */
START_TEST(perf_map_line_over_the_cap_read_on_the_worker_is_written)
{
	struct fakeproc f;
	struct perfmaps_stats st;
	uint64_t reads;
	struct membudget b;
	struct perfmaps *pm;
	struct worker *wk;
	char names[256];
	FILE *m;
	int i;

	fake_open(&f);
	pm = pm_with_worker(&f, &b, 2 * PERFMAP_CAP_MIN, 0, &wk);	/* the cap: 1 MiB */
	m = fopen(f.map, "w");
	ck_assert_ptr_nonnull(m);
	for (i = 0; i < 100000; i++)
		fprintf(m, "%x 10 line_%06d\n", 0x100000 + i * 0x10, i);
	fputs("7f0000000000 100 target\n", m);
	ck_assert_int_eq(fclose(m), 0);

	ck_assert_int_eq(pm_write(pm, 0x7f0000000010, names, sizeof(names)), 0);
	ck_assert_int_eq(pm_settle(wk, pm, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "target;");
	perfmaps__stats(pm, &st);
	ck_assert_uint_gt(st.lines_skipped, 50000);
	ck_assert_uint_lt(st.lines_skipped, 100000);
	ck_assert_uint_le(b.peak, PERFMAP_CAP_MIN + (256u << 10));
	reads = st.files_read;
	/* Kept early, and at hand late: no read. */
	ck_assert_int_eq(pm_write(pm, 0x100005, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "line_000000;");
	ck_assert_int_eq(pm_write(pm, 0x100000 + 99999 * 0x10, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "line_099999;");
	ck_assert_int_eq(perfmaps__reading(pm), 0);
	perfmaps__stats(pm, &st);
	ck_assert_uint_eq(st.files_read, reads);

	worker__free(wk);
	perfmaps__free(pm);
	ck_assert_uint_eq(b.used, 0);
	fake_close(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("record_esym");
	TCase *tc = tcase_create("esym");

	tcase_add_test(tc, own_function_is_found_at_its_file_offset);
	tcase_add_test(tc, covering_symbols_of_a_return_address_at_a_function_end);
	tcase_add_test(tc, not_elf_and_truncated_files_are_refused);
	tcase_add_test(tc, perf_map_lines_parse_and_bad_ones_are_skipped);
	tcase_add_test(tc, nspid_of_ourselves_is_our_pid_outside_a_namespace);
	tcase_add_test(tc, read_build_id_refuses_another_build_id);
	tcase_add_test(tc, tables_are_a_cache_under_the_budget);
	tcase_add_test(tc, a_table_over_the_budget_is_used_once);
	tcase_add_test(tc, perf_maps_are_read_incrementally_and_again_when_replaced);
	tcase_add_test(tc, perf_map_lines_over_the_cap_are_counted);
	tcase_add_test(tc, perf_map_lines_replaced_at_their_address_are_dropped);
	tcase_add_test(tc, perf_maps_are_read_on_the_worker_and_written_at_the_next_write);
	tcase_add_test(tc, perf_map_line_over_the_cap_read_on_the_worker_is_written);
	tcase_add_test(tc, perf_map_full_read_on_the_worker_writes_every_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
