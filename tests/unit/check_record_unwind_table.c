// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unwind table builder (record/unwind/unwind_table.c) against binutils: every row
 * `readelf --debug-dump=frames-interp` prints for a file must give the
 * same CFA rule, rbp rule and rbx rule as our table at that row's first
 * address (and mid-row), and addresses between FDEs must have no rule.
 * Run on the -O2 -fomit-frame-pointer fixture (mk/unwind.mk), its static
 * build (no .eh_frame_hdr: the FDEs are scanned), the system libc and
 * ld.so (whose lazy-binding trampolines have their CFA on rbx).
 */
#include <check.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "check_main.h"
#include "unwind_table.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO "/lib64/ld-linux-x86-64.so.2"

static char fixture[4096], nohdr[4096], fx_static[4096], fx_static_hdr[4096], nocfi[4096];
static char dbgframe[4096], dbgsplit[4096], debug_dir[4096], uw_dir[4096];

/* One readelf row: [lo, hi) with its CFA, rbp and ra columns as text. */
struct rrow {
	uint64_t lo, hi;
	char cfa[32], rbp[32], rbx[32], ra[32];
};

/* Our rbx rule agrees with readelf's column @rbx: "c-N" within 14 slots
 * is that slot, any other "c-N" lost; "u" (undefined or never set) is
 * unchanged or lost. */
static int rbx_agrees(const char *rbx, const struct stkrec_unwind_row *u)
{
	if (strncmp(rbx, "c-", 2) == 0) {
		int n = atoi(rbx + 2);

		return n % 8 == 0 && n / 8 < STKREC_UW_RBX_LOST ? u->rbx == n / 8 :
								   u->rbx == STKREC_UW_RBX_LOST;
	}
	if (strcmp(rbx, "u") == 0)
		return u->rbx == 0 || u->rbx == STKREC_UW_RBX_LOST;
	return u->rbx == STKREC_UW_RBX_LOST;
}

struct golden {
	uint64_t rows, checked, gaps;
	uint64_t mismatches;
	char first_bad[320];
};

/* Compare one readelf row with our table at @pc. */
static void compare(struct golden *g, const struct unwind_table *t, const struct rrow *r,
		    uint64_t pc)
{
	const struct stkrec_unwind_row *u = unwind_table__lookup(t, pc);
	char want[160];
	int ok = 1;

	g->checked++;
	snprintf(want, sizeof(want), "cfa %s rbp %s rbx %s ra %s", r->cfa, r->rbp, r->rbx, r->ra);
	if (!u) {
		ok = 0;
	} else if (strcmp(r->ra, "u") == 0) {
		ok = u->kind == STKREC_UW_END;
	} else if (strncmp(r->ra, "r5", 2) == 0 && (r->ra[2] == 0 || r->ra[2] == ' ') &&
		   strncmp(r->cfa, "rsp+", 4) == 0 &&
		   (strcmp(r->rbp, "u") == 0 || strncmp(r->rbp, "c-", 2) == 0)) {
		/* The return address in rdi (glibc's __vfork). */
		ok = u->kind == STKREC_UW_RA_RDI && u->cfa_off == atoi(r->cfa + 4);
	} else if (strcmp(r->ra, "c-8") != 0 && strcmp(r->cfa, "exp") != 0) {
		/* The return address elsewhere (another register): refused. */
		ok = u->kind == STKREC_UW_UNSUPPORTED;
	} else if (strncmp(r->cfa, "rsp+", 4) == 0 || strncmp(r->cfa, "rbp+", 4) == 0 ||
		   strncmp(r->cfa, "rbx+", 4) == 0) {
		int kind = r->cfa[1] == 's' ? STKREC_UW_CFA_RSP :
			   r->cfa[2] == 'x' ? STKREC_UW_CFA_RBX : STKREC_UW_CFA_RBP;

		ok = u->kind == kind && u->cfa_off == atoi(r->cfa + 4) && rbx_agrees(r->rbx, u);
		if (ok && strncmp(r->rbp, "c-", 2) == 0)
			ok = u->rbp_off * 8 == -atoi(r->rbp + 2);
		else if (ok && strcmp(r->rbp, "u") == 0)
			ok = u->rbp_off == 0 || u->rbp_off == STKREC_UW_RBP_LOST;
		else if (ok)
			ok = u->kind == STKREC_UW_UNSUPPORTED;
	} else if (strcmp(r->cfa, "exp") == 0) {
		/* An expression: one of the shapes we evaluate, or refused. */
		ok = u->kind == STKREC_UW_PLT || u->kind == STKREC_UW_SIGNAL ||
		     u->kind == STKREC_UW_CFA_RBP_DEREF || u->kind == STKREC_UW_UNSUPPORTED;
	} else {
		/* CFA on another register (r10 while realigning): refused. */
		ok = u->kind == STKREC_UW_UNSUPPORTED;
	}
	if (!ok && !g->mismatches++)
		snprintf(g->first_bad, sizeof(g->first_bad),
			 "at 0x%llx readelf says %s, table says kind %d cfa_off %d rbp_off %d rbx %d",
			 (unsigned long long)pc, want, u ? u->kind : -1, u ? u->cfa_off : 0,
			 u ? u->rbp_off : 0, u ? u->rbx : 0);
}

