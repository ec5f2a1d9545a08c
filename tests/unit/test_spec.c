// SPDX-License-Identifier: GPL-2.0
/* Unit tests for gate spec parsing (src/core/gate_spec.c): good specs, units, and
 * every kind of bad spec with its line and column. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "gate_spec.h"
#include "snapshot.h"

/* The per-binding scalars come from the metric table: looked up by name. */
#define GM_BIND_USED_BYTES	gm_lookup("binding.used_bytes")
#define GM_BIND_OCCUPANCY	gm_lookup("binding.occupancy")
#define GM_BIND_LEAKED_NIOVS	gm_lookup("binding.leaked_niovs")

static struct gate_spec *parse(const char *y, char *err, size_t len)
{
	err[0] = '\0';
	return gate_spec__parse_buf(y, strlen(y), "t.yaml", err, len);
}

static void test_good_spec(void **state)
{
	const char *y =
		"version: 1\n"
		"name: lab\n"
		"interval: 250ms\n"
		"thresholds:\n"
		"  - metric: binding.alloc_latency\n"
		"    interface: eth*\n"
		"    binding: 7\n"
		"    expect:\n"
		"      - p(99) < 20us\n"
		"      - \"p(99.9) <= 1.5ms\"\n"
		"      - avg < 800ns\n"
		"      - count > 0\n"
		"      - rate >= 10/s\n"
		"  - metric: binding.occupancy\n"
		"    optional: true\n"
		"    no_data: skip\n"
		"    expect: max < 95%\n"
		"  - metric: pool.refill_batch\n"
		"    kind: devmem\n"
		"    queue: 3\n"
		"    expect: [ \"p(50) >= 32\", \"mean>=8\" ]\n"
		"  - metric: binding.used_bytes\n"
		"    expect: [ max <= 1.5MiB, min > 4KB ]\n"
		"  - metric: tool.ringbuf_drops\n"
		"    expect: [ count == 0 ]\n";
	struct gate_spec *s;
	struct gate_check *c;
	char err[512];

	s = parse(y, err, sizeof(err));
	assert_non_null(s);
	assert_string_equal(err, "");
	assert_string_equal(s->name, "lab");
	assert_int_equal(s->interval_ns, 250000000ULL);
	assert_int_equal(s->n_checks, 5);

	c = &s->checks[0];
	assert_int_equal(c->metric, GM_BIND_ALLOC_LATENCY);
	assert_string_equal(c->sel.interface, "eth*");
	assert_int_equal(c->sel.binding_id, 7);
	assert_int_equal(c->sel.pool_id, -1);
	assert_string_equal(c->sel_str, "interface=eth*,binding=7");
	assert_false(c->optional);
	assert_int_equal(c->line, 5);
	assert_int_equal(c->n_thresholds, 5);
	assert_int_equal(c->thresholds[0].stat, GS_P);
	assert_true(fabs(c->thresholds[0].q - 0.99) < 1e-12);
	assert_int_equal(c->thresholds[0].op, GO_LT);
	assert_true(c->thresholds[0].value == 20000);
	assert_int_equal(c->thresholds[0].unit, GM_UNIT_NS);
	assert_int_equal(c->thresholds[0].line, 9);
	assert_true(fabs(c->thresholds[1].q - 0.999) < 1e-12);
	assert_true(c->thresholds[1].value == 1.5e6);
	assert_int_equal(c->thresholds[1].op, GO_LE);
	assert_int_equal(c->thresholds[2].stat, GS_AVG);
	assert_true(c->thresholds[2].value == 800);
	assert_int_equal(c->thresholds[3].stat, GS_COUNT);
	assert_int_equal(c->thresholds[3].unit, GM_UNIT_NONE);
	assert_int_equal(c->thresholds[4].stat, GS_RATE);
	assert_true(c->thresholds[4].value == 10);

	c = &s->checks[1];
	assert_true(c->optional);
	assert_true(c->no_data_skip);
	assert_false(s->checks[0].no_data_skip);
	assert_string_equal(c->sel_str, "*");
	assert_int_equal(c->n_thresholds, 1);
	assert_true(c->thresholds[0].value == 95);
	assert_int_equal(c->thresholds[0].unit, GM_UNIT_PCT);

	c = &s->checks[2];
	assert_int_equal(c->sel.kind, DMT_KIND_DEVMEM);
	assert_int_equal(c->sel.queue, 3);
	assert_int_equal(c->thresholds[0].op, GO_GE);
	assert_true(c->thresholds[0].value == 32);
	assert_int_equal(c->thresholds[1].stat, GS_AVG);

	c = &s->checks[3];
	assert_true(c->thresholds[0].value == 1.5 * 1048576);
	assert_true(c->thresholds[1].value == 4000);
	assert_int_equal(c->thresholds[1].op, GO_GT);

	c = &s->checks[4];
	assert_int_equal(c->thresholds[0].op, GO_EQ);
	assert_true(c->thresholds[0].value == 0);
	gate_spec__free(s);
}

