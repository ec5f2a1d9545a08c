// SPDX-License-Identifier: GPL-2.0
/*
 * lab-mqrx: one devmem binding over several RX queues, several flows.
 *
 *   lab-mqrx --ifname IF --queues 1,2,3,4 --port P --flows N
 *            [--dmabuf-size SIZE] [--timeout S]
 *
 * Binds one udmabuf to every queue in --queues (one NETDEV_CMD_BIND_RX),
 * accepts one TCP connection on each of the ports P .. P+N-1 (flow i on
 * port P+i, so ntuple rules can steer flows by destination port; busybox
 * nc cannot choose its source port) and receives them all with
 * MSG_SOCK_DEVMEM, checking each frag against ncdevmem's pattern (stream
 * byte k is (k % 7 + 1) % 7, what "yes 010203040506 | tr \\n \\0" sends)
 * and its binding id. Tokens are HELD until every flow has ended, so each
 * queue's page pool then has at least the flow's net_iovs in flight; it
 * prints one JSON line with the per-flow counts ("state":"held") and waits
 * for SIGUSR1 (or --timeout), returns every token, prints the final line
 * ("state":"done") and exits (closing the netlink socket unbinds).
 * Exit: 0 all flows received cleanly, 1 error or mismatch, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/dma-buf.h>
#include <linux/netlink.h>
#include <linux/udmabuf.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "../traffic/devmem-uapi.h"

#define MAX_QUEUES	16
#define MAX_FLOWS	16
#define PAGE		4096UL

struct flow {
	int fd, lfd;
	unsigned int port;
	bool done;
	uint64_t bytes, frags, linear, mismatches, wrong_binding;
	uint32_t *tokens;
	size_t ntok, captok;
	uint8_t *pages;		/* bitmap: dmabuf pages this flow's frags used */
	uint64_t niovs;
};

static volatile sig_atomic_t released;

static void on_usr1(int sig)
{
	released = 1;
}

static int nl_err(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	*(int *)arg = e->error;
	return NL_STOP;
}

static int bind_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[DT_NETDEV_A_DMABUF_MAX + 1];

	if (!genlmsg_parse(nlmsg_hdr(msg), 0, tb, DT_NETDEV_A_DMABUF_MAX, NULL) &&
	    tb[DT_NETDEV_A_DMABUF_ID])
		*(unsigned int *)arg = nla_get_u32(tb[DT_NETDEV_A_DMABUF_ID]);
	return NL_OK;
}

/* One BIND_RX for all @queues; the binding lives while @sk is open. */
static int bind_queues(struct nl_sock *sk, int ifindex, const unsigned int *queues, int nq,
		       int dmabuf_fd, unsigned int *id)
{
	struct nlattr *nest;
	struct nl_msg *msg;
	int family, i, err = 0, nlerr = 0;

	family = genl_ctrl_resolve(sk, DT_NETDEV_FAMILY_NAME);
	if (family < 0)
		return -EPROTONOSUPPORT;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, DT_NETDEV_CMD_BIND_RX, 1) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_IFINDEX, ifindex) ||
	    nla_put_u32(msg, DT_NETDEV_A_DMABUF_FD, dmabuf_fd)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	for (i = 0; i < nq; i++) {
		nest = nla_nest_start(msg, DT_NETDEV_A_DMABUF_QUEUES);
		if (!nest || nla_put_u32(msg, DT_NETDEV_A_QUEUE_ID, queues[i]) ||
		    nla_put_u32(msg, DT_NETDEV_A_QUEUE_TYPE, DT_NETDEV_QUEUE_TYPE_RX)) {
			nlmsg_free(msg);
			return -EMSGSIZE;
		}
		nla_nest_end(msg, nest);
	}
	*id = 0;
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, bind_reply, id);
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, nl_err, &nlerr);
	err = nl_send_sync(sk, msg);	/* frees msg */
	if (nlerr)
		return nlerr;
	if (err < 0)
		return -EIO;
	return *id ? 0 : -ENODATA;
}