/* Column @name's index among the header's words. */
static int column(const char *hdr, const char *name)
{
	char buf[1024], *tok, *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", hdr);
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++)
		if (strcmp(tok, name) == 0)
			return i;
	return -1;
}

/* Word @col of a row; "r10 (r10)" is one word (a register rule), and a
 * wide CFA may push the columns off the header's alignment. */
static void field(const char *line, int col, char *out, size_t size)
{
	char buf[1024], *tok, *save = NULL;
	int i = -1;

	snprintf(out, size, "u");
	if (col < 0)
		return;
	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (tok[0] == '(')
			continue; /* the second half of "r10 (r10)" */
		if (++i == col) {
			snprintf(out, size, "%s", tok);
			return;
		}
	}
}

/* Flush one FDE's rows (or the CIE's initial row when it has none). */
static void fde_done(struct golden *g, const struct unwind_table *t, struct rrow *rows, size_t n,
		     uint64_t lo, uint64_t hi, const struct rrow *cie)
{
	size_t i;

	if (n == 0 && cie) {
		rows[0] = *cie;
		rows[0].lo = lo;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		rows[i].hi = i + 1 < n ? rows[i + 1].lo : hi;
		if (rows[i].hi <= rows[i].lo)
			continue;
		g->rows++;
		compare(g, t, &rows[i], rows[i].lo);
		compare(g, t, &rows[i], rows[i].lo + (rows[i].hi - rows[i].lo) / 2);
	}
}

