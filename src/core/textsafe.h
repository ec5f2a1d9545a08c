/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text that came from the kernel or a file (interface names, recording
 * strings, spec text) made safe for a terminal or a text format.
 *
 * The kernel allows any byte but '/', ':', NUL and whitespace in an
 * interface name, and any user can name one in their own namespace: ESC,
 * BEL or a C1 CSI printed raw would drive the reader's terminal. So every
 * text output escapes control characters (C0, DEL, C1) and bytes that are
 * not valid UTF-8 as a visible "\xNN", and a backslash as "\\" (so the
 * escape cannot be forged). Columns count characters (a wide East Asian
 * character as one) and are never cut inside a UTF-8 sequence or an escape.
 *
 *   char col[64];
 *   printf("%s %s\n", textsafe_col(col, sizeof(col), p->ifname, 12), ...);
 *
 * One classifier, textsafe_char(), is shared with the formats that escape
 * differently (the Prometheus writer, promfmt.c).
 */
#ifndef DEVMEMTOP_TEXTSAFE_H
#define DEVMEMTOP_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Length (1-4) of the printable, well-formed UTF-8 character at s, or 0
 * when the byte s[0] must be escaped (control character, DEL, C1 control,
 * stray continuation byte, overlong or truncated sequence, surrogate,
 * code point above U+10FFFF). s[0] must not be NUL.
 */
size_t textsafe_char(const char *s);

/*
 * s escaped into buf (always NUL-terminated when len > 0; NULL s is "").
 * An escape or character that does not fit is left out whole, never cut.
 * Returns buf.
 */
char *textsafe_str(char *buf, size_t len, const char *s);

/*
 * s escaped and fitted to width characters (each escape counts as its
 * length), cut on a character boundary and padded with spaces on the right
 * to exactly width characters. width <= 0: no cut, no padding. Returns buf.
 */
char *textsafe_col(char *buf, size_t len, const char *s, int width);

/*
 * For formats that escape control characters themselves but must be valid
 * UTF-8 (JSON): s itself when it is valid UTF-8 (C0 controls allowed),
 * else s escaped into buf as textsafe_str() does. Returns s or buf.
 */
const char *textsafe_utf8(char *buf, size_t len, const char *s);

/*
 * A message in buf (len bytes) escaped in place as textsafe_str() does:
 * one line with no raw control character or invalid UTF-8, for messages
 * that quote a file. Returns buf.
 */
char *textsafe_line(char *buf, size_t len);

/*
 * s as XML 1.0 character data or attribute text (the file says UTF-8):
 * markup characters as entities, tab, newline and CR kept, anything
 * textsafe_char() refuses as a visible "\xNN". JUnit writers.
 */
void textsafe_xml(FILE *f, const char *s);

/* True when s needs no escaping. */
int textsafe_is_clean(const char *s);

#endif /* DEVMEMTOP_TEXTSAFE_H */
