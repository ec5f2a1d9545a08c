// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the Prometheus text writer (src/core/promfmt.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "promfmt.h"

/* Value of the sample line that starts with prefix (whole name+labels). */
static int find_value(const char *text, const char *prefix, char *out, size_t len)
{
	const char *p = text;
	size_t pl = strlen(prefix);

	while (p && *p) {
		const char *eol = strchr(p, '\n');

		if (!strncmp(p, prefix, pl) && p[pl] == ' ') {
			size_t n = (eol ? (size_t)(eol - p) : strlen(p)) - pl - 1;

			if (n >= len)
				return -1;
			memcpy(out, p + pl + 1, n);
			out[n] = '\0';
			return 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return -1;
}

static unsigned long long value_u(const char *text, const char *prefix)
{
	char v[64];

	if (find_value(text, prefix, v, sizeof(v)))
		fail_msg("no sample '%s' in:\n%s", prefix, text);
	return strtoull(v, NULL, 10);
}

static void test_escape_label(void **state)
{
	char buf[64];

	assert_int_equal(prom_escape_label(buf, sizeof(buf), "plain"), 5);
	assert_string_equal(buf, "plain");
	assert_int_equal(prom_escape_label(buf, sizeof(buf), "a\\b\"c\nd"), 10);
	assert_string_equal(buf, "a\\\\b\\\"c\\nd");
	assert_int_equal(prom_escape_label(buf, 4, "a\"b"), -ENOSPC);
	/* other bytes, UTF-8 included, pass through */
	assert_int_equal(prom_escape_label(buf, sizeof(buf), "eth0\tx\xc3\xa9"), 8);
}

static void test_format_double(void **state)
{
	char buf[64];

	prom_format_double(buf, sizeof(buf), 1e-9);
	assert_string_equal(buf, "1e-09");
	prom_format_double(buf, sizeof(buf), 1024 * 1e-9);
	assert_string_equal(buf, "1.024e-06");
	prom_format_double(buf, sizeof(buf), 0.1);
	assert_string_equal(buf, "0.1");
	prom_format_double(buf, sizeof(buf), 42);
	assert_string_equal(buf, "42");
	prom_format_double(buf, sizeof(buf), 1700000000.0);
	assert_string_equal(buf, "1700000000");
	prom_format_double(buf, sizeof(buf), 1700000000.25);
	assert_string_equal(buf, "1700000000.25");
	prom_format_double(buf, sizeof(buf), -1);
	assert_string_equal(buf, "-1");
	prom_format_double(buf, sizeof(buf), NAN);
	assert_string_equal(buf, "NaN");
	prom_format_double(buf, sizeof(buf), INFINITY);
	assert_string_equal(buf, "+Inf");
	prom_format_double(buf, sizeof(buf), -INFINITY);
	assert_string_equal(buf, "-Inf");
	/* every latency bound reads back to exactly the double we computed */
	for (unsigned int k = 0; k < 64; k++) {
		double v = (double)(1ULL << k) / 1e9;

		prom_format_double(buf, sizeof(buf), v);
		assert_true(strtod(buf, NULL) == v);
	}
	assert_int_equal(prom_format_double(buf, 3, 123456.0), -ENOSPC);
}

static void test_lazy_header_and_labels(void **state)
{
	struct promfmt *w = promfmt__new();
	struct prom_label l[2] = { { "ifname", "we\"ird\\\nname" }, { "queue", "" } };
	const char *t;

	assert_non_null(w);
	promfmt__family(w, "x_unused", "gauge", "Never sampled.");
	promfmt__family(w, "x_total", "counter", "Help with \\ and\nnewline and \"quotes\".");
	promfmt__sample_u64(w, NULL, l, 2, NULL, NULL, 18446744073709551615ULL);
	promfmt__sample_i64(w, NULL, NULL, 0, NULL, NULL, -3);
	promfmt__family(w, "y", "gauge", "Y.");
	promfmt__sample(w, NULL, NULL, 0, "le", "0.5", 0.25);
	t = promfmt__text(w, NULL);
	assert_null(strstr(t, "x_unused"));
	assert_string_equal(t,
		"# HELP x_total Help with \\\\ and\\nnewline and \"quotes\".\n"
		"# TYPE x_total counter\n"
		"x_total{ifname=\"we\\\"ird\\\\\\nname\",queue=\"\"} 18446744073709551615\n"
		"x_total -3\n"
		"# HELP y Y.\n"
		"# TYPE y gauge\n"
		"y{le=\"0.5\"} 0.25\n");
	assert_int_equal(promfmt__err(w), 0);
	promfmt__free(w);
}

static void test_sample_without_family_is_error(void **state)
{
	struct promfmt *w = promfmt__new();
	size_t len;

	promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, 1);
	assert_int_equal(promfmt__err(w), -EINVAL);
	assert_null(promfmt__take(w, &len));
	promfmt__free(w);
}

static void test_hist_batch(void **state)
{
	struct prom_label l = { "pool_id", "7" };
	struct hist_batch h = {};
	struct promfmt *w = promfmt__new();
	const char *t;
	unsigned long long prev = 0;
	char name[96];

	hist_batch_add(&h, 1, 3);	/* le=1 */
	hist_batch_add(&h, 3, 2);	/* le=4 */
	hist_batch_add(&h, 4, 1);	/* le=4: bound is inclusive */
	hist_batch_add(&h, 64, 5);	/* le=64 */
	hist_batch_add(&h, 65, 1);	/* le=128 */
	promfmt__family(w, "b_items", "histogram", "Batches.");
	promfmt__hist_batch(w, &l, 1, &h);
	t = promfmt__text(w, NULL);

	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"1\"}"), 3);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"2\"}"), 3);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"4\"}"), 6);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"32\"}"), 6);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"64\"}"), 11);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"128\"}"), 12);
	assert_int_equal(value_u(t, "b_items_bucket{pool_id=\"7\",le=\"+Inf\"}"), 12);
	assert_int_equal(value_u(t, "b_items_count{pool_id=\"7\"}"), 12);
	assert_int_equal(value_u(t, "b_items_sum{pool_id=\"7\"}"), 3 + 6 + 4 + 320 + 65);
	/* powers of two only, cumulative (never decreasing) */
	for (unsigned int b = 1; b <= 128; b *= 2) {
		unsigned long long v;

		snprintf(name, sizeof(name), "b_items_bucket{pool_id=\"7\",le=\"%u\"}", b);
		v = value_u(t, name);
		assert_true(v >= prev);
		prev = v;
	}
	assert_null(strstr(t, "le=\"3\""));
	assert_null(strstr(t, "le=\"256\""));
	promfmt__free(w);
}

