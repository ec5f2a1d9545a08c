// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot builder: raw map values, netlink dump and walk results -> the
 * snapshot. No libbpf here (see snapbuild.h); collector.c does the reads.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "objtrack.h"
#include "snapbuild.h"

enum dmt_pool_kind snapbuild_pool_kind(const struct dmt_pool *v)
{
	if (v->flags & DMT_POOL_DEVMEM)
		return DMT_KIND_DEVMEM;
	if (v->flags & DMT_POOL_IO_URING)
		return DMT_KIND_IO_URING;
	if (!v->mp_priv)
		return DMT_KIND_PAGES;
	return DMT_KIND_OTHER;	/* a provider we do not know, or kallsyms hidden */
}

static void pool_zcrx_unknown(struct dmt_pool_snap *p)
{
	p->zcrx_niovs = p->zcrx_free_niovs = p->zcrx_user_niovs = -1;
	p->zcrx_rq_pending = p->zcrx_rq_size = -1;
}

void snapbuild_pool_kernel_unknown(struct dmt_pool_snap *p)
{
	for (int i = 0; i < DMT_PPS__COUNT; i++)
		p->pps[i] = -1;
	p->queue_alloc_fail = -1;
	p->slow_holds = p->slow_calls = 0;
	pool_zcrx_unknown(p);
}

static void copy_batch(struct hist_batch *dst, const struct dmt_batch_hist *src)
{
	memcpy(dst->slots, src->slots, sizeof(dst->slots));
	dst->count = src->count;
	dst->sum = src->sum;
}

void snapbuild_pool(const struct dmt_pool *v, struct dmt_pool_snap *p)
{
	memset(p, 0, sizeof(*p));
	p->addr = v->addr;
	p->provider_priv = v->mp_priv;
	p->id = v->id;
	p->ifindex = v->ifindex;
	memcpy(p->ifname, v->ifname, sizeof(p->ifname));
	p->ifname[sizeof(p->ifname) - 1] = '\0';
	p->netns = v->netns;
	p->queue = v->attr_src == DMT_ATTR_NETDEV ? (int)v->queue : -1;
	p->napi_id = v->napi_id;
	p->kind = snapbuild_pool_kind(v);
	p->binding_id = v->binding_id;
	p->attr_src = v->attr_src;
	p->nid = v->nid;
	p->nid_changes = v->nid_changes;
	/* the kernel counters are u32 and wrap: differences stay u32 */
	p->holds = (uint32_t)(v->hold_cnt - v->hold_base);
	p->releases = (uint32_t)(v->release_cnt - v->release_base);
	if (v->flags & DMT_POOL_SAW_NIOV && !(v->flags & DMT_POOL_SAW_PAGE))
		p->holds_niov = p->holds;
	else
		p->holds_page = p->holds;
	p->inflight = (int32_t)(v->hold_cnt - v->release_cnt);
	p->netlink_inflight = -1;
	snapbuild_pool_kernel_unknown(p);
	p->destroy_inflight = (v->flags & DMT_POOL_RELEASED) ? v->release_inflight : -1;
	p->destroy_retries = v->release_calls;
	if (v->flags & DMT_POOL_GONE) {
		p->state = DMT_POOL_DESTROYED;
		p->inflight = 0;
	} else if (v->flags & DMT_POOL_RELEASED) {
		p->state = DMT_POOL_ZOMBIE;
		p->inflight = v->release_inflight;
	}
	copy_batch(&p->refill, &v->refill);
}

int snapbuild_add_pool(struct dmt_snapshot *s, size_t *cap, const struct dmt_pool *v)
{
	if (s->n_pools >= *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *np = realloc(s->pools, ncap * sizeof(*s->pools));

		if (!np)
			return -ENOMEM;
		s->pools = np;
		*cap = ncap;
	}
	snapbuild_pool(v, &s->pools[s->n_pools++]);
	return 0;
}

