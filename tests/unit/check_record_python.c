// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_python.c - the recorder's side of Python frames against the
 * interpreters on this machine: each CPython 3.8-3.13 (pyenv's, Debian's
 * python3) is told apart and versioned from its file (pyelf), 3.13's own
 * _Py_DebugOffsets agree with the table (pytables), and on a live
 * interpreter the layout check passes and a code object reads back as
 * Python itself describes it -- qualname, file name, first line, line
 * table bytes, a non-ASCII name -- while a wrong fingerprint is refused
 * (pycode).  A missing pyenv version is skipped; Debian's python3 is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "pycode.h"
#include "pyelf.h"
#include "pytables.h"
#include "python.h"
#include "stkrec.h"

struct interp {
	const char *exe;	/* the interpreter to run */
	const char *lib;	/* the file holding _PyRuntime */
	uint32_t version;
};

#define PYENV "/root/.pyenv/versions/"
static const struct interp interps[] = {
	{ "/usr/bin/python3", "/usr/bin/python3", PY_VERSION(3, 11) },
	{ PYENV "3.8.18/bin/python3.8", PYENV "3.8.18/lib/libpython3.8.so.1.0", PY_VERSION(3, 8) },
	{ PYENV "3.9.18/bin/python3.9", PYENV "3.9.18/lib/libpython3.9.so.1.0", PY_VERSION(3, 9) },
	{ PYENV "3.10.13/bin/python3.10", PYENV "3.10.13/lib/libpython3.10.so.1.0",
	  PY_VERSION(3, 10) },
	{ PYENV "3.11.7/bin/python3.11", PYENV "3.11.7/lib/libpython3.11.so.1.0",
	  PY_VERSION(3, 11) },
	{ PYENV "3.12.1/bin/python3.12", PYENV "3.12.1/lib/libpython3.12.so.1.0",
	  PY_VERSION(3, 12) },
	{ PYENV "3.13.0/bin/python3.13", PYENV "3.13.0/lib/libpython3.13.so.1.0",
	  PY_VERSION(3, 13) },
};
#define NR_INTERPS (int)(sizeof(interps) / sizeof(interps[0]))

static int have(const struct interp *in)
{
	return access(in->exe, X_OK) == 0 && access(in->lib, R_OK) == 0;
}

START_TEST(names_say_which_files_may_be_interpreters)
{
	ck_assert_int_eq(pyelf__name_minor("/usr/bin/python3.11"), 11);
	ck_assert_int_eq(pyelf__name_minor("/x/lib/libpython3.9.so.1.0"), 9);
	ck_assert_int_eq(pyelf__name_minor("/usr/bin/python3"), 0);
	ck_assert_int_eq(pyelf__name_minor("/usr/lib/x86_64-linux-gnu/libc.so.6"), -1);
	ck_assert_int_eq(pyelf__name_minor("/usr/bin/python2.7"), -1);
	ck_assert_int_eq(pyelf__name_minor("/usr/bin/python3x"), -1);
}
END_TEST

START_TEST(each_interpreter_is_found_and_versioned_from_its_file)
{
	const struct interp *in = &interps[_i];
	struct pyelf pe;
	struct pyoffsets o;
	int fd;

	if (!have(in)) {
		ck_assert_msg(_i != 0, "Debian's python3 is missing");
		return;
	}
	fd = open(in->lib, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pyelf__inspect(fd, in->lib, &pe), 0);
	close(fd);
	ck_assert_uint_eq(pe.version, in->version);
	ck_assert_uint_ne(pe.runtime, 0);
	ck_assert_uint_ne(pe.code_type, 0);
	ck_assert_int_eq(pytables__get(pe.version, &o), 0);
	if (in->version >= PY_VERSION(3, 13)) {
		struct pyoffsets d = o;

		/* The interpreter's own offsets say what the table says. */
		ck_assert_int_eq(pytables__from_debug(pe.debug, pe.debug_size, pe.version, &d), 0);
		ck_assert_int_eq(memcmp(&d, &o, sizeof(d)), 0);
	} else {
		ck_assert_int_eq(pytables__from_debug(pe.debug, pe.debug_size, pe.version, &o),
				 -ENOENT);
	}
}
END_TEST

