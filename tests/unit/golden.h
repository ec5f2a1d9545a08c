/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Golden outputs: a fixed run (hand-built snapshots in light mode, with
 * pools, bindings, frag tokens, holders and a pool whose counters are
 * unknown before it is located) and helpers that compare an output with
 * its file under tests/golden/.
 *
 *   DMT_GOLDEN_UPDATE=1 build/tests/test_golden     rewrite the files
 *   make golden-update                               the same for every test
 *
 * Without DMT_GOLDEN_UPDATE any difference fails, naming the file and the
 * first differing byte; the files are committed, so `git diff tests/golden`
 * shows what an intended change did to every output.
 */
#ifndef DEVMEMTOP_TEST_GOLDEN_H
#define DEVMEMTOP_TEST_GOLDEN_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
#include "record.h"

#define GOLDEN_SNAPS	4
#define GOLDEN_POOLS	5
#define GOLDEN_BINDS	2
#define GOLDEN_HOLDERS	2

/* tests/golden/, absolute: some tests chdir to a scratch directory */
static char golden_dir[PATH_MAX];

static inline void golden_init(void)
{
	const char *slash = strrchr(__FILE__, '/');
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%.*s../golden", slash ? (int)(slash - __FILE__ + 1) : 0,
		 __FILE__);
	if (!realpath(rel, golden_dir))
		fail_msg("golden: %s: %s", rel, strerror(errno));
}

static inline bool golden_updating(void)
{
	const char *u = getenv("DMT_GOLDEN_UPDATE");

	return u && *u && strcmp(u, "0");
}

/* Compare buf[0..len) with tests/golden/name, or write it there (update). */
static inline void golden_check(const char *name, const void *buf, size_t len)
{
	char path[PATH_MAX + 64];
	const unsigned char *b = buf;
	unsigned char *want = NULL;
	size_t wlen = 0, cap = 0, i, line = 1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
	if (golden_updating()) {
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
			fail_msg("golden: cannot write %s: %s", path, strerror(errno));
		return;
	}
	f = fopen(path, "rb");
	if (!f)
		fail_msg("golden: %s: %s (make golden-update writes it)", path, strerror(errno));
	for (;;) {
		if (wlen == cap) {
			cap = cap ? cap * 2 : 65536;
			want = realloc(want, cap);
			assert_non_null(want);
		}
		size_t n = fread(want + wlen, 1, cap - wlen, f);

		if (!n)
			break;
		wlen += n;
	}
	fclose(f);
	for (i = 0; i < len && i < wlen && b[i] == want[i]; i++)
		if (b[i] == '\n')
			line++;
	free(want);
	if (i == len && i == wlen)
		return;
	fail_msg("golden: output differs from %s at byte %zu (line %zu; %zu bytes now, %zu "
		 "in the file): if intended, DMT_GOLDEN_UPDATE=1 and commit the diff", path, i,
		 line, len, wlen);
}

/* The whole of a file (a scratch output) into golden_check. */
static inline void golden_check_file(const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		fail_msg("golden: %s: %s", path, strerror(errno));
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	for (int c; (c = getc(f)) != EOF;)
		putc(c, m);
	fclose(f);
	fclose(m);
	golden_check(name, buf, len);
	free(buf);
}

struct golden_run {
	struct dmt_snapshot snaps[GOLDEN_SNAPS];
	struct dmt_pool_snap pools[GOLDEN_SNAPS][GOLDEN_POOLS];
	struct dmt_binding_snap binds[GOLDEN_SNAPS][GOLDEN_BINDS];
	struct dmt_holder_snap holders[GOLDEN_SNAPS][GOLDEN_HOLDERS];
	struct dmt_prog_stat progs[2];
	struct rec_meta meta;
	char *probe_log[2];
	struct dmt_event events[3];
	size_t n_events;
};

#define GOLDEN_T0	1000000000000ULL		/* CLOCK_MONOTONIC, ns */
#define GOLDEN_WALL0	1764590400000000000ULL		/* 2025-12-01 12:00:00 UTC */

