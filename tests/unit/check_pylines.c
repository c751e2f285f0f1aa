// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_pylines: report/python/pylines.h against CPython itself.  The
 * fixtures (tests/fixtures/pylines/, from tests/python/gen_linetables.py run
 * by CPython 3.8-3.13 and the system's python3) hold real code objects' line
 * tables and the line CPython gives every instruction offset; each must
 * decode to exactly that.  Then damage: every cut of every fixture table
 * and byte overwrites (run under ASan+UBSan, in exact-size buffers, so a
 * read past the table is caught), and hand-made tables for each format's
 * forms and each error.  $STK_PYLINES_FIXTURES names another directory of
 * fixtures (tests/e2e/pylines_live.sh: made by the interpreters here).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "pylines.h"

#define FX_DIR "tests/fixtures/pylines"
#define NO_LINE UINT32_MAX	/* a fixture's "-": CPython has no line there */

struct block {
	uint32_t version, firstlineno;
	char name[128];
	uint8_t *table;
	size_t size;
	uint32_t *lines;	/* per offset: the line, or NO_LINE */
	size_t n;
};

struct fixtures {
	struct block *b;
	size_t n;
	unsigned int files;
	uint32_t versions;	/* bit (minor - 8) per version seen */
};

static struct fixtures fx;

static const char *fx_dir(void)
{
	const char *d = getenv("STK_PYLINES_FIXTURES");

	return d && d[0] ? d : FX_DIR;
}

static void parse_hex(struct block *b, const char *hex, const char *where)
{
	size_t len = strcspn(hex, " \n"), i;

	if (len == 1 && hex[0] == '-')
		return;
	ck_assert_msg(len % 2 == 0, "%s: odd hex", where);
	b->size = len / 2;
	b->table = malloc(b->size ? b->size : 1);
	ck_assert_ptr_nonnull(b->table);
	for (i = 0; i < b->size; i++) {
		unsigned int v;

		ck_assert_msg(sscanf(hex + 2 * i, "%2x", &v) == 1, "%s: bad hex", where);
		b->table[i] = v;
	}
}

static void parse_lines(struct block *b, char *s, const char *where)
{
	char *tok, *save = NULL;
	size_t n = 0;

	b->n = strtoul(s, &s, 10);
	b->lines = calloc(b->n ? b->n : 1, sizeof(*b->lines));
	ck_assert_ptr_nonnull(b->lines);
	for (tok = strtok_r(s, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *star = strchr(tok, '*');
		unsigned long count, i;
		uint32_t line;

		ck_assert_msg(star, "%s: run without count: %s", where, tok);
		line = tok[0] == '-' ? NO_LINE : (uint32_t)strtoul(tok, NULL, 10);
		count = strtoul(star + 1, NULL, 10);
		ck_assert_msg(n + count <= b->n, "%s: runs past %zu offsets", where, b->n);
		for (i = 0; i < count; i++)
			b->lines[n++] = line;
	}
	ck_assert_msg(n == b->n, "%s: runs cover %zu of %zu offsets", where, n, b->n);
}

static void load_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	struct block *b = NULL;
	unsigned int lineno = 0;

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	while (getline(&buf, &cap, f) > 0) {
		char where[4200];

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (buf[0] == '#' || buf[0] == '\n')
			continue;
		if (!strncmp(buf, "code ", 5)) {
			fx.b = realloc(fx.b, (fx.n + 1) * sizeof(*fx.b));
			ck_assert_ptr_nonnull(fx.b);
			b = &fx.b[fx.n++];
			memset(b, 0, sizeof(*b));
			ck_assert_msg(sscanf(buf + 5, "%x %u %127s", &b->version, &b->firstlineno,
					     b->name) == 3, "%s: bad code line", where);
			ck_assert_msg(b->version >= 0x0308 && b->version <= 0x030d, "%s: version %x",
				      where, b->version);
			fx.versions |= 1u << (b->version - 0x0308);
		} else if (!strncmp(buf, "table ", 6)) {
			ck_assert_msg(b && !b->table && !b->lines, "%s: table out of place", where);
			parse_hex(b, buf + 6, where);
		} else if (!strncmp(buf, "lines ", 6)) {
			ck_assert_msg(b && !b->lines, "%s: lines out of place", where);
			parse_lines(b, buf + 6, where);
		} else {
			ck_abort_msg("%s: unknown line", where);
		}
	}
	ck_assert_msg(b && b->lines, "%s: no complete code block", path);
	free(buf);
	fclose(f);
	fx.files++;
}

/* Every *.txt of the fixture directory, once per process. */
static void load_fixtures(void)
{
	const char *dir = fx_dir();
	struct dirent *e;
	DIR *d;

	if (fx.n)
		return;
	d = opendir(dir);
	ck_assert_msg(d, "%s: %s (run from the source tree's top)", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[4096];

		if (len < 5 || strcmp(e->d_name + len - 4, ".txt"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		load_file(path);
	}
	closedir(d);
	ck_assert_msg(fx.n, "%s: no fixtures", dir);
}

/* The table of @b, @size bytes of it, in a buffer of exactly that size. */
static uint8_t *exact_copy(const struct block *b, size_t size)
{
	uint8_t *t = malloc(size ? size : 1);

	ck_assert_ptr_nonnull(t);
	if (size)
		memcpy(t, b->table, size);
	return t;
}

/*
 * pylines__line with the result folded into one value: a line, or -errno.
 * Plain tests in the loops, not ck_assert: each of those tells Check's
 * parent process where the test got to, a write per assertion.
 */
static int64_t decode(const struct block *b, const uint8_t *t, size_t size, uint32_t off)
{
	uint32_t line = 0xdeadbeef;
	int err = pylines__line(b->version, b->firstlineno, t, size, off, &line);

	if (err && line != 0xdeadbeef)
		ck_abort_msg("%x offset %u: %d, and *line set to %u", b->version, off, err, line);
	if (!err && line > INT32_MAX)
		ck_abort_msg("%x offset %u: line %u", b->version, off, line);
	return err ? (int64_t)err : (int64_t)line;
}

static int64_t truth(const struct block *b, size_t off)
{
	return b->lines[off] == NO_LINE ? -ENOENT : (int64_t)b->lines[off];
}

START_TEST(every_offset_decodes_to_cpythons_line)
{
	size_t i, off, offsets = 0, no_line = 0, bad = 0;

	load_fixtures();
	for (i = 0; i < fx.n; i++) {
		const struct block *b = &fx.b[i];
		uint8_t *t = exact_copy(b, b->size);

		for (off = 0; off < b->n; off++) {
			int64_t got = decode(b, t, b->size, off), want = truth(b, off);

			offsets++;
			no_line += want == -ENOENT;
			if (got != want && bad++ < 10)
				fprintf(stderr, "%x %s:%u offset %zu: got %lld, CPython %lld\n",
					b->version, b->name, b->firstlineno, off, (long long)got,
					(long long)want);
		}
		/* 3.10+ tables end with the bytecode: past them, no line. */
		if (b->version >= 0x030a) {
			ck_assert_int_eq(decode(b, t, b->size, b->n), -ENOENT);
			ck_assert_int_eq(decode(b, t, b->size, b->n + 1000), -ENOENT);
		}
		ck_assert_int_eq(decode(b, t, b->size, PYLINES_OFFSET_UNKNOWN), -ENOENT);
		free(t);
	}
	fprintf(stderr, "check_pylines: %zu code objects, %zu offsets (%zu without a line) in %u"
		" fixture files, %zu disagree\n", fx.n, offsets, no_line, fx.files, bad);
	ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The committed fixtures cover every version, and the forms worth having. */
START_TEST(committed_fixtures_cover_every_version)
{
	size_t i, big_tables = 0, no_line = 0;
	uint32_t kinds = 0;

	if (strcmp(fx_dir(), FX_DIR))
		return;
	load_fixtures();
	ck_assert_uint_eq(fx.versions, 0x3f);
	for (i = 0; i < fx.n; i++) {
		const struct block *b = &fx.b[i];
		size_t j;

		big_tables += b->size > 256;
		for (j = 0; j < b->n; j++)
			no_line += b->lines[j] == NO_LINE;
		/* The location table's kinds: short, one-line, no-column, long, none. */
		for (j = 0; b->version >= 0x030b && j < b->size; j++)
			if (b->table[j] & 0x80)
				kinds |= 1u << ((b->table[j] >> 3) & 15);
	}
	ck_assert_uint_gt(big_tables, 0);
	ck_assert_uint_gt(no_line, 0);
	ck_assert_uint_eq(kinds & 0xfc01, 0xfc01);
}
END_TEST

/*
 * The offsets the damage tests decode: a spread of @b's (all of a short
 * code object's), its last, the first past it, and one past any table,
 * whose decoding reads the whole (damaged) table.  The bytes they cut at or
 * overwrite: each of a table's first DENSE, one in STRIDE after (the few
 * tables of kilobytes, 3.11+'s lines of hundreds of instructions).  Every
 * offset of every cut of those would take minutes under ASan; a read past
 * a buffer happens at its end, which every cut and every walk reaches.
 */
#define SPREAD 48
#define DENSE 512
#define STRIDE 7

static size_t next_pos(size_t pos)
{
	return pos < DENSE ? pos + 1 : pos + STRIDE;
}

static size_t damage_offsets(const struct block *b, uint32_t *off)
{
	size_t step = b->n / SPREAD + 1, n = 0, i;

	for (i = 0; i < b->n; i += step)
		off[n++] = i;
	if (b->n)
		off[n++] = b->n - 1;
	off[n++] = b->n;
	off[n++] = PYLINES_OFFSET_UNKNOWN - 1;
	return n;
}

/*
 * A table cut anywhere: every read stays inside the cut (ASan), and an
 * offset either decodes as before or, from the first one that does not on,
 * gets no line or -EINVAL.  Before 3.10 an odd cut is damage throughout;
 * an even cut of an lnotab is a shorter, valid table.
 */
START_TEST(every_cut_table_stays_in_bounds_and_fails_from_the_cut_on)
{
	uint32_t offs[SPREAD + 4];
	size_t i, cut, k, n;

	load_fixtures();
	for (i = 0; i < fx.n; i++) {
		const struct block *b = &fx.b[i];

		n = damage_offsets(b, offs);
		for (cut = 0; cut < b->size; cut = next_pos(cut)) {
			uint8_t *t = exact_copy(b, cut);
			int failed = 0;

			for (k = 0; k < n; k++) {
				int64_t got = decode(b, t, cut, offs[k]);

				if (b->version < 0x030a) {
					if ((cut & 1) ? got != -EINVAL : got < 0)
						ck_abort_msg("%x %s cut at %zu, offset %u: %lld",
							     b->version, b->name, cut, offs[k],
							     (long long)got);
					continue;
				}
				if (!failed && offs[k] < b->n && got == truth(b, offs[k]))
					continue;
				failed = 1;
				if (got != -ENOENT && got != -EINVAL)
					ck_abort_msg("%x %s cut at %zu, offset %u: %lld", b->version,
						     b->name, cut, offs[k], (long long)got);
			}
			free(t);
		}
	}
}
END_TEST

/*
 * Each byte overwritten with values that break each format differently:
 * any answer but a crash, a read past the table or a line past INT32_MAX
 * (decode() checks the line; ASan the reads).
 */
START_TEST(overwritten_bytes_never_read_out_of_bounds)
{
	static const uint8_t vals[] = { 0x00, 0x40, 0x7f, 0x80, 0xc0, 0xf8, 0xff };
	uint32_t offs[SPREAD + 4];
	size_t i, pos, v, k, n;

	load_fixtures();
	for (i = 0; i < fx.n; i++) {
		const struct block *b = &fx.b[i];
		uint8_t *t = exact_copy(b, b->size);

		n = damage_offsets(b, offs);
		for (pos = 0; pos < b->size; pos = next_pos(pos)) {
			uint8_t keep = t[pos];

			for (v = 0; v < sizeof(vals); v++) {
				t[pos] = vals[v];
				for (k = n - 4; k < n; k++) {
					int64_t got = decode(b, t, b->size, offs[k]);

					if (got < 0 && got != -ENOENT && got != -EINVAL)
						ck_abort_msg("%x %s byte %zu = %#x, offset %u: %lld",
							     b->version, b->name, pos, vals[v], offs[k],
							     (long long)got);
				}
			}
			t[pos] = keep;
		}
		free(t);
	}
}
END_TEST

/* Hand-made tables: exact values for each form, and each error. */
static int64_t line_of(uint32_t version, uint32_t first, const uint8_t *table, size_t size,
		       uint32_t off)
{
	struct block b = { .version = version, .firstlineno = first, .table = (uint8_t *)table };
	uint8_t *t = exact_copy(&b, size);
	int64_t got = decode(&b, t, size, off);

	free(t);
	return got;
}

START_TEST(unknown_versions_are_not_supported)
{
	static const uint32_t versions[] = { 0x0207, 0x0306, 0x0307, 0x030e, 0x0400, 0x0b03 };
	static const uint8_t t[] = { 0x80, 0x00 };
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		ck_assert_int_eq(line_of(versions[i], 1, t, sizeof(t), 0), -ENOTSUP);
}
END_TEST

START_TEST(lnotab_forms)
{
	/* +4 bytes +1 line; +0 bytes +127 lines; +255 bytes -2 lines; odd: damage */
	static const uint8_t t[] = { 0x04, 0x01, 0x00, 0x7f, 0xff, 0xfe };
	uint32_t v;

	for (v = 0x0308; v <= 0x0309; v++) {
		ck_assert_int_eq(line_of(v, 10, t, 0, 0), 10);
		ck_assert_int_eq(line_of(v, 10, NULL, 0, 7), 10);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 0), 10);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 1), 10);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 2), 138);
		/* Byte 259 is code unit 129.5: unit 129 still before the -2. */
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 129), 138);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 130), 136);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 100000), 136);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), PYLINES_OFFSET_UNKNOWN), -ENOENT);
		ck_assert_int_eq(line_of(v, 10, t, 5, 0), -EINVAL);
		/* A line below 0, past INT32_MAX, a firstlineno past it. */
		ck_assert_int_eq(line_of(v, 1, t + 4, 2, 200), -EINVAL);
		ck_assert_int_eq(line_of(v, INT32_MAX, t, 2, 2), -EINVAL);
		ck_assert_int_eq(line_of(v, (uint32_t)INT32_MAX + 1, t, 0, 0), -EINVAL);
	}
}
END_TEST

