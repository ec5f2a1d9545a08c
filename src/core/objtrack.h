/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object tracker: which pool or binding of one snapshot is which of the
 * previous ones. One implementation for everything that follows objects
 * across snapshots (report's tables, gate's counters and histograms), so
 * they cannot disagree on a recording.
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

#endif /* DEVMEMTOP_OBJTRACK_H */
