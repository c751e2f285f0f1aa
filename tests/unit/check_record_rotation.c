// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_rotation: the names of a rotating recording's files
 * (strftime pattern, a suffix for a name taken, never another file
 * replaced) and --keep's deletion of the oldest files it wrote only.
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
#include "rotation.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/check_rotation.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("TZ", "UTC", 1);
	tzset();
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int exists(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* 2026-12-05 08:31:02 UTC */
#define T0 ((time_t)1796459462)

START_TEST(expand_formats_the_start_time_in_local_time)
{
	char buf[64];

	ck_assert_int_eq(rotation__expand("web-%Y%m%dT%H%M%S.stk", T0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "web-20261205T083102.stk");
	ck_assert_int_eq(rotation__expand("plain.stk", T0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "plain.stk");
	ck_assert_int_eq(rotation__expand("100%%.stk", T0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "100%.stk");
}
END_TEST

START_TEST(expand_refuses_empty_directory_and_too_long_names)
{
	char buf[16];

	ck_assert_int_eq(rotation__expand("", T0, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(rotation__expand("dir/%Y/", T0, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(rotation__expand("a-very-long-name-%Y.stk", T0, buf, sizeof(buf)),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(suffix_goes_before_the_extension_of_the_last_component)
{
	char buf[64];

	ck_assert_int_eq(rotation__suffixed("a/web.stk", 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "a/web-1.stk");
	ck_assert_int_eq(rotation__suffixed("trace", 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "trace-2");
	ck_assert_int_eq(rotation__suffixed("d.x/trace", 3, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "d.x/trace-3");
	ck_assert_int_eq(rotation__suffixed(".hidden", 4, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, ".hidden-4");
	ck_assert_int_eq(rotation__suffixed("t.tar.stk", 5, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "t.tar-5.stk");
	ck_assert_int_eq(rotation__suffixed("abcdef.stk", 10, buf, 10), -ENAMETOOLONG);
}
END_TEST

START_TEST(claim_never_replaces_a_file_and_takes_the_first_free_suffix)
{
	char pattern[128], buf[256], want[256];
	struct stat st;

	snprintf(pattern, sizeof(pattern), "%s/w-%%H%%M%%S.stk", dir);
	put("w-083102.stk", "someone's");
	put("w-083102-1.stk", "someone else's");
	ck_assert_int_eq(rotation__claim(pattern, T0, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/w-083102-2.stk", dir);
	ck_assert_str_eq(buf, want);
	/* Claimed: there, empty, private. */
	ck_assert_int_eq(stat(buf, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* The same second again: the next suffix. */
	ck_assert_int_eq(rotation__claim(pattern, T0, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/w-083102-3.stk", dir);
	ck_assert_str_eq(buf, want);
	/* Another second: its own name. */
	ck_assert_int_eq(rotation__claim(pattern, T0 + 1, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/w-083103.stk", dir);
	ck_assert_str_eq(buf, want);
}
END_TEST

START_TEST(claim_in_a_missing_directory_is_enoent)
{
	char pattern[128], buf[256];

	snprintf(pattern, sizeof(pattern), "%s/none/w-%%S.stk", dir);
	ck_assert_int_eq(rotation__claim(pattern, T0, buf, sizeof(buf)), -ENOENT);
}
END_TEST

START_TEST(prune_keeps_the_newest_and_deletes_only_files_it_wrote)
{
	struct rotation *r = rotation__new(2);
	const char *failed;
	char path[256];
	int i;

	ck_assert_ptr_nonnull(r);
	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		put(name, "capture");
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ck_assert_int_eq(rotation__done(r, path), 0);
		if (i == 1) {
			/* f0 replaced by another file since: left alone. */
			char other[256];

			put("f0.new", "another file");
			snprintf(other, sizeof(other), "%s/f0.new", dir);
			snprintf(path, sizeof(path), "%s/f0", dir);
			ck_assert_int_eq(rename(other, path), 0);
		}
		ck_assert_int_eq(rotation__prune(r, &failed), 0);
	}
	ck_assert(exists("f0"));
	ck_assert(!exists("f1"));
	ck_assert(exists("f2"));
	ck_assert(exists("f3"));
	ck_assert_uint_eq(rotation__files(r), 4);
	ck_assert_uint_eq(rotation__deleted(r), 1);
	snprintf(path, sizeof(path), "%s/f0", dir);
	ck_assert_str_eq(rotation__first(r), path);
	snprintf(path, sizeof(path), "%s/f3", dir);
	ck_assert_str_eq(rotation__last(r), path);
	rotation__free(r);
}
END_TEST

/* @n files "@prefix0".. written in turn, each told to @r and pruned after;
 * rotation__last() is always the newest. */
static void write_files(struct rotation *r, const char *prefix, int n)
{
	const char *failed;
	char path[256], name[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		put(name, "capture");
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ck_assert_int_eq(rotation__done(r, path), 0);
		ck_assert_int_eq(rotation__prune(r, &failed), 0);
		ck_assert_str_eq(rotation__last(r), path);
	}
}

START_TEST(keep_zero_deletes_nothing)
{
	struct rotation *r = rotation__new(0);

	write_files(r, "g", 40);
	ck_assert(exists("g0"));
	ck_assert_uint_eq(rotation__files(r), 40);
	ck_assert_uint_eq(rotation__deleted(r), 0);
	rotation__free(r);
	rotation__free(NULL);
}
END_TEST

START_TEST(keep_one_over_many_files_keeps_the_last)
{
	struct rotation *r = rotation__new(1);

	write_files(r, "h", 40);
	ck_assert(!exists("h38"));
	ck_assert(exists("h39"));
	ck_assert_uint_eq(rotation__deleted(r), 39);
	rotation__free(r);
}
END_TEST

static Suite *rotation_suite(void)
{
	Suite *s = suite_create("record_rotation");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, expand_formats_the_start_time_in_local_time);
	tcase_add_test(tc, expand_refuses_empty_directory_and_too_long_names);
	tcase_add_test(tc, suffix_goes_before_the_extension_of_the_last_component);
	tcase_add_test(tc, claim_never_replaces_a_file_and_takes_the_first_free_suffix);
	tcase_add_test(tc, claim_in_a_missing_directory_is_enoent);
	tcase_add_test(tc, prune_keeps_the_newest_and_deletes_only_files_it_wrote);
	tcase_add_test(tc, keep_zero_deletes_nothing);
	tcase_add_test(tc, keep_one_over_many_files_keeps_the_last);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(rotation_suite());
}
