// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the protobuf writer (report/output/pb.c) and the pprof builder
 * (report/output/pprof.c): exact wire bytes, de-duplication rules, error codes,
 * and the gzip'd output decoded back here with zlib.  Decoding with the
 * real decoders (protoc, go tool pprof) is in tests/e2e/pprof_encoder.sh.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check_main.h"
#include "pb.h"
#include "pprof.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Assert that @b holds exactly the @n bytes of @want. */
#define ck_assert_bytes(data, len, want)                                             \
	do {                                                                         \
		const uint8_t *d_ = (data);                                          \
		size_t l_ = (len), i_;                                               \
		ck_assert_uint_eq(l_, sizeof(want));                                 \
		for (i_ = 0; i_ < l_; i_++)                                          \
			ck_assert_msg(d_[i_] == (want)[i_],                          \
				      "byte %zu: got 0x%02x, want 0x%02x", i_,        \
				      d_[i_], (want)[i_]);                           \
	} while (0)

/* ---- pb ------------------------------------------------------------------ */

START_TEST(varint_encodes_boundaries_exactly)
{
	static const struct {
		uint64_t v;
		size_t len;
		uint8_t bytes[PB_VARINT_MAX];
	} cases[] = {
		{ 0, 1, { 0x00 } },
		{ 1, 1, { 0x01 } },
		{ 127, 1, { 0x7f } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xac, 0x02 } },
		{ 16383, 2, { 0xff, 0x7f } },
		{ 16384, 3, { 0x80, 0x80, 0x01 } },
		{ 1ull << 32, 5, { 0x80, 0x80, 0x80, 0x80, 0x10 } },
		{ UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
	};
	uint8_t out[PB_VARINT_MAX + 1];
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(out, 0xee, sizeof(out));
		n = pb__encode_varint(out, cases[i].v);
		ck_assert_uint_eq(n, cases[i].len);
		ck_assert_uint_eq(pb__varint_size(cases[i].v), cases[i].len);
		ck_assert_mem_eq(out, cases[i].bytes, n);
		ck_assert_uint_eq(out[n], 0xee); /* nothing written past the end */
	}
}
END_TEST

START_TEST(tag_combines_field_number_and_wire_type)
{
	static const uint8_t want[] = {
		0x08,			      /* field 1, varint */
		0x12,			      /* field 2, length-delimited */
		0x78,			      /* field 15, varint: last one-byte key */
		0x82, 0x01,		      /* field 16, length-delimited */
		0xf8, 0xff, 0xff, 0xff, 0x0f, /* field 2^29-1, varint */
	};
	struct pb_buf b = PB_BUF_INIT;

	pb_buf__tag(&b, 1, PB_WIRE_VARINT);
	pb_buf__tag(&b, 2, PB_WIRE_LEN);
	pb_buf__tag(&b, 15, PB_WIRE_VARINT);
	pb_buf__tag(&b, 16, PB_WIRE_LEN);
	ck_assert_int_eq(pb_buf__tag(&b, (1u << 29) - 1, PB_WIRE_VARINT), 0);
	ck_assert_bytes(b.data, b.len, want);
	pb_buf__release(&b);
}
END_TEST

START_TEST(zero_scalar_is_left_out_only_by_nz_variants)
{
	static const uint8_t want[] = { 0x08, 0x00, 0x10, 0x96, 0x01 };
	struct pb_buf b = PB_BUF_INIT;

	ck_assert_int_eq(pb_buf__uint64_nz(&b, 1, 0), 0);
	ck_assert_int_eq(pb_buf__int64_nz(&b, 1, 0), 0);
	ck_assert_uint_eq(b.len, 0);
	pb_buf__uint64(&b, 1, 0);
	pb_buf__uint64_nz(&b, 2, 150);
	ck_assert_bytes(b.data, b.len, want);
	pb_buf__release(&b);
}
END_TEST

START_TEST(negative_int64_is_ten_byte_twos_complement)
{
	static const uint8_t want[] = {
		0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* -1 */
		0x10, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* -2 */
	};
	struct pb_buf b = PB_BUF_INIT;

	pb_buf__int64_nz(&b, 1, -1);
	pb_buf__int64_nz(&b, 2, -2);
	ck_assert_bytes(b.data, b.len, want);
	pb_buf__release(&b);
}
END_TEST

