// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop BPF side: page_pool tracepoints (always), devmem allocator
 * fentry/fexit (where the kernel lets them attach) and devmem tracepoints
 * (kernels carrying our series). User space picks what to load at run time
 * with bpf_program__set_autoload(); nothing here depends on a kernel version.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "devmemtop.h"

char LICENSE[] SEC("license") = "GPL";

#define NET_IOV_BIT		1UL	/* netmem_ref bit 0: a net_iov, not a page */
#define PAGE_SHIFT		12
#define MAX_CHUNK_WALK		(1 << 20)
#define IS_ERR_PTR(p)		((unsigned long)(p) >= (unsigned long)-4095)

/*
 * Set by user space before load, from /proc/kallsyms: the providers'
 * alloc functions (text symbols are listed even without KALLSYMS_ALL, so a
 * pool's provider is recognised by its ops->alloc_netmems).
 */
const volatile __u64 devmem_alloc_fn = 0;	/* mp_dmabuf_devmem_alloc_netmems */
const volatile __u64 io_uring_alloc_fn = 0;	/* io_pp_zc_alloc_netmems */
const volatile bool binding_free_takes_work = false;
/* devmem tracepoints attached: they own the binding counters */
const volatile bool use_devmem_tp = false;
/*
 * Light mode with the devmem_alloc tracepoint, the devmem mode with it or
 * with fexit/mp_dmabuf_devmem_alloc_netmems: a devmem pool's refill batch
 * is the niov count of one provider call (exact, one event per refill), and
 * that call locates the pool; the sampling windows leave devmem pools alone.
 */
const volatile bool light_devmem_refill = false;
/* the same for io_uring zcrx pools, with fexit/io_pp_zc_alloc_netmems */
const volatile bool light_zcrx_refill = false;
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_POOLS);
	__type(key, struct dmt_pool_key);
	__type(value, struct dmt_pool);
} pools SEC(".maps");

/* mmap()ed by user space: a snapshot reads all slots without a syscall each */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DMT_POOL_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct dmt_pool);
} pool_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_BINDINGS);
	__type(key, __u32);
	__type(value, struct dmt_binding);
} bindings SEC(".maps");

/* Start timestamps of provider alloc / niov free calls, per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} call_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DMT_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * The addresses the two test-run programs (light_read, walk_binding) may
 * read, filled and emptied by the BPF side only, from the tracepoints and
 * fentry/fexit hooks that saw the objects. BPF_F_RDONLY: every fd of these
 * maps is read-only towards the bpf() syscall, so whoever holds our fds
 * (ours, or stolen with pidfd_getfd) cannot add an address: the programs
 * check a user-supplied address against these before reading anything,
 * while pools, pool_slots and bindings stay writable for user space to
 * forget reported objects. Keyed by what the kernel object is: a pool by
 * its address and id, a binding by its address (value: its id).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_POOLS + DMT_POOL_SLOTS);
	__uint(map_flags, BPF_F_RDONLY);
	__type(key, struct dmt_pool_key);
	__type(value, __u32);
} live_pools SEC(".maps");

#include "live_bindings.h"

/* io_uring zcrx pools' interface queues, for walk_zcrx (the zcrx section) */
struct zcrx_live {
	__u64 ifq;
	__u32 id;
	__u32 pad;
};

/* read-only towards bpf(), as live_pools; keyed by the pool's address */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_ZCRX_POOLS);
	__uint(map_flags, BPF_F_RDONLY);
	__type(key, __u64);
	__type(value, struct zcrx_live);
} live_zcrx SEC(".maps");


/* All-zero templates: new map values are inserted from these, then filled. */
static const struct dmt_pool pool_template = {};
static const struct dmt_binding binding_template = {};

/* Output of walk_binding, read by user space right after the test run. */
struct dmt_walk walk_out = {};

static __always_inline void cnt_inc(__u32 idx, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += v;
}

static __always_inline __u32 log2_slot(__u64 v)
{
	/* round up: smallest k with v <= 2^k */
	__u32 k = 0;

	if (v <= 1)
		return 0;
	v--;
	if (v >> 32) { k += 32; v >>= 32; }
	if (v >> 16) { k += 16; v >>= 16; }
	if (v >> 8) { k += 8; v >>= 8; }
	if (v >> 4) { k += 4; v >>= 4; }
	if (v >> 2) { k += 2; v >>= 2; }
	if (v >> 1) { k += 1; v >>= 1; }
	k += v;
	return k < DMT_LOG2_SLOTS ? k : DMT_LOG2_SLOTS - 1;
}

static __always_inline void log2_add(struct dmt_log2_hist *h, __u64 v)
{
	__u32 k = log2_slot(v);

	if (k < DMT_LOG2_SLOTS)
		__sync_fetch_and_add(&h->slots[k], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, v);
}

static __always_inline void batch_add(struct dmt_batch_hist *h, __u32 n)
{
	if (n > DMT_BATCH_MAX)
		n = DMT_BATCH_MAX;
	/*
	 * Index with the register that was bounded: clang may otherwise
	 * compare one copy of n and index with another, which the verifier
	 * rejects as unbounded (seen in dm_alloc's light-mode refill path).
	 */
	barrier_var(n);
	__sync_fetch_and_add(&h->slots[n], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, n);
}

static __always_inline void emit(__u32 type, __u64 addr, __u32 id, __s32 ifindex,
				 __s64 a, __s64 b, __s64 c)
{
	struct dmt_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		cnt_inc(DMT_CNT_RB_DROPS, 1);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->addr = addr;
	e->type = type;
	e->id = id;
	e->ifindex = ifindex;
	e->a = a;
	e->b = b;
	e->c = c;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
}

/* Classify the pool's memory provider: DMT_POOL_DEVMEM / _IO_URING / 0. */
static __always_inline __u32 pool_provider(const struct page_pool *pool, struct dmt_pool *v)
{
	const struct page_pool___mp_ops *p = (const void *)pool;
	const struct memory_provider_ops *ops;
	__u64 fn;

	if (!v->mp_priv)
		return 0;
	/* kernels without mp_ops only ever had the devmem provider */
	if (!bpf_core_field_exists(p->mp_ops))
		return DMT_POOL_DEVMEM;
	ops = BPF_CORE_READ(p, mp_ops);
	if (!ops)
		return DMT_POOL_DEVMEM;
	fn = (__u64)BPF_CORE_READ(ops, alloc_netmems);
	if (devmem_alloc_fn && fn == devmem_alloc_fn)
		return DMT_POOL_DEVMEM;
	if (io_uring_alloc_fn && fn == io_uring_alloc_fn)
		return DMT_POOL_IO_URING;
	return 0;
}

/*
 * Pools of software devices (veth) have neither netdev nor napi set, but
 * their DMA device is the net_device's own struct device: recognise it by
 * its class name and step back to the net_device.
 */
static __always_inline struct net_device *netdev_of_device(struct device *d)
{
	const struct class *cls;
	char name[4] = {};

	if (!d)
		return NULL;
	cls = BPF_CORE_READ(d, class);
	if (!cls)
		return NULL;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(cls, name));
	if (name[0] != 'n' || name[1] != 'e' || name[2] != 't' || name[3])
		return NULL;
	return (void *)d - bpf_core_field_offset(struct net_device, dev);
}

/*
 * A pool is its address and its id: a destroyed pool's entry stays until a
 * snapshot has reported it, and a new pool may get its address before that.
 * Matching the address alone gave the new pool's events to the old entry
 * (and its holds, smaller than the old pool's, were dropped), so its first
 * sight came late. The id is read here anyway, to index the slot.
 */
static __always_inline struct dmt_pool *pool_find(const struct page_pool *pool)
{
	struct dmt_pool_key k = { .addr = (__u64)pool, .id = pool->user.id };
	__u32 idx = k.id & (DMT_POOL_SLOTS - 1);
	struct dmt_pool *v = bpf_map_lookup_elem(&pool_slots, &idx);

	if (v && v->id == k.id && v->addr == k.addr)
		return v;
	return bpf_map_lookup_elem(&pools, &k);
}

