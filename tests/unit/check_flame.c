// SPDX-License-Identifier: BSD-2-Clause
/*
 * The flame graph's frame tree (report/model/flame.c): stacks merged by name,
 * widths proportional to values, callees ordered by name, the minimum
 * width merge, inverted layout, kinds from folded names, differential
 * colors; and the SVG writer's escaping (report/output/out_svg.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "flame.h"

static struct flame *mk(unsigned int flags)
{
	struct flame_opts o = { .sz = sizeof(o), .flags = flags };
	struct flame *f = flame__new(&o);

	ck_assert_ptr_nonnull(f);
	return f;
}

static void lay(struct flame *f, double width, double min, int inverted)
{
	struct flame_layout_opts o = { .sz = sizeof(o), .width = width, .min_width = min,
				       .frame_height = 16, .top = 50, .bottom = 500,
				       .inverted = inverted };

	ck_assert_int_eq(flame__layout(f, &o), 0);
}

/* The rect named @name at @depth. */
static const struct flame_rect *find(struct flame *f, const char *name, uint32_t depth)
{
	size_t i;

	for (i = 0; i < flame__nr_rects(f); i++) {
		const struct flame_rect *r = flame__rect(f, i);

		if (r->depth == depth && strcmp(r->name, name) == 0)
			return r;
	}
	return NULL;
}

static int near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

START_TEST(stacks_merge_by_name_with_widths_proportional_to_values)
{
	struct flame *f = mk(0);
	static const char *const order[] = { "all", "a", "b", "c", "d", "e" };
	const struct flame_rect *r;
	size_t i;

	/* inserted out of name order: layout orders callees by name */
	ck_assert_int_eq(flame__add_folded(f, "a;e", 5), 0);
	ck_assert_int_eq(flame__add_folded(f, "a;b;d", 3), 0);
	ck_assert_int_eq(flame__add_folded(f, "a;b;c", 2), 0);
	ck_assert_int_eq(flame__add_folded(f, "a;b;d", 0), 0);
	lay(f, 1000, 0.1, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 6);
	for (i = 0; i < 6; i++)
		ck_assert_str_eq(flame__rect(f, i)->name, order[i]);
	ck_assert_uint_eq(flame__total(f), 10);
	r = find(f, "a", 1);
	ck_assert(r && r->value == 10 && near(r->x, 0) && near(r->width, 1000));
	r = find(f, "b", 2);
	ck_assert(r && r->value == 5 && near(r->x, 0) && near(r->width, 500));
	r = find(f, "c", 3);
	ck_assert(r && r->start == 0 && near(r->width, 200));
	r = find(f, "d", 3);
	ck_assert(r && r->start == 2 && near(r->x, 200) && near(r->width, 300));
	r = find(f, "e", 2);
	ck_assert(r && r->start == 5 && near(r->x, 500) && near(r->width, 500));
	ck_assert_uint_eq(flame__nr_merged(f), 0);
	ck_assert_uint_eq(flame__max_depth(f), 3);
	flame__free(f);
}
END_TEST

START_TEST(same_name_under_other_callers_is_another_frame)
{
	struct flame *f = mk(0);

	ck_assert_int_eq(flame__add_folded(f, "x;leaf", 1), 0);
	ck_assert_int_eq(flame__add_folded(f, "y;leaf", 3), 0);
	ck_assert_int_eq(flame__add_folded(f, "x;leaf", 1), 0);
	lay(f, 100, 0, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 5);
	ck_assert_uint_eq(flame__rect(f, 2)->value, 2);	/* x;leaf */
	ck_assert_uint_eq(flame__rect(f, 4)->value, 3);	/* y;leaf */
	ck_assert_str_eq(flame__rect(f, 4)->name, "leaf");
	flame__free(f);
}
END_TEST

/* Callers with many callees find them through the table, not the list. */
START_TEST(many_callees_merge_as_few_do)
{
	struct flame *f = mk(0);
	char stack[32];
	int round, i;

	for (round = 0; round < 3; round++)
		for (i = 0; i < 40; i++) {
			snprintf(stack, sizeof(stack), "c;n%02d;x", (i * 7) % 40);
			ck_assert_int_eq(flame__add_folded(f, stack, 1 + (uint64_t)round), 0);
		}
	lay(f, 1000, 0, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 2 + 40 * 2);
	for (i = 0; i < 40; i++) {
		snprintf(stack, sizeof(stack), "n%02d", i);
		ck_assert_uint_eq(find(f, stack, 2)->value, 6);
		ck_assert_uint_eq(flame__rect(f, 2 + 2 * (size_t)i)->value, 6);
		ck_assert_str_eq(flame__rect(f, 2 + 2 * (size_t)i)->name, stack);
	}
	flame__free(f);
}
END_TEST

