// SPDX-License-Identifier: GPL-2.0
/*
 * Availability and the mode policy as pure functions: every attach mode
 * (devmem tracepoints, fentry, tracepoint-only, light), the token sources
 * (0009's tracepoints, the cmsg fallback, neither) and their reasons.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "availability.h"

#define EPERM_WHY "fentry/fexit load refused: Operation not permitted"

static void on(struct dmt_attach_result *r, enum dmt_hook h)
{
	r->hook[h].loaded = true;
	r->hook[h].attached = true;
	r->hook[h].why[0] = '\0';
}

static void off(struct dmt_attach_result *r, enum dmt_hook h, const char *why)
{
	r->hook[h].loaded = false;
	r->hook[h].attached = false;
	snprintf(r->hook[h].why, sizeof(r->hook[h].why), "%s", why);
}

/* A kernel with devmem where only the tracepoints attach (fentry: EPERM). */
static void tp_only(struct dmt_attach_result *r)
{
	memset(r, 0, sizeof(*r));
	r->have_devmem = true;
	r->netlink = true;
	r->tok_fallback = true;
	r->window_ns = 20000000;
	r->period_ns = 10000000000ULL;
	for (int h = 0; h < DMT_H__COUNT; h++)
		off(r, h, EPERM_WHY);
	on(r, DMT_H_PP_HOLD);
	on(r, DMT_H_PP_RELEASE);
	on(r, DMT_H_PP_DESTROY);
	on(r, DMT_H_PP_NID);
	on(r, DMT_H_WALK_BINDING);
	on(r, DMT_H_TOK_DESTROY);
	for (int h = DMT_H_DM_CREATE; h <= DMT_H_TOK_TP_RELEASE; h++)
		off(r, h, "tracepoint not in this kernel");
	off(r, DMT_H_LIGHT_READ, "light and devmem modes only");
}

static void with_fentry(struct dmt_attach_result *r)
{
	for (int h = DMT_H_BIND_EXIT; h <= DMT_H_DONTNEED_EXIT; h++)
		on(r, h);
	for (int h = DMT_H_TOK_RECVMSG_ENTRY; h <= DMT_H_TOK_DONTNEED_EXIT; h++)
		on(r, h);
}

static void with_devmem_tp(struct dmt_attach_result *r)
{
	for (int h = DMT_H_DM_CREATE; h <= DMT_H_DM_DONTNEED; h++)
		on(r, h);
	/* prefer_devmem_tracepoints() leaves these unloaded */
	off(r, DMT_H_BIND_EXIT, "not needed: devmem tracepoints cover it");
	off(r, DMT_H_UNBIND_ENTRY, "not needed: devmem tracepoints cover it");
	off(r, DMT_H_BINDING_FREE_ENTRY, "not needed: devmem tracepoints cover it");
	off(r, DMT_H_DONTNEED_EXIT, "not needed: devmem tracepoints cover it");
}

static void light(struct dmt_attach_result *r)
{
	tp_only(r);
	r->light = true;
	r->hook[DMT_H_PP_HOLD].attached = false;
	r->hook[DMT_H_PP_RELEASE].attached = false;
	snprintf(r->hook[DMT_H_PP_HOLD].why, sizeof(r->hook[0].why),
		 "light mode: attached in sampling windows");
	on(r, DMT_H_LIGHT_READ);
	r->hook[DMT_H_LIGHT_READ].attached = false;	/* run, never attached */
	off(r, DMT_H_TOK_DESTROY, "per-token hook: not attached in light mode");
}

#define EXACT(av, m, src) do { \
	assert_true((av)[m].available); assert_false((av)[m].sampled); \
	assert_string_equal((av)[m].source, src); assert_string_equal((av)[m].reason, ""); \
} while (0)
#define UNAVAIL(av, m, why) do { \
	assert_false((av)[m].available); assert_string_equal((av)[m].reason, why); \
} while (0)