int snapbuild_merge_netlink(struct dmt_snapshot *s, const struct nl_pool_info *nlp, size_t n,
			    uint64_t netns)
{
	for (size_t i = 0; i < n; i++) {
		struct dmt_pool_snap *p = NULL;

		for (size_t j = 0; j < s->n_pools; j++) {
			if (s->pools[j].id == nlp[i].id) {
				p = &s->pools[j];
				break;
			}
		}
		/*
		 * Destroyed with nothing in flight: the kernel may not have
		 * unlisted it yet. Not another pool, and not alive again.
		 */
		if (p && p->state == DMT_POOL_DESTROYED)
			continue;
		if (!p) {
			/* listed but no event seen since we attached: show it anyway */
			void *np = realloc(s->pools, (s->n_pools + 1) * sizeof(*s->pools));

			if (!np)
				return -ENOMEM;
			s->pools = np;
			p = &s->pools[s->n_pools++];
			memset(p, 0, sizeof(*p));
			p->id = nlp[i].id;
			p->queue = -1;
			p->destroy_inflight = -1;
			p->kind = nlp[i].dmabuf ? DMT_KIND_DEVMEM :
				  nlp[i].io_uring ? DMT_KIND_IO_URING : DMT_KIND_PAGES;
			p->binding_id = nlp[i].dmabuf;
			p->inflight = nlp[i].inflight;
			p->state = nlp[i].detach_time ? DMT_POOL_ZOMBIE : DMT_POOL_ALIVE;
			p->attr_src = DMT_ATTR_NETLINK;
			snapbuild_pool_kernel_unknown(p);
		}
		p->netlink_listed = true;
		p->netlink_inflight = nlp[i].inflight;
		if (!p->netns)
			p->netns = netns;
		if (nlp[i].napi_id)
			p->napi_id = nlp[i].napi_id;
		if (!p->binding_id)
			p->binding_id = nlp[i].dmabuf;
		if (p->attr_src == DMT_ATTR_NONE || p->attr_src == DMT_ATTR_NETLINK) {
			p->ifindex = nlp[i].ifindex;
			p->attr_src = DMT_ATTR_NETLINK;
		}
	}
	return 0;
}

int snapbuild_merge_pp_stats(struct dmt_snapshot *s, const struct nl_pp_stats *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < s->n_pools; j++) {
			struct dmt_pool_snap *p = &s->pools[j];

			/* a destroyed pool's id is never reused: by id alone */
			if (!st[i].id || p->id != st[i].id)
				continue;
			memcpy(p->pps, st[i].v, sizeof(p->pps));
			break;
		}
	}
	return 0;
}

/* The RX queue of pool p (its own, or the one its NAPI serves), -1 unknown. */
static int pool_rx_queue(const struct dmt_pool_snap *p, const struct nl_queue *q, size_t nq)
{
	if (p->queue >= 0)
		return p->queue;
	if (!p->napi_id || p->ifindex <= 0)
		return -1;
	for (size_t i = 0; i < nq; i++)
		if (q[i].type == 0 && q[i].ifindex == p->ifindex && q[i].napi_id == p->napi_id)
			return (int)q[i].id;
	return -1;
}

void snapbuild_merge_queues(struct dmt_snapshot *s, const struct snapbuild_queues *in)
{
	s->rxq_bound = s->rxq_unbound = -1;
	s->rx_alloc_fail = -1;
	for (size_t b = 0; b < s->n_bindings; b++)
		s->bindings[b].rx_queues = in->queues_ok ? 0 : -1;
	if (in->queues_ok) {
		s->rxq_bound = s->rxq_unbound = 0;
		for (size_t i = 0; i < in->n_queues; i++) {
			const struct nl_queue *q = &in->queues[i];
			struct dmt_binding_snap *b;

			if (q->type != 0)
				continue;
			if (!q->dmabuf) {
				s->rxq_unbound++;
				continue;
			}
			s->rxq_bound++;
			b = snapbuild_binding_find(s, q->dmabuf);
			if (b)
				b->rx_queues++;
		}
	}
	for (size_t i = 0; i < in->n_dev; i++) {
		if (in->dev[i].rx_alloc_fail < 0)
			continue;
		if (s->rx_alloc_fail < 0)
			s->rx_alloc_fail = 0;
		s->rx_alloc_fail += in->dev[i].rx_alloc_fail;
	}
	for (size_t j = 0; j < s->n_pools; j++) {
		struct dmt_pool_snap *p = &s->pools[j];
		int qid = pool_rx_queue(p, in->queues, in->n_queues);

		p->queue_alloc_fail = -1;
		for (size_t i = 0; qid >= 0 && i < in->n_perq; i++) {
			const struct nl_qstats *q = &in->perq[i];

			if (q->ifindex == p->ifindex && q->queue == qid && q->queue_type == 0) {
				p->queue_alloc_fail = q->rx_alloc_fail;
				break;
			}
		}
	}
}

