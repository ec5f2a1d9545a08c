/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the netdev generic netlink family reports about page pools and RX
 * queues, as plain records: the collector's netlink code (nl.h) fills them
 * from the kernel's replies, the snapshot builder (snapbuild.h) merges them
 * into a snapshot. Here in the core so the builder needs neither libnl nor
 * the collector's headers.
 */
#ifndef DEVMEMTOP_NLREC_H
#define DEVMEMTOP_NLREC_H

#include <stdbool.h>
#include <stdint.h>
#include "snapshot.h"

struct nl_pool_info {
	uint32_t id;
	int ifindex;		/* 0 when not tied to a device */
	uint32_t napi_id;
	int64_t inflight;	/* -1 when absent */
	int64_t inflight_mem;
	uint64_t detach_time;	/* 0 while attached */
	uint32_t dmabuf;	/* binding id, 0 for none */
	bool io_uring;		/* a zcrx pool (NETDEV_A_PAGE_POOL_IO_URING, 6.15) */
};

/* One pool's page-pool-stats-get reply. */
struct nl_pp_stats {
	uint32_t id;
	int ifindex;		/* 0 when absent */
	int64_t v[DMT_PPS__COUNT];	/* -1 when absent */
};

/* One queue of queue-get. */
struct nl_queue {
	uint32_t id;
	int ifindex;
	uint32_t type;		/* 0 rx, 1 tx */
	uint32_t napi_id;	/* 0 when absent */
	uint32_t dmabuf;	/* RX queue's binding id, 0 for none */
};

/* One qstats-get reply: a device (queue -1) or one of its queues. */
struct nl_qstats {
	int ifindex;
	int queue;		/* -1: the device as a whole */
	uint32_t queue_type;
	int64_t rx_alloc_fail;	/* -1 when the driver does not report it */
	int64_t rx_hw_drops;
	int64_t rx_packets;
};

/* A page-pool notification. */
enum nl_pp_event {
	NL_PP_ADD = 0,
	NL_PP_DEL,
	NL_PP_CHANGE,
};

struct nl_pp_ntf {
	enum nl_pp_event ev;
	struct nl_pool_info pool;
};

#endif /* DEVMEMTOP_NLREC_H */