static void test_tracepoint_only(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	tp_only(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_TP_ONLY);
	EXACT(av, DMT_M_POOL_HOLDS, "tp_btf/page_pool_state_hold");
	EXACT(av, DMT_M_POOL_RELEASES, "tp_btf/page_pool_state_release");
	EXACT(av, DMT_M_POOL_INFLIGHT, "hold - release counters");
	EXACT(av, DMT_M_POOL_REFILL, "pool->alloc.count at page_pool_state_hold");
	EXACT(av, DMT_M_POOL_DESTROY, "tp_btf/page_pool_release");
	EXACT(av, DMT_M_POOL_NID, "tp_btf/page_pool_update_nid");
	EXACT(av, DMT_M_BIND_OCCUPANCY, "bpf_loop walk of the binding");
	EXACT(av, DMT_M_BIND_IN_POOLS, "sum of the binding's pools' inflight");
	EXACT(av, DMT_M_NETLINK, "netdev genl page-pool-get");
	UNAVAIL(av, DMT_M_BIND_LIFECYCLE, EPERM_WHY);
	assert_string_equal(av[DMT_M_BIND_LIFECYCLE].source, "fexit/net_devmem_bind_dmabuf");
	UNAVAIL(av, DMT_M_BIND_ALLOC_LATENCY, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_FREE_LATENCY, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_ALLOC_FAIL, EPERM_WHY);
	assert_string_equal(av[DMT_M_BIND_ALLOC_FAIL].source,
			    "fexit/mp_dmabuf_devmem_alloc_netmems");
	UNAVAIL(av, DMT_M_BIND_PROVIDER_CALLS, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_LEAKS, EPERM_WHY);
	UNAVAIL(av, DMT_M_DONTNEED_TOKENS, EPERM_WHY);
	/* the token fallback names its first missing hook */
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "no devmem_token_* tracepoints (0009); "
		"fallback fexit/put_cmsg_notrunc: " EPERM_WHY);
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "no devmem_token_* tracepoints (0009); "
		"fallback fexit/put_cmsg_notrunc: " EPERM_WHY);
	UNAVAIL(av, DMT_M_DONTNEED_COST, EPERM_WHY);
	assert_false(dmt_tokens_tracked(&r));
}

static void test_fentry(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	tp_only(&r);
	with_fentry(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_FENTRY);
	EXACT(av, DMT_M_BIND_LIFECYCLE, "fexit/net_devmem_bind_dmabuf");
	EXACT(av, DMT_M_BIND_OCCUPANCY, "bpf_loop walk of the binding");
	EXACT(av, DMT_M_BIND_ALLOC_LATENCY, "fentry+fexit/mp_dmabuf_devmem_alloc_netmems");
	EXACT(av, DMT_M_BIND_FREE_LATENCY, "fentry+fexit/mp_dmabuf_devmem_release_page");
	EXACT(av, DMT_M_BIND_ALLOC_FAIL, "fexit/mp_dmabuf_devmem_alloc_netmems");
	EXACT(av, DMT_M_BIND_PROVIDER_CALLS, "fexit/mp_dmabuf_devmem_alloc_netmems");
	EXACT(av, DMT_M_BIND_LEAKS, "fentry/net_devmem_unbind_dmabuf + binding free");
	EXACT(av, DMT_M_DONTNEED_TOKENS, "fexit/sock_devmem_dontneed");
	/* tokens through the cmsg writer (no 0009) */
	assert_true(dmt_tokens_tracked(&r));
	EXACT(av, DMT_M_BIND_HELD_BY_SOCKETS,
	      "fexit/put_cmsg_notrunc, fentry/tcp_recvmsg+sock_devmem_dontneed");
	EXACT(av, DMT_M_RECVMSG_TOKENS, "fexit/tcp_recvmsg");
	EXACT(av, DMT_M_DONTNEED_COST, "fentry+fexit/sock_devmem_dontneed");
	/* only fexit on the provider: still fentry mode */
	tp_only(&r);
	on(&r, DMT_H_MP_ALLOC_EXIT);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_FENTRY);
}

