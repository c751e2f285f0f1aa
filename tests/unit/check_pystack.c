// SPDX-License-Identifier: BSD-2-Clause
/*
 * Python frames put among native ones (report/model/pystack.c): where each
 * activation's frames go, the stop word, unknown code, malformed word
 * sequences, and the naming by (tgid, address, fingerprint).  Native frames
 * are made here with the names the merge looks for; code objects come from
 * a capture written with libstk (ESYM kind 4).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "check_main.h"
#include "pystack.h"

#define TGID 42
#define EVAL "_PyEval_EvalFrameDefault"

static struct capture *cap;
static struct pystack *ps;

/* Native frames by name: each gets a one-line result of that name. */
static struct sym_line lines[16];
static struct sym_result results[16];

static void native(struct rframe *f, int i, const char *name)
{
	memset(f, 0, sizeof(*f));
	rframe__set_kind(f, RFRAME_USER, 0);
	f->addr = 0x1000 + 0x10 * (uint64_t)i;
	if (!name)
		return;		/* an unknown frame */
	lines[i] = (struct sym_line){ .name = name, .raw = name };
	sym_line__measure(&lines[i]);
	results[i] = (struct sym_result){ .nr_lines = 1, .lines = &lines[i] };
	rframe__set_sym(f, &results[i]);
}

/* What a merged frame shows: a native name, a Python display name, a marker. */
static const char *shown(const struct rframe *f, char *buf, size_t size)
{
	const char *m = rframe__marker(f, buf, size);

	if (m)
		return m;
	if (rframe__py(f))
		return rframe__py(f)->display;
	return rframe__sym(f) ? rframe__sym(f)->lines[0].name : "[unknown]";
}

/* Merges @natives (names, NULL unknown) with @words for @tgid, and returns
 * the frames shown, leaf first, joined by ';' (static buffer). */
static const char *merge(uint32_t tgid, const char *const *natives, uint32_t nn,
			 const uint64_t *words, uint32_t nw, uint32_t *nr_python)
{
	static char out[4096];
	struct rframe nat[16], res[64];
	uint32_t i, n = 0, py = 0;
	char buf[64];

	ck_assert_uint_le(nn, 16);
	for (i = 0; i < nn; i++)
		native(&nat[i], (int)i, natives[i]);
	ck_assert_uint_le(pystack__max_frames(nn, nw), 64);
	ck_assert_int_eq(pystack__merge(ps, tgid, nat, nn, words, nw, res, &n, &py), 0);
	ck_assert_uint_le(n, pystack__max_frames(nn, nw));
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, ";");
		strcat(out, shown(&res[i], buf, sizeof(buf)));
	}
	if (nr_python)
		*nr_python = py;
	return out;
}

#define F(addr, fp, off) stk_py_word__frame(addr, 0), stk_py_word__info(fp, off)
#define E(addr, fp, off) stk_py_word__frame(addr, 1), stk_py_word__info(fp, off)
#define U STK_PY_OFFSET_UNKNOWN

