/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frag token accounting from the BPF token map (bpf/devmemtop.bpf.c,
 * "frag tokens"): which socket holds how many tokens and net_iovs of which
 * binding, and for how long. Plain data, no libbpf: the collector feeds it
 * the map's entries, the unit tests feed it arrays.
 *
 *   struct tok_agg agg;
 *   tokens__aggregate(toks, n, holders, nh, now_ns, &agg);   0 or -errno
 *   tok_agg__binding(&agg, id)   -> held tokens / niovs of one binding
 *   agg.holders[0..n_holders)    -> one row per socket holding tokens,
 *                                   most tokens first
 *   tok_agg__free(&agg);
 */
#ifndef DEVMEMTOP_TOKENS_H
#define DEVMEMTOP_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "devmemtop.h"
#include "hist.h"

/* One entry of the BPF token map. */
struct dmt_tok_entry {
	struct dmt_tok_key key;
	struct dmt_tok_val val;
};

/*
 * A holder's cgroup path, relative to the cgroup2 root: Kubernetes paths
 * take about 200 bytes (a kind node's, seen from its host, 330); longer
 * ones keep their last components, "/..." first (cgpath__path()).
 */
#define DMT_CGROUP_PATH_MAX	512

/* A socket holding frag tokens, as every output shows it. */
struct dmt_holder_snap {
	uint64_t sk;			/* kernel address: the key, not shown */
	/*
	 * tgid of its first token's recvmsg; 0: unknown (no holder entry, or
	 * light mode could not read the owner's /proc/PID/fd: another
	 * user's after the privilege drop). Never shown as 0.
	 */
	uint32_t pid;
	char comm[16];
	uint32_t binding_id;
	uint64_t tokens;		/* held now */
	uint64_t niovs;			/* distinct net_iovs behind them */
	uint64_t oldest_age_ns;		/* age of its oldest held token */
	uint64_t handed, returned, released;	/* since attach */
	/*
	 * SO_DEVMEM_AUTORELEASE off (kernel-patches 0012): its tokens are
	 * counted per niov of the binding, and any socket reading from the
	 * binding may return them. tokens = what it got less what it
	 * returned (what it holds if it is the binding's only such reader;
	 * drained references are not taken off), niovs = the binding's niovs
	 * with such tokens.
	 */
	bool manual;
	/*
	 * Light mode, autorelease off: the kernel keeps no count per socket
	 * (only per net_iov of the binding), so tokens and niovs are unknown
	 * (JSON null); the socket, its process and binding are known.
	 */
	bool counts_unknown;
	/*
	 * cgroup v2 id of its first token's recvmsg task (0: unknown, no
	 * holder entry or a recording from before) and the cgroup's path, ""
	 * when unknown (gone before devmemtop resolved it): the pod and the
	 * container come from the path (podcg.h).
	 */
	uint64_t cgroup_id;
	char cgroup[DMT_CGROUP_PATH_MAX];
	/*
	 * cgroup "" because the walk stopped at its bound before it found
	 * the id (cgpath.h), not because the cgroup was gone; not recorded
	 */
	bool cgroup_cut;
	/* its socket's inode (light mode: the iterator's), 0 unknown */
	uint64_t sock_ino;
};

/*
 * Which holder a row of a per-process table stands for (the exporter's
 * series, report's and the HTML page's rows): a process's sockets on one
 * binding are summed, but only when the process is known. A holder whose
 * pid is unknown is its socket (inode), or, where not even that is known
 * (a full holder map, a recording from before), its cgroup: never one row
 * for every unknown process, which would carry one pod's labels for all.
 */
struct dmt_holder_key {
	uint32_t pid, binding_id;
	uint64_t sock_ino;		/* 0 unless pid is 0 */
	uint64_t cgroup_id;		/* 0 unless pid and sock_ino are 0 */
};

struct dmt_holder_key tokens__holder_key(const struct dmt_holder_snap *h);
bool tokens__holder_key_eq(const struct dmt_holder_key *a, const struct dmt_holder_key *b);

/* Held tokens and net_iovs of one binding. */
struct tok_binding_held {
	uint32_t binding_id;
	uint64_t tokens;
	uint64_t niovs;
	uint64_t manual_niovs;		/* niovs with tokens counted per niov */
};

struct tok_agg {
	struct tok_binding_held *bindings;
	size_t n_bindings;
	struct dmt_holder_snap *holders;
	size_t n_holders;
};

/* Token cost and the token tracker's health, as snapshots carry them. */
struct dmt_tok_cost {
	struct hist_log2 per_recvmsg;		/* tokens per tcp_recvmsg (>= 1) */
	struct hist_log2 per_dontneed;		/* tokens freed per DONTNEED call */
	struct hist_log2 dontneed_ns;		/* DONTNEED latency per call */
	struct hist_log2 dontneed_ns_token;	/* per call / tokens it freed */
	uint64_t map_full;
	uint64_t no_socket;
	uint64_t dontneed_mismatch;
	uint64_t holders_full;
};

/*
 * Count toks[0..n) per binding and per socket. A socket in holders[] gives
 * its row pid, comm and counters; a socket with tokens but no holder entry
 * (holder map full) still gets a row, pid 0. Sockets holding nothing are
 * left out. An entry with key.sk 0 is a niov of a binding read without
 * SO_DEVMEM_AUTORELEASE standing for val.count tokens (another entry
 * stands for one): it counts for its binding, and a holder marked manual
 * gets a row whatever it holds. toks is reordered.
 */
int tokens__aggregate(struct dmt_tok_entry *toks, size_t n, const struct dmt_holder *holders,
		      size_t nh, uint64_t now_ns, struct tok_agg *out);
const struct tok_binding_held *tok_agg__binding(const struct tok_agg *a, uint32_t binding_id);
void tok_agg__free(struct tok_agg *a);

/*
 * Where a holder runs, in one column: "pod <uid> containerd://<id>" for a
 * Kubernetes pod's container (the id cut to 12 digits with short, as
 * crictl shows it), "pod <uid>" for the pod's own cgroup, else the cgroup
 * path (with "(not a pod: <why>)" after it when it names kubepods where
 * the kubelet does not, was cut short or is malformed: podcg_why()),
 * "cgroup <id> (path unknown)" when the cgroup was gone before its path
 * was found ("(path unknown: cgroup walk stopped at its bound)" when the
 * walk that looked for it was cut short), "?" when not even the id is
 * known. Unescaped: the path is the kernel's, a name any container
 * runtime chose.
 */
char *tokens__holder_where(const struct dmt_holder_snap *h, bool short_id, char *buf,
			   size_t len);

void tok_cost_from_bpf(struct dmt_tok_cost *dst, const struct dmt_tok_stats *src);

#endif /* DEVMEMTOP_TOKENS_H */
