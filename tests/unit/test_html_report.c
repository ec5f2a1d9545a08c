// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the HTML report (src/core/html_report.c) on synthetic runs:
 * hostile interface names are escaped into valid UTF-8, histograms are the
 * run's differences (last - first) drawn as one bar per bucket, series have
 * one point per snapshot, unavailable metrics say why, a baseline overlays.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "html_report.h"

/* Snapshot k of a run: one pool refilling, one binding with latencies. */
static struct dmt_snapshot *snap(int k, const char *ifname)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));
	struct dmt_pool_snap *p;
	struct dmt_binding_snap *b;

	s->ts_ns = 5000000000ULL + k * 500000000ULL;
	s->wall_ns = 1790000000000000000ULL;
	s->interval_s = k ? 0.5 : 0;
	s->mode = DMT_MODE_FENTRY;
	for (int i = 0; i < DMT_M__COUNT; i++)
		s->avail[i].available = true;
	s->avail[DMT_M_BIND_FREE_LATENCY].available = false;
	snprintf(s->avail[DMT_M_BIND_FREE_LATENCY].reason, 64, "no hook <here>");
	s->n_pools = 1;
	s->pools = p = calloc(1, sizeof(*p));
	p->addr = 0xffff888000001000ULL;
	p->id = 7;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->holds = 1000 + 640 * k;
	p->releases = p->holds - 10;
	p->hold_rate = k ? 1280 : 0;
	p->inflight = 10 + k;
	/* before the run: 100 refills of 1; during it: 10 of 64 per snapshot */
	hist_batch_add(&p->refill, 1, 100);
	hist_batch_add(&p->refill, 64, 10 * k);
	s->n_bindings = 1;
	s->bindings = b = calloc(1, sizeof(*b));
	b->id = 3;
	snprintf(b->ifname, sizeof(b->ifname), "%s", ifname);
	b->layout = "freelist";
	b->total_niovs = 1000;
	b->free_niovs = 1000 - 100 * k;
	b->occupancy = (100.0 * k) / 1000;
	b->out_at_unbind = b->out_at_free = -1;
	hist_log2_add(&b->alloc_lat_ns, 3000, 5 * k);	/* slot 12: <= 4.1us */
	hist_log2_add(&b->alloc_lat_ns, 900, 2 * k);		/* slot 10: <= 1.02us */
	return s;
}

