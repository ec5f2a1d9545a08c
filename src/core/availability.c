// SPDX-License-Identifier: GPL-2.0
/*
 * Availability: from what attached to "exact / sampled / unavailable:
 * reason" per metric. Full and light mode differ where the full mode needs
 * a per-page, per-niov or per-token program.
 */
#include <errno.h>
#include <stdio.h>
#include "availability.h"

#define NO_DEVMEM "kernel has no devmem (CONFIG_NET_DEVMEM)"

static bool att(const struct dmt_attach_result *r, enum dmt_hook h)
{
	return r->hook[h].attached;
}

static const char *why_not(const struct dmt_attach_result *r, enum dmt_hook h)
{
	return r->hook[h].why[0] ? r->hook[h].why : "not attached";
}

static void set_avail(struct dmt_availability *a, bool ok, const char *source, const char *why)
{
	a->available = ok;
	a->sampled = false;
	snprintf(a->source, sizeof(a->source), "%s", source);
	if (ok)
		a->reason[0] = '\0';
	else
		snprintf(a->reason, sizeof(a->reason), "%s", why);
}

bool dmt_tokens_tracked(const struct dmt_attach_result *r)
{
	if (!att(r, DMT_H_TOK_DESTROY))
		return false;
	if (!r->tok_fallback)
		return att(r, DMT_H_TOK_TP_RECV) && att(r, DMT_H_TOK_TP_DONTNEED) &&
		       att(r, DMT_H_TOK_TP_RELEASE);
	return att(r, DMT_H_TOK_RECVMSG_ENTRY) && att(r, DMT_H_TOK_CMSG_EXIT) &&
	       att(r, DMT_H_TOK_DONTNEED_ENTRY);
}

static void tokens_availability(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	const char *src = r->tok_fallback ?
		"fexit/put_cmsg_notrunc, fentry/tcp_recvmsg+sock_devmem_dontneed" :
		"tp_btf/devmem_token_* (kernel-patches/0009)";
	enum dmt_hook missing = !att(r, DMT_H_TOK_CMSG_EXIT) ? DMT_H_TOK_CMSG_EXIT :
				!att(r, DMT_H_TOK_RECVMSG_ENTRY) ? DMT_H_TOK_RECVMSG_ENTRY :
				DMT_H_TOK_DONTNEED_ENTRY;
	bool ok = dmt_tokens_tracked(r);
	char why[160], tgt[40];

	/* the token source's reason first: without one, tcp_destroy_sock is not loaded */
	if (!r->tok_fallback && !(att(r, DMT_H_TOK_TP_RECV) && att(r, DMT_H_TOK_TP_DONTNEED) &&
				  att(r, DMT_H_TOK_TP_RELEASE)))
		snprintf(why, sizeof(why), "devmem_token_*: %.100s", why_not(r, DMT_H_TOK_TP_RECV));
	else if (r->tok_fallback && !(att(r, DMT_H_TOK_RECVMSG_ENTRY) &&
				      att(r, DMT_H_TOK_CMSG_EXIT) &&
				      att(r, DMT_H_TOK_DONTNEED_ENTRY)))
		snprintf(why, sizeof(why),
			 "no devmem_token_* tracepoints (0009); fallback %s: %.60s",
			 dmt_hook_target(missing, tgt, sizeof(tgt)), why_not(r, missing));
	else
		snprintf(why, sizeof(why), "tcp_destroy_sock: %.100s",
			 why_not(r, DMT_H_TOK_DESTROY));
	set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], ok, src, why);
	set_avail(&av[DMT_M_BIND_TOKEN_EVENTS], ok, src, why);
	set_avail(&av[DMT_M_RECVMSG_TOKENS], ok && att(r, DMT_H_TOK_RECVMSG_EXIT),
		  "fexit/tcp_recvmsg", ok ? why_not(r, DMT_H_TOK_RECVMSG_EXIT) : why);
	set_avail(&av[DMT_M_DONTNEED_COST], att(r, DMT_H_TOK_DONTNEED_ENTRY) &&
		  att(r, DMT_H_TOK_DONTNEED_EXIT), "fentry+fexit/sock_devmem_dontneed",
		  why_not(r, att(r, DMT_H_TOK_DONTNEED_ENTRY) ? DMT_H_TOK_DONTNEED_EXIT :
			  DMT_H_TOK_DONTNEED_ENTRY));
}