START_TEST(linetable_310_forms)
{
	/* 4 bytes +1; 0 bytes +127 (a big delta's first part); 254 bytes +3
	 * and its rest, 2 bytes +0; 2 bytes no line; 2 bytes -5. */
	static const uint8_t t[] = { 0x04, 0x01, 0x00, 0x7f, 0xfe, 0x03, 0x02, 0x00,
				     0x02, 0x80, 0x02, 0xfb };
	uint32_t v = 0x030a;

	ck_assert_int_eq(line_of(v, 10, t, 0, 0), -ENOENT);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 0), 11);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 1), 11);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 2), 141);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 128), 141);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 129), 141);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 130), -ENOENT);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 131), 136);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 132), -ENOENT);
	ck_assert_int_eq(line_of(v, 10, t, sizeof(t) - 1, 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 2, t + 10, 2, 0), -EINVAL);
	ck_assert_int_eq(line_of(v, INT32_MAX, t, 2, 0), -EINVAL);
}
END_TEST

START_TEST(location_table_forms)
{
	static const uint8_t t[] = {
		0x81, 0x12,		/* short (columns 0-9), 2 units, same line */
		0xe0, 0x05, 0x40,	/* one line +2, 1 unit, columns 5, 64 */
		0xea, 0x07,		/* no columns, 3 units, -3 */
		0xf7, 0x48, 0x06, 0x00, 0x01, 0x02,	/* long, 8 units, +196 */
		0xf8,			/* no location, 1 unit */
		0x80, 0x00,		/* short, 1 unit */
	};
	uint32_t v, off;

	for (v = 0x030b; v <= 0x030d; v++) {
		ck_assert_int_eq(line_of(v, 10, NULL, 0, 0), -ENOENT);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 0), 10);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 1), 10);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 2), 12);
		for (off = 3; off < 6; off++)
			ck_assert_int_eq(line_of(v, 10, t, sizeof(t), off), 9);
		for (off = 6; off < 14; off++)
			ck_assert_int_eq(line_of(v, 10, t, sizeof(t), off), 205);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 14), -ENOENT);
		/* No location leaves the running line alone. */
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 15), 205);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), 16), -ENOENT);
		ck_assert_int_eq(line_of(v, 10, t, sizeof(t), PYLINES_OFFSET_UNKNOWN), -ENOENT);
		/* The entry holding the offset is read whole; later damage is not seen. */
		ck_assert_int_eq(line_of(v, 10, t, 1, 0), -EINVAL);
		ck_assert_int_eq(line_of(v, 10, t, 2, 0), 10);
		ck_assert_int_eq(line_of(v, 10, t, 3, 0), 10);
		ck_assert_int_eq(line_of(v, 10, t, 3, 2), -EINVAL);
	}
}
END_TEST

