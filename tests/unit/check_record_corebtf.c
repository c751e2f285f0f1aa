// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_corebtf: the minimal kernel BTF for CO-RE
 * (record/modes/corebtf.c).  Made from this kernel's BTF for the profile
 * object, it keeps the root types whole in their members' names and
 * offsets, with real types only where a relocation goes, and libbpf's
 * relocations come out as with the whole BTF for each object; stored in the
 * cache, it is read back the next time; a file damaged, made on another
 * boot or for another object, truncated, a file others may write or a
 * symlink is made again (and stored over), never used.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "check_main.h"
#include "corebtf.h"

/* The cache file's layout (corebtf.c): the boot id at 32, the BTF at 144. */
#define BOOT_ID_OFF 32
#define BTF_OFF 144

static char dir[64];

static void *read_all(const char *path, size_t *size)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return buf;
}

static void *object(const char *name, size_t *size)
{
	char rel[64], path[4096];

	snprintf(rel, sizeof(rel), "bpf/%s.bpf.o", name);
	ck_assert_int_eq(check_build_path(path, sizeof(path), rel, "make"), 0);
	return read_all(path, size);
}

static int have_kernel_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

static void make_dir(void)
{
	strcpy(dir, "/tmp/check_corebtf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The one cache file of @dir's into @path. */
static void cache_file(char *path, size_t size)
{
	char cmd[160];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls '%s'/*.stkbtf", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(path, (int)size, f));
	path[strcspn(path, "\n")] = '\0';
	ck_assert_int_eq(pclose(f), 0);
}

/* The BTF an fd of corebtf__open() holds. */
static struct btf *btf_of_fd(int fd)
{
	char path[64];
	struct btf *btf;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	btf = btf__parse_raw(path);
	ck_assert_ptr_nonnull(btf);
	return btf;
}

static const struct btf_member *member(const struct btf *btf, const struct btf_type *t,
				       const char *name, int *idx)
{
	int i;

	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, btf_members(t)[i].name_off), name)) {
			*idx = i;
			return btf_members(t) + i;
		}
	return NULL;
}

START_TEST(minimal_btf_keeps_what_the_relocations_reach)
{
	struct btf *vm, *min = NULL;
	const struct btf_type *vt, *mt;
	const struct btf_member *vmm, *mm;
	size_t size;
	void *obj;
	int vid, mid, vi, mi, i;

	if (!have_kernel_btf())
		return;
	obj = object("profile", &size);
	vm = btf__load_vmlinux_btf();
	ck_assert_ptr_nonnull(vm);
	ck_assert_int_eq(corebtf__minimize(vm, obj, size, &min), 0);
	ck_assert_uint_lt(btf__type_cnt(min) * 50, btf__type_cnt(vm));
	vid = btf__find_by_name_kind(vm, "task_struct", BTF_KIND_STRUCT);
	mid = btf__find_by_name_kind(min, "task_struct", BTF_KIND_STRUCT);
	ck_assert_int_gt(mid, 0);
	vt = btf__type_by_id(vm, vid);
	mt = btf__type_by_id(min, mid);
	/* Every member, where it is: libbpf matches by name. */
	ck_assert_int_eq(btf_vlen(mt), btf_vlen(vt));
	ck_assert_uint_eq(mt->size, vt->size);
	for (i = 0; i < btf_vlen(vt); i++) {
		ck_assert_str_eq(btf__name_by_offset(min, btf_members(mt)[i].name_off),
				 btf__name_by_offset(vm, btf_members(vt)[i].name_off));
		ck_assert_uint_eq(btf_member_bit_offset(mt, i), btf_member_bit_offset(vt, i));
		ck_assert_uint_eq(btf_member_bitfield_size(mt, i), btf_member_bitfield_size(vt, i));
	}
	/* mm is on an access path: a pointer to struct mm_struct. */
	vmm = member(vm, vt, "mm", &vi);
	mm = member(min, mt, "mm", &mi);
	ck_assert_ptr_nonnull(mm);
	mt = btf__type_by_id(min, mm->type);
	ck_assert(btf_is_ptr(mt));
	ck_assert_str_eq(btf__name_by_offset(min, btf__type_by_id(min, mt->type)->name_off),
			 "mm_struct");
	(void)vmm;
	/* Nothing reads cpus_mask: the placeholder int. */
	mm = member(min, btf__type_by_id(min, mid), "cpus_mask", &mi);
	ck_assert_ptr_nonnull(mm);
	ck_assert(btf_is_int(btf__type_by_id(min, mm->type)));
	/* An enum relocated against: whole. */
	ck_assert_int_gt(btf__find_by_name_kind(min, "bpf_func_id", BTF_KIND_ENUM), 0);
	btf__free(min);
	btf__free(vm);
	free(obj);
}
END_TEST

