/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Held frag tokens read at snapshot time (light mode, bpf/tokiter.bpf.c):
 * the iterator's per-socket headers and token records turned into the
 * token map's entries and holder rows, so tokens__aggregate() counts them
 * the way it counts the full mode's. Plain data, no libbpf.
 *
 *   tok_iter__entries(socks, ns, recs, nr, &toks, &n, &holders, &nh)   0 or -errno
 *   tok_iter__why(flags, buf, len)   -> NULL if the walk was complete, else why not
 *   tok_iter__socket_pids(inos, n, pids, comms)   which process holds each socket
 *   tok_iter__add_urefs(&toks, &n, binding_id, recs, nr)   a uref walk's records
 *   tok_iter__manual_holders(socks, ns, holders, &agg)   rows of autorelease-off sockets
 *   tok_iter__holder_inodes(socks, ns, &agg)   each holder's socket inode
 *   tok_iter__held_why(flags, socks, ns, urefs, nu, uref_kernel, binding_id)
 */
#ifndef DEVMEMTOP_TOKITER_CORE_H
#define DEVMEMTOP_TOKITER_CORE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "tokens.h"
#include "devmemtop_iter.h"

/*
 * One dmt_tok_entry per record (key: socket address and token id; value:
 * binding and niov index, time 0: the kernel keeps no hand-out time) and
 * one dmt_holder per socket (address, binding of its first token, cgroup
 * id; pid, comm and the hand-out counters unknown: 0). -EINVAL when a
 * header names records outside recs[0..nr) or a record names no header.
 */
int tok_iter__entries(const struct dmt_iter_sock *socks, size_t ns,
		     const struct dmt_iter_rec *recs, size_t nr,
		     struct dmt_tok_entry **toks, size_t *n, struct dmt_holder **holders,
		     size_t *nh);

/* NULL when flags say the walk saw every token; else one line why not. */
const char *tok_iter__why(uint32_t flags, char *buf, size_t len);

/*
 * For each socket inode, the process holding it (/proc/PID/fd/N ->
 * "socket:[ino]"): pids[i] (0: not found) and comms[i]. proc is the
 * procfs root ("/proc"). Returns how many were found.
 */
size_t tok_iter__socket_pids(const char *proc, const uint64_t *inos, size_t n, uint32_t *pids,
			    char (*comms)[16]);

/*
 * Tokens without SO_DEVMEM_AUTORELEASE (kernel-patches 0012): the uref
 * walk's records of one binding (bpf/urefwalk.bpf.c: a net_iov index and
 * its uref count) appended to *toks as the full mode keeps them (key {0,
 * niov index, binding id}, count = uref), so tokens__aggregate() sums the
 * counts with the xarray tokens of the same binding and counts the
 * net_iovs of both once. 0 or -ENOMEM (*toks unchanged then).
 */
int tok_iter__add_urefs(struct dmt_tok_entry **toks, size_t *n, uint32_t binding_id,
			const struct dmt_uref_rec *recs, size_t nr, uint64_t now_ns);

/*
 * One holder row per socket the iterator saw with autorelease off
 * (DMT_ITER_MANUAL): its socket, binding and cgroup, pid and comm from
 * holders[i] (tok_iter__entries()' row for socks[i]), manual, and
 * counts_unknown: the kernel keeps no count per socket in that mode.
 * Appended to agg->holders. 0 or -ENOMEM.
 */
int tok_iter__manual_holders(const struct dmt_iter_sock *socks, size_t ns,
			     const struct dmt_holder *holders, struct tok_agg *agg);

/* What the uref walk gave for one binding this snapshot. */
struct tok_uref_status {
	uint32_t binding_id;
	uint32_t flags;			/* enum dmt_uref_flags, 0: every net_iov read */
};

/*
 * Why binding @binding_id's held figures are unknown this snapshot (enum
 * dmt_held_why), DMT_HELD_NO_REASON when they are exact:
 *  - the iterator's walk was incomplete (a flag but DMT_ITER_MANUAL);
 *  - on a kernel with net_iov.uref (@uref_kernel): the binding's uref walk
 *    is not in @urefs (not run: address unknown, walk not loaded) or has
 *    a flag; a binding with no socket in autorelease-off mode needs it
 *    too, for tokens whose socket is gone are counted until the unbind;
 *  - on a kernel without: a socket reads it with autorelease off.
 * A DMT_ITER_MANUAL socket whose binding id is 0 (not read) counts for
 * every binding.
 */
/*
 * Each holder's sock_ino from the iterator's header of its socket (by
 * address): what names a holder whose process is unknown
 * (tokens__holder_key()).
 */
void tok_iter__holder_inodes(const struct dmt_iter_sock *socks, size_t ns, struct tok_agg *agg);

uint32_t tok_iter__held_why(uint32_t iter_flags, const struct dmt_iter_sock *socks, size_t ns,
			    const struct tok_uref_status *urefs, size_t nu, bool uref_kernel,
			    uint32_t binding_id);

/* NULL when flags say the uref walk read every net_iov; else one line why not. */
const char *tok_iter__uref_why(uint32_t flags, char *buf, size_t len);

#endif /* DEVMEMTOP_TOKITER_CORE_H */