START_TEST(location_table_damage)
{
	/* No marker bit on an entry's first byte. */
	static const uint8_t no_marker[] = { 0x80, 0x00, 0x00, 0x00 };
	/* A short form's column byte with bit 7: the next entry's start. */
	static const uint8_t cut_short[] = { 0x80, 0x80, 0x00 };
	/* A varint whose continuation runs off the table. */
	static const uint8_t cut_varint[] = { 0xe8, 0x40 };
	/* Seven chunks: past 32 bits. */
	static const uint8_t long_varint[] = { 0xe8, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x00 };
	/* Six chunks, but more than 32 bits. */
	static const uint8_t wide_varint[] = { 0xe8, 0x40, 0x40, 0x40, 0x40, 0x40, 0x3f };
	/* Line 2 - 5, below 0; line INT32_MAX + 1. */
	static const uint8_t below_zero[] = { 0xe8, 0x0b };
	static const uint8_t past_max[] = { 0xe0, 0x00, 0x00 };
	/* A long form's end columns missing. */
	static const uint8_t cut_long[] = { 0xf0, 0x02, 0x00, 0x01 };
	uint32_t v = 0x030b, line;

	ck_assert_int_eq(line_of(v, 1, no_marker, sizeof(no_marker), 0), 1);
	ck_assert_int_eq(line_of(v, 1, no_marker, sizeof(no_marker), 1), -EINVAL);
	ck_assert_int_eq(line_of(v, 1, cut_short, sizeof(cut_short), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 1, cut_varint, sizeof(cut_varint), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 1, long_varint, sizeof(long_varint), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 1, wide_varint, sizeof(wide_varint), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 2, below_zero, sizeof(below_zero), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, 5, below_zero, sizeof(below_zero), 0), 0);
	ck_assert_int_eq(line_of(v, INT32_MAX - 1, past_max, sizeof(past_max), 0), -EINVAL);
	ck_assert_int_eq(line_of(v, INT32_MAX - 2, past_max, sizeof(past_max), 0), INT32_MAX);
	ck_assert_int_eq(line_of(v, 1, cut_long, sizeof(cut_long), 0), -EINVAL);
	ck_assert_int_eq(pylines__line(v, 1, NULL, 4, 0, &line), -EINVAL);
}
END_TEST

