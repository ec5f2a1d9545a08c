// SPDX-License-Identifier: GPL-2.0
/* textsafe: escaping of kernel- and file-supplied strings for text output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "promfmt.h"
#include "textsafe.h"

/* No byte a terminal acts on: C0 (tab and newline too), DEL, C1 (as UTF-8). */
static void assert_no_controls(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		assert_false(*p < 0x20 || *p == 0x7f);
		if (*p == 0xc2)
			assert_false(p[1] >= 0x80 && p[1] <= 0x9f);
	}
}

static void test_char_classes(void **state)
{
	assert_int_equal(textsafe_char("a"), 1);
	assert_int_equal(textsafe_char("\x1b[2J"), 0);
	assert_int_equal(textsafe_char("\a"), 0);
	assert_int_equal(textsafe_char("\t"), 0);
	assert_int_equal(textsafe_char("\x7f"), 0);
	assert_int_equal(textsafe_char("\xc3\xa9"), 2);		/* é */
	assert_int_equal(textsafe_char("\xe2\x82\xac"), 3);	/* € */
	assert_int_equal(textsafe_char("\xf0\x9f\x98\x80"), 4);	/* emoji */
	assert_int_equal(textsafe_char("\xc2\x9b"), 0);		/* C1 CSI */
	assert_int_equal(textsafe_char("\x9b"), 0);		/* stray continuation */
	assert_int_equal(textsafe_char("\xc0\xaf"), 0);		/* overlong '/' */
	assert_int_equal(textsafe_char("\xe0\x80\xaf"), 0);	/* overlong */
	assert_int_equal(textsafe_char("\xed\xa0\x80"), 0);	/* surrogate */
	assert_int_equal(textsafe_char("\xf4\x90\x80\x80"), 0);	/* > U+10FFFF */
	assert_int_equal(textsafe_char("\xe2\x82"), 0);		/* cut short by the NUL */
	assert_int_equal(textsafe_char("\xff"), 0);
}

static void test_str_escapes_visibly(void **state)
{
	char buf[128];

	assert_string_equal(textsafe_str(buf, sizeof(buf), "eth0"), "eth0");
	assert_string_equal(textsafe_str(buf, sizeof(buf), NULL), "");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "x\x1b]0;pwn\a"), "x\\x1b]0;pwn\\x07");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "a\\x1b"), "a\\\\x1b");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "caf\xc3\xa9"), "caf\xc3\xa9");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "\xc3("), "\\xc3(");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "\xc2\x9b" "1m"), "\\xc2\\x9b1m");
	assert_no_controls(textsafe_str(buf, sizeof(buf), "\x01\x02\x1b\x7f\xc2\x85\n\t"));
	assert_true(textsafe_is_clean("veth0-rx"));
	assert_false(textsafe_is_clean("v\x1b"));
	assert_false(textsafe_is_clean("v\\"));
	assert_false(textsafe_is_clean("v\xff"));
}

static void test_str_never_cuts(void **state)
{
	char buf[6];

	/* "ab" + "\x1b" does not fit in 5 bytes + NUL: the escape is left out whole */
	assert_string_equal(textsafe_str(buf, sizeof(buf), "ab\x1b" "c"), "ab");
	assert_string_equal(textsafe_str(buf, sizeof(buf), "abcd\xc3\xa9"), "abcd");
	assert_string_equal(textsafe_str(buf, 1, "abc"), "");
}

static void test_col_fits_and_pads(void **state)
{
	char buf[64];

	assert_string_equal(textsafe_col(buf, sizeof(buf), "eth0", 6), "eth0  ");
	assert_string_equal(textsafe_col(buf, sizeof(buf), "abcdefgh", 6), "abcdef");
	/* 4-byte escapes are not cut: "ab\x1b" is 6 columns, the next one would not fit */
	assert_string_equal(textsafe_col(buf, sizeof(buf), "ab\x1b\x1b", 8), "ab\\x1b  ");
	/* UTF-8 counts one column a character and is cut between characters */
	assert_string_equal(textsafe_col(buf, sizeof(buf), "\xc3\xa9\xc3\xa9\xc3\xa9", 2),
			    "\xc3\xa9\xc3\xa9");
	assert_string_equal(textsafe_col(buf, sizeof(buf), "\xc3\xa9", 3), "\xc3\xa9  ");
	/* the kernel's longest name, all ESC: 15 x 4 columns, cut to 12 */
	assert_string_equal(textsafe_col(buf, sizeof(buf), "\x1b\x1b\x1b\x1b\x1b"
					 "\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 12),
			    "\\x1b\\x1b\\x1b");
	assert_string_equal(textsafe_col(buf, sizeof(buf), "x", 0), "x");
}

/* JSON: valid UTF-8 passes as is (json-c escapes controls), anything else is escaped */
static void test_utf8_for_json(void **state)
{
	char buf[64];
	const char *ok = "e\x1b[2J\xc3\xa9";

	assert_ptr_equal(textsafe_utf8(buf, sizeof(buf), ok), ok);
	assert_string_equal(textsafe_utf8(buf, sizeof(buf), "r\x1b\xff"), "r\\x1b\\xff");
	assert_string_equal(textsafe_utf8(buf, sizeof(buf), NULL), "");
}

/* The Prometheus label escaping uses the same classifier (promfmt.c). */
static void test_prom_label_escapes_controls(void **state)
{
	char buf[128];

	assert_int_equal(prom_escape_label(buf, sizeof(buf), "v\x1b[2J\a"), 14);
	assert_string_equal(buf, "v\\\\x1b[2J\\\\x07");
	assert_int_equal(prom_escape_label(buf, sizeof(buf), "bad\xff"), 8);
	assert_string_equal(buf, "bad\\\\xff");
	assert_no_controls(buf);
}

/* Messages that quote a file, escaped in place (compare, gate and web config errors). */
static void test_line_in_place(void **state)
{
	char m[64] = "spec.yaml:1:1: unknown key 'a\033[2J\xff'", small[8] = "ab\ncd";

	(void)state;
	assert_string_equal(textsafe_line(m, sizeof(m)),
			    "spec.yaml:1:1: unknown key 'a\\x1b[2J\\xff'");
	/* what does not fit is left out whole */
	assert_string_equal(textsafe_line(small, sizeof(small)), "ab\\x0ac");
	strcpy(m, "clean \xc3\xa9");
	assert_string_equal(textsafe_line(m, sizeof(m)), "clean \xc3\xa9");
}

/* JUnit text: markup as entities, no control character or invalid UTF-8. */
static void test_xml(void **state)
{
	char buf[128] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	(void)state;
	assert_non_null(f);
	textsafe_xml(f, "<a&\"'>\t\033\xff\xc3\xa9");
	fclose(f);
	assert_string_equal(buf, "&lt;a&amp;&quot;&apos;&gt;\t\\x1b\\xff\xc3\xa9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_char_classes),
		cmocka_unit_test(test_str_escapes_visibly),
		cmocka_unit_test(test_str_never_cuts),
		cmocka_unit_test(test_col_fits_and_pads),
		cmocka_unit_test(test_prom_label_escapes_controls),
		cmocka_unit_test(test_utf8_for_json),
		cmocka_unit_test(test_line_in_place),
		cmocka_unit_test(test_xml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