static void test_devmem_tracepoints(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	tp_only(&r);
	with_fentry(&r);
	with_devmem_tp(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_DEVMEM_TP);
	EXACT(av, DMT_M_BIND_LIFECYCLE, "tp_btf/devmem_binding_*");
	EXACT(av, DMT_M_BIND_OCCUPANCY, "tp_btf/devmem_* free_niovs");
	EXACT(av, DMT_M_BIND_ALLOC_FAIL, "tp_btf/devmem_alloc_fail");
	EXACT(av, DMT_M_BIND_PROVIDER_CALLS, "tp_btf/devmem_alloc");
	EXACT(av, DMT_M_BIND_LEAKS, "tp_btf/devmem_binding_unbind/free");
	EXACT(av, DMT_M_DONTNEED_TOKENS, "tp_btf/devmem_dontneed");
	/* latency needs fentry in every mode */
	EXACT(av, DMT_M_BIND_ALLOC_LATENCY, "fentry+fexit/mp_dmabuf_devmem_alloc_netmems");
	/* devmem tracepoints without fentry: latency unavailable, the rest exact */
	tp_only(&r);
	with_devmem_tp(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_DEVMEM_TP);
	EXACT(av, DMT_M_BIND_LEAKS, "tp_btf/devmem_binding_unbind/free");
	UNAVAIL(av, DMT_M_BIND_ALLOC_LATENCY, EPERM_WHY);
	/* a kernel with devmem_alloc but no devmem_alloc_fail: the fexit fallback */
	off(&r, DMT_H_DM_ALLOC_FAIL, "tracepoint devmem_alloc_fail not in this kernel");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_ALLOC_FAIL, EPERM_WHY);
	/* devmem_alloc alone is not the devmem-tracepoints mode */
	off(&r, DMT_H_DM_CREATE, "tracepoint devmem_binding_create not in this kernel");
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_TP_ONLY);
}

static void test_token_sources(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	/* 0009's tracepoints */
	tp_only(&r);
	r.tok_fallback = false;
	on(&r, DMT_H_TOK_TP_RECV);
	on(&r, DMT_H_TOK_TP_DONTNEED);
	on(&r, DMT_H_TOK_TP_RELEASE);
	dmt_availability__decide(&r, av);
	assert_true(dmt_tokens_tracked(&r));
	EXACT(av, DMT_M_BIND_HELD_BY_SOCKETS, "tp_btf/devmem_token_* (kernel-patches/0009)");
	/* the binding's hand-out counters come from the same events */
	EXACT(av, DMT_M_BIND_TOKEN_EVENTS, "tp_btf/devmem_token_* (kernel-patches/0009)");
	/* tokens per recvmsg need fexit/tcp_recvmsg even then */
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, EPERM_WHY);
	/* one tracepoint missing: the reason names the source */
	off(&r, DMT_H_TOK_TP_RECV, "attach devmem_token_recv failed: Invalid argument");
	dmt_availability__decide(&r, av);
	assert_false(dmt_tokens_tracked(&r));
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS,
		"devmem_token_*: attach devmem_token_recv failed: Invalid argument");
	/* no socket-destroy hook: no source is complete */
	on(&r, DMT_H_TOK_TP_RECV);
	off(&r, DMT_H_TOK_DESTROY, "");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "tcp_destroy_sock: not attached");
	UNAVAIL(av, DMT_M_BIND_TOKEN_EVENTS, "tcp_destroy_sock: not attached");
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "tcp_destroy_sock: not attached");
	/*
	 * no token source: tcp_destroy_sock is not loaded either (nothing to
	 * forget), and the reason is the source's, not the destroy hook's
	 */
	tp_only(&r);
	off(&r, DMT_H_TOK_DESTROY, "not needed: no frag token source");
	dmt_availability__decide(&r, av);
	assert_false(dmt_tokens_tracked(&r));
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "no devmem_token_* tracepoints (0009); "
		"fallback fexit/put_cmsg_notrunc: " EPERM_WHY);
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "no devmem_token_* tracepoints (0009); "
		"fallback fexit/put_cmsg_notrunc: " EPERM_WHY);
	/* 0009's tracepoints do not need fentry/tcp_recvmsg */
	tp_only(&r);
	r.tok_fallback = false;
	on(&r, DMT_H_TOK_TP_RECV);
	on(&r, DMT_H_TOK_TP_DONTNEED);
	on(&r, DMT_H_TOK_TP_RELEASE);
	on(&r, DMT_H_TOK_RECVMSG_EXIT);
	off(&r, DMT_H_TOK_RECVMSG_ENTRY, "not needed: devmem_token_recv opens the call's count");
	dmt_availability__decide(&r, av);
	EXACT(av, DMT_M_RECVMSG_TOKENS, "fexit/tcp_recvmsg");
	/* the fallback without its DONTNEED reader */
	tp_only(&r);
	with_fentry(&r);
	off(&r, DMT_H_TOK_DONTNEED_ENTRY, "attach sock_devmem_dontneed failed: Busy");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "no devmem_token_* tracepoints (0009); "
		"fallback fentry/sock_devmem_dontneed: attach sock_devmem_dontneed failed: Busy");
	UNAVAIL(av, DMT_M_DONTNEED_COST, "attach sock_devmem_dontneed failed: Busy");
	/* tracked, but fexit/tcp_recvmsg missing: only tokens per recvmsg go */
	on(&r, DMT_H_TOK_DONTNEED_ENTRY);
	off(&r, DMT_H_TOK_RECVMSG_EXIT, "attach tcp_recvmsg failed: Busy");
	dmt_availability__decide(&r, av);
	assert_true(av[DMT_M_BIND_HELD_BY_SOCKETS].available);
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "attach tcp_recvmsg failed: Busy");
}

