/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check_main.h - what every Check suite's main() shares (header-only,
 * included by tests/unit/check_*.c, so the Makefile links nothing more).
 *
 * check_run() runs a suite and makes main's exit status of its failures;
 * check_build_path() finds a file the build made (fixtures, the programs)
 * under $O, the build directory run-tests.sh names, else ./build;
 * check_probed() turns a missing kernel feature into a skip;
 * check_put_own_creds() gives a fake /proc's process our credentials.
 */
#ifndef STK_TESTS_CHECK_MAIN_H
#define STK_TESTS_CHECK_MAIN_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Run every test of @s, the way @fork says (CK_FORK_GETENV: Check's
 * default, a child per test unless CK_FORK=no), print Check's summary
 * ("N%: Checks: X, Failures: F, Errors: E") and free the suite.  Returns
 * main's exit status: EXIT_FAILURE if any test failed, else EXIT_SUCCESS.
 */
static inline int check_run_fork(Suite *s, enum fork_status fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, fork);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline int check_run(Suite *s)
{
	return check_run_fork(s, CK_FORK_GETENV);
}

/* The build directory: $O when set and not empty, else "build". */
static inline const char *check_build_dir(void)
{
	const char *o = getenv("O");

	return o && o[0] ? o : "build";
}

/*
 * The absolute path of @rel under the build directory into @out (the
 * reporter only opens the absolute paths a recorder writes).  0, or -1
 * after telling stderr that it is missing and @hint (how to make it).
 */
static inline int check_build_path(char *out, size_t size, const char *rel, const char *hint)
{
	char path[4096], *abs;

	snprintf(path, sizeof(path), "%s%s%s", check_build_dir(), rel[0] ? "/" : "", rel);
	abs = realpath(path, NULL);
	if (!abs || (size_t)snprintf(out, size, "%s", abs) >= size) {
		fprintf(stderr, "%s: %s: missing (%s)\n", program_invocation_short_name, path,
			hint);
		free(abs);
		return -1;
	}
	free(abs);
	return 0;
}

/*
 * For a suite that needs what a probe opens (a BPF map, ...): 0 after
 * closing @fd, or when the probe failed (@fd < 0, errno set) 77, the exit
 * status run-tests.sh counts as a skip, after saying what is missing.
 */
static inline int check_probed(int fd, const char *what)
{
	if (fd < 0) {
		fprintf(stderr, "%s: cannot create %s (%s); skipped\n",
			program_invocation_short_name, what, strerror(errno));
		return 77;
	}
	close(fd);
	return 0;
}

/*
 * check_put_own_creds() - our own credentials' lines of /proc/self/status
 * (Uid, Gid, Groups, CapEff) to @f: a fake /proc's process is then the
 * test's own user (record/sys/procreds.h reads them).
 */
static inline void check_put_own_creds(FILE *f)
{
	char line[4096];
	FILE *self = fopen("/proc/self/status", "re");

	ck_assert_ptr_nonnull(self);
	while (fgets(line, sizeof(line), self))
		if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4) ||
		    !strncmp(line, "Groups:", 7) || !strncmp(line, "CapEff:", 7))
			fputs(line, f);
	fclose(self);
}

#endif