static void test_hist_log2_seconds(void **state)
{
	struct hist_log2 h = {};
	struct promfmt *w = promfmt__new();
	unsigned long long prev = 0, inf;
	const char *t;
	char name[128], le[64], sum[64];
	int buckets = 0;

	hist_log2_add(&h, 1, 2);	/* slot 0: le=1e-09 */
	hist_log2_add(&h, 1000, 4);	/* 512 < 1000 <= 1024: le=1.024e-06 */
	hist_log2_add(&h, 1024, 1);	/* exactly 2^10: le=1.024e-06 */
	hist_log2_add(&h, 1025, 1);	/* le=2.048e-06 */
	hist_log2_add(&h, 1ULL << 45, 1); /* beyond the last slot: only in +Inf */
	promfmt__family(w, "lat_seconds", "histogram", "Latency.");
	promfmt__hist_log2(w, NULL, 0, &h, 1e9);
	t = promfmt__text(w, NULL);

	assert_int_equal(value_u(t, "lat_seconds_bucket{le=\"1e-09\"}"), 2);
	assert_int_equal(value_u(t, "lat_seconds_bucket{le=\"5.12e-07\"}"), 2);
	assert_int_equal(value_u(t, "lat_seconds_bucket{le=\"1.024e-06\"}"), 7);
	assert_int_equal(value_u(t, "lat_seconds_bucket{le=\"2.048e-06\"}"), 8);
	inf = value_u(t, "lat_seconds_bucket{le=\"+Inf\"}");
	assert_int_equal(inf, 9);
	assert_int_equal(value_u(t, "lat_seconds_count"), 9);
	for (unsigned int k = 0; k + 1 < DMT_LOG2_SLOTS; k++) {
		unsigned long long v;

		prom_format_double(le, sizeof(le), (double)(1ULL << k) / 1e9);
		snprintf(name, sizeof(name), "lat_seconds_bucket{le=\"%s\"}", le);
		v = value_u(t, name);
		assert_true(v >= prev);
		assert_true(v <= inf);
		prev = v;
		buckets++;
	}
	assert_int_equal(buckets, DMT_LOG2_SLOTS - 1);
	/* the clamped last slot has no finite le: it would not be exact */
	prom_format_double(le, sizeof(le), (double)(1ULL << (DMT_LOG2_SLOTS - 1)) / 1e9);
	snprintf(name, sizeof(name), "lat_seconds_bucket{le=\"%s\"}", le);
	assert_null(strstr(t, name));
	assert_int_equal(prev, 8);
	assert_int_equal(find_value(t, "lat_seconds_sum", sum, sizeof(sum)), 0);
	assert_true(fabs(strtod(sum, NULL) - (double)(2 + 4000 + 1024 + 1025 + (1ULL << 45)) / 1e9) < 1e-9);
	promfmt__free(w);
}

static void test_hist_count_race(void **state)
{
	/* count behind the slots (racy BPF update): +Inf and _count follow the slots */
	struct hist_batch h = {};
	struct promfmt *w = promfmt__new();
	const char *t;

	h.slots[2] = 5;
	h.count = 4;
	h.sum = 10;
	promfmt__family(w, "r", "histogram", "R.");
	promfmt__hist_batch(w, NULL, 0, &h);
	t = promfmt__text(w, NULL);
	assert_int_equal(value_u(t, "r_bucket{le=\"2\"}"), 5);
	assert_int_equal(value_u(t, "r_bucket{le=\"+Inf\"}"), 5);
	assert_int_equal(value_u(t, "r_count"), 5);
	promfmt__free(w);
}

static void test_take(void **state)
{
	struct promfmt *w = promfmt__new();
	size_t len = 0;
	char *t;

	promfmt__family(w, "a", "gauge", "A.");
	for (int i = 0; i < 2000; i++)	/* past the first buffer size */
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, i);
	t = promfmt__take(w, &len);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	assert_non_null(strstr(t, "\na 1999\n"));
	free(t);
	/* the writer stays usable after take */
	promfmt__family(w, "b", "gauge", "B.");
	promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, 1);
	assert_string_equal(promfmt__text(w, NULL), "# HELP b B.\n# TYPE b gauge\nb 1\n");
	promfmt__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_label),
		cmocka_unit_test(test_format_double),
		cmocka_unit_test(test_lazy_header_and_labels),
		cmocka_unit_test(test_sample_without_family_is_error),
		cmocka_unit_test(test_hist_batch),
		cmocka_unit_test(test_hist_log2_seconds),
		cmocka_unit_test(test_hist_count_race),
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests_name("export_promfmt", tests, NULL, NULL);
}