static struct golden run_golden(const char *path, struct unwind_table *t)
{
	static struct rrow rows[4096];
	struct rrow cies[64], *cie = NULL;
	uint64_t cie_offs[64], lo = 0, hi = 0, prev_hi = 0;
	size_t nr = 0, ncies = 0, k;
	int in_fde = 0, in_cie = 0, c_cfa = -1, c_rbp = -1, c_rbx = -1, c_ra = -1;
	struct golden g = { 0 };
	char cmd[4200], line[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, a, b, cieoff;

		if (sscanf(line, "%llx %*x %*x FDE cie=%llx pc=%llx..%llx", &off, &cieoff, &a, &b) ==
		    4) {
			if (in_fde)
				fde_done(&g, t, rows, nr, lo, hi, cie);
			/* The gap before this FDE has no rule (but the
			 * one glibc's clone leaves after its syscall). */
			if (prev_hi && a > prev_hi) {
				const struct stkrec_unwind_row *u = unwind_table__lookup(t, prev_hi);

				g.gaps++;
				if ((!u || (u->kind != STKREC_UW_NONE &&
					    (u->kind != STKREC_UW_CLONE || a - prev_hi > 16))) &&
				    !g.mismatches++)
					snprintf(g.first_bad, sizeof(g.first_bad),
						 "gap at 0x%llx has kind %d", (unsigned long long)prev_hi,
						 u ? u->kind : -1);
			}
			cie = NULL;
			for (k = 0; k < ncies; k++)
				if (cie_offs[k] == cieoff)
					cie = &cies[k];
			lo = a;
			hi = b;
			if (b > prev_hi)
				prev_hi = b;
			nr = 0;
			in_fde = 1;
			in_cie = 0;
			continue;
		}
		if (sscanf(line, "%llx %*x %*x CIE", &off) == 1 && strstr(line, " CIE ")) {
			if (in_fde)
				fde_done(&g, t, rows, nr, lo, hi, cie);
			in_fde = 0;
			in_cie = ncies < 64;
			if (in_cie) {
				cie_offs[ncies] = off;
				memset(&cies[ncies], 0, sizeof(cies[0]));
				ncies++;
			}
			continue;
		}
		if (strstr(line, "   LOC ")) {
			c_cfa = column(line, "CFA");
			c_rbp = column(line, "rbp");
			c_rbx = column(line, "rbx");
			c_ra = column(line, "ra");
			continue;
		}
		if (sscanf(line, "%llx", &a) == 1 && line[0] >= '0' && strlen(line) > 17 &&
		    line[16] == ' ') {
			struct rrow r = { .lo = a };

			field(line, c_cfa, r.cfa, sizeof(r.cfa));
			field(line, c_rbp, r.rbp, sizeof(r.rbp));
			field(line, c_rbx, r.rbx, sizeof(r.rbx));
			field(line, c_ra, r.ra, sizeof(r.ra));
			if (in_cie)
				cies[ncies - 1] = r;
			else if (in_fde && nr < 4096)
				rows[nr++] = r;
		}
	}
	if (in_fde)
		fde_done(&g, t, rows, nr, lo, hi, cie);
	pclose(f);
	return g;
}

static void golden_for(const char *path, uint64_t min_rows)
{
	struct unwind_table_stats st;
	struct unwind_table *t;
	struct golden g;

	t = unwind_table__from_file(path);
	ck_assert_msg(t, "%s: %s", path, strerror(errno));
	unwind_table__stats(t, &st);
	g = run_golden(path, t);
	fprintf(stderr, "%s: %llu FDEs, %llu rows (%llu before merging), %llu unsupported, "
			"%llu readelf rows checked at %llu addresses, %llu gaps\n",
		path, (unsigned long long)st.fdes, (unsigned long long)st.rows,
		(unsigned long long)st.rows_raw, (unsigned long long)st.unsupported,
		(unsigned long long)g.rows, (unsigned long long)g.checked,
		(unsigned long long)g.gaps);
	ck_assert_uint_ge(st.rows, min_rows);
	ck_assert_uint_ge(g.rows, min_rows / 2);
	ck_assert_msg(g.mismatches == 0, "%s: %llu mismatches, first %s", path,
		      (unsigned long long)g.mismatches, g.first_bad);
	unwind_table__free(t);
}

START_TEST(fixture_rows_match_readelf)
{
	golden_for(fixture, 10);
}
END_TEST

/* A static glibc program has no .eh_frame_hdr (GCC links static ones
 * without): every one of its ~1000 FDEs, glibc's included, from .eh_frame. */
START_TEST(static_rows_match_readelf)
{
	golden_for(fx_static, 5000);
}
END_TEST

START_TEST(libc_rows_match_readelf)
{
	golden_for(LIBC, 5000);
}
END_TEST

/* ld.so: its _dl_runtime_resolve_* keep their CFA on rbx, saved by the
 * callees (_dl_fixup, the lookup) that a walk crosses to reach them. */
START_TEST(ldso_rows_match_readelf)
{
	struct unwind_table *t = unwind_table__from_file(LDSO);
	struct unwind_table_stats st;

	ck_assert_ptr_nonnull(t);
	unwind_table__stats(t, &st);
	ck_assert_uint_ge(st.cfa_rbx, 1);
	unwind_table__free(t);
	golden_for(LDSO, 1000);
}
END_TEST

