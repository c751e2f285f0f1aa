// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "meta.h"

int meta__add(struct meta *m, const char *key, const char *fmt, ...)
{
	char *value;
	va_list ap;
	int r;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		struct stk_kv *kv = realloc(m->kv, cap * sizeof(*kv));

		if (!kv)
			return -ENOMEM;
		m->kv = kv;
		m->cap = cap;
	}
	va_start(ap, fmt);
	r = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	m->kv[m->n].key = key;
	m->kv[m->n].value = value;
	m->n++;
	return 0;
}

/* Adds @key with the string @buf (consumed: freed here; NULL: -ENOMEM). */
static int meta__add_owned(struct meta *m, const char *key, char *buf)
{
	int err = buf ? meta__add(m, key, "%s", buf) : -ENOMEM;

	free(buf);
	return err;
}

int meta__add_ids(struct meta *m, const char *key, const uint32_t *ids, size_t n)
{
	size_t size = n * 11 + 1, len = 0, i;
	char *buf = malloc(size);

	if (buf) {
		buf[0] = '\0';
		for (i = 0; i < n; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%u", i ? "," : "", ids[i]);
	}
	return meta__add_owned(m, key, buf);
}

int meta__add_argv(struct meta *m, const char *key, char *const *argv)
{
	size_t len = 1, i;
	char *buf;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	buf = malloc(len);
	if (buf) {
		buf[0] = '\0';
		for (i = 0; argv[i]; i++) {
			if (i)
				strcat(buf, " ");
			strcat(buf, argv[i]);
		}
	}
	return meta__add_owned(m, key, buf);
}

/* First line of a small file, without its newline, or "" on error. */
static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

int meta__add_host(struct meta *m)
{
	char host[256], line[256];
	struct utsname u;
	int err = 0;

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		err = err ?: meta__add(m, "hostname", "%s", host);
	}
	if (uname(&u) == 0) {
		err = err ?: meta__add(m, "kernel_release", "%s", u.release);
		err = err ?: meta__add(m, "kernel_version", "%s", u.version);
		err = err ?: meta__add(m, "arch", "%s", u.machine);
	}
	err = err ?: meta__add(m, "cpus", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	read_line("/sys/devices/system/cpu/possible", line, sizeof(line));
	if (line[0])
		err = err ?: meta__add(m, "cpus_possible", "%s", line);
	err = err ?: meta__add(m, "page_size", "%ld", sysconf(_SC_PAGESIZE));
	read_line("/proc/sys/kernel/random/boot_id", line, sizeof(line));
	if (line[0])
		err = err ?: meta__add(m, "boot_id", "%s", line);
	return err;
}

void meta__free(struct meta *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free((char *)m->kv[i].value);
	free(m->kv);
	m->kv = NULL;
	m->n = m->cap = 0;
}
