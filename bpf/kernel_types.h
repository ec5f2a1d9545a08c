/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types devmemtop's BPF programs read, declared with only
 * the fields we use. Every record carries preserve_access_index, so libbpf
 * relocates each field access against the running kernel's BTF (CO-RE):
 * field order, size and padding here do not matter, and the build does not
 * depend on the build host's kernel. Fields that exist only in some kernels
 * live in ___flavour structs and are guarded with bpf_core_field_exists().
 *
 * Each flavour says which kernel change introduced or removed its layout,
 * the way libbpf-tools' core_fixes.bpf.h does: the upstream commit subject
 * (hashes are not recorded here: this tree has no kernel history to check
 * them against, and a wrong hash is worse than none), our patch in
 * kernel-patches/ when the lab kernel gets the layout from it, and what the
 * pinned lab base (kernel-patches/BASE, 6.12.117) has.
 */
#ifndef DEVMEMTOP_KERNEL_TYPES_H
#define DEVMEMTOP_KERNEL_TYPES_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <stdbool.h>

typedef unsigned long netmem_ref;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

typedef struct {
	long counter;
} atomic_long_t;

typedef struct {
	int counter;
} atomic_t;

struct ns_common {
	unsigned int inum;
};

struct net {
	struct ns_common ns;
};

typedef struct {
	struct net *net;
} possible_net_t;

struct class {
	const char *name;
};

struct device {
	const struct class *class;
};

struct net_device {
	char name[16];
	int ifindex;
	possible_net_t nd_net;
	struct device dev;
};

struct napi_struct {
	unsigned int napi_id;
	struct net_device *dev;
};

struct page_pool_params_fast {
	int nid;
	struct device *dev;
	struct napi_struct *napi;
};

struct page_pool_params_slow {
	struct net_device *netdev;
	unsigned int queue_idx;
};

struct pp_alloc_cache {
	__u32 count;
};

struct page_pool {
	struct page_pool_params_fast p;
	__u32 pages_state_hold_cnt;
	atomic_t pages_state_release_cnt;
	struct pp_alloc_cache alloc;
	void *mp_priv;
	struct page_pool_params_slow slow;
	struct {
		__u32 id;
	} user;
};

/*
 * Memory providers called through an ops table: upstream "net: page_pool:
 * create hooks for custom memory providers" (the io_uring zcrx groundwork,
 * after 6.12). The 6.12.117 base has only pool->mp_priv and calls the devmem
 * provider directly, which is why no mp_ops means devmem.
 */
struct memory_provider_ops {
	void *alloc_netmems;
};

struct page_pool___mp_ops {
	const struct memory_provider_ops *mp_ops;
};

struct dma_buf {
	unsigned long size;
};

struct gen_pool_chunk {
	struct list_head next_chunk;
	atomic_long_t avail;
	unsigned long start_addr;
	unsigned long end_addr;
};

struct gen_pool {
	struct list_head chunks;
};

struct net_devmem_dmabuf_binding {
	struct dma_buf *dmabuf;
	struct net_device *dev;
	__u32 id;
};

/*
 * gen_pool layout: binding->chunk_pool, one gen_pool chunk per sg entry.
 * What the 6.12.117 base and upstream had until "net: devmem: replace
 * gen_pool with freelist" (net-next, Sept 2026).
 */
struct net_devmem_dmabuf_binding___genpool {
	struct gen_pool *chunk_pool;
};

/*
 * freelist layout: free_count and total_niovs in the binding. Upstream
 * "net: devmem: replace gen_pool with freelist" (net-next, Sept 2026); in
 * the lab kernel from kernel-patches/0004 ("net: devmem: replace gen_pool
 * with a per-binding freelist").
 */
struct net_devmem_dmabuf_binding___freelist {
	__u32 free_count;
	__u32 total_niovs;
};

/*
 * Large niovs: niov size is 1 << niov_shift. Upstream rx-page-size series
 * ("rx-buf-size" in its early versions; net-next, 2026-08-08); absent in
 * the 6.12.117 base, where a niov is PAGE_SIZE.
 */
struct net_devmem_dmabuf_binding___niov_shift {
	__u32 niov_shift;
};

