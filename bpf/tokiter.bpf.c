// SPDX-License-Identifier: GPL-2.0
/*
 * Held frag tokens at snapshot time (issue 25): a TCP socket iterator that
 * reads each socket's token xarray (sk->sk_user_frags: token id -> netmem,
 * 6.12's devmem TCP) when user space reads the iterator, instead of a
 * program on every token. No program runs between snapshots.
 *
 * Per socket the iterator costs one read of sk_user_frags.xa_head (NULL:
 * no token held, the socket is skipped); a socket holding tokens is walked
 * node by node (one 512-byte read per xa_node, its 64 slots), in a
 * bpf_loop bounded by DMT_ITER_MAX_STEPS slots, and each token costs a
 * read of its net_iov's owner (the owner's binding, base and niovs only
 * when the owner changes). Records go to the mmap()ed array tok_recs (at
 * most DMT_ITER_MAX_RECS for all sockets), one dmt_iter_sock per socket to
 * the seq_file. Every bound that is hit is a flag, never a silent cut.
 *
 * The iterator runs under RCU (xa_nodes are freed after a grace period)
 * with the socket locked by the TCP iterator: recvmsg cannot add tokens
 * meanwhile; a concurrent SO_DEVMEM_DONTNEED (xa_lock only) can, so a
 * token returned during the walk may or may not be counted, as at any
 * instant between two snapshots.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "devmemtop.h"
#include "devmemtop_iter.h"

char LICENSE[] SEC("license") = "GPL";

#define XA_SLOTS	64
#define PAGE_SHIFT	12

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct sock_common {
	unsigned short skc_family;
};

struct bpf_iter__tcp {
	struct bpf_iter_meta *meta;
	struct sock_common *sk_common;
	__u32 uid;
};

struct tcp_sock;

struct xarray {
	void *xa_head;
};

struct xa_node {
	unsigned char shift;
	void *slots[XA_SLOTS];
};

struct kernfs_node {
	__u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
};

struct sock_cgroup_data {
	struct cgroup *cgroup;
};

struct inode {
	unsigned long i_ino;
};

struct file {
	struct inode *f_inode;
};

struct socket {
	struct file *file;
};

struct sock {
	struct xarray sk_user_frags;
	struct sock_cgroup_data sk_cgrp_data;
	struct socket *sk_socket;
};

/* 6.12 (the lab's base): net_iov->owner is the chunk owner itself. */
struct dmabuf_genpool_chunk_owner {
	unsigned long base_virtual;
	struct net_iov *niovs;
	struct net_devmem_dmabuf_binding *binding;
};

struct net_iov {
	struct dmabuf_genpool_chunk_owner *owner;
};

/*
 * Upstream "net: add helpers for netmem ... net_iov_area" (after 6.12):
 * owner is a struct net_iov_area, the first member of the chunk owner.
 */
struct net_iov_area {
	struct net_iov *niovs;
	unsigned long base_virtual;
};

/*
 * The SO_DEVMEM_AUTORELEASE series (our lab's autorelease kernel; upstream
 * after 6.12): a socket with autorelease off holds its tokens as user
 * references on the net_iovs of sk_devmem_binding, not as xarray entries.
 */
struct sock___autorel {
	struct net_devmem_dmabuf_binding *sk_devmem_binding;
};

struct dmabuf_genpool_chunk_owner___area {
	struct net_iov_area area;
	struct net_devmem_dmabuf_binding *binding;
};

#pragma clang attribute pop

/* the records of one snapshot, read by user space through mmap() */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DMT_ITER_MAX_RECS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct dmt_iter_rec);
} tok_recs SEC(".maps");

/* The walk of one socket: a stack of xa_nodes, each with its 64 slots. */
struct tok_walk {
	__u64 slots[DMT_ITER_DEPTH][XA_SLOTS];
	__u32 pos[DMT_ITER_DEPTH];
	__s32 depth;
	__u32 sock;		/* index of this socket's dmt_iter_sock */
	__u32 tokens;
	__u32 flags;
	/* the last owner seen: consecutive tokens mostly share it */
	__u64 owner;
	__u64 owner_niovs;
	__u32 owner_binding;
	__u32 owner_base_idx;	/* owner's base_virtual >> niov shift */
	__u32 niov_size;	/* bytes of struct net_iov (array stride) */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tok_walk);
} tok_walk_buf SEC(".maps");