static inline void golden_avail(struct dmt_availability *a)
{
	for (int m = 0; m < DMT_M__COUNT; m++) {
		a[m].available = true;
		snprintf(a[m].source, sizeof(a[m].source), "golden/%s", dmt_metric_name(m));
	}
	a[DMT_M_POOL_REFILL].sampled = true;
	a[DMT_M_BIND_FREE_LATENCY].available = false;
	a[DMT_M_BIND_FREE_LATENCY].source[0] = '\0';
	snprintf(a[DMT_M_BIND_FREE_LATENCY].reason, sizeof(a[0].reason),
		 "light mode attaches no per-niov program");
	a[DMT_M_POOL_NID].available = false;
	a[DMT_M_POOL_NID].source[0] = '\0';
	snprintf(a[DMT_M_POOL_NID].reason, sizeof(a[0].reason), "no hook on this kernel");
	/* light mode: held tokens from the walk, no hand-out counters */
	a[DMT_M_BIND_TOKEN_EVENTS].available = false;
	a[DMT_M_BIND_TOKEN_EVENTS].source[0] = '\0';
	snprintf(a[DMT_M_BIND_TOKEN_EVENTS].reason, sizeof(a[0].reason), "%s",
		 DMT_LIGHT_NO_TOKENS);
}

/* Snapshot k of the run: counters grow with k; pool 13 is located at k = 2. */
static inline void golden_pools(struct golden_run *g, int k)
{
	struct dmt_pool_snap *p = g->pools[k];

	/* a page pool with traffic since before the run */
	p[0] = (struct dmt_pool_snap){
		.addr = 0xffff888012340000ULL, .id = 11, .ifindex = 4, .netns = 4026532000U,
		.queue = 0, .napi_id = 8193, .kind = DMT_KIND_PAGES, .attr_src = DMT_ATTR_NETLINK,
		.netlink_listed = true, .state = DMT_POOL_ALIVE,
		.holds = 1000 + 500 * k, .releases = 900 + 495 * k, .holds_page = 1000 + 500 * k,
		.hold_rate = k ? 500 : 0, .release_rate = k ? 495 : 0,
		.inflight = 100 + 5 * k, .netlink_inflight = 100 + 5 * k, .destroy_inflight = -1,
	};
	strcpy(p[0].ifname, "veth1");
	hist_batch_add(&p[0].refill, 1, 10 + k);
	hist_batch_add(&p[0].refill, 64, 5 + 3 * k);
	/* a devmem pool of binding 3 */
	p[1] = (struct dmt_pool_snap){
		.addr = 0xffff888056780000ULL, .provider_priv = 0xffff8880beef0000ULL, .id = 12,
		.ifindex = 7, .queue = 2, .kind = DMT_KIND_DEVMEM, .binding_id = 3,
		.attr_src = DMT_ATTR_NETLINK, .netlink_listed = true, .state = DMT_POOL_ALIVE,
		.holds = 64 * (k + 1), .releases = 64 * k, .holds_niov = 64 * (k + 1),
		.hold_rate = k ? 64 : 0, .release_rate = k ? 64 : 0,
		.inflight = 64, .netlink_inflight = 64, .destroy_inflight = -1,
	};
	strcpy(p[1].ifname, "eth0");
	hist_batch_add(&p[1].refill, 64, k + 1);
	/*
	 * light mode: listed by netlink, not located by a window yet (k < 2):
	 * its holds and releases count from its creation, unknown until then
	 */
	p[2] = (struct dmt_pool_snap){
		.id = 13, .ifindex = 4, .queue = -1, .kind = DMT_KIND_PAGES,
		.attr_src = DMT_ATTR_NETLINK, .netlink_listed = true, .state = DMT_POOL_ALIVE,
		.inflight = 30, .netlink_inflight = 30, .destroy_inflight = -1,
		.counters_unknown = k < 2,
	};
	strcpy(p[2].ifname, "veth1");
	if (k >= 2) {
		p[2].addr = 0xffff8880aaaa0000ULL;
		p[2].queue = 1;
		p[2].holds = 5000 + 100 * (k - 2);
		p[2].releases = 4970 + 100 * (k - 2);
		p[2].hold_rate = k > 2 ? 100 : 0;
		p[2].release_rate = k > 2 ? 100 : 0;
		hist_batch_add(&p[2].refill, 16, 2 * (k - 1));
	}
	/* a pool that becomes a zombie, then is destroyed (reported once) */
	p[3] = (struct dmt_pool_snap){
		.addr = 0xffff888099990000ULL, .id = 14, .ifindex = 5, .queue = 3,
		.kind = DMT_KIND_PAGES, .attr_src = DMT_ATTR_NETLINK, .netlink_listed = k < 3,
		.state = k < 2 ? DMT_POOL_ALIVE : k < 3 ? DMT_POOL_ZOMBIE : DMT_POOL_DESTROYED,
		.holds = 200 + 10 * k, .releases = 190 + 10 * k + (k == 3 ? 10 : 0),
		.inflight = k == 3 ? 0 : 10, .netlink_inflight = k < 3 ? 10 : -1,
		.destroy_inflight = k >= 2 ? 10 : -1, .destroy_retries = k >= 2 ? k - 1 : 0,
	};
	strcpy(p[3].ifname, "e\"v\\il\x1b");
	hist_batch_add(&p[3].refill, 128, 1);
	/* issue 35: an io_uring zcrx pool, 64-niov refills from its refill ring */
	p[4] = (struct dmt_pool_snap){
		.addr = 0xffff8880cccc0000ULL, .provider_priv = 0xffff8880dddd0000ULL, .id = 15,
		.ifindex = 7, .queue = 1, .kind = DMT_KIND_IO_URING, .attr_src = DMT_ATTR_NETDEV,
		.netlink_listed = true, .state = DMT_POOL_ALIVE,
		.holds = 64 * (k + 1), .releases = 64 * k, .holds_niov = 64 * (k + 1),
		.inflight = 64, .netlink_inflight = 64, .destroy_inflight = -1,
		.zcrx = true, .zcrx_alloc_calls = k + 1, .zcrx_alloc_niovs = 64 * (k + 1),
		.zcrx_alloc_fail = k == 3, .zcrx_rq_refills = k, .zcrx_rqes = 64 * k,
		.zcrx_niovs = 1024, .zcrx_free_niovs = 1024 - 64 * (k + 1),
		.zcrx_user_niovs = 32 + k, .zcrx_rq_pending = k, .zcrx_rq_size = 256,
		.zcrx_niov_size = 4096, .zcrx_areas = 1,
	};
	strcpy(p[4].ifname, "eth0");
	hist_batch_add(&p[4].refill, 64, k + 1);
	hist_log2_add(&p[4].zcrx_alloc_lat_ns, 3000, k + 1);
	if (k)
		hist_batch_add(&p[4].zcrx_rq_batch, 64, k);
	/*
	 * issue 25: the kernel's page pool stats for pool 11 (slow path: 64
	 * pages a call), none reported for the others; pool 11's queue
	 * reports rx-alloc-fail
	 */
	for (int i = 0; i < GOLDEN_POOLS; i++) {
		for (int j = 0; j < DMT_PPS__COUNT; j++)
			p[i].pps[j] = -1;
		p[i].queue_alloc_fail = -1;
		if (!p[i].zcrx) {
			p[i].zcrx_niovs = p[i].zcrx_free_niovs = p[i].zcrx_user_niovs = -1;
			p[i].zcrx_rq_pending = p[i].zcrx_rq_size = -1;
		}
	}
	for (int j = 0; j < DMT_PPS__COUNT; j++)
		p[0].pps[j] = 0;
	p[0].pps[DMT_PPS_ALLOC_FAST] = 90000 + 1000 * k;
	p[0].pps[DMT_PPS_ALLOC_SLOW] = 200 + 8 * k;
	p[0].pps[DMT_PPS_ALLOC_REFILL] = 3000 + 40 * k;
	p[0].pps[DMT_PPS_ALLOC_EMPTY] = 200 + 8 * k;
	p[0].pps[DMT_PPS_RECYCLE_CACHED] = 80000 + 900 * k;
	p[0].pps[DMT_PPS_RECYCLE_RING] = 11000 + 100 * k;
	p[0].pps[DMT_PPS_RECYCLE_RING_FULL] = 12 + k;
	p[0].pps[DMT_PPS_RECYCLE_RELEASED_REFCNT] = 7;
	p[0].slow_holds = 512 * k;
	p[0].slow_calls = 8 * k;
	p[0].queue_alloc_fail = k == 3;
}

