// SPDX-License-Identifier: GPL-2.0
/*
 * lab-zcrx: an io_uring zero-copy receive (zcrx) server for the lab, ours
 * (upstream's iou-zcrx.c needs liburing >= 2.10; Debian 12 has 2.3). Raw
 * io_uring syscalls against the pinned kernel's own uapi headers (installed
 * from its source by scripts/lab/ncdevmem/build.sh), no library.
 *
 *   lab-zcrx --ifname IF --port P [--queue Q] [--area-size BYTES]
 *            [--rq-entries N] [--expect BYTES] [--seed N]
 *            [--hold N] [--hold-for MS] [--idle-timeout MS]
 *
 * Registers a zcrx interface queue on IF's RX queue Q with one user-memory
 * area, listens on TCP port P, accepts one connection and receives it with
 * a multishot IORING_OP_RECV_ZC, verifying every byte against the lab's
 * pattern (traffic/pattern.h) where the completion says it lies in the
 * area. Every buffer goes back through the refill ring at once, except the
 * first --hold ones, which are kept until the stream ended: then it closes
 * the connection (the sender waits for that), prints
 * "holding" on stderr, waits --hold-for ms (or SIGUSR1), returns them
 * through the refill ring and waits --hold-for ms more before it exits,
 * so that an observer sees them held by user space, then returned and not
 * yet taken back by the kernel (nothing allocates once the stream ended).
 * --hold counts completions (fragments), not buffers: a --hold larger than
 * the area starves the queue (the kernel's allocation fails once ring and
 * area are empty; the stream stalls until --idle-timeout).
 *
 * Prints one JSON line with its counts on stdout; diagnostics on stderr.
 * Exit status: 0 the whole stream (--expect) verified, 1 error, 2 usage,
 * 3 incomplete or corrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#include "../traffic/pattern.h"

#define PAGE_SZ		4096UL
#define RING_ENTRIES	64
#define RECV_TAG	1ULL

static const char *prog = "lab-zcrx";
static volatile sig_atomic_t hold_done;

#define err_msg(fmt, ...) fprintf(stderr, "%s: " fmt "\n", prog, ##__VA_ARGS__)

struct opts {
	const char *ifname;
	unsigned int port, queue, rq_entries, seed, hold, hold_ms, idle_ms;
	unsigned long long area_size, expect;
};

struct ring {
	int fd;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;	/* 32 bytes each: CQE32 */
	unsigned int pending;		/* SQEs queued, not yet submitted */
};

struct zcrx {
	uint32_t id;
	void *area;
	uint64_t area_token;
	unsigned int *rq_head, *rq_tail, rq_mask;
	struct io_uring_zcrx_rqe *rqes;
	unsigned int rq_local_tail;
};

struct counts {
	unsigned long long bytes, cqes, returned, mismatches, outside;
	int term_res;			/* the final CQE's result */
	bool eof;
};

static void on_usr1(int sig)
{
	(void)sig;
	hold_done = 1;
}

static int parse_ull(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *v > max || *s == '-')
		return -1;
	return 0;
}

static int parse_uint(const char *s, unsigned int max, unsigned int *v)
{
	unsigned long long x;

	if (parse_ull(s, max, &x))
		return -1;
	*v = (unsigned int)x;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --ifname IF --port P [--queue Q] [--area-size BYTES]\n"
		"          [--rq-entries N] [--expect BYTES] [--seed N]\n"
		"          [--hold N] [--hold-for MS] [--idle-timeout MS]\n", prog);
}

static int ring_setup(struct ring *r)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			 IORING_SETUP_CQE32,
	};
	size_t sq_sz, cq_sz;
	void *sq, *cq, *sqes;

	r->fd = syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
	if (r->fd < 0)
		return -errno;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		return -EOPNOTSUPP;
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_sz = p.cq_off.cqes + p.cq_entries * 2 * sizeof(struct io_uring_cqe);
	if (cq_sz > sq_sz)
		sq_sz = cq_sz;
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -errno;
	cq = sq;
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		    IORING_OFF_SQES);
	if (sqes == MAP_FAILED)
		return -errno;
	r->sq_head = sq + p.sq_off.head;
	r->sq_tail = sq + p.sq_off.tail;
	r->sq_mask = sq + p.sq_off.ring_mask;
	r->sq_array = sq + p.sq_off.array;
	r->cq_head = cq + p.cq_off.head;
	r->cq_tail = cq + p.cq_off.tail;
	r->cq_mask = cq + p.cq_off.ring_mask;
	r->cqes = cq + p.cq_off.cqes;
	r->sqes = sqes;
	return 0;
}

