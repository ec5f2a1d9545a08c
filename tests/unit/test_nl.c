// SPDX-License-Identifier: GPL-2.0
/*
 * The netdev genl parsers (src/collector/nl.c) on crafted messages: the replies the
 * kernel sends (page-pool-get, page-pool-stats-get, queue-get, qstats-get,
 * page-pool notifications) and hostile ones: truncated, attributes running
 * past the message or of the wrong size, trailing bytes, ids out of range.
 * Each bad one is refused with a one-line reason, never read past its end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/genetlink.h>
#include "collector/nl.h"

struct msg {
	unsigned char b[512] __attribute__((aligned(4)));
	size_t len;
	bool raw;	/* attributes only (a nest): no netlink header to update */
};

static struct nlmsghdr *start(struct msg *m, uint8_t cmd)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);

	memset(m, 0, sizeof(*m));
	h->nlmsg_type = 30;
	g->cmd = cmd;
	g->version = 1;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	h->nlmsg_len = m->len;
	return h;
}

/* an attribute of type t with n bytes of payload, padded to 4 */
static struct nlattr *put(struct msg *m, uint16_t t, const void *p, uint16_t n)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);

	a->nla_type = t;
	a->nla_len = NLA_HDRLEN + n;
	if (n)
		memcpy((char *)a + NLA_HDRLEN, p, n);
	m->len += NLA_ALIGN(NLA_HDRLEN + n);
	if (!m->raw)
		((struct nlmsghdr *)m->b)->nlmsg_len = m->len;
	return a;
}

static void put32(struct msg *m, uint16_t t, uint32_t v)
{
	put(m, t, &v, 4);
}

static void put64(struct msg *m, uint16_t t, uint64_t v)
{
	put(m, t, &v, 8);
}

static struct nlmsghdr *hdr(struct msg *m)
{
	return (struct nlmsghdr *)m->b;
}

static void one_line(const char *why)
{
	assert_true(why[0]);
	assert_null(strchr(why, '\n'));
}

static void test_pool(void **state)
{
	struct nl_pool_info p;
	struct msg m;
	char why[160];

	start(&m, 5);
	put32(&m, 1, 17);		/* id as 4 bytes */
	put32(&m, 2, 3);		/* ifindex */
	put32(&m, 3, 8193);		/* napi */
	put64(&m, 4, 65);		/* inflight as 8 bytes */
	put32(&m, 7, 4);		/* dmabuf */
	put32(&m, 99, 1);		/* a newer kernel's attribute: skipped */
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), 0);
	assert_int_equal(p.id, 17);
	assert_int_equal(p.ifindex, 3);
	assert_int_equal(p.napi_id, 8193);
	assert_int_equal(p.inflight, 65);
	assert_int_equal(p.inflight_mem, -1);
	assert_int_equal(p.dmabuf, 4);
	assert_false(p.io_uring);

	/* an io_uring zcrx pool: the empty io-uring nest (8) says so */
	start(&m, 5);
	put32(&m, 1, 18);
	put32(&m, 2, 3);
	put(&m, 8 | NLA_F_NESTED, NULL, 0);
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), 0);
	assert_int_equal(p.id, 18);
	assert_true(p.io_uring);
	assert_int_equal(p.dmabuf, 0);

	/* no id */
	start(&m, 5);
	put32(&m, 2, 3);
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "page-pool-get: no pool id");
	/* id 0 and a 2-byte ifindex */
	start(&m, 5);
	put32(&m, 1, 0);
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	one_line(why);
	start(&m, 5);
	put32(&m, 1, 5);
	put(&m, 2, "ab", 2);
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "page-pool-get: attribute 2 is 2 bytes, not 4");
	/* a 3-byte "uint" */
	start(&m, 5);
	put(&m, 1, "abc", 3);
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "page-pool-get: attribute 1 is 3 bytes, not 4 or 8");
}

