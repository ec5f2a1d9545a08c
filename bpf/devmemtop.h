/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs (devmemtop.bpf.c) and the collector
 * (src/collector/). Plain __u32/__u64 only: this header is compiled both
 * for -target bpf and for the host.
 */
#ifndef DEVMEMTOP_H
#define DEVMEMTOP_H

/*
 * log2 histogram with round-up buckets: slot k counts values v with
 * 2^(k-1) < v <= 2^k (slot 0 counts v <= 1). The upper bound of slot k is
 * exactly 2^k, so a Prometheus bucket le=2^k is exact, not approximate.
 */
#define DMT_LOG2_SLOTS		40
/* Refill batch sizes are bounded by the alloc cache (128 on x86_64). */
#define DMT_BATCH_MAX		128

#define DMT_IFNAMSIZ		16

struct dmt_log2_hist {
	__u64 slots[DMT_LOG2_SLOTS];
	__u64 count;
	__u64 sum;
};

struct dmt_batch_hist {
	/* slot i counts batches of exactly i items; DMT_BATCH_MAX is ">=". */
	__u64 slots[DMT_BATCH_MAX + 1];
	__u64 count;
	__u64 sum;
};

/* Where a pool's interface came from. */
enum dmt_attr_src {
	DMT_ATTR_NONE = 0,
	DMT_ATTR_NETDEV = 1,	/* pool->slow.netdev */
	DMT_ATTR_NAPI = 2,	/* pool->p.napi->dev */
	DMT_ATTR_NETLINK = 3,	/* netdev genl page-pool-get (user space) */
	DMT_ATTR_DEVICE = 4,	/* pool->p.dev is a net_device's own device */
};

enum dmt_pool_flags {
	DMT_POOL_SAW_PAGE	= 1 << 0,	/* a struct page netmem was held */
	DMT_POOL_SAW_NIOV	= 1 << 1,	/* a net_iov netmem was held */
	DMT_POOL_RELEASED	= 1 << 2,	/* page_pool_release seen */
	DMT_POOL_GONE		= 1 << 3,	/* released with inflight == 0 */
	DMT_POOL_DEVMEM		= 1 << 4,	/* dmabuf memory provider */
	DMT_POOL_IO_URING	= 1 << 5,	/* io_uring zcrx memory provider */
};

/*
 * One page_pool. A pool is its address and its id together: once a pool is
 * freed, the next one may get its address (and the kernel never hands out
 * an id twice), while the old pool's entry still waits for a snapshot to
 * report its final values.
 */
struct dmt_pool {
	__u64 addr;
	__u64 mp_priv;		/* devmem: the binding */
	__u32 id;		/* pool->user.id: the kernel's id for every pool, from 1 */
	__s32 ifindex;
	__u32 netns;		/* inode of the device's netns */
	__u32 napi_id;
	__u32 queue;
	__s32 nid;
	__u32 nid_changes;
	__u32 attr_src;		/* enum dmt_attr_src */
	__u32 binding_id;
	__u32 flags;		/* enum dmt_pool_flags */
	/* kernel cumulative counters, newest seen */
	__u32 hold_cnt;
	__u32 release_cnt;
	/* counters at first sight, to count what happened while attached */
	__u32 hold_base;
	__u32 release_base;
	__s32 release_inflight;	/* inflight at the last page_pool_release */
	__u32 release_calls;	/* page_pool_release events (retries) */
	__u32 batch_open;	/* size of the refill in progress */
	__u32 pad;		/* keeps ifname and refill 8-byte aligned */
	char ifname[DMT_IFNAMSIZ];
	struct dmt_batch_hist refill;
};

enum dmt_binding_flags {
	DMT_BIND_SEEN_CREATE	= 1 << 0,
	DMT_BIND_UNBOUND	= 1 << 1,
	DMT_BIND_FREED		= 1 << 2,
	DMT_BIND_FREELIST	= 1 << 3,	/* freelist layout, else gen_pool */
	/* SO_DEVMEM_AUTORELEASE (kernel-patches 0012): the modes of the
	 * frags read from the binding, from devmem_frag_recv
	 */
	DMT_BIND_TOK_AUTORELEASE = 1 << 4,
	DMT_BIND_TOK_MANUAL	= 1 << 5,
	/* a TX binding (binding->direction DMA_TO_DEVICE: bind-tx, 6.14+) */
	DMT_BIND_TX		= 1 << 6,
};

