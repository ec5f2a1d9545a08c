// SPDX-License-Identifier: GPL-2.0
/* Unit tests for snapshot -> exposition rendering (src/core/expo.c) on hand-built snapshots. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "expo.h"
#include "util.h"

struct fixture {
	struct dmt_snapshot snap;
	struct dmt_pool_snap pools[3];
	struct dmt_binding_snap bindings[2];
	struct dmt_prog_stat progs[2];
	struct expo_totals totals;
	const struct expo_limits *limits;
	char *text;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct dmt_snapshot *s = &f->snap;

	if (!f)
		return -1;
	for (int m = 0; m < DMT_M__COUNT; m++)
		s->avail[m].available = true;
	s->wall_ns = 1700000000ULL * 1000000000ULL;
	s->collect_ns = 1500000;	/* 1.5 ms */
	s->mode = DMT_MODE_FENTRY;

	/* a plain page pool on a veth, with traffic */
	f->pools[0] = (struct dmt_pool_snap){
		.addr = 0xffff888012340000ULL, .id = 11, .ifindex = 4, .netns = 4026532000U,
		.queue = 0, .kind = DMT_KIND_PAGES, .state = DMT_POOL_ALIVE,
		.holds = 1000, .releases = 900, .inflight = 100, .netlink_inflight = 100,
		.destroy_inflight = -1, .nid = 0,
	};
	strcpy(f->pools[0].ifname, "veth1");
	hist_batch_add(&f->pools[0].refill, 1, 10);
	hist_batch_add(&f->pools[0].refill, 64, 5);
	/* a devmem pool with an unknown queue and no netlink id, named nastily */
	f->pools[1] = (struct dmt_pool_snap){
		.addr = 0xffff888056780000ULL, .id = 0, .ifindex = 7, .queue = -1,
		.kind = DMT_KIND_DEVMEM, .binding_id = 3, .state = DMT_POOL_ZOMBIE,
		.holds = 5, .releases = 2, .inflight = 3, .netlink_inflight = -1,
		.destroy_inflight = 3, .destroy_retries = 2, .nid = -1,
	};
	strcpy(f->pools[1].ifname, "e\"t\\h\n0");
	/* destroyed: reported once */
	f->pools[2] = (struct dmt_pool_snap){
		.addr = 0xffff888099990000ULL, .id = 12, .ifindex = 4, .queue = 1,
		.kind = DMT_KIND_PAGES, .state = DMT_POOL_DESTROYED,
		.netlink_inflight = -1, .destroy_inflight = 0, .destroy_retries = 1,
	};
	strcpy(f->pools[2].ifname, "veth1");
	s->pools = f->pools;
	s->n_pools = 3;

	/* a live binding with unknown socket holds, and a freed one that leaked */
	f->bindings[0] = (struct dmt_binding_snap){
		.id = 3, .ifindex = 7, .dmabuf_size = 1ULL << 30, .niov_size = 4096,
		.layout = "freelist", .alive = true, .total_niovs = 262144, .free_niovs = 26214,
		.in_pools = 1000, .held_by_sockets = -1, .occupancy = 0.9000015258789062,
		.pools = 1, .alloc_calls = 50, .alloc_niovs = 3200, .alloc_fail = 2,
		.out_at_unbind = -1, .out_at_free = -1,
	};
	strcpy(f->bindings[0].ifname, "eth0");
	hist_log2_add(&f->bindings[0].alloc_lat_ns, 700, 49);
	hist_log2_add(&f->bindings[0].alloc_lat_ns, 70000, 1);
	f->bindings[1] = (struct dmt_binding_snap){
		.id = 4, .ifindex = 7, .layout = "gen_pool", .alive = false, .unbound = true,
		.total_niovs = -1, .free_niovs = -1, .in_pools = -1, .held_by_sockets = -1,
		.occupancy = -1, .out_at_unbind = 9, .out_at_free = 7,
	};
	strcpy(f->bindings[1].ifname, "eth0");
	s->bindings = f->bindings;
	s->n_bindings = 2;

	strcpy(f->progs[0].name, "tp_hold");
	f->progs[0].attached = true;
	f->progs[0].run_time_ns = 2500000000ULL;
	f->progs[0].run_cnt = 1000;
	strcpy(f->progs[1].name, "fexit_alloc");
	f->progs[1].attached = false;
	s->progs = f->progs;
	s->n_progs = 2;
	s->ringbuf_drops = 4;

	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->text);
	free(f);
	return 0;
}

