// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbigwork - many large symbol tables under distinct build-ids, as an
 * unprivileged process can make them (tests/e2e/record_usermem.sh): N
 * copies of a library (libsymbig.so: 300,000 function symbols) written
 * into DIR, each with its own build-id (the first four bytes of its GNU
 * build-id note replaced by the copy's number), loaded with dlopen() and
 * run in turn until the process is killed.
 *
 *   symbigwork LIB DIR N     prints "ready" once every copy runs
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copies @from to @to (mode 0755). */
static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto out;
	ret = n == 0 ? 0 : -1;
out:
	close(in);
	if (out >= 0 && close(out))
		ret = -1;
	return ret;
}

/* Writes @nr over the first 4 bytes of @path's GNU build-id (a 64-bit
 * ELF of the host's byte order, read through its PT_NOTE segments). */
static int set_build_id(const char *path, uint32_t nr)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDWR | O_CLOEXEC), i, ret = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t off;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    sizeof(ph))
			goto out;
		if (ph.p_type != PT_NOTE)
			continue;
		for (off = ph.p_offset; off + sizeof(Elf64_Nhdr) <= ph.p_offset + ph.p_filesz;) {
			Elf64_Nhdr nh;
			char name[4];
			uint64_t desc;

			if (pread(fd, &nh, sizeof(nh), (off_t)off) != sizeof(nh) ||
			    pread(fd, name, sizeof(name), (off_t)(off + sizeof(nh))) != sizeof(name))
				goto out;
			desc = off + sizeof(nh) + ((nh.n_namesz + 3) & ~3u);
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh.n_descsz >= 4) {
				ret = pwrite(fd, &nr, sizeof(nr), (off_t)desc) == sizeof(nr) ? 0 : -1;
				goto out;
			}
			off = desc + ((nh.n_descsz + 3) & ~3u);
		}
	}
out:
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	void (**spin)(long);
	int n, i;

	if (argc != 4 || (n = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: symbigwork LIB DIR N\n");
		return 2;
	}
	spin = calloc((size_t)n, sizeof(*spin));
	if (!spin)
		return 1;
	for (i = 0; i < n; i++) {
		char path[4096];
		void *h;

		snprintf(path, sizeof(path), "%s/libsymbig-%d.so", argv[2], i);
		if (copy_file(argv[1], path) || set_build_id(path, (uint32_t)i + 1)) {
			fprintf(stderr, "symbigwork: %s: cannot copy or rekey\n", path);
			return 1;
		}
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		spin[i] = h ? (void (*)(long))dlsym(h, "symbig_spin") : NULL;
		if (!spin[i]) {
			fprintf(stderr, "symbigwork: %s: %s\n", path, dlerror());
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		for (i = 0; i < n; i++)
			spin[i](2000000);
}
