/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_common.h - helpers shared by the reporter's fuzz targets
 * (header-only, like tests/tools/fxelf.h, so that each target is still
 * one fuzz_NAME.c for the libFuzzer and replay rules):
 *
 *   fuzz_tmpdir()       a private directory, removed at exit, for targets
 *                       whose interfaces take paths (merge, info, ELF files),
 *                       in memory where it can be (/dev/shm)
 *   fuzz_write_file()   @size bytes into a file of it
 *   fuzz_fix_crcs()     recompute every header and payload CRC, so that
 *                       mutations reach the checks behind them (common.c)
 *   fuzz_quiet()        stdout to /dev/null around a call that prints
 *                       (the front-ends)
 *   fuzz_null()         a FILE for the writers' output
 *
 * Paths of the build (fixtures, captures made by mkcapture) come from
 * FUZZ_BUILD, set by the Makefile to $(O); make check and make fuzz run
 * from the top of the tree.
 */
#ifndef STK_TESTS_FUZZ_COMMON_H
#define STK_TESTS_FUZZ_COMMON_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stk.h"

#ifndef FUZZ_BUILD
#define FUZZ_BUILD "build"
#endif

static char fuzz_dir[1024];

static inline void fuzz_tmpdir_remove(void)
{
	char cmd[1100];

	if (!fuzz_dir[0] || strchr(fuzz_dir, '\''))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_dir);
	if (system(cmd))
		fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

/*
 * The target's temporary directory (made on first use), or exits.  On
 * tmpfs (/dev/shm) when there is one, else in $TMPDIR or /tmp: libstk's
 * writer fsyncs every capture it closes (stk_writer__close()), and on a
 * disk those fsyncs were most of an input's time (fuzz_writers closes
 * three or more captures an input, fuzz_zelf one).  On tmpfs fsync()
 * succeeds at once: the writer's calls and paths (temporary name, rename,
 * appended segments) all still run, only the disk is not waited for.
 */
static inline const char *fuzz_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	if (fuzz_dir[0])
		return fuzz_dir;
	if (access("/dev/shm", W_OK | X_OK) == 0)
		t = "/dev/shm";
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/stk-fuzz-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(fuzz_dir)) {
		perror("fuzz: mkdtemp");
		exit(1);
	}
	atexit(fuzz_tmpdir_remove);
	return fuzz_dir;
}

/* Writes @data to @path (created or truncated).  0, or -1. */
static inline int fuzz_write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const uint8_t *p = data;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (size) {
		n = write(fd, p, size);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		size -= n;
	}
	return close(fd);
}

/* Recomputes the CRCs of every frame that parses as one of ours
 * (common.c: it needs libstk's internal layout). */
void fuzz_fix_crcs(uint8_t *p, size_t size);

static int fuzz_saved_stdout = -1;
static int fuzz_devnull = -1;

/* @on: stdout to /dev/null; 0: back.  stderr stays: the sanitizers
 * report there (make fuzz runs libFuzzer with -close_fd_mask=2, which
 * keeps their reports and drops the rest). */
static inline void fuzz_quiet(int on)
{
	if (fuzz_devnull < 0) {
		fuzz_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		fuzz_saved_stdout = fcntl(1, F_DUPFD_CLOEXEC, 3);
		if (fuzz_devnull < 0 || fuzz_saved_stdout < 0) {
			perror("fuzz: /dev/null");
			exit(1);
		}
	}
	fflush(stdout);
	dup2(on ? fuzz_devnull : fuzz_saved_stdout, 1);
}

/* Where the writers write: /dev/null, opened once. */
static inline FILE *fuzz_null(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "we");
	if (!f) {
		perror("fuzz: /dev/null");
		exit(1);
	}
	return f;
}

#endif
