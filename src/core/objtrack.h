/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object tracker: which pool or binding of one snapshot is which of the
 * previous ones, and what a counter did between two sightings. One
 * implementation for everything that follows objects across snapshots
 * (report's tables and its HTML page through objrun below, gate's counters
 * and histograms, the builder's rates, the live view's selection), so they
 * cannot disagree on a recording.
 *
 * Identity of a pool:
 *   - both sightings have a netlink id: the same pool iff the ids are equal
 *     (ids are unique while the kernel runs); one sighting may come from
 *     the netlink dump alone (no address yet);
 *   - otherwise: the same kernel address (non-zero), an id learned later
 *     (0 before) is the same pool, and counters that went backwards mean a
 *     new pool on a reused address.
 * A binding is its id.
 *
 * Lookups cost O(1) whatever the recording holds (a crafted one may list
 * hundreds of thousands of pools): the snapshot order hint first, then an
 * index by netlink id and one by address, each pointing at the newest
 * object with that key. At most `max` objects are tracked (default
 * OBJTRACK_MAX); one more is -E2BIG, which callers count or refuse.
 *
 *   struct objtrack t = {};
 *   int i = objtrack__pool(&t, p, &created);   index (stable), -ENOMEM or -E2BIG
 *   ...
 *   objtrack__fini(&t);
 */
#ifndef DEVMEMTOP_OBJTRACK_H
#define DEVMEMTOP_OBJTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"

struct objtrack_ent {
	uint64_t addr;
	uint32_t id;
	uint64_t holds, releases;
};

#define OBJTRACK_MAX	16384

struct objtrack {
	struct objtrack_ent *v;
	size_t n, cap;
	size_t hint;		/* snapshots list objects in a stable order */
	size_t max;		/* objects tracked at most; 0: OBJTRACK_MAX */
	uint32_t *by_id, *by_addr;	/* 1 + index of the newest object, 0 free */
	size_t idx_size;		/* a power of two, >= 2 * max */
};

bool objtrack_same_pool(const struct objtrack_ent *prev, const struct dmt_pool_snap *p);
/*
 * The same rule on the keys alone, for who has no counters at hand (the live
 * view's selection): ids when both have one, else the same non-zero address
 * without an id lost.
 */
bool objtrack_same_pool_key(uint32_t prev_id, uint64_t prev_addr, uint32_t id, uint64_t addr);
/* Index of the object p continues, or of a new one (*created). -ENOMEM, -E2BIG. */
int objtrack__pool(struct objtrack *t, const struct dmt_pool_snap *p, bool *created);
int objtrack__binding(struct objtrack *t, const struct dmt_binding_snap *b, bool *created);
void objtrack__fini(struct objtrack *t);

/*
 * The newest sighting of an object, keeping what an earlier sighting knew
 * and this one does not (an interface name the netlink dump cannot give, a
 * layout the walk of a freed binding can no longer read).
 */
void objtrack_pool_update(struct dmt_pool_snap *last, const struct dmt_pool_snap *cur);
void objtrack_binding_update(struct dmt_binding_snap *last, const struct dmt_binding_snap *cur);

/*
 * The one delta rule: what a counter did from one sighting of an object to
 * the next. A counter that went backwards restarted (a map slot reused, a
 * wrap): it counts again from zero, so the step is its new value; never a
 * wrapped unsigned difference. Histograms likewise, slot by slot.
 */
static inline uint64_t objtrack_delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}
void objtrack_delta_batch(struct hist_batch *acc, const struct hist_batch *cur,
			  const struct hist_batch *prev);
void objtrack_delta_log2(struct hist_log2 *acc, const struct hist_log2 *cur,
			 const struct hist_log2 *prev);