/*
 * Three cases: "truth" (the fixtures' lines; tests/e2e/pylines_live.sh runs
 * it alone, CK_RUN_CASE=truth), "damage" (the fixtures' tables cut and
 * overwritten), "forms" (hand-made tables).
 */
static Suite *pylines_suite(void)
{
	Suite *s = suite_create("pylines");
	TCase *truth = tcase_create("truth");
	TCase *damage = tcase_create("damage");
	TCase *forms = tcase_create("forms");

	tcase_set_timeout(truth, 60);
	tcase_add_test(truth, every_offset_decodes_to_cpythons_line);
	tcase_add_test(truth, committed_fixtures_cover_every_version);
	suite_add_tcase(s, truth);
	tcase_set_timeout(damage, 60);
	tcase_add_test(damage, every_cut_table_stays_in_bounds_and_fails_from_the_cut_on);
	tcase_add_test(damage, overwritten_bytes_never_read_out_of_bounds);
	suite_add_tcase(s, damage);
	tcase_add_test(forms, unknown_versions_are_not_supported);
	tcase_add_test(forms, lnotab_forms);
	tcase_add_test(forms, linetable_310_forms);
	tcase_add_test(forms, location_table_forms);
	tcase_add_test(forms, location_table_damage);
	suite_add_tcase(s, forms);
	return s;
}

int main(void)
{
	return check_run(pylines_suite());
}
