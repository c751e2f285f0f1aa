// SPDX-License-Identifier: BSD-2-Clause
/* Capture strings into the reporter's text output, escaped (textsafe.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "textsafe.h"

int strbuf__add_escaped(struct strbuf *sb, const char *s, size_t n)
{
	char small[1024], *tmp = small;
	size_t need, len;
	int err;

	if (!stk_escape_needed(s, n))
		return strbuf__add(sb, s, n);
	need = STK_ESCAPE_SIZE(n);
	if (need > sizeof(small)) {
		tmp = malloc(need);
		if (!tmp)
			return -ENOMEM;
	}
	len = stk_escape(tmp, need, s, n);
	err = strbuf__add(sb, tmp, len);
	if (tmp != small)
		free(tmp);
	return err;
}

int textline__printf(FILE *f, const char *fmt, ...)
{
	struct strbuf sb = { 0 };
	char *text = NULL;
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	err = strbuf__add_escaped(&sb, text, (size_t)n);
	if (!err && (fputs(strbuf__str(&sb), f) == EOF || fputc('\n', f) == EOF))
		err = -EIO;
	strbuf__free(&sb);
	free(text);
	return err;
}