static const char *render(struct fixture *f)
{
	struct expo_input in = { .snap = &f->snap, .totals = &f->totals, .interval_s = 2,
				 .collections = 5, .collection_errors = 1, .limits = f->limits };
	struct promfmt *w = promfmt__new();
	size_t len;

	assert_non_null(w);
	assert_int_equal(expo__render(w, &in), 0);
	assert_int_equal(expo__render_scrape(w, &(struct expo_scrape){ .scrapes = 3,
		.http_timeouts = 2, .snapshots_held = 1, .seconds = 0.000125 }), 0);
	free(f->text);
	f->text = promfmt__take(w, &len);
	promfmt__free(w);
	assert_non_null(f->text);
	return f->text;
}

static int has_line(const char *t, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

#define assert_line(t, l) do { if (!has_line(t, l)) fail_msg("missing line: %s", l); } while (0)
#define assert_no_line(t, l) do { if (has_line(t, l)) fail_msg("unexpected line: %s", l); } while (0)

static int has_family(const char *t, const char *name)
{
	char type[160];

	snprintf(type, sizeof(type), "# TYPE %s ", name);
	return strstr(t, type) != NULL;
}

static void test_pool_series(void **state)
{
	struct fixture *f = *state;
	const char *t = render(f);

	assert_line(t, "devmemtop_page_pool_holds_total{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\"} 1000");
	assert_line(t, "devmemtop_page_pool_inflight{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\"} 100");
	/* refill histogram: cumulative, le powers of two */
	assert_line(t, "devmemtop_page_pool_refill_batch_items_bucket{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\",le=\"1\"} 10");
	assert_line(t, "devmemtop_page_pool_refill_batch_items_bucket{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\",le=\"32\"} 10");
	assert_line(t, "devmemtop_page_pool_refill_batch_items_bucket{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\",le=\"64\"} 15");
	assert_line(t, "devmemtop_page_pool_refill_batch_items_bucket{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\",le=\"+Inf\"} 15");
	assert_line(t, "devmemtop_page_pool_refill_batch_items_sum{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\"} 330");
	assert_line(t, "devmemtop_page_pool_refill_batch_items_count{pool_id=\"11\",ifname=\"veth1\",ifindex=\"4\",queue=\"0\",kind=\"pages\",netns=\"4026532000\"} 15");
	/* escaped ifname, unknown queue empty, pool without id gets a hashed tag */
	assert_non_null(strstr(t, "ifname=\"e\\\"t\\\\h\\n0\",ifindex=\"7\",queue=\"\",kind=\"devmem\",netns=\"\"} 3"));
	assert_null(strstr(t, "pool_id=\"0\""));
	assert_null(strstr(t, "ffff8880"));	/* no kernel addresses */
	{
		/* nor an unkeyed hash of one, which 32 bits let anyone invert */
		uint64_t a = 0xffff888056780000ULL;
		char tag[24];

		a ^= a >> 33;
		a *= 0xff51afd7ed558ccdULL;
		a ^= a >> 33;
		a *= 0xc4ceb9fe1a85ec53ULL;
		a ^= a >> 33;
		snprintf(tag, sizeof(tag), "pool_id=\"h%08x\"", (uint32_t)a);
		assert_null(strstr(t, tag));
	}
	/* unknown netlink inflight (-1) is left out, known one is there */
	assert_non_null(strstr(t, "devmemtop_page_pool_netlink_inflight{pool_id=\"11\""));
	assert_null(strstr(t, "devmemtop_page_pool_netlink_inflight{pool_id=\"12\""));
	{
		int n = 0;

		for (const char *p = t; (p = strstr(p, "devmemtop_page_pool_netlink_inflight{")); p++)
			n++;
		assert_int_equal(n, 1);
	}
	/* zombie pool: destroy inflight and attempts */
	assert_non_null(strstr(t, "devmemtop_page_pool_destroy_attempts_total{pool_id=\"h"));
	assert_non_null(strstr(t, "devmemtop_page_pool_destroy_inflight{pool_id=\"h"));
	/* pool counts by kind and state, destroyed ones not counted as alive */
	assert_line(t, "devmemtop_page_pools{kind=\"pages\",state=\"alive\"} 1");
	assert_line(t, "devmemtop_page_pools{kind=\"devmem\",state=\"zombie\"} 1");
	assert_line(t, "devmemtop_page_pools{kind=\"io_uring\",state=\"alive\"} 0");
	assert_non_null(strstr(t, "binding_id=\"3\",napi_id=\"0\",state=\"zombie\""));
}

static void test_binding_series(void **state)
{
	struct fixture *f = *state;
	const char *t = render(f);
	char le[64];

	assert_line(t, "devmemtop_binding_capacity_niovs{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 262144");
	assert_line(t, "devmemtop_binding_free_niovs{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 26214");
	assert_line(t, "devmemtop_binding_occupancy_ratio{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 0.9000015258789062");
	assert_line(t, "devmemtop_binding_alloc_failures_total{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 2");
	/* held_by_sockets unknown: no series at all, not a fake 0 or -1 */
	assert_false(has_family(t, "devmemtop_binding_socket_held_niovs"));
	/* freed binding: its unknowns are omitted, its leak is reported */
	assert_null(strstr(t, "devmemtop_binding_capacity_niovs{binding_id=\"4\""));
	assert_line(t, "devmemtop_binding_leaked_niovs{binding_id=\"4\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 7");
	assert_line(t, "devmemtop_binding_unbind_outstanding_niovs{binding_id=\"4\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 9");
	assert_line(t, "devmemtop_binding_info{binding_id=\"4\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\",layout=\"gen_pool\",state=\"freed\"} 1");
	/* latency in seconds: 700 ns is in (512, 1024] -> le=1.024e-06 */
	assert_line(t, "devmemtop_binding_alloc_latency_seconds_bucket{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\",le=\"5.12e-07\"} 0");
	assert_line(t, "devmemtop_binding_alloc_latency_seconds_bucket{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\",le=\"1.024e-06\"} 49");
	assert_line(t, "devmemtop_binding_alloc_latency_seconds_bucket{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\",le=\"6.5536e-05\"} 49");
	assert_line(t, "devmemtop_binding_alloc_latency_seconds_bucket{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\",le=\"0.000131072\"} 50");
	assert_line(t, "devmemtop_binding_alloc_latency_seconds_count{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 50");
	prom_format_double(le, sizeof(le), (49 * 700 + 70000) / 1e9);
	{
		char line[256];

		snprintf(line, sizeof(line), "devmemtop_binding_alloc_latency_seconds_sum{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} %s", le);
		assert_line(t, line);
	}
}

static void test_unavailable_omitted(void **state)
{
	struct fixture *f = *state;
	const char *t;

	f->snap.avail[DMT_M_POOL_REFILL].available = false;
	strcpy(f->snap.avail[DMT_M_POOL_REFILL].reason, "no \"fexit\"\\here\nat all");
	f->snap.avail[DMT_M_BIND_ALLOC_LATENCY].available = false;
	strcpy(f->snap.avail[DMT_M_BIND_ALLOC_LATENCY].reason, "fentry not supported");
	f->snap.avail[DMT_M_BIND_LEAKS].available = false;
	t = render(f);
	assert_false(has_family(t, "devmemtop_page_pool_refill_batch_items"));
	assert_null(strstr(t, "refill_batch_items_bucket"));
	assert_false(has_family(t, "devmemtop_binding_alloc_latency_seconds"));
	assert_false(has_family(t, "devmemtop_binding_alloc_niov_latency_seconds"));
	assert_false(has_family(t, "devmemtop_binding_leaked_niovs"));
	assert_false(has_family(t, "devmemtop_leaked_niovs_total"));
	/* still there: the free-latency histogram has its own gate */
	assert_true(has_family(t, "devmemtop_binding_release_latency_seconds"));
	/* the reason is exported, escaped */
	assert_line(t, "devmemtop_metric_available{metric=\"pool_refill_batch\",reason=\"no \\\"fexit\\\"\\\\here\\nat all\"} 0");
	assert_line(t, "devmemtop_metric_available{metric=\"pool_holds\",reason=\"\"} 1");
}

static void test_self_metrics(void **state)
{
	struct fixture *f = *state;
	const char *t = render(f);

	assert_line(t, "devmemtop_bpf_program_attached{program=\"tp_hold\"} 1");
	assert_line(t, "devmemtop_bpf_program_attached{program=\"fexit_alloc\"} 0");
	assert_line(t, "devmemtop_bpf_stats_enabled 0");
	/* stats off: run time and count are not exported (they would read 0) */
	assert_false(has_family(t, "devmemtop_bpf_program_run_time_seconds_total"));
	assert_false(has_family(t, "devmemtop_bpf_program_runs_total"));
	assert_line(t, "devmemtop_ringbuf_drops_total 4");
	assert_line(t, "devmemtop_collection_duration_seconds 0.0015");
	assert_line(t, "devmemtop_collections_total 5");
	assert_line(t, "devmemtop_collection_errors_total 1");
	assert_line(t, "devmemtop_scrapes_total 3");
	assert_line(t, "devmemtop_http_request_timeouts_total 2");
	assert_line(t, "devmemtop_snapshots_held 1");
	assert_line(t, "devmemtop_last_collection_timestamp_seconds 1700000000");
	assert_line(t, "devmemtop_scrape_duration_seconds 0.000125");
	assert_line(t, "devmemtop_build_info{version=\"" DEVMEMTOP_VERSION "\",mode=\"fentry\"} 1");

	f->snap.bpf_stats_enabled = true;
	t = render(f);
	assert_line(t, "devmemtop_bpf_stats_enabled 1");
	assert_line(t, "devmemtop_bpf_program_run_time_seconds_total{program=\"tp_hold\"} 2.5");
	assert_line(t, "devmemtop_bpf_program_runs_total{program=\"tp_hold\"} 1000");
	/* a detached program has no run stats */
	assert_null(strstr(t, "devmemtop_bpf_program_runs_total{program=\"fexit_alloc\"}"));
}

static void test_light_mode(void **state)
{
	struct fixture *f = *state;
	const char *t;

	f->snap.mode = DMT_MODE_LIGHT;
	f->snap.avail[DMT_M_POOL_REFILL].sampled = true;
	f->snap.avail[DMT_M_BIND_FREE_LATENCY].available = false;
	/* a listed pool light mode has not located: counters unknown, not 0 */
	f->pools[0].counters_unknown = true;
	t = render(f);
	assert_line(t, "devmemtop_build_info{version=\"" DEVMEMTOP_VERSION "\",mode=\"light\"} 1");
	assert_line(t, "devmemtop_metric_method_info{metric=\"pool_refill_batch\",method=\"sampled\"} 1");
	assert_line(t, "devmemtop_metric_method_info{metric=\"pool_holds\",method=\"exact\"} 1");
	assert_line(t, "devmemtop_metric_method_info{metric=\"binding_free_latency\",method=\"unavailable\"} 1");
	assert_null(strstr(t, "devmemtop_page_pool_holds_total{pool_id=\"11\""));
	assert_null(strstr(t, "devmemtop_page_pool_releases_total{pool_id=\"11\""));
	/* its inflight (netlink's, exact) stays */
	assert_non_null(strstr(t, "devmemtop_page_pool_inflight{pool_id=\"11\""));
}

/*
 * Token counts the hooks are known to have missed events of (a program run
 * the kernel skipped, seen in the 7.3 lab's race scenario; a DONTNEED that
 * freed other tokens than it named) are not the kernel's: no series, as
 * for held_tokens, not a number that is wrong.
 */
static void test_token_counts_missed(void **state)
{
	static const uint32_t whys[] = { DMT_HELD_MISSED_RUNS, DMT_HELD_DONTNEED_MISMATCH };
	struct fixture *f = *state;
	const char *t;

	f->bindings[0].tok_handed = 35014;
	f->bindings[0].tok_returned = 21850;
	f->bindings[0].tok_released = 1;
	t = render(f);
	assert_line(t, "devmemtop_binding_tokens_returned_total{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 21850");
	assert_line(t, "devmemtop_binding_tokens_handed_total{binding_id=\"3\",ifname=\"eth0\",ifindex=\"7\",direction=\"rx\"} 35014");
	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++) {
		f->bindings[0].held_why = whys[i];
		t = render(f);
		assert_null(strstr(t, "devmemtop_binding_tokens_returned_total{binding_id=\"3\""));
		assert_null(strstr(t, "devmemtop_binding_tokens_handed_total{binding_id=\"3\""));
		assert_null(strstr(t, "devmemtop_binding_tokens_released_total{binding_id=\"3\""));
		/* the binding's other figures stay */
		assert_non_null(strstr(t, "devmemtop_binding_alloc_failures_total{binding_id=\"3\""));
	}
	/* a binding made before the tool attached: counts since attach, kept */
	f->bindings[0].held_why = DMT_HELD_ATTACHED_LATE;
	t = render(f);
	assert_non_null(strstr(t, "devmemtop_binding_tokens_returned_total{binding_id=\"3\""));
	assert_non_null(strstr(dmt_held_why_text(DMT_HELD_MISSED_RUNS), "skipped by the kernel"));
}

