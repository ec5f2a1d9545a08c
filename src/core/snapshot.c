// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot memory: plain data, no libbpf, so the recording reader and its
 * fuzz target can use it without the collector.
 */
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
#include "util.h"

void snapshot__free(struct dmt_snapshot *s)
{
	if (!s)
		return;
	free(s->pools);
	free(s->bindings);
	free(s->progs);
	free(s->holders);
	free(s);
}

struct dmt_snapshot *snapshot__dup(const struct dmt_snapshot *s)
{
	struct dmt_snapshot *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = *s;
	d->pools = NULL;
	d->bindings = NULL;
	d->progs = NULL;
	d->holders = NULL;
	if (s->n_pools && !(d->pools = malloc(s->n_pools * sizeof(*s->pools))))
		goto err;
	if (s->n_bindings && !(d->bindings = malloc(s->n_bindings * sizeof(*s->bindings))))
		goto err;
	if (s->n_progs && !(d->progs = malloc(s->n_progs * sizeof(*s->progs))))
		goto err;
	if (s->n_holders && !(d->holders = malloc(s->n_holders * sizeof(*s->holders))))
		goto err;
	if (s->n_holders)
		memcpy(d->holders, s->holders, s->n_holders * sizeof(*s->holders));
	if (s->n_pools)
		memcpy(d->pools, s->pools, s->n_pools * sizeof(*s->pools));
	if (s->n_bindings)
		memcpy(d->bindings, s->bindings, s->n_bindings * sizeof(*s->bindings));
	if (s->n_progs)
		memcpy(d->progs, s->progs, s->n_progs * sizeof(*s->progs));
	return d;
err:
	snapshot__free(d);
	return NULL;
}
static const char *const metric_names[DMT_M__COUNT] = {
	[DMT_M_POOL_HOLDS]		= "pool_holds",
	[DMT_M_POOL_RELEASES]		= "pool_releases",
	[DMT_M_POOL_INFLIGHT]		= "pool_inflight",
	[DMT_M_POOL_REFILL]		= "pool_refill_batch",
	[DMT_M_POOL_DESTROY]		= "pool_destroy",
	[DMT_M_POOL_NID]		= "pool_nid",
	[DMT_M_BIND_LIFECYCLE]		= "binding_lifecycle",
	[DMT_M_BIND_OCCUPANCY]		= "binding_occupancy",
	[DMT_M_BIND_IN_POOLS]		= "binding_in_pools",
	[DMT_M_BIND_HELD_BY_SOCKETS]	= "binding_held_by_sockets",
	[DMT_M_BIND_ALLOC_LATENCY]	= "binding_alloc_latency",
	[DMT_M_BIND_FREE_LATENCY]	= "binding_free_latency",
	[DMT_M_BIND_ALLOC_FAIL]		= "binding_alloc_failures",
	[DMT_M_BIND_PROVIDER_CALLS]	= "binding_provider_calls",
	[DMT_M_BIND_LEAKS]		= "binding_leaks",
	[DMT_M_DONTNEED_TOKENS]		= "dontneed_tokens",
	[DMT_M_NETLINK]			= "netlink_page_pools",
	[DMT_M_RECVMSG_TOKENS]		= "recvmsg_tokens",
	[DMT_M_DONTNEED_COST]		= "dontneed_cost",
	[DMT_M_POOL_STATS]		= "netlink_page_pool_stats",
	[DMT_M_QUEUES]			= "netlink_queues",
	[DMT_M_QSTATS]			= "netlink_qstats",
	[DMT_M_BIND_TOKEN_EVENTS]	= "binding_token_events",
	[DMT_M_BIND_TX]			= "binding_tx",
	[DMT_M_ZCRX_CALLS]		= "zcrx_calls",
	[DMT_M_ZCRX_AREA]		= "zcrx_area",
};

bool dmt_binding_tok_counts_known(const struct dmt_binding_snap *b)
{
	return b->held_why != DMT_HELD_MISSED_RUNS && b->held_why != DMT_HELD_DONTNEED_MISMATCH;
}

const char *dmt_held_why_text(uint32_t why)
{
	static const char *const text[] = {
		[DMT_HELD_ATTACHED_LATE] = "binding created before devmemtop attached: "
					   "earlier tokens unseen",
		[DMT_HELD_MAP_FULL] = "token or holder map full: some tokens were not tracked",
		[DMT_HELD_NO_SOCKET] = "fallback: a token cmsg was written outside tcp_recvmsg",
		[DMT_HELD_DONTNEED_MISMATCH] = "fallback: a DONTNEED freed other tokens than "
					       "the ranges named",
		[DMT_HELD_ITER_INCOMPLETE] = "snapshot-time token walk incomplete: a bound, a "
					     "failed read or tokens outside the xarrays (-vv says "
					     "which)",
		[DMT_HELD_OTHER_NETNS] = "the binding's device is in another network "
					 "namespace than devmemtop: light mode's socket walk "
					 "reads only its own",
		[DMT_HELD_UREF_INCOMPLETE] = "tokens without SO_DEVMEM_AUTORELEASE not read: "
					     "the walk of the binding's net_iov uref counts hit a "
					     "bound, failed or could not run (-vv says which)",
		[DMT_HELD_NO_UREF] = "unavailable: kernel without net_iov.uref: a socket reads "
				     "this binding with SO_DEVMEM_AUTORELEASE off, its tokens are "
				     "counted nowhere devmemtop can read",
		[DMT_HELD_TX] = "unavailable: a TX binding (bind-tx): its niovs are sent "
				"from, never allocated to RX pools or handed out as tokens",
		[DMT_HELD_MISSED_RUNS] = "a frag token program was skipped by the kernel (it "
					 "would have nested in itself on a CPU): some token "
					 "events were not seen",
	};

	return why < sizeof(text) / sizeof(text[0]) ? text[why] : "unknown reason";
}

const char *dmt_metric_name(enum dmt_metric m)
{
	return m < DMT_M__COUNT ? metric_names[m] : "unknown";
}

const char *dmt_avail_method(const struct dmt_availability *a)
{
	if (!a->available)
		return "unavailable";
	return a->sampled ? "sampled" : "exact";
}

const char *dmt_mode_name(enum dmt_attach_mode m)
{
	switch (m) {
	case DMT_MODE_DEVMEM_TP:
		return "devmem-tracepoints";
	case DMT_MODE_FENTRY:
		return "fentry";
	case DMT_MODE_TP_ONLY:
		return "tracepoint-only";
	case DMT_MODE_LIGHT:
		return "light";
	case DMT_MODE_DEVMEM:
		return "devmem";
	}
	return "unknown";
}

const char *dmt_kind_name(enum dmt_pool_kind k)
{
	static const char *const names[] = { "pages", "devmem", "io_uring", "other" };

	return k < ARRAY_SIZE(names) ? names[k] : "unknown";
}

const char *dmt_pool_state_name(enum dmt_pool_state s)
{
	static const char *const names[] = { "alive", "zombie", "destroyed" };

	return s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *dmt_attr_src_name(enum dmt_attr_src s)
{
	static const char *const names[] = { "none", "bpf-netdev", "bpf-napi", "netlink",
					     "bpf-device" };

	return s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

