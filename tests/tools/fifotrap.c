// SPDX-License-Identifier: BSD-2-Clause
/*
 * fifotrap - the unprivileged side of the "FIFO at a mapped path" attack on
 * a root stkrec (tests/e2e/record_hostile.sh).
 *
 *   fifotrap DIR SECONDS [symlink]
 *
 * Writes a small non-ELF file DIR/lib.so (so the kernel's MMAP2 record
 * carries no build-id and the recorder has to read the file itself), maps
 * it PROT_EXEC, renames it to DIR/lib.so.moved and puts a FIFO at DIR/lib.so
 * (with "symlink": a symbolic link to the FIFO DIR/fifo instead), prints
 * "ready" on stdout, then spins on the CPU for SECONDS so that a profile
 * samples it and its mappings are written.  An open() of DIR/lib.so for
 * reading blocks until a writer comes, which never does.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[4096], moved[4096], fifo[4096], page[4096];
	volatile unsigned long spin = 0;
	double end;
	void *map;
	int fd, symlinked;

	if (argc < 3) {
		fprintf(stderr, "usage: fifotrap DIR SECONDS [symlink]\n");
		return 2;
	}
	symlinked = argc > 3 && strcmp(argv[3], "symlink") == 0;
	snprintf(path, sizeof(path), "%s/lib.so", argv[1]);
	snprintf(moved, sizeof(moved), "%s/lib.so.moved", argv[1]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", argv[1]);
	memset(page, 'x', sizeof(page));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
		perror(path);
		return 1;
	}
	map = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	if (rename(path, moved) < 0) {
		perror("rename");
		return 1;
	}
	if (mkfifo(symlinked ? fifo : path, 0644) < 0 || (symlinked && symlink(fifo, path) < 0)) {
		perror("mkfifo");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	end = now_s() + atof(argv[2]);
	while (now_s() < end)
		spin++;
	munmap(map, sizeof(page));
	return 0;
}