static inline void golden_binds(struct golden_run *g, int k)
{
	struct dmt_binding_snap *b = g->binds[k];

	b[0] = (struct dmt_binding_snap){
		.id = 3, .ifindex = 7, .dmabuf_size = 64ULL << 20, .niov_size = 4096,
		.layout = "freelist", .alive = true, .total_niovs = 16384,
		.free_niovs = 16000 - 64 * k, .in_pools = 64, .held_by_sockets = 300 + 10 * k,
		.held_tokens = 310 + 10 * k, .pools = 1,
		.alloc_calls = 10 + k, .alloc_niovs = 640 + 64 * k, .alloc_fail = k == 3,
		.free_niovs_count = 500 + 60 * k, .out_at_unbind = -1, .out_at_free = -1,
		.created_ns = GOLDEN_T0 - 5000000000ULL,
		.tok_handed = 1000 + 100 * k, .tok_returned = 690 + 90 * k, .tok_released = 0,
	};
	b[0].occupancy = (16384.0 - b[0].free_niovs) / 16384.0;
	b[0].rx_queues = 1;
	strcpy(b[0].ifname, "eth0");
	hist_log2_add(&b[0].alloc_lat_ns, 700, 9 + k);
	hist_log2_add(&b[0].alloc_lat_ns, 70000, 1 + (k == 3));
	hist_log2_add(&b[0].alloc_lat_niov_ns, 12, 9 + k);
	hist_log2_add(&b[0].alloc_lat_niov_ns, 1100, 1);
	/* unbound before the run; freed at k = 3 with niovs still out */
	b[1] = (struct dmt_binding_snap){
		.id = 4, .ifindex = 7, .dmabuf_size = 16ULL << 20, .niov_size = 4096,
		.layout = "gen_pool", .alive = k < 3, .unbound = true,
		.total_niovs = 4096, .free_niovs = 4000, .in_pools = 0, .held_by_sockets = -1,
		.held_tokens = -1, .held_why = DMT_HELD_ATTACHED_LATE, .pools = 0,
		.alloc_calls = 4, .alloc_niovs = 96, .free_niovs_count = 0,
		.out_at_unbind = 96, .out_at_free = k == 3 ? 96 : -1,
		.created_ns = GOLDEN_T0 - 9000000000ULL, .unbound_ns = GOLDEN_T0 - 1000000000ULL,
		.freed_ns = k == 3 ? GOLDEN_T0 + 2500000000ULL : 0,
	};
	b[1].occupancy = 96.0 / 4096;
	b[1].rx_queues = 0;
	strcpy(b[1].ifname, "eth0");
	hist_log2_add(&b[1].alloc_lat_ns, 3000, 4);
}

