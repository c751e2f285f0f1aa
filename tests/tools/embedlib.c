// SPDX-License-Identifier: BSD-2-Clause
/*
 * embedlib.c - libembedwork.so, the shared library of embedwork: its two
 * functions take the samples, so a report names them only if it has the
 * library's symbols (tests/e2e/report_embed.sh deletes the file).
 */
#include <stdint.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

/* A local symbol: only in .symtab, not in .dynsym. */
static NOINLINE void embedlib_leaf(void)
{
	volatile uint64_t x = 0;
	int i;

	for (i = 0; i < 100000; i++)
		x += (uint64_t)i * 7;
	sink += x;
}

NOINLINE void embedlib_spin(void)
{
	embedlib_leaf();
	sink++;
}