void snapbuild_slot_release(struct dmt_pool *slot, uint64_t addr, uint32_t id)
{
	const size_t id_end = offsetof(struct dmt_pool, id) + sizeof(slot->id);
	char *p = (char *)slot;

	if (__atomic_load_n(&slot->id, __ATOMIC_ACQUIRE) != id ||
	    __atomic_load_n(&slot->addr, __ATOMIC_ACQUIRE) != addr)
		return;		/* already taken by another pool: not ours to clear */
	__atomic_store_n(&slot->addr, 0, __ATOMIC_RELEASE);
	memset(p + sizeof(slot->addr), 0, offsetof(struct dmt_pool, id) - sizeof(slot->addr));
	memset(p + id_end, 0, sizeof(*slot) - id_end);
	__atomic_store_n(&slot->id, 0, __ATOMIC_RELEASE);
}

struct dmt_binding_snap *snapbuild_binding_find(struct dmt_snapshot *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_bindings; i++)
		if (s->bindings[i].id == id)
			return &s->bindings[i];
	return NULL;
}

struct dmt_binding_snap *snapbuild_binding_new(struct dmt_snapshot *s, uint32_t id)
{
	struct dmt_binding_snap *b;
	void *np = realloc(s->bindings, (s->n_bindings + 1) * sizeof(*s->bindings));

	if (!np)
		return NULL;
	s->bindings = np;
	b = &s->bindings[s->n_bindings++];
	memset(b, 0, sizeof(*b));
	b->id = id;
	b->alive = true;
	b->layout = "unknown";
	b->total_niovs = b->free_niovs = b->in_pools = b->held_by_sockets = -1;
	b->held_tokens = -1;
	b->out_at_unbind = b->out_at_free = -1;
	b->occupancy = -1;
	b->rx_queues = -1;
	b->tx_niov_refs = -1;
	return b;
}

static void copy_log2(struct hist_log2 *dst, const struct dmt_log2_hist *src)
{
	memcpy(dst->slots, src->slots, sizeof(dst->slots));
	dst->count = src->count;
	dst->sum = src->sum;
}

struct dmt_binding_snap *snapbuild_add_binding(struct dmt_snapshot *s,
					       const struct dmt_binding *v)
{
	struct dmt_binding_snap *b = snapbuild_binding_new(s, v->id);

	if (!b)
		return NULL;
	b->ifindex = v->ifindex;
	b->tok_handed = v->tok_handed;
	b->rx_bytes = v->rx_bytes;
	b->tok_returned = v->tok_returned;
	b->tok_released = v->tok_released;
	b->tok_drained = v->tok_drained;
	b->token_mode = (v->flags & DMT_BIND_TOK_AUTORELEASE ? DMT_TOKMODE_AUTORELEASE : 0) |
			(v->flags & DMT_BIND_TOK_MANUAL ? DMT_TOKMODE_MANUAL : 0);
	b->dmabuf_size = v->dmabuf_size;
	b->niov_size = v->niov_size;
	b->unbound = v->flags & DMT_BIND_UNBOUND;
	b->tx = !!(v->flags & DMT_BIND_TX);
	b->alive = !(v->flags & DMT_BIND_FREED);
	if (v->flags & DMT_BIND_FREELIST)
		b->layout = "freelist";
	if (v->total_niovs)
		b->total_niovs = v->total_niovs;
	if (v->free_niovs_tp >= 0)
		b->free_niovs = v->free_niovs_tp;
	b->alloc_calls = v->alloc_calls;
	b->alloc_niovs = v->alloc_niovs;
	b->alloc_fail = v->alloc_fail;
	b->free_niovs_count = v->free_niovs_cnt;
	b->out_at_unbind = v->out_at_unbind;
	b->out_at_free = v->out_at_free;
	b->created_ns = v->create_ns;
	b->unbound_ns = v->unbind_ns;
	b->freed_ns = v->free_ns;
	copy_log2(&b->alloc_lat_ns, &v->alloc_lat);
	copy_log2(&b->alloc_lat_niov_ns, &v->alloc_lat_niov);
	copy_log2(&b->free_lat_ns, &v->free_lat);
	b->tx_sendmsg = v->tx_sendmsg;
	b->tx_bytes = v->tx_bytes;
	b->tx_errors = v->tx_errors;
	/* every reference is seen only on a binding made after the attach */
	if (b->tx && (v->flags & DMT_BIND_SEEN_CREATE) && v->tx_refs_taken >= v->tx_refs_dropped)
		b->tx_niov_refs = (int64_t)(v->tx_refs_taken - v->tx_refs_dropped);
	copy_log2(&b->tx_ref_time_ns, &v->tx_ref_time);
	return b;
}