static inline void golden_snapshot(struct golden_run *g, int k)
{
	struct dmt_snapshot *s = &g->snaps[k];
	struct dmt_holder_snap *h = g->holders[k];

	golden_pools(g, k);
	golden_binds(g, k);
	h[0] = (struct dmt_holder_snap){ .sk = 0xffff8881000a0000ULL, .pid = 4242,
		.binding_id = 3, .tokens = 250 + 10 * k, .niovs = 240 + 10 * k,
		.oldest_age_ns = 1500000000ULL + 1000000000ULL * k, .handed = 800 + 100 * k,
		.returned = 550 + 90 * k };
	strcpy(h[0].comm, "ncdevmem");
	/* issue 24: one holder in a pod, one whose cgroup went before its path was found */
	h[0].cgroup_id = 8812;
	strcpy(h[0].cgroup, "/kubepods.slice/kubepods-besteffort.slice/"
	       "kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/"
	       "cri-containerd-9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9.scope");
	h[1] = (struct dmt_holder_snap){ .sk = 0xffff8881000b0000ULL, .pid = 4243,
		.binding_id = 3, .tokens = 60, .niovs = 60, .oldest_age_ns = 250000000ULL,
		.handed = 200, .returned = 140 };
	strcpy(h[1].comm, "rx\x7fq");
	h[1].cgroup_id = 8813;
	*s = (struct dmt_snapshot){
		.ts_ns = GOLDEN_T0 + 1000000000ULL * k, .wall_ns = GOLDEN_WALL0 + 1000000000ULL * k,
		.interval_s = k ? 1.0 : 0, .seq = k + 1, .mode = DMT_MODE_LIGHT,
		.n_pools = GOLDEN_POOLS, .pools = g->pools[k],
		.n_bindings = GOLDEN_BINDS, .bindings = g->binds[k],
		.n_holders = GOLDEN_HOLDERS, .holders = h,
		.dontneed_tokens = 600 + 90 * k, .dontneed_calls = 20 + 3 * k,
		.provider_calls = 14 + k, .ringbuf_drops = k >= 2, .map_full = 0,
		.lat_missed = 2, .bpf_stats_enabled = true, .n_progs = 2, .progs = g->progs,
		.collect_ns = 150000 + 1000 * k,
		.rxq_bound = 1, .rxq_unbound = 7, .rx_alloc_fail = k == 3,
	};
	golden_avail(s->avail);
	hist_log2_add(&s->tok_cost.per_recvmsg, 4, 50 + 10 * k);
	hist_log2_add(&s->tok_cost.per_recvmsg, 33, 5);
	hist_log2_add(&s->tok_cost.per_dontneed, 30, 20 + 3 * k);
	hist_log2_add(&s->tok_cost.dontneed_ns, 2500, 20 + 3 * k);
	hist_log2_add(&s->tok_cost.dontneed_ns_token, 80, 20 + 3 * k);
	s->tok_cost.map_full = 1;
	s->tok_cost.no_socket = 0;
	s->tok_cost.dontneed_mismatch = 2;
	s->tok_cost.holders_full = 0;
}