static void test_light(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;
	char why[256];

	light(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_LIGHT);
	EXACT(av, DMT_M_POOL_HOLDS, "pool->pages_state_hold_cnt at snapshot");
	EXACT(av, DMT_M_POOL_RELEASES, "pool->pages_state_release_cnt at snapshot");
	EXACT(av, DMT_M_POOL_INFLIGHT, "pool hold - release counters at snapshot");
	assert_true(av[DMT_M_POOL_REFILL].available);
	assert_true(av[DMT_M_POOL_REFILL].sampled);
	assert_string_equal(av[DMT_M_POOL_REFILL].source,
			    "page_pool_state_hold 20ms every 10000ms");
	EXACT(av, DMT_M_BIND_OCCUPANCY, "binding walk at snapshot");
	EXACT(av, DMT_M_BIND_IN_POOLS, "sum of the binding's pools' inflight");
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "per-token hook: not attached in light mode");
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "per-token hook: not attached in light mode");
	UNAVAIL(av, DMT_M_DONTNEED_COST, "per-token hook: not attached in light mode");
	UNAVAIL(av, DMT_M_BIND_FREE_LATENCY, "per-niov hook: not attached in light mode");
	UNAVAIL(av, DMT_M_BIND_PROVIDER_CALLS, EPERM_WHY);
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), 0);
	/* the token iterator: held tokens exact at snapshot time, the rest stays off */
	r.tok_iter = true;
	dmt_availability__decide(&r, av);
	EXACT(av, DMT_M_BIND_HELD_BY_SOCKETS, "iter/tcp: sk_user_frags at snapshot");
	/* a kernel with net_iov.uref: manual-mode sockets' tokens from the walk too */
	r.tok_uref = true;
	dmt_availability__decide(&r, av);
	EXACT(av, DMT_M_BIND_HELD_BY_SOCKETS,
	      "iter/tcp: sk_user_frags + net_iov uref walk at snapshot");
	r.tok_uref = false;
	/*
	 * the walk sees what is held, not what was handed out or returned: the
	 * binding's token counters stay unknown (they read 0 and passed a gate)
	 */
	UNAVAIL(av, DMT_M_BIND_TOKEN_EVENTS, "per-token hook: not attached in light mode");
	UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "per-token hook: not attached in light mode");
	/* the iterator refused: its reason, not the per-token hooks' */
	r.tok_iter = false;
	snprintf(r.tok_iter_why, sizeof(r.tok_iter_why), "iter/tcp: load refused: %s",
		 "Operation not permitted");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_HELD_BY_SOCKETS, "iter/tcp: load refused: Operation not permitted");
	r.tok_iter_why[0] = '\0';
	/* with the devmem tracepoints: refills of devmem pools are every one */
	with_devmem_tp(&r);
	off(&r, DMT_H_DM_NIOV_FREE, "per-niov hook: not attached in light mode");
	dmt_availability__decide(&r, av);
	assert_string_equal(av[DMT_M_POOL_REFILL].source,
			    "devmem: devmem_alloc; pages: hold tp 20ms/10000ms");
	assert_true(av[DMT_M_POOL_REFILL].sampled);
	EXACT(av, DMT_M_BIND_PROVIDER_CALLS, "tp_btf/devmem_alloc; frees: pool counters");
	/* light's occupancy is the walk's, even with devmem tracepoints */
	EXACT(av, DMT_M_BIND_OCCUPANCY, "binding walk at snapshot");
	off(&r, DMT_H_WALK_BINDING, "BPF load failed (Invalid argument); "
	    "run with -vv for the verifier log");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_OCCUPANCY, "BPF load failed (Invalid argument); "
		"run with -vv for the verifier log");
}

