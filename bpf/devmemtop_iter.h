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
};

/* One held token, in the mmap()ed records array. */
struct dmt_iter_rec {
	__u32 sock;		/* index of its dmt_iter_sock in this snapshot */
	__u32 binding_id;
	__u32 niov_idx;		/* as dmt_tok_val: offset in the dmabuf / niov size */
	__u32 token;		/* the token id (xarray index) */
};

#endif /* DEVMEMTOP_ITER_H */
