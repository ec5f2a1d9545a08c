// SPDX-License-Identifier: GPL-2.0
/*
 * yamlfile: the one loading path of gate specs, compare specs and the web
 * config (issue 37, finding 5): nesting, documents, keys given twice in
 * any mapping, and the file reader's limits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "yamlfile.h"

/* 0 when text loads; else the error as "LINE:COL: text" in out. */
static int load(const char *text, char *out, size_t len)
{
	struct yamlfile_err e;
	yaml_document_t doc;
	int err = yamlfile__parse(text, strlen(text), &doc, &e);

	if (!err) {
		yaml_document_delete(&doc);
		snprintf(out, len, "ok");
		return 0;
	}
	snprintf(out, len, "%zu:%zu: %s", e.line, e.col, e.text);
	return err;
}

static void expect(const char *text, const char *want)
{
	char got[512];

	load(text, got, sizeof(got));
	if (strcmp(got, want))
		fail_msg("'%.60s': got \"%s\", want \"%s\"", text, got, want);
}

static void test_duplicates(void **state)
{
	(void)state;
	expect("a: 1\nb: 2\n", "ok");
	expect("a: 1\na: 2\n", "2:1: duplicate key 'a' (first at line 1)");
	/* nested mappings too (compare's metrics entries, gate selectors) */
	expect("metrics:\n  - metric: x\n    agg: avg\n    agg: max\n",
	       "4:5: duplicate key 'agg' (first at line 3)");
	/* the earliest repeat in the file, whatever mapping holds it */
	expect("x: {a: 1, a: 2}\nx: 3\n", "1:11: duplicate key 'a' (first at line 1)");
	expect("a: 1\nb: {c: 1, c: 2}\na: 3\n", "2:11: duplicate key 'c' (first at line 2)");
	/* three of one key: the second is the repeat */
	expect("k: 1\nj: 0\nk: 2\nk: 3\n", "3:1: duplicate key 'k' (first at line 1)");
	/* the same key in two mappings is no repeat */
	expect("- {a: 1}\n- {a: 2}\n", "ok");
	/* quoting does not make another key */
	expect("a: 1\n'a': 2\n", "2:1: duplicate key 'a' (first at line 1)");
}

static void test_many_keys(void **state)
{
	size_t n = 60000, off = 0;
	char *y = malloc(n * 16 + 32), got[256];
	clock_t t0;

	(void)state;
	assert_non_null(y);
	for (size_t i = 0; i < n; i++)
		off += sprintf(y + off, "k%zu: 1\n", i);
	sprintf(y + off, "k7: 2\n");
	t0 = clock();
	assert_int_equal(load(y, got, sizeof(got)), -EINVAL);
	/* sorted, not n^2 (n^2 / 2 comparisons would take seconds) */
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	snprintf(y, 64, "%zu:1: duplicate key 'k7' (first at line 8)", n + 1);
	assert_string_equal(got, y);
	free(y);
}

static void test_depth_and_documents(void **state)
{
	size_t n = 500000;
	char *deep = malloc(n + 1);
	clock_t t0;

	(void)state;
	expect("a: [[[[[[[1]]]]]]]\n", "ok");
	expect("a: [[[[[[[[1]]]]]]]]\n", "1:11: nested deeper than 8 levels");
	assert_non_null(deep);
	memset(deep, '[', n);
	deep[n] = '\0';
	t0 = clock();
	expect(deep, "1:9: nested deeper than 8 levels");
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	free(deep);
	expect("a: 1\n---\nb: 2\n", "2:1: a second YAML document: only one YAML document is allowed");
	expect("a: 1\n...\n", "ok");
	expect("a: [\n", "2:1: did not find expected node content while parsing a flow node");
	expect("", "ok");
}

static void test_read(void **state)
{
	char dir[] = "/tmp/yamlfile.XXXXXX", path[64], *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/big", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i <= YAMLFILE_MAX_BYTES / 8; i++)
		fputs("# 45678\n", f);
	fclose(f);
	assert_int_equal(yamlfile__read(path, false, &buf, &len), -EFBIG);
	truncate(path, YAMLFILE_MAX_BYTES);
	assert_int_equal(yamlfile__read(path, true, &buf, &len), 0);
	assert_int_equal(len, YAMLFILE_MAX_BYTES);
	free(buf);
	unlink(path);
	assert_int_equal(yamlfile__read(dir, false, &buf, &len), -EISDIR);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* regular_only: refused at once, never blocks */
	assert_int_equal(yamlfile__read(path, true, &buf, &len), -ESPIPE);
	unlink(path);
	assert_int_equal(yamlfile__read(path, true, &buf, &len), -ENOENT);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_depth_and_documents),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
