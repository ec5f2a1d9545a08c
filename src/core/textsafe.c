// SPDX-License-Identifier: GPL-2.0
/* Escaping kernel- and file-supplied strings for text output (textsafe.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "textsafe.h"

size_t textsafe_char(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp, min;
	size_t n;

	if (s[0] < 0x20 || s[0] == 0x7f)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;	/* continuation byte, 0xc0/0xc1, 0xf5.. */
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;	/* C1 controls: 0x9b is CSI on some terminals */
	return n;
}

/*
 * The next unit of s as output text: either a printable character copied
 * as is, or its escape. Returns the bytes of s it consumed.
 */
static size_t next_unit(const char *s, char *out, size_t *olen)
{
	size_t n = textsafe_char(s);

	if (n == 1 && *s == '\\') {
		memcpy(out, "\\\\", 2);
		*olen = 2;
		return 1;
	}
	if (n) {
		memcpy(out, s, n);
		*olen = n;
		return n;
	}
	snprintf(out, 5, "\\x%02x", (unsigned char)*s);
	*olen = 4;
	return 1;
}

static char *fit(char *buf, size_t len, const char *s, int width)
{
	size_t o = 0;
	int cols = 0;

	if (!len)
		return buf;
	while (s && *s) {
		char u[5];
		size_t ulen, used = next_unit(s, u, &ulen);
		/* an escape is as wide as it is long; a character is one column */
		int w = textsafe_char(s) && *s != '\\' ? 1 : (int)ulen;

		if (width > 0 && cols + w > width)
			break;
		if (o + ulen + 1 > len)
			break;
		memcpy(buf + o, u, ulen);
		o += ulen;
		cols += w;
		s += used;
	}
	while (width > 0 && cols < width && o + 2 <= len) {
		buf[o++] = ' ';
		cols++;
	}
	buf[o] = '\0';
	return buf;
}

char *textsafe_str(char *buf, size_t len, const char *s)
{
	return fit(buf, len, s, 0);
}

char *textsafe_col(char *buf, size_t len, const char *s, int width)
{
	return fit(buf, len, s, width);
}

const char *textsafe_utf8(char *buf, size_t len, const char *s)
{
	for (const char *p = s; p && *p; ) {
		size_t n = (unsigned char)*p < 0x80 ? 1 : textsafe_char(p);

		if (!n)
			return textsafe_str(buf, len, s);
		p += n;
	}
	return s ? s : "";
}

int textsafe_is_clean(const char *s)
{
	for (; s && *s; ) {
		size_t n = textsafe_char(s);

		if (!n || *s == '\\')
			return 0;
		s += n;
	}
	return 1;
}

char *textsafe_line(char *buf, size_t len)
{
	char *copy;

	if (!len || textsafe_is_clean(buf))
		return buf;
	copy = strdup(buf);
	if (copy) {
		textsafe_str(buf, len, copy);
		free(copy);
		return buf;
	}
	/* no memory for the copy: still no raw byte that needs escaping */
	for (char *p = buf; *p; p++)
		if (!textsafe_char(p))
			*p = '?';
	return buf;
}

void textsafe_xml(FILE *f, const char *s)
{
	while (*s) {
		size_t n;

		switch (*s) {
		case '<': fputs("&lt;", f); s++; continue;
		case '>': fputs("&gt;", f); s++; continue;
		case '&': fputs("&amp;", f); s++; continue;
		case '"': fputs("&quot;", f); s++; continue;
		case '\'': fputs("&apos;", f); s++; continue;
		case '\t': case '\n': case '\r': fputc(*s, f); s++; continue;
		}
		/*
		 * XML 1.0 allows no other control character, and the file says
		 * UTF-8: anything else is shown as \xNN (textsafe.h)
		 */
		n = textsafe_char(s);
		if (n)
			fwrite(s, 1, n, f);
		else
			fprintf(f, "\\x%02x", (unsigned char)*s);
		s += n ? n : 1;
	}
}
