// SPDX-License-Identifier: GPL-2.0
/*
 * The metric table (metrics.h). Row order is output order: JSON keys and
 * Prometheus families come out in it (the families that predate the table
 * keep their place with prom_seq).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "metrics.h"

static bool used_niovs(const struct dmt_binding_snap *b, double *v)
{
	if (b->total_niovs < 0 || b->free_niovs < 0)
		return false;
	*v = (double)(b->total_niovs - b->free_niovs);
	return true;
}

/* niovs * niov_size: unknown when either is */
static bool bytes_of(double niovs, bool known, const struct dmt_binding_snap *b, double *v)
{
	if (!known || !b->niov_size)
		return false;
	*v = niovs * b->niov_size;
	return true;
}

static bool used_bytes(const void *o, double *v)
{
	const struct dmt_binding_snap *b = o;
	double n = 0;
	bool k = used_niovs(b, &n);

	return bytes_of(n, k, b, v);
}

static bool free_bytes(const void *o, double *v)
{
	const struct dmt_binding_snap *b = o;

	return bytes_of((double)b->free_niovs, b->free_niovs >= 0, b, v);
}

static bool in_pools_bytes(const void *o, double *v)
{
	const struct dmt_binding_snap *b = o;

	return bytes_of((double)b->in_pools, b->in_pools >= 0, b, v);
}

/* Light mode lists pools it has not located yet: holds and releases unknown. */
/* the TX figures: a TX binding's (an RX binding sends nothing: null, not 0) */
static bool binding_is_tx(const void *o)
{
	return ((const struct dmt_binding_snap *)o)->tx;
}

/* token counts with events missed: unknown, as held_tokens (held_reason says why) */
static bool binding_tok_counts_known(const void *o)
{
	return dmt_binding_tok_counts_known(o);
}

static bool pool_counters_known(const void *o)
{
	return !((const struct dmt_pool_snap *)o)->counters_unknown;
}

/* The destroy figures have a series only for a pool being destroyed. */
static bool pool_destroy_seen(const void *o)
{
	return ((const struct dmt_pool_snap *)o)->destroy_inflight >= 0;
}

/* The kernel's page pool counters (page-pool-stats-get), -1 each when unreported. */
static bool pps_sum(const struct dmt_pool_snap *p, const int *idx, int n, double *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (p->pps[idx[i]] < 0)
			return false;
		*v += (double)p->pps[idx[i]];
	}
	return true;
}

/*
 * Recycling: of the pages that came back to the pool, the share it kept
 * (cache or ring) rather than gave back to the page allocator (ring full,
 * or someone else still held a reference). cache_full is not an outcome:
 * such a page goes on to the ring. Unknown before any page came back.
 */
static bool pool_recycle_ratio(const void *o, double *v)
{
	static const int kept[] = { DMT_PPS_RECYCLE_CACHED, DMT_PPS_RECYCLE_RING };
	static const int lost[] = { DMT_PPS_RECYCLE_RING_FULL, DMT_PPS_RECYCLE_RELEASED_REFCNT };
	double k, l;

	if (!pps_sum(o, kept, 2, &k) || !pps_sum(o, lost, 2, &l) || k + l <= 0)
		return false;
	*v = k / (k + l);
	return true;
}

/*
 * Slow:fast: of the pool's allocations, the share that took the slow path
 * to the page allocator (slow, slow_high_order) rather than the cache
 * (fast) or a refill of it from the ring (refill). Pools of pages only: a
 * memory provider's allocations are not counted as slow (in the lab, a
 * devmem pool with 2277 provider refills reports alloc_slow 0).
 */
static bool pool_alloc_slow_ratio(const void *o, double *v)
{
	static const int slow[] = { DMT_PPS_ALLOC_SLOW, DMT_PPS_ALLOC_SLOW_HIGH_ORDER };
	static const int fast[] = { DMT_PPS_ALLOC_FAST, DMT_PPS_ALLOC_REFILL };
	double sl, f;

	if (((const struct dmt_pool_snap *)o)->kind != DMT_KIND_PAGES ||
	    !pps_sum(o, slow, 2, &sl) || !pps_sum(o, fast, 2, &f) || sl + f <= 0)
		return false;
	*v = sl / (sl + f);
	return true;
}

/* holds per slow-path call over the intervals read (rate_tracker__apply) */
static bool pool_refill_batch_mean(const void *o, double *v)
{
	const struct dmt_pool_snap *p = o;

	if (!p->slow_calls)
		return false;
	*v = (double)p->slow_holds / (double)p->slow_calls;
	return true;
}

/* io_uring zcrx figures: a zcrx pool's (another pool has none: null, not 0) */
static bool pool_is_zcrx(const void *o)
{
	return ((const struct dmt_pool_snap *)o)->zcrx;
}

/* niovs of the areas neither free nor held by user space */
static bool pool_zcrx_kernel_niovs(const void *o, double *v)
{
	const struct dmt_pool_snap *p = o;

	if (!p->zcrx || p->zcrx_niovs < 0 || p->zcrx_free_niovs < 0 || p->zcrx_user_niovs < 0)
		return false;
	*v = (double)(p->zcrx_niovs - p->zcrx_free_niovs - p->zcrx_user_niovs);
	return true;
}

#define F(field, r) .off = offsetof(struct dmt_binding_snap, field), .repr = r
#define D(fn) .repr = MR_DERIVED, .derive = fn, .integral = true
#define BH(field) .kind = MK_LOG2, .off = offsetof(struct dmt_binding_snap, field), \
		  .json_always = true
/* a page pool's field; JSON version 1 shows every pool figure */
#define PF(field, r) .obj = MO_POOL, .off = offsetof(struct dmt_pool_snap, field), .repr = r, \
		     .json_always = true
#define PH(field, k) .obj = MO_POOL, .kind = k, .off = offsetof(struct dmt_pool_snap, field), \
		     .json_always = true
/* a page pool's field that JSON shows only when available */
#define PK(field, r) .obj = MO_POOL, .off = offsetof(struct dmt_pool_snap, field), .repr = r
#define PPS(i) PK(pps[DMT_PPS_##i], MR_I64), .avail = DMT_M_POOL_STATS
#define PD(fn) .obj = MO_POOL, .repr = MR_DERIVED, .derive = fn
/* a zcrx pool's figure (issue 35): known and exported for zcrx pools only */
#define ZC(m) .known = pool_is_zcrx, .present = pool_is_zcrx, .avail = m
#define PPS_WHY "needs CONFIG_PAGE_POOL_STATS and a pool listed by page-pool-get"
#define GF(field, r) .obj = MO_GLOBAL, .off = offsetof(struct dmt_snapshot, field), .repr = r
#define NL_WHY "needs the netdev genl family to list the pool " \
	       "(CONFIG_PAGE_POOL, a netns the tool can see)"
