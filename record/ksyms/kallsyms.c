// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms.h"
#include "readall.h"

struct kallsyms {
	struct stk_ksym *syms;
	size_t count;
	char *strings;	/* names and module names, NUL-terminated */
	int all_zero;
};

static int is_text(char type)
{
	return type == 'T' || type == 't' || type == 'W' || type == 'w';
}

/* By address; aliases in the order /proc/kallsyms lists them (the
 * kernel's own order: its first is the name %pS gives, the one that names
 * the address, see kallsyms.h).  Names are in one buffer, in order. */
static int sym_cmp(const void *a, const void *b)
{
	const struct stk_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : (x->name > y->name);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse one line in place: "ADDR TYPE NAME[\t[MOD]]".  @line is writable
 * and NUL-terminated; the name and module are terminated in it.
 */
static int parse_line(char *line, struct stk_ksym *sym)
{
	char *p = line, *name, *mod = NULL;
	uint64_t addr = 0;
	int digits = 0, v;

	while ((v = hexval(*p)) >= 0) {
		if (++digits > 16)
			return -EINVAL;
		addr = (addr << 4) | (uint64_t)v;
		p++;
	}
	if (!digits || *p != ' ' || !p[1] || p[2] != ' ' || !p[3])
		return -EINVAL;
	sym->type = p[1];
	name = p + 3;
	for (p = name; *p && *p != '\t' && *p != ' '; p++)
		;
	if (*p) {
		*p++ = '\0';
		while (*p == '\t' || *p == ' ')
			p++;
		if (*p == '[') {
			mod = ++p;
			while (*p && *p != ']')
				p++;
			*p = '\0';
		}
	}
	sym->addr = addr;
	sym->size = 0;
	sym->name = name;
	sym->module = mod ? mod : "";
	return 0;
}

/*
 * Build the table over @buf (@len bytes, writable, with room for a NUL at
 * @len), which it takes over: names point into it.  Frees @buf on error.
 */
static struct kallsyms *kallsyms__parse_owned(char *buf, size_t len)
{
	struct kallsyms *ks = NULL;
	size_t lines = 1, i;
	char *p, *end, *lim = buf + len;
	int err;

	buf[len] = '\0';
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(buf);
		return NULL;
	}
	ks->strings = buf;
	for (p = buf; (p = memchr(p, '\n', (size_t)(lim - p))); p++)
		lines++;
	ks->syms = malloc(lines * sizeof(*ks->syms));
	if (!ks->syms) {
		err = -ENOMEM;
		goto fail;
	}
	ks->all_zero = 1;
	for (p = buf; p < lim; p = end + 1) {
		end = memchr(p, '\n', (size_t)(lim - p));
		if (!end)
			end = lim;
		*end = '\0';
		if (parse_line(p, &ks->syms[ks->count]) == 0) {
			if (ks->syms[ks->count].addr)
				ks->all_zero = 0;
			ks->count++;
		}
	}
	/* The core kernel's symbols come sorted; modules and BPF programs
	 * follow in their own order.  Only sort when needed. */
	for (i = 1; i < ks->count; i++)
		if (sym_cmp(&ks->syms[i - 1], &ks->syms[i]) > 0)
			break;
	if (i < ks->count)
		qsort(ks->syms, ks->count, sizeof(*ks->syms), sym_cmp);
	/* Each symbol up to the next address (aliases share one size). */
	for (i = ks->count; i-- > 0;) {
		struct stk_ksym *s = &ks->syms[i];
		const struct stk_ksym *next = i + 1 < ks->count ? &ks->syms[i + 1] : NULL;

		if (next && next->addr == s->addr)
			s->size = next->size;
		else if (next && (next->module == s->module || strcmp(next->module, s->module) == 0))
			s->size = next->addr - s->addr;
		else
			s->size = KALLSYMS_LAST_SIZE; /* end of a module or of the table */
	}
	return ks;
fail:
	kallsyms__free(ks);
	errno = -err;
	return NULL;
}

struct kallsyms *kallsyms__parse(const char *text, size_t len)
{
	char *buf = malloc(len + 1);

	if (!buf)
		return NULL;
	memcpy(buf, text, len);
	return kallsyms__parse_owned(buf, len);
}

struct kallsyms *kallsyms__load(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	/* ~5 MiB for 120k symbols: one buffer, usually no realloc. */
	err = read_all(path, 8 << 20, &buf, &len);
	if (err) {
		errno = -err;
		return NULL;
	}
	return kallsyms__parse_owned(buf, len);
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strings);
	free(ks);
}

size_t kallsyms__count(const struct kallsyms *ks)
{
	return ks->count;
}

const struct stk_ksym *kallsyms__get(const struct kallsyms *ks, size_t i)
{
	return i < ks->count ? &ks->syms[i] : NULL;
}

long kallsyms__find(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->count, first;

	/* Last symbol with sym.addr <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	if (addr - ks->syms[lo].addr >= ks->syms[lo].size)
		return -1;
	/* Of its aliases the first listed text symbol, else the first. */
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	for (first = lo; lo < ks->count && ks->syms[lo].addr == ks->syms[first].addr; lo++)
		if (is_text(ks->syms[lo].type))
			return (long)lo;
	return (long)first;
}

int kallsyms__all_zero(const struct kallsyms *ks)
{
	return ks->all_zero;
}

uint64_t kallsyms__addr_of(const struct kallsyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->count; i++)
		if (strcmp(ks->syms[i].name, name) == 0)
			return ks->syms[i].addr;
	return 0;
}

/* Hex number after "0x" at *@p; advances *@p. */
static int parse_0x(char **p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0, d;

	if ((*p)[0] != '0' || (*p)[1] != 'x')
		return -EINVAL;
	*p += 2;
	while ((d = hexval(**p)) >= 0) {
		if (++n > 16)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

int kallsyms__parse_symoff(char *s, uint64_t addr, struct stk_ksym *out)
{
	uint64_t off, size;
	char *sp, *plus, *p;
	const char *mod = "";

	if (s[0] == '0' && s[1] == 'x')
		return -ENOENT; /* what %pS prints for an address without symbol */
	sp = strchr(s, ' ');
	if (sp) {
		/* " [module]" */
		*sp++ = '\0';
		if (sp[0] != '[')
			return -EINVAL;
		p = strchr(sp, ']');
		if (!p || p[1] || p == sp + 1)
			return -EINVAL;
		*p = '\0';
		mod = sp + 1;
	}
	/* Names have dots ("x.cold", "x.isra.0") but no '+': the last '+'
	 * starts the offset. */
	plus = strrchr(s, '+');
	if (!plus || plus == s)
		return -EINVAL;
	*plus = '\0';
	p = plus + 1;
	if (parse_0x(&p, &off) || *p++ != '/' || parse_0x(&p, &size) || *p)
		return -EINVAL;
	if (off >= size || off > addr)
		return -EINVAL;
	out->addr = addr - off;
	out->size = size;
	out->type = 't';
	out->name = s;
	out->module = mod;
	return 0;
}