int snapbuild_addr_set(struct snapbuild_addrs *a, size_t i, uint64_t addr)
{
	if (i >= a->n) {
		uint64_t *nv = realloc(a->v, (i + 16) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		memset(nv + a->n, 0, (i + 16 - a->n) * sizeof(*nv));
		a->v = nv;
		a->n = i + 16;
	}
	if (addr)
		a->v[i] = addr;
	return 0;
}

int snapbuild_link_pools(struct dmt_snapshot *s, struct snapbuild_addrs *addrs)
{
	for (size_t i = 0; i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		struct dmt_binding_snap *b;

		if (p->kind != DMT_KIND_DEVMEM || !p->binding_id)
			continue;
		b = snapbuild_binding_find(s, p->binding_id);
		/*
		 * A pool reported destroyed after its binding was freed (and
		 * forgotten) does not bring the binding back as one nobody saw
		 * created.
		 */
		if (!b && p->state == DMT_POOL_DESTROYED)
			continue;
		if (!b) {
			b = snapbuild_binding_new(s, p->binding_id);
			if (!b)
				return -ENOMEM;
			b->ifindex = p->ifindex;
		}
		if (!b->ifname[0] && b->ifindex == p->ifindex)
			memcpy(b->ifname, p->ifname, sizeof(b->ifname));
		if (p->state == DMT_POOL_DESTROYED)
			continue;
		b->pools++;
		b->in_pools = (b->in_pools < 0 ? 0 : b->in_pools) +
			      (p->inflight > 0 ? p->inflight : 0);
		if (snapbuild_addr_set(addrs, b - s->bindings, p->provider_priv))
			return -ENOMEM;
	}
	return 0;
}

void snapbuild_apply_zcrx(struct dmt_pool_snap *p, const struct dmt_zcrx_pool *z,
			  const struct dmt_zcrx_walk *w)
{
	if (!z)
		return;
	p->zcrx = true;
	p->zcrx_alloc_calls = z->alloc_calls;
	p->zcrx_alloc_niovs = z->alloc_niovs;
	p->zcrx_alloc_fail = z->alloc_fail;
	p->zcrx_rq_refills = z->rq_refills;
	p->zcrx_rqes = z->rqes;
	copy_log2(&p->zcrx_alloc_lat_ns, &z->alloc_lat);
	copy_batch(&p->zcrx_rq_batch, &z->rq_batch);
	pool_zcrx_unknown(p);
	if (!w || w->err || w->ifq != z->ifq)
		return;
	p->zcrx_niovs = (int64_t)w->niovs;
	p->zcrx_free_niovs = (int64_t)w->free_niovs;
	p->zcrx_user_niovs = (int64_t)w->user_niovs;
	p->zcrx_rq_pending = w->rq_pending;
	p->zcrx_rq_size = w->rq_entries;
	p->zcrx_niov_size = w->niov_size;
	p->zcrx_areas = w->nr_areas;
}

void snapbuild_apply_walk(struct dmt_binding_snap *b, const struct dmt_walk *w,
			  enum dmt_attach_mode mode)
{
	b->layout = w->layout == 2 ? "freelist" : "gen_pool";
	/* tracepoint values are exact at the event; the walk is now */
	if (b->free_niovs < 0 || mode != DMT_MODE_DEVMEM_TP) {
		b->total_niovs = w->total_niovs;
		b->free_niovs = w->free_niovs;
	}
	if (!b->dmabuf_size)
		b->dmabuf_size = w->dmabuf_size;
	if (!b->niov_size)
		b->niov_size = w->niov_size;
	if (!b->ifindex)
		b->ifindex = w->ifindex;
}

void snapbuild_finish_binding(struct dmt_binding_snap *b, bool in_pools_known)
{
	/*
	 * The kernel frees a binding only after its last pool let go of it,
	 * so a freed binding has nothing in pools: a pool linked here was
	 * read (pools are read first) before its destroy and the free that
	 * followed, and its inflight is stale (seen in the lab: freed, in
	 * pools 26).
	 */
	if (!b->alive) {
		b->pools = 0;
		b->in_pools = in_pools_known ? 0 : -1;
	}
	if (b->in_pools < 0 && in_pools_known)
		b->in_pools = 0;
	/*
	 * A TX binding's niovs are sent from (tx_vec), never allocated: its
	 * allocator reads all free, and it has no RX pool or token. Those RX
	 * figures are unknown with the reason, never 0.
	 */
	if (b->tx) {
		b->free_niovs = -1;
		b->in_pools = -1;
		b->held_by_sockets = -1;
		b->held_tokens = -1;
		b->held_why = DMT_HELD_TX;
	}
	if (b->total_niovs > 0 && b->free_niovs >= 0)
		b->occupancy = (double)(b->total_niovs - b->free_niovs) / b->total_niovs;
}

void snapbuild_light_niov_frees(struct dmt_snapshot *s)
{
	for (size_t i = 0; i < s->n_bindings; i++) {
		struct dmt_binding_snap *b = &s->bindings[i];

		b->free_niovs_count = 0;
		for (size_t j = 0; j < s->n_pools; j++)
			if (s->pools[j].kind == DMT_KIND_DEVMEM &&
			    s->pools[j].binding_id == b->id)
				b->free_niovs_count += s->pools[j].releases;
	}
}

/* ---- binding memory ------------------------------------------------------ */

struct binding_memo {
	uint32_t id;
	const char *layout;
};

struct binding_memory {
	struct binding_memo *v;
	size_t n;
};

struct binding_memory *binding_memory__new(void)
{
	return calloc(1, sizeof(struct binding_memory));
}

void binding_memory__free(struct binding_memory *bm)
{
	if (!bm)
		return;
	free(bm->v);
	free(bm);
}

int binding_memory__apply(struct binding_memory *bm, struct dmt_snapshot *s)
{
	struct binding_memo *next = calloc(s->n_bindings ? s->n_bindings : 1, sizeof(*next));
	size_t n = 0;

	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_bindings; i++) {
		struct dmt_binding_snap *b = &s->bindings[i];
		bool known = b->layout && strcmp(b->layout, "unknown");

		for (size_t j = 0; !known && j < bm->n; j++) {
			if (bm->v[j].id == b->id) {
				b->layout = bm->v[j].layout;
				known = true;
			}
		}
		/* a freed binding is reported once: nothing to remember after */
		if (known && b->alive)
			next[n++] = (struct binding_memo){ b->id, b->layout };
	}
	free(bm->v);
	bm->v = next;
	bm->n = n;
	return 0;
}

