// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for snapshot JSON (src/core/json_out.c): names from the kernel or a
 * recording become valid UTF-8 (any byte but NUL and '/' is allowed in an
 * interface name), and the metric table's figures are null when unknown or
 * unavailable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "json_out.h"

static const char *get_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return v ? json_object_get_string(v) : NULL;
}

static void test_names_utf8(void **state)
{
	struct dmt_pool_snap pool = { .id = 1, .queue = -1, .netlink_inflight = -1,
				      .destroy_inflight = -1 };
	struct dmt_binding_snap bind = { .id = 2, .layout = "freelist", .total_niovs = -1,
					 .free_niovs = -1, .in_pools = -1, .held_by_sockets = -1,
					 .occupancy = -1, .out_at_unbind = -1, .out_at_free = -1 };
	struct dmt_snapshot s = { .n_pools = 1, .pools = &pool, .n_bindings = 1,
				  .bindings = &bind };
	struct json_object *o, *again, *p, *b;
	const char *text;

	/* a title-setting escape, then a byte that is never UTF-8, then a cut sequence */
	memcpy(pool.ifname, "r\x1b]0;X\x07\xff\xc2", 10);
	/* valid two-byte, overlong '/', a surrogate */
	memcpy(bind.ifname, "\xc3\xa9\xc0\xaf\xed\xa0\x80", 8);
	strcpy(s.avail[DMT_M_NETLINK].reason, "bad \xfe reason");
	o = json_snapshot(&s);
	assert_non_null(o);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	/* no raw byte >= 0x80 that is not part of valid UTF-8 survives: it parses */
	again = json_tokener_parse(text);
	assert_non_null(again);
	p = json_object_array_get_idx(json_object_object_get(again, "pools"), 0);
	b = json_object_array_get_idx(json_object_object_get(again, "bindings"), 0);
	/*
	 * not valid UTF-8: escaped as the text outputs do (textsafe.h), so the
	 * bytes stay visible and the ESC is no control character any more
	 */
	assert_string_equal(get_str(p, "ifname"), "r\\x1b]0;X\\x07\\xff\\xc2");
	assert_string_equal(get_str(b, "ifname"), "\xc3\xa9\\xc0\\xaf\\xed\\xa0\\x80");
	/* no raw ESC in the text at all */
	assert_null(strchr(text, '\x1b'));
	assert_string_equal(get_str(json_object_object_get(json_object_object_get(again,
				    "metrics"), "netlink_page_pools"), "reason"), "bad \\xfe reason");
	json_object_put(again);
	json_object_put(o);
}