/* The fixture's own functions, by address from its symbol table: burn()
 * runs with CFA = rsp + 24 after its "sub $0x10,%rsp", alpha with +16;
 * _start's CFI ends the stack.  In the static build glibc's
 * __libc_start_call_main (which calls main) has rows too. */
static void known_rules(const char *path, int want)
{
	struct unwind_table *t = unwind_table__from_file(path);
	const struct stkrec_unwind_row *u;
	char cmd[4200], line[256];
	unsigned long long addr;
	char name[64];
	int seen = 0;
	FILE *f;

	ck_assert_msg(t, "%s: %s", path, strerror(errno));
	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*s %63s", &addr, name) != 2)
			continue;
		if (strcmp(name, "burn") == 0) {
			u = unwind_table__lookup(t, addr);
			ck_assert_ptr_nonnull(u);
			ck_assert_int_eq(u->kind, STKREC_UW_CFA_RSP);
			ck_assert_int_eq(u->cfa_off, 8);
			u = unwind_table__lookup(t, addr + 4);
			ck_assert_int_eq(u->kind, STKREC_UW_CFA_RSP);
			ck_assert_int_eq(u->cfa_off, 24);
			seen |= 1;
		} else if (strcmp(name, "alpha") == 0) {
			u = unwind_table__lookup(t, addr + 4);
			ck_assert_int_eq(u->kind, STKREC_UW_CFA_RSP);
			ck_assert_int_eq(u->cfa_off, 16);
			seen |= 2;
		} else if (strcmp(name, "_start") == 0) {
			u = unwind_table__lookup(t, addr + 4);
			ck_assert_int_eq(u->kind, STKREC_UW_END);
			seen |= 4;
		} else if (strcmp(name, "__libc_start_call_main") == 0) {
			u = unwind_table__lookup(t, addr);
			ck_assert_ptr_nonnull(u);
			ck_assert_int_eq(u->kind, STKREC_UW_CFA_RSP);
			ck_assert_int_eq(u->cfa_off, 8);
			seen |= 8;
		}
	}
	pclose(f);
	ck_assert_int_eq(seen, want);
	unwind_table__free(t);
}

START_TEST(fixture_known_rules)
{
	known_rules(fixture, 7);
}
END_TEST

START_TEST(static_known_rules)
{
	known_rules(fx_static, 15);
}
END_TEST

/* @a and @b have the same rows. */
static void rows_equal(const struct unwind_table *a, const struct unwind_table *b)
{
	const struct stkrec_unwind_row *ra, *rb;
	size_t na, nb;

	ra = unwind_table__rows(a, &na);
	rb = unwind_table__rows(b, &nb);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(ra, rb, na * sizeof(*ra));
}

/* Scanning .eh_frame gives the rows .eh_frame_hdr's list gives: the
 * fixtures linked with and without it have their code at the same
 * addresses, so the tables are equal row for row. */
static void same_rows(const char *with_hdr, const char *without)
{
	struct unwind_table *a = unwind_table__from_file(with_hdr);
	struct unwind_table *b = unwind_table__from_file(without);
	struct unwind_table_stats sa, sb;

	ck_assert_msg(a, "%s: %s", with_hdr, strerror(errno));
	ck_assert_msg(b, "%s: %s", without, strerror(errno));
	unwind_table__stats(a, &sa);
	unwind_table__stats(b, &sb);
	ck_assert_uint_eq(sa.scanned, 0);
	ck_assert_uint_eq(sb.scanned, 1);
	ck_assert_uint_eq(sb.fdes_skipped, 0);
	ck_assert_uint_eq(sa.fdes, sb.fdes);
	rows_equal(a, b);
	unwind_table__free(a);
	unwind_table__free(b);
}

START_TEST(nohdr_rows_equal_hdr_rows)
{
	same_rows(fixture, nohdr);
	same_rows(fx_static_hdr, fx_static);
}
END_TEST

