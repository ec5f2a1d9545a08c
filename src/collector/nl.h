/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netdev generic netlink family, through libnl-genl: what the kernel itself
 * reports about page pools and RX queues, read at snapshot time.
 *
 *   page-pool-get        pools: id, device, napi, inflight, dmabuf binding
 *   page-pool-stats-get  a pool's alloc/recycle counters (CONFIG_PAGE_POOL_STATS)
 *   queue-get            RX/TX queues and the dmabuf binding an RX queue serves
 *   qstats-get           per-device and per-queue driver counters (rx-alloc-fail)
 *   "page-pool" group    page-pool-add/del/change notifications
 *
 * The parsers take one message as received (header and length) so the unit
 * tests can feed them crafted and hostile messages; they never read past
 * len and say what was wrong in one line.
 */
#ifndef DEVMEMTOP_NL_H
#define DEVMEMTOP_NL_H

#include <stdint.h>
#include <stddef.h>
#include <linux/netlink.h>
#include "nlrec.h"

struct netdev_nl;

/* NULL + errno when the netdev family is unavailable. */
struct netdev_nl *netdev_nl__new(void);
/* Dump all pools visible in our netns; *out is malloc'ed. 0 or -errno. */
int netdev_nl__pools(struct netdev_nl *nl, struct nl_pool_info **out, size_t *n);
/*
 * The dumps below: 0, or -errno as the kernel answered (-EOPNOTSUPP for a
 * command the kernel does not have, e.g. page-pool-stats-get without
 * CONFIG_PAGE_POOL_STATS). Malformed messages are skipped; the first one's
 * reason is in netdev_nl__last_bad() until the next dump.
 */
int netdev_nl__pp_stats(struct netdev_nl *nl, struct nl_pp_stats **out, size_t *n);
int netdev_nl__queues(struct netdev_nl *nl, struct nl_queue **out, size_t *n);
/* per_queue: qstats scope queue; else one entry per device */
int netdev_nl__qstats(struct netdev_nl *nl, bool per_queue, struct nl_qstats **out, size_t *n);
const char *netdev_nl__last_bad(const struct netdev_nl *nl);

/*
 * Page-pool notifications: subscribe to the "page-pool" multicast group on
 * a second, non-blocking socket. 0, or -errno (-ENOENT: no such group).
 */
int netdev_nl__subscribe(struct netdev_nl *nl);
/*
 * Read at most max pending notifications without blocking into out[]; the
 * number read, or -errno. More may be pending when it returns max.
 */
int netdev_nl__notifications(struct netdev_nl *nl, struct nl_pp_ntf *out, size_t max);
void netdev_nl__free(struct netdev_nl *nl);

/* The parsers (0, or -EINVAL with a one-line reason in why). */
int netdev_nl__parse_pool(const struct nlmsghdr *nlh, size_t len, struct nl_pool_info *p,
			  char *why, size_t wlen);
int netdev_nl__parse_pp_stats(const struct nlmsghdr *nlh, size_t len, struct nl_pp_stats *p,
			      char *why, size_t wlen);
int netdev_nl__parse_queue(const struct nlmsghdr *nlh, size_t len, struct nl_queue *q,
			   char *why, size_t wlen);
int netdev_nl__parse_qstats(const struct nlmsghdr *nlh, size_t len, struct nl_qstats *q,
			    char *why, size_t wlen);
int netdev_nl__parse_ntf(const struct nlmsghdr *nlh, size_t len, struct nl_pp_ntf *e,
			 char *why, size_t wlen);

#endif /* DEVMEMTOP_NL_H */
