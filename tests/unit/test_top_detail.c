// SPDX-License-Identifier: GPL-2.0
/*
 * The live view's detail pane (src/cmd/top_detail.c) without a terminal:
 * selection keys, the pool and binding panes (histogram bars with ns/us/ms
 * bucket labels, occupancy gauge, sparklines, unavailable reasons), and
 * every line fitting the terminal at 80x24 and smaller sizes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ncurses.h>
#include <cmocka.h>
#include "cmd/top_detail.h"

static struct dmt_snapshot *snap(int k)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));
	struct dmt_pool_snap *p;
	struct dmt_binding_snap *b;

	s->ts_ns = 1000000000ULL * (k + 1);
	s->interval_s = 1;
	for (int i = 0; i < DMT_M__COUNT; i++)
		s->avail[i].available = true;
	s->avail[DMT_M_BIND_FREE_LATENCY].available = false;
	snprintf(s->avail[DMT_M_BIND_FREE_LATENCY].reason, 64, "fentry refused");
	s->n_pools = 2;
	s->pools = p = calloc(2, sizeof(*p));
	p[0].id = 6;
	p[0].addr = 0x1000;
	snprintf(p[0].ifname, sizeof(p[0].ifname), "eth0");
	p[0].kind = DMT_KIND_DEVMEM;
	p[0].binding_id = 3;
	p[0].hold_rate = 1000 * (k + 1);
	p[0].inflight = 64;
	p[0].netlink_inflight = -1;
	p[0].destroy_inflight = -1;
	hist_batch_add(&p[0].refill, 64, 90);
	hist_batch_add(&p[0].refill, 1, 10);
	/* the kernel's stats of a devmem pool: recycles, no slow-path calls */
	p[0].pps[DMT_PPS_RECYCLE_RING] = 75;
	p[0].pps[DMT_PPS_RECYCLE_RING_FULL] = 25;
	p[0].queue_alloc_fail = -1;
	p[1].id = 9;
	p[1].addr = 0x2000;
	snprintf(p[1].ifname, sizeof(p[1].ifname), "eth1");
	p[1].netlink_inflight = -1;
	p[1].destroy_inflight = -1;
	s->n_bindings = 1;
	s->bindings = b = calloc(1, sizeof(*b));
	b->id = 3;
	snprintf(b->ifname, sizeof(b->ifname), "eth0");
	b->layout = "freelist";
	b->alive = true;
	b->total_niovs = 1000;
	b->free_niovs = 500;
	b->occupancy = 0.5;
	b->held_by_sockets = -1;
	b->out_at_unbind = b->out_at_free = -1;
	hist_log2_add(&b->alloc_lat_ns, 3000, 30);	/* <= 4.1us */
	hist_log2_add(&b->alloc_lat_ns, 500, 10);	/* <= 512ns */
	hist_log2_add(&b->alloc_lat_ns, 2000000, 1);	/* <= 2.1ms */
	return s;
}

static int width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static bool has(const struct top_dlines *d, const char *what)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i], what))
			return true;
	return false;
}

static const struct top_sel rows[] = {
	{ TOP_SEL_BINDING, 3, 0 }, { TOP_SEL_POOL, 6, 0x1000 }, { TOP_SEL_POOL, 9, 0x2000 },
};

static struct top_ui *ui_with_history(struct dmt_snapshot **last)
{
	struct top_ui *u = top_ui__new();

	assert_non_null(u);
	for (int k = 0; k < 5; k++) {
		struct dmt_snapshot *s = snap(k);

		top_ui__feed(u, s);
		if (k < 4)
			snapshot__free(s);
		else
			*last = s;
	}
	return u;
}

static void test_keys(void **state)
{
	struct dmt_snapshot *s;
	struct top_ui *u = ui_with_history(&s);

	top_ui__fix_selection(u, rows, 3);
	assert_true(top_ui__is_selected(u, &rows[0]));
	assert_true(top_ui__key(u, 'j', rows, 3));
	assert_true(top_ui__key(u, KEY_DOWN, rows, 3));
	assert_true(top_ui__is_selected(u, &rows[2]));
	top_ui__key(u, 'j', rows, 3);	/* stays on the last row */
	assert_true(top_ui__is_selected(u, &rows[2]));
	top_ui__key(u, 'k', rows, 3);
	assert_true(top_ui__is_selected(u, &rows[1]));
	assert_false(top_ui__key(u, 's', rows, 3));	/* top.c's key */
	assert_false(top_ui__detail_open(u));
	top_ui__key(u, '\n', rows, 3);
	assert_true(top_ui__detail_open(u));
	top_ui__key(u, 'j', rows, 3);	/* no moving under the pane */
	assert_true(top_ui__is_selected(u, &rows[1]));
	top_ui__key(u, 27, rows, 3);
	assert_false(top_ui__detail_open(u));
	/* the selected row disappears: the first one is selected */
	top_ui__fix_selection(u, rows, 1);
	assert_true(top_ui__is_selected(u, &rows[0]));
	top_ui__fix_selection(u, NULL, 0);
	top_ui__key(u, '\n', NULL, 0);
	assert_false(top_ui__detail_open(u));
	snapshot__free(s);
	top_ui__free(u);
}

static void check_fits(const struct top_dlines *d, int rows, int cols)
{
	assert_true((int)d->n <= rows);
	for (size_t i = 0; i < d->n; i++) {
		if (width(d->v[i]) > cols)
			fail_msg("line %zu is %d columns wide, terminal %d: %s", i, width(d->v[i]),
				 cols, d->v[i]);
	}
}