/* The fixture's bytes (malloc'd), and its .eh_frame's offset and size. */
static char *load_image(const char *path, size_t *size, size_t *eh_off, size_t *eh_size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	char *img;
	Elf *elf;
	FILE *f;
	long n;

	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	*size = (size_t)n;
	rewind(f);
	img = malloc(*size);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_eq(fread(img, 1, *size, f), *size);
	fclose(f);
	elf_version(EV_CURRENT);
	elf = elf_memory(img, *size);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	*eh_size = 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", ".eh_frame") == 0) {
			*eh_off = sh.sh_offset;
			*eh_size = sh.sh_size;
		}
	elf_end(elf);
	ck_assert_uint_gt(*eh_size, 0);
	return img;
}

/* An .eh_frame_hdr without its table (ld writes one when it cannot sort
 * .eh_frame: fde_count's encoding DW_EH_PE_omit): the FDEs are scanned,
 * the same rows.  The fixture in memory, that byte changed. */
START_TEST(hdr_without_table_is_scanned)
{
	struct unwind_table *a = unwind_table__from_file(fixture), *b;
	size_t size, nph, i, eh_off, eh_size;
	struct unwind_table_stats st;
	GElf_Phdr ph;
	char *img;
	Elf *elf;

	ck_assert_ptr_nonnull(a);
	img = load_image(fixture, &size, &eh_off, &eh_size);
	elf = elf_memory(img, size);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getphdrnum(elf, &nph), 0);
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			break;
	ck_assert_uint_lt(i, nph);
	elf_end(elf);
	ck_assert_int_eq(img[ph.p_offset + 2], DW_EH_PE_udata4);
	img[ph.p_offset + 2] = (char)DW_EH_PE_omit;
	elf = elf_memory(img, size);
	b = unwind_table__from_elf(elf);
	ck_assert_msg(b, "%s: %s", fixture, strerror(errno));
	unwind_table__stats(b, &st);
	ck_assert_uint_eq(st.scanned, 1);
	rows_equal(a, b);
	unwind_table__free(a);
	unwind_table__free(b);
	elf_end(elf);
	free(img);
}
END_TEST

/*
 * An FDE whose program names register 243385044 (fuzz_unwind_table found
 * it: libdw sized every frame's register array by it, 3.8 GB and 105 s
 * of a root recorder): refused before libdw runs it, at once.  The
 * fixture's first FDE with room gets DW_CFA_offset_extended r243385044
 * in place of its program (GCC's: "zR", pcrel sdata4, no augmentation
 * data, so the program is 9 bytes into the FDE's body).
 */
START_TEST(huge_register_is_refused)
{
	const unsigned char *ident;
	size_t size, eh_off = 0, eh_size = 0, i;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	Elf_Data d = { 0 };
	uint8_t *prog = NULL, *end = NULL;
	char *img = load_image(fixture, &size, &eh_off, &eh_size);
	struct unwind_table *t;
	Elf *elf;

	ident = (const unsigned char *)img;
	d.d_buf = img + eh_off;
	d.d_size = eh_size;
	while (off < (Dwarf_Off)eh_size && dwarf_next_cfi(ident, &d, true, off, &next, &e) == 0) {
		if (!dwarf_cfi_cie_p(&e) && e.fde.end - e.fde.start >= 9 + 7) {
			prog = (uint8_t *)e.fde.start + 9;
			end = (uint8_t *)e.fde.end;
			break;
		}
		off = next;
	}
	ck_assert_ptr_nonnull(prog);
	ck_assert_int_eq(prog[-1], 0); /* augmentation data length */
	/* DW_CFA_offset_extended, ULEB 243385044, ULEB 0, then nops. */
	prog[0] = DW_CFA_offset_extended;
	prog[1] = 0xd4; prog[2] = 0x85; prog[3] = 0x87; prog[4] = 0x74; prog[5] = 0x00;
	for (i = 6; prog + i < end; i++)
		prog[i] = DW_CFA_nop;
	elf = elf_memory(img, size);
	errno = 0;
	t = unwind_table__from_elf(elf);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(errno, EBADMSG);
	elf_end(elf);
	free(img);
}
END_TEST