/* First sight of a pool: read its identity once, off the hot path. */
static __noinline struct dmt_pool *pool_new(const struct page_pool *pool, __u32 hold,
					    __u32 release, bool have_hold)
{
	struct dmt_pool_key k = { .addr = (__u64)pool };
	struct net_device *dev;
	struct napi_struct *napi;
	struct dmt_pool *v;
	__u32 idx, old;

	/*
	 * Claim the id's slot if it is free (id 0), else take a hash entry.
	 * A pool's id is its own (the kernel allocates them cyclically, from
	 * 1): if the slot already holds our id, a first sight on another CPU
	 * got here first and that entry is ours too. The address is written
	 * last, so pool_find matches a slot only once it is filled in.
	 */
	k.id = BPF_CORE_READ(pool, user.id);
	idx = k.id & (DMT_POOL_SLOTS - 1);
	v = bpf_map_lookup_elem(&pool_slots, &idx);
	old = 1;
	if (v && k.id) {
		old = __sync_val_compare_and_swap(&v->id, 0, k.id);
		if (old == k.id)
			return v;
	}
	if (old) {
		bpf_map_update_elem(&pools, &k, &pool_template, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&pools, &k);
		if (!v) {
			cnt_inc(DMT_CNT_POOL_MAP_FULL, 1);
			return NULL;
		}
	}
	v->id = k.id;
	v->nid = BPF_CORE_READ(pool, p.nid);
	v->queue = BPF_CORE_READ(pool, slow.queue_idx);
	v->mp_priv = (__u64)BPF_CORE_READ(pool, mp_priv);
	v->flags |= pool_provider(pool, v);
	napi = BPF_CORE_READ(pool, p.napi);
	if (napi)
		v->napi_id = BPF_CORE_READ(napi, napi_id);
	dev = BPF_CORE_READ(pool, slow.netdev);
	if (dev) {
		v->attr_src = DMT_ATTR_NETDEV;
	} else if (napi) {
		dev = BPF_CORE_READ(napi, dev);
		if (dev)
			v->attr_src = DMT_ATTR_NAPI;
	}
	if (!dev)
		dev = netdev_of_device(BPF_CORE_READ(pool, p.dev));
	if (dev && !v->attr_src)
		v->attr_src = DMT_ATTR_DEVICE;
	if (dev) {
		v->ifindex = BPF_CORE_READ(dev, ifindex);
		v->netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
		bpf_probe_read_kernel_str(v->ifname, sizeof(v->ifname), dev->name);
	}
	if (bpf_core_type_exists(struct net_devmem_dmabuf_binding) && (v->flags & DMT_POOL_DEVMEM)) {
		struct net_devmem_dmabuf_binding *b = (void *)v->mp_priv;

		v->binding_id = BPF_CORE_READ(b, id);
	}
	/*
	 * The tracepoints pass the pool's cumulative counters: everything up
	 * to this event happened before we looked. The current event is ours.
	 */
	v->hold_cnt = have_hold ? hold : BPF_CORE_READ(pool, pages_state_hold_cnt);
	v->release_cnt = have_hold ? BPF_CORE_READ(pool, pages_state_release_cnt.counter) : release;
	v->hold_base = have_hold ? hold - 1 : v->hold_cnt;
	v->release_base = have_hold ? v->release_cnt : release - 1;
	__sync_lock_test_and_set(&v->addr, k.addr);	/* ordered after the fields */
	bpf_map_update_elem(&live_pools, &k, &k.id, BPF_ANY);
	emit(DMT_EV_POOL_NEW, k.addr, v->id, v->ifindex, v->queue, v->napi_id, 0);
	return v;
}

static __always_inline void note_kind(struct dmt_pool *v, netmem_ref netmem)
{
	__u32 f = (netmem & NET_IOV_BIT) ? DMT_POOL_SAW_NIOV : DMT_POOL_SAW_PAGE;

	/* read before write: keeps the cache line shared in the common case */
	if (!(v->flags & f))
		__sync_fetch_and_or(&v->flags, f);
}

SEC("tp_btf/page_pool_state_hold")
int BPF_PROG(pp_hold, const struct page_pool *pool, netmem_ref netmem, __u32 hold)
{
	struct dmt_pool *v;
	__u32 n;

	v = pool_find(pool);
	if (!v) {
		v = pool_new(pool, hold, 0, true);
		if (!v)
			return 0;
	}
	/* (a no-op after pool_new, unless a release on another CPU saw it first) */
	if ((__s32)(hold - v->hold_cnt) > 0)
		v->hold_cnt = hold;
	note_kind(v, netmem);
	if ((light_devmem_refill && (v->flags & DMT_POOL_DEVMEM)) ||
	    (light_zcrx_refill && (v->flags & DMT_POOL_IO_URING)))
		return 0;

	/*
	 * Refill batches. A refill that fills the alloc cache increments
	 * pool->alloc.count before each hold tracepoint (1, 2, ... N); a
	 * refill that hands out one item leaves it at 0. Holds are
	 * serialised per pool (one consumer), so no atomics on batch_open.
	 */
	n = pool->alloc.count;
	if (n == 0) {
		if (v->batch_open)
			batch_add(&v->refill, v->batch_open);
		v->batch_open = 0;
		batch_add(&v->refill, 1);
	} else if (n == v->batch_open + 1) {
		v->batch_open = n;
	} else {
		if (v->batch_open)
			batch_add(&v->refill, v->batch_open);
		v->batch_open = n;
	}
	return 0;
}

/*
 * *p = val if val is newer (wrapping u32 counter), atomically: releases of
 * one pool run on several CPUs at once, and a plain compare-and-store let an
 * older value overwrite a newer one (a CPU that read the counter before
 * another CPU's store): the full mode then stayed short of the kernel's
 * release count until the next release, at a quiet point for good
 * (26-light-vs-full: 305 releases short, holds equal). Bounded retries.
 */
static __always_inline void counter_advance(__u32 *p, __u32 val)
{
	__u32 old = *p;

	for (int i = 0; i < 32; i++) {
		__u32 cur;

		if ((__s32)(val - old) <= 0)
			return;
		cur = __sync_val_compare_and_swap(p, old, val);
		if (cur == old)
			return;
		old = cur;
	}
}

SEC("tp_btf/page_pool_state_release")
int BPF_PROG(pp_release, const struct page_pool *pool, netmem_ref netmem, __u32 release)
{
	struct dmt_pool *v;

	v = pool_find(pool);
	if (!v) {
		pool_new(pool, 0, release, false);
		return 0;
	}
	/* releases come from any CPU: keep the newest counter value */
	counter_advance(&v->release_cnt, release);
	return 0;
}

SEC("tp_btf/page_pool_release")
int BPF_PROG(pp_destroy, const struct page_pool *pool, __s32 inflight, __u32 hold,
	     __u32 release)
{
	__u64 key = (__u64)pool;
	struct dmt_pool *v;

	v = pool_find(pool);
	if (!v) {
		v = pool_new(pool, hold, 0, true);
		if (!v)
			return 0;
		v->hold_base = hold;
		v->release_base = release;
	}
	v->hold_cnt = hold;
	v->release_cnt = release;
	v->release_inflight = inflight;
	v->release_calls++;
	if (v->batch_open) {
		batch_add(&v->refill, v->batch_open);
		v->batch_open = 0;
	}
	__sync_fetch_and_or(&v->flags, DMT_POOL_RELEASED);
	if (inflight == 0) {
		struct dmt_pool_key k = { .addr = key, .id = v->id };

		__sync_fetch_and_or(&v->flags, DMT_POOL_GONE);
		/* the kernel frees the pool after this: light_read no longer reads it */
		bpf_map_delete_elem(&live_pools, &k);
		/* nor walk_zcrx its ifq: the pool's reference on it goes now */
		bpf_map_delete_elem(&live_zcrx, &key);
	}
	emit(DMT_EV_POOL_RELEASE, key, v->id, v->ifindex, inflight, hold, release);
	return 0;
}

SEC("tp_btf/page_pool_update_nid")
int BPF_PROG(pp_nid, const struct page_pool *pool, int new_nid)
{
	__u64 key = (__u64)pool;
	struct dmt_pool *v;

	v = pool_find(pool);
	if (!v)
		return 0;
	v->nid = new_nid;
	v->nid_changes++;
	emit(DMT_EV_POOL_NID, key, v->id, v->ifindex, new_nid, 0, 0);
	return 0;
}

/* ---- devmem bindings ---------------------------------------------------- */

struct chunk_walk {
	struct list_head *head;
	struct list_head *pos;
	__u64 total;
	__u64 avail;
};

static long chunk_step(__u64 i, struct chunk_walk *w)
{
	struct list_head *pos = w->pos;
	struct list_head *next = BPF_CORE_READ(pos, next);
	struct gen_pool_chunk *c;

	if (!next || next == w->head)
		return 1;
	c = container_of(next, struct gen_pool_chunk, next_chunk);
	w->total += BPF_CORE_READ(c, end_addr) - BPF_CORE_READ(c, start_addr) + 1;
	w->avail += BPF_CORE_READ(c, avail.counter);
	w->pos = next;
	return 0;
}

/* A TX binding (bind-tx)? Kernels without the field have RX bindings only. */
static __always_inline bool binding_is_tx(struct net_devmem_dmabuf_binding *b)
{
	struct net_devmem_dmabuf_binding___tx *t = (void *)b;

	return bpf_core_field_exists(t->direction) &&
	       BPF_CORE_READ(t, direction) == DMA_TO_DEVICE;
}

static __always_inline __u32 binding_niov_shift(struct net_devmem_dmabuf_binding *b)
{
	struct net_devmem_dmabuf_binding___niov_shift *s = (void *)b;
	__u32 shift = PAGE_SHIFT;

	if (bpf_core_field_exists(s->niov_shift))
		shift = BPF_CORE_READ_BITFIELD_PROBED(s, niov_shift);
	return shift < 32 ? shift : PAGE_SHIFT;
}