static void test_binding_pane(void **state)
{
	struct dmt_snapshot *s;
	struct top_ui *u = ui_with_history(&s);
	struct top_dlines d;

	top_ui__fix_selection(u, rows, 3);
	top_ui__key(u, '\n', rows, 3);
	s->avail[DMT_M_QUEUES].available = false;
	snprintf(s->avail[DMT_M_QUEUES].reason, sizeof(s->avail[0].reason),
		 "kernel without queue-get");
	assert_int_equal(top_ui__detail_lines(u, s, 23, 80, true, &d), 0);
	check_fits(&d, 23, 80);
	if (getenv("DUMP"))
		for (size_t i = 0; i < d.n; i++)
			printf("%s\n", d.v[i]);
	assert_string_equal(d.v[0], "Binding 3 on eth0 (RX)");
	assert_true(has(&d, "occupancy    [#############"));
	assert_true(has(&d, "] 50.0% (500 of 1000 niovs)"));
	assert_true(has(&d, "Alloc latency: 41 samples"));
	/* log2 buckets in ns/us/ms: 512ns .. 2.1ms contiguous, empty ones shown */
	assert_true(has(&d, "<=512ns |"));
	assert_true(has(&d, "<=4.1us |"));
	assert_true(has(&d, "<=2.1ms |"));
	assert_true(has(&d, "Free latency: unavailable: fentry refused"));
	/* sparkline of occupancy: 50% at every sample, block characters */
	assert_true(has(&d, "\u2588 now 50% max 50%"));
	assert_true(has(&d, "held by sockets n/a"));
	/* the kernel's figures (metric table rows): n/a, and why */
	assert_true(has(&d, "  RX queues n/a"));
	assert_true(has(&d, "    (n/a: kernel without queue-get)"));
	top_dlines__free(&d);
	snapshot__free(s);
	top_ui__free(u);
}

static void test_pool_pane(void **state)
{
	struct dmt_snapshot *s;
	struct top_ui *u = ui_with_history(&s);
	struct top_dlines d;

	top_ui__fix_selection(u, rows, 3);
	top_ui__key(u, 'j', rows, 3);
	top_ui__key(u, '\n', rows, 3);
	assert_int_equal(top_ui__detail_lines(u, s, 23, 80, false, &d), 0);
	check_fits(&d, 23, 80);
	if (getenv("DUMP"))
		for (size_t i = 0; i < d.n; i++)
			printf("%s\n", d.v[i]);
	assert_string_equal(d.v[0], "Pool 6 on eth0");
	assert_true(has(&d, "Refill batches since start: 100 refills, mean 57.7, p50 64"));
	assert_true(has(&d, "   1 |"));
	assert_true(has(&d, "  64 |####"));
	assert_true(has(&d, "90 90%"));
	/* ASCII sparkline: rising holds/s, the last sample the highest */
	assert_true(has(&d, "# now 5000 max 5000"));
	assert_true(has(&d, "binding 3"));
	assert_true(has(&d, "occupancy    [") && has(&d, "50.0%"));
	/* the kernel's page pool figures: a devmem pool has no slow-path share */
	assert_true(has(&d, "  recycled 75.0%  slow-path allocs -"));
	assert_true(has(&d, "ring-full drops 25"));
	top_dlines__free(&d);
	snapshot__free(s);
	top_ui__free(u);
}

/* 80x24 and smaller: every line fits, the title always comes first. */
static void test_small_terminals(void **state)
{
	static const int sizes[][2] = { { 23, 80 }, { 15, 60 }, { 9, 40 }, { 4, 20 }, { 1, 8 } };
	struct dmt_snapshot *s;
	struct top_ui *u = ui_with_history(&s);
	struct top_dlines d;

	top_ui__fix_selection(u, rows, 3);
	for (int sel = 0; sel < 2; sel++) {
		if (sel)
			top_ui__key(u, 'j', rows, 3);
		top_ui__key(u, '\n', rows, 3);
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			assert_int_equal(top_ui__detail_lines(u, s, sizes[i][0], sizes[i][1], true,
							      &d), 0);
			check_fits(&d, sizes[i][0], sizes[i][1]);
			assert_true(d.n >= 1);
			assert_int_equal(strncmp(d.v[0], sel ? "Pool" : "Binding",
						 sizes[i][1] < 4 ? sizes[i][1] : 4), 0);
			top_dlines__free(&d);
		}
		top_ui__key(u, 27, rows, 3);
	}
	snapshot__free(s);
	top_ui__free(u);
}

static void test_gone(void **state)
{
	struct dmt_snapshot *s;
	struct top_ui *u = ui_with_history(&s);
	struct top_dlines d;
	struct dmt_snapshot *empty = calloc(1, sizeof(*empty));

	top_ui__fix_selection(u, rows, 3);
	top_ui__key(u, '\n', rows, 3);
	assert_int_equal(top_ui__detail_lines(u, empty, 23, 80, true, &d), 0);
	assert_true(has(&d, "Binding 3 is gone"));
	top_dlines__free(&d);
	snapshot__free(empty);
	snapshot__free(s);
	top_ui__free(u);
}

static void test_netns(void **state)
{
	char buf[64];

	assert_string_equal(top_netns_name(0, buf, sizeof(buf)), "-");
	/* an inode no /run/netns entry has: the number */
	assert_string_equal(top_netns_name(1, buf, sizeof(buf)), "1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_binding_pane),
		cmocka_unit_test(test_pool_pane),
		cmocka_unit_test(test_small_terminals),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_netns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
