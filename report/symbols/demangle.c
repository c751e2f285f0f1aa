// SPDX-License-Identifier: BSD-2-Clause
/*
 * Demangling without linking a C++ runtime: libstdc++'s __cxa_demangle is
 * looked up with dlopen() on first use.  Why not libiberty: it is a static
 * library in a package (libiberty-dev) that nothing else here needs, while
 * libstdc++ is present on every system that runs C++ programs -- which are
 * exactly the programs whose names need demangling.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

struct demangler {
	int tried;		/* dlopen attempted */
	void *handle;
	cxa_demangle_fn cxa_demangle;
};

struct demangler *demangler__new(void)
{
	struct demangler *d = calloc(1, sizeof(*d));

	if (!d)
		errno = ENOMEM;
	return d;
}

void demangler__free(struct demangler *d)
{
	if (!d)
		return;
	if (d->handle)
		dlclose(d->handle);
	free(d);
}

static cxa_demangle_fn demangler__load(struct demangler *d)
{
	if (d->tried)
		return d->cxa_demangle;
	d->tried = 1;
	d->handle = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (d->handle)
		d->cxa_demangle = (cxa_demangle_fn)dlsym(d->handle, "__cxa_demangle");
	return d->cxa_demangle;
}

/* Rust legacy mangling ends the path with a 17-character "h<16 hex>"
 * component: the crate hash, noise in a profile. */
static int is_rust_legacy(const char *raw)
{
	size_t n = strlen(raw);
	size_t i;

	if (n < 3 + 20 || strncmp(raw, "_ZN", 3) != 0 || raw[n - 1] != 'E')
		return 0;
	if (memcmp(raw + n - 20, "17h", 3) != 0)
		return 0;
	for (i = n - 17; i < n - 1; i++)
		if (!isxdigit((unsigned char)raw[i]))
			return 0;
	return 1;
}

static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Decode Rust legacy escapes in place ("$LT$" -> '<', "$u20$" -> ' ',
 * ".." -> "::") and drop the trailing "::h<hash>". */
static void rust_legacy_clean(char *s)
{
	char *r = s, *w = s;
	size_t n = strlen(s);

	if (n > 19 && strncmp(s + n - 19, "::h", 3) == 0)
		s[n - 19] = '\0';
	if (r[0] == '_' && r[1] == '$')
		r++;
	while (*r) {
		size_t i;
		int done = 0;

		if (*r == '$') {
			for (i = 0; i < sizeof(rust_escapes) / sizeof(rust_escapes[0]); i++) {
				size_t l = strlen(rust_escapes[i].esc);

				if (strncmp(r, rust_escapes[i].esc, l) == 0) {
					*w++ = rust_escapes[i].c;
					r += l;
					done = 1;
					break;
				}
			}
			if (!done && r[1] == 'u') {
				char *end;
				unsigned long v = strtoul(r + 2, &end, 16);

				if (*end == '$' && end > r + 2 && v > 0 && v < 0x80) {
					*w++ = (char)v;
					r = end + 1;
					done = 1;
				}
			}
		} else if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
			done = 1;
		}
		if (!done)
			*w++ = *r++;
	}
	*w = '\0';
}

/* A PLT stub's name, "_ZN3foo3barEv@plt": the symbol demangled, the
 * suffix kept (as perf and objdump show it). */
static char *demangle_plt(struct demangler *d, const char *raw, size_t len)
{
	char *sym = strndup(raw, len - 4), *dm, *out;

	if (!sym)
		return NULL;
	dm = demangler__demangle(d, sym);
	free(sym);
	if (!dm)
		return NULL;
	out = malloc(strlen(dm) + 5);
	if (out)
		strcat(strcpy(out, dm), "@plt");
	free(dm);
	return out;
}

char *demangler__demangle(struct demangler *d, const char *raw)
{
	cxa_demangle_fn fn;
	char *out;
	size_t len;
	int status = 0;

	if (!d || !raw || strncmp(raw, "_Z", 2) != 0)
		return NULL;
	len = strlen(raw);
	if (len > 4 && strcmp(raw + len - 4, "@plt") == 0)
		return demangle_plt(d, raw, len);
	fn = demangler__load(d);
	if (!fn)
		return NULL;
	out = fn(raw, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	if (is_rust_legacy(raw))
		rust_legacy_clean(out);
	return out;
}

/* ---- --short-names --------------------------------------------------- */

static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t k = strlen(suffix);

	return len >= k && memcmp(s + len - k, suffix, k) == 0;
}

/* 1 if "operator" starts at @s + @i as a word: the rest is the name. */
static int operator_at(const char *s, size_t i)
{
	return strncmp(s + i, "operator", 8) == 0 && (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ') &&
	       !(isalnum((unsigned char)s[i + 8]) || s[i + 8] == '_');
}

/* The name part of @s[0..@len): after the return type, if there is one
 * (the last space outside brackets, before any "operator"). */
static size_t name_start(const char *s, size_t len)
{
	size_t i, start = 0;
	int depth = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (depth == 0 && operator_at(s, i))
			break;
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0)
			start = i + 1;
	}
	return start;
}

void demangle__shorten(char *name)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", "&&", "&" };
	char *clone = strstr(name, " [clone ");
	size_t len = clone ? (size_t)(clone - name) : strlen(name), i, start, tail;
	int depth = 0, again = 1;

	while (again) {
		again = 0;
		for (i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			if (ends_with(name, len, quals[i])) {
				len -= strlen(quals[i]);
				again = 1;
			}
	}
	if (!len || name[len - 1] != ')')
		return;
	/* The parameter list: from the '(' matching the last ')'. */
	for (i = len; i-- > 0;) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || i == (size_t)-1)
		return;
	len = i;
	start = name_start(name, len);
	tail = clone ? strlen(clone) : 0;
	/* A function returning a function pointer, "R (*f(A))(B)": what
	 * is left is "(*f(A))", whose inside is the function. */
	if (len - start > 3 && (name[start + 1] == '*' || name[start + 1] == '&') &&
	    name[start] == '(' && name[len - 1] == ')' && !tail) {
		memmove(name, name + start + 2, len - start - 3);
		name[len - start - 3] = '\0';
		demangle__shorten(name);
		return;
	}
	memmove(name, name + start, len - start);
	if (tail)
		memmove(name + len - start, clone, tail);
	name[len - start + tail] = '\0';
}