/* ---- rates -------------------------------------------------------------- */

/* What we remember of a pool between snapshots. */
struct pool_prev {
	uint64_t addr;
	uint32_t id;
	uint64_t holds;
	uint64_t releases;
	uint64_t ts_ns;
	int64_t slow;		/* page-pool-stats slow + slow_high_order, -1 unknown */
	uint64_t slow_holds, slow_calls;
};

/* slow + slow_high_order of a pool of pages (the only one counting them), -1 unknown */
static int64_t pool_slow_calls(const struct dmt_pool_snap *p)
{
	if (p->kind != DMT_KIND_PAGES || p->counters_unknown ||
	    p->pps[DMT_PPS_ALLOC_SLOW] < 0 || p->pps[DMT_PPS_ALLOC_SLOW_HIGH_ORDER] < 0)
		return -1;
	return p->pps[DMT_PPS_ALLOC_SLOW] + p->pps[DMT_PPS_ALLOC_SLOW_HIGH_ORDER];
}

/*
 * The mean refill batch from the kernel's slow-path counters: every page a
 * pool of pages takes from the page allocator is a hold, and every slow
 * path call (a bulk refill, or one high-order page) counts once, so the
 * holds over the calls between two reads is exact for that interval. The
 * sums carry over from the previous snapshot of the same pool.
 */
