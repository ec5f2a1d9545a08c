/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which metrics are exact, sampled or unavailable (and why), decided from
 * what attached: a pure function, so every mode and fallback is unit-tested
 * without a kernel. The collector fills a struct dmt_attach_result as it
 * probes, loads and attaches, and calls these per snapshot.
 *
 *   struct dmt_attach_result r = { .light = ..., .hook[DMT_H_PP_HOLD] = {...} };
 *   dmt_availability__decide(&r, snap->avail);
 *   mode = dmt_attach_mode__decide(&r);
 *   err = dmt_attach__check(&r, why, sizeof(why));   0 or -ENOENT + why
 */
#ifndef DEVMEMTOP_AVAILABILITY_H
#define DEVMEMTOP_AVAILABILITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hooks.h"
#include "snapshot.h"

struct dmt_hook_result {
	bool loaded;
	bool attached;
	char why[160];		/* why not wanted / not loaded / not attached */
};

struct dmt_attach_result {
	bool light;		/* -m light */
	bool devmem;		/* -m devmem: no per-page program outside windows */
	bool have_devmem;	/* kernel has struct net_devmem_dmabuf_binding */
	bool tok_fallback;	/* tokens from the cmsg writer, not 0009's tracepoints */
	bool netlink;		/* netdev genl socket open */
	char nl_why[128];	/* why not */
	bool tok_iter;		/* light mode: held tokens from iter/tcp at snapshot time */
	bool tok_uref;		/* ... and of manual-mode sockets from the net_iov uref walk */
	char tok_iter_why[128];	/* why not */
	/* the other netdev genl requests, probed once at start (why: why not) */
	bool pp_stats;		/* page-pool-stats-get (CONFIG_PAGE_POOL_STATS) */
	char pp_stats_why[128];
	bool queues;		/* queue-get */
	char queues_why[128];
	bool qstats;		/* qstats-get */
	char qstats_why[128];
	uint64_t window_ns, period_ns;	/* light and devmem modes' sampling windows */
	struct dmt_hook_result hook[DMT_H__COUNT];
};

/* Fill av[DMT_M__COUNT]: one place, used by every output. */
void dmt_availability__decide(const struct dmt_attach_result *r,
			      struct dmt_availability *av);
/* Does the token tracker see every hand-out, return and release? */
bool dmt_tokens_tracked(const struct dmt_attach_result *r);
/* The attach mode the snapshot reports. */
enum dmt_attach_mode dmt_attach_mode__decide(const struct dmt_attach_result *r);
/*
 * The minimum the chosen mode needs: the per-page tracepoints attached
 * (full), or the counter reader, the pool-release tracepoint and loadable
 * window programs (light). 0, or -ENOENT with the reason in why.
 */
int dmt_attach__check(const struct dmt_attach_result *r, char *why, size_t len);

#endif /* DEVMEMTOP_AVAILABILITY_H */
