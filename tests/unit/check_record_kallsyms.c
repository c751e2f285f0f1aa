// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_kallsyms: stkrec's /proc/kallsyms table: parsing, sizes up to
 * the next symbol, aliases, modules, and finding the covering symbol; and
 * reading the kernel's "%pS" text from the BPF symbolizer.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "kallsyms.h"

/* Out of order on purpose, with an alias, data, a module and a bad line. */
static const char table[] =
	"ffffffff81000100 T second\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000000 D some_data\n"
	"not a kallsyms line\n"
	"ffffffff81000180 t third\n"
	"ffffffff81000200 T _etext\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"
	"ffffffffc0001040 T mod_fn2\t[mymod]\n"
	"ffffffffc0002000 t other_fn\t[other]\n";

static struct kallsyms *load(void)
{
	struct kallsyms *ks = kallsyms__parse(table, sizeof(table) - 1);

	ck_assert_ptr_nonnull(ks);
	return ks;
}

START_TEST(lines_are_sorted_by_address_and_bad_lines_skipped)
{
	struct kallsyms *ks = load();
	size_t i;

	ck_assert_uint_eq(kallsyms__count(ks), 9);
	for (i = 1; i < kallsyms__count(ks); i++)
		ck_assert_uint_le(kallsyms__get(ks, i - 1)->addr, kallsyms__get(ks, i)->addr);
	ck_assert_ptr_null(kallsyms__get(ks, 9));
	kallsyms__free(ks);
}
END_TEST

START_TEST(alias_covering_an_address_is_the_global_text_symbol)
{
	struct kallsyms *ks = load();
	const struct stk_ksym *s;
	long i;

	i = kallsyms__find(ks, 0xffffffff81000010);
	ck_assert_int_ge(i, 0);
	s = kallsyms__get(ks, (size_t)i);
	ck_assert_str_eq(s->name, "_text");
	ck_assert_int_eq(s->type, 'T');
	ck_assert_uint_eq(s->size, 0x100);
	ck_assert_str_eq(s->module, "");
	kallsyms__free(ks);
}
END_TEST

START_TEST(aliases_are_named_by_the_first_listed_as_the_kernel_does)
{
	/* As Linux 6.18 lists memcpy, then as 6.x lists vfork's entry
	 * points: the first text alias listed names the address, as %pS
	 * (the BPF symbolizer) names it; data and listing order elsewhere
	 * do not change it. */
	static const char t1[] = "ffffffff81000300 T memcpy\n"
				 "ffffffff81000300 T __memcpy\n"
				 "ffffffff81000300 T __pi_memcpy\n"
				 "ffffffff81000400 t next\n";
	static const char t2[] = "ffffffff81000400 t next\n"
				 "ffffffff81000300 d data_first\n"
				 "ffffffff81000300 t __do_sys_vfork\n"
				 "ffffffff81000300 T __ia32_sys_vfork\n"
				 "ffffffff81000300 T __x64_sys_vfork\n";
	const char *tables[] = { t1, t2 }, *want[] = { "memcpy", "__do_sys_vfork" };
	size_t k;

	for (k = 0; k < 2; k++) {
		struct kallsyms *ks = kallsyms__parse(tables[k], strlen(tables[k]));
		long i;

		ck_assert_ptr_nonnull(ks);
		i = kallsyms__find(ks, 0xffffffff81000310);
		ck_assert_int_ge(i, 0);
		ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, want[k]);
		ck_assert_uint_eq(kallsyms__get(ks, (size_t)i)->size, 0x100);
		i = kallsyms__find(ks, 0xffffffff81000300);
		ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, want[k]);
		kallsyms__free(ks);
	}
}
END_TEST

START_TEST(size_runs_to_the_next_symbol_and_ends_are_exclusive)
{
	struct kallsyms *ks = load();
	long i;

	i = kallsyms__find(ks, 0xffffffff81000100);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, "second");
	ck_assert_uint_eq(kallsyms__get(ks, (size_t)i)->size, 0x80);
	i = kallsyms__find(ks, 0xffffffff8100017f);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, "second");
	i = kallsyms__find(ks, 0xffffffff81000180);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, "third");
	kallsyms__free(ks);
}
END_TEST

START_TEST(module_symbols_carry_their_module_and_end_at_module_boundary)
{
	struct kallsyms *ks = load();
	const struct stk_ksym *s;
	long i;

	i = kallsyms__find(ks, 0xffffffffc0001004);
	s = kallsyms__get(ks, (size_t)i);
	ck_assert_str_eq(s->name, "mod_fn");
	ck_assert_str_eq(s->module, "mymod");
	ck_assert_uint_eq(s->size, 0x40);
	/* The last symbol of a module does not run into the next module. */
	i = kallsyms__find(ks, 0xffffffffc0001040);
	s = kallsyms__get(ks, (size_t)i);
	ck_assert_str_eq(s->name, "mod_fn2");
	ck_assert_uint_eq(s->size, KALLSYMS_LAST_SIZE);
	i = kallsyms__find(ks, 0xffffffffc0001fff);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, "mod_fn2");
	i = kallsyms__find(ks, 0xffffffffc0002000);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->module, "other");
	/* The last symbol of the table gets KALLSYMS_LAST_SIZE too. */
	ck_assert_int_eq(kallsyms__find(ks, 0xffffffffc0002000 + KALLSYMS_LAST_SIZE - 1), (long)i);
	ck_assert_int_eq(kallsyms__find(ks, 0xffffffffc0002000 + KALLSYMS_LAST_SIZE), -1);
	kallsyms__free(ks);
}
END_TEST

