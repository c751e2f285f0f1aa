// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_unwinder: the unwind-table manager (record/unwind/unwinder.c) over
 * real BPF maps laid out as bpf/unwind.bpf.h declares them, fed a maps
 * snapshot of this very process: libc gets a table shared by build-id,
 * the process's mapping list is sorted with the right load bias (the row
 * BPF would find for printf's address is the file's own), a table that
 * does not fit the budget is refused and counted, and an unreferenced one
 * is evicted to make room.  Needs root for the maps (else skipped, 77).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "check_main.h"
#include "procmaps.h"
#include "stkrec.h"
#include "unwind_table.h"
#include "unwinder.h"

struct fixture {
	struct unwinder_maps maps;
	struct procmaps *pm;
	struct stk_proc_maps self;
};

static void maps_open(struct fixture *f, uint32_t rows)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, np, .map_flags = BPF_F_NO_PREALLOC);

	LIBBPF_OPTS(bpf_map_create_opts, om);
	int chunk;

	memset(f, 0, sizeof(*f));
	f->maps.rows_cap = rows;
	/* As bpf/unwind.bpf.h: an array of chunk maps, made by the unwinder. */
	chunk = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", 4, sizeof(struct stkrec_unwind_row),
			       STKREC_UW_CHUNK_ROWS, &mm);
	ck_assert_int_ge(chunk, 0);
	om.inner_map_fd = chunk;
	f->maps.rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "unwind_rows", 4, 4,
					 (rows + STKREC_UW_CHUNK_ROWS - 1) / STKREC_UW_CHUNK_ROWS, &om);
	close(chunk);
	f->maps.pages_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_pages",
					  sizeof(struct stkrec_unwind_page_key),
					  sizeof(struct stkrec_unwind_page), 4096, NULL);
	f->maps.procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_procs", 4,
					  sizeof(struct stkrec_unwind_proc), 64, &np);
	ck_assert_int_ge(f->maps.rows_fd, 0);
	ck_assert_int_ge(f->maps.pages_fd, 0);
	ck_assert_int_ge(f->maps.procs_fd, 0);
	f->pm = procmaps__new();
	ck_assert_ptr_nonnull(f->pm);
	ck_assert_int_eq(procmaps__snapshot(f->pm, "/proc", (uint32_t)getpid(), "check", 0, &f->self), 0);
}

static void maps_close(struct fixture *f)
{
	procmaps__free_snapshot(&f->self);
	procmaps__free(f->pm);
	close(f->maps.rows_fd);
	close(f->maps.pages_fd);
	close(f->maps.procs_fd);
}

/* Row @idx of the rows map, as BPF finds it: in its chunk.  0 if found. */
static int row_at(const struct fixture *f, uint32_t idx, struct stkrec_unwind_row *out)
{
	uint32_t c = idx / STKREC_UW_CHUNK_ROWS, i = idx % STKREC_UW_CHUNK_ROWS, id;
	int fd, err;

	if (bpf_map_lookup_elem(f->maps.rows_fd, &c, &id))
		return -1;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -1;
	err = bpf_map_lookup_elem(fd, &i, out);
	close(fd);
	return err;
}

/* The row BPF would use for @addr of process @tgid, by the same steps:
 * mapping, page, binary search.  0 if found. */
static int bpf_style_row(const struct fixture *f, uint32_t tgid, uint64_t addr,
			 struct stkrec_unwind_row *out, uint64_t *rel)
{
	static struct stkrec_unwind_proc p;
	struct stkrec_unwind_page_key k;
	struct stkrec_unwind_page pg;
	uint32_t i, lo, hi;

	if (bpf_map_lookup_elem(f->maps.procs_fd, &tgid, &p))
		return -1;
	for (i = 0; i < p.nr; i++)
		if (addr >= p.m[i].start && addr < p.m[i].end)
			break;
	if (i == p.nr || p.m[i].table == STKREC_UW_NO_TABLE)
		return -1;
	*rel = addr - p.m[i].bias;
	k = (struct stkrec_unwind_page_key){ p.m[i].table, (uint32_t)(*rel >> STKREC_UW_PAGE_SHIFT) };
	if (bpf_map_lookup_elem(f->maps.pages_fd, &k, &pg))
		return -1;
	lo = pg.first;
	hi = pg.first + pg.nr;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct stkrec_unwind_row r;

