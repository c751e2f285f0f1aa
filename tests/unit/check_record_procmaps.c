// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_procmaps: parsing /proc/PID/maps lines, and snapshots with
 * build-ids over a fake /proc (a directory laid out like it), plus one
 * snapshot of this very process.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check_main.h"
#include "procmaps.h"

START_TEST(file_mapping_line_parses_every_field)
{
	char line[] = "7f1964489000-7f19645df000 r-xp 00026000 fe:00 332835"
		      "                    /usr/lib/x86_64-linux-gnu/libc.so.6\n";
	struct procmaps_line l;

	ck_assert_int_eq(procmaps__parse_line(line, &l), 0);
	ck_assert_uint_eq(l.start, 0x7f1964489000);
	ck_assert_uint_eq(l.end, 0x7f19645df000);
	ck_assert_uint_eq(l.offset, 0x26000);
	ck_assert_uint_eq(l.dev, makedev(0xfe, 0));
	ck_assert_uint_eq(l.inode, 332835);
	ck_assert_uint_eq(l.prot, PROT_READ | PROT_EXEC);
	ck_assert_str_eq(l.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}
END_TEST

START_TEST(paths_with_spaces_and_deleted_suffix_are_kept_whole)
{
	char line[] = "00400000-00401000 r-xp 00000000 08:01 12 /tmp/my dir/app (deleted)";
	struct procmaps_line l;

	ck_assert_int_eq(procmaps__parse_line(line, &l), 0);
	ck_assert_str_eq(l.path, "/tmp/my dir/app (deleted)");
	ck_assert_uint_eq(l.dev, makedev(8, 1));
}
END_TEST

/* /proc/PID/maps writes a newline in a path as \012; the path is the
 * file's real name again (record_escape's directory "d\nir"). */
START_TEST(a_newline_the_kernel_wrote_as_012_is_a_newline_again)
{
	char line[] = "00400000-00401000 r-xp 00000000 08:01 12 /tmp/d\\012ir/app\\012\n";
	struct procmaps_line l;

	ck_assert_int_eq(procmaps__parse_line(line, &l), 0);
	ck_assert_str_eq(l.path, "/tmp/d\nir/app\n");
}
END_TEST

START_TEST(anonymous_and_special_mappings_parse)
{
	char anon[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ";
	char vdso[] = "7fff0000-7fff2000 r-xp 00000000 00:00 0                          [vdso]";
	struct procmaps_line l;

	ck_assert_int_eq(procmaps__parse_line(anon, &l), 0);
	ck_assert_str_eq(l.path, "");
	ck_assert_uint_eq(l.inode, 0);
	ck_assert_uint_eq(l.prot, PROT_READ | PROT_WRITE);
	ck_assert_int_eq(procmaps__parse_line(vdso, &l), 0);
	ck_assert_str_eq(l.path, "[vdso]");
}
END_TEST

START_TEST(malformed_lines_are_einval)
{
	char a[] = "";
	char b[] = "garbage";
	char c[] = "1000-2000 r-xp";
	char d[] = "2000-1000 r-xp 00000000 00:00 0 x";
	char e[] = "1000-2000 r-x 00000000 00:00 0 x";
	char f[] = "1000-2000 r-xp 00000000 00:00 x";
	char g[] = "10000000000000000-10000000000000001 r-xp 00000000 00:00 0";
	char h[] = "1000-2000 r-xp 0000zz00 00:00 0";
	struct procmaps_line l;

	ck_assert_int_eq(procmaps__parse_line(a, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(b, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(c, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(d, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(e, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(f, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(g, &l), -EINVAL);
	ck_assert_int_eq(procmaps__parse_line(h, &l), -EINVAL);
}
END_TEST

/* ---- snapshots over a fake /proc ---- */

static const uint8_t id20[20] = { 0xba, 0xdc, 0x0f, 0xfe, 1, 2, 3, 4, 5, 6,
				  7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static char fake[PATH_MAX];

/* An ELF64 file with one PT_NOTE holding a GNU build-id. */
static void write_elf(const char *path)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		Elf64_Nhdr nh;
		char name[4];
		uint8_t desc[20];
	} f;
	int fd;

	memset(&f, 0, sizeof(f));
	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_phoff = sizeof(f.eh);
	f.eh.e_phentsize = sizeof(f.ph);
	f.eh.e_phnum = 1;
	f.ph.p_type = PT_NOTE;
	f.ph.p_offset = offsetof(__typeof__(f), nh);
	f.ph.p_filesz = sizeof(f.nh) + 4 + 20;
	f.nh.n_namesz = 4;
	f.nh.n_descsz = 20;
	f.nh.n_type = NT_GNU_BUILD_ID;
	memcpy(f.name, "GNU", 4);
	memcpy(f.desc, id20, 20);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, &f, sizeof(f)), (ssize_t)sizeof(f));
	close(fd);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}


/* fake/42/maps, fake/42/status (our credentials), fake/42/root -> fake, fake/lib/app (an ELF with id20). */
static void fake_setup(void)
{
	char p[PATH_MAX + 64], maps[2048];
	struct stat st;
	FILE *f;

	strcpy(fake, "/tmp/check_procmaps.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fake));
	snprintf(p, sizeof(p), "%s/42", fake);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/lib", fake);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/lib/app", fake);
	write_elf(p);
	ck_assert_int_eq(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/42/root", fake);
	ck_assert_int_eq(symlink(fake, p), 0);
	snprintf(maps, sizeof(maps),
		 "00400000-00401000 r--p 00000000 %02x:%02x %lu /lib/app\n"
		 "00401000-00402000 r-xp 00001000 %02x:%02x %lu /lib/app\n"
		 "00402000-00403000 rw-p 00002000 %02x:%02x %lu /lib/app\n"
		 "00403000-00404000 rw-p 00000000 00:00 0 \n"
		 "00500000-00501000 r--p 00000000 08:01 777 /lib/data.bin\n"
		 "00600000-00601000 r-xp 00000000 08:01 778 /lib/gone (deleted)\n"
		 "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]\n"
		 "7fff0000-7fff2000 r-xp 00000000 00:00 0                          [vdso]\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
	snprintf(p, sizeof(p), "%s/42/maps", fake);
	put_file(p, maps);
	snprintf(p, sizeof(p), "%s/42/status", fake);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	check_put_own_creds(f);
	ck_assert_int_eq(fclose(f), 0);
}

static void fake_teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fake);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(snapshot_keeps_exec_mappings_and_their_files_other_mappings)
{
	struct procmaps *pm = procmaps__new();
	struct stk_proc_maps snap;

	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 123, &snap), 0);
	ck_assert_uint_eq(snap.tgid, 42);
	ck_assert_str_eq(snap.comm, "app");
	ck_assert_uint_eq(snap.time_ns, 123);
	/* app r-- at offset 0 and r-x; gone r-x; [vdso]: not app's rw- data,
	 * the anonymous rw-, data.bin (no exec mapping) or [stack]. */
	ck_assert_uint_eq(snap.nr_mappings, 4);
	ck_assert_uint_eq(snap.mappings[0].start, 0x400000);
	ck_assert_uint_eq(snap.mappings[0].end, 0x401000);
	ck_assert_uint_eq(snap.mappings[0].prot, PROT_READ);
	ck_assert_uint_eq(snap.mappings[0].offset, 0);
	ck_assert_str_eq(snap.mappings[1].path, "/lib/app");
	ck_assert_uint_eq(snap.mappings[1].prot, PROT_READ | PROT_EXEC);
	ck_assert_uint_eq(snap.mappings[1].offset, 0x1000);
	ck_assert_str_eq(snap.mappings[2].path, "/lib/gone (deleted)");
	ck_assert_uint_eq(snap.mappings[2].dev, makedev(8, 1));
	ck_assert_uint_eq(snap.mappings[2].inode, 778);
	ck_assert_str_eq(snap.mappings[3].path, "[vdso]");
	procmaps__free_snapshot(&snap);
	procmaps__free(pm);
}
END_TEST

START_TEST(snapshot_reads_build_id_once_per_file_through_the_process_root)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_stats st;
	struct stk_proc_maps snap;
	int i;

	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 1, &snap), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(snap.mappings[i].build_id_size, 20);
		ck_assert_mem_eq(snap.mappings[i].build_id, id20, 20);
	}
	/* A deleted file without map_files cannot be read. */
	ck_assert_uint_eq(snap.mappings[2].build_id_size, 0);
	procmaps__free_snapshot(&snap);
	/* A second snapshot hits the cache. */
	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 2, &snap), 0);
	ck_assert_mem_eq(snap.mappings[1].build_id, id20, 20);
	procmaps__free_snapshot(&snap);
	procmaps__stats(pm, &st);
	ck_assert_uint_eq(st.snapshots, 2);
	ck_assert_uint_eq(st.build_ids_read, 1);
	ck_assert_uint_eq(st.build_id_errors, 2); /* "gone", once per snapshot */
	procmaps__free(pm);
}
END_TEST