/* written here, read by user space after the iterator's read() returned 0 */
__u32 iter_recs = 0;		/* records in tok_recs */
__u32 iter_socks = 0;		/* sockets written */
__u32 iter_flags = 0;		/* enum dmt_iter_flags, all sockets */
__u64 iter_visited = 0;		/* TCP sockets the iterator showed us */

static __always_inline int owner_load(struct tok_walk *w, __u64 owner)
{
	const struct net_devmem_dmabuf_binding *b;
	__u32 shift = PAGE_SHIFT;
	__u64 base;

	if (bpf_core_field_exists(struct dmabuf_genpool_chunk_owner, base_virtual)) {
		const struct dmabuf_genpool_chunk_owner *o = (const void *)owner;

		base = BPF_CORE_READ(o, base_virtual);
		w->owner_niovs = (__u64)BPF_CORE_READ(o, niovs);
		b = BPF_CORE_READ(o, binding);
	} else if (bpf_core_field_exists(struct dmabuf_genpool_chunk_owner___area, area)) {
		const struct dmabuf_genpool_chunk_owner___area *o = (const void *)owner;

		base = BPF_CORE_READ(o, area.base_virtual);
		w->owner_niovs = (__u64)BPF_CORE_READ(o, area.niovs);
		b = BPF_CORE_READ(o, binding);
	} else {
		w->flags |= DMT_ITER_LAYOUT;
		return -1;
	}
	if (!b || !w->owner_niovs) {
		w->flags |= DMT_ITER_FAULT;
		return -1;
	}
	if (bpf_core_field_exists(struct net_devmem_dmabuf_binding___niov_shift, niov_shift)) {
		const struct net_devmem_dmabuf_binding___niov_shift *bs = (const void *)b;

		shift = BPF_CORE_READ(bs, niov_shift);
		if (shift < PAGE_SHIFT || shift > 30)
			shift = PAGE_SHIFT;
	}
	w->owner = owner;
	w->owner_binding = BPF_CORE_READ(b, id);
	w->owner_base_idx = base >> shift;
	return 0;
}

/* one token: entry is the netmem the xarray holds for it */
static __always_inline int token_emit(struct tok_walk *w, __u64 entry, __u32 token)
{
	const struct net_iov *niov;
	struct dmt_iter_rec *r;
	__u64 owner;
	__u32 k;

	if (!(entry & 1)) {	/* a page: 6.12 hands out only net_iovs */
		w->flags |= DMT_ITER_PAGE;
		return 0;
	}
	niov = (const void *)(entry & ~1ULL);
	owner = (__u64)BPF_CORE_READ(niov, owner);
	if (!owner) {
		w->flags |= DMT_ITER_FAULT;
		return 0;
	}
	if (owner != w->owner && owner_load(w, owner))
		return 0;
	k = iter_recs;
	if (k >= DMT_ITER_MAX_RECS) {
		w->flags |= DMT_ITER_TRUNC_RECS;
		return 1;
	}
	r = bpf_map_lookup_elem(&tok_recs, &k);
	if (!r)
		return 1;
	r->sock = w->sock;
	r->binding_id = w->owner_binding;
	r->niov_idx = w->owner_base_idx + ((__u64)niov - w->owner_niovs) / w->niov_size;
	r->token = token;
	iter_recs = k + 1;
	w->tokens++;
	return 0;
}

static int node_load(struct tok_walk *w, __u32 d, __u64 node)
{
	const struct xa_node *n = (const void *)node;

	if (d >= DMT_ITER_DEPTH) {
		w->flags |= DMT_ITER_DEEP;
		return -1;
	}
	if (bpf_probe_read_kernel(w->slots[d], sizeof(w->slots[d]), &n->slots[0])) {
		w->flags |= DMT_ITER_FAULT;
		return -1;
	}
	w->pos[d] = 0;
	w->depth = d;
	return 0;
}

/* xa_is_node(): an internal entry (low bits 10) above 4096; below: retry, zero, sibling */
#define XA_IS_INTERNAL(e)	(((e) & 3) == 2)
#define XA_IS_NODE(e)		(XA_IS_INTERNAL(e) && (e) > 4096)