static void setup(void)
{
	/* 3.11's location table of a 'work' whose instruction 23 is line 5
	 * (pylines.h decodes it); the other code objects have none. */
	static const uint8_t lt[] = {
		0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89,
		0x58, 0x8c, 0x58, 0xf0, 0x00, 0x01, 0x05, 0x17, 0xf0, 0x00, 0x01, 0x05, 0x17,
		0x88, 0x01, 0xd8, 0x08, 0x0d, 0x90, 0x11, 0x90, 0x51, 0x91, 0x15, 0x89, 0x0e,
		0x88, 0x05, 0x88, 0x05, 0xd8, 0x0b, 0x10, 0x80, 0x4c,
	};
	static const struct stk_esym_pycode codes[] = {
		{ 0xa000, 0x0a, 2, "work", "/srv/app/worker.py", lt, sizeof(lt) },
		{ 0xb000, 0x0b, 20, "Worker.run", "/srv/app/worker.py", NULL, 0 },
		{ 0xc000, 0x0c, 7, "main", "/srv/app/main.py", NULL, 0 },
		{ 0xd000, 0x0d, 1, "<module>", "/srv/app/main.py", NULL, 0 },
		{ 0xe000, 0x0e, 3, "anon", "", NULL, 0 },
	};
	static const struct stk_esym_pycode other[] = {
		{ 0xa000, 0x0a, 99, "elsewhere", "/other.py", NULL, 0 },
	};
	char file[] = "/tmp/check_pystack.XXXXXX";
	struct stk_writer *w;
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	w = stk_writer__fdopen(fd, NULL);
	ck_assert_ptr_nonnull(w);
	/* Two chunks for TGID: they add up. */
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, TGID, 0x030b, codes, 3), 0);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, TGID, 0x030b, codes + 3, 2), 0);
	ck_assert_int_eq(stk_writer__add_esym_pycode(w, TGID + 1, 0x030b, other, 1), 0);
	ck_assert_int_eq(stk_writer__close(w), 0);
	cap = capture__read(file);
	unlink(file);
	ck_assert_ptr_nonnull(cap);
	ck_assert_uint_eq(cap->nr_pycodes, 6);
	ps = pystack__new(cap);
	ck_assert_ptr_nonnull(ps);
}

static void teardown(void)
{
	pystack__free(ps);
	capture__free(cap);
}

START_TEST(each_activation_runs_the_frames_up_to_its_entry_frame)
{
	static const char *const nat[] = { "cext", EVAL, "PyObject_Call", EVAL, "Py_RunMain" };
	const uint64_t w[] = { F(0xa000, 0x0a, U), E(0xb000, 0x0b, U), F(0xc000, 0x0c, U),
			       E(0xd000, 0x0d, U) };
	uint32_t py;

	ck_assert_str_eq(merge(TGID, nat, 5, w, 8, &py),
			 "cext;work (worker.py:2);Worker.run (worker.py:20);PyObject_Call;"
			 "main (main.py:7);<module> (main.py:1);Py_RunMain");
	ck_assert_uint_eq(py, 4);
}
END_TEST

START_TEST(without_entry_marks_the_first_loop_frame_runs_them_all)
{
	static const char *const nat[] = { EVAL, "PyObject_Call", EVAL };
	const uint64_t w[] = { F(0xa000, 0x0a, U), F(0xb000, 0x0b, U) };

	/* The second loop frame, with no Python frame left, stays native. */
	ck_assert_str_eq(merge(TGID, nat, 3, w, 4, NULL),
			 "work (worker.py:2);Worker.run (worker.py:20);PyObject_Call;" EVAL);
}
END_TEST

START_TEST(cold_parts_and_inline_scopes_of_the_loop_are_loop_frames)
{
	static const char *const nat[] = { EVAL ".cold", "x", EVAL "X", "_PyEval_EvalFrame" };
	const uint64_t w[] = { E(0xa000, 0x0a, U), E(0xb000, 0x0b, U) };
	struct sym_line two[2] = { { .name = "inlined_helper" }, { .name = EVAL } };
	struct sym_result r = { .nr_lines = 2, .inlined = 1, .lines = two };
	struct rframe f = { 0 };

	rframe__set_kind(&f, RFRAME_USER, 0);
	rframe__set_sym(&f, &r);
	/* "_PyEval_EvalFrameDefaultX" and "_PyEval_EvalFrame" are not it:
	 * the second frame goes to the root end. */
	ck_assert_str_eq(merge(TGID, nat, 4, w, 4, NULL),
			 "work (worker.py:2);x;" EVAL "X;_PyEval_EvalFrame;Worker.run (worker.py:20)");
	/* The function a machine frame belongs to is its outermost line. */
	ck_assert_int_eq(pystack__is_eval_frame(&f), 1);
	two[1].name = "other";
	ck_assert_int_eq(pystack__is_eval_frame(&f), 0);
	rframe__set_kind(&f, RFRAME_KERNEL, 0);
	rframe__set_sym(&f, &r);
	two[1].name = EVAL;
	ck_assert_int_eq(pystack__is_eval_frame(&f), 0);
}
END_TEST