/* One devmem dmabuf binding, keyed by binding id. */
struct dmt_binding {
	__u64 addr;
	__u64 dmabuf_size;
	__u64 total_niovs;
	__u64 create_ns;
	__u64 unbind_ns;
	__u64 free_ns;
	__u64 alloc_calls;	/* provider calls that returned a niov */
	__u64 alloc_niovs;	/* niovs handed to pools */
	__u64 alloc_fail;	/* provider calls / allocations that failed */
	__u64 free_niovs_cnt;	/* niovs given back to the binding */
	__s64 free_niovs_tp;	/* free niovs left, from devmem tracepoints */
	__s64 out_at_unbind;	/* niovs not free when unbind was called */
	__s64 out_at_free;	/* niovs not free when the binding was freed */
	__u32 id;
	__s32 ifindex;
	__u32 niov_size;
	__u32 flags;		/* enum dmt_binding_flags */
	struct dmt_log2_hist alloc_lat;		/* ns per provider call */
	struct dmt_log2_hist alloc_lat_niov;	/* ns per niov in a call */
	struct dmt_log2_hist free_lat;		/* ns per niov free */
	/* frag tokens of this binding (bpf/tokens section), since attach */
	__u64 tok_handed;	/* handed to user space by recvmsg */
	__u64 tok_returned;	/* returned with SO_DEVMEM_DONTNEED */
	__u64 tok_released;	/* dropped when the holding socket was destroyed */
	__u64 tok_lost;		/* not tracked: the token map was full */
	__u64 rx_bytes;		/* returned by recvmsg calls that handed out its tokens */
	__u64 tok_drained;	/* without autorelease: abandoned, drained at unbind */
	/* devmem TX (bpf/ TX section): a TX binding's sends, since attach */
	__u64 tx_sendmsg;	/* sendmsg calls with SCM_DEVMEM_DMABUF that found it */
	__u64 tx_bytes;		/* bytes those calls put into skbs */
	__u64 tx_errors;	/* sends it refused: an offset past the dma-buf, a route
				 * to another device */
	__u64 tx_refs_taken;	/* references skbs took on its niovs */
	__u64 tx_refs_dropped;	/* and dropped */
	struct dmt_log2_hist tx_ref_time;	/* per niov: first reference to last */
};

/*
 * A TX niov while skbs reference it (tx_refs, keyed by its address): how
 * many references, since when, and its binding.
 */
struct dmt_tx_ref {
	__u64 first_ns;
	__u32 refs;
	__u32 binding_id;
};
#define DMT_MAX_TX_REFS		65536

/* Result of the on-demand binding walk (walk_binding program). */
struct dmt_walk {
	__u64 total_niovs;
	__u64 free_niovs;
	__u32 id;
	__s32 ifindex;
	__u64 dmabuf_size;
	__u32 niov_size;
	__u32 layout;		/* 1 gen_pool, 2 freelist */
	__s32 err;		/* 0, or < 0: DMT_WALK_UNKNOWN, or the walk failed */
	__u32 netns;		/* inode of the device's netns, 0 unknown */
};

/* walk_binding's err for an address that is not a live binding we saw */
#define DMT_WALK_UNKNOWN	(-4)

/*
 * One io_uring zcrx page pool (zcrx_pools, keyed by the pool's key): its
 * provider calls since the collector attached. A call refills the pool's
 * alloc cache from the refill ring (niovs user space returned) or, when
 * that gives none, from the area's freelist.
 */
struct dmt_zcrx_pool {
	__u64 ifq;		/* pool->mp_priv: the interface queue */
	__u64 alloc_calls;	/* calls that returned niovs */
	__u64 alloc_niovs;	/* niovs those calls handed to the pool */
	__u64 alloc_fail;	/* calls that returned none: ring and areas empty */
	__u64 rq_refills;	/* calls that took refill ring entries */
	__u64 rqes;		/* refill ring entries taken */
	struct dmt_log2_hist alloc_lat;		/* ns per call */
	/* ring entries taken per call that took any */
	struct dmt_batch_hist rq_batch;
};
#define DMT_MAX_ZCRX_POOLS	256
/* areas the walk reads per interface queue (7.3 registers one; more are added by ctrl) */
#define DMT_ZCRX_MAX_AREAS	8

/* Result of the on-demand zcrx walk (walk_zcrx program), of one pool's ifq. */
struct dmt_zcrx_walk {
	__u64 ifq;
	__u64 niovs;		/* in its areas */
	__u64 free_niovs;	/* on the areas' freelists */
	__u64 user_niovs;	/* held by user space: fragments handed out, not taken back */
	__u32 rq_pending;	/* refill ring entries returned, not yet taken */
	__u32 rq_entries;	/* refill ring size */
	__u32 niov_size;
	__u32 nr_areas;
	__s32 err;		/* 0, DMT_WALK_UNKNOWN, or < 0: the walk failed */
	__u32 layout;		/* 1 one area (6.15-6.18), 2 areas array (7.x) */
};

/* Result of the light-mode counter read (light_read program). */
enum dmt_light_status {
	DMT_LIGHT_NONE = 0,
	DMT_LIGHT_OK,		/* counters read from the live pool */
	DMT_LIGHT_NOENT,	/* no entry for this pool in our maps */
	DMT_LIGHT_GONE,		/* destroyed: the tracepoint's values stand */
	DMT_LIGHT_STALE,	/* another pool at this address (id differs) */
};

struct dmt_light_read {
	__u32 hold_cnt;
	__u32 release_cnt;
	__u32 id;
	__u32 status;		/* enum dmt_light_status */
};

