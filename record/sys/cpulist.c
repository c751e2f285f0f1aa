// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"

static int parse_cpu(const char **p, int *cpu)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > CPULIST_MAX_CPU)
			return -EINVAL;
		s++;
	}
	*cpu = (int)v;
	*p = s;
	return 0;
}

int cpulist__parse(const char *str, int **cpus, size_t *n)
{
	unsigned char *mask = NULL;
	const char *p = str;
	int *out = NULL;
	size_t count = 0, k;
	int err, i;

	mask = calloc(CPULIST_MAX_CPU + 1, 1);
	if (!mask)
		return -ENOMEM;
	for (;;) {
		int lo, hi;

		err = parse_cpu(&p, &lo);
		if (err)
			goto out;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_cpu(&p, &hi);
			if (err)
				goto out;
			if (hi < lo) {
				err = -EINVAL;
				goto out;
			}
		}
		for (i = lo; i <= hi; i++) {
			if (!mask[i])
				count++;
			mask[i] = 1;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		if (*p != '\0') {
			err = -EINVAL;
			goto out;
		}
		break;
	}
	out = malloc(count * sizeof(*out));
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, k = 0; i <= CPULIST_MAX_CPU; i++)
		if (mask[i])
			out[k++] = i;
	*cpus = out;
	*n = count;
	err = 0;
out:
	free(mask);
	return err;
}

int cpulist__online(int **cpus, size_t *n)
{
	char buf[4096];
	size_t len;
	FILE *f;
	int err;

	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err)
		return err;
	buf[len] = '\0';
	return cpulist__parse(buf, cpus, n);
}

int cpulist__format(const int *cpus, size_t n, char *buf, size_t size)
{
	size_t i = 0, len = 0;

	if (size)
		buf[0] = '\0';
	while (i < n) {
		size_t j = i;
		int w;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			w = snprintf(buf + (len < size ? len : size), len < size ? size - len : 0,
				     "%s%d-%d", len ? "," : "", cpus[i], cpus[j]);
		else
			w = snprintf(buf + (len < size ? len : size), len < size ? size - len : 0,
				     "%s%d", len ? "," : "", cpus[i]);
		len += (size_t)w;
		i = j + 1;
	}
	return (int)len;
}
