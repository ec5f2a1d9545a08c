// SPDX-License-Identifier: GPL-2.0
/* Live view option parsing, filters, and the JSON schema of a snapshot. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "json_out.h"
#include "util.h"
#include "cmd/top.h"

#define ARGV(...) ((char *[]){ "devmemtop", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "devmemtop", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, err, ...) top_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), o, err, sizeof(err))

static void test_args_good(void **state)
{
	struct top_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-i", "250ms", "-n", "3", "-b", "--iface", "eth0",
			       "-B", "7", "-s", "inflight", "-m", "tp"), 0);
	assert_int_equal(o.interval_ns, 250000000ULL);
	assert_int_equal(o.count, 3);
	assert_true(o.batch);
	assert_string_equal(o.iface, "eth0");
	assert_int_equal(o.binding, 7);
	assert_int_equal(o.sort, TOP_SORT_INFLIGHT);
	assert_int_equal(o.force_mode, DMT_MODE_TP_ONLY);
	assert_int_equal(PARSE(&o, err, "--interval=2s", "--json"), 0);
	assert_int_equal(o.interval_ns, 2000000000ULL);
	assert_true(o.json);
}

static void test_args_bad(void **state)
{
	struct top_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-i", "5ms"), -EINVAL);
	assert_non_null(strstr(err, "bad interval"));
	assert_int_equal(PARSE(&o, err, "-n", "-3"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-n", "99999999999999999999"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--iface", "averyveryverylongname"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-B", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--bogus"), -EINVAL);
	assert_non_null(strstr(err, "--bogus"));
	assert_int_equal(PARSE(&o, err, "-b", "-j"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-m", "heavy"), -EINVAL);
	assert_non_null(strstr(err, "devmem, full, light, fentry or tp"));
	assert_int_equal(PARSE(&o, err, "--sampling", "20ms"), -EINVAL);
	assert_non_null(strstr(err, "bad sampling '20ms'"));
}

static void test_light_args(void **state)
{
	struct top_opts o;
	unsigned int w = 0, p = 0;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-m", "light", "--sampling", "50ms/5s"), 0);
	assert_int_equal(o.force_mode, DMT_MODE_LIGHT);
	assert_int_equal(o.light_window_ms, 50);
	assert_int_equal(o.light_period_ms, 5000);
	assert_int_equal(PARSE(&o, err, "-m", "light"), 0);
	assert_int_equal(o.light_window_ms, 0);	/* the collector's defaults */
	assert_int_equal(parse_sampling("1ms/100ms", &w, &p), 0);
	assert_int_equal(w, 1);
	assert_int_equal(p, 100);
	assert_int_equal(parse_sampling("60s/1h", &w, &p), 0);
	assert_int_equal(parse_sampling("0ms/10s", &w, &p), -EINVAL);	/* window too short */
	assert_int_equal(parse_sampling("61s/1h", &w, &p), -EINVAL);	/* window too long */
	/* period too short */
	assert_int_equal(parse_sampling("20ms/50ms", &w, &p), -EINVAL);
	assert_int_equal(parse_sampling("1s/1.5s", &w, &p), -EINVAL);	/* < 2x window */
	assert_int_equal(parse_sampling("20ms/2h", &w, &p), -EINVAL);
	assert_int_equal(parse_sampling("/10s", &w, &p), -EINVAL);
	assert_int_equal(parse_sampling("20ms/", &w, &p), -EINVAL);
	assert_int_equal(parse_sampling("20ms", &w, &p), -EINVAL);
	assert_int_equal(parse_sampling(NULL, &w, &p), -EINVAL);
}

/*
 * Issue 36: the devmem mode is the default; the full mode is -m full, and
 * today's names (-m auto, --pools devmem|all) still parse to the same modes.
 */
static void test_mode_names(void **state)
{
	struct top_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-b"), 0);
	assert_int_equal(o.force_mode, DMT_MODE_DEVMEM);
	assert_int_equal(PARSE(&o, err, "-m", "full"), 0);
	assert_int_equal(o.force_mode, -1);
	assert_int_equal(PARSE(&o, err, "-m", "devmem"), 0);
	assert_int_equal(o.force_mode, DMT_MODE_DEVMEM);
	assert_int_equal(PARSE(&o, err, "-m", "auto"), 0);
	assert_int_equal(o.force_mode, -1);
	assert_int_equal(PARSE(&o, err, "--pools", "all"), 0);
	assert_int_equal(o.force_mode, -1);
	assert_int_equal(PARSE(&o, err, "-m", "full", "--pools", "devmem"), 0);
	assert_int_equal(o.force_mode, DMT_MODE_DEVMEM);
	assert_int_equal(PARSE(&o, err, "--pools", "pages"), -EINVAL);
	assert_non_null(strstr(err, "bad --pools 'pages': devmem or all"));
	assert_string_equal(mode_rename_note("--mode", "auto"),
			    "-m auto is now -m full; the default is -m devmem");
	assert_string_equal(mode_rename_note("--pools", "devmem"),
			    "--pools devmem is now the devmem mode (-m devmem), the default");
	assert_string_equal(mode_rename_note("--pools", "all"),
			    "--pools all is now the full mode (-m full)");
	assert_null(mode_rename_note("--mode", "full"));
	assert_null(mode_rename_note("--mode", "devmem"));
}

