/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The snapshot model: what one collection of the kernel's page pools,
 * devmem bindings and frag tokens looks like, with the availability of
 * every metric. The collector (src/collector/) fills it; everything in
 * src/core/ (builder, metric table, formats, gate, recordings) and every
 * command reads it. Nothing here knows libbpf.
 *
 *   snapshot__dup(s) / snapshot__free(s)
 */
#ifndef DEVMEMTOP_SNAPSHOT_H
#define DEVMEMTOP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "devmemtop.h"
#include "hist.h"
#include "tokens.h"

/* Metrics whose availability depends on what attached. */
enum dmt_metric {
	DMT_M_POOL_HOLDS = 0,		/* page_pool_state_hold */
	DMT_M_POOL_RELEASES,		/* page_pool_state_release */
	DMT_M_POOL_INFLIGHT,		/* hold - release counters */
	DMT_M_POOL_REFILL,		/* refill batch histogram */
	DMT_M_POOL_DESTROY,		/* page_pool_release: zombies, leaks */
	DMT_M_POOL_NID,			/* page_pool_update_nid */
	DMT_M_BIND_LIFECYCLE,		/* binding create / unbind / free */
	DMT_M_BIND_OCCUPANCY,		/* total / free niovs */
	DMT_M_BIND_IN_POOLS,		/* niovs held by page pools */
	DMT_M_BIND_HELD_BY_SOCKETS,	/* niovs handed to user space */
	DMT_M_BIND_ALLOC_LATENCY,	/* provider alloc call latency */
	DMT_M_BIND_FREE_LATENCY,	/* provider release latency */
	DMT_M_BIND_ALLOC_FAIL,		/* failed allocations */
	DMT_M_BIND_PROVIDER_CALLS,	/* provider calls, niovs per call */
	DMT_M_BIND_LEAKS,		/* niovs out at unbind / free */
	DMT_M_DONTNEED_TOKENS,		/* SO_DEVMEM_DONTNEED tokens */
	DMT_M_NETLINK,			/* netdev genl page-pool-get */
	DMT_M_RECVMSG_TOKENS,		/* frag tokens per tcp_recvmsg */
	DMT_M_DONTNEED_COST,		/* tokens and latency per DONTNEED call */
	DMT_M_POOL_STATS,		/* netdev genl page-pool-stats-get */
	DMT_M_QUEUES,			/* netdev genl queue-get: RX queue -> binding */
	DMT_M_QSTATS,			/* netdev genl qstats-get */
	DMT_M_BIND_TOKEN_EVENTS,	/* tokens handed/returned/released, rx bytes */
	DMT_M_BIND_TX,			/* devmem TX: sends, bytes, errors, skb references */
	DMT_M_ZCRX_CALLS,		/* io_uring zcrx pools' provider calls */
	DMT_M_ZCRX_AREA,		/* io_uring zcrx areas and refill ring, at snapshot time */
	DMT_M__COUNT,
};

/* Why light mode has no token events (availability reason) */
#define DMT_LIGHT_NO_TOKENS "per-token hook: not attached in light mode"

/* Why a binding's held tokens are unknown although the hooks are there. */
enum dmt_held_why {
	DMT_HELD_NO_REASON = 0,		/* known, or the metric is unavailable */
	DMT_HELD_ATTACHED_LATE,		/* binding created before the tool attached */
	DMT_HELD_MAP_FULL,		/* the token map was full: tokens untracked */
	DMT_HELD_NO_SOCKET,		/* fallback: a token cmsg outside tcp_recvmsg */
	DMT_HELD_DONTNEED_MISMATCH,	/* fallback: DONTNEED freed other tokens */
	DMT_HELD_ITER_INCOMPLETE,	/* light: the snapshot-time walk hit a bound */
	DMT_HELD_OTHER_NETNS,		/* light: device in a netns the walk does not see */
	DMT_HELD_UREF_INCOMPLETE,	/* light: the binding's net_iov uref walk failed */
	DMT_HELD_NO_UREF,		/* light: autorelease off on a kernel without uref */
	DMT_HELD_TX,			/* a TX binding: no RX tokens, no RX allocator */
	DMT_HELD_MISSED_RUNS,		/* a token program was skipped (nested on its CPU) */
};

