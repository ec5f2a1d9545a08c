// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-traffic: devmem TCP traffic for the lab.
 *
 *   rx     bind a udmabuf to an RX queue (netdev genl bind-rx), accept one
 *          TCP connection, receive with MSG_SOCK_DEVMEM, verify every
 *          payload byte through the dmabuf mmap, return the tokens
 *   tx     connect and send a known byte pattern
 *   pools  print the page pools (netdev genl page-pool-get) as JSON
 *   txdm   devmem TX (7.x): bind a udmabuf holding the pattern with bind-tx,
 *          connect, try one send naming no TX binding and one past the end
 *          of the dma-buf (both must be refused), then send the whole
 *          dma-buf with sendmsg(SCM_DEVMEM_DMABUF, MSG_ZEROCOPY)
 *   sink   accept one TCP connection, read and verify the pattern until EOF
 *   udp-recv  write the payload of every UDP datagram to a port to stdout
 *          until SIGINT/SIGTERM (the netcons scenario's netconsole peer:
 *          the guest's busybox nc has no UDP)
 *
 * rx and tx print one JSON line with their counts on stdout; diagnostics
 * go to stderr. Exit status: 0 success, 1 error, 2 usage, 3 incomplete
 * (tx: peer went away before all was sent).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/netlink.h>
#include <linux/udmabuf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "devmem-uapi.h"
#include "pattern.h"

#define PAGE_SZ		4096UL
#define RX_IOV_LEN	(64 * 1024)
#define DT_CMSG_ONE	CMSG_SPACE(sizeof(struct dt_dmabuf_cmsg))
#define RX_CMSG_LEN	(DT_CMSG_ONE * 128)
#define TX_CHUNK	(64 * 1024)
#define MAX_POOLS	64

static const char *prog = "devmem-traffic";
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t linger_done;

#define err_msg(fmt, ...) fprintf(stderr, "%s: " fmt "\n", prog, ##__VA_ARGS__)

static void sig_handler(int sig)
{
	if (sig == SIGUSR1)
		linger_done = 1;
	else
		exiting = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* sleep up to @ms, or until SIGUSR1 (linger_done) or the end (exiting) */
static void wait_ms(unsigned int ms)
{
	double until = now_s() + ms / 1000.0;

	while (!linger_done && !exiting && now_s() < until)
		usleep(20 * 1000);
}

/* "64M", "2MiB", "4096", "1G" -> bytes; -1 on bad input */
static long long parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v > LLONG_MAX / 2)
		return -1;
	return v;
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* ---- netlink (generic netlink family "netdev", via libnl-genl) ---- */

struct nl_ctx {
	struct nl_sock *sk;
	int family;
	char extack[256];	/* last error message from the kernel */
	int error;
};

/* Keep the kernel's extack message of a failed request. */
static int nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nl_ctx *ctx = arg;
	int len;

	ctx->error = e->error;
	ctx->extack[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	/* NETLINK_CAP_ACK: only the request's header is echoed */
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);
	if (len > 0 &&
	    !nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)(e + 1), len,
		       NULL) && tb[NLMSGERR_ATTR_MSG])
		snprintf(ctx->extack, sizeof(ctx->extack), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int nl_ctx_open(struct nl_ctx *ctx)
{
	int one = 1, fd;

	memset(ctx, 0, sizeof(*ctx));
	ctx->sk = nl_socket_alloc();
	if (!ctx->sk)
		return -ENOMEM;
	if (genl_connect(ctx->sk)) {
		nl_socket_free(ctx->sk);
		ctx->sk = NULL;
		return -ECONNREFUSED;
	}
	fd = nl_socket_get_fd(ctx->sk);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	ctx->family = genl_ctrl_resolve(ctx->sk, DT_NETDEV_FAMILY_NAME);
	if (ctx->family < 0) {
		nl_socket_free(ctx->sk);
		ctx->sk = NULL;
		return -EPROTONOSUPPORT;
	}
	nl_socket_modify_err_cb(ctx->sk, NL_CB_CUSTOM, nl_err_cb, ctx);
	return 0;
}

static void nl_ctx_close(struct nl_ctx *ctx)
{
	if (ctx->sk)
		nl_socket_free(ctx->sk);
	ctx->sk = NULL;
}

static uint64_t nla_get_uint_any(struct nlattr *a)
{
	return nla_len(a) == 8 ? nla_get_u64(a) : nla_get_u32(a);
}

static int bind_reply_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[DT_NETDEV_A_DMABUF_MAX + 1];
	unsigned int *id = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, DT_NETDEV_A_DMABUF_MAX, NULL))
		return NL_SKIP;
	if (tb[DT_NETDEV_A_DMABUF_ID])
		*id = nla_get_u32(tb[DT_NETDEV_A_DMABUF_ID]);
	return NL_OK;
}

/* NETDEV_CMD_BIND_RX. The binding lives as long as @ctx->sk stays open.
 * @rx_page_size 0: the attribute is not sent (the kernel's default).
 */
static int bind_rx(struct nl_ctx *ctx, int ifindex, unsigned int queue,
		   int dmabuf_fd, uint32_t rx_page_size, unsigned int *binding_id)
{
	struct nlattr *queues;
	struct nl_msg *msg;
	int err;

	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx->family, 0, 0,
			 DT_NETDEV_CMD_BIND_RX, 1) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_IFINDEX, ifindex) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_FD, dmabuf_fd))
		goto err_msgsize;
	queues = nla_nest_start(msg, DT_NETDEV_A_DMABUF_QUEUES);
	if (!queues ||
	    nla_put_u32(msg, DT_NETDEV_A_QUEUE_ID, queue) ||
	    nla_put_u32(msg, DT_NETDEV_A_QUEUE_TYPE, DT_NETDEV_QUEUE_TYPE_RX))
		goto err_msgsize;
	nla_nest_end(msg, queues);
	if (rx_page_size &&
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_RX_PAGE_SIZE, rx_page_size))
		goto err_msgsize;

	*binding_id = 0;
	nl_socket_modify_cb(ctx->sk, NL_CB_VALID, NL_CB_CUSTOM, bind_reply_cb,
			    binding_id);
	ctx->error = 0;
	err = nl_send_sync(ctx->sk, msg);	/* frees msg, waits for ack */
	if (ctx->error)
		return ctx->error;
	if (err < 0)
		return -EIO;
	return *binding_id ? 0 : -ENODATA;

err_msgsize:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

struct pool_info {
	uint64_t id, ifindex, napi_id, inflight, inflight_mem, detach_time;
	int64_t dmabuf;		/* binding id, -1 if none */
};

struct pool_list {
	struct pool_info p[MAX_POOLS];
	int n;
	int truncated;
};

static int pool_dump_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[DT_NETDEV_A_PAGE_POOL_MAX + 1];
	struct pool_list *pl = arg;
	struct pool_info *p;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, DT_NETDEV_A_PAGE_POOL_MAX,
			  NULL) || !tb[DT_NETDEV_A_PAGE_POOL_ID])
		return NL_SKIP;
	if (pl->n == MAX_POOLS) {
		pl->truncated = 1;
		return NL_SKIP;
	}
	p = &pl->p[pl->n++];
	memset(p, 0, sizeof(*p));
	p->dmabuf = -1;
	p->id = nla_get_uint_any(tb[DT_NETDEV_A_PAGE_POOL_ID]);
	if (tb[DT_NETDEV_A_PAGE_POOL_IFINDEX])
		p->ifindex = nla_get_u32(tb[DT_NETDEV_A_PAGE_POOL_IFINDEX]);
	if (tb[DT_NETDEV_A_PAGE_POOL_NAPI_ID])
		p->napi_id = nla_get_uint_any(tb[DT_NETDEV_A_PAGE_POOL_NAPI_ID]);
	if (tb[DT_NETDEV_A_PAGE_POOL_INFLIGHT])
		p->inflight = nla_get_uint_any(tb[DT_NETDEV_A_PAGE_POOL_INFLIGHT]);
	if (tb[DT_NETDEV_A_PAGE_POOL_INFLIGHT_MEM])
		p->inflight_mem =
			nla_get_uint_any(tb[DT_NETDEV_A_PAGE_POOL_INFLIGHT_MEM]);
	if (tb[DT_NETDEV_A_PAGE_POOL_DETACH_TIME])
		p->detach_time =
			nla_get_uint_any(tb[DT_NETDEV_A_PAGE_POOL_DETACH_TIME]);
	if (tb[DT_NETDEV_A_PAGE_POOL_DMABUF])
		p->dmabuf = nla_get_u32(tb[DT_NETDEV_A_PAGE_POOL_DMABUF]);
	return NL_OK;
}