static void test_units(void **state)
{
	const struct {
		const char *expr;
		enum gm_id m;
		double v;
	} ok[] = {
		{ "max < 1ns", GM_BIND_FREE_LATENCY, 1 },
		{ "max < 2us", GM_BIND_FREE_LATENCY, 2000 },
		{ "max < 2\xc2\xb5s", GM_BIND_FREE_LATENCY, 2000 },
		{ "max < 3ms", GM_BIND_FREE_LATENCY, 3e6 },
		{ "max < 0.5s", GM_BIND_FREE_LATENCY, 5e8 },
		{ "max < 1B", GM_BIND_USED_BYTES, 1 },
		{ "max < 1KiB", GM_BIND_USED_BYTES, 1024 },
		{ "max < 1MiB", GM_BIND_USED_BYTES, 1048576 },
		{ "max < 1GiB", GM_BIND_USED_BYTES, 1073741824.0 },
		{ "max < 2MB", GM_BIND_USED_BYTES, 2e6 },
		{ "max < 2GB", GM_BIND_USED_BYTES, 2e9 },
		{ "max < 4096", GM_BIND_USED_BYTES, 4096 },
		{ "last != 12.5%", GM_BIND_OCCUPANCY, 12.5 },
		{ "  count==3  ", GM_POOL_HOLDS, 3 },
		{ "rate > 1.5/s", GM_POOL_HOLDS, 1.5 },
		{ "sum == 0", GM_BIND_LEAKED_NIOVS, 0 },
		{ "max >= -1", GM_POOL_INFLIGHT, -1 },
	};
	const struct {
		const char *expr;
		enum gm_id m;
		size_t off;
		const char *msg;
	} bad[] = {
		{ "p(99) < 20", GM_BIND_ALLOC_LATENCY, 10, "missing unit" },
		{ "p(99) < 20 parsecs", GM_BIND_ALLOC_LATENCY, 11, "unknown unit 'parsecs'" },
		{ "max < 95%", GM_POOL_REFILL_BATCH, 8, "unit '%' does not fit" },
		{ "max < 95", GM_BIND_OCCUPANCY, 8, "missing unit" },
		{ "max < 20us", GM_BIND_USED_BYTES, 8, "does not fit" },
		{ "count > 2us", GM_BIND_ALLOC_LATENCY, 9, "does not fit" },
		{ "count > 2/s", GM_POOL_HOLDS, 9, "does not fit" },
		{ "p(99) < 3", GM_POOL_HOLDS, 0, "has no statistic 'p'" },
		{ "last < 3", GM_POOL_HOLDS, 0, "has no statistic 'last'" },
		{ "rate > 3", GM_POOL_INFLIGHT, 0, "has no statistic 'rate'" },
		{ "p99 < 3", GM_POOL_REFILL_BATCH, 1, "expected '('" },
		{ "p 99) < 3", GM_POOL_REFILL_BATCH, 2, "expected '('" },
		{ "p(0) < 3", GM_POOL_REFILL_BATCH, 2, "percentile" },
		{ "p(101) < 3", GM_POOL_REFILL_BATCH, 2, "percentile" },
		{ "p(50 < 3", GM_POOL_REFILL_BATCH, 5, "expected ')'" },
		{ "p(50) = 3", GM_POOL_REFILL_BATCH, 6, "expected a comparison" },
		{ "p(50) >= ", GM_POOL_REFILL_BATCH, 9, "expected a number" },
		{ "p(50) >= abc", GM_POOL_REFILL_BATCH, 9, "expected a number" },
		{ "p(50) >= 0x10", GM_POOL_REFILL_BATCH, 10, "unknown unit" },
		{ "", GM_POOL_REFILL_BATCH, 0, "expected a statistic" },
		{ "maximum < 3", GM_POOL_REFILL_BATCH, 0, "expected a statistic" },
	};
	struct gate_threshold t;
	char msg[256];
	size_t off;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int err = gate_threshold__parse(ok[i].expr, ok[i].m, &t, &off, msg, sizeof(msg));

		if (err)
			fail_msg("'%s' rejected: %s", ok[i].expr, msg);
		if (t.value != ok[i].v)
			fail_msg("'%s' -> %g, want %g", ok[i].expr, t.value, ok[i].v);
		free(t.expr);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = gate_threshold__parse(bad[i].expr, bad[i].m, &t, &off, msg, sizeof(msg));

		if (!err)
			fail_msg("'%s' accepted", bad[i].expr);
		if (!strstr(msg, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].expr, msg, bad[i].msg);
		if (off != bad[i].off)
			fail_msg("'%s': offset %zu, want %zu (%s)", bad[i].expr, off, bad[i].off, msg);
	}
}