static void test_totals(void **state)
{
	struct fixture *f = *state;
	const char *t;

	expo_totals__account(&f->totals, &f->snap);
	assert_int_equal(f->totals.leaked_niovs, 7);
	assert_int_equal(f->totals.bindings_freed, 1);
	assert_int_equal(f->totals.pools_destroyed[DMT_KIND_PAGES], 1);
	assert_int_equal(f->totals.pools_destroyed[DMT_KIND_DEVMEM], 0);
	t = render(f);
	assert_line(t, "devmemtop_leaked_niovs_total 7");
	assert_line(t, "devmemtop_bindings_freed_total 1");
	assert_line(t, "devmemtop_page_pools_destroyed_total{kind=\"pages\"} 1");

	/* the objects are gone from the next snapshot; totals stay */
	f->snap.n_pools = 1;
	f->snap.n_bindings = 1;
	expo_totals__account(&f->totals, &f->snap);
	t = render(f);
	assert_line(t, "devmemtop_leaked_niovs_total 7");
	assert_null(strstr(t, "pool_id=\"12\""));
	assert_null(strstr(t, "binding_id=\"4\""));
}

/*
 * Structure: every sample belongs to a catalogued family, every family has
 * one HELP and one TYPE, and a family's samples are contiguous.
 */
static void test_structure(void **state)
{
	struct fixture *f = *state;
	char *t = strdup(render(f)), *save = NULL, *line;
	char seen[128][96];
	size_t nseen = 0;
	char cur[96] = "";
	const struct expo_family *fam = NULL;

	for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[96];
		size_t n;

		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%95s", cur);
			for (size_t i = 0; i < nseen; i++)
				if (!strcmp(seen[i], cur))
					fail_msg("family %s appears twice", cur);
			assert_true(nseen < 128);
			strcpy(seen[nseen++], cur);
			fam = expo_family_find(cur);
			if (!fam)
				fail_msg("family %s is not in the catalogue", cur);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char tn[96], ty[32];

			assert_int_equal(sscanf(line + 7, "%95s %31s", tn, ty), 2);
			assert_string_equal(tn, cur);
			assert_string_equal(ty, fam->type);
			continue;
		}
		n = strcspn(line, "{ ");
		assert_true(n < sizeof(name));
		memcpy(name, line, n);
		name[n] = '\0';
		if (!strcmp(fam->type, "histogram")) {
			size_t cl = strlen(cur);

			assert_true(!strncmp(name, cur, cl));
			assert_true(!strcmp(name + cl, "_bucket") || !strcmp(name + cl, "_sum") ||
				    !strcmp(name + cl, "_count"));
		} else {
			if (strcmp(name, cur))
				fail_msg("sample %s under family %s", name, cur);
		}
		if (!strcmp(fam->type, "counter"))
			assert_true(strlen(cur) > 6 && !strcmp(cur + strlen(cur) - 6, "_total"));
		else
			assert_false(strlen(cur) > 6 && !strcmp(cur + strlen(cur) - 6, "_total"));
	}
	assert_true(nseen > 30);
	free(t);
}