static void test_duration(void **state)
{
	uint64_t v;

	assert_int_equal(parse_duration_ns("1.5", &v), 0);
	assert_int_equal(v, 1500000000ULL);
	assert_int_equal(parse_duration_ns("20us", &v), 0);
	assert_int_equal(v, 20000);
	assert_int_equal(parse_duration_ns("1m", &v), 0);
	assert_int_equal(v, 60000000000ULL);
	assert_int_equal(parse_duration_ns("1x", &v), -EINVAL);
	assert_int_equal(parse_duration_ns("", &v), -EINVAL);
	assert_int_equal(parse_duration_ns("nan", &v), -EINVAL);
	assert_int_equal(parse_duration_ns("1e30", &v), -ERANGE);
}

static void test_filters(void **state)
{
	struct dmt_pool_snap p = { .ifindex = 4, .binding_id = 3 };
	struct dmt_binding_snap b = { .id = 3, .ifindex = 4 };
	struct top_opts o;
	char err[64];

	strcpy(p.ifname, "eth0");
	strcpy(b.ifname, "eth0");
	assert_int_equal(PARSE(&o, err, "--iface", "eth0"), 0);
	assert_true(top_pool_match(&o, &p));
	assert_true(top_binding_match(&o, &b));
	assert_int_equal(PARSE(&o, err, "--iface", "4"), 0);
	assert_true(top_pool_match(&o, &p));
	assert_int_equal(PARSE(&o, err, "--iface", "eth1"), 0);
	assert_false(top_pool_match(&o, &p));
	assert_int_equal(PARSE(&o, err, "-B", "9"), 0);
	assert_false(top_pool_match(&o, &p));
	assert_false(top_binding_match(&o, &b));
}

