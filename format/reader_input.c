// SPDX-License-Identifier: BSD-2-Clause
/*
 * reader_input.c - the reader's input, through a bounded window, never a
 * mapping: a regular file is read with pread() a window at a time (a file
 * that shrinks while it is read is one -EIO error, not a SIGBUS), and a
 * pipe or device is read as it arrives, keeping only the bytes from the
 * frame being read on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_int.h"

/* ---- input ---- */

static int in_fail(struct stk_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int in_fail(struct stk_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->io_msg, sizeof(r->io_msg), fmt, ap);
	va_end(ap);
	r->io_err = err;
	return err;
}

/* A regular file smaller than WINDOW gets a window of its size: most
 * captures are, and a reader per capture is what a diff, a merge and
 * every report open. */
static int win_reserve(struct stk_reader *r, size_t need)
{
	size_t cap = r->win_cap ? r->win_cap : WINDOW;
	uint8_t *p;

	if (need <= r->win_cap)
		return 0;
	if (!r->win_cap && r->seekable && r->size && r->size < WINDOW)
		cap = r->size;
	while (cap < need)
		cap *= 2;
	p = realloc(r->win, cap);
	if (!p)
		return in_fail(r, -ENOMEM, "out of memory for a %zu-byte read", need);
	r->win = p;
	r->win_cap = cap;
	return 0;
}

/* A regular file: a window of at least WINDOW bytes read at @pos. */
static int file_fill(struct stk_reader *r, uint64_t pos, size_t want)
{
	size_t n = want > WINDOW ? want : WINDOW, got = 0;
	ssize_t k;
	int err;

	if (n > r->size - pos)
		n = r->size - pos;
	err = win_reserve(r, n);
	if (err)
		return err;
	r->win_len = 0;
	while (got < n) {
		k = pread(r->fd, r->win + got, n - got, pos + got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && pos + got == 0) /* about the file, not a byte of it */
			return in_fail(r, -errno, "read: %s", strerror(errno));
		if (k < 0)
			return in_fail(r, -errno, "byte %llu: read: %s",
				       (unsigned long long)(pos + got), strerror(errno));
		if (k == 0)
			return in_fail(r, -EIO,
				       "byte %llu: the file shrank while being read (it had %llu bytes when opened)",
				       (unsigned long long)(pos + got), (unsigned long long)r->size);
		got += k;
	}
	r->win_off = pos;
	r->win_len = n;
	return 0;
}

/* A stream: read on until [@pos, @pos + @len) is in the window or the
 * input ends, first dropping the bytes before r->keep. */
static int stream_fill(struct stk_reader *r, uint64_t pos, size_t len)
{
	uint64_t end = pos + len, drop;
	ssize_t k;
	int err;

	while (r->win_off + r->win_len < end && !r->eof) {
		drop = r->keep < pos ? r->keep : pos;
		drop = drop > r->win_off ? drop - r->win_off : 0;
		if (drop > r->win_len)
			drop = r->win_len;
		if (drop && (drop >= r->win_len / 2 || r->win_len == r->win_cap)) {
			memmove(r->win, r->win + drop, r->win_len - drop);
			r->win_off += drop;
			r->win_len -= drop;
		}
		err = win_reserve(r, end - r->win_off);
		if (err)
			return err;
		k = read(r->fd, r->win + r->win_len, r->win_cap - r->win_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && r->size == 0) /* about the input, not a byte of it */
			return in_fail(r, -errno, "read: %s", strerror(errno));
		if (k < 0)
			return in_fail(r, -errno, "byte %llu: read: %s",
				       (unsigned long long)r->size, strerror(errno));
		if (k == 0)
			r->eof = 1;
		r->win_len += k;
		r->size = r->win_off + r->win_len;
	}
	return 0;
}

/*
 * in_peek() - makes up to @len bytes at @pos readable.  *@p points at them
 * until the next in_peek(); returns how many there are (fewer than @len
 * only at the end of the input), or a negative errno (sticky: -EIO when a
 * file shrank, the read() errno, -ENOMEM).  A stream is never asked for
 * bytes before r->keep.
 */
ssize_t in_peek(struct stk_reader *r, uint64_t pos, size_t len, const uint8_t **p)
{
	static const uint8_t none[1];
	uint64_t have;
	int err;

	*p = none;
	if (r->io_err)
		return r->io_err;
	if (r->mem) {
		if (pos >= r->size)
			return 0;
		*p = r->mem + pos;
		return len < r->size - pos ? len : r->size - pos;
	}
	if (r->seekable) {
		if (pos >= r->size)
			return 0;
		if (len > r->size - pos)
			len = r->size - pos;
		if (pos < r->win_off || pos + len > r->win_off + r->win_len) {
			err = file_fill(r, pos, len);
			if (err)
				return err;
		}
	} else {
		if (pos < r->win_off)
			return in_fail(r, -EINVAL, "byte %llu: read before the window (a reader bug)",
				       (unsigned long long)pos);
		err = stream_fill(r, pos, len);
		if (err)
			return err;
	}
	have = r->win_off + r->win_len;
	if (pos >= have)
		return 0;
	*p = r->win + (pos - r->win_off);
	return len < have - pos ? len : have - pos;
}