static void test_catalogue(void **state)
{
	size_t n = expo_family_count();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_true(n > 40);
	for (size_t i = 0; i < n; i++) {
		const struct expo_family *fam = expo_family_at(i);

		assert_non_null(fam);
		assert_non_null(fam->name);
		assert_ptr_equal(expo_family_find(fam->name), fam);
		assert_int_equal(strncmp(fam->name, "devmemtop_", 10), 0);
	}
	assert_null(expo_family_at(n));
	assert_null(expo_family_find("devmemtop_nope"));
	expo_list_metrics(f);
	fclose(f);
	assert_non_null(strstr(buf, "devmemtop_page_pool_refill_batch_items histogram pool gate=pool_refill_batch\n"));
	assert_non_null(strstr(buf, "devmemtop_scrapes_total counter self gate=-\n"));
	assert_non_null(strstr(buf, "devmemtop_binding_occupancy_ratio gauge binding gate=binding_occupancy absent-when: "));
	free(buf);
}

/*
 * Token holders: sockets of one process on one binding are one series, only
 * the 10 largest get series, the rest is one sum; unavailable: no family.
 */
static void test_token_holders(void **state)
{
	struct fixture *f = *state;
	struct dmt_holder_snap h[13] = {};
	const char *t;
	char line[160];

	/* most tokens first, as the collector sorts them */
	h[0] = (struct dmt_holder_snap){ .pid = 100, .binding_id = 3, .tokens = 50, .niovs = 40,
					 .oldest_age_ns = 2500000000ULL };
	h[1] = (struct dmt_holder_snap){ .pid = 100, .binding_id = 3, .tokens = 30, .niovs = 30,
					 .oldest_age_ns = 500000000ULL };
	strcpy(h[0].comm, "rx");
	strcpy(h[1].comm, "rx");
	for (int i = 2; i < 13; i++) {
		h[i] = (struct dmt_holder_snap){ .pid = 99 + i, .binding_id = 3,
						 .tokens = 22 - i, .niovs = 22 - i };
		strcpy(h[i].comm, "worker");
	}
	f->snap.holders = h;
	f->snap.n_holders = 13;
	hist_log2_add(&f->snap.tok_cost.per_recvmsg, 32, 4);
	t = render(f);
	assert_line(t, "devmemtop_token_holder_sockets 13");
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"100\",comm=\"rx\","
		       "binding_id=\"3\"} 80");
	assert_line(t, "devmemtop_token_holder_niovs{pid=\"100\",comm=\"rx\",binding_id=\"3\"} 70");
	assert_line(t, "devmemtop_token_holder_oldest_token_age_seconds{pid=\"100\",comm=\"rx\","
		       "binding_id=\"3\"} 2.5");
	/* rows 1..9 are pids 101..109; 110 and 111 (tokens 11 and 10) are summed */
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"109\",comm=\"worker\","
		       "binding_id=\"3\"} 12");
	snprintf(line, sizeof(line),
		 "devmemtop_token_holder_tokens{pid=\"110\",comm=\"worker\",binding_id=\"3\"} 11");
	assert_no_line(t, line);
	assert_line(t, "devmemtop_token_holder_others_tokens 21");
	assert_line(t, "devmemtop_tokens_per_recvmsg_count 4");
	assert_line(t, "devmemtop_tokens_per_recvmsg_sum 128");

	f->snap.avail[DMT_M_BIND_HELD_BY_SOCKETS].available = false;
	f->snap.avail[DMT_M_RECVMSG_TOKENS].available = false;
	t = render(f);
	assert_false(has_family(t, "devmemtop_token_holder_tokens"));
	assert_false(has_family(t, "devmemtop_token_holder_sockets"));
	assert_false(has_family(t, "devmemtop_tokens_per_recvmsg"));
	f->snap.holders = NULL;
	f->snap.n_holders = 0;
}