/* Fill total/free niovs of a live binding, whichever layout it has. */
static __noinline int binding_walk(struct net_devmem_dmabuf_binding *b, struct dmt_walk *w)
{
	struct net_devmem_dmabuf_binding___freelist *fl = (void *)b;
	struct net_devmem_dmabuf_binding___genpool *gp = (void *)b;
	struct net_device *dev;
	struct dma_buf *dmabuf;
	__u32 shift;

	if (!b)
		return -1;
	shift = binding_niov_shift(b);
	w->id = BPF_CORE_READ(b, id);
	dev = BPF_CORE_READ(b, dev);
	w->ifindex = dev ? BPF_CORE_READ(dev, ifindex) : 0;
	w->netns = dev ? BPF_CORE_READ(dev, nd_net.net, ns.inum) : 0;
	dmabuf = BPF_CORE_READ(b, dmabuf);
	w->dmabuf_size = dmabuf ? BPF_CORE_READ(dmabuf, size) : 0;
	w->niov_size = 1U << shift;

	if (bpf_core_field_exists(fl->free_count)) {
		w->layout = 2;
		w->free_niovs = BPF_CORE_READ_BITFIELD_PROBED(fl, free_count);
		if (bpf_core_field_exists(fl->total_niovs))
			w->total_niovs = BPF_CORE_READ_BITFIELD_PROBED(fl, total_niovs);
		return 0;
	}
	if (bpf_core_field_exists(gp->chunk_pool)) {
		struct gen_pool *pool = BPF_CORE_READ(gp, chunk_pool);
		struct chunk_walk cw = {};

		if (!pool)
			return -2;
		w->layout = 1;
		cw.head = (void *)pool + bpf_core_field_offset(struct gen_pool, chunks);
		cw.pos = cw.head;
		bpf_loop(MAX_CHUNK_WALK, chunk_step, &cw, 0);
		w->total_niovs = cw.total >> shift;
		w->free_niovs = cw.avail >> shift;
		return 0;
	}
	return -3;
}

/*
 * Run on demand by user space (BPF_PROG_TEST_RUN, one argument: the
 * binding's address) at snapshot time, for bindings known to be alive.
 */
SEC("raw_tp")
int walk_binding(__u64 *ctx)
{
	struct net_devmem_dmabuf_binding *b = (void *)ctx[0];
	__u64 addr = ctx[0];
	struct dmt_walk w = {};

	/* only a binding our hooks saw created and not yet freed */
	if (!bpf_map_lookup_elem(&live_bindings, &addr))
		w.err = DMT_WALK_UNKNOWN;
	else
		w.err = binding_walk(b, &w);
	walk_out = w;
	return 0;
}

static __always_inline void binding_note(__u64 addr, __u32 id)
{
	if (addr)
		bpf_map_update_elem(&live_bindings, &addr, &id, BPF_ANY);
}

static __always_inline void binding_forget(__u64 addr)
{
	bpf_map_delete_elem(&live_bindings, &addr);
}

static __noinline struct dmt_binding *binding_get(struct net_devmem_dmabuf_binding *b, __u32 id)
{
	struct dmt_binding *v;

	v = bpf_map_lookup_elem(&bindings, &id);
	if (v)
		return v;
	bpf_map_update_elem(&bindings, &id, &binding_template, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&bindings, &id);
	if (!v) {
		cnt_inc(DMT_CNT_BIND_MAP_FULL, 1);
		return NULL;
	}
	v->id = id;
	v->addr = (__u64)b;
	binding_note((__u64)b, id);
	v->free_niovs_tp = -1;
	v->out_at_unbind = -1;
	v->out_at_free = -1;
	if (b) {
		struct net_device *dev = BPF_CORE_READ(b, dev);
		struct dma_buf *dmabuf = BPF_CORE_READ(b, dmabuf);

		v->ifindex = dev ? BPF_CORE_READ(dev, ifindex) : 0;
		v->dmabuf_size = dmabuf ? BPF_CORE_READ(dmabuf, size) : 0;
		v->niov_size = 1U << binding_niov_shift(b);
		if (binding_is_tx(b))
			v->flags |= DMT_BIND_TX;
	}
	return v;
}

static __always_inline __s64 binding_outstanding(struct net_devmem_dmabuf_binding *b,
						 struct dmt_binding *v)
{
	struct dmt_walk w = {};

	if (binding_walk(b, &w))
		return -1;
	if (w.total_niovs)
		v->total_niovs = w.total_niovs;
	if (w.layout == 2)
		v->flags |= DMT_BIND_FREELIST;
	return w.total_niovs - w.free_niovs;
}

SEC("fexit/net_devmem_bind_dmabuf")
int BPF_PROG(bind_exit)
{
	struct net_devmem_dmabuf_binding *b;
	struct dmt_binding *v;
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	b = (void *)ret;
	if (!b || IS_ERR_PTR(b))
		return 0;
	v = binding_get(b, BPF_CORE_READ(b, id));
	if (!v)
		return 0;
	v->create_ns = bpf_ktime_get_ns();
	v->flags |= DMT_BIND_SEEN_CREATE;
	binding_outstanding(b, v);
	emit(DMT_EV_BIND_CREATE, ret, v->id, v->ifindex, v->total_niovs, v->dmabuf_size, 0);
	return 0;
}

SEC("fentry/net_devmem_unbind_dmabuf")
int BPF_PROG(unbind_entry, struct net_devmem_dmabuf_binding *b)
{
	struct dmt_binding *v = binding_get(b, BPF_CORE_READ(b, id));

	if (!v)
		return 0;
	v->unbind_ns = bpf_ktime_get_ns();
	v->out_at_unbind = binding_outstanding(b, v);
	/* the flag last: see binding_free_entry */
	__sync_fetch_and_or(&v->flags, DMT_BIND_UNBOUND);
	emit(DMT_EV_BIND_UNBIND, (__u64)b, v->id, v->ifindex, v->out_at_unbind, 0, 0);
	return 0;
}

SEC("fentry/__net_devmem_dmabuf_binding_free")
int BPF_PROG(binding_free_entry, void *arg)
{
	struct net_devmem_dmabuf_binding *b = arg;
	struct dmt_binding *v;

	if (binding_free_takes_work)
		b = (void *)((char *)arg -
			     bpf_core_field_offset(struct net_devmem_dmabuf_binding___unbind_w,
						   unbind_w));
	v = binding_get(b, BPF_CORE_READ(b, id));
	if (!v)
		return 0;
	v->free_ns = bpf_ktime_get_ns();
	v->out_at_free = binding_outstanding(b, v);
	/*
	 * The flag last, after the figures it makes final: a snapshot that
	 * sees FREED reports the binding once and deletes its entry, so one
	 * that came while the walk ran (tens of ms for a gen_pool of
	 * thousands of chunks under the lab's TCG) reported leaked_at_free
	 * unknown and dropped the value written after it.
	 */
	__sync_fetch_and_or(&v->flags, DMT_BIND_FREED);
	binding_forget((__u64)b);
	emit(DMT_EV_BIND_FREE, (__u64)b, v->id, v->ifindex, v->out_at_free, v->total_niovs, 0);
	return 0;
}

/*
 * The end of a devmem provider call (its devmem_alloc tracepoint, or fexit
 * where that does not exist) comes after the holds of its refill, so the
 * batch pp_hold has open is complete: close it there, or a bulk refill (the
 * freelist kernel) would stay open until the next one and every snapshot
 * would lack the newest batch. Same NAPI context as pp_hold: no race on
 * batch_open; a second close (both hooks attached) finds it 0.
 */
static __always_inline void pool_batch_close(const struct page_pool *pool)
{
	struct dmt_pool *v = pool_find(pool);

	if (v && v->batch_open) {
		batch_add(&v->refill, v->batch_open);
		v->batch_open = 0;
	}
}

/*
 * The devmem mode (light mode with devmem_alloc): one provider call is one
 * refill of n niovs, and the call locates the pool, with no program on the
 * per-page tracepoints. The full mode's pp_hold sees the same refill as n
 * holds with pool->alloc.count 1..n (0 for a single niov).
 */
static __always_inline void provider_refill(const struct page_pool *pool, __u32 n)
{
	struct dmt_pool *pv = pool_find(pool);

	if (!pv)
		pv = pool_new(pool, BPF_CORE_READ(pool, pages_state_hold_cnt), 0, true);
	if (!pv)
		return;
	/* a provider hands out net_iovs only: the holds are niovs */
	note_kind(pv, NET_IOV_BIT);
	if (n)
		batch_add(&pv->refill, n);
}

SEC("fentry/mp_dmabuf_devmem_alloc_netmems")
int BPF_PROG(mp_alloc_entry)
{
	__u64 tid = bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&call_start, &tid, &ts, BPF_ANY);
	return 0;
}

/*
 * Every fexit program here reads its return value with bpf_get_func_ret(),
 * never as the argument after the last one it names: a kernel that adds or
 * drops an argument (tcp_recvmsg lost addr_len in 7.x) moves the return
 * value, and a positional read is then refused by the verifier or, worse,
 * reads an argument.
 */