START_TEST(frames_narrower_than_min_width_are_merged_and_counted)
{
	struct flame *f = mk(0);
	size_t i;

	ck_assert_int_eq(flame__add_folded(f, "main;hot", 9990), 0);
	/* 10 of 10000 on 100 px: 0.1 px, under 0.5; with its two callees */
	ck_assert_int_eq(flame__add_folded(f, "main;cold;c1;c2", 6), 0);
	ck_assert_int_eq(flame__add_folded(f, "main;cold;c3", 4), 0);
	lay(f, 100, 0.5, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 3);	/* all, main, hot */
	ck_assert_uint_eq(flame__nr_merged(f), 4);	/* cold, c1, c2, c3 */
	for (i = 0; i < flame__nr_rects(f); i++)
		ck_assert(flame__rect(f, i)->width >= 0.5);
	/* the caller keeps the whole width: main is all of it */
	ck_assert(near(find(f, "main", 1)->width, 100));
	/* a lower minimum draws them */
	lay(f, 100, 0.01, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 7);
	ck_assert_uint_eq(flame__nr_merged(f), 0);
	flame__free(f);
}
END_TEST

START_TEST(inverted_puts_the_root_on_top)
{
	struct flame *f = mk(0);

	ck_assert_int_eq(flame__add_folded(f, "a;b", 1), 0);
	lay(f, 100, 0, 0);
	ck_assert(near(find(f, "all", 0)->y, 500));
	ck_assert(near(find(f, "b", 2)->y, 500 - 32));
	lay(f, 100, 0, 1);
	ck_assert(near(find(f, "all", 0)->y, 50));
	ck_assert(near(find(f, "b", 2)->y, 50 + 32));
	flame__free(f);
}
END_TEST

START_TEST(empty_flame_has_only_its_root)
{
	struct flame *f = mk(0);

	lay(f, 100, 0.1, 0);
	ck_assert_uint_eq(flame__nr_rects(f), 1);
	ck_assert_str_eq(flame__rect(f, 0)->name, "all");
	ck_assert(near(flame__rect(f, 0)->width, 0));
	flame__free(f);
}
END_TEST

START_TEST(kinds_come_from_folded_names)
{
	struct flame *f = mk(0);

	ck_assert_int_eq(flame__add_folded(f, "comm;fn;ksym_[k];inl_[i];[unknown];--;wk_[k];wu;wcomm", 1), 0);
	lay(f, 100, 0, 0);
	ck_assert_uint_eq(find(f, "comm", 1)->kind, FLAME_COMM);
	ck_assert_uint_eq(find(f, "fn", 2)->kind, FLAME_USER);
	ck_assert_uint_eq(find(f, "ksym_[k]", 3)->kind, FLAME_KERNEL);
	ck_assert_uint_eq(find(f, "inl_[i]", 4)->kind, FLAME_INLINED);
	ck_assert_uint_eq(find(f, "[unknown]", 5)->kind, FLAME_MARKER);
	ck_assert_uint_eq(find(f, "--", 6)->kind, FLAME_MARKER);
	ck_assert_uint_eq(find(f, "wk_[k]", 7)->kind, FLAME_KERNEL | FLAME_WAKER);
	ck_assert_uint_eq(find(f, "wu", 8)->kind, FLAME_USER | FLAME_WAKER);
	ck_assert_uint_eq(find(f, "wcomm", 9)->kind, FLAME_COMM | FLAME_WAKER);
	flame__free(f);
}
END_TEST