/*
 * Light mode, autorelease off: a holder whose counts the kernel does not
 * keep is a socket (holder_sockets) but gets no token series, never a 0.
 */
static void test_token_holder_counts_unknown(void **state)
{
	struct fixture *f = *state;
	struct dmt_holder_snap h[2] = {
		{ .pid = 100, .binding_id = 3, .tokens = 5, .niovs = 4, .comm = "rx" },
		{ .pid = 200, .binding_id = 4, .comm = "manual", .manual = true,
		  .counts_unknown = true },
	};
	const char *t;

	f->snap.holders = h;
	f->snap.n_holders = 2;
	t = render(f);
	assert_line(t, "devmemtop_token_holder_sockets 2");
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"100\",comm=\"rx\",binding_id=\"3\"} 5");
	assert_null(strstr(t, "pid=\"200\""));
	f->snap.holders = NULL;
	f->snap.n_holders = 0;
}

static int count_lines(const char *t, const char *prefix);

/*
 * Holders by pod (issue 24): a pod's process carries pod_uid and
 * container_id (the pod's own cgroup: pod_uid only), a host process
 * neither; each row takes them from its largest socket; they add no
 * series: 13 processes in 13 pods are still 10 series.
 */
static void test_token_holder_pods(void **state)
{
	static const char cid[] =
		"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9";
	struct fixture *f = *state;
	struct dmt_holder_snap h[13] = {};
	const char *t;

	for (int i = 0; i < 13; i++) {
		h[i] = (struct dmt_holder_snap){ .pid = 100 + i, .binding_id = 3,
						 .tokens = 30 - i, .cgroup_id = 500 + i };
		strcpy(h[i].comm, "rx");
		snprintf(h[i].cgroup, sizeof(h[i].cgroup),
			 "/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1%02d/%s", i, cid);
	}
	/* the pod's own cgroup; a host process; a gone cgroup (id only) */
	snprintf(h[1].cgroup, sizeof(h[1].cgroup),
		 "/kubepods.slice/kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice");
	snprintf(h[2].cgroup, sizeof(h[2].cgroup), "/system.slice/rx.service");
	h[3].cgroup[0] = '\0';
	/* a second socket of pid 100, smaller, elsewhere: the row keeps the first's */
	h[12] = (struct dmt_holder_snap){ .pid = 100, .binding_id = 3, .tokens = 1 };
	snprintf(h[12].cgroup, sizeof(h[12].cgroup), "/user.slice");
	f->snap.holders = h;
	f->snap.n_holders = 13;
	t = render(f);
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"100\",comm=\"rx\",binding_id=\"3\","
		       "pod_uid=\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e100\",container_id=\"9a8b7c6d5e4f"
		       "30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9\"} 31");
	assert_line(t, "devmemtop_token_holder_niovs{pid=\"101\",comm=\"rx\",binding_id=\"3\","
		       "pod_uid=\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"} 0");
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"102\",comm=\"rx\",binding_id=\"3\"} 28");
	assert_line(t, "devmemtop_token_holder_tokens{pid=\"103\",comm=\"rx\",binding_id=\"3\"} 27");
	assert_int_equal(count_lines(t, "devmemtop_token_holder_tokens{"), 10);
	assert_int_equal(count_lines(t, "devmemtop_token_holder_oldest_token_age_seconds{"), 10);
	/* pids 110, 111 summed: 20 + 19 */
	assert_line(t, "devmemtop_token_holder_others_tokens 39");
	f->snap.holders = NULL;
	f->snap.n_holders = 0;
}

