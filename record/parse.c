// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int parse__uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int overflow = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			overflow = 1; /* keep scanning: garbage is -EINVAL first */
		else
			v = v * 10 + d;
	}
	if (overflow || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse__id_list(const char *s, uint32_t **ids, size_t *n)
{
	size_t count = *n, items = 1, i;
	const char *p;
	uint32_t *a;
	char buf[32];
	int err;

	/* Into a new array, so nothing changes unless the whole list parses. */
	for (p = s; *p; p++)
		items += *p == ',';
	a = malloc((count + items) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (count)
		memcpy(a, *ids, count * sizeof(*a));
	for (p = s;;) {
		size_t len = strcspn(p, ",");
		uint64_t v;

		if (len == 0 || len >= sizeof(buf)) {
			err = len == 0 ? -EINVAL : -ERANGE;
			goto fail;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		err = parse__uint(buf, UINT32_MAX - 1, &v);
		if (!err && v == 0)
			err = -EINVAL;
		if (err)
			goto fail;
		for (i = 0; i < count && a[i] != v; i++)
			;
		if (i == count)
			a[count++] = (uint32_t)v;
		p += len;
		if (!*p)
			break;
		p++; /* ',' */
	}
	free(*ids);
	*ids = a;
	*n = count;
	return 0;
fail:
	free(a);
	return err;
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

int parse__size(const char *s, uint64_t max, uint64_t *bytes)
{
	static const char units[] = "KMG";
	size_t len = strlen(s);
	const char *u;
	char buf[32];
	uint64_t v, mult = 1;
	int err;

	if (len && (u = strchr(units, s[len - 1])) != NULL && *u) {
		mult = 1ULL << (10 * (u - units + 1));
		len--;
	}
	if (!len || len >= sizeof(buf))
		return len ? -ERANGE : -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	err = parse__uint(buf, max / mult, &v);
	if (err)
		return err;
	if (v == 0)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}
