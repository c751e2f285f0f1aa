// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_symcache: the symbol cache's symbol-table files (<build-id>.stab,
 * report/symbols/symcache.c), run under ASan+UBSan: a table stored is read
 * back whole for the same files only, and a file whose sizes were rewritten
 * with its CRC made right again is refused without a byte read outside it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "stk_int.h"
#include "symcache.h"

/* struct stab_header's fields the tests rewrite (symcache.c): the header's
 * size at 12, the debuginfo path's padded size at 84, the body's size and
 * the CRC 16 and 8 bytes before the header's end. */
#define OFF_HEADER_SIZE 12
#define OFF_DBG_PATH_SIZE 84

static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const char body[] = "0123456789abcdef";

struct fx {
	char dir[64];
	char elf[128], dbg[160], cache[128], stab[256];
	struct symcache_tab_id id;
};

static void put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A binary, its separate debuginfo (a long name: a path of several
 * 8-byte words), and a cache holding their table. */
static void fx_make(struct fx *fx)
{
	char hex[2 * sizeof(bid) + 1];
	size_t i;

	strcpy(fx->dir, "/tmp/check_symcache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx->dir));
	snprintf(fx->elf, sizeof(fx->elf), "%s/prog", fx->dir);
	snprintf(fx->dbg, sizeof(fx->dbg), "%s/prog-debuginfo-with-a-long-name.debug", fx->dir);
	snprintf(fx->cache, sizeof(fx->cache), "%s/cache", fx->dir);
	for (i = 0; i < sizeof(bid); i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(fx->stab, sizeof(fx->stab), "%s/%s.stab", fx->cache, hex);
	put_file(fx->elf, "not really an ELF");
	put_file(fx->dbg, "nor a debuginfo");
	fx->id = (struct symcache_tab_id){ .elf_path = fx->elf, .dbg = fx->dbg, .bias = 0x1000 };
	ck_assert_int_eq(symcache__tab_store(fx->cache, bid, sizeof(bid), &fx->id, body,
					     sizeof(body)), 0);
}

static void fx_free(struct fx *fx)
{
	unlink(fx->stab);
	rmdir(fx->cache);
	unlink(fx->elf);
	unlink(fx->dbg);
	rmdir(fx->dir);
}

/* The file at @path whole, in *@size bytes (malloc()ed). */
static uint8_t *slurp(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	b = malloc(st.st_size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(read(fd, b, st.st_size), st.st_size);
	close(fd);
	*size = st.st_size;
	return b;
}

START_TEST(stored_table_reads_back_for_the_same_files_only)
{
	struct symcache_tab_id other;
	const void *got;
	void *buf;
	size_t size;
	struct fx fx;

	fx_make(&fx);
	ck_assert_int_eq(symcache__tab_load(fx.cache, bid, sizeof(bid), &fx.id, &buf, &got, &size), 0);
	ck_assert_uint_eq(size, sizeof(body));
	ck_assert_mem_eq(got, body, sizeof(body));
	free(buf);
	other = fx.id;
	other.bias = 0x2000;
	ck_assert_int_eq(symcache__tab_load(fx.cache, bid, sizeof(bid), &other, &buf, &got, &size),
			 -ENOENT);
	other = fx.id;
	other.dbg = NULL;
	ck_assert_int_eq(symcache__tab_load(fx.cache, bid, sizeof(bid), &other, &buf, &got, &size),
			 -ENOENT);
	ck_assert_ptr_null(buf);
	fx_free(&fx);
}
END_TEST

/*
 * The file cut to its header and one word of the debuginfo's path, the
 * body's size set so that header + path + body still add up to the file's
 * size modulo 2^64, the CRC made right: the path (and the body after it)
 * lie past the end of what was read.  Refused as damaged, and removed.
 */
START_TEST(sizes_that_wrap_around_are_refused_in_bounds)
{
	uint32_t hsize, dsize, crc;
	uint64_t body_size;
	const void *got;
	uint8_t *b;
	size_t size;
	void *buf;
	struct fx fx;
	int fd;

	fx_make(&fx);
	b = slurp(fx.stab, &size);
	memcpy(&hsize, b + OFF_HEADER_SIZE, 4);
	memcpy(&dsize, b + OFF_DBG_PATH_SIZE, 4);
	ck_assert_uint_eq(size, hsize + dsize + sizeof(body));
	ck_assert_uint_gt(dsize, 8);
	size = hsize + 8;
	body_size = (uint64_t)size - hsize - dsize;	/* wraps */
	memcpy(b + hsize - 16, &body_size, 8);
	crc = stk_crc32c(0, b + hsize, size - hsize);
	memcpy(b + hsize - 8, &crc, 4);
	fd = open(fx.stab, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, size), (ssize_t)size);
	close(fd);
	free(b);

	ck_assert_int_eq(symcache__tab_load(fx.cache, bid, sizeof(bid), &fx.id, &buf, &got, &size),
			 -EBADMSG);
	ck_assert_ptr_null(buf);
	ck_assert_ptr_null(got);
	ck_assert_int_ne(access(fx.stab, F_OK), 0);
	fx_free(&fx);
}
END_TEST

static Suite *symcache_suite(void)
{
	Suite *s = suite_create("symcache");
	TCase *tc = tcase_create("stab");

	tcase_add_test(tc, stored_table_reads_back_for_the_same_files_only);
	tcase_add_test(tc, sizes_that_wrap_around_are_refused_in_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(symcache_suite());
}