struct dmt_availability {
	bool available;
	bool sampled;		/* available, but from sampling windows, not exact */
	char source[64];	/* e.g. "tp_btf/page_pool_state_hold" */
	char reason[160];	/* why unavailable, empty when available */
};

/* How the kernel side is attached, best first. */
enum dmt_attach_mode {
	DMT_MODE_DEVMEM_TP = 0,		/* devmem tracepoints + page_pool tps */
	DMT_MODE_FENTRY,		/* fentry/fexit + page_pool tps */
	DMT_MODE_TP_ONLY,		/* page_pool tracepoints alone */
	/*
	 * No per-page/per-niov program attached: the pools' own counters read
	 * at snapshot time, per-call hooks, sampled per-page windows.
	 */
	DMT_MODE_LIGHT,
	/*
	 * The default (issue 36): no program on the per-page page_pool
	 * tracepoints outside light mode's sampling windows. Pools of pages
	 * and the counters of devmem pools are read at snapshot time; every
	 * devmem figure comes from devmem-only hooks (the provider's alloc and
	 * release, binding lifecycle, frag tokens) exactly as in the full mode.
	 */
	DMT_MODE_DEVMEM,
};

enum dmt_pool_state {
	DMT_POOL_ALIVE = 0,
	DMT_POOL_ZOMBIE,	/* destroyed with niovs/pages still in flight */
	DMT_POOL_DESTROYED,	/* gone; reported once, then dropped */
};

enum dmt_pool_kind {
	DMT_KIND_PAGES = 0,
	DMT_KIND_DEVMEM,	/* dmabuf memory provider */
	DMT_KIND_IO_URING,	/* io_uring zcrx provider */
	DMT_KIND_OTHER,		/* another memory provider */
};

/*
 * The kernel's own page pool counters (page-pool-stats-get, kernels with
 * CONFIG_PAGE_POOL_STATS), cumulative since the pool's creation. The alloc
 * counters count allocations served from the cache (fast), slow-path calls
 * (slow: one bulk call to the page allocator; slow_high_order: one
 * high-order page), ring empty on refill, refills from the ptr_ring and
 * pages dropped on refill for a NUMA mismatch (waive); the recycle
 * counters pages put in the cache, cache full, put in the ring, ring full
 * (the page went back to the page allocator) and released because
 * someone else held a reference.
 */
enum dmt_pps {
	DMT_PPS_ALLOC_FAST = 0,
	DMT_PPS_ALLOC_SLOW,
	DMT_PPS_ALLOC_SLOW_HIGH_ORDER,
	DMT_PPS_ALLOC_EMPTY,
	DMT_PPS_ALLOC_REFILL,
	DMT_PPS_ALLOC_WAIVE,
	DMT_PPS_RECYCLE_CACHED,
	DMT_PPS_RECYCLE_CACHE_FULL,
	DMT_PPS_RECYCLE_RING,
	DMT_PPS_RECYCLE_RING_FULL,
	DMT_PPS_RECYCLE_RELEASED_REFCNT,
	DMT_PPS__COUNT,
};

struct dmt_pool_snap {
	uint64_t addr;
	uint64_t provider_priv;		/* kernel address: devmem binding */
	uint32_t id;			/* netlink id, 0 when unlisted */
	int ifindex;
	char ifname[DMT_IFNAMSIZ];
	uint32_t netns;			/* netns inode, 0 unknown */
	int queue;			/* -1 unknown */
	uint32_t napi_id;
	enum dmt_pool_kind kind;
	uint32_t binding_id;		/* devmem pools */
	enum dmt_attr_src attr_src;	/* where ifindex came from */
	bool netlink_listed;
	/*
	 * holds/releases not known: light mode lists a netlink-only pool it has
	 * not located yet (its counters count from the pool's creation, so 0
	 * would be wrong); JSON null, no Prometheus sample.
	 */
	bool counters_unknown;
	enum dmt_pool_state state;
	int nid;
	uint32_t nid_changes;

	/* since the collector started watching this pool */
	uint64_t holds;
	uint64_t releases;
	uint64_t holds_page;		/* holds split by netmem type */
	uint64_t holds_niov;
	/* per second over the last interval */
	double hold_rate;
	double release_rate;