/*
 * Devmem TX: a binding's DMA direction, DMA_TO_DEVICE for a TX binding
 * made by bind-tx, DMA_FROM_DEVICE for RX. Upstream "net: devmem:
 * Implement TX path" (6.14); absent in the 6.12.117 base, where every
 * binding is RX. Declared as the enum it is: libbpf finds no field whose
 * local type is an int and the kernel's an enum (the kinds must match),
 * and would report the field missing on every kernel.
 */
enum dma_data_direction {
	DMA_BIDIRECTIONAL = 0,
	DMA_TO_DEVICE = 1,
	DMA_FROM_DEVICE = 2,
	DMA_NONE = 3,
};

struct net_devmem_dmabuf_binding___tx {
	enum dma_data_direction direction;
};

/*
 * __net_devmem_dmabuf_binding_free() takes a work_struct since upstream
 * moved the binding's final free to a workqueue (after 6.12: the 6.12.117
 * base still passes the binding; subject not recorded here). container_of()
 * needs the member's offset, which CO-RE gives us; user space tells the BPF
 * side which form the kernel has from the function's BTF (collector.c,
 * binding_free_takes_work()).
 */
struct work_struct {
	atomic_long_t data;
};

struct net_devmem_dmabuf_binding___unbind_w {
	struct work_struct unbind_w;
};

/*
 * Devmem TX (upstream "net: devmem: Implement TX path", 6.14; not in the
 * 6.12.117 base): skbs take and drop references on a TX binding's niovs
 * with net_devmem_get_net_iov()/net_devmem_put_net_iov(). A niov's owner
 * is a struct net_iov_area, the first member of its chunk owner, which
 * names the binding (upstream "net: add helpers for netmem ...
 * net_iov_area", after 6.12). Read only on kernels with devmem TX
 * (collector_probe.c: the TX hooks load there only). Flavours: the
 * other BPF objects declare these types for their own kernels.
 */
struct net_iov_area___tx {
	unsigned long base_virtual;
};

struct net_iov___tx {
	struct net_iov_area___tx *owner;
};

struct dmabuf_genpool_chunk_owner___tx {
	struct net_iov_area___tx area;
	struct net_devmem_dmabuf_binding *binding;
};

/*
 * io_uring zero-copy receive (zcrx): a zcrx pool's mp_priv is its
 * interface queue (struct io_zcrx_ifq), which owns the user-memory areas
 * its niovs come from and the refill ring user space returns them
 * through. Upstream "io_uring/zcrx: add interface queue and refill queue"
 * (6.15); not in the 6.12.117 base (no zcrx at all). Two layouts:
 *
 *   ___one_area  one area (ifq->area), the ring as struct io_uring
 *                (ifq->rq_ring, cached_rq_head, rq_entries): 6.15 to at
 *                least 6.18 (the host's kernel)
 *   ___areas     an array of areas (ifq->areas, nr_areas) and the ring in
 *                struct zcrx_rq (ifq->rq.ring, cached_head, nr_entries):
 *                7.3 (upstream "io_uring/zcrx: allow multiple areas")
 *
 * A niov is user space's from the CQE that hands it out until the kernel
 * takes its refill ring entry: area->user_refs[i] counts its fragments
 * held (an atomic_t per niov). area->free_count niovs are on the area's
 * freelist.
 */
struct net_iov_area___zcrx {
	unsigned long num_niovs;
};

struct io_zcrx_area {
	struct net_iov_area___zcrx nia;
	atomic_t *user_refs;
	__u32 free_count;
};

struct io_zcrx_ifq {
	unsigned int niov_shift;
	__u32 if_rxq;
	struct net_device *netdev;
};

struct io_uring___zcrx {
	__u32 head;
	__u32 tail;
};

struct io_zcrx_ifq___one_area {
	struct io_zcrx_area *area;
	struct io_uring___zcrx *rq_ring;
	__u32 cached_rq_head;
	__u32 rq_entries;
};

struct zcrx_rq_hdr {
	__u32 head;
	__u32 tail;
};

struct zcrx_rq {
	struct zcrx_rq_hdr *ring;
	__u32 cached_head;
	__u32 nr_entries;
};

struct io_zcrx_ifq___areas {
	struct io_zcrx_area **areas;
	unsigned int nr_areas;
	struct zcrx_rq rq;
};

#pragma clang attribute pop

#endif /* DEVMEMTOP_KERNEL_TYPES_H */
