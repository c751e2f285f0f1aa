// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_escape: libstk's one rule for printing capture strings as text
 * (format/stk_escape.h), and the reporter's text helpers built on it
 * (report/output/textsafe.h, render_clean()): exact outputs byte by byte.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "output.h"
#include "stk_escape.h"
#include "textsafe.h"

/* Escapes @n bytes of @in and compares with @want, also the fast check. */
static void expect_n(const char *in, size_t n, const char *want)
{
	char out[STK_ESCAPE_SIZE(64)];
	size_t len;

	ck_assert_uint_le(n, 64);
	len = stk_escape(out, sizeof(out), in, n);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_int_eq(stk_escape_needed(in, n), strcmp(in, want) != 0 || strlen(want) != n);
}

static void expect(const char *in, const char *want)
{
	expect_n(in, strlen(in), want);
}

START_TEST(printable_ascii_is_kept)
{
	expect("", "");
	expect("fx_leaf", "fx_leaf");
	expect("std::vector<int>::push_back(int&&) ~ [] {} ' \" `", "std::vector<int>::push_back(int&&) ~ [] {} ' \" `");
	ck_assert_int_eq(stk_escape_needed("fx_leaf", 7), 0);
}
END_TEST

START_TEST(backslash_is_doubled_so_output_is_unambiguous)
{
	expect("a\\b", "a\\\\b");
	/* The four characters \x1b and the byte 0x1b print differently. */
	expect("\\x1b", "\\\\x1b");
	expect("\x1b", "\\x1b");
}
END_TEST

START_TEST(c0_controls_and_del_become_hex)
{
	expect("evil\033[2J", "evil\\x1b[2J");
	expect("a\rb\nc", "a\\x0db\\x0ac");
	expect("\t", "\\x09");
	expect("\x7f", "\\x7f");
	expect("\x01\x1f", "\\x01\\x1f");
	expect_n("a\0b", 3, "a\\x00b");
}
END_TEST

START_TEST(bare_c1_bytes_are_invalid_utf8_and_become_hex)
{
	expect("\x80", "\\x80");
	expect("\x9b" "31m", "\\x9b31m");
	expect("x\x9fy", "x\\x9fy");
}
END_TEST

START_TEST(utf8_encoded_c1_controls_become_hex)
{
	expect("\xc2\x80", "\\xc2\\x80");
	expect("\xc2\x9b" "2J", "\\xc2\\x9b2J");	/* U+009B CSI */
	expect("\xc2\x9f", "\\xc2\\x9f");
	/* U+00A0 is the first one after them: kept. */
	expect("\xc2\xa0", "\xc2\xa0");
}
END_TEST

START_TEST(valid_multibyte_utf8_is_kept)
{
	expect("caf\xc3\xa9", "caf\xc3\xa9");			/* U+00E9 */
	expect("\xe2\x82\xac", "\xe2\x82\xac");			/* U+20AC */
	expect("\xef\xbf\xbd", "\xef\xbf\xbd");			/* U+FFFD */
	expect("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");		/* U+1F600 */
	expect("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");		/* U+10FFFF */
	expect("\xed\x9f\xbf", "\xed\x9f\xbf");			/* U+D7FF */
	expect("\xee\x80\x80", "\xee\x80\x80");			/* U+E000 */
}
END_TEST

