// SPDX-License-Identifier: BSD-2-Clause
/*
 * eventlib.c - libeventwork.so, eventwork's library: evlib_tick() is the
 * function the trace tests put a uprobe on (u:PATH:evlib_tick).
 */
static volatile unsigned long ticks;

__attribute__((noinline)) unsigned long evlib_tick(unsigned long n)
{
	ticks += n;
	return ticks;
}