/* Each bad spec: the error must start with "t.yaml:LINE:COL: " and say why. */
static void test_bad_specs(void **state)
{
	static const struct {
		const char *yaml;
		const char *where;
		const char *msg;
	} cases[] = {
		{ "", "t.yaml: ", "empty spec" },
		{ "thresholds: [\n  - metric: pool.holds\n", "t.yaml:2:3: ", "YAML error" },
		{ "thresholds:\n\t- metric: x\n", "t.yaml:2:1: ", "YAML error" },
		{ "- a\n- b\n", "t.yaml:1:1: ", "the spec must be a mapping, not a list" },
		{ "name: x\n", "t.yaml:1:1: ", "no 'thresholds'" },
		{ "thresholds: []\n", "t.yaml:1:13: ", "'thresholds' is empty" },
		{ "thresholds: 3\n", "t.yaml:1:13: ", "thresholds must be a list" },
		{ "version: 2\nthresholds: []\n", "t.yaml:1:10: ", "unsupported spec version '2'" },
		{ "interval: 1ms\nthresholds: []\n", "t.yaml:1:11: ", "interval must be" },
		{ "intervall: 1s\n", "t.yaml:1:1: ", "unknown key 'intervall' in the spec (valid: version" },
		{ "name: a\nname: b\nthresholds: []\n", "t.yaml:2:1: ", "duplicate key 'name' (first at line 1)" },
		{ "thresholds:\n  - metric: pool.holdz\n    expect: [count > 0]\n", "t.yaml:2:13: ",
		  "unknown metric 'pool.holdz' (valid: pool.refill_batch, pool.holds," },
		{ "thresholds:\n  - expect: [count > 0]\n", "t.yaml:2:5: ", "has no 'metric'" },
		{ "thresholds:\n  - metric: pool.holds\n", "t.yaml:2:5: ", "has no 'expect'" },
		{ "thresholds:\n  - metric: pool.holds\n    expect: []\n", "t.yaml:3:13: ",
		  "'expect' is empty" },
		{ "thresholds:\n  - metric: pool.holds\n    expect: [count > 0]\n    colour: red\n",
		  "t.yaml:4:5: ", "unknown key 'colour' in a threshold entry" },
		{ "thresholds:\n  - metric: binding.alloc_latency\n    expect:\n      - p(99) < 20\n",
		  "t.yaml:4:19: ", "missing unit: binding.alloc_latency p takes a time unit" },
		{ "thresholds:\n  - metric: binding.alloc_latency\n    expect:\n      - \"p(99) < 20\"\n",
		  "t.yaml:4:20: ", "missing unit" },
		{ "thresholds:\n  - metric: pool.refill_batch\n    expect: [ \"max < 95%\" ]\n",
		  "t.yaml:3:24: ", "unit '%' does not fit" },
		{ "thresholds:\n  - metric: pool.holds\n    expect: [ p(99) < 3 ]\n",
		  "t.yaml:3:15: ", "metric pool.holds has no statistic 'p' (it has: count, rate)" },
		{ "thresholds:\n  - metric: binding.occupancy\n    kind: pages\n    expect: [max < 9%]\n",
		  "t.yaml:3:5: ", "selector 'kind' applies to pool.* metrics only" },
		{ "thresholds:\n  - metric: tool.ringbuf_drops\n    interface: eth0\n    expect: [count == 0]\n",
		  "t.yaml:3:5: ", "is global and takes no selector" },
		{ "thresholds:\n  - metric: pool.holds\n    kind: gpu\n    expect: [count > 0]\n",
		  "t.yaml:3:11: ", "unknown pool kind 'gpu'" },
		{ "thresholds:\n  - metric: pool.holds\n    ifindex: -3\n    expect: [count > 0]\n",
		  "t.yaml:3:14: ", "ifindex must be an integer" },
		{ "thresholds:\n  - metric: pool.holds\n    optional: maybe\n    expect: [count > 0]\n",
		  "t.yaml:3:15: ", "optional must be true or false" },
		{ "thresholds:\n  - metric: [pool.holds]\n    expect: [count > 0]\n",
		  "t.yaml:2:13: ", "metric must be a scalar, not a list" },
		{ "thresholds:\n  - metric: pool.holds\n    expect: [[count > 0]]\n",
		  "t.yaml:3:14: ", "a threshold expression must be a scalar" },
		{ "thresholds:\n  - metric: pool.holds\n    expect: [count > 0]\n---\nname: x\n",
		  "t.yaml:4:1: ", "only one YAML document" },
		{ "thresholds:\n  - 3\n", "t.yaml:2:5: ", "a threshold entry must be a mapping" },
		{ "thresholds:\n  - metric: pool.holds\n    no_data: pass\n    expect: [count > 0]\n",
		  "t.yaml:3:14: ", "no_data must be fail or skip, not 'pass'" },
		{ "? [a]\n: 1\n", "t.yaml:1:3: ", "a key must be a scalar" },
	};
	char err[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gate_spec *s = parse(cases[i].yaml, err, sizeof(err));

		if (s)
			fail_msg("case %zu accepted", i);
		if (strncmp(err, cases[i].where, strlen(cases[i].where)))
			fail_msg("case %zu: '%s' does not start with '%s'", i, err, cases[i].where);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
		if (strchr(err, '\n'))
			fail_msg("case %zu: message is not one line: '%s'", i, err);
	}
}

