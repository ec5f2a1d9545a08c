// SPDX-License-Identifier: GPL-2.0
/*
 * Light mode's held tokens without SO_DEVMEM_AUTORELEASE (issue 25,
 * kernel-patches 0012): a socket with autorelease off keeps no entry per
 * token; the kernel counts the tokens user space holds per net_iov
 * (net_iov->uref, all sockets of the binding together). This program
 * reads them for one binding when user space runs it (BPF_PROG_TEST_RUN,
 * one argument: the binding's address), at snapshot time, like
 * devmemtop.bpf.c's walk_binding: nothing runs between snapshots.
 *
 * The address must be in live_bindings, the read-only map devmemtop.bpf.c
 * fills from the binding hooks (user space hands us its fd), so no other
 * address is ever read. The net_iovs are reached as the binding's
 * allocator lays them out:
 *  - binding->niovs[0 .. total_niovs) (the freelist: kernel-patches 0004,
 *    upstream "replace gen_pool with freelist"; 0012 builds on it), the
 *    array index being the token and the niov index;
 *  - gen_pool (6.12 and upstream before the freelist): the chunk list of
 *    binding->chunk_pool, each chunk's owner with its niovs[0 .. num_niovs)
 *    and base_virtual (niov index = base_virtual >> niov shift + i).
 * Bounded: one bpf_loop step per net_iov (at most DMT_UREF_MAX_NIOVS) or
 * chunk (none for a freelist binding whose every net_iov is free), the
 * net_iovs read DMT_UREF_BLOCK bytes at a time (73 of 56 bytes), at most
 * DMT_UREF_MAX_RECS records. Every bound hit is a flag: user space
 * then says the binding's held figures are unknown, never a partial count.
 * User space runs it only for the bindings uref_pin (below) saw a socket
 * without autorelease read from, or cannot vouch for.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "devmemtop.h"
#include "devmemtop_iter.h"

char LICENSE[] SEC("license") = "GPL";

#define PAGE_SHIFT	12

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* kernel-patches 0012 (the SO_DEVMEM_AUTORELEASE series): net_iov->uref */
struct net_iov___uref {
	atomic_t uref;
};

/* the freelist layout's net_iov array (kernel-patches 0004) */
struct net_devmem_dmabuf_binding___niovs {
	struct net_iov___uref *niovs;
	__u32 total_niovs;
	__u32 free_count;
};

struct gen_pool_chunk___owner {
	struct list_head next_chunk;
	void *owner;
};

/* 6.12: the chunk owner holds its net_iovs itself */
struct dmabuf_genpool_chunk_owner {
	unsigned long base_virtual;
	struct net_iov___uref *niovs;
	__u64 num_niovs;
};

/* upstream after 6.12: a struct net_iov_area first in the owner */
struct net_iov_area {
	struct net_iov___uref *niovs;
	__u64 num_niovs;
	unsigned long base_virtual;
};

struct dmabuf_genpool_chunk_owner___area {
	struct net_iov_area area;
};

#pragma clang attribute pop

#include "live_bindings.h"	/* devmemtop.bpf.c's, by fd (bpf_map__reuse_fd) */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DMT_UREF_MAX_RECS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct dmt_uref_rec);
} uref_recs SEC(".maps");

/* one binding's walk: the current net_iov array and a block of it */
struct uref_walk {
	__u8 buf[DMT_UREF_BLOCK];
	__u64 base;		/* the current array's first net_iov */
	__u64 head, pos;	/* gen_pool: the chunk list and the chunk walked */
	__u32 n, j;		/* its length, the next index */
	__u32 idx0;		/* niov index of base */
	__u32 blk;		/* index of the first net_iov in buf */
	__u32 blk_n;		/* net_iovs in buf */
	__u32 per;		/* net_iovs per block */
	__u32 stride, uoff;	/* sizeof(struct net_iov), offsetof(uref) */
	__u32 shift;		/* niov shift (gen_pool index) */
	__u32 chunks;		/* gen_pool: 1 while there are chunks to walk */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uref_walk);
} uref_walk_buf SEC(".maps");

struct dmt_uref_out uref_out = {};

/*
 * Bindings a socket without autorelease has read from: 0012's
 * tcp_devmem_pin_binding() takes its binding reference through
 * net_devmem_dmabuf_binding_get_user() at the socket's first frag, before
 * any user reference on the binding's net_iovs, and nothing else calls it.
 * Once per socket, not per token. User space walks only these bindings
 * (and those it cannot vouch for): the others hold no such token.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_BINDINGS);
	__type(key, __u32);		/* binding id */
	__type(value, __u32);
} manual_bindings SEC(".maps");

