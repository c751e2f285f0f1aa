// SPDX-License-Identifier: BSD-2-Clause
/*
 * --since/--until: parsing the seconds and the midpoint rule (slice.h).
 */
#include <errno.h>

#include "slice.h"

/* "2.5" -> 2500000000 ns: digits, at most one '.', up to nine decimals
 * kept (ns); no sign, exponent, "inf" or hex as strtod() would take. */
static int parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000u;
	int digits = 0, dot = 0;

	for (; *s; s++) {
		if (*s == '.' && !dot) {
			dot = 1;
		} else if (*s >= '0' && *s <= '9' && !dot) {
			if (sec > 1000000000u)	/* 31 years: surely a mistake */
				return -EINVAL;
			sec = sec * 10 + (uint64_t)(*s - '0');
			digits++;
		} else if (*s >= '0' && *s <= '9') {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			}
			digits++;
		} else {
			return -EINVAL;
		}
	}
	if (!digits)
		return -EINVAL;
	*ns = sec * 1000000000u + frac;
	return 0;
}

int time_slice__option(struct time_slice *s, int c, const char *arg)
{
	uint64_t ns;

	if (c != TIME_SLICE_OPT_SINCE && c != TIME_SLICE_OPT_UNTIL)
		return 0;
	if (!arg || parse_seconds(arg, &ns))
		return -EINVAL;
	if (c == TIME_SLICE_OPT_SINCE)
		s->since_ns = ns;
	else
		s->until_ns = ns;
	return 1;
}

int time_slice__check(const struct time_slice *s)
{
	return s->since_ns < s->until_ns ? 0 : -EINVAL;
}

int time_slice__all(const struct time_slice *s)
{
	return !s || (s->since_ns == 0 && s->until_ns == UINT64_MAX);
}

uint64_t time_slice__midpoint(uint64_t start, uint64_t t0, uint64_t t1)
{
	/* Halves first: no overflow. */
	uint64_t mid = t0 / 2 + t1 / 2 + (t0 % 2 + t1 % 2) / 2;

	return mid > start ? mid - start : 0;
}

int time_slice__keeps(const struct time_slice *s, uint64_t start, uint64_t t0, uint64_t t1)
{
	uint64_t mid;

	if (time_slice__all(s))
		return 1;
	if (!t1)
		return 0;
	mid = time_slice__midpoint(start, t0, t1);
	return mid >= s->since_ns && mid < s->until_ns;
}
