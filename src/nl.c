// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include "nl.h"

/*
 * uapi/linux/netdev.h of the kernels we run on; Debian 12's userspace
 * headers predate the page pool commands, so the values are spelled here.
 */
#define NETDEV_FAMILY			"netdev"
#define NETDEV_CMD_PAGE_POOL_GET	5
enum {
	NETDEV_A_PAGE_POOL_ID = 1,
	NETDEV_A_PAGE_POOL_IFINDEX,
	NETDEV_A_PAGE_POOL_NAPI_ID,
	NETDEV_A_PAGE_POOL_INFLIGHT,
	NETDEV_A_PAGE_POOL_INFLIGHT_MEM,
	NETDEV_A_PAGE_POOL_DETACH_TIME,
	NETDEV_A_PAGE_POOL_DMABUF,
	NETDEV_A_PAGE_POOL_IO_URING,
	NETDEV_A_PAGE_POOL__MAX,
};

struct netdev_nl {
	struct nl_sock *sk;
	int family;
};

struct dump_ctx {
	struct nl_pool_info *pools;
	size_t n, cap;
	int err;
};

struct netdev_nl *netdev_nl__new(void)
{
	struct netdev_nl *nl = calloc(1, sizeof(*nl));
	int err = -ENOMEM;

	if (!nl)
		goto err_out;
	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		goto err_free;
	err = genl_connect(nl->sk);
	if (err)
		goto err_sock;
	nl->family = genl_ctrl_resolve(nl->sk, NETDEV_FAMILY);
	if (nl->family < 0) {
		err = -ENOENT;
		goto err_sock;
	}
	return nl;

err_sock:
	nl_socket_free(nl->sk);
err_free:
	free(nl);
err_out:
	errno = err < 0 ? -err : EIO;
	return NULL;
}

static uint64_t attr_uint(struct nlattr *a)
{
	/* the netdev family sends "uint" attributes as 4 or 8 bytes */
	if (nla_len(a) == 8)
		return nla_get_u64(a);
	return nla_get_u32(a);
}

static int pool_cb(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[NETDEV_A_PAGE_POOL__MAX];
	struct dump_ctx *ctx = arg;
	struct nl_pool_info *p;

	if (nla_parse(tb, NETDEV_A_PAGE_POOL__MAX - 1, genlmsg_attrdata(gh, 0),
		      genlmsg_attrlen(gh, 0), NULL) || !tb[NETDEV_A_PAGE_POOL_ID])
		return NL_SKIP;
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 16;
		void *np = realloc(ctx->pools, cap * sizeof(*ctx->pools));

		if (!np) {
			ctx->err = -ENOMEM;
			return NL_STOP;
		}
		ctx->pools = np;
		ctx->cap = cap;
	}
	p = &ctx->pools[ctx->n++];
	memset(p, 0, sizeof(*p));
	p->inflight = -1;
	p->inflight_mem = -1;
	p->id = attr_uint(tb[NETDEV_A_PAGE_POOL_ID]);
	if (tb[NETDEV_A_PAGE_POOL_IFINDEX])
		p->ifindex = nla_get_u32(tb[NETDEV_A_PAGE_POOL_IFINDEX]);
	if (tb[NETDEV_A_PAGE_POOL_NAPI_ID])
		p->napi_id = attr_uint(tb[NETDEV_A_PAGE_POOL_NAPI_ID]);
	if (tb[NETDEV_A_PAGE_POOL_INFLIGHT])
		p->inflight = attr_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT]);
	if (tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM])
		p->inflight_mem = attr_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM]);
	if (tb[NETDEV_A_PAGE_POOL_DETACH_TIME])
		p->detach_time = attr_uint(tb[NETDEV_A_PAGE_POOL_DETACH_TIME]);
	if (tb[NETDEV_A_PAGE_POOL_DMABUF])
		p->dmabuf = nla_get_u32(tb[NETDEV_A_PAGE_POOL_DMABUF]);
	return NL_OK;
}

int netdev_nl__pools(struct netdev_nl *nl, struct nl_pool_info **out, size_t *n)
{
	struct dump_ctx ctx = {};
	struct nl_msg *msg;
	int err;

	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, NLM_F_DUMP,
			 NETDEV_CMD_PAGE_POOL_GET, 1)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, pool_cb, &ctx);
	if (err < 0)
		goto out_msg;
	err = nl_send_auto(nl->sk, msg);
	if (err < 0)
		goto out_msg;
	err = nl_recvmsgs_default(nl->sk);
	if (err < 0)
		goto out_msg;
	if (ctx.err) {
		nlmsg_free(msg);
		free(ctx.pools);
		return ctx.err;
	}
	*out = ctx.pools;
	*n = ctx.n;
	ctx.pools = NULL;

out_msg:
	nlmsg_free(msg);
	free(ctx.pools);
	/* libnl returns its own negative NLE_* codes: report them as -EIO */
	return err < 0 ? -EIO : 0;
}

void netdev_nl__free(struct netdev_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}