#define DESTROY_WHY "only for a pool being destroyed while the collector runs"

const struct mdef mdefs[] = {
	/* page pools */
	{ "pool.nid", MT_GAUGE, MU_NIOVS, "NUMA node the pool allocates from (-1: no node).",
	  PF(nid, MR_S32), .avail = DMT_M_POOL_NID, .json = "nid",
	  .prom = "devmemtop_page_pool_numa_node", .prom_seq = 8 },
	{ "pool.nid_changes", MT_COUNTER, MU_NIOVS, "page_pool_update_nid events for the pool.",
	  PF(nid_changes, MR_U32), .avail = DMT_M_POOL_NID, .json = "nid_changes",
	  .prom = "devmemtop_page_pool_numa_node_changes_total", .prom_seq = 9,
	  .gate = true, .gate_help = "NUMA node changes of the pool" },
	{ "pool.holds", MT_COUNTER, MU_ITEMS,
	  "Pages or niovs the pool took (page_pool_state_hold) since the collector saw it first.",
	  PF(holds, MR_U64), .known = pool_counters_known, .avail = DMT_M_POOL_HOLDS,
	  .json = "holds", .prom = "devmemtop_page_pool_holds_total", .prom_seq = 1,
	  .gate = true, .gate_help = "pages/niovs handed out by the pool", .positive = true },
	{ "pool.releases", MT_COUNTER, MU_ITEMS,
	  "Pages or niovs the pool gave back (page_pool_state_release) since the collector saw it first.",
	  PF(releases, MR_U64), .known = pool_counters_known, .avail = DMT_M_POOL_RELEASES,
	  .json = "releases", .prom = "devmemtop_page_pool_releases_total", .prom_seq = 2,
	  .gate = true, .gate_help = "pages/niovs returned to the pool", .positive = true },
	{ "pool.holds_page", MT_COUNTER, MU_ITEMS, "Holds of pages (not niovs) by the pool.",
	  PF(holds_page, MR_U64), .known = pool_counters_known, .avail = DMT_M_POOL_HOLDS,
	  .json = "holds_page" },
	{ "pool.holds_niov", MT_COUNTER, MU_ITEMS, "Holds of niovs (not pages) by the pool.",
	  PF(holds_niov, MR_U64), .known = pool_counters_known, .avail = DMT_M_POOL_HOLDS,
	  .json = "holds_niov" },
	{ "pool.hold_rate", MT_GAUGE, MU_ITEMS, "Holds per second over the last interval.",
	  PF(hold_rate, MR_F64), .avail = DMT_M_POOL_HOLDS, .json = "hold_rate" },
	{ "pool.release_rate", MT_GAUGE, MU_ITEMS, "Releases per second over the last interval.",
	  PF(release_rate, MR_F64), .avail = DMT_M_POOL_RELEASES, .json = "release_rate" },
	{ "pool.inflight", MT_GAUGE, MU_ITEMS,
	  "Pages or niovs out of the pool: the kernel's hold minus release counters.",
	  PF(inflight, MR_S64), .avail = DMT_M_POOL_INFLIGHT, .json = "inflight",
	  .prom = "devmemtop_page_pool_inflight", .prom_seq = 3,
	  .gate = true, .gate_help = "hold - release, summed over matching pools" },
	{ "pool.netlink_inflight", MT_GAUGE, MU_ITEMS,
	  "Pages or niovs in flight as netlink page-pool-get reports them.",
	  PF(netlink_inflight, MR_I64), .avail = DMT_M_NETLINK, .json = "netlink_inflight",
	  .prom = "devmemtop_page_pool_netlink_inflight", .prom_seq = 4, .absent = NL_WHY },
	{ "pool.destroy_inflight", MT_GAUGE, MU_ITEMS,
	  "Pages or niovs still in flight at the pool's last page_pool_release (a zombie when > 0).",
	  PF(destroy_inflight, MR_I64), .avail = DMT_M_POOL_DESTROY, .json = "destroy_inflight",
	  .prom = "devmemtop_page_pool_destroy_inflight", .prom_seq = 6, .absent = DESTROY_WHY,
	  .gate = true, .gate_help = "items in flight at page_pool_release, summed",
	  .better = MB_LOWER },
	{ "pool.destroy_retries", MT_COUNTER, MU_NIOVS,
	  "page_pool_release calls for the pool (retries while pages are in flight).",
	  PF(destroy_retries, MR_U32), .avail = DMT_M_POOL_DESTROY, .json = "destroy_retries",
	  .prom = "devmemtop_page_pool_destroy_attempts_total", .prom_seq = 7,
	  .present = pool_destroy_seen, .absent = DESTROY_WHY },
	{ "pool.refill_batch", MT_GAUGE, MU_ITEMS,
	  "Pages or niovs taken per slow-path refill of the pool's alloc cache.",
	  PH(refill, MK_BATCH), .avail = DMT_M_POOL_REFILL, .json = "refill_batch",
	  .prom = "devmemtop_page_pool_refill_batch_items", .prom_seq = 5,
	  .gate = true, .gate_help = "items per page pool refill (alloc cache fill)",
	  .better = MB_HIGHER, .positive = true },

	/*
	 * The kernel's own page pool counters (page-pool-stats-get, issue 25):
	 * read at snapshot time in every mode, since the pool's creation.
	 */
	{ "pool.alloc_fast", MT_COUNTER, MU_ITEMS,
	  "Allocations served from the pool's cache (kernel page pool stats).",
	  PPS(ALLOC_FAST), .json = "alloc_fast", .prom = "devmemtop_page_pool_alloc_fast_total",
	  .absent = PPS_WHY, .rec_tag = 2 },
	{ "pool.alloc_slow", MT_COUNTER, MU_NIOVS,
	  "Slow-path allocation calls to the page allocator (one bulk refill each).",
	  PPS(ALLOC_SLOW), .json = "alloc_slow", .prom = "devmemtop_page_pool_alloc_slow_total",
	  .absent = PPS_WHY, .gate = true, .rec_tag = 3, .better = MB_LOWER },
	{ "pool.alloc_slow_high_order", MT_COUNTER, MU_NIOVS,
	  "Slow-path allocations of one high-order page.",
	  PPS(ALLOC_SLOW_HIGH_ORDER), .json = "alloc_slow_high_order",
	  .prom = "devmemtop_page_pool_alloc_slow_high_order_total", .absent = PPS_WHY,
	  .rec_tag = 4 },
	{ "pool.alloc_empty", MT_COUNTER, MU_NIOVS,
	  "Refills that found the pool's ptr_ring empty.",
	  PPS(ALLOC_EMPTY), .json = "alloc_empty", .prom = "devmemtop_page_pool_alloc_empty_total",
	  .absent = PPS_WHY, .rec_tag = 5 },
	{ "pool.alloc_refill", MT_COUNTER, MU_NIOVS,
	  "Refills of the pool's cache from its ptr_ring.",
	  PPS(ALLOC_REFILL), .json = "alloc_refill",
	  .prom = "devmemtop_page_pool_alloc_refill_total", .absent = PPS_WHY,
	  .rec_tag = 6 },
	{ "pool.alloc_waive", MT_COUNTER, MU_ITEMS,
	  "Pages from the ptr_ring dropped on refill for a NUMA node mismatch.",
	  PPS(ALLOC_WAIVE), .json = "alloc_waive", .prom = "devmemtop_page_pool_alloc_waive_total",
	  .absent = PPS_WHY, .gate = true, .rec_tag = 7, .better = MB_LOWER },
	{ "pool.recycle_cached", MT_COUNTER, MU_ITEMS, "Pages recycled into the pool's cache.",
	  PPS(RECYCLE_CACHED), .json = "recycle_cached",
	  .prom = "devmemtop_page_pool_recycle_cached_total", .absent = PPS_WHY,
	  .rec_tag = 8 },
	{ "pool.recycle_cache_full", MT_COUNTER, MU_ITEMS,
	  "Recycles that found the cache full (the page went on to the ring).",
	  PPS(RECYCLE_CACHE_FULL), .json = "recycle_cache_full",
	  .prom = "devmemtop_page_pool_recycle_cache_full_total", .absent = PPS_WHY,
	  .rec_tag = 9 },
	{ "pool.recycle_ring", MT_COUNTER, MU_ITEMS, "Pages recycled into the pool's ptr_ring.",
	  PPS(RECYCLE_RING), .json = "recycle_ring",
	  .prom = "devmemtop_page_pool_recycle_ring_total", .absent = PPS_WHY,
	  .rec_tag = 10 },
	{ "pool.recycle_ring_full", MT_COUNTER, MU_ITEMS,
	  "Pages given back to the page allocator because the ptr_ring was full "
	  "(ring-full drops).",
	  PPS(RECYCLE_RING_FULL), .json = "recycle_ring_full",
	  .prom = "devmemtop_page_pool_recycle_ring_full_total", .absent = PPS_WHY, .gate = true,
	  .rec_tag = 11, .better = MB_LOWER,
	  .col = "RFULL", .title = "ring-full drops" },
	{ "pool.recycle_released_refcnt", MT_COUNTER, MU_ITEMS,
	  "Pages released, not recycled, because another reference was held.",
	  PPS(RECYCLE_RELEASED_REFCNT), .json = "recycle_released_refcnt",
	  .prom = "devmemtop_page_pool_recycle_released_refcnt_total", .absent = PPS_WHY,
	  .gate = true, .rec_tag = 12 },
	{ "pool.recycle_ratio", MT_GAUGE, MU_RATIO,
	  "Share of pages coming back to the pool that it kept (cache or ring) rather than "
	  "freed (ring full, refcount held), since the pool's creation.",
	  PD(pool_recycle_ratio), .avail = DMT_M_POOL_STATS, .json = "recycle_ratio",
	  .prom = "devmemtop_page_pool_recycle_ratio", .absent = PPS_WHY, .gate = true,
	  .agg = MA_MAX, .better = MB_HIGHER,
	  /* the live view's pair: pages escaping the pool, and the pool going to the allocator */
	  .col = "RCY%", .title = "recycled", .top = true },
	{ "pool.alloc_slow_ratio", MT_GAUGE, MU_RATIO,
	  "Share of the pool's allocations that took the slow path (slow:fast), since its "
	  "creation (pools of pages).",
	  PD(pool_alloc_slow_ratio), .avail = DMT_M_POOL_STATS, .json = "alloc_slow_ratio",
	  .prom = "devmemtop_page_pool_alloc_slow_ratio", .absent = PPS_WHY, .gate = true,
	  .agg = MA_MAX, .better = MB_LOWER,
	  .col = "SLOW%", .title = "slow-path allocs", .top = true },
	{ "pool.slow_holds", MT_COUNTER, MU_ITEMS,
	  "Holds over the intervals in which the slow-path counters were read.",
	  PK(slow_holds, MR_U64), .avail = DMT_M_POOL_STATS, .rec_tag = 13 },
	{ "pool.slow_calls", MT_COUNTER, MU_NIOVS,
	  "Slow-path calls (slow + slow_high_order) over the same intervals.",
	  PK(slow_calls, MR_U64), .avail = DMT_M_POOL_STATS, .rec_tag = 14 },
	{ "pool.refill_batch_mean", MT_GAUGE, MU_ITEMS,
	  "Mean pages per slow-path refill: holds / slow-path calls over the intervals "
	  "read (exact in every mode; pools of pages only).",
	  PD(pool_refill_batch_mean), .avail = DMT_M_POOL_STATS, .json = "refill_batch_mean",
	  .prom = "devmemtop_page_pool_refill_batch_mean_items", .absent = PPS_WHY,
	  .gate = true, .agg = MA_MAX, .better = MB_HIGHER, .positive = true,
	  .col = "B.MEAN", .title = "mean refill batch" },
	{ "pool.queue_rx_alloc_fail", MT_COUNTER, MU_NIOVS,
	  "rx-alloc-fail of the RX queue the pool serves, as its driver reports it (qstats).",
	  PK(queue_alloc_fail, MR_I64), .avail = DMT_M_QSTATS, .json = "queue_rx_alloc_fail",
	  .prom = "devmemtop_page_pool_queue_rx_alloc_fail_total",
	  .absent = "only for drivers that report per-queue qstats", .gate = true,
	  .rec_tag = 15, .better = MB_LOWER,
	  .col = "QAFAIL", .title = "queue rx-alloc-fail" },

	/*
	 * io_uring zcrx pools (issue 35): the provider's calls since attach,
	 * and the pool's interface queue (areas, refill ring) at snapshot
	 * time. Other pools have no series and are null: not zcrx, not 0.
	 */
	{ "pool.zcrx_alloc_calls", MT_COUNTER, MU_NIOVS,
	  "zcrx provider calls that refilled the pool (from the refill ring or the area).",
	  PK(zcrx_alloc_calls, MR_U64), ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_alloc_calls",
	  .prom = "devmemtop_page_pool_zcrx_alloc_calls_total", .gate = true, .rec_tag = 16,
	  .positive = true },
	{ "pool.zcrx_alloc_niovs", MT_COUNTER, MU_ITEMS,
	  "niovs those calls handed to the pool.",
	  PK(zcrx_alloc_niovs, MR_U64), ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_alloc_niovs",
	  .prom = "devmemtop_page_pool_zcrx_alloc_niovs_total", .gate = true, .rec_tag = 17,
	  .positive = true },
	{ "pool.zcrx_alloc_fail", MT_COUNTER, MU_NIOVS,
	  "zcrx provider calls that found the refill ring and every area empty (nothing "
	  "allocated: the queue drops until user space returns buffers).",
	  PK(zcrx_alloc_fail, MR_U64), ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_alloc_fail",
	  .prom = "devmemtop_page_pool_zcrx_alloc_fail_total", .gate = true, .rec_tag = 18,
	  .better = MB_LOWER, .col = "ZC.FAIL", .title = "zcrx allocation failures" },
	{ "pool.zcrx_rq_refills", MT_COUNTER, MU_NIOVS,
	  "zcrx provider calls that took entries from the refill ring.",
	  PK(zcrx_rq_refills, MR_U64), ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_rq_refills",
	  .prom = "devmemtop_page_pool_zcrx_refill_ring_refills_total", .gate = true,
	  .rec_tag = 19 },
	{ "pool.zcrx_rq_taken", MT_COUNTER, MU_ITEMS,
	  "Refill ring entries the kernel took back (buffers user space returned).",
	  PK(zcrx_rqes, MR_U64), ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_rq_taken",
	  .prom = "devmemtop_page_pool_zcrx_refill_ring_taken_total", .gate = true,
	  .rec_tag = 20 },
	{ "pool.zcrx_alloc_latency", MT_GAUGE, MU_NS,
	  "Time per zcrx provider call (one refill of the pool's alloc cache).",
	  .obj = MO_POOL, .kind = MK_LOG2, .off = offsetof(struct dmt_pool_snap, zcrx_alloc_lat_ns),
	  ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_alloc_latency_ns",
	  .prom = "devmemtop_page_pool_zcrx_alloc_latency_seconds", .prom_div = 1e9,
	  .prom_native = "devmemtop_page_pool_zcrx_alloc_latency_nanoseconds",
	  .native_help = "Time per zcrx provider call, in nanoseconds (native histogram).",
	  .gate = true, .better = MB_LOWER, .positive = true, .rec_tag = 21 },
	{ "pool.zcrx_rq_batch", MT_GAUGE, MU_ITEMS,
	  "Refill ring entries taken per zcrx provider call that took any (the ring's refill "
	  "batch).",
	  .obj = MO_POOL, .kind = MK_BATCH, .off = offsetof(struct dmt_pool_snap, zcrx_rq_batch),
	  ZC(DMT_M_ZCRX_CALLS), .json = "zcrx_rq_batch",
	  .prom = "devmemtop_page_pool_zcrx_refill_ring_batch_entries", .gate = true,
	  .better = MB_HIGHER, .positive = true, .rec_tag = 22 },
	{ "pool.zcrx_area_niovs", MT_GAUGE, MU_NIOVS,
	  "niovs in the areas of the pool's zcrx interface queue.",
	  PK(zcrx_niovs, MR_I64), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_area_niovs",
	  .prom = "devmemtop_page_pool_zcrx_area_niovs", .gate = true, .agg = MA_MAX,
	  .rec_tag = 23 },
	{ "pool.zcrx_free_niovs", MT_GAUGE, MU_NIOVS,
	  "niovs on the areas' freelists (in no pool, not held by user space).",
	  PK(zcrx_free_niovs, MR_I64), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_free_niovs",
	  .prom = "devmemtop_page_pool_zcrx_free_niovs", .gate = true, .agg = MA_MAX,
	  .rec_tag = 24 },
	{ "pool.zcrx_user_niovs", MT_GAUGE, MU_NIOVS,
	  "niovs held by user space: handed out in completions and not yet taken back by the "
	  "kernel (returned through the refill ring or not).",
	  PK(zcrx_user_niovs, MR_I64), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_user_niovs",
	  .prom = "devmemtop_page_pool_zcrx_user_niovs", .gate = true, .agg = MA_MAX,
	  .rec_tag = 25, .col = "ZC.USER", .title = "zcrx niovs held by user space" },
	{ "pool.zcrx_rq_pending", MT_GAUGE, MU_ITEMS,
	  "Refill ring entries user space returned that the kernel has not taken yet.",
	  PK(zcrx_rq_pending, MR_I64), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_rq_pending",
	  .prom = "devmemtop_page_pool_zcrx_refill_ring_pending", .gate = true, .agg = MA_MAX,
	  .rec_tag = 26 },
	{ "pool.zcrx_kernel_niovs", MT_GAUGE, MU_NIOVS,
	  "niovs of the areas in the kernel: in the pools' caches and rings, and in skbs not "
	  "yet received (area - free - held by user space).",
	  PD(pool_zcrx_kernel_niovs), .integral = true, ZC(DMT_M_ZCRX_AREA),
	  .json = "zcrx_kernel_niovs", .prom = "devmemtop_page_pool_zcrx_kernel_niovs",
	  .gate = true, .agg = MA_MAX },
	{ "pool.zcrx_rq_size", MT_GAUGE, MU_ITEMS, "Entries of the zcrx refill ring.",
	  PK(zcrx_rq_size, MR_I64), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_rq_size",
	  .rec_tag = 27 },
	{ "pool.zcrx_niov_size", MT_GAUGE, MU_BYTES, "Bytes per niov of the zcrx areas.",
	  PK(zcrx_niov_size, MR_U32_NZ), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_niov_size",
	  .rec_tag = 28 },
	{ "pool.zcrx_areas", MT_GAUGE, MU_NIOVS, "Areas of the pool's zcrx interface queue.",
	  PK(zcrx_areas, MR_U32_NZ), ZC(DMT_M_ZCRX_AREA), .json = "zcrx_areas",
	  .rec_tag = 29 },

	/* the snapshot as a whole: kernel-wide devmem counters */
	{ "dontneed.tokens", MT_COUNTER, MU_NIOVS,
	  "Tokens (niovs) user space returned with SO_DEVMEM_DONTNEED.",
	  GF(dontneed_tokens, MR_U64), .avail = DMT_M_DONTNEED_TOKENS, .json = "dontneed_tokens",
	  .prom = "devmemtop_devmem_dontneed_tokens_total", .prom_seq = 3,
	  .gate = true, .gate_help = "tokens returned with SO_DEVMEM_DONTNEED" },
	/* the same hook counts the calls */
	{ "dontneed.calls", MT_COUNTER, MU_NIOVS, "SO_DEVMEM_DONTNEED calls.",
	  GF(dontneed_calls, MR_U64), .avail = DMT_M_DONTNEED_TOKENS, .json = "dontneed_calls",
	  .prom = "devmemtop_devmem_dontneed_calls_total", .prom_seq = 2,
	  .gate = true, .gate_help = "SO_DEVMEM_DONTNEED calls" },
	{ "devmem.provider_calls", MT_COUNTER, MU_NIOVS,
	  "Calls into the devmem memory provider's allocator.",
	  GF(provider_calls, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS,
	  .json = "provider_calls", .prom = "devmemtop_devmem_provider_calls_total",
	  .prom_seq = 1 },
	/* devmem TX (issue 35): what no TX binding's figures can carry */
	{ "devmem.tx_no_binding", MT_COUNTER, MU_ITEMS,
	  "Devmem sendmsg calls that named a dma-buf id with no TX binding (an unbound or "
	  "RX binding's id): refused with EINVAL.",
	  GF(tx_no_binding, MR_U64), .avail = DMT_M_BIND_TX, .json = "tx_no_binding",
	  .prom = "devmemtop_devmem_tx_no_binding_total", .gate = true, .better = MB_LOWER,
	  .rec_tag = 4 },
	{ "devmem.tx_refs_untimed", MT_COUNTER, MU_ITEMS,
	  "TX niov references the send-to-release histogram could not time (its map was "
	  "full, or a reference taken before the tool attached was dropped).",
	  GF(tx_ref_lost, MR_U64), .avail = DMT_M_BIND_TX, .json = "tx_refs_untimed",
	  .prom = "devmemtop_devmem_tx_refs_untimed_total", .rec_tag = 5 },
	/* queue-get and qstats-get (issue 25), at snapshot time in every mode */
	{ "queues.rx_bound", MT_GAUGE, MU_NIOVS,
	  "RX queues in the collector's network namespace bound to a dmabuf (devmem).",
	  GF(rxq_bound, MR_I64), .avail = DMT_M_QUEUES, .json = "rx_queues_bound",
	  .prom = "devmemtop_rx_queues_bound", .gate = true, .agg = MA_MAX, .rec_tag = 1,
	  .col = "RXQ.B", .title = "RX queues bound" },
	{ "queues.rx_unbound", MT_GAUGE, MU_NIOVS,
	  "RX queues in the collector's network namespace with no dmabuf binding.",
	  GF(rxq_unbound, MR_I64), .avail = DMT_M_QUEUES, .json = "rx_queues_unbound",
	  .prom = "devmemtop_rx_queues_unbound", .gate = true, .agg = MA_MAX, .rec_tag = 2,
	  .col = "RXQ.U", .title = "RX queues unbound" },
	{ "netdev.rx_alloc_fail", MT_COUNTER, MU_NIOVS,
	  "rx-alloc-fail summed over the devices whose drivers report it (qstats).",
	  GF(rx_alloc_fail, MR_I64), .avail = DMT_M_QSTATS, .json = "rx_alloc_fail",
	  .prom = "devmemtop_netdev_rx_alloc_fail_total",
	  .absent = "only when a driver reports rx-alloc-fail", .gate = true,
	  .better = MB_LOWER, .rec_tag = 3,
	  .col = "AFAIL", .title = "rx-alloc-fail" },

	/* devmem bindings */
	{ "binding.dmabuf_size", MT_GAUGE, MU_BYTES, "Size of the binding's dmabuf.",
	  F(dmabuf_size, MR_U64_NZ), .avail = -1, .json = "dmabuf_size",
	  .prom = "devmemtop_binding_dmabuf_size_bytes" },
	{ "binding.niov_size", MT_GAUGE, MU_BYTES,
	  "Size of one niov of the binding (rx-page-size).",
	  F(niov_size, MR_U32_NZ), .avail = -1, .json = "niov_size",
	  .prom = "devmemtop_binding_niov_size_bytes", .gate = true, .agg = MA_MAX,
	  .positive = true },
	{ "binding.capacity_niovs", MT_GAUGE, MU_NIOVS, "Niovs the binding has in all.",
	  F(total_niovs, MR_I64), .avail = DMT_M_BIND_OCCUPANCY, .json = "total_niovs",
	  .prom = "devmemtop_binding_capacity_niovs" },
	{ "binding.free_niovs", MT_GAUGE, MU_NIOVS, "Niovs free in the binding's allocator.",
	  F(free_niovs, MR_I64), .avail = DMT_M_BIND_OCCUPANCY, .json = "free_niovs",
	  .prom = "devmemtop_binding_free_niovs", .gate = true },
	{ "binding.in_pools", MT_GAUGE, MU_NIOVS,
	  "Niovs of the binding held by its page pools (their inflight).",
	  F(in_pools, MR_I64), .avail = DMT_M_BIND_IN_POOLS, .json = "in_pools",
	  .prom = "devmemtop_binding_pool_held_niovs", .gate = true },
	{ "binding.held_by_sockets", MT_GAUGE, MU_NIOVS,
	  "Niovs of the binding handed to user space and not yet returned.",
	  F(held_by_sockets, MR_I64), .avail = DMT_M_BIND_HELD_BY_SOCKETS,
	  .json = "held_by_sockets", .prom = "devmemtop_binding_socket_held_niovs", .gate = true },
	{ "binding.occupancy", MT_GAUGE, MU_RATIO,
	  "Share of the binding's niovs in use: (capacity - free) / capacity.",
	  F(occupancy, MR_F64), .avail = DMT_M_BIND_OCCUPANCY, .json = "occupancy",
	  .prom = "devmemtop_binding_occupancy_ratio", .gate = true, .agg = MA_MAX },
	{ "binding.page_pools", MT_GAUGE, MU_NIOVS, "Page pools using the binding.",
	  F(pools, MR_U32), .avail = -1, .json = "pools", .prom = "devmemtop_binding_page_pools" },
	{ "binding.alloc_calls", MT_COUNTER, MU_NIOVS,
	  "Provider allocation calls that returned a niov.",
	  F(alloc_calls, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "alloc_calls",
	  .prom = "devmemtop_binding_alloc_calls_total", .gate = true, .positive = true },
	{ "binding.alloc_niovs", MT_COUNTER, MU_NIOVS,
	  "Niovs handed from the binding to page pools.",
	  F(alloc_niovs, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "alloc_niovs",
	  .prom = "devmemtop_binding_alloc_niovs_total", .gate = true, .positive = true },
	{ "binding.alloc_failures", MT_COUNTER, MU_NIOVS,
	  "Allocations from the binding that failed (no free niov).",
	  F(alloc_fail, MR_U64), .avail = DMT_M_BIND_ALLOC_FAIL, .json = "alloc_failures",
	  .prom = "devmemtop_binding_alloc_failures_total", .gate = true, .better = MB_LOWER },
	{ "binding.releases", MT_COUNTER, MU_NIOVS, "Niovs given back to the binding.",
	  F(free_niovs_count, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "niov_frees",
	  .prom = "devmemtop_binding_released_niovs_total", .gate = true, .positive = true },
	{ "binding.out_at_unbind", MT_TOTAL, MU_NIOVS,
	  "Niovs not free when the binding was unbound.",
	  F(out_at_unbind, MR_I64), .avail = DMT_M_BIND_LEAKS, .json = "outstanding_at_unbind",
	  .prom = "devmemtop_binding_unbind_outstanding_niovs", .gate = true, .event = "unbound", .better = MB_LOWER },
	{ "binding.leaked_niovs", MT_TOTAL, MU_NIOVS,
	  "Niovs not free when the binding was freed (a leak); reported in one snapshot, "
	  "then dropped.",
	  F(out_at_free, MR_I64), .avail = DMT_M_BIND_LEAKS, .json = "leaked_at_free",
	  .prom = "devmemtop_binding_leaked_niovs", .gate = true, .event = "freed", .better = MB_LOWER },
	/* byte figures next to the niov counts (issue 10) */
	{ "binding.used_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes of the binding in use: (capacity - free) niovs * niov size.",
	  D(used_bytes), .avail = DMT_M_BIND_OCCUPANCY, .json = "used_bytes",
	  .prom = "devmemtop_binding_used_bytes", .gate = true },
	{ "binding.free_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes free in the binding's allocator: free niovs * niov size.",
	  D(free_bytes), .avail = DMT_M_BIND_OCCUPANCY, .json = "free_bytes",
	  .prom = "devmemtop_binding_free_bytes", .gate = true },
	{ "binding.in_pools_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes of the binding held by its page pools: their inflight * niov size.",
	  D(in_pools_bytes), .avail = DMT_M_BIND_IN_POOLS, .json = "in_pools_bytes",
	  .prom = "devmemtop_binding_pool_held_bytes", .gate = true },
	/* lifecycle times the BPF side keeps (CLOCK_MONOTONIC, like ts_ns) */
	{ "binding.created_ns", MT_GAUGE, MU_NS,
	  "When the binding was created (CLOCK_MONOTONIC ns, like ts_ns).",
	  F(created_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "created_ns",
	  .rec_tag = 1 },
	{ "binding.unbound_ns", MT_GAUGE, MU_NS,
	  "When the binding was unbound (CLOCK_MONOTONIC ns).",
	  F(unbound_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "unbound_ns",
	  .rec_tag = 2 },
	{ "binding.freed_ns", MT_GAUGE, MU_NS, "When the binding was freed (CLOCK_MONOTONIC ns).",
	  F(freed_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "freed_ns",
	  .rec_tag = 3 },
	/* frag tokens (issue 11): exact where the tool saw the binding created */
	{ "binding.held_tokens", MT_GAUGE, MU_NIOVS,
	  "Frag tokens of the binding user space holds (handed out, not yet returned).",
	  F(held_tokens, MR_I64), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .json = "held_tokens",
	  .prom = "devmemtop_binding_socket_held_tokens", .gate = true, .rec_tag = 4 },
	{ "binding.tokens_handed", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding handed to user space by recvmsg.",
	  F(tok_handed, MR_U64), .known = binding_tok_counts_known,
	  .avail = DMT_M_BIND_TOKEN_EVENTS, .json = "tokens_handed",
	  .prom = "devmemtop_binding_tokens_handed_total", .gate = true, .rec_tag = 5,
	  .positive = true },
	{ "binding.tokens_returned", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding returned with SO_DEVMEM_DONTNEED.",
	  F(tok_returned, MR_U64), .known = binding_tok_counts_known,
	  .avail = DMT_M_BIND_TOKEN_EVENTS,
	  .json = "tokens_returned", .prom = "devmemtop_binding_tokens_returned_total",
	  .gate = true, .rec_tag = 6 },
	{ "binding.tokens_released", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding never returned: dropped when their socket was destroyed.",
	  F(tok_released, MR_U64), .known = binding_tok_counts_known,
	  .avail = DMT_M_BIND_TOKEN_EVENTS,
	  .json = "tokens_released", .prom = "devmemtop_binding_tokens_released_total",
	  .gate = true, .rec_tag = 7, .better = MB_LOWER },
	/* SO_DEVMEM_AUTORELEASE off (issue 21, kernel-patches 0012) */
	{ "binding.tokens_drained", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding that sockets without SO_DEVMEM_AUTORELEASE never "
	  "returned: their references drained at unbind.",
	  F(tok_drained, MR_U64), .known = binding_tok_counts_known,
	  .avail = DMT_M_BIND_TOKEN_EVENTS, .json = "tokens_drained",
	  .prom = "devmemtop_binding_tokens_drained_total", .gate = true, .rec_tag = 20,
	  .better = MB_LOWER },
	{ "binding.token_mode", MT_GAUGE, MU_NIOVS,
	  "SO_DEVMEM_AUTORELEASE modes of the frags read from the binding: 1 autorelease "
	  "(token ids per socket), 2 without (tokens counted per niov: any socket of the "
	  "binding may return them), 3 both, 0 none yet.",
	  F(token_mode, MR_U32), .avail = DMT_M_BIND_TOKEN_EVENTS, .json = "token_mode",
	  .prom = "devmemtop_binding_token_mode", .rec_tag = 21, .agg = MA_MAX },
	/* issue 35: the JSON's "direction" and the Prometheus label say it; the
	 * row carries it through recordings (report, HTML, compare)
	 */
	{ "binding.tx", MT_GAUGE, MU_ITEMS,
	  "1 for a TX binding (bind-tx: niovs sent from), 0 for an RX binding.",
	  F(tx, MR_U32), .avail = -1, .rec_tag = 22, .agg = MA_MAX },
	/* compare (issue 20): bytes per run for cpu per GiB, niovs and calls per MiB */
	{ "binding.rx_bytes", MT_COUNTER, MU_BYTES,
	  "Bytes returned by recvmsg calls that handed out the binding's frag tokens.",
	  F(rx_bytes, MR_U64), .avail = DMT_M_BIND_TOKEN_EVENTS, .gate = true, .rec_tag = 9,
	  .positive = true },
	/* latency histograms: JSON version 1 shows them whatever the availability */
	{ "binding.alloc_latency", MT_GAUGE, MU_NS, "Time per provider allocation call.",
	  BH(alloc_lat_ns), .avail = DMT_M_BIND_ALLOC_LATENCY, .json = "alloc_latency_ns",
	  .prom = "devmemtop_binding_alloc_latency_seconds", .prom_div = 1e9,
	  .prom_native = "devmemtop_binding_alloc_latency_nanoseconds",
	  .native_help = "Time per provider allocation call (native, exact log2 buckets; "
			 "classic: _seconds).",
	  .gate = true, .gate_help = "provider allocation call latency", .better = MB_LOWER,
	  .positive = true, .title = "alloc latency", .title_long = "provider alloc latency" },
	{ "binding.alloc_latency_per_niov", MT_GAUGE, MU_NS,
	  "Time per niov within a provider allocation call.",
	  BH(alloc_lat_niov_ns), .avail = DMT_M_BIND_ALLOC_LATENCY,
	  .json = "alloc_latency_per_niov_ns",
	  .prom = "devmemtop_binding_alloc_niov_latency_seconds", .prom_div = 1e9,
	  .prom_native = "devmemtop_binding_alloc_niov_latency_nanoseconds",
	  .native_help = "Time per niov within a provider allocation call (native, exact log2 "
			 "buckets; classic: _seconds).",
	  .gate = true, .gate_help = "provider allocation latency divided by niovs returned",
	  .better = MB_LOWER, .positive = true, .title = "alloc latency per niov",
	  .title_long = "provider alloc latency per niov" },
	{ "binding.free_latency", MT_GAUGE, MU_NS, "Time to give one niov back to the binding.",
	  BH(free_lat_ns), .avail = DMT_M_BIND_FREE_LATENCY, .json = "free_latency_ns",
	  .prom = "devmemtop_binding_release_latency_seconds", .prom_div = 1e9,
	  .prom_native = "devmemtop_binding_release_latency_nanoseconds",
	  .native_help = "Time to give one niov back to the binding (native, exact log2 "
			 "buckets; classic: _seconds).",
	  .gate = true, .gate_help = "niov release latency", .better = MB_LOWER,
	  .positive = true, .title = "free latency", .title_long = "niov free latency" },
	{ "binding.held_why", MT_GAUGE, MU_NIOVS,
	  "Why held_tokens and held_by_sockets are unknown (enum dmt_held_why).",
	  F(held_why, MR_U32), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .rec_tag = 8 },
	{ "binding.rx_queues", MT_GAUGE, MU_NIOVS, "RX queues bound to the binding (queue-get).",
	  F(rx_queues, MR_I64), .avail = DMT_M_QUEUES, .json = "rx_queues",
	  .prom = "devmemtop_binding_rx_queues", .gate = true, .rec_tag = 10,
	  .col = "RXQ", .title = "RX queues", .top = true },
	/* devmem TX (issue 35): a TX binding's sends, since attach */
	{ "binding.tx_sendmsg_calls", MT_COUNTER, MU_ITEMS,
	  "Devmem sendmsg calls (SCM_DEVMEM_DMABUF) that named the TX binding.",
	  F(tx_sendmsg, MR_U64), .known = binding_is_tx, .present = binding_is_tx, .avail = DMT_M_BIND_TX,
	  .json = "tx_sendmsg_calls", .prom = "devmemtop_binding_tx_sendmsg_calls_total",
	  .gate = true, .rec_tag = 23, .positive = true },
	{ "binding.tx_bytes", MT_COUNTER, MU_BYTES,
	  "Bytes devmem sendmsg calls put into skbs from the TX binding.",
	  F(tx_bytes, MR_U64), .known = binding_is_tx, .present = binding_is_tx, .avail = DMT_M_BIND_TX,
	  .json = "tx_bytes", .prom = "devmemtop_binding_tx_bytes_total", .gate = true,
	  .rec_tag = 24, .positive = true },
	{ "binding.tx_errors", MT_COUNTER, MU_ITEMS,
	  "Devmem sends the TX binding refused: an iov offset past the end of its dma-buf, "
	  "or a route to a device it is not bound to.",
	  F(tx_errors, MR_U64), .known = binding_is_tx, .present = binding_is_tx, .avail = DMT_M_BIND_TX,
	  .json = "tx_errors", .prom = "devmemtop_binding_tx_errors_total", .gate = true,
	  .rec_tag = 25, .better = MB_LOWER },
	{ "binding.tx_niov_refs", MT_GAUGE, MU_NIOVS,
	  "References skbs in flight hold on the TX binding's niovs (a niov in two skbs "
	  "counts twice); unknown for a binding made before the tool attached.",
	  F(tx_niov_refs, MR_I64), .known = binding_is_tx, .present = binding_is_tx, .avail = DMT_M_BIND_TX,
	  .json = "tx_niov_refs", .prom = "devmemtop_binding_tx_niov_refs", .gate = true,
	  .rec_tag = 26 },
	{ "binding.tx_ref_time", MT_GAUGE, MU_NS,
	  "Time a TX niov stays referenced by skbs: from its first reference (the send) to "
	  "its last (the skb freed after the device read it).",
	  BH(tx_ref_time_ns), .known = binding_is_tx, .present = binding_is_tx, .avail = DMT_M_BIND_TX,
	  .json = "tx_ref_time_ns", .prom = "devmemtop_binding_tx_ref_time_seconds",
	  .prom_div = 1e9, .prom_native = "devmemtop_binding_tx_ref_time_nanoseconds",
	  .native_help = "Time a TX niov stays referenced by skbs (native, exact log2 "
			 "buckets; classic: _seconds).",
	  .gate = true, .gate_help = "TX niov send-to-release time", .better = MB_LOWER,
	  .positive = true, .rec_tag = 27, .title = "TX reference time",
	  .title_long = "TX niov send-to-release time" },
};

#undef F
#undef D
#undef BH
#undef PF
#undef PH
#undef GF
#undef PK
#undef PPS
#undef PD

const size_t mdef_count = sizeof(mdefs) / sizeof(mdefs[0]);

static const void *field(const struct mdef *d, const void *o)
{
	return (const char *)o + d->off;
}

uint64_t mdef_raw(const struct mdef *d, const void *o)
{
	const void *p = field(d, o);
	uint64_t u = 0;
	uint32_t u32;
	int32_t s32;
	int64_t i;
	double f;

	if (d->kind != MK_SCALAR)
		return 0;
	switch (d->repr) {
	case MR_U64:
	case MR_U64_NZ:
		memcpy(&u, p, sizeof(u));
		break;
	case MR_U32:
	case MR_U32_NZ:
		memcpy(&u32, p, sizeof(u32));
		u = u32;
		break;
	case MR_I64:
	case MR_S64:
		memcpy(&i, p, sizeof(i));
		u = (uint64_t)i;
		break;
	case MR_S32:
		memcpy(&s32, p, sizeof(s32));
		u = (uint64_t)(int64_t)s32;
		break;
	case MR_F64:
		memcpy(&f, p, sizeof(f));
		memcpy(&u, &f, sizeof(u));
		break;
	case MR_DERIVED:
		break;
	}
	return u;
}

void mdef_set_raw(const struct mdef *d, void *o, uint64_t raw)
{
	void *p = (char *)o + d->off;
	uint32_t u32 = (uint32_t)raw;

	if (d->kind != MK_SCALAR)
		return;
	switch (d->repr) {
	case MR_U64:
	case MR_U64_NZ:
	case MR_I64:
	case MR_S64:
	case MR_F64:
		memcpy(p, &raw, sizeof(raw));
		break;
	case MR_U32:
	case MR_U32_NZ:
	case MR_S32:
		memcpy(p, &u32, sizeof(u32));
		break;
	case MR_DERIVED:
		break;
	}
}

void mdef_set_unknown(const struct mdef *d, void *o)
{
	int64_t m1 = -1;
	double f = -1;

	if (d->kind != MK_SCALAR)
		return;
	switch (d->repr) {
	case MR_I64:
		mdef_set_raw(d, o, (uint64_t)m1);
		break;
	case MR_F64:
		memcpy((char *)o + d->off, &f, sizeof(f));
		break;
	case MR_DERIVED:
	case MR_S64:
	case MR_S32:
		break;		/* always known: nothing spells unknown */
	default:
		mdef_set_raw(d, o, 0);
		break;
	}
}

bool mdef_value(const struct mdef *d, const void *o, double *v)
{
	uint64_t raw;
	double f;

	if (d->kind != MK_SCALAR || (d->known && !d->known(o)))
		return false;
	if (d->repr == MR_DERIVED)
		return d->derive(o, v);
	raw = mdef_raw(d, o);
	switch (d->repr) {
	case MR_U64_NZ:
	case MR_U32_NZ:
		if (!raw)
			return false;
		/* fall through */
	case MR_U64:
	case MR_U32:
		*v = (double)raw;
		return true;
	case MR_I64:
		if ((int64_t)raw < 0)
			return false;
		/* fall through */
	case MR_S64:
	case MR_S32:
		*v = (double)(int64_t)raw;
		return true;
	case MR_F64:
		memcpy(&f, &raw, sizeof(f));
		if (!(f >= 0))
			return false;
		*v = f;
		return true;
	case MR_DERIVED:
		break;
	}
	return false;
}

bool mdef_available(const struct mdef *d, const struct dmt_availability *avail)
{
	return d->avail < 0 || (d->avail < DMT_M__COUNT && avail[d->avail].available);
}

const struct hist_log2 *mdef_log2(const struct mdef *d, const void *o)
{
	return d->kind == MK_LOG2 ? field(d, o) : NULL;
}

const struct hist_batch *mdef_batch(const struct mdef *d, const void *o)
{
	return d->kind == MK_BATCH ? field(d, o) : NULL;
}

bool mdef_present(const struct mdef *d, const void *o)
{
	return !d->present || d->present(o);
}

size_t mdef_obj_count(const struct mdef *d, const struct dmt_snapshot *s)
{
	switch (d->obj) {
	case MO_POOL:
		return s->n_pools;
	case MO_BINDING:
		return s->n_bindings;
	case MO_GLOBAL:
		break;
	}
	return 1;
}

const void *mdef_obj_at(const struct mdef *d, const struct dmt_snapshot *s, size_t i)
{
	switch (d->obj) {
	case MO_POOL:
		return &s->pools[i];
	case MO_BINDING:
		return &s->bindings[i];
	case MO_GLOBAL:
		break;
	}
	return s;
}

bool mdef_bind_view_hist(const struct mdef *d)
{
	return d->obj == MO_BINDING && d->kind == MK_LOG2 && d->title;
}

bool mdef_view_col(const struct mdef *d, enum mdef_obj obj)
{
	return d->obj == obj && d->kind == MK_SCALAR && d->col;
}

const char *mdef_fmt(const struct mdef *d, const void *o, const struct dmt_availability *avail,
		     bool pct, char *buf, size_t len)
{
	double v;

	if (!mdef_available(d, avail))
		snprintf(buf, len, "n/a");
	else if (!mdef_value(d, o, &v))
		snprintf(buf, len, "-");
	else if (d->unit == MU_RATIO)	/* 0.9998 is 99.9 %, not a perfect 100.0 */
		snprintf(buf, len, "%.1f%s", floor(v * 1000) / 10, pct ? "%" : "");
	else if (d->repr == MR_DERIVED && !d->integral)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

int mdef_col_width(const struct mdef *d, int min)
{
	int w = d->col ? (int)strlen(d->col) : 0;

	return w < min ? min : w;
}
