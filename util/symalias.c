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

int symalias__cmp(const char *a, enum symalias_bind ba, const char *b, enum symalias_bind bb)
{
	size_t ua, ub, la, lb;

	if (ba != bb)
		return (int)ba - (int)bb;
	ua = strspn(a, "_");
	ub = strspn(b, "_");
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(a);
	lb = strlen(b);
	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(a, b);
}
