/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which announced page pools still want a sampling window (light mode,
 * --pools devmem). A page-pool notification says a listed pool exists; a
 * window locates it only while it has traffic, which often starts later
 * than the announcement. So an announced pool, until located, brings a
 * window forward NTF_TRIES times: at the first snapshot at or after 0, 1,
 * 2, 4, 8, 16 and 32 s from its notification; then the period takes over.
 *
 *   ntf_sched__add(&s, id, now);          per notification of an add or change
 *   if (ntf_sched__due(&s, now, located, ctx))   once per snapshot
 *           run one window (it serves every due pool at once)
 */
#ifndef DEVMEMTOP_NTFSCHED_H
#define DEVMEMTOP_NTFSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NTF_PENDING	64
#define NTF_TRIES	7

struct ntf_sched {
	struct ntf_pending {
		uint32_t id;
		uint32_t tries;		/* windows it brought forward */
		uint64_t next_ns;	/* the earliest time of its next one */
	} p[NTF_PENDING];
	size_t n;
};

/* A pool announced at now; -ENOSPC when NTF_PENDING pools already wait. */
int ntf_sched__add(struct ntf_sched *s, uint32_t id, uint64_t now);
/*
 * True when a window is due for a pool not located yet; drops the located
 * pools and those out of tries. located(ctx, id): the pool has an address.
 */
bool ntf_sched__due(struct ntf_sched *s, uint64_t now,
		    bool (*located)(void *ctx, uint32_t id), void *ctx);

#endif /* DEVMEMTOP_NTFSCHED_H */