static inline void golden_run_init(struct golden_run *g)
{
	memset(g, 0, sizeof(*g));
	strcpy(g->progs[0].name, "light_read");
	g->progs[0].attached = true;
	g->progs[0].run_time_ns = 2500000;
	g->progs[0].run_cnt = 1000;
	strcpy(g->progs[1].name, "fexit_alloc");
	for (int k = 0; k < GOLDEN_SNAPS; k++)
		golden_snapshot(g, k);
	strcpy(g->meta.version, "golden");
	strcpy(g->meta.kernel, "6.12.0-golden");
	strcpy(g->meta.host, "golden-host");
	strcpy(g->meta.cmdline, "ncdevmem -s 192.0.2.1 -p 5201");
	g->meta.start_wall_ns = GOLDEN_WALL0;
	g->meta.start_mono_ns = GOLDEN_T0;
	g->meta.interval_ns = 1000000000ULL;
	g->meta.mode = DMT_MODE_LIGHT;
	golden_avail(g->meta.avail);
	g->probe_log[0] = "fentry/dmabuf_devmem_alloc: ok";
	g->probe_log[1] = "tp_btf/page_pool_state_hold: detached (light mode)";
	g->meta.probe_log = g->probe_log;
	g->meta.n_probe_log = 2;
	g->meta.kernel_addresses = true;	/* no random pseudonym key: fixed bytes */
	g->events[0] = (struct dmt_event){ .ts_ns = GOLDEN_T0 + 1500000000ULL,
		.addr = 0xffff888099990000ULL, .a = 10, .b = 220, .c = 210,
		.type = DMT_EV_POOL_RELEASE, .id = 14, .ifindex = 5 };
	g->events[1] = (struct dmt_event){ .ts_ns = GOLDEN_T0 + 2500000000ULL,
		.a = 96, .b = 4096, .type = DMT_EV_BIND_FREE, .id = 4, .ifindex = 7 };
	g->events[2] = (struct dmt_event){ .ts_ns = GOLDEN_T0 + 2700000000ULL,
		.a = -1, .type = DMT_EV_ALLOC_FAIL, .id = 3, .ifindex = 7 };
	g->n_events = 3;
}

/* Snapshots and events in time order, with an END frame. 0 or -errno. */
static inline int golden_write_recording(const struct golden_run *g, const char *path)
{
	struct rec_writer *w = rec_writer__open(path, &g->meta);
	struct rec_end end = { .n_snapshots = GOLDEN_SNAPS, .n_events = g->n_events,
			       .ringbuf_drops = 1, .reason = REC_END_COMMAND, .exit_status = 0 };
	size_t e = 0;
	int err = 0;

	if (!w)
		return -errno;
	for (int k = 0; !err && k < GOLDEN_SNAPS; k++) {
		while (!err && e < g->n_events && g->events[e].ts_ns <= g->snaps[k].ts_ns)
			err = rec_writer__event(w, &g->events[e++]);
		err = err ?: rec_writer__snapshot(w, &g->snaps[k]);
	}
	while (!err && e < g->n_events)
		err = rec_writer__event(w, &g->events[e++]);
	err = err ?: rec_writer__end(w, &end);
	return rec_writer__close(w) ?: err;
}

#endif /* DEVMEMTOP_TEST_GOLDEN_H */