/* NETDEV_CMD_PAGE_POOL_GET dump, on a socket of its own. */
static int dump_pools(struct pool_list *pl)
{
	struct nl_ctx ctx;
	int err;

	memset(pl, 0, sizeof(*pl));
	err = nl_ctx_open(&ctx);
	if (err)
		return err;
	nl_socket_modify_cb(ctx.sk, NL_CB_VALID, NL_CB_CUSTOM, pool_dump_cb, pl);
	err = genl_send_simple(ctx.sk, ctx.family, DT_NETDEV_CMD_PAGE_POOL_GET,
			       1, NLM_F_DUMP);
	if (err >= 0)
		err = nl_recvmsgs_default(ctx.sk);
	if (ctx.error)
		err = ctx.error;
	else if (err < 0)
		err = -EIO;
	nl_ctx_close(&ctx);
	return err;
}

/* JSON array of the pools; only those of @ifindex unless it is 0. */
static void print_pools(FILE *f, const struct pool_list *pl, int ifindex)
{
	bool first = true;
	int i;

	fputc('[', f);
	for (i = 0; i < pl->n; i++) {
		const struct pool_info *p = &pl->p[i];

		if (ifindex && p->ifindex != (uint64_t)ifindex)
			continue;
		fprintf(f, "%s{\"id\":%" PRIu64 ",\"ifindex\":%" PRIu64
			",\"napi_id\":%" PRIu64 ",\"inflight\":%" PRIu64
			",\"inflight_mem\":%" PRIu64 ",\"detach_time\":%" PRIu64
			",\"dmabuf\":%" PRId64 "}", first ? "" : ",", p->id,
			p->ifindex, p->napi_id, p->inflight, p->inflight_mem,
			p->detach_time, p->dmabuf);
		first = false;
	}
	fputc(']', f);
}

/* ---- dmabufs: udmabuf or the system dma-heap ---- */

enum dmabuf_src { SRC_UDMABUF, SRC_HEAP, SRC_UDMABUF_SCATTER };

static const char *const src_names[] = {
	[SRC_UDMABUF] = "udmabuf", [SRC_HEAP] = "heap",
	[SRC_UDMABUF_SCATTER] = "udmabuf-scatter",
};

struct udmabuf {
	int memfd, fd;
	int spacer;	/* udmabuf-scatter: the memfd interleaved with ours */
	size_t size;
	uint8_t *map;
};

/* The system dma-heap: buddy chunks of 1 MiB, 64 KiB or 4 KiB, each one
 * naturally aligned sg entry, so it can back net_iovs up to 1 MiB (6.12's
 * udmabuf maps one 4 KiB sg entry per page whatever the memfd).
 */
static int heap_create(struct udmabuf *ub, size_t size)
{
	struct dma_heap_allocation_data alloc = {
		.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heapfd, err;

	ub->memfd = ub->fd = -1;
	ub->map = MAP_FAILED;
	ub->size = size;

	heapfd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heapfd < 0) {
		err = -errno;
		err_msg("open /dev/dma_heap/system: %s (CONFIG_DMABUF_HEAPS_SYSTEM?)",
			strerror(errno));
		return err;
	}
	if (ioctl(heapfd, DMA_HEAP_IOCTL_ALLOC, &alloc) < 0)
		goto err_errno;
	ub->fd = alloc.fd;
	ub->map = mmap(NULL, size, PROT_READ, MAP_SHARED, ub->fd, 0);
	if (ub->map == MAP_FAILED)
		goto err_errno;
	close(heapfd);
	return 0;

err_errno:
	err = -errno;
	err_msg("allocating %zu bytes from the system dma-heap: %s", size,
		strerror(errno));
	close(heapfd);
	return err;
}

/*
 * udmabuf-scatter: allocate the memfd's pages one at a time, each followed
 * by a page of a second memfd kept open as long as the udmabuf, so that two
 * pages of ours are rarely physically adjacent. A kernel whose udmabuf
 * builds its sg table with sg_alloc_table_from_pages() (7.x) merges
 * physically contiguous pages into one entry, and a fresh guest hands out
 * mostly contiguous pages: without this its binding has a few large DMA
 * chunks, not the one chunk per page 6.12's udmabuf always maps.
 */
static int memfd_scatter(struct udmabuf *ub, size_t size)
{
	size_t off;

	ub->spacer = memfd_create("devmem-traffic-spacer", MFD_CLOEXEC);
	if (ub->spacer < 0 || ftruncate(ub->spacer, size))
		return -1;
	for (off = 0; off < size; off += PAGE_SZ)
		if (fallocate(ub->memfd, 0, off, PAGE_SZ) ||
		    fallocate(ub->spacer, 0, off, PAGE_SZ))
			return -1;
	return 0;
}

/*
 * Physically contiguous runs of the memfd's pages (/proc/self/pagemap; root
 * only: others read PFN 0, then -1): the number of DMA segments a kernel
 * whose udmabuf uses sg_alloc_table_from_pages() maps for the dma-buf
 * under dma-direct, one gen_pool chunk each on a gen_pool kernel. -1 when
 * it cannot be read.
 */
static long long memfd_phys_runs(const struct udmabuf *ub)
{
	long long runs = 0;
	uint64_t prev = 0, e;
	uint8_t *map;
	size_t i;
	int fd;

	if (ub->memfd < 0)
		return -1;
	map = mmap(NULL, ub->size, PROT_READ, MAP_SHARED, ub->memfd, 0);
	if (map == MAP_FAILED)
		return -1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < ub->size / PAGE_SZ; i++) {
		uint64_t pfn;

		(void)*(volatile uint8_t *)(map + i * PAGE_SZ);
		if (pread(fd, &e, sizeof(e),
			  ((uintptr_t)map / PAGE_SZ + i) * sizeof(e)) != sizeof(e) ||
		    !(e >> 63) || !(pfn = e & ((1ULL << 55) - 1))) {
			runs = -1;
			break;
		}
		if (!i || pfn != prev + 1)
			runs++;
		prev = pfn;
	}
	if (fd < 0)
		runs = -1;
	else
		close(fd);
	munmap(map, ub->size);
	return runs;
}