START_TEST(bytes_field_is_length_prefixed_even_when_empty)
{
	static const uint8_t want[] = { 0x32, 0x03, 'a', 'b', 'c', 0x32, 0x00 };
	struct pb_buf b = PB_BUF_INIT;

	pb_buf__bytes(&b, 6, "abc", 3);
	ck_assert_int_eq(pb_buf__bytes(&b, 6, "", 0), 0);
	ck_assert_bytes(b.data, b.len, want);
	pb_buf__release(&b);
}
END_TEST

START_TEST(long_bytes_field_has_multibyte_length)
{
	uint8_t data[200];
	struct pb_buf b = PB_BUF_INIT;

	memset(data, 'z', sizeof(data));
	pb_buf__bytes(&b, 6, data, sizeof(data));
	ck_assert_uint_eq(b.len, 3 + sizeof(data));
	ck_assert_uint_eq(b.data[0], 0x32);
	ck_assert_uint_eq(b.data[1], 0xc8); /* 200 = 0x48 | 0x80, then 1 */
	ck_assert_uint_eq(b.data[2], 0x01);
	ck_assert_mem_eq(b.data + 3, data, sizeof(data));
	pb_buf__release(&b);
}
END_TEST

START_TEST(nested_message_is_embedded_with_its_length)
{
	static const uint8_t want[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	struct pb_buf inner = PB_BUF_INIT, outer = PB_BUF_INIT;

	pb_buf__uint64(&inner, 1, 150);
	ck_assert_int_eq(pb_buf__message(&outer, 3, &inner), 0);
	ck_assert_bytes(outer.data, outer.len, want);
	ck_assert_uint_eq(inner.len, 3); /* the nested buffer is left alone */
	pb_buf__release(&inner);
	pb_buf__release(&outer);
}
END_TEST

START_TEST(nested_message_with_error_is_not_embedded)
{
	struct pb_buf inner = PB_BUF_INIT, outer = PB_BUF_INIT;

	inner.err = -ENOMEM;
	ck_assert_int_eq(pb_buf__message(&outer, 3, &inner), -ENOMEM);
	ck_assert_uint_eq(outer.len, 0);
	ck_assert_int_eq(outer.err, 0);
	pb_buf__release(&outer);
}
END_TEST

START_TEST(packed_repeated_is_one_record_and_absent_when_empty)
{
	static const uint8_t want[] = {
		0x0a, 0x04, 0x01, 0xac, 0x02, 0x00, /* field 1: 1, 300, 0 */
		0x12, 0x0b, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x01, /* field 2: 5, -1 */
	};
	static const uint64_t u[] = { 1, 300, 0 };
	static const int64_t s[] = { 5, -1 };
	struct pb_buf b = PB_BUF_INIT;

	ck_assert_int_eq(pb_buf__packed_uint64(&b, 1, u, 0), 0);
	ck_assert_int_eq(pb_buf__packed_int64(&b, 1, s, 0), 0);
	ck_assert_uint_eq(b.len, 0);
	pb_buf__packed_uint64(&b, 1, u, ARRAY_SIZE(u));
	ck_assert_int_eq(pb_buf__packed_int64(&b, 2, s, ARRAY_SIZE(s)), 0);
	ck_assert_bytes(b.data, b.len, want);
	pb_buf__release(&b);
}
END_TEST

START_TEST(reset_empties_but_keeps_memory_and_release_accepts_null)
{
	struct pb_buf b = PB_BUF_INIT;
	size_t cap;

	pb_buf__raw(&b, "0123456789", 10);
	cap = b.cap;
	ck_assert_uint_ge(cap, 10);
	pb_buf__reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.cap, cap);
	pb_buf__release(&b);
	ck_assert_ptr_null(b.data);
	pb_buf__release(&b);
	pb_buf__release(NULL);
}
END_TEST

START_TEST(buffer_grows_across_many_appends)
{
	struct pb_buf b = PB_BUF_INIT;
	uint64_t i;

	/* 100000 two-byte varints, past several doublings. */
	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(pb_buf__varint(&b, 128 + (i % 16000)), 0);
	ck_assert_uint_eq(b.len, 200000);
	ck_assert_uint_eq(b.data[0], 0x80);
	ck_assert_uint_eq(b.data[1], 0x01);
	pb_buf__release(&b);
}
END_TEST