static void test_truncated(void **state)
{
	struct nl_pool_info p;
	struct msg m;
	char why[160];
	struct nlattr *a;

	start(&m, 5);
	put32(&m, 1, 17);
	put32(&m, 2, 3);
	/* every cut of the message: refused, or (cut at an attribute) parsed short */
	for (size_t n = 0; n < m.len; n++) {
		int err;

		hdr(&m)->nlmsg_len = m.len;
		err = netdev_nl__parse_pool(hdr(&m), n, &p, why, sizeof(why));
		assert_int_equal(err, -EINVAL);
		one_line(why);
	}
	/* the header says more than was received */
	hdr(&m)->nlmsg_len = m.len + 4;
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	one_line(why);
	/* an attribute claiming more than the message holds */
	start(&m, 5);
	put32(&m, 1, 17);
	a = put(&m, 2, "\x03\0\0\0", 4);
	a->nla_len = 200;
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "page-pool-get: 8 bytes after the last whole attribute");
	/* an attribute length below its own header */
	a->nla_len = 2;
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	one_line(why);
	/* a header shorter than the genl header */
	start(&m, 5);
	hdr(&m)->nlmsg_len = NLMSG_HDRLEN + 2;
	assert_int_equal(netdev_nl__parse_pool(hdr(&m), m.len, &p, why, sizeof(why)), -EINVAL);
	one_line(why);
}

static void test_pp_stats(void **state)
{
	struct nl_pp_stats st;
	struct msg m, nest;
	char why[160];
	struct nlattr *info;
	uint32_t v;

	/* the info nest: id and ifindex */
	memset(&nest, 0, sizeof(nest));
	nest.raw = true;
	put32(&nest, 1, 21);
	put32(&nest, 2, 5);
	start(&m, 9);
	info = put(&m, 1 | NLA_F_NESTED, nest.b, nest.len);
	(void)info;
	for (int i = 0; i < DMT_PPS__COUNT; i++)
		put64(&m, 8 + i, 1000 + i);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)), 0);
	assert_int_equal(st.id, 21);
	assert_int_equal(st.ifindex, 5);
	assert_int_equal(st.v[DMT_PPS_ALLOC_FAST], 1000);
	assert_int_equal(st.v[DMT_PPS_ALLOC_SLOW], 1001);
	assert_int_equal(st.v[DMT_PPS_RECYCLE_RING_FULL], 1009);
	assert_int_equal(st.v[DMT_PPS_RECYCLE_RELEASED_REFCNT], 1010);

	/* an older kernel without some counters: those stay -1 */
	start(&m, 9);
	put(&m, 1 | NLA_F_NESTED, nest.b, nest.len);
	put32(&m, 8, 7);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)), 0);
	assert_int_equal(st.v[DMT_PPS_ALLOC_FAST], 7);
	assert_int_equal(st.v[DMT_PPS_ALLOC_SLOW], -1);

	/* no info, info without an id, a nest with trailing bytes, a counter above INT64_MAX */
	start(&m, 9);
	put32(&m, 8, 7);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "page-pool-stats-get: no pool info");
	start(&m, 9);
	v = 5;
	put(&m, 1 | NLA_F_NESTED, &v, 0);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "page-pool-stats-get: no pool id");
	start(&m, 9);
	put(&m, 1 | NLA_F_NESTED, "\x08\0\x01\0\x15\0\0\0\x07\0", 10);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)),
			 -EINVAL);
	one_line(why);
	start(&m, 9);
	put(&m, 1 | NLA_F_NESTED, nest.b, nest.len);
	put64(&m, 9, UINT64_MAX);
	assert_int_equal(netdev_nl__parse_pp_stats(hdr(&m), m.len, &st, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "page-pool-stats-get: attribute 9 is 18446744073709551615, "
			    "out of range");
}