START_TEST(other_files_are_not_interpreters)
{
	struct pyelf pe;
	int fd = open("/usr/bin/env", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pyelf__inspect(fd, "/usr/bin/python3.99", &pe), -ENOENT);
	close(fd);
}
END_TEST

/* The child: a function with a non-ASCII name in a class, its code's
 * address and what the fingerprint is made of, the addresses of
 * _PyRuntime and PyCode_Type, then it waits for stdin to close. */
static const char child_src[] =
	"import ctypes, sys\n"
	"class K:\n"
	"    def m\xc3\xa9thode(self, x):\n"
	"        y = x + 1\n"
	"        return y * 2\n"
	"c = K.__dict__['m\xc3\xa9thode'].__code__\n"
	"rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, '_PyRuntime'))\n"
	"lt = c.co_lnotab if sys.version_info < (3, 10) else c.co_linetable\n"
	"print(id(c), c.co_firstlineno, id(c.co_name), id(c.co_filename), rt, id(type(c)),"
	" lt.hex() or '-', flush=True)\n"
	"sys.stdin.read()\n";

START_TEST(a_live_code_object_reads_back_as_python_describes_it)
{
	const struct interp *in = &interps[_i];
	unsigned long long code, name, file, rt, type;
	unsigned int first;
	char hex[4096], want_hex[4096];
	int to[2], from[2], status;
	struct pyoffsets o;
	struct pycode c;
	uint32_t fp, i;
	pid_t pid;
	FILE *f;

	if (!have(in)) {
		ck_assert_msg(_i != 0, "Debian's python3 is missing");
		return;
	}
	ck_assert_int_eq(pipe(to), 0);
	ck_assert_int_eq(pipe(from), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(in->exe, in->exe, "-c", child_src, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	f = fdopen(from[0], "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%llu %u %llu %llu %llu %llu %4095s", &code, &first, &name, &file,
				&rt, &type, want_hex),
			 7);
	ck_assert_int_eq(pytables__get(in->version, &o), 0);
	ck_assert_int_eq(pycode__check(pid, &o, rt, type), 0);
	fp = stkrec_py_fingerprint(first, name, file);
	ck_assert_int_eq(pycode__read(pid, &o, type, code, fp ^ 1, &c), -ESTALE);
	ck_assert_int_eq(pycode__read(pid, &o, type, code, fp, &c), 0);
	ck_assert_str_eq(c.qualname, in->version >= PY_VERSION(3, 11) ? "K.m\xc3\xa9thode"
								       : "m\xc3\xa9thode");
	ck_assert_str_eq(c.filename, "<string>");
	ck_assert_uint_eq(c.firstlineno, first);
	for (i = 0; i < c.linetable_size && 2 * i + 2 < sizeof(hex); i++)
		snprintf(hex + 2 * i, 3, "%02x", c.linetable[i]);
	hex[2 * i] = '\0';
	ck_assert_str_eq(c.linetable_size ? hex : "-", want_hex);
	pycode__release(&c);
	/* A layout that is not this one is refused, not trusted. */
	o.bpf.co_firstlineno += 4;
	ck_assert_int_eq(pycode__check(pid, &o, rt, type), -EPROTO);
	close(to[1]);
	fclose(f);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Gone: said so. */
	ck_assert_int_eq(pycode__check(pid, &o, rt, type), -ESRCH);
}
END_TEST

START_TEST(a_kernel_record_decodes_and_says_when_it_was_cut)
{
	static struct stkrec_py_code r;
	struct pycode c;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.addr = 0x7f0000001000;
	r.tgid = 42;
	r.fingerprint = 0xabcdef;
	r.firstlineno = 7;
	/* "Kl\u00e9.f" as a 2-byte (UCS-2) str, "a.py" as ASCII */
	r.name_kind = 2;
	r.name_len = 6;
	memcpy(r.name, "K\0l\0\xe9\0.\0f\0\0\0", 12);
	r.file_kind = 1;
	r.file_len = 4;
	memcpy(r.file, "a.py", 4);
	r.lt_size = 3;
	memcpy(r.lt, "\x80\x00\xd8", 3);
	ck_assert_int_eq(pycode__from_record(&r, &c), 0);
	/* the NUL character is not passed on */
	ck_assert_str_eq(c.qualname, "Kl\xc3\xa9.f?");
	ck_assert_str_eq(c.filename, "a.py");
	ck_assert_uint_eq(c.firstlineno, 7);
	ck_assert_uint_eq(c.linetable_size, 3);
	ck_assert_int_eq(memcmp(c.linetable, "\x80\x00\xd8", 3), 0);
	pycode__release(&c);
	/* Longer than the kernel copies: what it had, and -E2BIG. */
	r.name_kind = 4;
	r.name_len = 1000;
	for (i = 0; i + 4 <= sizeof(r.name); i += 4)
		memcpy(r.name + i, "x\0\0\0", 4);
	ck_assert_int_eq(pycode__from_record(&r, &c), -E2BIG);
	ck_assert_uint_eq(strlen(c.qualname), (STKREC_PY_NAME_MAX - 1) / 4);
	pycode__release(&c);
	r.name_len = 6;
	r.name_kind = 2;
	r.lt_size = STKREC_PY_LT_MAX + 5;
	ck_assert_int_eq(pycode__from_record(&r, &c), -E2BIG);
	ck_assert_uint_eq(c.linetable_size, 0);
	pycode__release(&c);
	/* Not a compact str: refused. */
	r.lt_size = 0;
	r.name_kind = 0;
	ck_assert_int_eq(pycode__from_record(&r, &c), -EINVAL);
}
END_TEST

/* A process mapping an interpreter stkrec does not read (pyenv's 3.7) is
 * counted once in python_unsupported, however often its mappings change
 * (each library it loads tells python__add_process() again). */
START_TEST(an_unsupported_process_is_counted_once)
{
	const char *lib = PYENV "3.7.16/lib/libpython3.7m.so.1.0";
	struct stk_proc_maps maps = { .tgid = (uint32_t)getpid() };
	struct python_stats st;
	struct stk_mapping m;
	struct python *py;
	struct stat sb;
	void *at;
	int fd, devnull, i;

	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* pyenv's 3.7 is not installed */
	ck_assert_int_eq(fstat(fd, &sb), 0);
	at = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(at, MAP_FAILED);
	m = (struct stk_mapping){ .start = (uint64_t)(uintptr_t)at,
				  .end = (uint64_t)(uintptr_t)at + 4096, .offset = 0,
				  .dev = sb.st_dev, .inode = sb.st_ino, .prot = PROT_READ,
				  .path = lib };
	maps.nr_mappings = 1;
	maps.mappings = &m;
	/* A descriptor the 3.7 process never reaches (no map is written). */
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(devnull, 0);
	py = python__new(devnull);
	ck_assert_ptr_nonnull(py);
	for (i = 0; i < 5; i++)
		python__add_process(py, &maps);
	python__stats(py, &st);
	ck_assert_uint_eq(st.unsupported, 1);
	ck_assert_uint_eq(st.processes, 0);
	python__free(py);
	close(devnull);
	munmap(at, 4096);
	close(fd);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("record_python");
	TCase *tc = tcase_create("python");

	tcase_add_test(tc, names_say_which_files_may_be_interpreters);
	tcase_add_loop_test(tc, each_interpreter_is_found_and_versioned_from_its_file, 0, NR_INTERPS);
	tcase_add_test(tc, other_files_are_not_interpreters);
	tcase_add_test(tc, an_unsupported_process_is_counted_once);
	tcase_add_test(tc, a_kernel_record_decodes_and_says_when_it_was_cut);
	tcase_add_loop_test(tc, a_live_code_object_reads_back_as_python_describes_it, 0, NR_INTERPS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