/* Page pool metrics, full mode: the per-page tracepoints. */
static void pool_availability(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	set_avail(&av[DMT_M_POOL_HOLDS], att(r, DMT_H_PP_HOLD), "tp_btf/page_pool_state_hold",
		  why_not(r, DMT_H_PP_HOLD));
	set_avail(&av[DMT_M_POOL_RELEASES], att(r, DMT_H_PP_RELEASE),
		  "tp_btf/page_pool_state_release", why_not(r, DMT_H_PP_RELEASE));
	set_avail(&av[DMT_M_POOL_INFLIGHT], att(r, DMT_H_PP_HOLD) && att(r, DMT_H_PP_RELEASE),
		  "hold - release counters",
		  why_not(r, att(r, DMT_H_PP_HOLD) ? DMT_H_PP_RELEASE : DMT_H_PP_HOLD));
	set_avail(&av[DMT_M_POOL_REFILL], att(r, DMT_H_PP_HOLD),
		  "pool->alloc.count at page_pool_state_hold", why_not(r, DMT_H_PP_HOLD));
}

/*
 * Page pool metrics, light and devmem modes: exact where read at snapshot
 * time, sampled where they come from the per-page tracepoints inside the
 * sampling windows. Both modes count a devmem pool's refills at the
 * provider call (exact: the devmem_alloc tracepoint, else the provider's
 * fexit); where no provider hook attached, those are sampled like a pool
 * of pages', and the source says so.
 */
static void pool_availability_light(const struct dmt_attach_result *r,
				    struct dmt_availability *av)
{
	char sampled[64];

	snprintf(sampled, sizeof(sampled), "page_pool_state_hold %llums every %llums",
		 (unsigned long long)(r->window_ns / 1000000),
		 (unsigned long long)(r->period_ns / 1000000));
	set_avail(&av[DMT_M_POOL_HOLDS], true, "pool->pages_state_hold_cnt at snapshot", "");
	set_avail(&av[DMT_M_POOL_RELEASES], true, "pool->pages_state_release_cnt at snapshot",
		  "");
	set_avail(&av[DMT_M_POOL_INFLIGHT], true, "pool hold - release counters at snapshot", "");
	if (att(r, DMT_H_DM_ALLOC))
		snprintf(sampled, sizeof(sampled), "devmem: devmem_alloc; pages: hold tp %ums/%ums",
			 (unsigned int)(r->window_ns / 1000000),
			 (unsigned int)(r->period_ns / 1000000));
	else if (att(r, DMT_H_MP_ALLOC_EXIT))
		snprintf(sampled, sizeof(sampled), "devmem: provider fexit; pages: hold tp %ums/%ums",
			 (unsigned int)(r->window_ns / 1000000),
			 (unsigned int)(r->period_ns / 1000000));
	else if (r->devmem && r->have_devmem)
		snprintf(sampled, sizeof(sampled), "no devmem hook: every pool %ums/%ums",
			 (unsigned int)(r->window_ns / 1000000),
			 (unsigned int)(r->period_ns / 1000000));
	/* sampled as a whole as soon as any pool's batches are */
	set_avail(&av[DMT_M_POOL_REFILL], true, sampled, "");
	av[DMT_M_POOL_REFILL].sampled = true;
}