/* ---- pprof helpers -------------------------------------------------------- */

static const struct pprof_value_type count_type[] = { { "samples", "count" } };

static struct pprof *new_count_profile(void)
{
	struct pprof_opts opts = {
		.sample_types = count_type,
		.nr_sample_types = 1,
	};
	struct pprof *p = pprof__new(&opts);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* Write @p with pprof__write() and return the gunzip'd bytes. */
static uint8_t *write_and_gunzip(const struct pprof *p, size_t *len)
{
	FILE *f = tmpfile();
	uint8_t *gz, *out = NULL;
	size_t gz_len, cap = 1 << 16;
	z_stream zs = { 0 };
	long end;
	int ret;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pprof__write(p, fileno(f)), 0);
	end = lseek(fileno(f), 0, SEEK_END);
	ck_assert_int_gt(end, 18); /* a gzip header and trailer at least */
	gz_len = (size_t)end;
	gz = malloc(gz_len);
	ck_assert_ptr_nonnull(gz);
	ck_assert_int_eq(pread(fileno(f), gz, gz_len, 0), (ssize_t)gz_len);
	fclose(f);

	/* Must be gzip, not zlib or raw deflate: 15 + 16 accepts gzip only. */
	ck_assert_uint_eq(gz[0], 0x1f);
	ck_assert_uint_eq(gz[1], 0x8b);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)gz_len;
	*len = 0;
	do {
		if (*len == 0 || zs.avail_out == 0) {
			cap *= 2;
			out = realloc(out, cap);
			ck_assert_ptr_nonnull(out);
		}
		zs.next_out = out + *len;
		zs.avail_out = (uInt)(cap - *len);
		ret = inflate(&zs, Z_NO_FLUSH);
		ck_assert_msg(ret == Z_OK || ret == Z_STREAM_END, "inflate: %d", ret);
		*len = cap - zs.avail_out;
	} while (ret != Z_STREAM_END);
	ck_assert_uint_eq(zs.avail_in, 0); /* one gzip member, nothing after it */
	inflateEnd(&zs);
	free(gz);
	return out;
}

/*
 * An independent walk over the top-level fields of a Profile: counts
 * each field number.  Fails the test on anything malformed, so it also
 * proves that the stream parses.
 */
static void count_fields(const uint8_t *d, size_t len, size_t counts[16])
{
	size_t pos = 0;

	memset(counts, 0, 16 * sizeof(counts[0]));
	while (pos < len) {
		uint64_t key = 0, v = 0;
		unsigned shift = 0;

		do {
			ck_assert_uint_lt(pos, len);
			ck_assert_uint_lt(shift, 64);
			key |= (uint64_t)(d[pos] & 0x7f) << shift;
			shift += 7;
		} while (d[pos++] & 0x80);
		shift = 0;
		do {
			ck_assert_uint_lt(pos, len);
			v |= (uint64_t)(d[pos] & 0x7f) << shift;
			shift += 7;
		} while (d[pos++] & 0x80);
		ck_assert_uint_lt(key >> 3, 16);
		counts[key >> 3]++;
		if ((key & 7) == PB_WIRE_LEN) {
			ck_assert_uint_le(v, len - pos);
			pos += v;
		} else {
			ck_assert_uint_eq(key & 7, PB_WIRE_VARINT);
		}
	}
}

/* ---- pprof ---------------------------------------------------------------- */