static void test_unknown_metric_lists_all(void **state)
{
	char err[4096];
	struct gate_spec *s = parse("thresholds:\n  - metric: nope\n    expect: [count > 0]\n",
				    err, sizeof(err));

	assert_null(s);
	for (int i = 0; i < GM__COUNT; i++)
		if (!strstr(err, gm_def(i)->name))
			fail_msg("'%s' does not list %s", err, gm_def(i)->name);
}

static void test_vocabulary(void **state)
{
	/* every metric has a name, a lookup that finds it, and a help line */
	for (int i = 0; i < GM__COUNT; i++) {
		const struct gm_def *d = gm_def(i);

		assert_non_null(d->name);
		assert_non_null(d->help);
		assert_int_equal(gm_lookup(d->name), i);
		assert_true(d->avail < DMT_M__COUNT);
	}
	assert_int_equal(gm_lookup("pool"), -1);
	assert_null(gm_def(GM__COUNT));
}

static void test_parse_file(void **state)
{
	char path[] = "/tmp/dmt-spec-XXXXXX", err[512];
	struct gate_spec *s;
	FILE *f;
	int fd;

	s = gate_spec__parse_file("/nonexistent/spec.yaml", err, sizeof(err));
	assert_null(s);
	assert_non_null(strstr(err, "/nonexistent/spec.yaml: cannot open spec"));

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "thresholds:\n  - metric: pool.holds\n    expect: [count > 0]\n");
	fclose(f);
	s = gate_spec__parse_file(path, err, sizeof(err));
	assert_non_null(s);
	assert_string_equal(s->name, path);
	assert_string_equal(s->path, path);
	gate_spec__free(s);
	unlink(path);
}