enum dmt_event_type {
	DMT_EV_POOL_NEW = 1,
	DMT_EV_POOL_RELEASE,	/* page_pool_release: a = inflight, b = hold, c = release */
	DMT_EV_POOL_NID,	/* a = new nid */
	DMT_EV_BIND_CREATE,	/* a = total niovs, b = dmabuf size */
	DMT_EV_BIND_UNBIND,	/* a = outstanding niovs */
	DMT_EV_BIND_FREE,	/* a = outstanding niovs, b = total */
	DMT_EV_ALLOC_FAIL,	/* a = free niovs left if known, else -1 */
	/* 8 was a DONTNEED event that was never emitted: do not reuse */
};

/* Sent through the events ring buffer: rare, state-changing events only. */
struct dmt_event {
	__u64 ts_ns;
	__u64 addr;		/* pool or binding address */
	__s64 a, b, c;
	__u32 type;		/* enum dmt_event_type */
	__u32 id;		/* pool id or binding id */
	__s32 ifindex;
	__u32 pad;
};

/* Global counters (bss), indices into the counters array. */
enum dmt_counter {
	DMT_CNT_POOL_MAP_FULL = 0,
	DMT_CNT_BIND_MAP_FULL,
	DMT_CNT_RB_DROPS,
	DMT_CNT_DONTNEED_TOKENS,
	DMT_CNT_DONTNEED_CALLS,
	DMT_CNT_PROVIDER_CALLS,
	DMT_CNT_LAT_MISSED,
	DMT_CNT_TX_NO_BINDING,	/* devmem sends naming no TX binding of this device */
	DMT_CNT_TX_REF_LOST,	/* TX niov references not timed (map full, or unmatched) */
	DMT_CNT_ZCRX_MAP_FULL,	/* zcrx pools not tracked: zcrx_pools full */
	DMT_CNT__MAX,
};

/*
 * Frag tokens (devmem TCP): one entry per token user space holds, keyed by
 * socket and token id, so a return or a socket's destruction finds the
 * net_iov it named. User space counts tokens and distinct net_iovs per
 * binding and per socket from this map.
 */
struct dmt_tok_key {
	__u64 sk;
	__u32 token;
	__u32 pad;
};

struct dmt_tok_val {
	__u64 ts_ns;		/* when recvmsg handed it out */
	__u32 binding_id;
	__u32 niov_idx;		/* net_iov index in the binding: offset / niov size */
	/*
	 * Tokens this entry stands for: 0 means 1 (a token id, autorelease).
	 * Without SO_DEVMEM_AUTORELEASE (kernel-patches 0012) a token is a
	 * net_iov index shared by every frag on it, counted on the net_iov:
	 * one entry per (binding, net_iov), key { 0, niov index, binding id },
	 * count = the kernel's count, ts_ns = its first token's time.
	 */
	__u32 count;
	__u32 pad;
};

/* One socket that received frag tokens, keyed by its address. */
struct dmt_holder {
	__u64 sk;
	__u64 first_ns;
	__u64 handed;
	__u64 returned;
	__u64 released;
	__u32 tgid;		/* process of the first recvmsg that got a token */
	__u32 binding_id;	/* binding of its first token */
	char comm[16];
	__u32 manual;		/* 1: SO_DEVMEM_AUTORELEASE off (kernel-patches 0012):
				 * its tokens are counted per net_iov of the
				 * binding, not per socket */
	__u32 pad;
	__u64 cgroup_id;	/* cgroup v2 id of that task (issue 24): the path's inode */
};

/* Token cost and the token tracker's own health (one array entry). */
struct dmt_tok_stats {
	struct dmt_log2_hist per_recvmsg;	/* tokens per tcp_recvmsg with >= 1 */
	struct dmt_log2_hist per_dontneed;	/* tokens freed per DONTNEED call */
	struct dmt_log2_hist dontneed_ns;	/* DONTNEED call latency */
	struct dmt_log2_hist dontneed_ns_token;	/* DONTNEED latency / tokens freed */
	__u64 map_full;		/* tokens not tracked: map full */
	__u64 no_socket;	/* cmsg seen outside a traced tcp_recvmsg */
	__u64 dontneed_mismatch; /* fallback: our returns != the kernel's count */
	__u64 holders_full;	/* sockets not tracked: holder map full */
};

#define DMT_MAX_TOKENS		(1 << 18)
#define DMT_MAX_HOLDERS		4096

/* Key of the pools hash map: the pool's address and id (pad is 0). */
struct dmt_pool_key {
	__u64 addr;
	__u32 id;
	__u32 pad;
};

#define DMT_MAX_POOLS		4096
/*
 * Pools live in an array slot indexed by their id (an array lookup is
 * inlined by the verifier: the hot path pays no hash); a slot belongs to
 * the pool whose id it holds (0: free). A pool whose slot is taken by
 * another pool, live or destroyed and not yet reported, goes to the hash
 * map instead.
 */
#define DMT_POOL_SLOTS		1024
#define DMT_MAX_BINDINGS	256

#endif /* DEVMEMTOP_H */