static void test_no_devmem_no_netlink(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	for (int l = 0; l < 2; l++) {
		if (l)
			light(&r);
		else
			tp_only(&r);
		r.have_devmem = false;
		r.netlink = false;
		snprintf(r.nl_why, sizeof(r.nl_why), "disabled by --no-netlink");
		dmt_availability__decide(&r, av);
		for (int m = DMT_M_BIND_LIFECYCLE; m <= DMT_M_DONTNEED_TOKENS; m++)
			UNAVAIL(av, m, "kernel has no devmem (CONFIG_NET_DEVMEM)");
		UNAVAIL(av, DMT_M_RECVMSG_TOKENS, "kernel has no devmem (CONFIG_NET_DEVMEM)");
		UNAVAIL(av, DMT_M_DONTNEED_COST, "kernel has no devmem (CONFIG_NET_DEVMEM)");
		UNAVAIL(av, DMT_M_NETLINK, "disabled by --no-netlink");
		assert_true(av[DMT_M_POOL_HOLDS].available);
	}
}

/*
 * The netdev genl figures (issue 25): read at snapshot time whatever the
 * mode, each with the reason its request failed at start, and the
 * family's reason when there is no netlink at all.
 */
static void test_netdev_requests(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	for (int l = 0; l < 2; l++) {
		if (l)
			light(&r);
		else
			tp_only(&r);
		r.pp_stats = r.queues = r.qstats = true;
		dmt_availability__decide(&r, av);
		EXACT(av, DMT_M_POOL_STATS, "netdev genl page-pool-stats-get");
		EXACT(av, DMT_M_QUEUES, "netdev genl queue-get");
		EXACT(av, DMT_M_QSTATS, "netdev genl qstats-get");
		r.pp_stats = false;
		snprintf(r.pp_stats_why, sizeof(r.pp_stats_why), "kernel without "
			 "CONFIG_PAGE_POOL_STATS (page-pool-stats-get: Operation not supported)");
		dmt_availability__decide(&r, av);
		UNAVAIL(av, DMT_M_POOL_STATS, "kernel without CONFIG_PAGE_POOL_STATS "
			"(page-pool-stats-get: Operation not supported)");
		EXACT(av, DMT_M_QUEUES, "netdev genl queue-get");
		r.netlink = false;
		snprintf(r.nl_why, sizeof(r.nl_why), "disabled by --no-netlink");
		dmt_availability__decide(&r, av);
		UNAVAIL(av, DMT_M_POOL_STATS, "disabled by --no-netlink");
		UNAVAIL(av, DMT_M_QUEUES, "disabled by --no-netlink");
		UNAVAIL(av, DMT_M_QSTATS, "disabled by --no-netlink");
	}
}

/* The devmem mode (issue 36) on the hooks of r: the collector's view of it. */
static void devmem_mode(struct dmt_attach_result *r)
{
	r->devmem = true;
	r->hook[DMT_H_PP_HOLD].attached = false;
	r->hook[DMT_H_PP_RELEASE].attached = false;
	snprintf(r->hook[DMT_H_PP_HOLD].why, sizeof(r->hook[0].why),
		 "devmem mode: attached in sampling windows");
	snprintf(r->hook[DMT_H_PP_RELEASE].why, sizeof(r->hook[0].why),
		 "devmem mode: attached in sampling windows");
	r->hook[DMT_H_LIGHT_READ].loaded = true;
	r->hook[DMT_H_LIGHT_READ].why[0] = '\0';
}