static int udmabuf_create_src(struct udmabuf *ub, size_t size, bool scatter)
{
	struct udmabuf_create create = { 0 };
	int devfd, err;

	ub->memfd = ub->fd = ub->spacer = -1;
	ub->map = MAP_FAILED;
	ub->size = size;

	devfd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (devfd < 0) {
		err = -errno;
		err_msg("open /dev/udmabuf: %s (CONFIG_UDMABUF?)", strerror(errno));
		return err;
	}
	ub->memfd = memfd_create("devmem-traffic", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (ub->memfd < 0)
		goto err_errno;
	if (ftruncate(ub->memfd, size) ||
	    fcntl(ub->memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		goto err_errno;
	if (scatter && memfd_scatter(ub, size))
		goto err_errno;

	create.memfd = ub->memfd;
	create.flags = UDMABUF_FLAGS_CLOEXEC;
	create.offset = 0;
	create.size = size;
	ub->fd = ioctl(devfd, UDMABUF_CREATE, &create);
	if (ub->fd < 0)
		goto err_errno;
	ub->map = mmap(NULL, size, PROT_READ, MAP_SHARED, ub->fd, 0);
	if (ub->map == MAP_FAILED)
		goto err_errno;
	close(devfd);
	return 0;

err_errno:
	err = -errno;
	err_msg("creating a %zu byte udmabuf: %s", size, strerror(errno));
	close(devfd);
	return err;
}

static int udmabuf_create(struct udmabuf *ub, size_t size)
{
	return udmabuf_create_src(ub, size, false);
}

static void udmabuf_destroy(struct udmabuf *ub)
{
	if (ub->map != MAP_FAILED)
		munmap(ub->map, ub->size);
	if (ub->fd >= 0)
		close(ub->fd);
	if (ub->memfd >= 0)
		close(ub->memfd);
	if (ub->spacer >= 0)
		close(ub->spacer);
	ub->map = MAP_FAILED;
	ub->fd = ub->memfd = ub->spacer = -1;
}

/* This process's system and user CPU seconds so far. */
static void cpu_times(double *sys_s, double *user_s)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	*user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

static int dmabuf_sync(int fd, __u64 flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_READ };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
}

/* ---- rx ---- */

struct rx_opts {
	const char *ifname;
	unsigned int queue, port, seed, idle_ms, linger_ms, hold_ms;
	long long dmabuf_size, expect;
	bool hold, leak, unbind_first;
	enum dmabuf_src src;
	uint32_t rx_page_size;	/* 0: not sent */
	unsigned int race_ids;	/* --race-dontneed: ids 1..N returned by a thread */
	uint64_t niov_size;	/* rx_page_size, or the page size */
	int autorelease;	/* --autorelease: -1 not set, 0 off, 1 on */
	unsigned int conns;	/* --conns: connections accepted, each kept open */
	unsigned int conn_tokens;	/* --conn-tokens: stop a connection at this many */
	enum { VERIFY_ALL, VERIFY_SAMPLE, VERIFY_NONE } verify;
};

/* --verify sample: one dmabuf frag in this many is checked */
#define VERIFY_SAMPLE_EVERY	64

struct rx_stats {
	uint64_t bytes, dmabuf_bytes, linear_bytes, frags, mismatches;
	int64_t first_mismatch;
	uint64_t tokens_returned, dontneed_calls, max_held, wrong_binding;
	uint64_t max_frag, frags_over_niov, recvmsg_calls;
	uint64_t tokens_short;	/* --race-dontneed: asked back, already gone */
	uint64_t dontneed_ranges;	/* dmabuf_token ranges over all calls */
	uint64_t frags_verified;
	uint64_t token_not_niov;	/* autorelease off: token != net_iov index */
	bool eof, idle;
	double secs, sys_secs, user_secs;
	/* --conns: where the current connection started */
	uint64_t conn_bytes0, conn_held0;
	unsigned int conns_done, conns_short;	/* short: ended below --conn-tokens */
};

struct token_set {
	__u32 *tok;
	__u32 *page;	/* dmabuf page of each token's frag */
	size_t n, cap;
};

/* @niov: index of the net_iov (dma-buf offset / net_iov size) */
static int token_push(struct token_set *ts, __u32 token, __u64 niov)
{
	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 1024;
		__u32 *t = realloc(ts->tok, cap * sizeof(*t));
		__u32 *p;

		if (!t)
			return -ENOMEM;
		ts->tok = t;
		p = realloc(ts->page, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ts->page = p;
		ts->cap = cap;
	}
	ts->tok[ts->n] = token;
	ts->page[ts->n++] = niov;
	return 0;
}

/* Distinct net_iovs behind the tokens of @ts: a frag split over two
 * recvmsg calls yields two tokens for one net_iov.
 */
static uint64_t token_pages(const struct token_set *ts, size_t npages)
{
	uint8_t *seen = calloc(npages, 1);
	uint64_t n = 0;
	size_t i;

	if (!seen)
		return 0;
	for (i = 0; i < ts->n; i++) {
		if (ts->page[i] < npages && !seen[ts->page[i]]) {
			seen[ts->page[i]] = 1;
			n++;
		}
	}
	free(seen);
	return n;
}

/* SO_DEVMEM_DONTNEED for every token in @ts, coalescing consecutive
 * tokens into ranges, within the per-call limits of 6.12.
 */
static int tokens_return(int fd, struct token_set *ts, struct rx_stats *st,
			 bool race)
{
	struct dt_dmabuf_token toks[DT_MAX_DONTNEED_TOKENS];
	size_t i = 0;

	while (i < ts->n) {
		unsigned int nt = 0, frags = 0;
		int ret;

		while (i < ts->n && frags < DT_MAX_DONTNEED_FRAGS) {
			if (nt && toks[nt - 1].token_start +
				  toks[nt - 1].token_count == ts->tok[i]) {
				toks[nt - 1].token_count++;
			} else {
				if (nt == DT_MAX_DONTNEED_TOKENS)
					break;
				toks[nt].token_start = ts->tok[i];
				toks[nt].token_count = 1;
				nt++;
			}
			frags++;
			i++;
		}
		ret = setsockopt(fd, SOL_SOCKET, DT_SO_DEVMEM_DONTNEED, toks,
				 nt * sizeof(toks[0]));
		st->dontneed_calls++;
		st->dontneed_ranges += nt;
		if (ret < 0) {
			err_msg("SO_DEVMEM_DONTNEED: %s", strerror(errno));
			return -errno;
		}
		st->tokens_returned += ret;
		/* --race-dontneed: the racing thread took some back first */
		if (race) {
			st->tokens_short += frags - ret;
		} else if ((unsigned int)ret != frags) {
			err_msg("SO_DEVMEM_DONTNEED freed %d of %u frags", ret,
				frags);
			return -EPROTO;
		}
	}
	ts->n = 0;
	return 0;
}

static void verify(const uint8_t *buf, size_t len, uint64_t stream_off,
		   const struct rx_opts *o, struct rx_stats *st)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] == pattern_byte(stream_off + i, o->seed))
			continue;
		if (st->first_mismatch < 0)
			st->first_mismatch = stream_off + i;
		st->mismatches++;
	}
}

static int listen_and_accept(unsigned int port, int timeout_ms)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct pollfd pfd;
	int one = 1, lfd, fd, ret;

	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		ret = -errno;
		close(lfd);
		return ret;
	}
	/* tells a scenario script that connecting is now safe */
	fprintf(stderr, "%s: listening on port %u\n", prog, port);
	pfd.fd = lfd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, timeout_ms);
	if (ret <= 0) {
		close(lfd);
		return ret ? -errno : -ETIMEDOUT;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	ret = fd < 0 ? -errno : fd;
	close(lfd);
	return ret;
}

/* --verify: all frags (default), one in VERIFY_SAMPLE_EVERY, or none (the
 * two DMA_BUF_IOCTL_SYNC calls per checked frag are receiver system time
 * that would swamp what the token path costs).
 */
static bool verify_this(const struct rx_opts *o, const struct rx_stats *st)
{
	switch (o->verify) {
	case VERIFY_ALL:
		return true;
	case VERIFY_SAMPLE:
		return st->frags % VERIFY_SAMPLE_EVERY == 0;
	default:
		return false;
	}
}

/* --autorelease on|off: SO_DEVMEM_AUTORELEASE on the accepted socket,
 * before its first recvmsg. Returns 0, or -errno (-ENOPROTOOPT: a kernel
 * without the option, e.g. the lab's baseline).
 */
static int set_autorelease(int fd, int on)
{
	int v = on, got = -1;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, DT_SO_DEVMEM_AUTORELEASE, &v, sizeof(v)))
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, DT_SO_DEVMEM_AUTORELEASE, &got, &len))
		return -errno;
	return got == on ? 0 : -EPROTO;
}

/* The socket's mode as the kernel reports it: 1, 0, or -1 (no option). */
static int get_autorelease(int fd)
{
	int got = -1;
	socklen_t len = sizeof(got);

	if (getsockopt(fd, SOL_SOCKET, DT_SO_DEVMEM_AUTORELEASE, &got, &len))
		return -1;
	return got;
}

/* Receive until EOF, @expect bytes, or @idle_ms without data. */
static int rx_loop(int fd, const struct rx_opts *o, struct udmabuf *ub,
		   unsigned int binding_id, struct token_set *held,
		   struct rx_stats *st)
{
	static uint8_t iobuf[RX_IOV_LEN];
	static uint8_t ctrl[RX_CMSG_LEN];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct token_set batch = { 0 };
	int err = 0;

