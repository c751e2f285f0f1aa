// SPDX-License-Identifier: BSD-2-Clause
/*
 * deferred.c - the deferred user stacks' copies, by seq, until their
 * placeholders are written (see deferred.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "deferred.h"
#include "idmap.h"
#include "unwind_copy.h"

struct dcopy {
	uint64_t flush;			/* the flush it was taken in */
	struct stkrec_defer d;		/* cut after d.size bytes of stack */
};

struct deferred {
	struct ring_buffer *ring;
	int final;			/* a file's last flush: nothing waits */
	int (*now)(void *ctx, uint32_t tgid, uint64_t pc);
	struct idmap *copies;		/* seq -> struct dcopy * */
	uint64_t bytes;
	uint64_t flush;
	struct unwinder *uw;
	int fp;
	unwind_copy_mapping_fn mapping;
	void *ctx;
	struct deferred_stats st;
};

static size_t dcopy_size(uint32_t stack)
{
	return offsetof(struct dcopy, d.stack) + stack;
}

static int on_copy(void *ctx, void *data, size_t size)
{
	struct deferred *d = ctx;
	const struct stkrec_defer *r = data;
	struct dcopy *c;
	size_t n;

	if (size < offsetof(struct stkrec_defer, stack) || r->size > STKREC_DEFER_STACK ||
	    size < offsetof(struct stkrec_defer, stack) + r->size)
		return 0;
	n = dcopy_size(r->size);
	if (d->bytes + n > DEFERRED_MAX_BYTES || !(c = malloc(n))) {
		d->st.dropped++;
		return 0;
	}
	c->flush = d->flush;
	memcpy(&c->d, r, offsetof(struct stkrec_defer, stack) + r->size);
	if (idmap__set_ptr(d->copies, r->seq, c)) {
		free(c);
		d->st.dropped++;
		return 0;
	}
	d->bytes += n;
	d->st.taken++;
	return 0;
}

struct deferred *deferred__new(int ring_fd, struct unwinder *uw, int fp,
			       unwind_copy_mapping_fn mapping, void *ctx)
{
	struct deferred *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->uw = uw;
	d->fp = fp;
	d->mapping = mapping;
	d->ctx = ctx;
	d->copies = idmap__new();
	if (!d->copies) {
		err = ENOMEM;
		goto fail;
	}
	d->ring = ring_buffer__new(ring_fd, on_copy, d, NULL);
	if (!d->ring) {
		err = errno;
		goto fail;
	}
	return d;
fail:
	deferred__free(d);
	errno = err;
	return NULL;
}

int deferred__take(struct deferred *d)
{
	return d ? ring_buffer__consume(d->ring) : 0;
}

int deferred__fd(const struct deferred *d)
{
	return d ? ring_buffer__epoll_fd(d->ring) : -1;
}

static void forget(struct deferred *d, uint64_t seq, struct dcopy *c)
{
	idmap__remove(d->copies, seq);
	d->bytes -= dcopy_size(c->d.size);
	free(c);
}

void deferred__set_now(struct deferred *d, int (*now)(void *ctx, uint32_t tgid, uint64_t pc))
{
	d->now = now;
}

void deferred__set_last(struct deferred *d, int last)
{
	if (d)
		d->final = last;
}

int deferred__resolve(void *ctx, struct stkrec_stack *s)
{
	struct deferred *d = ctx;
	uint64_t seq = s->ips[1];
	struct dcopy *c = idmap__find_ptr(d->copies, seq);
	uint64_t py[STKREC_MAX_NR - STKREC_MAX_DEPTH];
	uint32_t nr_py;
	int last;

	if (!c) {
		/* Submitted before the placeholder was stored: in the ring
		 * still, unless it was dropped. */
		deferred__take(d);
		c = idmap__find_ptr(d->copies, seq);
	}
	if (!c) {
		d->st.missing++;
		s->ips[0] = STKREC_UW_MARK | STKREC_UW_STOP_FAULT;
		/* Its Python frames, if any, stay. */
		if (s->nr > 2)
			memmove(s->ips + 1, s->ips + 2, (s->nr - 2) * sizeof(s->ips[0]));
		s->nr = s->nr > 2 ? s->nr - 1 : 1;
		return 0;
	}
	last = d->final || c->flush + DEFERRED_WAIT <= d->flush ||
	       (d->now && d->now(d->ctx, c->d.tgid, c->d.pc));
	/* The Python frames the kernel appended after the placeholder go
	 * after the native frames the copy unwinds to. */
	nr_py = s->nr > 2 ? s->nr - 2 : 0;
	if (nr_py > STKREC_MAX_NR - STKREC_MAX_DEPTH)
		nr_py = STKREC_MAX_NR - STKREC_MAX_DEPTH;
	memcpy(py, s->ips + 2, nr_py * sizeof(py[0]));
	if (unwinder__unwind_copy(d->uw, &c->d, d->fp, d->mapping, d->ctx, last, s) && !last) {
		d->st.waited++;
		/* As it was, to be tried again. */
		s->ips[0] = STKREC_UW_MARK | STKREC_UW_DEFERRED;
		s->ips[1] = seq;
		memcpy(s->ips + 2, py, nr_py * sizeof(py[0]));
		s->nr = 2 + nr_py;
		return 1;
	}
	if (s->nr > STKREC_MAX_DEPTH)
		s->nr = STKREC_MAX_DEPTH;
	memcpy(s->ips + s->nr, py, nr_py * sizeof(py[0]));
	s->nr += nr_py;
	d->st.unwound++;
	forget(d, seq, c);
	return 0;
}

void deferred__age(struct deferred *d)
{
	uint64_t key, val, old[64];
	size_t it, n, i;

	if (!d)
		return;
	d->flush++;
	do {
		it = 0;
		n = 0;
		while (n < 64 && idmap__next(d->copies, &it, &key, &val))
			if (((struct dcopy *)(uintptr_t)val)->flush + DEFERRED_FLUSHES <= d->flush)
				old[n++] = key;
		for (i = 0; i < n; i++) {
			forget(d, old[i], idmap__find_ptr(d->copies, old[i]));
			d->st.dropped++;
		}
	} while (n == 64);
}

uint64_t deferred__bytes(const struct deferred *d)
{
	return d ? d->bytes : 0;
}

size_t deferred__waiting(const struct deferred *d)
{
	return d ? idmap__count(d->copies) : 0;
}

void deferred__stats(const struct deferred *d, struct deferred_stats *st)
{
	*st = d->st;
}

void deferred__free(struct deferred *d)
{
	uint64_t key, val;
	size_t it = 0;

	if (!d)
		return;
	ring_buffer__free(d->ring);
	if (d->copies) {
		while (idmap__next(d->copies, &it, &key, &val))
			free((void *)(uintptr_t)val);
		idmap__free(d->copies);
	}
	free(d);
}