/* Hostile CFI (tests/unwind/cfi_*.s, the review's): refused before libdw
 * runs any of it, however the file hides it. */
static void refused(const char *path, struct unwind_table *t)
{
	ck_assert_msg(!t, "%s: a table was built from hostile CFI", path);
	ck_assert_msg(errno == EBADMSG, "%s: %s", path, strerror(errno));
}

START_TEST(hostile_cfi_is_refused)
{
	static const char *const names[] = { "cfi_bigreg", "cfi_remember", "cfi_aligned",
					     "cfi_hiddencie" };
	char path[4200];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", uw_dir, names[i]);
		errno = 0;
		refused(path, unwind_table__from_file(path));
	}
}
END_TEST

/* cfi_bigreg with its .eh_frame's section type SHT_X86_64_UNWIND (libdw
 * takes any type but NOBITS), renamed, without a section name table, then
 * with no section headers at all (libdw finds .eh_frame through
 * .eh_frame_hdr). */
START_TEST(hidden_hostile_cfi_is_refused)
{
	size_t size, eh_off = 0, eh_size = 0, shstrndx, i;
	char path[4200], *img;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf *elf;

	snprintf(path, sizeof(path), "%s/cfi_bigreg", uw_dir);
	img = load_image(path, &size, &eh_off, &eh_size);
	eh = (Elf64_Ehdr *)img;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	shstrndx = eh->e_shstrndx;
	for (i = 0; i < eh->e_shnum; i++)
		if (strcmp(img + sh[shstrndx].sh_offset + sh[i].sh_name, ".eh_frame") == 0)
			sh[i].sh_type = SHT_X86_64_UNWIND;
	elf = elf_memory(img, size);
	errno = 0;
	refused("cfi_bigreg, .eh_frame as SHT_X86_64_UNWIND", unwind_table__from_elf(elf));
	elf_end(elf);
	/* Renamed: no section named .eh_frame, libdw then reads what
	 * PT_GNU_EH_FRAME points at; and no section name table at all. */
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_X86_64_UNWIND) {
			sh[i].sh_type = SHT_PROGBITS;
			img[sh[shstrndx].sh_offset + sh[i].sh_name + 8] = 'X';
		}
	elf = elf_memory(img, size);
	errno = 0;
	refused("cfi_bigreg, .eh_frame renamed .eh_framX", unwind_table__from_elf(elf));
	elf_end(elf);
	eh->e_shstrndx = 0;
	elf = elf_memory(img, size);
	errno = 0;
	refused("cfi_bigreg, e_shstrndx 0", unwind_table__from_elf(elf));
	elf_end(elf);
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	elf = elf_memory(img, size);
	errno = 0;
	refused("cfi_bigreg without section headers", unwind_table__from_elf(elf));
	elf_end(elf);
	free(img);
}
END_TEST

/* A build past its CPU budget is given up (ETIME), not left to run: libc
 * takes ~10 ms, the budget here is 1 us. */
START_TEST(over_budget_is_given_up)
{
	struct unwind_table *t;

	unwind_table__set_budget(1000);
	errno = 0;
	t = unwind_table__from_file(LIBC);
	unwind_table__set_budget(0);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(errno, ETIME);
	t = unwind_table__from_file(LIBC);
	ck_assert_ptr_nonnull(t);
	unwind_table__free(t);
}
END_TEST

/* -fno-asynchronous-unwind-tables -g: the program's CFI is in .debug_frame
 * (GCC's is as precise as .eh_frame's), crt1.o's in .eh_frame; both make
 * the table nofpwork's own .eh_frame makes, at the same addresses. */
START_TEST(debug_frame_rows_equal_eh_frame_rows)
{
	struct unwind_table *a = unwind_table__from_file(fixture);
	struct unwind_table *b = unwind_table__from_file(dbgframe);
	struct unwind_table_stats sa, sb;

	ck_assert_msg(b, "%s: %s", dbgframe, strerror(errno));
	ck_assert_ptr_nonnull(a);
	unwind_table__stats(a, &sa);
	unwind_table__stats(b, &sb);
	ck_assert_uint_eq(sa.debug_frame_fdes, 0);
	ck_assert_uint_ge(sb.debug_frame_fdes, 10);
	ck_assert_uint_eq(sa.fdes, sb.fdes);
	rows_equal(a, b);
	unwind_table__free(a);
	unwind_table__free(b);
}
END_TEST