static char *render(const char *ifname, int n, bool with_base, const struct gate_report *g)
{
	struct html_run *r = html_run__new(), *base = with_base ? html_run__new() : NULL;
	struct rec_meta m = { .version = "9.9", .kernel = "6.99-test", .interval_ns = 500000000 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(r);
	html_run__meta(r, &m);
	for (int k = 0; k < n; k++) {
		struct dmt_snapshot *s = snap(k, ifname);

		assert_int_equal(html_run__add(r, s), 0);
		if (base)
			assert_int_equal(html_run__add(base, s), 0);
		snapshot__free(s);
	}
	if (base)
		html_run__set_source(base, "recording base");
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report__fprint(f, r, base, g), 0);
	fclose(f);
	html_run__free(r);
	html_run__free(base);
	return buf;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_escaping(void **state)
{
	/* markup, a terminal escape, and bytes that are not UTF-8 */
	char *h = render("<b>\x1b]0;x\x07\xff\xc3", 3, false, NULL);

	assert_null(strstr(h, "<b>"));
	assert_non_null(strstr(h, "&lt;b&gt;&#xFFFD;]0;x&#xFFFD;&#xFFFD;&#xFFFD;"));
	for (const unsigned char *p = (const unsigned char *)h; *p; p++)
		assert_true(*p >= 0x20 || *p == '\n' || *p == '\t');
	/* the reason text is escaped too */
	assert_non_null(strstr(h, "no hook &lt;here&gt;"));
	assert_null(strstr(h, "<script"));
	free(h);
}

static void test_charts(void **state)
{
	char *h = render("eth0", 5, false, NULL);

	/* rates: snapshots 1..4 (the first has no interval); others: all 5 */
	assert_non_null(strstr(h, "data-metric=\"holds_rate\" data-points=\"4\""));
	assert_non_null(strstr(h, "data-metric=\"inflight\" data-points=\"5\""));
	assert_non_null(strstr(h, "data-metric=\"occupancy\" data-points=\"5\""));
	/* refills over the run: the 40 of 64, not the 100 of 1 from before */
	assert_non_null(strstr(h, "data-hist=\"refill:all\" data-bars=\"1\""));
	assert_non_null(strstr(h, "40 refills, mean 64.0, p50 64"));
	assert_non_null(strstr(h, "<title>64: 40 (100.0%)</title>"));
	/* latency: slots 10..12 contiguous, so three bars, one of them empty */
	assert_non_null(strstr(h, "data-hist=\"alloc_latency:all\" data-bars=\"3\""));
	assert_non_null(strstr(h, "&#8804;1.02us: 8 (28.6%)"));
	assert_non_null(strstr(h, "&#8804;2.05us: 0 (0.0%)"));
	assert_non_null(strstr(h, "&#8804;4.1us: 20 (71.4%)"));
	/* free latency is unavailable: said, not drawn */
	assert_non_null(strstr(h, "niov free latency: no data: unavailable: no hook"));
	assert_int_equal(count(h, "class=\"bar base\""), 0);
	assert_null(strstr(h, "id=\"thresholds\""));
	free(h);
}

static void test_baseline(void **state)
{
	char *h = render("eth0", 3, true, NULL);

	assert_non_null(strstr(h, "candidate vs baseline"));
	assert_int_equal(count(h, "class=\"line base\""), 3);
	/* overlaid bars: the same share, 100% each, side by side */
	assert_non_null(strstr(h, "<title>baseline 64: 20 (100.0%)</title>"));
	assert_non_null(strstr(h, "data-hist=\"baseline:refill:pool-7\""));
	free(h);
}

static void test_gate_rows(void **state)
{
	struct gate_check chk = { .metric = 0, .sel_str = "interface=<x>" };
	struct gate_threshold th[2] = { { .expr = "p(50) >= 32" }, { .expr = "max <= 64" } };
	struct gate_spec spec = { .name = "spec & co" };
	struct gate_result res[2] = {
		{ .chk = &chk, .th = &th[0], .status = GATE_FAIL, .has_data = true, .observed = 1 },
		{ .chk = &chk, .th = &th[1], .status = GATE_PASS, .has_data = true, .observed = 64,
		  .has_baseline = true, .baseline = 32, .regression_pct = 100 },
	};
	struct gate_report g = { .spec = &spec, .n_results = 2, .results = res, .n_pass = 1,
				 .n_fail = 1 };
	char *h = render("eth0", 2, false, &g);

	assert_non_null(strstr(h, "<h2>Gate spec &amp; co</h2>"));
	assert_non_null(strstr(h, "id=\"verdict\" class=\"fail\">FAIL: 1 passed, 1 failed"));
	assert_int_equal(count(h, "<tr class=\"fail\">"), 1);
	assert_int_equal(count(h, "<tr class=\"pass\">"), 1);
	assert_non_null(strstr(h, "interface=&lt;x&gt;"));
	assert_non_null(strstr(h, "<th>baseline</th><th>change</th>"));
	assert_non_null(strstr(h, "100.0% worse"));
	free(h);
}

/*
 * Light mode (issue 26): a pool netlink lists before a window locates it is
 * one row, not two; its holds count from the location (marked), a pool never
 * located shows "?", never 0; a counter that went backwards never wraps.
 */
static void test_light_pools(void **state)
{
	struct html_run *r = html_run__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(r);
	for (int k = 0; k < 4; k++) {
		struct dmt_snapshot *s = snap(k, "veth0");
		struct dmt_pool_snap *p = realloc(s->pools, 3 * sizeof(*p));

		assert_non_null(p);
		s->pools = p;
		s->n_pools = 3;
		s->mode = DMT_MODE_LIGHT;
		memset(&p[1], 0, 2 * sizeof(*p));
		p[1].id = 13;
		p[1].counters_unknown = k < 2;
		if (k >= 2) {
			p[1].addr = 0xffff888000002000ULL;
			p[1].holds = 5000 + 25 * (k - 2);
		}
		p[2].id = 14;
		p[2].counters_unknown = true;
		/* the binding's counter restarts: 100, 200, then 5, 10 */
		s->bindings[0].alloc_niovs = k < 2 ? 100 * (k + 1) : 5 * (k - 1);
		assert_int_equal(html_run__add(r, s), 0);
		snapshot__free(s);
	}
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report__fprint(f, r, NULL, NULL), 0);
	fclose(f);
	assert_int_equal(count(buf, "<tr class=\"pool\"><td>13</td>"), 1);
	assert_non_null(strstr(buf, "not from the start\">25*</td>"));
	assert_int_equal(count(buf, "<tr class=\"pool\"><td>14</td>"), 1);
	assert_non_null(strstr(buf, "never located the pool\">?</td>"));
	assert_non_null(strstr(buf, "3 page pools, 1 devmem bindings"));
	/* 100 before the restart, 5 + 5 after: 110, not 10 - 100 wrapped */
	assert_non_null(strstr(buf, "<td>30.0%</td><td>110</td>"));
	free(buf);
	html_run__free(r);
}