START_TEST(rewritten_file_is_read_again_not_served_from_cache)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_stats st;
	struct stk_proc_maps snap;
	char p[PATH_MAX + 16];
	int fd;

	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 1, &snap), 0);
	procmaps__free_snapshot(&snap);
	/* Same inode, new size: rebuilt in place. */
	snprintf(p, sizeof(p), "%s/lib/app", fake);
	fd = open(p, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 2, &snap), 0);
	procmaps__free_snapshot(&snap);
	procmaps__stats(pm, &st);
	ck_assert_uint_eq(st.build_ids_read, 2);
	procmaps__free(pm);
}
END_TEST

START_TEST(covers_only_executable_mappings)
{
	struct procmaps *pm = procmaps__new();
	struct stk_proc_maps snap;

	ck_assert_int_eq(procmaps__snapshot(pm, fake, 42, "app", 1, &snap), 0);
	ck_assert_int_eq(procmaps__covers(&snap, 0x401000), 1);
	ck_assert_int_eq(procmaps__covers(&snap, 0x401fff), 1);
	ck_assert_int_eq(procmaps__covers(&snap, 0x402000), 0); /* rw- */
	ck_assert_int_eq(procmaps__covers(&snap, 0x400000), 0); /* r-- */
	ck_assert_int_eq(procmaps__covers(&snap, 0x7fff0000), 1);
	ck_assert_int_eq(procmaps__covers(&snap, 0x12345), 0);
	procmaps__free_snapshot(&snap);
	procmaps__free(pm);
}
END_TEST