	int64_t inflight;		/* exact: kernel hold - release counters */
	int64_t netlink_inflight;	/* -1 when not listed */
	int64_t destroy_inflight;	/* inflight at page_pool_release, -1 none */
	uint32_t destroy_retries;
	struct hist_batch refill;	/* refill batch sizes */

	/* page-pool-stats-get, -1 each when the kernel does not report them */
	int64_t pps[DMT_PPS__COUNT];
	/*
	 * Holds and slow-path allocation calls (slow + slow_high_order) over
	 * the intervals in which both were read, since the collector first
	 * saw the pool with its stats: holds / calls is the mean refill batch
	 * (rate_tracker__apply() adds each interval's differences).
	 */
	uint64_t slow_holds;
	uint64_t slow_calls;
	/* rx-alloc-fail of the RX queue the pool serves (qstats-get), -1 unknown */
	int64_t queue_alloc_fail;

	/*
	 * io_uring zcrx pools (kind io_uring) whose provider calls the zcrx
	 * hooks saw: zcrx true. Other pools: every zcrx figure unknown.
	 */
	bool zcrx;
	uint64_t zcrx_alloc_calls;	/* provider calls that returned niovs */
	uint64_t zcrx_alloc_niovs;	/* niovs they handed to the pool */
	uint64_t zcrx_alloc_fail;	/* calls that returned none */
	uint64_t zcrx_rq_refills;	/* calls that took refill ring entries */
	uint64_t zcrx_rqes;		/* refill ring entries taken */
	struct hist_log2 zcrx_alloc_lat_ns;
	struct hist_batch zcrx_rq_batch;	/* ring entries per call that took any */
	/* the interface queue at snapshot time (walk_zcrx), -1 unknown */
	int64_t zcrx_niovs;		/* in its areas */
	int64_t zcrx_free_niovs;	/* on the areas' freelists */
	int64_t zcrx_user_niovs;	/* held by user space (returned or not) */
	int64_t zcrx_rq_pending;	/* returned through the refill ring, not yet taken */
	int64_t zcrx_rq_size;		/* refill ring entries */
	uint32_t zcrx_niov_size;	/* 0 unknown */
	uint32_t zcrx_areas;		/* 0 unknown */
};

struct dmt_binding_snap {
	uint32_t id;
	int ifindex;
	char ifname[DMT_IFNAMSIZ];
	uint64_t dmabuf_size;
	uint32_t niov_size;
	const char *layout;		/* "gen_pool", "freelist", "unknown" */
	bool alive;			/* false once freed (reported once) */
	bool unbound;
	uint32_t tx;			/* 1: a TX binding (bind-tx), 0: RX */

	int64_t total_niovs;		/* -1 unknown */
	int64_t free_niovs;		/* -1 unknown */
	int64_t in_pools;		/* sum of its pools' inflight, -1 unknown */
	int64_t held_by_sockets;	/* niovs behind held tokens, -1 unknown */
	int64_t held_tokens;		/* frag tokens user space holds, -1 unknown */
	uint32_t held_why;		/* enum dmt_held_why: why both are unknown */
	double occupancy;		/* (total - free) / total, -1 unknown */
	uint32_t pools;			/* page pools using it */

	uint64_t alloc_calls;
	uint64_t alloc_niovs;
	uint64_t alloc_fail;
	uint64_t free_niovs_count;	/* niov releases seen */
	int64_t out_at_unbind;		/* -1 not seen */
	int64_t out_at_free;		/* leaked at free, -1 not seen */
	/* CLOCK_MONOTONIC ns of the lifecycle events, 0 not seen */
	uint64_t created_ns;
	uint64_t unbound_ns;
	uint64_t freed_ns;
	struct hist_log2 alloc_lat_ns;
	struct hist_log2 alloc_lat_niov_ns;
	struct hist_log2 free_lat_ns;
	/* frag tokens since attach: handed - returned - released = held */
	uint64_t tok_handed;
	uint64_t tok_returned;
	uint64_t tok_released;
	uint64_t rx_bytes;		/* returned by devmem recvmsg calls (compare's per-MiB figures) */
	/* SO_DEVMEM_AUTORELEASE (kernel-patches 0012) */
	uint64_t tok_drained;		/* abandoned without autorelease, drained at unbind */
	uint32_t token_mode;		/* enum dmt_token_mode bits of the frags read */
	int64_t rx_queues;		/* RX queues bound to it (queue-get), -1 unknown */
	/* a TX binding's sends since attach (DMT_M_BIND_TX; RX bindings: unknown) */
	uint64_t tx_sendmsg;		/* devmem sendmsg calls that named it */
	uint64_t tx_bytes;		/* bytes they put into skbs */
	uint64_t tx_errors;		/* sends it refused */
	int64_t tx_niov_refs;		/* references skbs hold on its niovs now, -1 unknown */
	struct hist_log2 tx_ref_time_ns;	/* per niov: first reference to last */
};