SEC("fexit/mp_dmabuf_devmem_alloc_netmems")
int BPF_PROG(mp_alloc_exit, struct page_pool *pool)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct net_devmem_dmabuf_binding *b;
	__u64 now = bpf_ktime_get_ns();
	struct dmt_binding *v;
	__u64 *start, delta = 0, ret = 0;
	__u32 n;

	bpf_get_func_ret(ctx, &ret);
	cnt_inc(DMT_CNT_PROVIDER_CALLS, 1);
	pool_batch_close(pool);
	start = bpf_map_lookup_elem(&call_start, &tid);
	if (start) {
		delta = now - *start;
		bpf_map_delete_elem(&call_start, &tid);
	} else {
		cnt_inc(DMT_CNT_LAT_MISSED, 1);
	}
	b = BPF_CORE_READ(pool, mp_priv);
	if (!b)
		return 0;
	v = binding_get(b, BPF_CORE_READ(b, id));
	if (!v)
		return 0;
	if (!ret) {
		if (!use_devmem_tp) {
			__sync_fetch_and_add(&v->alloc_fail, 1);
			emit(DMT_EV_ALLOC_FAIL, (__u64)b, v->id, v->ifindex, -1, 0, 0);
		}
		return 0;
	}
	/* one returned, the rest went into the pool's alloc cache */
	n = 1 + BPF_CORE_READ(pool, alloc.count);
	if (!use_devmem_tp) {
		__sync_fetch_and_add(&v->alloc_calls, 1);
		__sync_fetch_and_add(&v->alloc_niovs, n);
		if (light_devmem_refill)
			provider_refill(pool, n);
	}
	if (start) {
		log2_add(&v->alloc_lat, delta);
		log2_add(&v->alloc_lat_niov, delta / n);
	}
	return 0;
}

/* Keys of call_start: thread id, with the top bit telling free from alloc. */
#define FREE_KEY(tid)	((tid) | (1ULL << 63))

SEC("fentry/mp_dmabuf_devmem_release_page")
int BPF_PROG(mp_release_entry)
{
	__u64 tid = FREE_KEY(bpf_get_current_pid_tgid());
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&call_start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("fexit/mp_dmabuf_devmem_release_page")
int BPF_PROG(mp_release_exit, struct page_pool *pool, netmem_ref netmem)
{
	__u64 tid = FREE_KEY(bpf_get_current_pid_tgid());
	struct net_devmem_dmabuf_binding *b;
	struct dmt_binding *v;
	__u64 *start;
	__u32 id;

	start = bpf_map_lookup_elem(&call_start, &tid);
	if (!start) {
		cnt_inc(DMT_CNT_LAT_MISSED, 1);
		return 0;
	}
	b = BPF_CORE_READ(pool, mp_priv);
	id = b ? BPF_CORE_READ(b, id) : 0;
	v = b ? bpf_map_lookup_elem(&bindings, &id) : NULL;
	if (v) {
		if (!use_devmem_tp)
			__sync_fetch_and_add(&v->free_niovs_cnt, 1);
		log2_add(&v->free_lat, bpf_ktime_get_ns() - *start);
	}
	bpf_map_delete_elem(&call_start, &tid);
	return 0;
}

SEC("fexit/sock_devmem_dontneed")
int BPF_PROG(dontneed_exit)
{
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	cnt_inc(DMT_CNT_DONTNEED_CALLS, 1);
	if ((long)ret > 0)
		cnt_inc(DMT_CNT_DONTNEED_TOKENS, ret);
	return 0;
}

/*
 * devmem tracepoints (our kernel series, kernel-patches/0003): every number
 * is a scalar argument, so these need neither fentry nor the binding layout.
 */
SEC("tp_btf/devmem_binding_create")
int BPF_PROG(dm_create, const struct net_devmem_dmabuf_binding *binding, __u32 id,
	     int ifindex, __u64 dmabuf_size, __u32 niov_size, __u32 total, __u32 nr_chunks)
{
	struct dmt_binding *v = binding_get(NULL, id);

	if (!v)
		return 0;
	v->addr = (__u64)binding;
	binding_note((__u64)binding, id);
	v->ifindex = ifindex;
	v->dmabuf_size = dmabuf_size;
	v->niov_size = niov_size;
	v->total_niovs = total;
	v->free_niovs_tp = total;
	v->create_ns = bpf_ktime_get_ns();
	/* 7.x fires it for bind-tx too (7.3/0003); 6.12 has no direction */
	if (binding_is_tx((struct net_devmem_dmabuf_binding *)binding))
		v->flags |= DMT_BIND_TX;
	v->flags |= DMT_BIND_SEEN_CREATE;
	emit(DMT_EV_BIND_CREATE, (__u64)binding, id, ifindex, total, dmabuf_size, nr_chunks);
	return 0;
}

static __always_inline int binding_end(const void *binding, __u32 id, __u32 free_niovs,
				       __u32 total, bool freed)
{
	struct dmt_binding *v = binding_get(NULL, id);
	__s64 out = (__s64)total - free_niovs;

	if (!v)
		return 0;
	if (!v->addr) {
		v->addr = (__u64)binding;
		if (!freed)
			binding_note((__u64)binding, id);
	}
	v->total_niovs = total;
	v->free_niovs_tp = free_niovs;
	if (freed) {
		binding_forget((__u64)binding);
		v->free_ns = bpf_ktime_get_ns();
		v->out_at_free = out;
		/* the flag after the figures (binding_free_entry) */
		__sync_fetch_and_or(&v->flags, DMT_BIND_FREED);
		emit(DMT_EV_BIND_FREE, (__u64)binding, id, v->ifindex, out, total, 0);
	} else {
		v->unbind_ns = bpf_ktime_get_ns();
		v->out_at_unbind = out;
		__sync_fetch_and_or(&v->flags, DMT_BIND_UNBOUND);
		emit(DMT_EV_BIND_UNBIND, (__u64)binding, id, v->ifindex, out, total, 0);
	}
	return 0;
}

SEC("tp_btf/devmem_binding_unbind")
int BPF_PROG(dm_unbind, const struct net_devmem_dmabuf_binding *binding, __u32 id,
	     __u32 free_niovs, __u32 total)
{
	return binding_end(binding, id, free_niovs, total, false);
}

SEC("tp_btf/devmem_binding_free")
int BPF_PROG(dm_free, const struct net_devmem_dmabuf_binding *binding, __u32 id,
	     __u32 free_niovs, __u32 total)
{
	return binding_end(binding, id, free_niovs, total, true);
}

SEC("tp_btf/devmem_alloc")
int BPF_PROG(dm_alloc, const struct page_pool *pool,
	     const struct net_devmem_dmabuf_binding *binding, __u32 id, __u32 count,
	     __u32 free_niovs)
{
	struct dmt_binding *v = bpf_map_lookup_elem(&bindings, &id);

	if (!v) {
		v = binding_get(NULL, id);
		if (!v)
			return 0;
		v->addr = (__u64)binding;
	}
	__sync_fetch_and_add(&v->alloc_calls, 1);
	__sync_fetch_and_add(&v->alloc_niovs, count);
	v->free_niovs_tp = free_niovs;
	cnt_inc(DMT_CNT_PROVIDER_CALLS, 1);
	if (light_devmem_refill && pool) {
		provider_refill(pool, count);
	} else if (pool) {
		pool_batch_close(pool);
	}
	return 0;
}

SEC("tp_btf/devmem_alloc_fail")
int BPF_PROG(dm_alloc_fail, const struct page_pool *pool,
	     const struct net_devmem_dmabuf_binding *binding, __u32 id, __u32 free_niovs,
	     __u32 total)
{
	struct dmt_binding *v = binding_get(NULL, id);

	if (!v)
		return 0;
	if (!v->addr)
		v->addr = (__u64)binding;
	__sync_fetch_and_add(&v->alloc_fail, 1);
	v->free_niovs_tp = free_niovs;
	v->total_niovs = total;
	emit(DMT_EV_ALLOC_FAIL, (__u64)binding, id, v->ifindex, free_niovs, total, 0);
	return 0;
}

SEC("tp_btf/devmem_niov_free")
int BPF_PROG(dm_niov_free, const void *niov, const struct net_devmem_dmabuf_binding *binding,
	     __u32 id, __u32 free_niovs)
{
	struct dmt_binding *v = bpf_map_lookup_elem(&bindings, &id);

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->free_niovs_cnt, 1);
	v->free_niovs_tp = free_niovs;
	return 0;
}

SEC("tp_btf/devmem_dontneed")
int BPF_PROG(dm_dontneed, const void *sk, __u32 nr_ranges, __u32 nr_frags, __u32 nr_freed)
{
	cnt_inc(DMT_CNT_DONTNEED_CALLS, 1);
	cnt_inc(DMT_CNT_DONTNEED_TOKENS, nr_freed);
	return 0;
}

/* ---- devmem TX ------------------------------------------------------------ */

/*
 * A TX binding (bind-tx) is sent from: sendmsg with SCM_DEVMEM_DMABUF names
 * it by id (net_devmem_get_binding, once per call), each iov is an offset
 * into its dma-buf (net_devmem_get_niov_at: NULL past its end), the frags
 * go into skbs (skb_zerocopy_iter_stream: the bytes it added), and every
 * skb frag on a niov holds a reference (net_devmem_get_net_iov/_put_net_iov)
 * until the skb is freed, after the NIC read it. Per binding: calls, bytes,
 * refused sends, references taken and dropped, and per niov the time from
 * its first reference to its last (tx_refs; a niov whose last reference
 * drops while another CPU takes a new one may lose that new one's time:
 * counted in DMT_CNT_TX_REF_LOST, as a full map is). All fentry/fexit: the
 * TX path has no tracepoints; loaded only where the kernel has devmem TX.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_TX_REFS);
	__type(key, __u64);		/* the niov's address */
	__type(value, struct dmt_tx_ref);
} tx_refs SEC(".maps");