		if (row_at(f, mid, &r))
			return -1;
		if (r.pc <= *rel)
			lo = mid;
		else
			hi = mid;
	}
	return row_at(f, lo, out);
}

static const struct stk_mapping *libc_mapping(const struct stk_proc_maps *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_mappings; i++)
		if ((s->mappings[i].prot & 4) && strstr(s->mappings[i].path, "/libc.so"))
			return &s->mappings[i];
	return NULL;
}

START_TEST(own_libc_table_gives_printfs_row)
{
	const struct stk_mapping *lm;
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	const struct stkrec_unwind_row *want;
	struct unwind_table *t;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, addrs[3];
	int i;

	maps_open(&f, 1u << 20);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(unwinder__add_process(u, &f.self), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_ge(st.tables, 2);	/* this suite and libc at least */
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_uint_eq(st.refused_budget, 0);
	lm = libc_mapping(&f.self);
	ck_assert_ptr_nonnull(lm);
	t = unwind_table__from_file(lm->path);
	ck_assert_ptr_nonnull(t);
	addrs[0] = (uint64_t)(uintptr_t)&printf;
	addrs[1] = (uint64_t)(uintptr_t)&qsort + 5;
	addrs[2] = (uint64_t)(uintptr_t)&nanosleep + 1;
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(bpf_style_row(&f, (uint32_t)getpid(), addrs[i], &r, &rel), 0);
		want = unwind_table__lookup(t, rel);
		ck_assert_ptr_nonnull(want);
		ck_assert_uint_eq(r.pc, want->pc);
		ck_assert_uint_eq(r.kind, want->kind);
		ck_assert_uint_eq(r.cfa_off, want->cfa_off);
		ck_assert_int_eq(r.rbp_off, want->rbp_off);
	}
	/* A function's first instruction: CFA = rsp + 8, the return address. */
	ck_assert_int_eq(bpf_style_row(&f, (uint32_t)getpid(), addrs[0], &r, &rel), 0);
	ck_assert_uint_eq(r.kind, STKREC_UW_CFA_RSP);
	ck_assert_uint_eq(r.cfa_off, 8);

	/* A second process mapping the same files shares the tables. */
	f.self.tgid = 1u << 30;
	ck_assert_int_eq(unwinder__add_process(u, &f.self), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.processes, 2);
	ck_assert_uint_eq(st.tables, st.tables_built);
	ck_assert_int_eq(bpf_style_row(&f, 1u << 30, addrs[0], &r, &rel), 0);
	unwinder__remove_process(u, 1u << 30);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_int_ne(bpf_style_row(&f, 1u << 30, addrs[0], &r, &rel), 0);
	unwind_table__free(t);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

/*
 * An entry's slots past its mappings are zero whatever process the
 * scratch value held before (only the slots left dirty are cleared); a
 * process added after its exit gets no entry, and its removal deletes
 * none, but one that had an entry keeps it until removed; a process
 * added as exited and then as alive is written, the same snapshot or not.
 */
START_TEST(entries_past_their_mappings_are_zero_and_an_exited_process_gets_none)
{
	static struct stkrec_unwind_proc e, zero;
	struct stk_proc_maps one;
	struct unwinder_stats st;
	struct unwinder *u;
	struct fixture f;
	uint32_t tgid = (uint32_t)getpid(), nr_exec = 0, i;

	maps_open(&f, 1u << 20);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	for (i = 0; i < f.self.nr_mappings; i++)
		nr_exec += (f.self.mappings[i].prot & 4) != 0;
	ck_assert_uint_ge(nr_exec, 2);
	ck_assert_int_eq(unwinder__add_process(u, &f.self), 0);
	ck_assert_int_eq(bpf_map_lookup_elem(f.maps.procs_fd, &tgid, &e), 0);
	ck_assert_uint_eq(e.nr, nr_exec);

	/* A smaller process next: its entry's other slots are zero. */
	one = f.self;
	one.mappings = (struct stk_mapping *)libc_mapping(&f.self);
	one.nr_mappings = 1;
	one.tgid = 100;
	ck_assert_int_eq(unwinder__add_process(u, &one), 0);
	memset(&e, 0xff, sizeof(e));
	ck_assert_int_eq(bpf_map_lookup_elem(f.maps.procs_fd, &one.tgid, &e), 0);
	ck_assert_uint_eq(e.nr, 1);
	ck_assert_mem_eq(&e.m[1], &zero.m[1], sizeof(e.m) - sizeof(e.m[0]));

	/* Exited when added: no entry, none deleted at its removal. */
	one.tgid = 200;
	ck_assert_int_eq(unwinder__add_exited(u, &one), 0);
	ck_assert_int_ne(bpf_map_lookup_elem(f.maps.procs_fd, &one.tgid, &e), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.processes, 3);
	unwinder__remove_process(u, 200);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.processes, 2);

	/* Added as exited, then as alive (the same snapshot): written. */
	one.tgid = 300;
	ck_assert_int_eq(unwinder__add_exited(u, &one), 0);
	ck_assert_int_eq(unwinder__add_process(u, &one), 0);
	ck_assert_int_eq(bpf_map_lookup_elem(f.maps.procs_fd, &one.tgid, &e), 0);
	ck_assert_uint_eq(e.nr, 1);

	/* An entry written before the exit is known stays until removed. */
	ck_assert_int_eq(unwinder__add_exited(u, &f.self), 0);
	ck_assert_int_eq(bpf_map_lookup_elem(f.maps.procs_fd, &tgid, &e), 0);
	ck_assert_uint_eq(e.nr, nr_exec);
	unwinder__remove_process(u, tgid);
	ck_assert_int_ne(bpf_map_lookup_elem(f.maps.procs_fd, &tgid, &e), 0);
	unwinder__remove_process(u, 100);
	unwinder__remove_process(u, 300);
	ck_assert_int_ne(bpf_map_lookup_elem(f.maps.procs_fd, &one.tgid, &e), 0);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

START_TEST(budget_refuses_then_evicts)
{
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, libc_rows;
	struct unwind_table *t;
	size_t n;

	/* Room for libc's rows and little more. */
	maps_open(&f, 1);
	t = unwind_table__from_file(libc_mapping(&f.self)->path);
	ck_assert_ptr_nonnull(t);
	unwind_table__rows(t, &n);
	libc_rows = n;
	unwind_table__free(t);
	maps_close(&f);
	maps_open(&f, (uint32_t)libc_rows + 16);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);

	/* Only libc's mapping, as process A: it fits. */
	{
		struct stk_proc_maps one = f.self;

		one.mappings = libc_mapping(&f.self);
		one.nr_mappings = 1;
		one.tgid = 100;
		ck_assert_int_eq(unwinder__add_process(u, &one), 0);
	}
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.tables, 1);
	ck_assert_uint_eq(st.rows, libc_rows);
	ck_assert_int_eq(bpf_style_row(&f, 100, (uint64_t)(uintptr_t)&printf, &r, &rel), 0);

	/* All of this process as B: every other table is refused while A
	 * holds libc's (counted, and those mappings have no table). */
	ck_assert_int_eq(unwinder__add_process(u, &f.self), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_ge(st.refused_budget, 1);
	ck_assert_uint_eq(st.evicted, 0);

	/* A and B gone: libc's table is unreferenced, so a table that needs
	 * its room evicts it. */
	unwinder__remove_process(u, 100);
	unwinder__remove_process(u, (uint32_t)getpid());
	{
		struct stk_proc_maps rest = f.self;
		struct stk_mapping *m = calloc(f.self.nr_mappings, sizeof(*m));
		uint32_t i, k = 0;

		ck_assert_ptr_nonnull(m);
		for (i = 0; i < f.self.nr_mappings; i++)
			if (&f.self.mappings[i] != libc_mapping(&f.self))
				m[k++] = f.self.mappings[i];
		rest.mappings = m;
		rest.nr_mappings = k;
		rest.tgid = 200;
		ck_assert_int_eq(unwinder__add_process(u, &rest), 0);
		free(m);
	}
	unwinder__stats(u, &st);
	ck_assert_uint_ge(st.evicted, 1);
	ck_assert_uint_ge(st.tables, 1);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

/* Process @tgid mapping only this process's executable mapping whose
 * path has @sub in it ("/libc.so", "/ld-linux"). */
static int add_part(struct unwinder *u, const struct fixture *f, uint32_t tgid, const char *sub)
{
	struct stk_proc_maps part = f->self;
	struct stk_mapping *m = calloc(f->self.nr_mappings, sizeof(*m));
	uint32_t i, k = 0;
	int err;

	ck_assert_ptr_nonnull(m);
	for (i = 0; i < f->self.nr_mappings; i++)
		if ((f->self.mappings[i].prot & 4) && strstr(f->self.mappings[i].path, sub))
			m[k++] = f->self.mappings[i];
	ck_assert_uint_eq(k, 1);
	part.mappings = m;
	part.nr_mappings = k;
	part.tgid = tgid;
	err = unwinder__add_process(u, &part);
	free(m);
	return err;
}

static uint64_t libc_rows_of(struct fixture *f)
{
	struct unwind_table *t;
	size_t n;

	maps_open(f, 1);
	t = unwind_table__from_file(libc_mapping(&f->self)->path);
	ck_assert_ptr_nonnull(t);
	unwind_table__rows(t, &n);
	unwind_table__free(t);
	maps_close(f);
	return n;
}

START_TEST(evicted_table_is_reloaded_not_rebuilt)
{
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, libc_rows = libc_rows_of(&f);

	maps_open(&f, (uint32_t)libc_rows + 16);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(add_part(u, &f, 100, "/libc.so"), 0);
	unwinder__remove_process(u, 100);
	/* ld.so's table needs libc's room: libc's is evicted. */
	ck_assert_int_eq(add_part(u, &f, 200, "/ld-linux"), 0);
	unwinder__remove_process(u, 200);
	unwinder__stats(u, &st);
	ck_assert_uint_ge(st.evicted, 1);
	ck_assert_uint_eq(st.reloaded, 0);
	/* libc again: its rows come back from memory, nothing is built. */
	ck_assert_int_eq(add_part(u, &f, 300, "/libc.so"), 0);
	{
		struct unwinder_stats st2;

		unwinder__stats(u, &st2);
		ck_assert_uint_eq(st2.tables_built, st.tables_built);
		ck_assert_uint_eq(st2.reloaded, 1);
	}
	ck_assert_int_eq(bpf_style_row(&f, 300, (uint64_t)(uintptr_t)&printf, &r, &rel), 0);
	ck_assert_uint_le(r.pc, rel);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

/* The table of the mapping of @addr in @tgid's BPF entry, or 0. */
static uint32_t table_of(const struct fixture *f, uint32_t tgid, uint64_t addr)
{
	static struct stkrec_unwind_proc p;
	uint32_t i;

	if (bpf_map_lookup_elem(f->maps.procs_fd, &tgid, &p))
		return 0;
	for (i = 0; i < p.nr; i++)
		if (addr >= p.m[i].start && addr < p.m[i].end)
			return p.m[i].table;
	return 0;
}

/* BPF caches rows by (table id, address) without reading the table: a
 * table built again (its file's, which may not be the same file: a file
 * without build-id is known by device and inode) has another id. */
START_TEST(evicted_table_rebuilt_gets_another_id)
{
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, libc_rows = libc_rows_of(&f);
	uint32_t id0, id1;

	maps_open(&f, (uint32_t)libc_rows + 16);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(add_part(u, &f, 100, "/libc.so"), 0);
	id0 = table_of(&f, 100, (uint64_t)(uintptr_t)&printf);
	ck_assert_uint_ne(id0, STKREC_UW_NO_TABLE);
	unwinder__remove_process(u, 100);
	/* libc's evicted for ld.so's, and its saved rows dropped. */
	ck_assert_int_eq(add_part(u, &f, 200, "/ld-linux"), 0);
	unwinder__remove_process(u, 200);
	ck_assert_uint_gt(unwinder__shrink(u, UINT64_MAX), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_ge(st.evicted, 1);
	ck_assert_int_eq(add_part(u, &f, 300, "/libc.so"), 0);
	{
		struct unwinder_stats st2;

		unwinder__stats(u, &st2);
		ck_assert_uint_eq(st2.tables_built, st.tables_built + 1);
		ck_assert_uint_eq(st2.reloaded, 0);
	}
	id1 = table_of(&f, 300, (uint64_t)(uintptr_t)&printf);
	ck_assert_uint_ne(id1, STKREC_UW_NO_TABLE);
	ck_assert_uint_ne(id1, id0);
	ck_assert_int_eq(bpf_style_row(&f, 300, (uint64_t)(uintptr_t)&printf, &r, &rel), 0);
	ck_assert_uint_le(r.pc, rel);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

START_TEST(refused_table_is_not_rebuilt_and_evicts_nothing)
{
	struct unwinder_stats st, st2;
	struct unwinder *u;
	struct fixture f;
	uint64_t libc_rows = libc_rows_of(&f);

	/* Room for ld.so's table, never for libc's. */
	maps_open(&f, (uint32_t)libc_rows - 1);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(add_part(u, &f, 200, "/ld-linux"), 0);
	unwinder__remove_process(u, 200);
	ck_assert_int_eq(add_part(u, &f, 100, "/libc.so"), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.refused_budget, 1);
	/* Evicting the unreferenced tables could not have made the room. */
	ck_assert_uint_eq(st.evicted, 0);
	/* It can never fit: not built, not counted again. */
	ck_assert_int_eq(add_part(u, &f, 101, "/libc.so"), 0);
	unwinder__stats(u, &st2);
	ck_assert_uint_eq(st2.refused_budget, 1);
	ck_assert_uint_eq(st2.tables_built, st.tables_built);
	ck_assert_uint_eq(st2.evicted, 0);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

START_TEST(a_file_not_opened_for_one_process_is_tried_for_the_next)
{
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct stk_proc_maps one;
	struct stk_mapping m;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel;

	maps_open(&f, 1u << 20);
	u = unwinder__new(&f.maps);
	ck_assert_ptr_nonnull(u);
	/* libc, by a path that does not lead to it (the process is gone and
	 * no /proc/PID/map_files of it remains): no table now... */
	m = *libc_mapping(&f.self);
	m.path = "/nonexistent/libc.so.6";
	one = f.self;
	one.mappings = &m;
	one.nr_mappings = 1;
	one.tgid = 1u << 30;
	ck_assert_int_eq(unwinder__add_process(u, &one), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.tables, 0);
	ck_assert_uint_eq(st.open_failed, 1);
	/* ... but the next process mapping it gets one. */
	ck_assert_int_eq(add_part(u, &f, 100, "/libc.so"), 0);
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.tables, 1);
	ck_assert_int_eq(bpf_style_row(&f, 100, (uint64_t)(uintptr_t)&printf, &r, &rel), 0);
	unwinder__free(u);
	maps_close(&f);
}
END_TEST

/* @sym's address in ELF file @path, by nm. */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[4200], line[256], name[64];
	unsigned long long a, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %63s", &a, name) == 2 && strcmp(name, sym) == 0)
			found = a;
	pclose(f);
	ck_assert_msg(found, "%s: no %s", path, sym);
	return found;
}

/*
 * A file whose CFI is only in .debug_frame, stripped into separate
 * debuginfo (mk/unwind.mk's nofpwork_dbgsplit, its debug file under
 * O/tests/unwind/debug/.build-id/): mapped executable here, its table has
 * burn()'s rows when the unwinder looks in that directory, and none
 * (frame pointers there) when it looks nowhere.
 */
START_TEST(debuginfo_by_build_id_gives_debug_frame_rows)
{
	const char *o = check_build_dir();
	char path[4096], dir[4096];
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, burn;
	struct stat sb;
	void *map;
	int fd, pass;

	snprintf(path, sizeof(path), "%s/tests/unwind/nofpwork_dbgsplit", o);
	snprintf(dir, sizeof(dir), "%s/tests/unwind/debug", o);
	burn = nm_addr(path, "burn");
	fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fd, &sb), 0);
	/* The whole file from offset 0: its text's file offsets are its
	 * addresses (a PIE), so burn is at map + burn. */
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_uint_gt((uint64_t)sb.st_size, burn + 8);
	maps_open(&f, 1u << 20);
	for (pass = 0; pass < 2; pass++) {
		u = unwinder__new(&f.maps);
		ck_assert_ptr_nonnull(u);
		unwinder__set_debug_dir(u, pass ? NULL : dir);
		ck_assert_int_eq(add_part(u, &f, 100, "/nofpwork_dbgsplit"), 0);
		unwinder__stats(u, &st);
		ck_assert_uint_eq(st.tables, 1);
		ck_assert_uint_eq(st.debug_frame, pass ? 0 : 1);
		ck_assert_uint_eq(st.debuginfo, pass ? 0 : 1);
		ck_assert_int_eq(bpf_style_row(&f, 100, (uint64_t)(uintptr_t)map + burn + 4, &r, &rel), 0);
		ck_assert_uint_eq(rel, burn + 4);
		if (pass) {
			ck_assert_uint_eq(r.kind, STKREC_UW_NONE);
		} else {
			ck_assert_uint_eq(r.kind, STKREC_UW_CFA_RSP);
			ck_assert_uint_eq(r.cfa_off, 24);
		}
		unwinder__free(u);
	}
	maps_close(&f);
	munmap(map, (size_t)sb.st_size);
	close(fd);
}
END_TEST

/*
 * nofpwork_dbgsplit is nofpwork_dbgframe with its .debug_frame stripped,
 * and keeps its build-id: the table built from the stripped copy (no
 * debuginfo found: no rows for burn()) is cached under that build-id, and
 * must not stand for the file that has the .debug_frame (it once did:
 * unwind_nofp's .debug_frame case then got no rooted sample at all).
 */
START_TEST(a_stripped_copys_cached_table_does_not_stand_for_the_whole_file)
{
	const char *o = check_build_dir();
	char split[4096], whole[4096], cache[] = "/tmp/stk-uwcache.XXXXXX";
	struct unwinder_stats st;
	struct stkrec_unwind_row r;
	struct unwinder *u;
	struct fixture f;
	uint64_t rel, burn;
	struct stat sb;
	size_t size[2];
	char rm[4200];
	void *map[2];
	int fd, i;

	snprintf(split, sizeof(split), "%s/tests/unwind/nofpwork_dbgsplit", o);
	snprintf(whole, sizeof(whole), "%s/tests/unwind/nofpwork_dbgframe", o);
	ck_assert_ptr_nonnull(mkdtemp(cache));
	burn = nm_addr(whole, "burn");
	for (i = 0; i < 2; i++) {
		fd = open(i ? whole : split, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(fstat(fd, &sb), 0);
		size[i] = (size_t)sb.st_size;
		map[i] = mmap(NULL, size[i], PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		ck_assert_ptr_ne(map[i], MAP_FAILED);
		close(fd);
	}
	maps_open(&f, 1u << 20);
	for (i = 0; i < 2; i++) {
		u = unwinder__new(&f.maps);
		ck_assert_ptr_nonnull(u);
		unwinder__set_debug_dir(u, NULL);
		unwinder__set_cache_dir(u, cache);
		ck_assert_int_eq(add_part(u, &f, 100 + i, i ? "/nofpwork_dbgframe" : "/nofpwork_dbgsplit"),
				 0);
		unwinder__stats(u, &st);
		ck_assert_uint_eq(st.debug_frame, i);
		ck_assert_int_eq(bpf_style_row(&f, 100 + i, (uint64_t)(uintptr_t)map[i] + burn + 4, &r,
					       &rel), 0);
		ck_assert_uint_eq(r.kind, i ? STKREC_UW_CFA_RSP : STKREC_UW_NONE);
		unwinder__free(u);
	}
	maps_close(&f);
	for (i = 0; i < 2; i++)
		munmap(map[i], size[i]);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", cache);
	ck_assert_int_eq(system(rm), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_unwinder");
	TCase *tc = tcase_create("core");

	if (check_probed(bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL), "BPF maps"))
		return 77;
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, own_libc_table_gives_printfs_row);
	tcase_add_test(tc, entries_past_their_mappings_are_zero_and_an_exited_process_gets_none);
	tcase_add_test(tc, budget_refuses_then_evicts);
	tcase_add_test(tc, evicted_table_is_reloaded_not_rebuilt);
	tcase_add_test(tc, evicted_table_rebuilt_gets_another_id);
	tcase_add_test(tc, refused_table_is_not_rebuilt_and_evicts_nothing);
	tcase_add_test(tc, a_file_not_opened_for_one_process_is_tried_for_the_next);
	tcase_add_test(tc, debuginfo_by_build_id_gives_debug_frame_rows);
	tcase_add_test(tc, a_stripped_copys_cached_table_does_not_stand_for_the_whole_file);
	suite_add_tcase(s, tc);
	return check_run(s);
}
