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
 */
#ifndef DEVMEMTOP_TOKITER_CORE_H
#define DEVMEMTOP_TOKITER_CORE_H

#include <stddef.h>
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

#endif /* DEVMEMTOP_TOKITER_CORE_H */
