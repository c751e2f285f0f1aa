// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_rootopen: recorded paths opened under a --sysroot / --debug-dir
 * stay inside it (report/symbols/rootopen.h), with openat2 (root_open()) and with
 * the component-by-component fallback (root_open_walk()) alike; only
 * regular files are opened, a FIFO never blocks.
 *
 * The tree, in a fresh temporary directory T:
 *   T/outside/secret                 the file that must never be opened
 *   T/root/real/file                 an in-root file
 *   T/root/outside/decoy             (no "secret" in the root)
 *   T/root/lib/abs_out  -> T/outside/secret    absolute, outside
 *   T/root/lib/rel_out  -> ../../../../../../outside/secret
 *   T/root/lib/abs_in   -> /real/file          absolute: inside the root
 *   T/root/lib/rel_in   -> ../real/file
 *   T/root/lib/chain    -> abs_in              a link to a link
 *   T/root/lib/dirlink  -> /real               a link to a directory
 *   T/root/loop1 -> loop2, T/root/loop2 -> loop1
 *   T/root/fifo                      a FIFO
 *   T/root/proc_self    -> /proc/self/exe      absolute: inside the root
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "rootopen.h"

static char T[64];
static int rootfd = -1;
static struct stat in_file, secret;

static void mk(const char *rel, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static void dir(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void setup(void)
{
	char p[PATH_MAX];

	snprintf(T, sizeof(T), "/tmp/check_rootopen.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(T));
	dir("outside");
	mk("outside/secret", "secret\n");
	dir("root");
	dir("root/real");
	mk("root/real/file", "in root\n");
	dir("root/outside");
	mk("root/outside/decoy", "decoy\n");
	dir("root/lib");
	snprintf(p, sizeof(p), "%s/outside/secret", T);
	ln(p, "root/lib/abs_out");
	ln("../../../../../../outside/secret", "root/lib/rel_out");
	ln("/real/file", "root/lib/abs_in");
	ln("../real/file", "root/lib/rel_in");
	ln("abs_in", "root/lib/chain");
	ln("/real", "root/lib/dirlink");
	ln("loop2", "root/loop1");
	ln("loop1", "root/loop2");
	ln("/proc/self/exe", "root/proc_self");
	snprintf(p, sizeof(p), "%s/root/fifo", T);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/root/real/file", T);
	ck_assert_int_eq(stat(p, &in_file), 0);
	snprintf(p, sizeof(p), "%s/outside/secret", T);
	ck_assert_int_eq(stat(p, &secret), 0);
	snprintf(p, sizeof(p), "%s/root", T);
	rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "check_rootopen: could not remove %s\n", T);
}

typedef int (*open_fn)(int, const char *);
static const open_fn both[] = { root_open, root_open_walk };
static const char *const names[] = { "root_open", "root_open_walk" };

/* Both ways open @path as the in-root file. */
static void expect_in_file(const char *path)
{
	struct stat st;
	int i, fd, fl;

	for (i = 0; i < 2; i++) {
		fd = both[i](rootfd, path);
		if (fd < 0)
			ck_abort_msg("%s(%s): %s", names[i], path, strerror(-fd));
		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert_msg(st.st_ino == in_file.st_ino && st.st_dev == in_file.st_dev,
			      "%s(%s): not the in-root file", names[i], path);
		fl = fcntl(fd, F_GETFL);
		ck_assert_int_eq(fl & O_NONBLOCK, 0);	/* blocking again */
		ck_assert_int_eq(fl & O_ACCMODE, O_RDONLY);
		close(fd);
	}
}

/* Both ways fail with @err (never with the outside file open). */
static void expect_err(const char *path, int err)
{
	struct stat st;
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = both[i](rootfd, path);
		if (fd >= 0) {
			ck_assert_int_eq(fstat(fd, &st), 0);
			close(fd);
			ck_abort_msg("%s(%s): opened %s", names[i], path,
				     st.st_ino == secret.st_ino ? "the OUTSIDE file" : "a file");
		}
		ck_assert_msg(fd == -err, "%s(%s): %s, expected %s", names[i], path,
			      strerror(-fd), strerror(err));
	}
}

START_TEST(in_root_paths_open)
{
	expect_in_file("/real/file");
	expect_in_file("real/file");
	expect_in_file("//real/./file");
	expect_in_file("/lib/../real/file");
}
END_TEST

START_TEST(dotdot_past_the_root_stays_at_the_root)
{
	char p[PATH_MAX];

	expect_in_file("/../../../real/file");
	expect_in_file("/lib/../../../../real/file");
	/* T/outside/secret through "..": T/root/outside has no "secret". */
	expect_err("/../outside/secret", ENOENT);
	expect_err("/lib/../../../../../../outside/secret", ENOENT);
	snprintf(p, sizeof(p), "/real/../../../../../../..%s/outside/secret", T);
	expect_err(p, ENOENT);
}
END_TEST

START_TEST(symlinks_out_of_the_root_do_not_leave_it)
{
	expect_err("/lib/abs_out", ENOENT);
	expect_err("/lib/rel_out", ENOENT);
	/* /proc/self/exe read inside the root: there is no T/root/proc. */
	expect_err("/proc_self", ENOENT);
}
END_TEST

START_TEST(symlinks_inside_the_root_resolve_inside_it)
{
	expect_in_file("/lib/abs_in");
	expect_in_file("/lib/rel_in");
	expect_in_file("/lib/chain");
	expect_in_file("/lib/dirlink/file");
	expect_in_file("/lib/dirlink/../real/file");
}
END_TEST

START_TEST(symlink_loops_are_eloop)
{
	expect_err("/loop1", ELOOP);
	expect_err("/loop1/x", ELOOP);
}
END_TEST

START_TEST(fifo_is_refused_without_blocking)
{
	char p[PATH_MAX];

	/* Nobody writes to it: an open for reading would block for good
	 * (the suite's timeout would end the test). */
	expect_err("/fifo", ENXIO);
	snprintf(p, sizeof(p), "%s/root/fifo", T);
	ck_assert_int_eq(regular_open(p), -ENXIO);
}
END_TEST

START_TEST(directories_and_missing_files_are_refused)
{
	char p[PATH_MAX];

	expect_err("/real", EISDIR);
	expect_err("/", EISDIR);
	expect_err("", ENOENT);
	expect_err("/lib/dirlink", EISDIR);
	expect_err("/nonexistent", ENOENT);
	expect_err("/real/file/x", ENOTDIR);
	snprintf(p, sizeof(p), "%s/root/real", T);
	ck_assert_int_eq(regular_open(p), -EISDIR);
	ck_assert_int_eq(regular_open("/dev/null"), -ENXIO);
}
END_TEST

START_TEST(regular_open_follows_the_hosts_paths)
{
	char p[PATH_MAX];
	struct stat st;
	int fd;

	/* Not confined: the host's own paths, links included. */
	snprintf(p, sizeof(p), "%s/root/lib/abs_out", T);
	fd = regular_open(p);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_ino, secret.st_ino);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rootopen");
	TCase *tc = tcase_create("rootopen");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, in_root_paths_open);
	tcase_add_test(tc, dotdot_past_the_root_stays_at_the_root);
	tcase_add_test(tc, symlinks_out_of_the_root_do_not_leave_it);
	tcase_add_test(tc, symlinks_inside_the_root_resolve_inside_it);
	tcase_add_test(tc, symlink_loops_are_eloop);
	tcase_add_test(tc, fifo_is_refused_without_blocking);
	tcase_add_test(tc, directories_and_missing_files_are_refused);
	tcase_add_test(tc, regular_open_follows_the_hosts_paths);
	suite_add_tcase(s, tc);
	return check_run(s);
}
