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

static int add(struct objtrack *t)
{
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

int objtrack__pool(struct objtrack *t, const struct dmt_pool_snap *p, bool *created)
{
	size_t i = t->hint < t->n && objtrack_same_pool(&t->v[t->hint], p) ? t->hint : t->n;
	int k;

	*created = false;
	if (i == t->n) {
		/* newest first: a reused address matches its latest pool */
		for (size_t j = t->n; j-- > 0;) {
			if (objtrack_same_pool(&t->v[j], p)) {
				i = j;
				break;
			}
		}
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
	return (int)i;
}

int objtrack__binding(struct objtrack *t, const struct dmt_binding_snap *b, bool *created)
{
	int k;

	*created = false;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == b->id)
			return (int)i;
	k = add(t);
	if (k < 0)
		return k;
	t->v[k].id = b->id;
	*created = true;
	return k;
}

void objtrack__fini(struct objtrack *t)
{
	free(t->v);
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