/* the TX binding @id as the tool knows it, or NULL */
static __always_inline struct dmt_binding *tx_binding(__u32 id)
{
	struct dmt_binding *v = bpf_map_lookup_elem(&bindings, &id);

	return v && (v->flags & DMT_BIND_TX) ? v : NULL;
}

SEC("fexit/net_devmem_get_binding")
int BPF_PROG(tx_bind_exit, void *sk, unsigned int dmabuf_id)
{
	struct net_devmem_dmabuf_binding *b;
	struct dmt_binding *v;
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	if (ret && !IS_ERR_PTR(ret)) {
		b = (void *)ret;
		v = binding_get(b, BPF_CORE_READ(b, id));
		if (v)
			__sync_fetch_and_add(&v->tx_sendmsg, 1);
		return 0;
	}
	/* refused: no TX binding of that id, or a route to another device */
	v = tx_binding(dmabuf_id);
	if (v)
		__sync_fetch_and_add(&v->tx_errors, 1);
	else
		cnt_inc(DMT_CNT_TX_NO_BINDING, 1);
	return 0;
}

SEC("fexit/net_devmem_get_niov_at")
int BPF_PROG(tx_niov_at_exit, struct net_devmem_dmabuf_binding *b)
{
	struct dmt_binding *v;
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	if (ret || !b)
		return 0;
	/* an iov offset past the end of the dma-buf: the send fails */
	v = tx_binding(BPF_CORE_READ(b, id));
	if (v)
		__sync_fetch_and_add(&v->tx_errors, 1);
	return 0;
}

SEC("fexit/skb_zerocopy_iter_stream")
int BPF_PROG(tx_iter_exit)
{
	struct net_devmem_dmabuf_binding *b;
	struct dmt_binding *v;
	__u64 arg = 0, ret = 0;

	/* the binding is the sixth argument on devmem TX kernels */
	if (bpf_get_func_arg(ctx, 5, &arg) || !arg)
		return 0;
	bpf_get_func_ret(ctx, &ret);
	if ((long)(int)ret <= 0)
		return 0;
	b = (void *)arg;
	v = tx_binding(BPF_CORE_READ(b, id));
	if (v)
		__sync_fetch_and_add(&v->tx_bytes, (int)ret);
	return 0;
}

/* the binding of a TX niov, by its chunk owner */
static __always_inline struct dmt_binding *tx_niov_binding(struct net_iov___tx *niov)
{
	struct dmabuf_genpool_chunk_owner___tx *o;
	struct net_devmem_dmabuf_binding *b;
	struct net_iov_area___tx *area;

	area = BPF_CORE_READ(niov, owner);
	if (!area)
		return NULL;
	o = (void *)((char *)area - bpf_core_field_offset(struct dmabuf_genpool_chunk_owner___tx, area));
	b = BPF_CORE_READ(o, binding);
	return b ? tx_binding(BPF_CORE_READ(b, id)) : NULL;
}

SEC("fentry/net_devmem_get_net_iov")
int BPF_PROG(tx_ref_get, struct net_iov___tx *niov)
{
	struct dmt_binding *v = tx_niov_binding(niov);
	struct dmt_tx_ref ref = {}, *r;
	__u64 key = (__u64)niov;

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->tx_refs_taken, 1);
	r = bpf_map_lookup_elem(&tx_refs, &key);
	if (!r) {
		ref.first_ns = bpf_ktime_get_ns();
		ref.refs = 1;
		ref.binding_id = v->id;
		if (!bpf_map_update_elem(&tx_refs, &key, &ref, BPF_NOEXIST))
			return 0;
		r = bpf_map_lookup_elem(&tx_refs, &key);	/* another CPU made it */
		if (!r) {
			cnt_inc(DMT_CNT_TX_REF_LOST, 1);
			return 0;
		}
	}
	__sync_fetch_and_add(&r->refs, 1);
	return 0;
}

SEC("fentry/net_devmem_put_net_iov")
int BPF_PROG(tx_ref_put, struct net_iov___tx *niov)
{
	struct dmt_binding *v = tx_niov_binding(niov);
	__u64 key = (__u64)niov;
	struct dmt_tx_ref *r;

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->tx_refs_dropped, 1);
	r = bpf_map_lookup_elem(&tx_refs, &key);
	if (!r) {
		cnt_inc(DMT_CNT_TX_REF_LOST, 1);
		return 0;
	}
	if (__sync_fetch_and_add(&r->refs, -1) != 1)
		return 0;
	log2_add(&v->tx_ref_time, bpf_ktime_get_ns() - r->first_ns);
	bpf_map_delete_elem(&tx_refs, &key);
	return 0;
}

/* ---- io_uring zero-copy receive ------------------------------------------ */

/*
 * A zcrx pool's provider call, io_pp_zc_alloc_netmems(), refills the pool's
 * alloc cache (up to PP_ALLOC_CACHE_REFILL niovs) from the refill ring, or
 * from the areas' freelists when the ring gives none, and returns 0 when
 * both are empty (zcrx's allocation failure). Per pool (zcrx_pools): calls,
 * niovs, failures, the call's latency and the ring entries it took (the
 * ring's cached head before and after: the kernel's own index, not the
 * ring memory user space writes). The interface queue's areas and ring are
 * read at snapshot time by walk_zcrx, only for pools these hooks saw alive
 * (live_zcrx, above: added at a provider call, removed at the pool's final
 * page_pool_release; the pool holds a reference on its ifq until then).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_ZCRX_POOLS);
	__type(key, struct dmt_pool_key);
	__type(value, struct dmt_zcrx_pool);
} zcrx_pools SEC(".maps");

struct zcrx_call {
	__u64 ts;
	__u32 head;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct zcrx_call);
} zcrx_start SEC(".maps");

static const struct dmt_zcrx_pool zcrx_template = {};

/* Output of walk_zcrx, read by user space right after the test run. */
struct dmt_zcrx_walk zcrx_walk_out = {};

/* The refill ring's cached head: entries the kernel has taken, ever (u32). */
static __always_inline __u32 zcrx_rq_head(const void *ifq)
{
	const struct io_zcrx_ifq___areas *a = ifq;
	const struct io_zcrx_ifq___one_area *o = ifq;

	if (bpf_core_field_exists(a->rq))
		return BPF_CORE_READ(a, rq.cached_head);
	if (bpf_core_field_exists(o->cached_rq_head))
		return BPF_CORE_READ(o, cached_rq_head);
	return 0;
}

static __noinline struct dmt_zcrx_pool *zcrx_pool_get(const struct page_pool *pool)
{
	struct dmt_pool_key k = { .addr = (__u64)pool };
	struct zcrx_live live = {};
	struct dmt_zcrx_pool *z;
	__u64 addr = (__u64)pool;

	if (!pool)
		return NULL;
	k.id = BPF_CORE_READ(pool, user.id);
	z = bpf_map_lookup_elem(&zcrx_pools, &k);
	if (z)
		return z;
	bpf_map_update_elem(&zcrx_pools, &k, &zcrx_template, BPF_NOEXIST);
	z = bpf_map_lookup_elem(&zcrx_pools, &k);
	if (!z) {
		cnt_inc(DMT_CNT_ZCRX_MAP_FULL, 1);
		return NULL;
	}
	z->ifq = (__u64)BPF_CORE_READ(pool, mp_priv);
	live.ifq = z->ifq;
	live.id = k.id;
	bpf_map_update_elem(&live_zcrx, &addr, &live, BPF_ANY);
	return z;
}

/*
 * The pool's entry is made here, before the holds of its first refill: a
 * snapshot that lists the pool (pp_hold saw it) then knows it for a zcrx
 * pool, rather than showing it with no zcrx figure until the call ended.
 */
SEC("fentry/io_pp_zc_alloc_netmems")
int BPF_PROG(zc_alloc_entry, struct page_pool *pool)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct zcrx_call call = { .ts = bpf_ktime_get_ns() };

	zcrx_pool_get(pool);
	call.head = zcrx_rq_head(BPF_CORE_READ(pool, mp_priv));
	bpf_map_update_elem(&zcrx_start, &tid, &call, BPF_ANY);
	return 0;
}

/*
 * One pool's provider calls are serialised (its NAPI context): plain
 * increments on its entry. Return value by bpf_get_func_ret(), as above.
 */
SEC("fexit/io_pp_zc_alloc_netmems")
int BPF_PROG(zc_alloc_exit, struct page_pool *pool)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct dmt_zcrx_pool *z;
	struct zcrx_call *call;
	__u64 ret = 0;
	__u32 n, rqes;

	bpf_get_func_ret(ctx, &ret);
	pool_batch_close(pool);
	call = bpf_map_lookup_elem(&zcrx_start, &tid);
	z = zcrx_pool_get(pool);
	if (!call) {
		cnt_inc(DMT_CNT_LAT_MISSED, 1);
	} else if (z) {
		rqes = zcrx_rq_head((void *)z->ifq) - call->head;
		log2_add(&z->alloc_lat, bpf_ktime_get_ns() - call->ts);
		if (rqes) {
			z->rq_refills++;
			z->rqes += rqes;
			batch_add(&z->rq_batch, rqes);
		}
	}
	if (call)
		bpf_map_delete_elem(&zcrx_start, &tid);
	if (!z)
		return 0;
	if (!ret) {
		z->alloc_fail++;
		return 0;
	}
	/* one returned, the rest went into the pool's alloc cache */
	n = 1 + BPF_CORE_READ(pool, alloc.count);
	z->alloc_calls++;
	z->alloc_niovs += n;
	if (light_zcrx_refill)
		provider_refill(pool, n);
	return 0;
}

