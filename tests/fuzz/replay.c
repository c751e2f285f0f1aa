// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs a libFuzzer target's LLVMFuzzerTestOneInput over saved inputs, for
 * make check (built with ASan+UBSan, without libFuzzer).
 *
 *   fuzz_NAME_replay [FILE|DIR]...
 *
 * With no arguments it replays tests/fuzz/corpus/NAME/, NAME taken from
 * its own file name, so one replay.c serves every target.  It fails when
 * an input cannot be read or when there is no input at all: a replay that
 * ran nothing proves nothing.  A target's LLVMFuzzerInitialize(), if it
 * has one, runs first, as libFuzzer runs it.  A directory's inputs run in name order, so
 * a failure repeats on every checkout; one that kills the replay is named
 * (the sanitizers' death callback).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static const char *current;

static void name_current(void)
{
	if (current)
		fprintf(stderr, "replay: died on input %s\n", current);
}

static int run_file(const char *path)
{
	uint8_t *buf = NULL;
	struct stat st;
	FILE *f;
	int err = 0;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		err = -1;
		goto out;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		err = -1;
		goto out;
	}
	current = path;
	LLVMFuzzerTestOneInput(buf, st.st_size);
	current = NULL;
out:
	free(buf);
	if (f)
		fclose(f);
	return err;
}

/* Returns the number of inputs run, or -1. */
static long run_path(const char *path)
{
	struct dirent **de;
	char sub[4096];
	struct stat st;
	long n = 0;
	int nr, i;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path) ? -1 : 1;
	nr = scandir(path, &de, NULL, alphasort);
	if (nr < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < nr; i++) {
		if (de[i]->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de[i]->d_name);
		if (stat(sub, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n >= 0 && run_file(sub))
			n = -1;
		else if (n >= 0)
			n++;
	}
	for (i = 0; i < nr; i++)
		free(de[i]);
	free(de);
	return n;
}

int main(int argc, char **argv)
{
	char def[512], name[256];
	const char *base, *p;
	long total = 0, n;
	int i;

	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(name_current);
	if (LLVMFuzzerInitialize && LLVMFuzzerInitialize(&argc, &argv))
		return 1;
	if (argc < 2) {
		/* fuzz_NAME_replay -> tests/fuzz/corpus/NAME */
		base = strrchr(argv[0], '/');
		base = base ? base + 1 : argv[0];
		if (strncmp(base, "fuzz_", 5) == 0)
			base += 5;
		p = strstr(base, "_replay");
		snprintf(name, sizeof(name), "%.*s", p ? (int)(p - base) : (int)strlen(base), base);
		snprintf(def, sizeof(def), "tests/fuzz/corpus/%s", name);
		n = run_path(def);
		if (n < 0)
			return 1;
		total = n;
	}
	for (i = 1; i < argc; i++) {
		n = run_path(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("%ld inputs replayed\n", total);
	return 0;
}