START_TEST(new_rejects_missing_or_too_many_sample_types)
{
	struct pprof_value_type many[PPROF_MAX_SAMPLE_TYPES + 1];
	struct pprof_value_type no_type[] = { { NULL, "count" } };
	struct pprof_opts opts = { 0 };
	size_t i;

	errno = 0;
	ck_assert_ptr_null(pprof__new(NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pprof__new(&opts));
	ck_assert_int_eq(errno, EINVAL);

	for (i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = (struct pprof_value_type){ "t", "u" };
	opts.sample_types = many;
	opts.nr_sample_types = ARRAY_SIZE(many);
	errno = 0;
	ck_assert_ptr_null(pprof__new(&opts));
	ck_assert_int_eq(errno, EINVAL);

	opts.sample_types = no_type;
	opts.nr_sample_types = 1;
	errno = 0;
	ck_assert_ptr_null(pprof__new(&opts));
	ck_assert_int_eq(errno, EINVAL);

	opts.sample_types = many;
	opts.nr_sample_types = PPROF_MAX_SAMPLE_TYPES;
	pprof__free(pprof__new(&opts));
	pprof__free(NULL);
}
END_TEST

START_TEST(string_table_starts_with_empty_and_interns_once)
{
	struct pprof *p = new_count_profile();
	int64_t i;

	ck_assert_int_eq(pprof__string(p, "", &i), 0);
	ck_assert_int_eq(i, 0);
	ck_assert_int_eq(pprof__string(p, NULL, &i), 0);
	ck_assert_int_eq(i, 0);
	/* "samples" and "count" came from the sample type, in that order. */
	ck_assert_int_eq(pprof__string(p, "samples", &i), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(pprof__string(p, "count", &i), 0);
	ck_assert_int_eq(i, 2);
	ck_assert_int_eq(pprof__string(p, "new", &i), 0);
	ck_assert_int_eq(i, 3);
	ck_assert_int_eq(pprof__string(p, "new", &i), 0);
	ck_assert_int_eq(i, 3);
	pprof__free(p);
}
END_TEST

START_TEST(interning_survives_table_growth)
{
	struct pprof *p = new_count_profile();
	char s[32];
	int64_t i, got;

	/* Far past the initial 256 slots: every string keeps its index. */
	for (i = 0; i < 5000; i++) {
		snprintf(s, sizeof(s), "s%ld", (long)i);
		ck_assert_int_eq(pprof__string(p, s, &got), 0);
		ck_assert_int_eq(got, 3 + i);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(s, sizeof(s), "s%ld", (long)i);
		ck_assert_int_eq(pprof__string(p, s, &got), 0);
		ck_assert_int_eq(got, 3 + i);
	}
	pprof__free(p);
}
END_TEST

START_TEST(mapping_identity_is_the_callers_key_not_content)
{
	struct pprof *p = new_count_profile();
	struct pprof_mapping m = { .start = 0x1000, .limit = 0x2000, .filename = "/bin/a" };
	struct pprof_mapping other = { .start = 0x5000, .limit = 0x6000, .filename = "/bin/b" };
	uint64_t id;
	int64_t s;

	ck_assert_int_eq(pprof__mapping(p, 7, &m, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* Same key, other content: the first mapping. */
	ck_assert_int_eq(pprof__mapping(p, 7, &other, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* Same content, other key (another process): a mapping of its own. */
	ck_assert_int_eq(pprof__mapping(p, 8, &m, &id), 0);
	ck_assert_uint_eq(id, 2);
	/* Key 0 is an ordinary key. */
	ck_assert_int_eq(pprof__mapping(p, 0, &m, &id), 0);
	ck_assert_uint_eq(id, 3);
	ck_assert_int_eq(pprof__mapping(p, 8, NULL, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(pprof__mapping(p, 9, NULL, &id), -ENOENT);
	ck_assert_int_eq(pprof__mapping(p, 9, &m, NULL), -EINVAL);
	/* The ignored mapping's strings were not interned: "/bin/b" is new
	 * ("", "samples", "count", "/bin/a" came before). */
	ck_assert_int_eq(pprof__string(p, "/bin/b", &s), 0);
	ck_assert_int_eq(s, 4);
	pprof__free(p);
}
END_TEST

START_TEST(function_identity_is_its_content)
{
	struct pprof *p = new_count_profile();
	struct pprof_function f = { "ns::f()", "_ZN2ns1fEv", NULL, 10 };
	uint64_t a, b;

	ck_assert_int_eq(pprof__function(p, &f, &a), 0);
	ck_assert_uint_eq(a, 1);
	/* A NULL filename is the empty string. */
	f.filename = "";
	ck_assert_int_eq(pprof__function(p, &f, &b), 0);
	ck_assert_uint_eq(b, a);
	f.start_line = 11;
	ck_assert_int_eq(pprof__function(p, &f, &b), 0);
	ck_assert_uint_eq(b, 2);
	f.start_line = 10;
	f.system_name = "ns::f()";
	ck_assert_int_eq(pprof__function(p, &f, &b), 0);
	ck_assert_uint_eq(b, 3);
	ck_assert_int_eq(pprof__function(p, NULL, &b), -EINVAL);
	pprof__free(p);
}
END_TEST

START_TEST(location_identity_is_mapping_address_and_lines)
{
	struct pprof *p = new_count_profile();
	struct pprof_mapping m = { .start = 0x1000, .limit = 0x2000 };
	struct pprof_function f = { .name = "f" }, g = { .name = "g" }, sep = { .name = "--" };
	struct pprof_line lines[2];
	uint64_t mid, fid, gid, sid, id;

	ck_assert_int_eq(pprof__mapping(p, 1, &m, &mid), 0);
	ck_assert_int_eq(pprof__function(p, &f, &fid), 0);
	ck_assert_int_eq(pprof__function(p, &g, &gid), 0);
	ck_assert_int_eq(pprof__function(p, &sep, &sid), 0);

	lines[0] = (struct pprof_line){ gid, 3 };
	lines[1] = (struct pprof_line){ fid, 7 };
	ck_assert_int_eq(pprof__location(p, mid, 0x1010, lines, 2, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(pprof__location(p, mid, 0x1010, lines, 2, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(pprof__location(p, mid, 0x1011, lines, 2, &id), 0);
	ck_assert_uint_eq(id, 2);
	/* Same address without the inline frame: another location. */
	ck_assert_int_eq(pprof__location(p, mid, 0x1010, lines + 1, 1, &id), 0);
	ck_assert_uint_eq(id, 3);
	/* No mapping, address 0: pseudo-frames differ by function. */
	ck_assert_int_eq(pprof__location(p, 0, 0, &(struct pprof_line){ sid, 0 }, 1, &id), 0);
	ck_assert_uint_eq(id, 4);
	ck_assert_int_eq(pprof__location(p, 0, 0, &(struct pprof_line){ fid, 0 }, 1, &id), 0);
	ck_assert_uint_eq(id, 5);
	ck_assert_int_eq(pprof__location(p, 0, 0, &(struct pprof_line){ sid, 0 }, 1, &id), 0);
	ck_assert_uint_eq(id, 4);
	/* An unsymbolized address has no lines. */
	ck_assert_int_eq(pprof__location(p, mid, 0x1010, NULL, 0, &id), 0);
	ck_assert_uint_eq(id, 6);
	pprof__free(p);
}
END_TEST

START_TEST(location_rejects_ids_it_never_returned)
{
	struct pprof *p = new_count_profile();
	struct pprof_function f = { .name = "f" };
	struct pprof_line line;
	uint64_t fid, id;

	ck_assert_int_eq(pprof__function(p, &f, &fid), 0);
	line = (struct pprof_line){ fid, 1 };
	ck_assert_int_eq(pprof__location(p, 1, 0x10, &line, 1, &id), -EINVAL); /* no mapping 1 */
	line.function_id = 0;
	ck_assert_int_eq(pprof__location(p, 0, 0x10, &line, 1, &id), -EINVAL);
	line.function_id = fid + 1;
	ck_assert_int_eq(pprof__location(p, 0, 0x10, &line, 1, &id), -EINVAL);
	ck_assert_int_eq(pprof__location(p, 0, 0x10, NULL, 1, &id), -EINVAL);
	ck_assert_int_eq(pprof__location(p, 0, 0x10, NULL, 0, NULL), -EINVAL);
	/* Nothing was added: the first valid location is still id 1. */
	line.function_id = fid;
	ck_assert_int_eq(pprof__location(p, 0, 0x10, &line, 1, &id), 0);
	ck_assert_uint_eq(id, 1);
	pprof__free(p);
}
END_TEST

START_TEST(add_sample_rejects_bad_input_and_adds_nothing)
{
	struct pprof *p = new_count_profile();
	const struct pprof_label no_key[] = { { .key = NULL, .str = "x" } };
	const int64_t two[] = { 1, 2 };
	uint64_t loc, bad = 2, zero = 0;
	size_t counts[16], len;
	uint8_t *out;

	ck_assert_int_eq(pprof__location(p, 0, 0x10, NULL, 0, &loc), 0);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, two, 2, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, two, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, NULL, 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &bad, 1, two, 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &zero, 1, two, 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, NULL, 1, two, 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, two, 1, no_key, 1), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, two, 1, NULL, 1), -EINVAL);

	out = write_and_gunzip(p, &len);
	count_fields(out, len, counts);
	ck_assert_uint_eq(counts[2], 0); /* no sample */
	free(out);

	/* A sample without a stack is valid (e.g. a lost stack's count). */
	ck_assert_int_eq(pprof__add_sample(p, NULL, 0, two, 1, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, &loc, 1, two, 1, NULL, 0), 0);
	out = write_and_gunzip(p, &len);
	count_fields(out, len, counts);
	ck_assert_uint_eq(counts[2], 2);
	free(out);
	pprof__free(p);
}
END_TEST

START_TEST(minimal_profile_is_exact_bytes)
{
	static const uint8_t want[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, /* sample_type {1, 2} */
		0x32, 0x00,			    /* string_table[0] = "" */
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
		0x32, 0x05, 'c', 'o', 'u', 'n', 't',
	};
	struct pprof *p = new_count_profile();
	size_t len;
	uint8_t *out;

	out = write_and_gunzip(p, &len);
	ck_assert_bytes(out, len, want);
	free(out);
	pprof__free(p);
}
END_TEST

/* Every message kind once, checked byte by byte against profile.proto's
 * field numbers, worked out by hand in the comments. */
START_TEST(full_profile_is_exact_bytes)
{
	static const uint8_t want[] = {
		/* sample_type { type 1 "samples", unit 2 "count" } */
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,
		/* sample { location_id [1], value [2],
		 *          label { key 8 "pid", num 300 }, label { key 9, str 10 } } */
		0x12, 0x13, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x02,
		0x1a, 0x05, 0x08, 0x08, 0x18, 0xac, 0x02,
		0x1a, 0x04, 0x08, 0x09, 0x10, 0x0a,
		/* mapping { id 1, start 0x1000, limit 0x2000, filename 5,
		 *           build_id 6, has_functions } */
		0x1a, 0x0e, 0x08, 0x01, 0x10, 0x80, 0x20, 0x18, 0x80, 0x40,
		0x28, 0x05, 0x30, 0x06, 0x38, 0x01,
		/* location { id 1, mapping_id 1, address 0x1010,
		 *            line { function_id 1, line 4 } } */
		0x22, 0x0d, 0x08, 0x01, 0x10, 0x01, 0x18, 0x90, 0x20,
		0x22, 0x04, 0x08, 0x01, 0x10, 0x04,
		/* function { id 1, name 7, system_name 7, start_line 3 } */
		0x2a, 0x08, 0x08, 0x01, 0x10, 0x07, 0x18, 0x07, 0x28, 0x03,
		/* string_table */
		0x32, 0x00,
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
		0x32, 0x05, 'c', 'o', 'u', 'n', 't',
		0x32, 0x03, 'c', 'p', 'u',
		0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's',
		0x32, 0x05, 'a', '.', 'o', 'u', 't',
		0x32, 0x02, 'a', 'b',
		0x32, 0x01, 'f',
		0x32, 0x03, 'p', 'i', 'd',
		0x32, 0x04, 'c', 'o', 'm', 'm',
		0x32, 0x01, 'x',
		0x32, 0x02, 'h', 'i',
		0x48, 0x05,			    /* time_nanos 5 */
		0x50, 0xac, 0x02,		    /* duration_nanos 300 */
		0x5a, 0x04, 0x08, 0x03, 0x10, 0x04, /* period_type { 3, 4 } */
		0x60, 0xe8, 0x07,		    /* period 1000 */
		0x6a, 0x01, 0x0b,		    /* comment [11] */
		0x70, 0x01,			    /* default_sample_type 1 */
	};
	struct pprof_opts opts = {
		.sample_types = count_type,
		.nr_sample_types = 1,
		.period_type = { "cpu", "nanoseconds" },
		.period = 1000,
		.time_nanos = 5,
		.duration_nanos = 300,
		.default_sample_type = "samples",
	};
	struct pprof_mapping m = {
		.start = 0x1000, .limit = 0x2000, .filename = "a.out", .build_id = "ab",
		.has_functions = true,
	};
	struct pprof_function f = { .name = "f", .system_name = "f", .start_line = 3 };
	struct pprof_label labels[] = { { .key = "pid", .num = 300 }, { .key = "comm", .str = "x" } };
	struct pprof *p = pprof__new(&opts);
	uint64_t mid, fid, lid;
	int64_t value = 2;
	size_t len;
	uint8_t *out;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pprof__mapping(p, 1, &m, &mid), 0);
	ck_assert_int_eq(pprof__function(p, &f, &fid), 0);
	ck_assert_int_eq(pprof__location(p, mid, 0x1010, &(struct pprof_line){ fid, 4 }, 1, &lid),
			 0);
	ck_assert_int_eq(pprof__add_sample(p, &lid, 1, &value, 1, labels, 2), 0);
	ck_assert_int_eq(pprof__add_comment(p, "hi"), 0);
	ck_assert_int_eq(pprof__add_comment(p, NULL), -EINVAL);
	out = write_and_gunzip(p, &len);
	ck_assert_bytes(out, len, want);
	free(out);
	pprof__free(p);
}
END_TEST

START_TEST(write_is_repeatable_and_builder_stays_usable)
{
	struct pprof *p = new_count_profile();
	uint8_t *a, *b, *c;
	size_t alen, blen, clen, counts[16];
	int64_t v = 1;

	ck_assert_int_eq(pprof__add_sample(p, NULL, 0, &v, 1, NULL, 0), 0);
	a = write_and_gunzip(p, &alen);
	b = write_and_gunzip(p, &blen);
	ck_assert_uint_eq(alen, blen);
	ck_assert_mem_eq(a, b, alen);
	ck_assert_int_eq(pprof__add_sample(p, NULL, 0, &v, 1, NULL, 0), 0);
	c = write_and_gunzip(p, &clen);
	count_fields(c, clen, counts);
	ck_assert_uint_eq(counts[2], 2);
	free(a);
	free(b);
	free(c);
	pprof__free(p);
}
END_TEST

START_TEST(large_profile_streams_through_many_gzip_chunks)
{
	struct pprof *p = new_count_profile();
	struct pprof_mapping m = { .start = 0x100000, .limit = 0x900000, .filename = "/bin/big" };
	struct pprof_function f = { 0 };
	struct pprof_line line;
	uint64_t mid, fid, lid, stack[64];
	size_t i, len, counts[16], depth = 0;
	char name[48];
	int64_t v;
	uint8_t *out;

	ck_assert_int_eq(pprof__mapping(p, 1, &m, &mid), 0);
	/* 20000 each of functions, locations and samples: megabytes of
	 * protobuf, so every record kind crosses a 64 KiB chunk boundary. */
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "function_with_a_long_name_%zu", i);
		f.name = name;
		ck_assert_int_eq(pprof__function(p, &f, &fid), 0);
		ck_assert_uint_eq(fid, i + 1);
		line = (struct pprof_line){ fid, (int64_t)i };
		ck_assert_int_eq(pprof__location(p, mid, 0x100000 + i * 4, &line, 1, &lid), 0);
		ck_assert_uint_eq(lid, i + 1);
		stack[depth++ % ARRAY_SIZE(stack)] = lid;
		v = (int64_t)i;
		ck_assert_int_eq(pprof__add_sample(p, stack,
						   depth < ARRAY_SIZE(stack) ? depth : ARRAY_SIZE(stack),
						   &v, 1, NULL, 0),
				 0);
	}
	out = write_and_gunzip(p, &len);
	ck_assert_uint_gt(len, 1 << 20);
	count_fields(out, len, counts);
	ck_assert_uint_eq(counts[1], 1);
	ck_assert_uint_eq(counts[2], 20000);
	ck_assert_uint_eq(counts[3], 1);
	ck_assert_uint_eq(counts[4], 20000);
	ck_assert_uint_eq(counts[5], 20000);
	ck_assert_uint_eq(counts[6], 3 + 1 + 20000); /* "", samples, count, /bin/big, names */
	free(out);
	pprof__free(p);
}
END_TEST

START_TEST(write_errors_are_negative_errno)
{
	struct pprof *p = new_count_profile();
	FILE *full;
	int fd;

	ck_assert_int_eq(pprof__write(p, -1), -EINVAL);
	ck_assert_int_eq(pprof__write(NULL, 1), -EINVAL);
	ck_assert_int_eq(pprof__write_file(p, NULL), -EINVAL);

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pprof__write(p, fd), -EBADF);
	close(fd);

	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pprof__write(p, fd), -ENOSPC);
	close(fd);

	/* Unbuffered, so fwrite itself meets the full device. */
	full = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	ck_assert_int_eq(pprof__write_file(p, full), -ENOSPC);
	fclose(full);
	pprof__free(p);
}
END_TEST

START_TEST(write_file_output_equals_write_fd_output)
{
	struct pprof *p = new_count_profile();
	char *mem = NULL;
	size_t mem_len = 0, len;
	FILE *f, *raw;
	uint8_t *fd_bytes;
	long end;

	ck_assert_int_eq(pprof__add_comment(p, "same either way"), 0);
	f = open_memstream(&mem, &mem_len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pprof__write_file(p, f), 0);
	ck_assert_int_eq(fclose(f), 0);

	raw = tmpfile();
	ck_assert_ptr_nonnull(raw);
	ck_assert_int_eq(pprof__write(p, fileno(raw)), 0);
	end = lseek(fileno(raw), 0, SEEK_END);
	ck_assert_int_eq(end, (long)mem_len);
	len = (size_t)end;
	fd_bytes = malloc(len);
	ck_assert_ptr_nonnull(fd_bytes);
	ck_assert_int_eq(pread(fileno(raw), fd_bytes, len, 0), (ssize_t)len);
	ck_assert_mem_eq(fd_bytes, mem, len);
	fclose(raw);
	free(fd_bytes);
	free(mem);
	pprof__free(p);
}
END_TEST

static Suite *pprof_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *pb = tcase_create("pb");
	TCase *pp = tcase_create("pprof");

	tcase_add_test(pb, varint_encodes_boundaries_exactly);
	tcase_add_test(pb, tag_combines_field_number_and_wire_type);
	tcase_add_test(pb, zero_scalar_is_left_out_only_by_nz_variants);
	tcase_add_test(pb, negative_int64_is_ten_byte_twos_complement);
	tcase_add_test(pb, bytes_field_is_length_prefixed_even_when_empty);
	tcase_add_test(pb, long_bytes_field_has_multibyte_length);
	tcase_add_test(pb, nested_message_is_embedded_with_its_length);
	tcase_add_test(pb, nested_message_with_error_is_not_embedded);
	tcase_add_test(pb, packed_repeated_is_one_record_and_absent_when_empty);
	tcase_add_test(pb, reset_empties_but_keeps_memory_and_release_accepts_null);
	tcase_add_test(pb, buffer_grows_across_many_appends);
	suite_add_tcase(s, pb);

	tcase_add_test(pp, new_rejects_missing_or_too_many_sample_types);
	tcase_add_test(pp, string_table_starts_with_empty_and_interns_once);
	tcase_add_test(pp, interning_survives_table_growth);
	tcase_add_test(pp, mapping_identity_is_the_callers_key_not_content);
	tcase_add_test(pp, function_identity_is_its_content);
	tcase_add_test(pp, location_identity_is_mapping_address_and_lines);
	tcase_add_test(pp, location_rejects_ids_it_never_returned);
	tcase_add_test(pp, add_sample_rejects_bad_input_and_adds_nothing);
	tcase_add_test(pp, minimal_profile_is_exact_bytes);
	tcase_add_test(pp, full_profile_is_exact_bytes);
	tcase_add_test(pp, write_is_repeatable_and_builder_stays_usable);
	tcase_add_test(pp, large_profile_streams_through_many_gzip_chunks);
	tcase_add_test(pp, write_errors_are_negative_errno);
	tcase_add_test(pp, write_file_output_equals_write_fd_output);
	tcase_set_timeout(pp, 60);
	suite_add_tcase(s, pp);
	return s;
}

int main(void)
{
	return check_run(pprof_suite());
}