static void test_json_schema(void **state)
{
	struct dmt_pool_snap pool = { .addr = 0xffff1000, .id = 5, .ifindex = 2, .queue = -1,
				      .holds = 640, .releases = 600, .inflight = 40,
				      .netlink_inflight = -1, .destroy_inflight = -1 };
	struct dmt_binding_snap bind = { .id = 9, .total_niovs = 512, .free_niovs = -1,
					 .in_pools = 12, .held_by_sockets = -1, .occupancy = -1,
					 .out_at_unbind = -1, .out_at_free = 3, .layout = "gen_pool" };
	struct dmt_snapshot s = { .seq = 4, .mode = DMT_MODE_TP_ONLY, .n_pools = 1,
				  .pools = &pool, .n_bindings = 1, .bindings = &bind };
	struct json_object *o, *p, *v, *b;
	char unav[512];

	hist_batch_add(&pool.refill, 64, 10);
	hist_log2_add(&bind.alloc_lat_ns, 3000, 4);
	s.avail[DMT_M_POOL_HOLDS].available = true;
	s.avail[DMT_M_BIND_LEAKS].available = true;
	strcpy(s.avail[DMT_M_BIND_ALLOC_LATENCY].reason, "fentry/fexit load refused: EPERM");
	strcpy(s.avail[DMT_M_BIND_FREE_LATENCY].reason, "fentry/fexit load refused: EPERM");
	o = json_snapshot(&s);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "schema", &v));
	assert_string_equal(json_object_get_string(v), "devmemtop.snapshot");
	assert_true(json_object_object_get_ex(o, "version", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(o, "mode", &v));
	assert_string_equal(json_object_get_string(v), "tracepoint-only");
	assert_true(json_object_object_get_ex(o, "pools", &v));
	p = json_object_array_get_idx(v, 0);
	assert_true(json_object_object_get_ex(p, "inflight", &v));
	assert_int_equal(json_object_get_int(v), 40);
	/* unknown is null, never a number */
	assert_true(json_object_object_get_ex(p, "queue", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(p, "refill_batch", &v));
	assert_true(json_object_object_get_ex(v, "p50", &v));
	assert_int_equal(json_object_get_int(v), 64);
	assert_true(json_object_object_get_ex(o, "bindings", &v));
	b = json_object_array_get_idx(v, 0);
	assert_true(json_object_object_get_ex(b, "free_niovs", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(b, "leaked_at_free", &v));
	assert_int_equal(json_object_get_int(v), 3);
	/* a counter of an unavailable metric is null, not 0 */
	assert_true(json_object_object_get_ex(b, "alloc_calls", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(b, "alloc_latency_ns", &v));
	assert_true(json_object_object_get_ex(v, "p99", &v));
	assert_int_equal(json_object_get_int(v), 4096);
	json_object_put(o);

	top_unavailable_summary(&s, unav, sizeof(unav));
	/* grouped by reason: both latency metrics before one shared reason */
	assert_non_null(strstr(unav, "binding_alloc_latency, binding_free_latency (fentry/fexit"));
}

/* The line of text holding needle (cut at its end), or fail. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(text, needle), *b = p, *e;

	assert_non_null(p);
	while (b > text && b[-1] != '\n')
		b--;
	e = strchr(p, '\n');
	snprintf(buf, len, "%.*s", (int)(e ? e - b : (long)strlen(b)), b);
	return buf;
}

/*
 * The kernel's own figures in the live view (issue 25): a pool's recycle
 * and slow-path shares, a binding's bound RX queues, the queues and
 * rx-alloc-fail in the header. Unavailable is "n/a" with the reason in the
 * header, unknown "-": never 0 (this host's kernel has no
 * CONFIG_PAGE_POOL_STATS).
 */
static void test_kernel_figures(void **state)
{
	struct dmt_pool_snap pool[2] = {
		{ .addr = 0xffff1000, .id = 5, .ifindex = 2, .queue = 0, .netlink_inflight = -1,
		  .destroy_inflight = -1, .queue_alloc_fail = -1 },
		{ .addr = 0xffff2000, .id = 6, .ifindex = 3, .queue = -1, .netlink_inflight = -1,
		  .destroy_inflight = -1, .queue_alloc_fail = -1 },
	};
	struct dmt_binding_snap bind = { .id = 9, .total_niovs = 512, .free_niovs = -1,
					 .in_pools = 0, .held_by_sockets = -1, .occupancy = -1,
					 .out_at_unbind = -1, .out_at_free = -1, .rx_queues = 2,
					 .layout = "freelist" };
	struct dmt_snapshot s = { .mode = DMT_MODE_LIGHT, .n_pools = 2, .pools = pool,
				  .n_bindings = 1, .bindings = &bind, .rxq_bound = 1,
				  .rxq_unbound = 7, .rx_alloc_fail = -1 };
	struct top_opts o;
	char err[64], l[512], *out = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(PARSE(&o, err, "-b"), 0);
	strcpy(pool[0].ifname, "eth0");
	strcpy(pool[1].ifname, "veth1");
	strcpy(bind.ifname, "eth0");
	for (int i = 0; i < DMT_PPS__COUNT; i++) {
		pool[0].pps[i] = 0;
		pool[1].pps[i] = -1;	/* not listed: no stats for it */
	}
	pool[0].pps[DMT_PPS_RECYCLE_CACHED] = 90;
	pool[0].pps[DMT_PPS_RECYCLE_RING] = 9;
	pool[0].pps[DMT_PPS_RECYCLE_RING_FULL] = 1;
	pool[0].pps[DMT_PPS_ALLOC_FAST] = 990;
	pool[0].pps[DMT_PPS_ALLOC_SLOW] = 10;
	for (int m = 0; m < DMT_M__COUNT; m++)
		s.avail[m].available = true;
	s.avail[DMT_M_QSTATS].available = false;
	strcpy(s.avail[DMT_M_QSTATS].reason, "kernel without qstats-get (Linux 6.10)");

	f = open_memstream(&out, &len);
	top_print_text(&o, &s, NULL, f);
	fclose(f);
	if (getenv("DMT_TEST_PRINT"))
		fputs(out, stderr);
	assert_non_null(strstr(line_with(out, "POOL ", l, sizeof(l)), " RCY% SLOW% "));
	/* 90 + 9 kept of 100: 99.0 %; 10 slow of 1000 allocations: 1.0 % */
	assert_non_null(strstr(line_with(out, "5      eth0", l, sizeof(l)), " 99.0   1.0 "));
	/* a pool the kernel gives no stats for: unknown, not 0 */
	assert_non_null(strstr(line_with(out, "6      veth1", l, sizeof(l)), "     -     - "));
	assert_non_null(strstr(line_with(out, "BIND ", l, sizeof(l)), " OCC%   RXQ "));
	assert_non_null(strstr(line_with(out, "9     eth0", l, sizeof(l)), " n/a     2 "));
	assert_string_equal(line_with(out, "Netdev:", l, sizeof(l)),
			    "Netdev: RX queues bound 1, RX queues unbound 7, rx-alloc-fail n/a");
	free(out);

	/* a kernel without CONFIG_PAGE_POOL_STATS: n/a, and the header says why */
	s.avail[DMT_M_POOL_STATS].available = false;
	strcpy(s.avail[DMT_M_POOL_STATS].reason, "kernel without CONFIG_PAGE_POOL_STATS "
	       "(page-pool-stats-get: Operation not supported)");
	out = NULL;
	f = open_memstream(&out, &len);
	top_print_text(&o, &s, NULL, f);
	fclose(f);
	assert_non_null(strstr(line_with(out, "5      eth0", l, sizeof(l)), "   n/a   n/a "));
	assert_non_null(strstr(line_with(out, "Unavailable:", l, sizeof(l)),
			       "netlink_page_pool_stats (kernel without CONFIG_PAGE_POOL_STATS"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_good),
		cmocka_unit_test(test_args_bad),
		cmocka_unit_test(test_light_args),
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_kernel_figures),
	};

	return cmocka_run_group_tests_name("top", tests, NULL, NULL);
}