START_TEST(address_below_the_first_symbol_is_not_found)
{
	struct kallsyms *ks = load();

	ck_assert_int_eq(kallsyms__find(ks, 0), -1);
	ck_assert_int_eq(kallsyms__find(ks, 0xffffffff80ffffff), -1);
	kallsyms__free(ks);
}
END_TEST

START_TEST(addr_of_finds_text_and_etext)
{
	struct kallsyms *ks = load();

	ck_assert_uint_eq(kallsyms__addr_of(ks, "_text"), 0xffffffff81000000);
	ck_assert_uint_eq(kallsyms__addr_of(ks, "_etext"), 0xffffffff81000200);
	ck_assert_uint_eq(kallsyms__addr_of(ks, "absent"), 0);
	ck_assert_int_eq(kallsyms__all_zero(ks), 0);
	kallsyms__free(ks);
}
END_TEST

START_TEST(hidden_addresses_are_reported_as_all_zero)
{
	static const char hidden[] = "0000000000000000 T _text\n0000000000000000 t foo\n";
	struct kallsyms *ks = kallsyms__parse(hidden, sizeof(hidden) - 1);

	ck_assert_ptr_nonnull(ks);
	ck_assert_int_eq(kallsyms__all_zero(ks), 1);
	kallsyms__free(ks);
	ks = kallsyms__parse("", 0);
	ck_assert_ptr_nonnull(ks);
	ck_assert_int_eq(kallsyms__all_zero(ks), 1);
	ck_assert_int_eq(kallsyms__find(ks, 0xffffffff81000000), -1);
	kallsyms__free(ks);
}
END_TEST

START_TEST(missing_file_sets_errno)
{
	errno = 0;
	ck_assert_ptr_null(kallsyms__load("/nonexistent/kallsyms"));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(running_kernel_table_finds_a_known_function)
{
	struct kallsyms *ks = kallsyms__load("/proc/kallsyms");
	uint64_t addr;
	long i;

	ck_assert_ptr_nonnull(ks);
	if (kallsyms__all_zero(ks)) {
		kallsyms__free(ks);
		return; /* not root: nothing to check against */
	}
	addr = kallsyms__addr_of(ks, "schedule");
	ck_assert_uint_ne(addr, 0);
	i = kallsyms__find(ks, addr + 1);
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(kallsyms__get(ks, (size_t)i)->name, "schedule");
	kallsyms__free(ks);
}
END_TEST

START_TEST(symoff_of_core_kernel_symbol)
{
	char s[] = "vfs_write+0x26b/0x450";
	struct stk_ksym k;

	ck_assert_int_eq(kallsyms__parse_symoff(s, 0xffffffff816b94ab, &k), 0);
	ck_assert_uint_eq(k.addr, 0xffffffff816b9240);
	ck_assert_uint_eq(k.size, 0x450);
	ck_assert_str_eq(k.name, "vfs_write");
	ck_assert_str_eq(k.module, "");
	ck_assert_int_eq(k.type, 't');
}
END_TEST

START_TEST(symoff_with_module_and_dotted_name)
{
	char s[] = "ext4_fn.isra.0+0x0/0x1c [ext4]";
	struct stk_ksym k;

	ck_assert_int_eq(kallsyms__parse_symoff(s, 0xffffffffc0001000, &k), 0);
	ck_assert_uint_eq(k.addr, 0xffffffffc0001000);
	ck_assert_uint_eq(k.size, 0x1c);
	ck_assert_str_eq(k.name, "ext4_fn.isra.0");
	ck_assert_str_eq(k.module, "ext4");
}
END_TEST

START_TEST(symoff_bare_address_is_enoent)
{
	char s[] = "0xffffffffc0123456";
	struct stk_ksym k;

	ck_assert_int_eq(kallsyms__parse_symoff(s, 0xffffffffc0123456, &k), -ENOENT);
}
END_TEST

START_TEST(symoff_malformed_is_einval)
{
	char a[] = "nooffset";
	char b[] = "+0x1/0x2";
	char c[] = "f+0x10/0x10";		/* offset not within the size */
	char d[] = "f+0x1/0x2 ext4";		/* module without brackets */
	char e[] = "f+0x1/0x2 []";
	char f[] = "f+0x1";
	char g[] = "f+1/2";
	char h[] = "f+0x1/0x2 [m]x";
	struct stk_ksym k;

	ck_assert_int_eq(kallsyms__parse_symoff(a, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(b, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(c, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(d, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(e, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(f, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(g, 0x1000, &k), -EINVAL);
	ck_assert_int_eq(kallsyms__parse_symoff(h, 0x1000, &k), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_kallsyms");
	TCase *tc = tcase_create("kallsyms");

	tcase_add_test(tc, lines_are_sorted_by_address_and_bad_lines_skipped);
	tcase_add_test(tc, alias_covering_an_address_is_the_global_text_symbol);
	tcase_add_test(tc, aliases_are_named_by_the_first_listed_as_the_kernel_does);
	tcase_add_test(tc, size_runs_to_the_next_symbol_and_ends_are_exclusive);
	tcase_add_test(tc, module_symbols_carry_their_module_and_end_at_module_boundary);
	tcase_add_test(tc, address_below_the_first_symbol_is_not_found);
	tcase_add_test(tc, addr_of_finds_text_and_etext);
	tcase_add_test(tc, hidden_addresses_are_reported_as_all_zero);
	tcase_add_test(tc, missing_file_sets_errno);
	tcase_add_test(tc, running_kernel_table_finds_a_known_function);
	tcase_add_test(tc, symoff_of_core_kernel_symbol);
	tcase_add_test(tc, symoff_with_module_and_dotted_name);
	tcase_add_test(tc, symoff_bare_address_is_enoent);
	tcase_add_test(tc, symoff_malformed_is_einval);
	suite_add_tcase(s, tc);
	return check_run(s);
}