__u32 pin_lost = 0;	/* bindings manual_bindings had no room for */

SEC("fentry/net_devmem_dmabuf_binding_get_user")
int BPF_PROG(uref_pin, const struct net_devmem_dmabuf_binding *b)
{
	__u32 id = BPF_CORE_READ(b, id), one = 1;

	if (bpf_map_update_elem(&manual_bindings, &id, &one, BPF_ANY))
		__sync_fetch_and_add(&pin_lost, 1);	/* full: user space walks them all */
	return 0;
}

/* gen_pool: the next chunk's net_iov array; 1 at the end of the list */
static __always_inline int chunk_next(struct uref_walk *w)
{
	const struct gen_pool_chunk___owner *c;
	struct list_head *pos = (void *)w->pos, *next;
	__u64 base, n, virt;
	void *owner;

	next = BPF_CORE_READ(pos, next);
	if (!next || (__u64)next == w->head)
		return 1;
	w->pos = (__u64)next;
	c = (const void *)next - bpf_core_field_offset(struct gen_pool_chunk___owner, next_chunk);
	owner = BPF_CORE_READ(c, owner);
	if (!owner) {
		uref_out.flags |= DMT_UREF_FAULT;
		return 1;
	}
	if (bpf_core_field_exists(struct dmabuf_genpool_chunk_owner, niovs)) {
		const struct dmabuf_genpool_chunk_owner *o = owner;

		base = (__u64)BPF_CORE_READ(o, niovs);
		n = BPF_CORE_READ(o, num_niovs);
		virt = BPF_CORE_READ(o, base_virtual);
	} else if (bpf_core_field_exists(struct dmabuf_genpool_chunk_owner___area, area)) {
		const struct dmabuf_genpool_chunk_owner___area *o = owner;

		base = (__u64)BPF_CORE_READ(o, area.niovs);
		n = BPF_CORE_READ(o, area.num_niovs);
		virt = BPF_CORE_READ(o, area.base_virtual);
	} else {
		uref_out.flags |= DMT_UREF_LAYOUT;
		return 1;
	}
	if (n > DMT_UREF_MAX_NIOVS || (n && !base)) {
		uref_out.flags |= n ? DMT_UREF_TRUNC_NIOVS : DMT_UREF_FAULT;
		return 1;
	}
	w->base = base;
	w->n = n;
	w->j = 0;
	w->blk_n = 0;
	w->idx0 = virt >> w->shift;
	return 0;
}

/* read the block of net_iovs that starts at index w->j */
static __always_inline int block_load(struct uref_walk *w)
{
	__u32 cnt = w->n - w->j, bytes;

	if (cnt > w->per)
		cnt = w->per;
	bytes = cnt * w->stride;
	if (!bytes || bytes > DMT_UREF_BLOCK ||
	    bpf_probe_read_kernel(w->buf, bytes, (void *)(w->base + (__u64)w->j * w->stride))) {
		uref_out.flags |= DMT_UREF_FAULT;
		return -1;
	}
	w->blk = w->j;
	w->blk_n = cnt;
	return 0;
}

static long uref_step(__u64 i, void *unused)
{
	struct dmt_uref_rec *r;
	struct uref_walk *w;
	__u32 zero = 0, o, k;
	__s32 u;

	w = bpf_map_lookup_elem(&uref_walk_buf, &zero);
	if (!w)
		return 1;
	if (w->j >= w->n) {
		if (!w->chunks || chunk_next(w))
			return 1;	/* done, or a flag says why not */
		return 0;
	}
	if (w->j < w->blk || w->j - w->blk >= w->blk_n) {
		if (block_load(w))
			return 1;
	}
	o = (w->j - w->blk) * w->stride + w->uoff;
	if (o > DMT_UREF_BLOCK - sizeof(__s32)) {
		uref_out.flags |= DMT_UREF_FAULT;
		return 1;
	}
	u = *(__s32 *)&w->buf[o];
	uref_out.walked++;
	if (u < 0) {
		uref_out.flags |= DMT_UREF_NEGATIVE;
	} else if (u > 0) {
		uref_out.tokens += u;
		uref_out.niovs++;
		k = uref_out.recs;
		if (k >= DMT_UREF_MAX_RECS) {
			uref_out.flags |= DMT_UREF_TRUNC_RECS;
			return 1;
		}
		r = bpf_map_lookup_elem(&uref_recs, &k);
		if (!r)
			return 1;
		r->niov_idx = w->idx0 + w->j;
		r->uref = u;
		uref_out.recs = k + 1;
	}
	w->j++;
	return 0;
}