/*
 * Deep nesting is refused by depth, early: 500k unclosed '[' took 511 s of
 * CPU in libyaml before (issue 13). The error must name the depth and point
 * at the 9th bracket (the parser stopped there, it did not read on), for
 * flow and block nesting alike; 8 levels are still parsed as a spec.
 */
static void test_deep_nesting(void **state)
{
	static const struct {
		const char *unit;	/* repeated n times */
		size_t n;
		size_t line, col;	/* where the 9th level opens */
	} cases[] = {
		{ "[", 500000, 1, 9 },
		{ "{a: ", 200000, 1, 33 },
		{ "- ", 200000, 1, 17 },
	};
	char err[512], want[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t ulen = strlen(cases[i].unit), len = ulen * cases[i].n;
		char *y = malloc(len + 1);
		clock_t t0;
		double cpu;

		assert_non_null(y);
		for (size_t k = 0; k < cases[i].n; k++)
			memcpy(y + k * ulen, cases[i].unit, ulen);
		y[len] = '\0';
		t0 = clock();
		assert_null(gate_spec__parse_buf(y, len, "deep.yaml", err, sizeof(err)));
		cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
		snprintf(want, sizeof(want), "deep.yaml:%zu:%zu: nested deeper than 8 levels",
			 cases[i].line, cases[i].col);
		if (strncmp(err, want, strlen(want)))
			fail_msg("'%s' x %zu: got \"%s\", want \"%s...\"", cases[i].unit,
				 cases[i].n, err, want);
		/* generous: the fixed parser takes well under 10 ms */
		assert_true(cpu < 2.0);
		free(y);
	}
	/* eight levels are not refused for their depth */
	assert_null(parse("a: [[[[[[[1]]]]]]]\n", err, sizeof(err)));
	assert_null(strstr(err, "nested deeper"));
}

static void test_fmt_and_ops(void **state)
{
	char b[64];

	gate_fmt_value(b, sizeof(b), 20000, GM_UNIT_NS);
	assert_string_equal(b, "20us");
	gate_fmt_value(b, sizeof(b), 1.5e6, GM_UNIT_NS);
	assert_string_equal(b, "1.5ms");
	gate_fmt_value(b, sizeof(b), 95, GM_UNIT_PCT);
	assert_string_equal(b, "95.00%");
	gate_fmt_value(b, sizeof(b), 1572864, GM_UNIT_BYTES);
	assert_string_equal(b, "1.5MiB");
	gate_fmt_value(b, sizeof(b), 32, GM_UNIT_NONE);
	assert_string_equal(b, "32");
	assert_true(gate_op_holds(GO_LT, 1, 2));
	assert_false(gate_op_holds(GO_LT, 2, 2));
	assert_true(gate_op_holds(GO_LE, 2, 2));
	assert_true(gate_op_holds(GO_GT, 3, 2));
	assert_false(gate_op_holds(GO_GE, 1, 2));
	assert_true(gate_op_holds(GO_EQ, 0, 0));
	assert_true(gate_op_holds(GO_NE, 1, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_spec),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_unknown_metric_lists_all),
		cmocka_unit_test(test_vocabulary),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_fmt_and_ops),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
