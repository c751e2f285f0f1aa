// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof profile builder (see pprof.h).
 *
 * Everything added is encoded at once into protobuf bytes: a function or
 * location is stored as the encoding of its fields minus the id, and that
 * byte string is also its identity for de-duplication (the encoding is
 * deterministic, so equal content <=> equal bytes).  Samples are encoded
 * straight into the final top-level records.  Writing then only has to
 * prefix ids and lengths, and streams the records through zlib without
 * ever holding the whole uncompressed profile in memory: a Profile is a
 * sequence of top-level fields, so it needs no outer length.
 *
 * Field numbers are those of github.com/google/pprof/proto/profile.proto.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hash.h"
#include "idmap.h"
#include "pb.h"
#include "pprof.h"

/* perftools.profiles.Profile */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

/* ValueType */
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };

/* Sample */
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };

/* Label */
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4 };

/* Mapping */
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};

/* Location and Line */
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };

/* Function */
enum {
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* Entries are chained by uint32_t numbers, 1 + entry index (0 = none). */
#define INTERN_MAX (UINT32_MAX - 1)

/* Byte strings stored back to back; entry i is bytes[off[i], off[i + 1]). */
struct blobs {
	struct pb_buf bytes;
	size_t *off; /* n + 1 offsets once anything was added */
	size_t n;
	size_t cap; /* offsets allocated */
};

/*
 * A blobs list with a hash index, so an equal byte string is found again.
 * The index maps the keyed hash of an entry's bytes (hash.h) to the newest
 * entry with that hash, and next[] links it to the older ones: lookups
 * compare the bytes, so two different strings never share an entry even
 * when their 64-bit hashes collide.
 */
struct intern {
	struct blobs list;
	struct idmap index;	/* hash of the bytes -> 1 + newest entry index */
	uint32_t *next;		/* per entry: 1 + older entry with its hash, or 0 */
	size_t cap_next;	/* next[] allocated */
};

struct pprof {
	struct intern strings;	 /* string_table: raw bytes, entry 0 = "" */
	struct intern functions; /* Function minus id */
	struct intern locations; /* Location minus id */
	struct intern map_keys;	 /* caller keys, 8 bytes each, index = mapping id - 1 */
	struct blobs mappings;	 /* Mapping minus id */
	struct pb_buf samples;	 /* complete top-level Profile.sample records */
	struct pb_buf scratch;	 /* one entry being encoded */
	int64_t *comments;	 /* string indexes */
	size_t nr_comments;
	size_t nr_sample_types;
	int64_t sample_types[PPROF_MAX_SAMPLE_TYPES][2];
	int64_t period_type[2];
	bool has_period_type;
	int64_t period;
	int64_t time_nanos;
	int64_t duration_nanos;
	int64_t default_sample_type;
};

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void blobs__release(struct blobs *l)
{
	pb_buf__release(&l->bytes);
	free(l->off);
	memset(l, 0, sizeof(*l));
}

static const uint8_t *blobs__get(const struct blobs *l, size_t i, size_t *len)
{
	*len = l->off[i + 1] - l->off[i];
	return l->bytes.data + l->off[i];
}

/* Append an entry; on failure the list is unchanged. */
static int blobs__add(struct blobs *l, const void *data, size_t len)
{
	size_t cap, *off;
	int err;

	if (l->n >= INTERN_MAX)
		return -EOVERFLOW;
	if (l->n + 2 > l->cap) {
		cap = l->cap ? l->cap * 2 : 64;
		off = realloc(l->off, cap * sizeof(*off));
		if (!off)
			return -ENOMEM;
		if (!l->cap)
			off[0] = 0;
		l->off = off;
		l->cap = cap;
	}
	err = pb_buf__raw(&l->bytes, data, len);
	if (err) {
		/* Only a failed realloc can get here; the bytes are intact. */
		l->bytes.err = 0;
		return err;
	}
	l->n++;
	l->off[l->n] = l->bytes.len;
	return 0;
}

/* Forget the last entry added. */
static void blobs__pop(struct blobs *l)
{
	l->n--;
	l->bytes.len = l->off[l->n];
}

static void intern__release(struct intern *t)
{
	blobs__release(&t->list);
	idmap__release(&t->index);
	free(t->next);
	t->next = NULL;
	t->cap_next = 0;
}

/* The entry equal to @data (1 + its index), or 0.  *@first: 1 + the newest
 * entry whose bytes hash to @h, or 0. */
static uint32_t intern__lookup(const struct intern *t, uint64_t h, const void *data, size_t len,
			       uint32_t *first)
{
	const uint64_t *v = idmap__find(&t->index, h);
	const uint8_t *e;
	size_t elen;
	uint32_t i;

	*first = v ? (uint32_t)*v : 0;
	for (i = *first; i; i = t->next[i - 1]) {
		e = blobs__get(&t->list, i - 1, &elen);
		if (elen == len && memcmp(e, data, len) == 0)
			return i;
	}
	return 0;
}

/*
 * Find @data, or add it.  @index: its entry index.  On failure nothing
 * changes (but next[] may have grown).
 */
static int intern__add(struct intern *t, const void *data, size_t len, size_t *index)
{
	uint64_t h = hash_bytes(0, data, len);
	uint32_t first, found, *next;
	size_t cap;
	int err;

	found = intern__lookup(t, h, data, len, &first);
	if (found) {
		*index = found - 1;
		return 0;
	}
	if (t->list.n == t->cap_next) {
		cap = t->cap_next ? t->cap_next * 2 : 256;
		next = realloc(t->next, cap * sizeof(*next));
		if (!next)
			return -ENOMEM;
		t->next = next;
		t->cap_next = cap;
	}
	err = blobs__add(&t->list, data, len);
	if (err)
		return err;
	/* The new entry heads the chain of its hash. */
	err = idmap__set(&t->index, h, t->list.n);
	if (err) {
		blobs__pop(&t->list);
		return err;
	}
	t->next[t->list.n - 1] = first;
	*index = t->list.n - 1;
	return 0;
}

/* Find @key without adding it: -ENOENT if absent. */
static int intern__find(const struct intern *t, const void *data, size_t len, size_t *index)
{
	uint32_t first, found = intern__lookup(t, hash_bytes(0, data, len), data, len, &first);

	if (!found)
		return -ENOENT;
	*index = found - 1;
	return 0;
}

int pprof__string(struct pprof *p, const char *s, int64_t *index)
{
	size_t i;
	int err;

	s = or_empty(s);
	err = intern__add(&p->strings, s, strlen(s), &i);
	if (err)
		return err;
	*index = (int64_t)i;
	return 0;
}

static int pprof__value_type(struct pprof *p, const struct pprof_value_type *vt, int64_t out[2])
{
	int err;

	err = pprof__string(p, vt->type, &out[0]);
	if (err)
		return err;
	return pprof__string(p, vt->unit, &out[1]);
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	intern__release(&p->strings);
	intern__release(&p->functions);
	intern__release(&p->locations);
	intern__release(&p->map_keys);
	blobs__release(&p->mappings);
	pb_buf__release(&p->samples);
	pb_buf__release(&p->scratch);
	free(p->comments);
	free(p);
}

struct pprof *pprof__new(const struct pprof_opts *opts)
{
	struct pprof *p = NULL;
	int64_t unused;
	size_t i;
	int err;

