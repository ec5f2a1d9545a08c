// SPDX-License-Identifier: GPL-2.0
/* Object identity across snapshots (objtrack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "objtrack.h"
#include "metrics.h"
#include "util.h"

bool objtrack_same_pool_key(uint32_t prev_id, uint64_t prev_addr, uint32_t id, uint64_t addr)
{
	if (prev_id && id)
		return prev_id == id && (!prev_addr || !addr || prev_addr == addr);
	if (!addr || prev_addr != addr)
		return false;
	return !prev_id || id;
}

bool objtrack_same_pool(const struct objtrack_ent *prev, const struct dmt_pool_snap *p)
{
	if (!objtrack_same_pool_key(prev->id, prev->addr, p->id, p->addr))
		return false;
	if (prev->id && p->id)
		return true;
	/* by address alone: counters that went backwards are a new pool there */
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
		last->counters_unknown = old.counters_unknown;
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
	/*
	 * The kernel's stats count since the pool's creation: a sighting
	 * without them (destroyed, no longer listed) keeps the last ones
	 * (report's and the HTML page's kernel figures).
	 */
	if (last->pps[0] < 0 && old.pps[0] >= 0)
		memcpy(last->pps, old.pps, sizeof(last->pps));
	if (last->queue_alloc_fail < 0)
		last->queue_alloc_fail = old.queue_alloc_fail;
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

void objtrack_delta_batch(struct hist_batch *acc, const struct hist_batch *cur,
			  const struct hist_batch *prev)
{
	struct hist_batch d;

	if (hist_batch_sub(&d, cur, prev))
		d = *cur;	/* restarted: counts again from zero */
	hist_batch_merge(acc, &d);
}

void objtrack_delta_log2(struct hist_log2 *acc, const struct hist_log2 *cur,
			 const struct hist_log2 *prev)
{
	struct hist_log2 d;

	if (hist_log2_sub(&d, cur, prev))
		d = *cur;
	hist_log2_merge(acc, &d);
}