/*
 * The devmem mode: no per-page program kept attached, pool counters exact
 * at snapshot time, and every binding figure exactly what the full mode has
 * on the same kernel (same availability, same source); only the refill
 * batches of pools of pages are sampled. Where no devmem-only hook attaches
 * (fentry refused, no devmem tracepoints) it says so per figure.
 */
static void test_devmem_mode(void **state)
{
	struct dmt_availability full[DMT_M__COUNT], av[DMT_M__COUNT];
	struct dmt_attach_result r;
	char why[256];

	/* the host: tracepoints only, fentry refused */
	tp_only(&r);
	devmem_mode(&r);
	dmt_availability__decide(&r, av);
	assert_int_equal(dmt_attach_mode__decide(&r), DMT_MODE_DEVMEM);
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), 0);
	EXACT(av, DMT_M_POOL_HOLDS, "pool->pages_state_hold_cnt at snapshot");
	EXACT(av, DMT_M_POOL_INFLIGHT, "pool hold - release counters at snapshot");
	EXACT(av, DMT_M_BIND_IN_POOLS, "sum of the binding's pools' inflight");
	assert_true(av[DMT_M_POOL_REFILL].available);
	assert_true(av[DMT_M_POOL_REFILL].sampled);
	assert_string_equal(av[DMT_M_POOL_REFILL].source, "no devmem hook: every pool 20ms/10000ms");
	UNAVAIL(av, DMT_M_BIND_ALLOC_LATENCY, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_FREE_LATENCY, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_PROVIDER_CALLS, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_ALLOC_FAIL, EPERM_WHY);
	UNAVAIL(av, DMT_M_BIND_LEAKS, EPERM_WHY);

	/* fentry (the lab's baseline kernel) and then the devmem tracepoints */
	for (int k = 0; k < 2; k++) {
		tp_only(&r);
		with_fentry(&r);
		if (k)
			with_devmem_tp(&r);
		dmt_availability__decide(&r, full);
		devmem_mode(&r);
		dmt_availability__decide(&r, av);
		assert_true(av[DMT_M_POOL_REFILL].sampled);
		assert_string_equal(av[DMT_M_POOL_REFILL].source, k ?
				    "devmem: devmem_alloc; pages: hold tp 20ms/10000ms" :
				    "devmem: provider fexit; pages: hold tp 20ms/10000ms");
		for (int m = DMT_M_BIND_LIFECYCLE; m <= DMT_M_DONTNEED_TOKENS; m++) {
			assert_true(av[m].available);
			assert_int_equal(av[m].available, full[m].available);
			assert_false(av[m].sampled);
			assert_string_equal(av[m].source, full[m].source);
		}
		EXACT(av, DMT_M_BIND_FREE_LATENCY, "fentry+fexit/mp_dmabuf_devmem_release_page");
		assert_true(av[DMT_M_RECVMSG_TOKENS].available);
		assert_true(av[DMT_M_DONTNEED_COST].available);
	}

	/* the counter reader and the pool-release tracepoint are required */
	r.hook[DMT_H_LIGHT_READ].loaded = false;
	snprintf(r.hook[DMT_H_LIGHT_READ].why, sizeof(r.hook[0].why), "BPF load failed");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "the devmem mode needs the page_pool tracepoints and "
			    "the counter reader: BPF load failed");
}