/*
 * Issue 37, finding 3: light mode after the privilege drop knows no
 * holder's pid (another user's /proc/PID/fd). Three sockets in three pods
 * are three series named by their socket inode, each with its own pod,
 * never one pid="0" series with the first pod's labels and all tokens; a
 * socket known by neither pid nor inode (a full holder map) has no name
 * for a series: others.
 */
static void test_token_holder_unknown_pids(void **state)
{
	static const char cid[] =
		"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9";
	struct fixture *f = *state;
	struct dmt_holder_snap h[4] = {};
	const char *t;

	for (int i = 0; i < 3; i++) {
		h[i] = (struct dmt_holder_snap){ .binding_id = 3, .tokens = 100 - 40 * i + 20 * (i == 2),
						 .niovs = 10 - i, .cgroup_id = 500 + i,
						 .sock_ino = 7000 + i };
		snprintf(h[i].cgroup, sizeof(h[i].cgroup),
			 "/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1%02d/%s", i, cid);
	}
	h[3] = (struct dmt_holder_snap){ .binding_id = 3, .tokens = 7, .cgroup_id = 600 };
	f->snap.holders = h;
	f->snap.n_holders = 4;
	t = render(f);
	assert_null(strstr(t, "pid=\"0\""));
	assert_int_equal(count_lines(t, "devmemtop_token_holder_tokens{"), 3);
	assert_line(t, "devmemtop_token_holder_tokens{socket_inode=\"7000\",comm=\"\","
		       "binding_id=\"3\",pod_uid=\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e100\","
		       "container_id=\"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9\"} 100");
	assert_line(t, "devmemtop_token_holder_tokens{socket_inode=\"7001\",comm=\"\","
		       "binding_id=\"3\",pod_uid=\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e101\","
		       "container_id=\"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9\"} 60");
	assert_line(t, "devmemtop_token_holder_niovs{socket_inode=\"7002\",comm=\"\","
		       "binding_id=\"3\",pod_uid=\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e102\","
		       "container_id=\"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9\"} 8");
	assert_line(t, "devmemtop_token_holder_others_tokens 7");
	f->snap.holders = NULL;
	f->snap.n_holders = 0;
}