/*
 * A run: every pool and binding of a sequence of snapshots (oldest first),
 * followed with the identity above, and what each did over the run, as
 * `report`, its HTML page and `gate --html` show it. The run figures are
 * the sum of the steps between sightings (objtrack_delta); an object
 * present in the run's first snapshot counts from there, one that appeared
 * later from zero (it was created during the run).
 *
 * Light mode lists pools it has not located yet with their holds and
 * releases unknown (counters_unknown): such a pool counts from the first
 * sighting that knows them (its counters then include its history from
 * before the run, which is not the run's), and says so (partial); one never
 * located has no run figures (known false): unknown, never 0.
 *
 * At most max_pools pools and max_binds bindings (OBJRUN_MAX_POOLS and
 * OBJRUN_MAX_BINDINGS when 0: report's tables and the HTML page);
 * sightings of further objects are counted in pools_over / binds_over.
 * Memory is two snapshots' worth per object, whatever the recording holds.
 *
 *   struct objrun r = { .max_pools = N };
 *   objrun__add(&r, snap);         each snapshot, oldest first: 0 or -ENOMEM
 *   r.pools[i].run.holds ...       over the run, i < r.n_pools
 *   objrun__fini(&r);
 */
#define OBJRUN_MAX_POOLS	16384
#define OBJRUN_MAX_BINDINGS	1024

struct objrun_pool {
	struct dmt_pool_snap last;	/* the newest sighting (objtrack_pool_update) */
	/* over the run: holds, releases, holds_page, holds_niov, refill */
	struct dmt_pool_snap run;
	bool in_first;			/* in the run's first snapshot */
	bool known;			/* holds/releases known at some sighting */
	bool partial;			/* unknown when first seen: counted from its location */
};

struct objrun_binding {
	struct dmt_binding_snap last;
	/*
	 * over the run: alloc_calls, alloc_niovs, alloc_fail, free_niovs_count,
	 * tok_handed, tok_returned, tok_released and the three latency
	 * histograms; held_tokens and held_by_sockets are the most at once
	 * (-1 never known)
	 */
	struct dmt_binding_snap run;
	bool in_first;
};

/*
 * A process holding frag tokens of a binding (a socket, when its process
 * is unknown: tokens__holder_key()), at its peak over the run: its
 * sockets' tokens summed per snapshot, the most at once (with their niovs),
 * the oldest token seen; comm and cgroup from its first sighting (issue
 * 24: a process's cgroup is where its first token found it). The oldest
 * token's age is known only from sightings with a hand-out history
 * (dmt_snap_holder_history(): not light mode, which reads held tokens
 * from the kernel's xarrays and learns no age): age_known false means
 * unknown, and the views say "-" or null, never 0.
 */
struct objrun_holder {
	struct dmt_holder_key key;	/* which holder (tokens__holder_key()) */
	uint32_t pid, binding_id;	/* pid 0: unknown, never shown as 0 */
	uint64_t sock_ino;		/* its socket's inode, 0 unknown */
	char comm[16];
	uint64_t tokens, niovs, oldest_age_ns;
	bool age_known;
	/* false while every sighting had unknown counts (light, autorelease off) */
	bool tokens_known;
	uint64_t cgroup_id;
	char cgroup[DMT_CGROUP_PATH_MAX];
};

/* holder rows kept; sightings of further ones: holders_over */
#define OBJRUN_MAX_HOLDERS	1024

struct objrun {
	size_t max_pools, max_binds;
	struct objtrack pool_ids, bind_ids;
	struct objrun_pool *pools;	/* indexed like pool_ids */
	size_t n_pools, cap_pools;
	struct objrun_binding *binds;
	size_t n_binds, cap_binds;
	uint64_t pools_over, binds_over;	/* sightings past the caps */
	uint64_t n_snaps;
	struct dmt_tok_cost tok_run, tok_last;	/* the token histograms over the run */
	struct objrun_holder *holders;	/* in order of first sighting */
	size_t n_holders;
	uint64_t holders_over;
};

int objrun__add(struct objrun *r, const struct dmt_snapshot *s);
void objrun__fini(struct objrun *r);

#endif /* DEVMEMTOP_OBJTRACK_H */
