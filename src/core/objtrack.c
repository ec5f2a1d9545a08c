// SPDX-License-Identifier: GPL-2.0
/* Object identity across snapshots (objtrack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "objtrack.h"

bool objtrack_same_pool(const struct objtrack_ent *prev, const struct dmt_pool_snap *p)
{
	if (prev->id && p->id)
		return prev->id == p->id &&
		       (!prev->addr || !p->addr || prev->addr == p->addr);
	if (!p->addr || prev->addr != p->addr)
		return false;
	if (prev->id && !p->id)
		return false;
	return p->holds >= prev->holds && p->releases >= prev->releases;
}

static size_t max_objs(const struct objtrack *t)
{
	return t->max ? t->max : OBJTRACK_MAX;
}

static int add(struct objtrack *t)
{
	if (t->n == max_objs(t))
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct objtrack_ent *n = realloc(t->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->v = n;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->hint = t->n + 1;
	return (int)t->n++;
}

/* Both indexes, allocated at the first lookup that misses the hint. */
static int idx_init(struct objtrack *t)
{
	size_t sz = 16;

	if (t->by_id)
		return 0;
	while (sz < 2 * max_objs(t))
		sz *= 2;
	t->by_id = calloc(sz, sizeof(*t->by_id));
	t->by_addr = calloc(sz, sizeof(*t->by_addr));
	if (!t->by_id || !t->by_addr) {
		free(t->by_id);
		free(t->by_addr);
		t->by_id = t->by_addr = NULL;
		return -ENOMEM;
	}
	t->idx_size = sz;
	return 0;
}

static uint64_t ent_key(const struct objtrack_ent *e, bool by_id)
{
	return by_id ? e->id : e->addr;
}

/*
 * The slot of key in one index: the one holding it, or the free one where
 * it goes. An object's id and address only ever go from 0 to their value,
 * so a slot's key is that of the object it points at; at most max keys
 * per index, in twice as many slots.
 */
static size_t idx_slot(const struct objtrack *t, const uint32_t *idx, bool by_id, uint64_t key)
{
	size_t mask = t->idx_size - 1, h = (key * 0x9e3779b97f4a7c15ULL) >> 32;

	for (h &= mask; idx[h]; h = (h + 1) & mask)
		if (ent_key(&t->v[idx[h] - 1], by_id) == key)
			break;
	return h;
}

/* The newest object with this key, or -1. */
static long idx_get(const struct objtrack *t, bool by_id, uint64_t key)
{
	const uint32_t *idx = by_id ? t->by_id : t->by_addr;
	size_t h = idx_slot(t, idx, by_id, key);

	return idx[h] ? (long)idx[h] - 1 : -1;
}

static void idx_put(struct objtrack *t, bool by_id, uint64_t key, size_t i)
{
	uint32_t *idx = by_id ? t->by_id : t->by_addr;

	if (key)
		idx[idx_slot(t, idx, by_id, key)] = (uint32_t)i + 1;
}

int objtrack__pool(struct objtrack *t, const struct dmt_pool_snap *p, bool *created)
{
	size_t i = t->hint < t->n && objtrack_same_pool(&t->v[t->hint], p) ? t->hint : t->n;
	long j;
	int k;

	*created = false;
	if (i == t->n) {
		/* a reused address or id: the newest object with it is the candidate */
		if (idx_init(t))
			return -ENOMEM;
		if (p->id && (j = idx_get(t, true, p->id)) >= 0 &&
		    objtrack_same_pool(&t->v[j], p))
			i = j;
		else if (p->addr && (j = idx_get(t, false, p->addr)) >= 0 &&
			 objtrack_same_pool(&t->v[j], p))
			i = j;
	}
	if (i == t->n) {
		k = add(t);
		if (k < 0)
			return k;
		*created = true;
		i = k;
	}
	t->hint = i + 1;
	if (p->addr)
		t->v[i].addr = p->addr;
	if (p->id)
		t->v[i].id = p->id;
	t->v[i].holds = p->holds;
	t->v[i].releases = p->releases;
	if (t->by_id) {
		idx_put(t, true, t->v[i].id, i);
		idx_put(t, false, t->v[i].addr, i);
	}
	return (int)i;
}

int objtrack__binding(struct objtrack *t, const struct dmt_binding_snap *b, bool *created)
{
	long j;
	int k;

	*created = false;
	if (t->hint < t->n && t->v[t->hint].id == b->id)
		return (int)t->hint++;
	if (idx_init(t))
		return -ENOMEM;
	j = idx_get(t, true, b->id);
	if (j >= 0) {
		t->hint = j + 1;
		return (int)j;
	}
	k = add(t);
	if (k < 0)
		return k;
	t->v[k].id = b->id;
	idx_put(t, true, b->id, k);
	*created = true;
	return k;
}

void objtrack__fini(struct objtrack *t)
{
	free(t->v);
	free(t->by_id);
	free(t->by_addr);
	memset(t, 0, sizeof(*t));
}

void objtrack_pool_update(struct dmt_pool_snap *last, const struct dmt_pool_snap *cur)
{
	struct dmt_pool_snap old = *last;

	*last = *cur;
	/*
	 * A sighting from the netlink dump alone carries no counters: keep the
	 * BPF side's, or a later difference would go negative.
	 */
	if (!cur->addr && old.addr) {
		last->holds = old.holds;
		last->releases = old.releases;
		last->holds_page = old.holds_page;
		last->holds_niov = old.holds_niov;
		last->refill = old.refill;
	}
	if (!last->ifname[0] && old.ifname[0] && (!last->ifindex || last->ifindex == old.ifindex))
		memcpy(last->ifname, old.ifname, sizeof(last->ifname));
	if (!last->ifindex)
		last->ifindex = old.ifindex;
	if (!last->addr)
		last->addr = old.addr;
	if (!last->netns)
		last->netns = old.netns;
	if (last->queue < 0)
		last->queue = old.queue;
}

void objtrack_binding_update(struct dmt_binding_snap *last, const struct dmt_binding_snap *cur)
{
	struct dmt_binding_snap old = *last;

	*last = *cur;
	if (!last->ifname[0] && old.ifname[0])
		memcpy(last->ifname, old.ifname, sizeof(last->ifname));
	if (!last->ifindex)
		last->ifindex = old.ifindex;
	if ((!last->layout || !strcmp(last->layout, "unknown")) && old.layout)
		last->layout = old.layout;
	if (!last->niov_size)
		last->niov_size = old.niov_size;
	if (!last->dmabuf_size)
		last->dmabuf_size = old.dmabuf_size;
	if (last->total_niovs < 0)
		last->total_niovs = old.total_niovs;
	if (!last->created_ns)
		last->created_ns = old.created_ns;
	if (!last->unbound_ns)
		last->unbound_ns = old.unbound_ns;
}
