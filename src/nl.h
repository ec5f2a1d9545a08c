/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netdev generic netlink family, through libnl-genl: the page-pool-get dump
 * that enriches pools with what the kernel itself reports.
 */
#ifndef DEVMEMTOP_NL_H
#define DEVMEMTOP_NL_H

#include <stdint.h>
#include <stddef.h>

struct nl_pool_info {
	uint32_t id;
	int ifindex;		/* 0 when not tied to a device */
	uint32_t napi_id;
	int64_t inflight;	/* -1 when absent */
	int64_t inflight_mem;
	uint64_t detach_time;	/* 0 while attached */
	uint32_t dmabuf;	/* binding id, 0 for none */
};

struct netdev_nl;

/* NULL + errno when the netdev family is unavailable. */
struct netdev_nl *netdev_nl__new(void);
/* Dump all pools visible in our netns; *out is malloc'ed. 0 or -errno. */
int netdev_nl__pools(struct netdev_nl *nl, struct nl_pool_info **out, size_t *n);
void netdev_nl__free(struct netdev_nl *nl);

#endif /* DEVMEMTOP_NL_H */
