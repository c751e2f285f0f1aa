// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_events.c - stkrec trace's event spellings (record/events/
 * evspec.c): BCC stackcount's prefixes and perf's names parse into the
 * right kind and fields; anything else is refused with a reason that
 * says what was expected.  Resolution against the machine (tracefs,
 * binaries) is tests/e2e/trace_errors.sh's.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "check_main.h"
#include "events.h"

START_TEST(tracepoints_with_and_without_prefix)
{
	struct ev_spec e;
	char why[256];

	ck_assert_int_eq(ev_spec__parse("t:syscalls:sys_enter_write", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_TRACEPOINT);
	ck_assert_str_eq(e.category, "syscalls");
	ck_assert_str_eq(e.name, "sys_enter_write");
	ck_assert_int_eq(ev_spec__parse("sched:sched_switch", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_TRACEPOINT);
	ck_assert_str_eq(e.category, "sched");
	ck_assert_str_eq(e.name, "sched_switch");
	/* Globs in the name only. */
	ck_assert_int_eq(ev_spec__parse("t:syscalls:sys_enter_*", &e, why, sizeof(why)), 0);
	ck_assert_str_eq(e.name, "sys_enter_*");
	ck_assert_int_eq(ev_spec__parse("t:sys*:x", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("t:../x:y", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("t:a:../y", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("t:a:b:c", &e, why, sizeof(why)), -EINVAL);
}
END_TEST

START_TEST(probes_and_software_events)
{
	struct ev_spec e;
	char why[256];

	ck_assert_int_eq(ev_spec__parse("u:c:malloc", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_UPROBE);
	ck_assert_int_eq(e.retprobe, 0);
	ck_assert_str_eq(e.path, "c");
	ck_assert_str_eq(e.name, "malloc");
	ck_assert_int_eq(ev_spec__parse("r:/usr/bin/bash:readline", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_UPROBE);
	ck_assert_int_eq(e.retprobe, 1);
	ck_assert_str_eq(e.path, "/usr/bin/bash");
	ck_assert_int_eq(ev_spec__parse("p:vfs_write", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_KPROBE);
	ck_assert_int_eq(e.retprobe, 0);
	ck_assert_int_eq(ev_spec__parse("k:vfs_read", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_KPROBE);
	ck_assert_int_eq(ev_spec__parse("r:vfs_read", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_KPROBE);
	ck_assert_int_eq(e.retprobe, 1);
	ck_assert_int_eq(ev_spec__parse("page-faults", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(e.kind, EV_SOFTWARE);
	ck_assert_uint_eq(e.sw_config, PERF_COUNT_SW_PAGE_FAULTS);
	ck_assert_int_eq(ev_spec__parse("cs", &e, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.sw_config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	ck_assert_str_eq(e.sw_name, "context-switches");
	ck_assert_int_eq(ev_spec__parse("cpu-migrations", &e, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.sw_config, PERF_COUNT_SW_CPU_MIGRATIONS);
}
END_TEST

START_TEST(bad_spellings_say_what_was_expected)
{
	struct ev_spec e;
	char why[256];

	ck_assert_int_eq(ev_spec__parse("", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("cycles", &e, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "t:CATEGORY:NAME"));
	ck_assert_int_eq(ev_spec__parse("x:a:b", &e, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "unknown prefix"));
	ck_assert_int_eq(ev_spec__parse("u::malloc", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("u:c:mal*", &e, why, sizeof(why)), 0);
	ck_assert_str_eq(e.name, "mal*");
	ck_assert_int_eq(ev_spec__parse("u:c:mal/x", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("p:", &e, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ev_spec__parse("a:b,c:d", &e, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "commas"));
	ck_assert_int_eq(ev_spec__parse("t:a:b\n", &e, why, sizeof(why)), -EINVAL);
}
END_TEST

START_TEST(names_join_with_commas)
{
	struct ev_event ev[2] = {
		{ .kind = EV_TRACEPOINT, .name = "syscalls:sys_enter_write" },
		{ .kind = EV_SOFTWARE, .name = "page-faults" },
	};
	struct ev_list l = { .ev = ev, .n = 2 };
	char *s = ev_list__names(&l);

	ck_assert_str_eq(s, "syscalls:sys_enter_write,page-faults");
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_events");
	TCase *tc = tcase_create("events");

	tcase_add_test(tc, tracepoints_with_and_without_prefix);
	tcase_add_test(tc, probes_and_software_events);
	tcase_add_test(tc, bad_spellings_say_what_was_expected);
	tcase_add_test(tc, names_join_with_commas);
	suite_add_tcase(s, tc);
	return check_run(s);
}