static struct io_uring_sqe *ring_get_sqe(struct ring *r)
{
	unsigned int tail = *r->sq_tail + r->pending;
	unsigned int idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];

	if (tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >= RING_ENTRIES)
		return NULL;
	memset(sqe, 0, sizeof(*sqe));
	r->sq_array[idx] = idx;
	r->pending++;
	return sqe;
}

/* Submit what is queued and wait for a completion, @ms at most. */
static int ring_enter(struct ring *r, unsigned int ms)
{
	struct __kernel_timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	struct io_uring_getevents_arg arg = { .ts = (uint64_t)(uintptr_t)&ts };
	unsigned int n = r->pending;
	int ret;

	__atomic_store_n(r->sq_tail, *r->sq_tail + n, __ATOMIC_RELEASE);
	r->pending = 0;
	ret = syscall(__NR_io_uring_enter, r->fd, n, 1,
		      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof(arg));
	if (ret < 0 && errno != ETIME && errno != EINTR)
		return -errno;
	return 0;
}

static int zcrx_register(struct ring *r, struct zcrx *z, const struct opts *o, int ifindex)
{
	size_t rq_sz = (PAGE_SZ + o->rq_entries * sizeof(struct io_uring_zcrx_rqe) +
			PAGE_SZ - 1) & ~(PAGE_SZ - 1);
	struct io_uring_zcrx_area_reg area = {};
	struct io_uring_region_desc rd = {};
	struct io_uring_zcrx_ifq_reg reg = {};
	void *rq;

	z->area = mmap(NULL, o->area_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	rq = mmap(NULL, rq_sz, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (z->area == MAP_FAILED || rq == MAP_FAILED)
		return -ENOMEM;
	area.addr = (uint64_t)(uintptr_t)z->area;
	area.len = o->area_size;
	rd.user_addr = (uint64_t)(uintptr_t)rq;
	rd.size = rq_sz;
	rd.flags = IORING_MEM_REGION_TYPE_USER;
	reg.if_idx = ifindex;
	reg.if_rxq = o->queue;
	reg.rq_entries = o->rq_entries;
	reg.area_ptr = (uint64_t)(uintptr_t)&area;
	reg.region_ptr = (uint64_t)(uintptr_t)&rd;
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_ZCRX_IFQ, &reg, 1))
		return -errno;
	z->id = reg.zcrx_id;
	z->area_token = area.rq_area_token;
	z->rq_head = rq + reg.offsets.head;
	z->rq_tail = rq + reg.offsets.tail;
	z->rqes = rq + reg.offsets.rqes;
	z->rq_mask = reg.rq_entries - 1;
	z->rq_local_tail = 0;
	return (int)reg.rq_entries;
}

/* Give one buffer back through the refill ring (published by rq_flush). */
static bool rq_return(struct zcrx *z, uint64_t off, unsigned int len)
{
	struct io_uring_zcrx_rqe *rqe;

	if (z->rq_local_tail - __atomic_load_n(z->rq_head, __ATOMIC_ACQUIRE) > z->rq_mask)
		return false;	/* ring full: the kernel has not taken enough yet */
	rqe = &z->rqes[z->rq_local_tail & z->rq_mask];
	rqe->off = (off & ~IORING_ZCRX_AREA_MASK) | z->area_token;
	rqe->len = len;
	rqe->__pad = 0;
	z->rq_local_tail++;
	return true;
}

static void rq_flush(struct zcrx *z)
{
	__atomic_store_n(z->rq_tail, z->rq_local_tail, __ATOMIC_RELEASE);
}

struct held {
	uint64_t off;
	unsigned int len;
};

static int cmp_off(const void *a, const void *b)
{
	uint64_t x = ((const struct held *)a)->off / PAGE_SZ;
	uint64_t y = ((const struct held *)b)->off / PAGE_SZ;

	return x < y ? -1 : x > y;
}