START_TEST(missing_process_is_enoent)
{
	struct procmaps *pm = procmaps__new();
	struct stk_proc_maps snap;

	ck_assert_int_eq(procmaps__snapshot(pm, fake, 43, "x", 1, &snap), -ENOENT);
	ck_assert_uint_eq(snap.nr_mappings, 0);
	ck_assert_ptr_null(snap.mappings);
	procmaps__free(pm);
}
END_TEST

START_TEST(own_process_snapshot_has_our_executable_with_its_build_id)
{
	struct procmaps *pm = procmaps__new();
	struct stk_proc_maps snap;
	char exe[PATH_MAX];
	ssize_t n;
	uint32_t i;
	int found = 0;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	ck_assert_int_eq(procmaps__snapshot(pm, "/proc", (uint32_t)getpid(), "self", 1, &snap), 0);
	for (i = 0; i < snap.nr_mappings; i++) {
		if (strcmp(snap.mappings[i].path, exe) != 0 || !(snap.mappings[i].prot & PROT_EXEC))
			continue;
		found = 1;
		ck_assert_uint_eq(snap.mappings[i].build_id_size, 20);
		ck_assert_int_eq(procmaps__covers(&snap, (uint64_t)(uintptr_t)&procmaps__snapshot), 1);
	}
	ck_assert_int_eq(found, 1);
	procmaps__free_snapshot(&snap);
	procmaps__free(pm);
}
END_TEST

/* A mapping line for the file at fake@path, with its device and inode
 * when @known (else 0: not known, as a record without them). */
static struct procmaps_line fake_line(const char *path, int known)
{
	struct procmaps_line l = { .start = 0x700000, .end = 0x701000, .prot = PROT_READ | PROT_EXEC };
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", fake, path);
	if (known && lstat(p, &st) == 0) {
		l.dev = st.st_dev;
		l.inode = st.st_ino;
	}
	l.path = path;
	return l;
}