static int count_lines(const char *t, const char *prefix)
{
	int n = 0;

	for (const char *p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/* --iface-include/--iface-exclude/--max-pools: who keeps series, what is counted */
static void test_pool_limits(void **state)
{
	static const char *const veth[] = { "veth*" }, *const veth1[] = { "veth1" };
	struct fixture *f = *state;
	struct expo_limits l = { .exclude = veth, .n_exclude = 1 };
	const char *t;

	f->limits = &l;
	t = render(f);		/* only the devmem pool is not on a veth */
	assert_int_equal(count_lines(t, "devmemtop_page_pool_info{"), 1);
	assert_null(strstr(t, "ifname=\"veth1\""));
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"iface_filter\"} 2");
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"max_pools\"} 0");
	/* the totals still count every pool */
	assert_line(t, "devmemtop_page_pools{kind=\"pages\",state=\"alive\"} 1");

	l = (struct expo_limits){ .max_pools = 1 };
	t = render(f);		/* devmem pools first, though it has no id and comes second */
	assert_int_equal(count_lines(t, "devmemtop_page_pool_info{"), 1);
	assert_non_null(strstr(t, "kind=\"devmem\",netns=\"\",binding_id=\"3\""));
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"max_pools\"} 2");

	l = (struct expo_limits){ .include = veth1, .n_include = 1, .max_pools = 1 };
	t = render(f);		/* of the two on veth1, the lower pool id */
	assert_int_equal(count_lines(t, "devmemtop_page_pool_info{"), 1);
	assert_non_null(strstr(t, "devmemtop_page_pool_info{pool_id=\"11\""));
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"iface_filter\"} 1");
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"max_pools\"} 1");

	l = (struct expo_limits){ .include = veth1, .n_include = 1, .exclude = veth1,
				  .n_exclude = 1 };
	t = render(f);		/* exclude wins */
	assert_int_equal(count_lines(t, "devmemtop_page_pool_info{"), 0);
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"iface_filter\"} 3");

	f->limits = NULL;	/* no limits: every pool, nothing counted */
	t = render(f);
	assert_int_equal(count_lines(t, "devmemtop_page_pool_info{"), 3);
	assert_line(t, "devmemtop_page_pools_not_exported{reason=\"iface_filter\"} 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pool_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_binding_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unavailable_omitted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_light_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_counts_missed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_structure, setup, teardown),
		cmocka_unit_test(test_catalogue),
		cmocka_unit_test_setup_teardown(test_token_holders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_holder_counts_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_holder_pods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_holder_unknown_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_limits, setup, teardown),
	};

	return cmocka_run_group_tests_name("export_render", tests, NULL, NULL);
}