	while (!exiting) {
		struct iovec iov = { .iov_base = iobuf, .iov_len = sizeof(iobuf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
		};
		uint64_t linear_off = 0, have;
		struct cmsghdr *cm;
		ssize_t n;
		int pr;

		if (o->expect > 0 && st->bytes - st->conn_bytes0 >= (uint64_t)o->expect)
			break;
		if (o->conn_tokens) {
			/* --conn-tokens T: room for only the T - have cmsgs
			 * still wanted. The kernel stops a recvmsg at the first
			 * frag whose cmsg does not fit (put_cmsg_notrunc()),
			 * returning the bytes before it, and hands out no token
			 * for it: exactly T in the end, frags read whole.
			 */
			have = held->n - st->conn_held0;
			if (have >= o->conn_tokens)
				break;
			if (o->conn_tokens - have < RX_CMSG_LEN / DT_CMSG_ONE)
				msg.msg_controllen = (o->conn_tokens - have) * DT_CMSG_ONE;
		}
		pr = poll(&pfd, 1, o->idle_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			err = -errno;
			break;
		}
		if (pr == 0) {
			st->idle = true;
			break;
		}
		n = recvmsg(fd, &msg, DT_MSG_SOCK_DEVMEM | MSG_DONTWAIT);
		st->recvmsg_calls++;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			err = -errno;
			err_msg("recvmsg(MSG_SOCK_DEVMEM): %s", strerror(errno));
			break;
		}
		if (n == 0) {
			st->eof = true;
			break;
		}
		if (msg.msg_flags & MSG_CTRUNC) {
			err_msg("control data truncated");
			err = -EMSGSIZE;
			break;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct dt_dmabuf_cmsg *dc;

			if (cm->cmsg_level != SOL_SOCKET ||
			    (cm->cmsg_type != DT_SCM_DEVMEM_DMABUF &&
			     cm->cmsg_type != DT_SCM_DEVMEM_LINEAR))
				continue;
			dc = (struct dt_dmabuf_cmsg *)CMSG_DATA(cm);
			if (cm->cmsg_type == DT_SCM_DEVMEM_LINEAR) {
				/* payload the NIC left in host memory: in iov */
				verify(iobuf + linear_off, dc->frag_size,
				       st->bytes, o, st);
				linear_off += dc->frag_size;
				st->linear_bytes += dc->frag_size;
				st->bytes += dc->frag_size;
				continue;
			}
			if (dc->dmabuf_id != binding_id)
				st->wrong_binding++;
			if (dc->frag_offset + dc->frag_size > ub->size) {
				err_msg("frag [%llu,+%u) outside the dmabuf",
					(unsigned long long)dc->frag_offset,
					dc->frag_size);
				st->mismatches += dc->frag_size;
			} else if (!o->race_ids && verify_this(o, st)) {
				/* racing returns recycle net_iovs under us */
				dmabuf_sync(ub->fd, DMA_BUF_SYNC_START);
				verify(ub->map + dc->frag_offset, dc->frag_size,
				       st->bytes, o, st);
				dmabuf_sync(ub->fd, DMA_BUF_SYNC_END);
				st->frags_verified++;
			}
			/* without autorelease the token is the net_iov's index */
			if (o->autorelease == 0 &&
			    dc->frag_token != dc->frag_offset / o->niov_size)
				st->token_not_niov++;
			/* a frag never crosses its net_iov */
			if (dc->frag_offset % o->niov_size + dc->frag_size >
			    o->niov_size)
				st->frags_over_niov++;
			if (dc->frag_size > st->max_frag)
				st->max_frag = dc->frag_size;
			st->frags++;
			st->dmabuf_bytes += dc->frag_size;
			st->bytes += dc->frag_size;
			err = token_push(o->hold ? held : &batch, dc->frag_token,
					 dc->frag_offset / o->niov_size);
			if (err)
				goto out;
		}
		if (held->n > st->max_held)
			st->max_held = held->n;
		if (batch.n) {
			err = tokens_return(fd, &batch, st, o->race_ids);
			if (err)
				break;
		}
	}
out:
	free(batch.tok);
	free(batch.page);
	return err;
}

/* --conns N: the accepted connections, all kept open (their tokens held)
 * until the receiver unbinds.
 */
static int *conn_fds;
static unsigned int n_conn_fds;

static void conns_close(void)
{
	unsigned int i;

	for (i = 0; i < n_conn_fds; i++)
		close(conn_fds[i]);
	free(conn_fds);
	conn_fds = NULL;
	n_conn_fds = 0;
}

/* Enough descriptors for @n sockets: the soft limit raised to the hard one. */
static void nofile_raise(unsigned int n)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --conns N: listen once, accept N connections in turn and receive on each
 * (to --expect bytes, EOF, idle, or --conn-tokens tokens held), keeping
 * every socket open, so all of their tokens stay held (--leak).
 */
static int rx_conns(const struct rx_opts *o, struct udmabuf *ub,
		    unsigned int binding_id, struct token_set *held,
		    struct rx_stats *st)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(o->port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, lfd, fd, err = 0;

	nofile_raise(o->conns);
	conn_fds = calloc(o->conns, sizeof(*conn_fds));
	if (!conn_fds)
		return -ENOMEM;
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, o->conns)) {
		err = -errno;
		goto out;
	}
	fprintf(stderr, "%s: listening on port %u for %u connections\n", prog,
		o->port, o->conns);
	pfd.fd = lfd;
	while (n_conn_fds < o->conns && !exiting) {
		int pr = poll(&pfd, 1, 30000);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			err = -ETIMEDOUT;
			err_msg("rx: connection %u of %u did not come", n_conn_fds + 1,
				o->conns);
			break;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			err_msg("rx: accept: %s", strerror(errno));
			break;
		}
		conn_fds[n_conn_fds++] = fd;
		st->conn_bytes0 = st->bytes;
		st->conn_held0 = held->n;
		st->eof = st->idle = false;
		err = rx_loop(fd, o, ub, binding_id, held, st);
		if (err)
			break;
		st->conns_done++;
		if (o->conn_tokens && held->n - st->conn_held0 < o->conn_tokens)
			st->conns_short++;
	}
out:
	close(lfd);
	return err;
}

/* --race-dontneed N: a second thread returns token ids 1..N over and over
 * while the main thread receives. Token ids are the lowest free ones, so
 * these are the ids recvmsg hands out next: some are returned after
 * tcp_recvmsg_dmabuf() reserved them and wrote their cmsg, before it
 * committed them at the end of the skb. A kernel that lets DONTNEED erase
 * such a reservation loses the net_iov reference the token holds: the
 * binding's page pool never drains. Payload is not verified in this mode
 * (returned net_iovs are refilled while the main thread looks at them).
 */
struct racer {
	pthread_t thread;
	int fd;
	unsigned int ids;
	volatile int stop;
	uint64_t calls, freed, errors;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	struct dt_dmabuf_token t = { .token_start = 1, .token_count = r->ids };
	cpu_set_t cpus;

	/* The receiver's CPU: the scheduler then switches to this thread at
	 * the receiver's voluntary preemption points, and the ones inside
	 * the window are the cmsg copies to user space.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (!r->stop && !exiting) {
		int ret = setsockopt(r->fd, SOL_SOCKET, DT_SO_DEVMEM_DONTNEED,
				     &t, sizeof(t));

		r->calls++;
		if (ret < 0)
			r->errors++;
		else
			r->freed += ret;
	}
	return NULL;
}

static void rx_usage(FILE *f)
{
	fprintf(f,
		"usage: %s rx --ifname IF --port P [--queue Q] [--dmabuf-size SIZE]\n"
		"          [--dmabuf udmabuf|udmabuf-scatter|heap] [--rx-page-size SIZE]\n"
		"          [--expect BYTES] [--idle-timeout MS] [--seed N]\n"
		"          [--hold] [--hold-for MS] [--leak] [--unbind-first] [--linger MS]\n"
		"          [--race-dontneed N] [--autorelease on|off]\n"
		"          [--verify all|sample|none] [--conns N [--conn-tokens T]]\n"
		"  --dmabuf        udmabuf (memfd, default) or heap (/dev/dma_heap/system,\n"
		"                  buddy chunks up to 1 MiB: the one that backs large net_iovs)\n"
		"                  or udmabuf-scatter (a memfd whose pages are allocated\n"
		"                  interleaved with another's: rarely two physically adjacent,\n"
		"                  so about one DMA chunk per page on any kernel)\n"
		"  --rx-page-size  net_iov size of the binding (NETDEV_A_DMABUF_RX_PAGE_SIZE),\n"
		"                  sent as given: the kernel validates it\n"
		"  --hold          keep every token while receiving (exhausts a small binding);\n"
		"                  they are returned at the end unless --leak\n"
		"  --hold-for MS   with --hold: keep every token, bound, up to MS ms after\n"
		"                  the receive ended (prints 'holding' on stderr; SIGUSR1\n"
		"                  ends it, and the linger too): a settled point to count\n"
		"                  them from outside (not in sys_seconds/user_seconds)\n"
		"  --leak          exit without returning the held tokens (implies --hold)\n"
		"  --unbind-first  unbind (close the netlink socket) before the TCP socket,\n"
		"                  and report the page pools after each step\n"
		"  --linger MS     stay bound up to MS ms after the tokens went back, before\n"
		"                  unbinding (prints 'lingering' on stderr; SIGUSR1 ends it)\n"
		"  --race-dontneed N  a second thread returns token ids 1..N in a loop while\n"
		"                  receiving (the frag token commit race); no payload check\n"
		"  --autorelease   SO_DEVMEM_AUTORELEASE on the accepted socket (lab kernel\n"
		"                  patch 0012); off: tokens are net_iov indices, counted on\n"
		"                  the net_iov, drained at unbind. Exit 77 with ENOPROTOOPT\n"
		"                  on a kernel without it\n"
		"  --verify        check every dmabuf frag's payload (all, default), one in\n"
		"                  64 (sample) or none (no dma-buf sync ioctls either)\n"
		"  --conns N       accept N connections in turn, receive on each (--expect\n"
		"                  is per connection) and keep all open, tokens held, until\n"
		"                  the end (needs --leak)\n"
		"  --conn-tokens T stop reading a connection once it holds T tokens (the\n"
		"                  last reads get room for only the cmsgs still wanted, so\n"
		"                  it is exactly T; the sender needs at least T * niov size\n"
		"                  bytes per connection)\n"
		"JSON: pages_held = distinct net_iovs behind the tokens held at the end\n"
		"(a frag split over two recvmsg calls gives two tokens for one net_iov);\n"
				"conns/conns_short = connections received / ended below --conn-tokens;\n"
		"sys_seconds/user_seconds = this process's CPU while receiving and\n"
		"returning the tokens; niov_size = --rx-page-size or the page size\n", prog);
}

static int cmd_rx(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "queue", required_argument, NULL, 'q' },
		{ "port", required_argument, NULL, 'p' },
		{ "dmabuf-size", required_argument, NULL, 's' },
		{ "expect", required_argument, NULL, 'e' },
		{ "idle-timeout", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "hold", no_argument, NULL, 'H' },
		{ "hold-for", required_argument, NULL, 'F' },
		{ "leak", no_argument, NULL, 'L' },
		{ "unbind-first", no_argument, NULL, 'U' },
		{ "linger", required_argument, NULL, 'l' },
		{ "dmabuf", required_argument, NULL, 'D' },
		{ "rx-page-size", required_argument, NULL, 'P' },
		{ "race-dontneed", required_argument, NULL, 'R' },
		{ "autorelease", required_argument, NULL, 'A' },
		{ "verify", required_argument, NULL, 'V' },
		{ "conns", required_argument, NULL, 'C' },
		{ "conn-tokens", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct rx_opts o = {
		.dmabuf_size = 64 << 20, .expect = -1, .idle_ms = 10000,
		.niov_size = PAGE_SZ, .autorelease = -1, .conns = 1,
	};
	static const char * const verify_names[] = { "all", "sample", "none" };
	int mode = -1;
	double sys0, user0, sys1, user1;
	long long v;
	struct rx_stats st = { .first_mismatch = -1 };
	struct pool_list at_end, after_unbind, after_close;
	bool have_end = false, have_unbind = false, have_close = false;
	struct token_set held = { 0 };
	unsigned int binding_id = 0;
	struct udmabuf ub = { .memfd = -1, .fd = -1, .spacer = -1, .map = MAP_FAILED };
	uint64_t leaked = 0, pages_held = 0;
	struct nl_ctx nl = { 0 };
	struct racer racer = { .fd = -1 };
	bool racing = false;
	int c, li = 0, ifindex, fd = -1, err;
	long long phys_runs = -1;
	double t0;

	while ((c = getopt_long(argc, argv, "", lo, &li)) != -1) {
		switch (c) {
		case 'i': o.ifname = optarg; break;
		case 'q':
			if (parse_uint(optarg, 1023, &o.queue))
				goto bad_value;
			break;
		case 'p':
			if (parse_uint(optarg, 65535, &o.port) || !o.port)
				goto bad_value;
			break;
		case 's':
			o.dmabuf_size = parse_size(optarg);
			if (o.dmabuf_size <= 0 || o.dmabuf_size % PAGE_SZ)
				goto bad_value;
			break;
		case 'e':
			o.expect = parse_size(optarg);
			if (o.expect < 0)
				goto bad_value;
			break;
		case 't':
			if (parse_uint(optarg, 3600000, &o.idle_ms) || !o.idle_ms)
				goto bad_value;
			break;
		case 'S':
			if (parse_uint(optarg, 255, &o.seed))
				goto bad_value;
			break;
		case 'H': o.hold = true; break;
		case 'F':
			if (parse_uint(optarg, 600000, &o.hold_ms) || !o.hold_ms)
				goto bad_value;
			break;
		case 'L': o.hold = o.leak = true; break;
		case 'U': o.unbind_first = true; break;
		case 'l':
			if (parse_uint(optarg, 600000, &o.linger_ms))
				goto bad_value;
			break;
		case 'D':
			if (!strcmp(optarg, "udmabuf"))
				o.src = SRC_UDMABUF;
			else if (!strcmp(optarg, "heap"))
				o.src = SRC_HEAP;
			else if (!strcmp(optarg, "udmabuf-scatter"))
				o.src = SRC_UDMABUF_SCATTER;
			else
				goto bad_value;
			break;
		case 'P':
			v = parse_size(optarg);
			if (v <= 0 || v > UINT32_MAX)
				goto bad_value;
			o.rx_page_size = v;
			break;
		case 'R':
			if (parse_uint(optarg, DT_MAX_DONTNEED_FRAGS, &o.race_ids) ||
			    !o.race_ids)
				goto bad_value;
			break;
		case 'A':
			if (!strcmp(optarg, "on"))
				o.autorelease = 1;
			else if (!strcmp(optarg, "off"))
				o.autorelease = 0;
			else
				goto bad_value;
			break;
		case 'V':
			if (!strcmp(optarg, "all"))
				o.verify = VERIFY_ALL;
			else if (!strcmp(optarg, "sample"))
				o.verify = VERIFY_SAMPLE;
			else if (!strcmp(optarg, "none"))
				o.verify = VERIFY_NONE;
			else
				goto bad_value;
			break;
		case 'C':
			if (parse_uint(optarg, 65536, &o.conns) || !o.conns)
				goto bad_value;
			break;
		case 'T':
			if (parse_uint(optarg, 1U << 30, &o.conn_tokens) || !o.conn_tokens)
				goto bad_value;
			break;
		case 'h': rx_usage(stdout); return 0;
		default: rx_usage(stderr); return 2;
		}
	}
	if (optind != argc || !o.ifname || !o.port) {
		err_msg("rx: --ifname and --port are required, no positional arguments");
		return 2;
	}
	if (o.rx_page_size)
		o.niov_size = o.rx_page_size;
	if ((o.conns > 1 || o.conn_tokens) &&
	    (!o.leak || o.race_ids || o.unbind_first || o.autorelease >= 0)) {
		err_msg("rx: --conns and --conn-tokens need --leak, and go with neither "
			"--race-dontneed, --unbind-first nor --autorelease");
		return 2;
	}
	if (o.hold_ms && !o.hold) {
		err_msg("rx: --hold-for needs --hold or --leak");
		return 2;
	}
	if (o.race_ids && o.hold) {
		err_msg("rx: --race-dontneed returns tokens, it cannot go with --hold or --leak");
		return 2;
	}
	ifindex = if_nametoindex(o.ifname);
	if (!ifindex) {
		err_msg("rx: no interface '%s'", o.ifname);
		return 1;
	}

	err = o.src == SRC_HEAP ? heap_create(&ub, o.dmabuf_size) :
				  udmabuf_create_src(&ub, o.dmabuf_size,
						     o.src == SRC_UDMABUF_SCATTER);
	if (err)
		goto cleanup;
	phys_runs = o.src == SRC_HEAP ? -1 : memfd_phys_runs(&ub);
	err = nl_ctx_open(&nl);
	if (err) {
		err_msg("netlink: cannot open the '%s' genl family: %s",
			DT_NETDEV_FAMILY_NAME, strerror(-err));
		goto cleanup;
	}
	err = bind_rx(&nl, ifindex, o.queue, ub.fd, o.rx_page_size, &binding_id);
	if (err) {
		err_msg("bind-rx %s queue %u: %s%s%s%s", o.ifname, o.queue,
			strerror(-err), nl.extack[0] ? " (" : "", nl.extack,
			nl.extack[0] ? ")" : "");
		goto cleanup;
	}
	fprintf(stderr, "%s: bound %lld byte %s to %s queue %u, binding %u, net_iov %llu bytes%s\n",
		prog, o.dmabuf_size, src_names[o.src], o.ifname, o.queue, binding_id,
		(unsigned long long)o.niov_size, o.rx_page_size ? "" : " (default)");

	if (o.conns > 1 || o.conn_tokens) {
		t0 = now_s();
		cpu_times(&sys0, &user0);
		err = rx_conns(&o, &ub, binding_id, &held, &st);
		goto received;
	}
	fd = listen_and_accept(o.port, 30000);
	if (fd < 0) {
		err = fd;
		err_msg("rx: accept on port %u: %s", o.port, strerror(-err));
		goto cleanup;
	}
	if (o.autorelease >= 0) {
		err = set_autorelease(fd, o.autorelease);
		if (err == -ENOPROTOOPT) {
			err_msg("rx: SKIP: SO_DEVMEM_AUTORELEASE: %s (a kernel without the option)",
				strerror(-err));
			close(fd);
			fd = -1;
			nl_ctx_close(&nl);
			udmabuf_destroy(&ub);
			printf("{\"role\":\"rx\",\"skip\":\"SO_DEVMEM_AUTORELEASE: ENOPROTOOPT\"}\n");
			return 77;
		}
		if (err) {
			err_msg("rx: SO_DEVMEM_AUTORELEASE %s: %s",
				o.autorelease ? "on" : "off", strerror(-err));
			goto cleanup;
		}
	}
	mode = get_autorelease(fd);
	t0 = now_s();
	/* CPU of receiving and of returning the tokens (--hold: at the end) */
	cpu_times(&sys0, &user0);
	if (o.race_ids) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		sched_setaffinity(0, sizeof(cpus), &cpus);
		racer.fd = fd;
		racer.ids = o.race_ids;
		err = -pthread_create(&racer.thread, NULL, racer_main, &racer);
		if (err) {
			err_msg("rx: racing thread: %s", strerror(-err));
			goto cleanup;
		}
		racing = true;
	}
	err = rx_loop(fd, &o, &ub, binding_id, &held, &st);
	st.conns_done = !err;
	if (racing) {
		racer.stop = 1;
		pthread_join(racer.thread, NULL);
		racing = false;
	}
received:
	cpu_times(&sys1, &user1);
	st.secs = now_s() - t0;
	st.sys_secs = sys1 - sys0;
	st.user_secs = user1 - user0;
	if (err)
		goto cleanup;
	/* still bound, tokens still held (--hold): the occupancy peak */
	have_end = !dump_pools(&at_end);
	pages_held = token_pages(&held, ub.size / o.niov_size);
	if (o.hold_ms) {
		fprintf(stderr, "%s: holding %zu tokens on %" PRIu64 " net_iovs %u ms "
			"(SIGUSR1 ends it), binding %u\n", prog, held.n, pages_held,
			o.hold_ms, binding_id);
		wait_ms(o.hold_ms);
	}

	cpu_times(&sys0, &user0);
	if (o.leak)
		leaked = held.n;
	else if (held.n && (err = tokens_return(fd, &held, &st, o.race_ids)))
		goto cleanup;
	cpu_times(&sys1, &user1);
	st.sys_secs += sys1 - sys0;
	st.user_secs += user1 - user0;
	if (o.linger_ms) {
		fprintf(stderr, "%s: lingering %u ms (SIGUSR1 ends it), binding %u\n",
			prog, o.linger_ms, binding_id);
		wait_ms(o.linger_ms);
	}

	if (o.unbind_first) {
		nl_ctx_close(&nl);	/* the kernel unbinds on socket close */
		usleep(200 * 1000);
		have_unbind = !dump_pools(&after_unbind);
	}
	if (fd >= 0)
		close(fd);
	fd = -1;
	conns_close();
	nl_ctx_close(&nl);
	/* socket and pool teardown are asynchronous (RCU, deferred work) */
	usleep(500 * 1000);
	have_close = !dump_pools(&after_close);

cleanup:
	if (fd >= 0)
		close(fd);
	conns_close();
	nl_ctx_close(&nl);
	udmabuf_destroy(&ub);
	free(held.tok);
	free(held.page);
	if (err && !st.bytes)
		return 1;

	/* issue 11: pid (devmemtop's holder rows name it) and tokens handed out */
	printf("{\"pid\":%d,\"tokens_received\":%" PRIu64 ",", (int)getpid(), st.frags);
	printf("\"role\":\"rx\",\"ifname\":\"%s\",\"ifindex\":%d,\"queue\":%u,"
	       "\"binding_id\":%u,\"dmabuf_size\":%lld,\"bytes\":%" PRIu64
	       ",\"dmabuf_bytes\":%" PRIu64 ",\"linear_bytes\":%" PRIu64
	       ",\"frags\":%" PRIu64 ",\"mismatches\":%" PRIu64
	       ",\"first_mismatch\":%" PRId64 ",\"wrong_binding\":%" PRIu64
	       ",\"tokens_returned\":%" PRIu64 ",\"tokens_held_max\":%" PRIu64
	       ",\"tokens_leaked\":%" PRIu64 ",\"pages_held\":%" PRIu64
	       ",\"dontneed_calls\":%" PRIu64
	       ",\"eof\":%s,\"idle_timeout\":%s,\"seconds\":%.3f,\"mbytes_per_s\":%.1f",
	       o.ifname, ifindex, o.queue, binding_id, o.dmabuf_size, st.bytes,
	       st.dmabuf_bytes, st.linear_bytes, st.frags, st.mismatches,
	       st.first_mismatch, st.wrong_binding, st.tokens_returned,
	       st.max_held, leaked, pages_held, st.dontneed_calls, st.eof ? "true" : "false",
	       st.idle ? "true" : "false", st.secs,
	       st.secs > 0 ? st.bytes / st.secs / 1e6 : 0.0);
	if (o.race_ids)
		printf(",\"race_ids\":%u,\"race_calls\":%" PRIu64 ",\"race_freed\":%"
		       PRIu64 ",\"race_errors\":%" PRIu64 ",\"tokens_short\":%" PRIu64,
		       o.race_ids, racer.calls, racer.freed, racer.errors,
		       st.tokens_short);
	/* the memfd's physically contiguous runs: the binding's DMA chunks on
	 * a kernel whose udmabuf merges them (7.x); 6.12 maps one per page
	 */
	if (phys_runs > 0)
		printf(",\"memfd_phys_runs\":%lld", phys_runs);
	else
		printf(",\"memfd_phys_runs\":null");
	printf(",\"dmabuf\":\"%s\",\"rx_page_size\":%u,\"niov_size\":%" PRIu64
	       ",\"max_frag_size\":%" PRIu64 ",\"frags_over_niov\":%" PRIu64
	       ",\"recvmsg_calls\":%" PRIu64 ",\"sys_seconds\":%.3f,\"user_seconds\":%.3f",
	       src_names[o.src], o.rx_page_size, o.niov_size, st.max_frag,
	       st.frags_over_niov, st.recvmsg_calls, st.sys_secs, st.user_secs);
	/* issue 21: the socket's token mode (null: the kernel has no option) */
	printf(",\"autorelease\":%s,\"verify\":\"%s\",\"frags_verified\":%" PRIu64
	       ",\"dontneed_ranges\":%" PRIu64 ",\"token_not_niov\":%" PRIu64,
	       mode < 0 ? "null" : mode ? "true" : "false", verify_names[o.verify],
	       st.frags_verified, st.dontneed_ranges, st.token_not_niov);
	printf(",\"conns\":%u,\"conn_tokens\":%u,\"conns_short\":%u",
	       st.conns_done, o.conn_tokens, st.conns_short);
	if (have_end) {
		printf(",\"pools_at_end\":");
		print_pools(stdout, &at_end, ifindex);
	}
	if (have_unbind) {
		printf(",\"pools_after_unbind\":");
		print_pools(stdout, &after_unbind, ifindex);
	}
	if (have_close) {
		printf(",\"pools_after_close\":");
		print_pools(stdout, &after_close, ifindex);
	}
	printf(",\"error\":%d}\n", err);
	fflush(stdout);
	return err ? 1 : 0;

bad_value:
	err_msg("rx: bad value '%s' for --%s", optarg, lo[li].name);
	return 2;
}

/* ---- tx ---- */

/* One connection of tx: connect, send @total bytes of the pattern, shut
 * down the write side. Returns the socket (the caller waits for the
 * receiver's close on it) or -1; *@sent: bytes sent.
 */
static int parse_addr(const char *addr, unsigned int port, struct sockaddr_storage *ss,
		      socklen_t *salen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*salen = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*salen = sizeof(*sin6);
		return 0;
	}
	return -1;
}

static int tx_send(const struct sockaddr_storage *ss, socklen_t salen,
		   long long total, unsigned int seed, unsigned int timeout_s,
		   uint64_t *sent)
{
	static uint8_t buf[TX_CHUNK];
	struct timeval tv = { .tv_sec = timeout_s };
	int fd;

	*sent = 0;
	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)ss, salen)) {
		err_msg("tx: connect: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (*sent < (uint64_t)total && !exiting) {
		size_t len = total - *sent < TX_CHUNK ? total - *sent : TX_CHUNK;
		ssize_t n;
		size_t i;

		for (i = 0; i < len; i++)
			buf[i] = pattern_byte(*sent + i, seed);
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err_msg("tx: send after %" PRIu64 " bytes: %s", *sent,
				n < 0 ? strerror(errno) : "0");
			break;
		}
		*sent += n;
	}
	if (*sent == (uint64_t)total)
		shutdown(fd, SHUT_WR);
	return fd;
}

/* How the receiver closed @fd: 0 EOF (it read all), 1 reset (it closed
 * with data unread: rx --conn-tokens stops reading), -1 not closed.
 */
static int tx_closed(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, 0);

	if (n == 0)
		return 0;
	return n < 0 && errno == ECONNRESET ? 1 : -1;
}

static int cmd_tx(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 't' },
		{ "conns", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sockaddr_storage ss;
	unsigned int seed = 0, timeout_s = 30, portnum = 0, conns = 1, i, n = 0;
	unsigned int resets = 0;
	const char *addr = NULL;
	long long total = -1;
	socklen_t salen;
	uint64_t sent = 0, one;
	int c, *fds, complete = 1, how;
	double t0, secs;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p':
			if (parse_uint(optarg, 65535, &portnum) || !portnum) {
				err_msg("tx: bad port '%s'", optarg);
				return 2;
			}
			break;
		case 'b':
			total = parse_size(optarg);
			if (total < 0) {
				err_msg("tx: bad size '%s'", optarg);
				return 2;
			}
			break;
		case 'S':
			if (parse_uint(optarg, 255, &seed)) {
				err_msg("tx: bad seed '%s'", optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_uint(optarg, 3600, &timeout_s) || !timeout_s) {
				err_msg("tx: bad timeout '%s'", optarg);
				return 2;
			}
			break;
		case 'C':
			if (parse_uint(optarg, 65536, &conns) || !conns) {
				err_msg("tx: bad connection count '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: %s tx --addr A --port P --bytes SIZE [--seed N] [--timeout S] [--conns N]\n"
			       "  --conns N  N connections one after the other, SIZE bytes each, all kept\n"
			       "             open until the receiver closes them (rx --conns; a reset\n"
			       "             counts as closed then: JSON resets)\n", prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc || !addr || !portnum || total < 0) {
		err_msg("tx: --addr, --port and --bytes are required");
		return 2;
	}
	/* numeric addresses only: no resolver in a static binary */
	if (parse_addr(addr, portnum, &ss, &salen)) {
		err_msg("tx: bad address '%s' (numeric IPv4/IPv6)", addr);
		return 2;
	}
	fds = calloc(conns, sizeof(*fds));
	if (!fds) {
		err_msg("tx: out of memory");
		return 1;
	}
	nofile_raise(conns);
	t0 = now_s();
	/* all sent first: with --conns the receiver keeps each one open */
	for (i = 0; i < conns && !exiting; i++) {
		fds[n] = tx_send(&ss, salen, total, seed, timeout_s, &one);
		sent += one;
		if (fds[n] < 0 || one != (uint64_t)total) {
			complete = 0;
			if (fds[n] >= 0)
				close(fds[n]);
			break;
		}
		n++;
	}
	/* then wait for the receiver to close each: all was consumed, or
	 * (--conns) it closed one it had stopped reading
	 */
	for (i = 0; i < n; i++) {
		how = complete ? tx_closed(fds[i]) : -1;
		resets += how == 1;
		if (complete && (how < 0 || (how == 1 && conns == 1))) {
			err_msg("tx: receiver did not close connection %u%s", i + 1,
				how == 1 ? " (reset)" : "");
			complete = 0;
		}
		close(fds[i]);
	}
	free(fds);
	secs = now_s() - t0;
	printf("{\"role\":\"tx\",\"bytes\":%" PRIu64 ",\"requested\":%lld,"
	       "\"conns\":%u,\"resets\":%u,\"complete\":%s,\"seconds\":%.3f}\n",
	       sent, total * conns, n, resets, complete ? "true" : "false", secs);
	return complete ? 0 : 3;
}

/* ---- pools ---- */

static int cmd_pools(int argc, char **argv)
{
	struct pool_list pl;
	int ifindex = 0, err;

	if (argc == 3 && !strcmp(argv[1], "--ifname")) {
		ifindex = if_nametoindex(argv[2]);
		if (!ifindex) {
			err_msg("pools: no interface '%s'", argv[2]);
			return 1;
		}
	} else if (argc != 1) {
		err_msg("usage: %s pools [--ifname IF]", prog);
		return 2;
	}
	err = dump_pools(&pl);
	if (err) {
		err_msg("pools: page-pool-get dump: %s", strerror(-err));
		return 1;
	}
	print_pools(stdout, &pl, ifindex);
	putchar('\n');
	return pl.truncated ? 1 : 0;
}

/* ---- udp-recv ---- */

static int cmd_udp_recv(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	unsigned long port;
	unsigned long long n = 0, bytes = 0;
	char buf[65536], *end;
	int fd, ret = 1;

	if (argc != 3 || strcmp(argv[1], "--port")) {
		err_msg("usage: %s udp-recv --port P", prog);
		return 2;
	}
	port = strtoul(argv[2], &end, 10);
	if (*end || !port || port > 65535) {
		err_msg("udp-recv: bad port '%s'", argv[2]);
		return 2;
	}
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		err_msg("udp-recv: port %lu: %s", port, strerror(errno));
		goto out;
	}
	err_msg("udp-recv: listening on UDP %lu", port);
	while (!exiting) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			err_msg("udp-recv: %s", strerror(errno));
			goto out;
		}
		n++;
		bytes += len;
		if (fwrite(buf, 1, len, stdout) != (size_t)len || fflush(stdout)) {
			err_msg("udp-recv: stdout: %s", strerror(errno));
			goto out;
		}
	}
	err_msg("udp-recv: %llu datagrams, %llu bytes", n, bytes);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}


/* ---- devmem TX and its sink ---- */

/* NETDEV_CMD_BIND_TX: the binding lives as long as @ctx->sk stays open */
static int bind_tx(struct nl_ctx *ctx, int ifindex, int dmabuf_fd, unsigned int *binding_id)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx->family, 0, 0,
			 DT_NETDEV_CMD_BIND_TX, 1) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_IFINDEX, ifindex) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_FD, dmabuf_fd)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	*binding_id = 0;
	nl_socket_modify_cb(ctx->sk, NL_CB_VALID, NL_CB_CUSTOM, bind_reply_cb, binding_id);
	ctx->error = 0;
	err = nl_send_sync(ctx->sk, msg);
	if (ctx->error)
		return ctx->error;
	if (err < 0)
		return -EIO;
	return *binding_id ? 0 : -ENODATA;
}

/* one sendmsg of @len bytes at dma-buf offset @off, naming dma-buf @id */
static ssize_t devmem_send(int fd, unsigned int id, size_t off, size_t len)
{
	char ctl[CMSG_SPACE(sizeof(__u32))] = { 0 };
	struct iovec iov = { .iov_base = (void *)off, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	__u32 v = id;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = DT_SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(v));
	memcpy(CMSG_DATA(cm), &v, sizeof(v));
	return sendmsg(fd, &msg, MSG_ZEROCOPY | MSG_NOSIGNAL);
}

static int cmd_txdm(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "dmabuf-size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned int portnum = 0, seed = 0, id = 0, calls = 0;
	const char *ifname = NULL, *addr = NULL;
	long long size = 256 * 1024;
	int c, ifindex, fd = -1, one = 1, rc = 1, err;
	int e_unbound = 0, e_range = 0;
	struct udmabuf ub = { .memfd = -1, .fd = -1, .spacer = -1, .map = MAP_FAILED };
	struct sockaddr_storage ss;
	struct nl_ctx nl = { 0 };
	uint8_t *pat = NULL;
	uint64_t sent = 0;
	socklen_t salen;
	char b;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'a': addr = optarg; break;
		case 'p':
			if (parse_uint(optarg, 65535, &portnum) || !portnum) {
				err_msg("txdm: bad port '%s'", optarg);
				return 2;
			}
			break;
		case 's':
			size = parse_size(optarg);
			if (size < 4096 || size % 4096) {
				err_msg("txdm: bad dma-buf size '%s' (pages)", optarg);
				return 2;
			}
			break;
		case 'S':
			if (parse_uint(optarg, 255, &seed)) {
				err_msg("txdm: bad seed '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: %s txdm --ifname IF --addr A --port P [--dmabuf-size SIZE] [--seed N]\n"
			       "  sends the whole dma-buf (SIZE, default 256K) once, after one send\n"
			       "  naming no TX binding and one past its end, both of which must fail;\n"
			       "  prints {\"role\":\"txdm\",\"binding_id\",\"bytes\",\"sendmsg_calls\",...}\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc || !ifname || !addr || !portnum) {
		err_msg("txdm: --ifname, --addr and --port are required");
		return 2;
	}
	ifindex = if_nametoindex(ifname);
	if (!ifindex || parse_addr(addr, portnum, &ss, &salen)) {
		err_msg("txdm: no interface '%s' or bad address '%s'", ifname, addr);
		return 2;
	}
	pat = malloc(size);
	if (!pat || udmabuf_create(&ub, size))
		goto out;
	for (long long i = 0; i < size; i++)
		pat[i] = pattern_byte(i, seed);
	if (pwrite(ub.memfd, pat, size, 0) != size) {
		err_msg("txdm: writing the pattern: %s", strerror(errno));
		goto out;
	}
	err = nl_ctx_open(&nl);
	if (!err)
		err = bind_tx(&nl, ifindex, ub.fd, &id);
	if (err) {
		err_msg("txdm: bind-tx on %s: %s%s%s", ifname, strerror(-err),
			nl.extack[0] ? ": " : "", nl.extack);
		goto out;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) ||
	    connect(fd, (struct sockaddr *)&ss, salen)) {
		err_msg("txdm: socket/connect: %s", strerror(errno));
		goto out;
	}
	/* no TX binding of that id: EINVAL, nothing queued */
	if (devmem_send(fd, id + 1000, 0, 64) >= 0) {
		err_msg("txdm: a send naming dma-buf %u (not bound) was taken", id + 1000);
		goto out;
	}
	e_unbound = errno;
	/* past the end of the dma-buf: EFAULT */
	if (devmem_send(fd, id, size, 64) >= 0) {
		err_msg("txdm: a send at offset %lld (the dma-buf's end) was taken", size);
		goto out;
	}
	e_range = errno;
	calls++;
	while (sent < (uint64_t)size) {
		size_t len = size - sent < 16384 ? size - sent : 16384;
		ssize_t n = devmem_send(fd, id, sent, len);

		if (n < 0 && (errno == EINTR || errno == ENOBUFS || errno == EAGAIN)) {
			wait_ms(10);
			continue;
		}
		if (n <= 0) {
			err_msg("txdm: sendmsg after %" PRIu64 " bytes: %s", sent,
				n < 0 ? strerror(errno) : "0");
			goto out;
		}
		calls++;
		sent += n;
	}
	shutdown(fd, SHUT_WR);
	/* the sink closes once it has read everything */
	if (recv(fd, &b, 1, 0) != 0) {
		err_msg("txdm: the sink did not close after %" PRIu64 " bytes", sent);
		goto out;
	}
	rc = 0;
out:
	printf("{\"role\":\"txdm\",\"binding_id\":%u,\"bytes\":%" PRIu64 ",\"sendmsg_calls\":%u,"
	       "\"unbound_errno\":%d,\"range_errno\":%d,\"complete\":%s}\n", id, sent, calls,
	       e_unbound, e_range, rc ? "false" : "true");
	if (fd >= 0)
		close(fd);
	nl_ctx_close(&nl);	/* unbinds */
	udmabuf_destroy(&ub);
	free(pat);
	return rc;
}

static int cmd_sink(int argc, char **argv)
{
	unsigned int portnum = 0, seed = 0;
	uint64_t got = 0, bad = 0;
	uint8_t buf[65536];
	int fd;

	if (argc < 3 || strcmp(argv[1], "--port") || parse_uint(argv[2], 65535, &portnum) ||
	    !portnum || (argc == 5 && (strcmp(argv[3], "--seed") ||
				       parse_uint(argv[4], 255, &seed))) ||
	    (argc != 3 && argc != 5)) {
		err_msg("usage: %s sink --port P [--seed N]", prog);
		return 2;
	}
	fd = listen_and_accept(portnum, 60000);
	if (fd < 0)
		return 1;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			bad += buf[i] != pattern_byte(got + i, seed);
		got += n;
	}
	close(fd);
	printf("{\"role\":\"sink\",\"bytes\":%" PRIu64 ",\"mismatches\":%" PRIu64 "}\n", got, bad);
	return bad ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s rx|tx|txdm|sink|pools|udp-recv [options]   (%s CMD --help)\n",
		prog, prog);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = sig_handler };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "rx"))
		return cmd_rx(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tx"))
		return cmd_tx(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pools"))
		return cmd_pools(argc - 1, argv + 1);
	if (!strcmp(argv[1], "txdm"))
		return cmd_txdm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sink"))
		return cmd_sink(argc - 1, argv + 1);
	if (!strcmp(argv[1], "udp-recv"))
		return cmd_udp_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	err_msg("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
