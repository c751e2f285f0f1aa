// SPDX-License-Identifier: BSD-2-Clause
/*
 * trace_events.c - a trace capture with several events reported event by
 * event (trace_events.h): the report is run once per event, with only
 * that event's rows, and written as one section (text) or with the event
 * as the root frame of every line (folded).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_events.h"

/* @name (from the capture's META: anything) made a safe frame name: no
 * control characters, ';' or spaces (folded's separators), ASCII only. */
static void safe_name(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++) {
		unsigned char c = (unsigned char)name[i];

		out[i] = c < 0x21 || c == ';' || c >= 0x7f ? '_' : (char)c;
	}
	out[i] = '\0';
}

/* Copy @buf (@len bytes of folded lines) to @f, each line prefixed. */
static int prefix_lines(FILE *f, const char *prefix, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl + 1 : end;
		if (fprintf(f, "%s;", prefix) < 0 || fwrite(p, 1, (size_t)(nl - p), f) != (size_t)(nl - p))
			return -EIO;
		p = nl;
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct events the rows of @cap count, sorted, into *@out (malloc'd):
 * what the sections are, however long META events is (a crafted one may
 * list a million). */
static int row_events(const struct capture *cap, uint32_t **out, size_t *n)
{
	size_t i, j, k = 0, total = 0;
	uint32_t *v;

	for (i = 0; i < cap->nr_segs; i++)
		total += cap->segs[i].nr_counts;
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < cap->nr_segs; i++)
		for (j = 0; j < cap->segs[i].nr_counts; j++)
			v[k++] = cap->segs[i].counts[j]->event;
	qsort(v, k, sizeof(*v), u32_cmp);
	for (i = j = 0; i < k; i++)
		if (!j || v[j - 1] != v[i])
			v[j++] = v[i];
	*out = v;
	*n = j;
	return 0;
}

int trace_events__write(const struct capture *cap, struct report_opts *ro,
			int (*write)(const struct report *r, const struct output_opts *o, FILE *f),
			const struct output_opts *oo, int folded, FILE *f)
{
	size_t i, n = 0, saved = ro->event, first = 1;
	char name[256], safe[256];
	uint32_t *events = NULL;
	int err;

	err = row_events(cap, &events, &n);
	for (i = 0; !err && i < n; i++) {
		struct report *r;
		char *buf = NULL;
		size_t len = 0;
		FILE *mem;

		ro->event = (size_t)events[i] + 1;
		r = report__new(cap, ro);
		if (!r) {
			err = -errno;
			break;
		}
		if (!r->total_count) {
			report__free(r);
			continue;
		}
		if (capture__event(cap, events[i], name, sizeof(name)))
			snprintf(name, sizeof(name), "event_%u", events[i]);
		safe_name(name, safe, sizeof(safe));
		if (!folded) {
			if (fprintf(f, "%s%s: %llu events\n\n", first ? "" : "\n", safe,
				    (unsigned long long)r->total_count) < 0)
				err = -EIO;
			err = err ?: write(r, oo, f);
		} else {
			mem = open_memstream(&buf, &len);
			if (!mem) {
				err = -ENOMEM;
			} else {
				err = write(r, oo, mem);
				if (fclose(mem) && !err)
					err = -ENOMEM;
				err = err ?: prefix_lines(f, safe, buf, len);
			}
			free(buf);
		}
		first = 0;
		report__free(r);
	}
	ro->event = saved;
	free(events);
	return err;
}