START_TEST(debug_frame_rows_match_readelf)
{
	golden_for(dbgframe, 10);
}
END_TEST

/* The path of @path's separate debuginfo under debug_dir, by build-id. */
static void debug_path(const char *path, char *out, size_t size)
{
	char cmd[4200], line[512], *id = NULL;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if ((id = strstr(line, "Build ID: "))) {
			id += strlen("Build ID: ");
			id[strcspn(id, "\n")] = 0;
			break;
		}
	pclose(f);
	ck_assert_msg(id && strlen(id) > 2, "%s: no build-id", path);
	snprintf(out, size, "%s/.build-id/%.2s/%s.debug", debug_dir, id, id + 2);
}

/* Stripped, its .debug_frame is in the debug file: without it only crt1's
 * rows (none for burn), with it nofpwork's table again. */
START_TEST(debuginfo_debug_frame_is_used)
{
	struct unwind_table *a = unwind_table__from_file(fixture), *b, *c;
	const struct stkrec_unwind_row *u;
	struct unwind_table_stats st;
	char dpath[8192];
	Elf *elf, *debug;
	int fd, dfd;

	ck_assert_ptr_nonnull(a);
	b = unwind_table__from_file(dbgsplit);
	ck_assert_msg(b, "%s: %s", dbgsplit, strerror(errno));
	unwind_table__stats(b, &st);
	ck_assert_uint_eq(st.debug_frame_fdes, 0);
	u = unwind_table__lookup(b, 0x13e0 + 4); /* burn, as nm says */
	ck_assert(!u || u->kind == STKREC_UW_NONE);

	debug_path(dbgsplit, dpath, sizeof(dpath));
	fd = open(dbgsplit, O_RDONLY);
	dfd = open(dpath, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(dfd >= 0, "%s: %s", dpath, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	debug = elf_begin(dfd, ELF_C_READ, NULL);
	ck_assert_int_eq(unwind_table__has_debug_frame(elf), 0);
	ck_assert_int_eq(unwind_table__has_debug_frame(debug), 1);
	c = unwind_table__from_elf_debug(elf, debug);
	ck_assert_msg(c, "%s: %s", dpath, strerror(errno));
	unwind_table__stats(c, &st);
	ck_assert_uint_ge(st.debug_frame_fdes, 10);
	rows_equal(a, c);
	elf_end(debug);
	elf_end(elf);
	close(dfd);
	close(fd);
	unwind_table__free(a);
	unwind_table__free(b);
	unwind_table__free(c);
}
END_TEST

START_TEST(libc_plt_signal_frame_vfork_and_clone)
{
	struct unwind_table *t = unwind_table__from_file(LIBC);
	struct unwind_table_stats st;

	ck_assert_ptr_nonnull(t);
	unwind_table__stats(t, &st);
	/* libc's .plt has GCC's expression; __restore_rt is a signal frame;
	 * __vfork keeps its return address in rdi. */
	ck_assert_uint_ge(st.plt, 1);
	ck_assert_uint_ge(st.signal, 1);
	ck_assert_uint_ge(st.ra_rdi, 1);
	/* clone's and clone3's syscalls, each before its child's CFI. */
	ck_assert_uint_eq(st.clone, 2);
	unwind_table__free(t);
}
END_TEST

/* ld.so's entry code (_start, _dl_start_user) has no CFI: the table ends
 * the stack there, up to the next FDE; the fixture's _start has its own
 * CFI (return address undefined), left as it is. */
START_TEST(entry_without_cfi_ends_the_stack)
{
	struct unwind_table *t = unwind_table__from_file(LDSO);
	const struct stkrec_unwind_row *u, *before;
	struct unwind_table_stats st;
	uint64_t entry, a;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	ck_assert_msg(t, "%s: %s", LDSO, strerror(errno));
	fd = open(LDSO, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(gelf_getehdr(elf, &eh));
	entry = eh.e_entry;
	elf_end(elf);
	close(fd);
	unwind_table__stats(t, &st);
	ck_assert_uint_eq(st.entry, 1);
	before = unwind_table__lookup(t, entry - 1);
	ck_assert_ptr_nonnull(before);
	ck_assert_int_ne(before->kind, STKREC_UW_END);
	/* From the entry to the next FDE (at most 256 bytes): END. */
	u = unwind_table__lookup(t, entry);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(u->kind, STKREC_UW_END);
	ck_assert_uint_eq(u->pc, entry);
	for (a = entry; a < entry + 256 && unwind_table__lookup(t, a) == u; a++)
		;
	ck_assert_uint_gt(a, entry + 0x30); /* past _dl_start_user's call of _dl_init */
	u = unwind_table__lookup(t, a);
	ck_assert_int_ne(u->kind, STKREC_UW_END);
	unwind_table__free(t);

	t = unwind_table__from_file(fixture);
	ck_assert_ptr_nonnull(t);
	unwind_table__stats(t, &st);
	ck_assert_uint_eq(st.entry, 0);
	unwind_table__free(t);
}
END_TEST

START_TEST(no_cfi_is_enoent)
{
	errno = 0;
	ck_assert_ptr_null(unwind_table__from_file(nocfi));
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_ptr_null(unwind_table__from_file("/etc/hostname"));
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_ptr_null(unwind_table__from_file("/nonexistent/x"));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

int main(void)
{
	const char *o = check_build_dir();
	Suite *s = suite_create("record_unwind_table");
	TCase *tc = tcase_create("core");

	snprintf(fixture, sizeof(fixture), "%s/tests/unwind/nofpwork", o);
	snprintf(nohdr, sizeof(nohdr), "%s/tests/unwind/nofpwork_nohdr", o);
	snprintf(fx_static, sizeof(fx_static), "%s/tests/unwind/nofpwork_static", o);
	snprintf(fx_static_hdr, sizeof(fx_static_hdr), "%s/tests/unwind/nofpwork_static_hdr", o);
	snprintf(nocfi, sizeof(nocfi), "%s/tests/unwind/nofpwork_nocfi", o);
	snprintf(dbgframe, sizeof(dbgframe), "%s/tests/unwind/nofpwork_dbgframe", o);
	snprintf(dbgsplit, sizeof(dbgsplit), "%s/tests/unwind/nofpwork_dbgsplit", o);
	snprintf(debug_dir, sizeof(debug_dir), "%s/tests/unwind/debug", o);
	snprintf(uw_dir, sizeof(uw_dir), "%s/tests/unwind", o);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fixture_rows_match_readelf);
	tcase_add_test(tc, libc_rows_match_readelf);
	tcase_add_test(tc, ldso_rows_match_readelf);
	tcase_add_test(tc, static_rows_match_readelf);
	tcase_add_test(tc, fixture_known_rules);
	tcase_add_test(tc, static_known_rules);
	tcase_add_test(tc, nohdr_rows_equal_hdr_rows);
	tcase_add_test(tc, hdr_without_table_is_scanned);
	tcase_add_test(tc, debug_frame_rows_equal_eh_frame_rows);
	tcase_add_test(tc, debug_frame_rows_match_readelf);
	tcase_add_test(tc, debuginfo_debug_frame_is_used);
	tcase_add_test(tc, libc_plt_signal_frame_vfork_and_clone);
	tcase_add_test(tc, no_cfi_is_enoent);
	tcase_add_test(tc, entry_without_cfi_ends_the_stack);
	tcase_add_test(tc, huge_register_is_refused);
	tcase_add_test(tc, hostile_cfi_is_refused);
	tcase_add_test(tc, hidden_hostile_cfi_is_refused);
	tcase_add_test(tc, over_budget_is_given_up);
	suite_add_tcase(s, tc);
	return check_run(s);
}