static int udmabuf_make(size_t size, int *memfd, int *devfd)
{
	struct udmabuf_create c = { .size = size };
	int fd;

	*devfd = open("/dev/udmabuf", O_RDWR);
	*memfd = memfd_create("lab-mqrx", MFD_ALLOW_SEALING);
	if (*devfd < 0 || *memfd < 0 || ftruncate(*memfd, size) ||
	    fcntl(*memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return -errno;
	c.memfd = *memfd;
	fd = ioctl(*devfd, UDMABUF_CREATE, &c);
	return fd < 0 ? -errno : fd;
}

static void flow_frag(struct flow *f, const struct dt_dmabuf_cmsg *d, const uint8_t *mem,
		      int dmabuf_fd, unsigned int binding, size_t size)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	uint64_t k, pg;
	uint32_t i;

	if (f->ntok == f->captok) {
		size_t n = f->captok ? 2 * f->captok : 1024;
		uint32_t *t = realloc(f->tokens, n * sizeof(*t));

		if (!t) {
			fprintf(stderr, "lab-mqrx: out of memory for tokens\n");
			exit(1);
		}
		f->tokens = t;
		f->captok = n;
	}
	f->tokens[f->ntok++] = d->frag_token;
	f->frags++;
	if (d->dmabuf_id != binding || d->frag_offset + d->frag_size > size) {
		f->wrong_binding++;
		f->bytes += d->frag_size;
		return;
	}
	for (pg = d->frag_offset / PAGE; pg <= (d->frag_offset + d->frag_size - 1) / PAGE; pg++) {
		if (!(f->pages[pg / 8] & (1 << (pg % 8))))
			f->niovs++;
		f->pages[pg / 8] |= 1 << (pg % 8);
	}
	ioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	for (i = 0; i < d->frag_size; i++) {
		k = f->bytes + i;
		if (mem[d->frag_offset + i] != (uint8_t)((k % 7 + 1) % 7))
			f->mismatches++;
	}
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	ioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	f->bytes += d->frag_size;
}

/* 0 at EOF, 1 read something, 2 nothing to read now, -1 error */
static int flow_recv(struct flow *f, const uint8_t *mem, int dmabuf_fd, unsigned int binding,
		     size_t size)
{
	static char ctrl[CMSG_SPACE(sizeof(struct dt_dmabuf_cmsg)) * 1024];
	static char buf[65536];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(f->fd, &m, DT_MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 2 : -1;
	if (n == 0)
		return 0;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		const struct dt_dmabuf_cmsg *d = (const void *)CMSG_DATA(cm);

		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == DT_SCM_DEVMEM_DMABUF) {
			flow_frag(f, d, mem, dmabuf_fd, binding, size);
		} else if (cm->cmsg_type == DT_SCM_DEVMEM_LINEAR) {
			f->linear += d->frag_size;
			f->bytes += d->frag_size;
		}
	}
	return 1;
}

/* SO_DEVMEM_DONTNEED every held token, at most 128 ranges per call */
static uint64_t flow_release(struct flow *f)
{
	struct dt_dmabuf_token t[DT_MAX_DONTNEED_TOKENS];
	uint64_t freed = 0;
	size_t i = 0, n;
	int r;

	while (i < f->ntok) {
		for (n = 0; n < DT_MAX_DONTNEED_TOKENS && i < f->ntok; n++, i++) {
			t[n].token_start = f->tokens[i];
			t[n].token_count = 1;
		}
		r = setsockopt(f->fd, SOL_SOCKET, DT_SO_DEVMEM_DONTNEED, t, n * sizeof(t[0]));
		if (r > 0)
			freed += r;
	}
	return freed;
}

static void print_state(const char *state, unsigned int binding, const unsigned int *q, int nq,
			struct flow *fl, int nf, uint64_t freed)
{
	int i;