static void test_attach_check(void **state)
{
	struct dmt_attach_result r;
	char why[256];

	tp_only(&r);
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), 0);
	off(&r, DMT_H_PP_RELEASE, "attach page_pool_state_release failed: Busy");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot attach the page_pool tracepoints: "
			    "attach page_pool_state_release failed: Busy");
	off(&r, DMT_H_PP_HOLD, "");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot attach the page_pool tracepoints: not attached");
	/* light: the pool-release tracepoint and the reader, not the per-page ones */
	light(&r);
	off(&r, DMT_H_LIGHT_READ, "BPF load failed (Permission denied); "
	    "run with -vv for the verifier log");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "light mode needs the page_pool tracepoints and the "
			    "counter reader: BPF load failed (Permission denied); "
			    "run with -vv for the verifier log");
	light(&r);
	off(&r, DMT_H_PP_DESTROY, "tracepoint page_pool_release not in this kernel");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "light mode needs the page_pool tracepoints and the "
			    "counter reader: tracepoint page_pool_release not in this kernel");
	light(&r);
	r.hook[DMT_H_PP_HOLD].loaded = false;	/* windows need it loadable */
	snprintf(r.hook[DMT_H_PP_HOLD].why, sizeof(r.hook[0].why), "BPF load of pp_hold failed");
	assert_int_equal(dmt_attach__check(&r, why, sizeof(why)), -ENOENT);
	/* the reason is the missing program's own, not another's */
	assert_string_equal(why, "light mode needs the page_pool tracepoints and the "
			    "counter reader: BPF load of pp_hold failed");
}

/* The mode policy table: which --mode loads which program, and why not. */
/* TX: all five hooks exact, else the first missing one's reason */
static void test_tx(void **state)
{
	struct dmt_availability av[DMT_M__COUNT];
	struct dmt_attach_result r;

	(void)state;
	tp_only(&r);
	with_fentry(&r);
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_TX, EPERM_WHY);
	for (int h = DMT_H_TX_BIND_EXIT; h <= DMT_H_TX_REF_PUT; h++)
		on(&r, h);
	dmt_availability__decide(&r, av);
	EXACT(av, DMT_M_BIND_TX, "fentry/fexit on the devmem TX path");
	off(&r, DMT_H_TX_REF_PUT, "function net_devmem_put_net_iov not in kernel BTF");
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_TX, "function net_devmem_put_net_iov not in kernel BTF");
	r.have_devmem = false;
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_TX, "kernel has no devmem (CONFIG_NET_DEVMEM)");
	/* light mode: the per-niov reference hooks' reason, not the first hook's */
	light(&r);
	for (int h = DMT_H_TX_BIND_EXIT; h <= DMT_H_TX_REF_PUT; h++)
		off(&r, h, dmt_hook_mode_why(h, DMT_MODE_LIGHT));
	dmt_availability__decide(&r, av);
	UNAVAIL(av, DMT_M_BIND_TX, "per-niov hook: not attached in light mode");
}