/* The user-space references of an area's niovs, 32 at a time. */
#define ZCRX_REFS_STEP		32
#define MAX_ZCRX_NIOVS		(1 << 22)

struct zcrx_refs_walk {
	const atomic_t *refs;
	__u64 n;
	__u64 held;
	__s32 err;
};

static long zcrx_refs_step(__u64 i, struct zcrx_refs_walk *w)
{
	__u32 buf[ZCRX_REFS_STEP] = {};
	__u64 off = i * ZCRX_REFS_STEP;
	__u32 cnt, size, held = 0;

	if (off >= w->n)
		return 1;
	cnt = w->n - off < ZCRX_REFS_STEP ? w->n - off : ZCRX_REFS_STEP;
	size = cnt * sizeof(__u32);
	/* clang knows size <= sizeof(buf) and drops the test the verifier needs */
	asm volatile("" : "+r"(size));
	if (size > sizeof(buf))
		return 1;
	if (bpf_probe_read_kernel(buf, size, w->refs + off)) {
		w->err = -2;
		return 1;
	}
	/*
	 * Branch-free: (x | -x) >> 31 is 1 for a u32 x != 0. A branch per
	 * entry made the verifier walk 2^32 paths (1M instructions, refused);
	 * the empty asm hides -x from clang, which turns the expression back
	 * into x != 0, a branch. Entries past cnt stay 0.
	 */
	for (__u32 k = 0; k < ZCRX_REFS_STEP; k++) {
		__u32 x = buf[k], nx = 0U - x;

		asm volatile("" : "+r"(nx));
		held += (x | nx) >> 31;
	}
	w->held += held;
	return 0;
}

/*
 * Inlined into walk_zcrx, not a subprogram: libbpf relocates a subprogram
 * whether or not the program that calls it loads, so every load would
 * relocate what only walk_zcrx reads, types this kernel may lack (struct
 * zcrx_rq_hdr before 7.x, every zcrx type on 6.12). Such a type once sent
 * libbpf to search the module BTFs, which needs CAP_SYS_ADMIN, and the
 * object failed to load without it (the collector now names the vmlinux
 * BTF, which stops that search: core_btf_path()).
 */
static __always_inline int zcrx_walk(__u64 addr, struct dmt_zcrx_walk *w)
{
	const struct io_zcrx_ifq___areas *a = (void *)addr;
	const struct io_zcrx_ifq___one_area *o = (void *)addr;
	const struct io_zcrx_ifq *ifq = (void *)addr;
	struct io_zcrx_area *areas[DMT_ZCRX_MAX_AREAS] = {};
	__u32 nr = 0, shift, head, tail;

	if (!addr)
		return -1;
	shift = BPF_CORE_READ(ifq, niov_shift);
	w->niov_size = shift < 32 ? 1U << shift : 0;
	if (bpf_core_field_exists(a->areas)) {
		struct io_zcrx_area **arr = BPF_CORE_READ(a, areas);

		w->layout = 2;
		w->nr_areas = BPF_CORE_READ(a, nr_areas);
		nr = w->nr_areas < DMT_ZCRX_MAX_AREAS ? w->nr_areas : DMT_ZCRX_MAX_AREAS;
		if (nr && bpf_probe_read_kernel(areas, nr * sizeof(areas[0]), arr))
			return -2;
		head = BPF_CORE_READ(a, rq.cached_head);
		tail = BPF_CORE_READ(a, rq.ring, tail);
		w->rq_entries = BPF_CORE_READ(a, rq.nr_entries);
	} else if (bpf_core_field_exists(o->area)) {
		w->layout = 1;
		areas[0] = BPF_CORE_READ(o, area);
		nr = w->nr_areas = areas[0] ? 1 : 0;
		head = BPF_CORE_READ(o, cached_rq_head);
		tail = BPF_CORE_READ(o, rq_ring, tail);
		w->rq_entries = BPF_CORE_READ(o, rq_entries);
	} else {
		return -3;
	}
	/* the tail is user space's to write: never more than the ring holds */
	w->rq_pending = tail - head;
	if (w->rq_pending > w->rq_entries)
		w->rq_pending = w->rq_entries;
	for (__u32 i = 0; i < DMT_ZCRX_MAX_AREAS; i++) {
		struct zcrx_refs_walk rw = {};
		struct io_zcrx_area *area;

		if (i >= nr)
			break;
		area = areas[i];
		if (!area)
			continue;
		rw.refs = BPF_CORE_READ(area, user_refs);
		rw.n = BPF_CORE_READ(area, nia.num_niovs);
		if (rw.n > MAX_ZCRX_NIOVS || !rw.refs)
			return -2;
		w->niovs += rw.n;
		w->free_niovs += BPF_CORE_READ(area, free_count);
		bpf_loop((rw.n + ZCRX_REFS_STEP - 1) / ZCRX_REFS_STEP, zcrx_refs_step, &rw, 0);
		if (rw.err)
			return rw.err;
		w->user_niovs += rw.held;
	}
	/* areas past the ones read would make every figure short: none then */
	return w->nr_areas > DMT_ZCRX_MAX_AREAS ? -5 : 0;
}

/*
 * Run on demand by user space (BPF_PROG_TEST_RUN; arguments: the pool's
 * address and id) at snapshot time, for zcrx pools the hooks saw alive.
 */
SEC("raw_tp")
int walk_zcrx(__u64 *ctx)
{
	__u64 addr = ctx[0];
	struct zcrx_live *l = bpf_map_lookup_elem(&live_zcrx, &addr);
	struct dmt_zcrx_walk w = {};

	if (!l || l->id != (__u32)ctx[1]) {
		w.err = DMT_WALK_UNKNOWN;
	} else {
		w.ifq = l->ifq;
		w.err = zcrx_walk(l->ifq, &w);
	}
	zcrx_walk_out = w;
	return 0;
}

/* ---- frag tokens -------------------------------------------------------- */

/*
 * Every frag token user space holds is one entry of tok_map, from the
 * recvmsg that handed it out to its SO_DEVMEM_DONTNEED or the destruction
 * of its socket. Two sources feed it:
 *  - kernels with our token tracepoints (kernel-patches/0009): one event
 *    per token at each of the three points, with the net_iov;
 *  - other kernels (tok_fallback): fexit/put_cmsg_notrunc sees each
 *    SO_DEVMEM_DMABUF cmsg (= one token) of the socket fentry/tcp_recvmsg
 *    stashed for the thread, fentry/sock_devmem_dontneed reads the ranges
 *    user space passes, and tcp_destroy_sock drops what is left.
 */
#define DMT_SOL_SOCKET		1
#define DMT_SO_DEVMEM_DMABUF	79
#define DMT_DONTNEED_TOKENS	128	/* MAX_DONTNEED_TOKENS */
#define DMT_DONTNEED_FRAGS	1024	/* MAX_DONTNEED_FRAGS */
#define DMT_MSG_SOCK_DEVMEM	0x2000000	/* include/linux/socket.h, since 6.12 */

enum dmt_tok_end { TOK_RETURNED, TOK_RELEASED };

const volatile bool tok_fallback = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_TOKENS);
	__type(key, struct dmt_tok_key);
	__type(value, struct dmt_tok_val);
} tok_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_HOLDERS);
	__type(key, __u64);
	__type(value, struct dmt_holder);
} holders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dmt_tok_stats);
} tok_stats SEC(".maps");

/* Per thread, inside tcp_recvmsg: its socket and the tokens handed out. */
struct tok_recv {
	__u64 sk;
	__u64 tokens;
	__u32 binding_id;	/* of the last token: the bytes go to it */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct tok_recv);
} tok_recv_tid SEC(".maps");

/* Per thread, inside sock_devmem_dontneed: start time, tokens we removed. */
struct tok_dn {
	__u64 ts;
	__u64 removed;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct tok_dn);
} tok_dn_tid SEC(".maps");

static const struct dmt_holder holder_template = {};

/*
 * Entries in holders, so tcp_destroy_sock returns after one load on a host
 * (or at a time) with no socket holding tokens: incremented by the one
 * update that created an entry, decremented by the one delete that removed
 * it, so it never counts fewer than there are (a socket destroyed without
 * tcp_destroy_sock only keeps it higher: the lookup still decides).
 */
__u64 tok_live_holders = 0;

static __always_inline struct dmt_tok_stats *tok_stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tok_stats, &zero);
}

static __always_inline void tok_stat_inc(__u32 off)
{
	struct dmt_tok_stats *st = tok_stats_get();

	if (st)
		__sync_fetch_and_add((__u64 *)((char *)st + off), 1);
}

#define TOK_STAT_INC(field) tok_stat_inc(__builtin_offsetof(struct dmt_tok_stats, field))