START_TEST(colors_are_derived_from_names_and_kinds)
{
	struct flame *f = mk(0), *g = mk(0);
	struct flame_frame k[] = { { "comm", 4, FLAME_COMM }, { "schedule", 8, FLAME_KERNEL } };
	char c1[8], c2[8], c3[8];
	unsigned int red, green, blue;

	ck_assert_int_eq(flame__add_folded(f, "comm;alpha", 1), 0);
	ck_assert_int_eq(flame__add_folded(f, "comm;beta", 1), 0);
	ck_assert_int_eq(flame__add_folded(g, "other;x;alpha", 7), 0);
	ck_assert_int_eq(flame__add(g, k, 2, 1), 0);
	lay(f, 100, 0, 0);
	lay(g, 100, 0, 0);
	flame__color(f, find(f, "alpha", 2), c1);
	flame__color(g, find(g, "alpha", 3), c2);
	flame__color(f, find(f, "beta", 2), c3);
	ck_assert_str_eq(c1, c2);	/* same name, same color, anywhere */
	ck_assert_str_ne(c1, c3);
	ck_assert_int_eq(sscanf(c1, "#%2x%2x%2x", &red, &green, &blue), 3);
	ck_assert(red >= 205 && green <= 110 && blue <= 70);	/* user: red */
	flame__color(g, find(g, "schedule", 2), c1);
	ck_assert_int_eq(sscanf(c1, "#%2x%2x%2x", &red, &green, &blue), 3);
	ck_assert(red >= 220 && green >= 130 && green <= 180 && blue <= 40);	/* kernel: orange */
	flame__free(f);
	flame__free(g);
}
END_TEST

START_TEST(offcpu_palette_is_blue)
{
	struct flame_opts o = { .sz = sizeof(o), .palette = FLAME_PALETTE_OFFCPU,
				.unit = FLAME_NSEC };
	struct flame *f = flame__new(&o);
	unsigned int red, green, blue;
	char c[8];

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(flame__add_folded(f, "comm;read;--;wake;wcomm", 1000), 0);
	lay(f, 100, 0, 0);
	flame__color(f, find(f, "read", 2), c);
	ck_assert_int_eq(sscanf(c, "#%2x%2x%2x", &red, &green, &blue), 3);
	ck_assert(blue >= 210 && red <= 100 && green <= 150);
	flame__free(f);
}
END_TEST

START_TEST(diff_keeps_new_shape_and_colors_by_share_change)
{
	struct flame *f = mk(FLAME_DIFF);
	const struct flame_rect *r;
	char c[8];

	ck_assert_int_eq(flame__add_folded(f, "a;b", 1), -EINVAL);
	ck_assert_int_eq(flame__add_diff(f, "m;grew", 10, 30), 0);
	ck_assert_int_eq(flame__add_diff(f, "m;shrank", 30, 10), 0);
	ck_assert_int_eq(flame__add_diff(f, "m;same", 10, 10), 0);
	ck_assert_int_eq(flame__add_diff(f, "m;gone", 10, 0), 0);	/* BASE only */
	lay(f, 500, 0.1, 0);
	ck_assert_uint_eq(flame__total(f), 50);
	ck_assert_uint_eq(flame__base_total(f), 60);
	ck_assert_ptr_null(find(f, "gone", 2));	/* no width in NEW */
	r = find(f, "grew", 2);
	ck_assert(r && r->value == 30 && r->base == 10 && near(r->width, 300));
	ck_assert(near(r->delta, 60.0 - 100.0 / 6));
	flame__color(f, r, c);
	ck_assert_str_eq(c, "#ff2d2d");		/* the largest change: full red */
	r = find(f, "shrank", 2);
	ck_assert(near(r->delta, 20.0 - 50.0));
	flame__color(f, r, c);
	ck_assert_str_eq(c, "#6e6eff");		/* blue, weaker: 30 of 43.3 points */
	r = find(f, "m", 1);
	ck_assert(near(r->delta, 0));
	flame__color(f, r, c);
	ck_assert_str_eq(c, "#ffffff");
	/* normalized by other totals (e.g. durations): grew is now unchanged */
	flame__set_totals(f, 20, 60);
	lay(f, 500, 0.1, 0);
	ck_assert(near(find(f, "grew", 2)->delta, 0));
	flame__free(f);
}
END_TEST

START_TEST(non_diff_flame_refuses_diff_stacks)
{
	struct flame *f = mk(0);
	struct flame_opts bad = { .sz = 1 };

	ck_assert_int_eq(flame__add_diff(f, "a", 1, 2), -EINVAL);
	flame__free(f);
	errno = 0;
	ck_assert_ptr_null(flame__new(&bad));
	ck_assert_int_eq(errno, EINVAL);
	flame__free(NULL);
}
END_TEST

