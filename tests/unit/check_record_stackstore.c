// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recorder's stack store (record/stackstore.c) against a real BPF hash
 * map of its "stacks" shape: eviction keeps an eighth of the map free and
 * takes the stacks referenced longest ago; a delete the kernel refuses
 * leaves the stack resident (counted as nothing evicted, taken again by
 * the next eviction); a map of one entry keeps evicting after a loss.
 * Needs root for the maps (else skipped, 77).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "stackstore.h"

static int new_map(uint32_t entries)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stacks", sizeof(uint64_t),
				sizeof(struct stkrec_stack), entries, NULL);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Store stack @id in the map, as BPF does, and let a row of flush @seq
 * reference it. */
static void store_and_see(struct stackstore *ss, int fd, uint64_t id, uint64_t seq)
{
	struct stkrec_stack s = { .nr = 1 };
	const struct stkrec_stack *added;
	int64_t ref = (int64_t)id;

	s.ips[0] = 0x1000 + id;
	ck_assert_int_eq(bpf_map_update_elem(fd, &id, &s, BPF_ANY), 0);
	ck_assert_int_eq(stackstore__see(ss, &ref, seq, &added), 0);
	ck_assert_int_gt(ref, 0);
}

static size_t map_count(int fd)
{
	uint64_t key, *prev = NULL, k2;
	size_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		n++;
		k2 = key;
		prev = &k2;
	}
	return n;
}

static int in_map(int fd, uint64_t id)
{
	struct stkrec_stack s;

	return bpf_map_lookup_elem(fd, &id, &s) == 0;
}

/* 60 stacks in a map of 64, referenced by flushes 0-5, the last 10 by 9:
 * the 8 referenced longest ago go (to 8 + 4 free), none of the later. */
START_TEST(evicts_oldest_down_to_the_headroom)
{
	struct stackstore *ss = stackstore__new(64);
	struct stackstore_stats st;
	int fd = new_map(64), gone;
	uint64_t id;

	ck_assert_ptr_nonnull(ss);
	stackstore__set_map(ss, fd);
	for (id = 1; id <= 60; id++)
		store_and_see(ss, fd, id, id <= 50 ? id / 10 : 9);
	ck_assert_int_eq(stackstore__evict(ss, 60, 0), 0);
	stackstore__stats(ss, &st);
	ck_assert_uint_eq(st.evicted, 8);
	ck_assert_uint_eq(map_count(fd), 52);
	/* Flush 0 referenced stacks 1-9: 8 of them go, all later ones stay. */
	for (id = 1, gone = 0; id <= 9; id++)
		gone += !in_map(fd, id);
	ck_assert_int_eq(gone, 8);
	for (id = 10; id <= 60; id++)
		ck_assert_msg(in_map(fd, id), "stack %lu of flush %lu evicted", (unsigned long)id,
			      (unsigned long)(id <= 50 ? id / 10 : 9));
	/* Under the headroom now: nothing more. */
	ck_assert_int_eq(stackstore__evict(ss, 52, 0), 0);
	stackstore__stats(ss, &st);
	ck_assert_uint_eq(st.evicted, 8);
	stackstore__free(ss);
	close(fd);
}
END_TEST

/* Deletes the kernel refuses (a read-only fd: EPERM, as a kernel without
 * batch deletes gives EINVAL) evict nothing and leave the stacks
 * resident: the next eviction, through a fd that may delete, takes them. */
START_TEST(refused_deletes_stay_resident)
{
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, ro, .open_flags = BPF_F_RDONLY);
	struct stackstore *ss = stackstore__new(64);
	struct stackstore_stats st;
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = new_map(64), rofd;
	uint64_t id;

	ck_assert_ptr_nonnull(ss);
	stackstore__set_map(ss, fd);
	for (id = 1; id <= 60; id++)
		store_and_see(ss, fd, id, 1);
	ck_assert_int_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	rofd = bpf_map_get_fd_by_id_opts(info.id, &ro);
	ck_assert_int_ge(rofd, 0);
	stackstore__set_map(ss, rofd);
	ck_assert_int_eq(stackstore__evict(ss, 60, 0), 1);
	stackstore__stats(ss, &st);
	ck_assert_uint_eq(st.evicted, 0);
	ck_assert_uint_eq(map_count(fd), 60);
	stackstore__set_map(ss, fd);
	ck_assert_int_eq(stackstore__evict(ss, 60, 0), 0);
	stackstore__stats(ss, &st);
	ck_assert_uint_eq(st.evicted, 8);
	ck_assert_uint_eq(map_count(fd), 52);
	stackstore__free(ss);
	close(rofd);
	close(fd);
}
END_TEST

/* A map of one entry: after an interval that lost stacks the headroom
 * is still one entry, so the next flush evicts the one it holds. */
START_TEST(one_entry_map_keeps_evicting)
{
	struct stackstore *ss = stackstore__new(1);
	struct stackstore_stats st;
	int fd = new_map(1);
	int i;

	ck_assert_ptr_nonnull(ss);
	stackstore__set_map(ss, fd);
	for (i = 1; i <= 3; i++) {
		store_and_see(ss, fd, (uint64_t)i, (uint64_t)i);
		/* Every interval lost a stack for want of room. */
		stackstore__evict(ss, 1, (uint64_t)i * 10);
		stackstore__stats(ss, &st);
		ck_assert_uint_eq(st.evicted, (uint64_t)i);
		ck_assert_uint_eq(map_count(fd), 0);
	}
	stackstore__free(ss);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_stackstore");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed, fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 8, 8, 1, NULL);
	if (fd < 0) {
		fprintf(stderr, "check_record_stackstore: cannot create BPF maps (%s); skipped\n",
			strerror(errno));
		return 77;
	}
	close(fd);
	tcase_add_test(tc, evicts_oldest_down_to_the_headroom);
	tcase_add_test(tc, refused_deletes_stay_resident);
	tcase_add_test(tc, one_entry_map_keeps_evicting);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
