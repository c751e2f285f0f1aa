// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_procreds: a traced process's credentials read from
 * /proc/PID/status, and taken by the calling thread alone for one open.
 * The tests that take another user's need root (as stkrec does); without
 * it they return at once.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "procreds.h"

static char dir[64], secret[128], open_file[128];

/* dir (0711), dir/secret (0600, ours), dir/open (0644). */
static void files_setup(void)
{
	int fd;

	strcpy(dir, "/tmp/check_procreds.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0711), 0);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	snprintf(open_file, sizeof(open_file), "%s/open", dir);
	fd = open(secret, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = open(open_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void files_teardown(void)
{
	unlink(secret);
	unlink(open_file);
	rmdir(dir);
}

static const struct procreds nobody = { .euid = 65534, .fsuid = 65534, .fsgid = 65534 };

static int open_path(void *arg)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

START_TEST(own_status_reads_as_our_ids_in_our_namespace)
{
	struct procreds pc;

	ck_assert_int_eq(procreds__read("/proc", (uint32_t)getpid(), &pc), 0);
	ck_assert_uint_eq(pc.euid, geteuid());
	ck_assert_uint_eq(pc.fsuid, geteuid());
	ck_assert_uint_eq(pc.fsgid, getegid());
	ck_assert_uint_eq(pc.nr_groups, (uint32_t)getgroups(0, NULL));
	ck_assert_int_eq(pc.same_userns, 1);
	ck_assert_int_eq(procreds__read("/proc", 0x7ffffff0, &pc), -ENOENT);
}
END_TEST

START_TEST(nobody_is_refused_a_root_only_file_and_root_comes_back)
{
	int fd;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(procreds__run(&nobody, open_path, secret), -EACCES);
	fd = procreds__run(&nobody, open_path, open_file);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* Ours again: fsuid 0, and the file capabilities with it. */
	ck_assert_int_eq(syscall(SYS_setfsuid, -1L), 0);
	ck_assert_int_eq(syscall(SYS_setfsgid, -1L), 0);
	ck_assert_int_eq(chmod(secret, 0000), 0);
	fd = open(secret, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);	/* CAP_DAC_OVERRIDE is back */
	close(fd);
}
END_TEST

START_TEST(root_without_file_capabilities_reads_only_by_the_mode)
{
	struct procreds root = { 0 };
	int fd;

	if (geteuid() != 0)
		return;
	/* Root in another user namespace (or without CAP_DAC_*): owner
	 * bits only, so a file mode 0000 is refused, 0600 read. */
	ck_assert_int_eq(chmod(secret, 0000), 0);
	ck_assert_int_eq(procreds__run(&root, open_path, secret), -EACCES);
	ck_assert_int_eq(chmod(secret, 0600), 0);
	fd = procreds__run(&root, open_path, secret);
	ck_assert_int_ge(fd, 0);
	close(fd);
	root.same_userns = 1;
	root.cap_eff = 1ull << 1;	/* CAP_DAC_OVERRIDE: its own, counts */
	ck_assert_int_eq(chmod(secret, 0000), 0);
	fd = procreds__run(&root, open_path, secret);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

/* While one thread holds nobody's credentials, the others keep theirs. */
static sem_t taken, go_on;

static int hold(void *arg)
{
	int fd = open_path(arg);

	sem_post(&taken);
	sem_wait(&go_on);
	return fd;
}

static void *holder(void *arg)
{
	return (void *)(intptr_t)procreds__run(&nobody, hold, arg);
}

START_TEST(only_the_calling_thread_takes_them)
{
	pthread_t t;
	void *ret;
	int fd;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(sem_init(&taken, 0, 0), 0);
	ck_assert_int_eq(sem_init(&go_on, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, holder, secret), 0);
	sem_wait(&taken);
	fd = open(secret, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	sem_post(&go_on);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, -EACCES);
}
END_TEST

/* Sets this thread's capabilities to @caps alone (permitted and
 * effective, inheritable none): 0 or -errno. */
static int caps_only(uint64_t caps)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	d[0].permitted = d[0].effective = (uint32_t)caps;
	d[1].permitted = d[1].effective = (uint32_t)(caps >> 32);
	return syscall(SYS_capset, &hdr, d) < 0 ? -errno : 0;
}

static uint64_t caps_effective(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, d) < 0)
		return 0;
	return (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
}

#define NONROOT_CAPS ((1ull << CAP_BPF) | (1ull << CAP_PERFMON))

/*
 * As stkrec's non-root mode runs (uid 1000 with CAP_BPF and CAP_PERFMON
 * only): no CAP_SETUID to take nobody's ids.  The open runs as uid 1000
 * itself: the world-readable file is read, the root-only one refused (and
 * that refusal is not the process's), and the thread keeps its
 * capabilities.  In a child, whose exit status says which step failed.
 */
static int nonroot_child(void)
{
	int fd;

	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0 || setgroups(0, NULL) < 0 ||
	    setresgid(1000, 1000, 1000) < 0 || setresuid(1000, 1000, 1000) < 0 ||
	    caps_only(NONROOT_CAPS) < 0)
		return 10;
	if (procreds__can_take())
		return 11;
	fd = procreds__run(&nobody, open_path, open_file);
	if (fd < 0)
		return 12;
	close(fd);
	fd = procreds__run(&nobody, open_path, secret);
	if (fd != -EACCES)
		return 13;
	if (procreds__refused(fd))
		return 14;
	if (caps_effective() != NONROOT_CAPS)
		return 15;
	return 0;
}

START_TEST(nonroot_with_bpf_caps_opens_as_itself)
{
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(nonroot_child());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_procreds");
	TCase *tc = tcase_create("procreds");

	tcase_add_checked_fixture(tc, files_setup, files_teardown);
	tcase_add_test(tc, own_status_reads_as_our_ids_in_our_namespace);
	tcase_add_test(tc, nobody_is_refused_a_root_only_file_and_root_comes_back);
	tcase_add_test(tc, root_without_file_capabilities_reads_only_by_the_mode);
	tcase_add_test(tc, only_the_calling_thread_takes_them);
	tcase_add_test(tc, nonroot_with_bpf_caps_opens_as_itself);
	suite_add_tcase(s, tc);
	return check_run(s);
}