/* Room for index i in an array of elements of size sz. */
static int run_grow(void **arr, size_t *cap, size_t i, size_t sz)
{
	size_t ncap;
	void *n;

	if (i < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap <= i)
		ncap *= 2;
	n = realloc(*arr, ncap * sz);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/*
 * The pool counters a run adds up: the metric table's u64 pool counters
 * (holds, releases, holds_page, holds_niov and any added since).
 */
static bool pool_ctr(const struct mdef *d)
{
	return d->obj == MO_POOL && d->kind == MK_SCALAR && d->type == MT_COUNTER &&
	       d->repr == MR_U64;
}

static const size_t bind_ctr[] = {
	offsetof(struct dmt_binding_snap, alloc_calls),
	offsetof(struct dmt_binding_snap, alloc_niovs),
	offsetof(struct dmt_binding_snap, alloc_fail),
	offsetof(struct dmt_binding_snap, free_niovs_count),
	offsetof(struct dmt_binding_snap, tok_handed),
	offsetof(struct dmt_binding_snap, tok_returned),
	offsetof(struct dmt_binding_snap, tok_released),
	offsetof(struct dmt_binding_snap, tok_drained),
};

/* The binding histograms a run adds up: the metric table's log2 binding rows. */
static bool bind_lat(const struct mdef *d)
{
	return d->obj == MO_BINDING && d->kind == MK_LOG2;
}

#define FIELD(type, obj, off)	((type *)((char *)(obj) + (off)))
#define CFIELD(type, obj, off)	((const type *)((const char *)(obj) + (off)))

/* The run's counters start at cur: from zero when created in the run. */
static void pool_start(struct objrun_pool *t, const struct dmt_pool_snap *cur, bool from_zero)
{
	t->known = true;
	for (size_t k = 0; k < mdef_count; k++)
		if (pool_ctr(&mdefs[k]))
			*FIELD(uint64_t, &t->run, mdefs[k].off) =
				from_zero ? *CFIELD(uint64_t, cur, mdefs[k].off) : 0;
}

static void pool_step(struct objrun_pool *t, const struct dmt_pool_snap *prev)
{
	const struct dmt_pool_snap *cur = &t->last;

	for (size_t k = 0; k < mdef_count; k++)
		if (pool_ctr(&mdefs[k]))
			*FIELD(uint64_t, &t->run, mdefs[k].off) +=
				objtrack_delta(*CFIELD(uint64_t, cur, mdefs[k].off),
					       *CFIELD(uint64_t, prev, mdefs[k].off));
}

static int run_pool(struct objrun *r, const struct dmt_pool_snap *p, bool first)
{
	struct objrun_pool *t;
	struct dmt_pool_snap prev;
	bool created;
	int i = objtrack__pool(&r->pool_ids, p, &created);

	if (i == -E2BIG) {
		r->pools_over++;
		return 0;
	}
	if (i < 0 || run_grow((void **)&r->pools, &r->cap_pools, i, sizeof(*r->pools)))
		return -ENOMEM;
	t = &r->pools[i];
	if (created) {
		memset(t, 0, sizeof(*t));
		t->last = *p;
		t->run = *p;
		t->in_first = first;
		r->n_pools = i + 1;
		/* refills are known in every mode (sampled in light mode) */
		if (first)
			memset(&t->run.refill, 0, sizeof(t->run.refill));
		if (!p->counters_unknown)
			pool_start(t, p, !first);
		return 0;
	}
	prev = t->last;
	objtrack_pool_update(&t->last, p);
	objtrack_delta_batch(&t->run.refill, &t->last.refill, &prev.refill);
	if (t->last.counters_unknown)
		return 0;
	if (!t->known) {
		/* located: its counters hold history from before the run */
		pool_start(t, &t->last, false);
		t->partial = true;
	} else if (!prev.counters_unknown) {
		pool_step(t, &prev);
	}
	return 0;
}

static void bind_start(struct objrun_binding *t, const struct dmt_binding_snap *b, bool first)
{
	memset(t, 0, sizeof(*t));
	t->last = *b;
	t->run = *b;
	t->in_first = first;
	if (first) {
		for (size_t k = 0; k < ARRAY_SIZE(bind_ctr); k++)
			*FIELD(uint64_t, &t->run, bind_ctr[k]) = 0;
		for (size_t k = 0; k < mdef_count; k++)
			if (bind_lat(&mdefs[k]))
				memset(FIELD(struct hist_log2, &t->run, mdefs[k].off), 0,
				       sizeof(struct hist_log2));
	}
}

static int run_binding(struct objrun *r, const struct dmt_binding_snap *b, bool first)
{
	struct objrun_binding *t;
	struct dmt_binding_snap prev;
	bool created;
	int i = objtrack__binding(&r->bind_ids, b, &created);

	if (i == -E2BIG) {
		r->binds_over++;
		return 0;
	}
	if (i < 0 || run_grow((void **)&r->binds, &r->cap_binds, i, sizeof(*r->binds)))
		return -ENOMEM;
	t = &r->binds[i];
	if (created) {
		bind_start(t, b, first);
		r->n_binds = i + 1;
	} else {
		prev = t->last;
		objtrack_binding_update(&t->last, b);
		for (size_t k = 0; k < ARRAY_SIZE(bind_ctr); k++)
			*FIELD(uint64_t, &t->run, bind_ctr[k]) +=
				objtrack_delta(*CFIELD(uint64_t, &t->last, bind_ctr[k]),
					       *CFIELD(uint64_t, &prev, bind_ctr[k]));
		for (size_t k = 0; k < mdef_count; k++) {
			size_t off = mdefs[k].off;

			if (bind_lat(&mdefs[k]))
				objtrack_delta_log2(FIELD(struct hist_log2, &t->run, off),
						    CFIELD(struct hist_log2, &t->last, off),
						    CFIELD(struct hist_log2, &prev, off));
		}
	}
	/* the most held at once, -1 while never known */
	if (created || b->held_tokens > t->run.held_tokens)
		t->run.held_tokens = b->held_tokens;
	if (created || b->held_by_sockets > t->run.held_by_sockets)
		t->run.held_by_sockets = b->held_by_sockets;
	return 0;
}

static void run_tokens(struct objrun *r, const struct dmt_snapshot *s)
{
	const struct dmt_tok_cost *c = &s->tok_cost, *l = &r->tok_last;

	if (r->n_snaps) {
		objtrack_delta_log2(&r->tok_run.per_recvmsg, &c->per_recvmsg, &l->per_recvmsg);
		objtrack_delta_log2(&r->tok_run.per_dontneed, &c->per_dontneed, &l->per_dontneed);
		objtrack_delta_log2(&r->tok_run.dontneed_ns, &c->dontneed_ns, &l->dontneed_ns);
		objtrack_delta_log2(&r->tok_run.dontneed_ns_token, &c->dontneed_ns_token,
				    &l->dontneed_ns_token);
	}
	r->tok_last = *c;
}

static struct objrun_holder *run_holder_get(struct objrun *r, const struct dmt_holder_snap *h)
{
	struct dmt_holder_key key = tokens__holder_key(h);
	struct objrun_holder *t;

	for (size_t k = 0; k < r->n_holders; k++)
		if (tokens__holder_key_eq(&r->holders[k].key, &key))
			return &r->holders[k];
	if (r->n_holders == OBJRUN_MAX_HOLDERS) {
		r->holders_over++;
		return NULL;
	}
	if (!r->holders && !(r->holders = calloc(OBJRUN_MAX_HOLDERS, sizeof(*r->holders))))
		return NULL;
	t = &r->holders[r->n_holders++];
	memset(t, 0, sizeof(*t));
	t->key = key;
	t->sock_ino = h->sock_ino;
	t->pid = h->pid;
	t->binding_id = h->binding_id;
	memcpy(t->comm, h->comm, sizeof(t->comm));
	t->cgroup_id = h->cgroup_id;
	memcpy(t->cgroup, h->cgroup, sizeof(t->cgroup));
	return t;
}

/* Each holder (tokens__holder_key()) at its peak: see struct objrun_holder. */
static int run_holders(struct objrun *r, const struct dmt_snapshot *s)
{
	for (size_t i = 0; i < s->n_holders; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];
		struct dmt_holder_key key = tokens__holder_key(h);
		struct objrun_holder *t = run_holder_get(r, h);
		uint64_t tok = 0, niovs = 0, age = 0;
		bool known = false;

		if (!t) {
			if (!r->holders)
				return -ENOMEM;
			continue;
		}
		/* this snapshot's sockets of that holder */
		for (size_t k = 0; k < s->n_holders; k++) {
			struct dmt_holder_key kk = tokens__holder_key(&s->holders[k]);

			if (!tokens__holder_key_eq(&kk, &key))
				continue;
			tok += s->holders[k].tokens;
			niovs += s->holders[k].niovs;
			known |= !s->holders[k].counts_unknown;
			if (s->holders[k].oldest_age_ns > age)
				age = s->holders[k].oldest_age_ns;
		}
		if (known && (tok > t->tokens || !t->tokens_known)) {
			t->tokens = tok;
			t->niovs = niovs;
		}
		t->tokens_known |= known;
		/* light mode's holders have no age (0 in the snapshot): unknown */
		if (dmt_snap_holder_history(s)) {
			t->age_known = true;
			if (age > t->oldest_age_ns)
				t->oldest_age_ns = age;
		}
		/* a first sighting that did not know the path yet */
		if (!t->cgroup[0] && h->cgroup[0] && (!t->cgroup_id || t->cgroup_id == h->cgroup_id)) {
			t->cgroup_id = h->cgroup_id;
			memcpy(t->cgroup, h->cgroup, sizeof(t->cgroup));
		}
	}
	return 0;
}

int objrun__add(struct objrun *r, const struct dmt_snapshot *s)
{
	bool first = !r->n_snaps;
	int err = 0;

	r->pool_ids.max = r->max_pools ? r->max_pools : OBJRUN_MAX_POOLS;
	r->bind_ids.max = r->max_binds ? r->max_binds : OBJRUN_MAX_BINDINGS;
	for (size_t i = 0; !err && i < s->n_pools; i++)
		err = run_pool(r, &s->pools[i], first);
	for (size_t i = 0; !err && i < s->n_bindings; i++)
		err = run_binding(r, &s->bindings[i], first);
	run_tokens(r, s);
	if (!err)
		err = run_holders(r, s);
	r->n_snaps++;
	return err;
}

void objrun__fini(struct objrun *r)
{
	objtrack__fini(&r->pool_ids);
	objtrack__fini(&r->bind_ids);
	free(r->pools);
	free(r->binds);
	free(r->holders);
	memset(r, 0, sizeof(*r));
}