/* libbpf's lines saying what each CO-RE relocation did to its insn. */
static char relo_log[1 << 20];
static size_t relo_len;

static int relo_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	int n;

	(void)level;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n > 0 && strstr(line, "relo #") &&
	    (strstr(line, "patched insn") || strstr(line, "substituting insn")) &&
	    relo_len + (size_t)n < sizeof(relo_log)) {
		memcpy(relo_log + relo_len, line, (size_t)n);
		relo_len += (size_t)n;
	}
	return 0;
}

/* Load @obj with @btf_path (NULL: the kernel's whole BTF); the relocation
 * lines into a new string, or NULL when BPF cannot be loaded here. */
static char *relocations(const void *obj, size_t size, const char *btf_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	libbpf_print_fn_t old = libbpf_set_print(relo_print);
	struct bpf_object *o;
	char *s = NULL;
	int err;

	relo_len = 0;
	o = bpf_object__open_mem(obj, size, &opts);
	ck_assert_ptr_nonnull(o);
	err = bpf_object__load(o);
	bpf_object__close(o);
	libbpf_set_print(old);
	if (!err) {
		s = strndup(relo_log, relo_len);
		ck_assert_ptr_nonnull(s);
	}
	return s;
}

/* What libbpf makes of every relocation, patched or poisoned, is the same
 * with the minimal BTF as with the kernel's whole one, for each object. */
static void same_relocations(const char *name)
{
	char path[64], *whole, *min;
	size_t size;
	void *obj;
	int fd, made;

	if (!have_kernel_btf() || geteuid() != 0)
		return;
	obj = object(name, &size);
	whole = relocations(obj, size, NULL);
	if (!whole) {		/* no BPF here: nothing to compare */
		free(obj);
		return;
	}
	fd = corebtf__open(NULL, name, obj, size, &made);
	ck_assert_int_ge(fd, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	min = relocations(obj, size, path);
	close(fd);
	ck_assert_ptr_nonnull(min);
	ck_assert_ptr_nonnull(strstr(whole, "patched insn"));
	ck_assert_str_eq(min, whole);
	free(whole);
	free(min);
	free(obj);
}

START_TEST(relocations_are_the_same_profile)
{
	same_relocations("profile");
}
END_TEST

START_TEST(relocations_are_the_same_offcpu)
{
	same_relocations("offcpu");
}
END_TEST

START_TEST(relocations_are_the_same_trace)
{
	same_relocations("trace");
}
END_TEST

START_TEST(not_an_object_is_refused)
{
	struct btf *vm, *min = NULL;
	char junk[256] = "not an ELF file";

	if (!have_kernel_btf())
		return;
	vm = btf__load_vmlinux_btf();
	ck_assert_ptr_nonnull(vm);
	ck_assert_int_eq(corebtf__minimize(vm, junk, sizeof(junk), &min), -EBADMSG);
	ck_assert_ptr_null(min);
	btf__free(vm);
}
END_TEST

START_TEST(stored_btf_is_read_back)
{
	struct btf *a, *b;
	size_t size;
	void *obj;
	int fd, made;

	if (!have_kernel_btf())
		return;
	make_dir();
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	a = btf_of_fd(fd);
	close(fd);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 0);
	b = btf_of_fd(fd);
	close(fd);
	ck_assert_uint_eq(btf__type_cnt(a), btf__type_cnt(b));
	btf__free(a);
	btf__free(b);
	free(obj);
	remove_dir();
}
END_TEST

/* A directory that cannot be ours alone (others may write it): nothing
 * made or stored, -EACCES, so that the recorder takes libbpf's own parse
 * (cheaper than making the minimal BTF at each start). */
START_TEST(unusable_dir_is_refused_not_made_each_time)
{
	size_t size;
	void *obj;
	int fd, made = -1;

	if (!have_kernel_btf())
		return;
	make_dir();
	ck_assert_int_eq(chmod(dir, 0777), 0);
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_eq(fd, -EACCES);
	ck_assert_int_eq(made, 0);
	free(obj);
	remove_dir();
}
END_TEST

/* Change @len bytes at @off of the cache file; then the next open makes
 * it again, and stores what it made over it. */
static void damage_then_open(off_t off, const char *with, size_t len)
{
	char path[256];
	size_t size, fsize, fsize2;
	void *obj, *good, *again;
	int fd, made;

	if (!have_kernel_btf())
		return;
	make_dir();
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cache_file(path, sizeof(path));
	good = read_all(path, &fsize);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, with, len, off), (ssize_t)len);
	close(fd);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	again = read_all(path, &fsize2);
	ck_assert_uint_eq(fsize, fsize2);
	ck_assert_int_eq(memcmp(good, again, fsize), 0);
	free(good);
	free(again);
	free(obj);
	remove_dir();
}