/* In pools, tokens, free latency: light mode has no per-page/niov/token program. */
static void binding_per_item(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	if (r->light) {
		set_avail(&av[DMT_M_BIND_IN_POOLS], true, "sum of the binding's pools' inflight",
			  "");
		if (r->tok_iter)
			set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], true, r->tok_uref ?
				  "iter/tcp: sk_user_frags + net_iov uref walk at snapshot" :
				  "iter/tcp: sk_user_frags at snapshot", "");
		else
			set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], false, "",
				  r->tok_iter_why[0] ? r->tok_iter_why : DMT_LIGHT_NO_TOKENS);
		/* the walk sees what is held now, not what was handed or returned */
		set_avail(&av[DMT_M_BIND_TOKEN_EVENTS], false, "", DMT_LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_RECVMSG_TOKENS], false, "", DMT_LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_DONTNEED_COST], false, "", DMT_LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_BIND_FREE_LATENCY], false, "",
			  "per-niov hook: not attached in light mode");
		return;
	}
	set_avail(&av[DMT_M_BIND_IN_POOLS],
		  r->devmem || (att(r, DMT_H_PP_HOLD) && att(r, DMT_H_PP_RELEASE)),
		  "sum of the binding's pools' inflight", why_not(r, DMT_H_PP_RELEASE));
	tokens_availability(r, av);
	set_avail(&av[DMT_M_BIND_FREE_LATENCY],
		  att(r, DMT_H_MP_RELEASE_ENTRY) && att(r, DMT_H_MP_RELEASE_EXIT),
		  "fentry+fexit/mp_dmabuf_devmem_release_page", why_not(r, DMT_H_MP_RELEASE_EXIT));
}

/*
 * Per-call binding metrics: the devmem tracepoint where the kernel has it
 * (kernel-patches/0003), else the fentry/fexit program for the same fact.
 */
static void binding_per_call(const struct dmt_attach_result *r, struct dmt_availability *av,
			     bool tp)
{
	set_avail(&av[DMT_M_BIND_ALLOC_LATENCY],
		  att(r, DMT_H_MP_ALLOC_ENTRY) && att(r, DMT_H_MP_ALLOC_EXIT),
		  "fentry+fexit/mp_dmabuf_devmem_alloc_netmems", why_not(r, DMT_H_MP_ALLOC_EXIT));
	if (tp && att(r, DMT_H_DM_ALLOC_FAIL))
		set_avail(&av[DMT_M_BIND_ALLOC_FAIL], true, "tp_btf/devmem_alloc_fail", "");
	else
		set_avail(&av[DMT_M_BIND_ALLOC_FAIL], att(r, DMT_H_MP_ALLOC_EXIT),
			  "fexit/mp_dmabuf_devmem_alloc_netmems", why_not(r, DMT_H_MP_ALLOC_EXIT));
	/* light mode: niov frees are the binding's pools' release counters */
	if (tp && att(r, DMT_H_DM_ALLOC))
		set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], true, r->light ?
			  "tp_btf/devmem_alloc; frees: pool counters" : "tp_btf/devmem_alloc", "");
	else
		set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], att(r, DMT_H_MP_ALLOC_EXIT),
			  "fexit/mp_dmabuf_devmem_alloc_netmems", why_not(r, DMT_H_MP_ALLOC_EXIT));
	if (tp && att(r, DMT_H_DM_FREE))
		set_avail(&av[DMT_M_BIND_LEAKS], true, "tp_btf/devmem_binding_unbind/free", "");
	else
		set_avail(&av[DMT_M_BIND_LEAKS], att(r, DMT_H_UNBIND_ENTRY) &&
			  att(r, DMT_H_BINDING_FREE_ENTRY),
			  "fentry/net_devmem_unbind_dmabuf + binding free",
			  why_not(r, DMT_H_BINDING_FREE_ENTRY));
	if (tp && att(r, DMT_H_DM_DONTNEED))
		set_avail(&av[DMT_M_DONTNEED_TOKENS], true, "tp_btf/devmem_dontneed", "");
	else
		set_avail(&av[DMT_M_DONTNEED_TOKENS], att(r, DMT_H_DONTNEED_EXIT),
			  "fexit/sock_devmem_dontneed", why_not(r, DMT_H_DONTNEED_EXIT));
}