/* The attack of a user who renames a file it mapped and puts a FIFO at
 * its path: an open() for reading would wait for a writer for good (this
 * test then times out). */
START_TEST(fifo_at_mapped_path_is_never_opened)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_line l;
	char p[PATH_MAX + 64];
	uint8_t id[STK_MAX_BUILD_ID];

	snprintf(p, sizeof(p), "%s/lib/fifo", fake);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	l = fake_line("/lib/fifo", 1);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -EINVAL);
	l = fake_line("/lib/fifo", 0);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -EINVAL);
	procmaps__free(pm);
}
END_TEST

START_TEST(device_at_mapped_path_is_never_opened)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_line l;
	char p[PATH_MAX + 64];
	uint8_t id[STK_MAX_BUILD_ID];

	/* A FIFO only needs a directory of ours; a device node root. */
	snprintf(p, sizeof(p), "%s/lib/tty", fake);
	if (mknod(p, S_IFCHR | 0600, makedev(5, 0)) != 0)
		return;
	l = fake_line("/lib/tty", 1);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -EINVAL);
	procmaps__free(pm);
}
END_TEST

START_TEST(symlink_in_mapped_path_is_not_followed)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_line l;
	char p[PATH_MAX + 64];
	uint8_t id[STK_MAX_BUILD_ID];

	/* The kernel writes paths with every link resolved: a link met on
	 * the way was put there since.  As the last component it is itself no
	 * regular file; as a directory on the way it stops the lookup. */
	snprintf(p, sizeof(p), "%s/lib/link", fake);
	ck_assert_int_eq(symlink("app", p), 0);
	snprintf(p, sizeof(p), "%s/libdir", fake);
	ck_assert_int_eq(symlink("lib", p), 0);
	l = fake_line("/lib/link", 0);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -EINVAL);
	l = fake_line("/libdir/app", 0);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -ELOOP);
	/* The file itself, by its own path, is read. */
	l = fake_line("/lib/app", 1);
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), 20);
	ck_assert_mem_eq(id, id20, 20);
	procmaps__free(pm);
}
END_TEST

START_TEST(mapped_path_resolves_inside_the_process_root)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_line l;
	uint8_t id[STK_MAX_BUILD_ID];

	/* ".." stops at the process's root, as it does for the process. */
	l = fake_line("/lib/app", 1);
	l.path = "/../../../lib/app";
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), 20);
	procmaps__free(pm);
}
END_TEST

START_TEST(other_file_at_mapped_path_is_estale)
{
	struct procmaps *pm = procmaps__new();
	struct procmaps_line l;
	uint8_t id[STK_MAX_BUILD_ID];

	l = fake_line("/lib/app", 1);
	l.inode++;
	ck_assert_int_eq(procmaps__file_build_id(pm, fake, 42, &l, id), -ESTALE);
	procmaps__free(pm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_procmaps");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, file_mapping_line_parses_every_field);
	tcase_add_test(tc, paths_with_spaces_and_deleted_suffix_are_kept_whole);
	tcase_add_test(tc, a_newline_the_kernel_wrote_as_012_is_a_newline_again);
	tcase_add_test(tc, anonymous_and_special_mappings_parse);
	tcase_add_test(tc, malformed_lines_are_einval);
	suite_add_tcase(s, tc);
	tc = tcase_create("snapshot");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, snapshot_keeps_exec_mappings_and_their_files_other_mappings);
	tcase_add_test(tc, snapshot_reads_build_id_once_per_file_through_the_process_root);
	tcase_add_test(tc, rewritten_file_is_read_again_not_served_from_cache);
	tcase_add_test(tc, covers_only_executable_mappings);
	tcase_add_test(tc, missing_process_is_enoent);
	tcase_add_test(tc, own_process_snapshot_has_our_executable_with_its_build_id);
	tcase_add_test(tc, fifo_at_mapped_path_is_never_opened);
	tcase_add_test(tc, device_at_mapped_path_is_never_opened);
	tcase_add_test(tc, symlink_in_mapped_path_is_not_followed);
	tcase_add_test(tc, mapped_path_resolves_inside_the_process_root);
	tcase_add_test(tc, other_file_at_mapped_path_is_estale);
	suite_add_tcase(s, tc);
	return check_run(s);
}
