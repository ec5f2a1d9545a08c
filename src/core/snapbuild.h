/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The snapshot builder: what the collector does with the values it reads,
 * without libbpf. collector.c reads the BPF maps, the netlink dump and the
 * binding walk; everything that turns those raw values into a snapshot is
 * here, so the unit tests (tests/unit/test_snapbuild.c) can feed it
 * synthetic map values.
 *
 *   snapbuild_add_pool()       one struct dmt_pool (map value) -> pool
 *   snapbuild_merge_netlink()  page-pool-get dump -> pools
 *   snapbuild_add_binding()    one struct dmt_binding (map value) -> binding
 *   snapbuild_link_pools()     devmem pools -> their binding (in_pools, ifname)
 *   snapbuild_apply_walk()     result of the binding walk -> binding
 *   snapbuild_apply_zcrx()     a zcrx pool's provider calls, its ifq walk -> pool
 *   snapbuild_finish_binding() derived figures (occupancy)
 *   rate_tracker__apply()      per-second rates against the previous snapshot
 */
#ifndef DEVMEMTOP_SNAPBUILD_H
#define DEVMEMTOP_SNAPBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nlrec.h"
#include "snapshot.h"

enum dmt_pool_kind snapbuild_pool_kind(const struct dmt_pool *v);
void snapbuild_pool(const struct dmt_pool *v, struct dmt_pool_snap *p);
/* Append the pool of map value v to s; *cap is the pools array capacity. */
int snapbuild_add_pool(struct dmt_snapshot *s, size_t *cap, const struct dmt_pool *v);
/*
 * Forget the destroyed pool (addr, id) in a pool_slots entry (mmap()ed,
 * shared with the BPF side). The BPF side claims a free slot (id 0) with a
 * compare-and-swap on id, fills it in and writes addr last; it matches a
 * slot on both. So: clear addr first (nothing matches the slot any more),
 * then the other fields, and free the id last, so a pool claiming the slot
 * meanwhile is never wiped; a slot that holds another pool is left alone.
 */
void snapbuild_slot_release(struct dmt_pool *slot, uint64_t addr, uint32_t id);
/*
 * Enrich pools with the netlink dump (by netlink id), and add the pools
 * netlink lists that no event showed yet. netns: the inode of the network
 * namespace the dump was answered in (0: unknown); page-pool-get lists only
 * pools whose netdev is in it, so a listed pool with no netns gets this one.
 * 0 or -ENOMEM.
 */
int snapbuild_merge_netlink(struct dmt_snapshot *s, const struct nl_pool_info *nlp, size_t n,
			    uint64_t netns);

/* Every kernel (netlink) figure of pool p unknown: before the dumps are merged. */
void snapbuild_pool_kernel_unknown(struct dmt_pool_snap *p);
/* page-pool-stats-get -> the pools of the same id. 0. */
int snapbuild_merge_pp_stats(struct dmt_snapshot *s, const struct nl_pp_stats *st, size_t n);
/*
 * queue-get and qstats-get -> the RX queues bound and unbound (snapshot),
 * per binding, the snapshot's rx-alloc-fail (device scope, summed over the
 * devices that report it) and each pool's queue's (queue scope). A dump
 * that failed is not ok / empty: its figures stay unknown.
 */
struct snapbuild_queues {
	bool queues_ok;
	const struct nl_queue *queues;
	size_t n_queues;
	const struct nl_qstats *dev;	/* device scope */
	size_t n_dev;
	const struct nl_qstats *perq;	/* queue scope */
	size_t n_perq;
};
void snapbuild_merge_queues(struct dmt_snapshot *s, const struct snapbuild_queues *in);

struct dmt_binding_snap *snapbuild_binding_find(struct dmt_snapshot *s, uint32_t id);
/* A binding with every figure unknown; NULL on ENOMEM (s->bindings may move). */
struct dmt_binding_snap *snapbuild_binding_new(struct dmt_snapshot *s, uint32_t id);
/* Append the binding of map value v. */
struct dmt_binding_snap *snapbuild_add_binding(struct dmt_snapshot *s,
					       const struct dmt_binding *v);
/*
 * Walk addresses of the snapshot's bindings, index for index (0: none).
 * snapbuild_link_pools() fills them from the live devmem pools (a live pool
 * holds a reference on its binding, so its provider_priv is safe to walk)
 * and adds the bindings nobody saw created.
 */
struct snapbuild_addrs {
	uint64_t *v;
	size_t n;
};
int snapbuild_addr_set(struct snapbuild_addrs *a, size_t i, uint64_t addr);
int snapbuild_link_pools(struct dmt_snapshot *s, struct snapbuild_addrs *addrs);
/*
 * A successful walk of binding b. Tracepoint values are exact at their
 * event, so in devmem-tracepoint mode they win over the walk when known.
 */
void snapbuild_apply_walk(struct dmt_binding_snap *b, const struct dmt_walk *w,
			  enum dmt_attach_mode mode);
/*
 * An io_uring zcrx pool: z its provider calls (zcrx_pools map value, NULL
 * when the hooks saw none), w the walk of its interface queue (NULL, or
 * one that failed: the area figures stay unknown).
 */
void snapbuild_apply_zcrx(struct dmt_pool_snap *p, const struct dmt_zcrx_pool *z,
			  const struct dmt_zcrx_walk *w);
/* in_pools_known: the pool hold/release hooks are attached. */
void snapbuild_finish_binding(struct dmt_binding_snap *b, bool in_pools_known);

/*
 * Light mode: a binding's niov frees are its devmem pools' releases (each
 * release of a niov by a pool is one niov back to the binding), from the
 * pools' own counters.
 */
void snapbuild_light_niov_frees(struct dmt_snapshot *s);

/*
 * What the builder remembers of a binding between snapshots: its layout.
 * Only the walk reads it, and a freed binding can no longer be walked, so
 * its last snapshot would say "unknown" where the earlier ones knew.
 */
struct binding_memory;
struct binding_memory *binding_memory__new(void);
/* Fill unknown layouts of s from earlier snapshots, remember the known. */
int binding_memory__apply(struct binding_memory *bm, struct dmt_snapshot *s);
void binding_memory__free(struct binding_memory *bm);

/*
 * Rates across snapshots. A pool is the same object only when its address
 * AND its netlink id match the previous snapshot's, and its counters did not
 * go backwards: a new pool on a destroyed pool's address starts from rate 0,
 * never a wrapped negative delta.
 */
struct rate_tracker;
struct rate_tracker *rate_tracker__new(void);
/* Fill hold_rate/release_rate of s's pools and remember s. 0 or -ENOMEM. */
int rate_tracker__apply(struct rate_tracker *rt, struct dmt_snapshot *s);
void rate_tracker__free(struct rate_tracker *rt);

#endif /* DEVMEMTOP_SNAPBUILD_H */