/*
 * A TX binding's sends and skb references: fentry/fexit on the devmem TX
 * path, all five hooks or nothing (collector_probe.c), so the first one
 * missing says why; in light mode the reason is the group's per-niov
 * reference hooks (the others are left off with them), not "--mode".
 */
static void tx_availability(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	if (r->light && !att(r, DMT_H_TX_REF_GET)) {
		set_avail(&av[DMT_M_BIND_TX], false, "", why_not(r, DMT_H_TX_REF_GET));
		return;
	}
	for (int h = DMT_H_TX_BIND_EXIT; h <= DMT_H_TX_REF_PUT; h++) {
		if (!att(r, h)) {
			set_avail(&av[DMT_M_BIND_TX], false, "", why_not(r, h));
			return;
		}
	}
	set_avail(&av[DMT_M_BIND_TX], true, "fentry/fexit on the devmem TX path", "");
}

/*
 * io_uring zcrx pools: their provider calls from fentry/fexit on the
 * provider (every mode but -m tp: once per refill, not per niov), their
 * interface queue's areas and refill ring from the walk at snapshot time.
 * The group loads whole or not at all (collector_probe.c), so the first
 * hook missing says why; a kernel without zcrx (6.12) says so.
 */
static void zcrx_availability(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	enum dmt_hook miss = !att(r, DMT_H_ZC_ALLOC_ENTRY) ? DMT_H_ZC_ALLOC_ENTRY :
			     !att(r, DMT_H_ZC_ALLOC_EXIT) ? DMT_H_ZC_ALLOC_EXIT :
			     !r->hook[DMT_H_WALK_ZCRX].loaded ? DMT_H_WALK_ZCRX : DMT_H__COUNT;

	if (miss != DMT_H__COUNT) {
		set_avail(&av[DMT_M_ZCRX_CALLS], false, "", why_not(r, miss));
		set_avail(&av[DMT_M_ZCRX_AREA], false, "", why_not(r, miss));
		return;
	}
	set_avail(&av[DMT_M_ZCRX_CALLS], true, "fentry/fexit io_pp_zc_alloc_netmems", "");
	set_avail(&av[DMT_M_ZCRX_AREA], true, "walk of the pool's io_zcrx_ifq at snapshot time",
		  "");
}

/*
 * Binding metrics. Light mode differs where the full mode needs a per-page,
 * per-niov or per-token program: occupancy comes from the walk, in-pools
 * from the pools' counters, frag tokens and free latency are unavailable.
 */
static void binding_availability(const struct dmt_attach_result *r,
				 struct dmt_availability *av)
{
	bool tp = att(r, DMT_H_DM_ALLOC) && att(r, DMT_H_DM_CREATE);
	bool walk = r->hook[DMT_H_WALK_BINDING].loaded;

	if (!r->have_devmem) {
		for (int m = DMT_M_BIND_LIFECYCLE; m <= DMT_M_DONTNEED_TOKENS; m++)
			set_avail(&av[m], false, "", NO_DEVMEM);
		set_avail(&av[DMT_M_RECVMSG_TOKENS], false, "", NO_DEVMEM);
		set_avail(&av[DMT_M_DONTNEED_COST], false, "", NO_DEVMEM);
		set_avail(&av[DMT_M_BIND_TX], false, "", NO_DEVMEM);
		return;
	}
	if (tp)
		set_avail(&av[DMT_M_BIND_LIFECYCLE], true, "tp_btf/devmem_binding_*", "");
	else
		set_avail(&av[DMT_M_BIND_LIFECYCLE],
			  att(r, DMT_H_BIND_EXIT) && att(r, DMT_H_BINDING_FREE_ENTRY),
			  "fexit/net_devmem_bind_dmabuf", why_not(r, DMT_H_BIND_EXIT));
	if (r->light)
		set_avail(&av[DMT_M_BIND_OCCUPANCY], walk, "binding walk at snapshot",
			  why_not(r, DMT_H_WALK_BINDING));
	else if (tp)
		set_avail(&av[DMT_M_BIND_OCCUPANCY], true, "tp_btf/devmem_* free_niovs", "");
	else
		set_avail(&av[DMT_M_BIND_OCCUPANCY], walk, "bpf_loop walk of the binding",
			  why_not(r, DMT_H_WALK_BINDING));
	binding_per_item(r, av);
	binding_per_call(r, av, tp);
	tx_availability(r, av);
}