	printf("{\"state\":\"%s\",\"binding_id\":%u,\"queues\":[", state, binding);
	for (i = 0; i < nq; i++)
		printf("%s%u", i ? "," : "", q[i]);
	printf("],\"flows\":[");
	for (i = 0; i < nf; i++)
		printf("%s{\"port\":%u,\"done\":%s,\"bytes\":%" PRIu64 ",\"frags\":%" PRIu64
		       ",\"niovs\":%" PRIu64 ",\"tokens\":%zu,\"linear_bytes\":%" PRIu64
		       ",\"mismatches\":%" PRIu64 ",\"wrong_binding\":%" PRIu64 "}",
		       i ? "," : "", fl[i].port, fl[i].done ? "true" : "false", fl[i].bytes,
		       fl[i].frags, fl[i].niovs, fl[i].ntok, fl[i].linear, fl[i].mismatches,
		       fl[i].wrong_binding);
	printf("],\"tokens_returned\":%" PRIu64 "}\n", freed);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "queues", required_argument, NULL, 'q' },
		{ "port", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'n' },
		{ "dmabuf-size", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{}
	};
	unsigned int queues[MAX_QUEUES], binding = 0;
	int nq = 0, nf = 0, port = 0, timeout = 120, ifindex = 0, opt, i, ndone = 0;
	int memfd, devfd, dmabuf_fd, one = 1, rc = 0;
	size_t size = 64UL << 20;
	struct flow fl[MAX_FLOWS] = {};
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	struct nl_sock *sk;
	uint64_t freed = 0;
	uint8_t *mem;
	char *s, *end;
	time_t t0;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifindex = if_nametoindex(optarg);
			break;
		case 'q':
			for (s = strtok(optarg, ","); s; s = strtok(NULL, ",")) {
				queues[nq] = strtoul(s, &end, 10);
				if (*end || end == s || nq == MAX_QUEUES) {
					fprintf(stderr, "lab-mqrx: bad --queues (1..16 numbers)\n");
					return 2;
				}
				nq++;
			}
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'n':
			nf = atoi(optarg);
			break;
		case 's':
			size = strtoul(optarg, &end, 10);
			if (*end == 'M')
				size <<= 20;
			else if (*end)
				size = 0;	/* refused below */
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!ifindex || !nq || port <= 0 || port > 65535 || nf < 1 || nf > MAX_FLOWS ||
	    size < PAGE || size % PAGE || timeout < 1) {
		fprintf(stderr, "usage: lab-mqrx --ifname IF --queues Q,Q,.. --port P --flows N "
			"[--dmabuf-size SIZE[M]] [--timeout S]  (IF must exist, 1..16 flows)\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);

	dmabuf_fd = udmabuf_make(size, &memfd, &devfd);
	if (dmabuf_fd < 0) {
		fprintf(stderr, "lab-mqrx: udmabuf: %s\n", strerror(-dmabuf_fd));
		return 1;
	}
	mem = mmap(NULL, size, PROT_READ, MAP_SHARED, dmabuf_fd, 0);
	sk = nl_socket_alloc();
	if (mem == MAP_FAILED || !sk || genl_connect(sk)) {
		fprintf(stderr, "lab-mqrx: mmap or netlink socket failed\n");
		return 1;
	}
	rc = bind_queues(sk, ifindex, queues, nq, dmabuf_fd, &binding);
	if (rc) {
		fprintf(stderr, "lab-mqrx: bind-rx: %s\n", strerror(-rc));
		return 1;
	}
	fprintf(stderr, "lab-mqrx: binding %u over %d queues\n", binding, nq);

	for (i = 0; i < nf; i++) {
		fl[i].port = port + i;
		fl[i].lfd = socket(AF_INET6, SOCK_STREAM, 0);
		sa.sin6_port = htons(fl[i].port);
		setsockopt(fl[i].lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fl[i].lfd < 0 || bind(fl[i].lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(fl[i].lfd, 1)) {
			fprintf(stderr, "lab-mqrx: listen on %u: %s\n", fl[i].port, strerror(errno));
			return 1;
		}
	}
	fprintf(stderr, "lab-mqrx: listening\n");
	t0 = time(NULL);
	for (i = 0; i < nf; i++) {
		fl[i].fd = accept(fl[i].lfd, NULL, NULL);
		fl[i].pages = calloc(size / PAGE / 8 + 1, 1);
		if (fl[i].fd < 0 || !fl[i].pages) {
			fprintf(stderr, "lab-mqrx: accept: %s\n", strerror(errno));
			return 1;
		}
		close(fl[i].lfd);
	}
	while (ndone < nf && time(NULL) - t0 < timeout) {
		struct pollfd p[MAX_FLOWS];

		for (i = 0; i < nf; i++)
			p[i] = (struct pollfd){ .fd = fl[i].done ? -1 : fl[i].fd, .events = POLLIN };
		if (poll(p, nf, 1000) < 0 && errno != EINTR)
			break;
		for (i = 0; i < nf; i++) {
			int r;

			if (fl[i].done || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			do
				r = flow_recv(&fl[i], mem, dmabuf_fd, binding, size);
			while (r == 1);
			if (r <= 0) {
				fl[i].done = true;
				ndone++;
				if (r < 0) {
					fprintf(stderr, "lab-mqrx: port %u: recvmsg: %s\n",
						fl[i].port, strerror(errno));
					rc = 1;
				}
			}
		}
	}
	print_state("held", binding, queues, nq, fl, nf, 0);
	fprintf(stderr, "lab-mqrx: %d of %d flows ended; holding tokens until SIGUSR1\n",
		ndone, nf);
	t0 = time(NULL);
	while (!released && time(NULL) - t0 < timeout)
		usleep(100000);
	for (i = 0; i < nf; i++)
		freed += flow_release(&fl[i]);
	print_state("done", binding, queues, nq, fl, nf, freed);
	for (i = 0; i < nf; i++) {
		if (!fl[i].done || fl[i].mismatches || fl[i].linear || fl[i].wrong_binding ||
		    !fl[i].bytes)
			rc = 1;
		close(fl[i].fd);
	}
	nl_socket_free(sk);	/* unbinds */
	munmap(mem, size);
	close(dmabuf_fd);
	close(memfd);
	close(devfd);
	return rc;
}