	if (!opts || !opts->sample_types || !opts->nr_sample_types ||
	    opts->nr_sample_types > PPROF_MAX_SAMPLE_TYPES) {
		err = -EINVAL;
		goto out;
	}
	for (i = 0; i < opts->nr_sample_types; i++) {
		if (!opts->sample_types[i].type) {
			err = -EINVAL;
			goto out;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	/* string_table[0] must be "" (profile.proto). */
	err = pprof__string(p, "", &unused);
	if (err)
		goto out;
	p->nr_sample_types = opts->nr_sample_types;
	for (i = 0; i < opts->nr_sample_types; i++) {
		err = pprof__value_type(p, &opts->sample_types[i], p->sample_types[i]);
		if (err)
			goto out;
	}
	if (opts->period_type.type) {
		p->has_period_type = true;
		err = pprof__value_type(p, &opts->period_type, p->period_type);
		if (err)
			goto out;
	}
	if (opts->default_sample_type) {
		err = pprof__string(p, opts->default_sample_type, &p->default_sample_type);
		if (err)
			goto out;
	}
	p->period = opts->period;
	p->time_nanos = opts->time_nanos;
	p->duration_nanos = opts->duration_nanos;
	err = 0;
out:
	if (err) {
		pprof__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

int pprof__mapping(struct pprof *p, uint64_t key, const struct pprof_mapping *m, uint64_t *id)
{
	struct pb_buf *b = &p->scratch;
	int64_t filename, build_id;
	size_t i;
	int err;

	if (!id)
		return -EINVAL;
	/* A known key is found before anything is interned, so the strings
	 * of an ignored @m do not end up in the string table. */
	err = intern__find(&p->map_keys, &key, sizeof(key), &i);
	if (!err || !m) {
		if (!err)
			*id = i + 1;
		return err;
	}

	err = pprof__string(p, m->filename, &filename);
	if (err)
		return err;
	err = pprof__string(p, m->build_id, &build_id);
	if (err)
		return err;

	pb_buf__reset(b);
	pb_buf__uint64_nz(b, MAPPING_MEMORY_START, m->start);
	pb_buf__uint64_nz(b, MAPPING_MEMORY_LIMIT, m->limit);
	pb_buf__uint64_nz(b, MAPPING_FILE_OFFSET, m->offset);
	pb_buf__int64_nz(b, MAPPING_FILENAME, filename);
	pb_buf__int64_nz(b, MAPPING_BUILD_ID, build_id);
	pb_buf__uint64_nz(b, MAPPING_HAS_FUNCTIONS, m->has_functions);
	pb_buf__uint64_nz(b, MAPPING_HAS_FILENAMES, m->has_filenames);
	pb_buf__uint64_nz(b, MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
	err = pb_buf__uint64_nz(b, MAPPING_HAS_INLINE_FRAMES, m->has_inline_frames);
	if (err)
		return err;

	err = blobs__add(&p->mappings, b->data, b->len);
	if (err)
		return err;
	err = intern__add(&p->map_keys, &key, sizeof(key), &i);
	if (err) {
		/* Keep mappings and map_keys in step. */
		blobs__pop(&p->mappings);
		return err;
	}
	*id = i + 1;
	return 0;
}

int pprof__function(struct pprof *p, const struct pprof_function *f, uint64_t *id)
{
	struct pb_buf *b = &p->scratch;
	int64_t name, system_name, filename;
	size_t i;
	int err;

	if (!f || !id)
		return -EINVAL;
	err = pprof__string(p, f->name, &name);
	if (err)
		return err;
	err = pprof__string(p, f->system_name, &system_name);
	if (err)
		return err;
	err = pprof__string(p, f->filename, &filename);
	if (err)
		return err;

	pb_buf__reset(b);
	pb_buf__int64_nz(b, FUNCTION_NAME, name);
	pb_buf__int64_nz(b, FUNCTION_SYSTEM_NAME, system_name);
	pb_buf__int64_nz(b, FUNCTION_FILENAME, filename);
	err = pb_buf__int64_nz(b, FUNCTION_START_LINE, f->start_line);
	if (err)
		return err;
	err = intern__add(&p->functions, b->data, b->len, &i);
	if (err)
		return err;
	*id = i + 1;
	return 0;
}

int pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
		    const struct pprof_line *lines, size_t nr_lines, uint64_t *id)
{
	struct pb_buf *b = &p->scratch;
	uint8_t line[2 * (1 + PB_VARINT_MAX)];
	size_t i, n, index;
	int err;

	if (!id || (nr_lines && !lines) || mapping_id > p->mappings.n)
		return -EINVAL;
	for (i = 0; i < nr_lines; i++) {
		if (!lines[i].function_id || lines[i].function_id > p->functions.list.n)
			return -EINVAL;
	}

	pb_buf__reset(b);
	pb_buf__uint64_nz(b, LOCATION_MAPPING_ID, mapping_id);
	pb_buf__uint64_nz(b, LOCATION_ADDRESS, address);
	for (i = 0; i < nr_lines; i++) {
		/* A Line is tiny: encode it in place rather than in a buffer. */
		n = 0;
		line[n++] = LINE_FUNCTION_ID << 3 | PB_WIRE_VARINT;
		n += pb__encode_varint(line + n, lines[i].function_id);
		if (lines[i].line) {
			line[n++] = LINE_LINE << 3 | PB_WIRE_VARINT;
			n += pb__encode_varint(line + n, (uint64_t)lines[i].line);
		}
		pb_buf__bytes(b, LOCATION_LINE, line, n);
	}
	if (b->err)
		return b->err;
	err = intern__add(&p->locations, b->data, b->len, &index);
	if (err)
		return err;
	*id = index + 1;
	return 0;
}

int pprof__add_sample(struct pprof *p, const uint64_t *location_ids, size_t nr_locations,
		      const int64_t *values, size_t nr_values,
		      const struct pprof_label *labels, size_t nr_labels)
{
	struct pb_buf *b = &p->scratch;
	uint8_t label[4 * (1 + PB_VARINT_MAX)];
	int64_t key, str, unit;
	size_t i, n;
	int err;

	if ((nr_locations && !location_ids) || !values || nr_values != p->nr_sample_types ||
	    (nr_labels && !labels))
		return -EINVAL;
	for (i = 0; i < nr_locations; i++) {
		if (!location_ids[i] || location_ids[i] > p->locations.list.n)
			return -EINVAL;
	}
	for (i = 0; i < nr_labels; i++) {
		if (!labels[i].key)
			return -EINVAL;
	}

	pb_buf__reset(b);
	pb_buf__packed_uint64(b, SAMPLE_LOCATION_ID, location_ids, nr_locations);
	pb_buf__packed_int64(b, SAMPLE_VALUE, values, nr_values);
	for (i = 0; i < nr_labels; i++) {
		err = pprof__string(p, labels[i].key, &key);
		if (err)
			return err;
		str = unit = 0;
		if (labels[i].str)
			err = pprof__string(p, labels[i].str, &str);
		else if (labels[i].num_unit)
			err = pprof__string(p, labels[i].num_unit, &unit);
		if (err)
			return err;
		n = 0;
		label[n++] = LABEL_KEY << 3 | PB_WIRE_VARINT;
		n += pb__encode_varint(label + n, (uint64_t)key);
		/* Zeros are left out as everywhere in proto3; see pprof.h
		 * for what pprof makes of a label that is all zeros. */
		if (str) {
			label[n++] = LABEL_STR << 3 | PB_WIRE_VARINT;
			n += pb__encode_varint(label + n, (uint64_t)str);
		}
		if (!labels[i].str && labels[i].num) {
			label[n++] = LABEL_NUM << 3 | PB_WIRE_VARINT;
			n += pb__encode_varint(label + n, (uint64_t)labels[i].num);
		}
		if (unit) {
			label[n++] = LABEL_NUM_UNIT << 3 | PB_WIRE_VARINT;
			n += pb__encode_varint(label + n, (uint64_t)unit);
		}
		pb_buf__bytes(b, SAMPLE_LABEL, label, n);
	}
	if (b->err)
		return b->err;

	n = p->samples.len;
	err = pb_buf__message(&p->samples, PROFILE_SAMPLE, b);
	if (err) {
		/* Drop the partial record so the samples stay well formed. */
		p->samples.len = n;
		p->samples.err = 0;
	}
	return err;
}

int pprof__add_comment(struct pprof *p, const char *text)
{
	int64_t *comments, index;
	int err;

	if (!text)
		return -EINVAL;
	err = pprof__string(p, text, &index);
	if (err)
		return err;
	comments = realloc(p->comments, (p->nr_comments + 1) * sizeof(*comments));
	if (!comments)
		return -ENOMEM;
	p->comments = comments;
	p->comments[p->nr_comments++] = index;
	return 0;
}

/* ---- writing --------------------------------------------------------- */

/* Where compressed bytes go: a fd or a FILE. */
struct sink {
	int fd;
	FILE *file;
};

static int sink__write(const struct sink *s, const uint8_t *data, size_t len)
{
	ssize_t n;

	if (s->file) {
		errno = 0;
		if (fwrite(data, 1, len, s->file) != len)
			return errno ? -errno : -EIO;
		return 0;
	}
	while (len) {
		n = write(s->fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

#define GZ_CHUNK (64u << 10)

struct gz {
	z_stream zs;
	const struct sink *sink;
	uint8_t out[GZ_CHUNK];
};

/* Compress @len bytes (and with Z_FINISH, end the stream). */
static int gz__feed(struct gz *g, const uint8_t *data, size_t len, int flush)
{
	size_t have;
	int ret, err;

	g->zs.next_in = (Bytef *)data;
	/* avail_in is a uInt; feed huge buffers in pieces. */
	do {
		size_t piece = len > UINT32_MAX ? UINT32_MAX : len;
		int f = piece == len ? flush : Z_NO_FLUSH;

		g->zs.avail_in = (uInt)piece;
		len -= piece;
		do {
			g->zs.next_out = g->out;
			g->zs.avail_out = sizeof(g->out);
			ret = deflate(&g->zs, f);
			if (ret == Z_STREAM_ERROR)
				return -EINVAL;
			have = sizeof(g->out) - g->zs.avail_out;
			err = sink__write(g->sink, g->out, have);
			if (err)
				return err;
		} while (g->zs.avail_out == 0 || (f == Z_FINISH && ret != Z_STREAM_END));
	} while (len);
	return 0;
}

/* Pass what @b holds on to zlib once it is big enough (or @force). */
static int gz__drain(struct gz *g, struct pb_buf *b, bool force)
{
	int err;

	if (b->err)
		return b->err;
	if (!force && b->len < GZ_CHUNK)
		return 0;
	err = gz__feed(g, b->data, b->len, Z_NO_FLUSH);
	pb_buf__reset(b);
	return err;
}

/* One top-level repeated message whose stored bytes lack the id field. */
static int put_entry(struct pb_buf *b, uint32_t field, uint64_t id, const uint8_t *body,
		     size_t len)
{
	pb_buf__tag(b, field, PB_WIRE_LEN);
	pb_buf__varint(b, 1 + pb__varint_size(id) + len);
	pb_buf__uint64(b, 1, id);
	return pb_buf__raw(b, body, len);
}

/* A ValueType is tiny: encode it on the stack, not in a buffer of its own. */
static int put_value_type(struct pb_buf *b, uint32_t field, const int64_t vt[2])
{
	uint8_t msg[2 * (1 + PB_VARINT_MAX)];
	size_t n = 0;

	if (vt[0]) {
		msg[n++] = VALUE_TYPE_TYPE << 3 | PB_WIRE_VARINT;
		n += pb__encode_varint(msg + n, (uint64_t)vt[0]);
	}
	if (vt[1]) {
		msg[n++] = VALUE_TYPE_UNIT << 3 | PB_WIRE_VARINT;
		n += pb__encode_varint(msg + n, (uint64_t)vt[1]);
	}
	return pb_buf__bytes(b, field, msg, n);
}

static int put_entries(struct gz *g, struct pb_buf *b, uint32_t field, const struct blobs *l)
{
	const uint8_t *body;
	size_t i, len;
	int err;

	for (i = 0; i < l->n; i++) {
		body = blobs__get(l, i, &len);
		put_entry(b, field, i + 1, body, len);
		err = gz__drain(g, b, false);
		if (err)
			return err;
	}
	return 0;
}

/* Encode the profile in profile.proto's field order, as pprof's own
 * encoder does. */
static int pprof__encode(const struct pprof *p, struct gz *g)
{
	struct pb_buf b = PB_BUF_INIT;
	const uint8_t *s;
	size_t i, len;
	int err;

	for (i = 0; i < p->nr_sample_types; i++)
		put_value_type(&b, PROFILE_SAMPLE_TYPE, p->sample_types[i]);
	err = gz__drain(g, &b, true);
	if (err)
		goto out;
	err = gz__feed(g, p->samples.data, p->samples.len, Z_NO_FLUSH);
	if (err)
		goto out;
	err = put_entries(g, &b, PROFILE_MAPPING, &p->mappings);
	if (err)
		goto out;
	err = put_entries(g, &b, PROFILE_LOCATION, &p->locations.list);
	if (err)
		goto out;
	err = put_entries(g, &b, PROFILE_FUNCTION, &p->functions.list);
	if (err)
		goto out;
	for (i = 0; i < p->strings.list.n; i++) {
		s = blobs__get(&p->strings.list, i, &len);
		pb_buf__bytes(&b, PROFILE_STRING_TABLE, s, len);
		err = gz__drain(g, &b, false);
		if (err)
			goto out;
	}
	pb_buf__int64_nz(&b, PROFILE_TIME_NANOS, p->time_nanos);
	pb_buf__int64_nz(&b, PROFILE_DURATION_NANOS, p->duration_nanos);
	if (p->has_period_type)
		put_value_type(&b, PROFILE_PERIOD_TYPE, p->period_type);
	pb_buf__int64_nz(&b, PROFILE_PERIOD, p->period);
	pb_buf__packed_int64(&b, PROFILE_COMMENT, p->comments, p->nr_comments);
	pb_buf__int64_nz(&b, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_sample_type);
	err = gz__drain(g, &b, true);
	if (err)
		goto out;
	err = gz__feed(g, NULL, 0, Z_FINISH);
out:
	pb_buf__release(&b);
	return err;
}

static int pprof__write_sink(const struct pprof *p, const struct sink *sink)
{
	struct gz *g;
	int ret, err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->sink = sink;
	/* windowBits 15 + 16: a gzip wrapper (with a zero mtime, so equal
	 * profiles give equal files) instead of a zlib one. */
	ret = deflateInit2(&g->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			   Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		err = ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
		goto out;
	}
	err = pprof__encode(p, g);
	deflateEnd(&g->zs);
out:
	free(g);
	return err;
}

int pprof__write(const struct pprof *p, int fd)
{
	struct sink sink = { .fd = fd };

	if (!p || fd < 0)
		return -EINVAL;
	return pprof__write_sink(p, &sink);
}

int pprof__write_file(const struct pprof *p, FILE *f)
{
	struct sink sink = { .fd = -1, .file = f };

	if (!p || !f)
		return -EINVAL;
	return pprof__write_sink(p, &sink);
}