/*
 * Light mode's token holders (issue 25): the kernel keeps no token's age,
 * so a light snapshot's holder carries 0 there; the page said "0.00 s".
 * Unknown stays unknown: "-", and a full-mode sighting's age is shown.
 */
static void test_light_holder_age(void **state)
{
	struct html_run *r = html_run__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(r);
	for (int k = 0; k < 2; k++) {
		struct dmt_snapshot *s = snap(k, "eth0");
		struct dmt_holder_snap *h = calloc(2, sizeof(*h));

		assert_non_null(h);
		s->mode = DMT_MODE_LIGHT;
		s->holders = h;
		s->n_holders = 1;
		h[0] = (struct dmt_holder_snap){ .pid = 4242, .binding_id = 3, .tokens = 10,
						 .niovs = 10 };
		snprintf(h[0].comm, sizeof(h[0].comm), "ncdevmem");
		assert_int_equal(html_run__add(r, s), 0);
		snapshot__free(s);
	}
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report__fprint(f, r, NULL, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<tr class=\"holder\"><td>4242</td>"));
	assert_null(strstr(buf, "0.00 s"));
	assert_non_null(strstr(buf, "<td>10</td><td>10</td><td title=\"unknown: light mode"));
	free(buf);
	html_run__free(r);

	/* the same holder in a full-mode run: its age is known */
	r = html_run__new();
	assert_non_null(r);
	{
		struct dmt_snapshot *s = snap(0, "eth0");
		struct dmt_holder_snap *h = calloc(1, sizeof(*h));

		assert_non_null(h);
		s->holders = h;
		s->n_holders = 1;
		*h = (struct dmt_holder_snap){ .pid = 4242, .binding_id = 3, .tokens = 10,
					       .niovs = 10, .oldest_age_ns = 1500000000ULL };
		assert_int_equal(html_run__add(r, s), 0);
		snapshot__free(s);
	}
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report__fprint(f, r, NULL, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<td>10</td><td>10</td><td>1.50 s</td>"));
	free(buf);
	html_run__free(r);
}

/*
 * The kernel's figures (issue 25): a kernel without CONFIG_PAGE_POOL_STATS
 * gives n/a with the reason as the cell's tooltip, never 0; the RX queues
 * of the last snapshot are facts.
 */
static void test_kernel_figures(void **state)
{
	struct html_run *r = html_run__new();
	struct dmt_snapshot *s = snap(0, "eth0");
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(r);
	s->avail[DMT_M_POOL_STATS].available = false;
	snprintf(s->avail[DMT_M_POOL_STATS].reason, sizeof(s->avail[0].reason),
		 "kernel without CONFIG_PAGE_POOL_STATS");
	s->bindings[0].rx_queues = 2;
	s->rxq_bound = 2;
	s->rxq_unbound = 6;
	s->rx_alloc_fail = -1;
	assert_int_equal(html_run__add(r, s), 0);
	snapshot__free(s);
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report__fprint(f, r, NULL, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<th>recycled %</th><th>slow-path allocs %</th>"));
	assert_non_null(strstr(buf, "<td class=\"na\" title=\"kernel without "
				    "CONFIG_PAGE_POOL_STATS\">n/a</td>"));
	assert_non_null(strstr(buf, "<th>RX queues</th></tr>"));
	assert_non_null(strstr(buf, "<td>2</td></tr>"));
	assert_non_null(strstr(buf, "<tr><th>RX queues unbound (last snapshot)</th><td>6</td>"));
	/* available, but no driver reports it: unknown */
	assert_non_null(strstr(buf, "<tr><th>rx-alloc-fail (last snapshot)</th><td>-</td>"));
	free(buf);
	html_run__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_charts),
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_gate_rows),
		cmocka_unit_test(test_light_pools),
		cmocka_unit_test(test_light_holder_age),
		cmocka_unit_test(test_kernel_figures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