static void test_queue_qstats(void **state)
{
	struct nl_queue q;
	struct nl_qstats qs;
	struct msg m;
	char why[160];

	start(&m, 10);
	put32(&m, 1, 2);	/* queue 2 */
	put32(&m, 2, 7);	/* of ifindex 7 */
	put32(&m, 3, 0);	/* rx */
	put32(&m, 4, 8195);
	put32(&m, 5, 3);	/* bound to binding 3 */
	assert_int_equal(netdev_nl__parse_queue(hdr(&m), m.len, &q, why, sizeof(why)), 0);
	assert_int_equal(q.id, 2);
	assert_int_equal(q.ifindex, 7);
	assert_int_equal(q.type, 0);
	assert_int_equal(q.napi_id, 8195);
	assert_int_equal(q.dmabuf, 3);
	start(&m, 10);
	put32(&m, 1, 2);
	put32(&m, 3, 0);
	assert_int_equal(netdev_nl__parse_queue(hdr(&m), m.len, &q, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "queue-get: queue without id, ifindex or type");
	start(&m, 10);
	put32(&m, 1, 2);
	put32(&m, 2, 0x80000000u);
	put32(&m, 3, 0);
	assert_int_equal(netdev_nl__parse_queue(hdr(&m), m.len, &q, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "queue-get: ifindex 2147483648 out of range");

	/* device scope: no queue id */
	start(&m, 12);
	put32(&m, 1, 7);
	put64(&m, 8, 123456);
	put64(&m, 12, 3);
	assert_int_equal(netdev_nl__parse_qstats(hdr(&m), m.len, &qs, why, sizeof(why)), 0);
	assert_int_equal(qs.ifindex, 7);
	assert_int_equal(qs.queue, -1);
	assert_int_equal(qs.rx_packets, 123456);
	assert_int_equal(qs.rx_alloc_fail, 3);
	assert_int_equal(qs.rx_hw_drops, -1);	/* the driver does not say */
	/* a queue */
	start(&m, 12);
	put32(&m, 1, 7);
	put32(&m, 2, 0);
	put32(&m, 3, 1);
	put32(&m, 12, 0);
	assert_int_equal(netdev_nl__parse_qstats(hdr(&m), m.len, &qs, why, sizeof(why)), 0);
	assert_int_equal(qs.queue, 1);
	assert_int_equal(qs.rx_alloc_fail, 0);
	start(&m, 12);
	put64(&m, 12, 3);
	assert_int_equal(netdev_nl__parse_qstats(hdr(&m), m.len, &qs, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "qstats-get: no ifindex");
}

static void test_notification(void **state)
{
	struct nl_pp_ntf e;
	struct msg m;
	char why[160];

	start(&m, 6);		/* page-pool-add-ntf */
	put32(&m, 1, 33);
	put32(&m, 2, 9);
	assert_int_equal(netdev_nl__parse_ntf(hdr(&m), m.len, &e, why, sizeof(why)), 0);
	assert_int_equal(e.ev, NL_PP_ADD);
	assert_int_equal(e.pool.id, 33);
	assert_int_equal(e.pool.ifindex, 9);
	start(&m, 7);
	put32(&m, 1, 33);
	assert_int_equal(netdev_nl__parse_ntf(hdr(&m), m.len, &e, why, sizeof(why)), 0);
	assert_int_equal(e.ev, NL_PP_DEL);
	start(&m, 8);
	put32(&m, 1, 33);
	assert_int_equal(netdev_nl__parse_ntf(hdr(&m), m.len, &e, why, sizeof(why)), 0);
	assert_int_equal(e.ev, NL_PP_CHANGE);
	/* another command on the group */
	start(&m, 2);
	put32(&m, 1, 33);
	assert_int_equal(netdev_nl__parse_ntf(hdr(&m), m.len, &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "page-pool notification: command 2 is not one");
}

/* random bytes: refused or parsed, never a read past the buffer (ASan) */
static void test_garbage(void **state)
{
	unsigned int seed = 25;

	for (int i = 0; i < 20000; i++) {
		size_t len = rand_r(&seed) % 96;
		unsigned char *b = malloc(len ? len : 1);
		struct nl_pp_stats st;
		struct nl_pool_info p;
		struct nl_qstats qs;
		struct nl_queue q;
		char why[160];

		for (size_t j = 0; j < len; j++)
			b[j] = rand_r(&seed);
		if (len >= NLMSG_HDRLEN) {
			/* a length within what was received, most of the time */
			uint32_t l = rand_r(&seed) % (len + 8);

			memcpy(b, &l, 4);
		}
		netdev_nl__parse_pool((struct nlmsghdr *)b, len, &p, why, sizeof(why));
		netdev_nl__parse_pp_stats((struct nlmsghdr *)b, len, &st, why, sizeof(why));
		netdev_nl__parse_queue((struct nlmsghdr *)b, len, &q, why, sizeof(why));
		netdev_nl__parse_qstats((struct nlmsghdr *)b, len, &qs, why, sizeof(why));
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_pp_stats),
		cmocka_unit_test(test_queue_qstats),
		cmocka_unit_test(test_notification),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