static char *svg_of(struct flame *f, const struct flame_svg_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(flame__write_svg(f, o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

START_TEST(svg_escapes_every_name_and_says_the_merge)
{
	struct flame *f = mk(0);
	struct flame_svg_opts o = { .sz = sizeof(o), .title = "T<&>\"'\x1b" };
	const unsigned char *p;
	char *svg;

	ck_assert_int_eq(flame__add_folded(f, "evil;<script>alert(1)</script>;a&b\"c'd", 1000), 0);
	/* raw ESC, an invalid UTF-8 byte, U+FFFF and a valid é */
	ck_assert_int_eq(flame__add_folded(f, "evil;esc\x1b[2J;bad\xff;nonchar\xef\xbf\xbf;caf\xc3\xa9", 1000), 0);
	ck_assert_int_eq(flame__add_folded(f, "evil;tiny", 1), 0);
	svg = svg_of(f, &o);
	ck_assert_uint_eq(count(svg, "<script"), 1);	/* ours only */
	ck_assert_ptr_nonnull(strstr(svg, "n=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
	ck_assert_ptr_nonnull(strstr(svg, "n=\"a&amp;b&quot;c&#39;d\""));
	ck_assert_ptr_nonnull(strstr(svg, "n=\"esc\\x1b[2J\""));
	ck_assert_ptr_nonnull(strstr(svg, "n=\"bad\\xff\""));
	ck_assert_ptr_nonnull(strstr(svg, "n=\"nonchar\\xef\\xbf\\xbf\""));
	ck_assert_ptr_nonnull(strstr(svg, "n=\"caf\xc3\xa9\""));
	ck_assert_ptr_nonnull(strstr(svg, ">T&lt;&amp;&gt;&quot;&#39;\\x1b</text>"));
	/* 1 of 2001 on 1180 px is 0.59 px: drawn; at min 1 px it is merged */
	ck_assert_ptr_null(strstr(svg, "merged"));
	for (p = (const unsigned char *)svg; *p; p++)
		ck_assert(*p >= 0x20 || *p == '\n');
	free(svg);
	o.min_width = 1;
	svg = svg_of(f, &o);
	ck_assert_ptr_nonnull(strstr(svg, ">1 frame narrower than 1 px merged into its callers</text>"));
	ck_assert_ptr_null(strstr(svg, "n=\"tiny\""));
	ck_assert_uint_eq(count(svg, "<g n="), flame__nr_rects(f));
	free(svg);
	flame__free(f);
}
END_TEST

START_TEST(svg_diff_frames_carry_base_values)
{
	struct flame *f = mk(FLAME_DIFF);
	struct flame_svg_opts o = { .sz = sizeof(o), .inverted = 1 };
	char *svg;

	ck_assert_int_eq(flame__add_diff(f, "m;grew", 10, 30), 0);
	svg = svg_of(f, &o);
	ck_assert_ptr_nonnull(strstr(svg, ">Differential Flame Graph</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "<g n=\"grew\" v=\"30\" s=\"0\" b=\"10\">"));
	ck_assert_ptr_nonnull(strstr(svg, "inv:1,"));
	ck_assert_ptr_nonnull(strstr(svg, "diff:1,total:30,btotal:10}"));
	free(svg);
	flame__free(f);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("flame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, stacks_merge_by_name_with_widths_proportional_to_values);
	tcase_add_test(tc, same_name_under_other_callers_is_another_frame);
	tcase_add_test(tc, many_callees_merge_as_few_do);
	tcase_add_test(tc, frames_narrower_than_min_width_are_merged_and_counted);
	tcase_add_test(tc, inverted_puts_the_root_on_top);
	tcase_add_test(tc, empty_flame_has_only_its_root);
	tcase_add_test(tc, kinds_come_from_folded_names);
	tcase_add_test(tc, colors_are_derived_from_names_and_kinds);
	tcase_add_test(tc, offcpu_palette_is_blue);
	tcase_add_test(tc, diff_keeps_new_shape_and_colors_by_share_change);
	tcase_add_test(tc, non_diff_flame_refuses_diff_stacks);
	tcase_add_test(tc, svg_escapes_every_name_and_says_the_merge);
	tcase_add_test(tc, svg_diff_frames_carry_base_values);
	suite_add_tcase(su, tc);
	return check_run(su);
}