static void slow_batch_carry(struct dmt_pool_snap *p, const struct pool_prev *pp)
{
	int64_t slow = pool_slow_calls(p);

	p->slow_holds = pp->slow_holds;
	p->slow_calls = pp->slow_calls;
	if (slow < 0 || pp->slow < 0 || slow < pp->slow)
		return;
	p->slow_holds += objtrack_delta(p->holds, pp->holds);
	p->slow_calls += (uint64_t)(slow - pp->slow);
}

struct rate_tracker {
	struct pool_prev *prev;
	size_t n_prev;
};

static int cmp_prev(const void *a, const void *b)
{
	const struct pool_prev *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct rate_tracker *rate_tracker__new(void)
{
	return calloc(1, sizeof(struct rate_tracker));
}

void rate_tracker__free(struct rate_tracker *rt)
{
	if (!rt)
		return;
	free(rt->prev);
	free(rt);
}

int rate_tracker__apply(struct rate_tracker *rt, struct dmt_snapshot *s)
{
	struct pool_prev *next;

	for (size_t i = 0; i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		struct pool_prev key = { .addr = p->addr, .id = p->id };
		const struct pool_prev *pp = NULL;
		double dt;

		p->hold_rate = p->release_rate = 0;
		if (p->addr && rt->n_prev)
			pp = bsearch(&key, rt->prev, rt->n_prev, sizeof(key), cmp_prev);
		if (!pp && p->addr && p->id && rt->n_prev) {
			/* its id learned since: the same pool (objtrack) */
			key.id = 0;
			pp = bsearch(&key, rt->prev, rt->n_prev, sizeof(key), cmp_prev);
		}
		/* which pool is which, and what a counter did: objtrack's rules */
		if (!pp || s->ts_ns <= pp->ts_ns ||
		    !objtrack_same_pool(&(struct objtrack_ent){ .addr = pp->addr, .id = pp->id,
				.holds = pp->holds, .releases = pp->releases }, p))
			continue;
		/*
		 * restarted within the interval: what it did before the restart
		 * is not known, so no rate rather than a made-up one
		 */
		if (p->holds < pp->holds || p->releases < pp->releases)
			continue;
		dt = (s->ts_ns - pp->ts_ns) / 1e9;
		p->hold_rate = objtrack_delta(p->holds, pp->holds) / dt;
		p->release_rate = objtrack_delta(p->releases, pp->releases) / dt;
		slow_batch_carry(p, pp);
	}
	next = calloc(s->n_pools ? s->n_pools : 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_pools; i++) {
		next[i].addr = s->pools[i].addr;
		next[i].id = s->pools[i].id;
		next[i].holds = s->pools[i].holds;
		next[i].releases = s->pools[i].releases;
		next[i].ts_ns = s->ts_ns;
		next[i].slow = pool_slow_calls(&s->pools[i]);
		next[i].slow_holds = s->pools[i].slow_holds;
		next[i].slow_calls = s->pools[i].slow_calls;
	}
	if (s->n_pools)
		qsort(next, s->n_pools, sizeof(*next), cmp_prev);
	free(rt->prev);
	rt->prev = next;
	rt->n_prev = s->n_pools;
	return 0;
}
