/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stk_escape.h - the one rule for printing a string that came from a
 * capture (comm, symbol, module and mapping names, META and STAT text,
 * command lines) as text on a terminal or in a text report.
 *
 * A capture may come from another machine or from a hostile process: a
 * process can name itself "evil\e[2J" and a file "a\nb".  Printed raw,
 * such bytes clear the screen, move the cursor, retitle the window or
 * forge a line.  Every text writer of stkrec and stkreport passes such
 * strings through stk_escape() first; binary outputs (pprof) keep them raw.
 *
 * The rule, byte by byte:
 *   - printable ASCII 0x20..0x7e is kept, except '\' which becomes "\\";
 *   - C0 controls 0x00..0x1f and DEL 0x7f become "\xNN" (lowercase hex);
 *   - a well-formed UTF-8 sequence (RFC 3629: shortest form, no surrogates
 *     U+D800..U+DFFF, nothing above U+10FFFF) is kept, except the C1
 *     controls U+0080..U+009F (a terminal acts on them as on ESC), whose
 *     two bytes become "\xc2\xNN";
 *   - every other byte (a stray continuation byte, a lead byte of an
 *     overlong, surrogate, too large or truncated sequence, 0xc0, 0xc1,
 *     0xf5..0xff) becomes "\xNN", and decoding resumes at the next byte.
 * Because '\' itself is escaped, the output is unambiguous: "\x1b" in the
 * output is always the byte 0x1b, "\\x1b" the four characters "\x1b".
 * Each input byte becomes at most 4 output bytes.
 */
#ifndef STK_ESCAPE_H
#define STK_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buffer size that always holds the escaped form of @n bytes and a NUL. */
#define STK_ESCAPE_SIZE(n) (4 * (size_t)(n) + 1)

/*
 * stk_escape() - write the escaped form of @n bytes at @s into @out.
 * @out, @size: the buffer; at most @size - 1 bytes and a NUL are written
 *   (nothing with @size 0).  An escape that does not fit whole is left out
 *   with everything after it, so a truncated result is still unambiguous.
 * @s: may contain NUL bytes (escaped as "\x00").
 *
 * Returns the length of the whole escaped form (not counting the NUL), as
 * snprintf() does: a result >= @size means it was truncated.
 */
size_t stk_escape(char *out, size_t size, const char *s, size_t n);

/* 1 when stk_escape() would change @s (@n bytes), 0 when it prints as is. */
int stk_escape_needed(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif
