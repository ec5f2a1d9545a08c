// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include "nl.h"

/*
 * uapi/linux/netdev.h of the kernels we run on (generated from the
 * kernel's Documentation/netlink/specs/netdev.yaml); Debian 12's userspace
 * headers predate the netdev family, so the values are spelled here.
 * Attribute and command numbers are ABI: append-only upstream.
 */
#define NETDEV_FAMILY			"netdev"
#define NETDEV_MCGRP_PAGE_POOL		"page-pool"
enum {
	NETDEV_CMD_PAGE_POOL_GET = 5,
	NETDEV_CMD_PAGE_POOL_ADD_NTF,
	NETDEV_CMD_PAGE_POOL_DEL_NTF,
	NETDEV_CMD_PAGE_POOL_CHANGE_NTF,
	NETDEV_CMD_PAGE_POOL_STATS_GET,
	NETDEV_CMD_QUEUE_GET,
	NETDEV_CMD_NAPI_GET,
	NETDEV_CMD_QSTATS_GET,
};
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
/* page-pool-stats: the info nest, then the counters from 8 (dmt_pps order) */
#define NETDEV_A_PAGE_POOL_STATS_INFO		1
#define NETDEV_A_PAGE_POOL_STATS_ALLOC_FAST	8
#define NETDEV_A_PAGE_POOL_STATS__MAX		(NETDEV_A_PAGE_POOL_STATS_ALLOC_FAST + DMT_PPS__COUNT)
enum {
	NETDEV_A_QUEUE_ID = 1,
	NETDEV_A_QUEUE_IFINDEX,
	NETDEV_A_QUEUE_TYPE,
	NETDEV_A_QUEUE_NAPI_ID,
	NETDEV_A_QUEUE_DMABUF,
	NETDEV_A_QUEUE__MAX,
};
enum {
	NETDEV_A_QSTATS_IFINDEX = 1,
	NETDEV_A_QSTATS_QUEUE_TYPE,
	NETDEV_A_QSTATS_QUEUE_ID,
	NETDEV_A_QSTATS_SCOPE,
	NETDEV_A_QSTATS_RX_PACKETS = 8,
	NETDEV_A_QSTATS_RX_ALLOC_FAIL = 12,
	NETDEV_A_QSTATS_RX_HW_DROPS,
	NETDEV_A_QSTATS__MAX,
};
#define NETDEV_QSTATS_SCOPE_QUEUE	1

struct netdev_nl {
	struct nl_sock *sk;
	struct nl_sock *ntf;	/* page-pool group, non-blocking; NULL if not subscribed */
	int family;
	char bad[160];		/* the last dump's first malformed message */
};

typedef int (*parse_fn)(const struct nlmsghdr *nlh, size_t len, void *out, char *why,
			size_t wlen);

struct dump_ctx {
	struct netdev_nl *nl;
	parse_fn parse;
	size_t elem;
	void *arr;
	size_t n, cap;
	int err;	/* ours: -ENOMEM */
	int kerr;	/* the kernel's answer, negative errno */
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
	/*
	 * A buffer as large as the kernel's largest dump message (it sizes
	 * them to at most 32 KiB with overhead): one recvmsg per datagram
	 * instead of a size peek and a read
	 */
	err = nl_socket_set_msg_buf_size(nl->sk, 32768);
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

/* ---- parsing: one message, never past len ------------------------------ */

static int bad(char *why, size_t wlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t wlen, const char *fmt, ...)
{
	va_list ap;

	if (why && wlen) {
		va_start(ap, fmt);
		vsnprintf(why, wlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * The attributes of a generic netlink message of family-specific command
 * cmd (0: any) into tb[0..max): the message must fit len, every attribute
 * its message, and nothing may trail the last one.
 */
static int msg_attrs(const struct nlmsghdr *nlh, size_t len, const char *what,
		     struct nlattr **tb, int max, uint8_t *cmd, char *why, size_t wlen)
{
	const struct genlmsghdr *gh;
	struct nlattr *a;
	int rem;

	memset(tb, 0, max * sizeof(*tb));
	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN ||
	    nlh->nlmsg_len > len)
		return bad(why, wlen, "%s: message of %u bytes (%zu received), "
			   "shorter than its headers or longer than received",
			   what, len >= NLMSG_HDRLEN ? nlh->nlmsg_len : 0, len);
	gh = nlmsg_data(nlh);
	if (cmd)
		*cmd = gh->cmd;
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		int t = nla_type(a);

		if (t < max)
			tb[t] = a;
	}
	if (rem)
		return bad(why, wlen, "%s: %d bytes after the last whole attribute", what, rem);
	return 0;
}

/* a netdev "uint": 4 or 8 bytes */
static int get_uint(const struct nlattr *a, const char *what, uint64_t *v, char *why,
		    size_t wlen)
{
	if (nla_len(a) == 8)
		*v = nla_get_u64((struct nlattr *)a);
	else if (nla_len(a) == 4)
		*v = nla_get_u32((struct nlattr *)a);
	else
		return bad(why, wlen, "%s: attribute %d is %d bytes, not 4 or 8", what,
			   nla_type(a), nla_len(a));
	return 0;
}

static int get_u32(const struct nlattr *a, const char *what, uint32_t *v, char *why,
		   size_t wlen)
{
	if (nla_len(a) != 4)
		return bad(why, wlen, "%s: attribute %d is %d bytes, not 4", what, nla_type(a),
			   nla_len(a));
	*v = nla_get_u32((struct nlattr *)a);
	return 0;
}

/* optional uint into an int64 (-1 stays when absent); values above INT64_MAX are bad */
static int opt_int64(const struct nlattr *a, const char *what, int64_t *v, char *why,
		     size_t wlen)
{
	uint64_t u;
	int err;

	if (!a)
		return 0;
	err = get_uint(a, what, &u, why, wlen);
	if (err)
		return err;
	if (u > INT64_MAX)
		return bad(why, wlen, "%s: attribute %d is %llu, out of range", what,
			   nla_type(a), (unsigned long long)u);
	*v = (int64_t)u;
	return 0;
}

static int opt_u32(const struct nlattr *a, const char *what, uint32_t *v, char *why, size_t wlen)
{
	return a ? get_u32(a, what, v, why, wlen) : 0;
}

/* the page-pool attributes of tb (a pool message, or stats' info nest) */
static int pool_attrs(struct nlattr **tb, const char *what, struct nl_pool_info *p, char *why,
		      size_t wlen)
{
	uint64_t u = 0;
	uint32_t ifi = 0;
	int err;

	memset(p, 0, sizeof(*p));
	p->inflight = -1;
	p->inflight_mem = -1;
	if (!tb[NETDEV_A_PAGE_POOL_ID])
		return bad(why, wlen, "%s: no pool id", what);
	err = get_uint(tb[NETDEV_A_PAGE_POOL_ID], what, &u, why, wlen);
	if (!err && (!u || u > UINT32_MAX))
		err = bad(why, wlen, "%s: pool id %llu out of range", what, (unsigned long long)u);
	p->id = u;
	if (!err)
		err = opt_u32(tb[NETDEV_A_PAGE_POOL_IFINDEX], what, &ifi, why, wlen);
	if (!err && ifi > INT32_MAX)
		err = bad(why, wlen, "%s: ifindex %u out of range", what, ifi);
	p->ifindex = ifi;
	if (!err && tb[NETDEV_A_PAGE_POOL_NAPI_ID]) {
		err = get_uint(tb[NETDEV_A_PAGE_POOL_NAPI_ID], what, &u, why, wlen);
		p->napi_id = u;
	}
	if (!err)
		err = opt_int64(tb[NETDEV_A_PAGE_POOL_INFLIGHT], what, &p->inflight, why, wlen);
	if (!err)
		err = opt_int64(tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM], what, &p->inflight_mem, why,
				wlen);
	if (!err && tb[NETDEV_A_PAGE_POOL_DETACH_TIME])
		err = get_uint(tb[NETDEV_A_PAGE_POOL_DETACH_TIME], what, &p->detach_time, why,
			       wlen);
	if (!err)
		err = opt_u32(tb[NETDEV_A_PAGE_POOL_DMABUF], what, &p->dmabuf, why, wlen);
	/* an empty nest: its presence says the provider is io_uring zcrx */
	p->io_uring = tb[NETDEV_A_PAGE_POOL_IO_URING] != NULL;
	return err;
}

int netdev_nl__parse_pool(const struct nlmsghdr *nlh, size_t len, struct nl_pool_info *p,
			  char *why, size_t wlen)
{
	struct nlattr *tb[NETDEV_A_PAGE_POOL__MAX];
	int err = msg_attrs(nlh, len, "page-pool-get", tb, NETDEV_A_PAGE_POOL__MAX, NULL, why,
			    wlen);

	return err ? err : pool_attrs(tb, "page-pool-get", p, why, wlen);
}

int netdev_nl__parse_ntf(const struct nlmsghdr *nlh, size_t len, struct nl_pp_ntf *e,
			 char *why, size_t wlen)
{
	struct nlattr *tb[NETDEV_A_PAGE_POOL__MAX];
	uint8_t cmd = 0;
	int err = msg_attrs(nlh, len, "page-pool notification", tb, NETDEV_A_PAGE_POOL__MAX,
			    &cmd, why, wlen);

	if (err)
		return err;
	if (cmd < NETDEV_CMD_PAGE_POOL_ADD_NTF || cmd > NETDEV_CMD_PAGE_POOL_CHANGE_NTF)
		return bad(why, wlen, "page-pool notification: command %u is not one", cmd);
	e->ev = cmd - NETDEV_CMD_PAGE_POOL_ADD_NTF;
	return pool_attrs(tb, "page-pool notification", &e->pool, why, wlen);
}

int netdev_nl__parse_pp_stats(const struct nlmsghdr *nlh, size_t len, struct nl_pp_stats *p,
			      char *why, size_t wlen)
{
	struct nlattr *tb[NETDEV_A_PAGE_POOL_STATS__MAX], *info[NETDEV_A_PAGE_POOL__MAX];
	const char *what = "page-pool-stats-get";
	struct nl_pool_info pi;
	struct nlattr *a;
	int err, rem;

	err = msg_attrs(nlh, len, what, tb, NETDEV_A_PAGE_POOL_STATS__MAX, NULL, why, wlen);
	if (err)
		return err;
	if (!tb[NETDEV_A_PAGE_POOL_STATS_INFO])
		return bad(why, wlen, "%s: no pool info", what);
	/* the nest: bounded by its own length, which nla_ok checked against the message */
	memset(info, 0, sizeof(info));
	nla_for_each_nested(a, tb[NETDEV_A_PAGE_POOL_STATS_INFO], rem)
		if (nla_type(a) < NETDEV_A_PAGE_POOL__MAX)
			info[nla_type(a)] = a;
	if (rem)
		return bad(why, wlen, "%s: %d bytes after the pool info's last attribute", what,
			   rem);
	err = pool_attrs(info, what, &pi, why, wlen);
	if (err)
		return err;
	p->id = pi.id;
	p->ifindex = pi.ifindex;
	for (int i = 0; i < DMT_PPS__COUNT; i++) {
		p->v[i] = -1;
		err = opt_int64(tb[NETDEV_A_PAGE_POOL_STATS_ALLOC_FAST + i], what, &p->v[i], why,
				wlen);
		if (err)
			return err;
	}
	return 0;
}

int netdev_nl__parse_queue(const struct nlmsghdr *nlh, size_t len, struct nl_queue *q,
			   char *why, size_t wlen)
{
	struct nlattr *tb[NETDEV_A_QUEUE__MAX];
	const char *what = "queue-get";
	uint32_t ifi = 0;
	int err;

	err = msg_attrs(nlh, len, what, tb, NETDEV_A_QUEUE__MAX, NULL, why, wlen);
	if (err)
		return err;
	memset(q, 0, sizeof(*q));
	if (!tb[NETDEV_A_QUEUE_ID] || !tb[NETDEV_A_QUEUE_IFINDEX] || !tb[NETDEV_A_QUEUE_TYPE])
		return bad(why, wlen, "%s: queue without id, ifindex or type", what);
	err = get_u32(tb[NETDEV_A_QUEUE_ID], what, &q->id, why, wlen);
	if (!err)
		err = get_u32(tb[NETDEV_A_QUEUE_IFINDEX], what, &ifi, why, wlen);
	if (!err && (!ifi || ifi > INT32_MAX))
		err = bad(why, wlen, "%s: ifindex %u out of range", what, ifi);
	q->ifindex = ifi;
	if (!err)
		err = get_u32(tb[NETDEV_A_QUEUE_TYPE], what, &q->type, why, wlen);
	if (!err)
		err = opt_u32(tb[NETDEV_A_QUEUE_NAPI_ID], what, &q->napi_id, why, wlen);
	if (!err)
		err = opt_u32(tb[NETDEV_A_QUEUE_DMABUF], what, &q->dmabuf, why, wlen);
	return err;
}

int netdev_nl__parse_qstats(const struct nlmsghdr *nlh, size_t len, struct nl_qstats *q,
			    char *why, size_t wlen)
{
	struct nlattr *tb[NETDEV_A_QSTATS__MAX];
	const char *what = "qstats-get";
	uint32_t ifi = 0, qid = 0;
	int err;

	err = msg_attrs(nlh, len, what, tb, NETDEV_A_QSTATS__MAX, NULL, why, wlen);
	if (err)
		return err;
	memset(q, 0, sizeof(*q));
	q->queue = -1;
	q->rx_alloc_fail = q->rx_hw_drops = q->rx_packets = -1;
	if (!tb[NETDEV_A_QSTATS_IFINDEX])
		return bad(why, wlen, "%s: no ifindex", what);
	err = get_u32(tb[NETDEV_A_QSTATS_IFINDEX], what, &ifi, why, wlen);
	if (!err && (!ifi || ifi > INT32_MAX))
		err = bad(why, wlen, "%s: ifindex %u out of range", what, ifi);
	q->ifindex = ifi;
	if (!err)
		err = opt_u32(tb[NETDEV_A_QSTATS_QUEUE_TYPE], what, &q->queue_type, why, wlen);
	if (!err && tb[NETDEV_A_QSTATS_QUEUE_ID]) {
		err = get_u32(tb[NETDEV_A_QSTATS_QUEUE_ID], what, &qid, why, wlen);
		if (!err && qid > INT32_MAX)
			err = bad(why, wlen, "%s: queue id %u out of range", what, qid);
		q->queue = qid;
	}
	if (!err)
		err = opt_int64(tb[NETDEV_A_QSTATS_RX_ALLOC_FAIL], what, &q->rx_alloc_fail, why,
				wlen);
	if (!err)
		err = opt_int64(tb[NETDEV_A_QSTATS_RX_HW_DROPS], what, &q->rx_hw_drops, why, wlen);
	if (!err)
		err = opt_int64(tb[NETDEV_A_QSTATS_RX_PACKETS], what, &q->rx_packets, why, wlen);
	return err;
}

/* ---- dumps ------------------------------------------------------------- */

static int dump_valid(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *ctx = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	char why[160];

	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 16;
		void *np = realloc(ctx->arr, cap * ctx->elem);

		if (!np) {
			ctx->err = -ENOMEM;
			return NL_STOP;
		}
		ctx->arr = np;
		ctx->cap = cap;
	}
	if (ctx->parse(nlh, nlh->nlmsg_len, (char *)ctx->arr + ctx->n * ctx->elem, why,
		       sizeof(why))) {
		if (!ctx->nl->bad[0])
			snprintf(ctx->nl->bad, sizeof(ctx->nl->bad), "%s", why);
		return NL_SKIP;
	}
	ctx->n++;
	return NL_OK;
}

static int dump_err(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct dump_ctx *ctx = arg;

	(void)who;
	ctx->kerr = e->error < 0 ? e->error : -EIO;
	return NL_STOP;
}

/* One dump of cmd (with one u32 attribute when attr is not 0). */
static int dump(struct netdev_nl *nl, uint8_t cmd, int attr, uint32_t val, parse_fn parse,
		size_t elem, void **out, size_t *n)
{
	struct dump_ctx ctx = { .nl = nl, .parse = parse, .elem = elem };
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = NULL, *base;
	int err = -ENOMEM;

	nl->bad[0] = '\0';
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, NLM_F_DUMP, cmd, 1))
		goto out;
	if (attr && nla_put_u32(msg, attr, val))
		goto out;
	/* nl_socket_get_cb() takes a reference on the socket's callbacks */
	base = nl_socket_get_cb(nl->sk);
	cb = base ? nl_cb_clone(base) : NULL;
	nl_cb_put(base);
	if (!cb)
		goto out;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, dump_valid, &ctx);
	nl_cb_err(cb, NL_CB_CUSTOM, dump_err, &ctx);
	err = nl_send_auto(nl->sk, msg);
	if (err >= 0)
		err = nl_recvmsgs(nl->sk, cb);
	/* the kernel's errno first; libnl's own NLE_* codes become -EIO */
	if (ctx.kerr)
		err = ctx.kerr;
	else if (ctx.err)
		err = ctx.err;
	else
		err = err < 0 ? -EIO : 0;
	if (!err) {
		*out = ctx.arr;
		*n = ctx.n;
		ctx.arr = NULL;
	}
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	free(ctx.arr);
	return err;
}

static int parse_pool_cb(const struct nlmsghdr *nlh, size_t len, void *out, char *why, size_t wlen)
{
	return netdev_nl__parse_pool(nlh, len, out, why, wlen);
}

static int parse_stats_cb(const struct nlmsghdr *nlh, size_t len, void *out, char *why,
			  size_t wlen)
{
	return netdev_nl__parse_pp_stats(nlh, len, out, why, wlen);
}

static int parse_queue_cb(const struct nlmsghdr *nlh, size_t len, void *out, char *why,
			  size_t wlen)
{
	return netdev_nl__parse_queue(nlh, len, out, why, wlen);
}

static int parse_qstats_cb(const struct nlmsghdr *nlh, size_t len, void *out, char *why,
			   size_t wlen)
{
	return netdev_nl__parse_qstats(nlh, len, out, why, wlen);
}

int netdev_nl__pools(struct netdev_nl *nl, struct nl_pool_info **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return dump(nl, NETDEV_CMD_PAGE_POOL_GET, 0, 0, parse_pool_cb, sizeof(**out),
		    (void **)out, n);
}

int netdev_nl__pp_stats(struct netdev_nl *nl, struct nl_pp_stats **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return dump(nl, NETDEV_CMD_PAGE_POOL_STATS_GET, 0, 0, parse_stats_cb, sizeof(**out),
		    (void **)out, n);
}

int netdev_nl__queues(struct netdev_nl *nl, struct nl_queue **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return dump(nl, NETDEV_CMD_QUEUE_GET, 0, 0, parse_queue_cb, sizeof(**out),
		    (void **)out, n);
}

int netdev_nl__qstats(struct netdev_nl *nl, bool per_queue, struct nl_qstats **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return dump(nl, NETDEV_CMD_QSTATS_GET, per_queue ? NETDEV_A_QSTATS_SCOPE : 0,
		    NETDEV_QSTATS_SCOPE_QUEUE, parse_qstats_cb, sizeof(**out), (void **)out, n);
}

const char *netdev_nl__last_bad(const struct netdev_nl *nl)
{
	return nl->bad[0] ? nl->bad : NULL;
}

/* ---- notifications ----------------------------------------------------- */

int netdev_nl__subscribe(struct netdev_nl *nl)
{
	int grp, err;

	if (nl->ntf)
		return 0;
	grp = genl_ctrl_resolve_grp(nl->sk, NETDEV_FAMILY, NETDEV_MCGRP_PAGE_POOL);
	if (grp < 0)
		return -ENOENT;
	nl->ntf = nl_socket_alloc();
	if (!nl->ntf)
		return -ENOMEM;
	nl_socket_disable_seq_check(nl->ntf);
	err = genl_connect(nl->ntf);
	if (!err)
		err = nl_socket_add_membership(nl->ntf, grp);
	if (!err)
		err = nl_socket_set_nonblocking(nl->ntf);
	if (err) {
		nl_socket_free(nl->ntf);
		nl->ntf = NULL;
		return -EIO;
	}
	return 0;
}

int netdev_nl__notifications(struct netdev_nl *nl, struct nl_pp_ntf *out, size_t max)
{
	size_t got = 0;

	if (!nl->ntf)
		return -ENOTCONN;
	/*
	 * Nearly every snapshot finds the group empty: one peek says so
	 * (nl_recv allocates its buffer and peeks at the size first)
	 */
	if (recv(nl_socket_get_fd(nl->ntf), &(char){0}, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	while (got < max) {
		struct sockaddr_nl who;
		unsigned char *buf = NULL;
		struct nlmsghdr *nlh;
		int len = nl_recv(nl->ntf, &who, &buf, NULL);

		if (len == -NLE_AGAIN || len == 0)
			break;
		if (len < 0)
			return len == -NLE_NOMEM ? -ENOBUFS : -EIO;
		/* one datagram may hold several: the ones past max are dropped */
		for (nlh = (struct nlmsghdr *)buf; nlmsg_ok(nlh, len) && got < max;
		     nlh = nlmsg_next(nlh, &len)) {
			char why[160];

			if (nlh->nlmsg_type != nl->family)
				continue;
			if (netdev_nl__parse_ntf(nlh, nlh->nlmsg_len, &out[got], why, sizeof(why))) {
				snprintf(nl->bad, sizeof(nl->bad), "%s", why);
				continue;
			}
			got++;
		}
		free(buf);
	}
	return (int)got;
}

void netdev_nl__free(struct netdev_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	nl_socket_free(nl->ntf);
	free(nl);
}