/* The holder entry of socket @sk, created at its first token. */
static __noinline struct dmt_holder *tok_holder(__u64 sk, __u32 binding_id, __u64 tid)
{
	struct dmt_holder *h;

	h = bpf_map_lookup_elem(&holders, &sk);
	if (!h) {
		if (!bpf_map_update_elem(&holders, &sk, &holder_template, BPF_NOEXIST))
			__sync_fetch_and_add(&tok_live_holders, 1);
		h = bpf_map_lookup_elem(&holders, &sk);
		if (!h) {
			TOK_STAT_INC(holders_full);
		} else if (!h->sk) {
			h->sk = sk;
			h->first_ns = bpf_ktime_get_ns();
			h->tgid = tid >> 32;
			h->binding_id = binding_id;
			bpf_get_current_comm(h->comm, sizeof(h->comm));
			/* the receiving task's cgroup, for its pod (issue 24) */
			h->cgroup_id = bpf_get_current_cgroup_id();
		}
	}
	return h;
}

/* Counts one token handed out by the recvmsg of this thread. */
static __always_inline void tok_recv_count(__u64 sk, __u64 tid, __u32 binding_id)
{
	struct tok_recv *r = bpf_map_lookup_elem(&tok_recv_tid, &tid);

	if (!r && !tok_fallback) {
		/*
		 * With 0009's tracepoints the first token of a devmem recvmsg
		 * opens the call's count (fentry/tcp_recvmsg is not loaded):
		 * fexit/tcp_recvmsg closes it.
		 */
		struct tok_recv nr = { .sk = sk };

		bpf_map_update_elem(&tok_recv_tid, &tid, &nr, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&tok_recv_tid, &tid);
	}
	if (r) {
		r->tokens++;
		r->binding_id = binding_id;
	}
}

static __noinline int tok_out(__u64 sk, __u32 binding_id, __u64 offset, __u32 token)
{
	struct dmt_tok_key k = { .sk = sk, .token = token };
	struct dmt_tok_val val = {};
	__u64 tid = bpf_get_current_pid_tgid();
	struct dmt_binding *b;
	struct dmt_holder *h;
	__u32 shift = PAGE_SHIFT;

	b = binding_get(NULL, binding_id);
	/* niov sizes are powers of two from PAGE_SIZE to 2 MiB */
	for (int i = 0; i < 10 && b && (1U << shift) < b->niov_size; i++)
		shift++;
	if (b)
		__sync_fetch_and_add(&b->tok_handed, 1);
	tok_recv_count(sk, tid, binding_id);

	h = tok_holder(sk, binding_id, tid);
	if (h)
		__sync_fetch_and_add(&h->handed, 1);

	val.ts_ns = bpf_ktime_get_ns();
	val.binding_id = binding_id;
	val.niov_idx = offset >> shift;
	if (bpf_map_update_elem(&tok_map, &k, &val, BPF_ANY)) {
		TOK_STAT_INC(map_full);
		if (b)
			__sync_fetch_and_add(&b->tok_lost, 1);
	}
	return 0;
}

/* A token came back (DONTNEED) or was dropped (socket destroyed). */
static __noinline int tok_end(__u64 sk, __u32 token, __u32 how)
{
	struct dmt_tok_key k = { .sk = sk, .token = token };
	struct dmt_tok_val *val;
	struct dmt_binding *b;
	struct dmt_holder *h;
	__u32 id;

	val = bpf_map_lookup_elem(&tok_map, &k);
	if (!val)
		return 0;	/* handed out before we attached */
	id = val->binding_id;
	if (bpf_map_delete_elem(&tok_map, &k))
		return 0;	/* a concurrent end took it */
	b = bpf_map_lookup_elem(&bindings, &id);
	h = bpf_map_lookup_elem(&holders, &sk);
	if (how == TOK_RETURNED) {
		if (b)
			__sync_fetch_and_add(&b->tok_returned, 1);
		if (h)
			__sync_fetch_and_add(&h->returned, 1);
	} else {
		if (b)
			__sync_fetch_and_add(&b->tok_released, 1);
		if (h)
			__sync_fetch_and_add(&h->released, 1);
	}
	return 1;
}

SEC("tp_btf/devmem_token_recv")
int BPF_PROG(tok_tp_recv, const void *sk, const void *niov, __u32 id, __u64 off,
	     __u32 token)
{
	return tok_out((__u64)sk, id, off, token);
}

SEC("tp_btf/devmem_token_dontneed")
int BPF_PROG(tok_tp_dontneed, const void *sk, const void *niov, __u32 id, __u64 off,
	     __u32 token)
{
	tok_end((__u64)sk, token, TOK_RETURNED);
	return 0;
}

SEC("tp_btf/devmem_token_release")
int BPF_PROG(tok_tp_release, const void *sk, const void *niov, __u32 id, __u64 off,
	     __u32 token)
{
	tok_end((__u64)sk, token, TOK_RELEASED);
	return 0;
}

/*
 * SO_DEVMEM_AUTORELEASE (kernel-patches 0012). devmem_frag_recv fires for
 * every frag in both modes; with autorelease the token is followed through
 * devmem_token_* above, so only the binding's mode is noted here. Without,
 * the token is the net_iov's index and the kernel counts the tokens on the
 * net_iov: one tok_map entry per (binding, net_iov) carries that count,
 * set from the count each event reports (exact, whatever the order of
 * concurrent returns), deleted when it reaches 0 or is drained at unbind.
 */
static __always_inline void uref_set(__u32 binding_id, __u32 token, int uref, bool recv)
{
	struct dmt_tok_key k = { .sk = 0, .token = token, .pad = binding_id };
	struct dmt_tok_val val = {}, *v;
	struct dmt_binding *b;

	if (uref <= 0) {
		bpf_map_delete_elem(&tok_map, &k);
		return;
	}
	v = bpf_map_lookup_elem(&tok_map, &k);
	if (v) {
		v->count = uref;
		return;
	}
	if (!recv)
		return;		/* handed out before we attached */
	val.ts_ns = bpf_ktime_get_ns();
	val.binding_id = binding_id;
	val.niov_idx = token;
	val.count = uref;
	if (bpf_map_update_elem(&tok_map, &k, &val, BPF_ANY)) {
		TOK_STAT_INC(map_full);
		b = bpf_map_lookup_elem(&bindings, &binding_id);
		if (b)
			__sync_fetch_and_add(&b->tok_lost, 1);
	}
}

SEC("tp_btf/devmem_frag_recv")
int BPF_PROG(uref_tp_recv, const void *sk, const void *niov, __u32 id, __u64 off,
	     __u64 frag_off, __u32 frag_size, __u32 token, bool autorelease, int uref)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct dmt_binding *b = binding_get(NULL, id);
	struct dmt_holder *h;

	if (b)
		__sync_fetch_and_or(&b->flags, autorelease ? DMT_BIND_TOK_AUTORELEASE :
							     DMT_BIND_TOK_MANUAL);
	if (autorelease)
		return 0;
	if (b)
		__sync_fetch_and_add(&b->tok_handed, 1);
	tok_recv_count((__u64)sk, tid, id);
	h = tok_holder((__u64)sk, id, tid);
	if (h) {
		h->manual = 1;
		__sync_fetch_and_add(&h->handed, 1);
	}
	uref_set(id, token, uref, true);
	return 0;
}

SEC("tp_btf/devmem_uref_dontneed")
int BPF_PROG(uref_tp_dontneed, const void *sk, const void *niov, __u32 id, __u64 off,
	     __u32 token, int uref)
{
	__u64 key = (__u64)sk;
	struct dmt_binding *b = bpf_map_lookup_elem(&bindings, &id);
	struct dmt_holder *h = bpf_map_lookup_elem(&holders, &key);

	if (b)
		__sync_fetch_and_add(&b->tok_returned, 1);
	if (h)
		__sync_fetch_and_add(&h->returned, 1);
	uref_set(id, token, uref, false);
	return 0;
}

SEC("tp_btf/devmem_uref_drain")
int BPF_PROG(uref_tp_drain, const void *binding, __u32 id, const void *niov, __u64 off,
	     __u32 token, int urefs)
{
	struct dmt_binding *b = bpf_map_lookup_elem(&bindings, &id);

	if (b)
		__sync_fetch_and_add(&b->tok_drained, urefs);
	uref_set(id, token, 0, false);
	return 0;
}

struct tok_sweep {
	__u64 sk;
};

static long tok_sweep_one(void *map, struct dmt_tok_key *k, struct dmt_tok_val *v,
			  struct tok_sweep *ctx)
{
	if (k->sk == ctx->sk)
		tok_end(k->sk, k->token, TOK_RELEASED);
	return 0;
}

/*
 * tcp_v4_destroy_sock (IPv6 too) fires this right after it dropped the
 * tokens the socket still held: the fallback counts them released here;
 * both modes forget the socket.
 */
SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(tok_destroy, const void *sk)
{
	__u64 key = (__u64)sk;
	struct tok_sweep sw = { .sk = key };

	/* cheapest first: no socket holds tokens (every host without devmem) */
	if (!tok_live_holders)
		return 0;
	if (!bpf_map_lookup_elem(&holders, &key))
		return 0;	/* never got a token: not ours */
	if (tok_fallback)
		bpf_for_each_map_elem(&tok_map, tok_sweep_one, &sw, 0);
	if (!bpf_map_delete_elem(&holders, &key))
		__sync_fetch_and_add(&tok_live_holders, -1);
	return 0;
}