/* binding.token_mode: which SO_DEVMEM_AUTORELEASE modes its frags came in */
enum dmt_token_mode {
	DMT_TOKMODE_AUTORELEASE	= 1 << 0,	/* token = id in the socket's xarray */
	DMT_TOKMODE_MANUAL	= 1 << 1,	/* token = niov index, counted per niov */
};

struct dmt_prog_stat {
	char name[64];
	bool attached;
	uint64_t run_time_ns;	/* needs kernel.bpf_stats_enabled */
	uint64_t run_cnt;
};

struct dmt_snapshot {
	uint64_t ts_ns;			/* CLOCK_MONOTONIC */
	uint64_t wall_ns;		/* CLOCK_REALTIME */
	double interval_s;		/* since the previous snapshot, 0 first */
	uint64_t seq;
	enum dmt_attach_mode mode;
	struct dmt_availability avail[DMT_M__COUNT];

	size_t n_pools;
	struct dmt_pool_snap *pools;
	size_t n_bindings;
	struct dmt_binding_snap *bindings;

	/* sockets holding frag tokens, most tokens first */
	size_t n_holders;
	struct dmt_holder_snap *holders;
	struct dmt_tok_cost tok_cost;

	uint64_t dontneed_tokens;
	uint64_t dontneed_calls;
	uint64_t provider_calls;

	/* queue-get: RX queues with and without a dmabuf binding, -1 unknown */
	int64_t rxq_bound;
	int64_t rxq_unbound;
	/* qstats-get: rx-alloc-fail summed over the devices reporting it, -1 none */
	int64_t rx_alloc_fail;

	/* tool health */
	uint64_t ringbuf_drops;
	uint64_t map_full;		/* pools/bindings we could not track */
	uint64_t lat_missed;		/* exits with no matching entry */
	uint64_t tx_no_binding;		/* devmem sends naming no TX binding */
	uint64_t tx_ref_lost;		/* TX niov references not timed */
	bool bpf_stats_enabled;
	size_t n_progs;
	struct dmt_prog_stat *progs;
	uint64_t collect_ns;		/* time this snapshot took */
};

void snapshot__free(struct dmt_snapshot *s);
struct dmt_snapshot *snapshot__dup(const struct dmt_snapshot *s);

const char *dmt_metric_name(enum dmt_metric m);
/* One line for a binding's held_why; NULL for DMT_HELD_NO_REASON. */
const char *dmt_held_why_text(uint32_t why);
/*
 * A binding's token counts (handed, returned, released, drained) are the
 * events the hooks saw: false where they are known to have missed some
 * (a run the kernel skipped, a DONTNEED that freed other tokens than it
 * named), so the counts are not the kernel's.
 */
bool dmt_binding_tok_counts_known(const struct dmt_binding_snap *b);
/*
 * Whether the holders' hand-out history (tokens handed, returned, released,
 * the oldest token's age) is known: light mode reads held tokens from the
 * kernel's xarrays at snapshot time, and the kernel keeps no such history.
 */
static inline bool dmt_snap_holder_history(const struct dmt_snapshot *s)
{
	return s->mode != DMT_MODE_LIGHT;
}

/* "exact", "sampled" or "unavailable": how this mode measures a metric. */
const char *dmt_avail_method(const struct dmt_availability *a);
const char *dmt_mode_name(enum dmt_attach_mode m);
const char *dmt_kind_name(enum dmt_pool_kind k);
const char *dmt_pool_state_name(enum dmt_pool_state s);
const char *dmt_attr_src_name(enum dmt_attr_src s);

#endif /* DEVMEMTOP_SNAPSHOT_H */
