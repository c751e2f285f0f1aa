// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_tcache: unwind tables kept on disk by build-id
 * (record/unwind/tcache.c): what is stored loads back the same; a table
 * damaged, of another build-id, in a directory or file others may write,
 * or behind a symbolic link is not used; the directory is trimmed to its
 * size, oldest first.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "tcache.h"

static char dir[64];
static const uint8_t id1[20] = { 0xab, 1, 2, 3 }, id2[20] = { 0xcd, 9 };

static void make_dir(void)
{
	strcpy(dir, "/tmp/check_tcache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct stkrec_unwind_row *rows_of(size_t n)
{
	struct stkrec_unwind_row *r = calloc(n, sizeof(*r));
	size_t i;

	for (i = 0; i < n; i++)
		r[i] = (struct stkrec_unwind_row){ .pc = 16 * (uint32_t)i + 4, .cfa_off = 8, .kind = 1 };
	return r;
}

static void path_of(char *out, const uint8_t *id)
{
	int i, n = sprintf(out, "%s/", dir);

	for (i = 0; i < 20; i++)
		n += sprintf(out + n, "%02x", id[i]);
	strcpy(out + n, ".uwt");
}

START_TEST(stored_rows_load_back)
{
	struct stkrec_unwind_row *r = rows_of(1000), *got;
	char sub[96];
	uint32_t flags;
	size_t nr;

	make_dir();
	/* A missing directory (and its parent) is made, 0700. */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	ck_assert_int_eq(tcache__load(sub, id1, 20, &got, &nr, &flags), -ENOENT);
	ck_assert_int_eq(tcache__store(sub, id1, 20, r, 1000, 3, TCACHE_MAX_BYTES), 0);
	ck_assert_int_eq(tcache__load(sub, id1, 20, &got, &nr, &flags), 0);
	ck_assert_uint_eq(nr, 1000);
	ck_assert_uint_eq(flags, 3);
	ck_assert_mem_eq(got, r, 1000 * sizeof(*r));
	free(got);
	/* Another build-id has none. */
	ck_assert_int_eq(tcache__load(sub, id2, 20, &got, &nr, &flags), -ENOENT);
	free(r);
	remove_dir();
}
END_TEST

START_TEST(a_damaged_table_is_not_used_and_removed)
{
	struct stkrec_unwind_row *r = rows_of(100), *got;
	char p[160];
	uint32_t flags;
	size_t nr;
	FILE *f;

	make_dir();
	ck_assert_int_eq(tcache__store(dir, id1, 20, r, 100, 0, TCACHE_MAX_BYTES), 0);
	path_of(p, id1);
	f = fopen(p, "r+");
	ck_assert_ptr_nonnull(f);
	fseek(f, -5, SEEK_END);
	fputc(0x5a, f);
	fclose(f);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), -EBADMSG);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(access(p, F_OK), -1);
	/* Cut short: the same. */
	ck_assert_int_eq(tcache__store(dir, id1, 20, r, 100, 0, TCACHE_MAX_BYTES), 0);
	ck_assert_int_eq(truncate(p, 200), 0);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), -EBADMSG);
	free(r);
	remove_dir();
}
END_TEST

START_TEST(what_others_may_write_is_not_used)
{
	struct stkrec_unwind_row *r = rows_of(100), *got;
	char p[160], other[160];
	uint32_t flags;
	size_t nr;

	make_dir();
	ck_assert_int_eq(tcache__store(dir, id1, 20, r, 100, 0, TCACHE_MAX_BYTES), 0);
	path_of(p, id1);
	/* A file others may write. */
	ck_assert_int_eq(chmod(p, 0666), 0);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), -EPERM);
	ck_assert_int_eq(chmod(p, 0600), 0);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), 0);
	free(got);
	/* A directory others may write: neither read nor written. */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), -EPERM);
	ck_assert_int_eq(tcache__store(dir, id2, 20, r, 100, 0, TCACHE_MAX_BYTES), -EPERM);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	/* A symbolic link to a table: not followed. */
	path_of(other, id2);
	ck_assert_int_eq(symlink(p, other), 0);
	ck_assert_int_eq(tcache__load(dir, id2, 20, &got, &nr, &flags), -EPERM);
	free(r);
	remove_dir();
}
END_TEST

START_TEST(the_directory_is_trimmed_oldest_first)
{
	struct stkrec_unwind_row *r = rows_of(1000), *got;
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	char p[160];
	uint32_t flags;
	size_t nr;

	make_dir();
	ck_assert_int_eq(tcache__store(dir, id1, 20, r, 1000, 0, TCACHE_MAX_BYTES), 0);
	path_of(p, id1);
	ck_assert_int_eq(utimensat(AT_FDCWD, p, old, 0), 0);
	/* Room for one table of 1000 rows (8 KB and a header), not two. */
	ck_assert_int_eq(tcache__store(dir, id2, 20, r, 1000, 0, 12000), 0);
	ck_assert_int_eq(tcache__load(dir, id1, 20, &got, &nr, &flags), -ENOENT);
	ck_assert_int_eq(tcache__load(dir, id2, 20, &got, &nr, &flags), 0);
	free(got);
	free(r);
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_tcache");
	TCase *tc = tcase_create("tcache");

	tcase_add_test(tc, stored_rows_load_back);
	tcase_add_test(tc, a_damaged_table_is_not_used_and_removed);
	tcase_add_test(tc, what_others_may_write_is_not_used);
	tcase_add_test(tc, the_directory_is_trimmed_oldest_first);
	suite_add_tcase(s, tc);
	return check_run(s);
}