/*
 * tcp_recvmsg(sk, msg, len, flags, addr_len): only a call with
 * MSG_SOCK_DEVMEM can hand out tokens (tcp_recvmsg_locked() refuses a
 * devmem skb without it), so every other TCP recvmsg on the host returns
 * here after one test, before any map operation.
 */
SEC("fentry/tcp_recvmsg")
int BPF_PROG(tok_recvmsg_entry, void *sk, void *msg, __u64 len, int flags)
{
	__u64 tid;
	struct tok_recv r = { .sk = (__u64)sk };

	if (!(flags & DMT_MSG_SOCK_DEVMEM))
		return 0;
	tid = bpf_get_current_pid_tgid();
	bpf_map_update_elem(&tok_recv_tid, &tid, &r, BPF_ANY);
	return 0;
}

SEC("fexit/tcp_recvmsg")
int BPF_PROG(tok_recvmsg_exit, void *sk, void *msg, __u64 len, int flags)
{
	struct dmt_binding *b;
	struct dmt_tok_stats *st;
	struct tok_recv *r;
	__u64 tid, rv = 0;
	int ret;

	bpf_get_func_ret(ctx, &rv);	/* 6.12: ctx[5], 7.x: ctx[4] (no addr_len) */
	ret = (int)rv;
	if (!(flags & DMT_MSG_SOCK_DEVMEM))
		return 0;
	tid = bpf_get_current_pid_tgid();
	r = bpf_map_lookup_elem(&tok_recv_tid, &tid);
	if (!r)
		return 0;
	st = tok_stats_get();
	if (r->tokens && st)
		log2_add(&st->per_recvmsg, r->tokens);
	/* a devmem read returns the bytes it handed out as tokens (compare's per-MiB figures) */
	b = r->tokens && ret > 0 ? binding_get(NULL, r->binding_id) : NULL;
	if (b)
		__sync_fetch_and_add(&b->rx_bytes, ret);
	bpf_map_delete_elem(&tok_recv_tid, &tid);
	return 0;
}

/* The fallback's hand-out: one SO_DEVMEM_DMABUF cmsg written = one token. */
SEC("fexit/put_cmsg_notrunc")
int BPF_PROG(tok_cmsg_exit, void *msg, int level, int type, int len, void *data)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct { __u64 frag_offset; __u32 frag_size, frag_token, dmabuf_id, flags; } dc;
	struct tok_recv *r;
	__u64 rv = 0;
	int ret;

	bpf_get_func_ret(ctx, &rv);
	ret = (int)rv;
	if (ret || level != DMT_SOL_SOCKET || type != DMT_SO_DEVMEM_DMABUF)
		return 0;
	r = bpf_map_lookup_elem(&tok_recv_tid, &tid);
	if (!r) {
		TOK_STAT_INC(no_socket);
		return 0;
	}
	if (bpf_probe_read_kernel(&dc, sizeof(dc), data))
		return 0;
	return tok_out(r->sk, dc.dmabuf_id, dc.frag_offset, dc.frag_token);
}

struct tok_ranges {
	__u64 sk;
	__u64 uptr;
	__u32 nr;		/* ranges */
	__u32 next;		/* next range to read */
	__u32 start, count, j;	/* the range being walked */
	__u32 frags;
	__u64 removed;
	bool is_kernel;
};

static long tok_range_step(__u64 i, struct tok_ranges *w)
{
	struct { __u32 start, count; } rng;
	__u64 src;

	if (w->j >= w->count) {
		if (w->next >= w->nr || w->next >= DMT_DONTNEED_TOKENS)
			return 1;
		src = w->uptr + (__u64)w->next * sizeof(rng);
		if (w->is_kernel ? bpf_probe_read_kernel(&rng, sizeof(rng), (void *)src) :
		    bpf_probe_read_user(&rng, sizeof(rng), (void *)src))
			return 1;
		w->next++;
		w->start = rng.start;
		w->count = rng.count;
		w->j = 0;
		return 0;
	}
	/* the kernel stops at its frag limit the same way */
	if (++w->frags > DMT_DONTNEED_FRAGS)
		return 1;
	w->removed += tok_end(w->sk, w->start + w->j, TOK_RETURNED);
	w->j++;
	return 0;
}

/*
 * sock_devmem_dontneed(sk, sockptr_t optval, optlen): sockptr_t is a
 * 16-byte struct passed by value, two argument slots (pointer, is_kernel).
 * The fallback takes the tokens out of the map here, before the kernel
 * does, so a token id the kernel frees cannot be handed out again under us.
 */
SEC("fentry/sock_devmem_dontneed")
int BPF_PROG(tok_dontneed_entry)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct tok_dn dn = { .ts = bpf_ktime_get_ns() };
	struct tok_ranges w = {};
	__u64 optlen;

	if (tok_fallback) {
		w.sk = ctx[0];
		w.uptr = ctx[1];
		w.is_kernel = ctx[2] & 0xff;
		optlen = ctx[3] & 0xffffffff;
		if (!(optlen % 8) && optlen <= DMT_DONTNEED_TOKENS * 8) {
			w.nr = optlen / 8;
			bpf_loop(DMT_DONTNEED_FRAGS + DMT_DONTNEED_TOKENS + 1, tok_range_step,
				 &w, 0);
			dn.removed = w.removed;
		}
	}
	bpf_map_update_elem(&tok_dn_tid, &tid, &dn, BPF_ANY);
	return 0;
}

SEC("fexit/sock_devmem_dontneed")
int BPF_PROG(tok_dontneed_exit)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct dmt_tok_stats *st = tok_stats_get();
	__u64 ret = 0, delta, n;
	struct tok_dn *dn;

	bpf_get_func_ret(ctx, &ret);
	dn = bpf_map_lookup_elem(&tok_dn_tid, &tid);
	if (!dn || !st)
		return 0;
	delta = bpf_ktime_get_ns() - dn->ts;
	n = (long)ret > 0 ? ret : 0;
	if (tok_fallback && dn->removed != n)
		__sync_fetch_and_add(&st->dontneed_mismatch, 1);
	log2_add(&st->per_dontneed, n);
	log2_add(&st->dontneed_ns, delta);
	if (n)
		log2_add(&st->dontneed_ns_token, delta / n);
	bpf_map_delete_elem(&tok_dn_tid, &tid);
	return 0;
}

/* ---- light mode: the pool's own counters, read at snapshot time -------- */

/* Output of light_read, read by user space right after the test run. */
struct dmt_light_read light_out = {};

/*
 * Run on demand by user space (BPF_PROG_TEST_RUN; arguments: the pool's
 * address and its netlink id) for a pool it found in our maps. Never reads
 * a freed pool: page_pool_release (pp_destroy) fires before the kernel frees
 * a pool and sets DMT_POOL_GONE in the pool's entry first, so
 *  - a pool already marked GONE is not read;
 *  - the flags are fetched again after the read, with fully ordered atomic
 *    fetches around it: if the pool was freed before or while we read, its
 *    GONE flag was set before that free and the second fetch sees it, and
 *    the values are discarded (the tracepoint's final values stand);
 *  - the pool's own id must match, so a new pool at a reused address is
 *    never read for the old pool's entry.
 * bpf_probe_read_kernel() itself never faults the kernel.
 */
SEC("raw_tp")
int light_read(__u64 *ctx)
{
	const struct page_pool *pool = (const void *)ctx[0];
	__u32 id = (__u32)ctx[1];
	struct dmt_pool_key k = { .addr = ctx[0], .id = id };
	struct dmt_light_read o = {};
	struct dmt_pool *v;
	__u32 idx = id & (DMT_POOL_SLOTS - 1);
	__u32 f1, f2;

	v = bpf_map_lookup_elem(&pool_slots, &idx);
	if (!v || v->id != id || v->addr != k.addr)
		v = bpf_map_lookup_elem(&pools, &k);
	if (!v) {
		o.status = DMT_LIGHT_NOENT;
		goto out;
	}
	f1 = __sync_fetch_and_or(&v->flags, 0);
	if (f1 & DMT_POOL_GONE) {
		o.status = DMT_LIGHT_GONE;
		goto out;
	}
	/*
	 * pools and pool_slots are writable from user space: the address is
	 * read only if pool_new recorded it in live_pools and pp_destroy has
	 * not removed it (then the pool is going away: GONE, as above).
	 */
	if (!bpf_map_lookup_elem(&live_pools, &k)) {
		f1 = __sync_fetch_and_or(&v->flags, 0);
		o.status = (f1 & DMT_POOL_GONE) ? DMT_LIGHT_GONE : DMT_LIGHT_NOENT;
		goto out;
	}
	o.id = BPF_CORE_READ(pool, user.id);
	o.hold_cnt = BPF_CORE_READ(pool, pages_state_hold_cnt);
	o.release_cnt = BPF_CORE_READ(pool, pages_state_release_cnt.counter);
	f2 = __sync_fetch_and_or(&v->flags, 0);
	if (f2 & DMT_POOL_GONE)
		o.status = DMT_LIGHT_GONE;
	else if (o.id != id)
		o.status = DMT_LIGHT_STALE;
	else
		o.status = DMT_LIGHT_OK;
out:
	light_out = o;
	return 0;
}