void dmt_availability__decide(const struct dmt_attach_result *r, struct dmt_availability *av)
{
	if (r->light || r->devmem)
		pool_availability_light(r, av);
	else
		pool_availability(r, av);
	set_avail(&av[DMT_M_POOL_DESTROY], att(r, DMT_H_PP_DESTROY), "tp_btf/page_pool_release",
		  why_not(r, DMT_H_PP_DESTROY));
	set_avail(&av[DMT_M_POOL_NID], att(r, DMT_H_PP_NID), "tp_btf/page_pool_update_nid",
		  why_not(r, DMT_H_PP_NID));
	binding_availability(r, av);
	zcrx_availability(r, av);
	set_avail(&av[DMT_M_NETLINK], r->netlink, "netdev genl page-pool-get", r->nl_why);
	/* read at snapshot time in every mode: no program, no per-event cost */
	set_avail(&av[DMT_M_POOL_STATS], r->netlink && r->pp_stats,
		  "netdev genl page-pool-stats-get", r->netlink ? r->pp_stats_why : r->nl_why);
	set_avail(&av[DMT_M_QUEUES], r->netlink && r->queues, "netdev genl queue-get",
		  r->netlink ? r->queues_why : r->nl_why);
	set_avail(&av[DMT_M_QSTATS], r->netlink && r->qstats, "netdev genl qstats-get",
		  r->netlink ? r->qstats_why : r->nl_why);
}

enum dmt_attach_mode dmt_attach_mode__decide(const struct dmt_attach_result *r)
{
	if (r->light)
		return DMT_MODE_LIGHT;
	if (r->devmem)
		return DMT_MODE_DEVMEM;
	if (att(r, DMT_H_DM_ALLOC) && att(r, DMT_H_DM_CREATE))
		return DMT_MODE_DEVMEM_TP;
	if (att(r, DMT_H_MP_ALLOC_EXIT) || att(r, DMT_H_BIND_EXIT))
		return DMT_MODE_FENTRY;
	return DMT_MODE_TP_ONLY;
}

int dmt_attach__check(const struct dmt_attach_result *r, char *why, size_t len)
{
	const struct dmt_hook_result *h = r->hook;

	if (r->light || r->devmem) {
		/* the first of what the mode needs that is missing, with its own reason */
		enum dmt_hook miss = !h[DMT_H_LIGHT_READ].loaded ? DMT_H_LIGHT_READ :
				     !att(r, DMT_H_PP_DESTROY) ? DMT_H_PP_DESTROY :
				     !h[DMT_H_PP_HOLD].loaded ? DMT_H_PP_HOLD :
				     !h[DMT_H_PP_RELEASE].loaded ? DMT_H_PP_RELEASE : DMT_H__COUNT;

		if (miss != DMT_H__COUNT) {
			snprintf(why, len, "%s needs the page_pool tracepoints and the counter "
				 "reader: %s", r->light ? "light mode" : "the devmem mode",
				 why_not(r, miss));
			return -ENOENT;
		}
	}
	if (!r->light && !r->devmem && (!att(r, DMT_H_PP_HOLD) || !att(r, DMT_H_PP_RELEASE))) {
		snprintf(why, len, "cannot attach the page_pool tracepoints: %s",
			 why_not(r, att(r, DMT_H_PP_HOLD) ? DMT_H_PP_RELEASE : DMT_H_PP_HOLD));
		return -ENOENT;
	}
	return 0;
}