START_TEST(damaged_btf_is_made_again)
{
	damage_then_open(BTF_OFF + 100, "\x55\xaa", 2);
}
END_TEST

START_TEST(btf_of_another_boot_is_made_again)
{
	damage_then_open(BOOT_ID_OFF, "00000000", 8);
}
END_TEST

/* A file cut short (a full disk, a crash before the rename on another
 * file system's semantics): made again. */
START_TEST(truncated_btf_is_made_again)
{
	char path[256];
	struct stat st;
	size_t size;
	void *obj;
	int fd, made;

	if (!have_kernel_btf())
		return;
	make_dir();
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cache_file(path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 1), 0);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	free(obj);
	remove_dir();
}
END_TEST

START_TEST(btf_of_another_object_is_made_again)
{
	char path[256], first[64], cmd[400];
	size_t size, tsize;
	void *obj, *tobj;
	int fd, made;

	if (!have_kernel_btf())
		return;
	obj = object("profile", &size);
	tobj = object("trace", &tsize);
	/* The trace object's file, made in a directory of its own... */
	make_dir();
	fd = corebtf__open(dir, "trace", tobj, tsize, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	strcpy(first, dir);
	cache_file(path, sizeof(path));
	/* ...then under the name of the profile object's. */
	make_dir();
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' \"$(ls '%s'/*.stkbtf)\"", path, dir);
	ck_assert_int_eq(system(cmd), 0);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	remove_dir();
	strcpy(dir, first);
	remove_dir();
	free(obj);
	free(tobj);
}
END_TEST

/* A file others may write is not read, but made again and stored over
 * (the directory is ours alone): not the whole BTF for the rest of the boot. */
START_TEST(btf_others_may_write_is_made_again)
{
	char path[256];
	struct stat st;
	size_t size;
	void *obj;
	int fd, made;

	if (!have_kernel_btf())
		return;
	make_dir();
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cache_file(path, sizeof(path));
	ck_assert_int_eq(chmod(path, 0666), 0);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 0);
	close(fd);
	free(obj);
	remove_dir();
}
END_TEST

/* A symlink in the file's place is not followed, neither to read nor to
 * write: replaced by the file, its target left as it was. */
START_TEST(btf_symlink_is_replaced_not_followed)
{
	char path[256], target[300];
	struct stat st;
	size_t size, tsize;
	void *obj, *before, *after;
	int fd, made;

	if (!have_kernel_btf())
		return;
	make_dir();
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cache_file(path, sizeof(path));
	snprintf(target, sizeof(target), "%s/target", dir);
	ck_assert_int_eq(rename(path, target), 0);
	ck_assert_int_eq(symlink(target, path), 0);
	before = read_all(target, &tsize);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	after = read_all(target, &size);
	ck_assert_uint_eq(size, tsize);
	ck_assert_int_eq(memcmp(before, after, size), 0);
	free(before);
	free(after);
	free(obj);
	remove_dir();
}
END_TEST

/* The trim deletes the cache's own files only: a directory of other BTF
 * files (btfhub's NAME.btf) given as --btf-cache keeps them. */
START_TEST(others_btf_files_are_not_trimmed)
{
	char path[300];
	struct stat st;
	size_t size;
	void *obj, *junk;
	int fd, made, i;

	if (!have_kernel_btf())
		return;
	make_dir();
	junk = calloc(1, 3u << 20);
	ck_assert_ptr_nonnull(junk);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/vmlinux-5.%d.btf", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, junk, 3u << 20), 3u << 20);
		close(fd);
	}
	obj = object("profile", &size);
	fd = corebtf__open(dir, "profile", obj, size, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/vmlinux-5.%d.btf", dir, i);
		ck_assert_int_eq(stat(path, &st), 0);
	}
	free(junk);
	free(obj);
	remove_dir();
}
END_TEST

static Suite *corebtf_suite(void)
{
	Suite *s = suite_create("corebtf");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, minimal_btf_keeps_what_the_relocations_reach);
	tcase_add_test(tc, relocations_are_the_same_profile);
	tcase_add_test(tc, relocations_are_the_same_offcpu);
	tcase_add_test(tc, relocations_are_the_same_trace);
	tcase_add_test(tc, not_an_object_is_refused);
	tcase_add_test(tc, stored_btf_is_read_back);
	tcase_add_test(tc, unusable_dir_is_refused_not_made_each_time);
	tcase_add_test(tc, damaged_btf_is_made_again);
	tcase_add_test(tc, btf_of_another_boot_is_made_again);
	tcase_add_test(tc, btf_of_another_object_is_made_again);
	tcase_add_test(tc, truncated_btf_is_made_again);
	tcase_add_test(tc, btf_others_may_write_is_made_again);
	tcase_add_test(tc, btf_symlink_is_replaced_not_followed);
	tcase_add_test(tc, others_btf_files_are_not_trimmed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(corebtf_suite());
}