static void test_light_unknown_counters(void **state)
{
	struct dmt_pool_snap pool = { .id = 1, .queue = -1, .netlink_inflight = 7,
				      .destroy_inflight = -1, .inflight = 7,
				      .counters_unknown = true };
	struct dmt_snapshot s = { .n_pools = 1, .pools = &pool, .mode = DMT_MODE_LIGHT };
	struct json_object *o, *p, *v, *m;

	s.avail[DMT_M_POOL_REFILL].available = true;
	s.avail[DMT_M_POOL_REFILL].sampled = true;
	s.avail[DMT_M_POOL_HOLDS].available = true;
	o = json_snapshot(&s);
	assert_non_null(o);
	assert_string_equal(get_str(o, "mode"), "light");
	p = json_object_array_get_idx(json_object_object_get(o, "pools"), 0);
	assert_true(json_object_object_get_ex(p, "holds", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(p, "releases", &v));
	assert_null(v);
	assert_int_equal(json_object_get_int(json_object_object_get(p, "inflight")), 7);
	m = json_object_object_get(o, "metrics");
	assert_string_equal(get_str(json_object_object_get(m, "pool_refill_batch"), "method"),
			    "sampled");
	assert_string_equal(get_str(json_object_object_get(m, "pool_holds"), "method"), "exact");
	assert_string_equal(get_str(json_object_object_get(m, "binding_free_latency"), "method"),
			    "unavailable");
	json_object_put(o);
}

static void test_table_nulls(void **state)
{
	struct dmt_binding_snap bind = { .id = 2, .layout = "gen_pool", .niov_size = 4096,
					 .total_niovs = 100, .free_niovs = 40, .in_pools = -1,
					 .held_by_sockets = -1, .occupancy = 0.6,
					 .out_at_unbind = -1, .out_at_free = -1, .alloc_calls = 7 };
	struct dmt_snapshot s = { .n_bindings = 1, .bindings = &bind };
	struct json_object *o, *b, *v;

	s.avail[DMT_M_BIND_OCCUPANCY].available = true;
	s.avail[DMT_M_BIND_IN_POOLS].available = true;
	o = json_snapshot(&s);
	b = json_object_array_get_idx(json_object_object_get(o, "bindings"), 0);
	assert_true(json_object_object_get_ex(b, "used_bytes", &v));
	assert_int_equal(json_object_get_int64(v), 60 * 4096);
	assert_true(json_object_object_get_ex(b, "free_bytes", &v));
	assert_int_equal(json_object_get_int64(v), 40 * 4096);
	assert_true(json_object_object_get_ex(b, "niov_size", &v));
	assert_int_equal(json_object_get_int64(v), 4096);
	/* in_pools unknown: its bytes too */
	assert_true(json_object_object_get_ex(b, "in_pools_bytes", &v));
	assert_null(v);
	/* provider calls unavailable: the counter is null, not 7 */
	assert_true(json_object_object_get_ex(b, "alloc_calls", &v));
	assert_null(v);
	/* no create event seen */
	assert_true(json_object_object_get_ex(b, "created_ns", &v));
	assert_null(v);
	json_object_put(o);

	/* niov size unknown: no byte figure, the niov counts stay */
	bind.niov_size = 0;
	o = json_snapshot(&s);
	b = json_object_array_get_idx(json_object_object_get(o, "bindings"), 0);
	assert_true(json_object_object_get_ex(b, "used_bytes", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(b, "free_niovs", &v));
	assert_int_equal(json_object_get_int64(v), 40);
	json_object_put(o);
}

/* The DONTNEED calls are in JSON as in Prometheus and the gate: null when unavailable. */
static void test_dontneed_calls(void **state)
{
	struct dmt_snapshot s = { .dontneed_tokens = 90, .dontneed_calls = 7 };
	struct json_object *o, *v;

	s.avail[DMT_M_DONTNEED_TOKENS].available = true;
	o = json_snapshot(&s);
	assert_true(json_object_object_get_ex(o, "dontneed_calls", &v));
	assert_int_equal(json_object_get_int64(v), 7);
	assert_true(json_object_object_get_ex(o, "dontneed_tokens", &v));
	assert_int_equal(json_object_get_int64(v), 90);
	json_object_put(o);
	s.avail[DMT_M_DONTNEED_TOKENS].available = false;
	o = json_snapshot(&s);
	assert_true(json_object_object_get_ex(o, "dontneed_calls", &v));
	assert_null(v);
	json_object_put(o);
}

/* Light mode, autorelease off: a holder whose counts the kernel does not keep. */
static void test_holder_counts_unknown(void **state)
{
	struct dmt_holder_snap h[2] = {
		{ .pid = 5, .comm = "rx", .binding_id = 3, .tokens = 4, .niovs = 2 },
		{ .pid = 6, .comm = "rx", .binding_id = 3, .manual = true, .counts_unknown = true },
	};
	struct dmt_snapshot s = { .holders = h, .n_holders = 2 };
	struct json_object *o, *a, *v;

	s.avail[DMT_M_BIND_HELD_BY_SOCKETS].available = true;
	o = json_snapshot(&s);
	a = json_object_object_get(o, "holders");
	assert_int_equal(json_object_array_length(a), 2);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(a, 0), "tokens", &v));
	assert_int_equal(json_object_get_int64(v), 4);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(a, 1), "tokens", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(a, 1), "niovs", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(a, 1), "pid", &v));
	assert_int_equal(json_object_get_int64(v), 6);
	assert_string_equal(get_str(json_object_array_get_idx(a, 1), "token_mode"), "manual");
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_utf8),
		cmocka_unit_test(test_table_nulls),
		cmocka_unit_test(test_light_unknown_counters),
		cmocka_unit_test(test_dontneed_calls),
		cmocka_unit_test(test_holder_counts_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