/* Distinct buffers (PAGE_SZ niovs) among the n held fragments: sorts them. */
static unsigned int held_niovs(struct held *h, unsigned int n)
{
	unsigned int i, d = 0;

	qsort(h, n, sizeof(*h), cmp_off);
	for (i = 0; i < n; i++)
		d += !i || h[i].off / PAGE_SZ != h[i - 1].off / PAGE_SZ;
	return d;
}

static int listen_one(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void wait_hold(unsigned int ms)
{
	struct timespec t = { 0, 10 * 1000000L };
	unsigned int i;

	for (i = 0; i < ms / 10 && !hold_done; i++)
		nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "queue", required_argument, NULL, 'q' },
		{ "area-size", required_argument, NULL, 'a' },
		{ "rq-entries", required_argument, NULL, 'r' },
		{ "expect", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'S' },
		{ "hold", required_argument, NULL, 'H' },
		{ "hold-for", required_argument, NULL, 'F' },
		{ "idle-timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct opts o = { .area_size = 4ULL << 20, .rq_entries = 256, .hold_ms = 2000,
			  .idle_ms = 10000 };
	struct counts c = { .term_res = 1 };
	struct held *held = NULL;
	unsigned int nheld = 0, held_distinct = 0, idle = 0, niovs;
	struct ring r = {};
	struct zcrx z = {};
	int opt, ifindex, lfd, cfd, ret, rq_entries, rc = 0;
	struct io_uring_sqe *sqe;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'i': o.ifname = optarg; break;
		case 'p': if (parse_uint(optarg, 65535, &o.port)) goto bad; break;
		case 'q': if (parse_uint(optarg, 1023, &o.queue)) goto bad; break;
		case 'a': if (parse_ull(optarg, 1ULL << 34, &o.area_size)) goto bad; break;
		case 'r': if (parse_uint(optarg, 32768, &o.rq_entries)) goto bad; break;
		case 'e': if (parse_ull(optarg, 1ULL << 50, &o.expect)) goto bad; break;
		case 'S': if (parse_uint(optarg, 255, &o.seed)) goto bad; break;
		case 'H': if (parse_uint(optarg, 1 << 20, &o.hold)) goto bad; break;
		case 'F': if (parse_uint(optarg, 600000, &o.hold_ms)) goto bad; break;
		case 't': if (parse_uint(optarg, 600000, &o.idle_ms)) goto bad; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!o.ifname || !o.port || optind != argc)
		goto bad;
	if (!o.area_size || o.area_size % PAGE_SZ || !o.rq_entries) {
		err_msg("--area-size must be a non-zero multiple of %lu, --rq-entries non-zero",
			PAGE_SZ);
		return 2;
	}
	niovs = o.area_size / PAGE_SZ;
	ifindex = if_nametoindex(o.ifname);
	if (!ifindex) {
		err_msg("no interface '%s'", o.ifname);
		return 1;
	}
	signal(SIGUSR1, on_usr1);
	held = calloc(o.hold + 1, sizeof(*held));
	if (!held) {
		err_msg("out of memory");
		return 1;
	}
	ret = ring_setup(&r);
	if (ret) {
		err_msg("io_uring setup: %s", strerror(-ret));
		rc = 1;
		goto out;
	}
	rq_entries = zcrx_register(&r, &z, &o, ifindex);
	if (rq_entries < 0) {
		err_msg("register zcrx on %s queue %u: %s", o.ifname, o.queue,
			strerror(-rq_entries));
		rc = 1;
		goto out;
	}
	fprintf(stderr, "%s: zcrx %u on %s queue %u: area %llu bytes (%u buffers of %lu), "
		"refill ring %d entries\n",
		prog, z.id, o.ifname, o.queue, o.area_size, niovs, PAGE_SZ, rq_entries);
	lfd = listen_one(o.port);
	if (lfd < 0) {
		err_msg("listen on port %u: %s", o.port, strerror(-lfd));
		rc = 1;
		goto out;
	}
	fprintf(stderr, "%s: listening on port %u\n", prog, o.port);
	cfd = accept(lfd, NULL, NULL);
	if (cfd < 0) {
		err_msg("accept: %s", strerror(errno));
		rc = 1;
		goto out;
	}
	sqe = ring_get_sqe(&r);
	sqe->opcode = IORING_OP_RECV_ZC;
	sqe->fd = cfd;
	sqe->ioprio = IORING_RECV_MULTISHOT;
	sqe->zcrx_ifq_idx = z.id;
	sqe->user_data = RECV_TAG;

	while (!c.eof) {
		unsigned int head, tail, seen = 0;

		ret = ring_enter(&r, 100);
		if (ret) {
			err_msg("io_uring_enter: %s", strerror(-ret));
			rc = 1;
			break;
		}
		head = *r.cq_head;
		tail = __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE);
		for (; head != tail; head++, seen++) {
			struct io_uring_cqe *cqe = &r.cqes[(head & *r.cq_mask) * 2];
			struct io_uring_zcrx_cqe *rcqe = (void *)(cqe + 1);
			uint64_t off = rcqe->off & ~IORING_ZCRX_AREA_MASK;
			const uint8_t *p;
			int i;

			if (cqe->user_data != RECV_TAG)
				continue;
			if (!(cqe->flags & IORING_CQE_F_MORE)) {
				c.term_res = cqe->res;
				c.eof = true;
				continue;
			}
			if (cqe->res <= 0)
				continue;
			c.cqes++;
			if (off + cqe->res > o.area_size) {
				c.outside++;
				continue;
			}
			p = (const uint8_t *)z.area + off;
			for (i = 0; i < cqe->res; i++)
				c.mismatches += p[i] != pattern_byte(c.bytes + i, o.seed);
			c.bytes += cqe->res;
			if (nheld < o.hold) {
				held[nheld].off = rcqe->off;
				held[nheld].len = cqe->res;
				nheld++;
			} else if (rq_return(&z, rcqe->off, cqe->res)) {
				c.returned++;
			} else {
				err_msg("refill ring full");
			}
		}
		__atomic_store_n(r.cq_head, head, __ATOMIC_RELEASE);
		rq_flush(&z);
		idle = seen ? 0 : idle + 100;
		if (idle >= o.idle_ms) {
			err_msg("no data for %u ms (received %llu bytes)", o.idle_ms, c.bytes);
			break;
		}
	}
	if (c.eof && c.term_res < 0)
		err_msg("receive ended with %s", strerror(-c.term_res));
	/*
	 * The sender waits for our close; the held buffers stay ours (they
	 * belong to the area, not to the socket). Its FIN's ACK is the last
	 * packet the queue receives.
	 */
	close(cfd);
	close(lfd);
	if (nheld) {
		unsigned int i;

		held_distinct = held_niovs(held, nheld);
		/* what an observer checks now: held, and returned through the ring so far */
		fprintf(stderr, "%s: holding %u buffers (%u niovs), %llu returned\n", prog, nheld,
			held_distinct, c.returned);
		wait_hold(o.hold_ms);
		for (i = 0; i < nheld; i++)
			c.returned += rq_return(&z, held[i].off, held[i].len);
		rq_flush(&z);
		hold_done = 0;
		fprintf(stderr, "%s: returned %u buffers\n", prog, nheld);
		wait_hold(o.hold_ms);
	}
	printf("{\"role\":\"zcrx\",\"ifname\":\"%s\",\"ifindex\":%d,\"queue\":%u,\"zcrx_id\":%u,"
	       "\"area_bytes\":%llu,\"buffers\":%u,\"buffer_size\":%lu,\"rq_entries\":%d,"
	       "\"bytes\":%llu,\"cqes\":%llu,\"returned\":%llu,\"held\":%u,\"held_niovs\":%u,"
	       "\"mismatches\":%llu,"
	       "\"outside_area\":%llu,\"eof\":%s,\"end_res\":%d}\n",
	       o.ifname, ifindex, o.queue, z.id, o.area_size, niovs, PAGE_SZ, rq_entries,
	       c.bytes, c.cqes, c.returned, nheld, held_distinct, c.mismatches, c.outside,
	       c.eof ? "true" : "false", c.eof ? c.term_res : 0);
	if (!rc && (c.mismatches || c.outside || (o.expect && c.bytes != o.expect) ||
		    !c.eof || c.term_res < 0))
		rc = 3;
out:
	free(held);
	return rc;
bad:
	usage(stderr);
	return 2;
}