/* bpf_loop's context must be on the stack: the walk is looked up again (inlined) */
static long walk_step(__u64 i, void *unused)
{
	__u32 p, token = 0, zero = 0;
	struct tok_walk *w;
	__s32 d;
	__u64 e;

	w = bpf_map_lookup_elem(&tok_walk_buf, &zero);
	if (!w)
		return 1;
	d = w->depth;
	if (d < 0 || d >= DMT_ITER_DEPTH)
		return 1;
	p = w->pos[d];
	if (p >= XA_SLOTS) {
		w->depth = d - 1;
		return 0;
	}
	w->pos[d] = p + 1;
	e = w->slots[d][p & (XA_SLOTS - 1)];
	if (!e || (XA_IS_INTERNAL(e) && !XA_IS_NODE(e)))
		return 0;
	if (XA_IS_NODE(e))
		return node_load(w, d + 1, e - 2), 0;
	/* the token id: the slot's index, from the path of slots above it */
	for (int k = 0; k < DMT_ITER_DEPTH; k++)
		if (k <= d)
			token = (token << 6) | ((w->pos[k] - 1) & (XA_SLOTS - 1));
	return token_emit(w, e, token);
}

SEC("iter/tcp")
int tok_iter(struct bpf_iter__tcp *ctx)
{
	struct dmt_iter_sock out = {};
	struct seq_file *seq = ctx->meta->seq;
	struct sock_common *skc = ctx->sk_common;
	const struct net_devmem_dmabuf_binding *mb = NULL;
	struct tok_walk *w;
	const struct sock *sk;
	__u64 head;
	__u32 zero = 0;
	long steps;

	/*
	 * The last call (skc NULL) has seq_num one less than the sockets shown:
	 * 0 after exactly one, which must not reset what that one counted.
	 * User space zeroes the counters before each read too (a read of no
	 * socket runs only that last call).
	 */
	if (!skc)
		return 0;
	if (ctx->meta->seq_num == 0) {	/* a new read of the iterator */
		iter_recs = 0;
		iter_socks = 0;
		iter_flags = 0;
		iter_visited = 0;
	}
	iter_visited++;
	sk = (const void *)bpf_skc_to_tcp_sock(skc);
	if (!sk)
		return 0;	/* request or time-wait socket: no tokens */
	head = (__u64)BPF_CORE_READ(sk, sk_user_frags.xa_head);
	/*
	 * Autorelease off (0012): the socket pins the binding it reads from;
	 * its tokens are counts on that binding's net_iovs, which user space
	 * reads with bpf/urefwalk.bpf.c: here only its header (a holder row).
	 */
	if (!head && bpf_core_field_exists(struct sock___autorel, sk_devmem_binding))
		mb = BPF_CORE_READ((const struct sock___autorel *)sk, sk_devmem_binding);
	if (!head && !mb)
		return 0;	/* holds no token: the common case, one read */
	if (iter_socks >= DMT_ITER_MAX_SOCKS) {
		iter_flags |= DMT_ITER_TRUNC_SOCKS;
		return 0;
	}
	w = bpf_map_lookup_elem(&tok_walk_buf, &zero);
	if (!w)
		return 0;
	w->sock = iter_socks;
	w->tokens = 0;
	w->flags = 0;
	w->owner = 0;
	w->niov_size = bpf_core_type_size(struct net_iov);
	if (!w->niov_size)
		return 0;
	out.first_rec = iter_recs;
	if (mb) {
		w->flags = DMT_ITER_MANUAL;
		out.binding_id = BPF_CORE_READ(mb, id);
	} else if (XA_IS_NODE(head)) {
		if (!node_load(w, 0, head - 2)) {
			steps = bpf_loop(DMT_ITER_MAX_STEPS, walk_step, NULL, 0);
			if (steps >= DMT_ITER_MAX_STEPS && w->depth >= 0)
				w->flags |= DMT_ITER_TRUNC_STEPS;
		}
	} else if (!XA_IS_INTERNAL(head)) {
		token_emit(w, head, 0);	/* a lone entry at index 0 */
	}
	out.sk = (__u64)sk;
	out.uid = ctx->uid;
	out.tokens = w->tokens;
	out.flags = w->flags;
	if (bpf_core_field_exists(sk->sk_cgrp_data.cgroup))
		out.cgroup_id = BPF_CORE_READ(sk, sk_cgrp_data.cgroup, kn, id);
	out.ino = BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
	iter_flags |= w->flags;
	iter_socks++;
	bpf_seq_write(seq, &out, sizeof(out));
	return 0;
}