static __always_inline __u32 niov_shift(const struct net_devmem_dmabuf_binding *b)
{
	const struct net_devmem_dmabuf_binding___niov_shift *s = (const void *)b;
	__u32 shift = PAGE_SHIFT;

	if (bpf_core_field_exists(s->niov_shift))
		shift = BPF_CORE_READ_BITFIELD_PROBED(s, niov_shift);
	return shift >= PAGE_SHIFT && shift < 32 ? shift : PAGE_SHIFT;
}

/* where the binding's net_iovs are: 0, or a flag set in uref_out */
static __always_inline int walk_setup(const struct net_devmem_dmabuf_binding *b,
				      struct uref_walk *w, __u32 *steps)
{
	const struct net_devmem_dmabuf_binding___niovs *fl = (const void *)b;
	const struct net_devmem_dmabuf_binding___genpool *gp = (const void *)b;
	__u32 total;

	w->stride = bpf_core_type_size(struct net_iov___uref);
	w->uoff = bpf_core_field_offset(struct net_iov___uref, uref);
	if (!w->stride || w->stride > DMT_UREF_BLOCK || w->uoff + 4 > w->stride) {
		uref_out.flags |= DMT_UREF_LAYOUT;
		return -1;
	}
	w->per = DMT_UREF_BLOCK / w->stride;
	w->shift = niov_shift(b);
	w->j = w->n = w->blk = w->blk_n = w->idx0 = w->chunks = 0;
	if (bpf_core_field_exists(fl->niovs) && bpf_core_field_exists(fl->total_niovs)) {
		uref_out.layout = 2;
		total = BPF_CORE_READ(fl, total_niovs);
		w->base = (__u64)BPF_CORE_READ(fl, niovs);
		if (total > DMT_UREF_MAX_NIOVS) {
			uref_out.flags |= DMT_UREF_TRUNC_NIOVS;
			return -1;
		}
		if (total && !w->base) {
			uref_out.flags |= DMT_UREF_FAULT;
			return -1;
		}
		/*
		 * Every net_iov on the freelist: none is held (a user reference
		 * comes with a page pool reference, and the freelist has none),
		 * so an idle binding costs two reads
		 */
		if (bpf_core_field_exists(fl->free_count) &&
		    BPF_CORE_READ(fl, free_count) == total)
			total = 0;
		w->n = total;
		*steps = total + 1;
		return 0;
	}
	if (bpf_core_field_exists(gp->chunk_pool)) {
		__u64 pool = (__u64)BPF_CORE_READ(gp, chunk_pool);

		if (!pool) {
			uref_out.flags |= DMT_UREF_FAULT;
			return -1;
		}
		uref_out.layout = 1;
		w->head = pool + bpf_core_field_offset(struct gen_pool, chunks);
		w->pos = w->head;
		w->chunks = 1;
		/* every net_iov and every chunk once, and the last step */
		*steps = 2 * DMT_UREF_MAX_NIOVS;
		return 0;
	}
	uref_out.flags |= DMT_UREF_LAYOUT;
	return -1;
}

SEC("raw_tp")
int uref_walk(__u64 *ctx)
{
	const struct net_devmem_dmabuf_binding *b = (const void *)ctx[0];
	__u64 addr = ctx[0];
	struct dmt_uref_out zero_out = {};
	struct uref_walk *w;
	__u32 zero = 0, steps = 0;
	long ran;

	uref_out = zero_out;
	if (!bpf_core_field_exists(struct net_iov___uref, uref)) {
		uref_out.flags = DMT_UREF_NOFIELD;
		return 0;
	}
	/* only a binding our hooks saw created and not yet freed */
	if (!bpf_map_lookup_elem(&live_bindings, &addr)) {
		uref_out.flags = DMT_UREF_UNKNOWN;
		return 0;
	}
	uref_out.id = BPF_CORE_READ(b, id);
	w = bpf_map_lookup_elem(&uref_walk_buf, &zero);
	if (!w || walk_setup(b, w, &steps))
		return 0;
	ran = bpf_loop(steps, uref_step, NULL, 0);
	/* every step taken and the walk not at its end: a bound, not the end */
	if (ran >= steps && (w->j < w->n || w->chunks))
		uref_out.flags |= DMT_UREF_TRUNC_NIOVS;
	return 0;
}
