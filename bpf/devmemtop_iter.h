/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Held frag tokens read from the kernel at snapshot time (bpf/tokiter.bpf.c,
 * light mode): shared by the iterator and the collector. Plain __u32/__u64.
 */
#ifndef DEVMEMTOP_ITER_H
#define DEVMEMTOP_ITER_H

/* Bounds of one snapshot's walk (docs/tokens.md, "Held tokens at snapshot time"). */
#define DMT_ITER_MAX_SOCKS	4096		/* sockets holding tokens */
#define DMT_ITER_MAX_RECS	(1 << 18)	/* tokens, all sockets together */
#define DMT_ITER_MAX_STEPS	(1 << 20)	/* xarray slots visited per socket */
#define DMT_ITER_DEPTH		8		/* xarray levels: 31-bit ids need 6 */

enum dmt_iter_flags {
	DMT_ITER_TRUNC_RECS	= 1 << 0,	/* more tokens than DMT_ITER_MAX_RECS */
	DMT_ITER_TRUNC_STEPS	= 1 << 1,	/* the walk hit DMT_ITER_MAX_STEPS */
	DMT_ITER_TRUNC_SOCKS	= 1 << 2,	/* more sockets than DMT_ITER_MAX_SOCKS */
	DMT_ITER_FAULT		= 1 << 3,	/* a kernel read failed */
	DMT_ITER_LAYOUT		= 1 << 4,	/* net_iov owner layout not known here */
	DMT_ITER_PAGE		= 1 << 5,	/* an entry was a page, not a net_iov */
	DMT_ITER_DEEP		= 1 << 6,	/* deeper than DMT_ITER_DEPTH */
	DMT_ITER_MANUAL		= 1 << 7,	/* a socket reads without autorelease */
};

/* One socket with a non-empty sk_user_frags, written to the iterator's seq_file. */
struct dmt_iter_sock {
	__u64 sk;
	__u64 cgroup_id;	/* the socket's cgroup v2 (sk_cgrp_data), 0 unknown */
	__u64 ino;		/* its inode: /proc/PID/fd finds the holder */
	__u32 uid;
	__u32 tokens;		/* records it wrote */
	__u32 first_rec;	/* its records: recs[first_rec .. first_rec + tokens) */
	__u32 flags;		/* enum dmt_iter_flags */
	/*
	 * DMT_ITER_MANUAL in flags: a socket with SO_DEVMEM_AUTORELEASE off
	 * (no records: its tokens are counts on the binding's net_iovs) and
	 * the id of the binding it reads from (sk_devmem_binding)
	 */
	__u32 binding_id;
	__u32 pad;
};

/* One held token, in the mmap()ed records array. */
struct dmt_iter_rec {
	__u32 sock;		/* index of its dmt_iter_sock in this snapshot */
	__u32 binding_id;
	__u32 niov_idx;		/* as dmt_tok_val: offset in the dmabuf / niov size */
	__u32 token;		/* the token id (xarray index) */
};

/*
 * Tokens held without SO_DEVMEM_AUTORELEASE (kernel-patches 0012): the
 * kernel counts them per net_iov (net_iov->uref), not per socket. The
 * uref walk (bpf/urefwalk.bpf.c, one BPF_PROG_TEST_RUN per binding at
 * snapshot time) reads every net_iov of a binding and writes one record
 * per net_iov with uref > 0 to an mmap()ed array.
 */
#define DMT_UREF_MAX_NIOVS	(1 << 22)	/* net_iovs per binding (16 GiB of 4 KiB) */
#define DMT_UREF_MAX_RECS	(1 << 18)	/* net_iovs with uref > 0, per binding */
#define DMT_UREF_BLOCK		4096		/* bytes of net_iovs read at once */

enum dmt_uref_flags {
	DMT_UREF_NOFIELD	= 1 << 0,	/* the kernel's net_iov has no uref */
	DMT_UREF_UNKNOWN	= 1 << 1,	/* not a live binding our hooks saw */
	DMT_UREF_LAYOUT		= 1 << 2,	/* binding layout not known here */
	DMT_UREF_FAULT		= 1 << 3,	/* a kernel read failed */
	DMT_UREF_TRUNC_NIOVS	= 1 << 4,	/* more than DMT_UREF_MAX_NIOVS net_iovs */
	DMT_UREF_TRUNC_RECS	= 1 << 5,	/* more than DMT_UREF_MAX_RECS held net_iovs */
	DMT_UREF_NEGATIVE	= 1 << 6,	/* a uref below 0 (the posted revisions' underflow) */
};

/* One net_iov with uref > 0. */
struct dmt_uref_rec {
	__u32 niov_idx;		/* as dmt_iter_rec: its index in the binding */
	__u32 uref;		/* tokens user space holds on it */
};

/* The walk of one binding, read by user space right after the test run. */
struct dmt_uref_out {
	__u64 tokens;		/* sum of uref */
	__u32 niovs;		/* net_iovs with uref > 0 */
	__u32 recs;		/* records written (== niovs when complete) */
	__u32 walked;		/* net_iovs read */
	__u32 flags;		/* enum dmt_uref_flags; 0: complete */
	__u32 id;		/* the binding's id */
	__u32 layout;		/* 1 gen_pool chunks, 2 binding->niovs array */
};

#endif /* DEVMEMTOP_ITER_H */
