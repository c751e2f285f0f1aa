// SPDX-License-Identifier: BSD-2-Clause
/*
 * Escaping capture strings for printing as text (the rule is in
 * stk_escape.h).  It lives in libstk because both tools print strings they
 * read from captures or from traced processes, and the rule must be one.
 */
#include <stdint.h>

#include "stk_escape.h"

/*
 * Length of the well-formed UTF-8 sequence at @p (@n bytes left, p[0] >=
 * 0x80) that may print as is, or 0: malformed (RFC 3629 table 3.7) or a
 * C1 control.
 */
static size_t utf8_printable(const uint8_t *p, size_t n)
{
	uint8_t lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong below U+0800 */
		else if (p[0] == 0xed)
			hi = 0x9f;	/* U+D800..U+DFFF: surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		if (p[0] == 0xf0)
			lo = 0x90;	/* overlong below U+10000 */
		else if (p[0] == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;	/* continuation byte, 0xc0, 0xc1, 0xf5..0xff */
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	/* U+0080..U+009F: C1 controls (CSI is U+009B). */
	if (p[0] == 0xc2 && p[1] <= 0x9f)
		return 0;
	return len;
}

size_t stk_escape(char *out, size_t size, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, o = 0, k, len;
	int full = 0;	/* stopped writing: the next piece did not fit */
	char esc[4];

	while (i < n) {
		const char *piece;

		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
			piece = (const char *)p + i;
			len = 1;
			i++;
		} else if (p[i] == '\\') {
			piece = "\\\\";
			len = 2;
			i++;
		} else if (p[i] >= 0x80 && (len = utf8_printable(p + i, n - i)) != 0) {
			piece = (const char *)p + i;
			i += len;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[p[i] >> 4];
			esc[3] = hex[p[i] & 15];
			piece = esc;
			len = 4;
			i++;
		}
		if (!full && size && o + len < size) {
			for (k = 0; k < len; k++)
				out[o + k] = piece[k];
		} else {
			if (!full && size)
				out[o] = '\0';
			full = 1;
		}
		o += len;
	}
	if (!full && size)
		out[o] = '\0';
	return o;
}

int stk_escape_needed(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, len;

	while (i < n) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			i++;
		else if (p[i] >= 0x80 && (len = utf8_printable(p + i, n - i)) != 0)
			i += len;
		else
			return 1;
	}
	return 0;
}
