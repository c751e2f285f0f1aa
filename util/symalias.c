// SPDX-License-Identifier: BSD-2-Clause
/*
 * symalias.c - the preferred name among the symbols at one address (the
 * rule and its reasons are in symalias.h).
 */
#include <string.h>

#include "symalias.h"

/* STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE from <elf.h>, without needing it. */
#define ELF_STB_GLOBAL 1
#define ELF_STB_WEAK 2
#define ELF_STB_GNU_UNIQUE 10

enum symalias_bind symalias__elf_bind(unsigned int stb)
{
	if (stb == ELF_STB_GLOBAL || stb == ELF_STB_GNU_UNIQUE)
		return SYMALIAS_GLOBAL;
	return stb == ELF_STB_WEAK ? SYMALIAS_WEAK : SYMALIAS_LOCAL;
}

enum symalias_bind symalias__kallsyms_bind(char type)
{
	if (type == 'w' || type == 'W' || type == 'v' || type == 'V')
		return SYMALIAS_WEAK;
	return type >= 'A' && type <= 'Z' ? SYMALIAS_GLOBAL : SYMALIAS_LOCAL;
}

size_t symalias__name_len(const char *name)
{
	const char *at = name[0] ? strchr(name + 1, '@') : NULL;
	const char *v;

	if (!at)
		return strlen(name);
	v = at + 1 + (at[1] == '@');
	/* A version is a non-empty word without '@': anything else (a
	 * name spelled with '@' of its own) is left whole. */
	if (!*v || v[strcspn(v, "@ \t")])
		return strlen(name);
	return (size_t)(at - name);
}

int symalias__compat_name(const char *name)
{
	size_t n = symalias__name_len(name);

	return name[n] == '@' && name[n + 1] != '@';
}

/* Rule 1 and 2 as one rank: binding, then compat within it. */
static int rank(const char *name, int b)
{
	int compat = (b & SYMALIAS_COMPAT) || symalias__compat_name(name);

	return (b & ~SYMALIAS_COMPAT) * 2 + compat;
}

int symalias__cmp(const char *a, int ba, const char *b, int bb)
{
	size_t ua, ub, la, lb;
	int ra = rank(a, ba), rb = rank(b, bb), c;

	if (ra != rb)
		return ra - rb;
	ua = strspn(a, "_");
	ub = strspn(b, "_");
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = symalias__name_len(a);
	lb = symalias__name_len(b);
	if (la != lb)
		return la > lb ? -1 : 1;
	c = memcmp(a, b, la);
	/* Equal without versions: the default version first, then any. */
	return c ? c : strcmp(a, b);
}
