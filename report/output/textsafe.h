/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * textsafe.h - the reporter's ways to put a string from a capture into
 * text output: into a string buffer, or as one whole line on a stream,
 * both escaped by libstk's one rule (stk_escape.h).
 */
#ifndef STK_REPORT_TEXTSAFE_H
#define STK_REPORT_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

#include "stk_escape.h"
#include "util.h"

/* Append the escaped form of @n bytes at @s to @sb.  0 or -ENOMEM. */
int strbuf__add_escaped(struct strbuf *sb, const char *s, size_t n);

/*
 * textline__printf() - print one line on @f: the printf() text of @fmt
 * (which holds no newline) escaped as a whole, then '\n'.  For lines that
 * carry capture strings (paths, names, META and STAT text, reader
 * messages): whatever they hold, the line stays one line and sends no
 * control byte to a terminal.  The literal parts of @fmt must be printable
 * ASCII without '\', so only the capture's bytes change.
 * Returns 0, -ENOMEM, or -EIO when writing failed.
 */
int textline__printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
