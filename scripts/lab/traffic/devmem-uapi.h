/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmem TCP uAPI of Linux 6.12, defined here because Debian 12's
 * linux-libc-dev (6.1) predates it. Values are copied from the 6.12 uapi
 * headers named next to each block; the names carry a DT_ prefix so they
 * can never clash with a newer system header.
 */
#ifndef DEVMEM_UAPI_H
#define DEVMEM_UAPI_H

#include <linux/types.h>

/* include/uapi/asm-generic/socket.h */
#define DT_SO_DEVMEM_LINEAR	78
#define DT_SCM_DEVMEM_LINEAR	DT_SO_DEVMEM_LINEAR
#define DT_SO_DEVMEM_DMABUF	79
#define DT_SCM_DEVMEM_DMABUF	DT_SO_DEVMEM_DMABUF
#define DT_SO_DEVMEM_DONTNEED	80
/* lab kernel-patches 0012 (not upstream: the v6 posting's number) */
#define DT_SO_DEVMEM_AUTORELEASE	85

/* include/linux/socket.h */
#define DT_MSG_SOCK_DEVMEM	0x2000000

/* net/core/sock.c: limits of one SO_DEVMEM_DONTNEED call */
#define DT_MAX_DONTNEED_TOKENS	128
#define DT_MAX_DONTNEED_FRAGS	1024

/* include/uapi/linux/uio.h */
struct dt_dmabuf_cmsg {
	__u64 frag_offset;	/* offset into the dmabuf */
	__u32 frag_size;
	__u32 frag_token;	/* for SO_DEVMEM_DONTNEED */
	__u32 dmabuf_id;	/* binding id */
	__u32 flags;
};

struct dt_dmabuf_token {
	__u32 token_start;
	__u32 token_count;
};

/* include/uapi/linux/netdev.h: generic netlink family "netdev" */
#define DT_NETDEV_FAMILY_NAME	"netdev"

#define DT_NETDEV_QUEUE_TYPE_RX	0

#define DT_NETDEV_A_PAGE_POOL_ID		1
#define DT_NETDEV_A_PAGE_POOL_IFINDEX		2
#define DT_NETDEV_A_PAGE_POOL_NAPI_ID		3
#define DT_NETDEV_A_PAGE_POOL_INFLIGHT		4
#define DT_NETDEV_A_PAGE_POOL_INFLIGHT_MEM	5
#define DT_NETDEV_A_PAGE_POOL_DETACH_TIME	6
#define DT_NETDEV_A_PAGE_POOL_DMABUF		7
#define DT_NETDEV_A_PAGE_POOL_MAX		7

#define DT_NETDEV_A_QUEUE_ID		1
#define DT_NETDEV_A_QUEUE_TYPE		3

#define DT_NETDEV_A_DMABUF_IFINDEX	1
#define DT_NETDEV_A_DMABUF_QUEUES	2
#define DT_NETDEV_A_DMABUF_FD		3
#define DT_NETDEV_A_DMABUF_ID		4
/* rx-page-size: upstream net-next (Aug 2026) and our patch 0007; a 6.12
 * kernel without it refuses the attribute ("Unknown attribute type").
 */
#define DT_NETDEV_A_DMABUF_RX_PAGE_SIZE	5
#define DT_NETDEV_A_DMABUF_MAX		5

#define DT_NETDEV_CMD_PAGE_POOL_GET	5
#define DT_NETDEV_CMD_BIND_RX		13
/* devmem TX (6.14+): bind-tx takes the ifindex and the dma-buf fd */
#define DT_NETDEV_CMD_BIND_TX		15

#endif /* DEVMEM_UAPI_H */