START_TEST(frames_left_go_at_the_root_end_after_the_unwind_marker)
{
	static const char *const nat[] = { EVAL, "f", NULL };
	uint64_t w[] = { 0, E(0xa000, 0x0a, U), E(0xb000, 0x0b, U), stk_py_word__stop(1) };
	struct rframe nat2[3], res[16];
	uint32_t n, py;
	char buf[64];

	/* A native unknown frame, then the stack ends in an unwind marker. */
	ck_assert_str_eq(merge(TGID, nat, 3, w + 1, 5, NULL),
			 "work (worker.py:2);f;[unknown];Worker.run (worker.py:20);"
			 "[python stopped: depth]");
	native(&nat2[0], 0, EVAL);
	native(&nat2[1], 1, "f");
	native(&nat2[2], 2, NULL);
	nat2[2].addr = 0xfffffffffffff002ULL;	/* unwind stopped: fault */
	ck_assert_int_eq(pystack__merge(ps, TGID, nat2, 3, w + 1, 5, res, &n, &py), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(py, 3);
	ck_assert_str_eq(shown(&res[2], buf, sizeof(buf)), "[unwind stopped: fault]");
	ck_assert_str_eq(shown(&res[3], buf, sizeof(buf)), "Worker.run (worker.py:20)");
	ck_assert_uint_eq(rframe__python_stop(&res[4]), STK_PY_STOP_DEPTH);
}
END_TEST

START_TEST(the_stop_goes_right_after_the_last_python_frame)
{
	static const char *const nat[] = { "cext", EVAL, "PyObject_Call", EVAL, "Py_RunMain" };
	const uint64_t w[] = { E(0xa000, 0x0a, U), stk_py_word__stop(2) };
	const uint64_t only_stop[] = { stk_py_word__stop(3) };
	const uint64_t odd_stop[] = { stk_py_word__stop(77) };

	ck_assert_str_eq(merge(TGID, nat, 5, w, 3, NULL),
			 "cext;work (worker.py:2);[python stopped: fault];PyObject_Call;" EVAL
			 ";Py_RunMain");
	/* No frame at all: the stop at the root end. */
	ck_assert_str_eq(merge(TGID, nat, 5, only_stop, 1, NULL),
			 "cext;" EVAL ";PyObject_Call;" EVAL ";Py_RunMain;[python stopped: bad code]");
	ck_assert_str_eq(merge(TGID, nat, 1, odd_stop, 1, NULL), "cext;[python stopped: ?]");
}
END_TEST

START_TEST(code_not_described_is_unknown_code)
{
	static const char *const nat[] = { EVAL };
	/* No such address; the right address with another fingerprint (the
	 * code was freed and another allocated there); another process's. */
	const uint64_t w[] = { F(0x9000, 0x0a, 0), F(0xa000, 0x0b, 0), F(0xb000, 0x0b, 0) };
	const uint64_t mine[] = { F(0xa000, 0x0a, 0) };
	uint32_t py;

	ck_assert_str_eq(merge(TGID, nat, 1, w, 6, &py),
			 "[python: unknown code];[python: unknown code];Worker.run (worker.py:20)");
	ck_assert_uint_eq(py, 3);
	/* Another process's code at the same address with the same
	 * fingerprint: a forked child's (it runs its parent's objects). */
	ck_assert_str_eq(merge(TGID + 1, nat, 1, w, 6, NULL),
			 "[python: unknown code];[python: unknown code];Worker.run (worker.py:20)");
	ck_assert_str_eq(merge(TGID + 1, nat, 1, mine, 2, NULL), "elsewhere (other.py:99)");
	ck_assert_str_eq(merge(TGID + 2, nat, 1, w, 2, NULL), "[python: unknown code]");
}
END_TEST

START_TEST(malformed_words_are_shown_as_far_as_they_make_sense)
{
	static const char *const nat[] = { EVAL };
	/* a frame word without its info word (its fingerprint unknown: so
	 * is its code), an info word alone and a native word among them
	 * (skipped), a frame word ending in the stop, and words after the
	 * stop (never read) */
	const uint64_t w[] = {
		stk_py_word__frame(0xa000, 0), F(0xb000, 0x0b, U), stk_py_word__info(0x0c, 0),
		0x7f0000001234ULL, stk_py_word__frame(0xc000, 1), stk_py_word__stop(2),
		F(0xd000, 0x0d, U),
	};
	uint32_t py;

	ck_assert_str_eq(merge(TGID, nat, 1, w, 9, &py),
			 "[python: unknown code];Worker.run (worker.py:20);[python: unknown code];"
			 "[python stopped: fault]");
	ck_assert_uint_eq(py, 4);
}
END_TEST

START_TEST(lines_come_from_the_table_else_the_first_line)
{
	static const char *const nat[] = { EVAL };
	const uint64_t at23[] = { F(0xa000, 0x0a, 23) };
	const uint64_t past[] = { F(0xa000, 0x0a, 100000) };
	const uint64_t unknown[] = { F(0xa000, 0x0a, U) };
	const uint64_t noname[] = { F(0xe000, 0x0e, 0) };
	struct rframe nat1[1], res[4];
	const struct rpyframe *pf;
	uint32_t n, py;

	ck_assert_str_eq(merge(TGID, nat, 1, at23, 2, NULL), "work (worker.py:5)");
	ck_assert_str_eq(merge(TGID, nat, 1, past, 2, NULL), "work (worker.py:2)");
	ck_assert_str_eq(merge(TGID, nat, 1, unknown, 2, NULL), "work (worker.py:2)");
	/* An empty co_filename: nothing before the colon. */
	ck_assert_str_eq(merge(TGID, nat, 1, noname, 2, NULL), "anon (:3)");
	/* What pprof gets: qualname, the whole file, the line, the first line. */
	native(&nat1[0], 0, EVAL);
	ck_assert_int_eq(pystack__merge(ps, TGID, nat1, 1, at23, 2, res, &n, &py), 0);
	pf = rframe__py(&res[0]);
	ck_assert_ptr_nonnull(pf);
	ck_assert_str_eq(pf->line.name, "work");
	ck_assert_str_eq(pf->line.file, "/srv/app/worker.py");
	ck_assert_uint_eq(pf->line.line, 5);
	ck_assert_uint_eq(pf->line.start_line, 2);
	/* Named once: the same key gives the same name. */
	ck_assert_int_eq(pystack__merge(ps, TGID, nat1, 1, at23, 2, res + 1, &n, &py), 0);
	ck_assert_ptr_eq(rframe__py(&res[1]), pf);
}
END_TEST

START_TEST(native_words_end_at_the_first_python_word)
{
	const uint64_t w[] = { 0x401000, 0xfffffffffffff001ULL, stk_py_word__frame(0xa000, 0),
			       stk_py_word__info(1, 2) };

	ck_assert_uint_eq(pystack__native_words(w, 4), 2);
	ck_assert_uint_eq(pystack__native_words(w, 2), 2);
	ck_assert_uint_eq(pystack__native_words(w + 2, 2), 0);
	ck_assert_uint_eq(pystack__native_words(w, 0), 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("pystack");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, each_activation_runs_the_frames_up_to_its_entry_frame);
	tcase_add_test(tc, without_entry_marks_the_first_loop_frame_runs_them_all);
	tcase_add_test(tc, cold_parts_and_inline_scopes_of_the_loop_are_loop_frames);
	tcase_add_test(tc, frames_left_go_at_the_root_end_after_the_unwind_marker);
	tcase_add_test(tc, the_stop_goes_right_after_the_last_python_frame);
	tcase_add_test(tc, code_not_described_is_unknown_code);
	tcase_add_test(tc, malformed_words_are_shown_as_far_as_they_make_sense);
	tcase_add_test(tc, lines_come_from_the_table_else_the_first_line);
	tcase_add_test(tc, native_words_end_at_the_first_python_word);
	suite_add_tcase(su, tc);
	return check_run(su);
}
