// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int parse__uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse__id_list(const char *s, uint32_t **ids, size_t *n)
{
	const char *p = s;
	char buf[32];
	int err;

	for (;;) {
		size_t len = strcspn(p, ",");
		uint64_t v;
		uint32_t *a;
		size_t i;

		if (len == 0 || len >= sizeof(buf))
			return len == 0 ? -EINVAL : -ERANGE;
		memcpy(buf, p, len);
		buf[len] = '\0';
		err = parse__uint(buf, UINT32_MAX - 1, &v);
		if (err)
			return err;
		if (v == 0)
			return -EINVAL;
		for (i = 0; i < *n; i++)
			if ((*ids)[i] == v)
				break;
		if (i == *n) {
			a = realloc(*ids, (*n + 1) * sizeof(*a));
			if (!a)
				return -ENOMEM;
			a[(*n)++] = (uint32_t)v;
			*ids = a;
		}
		p += len;
		if (!*p)
			return 0;
		p++; /* ',' */
	}
}

int parse__seconds(const char *s, uint64_t max_s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000ULL;
	const char *dot = strchr(s, '.');
	char buf[32];
	size_t len;
	int err;

	len = dot ? (size_t)(dot - s) : strlen(s);
	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (len == 0 && !dot)
		return -EINVAL;
	if (len) {
		err = parse__uint(buf, max_s, &whole);
		if (err)
			return err;
	}
	if (dot) {
		const char *f = dot + 1;

		if (!*f && !len)
			return -EINVAL;
		for (; *f; f++) {
			if (*f < '0' || *f > '9')
				return -EINVAL;
			scale /= 10;
			frac += (uint64_t)(*f - '0') * scale; /* digits past 1 ns add 0 */
		}
	}
	*ns = whole * 1000000000ULL + frac;
	if (*ns > max_s * 1000000000ULL)
		return -ERANGE;
	if (*ns < 1000000ULL)
		return *ns == 0 ? -EINVAL : -ERANGE;
	return 0;
}