static void test_mode_policy(void **state)
{
	const int modes[] = { -1, DMT_MODE_FENTRY, DMT_MODE_TP_ONLY, DMT_MODE_LIGHT,
			      DMT_MODE_DEVMEM };
	char buf[64];

	for (size_t m = 0; m < 5; m++) {
		/* the base and the walk load in every mode */
		assert_true(dmt_hook_in_mode(DMT_H_PP_HOLD, modes[m]));
		assert_true(dmt_hook_in_mode(DMT_H_PP_RELEASE, modes[m]));
		assert_true(dmt_hook_in_mode(DMT_H_PP_DESTROY, modes[m]));
		assert_true(dmt_hook_in_mode(DMT_H_PP_NID, modes[m]));
		assert_true(dmt_hook_in_mode(DMT_H_WALK_BINDING, modes[m]));
		assert_int_equal(dmt_hook_in_mode(DMT_H_LIGHT_READ, modes[m]),
				 modes[m] == DMT_MODE_LIGHT || modes[m] == DMT_MODE_DEVMEM);
	}
	/* full: everything but the light reader; devmem: everything */
	for (int h = 0; h < DMT_H__COUNT; h++) {
		assert_int_equal(dmt_hook_in_mode(h, -1), h != DMT_H_LIGHT_READ);
		assert_true(dmt_hook_in_mode(h, DMT_MODE_DEVMEM));
	}
	assert_string_equal(dmt_hook_mode_why(DMT_H_LIGHT_READ, -1),
			    "light and devmem modes only");
	assert_string_equal(dmt_hook_mode_why(DMT_H_LIGHT_READ, DMT_MODE_TP_ONLY),
			    "light and devmem modes only");
	/* -m fentry: no devmem or token tracepoints, fentry kept */
	for (int h = 0; h < DMT_H__COUNT; h++) {
		enum dmt_hook_group g = dmt_hooks[h].group;
		bool want = g != DMT_HG_DEVMEM_TP && g != DMT_HG_TOK_TP && g != DMT_HG_UREF_TP &&
			    g != DMT_HG_LIGHT;

		assert_int_equal(dmt_hook_in_mode(h, DMT_MODE_FENTRY), want);
		if (!want && g != DMT_HG_LIGHT)
			assert_string_equal(dmt_hook_mode_why(h, DMT_MODE_FENTRY),
					    "disabled by --mode");
	}
	/* -m tp: no fentry either; the socket-destroy hook stays */
	for (int h = 0; h < DMT_H__COUNT; h++) {
		enum dmt_hook_group g = dmt_hooks[h].group;
		bool want = g == DMT_HG_POOL || g == DMT_HG_WALK || g == DMT_HG_TOK;

		assert_int_equal(dmt_hook_in_mode(h, DMT_MODE_TP_ONLY), want);
	}
	/* light: per-niov and per-token programs off, with their reasons */
	for (int h = 0; h < DMT_H__COUNT; h++) {
		bool per_niov = h == DMT_H_MP_RELEASE_ENTRY || h == DMT_H_MP_RELEASE_EXIT ||
				h == DMT_H_DM_NIOV_FREE || h == DMT_H_TX_NIOV_AT_EXIT ||
				h == DMT_H_TX_REF_GET || h == DMT_H_TX_REF_PUT;
		enum dmt_hook_group g = dmt_hooks[h].group;
		bool per_tok = g == DMT_HG_TOK_TP || g == DMT_HG_TOK_FENTRY || g == DMT_HG_TOK ||
			       g == DMT_HG_UREF_TP;
		/* the TX figures need all five: the per-call two are off too */
		bool tx = g == DMT_HG_TX;

		assert_int_equal(dmt_hook_in_mode(h, DMT_MODE_LIGHT), !per_niov && !per_tok && !tx);
		if (tx && !per_niov)
			assert_string_equal(dmt_hook_mode_why(h, DMT_MODE_LIGHT),
					    "disabled by --mode");
		if (per_niov)
			assert_string_equal(dmt_hook_mode_why(h, DMT_MODE_LIGHT),
					    "per-niov hook: not attached in light mode");
		if (per_tok)
			assert_string_equal(dmt_hook_mode_why(h, DMT_MODE_LIGHT),
					    "per-token hook: not attached in light mode");
		/* only the per-page pair is attached in windows */
		assert_int_equal(dmt_hooks[h].window,
				 h == DMT_H_PP_HOLD || h == DMT_H_PP_RELEASE);
		assert_non_null(dmt_hooks[h].name);
		assert_non_null(dmt_hooks[h].target);
	}
	assert_string_equal(dmt_hook_target(DMT_H_TOK_CMSG_EXIT, buf, sizeof(buf)),
			    "fexit/put_cmsg_notrunc");
	assert_string_equal(dmt_hook_target(DMT_H_MP_ALLOC_ENTRY, buf, sizeof(buf)),
			    "fentry/mp_dmabuf_devmem_alloc_netmems");
	assert_string_equal(dmt_hook_target(DMT_H_PP_HOLD, buf, sizeof(buf)),
			    "tp_btf/page_pool_state_hold");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracepoint_only),
		cmocka_unit_test(test_fentry),
		cmocka_unit_test(test_devmem_tracepoints),
		cmocka_unit_test(test_token_sources),
		cmocka_unit_test(test_light),
		cmocka_unit_test(test_no_devmem_no_netlink),
		cmocka_unit_test(test_netdev_requests),
		cmocka_unit_test(test_devmem_mode),
		cmocka_unit_test(test_attach_check),
		cmocka_unit_test(test_mode_policy),
		cmocka_unit_test(test_tx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