START_TEST(overlong_encodings_become_hex)
{
	expect("\xc0\xaf", "\\xc0\\xaf");		/* '/' in two bytes */
	expect("\xc1\xbf", "\\xc1\\xbf");
	expect("\xc0\x9b", "\\xc0\\x9b");		/* ESC in two bytes */
	expect("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	expect("\xe0\x9f\xbf", "\\xe0\\x9f\\xbf");
	expect("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf");
	expect("\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf");
}
END_TEST

START_TEST(surrogates_and_beyond_u10ffff_become_hex)
{
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");	/* U+D800 */
	expect("\xed\xbf\xbf", "\\xed\\xbf\\xbf");	/* U+DFFF */
	expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");	/* U+110000 */
	expect("\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");
	expect("\xff\xfe", "\\xff\\xfe");
}
END_TEST

START_TEST(truncated_sequences_become_hex_and_decoding_resumes)
{
	expect("\xc3", "\\xc3");
	expect("\xe2\x82", "\\xe2\\x82");
	expect("\xf0\x9f\x98", "\\xf0\\x9f\\x98");
	/* A lead byte followed by ASCII: only the lead byte is escaped. */
	expect("\xe2" "ab", "\\xe2" "ab");
	/* A broken sequence, then a good one. */
	expect("\xe2\x82\xc3\xa9", "\\xe2\\x82\xc3\xa9");
	/* NUL inside a sequence ends it. */
	expect_n("\xc3\0", 2, "\\xc3\\x00");
}
END_TEST

START_TEST(truncated_output_never_splits_an_escape)
{
	char out[8];

	memset(out, 'Z', sizeof(out));
	ck_assert_uint_eq(stk_escape(out, 6, "ab\033cd", 5), 8);
	ck_assert_str_eq(out, "ab");	/* "\x1b" would need 4 of the 3 left */
	ck_assert_uint_eq(stk_escape(out, 7, "ab\033cd", 5), 8);
	ck_assert_str_eq(out, "ab\\x1b");
	ck_assert_uint_eq(stk_escape(out, 3, "\xc3\xa9z", 3), 3);
	ck_assert_str_eq(out, "\xc3\xa9");
	ck_assert_uint_eq(stk_escape(out, 2, "\xc3\xa9", 2), 2);
	ck_assert_str_eq(out, "");
	out[0] = 'Z';
	ck_assert_uint_eq(stk_escape(out, 0, "abc", 3), 3);
	ck_assert_int_eq(out[0], 'Z');
}
END_TEST

START_TEST(worst_case_fits_escape_size)
{
	char in[16], out[STK_ESCAPE_SIZE(16)];

	memset(in, 0xff, sizeof(in));
	ck_assert_uint_eq(stk_escape(out, sizeof(out), in, sizeof(in)), 64);
	ck_assert_uint_eq(strlen(out), 64);
}
END_TEST

START_TEST(strbuf_add_escaped_appends)
{
	struct strbuf sb = { 0 };
	char big[3000];

	ck_assert_int_eq(strbuf__adds(&sb, "comm="), 0);
	ck_assert_int_eq(strbuf__add_escaped(&sb, "evil\033[2J", 8), 0);
	ck_assert_str_eq(strbuf__str(&sb), "comm=evil\\x1b[2J");
	ck_assert_uint_eq(sb.len, strlen("comm=evil\\x1b[2J"));
	/* Longer than the helper's stack buffer. */
	memset(big, 0x1b, sizeof(big));
	strbuf__reset(&sb);
	ck_assert_int_eq(strbuf__add_escaped(&sb, big, sizeof(big)), 0);
	ck_assert_uint_eq(sb.len, 4 * sizeof(big));
	ck_assert_int_eq(memcmp(sb.buf, "\\x1b\\x1b", 8), 0);
	strbuf__free(&sb);
}
END_TEST

START_TEST(strbuf_add_u64_writes_what_printf_llu_does)
{
	static const uint64_t v[] = { 0, 7, 10, 999, 4294967295u, 18446744073709551615ull };
	struct strbuf sb = { 0 };
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		strbuf__reset(&sb);
		ck_assert_int_eq(strbuf__adds(&sb, "pid "), 0);
		ck_assert_int_eq(strbuf__add_u64(&sb, v[i]), 0);
		snprintf(want, sizeof(want), "pid %llu", (unsigned long long)v[i]);
		ck_assert_str_eq(strbuf__str(&sb), want);
		ck_assert_uint_eq(sb.len, strlen(want));
	}
	strbuf__free(&sb);
}
END_TEST

START_TEST(render_clean_keeps_its_rules_and_escapes_the_rest)
{
	struct strbuf sb = { 0 };

	/* text: newlines still become spaces, ';' stays. */
	ck_assert_int_eq(render_clean(&sb, "a;b\nc\rd\033e\\", 0), 0);
	ck_assert_str_eq(strbuf__str(&sb), "a;b c d\\x1be\\\\");
	strbuf__reset(&sb);
	/* folded: ';' -> ':' as well. */
	ck_assert_int_eq(render_clean(&sb, "a;b\nc\033[2J\xc2\x9b", 1), 0);
	ck_assert_str_eq(strbuf__str(&sb), "a:b c\\x1b[2J\\xc2\\x9b");
	strbuf__free(&sb);
}
END_TEST

START_TEST(textline_is_one_escaped_line)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(textline__printf(f, "meta %s: %s", "cmdline", "a\nb\033]0;x\a"), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(buf, "meta cmdline: a\\x0ab\\x1b]0;x\\x07\n");
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("escape");

	tcase_add_test(tc, printable_ascii_is_kept);
	tcase_add_test(tc, strbuf_add_u64_writes_what_printf_llu_does);
	tcase_add_test(tc, backslash_is_doubled_so_output_is_unambiguous);
	tcase_add_test(tc, c0_controls_and_del_become_hex);
	tcase_add_test(tc, bare_c1_bytes_are_invalid_utf8_and_become_hex);
	tcase_add_test(tc, utf8_encoded_c1_controls_become_hex);
	tcase_add_test(tc, valid_multibyte_utf8_is_kept);
	tcase_add_test(tc, overlong_encodings_become_hex);
	tcase_add_test(tc, surrogates_and_beyond_u10ffff_become_hex);
	tcase_add_test(tc, truncated_sequences_become_hex_and_decoding_resumes);
	tcase_add_test(tc, truncated_output_never_splits_an_escape);
	tcase_add_test(tc, worst_case_fits_escape_size);
	tcase_add_test(tc, strbuf_add_escaped_appends);
	tcase_add_test(tc, render_clean_keeps_its_rules_and_escapes_the_rest);
	tcase_add_test(tc, textline_is_one_escaped_line);
	suite_add_tcase(s, tc);
	return check_run(s);
}
