// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for recordings (src/core/record.c): snapshot encode/decode round
 * trip, a whole file written and read back, truncation at every byte,
 * corruption of every frame, and bad headers.
 */
#include <errno.h>
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "metrics.h"
#include "record.h"

static struct dmt_snapshot *full_snapshot(uint64_t seq)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));

	s->ts_ns = 1000000000ULL * (seq + 1);
	s->wall_ns = 1790000000000000000ULL + seq;
	s->interval_s = 0.5;
	s->seq = seq;
	s->mode = DMT_MODE_FENTRY;
	for (int i = 0; i < DMT_M__COUNT; i++) {
		s->avail[i].available = i % 3 != 0;
		snprintf(s->avail[i].source, sizeof(s->avail[i].source), "src%d", i);
		if (!s->avail[i].available)
			snprintf(s->avail[i].reason, sizeof(s->avail[i].reason), "why %d", i);
	}
	s->n_pools = 3;
	s->pools = calloc(3, sizeof(*s->pools));
	for (int i = 0; i < 3; i++) {
		struct dmt_pool_snap *p = &s->pools[i];

		p->addr = 0xffff888000000000ULL + i * 0x1000;
		p->id = 10 + i;
		p->ifindex = 2 + i;
		snprintf(p->ifname, sizeof(p->ifname), "eth%d-long-name", i);
		p->netns = 4026531840U + i;
		p->queue = i - 1;
		p->napi_id = 8192 + i;
		p->kind = i == 2 ? DMT_KIND_DEVMEM : DMT_KIND_PAGES;
		p->binding_id = i == 2 ? 5 : 0;
		p->attr_src = DMT_ATTR_NETDEV;
		p->netlink_listed = i & 1;
		p->state = i == 1 ? DMT_POOL_ZOMBIE : DMT_POOL_ALIVE;
		p->nid = i - 1;
		p->nid_changes = i;
		p->holds = 1000000 * (seq + 1) + i;
		p->releases = p->holds - 7;
		p->holds_page = p->holds;
		p->holds_niov = 0;
		p->hold_rate = 123.25;
		p->release_rate = -0.0;
		p->inflight = 7;
		p->netlink_inflight = -1;
		p->destroy_inflight = i == 1 ? 42 : -1;
		p->destroy_retries = i;
		hist_batch_add(&p->refill, 64, 100 + seq);
		hist_batch_add(&p->refill, 1, 3);
		hist_batch_add(&p->refill, DMT_BATCH_MAX, 1);
		/* no zcrx pool: its zcrx figures unknown, as snapbuild makes them */
		p->zcrx_niovs = p->zcrx_free_niovs = p->zcrx_user_niovs = -1;
		p->zcrx_rq_pending = p->zcrx_rq_size = -1;
	}
	{
		/* pool 1 an io_uring zcrx pool with every zcrx figure (issue 35) */
		struct dmt_pool_snap *z = &s->pools[1];

		z->kind = DMT_KIND_IO_URING;
		z->zcrx = true;
		z->zcrx_alloc_calls = 40 + seq;
		z->zcrx_alloc_niovs = 2560;
		z->zcrx_alloc_fail = 3;
		z->zcrx_rq_refills = 37;
		z->zcrx_rqes = 2300;
		hist_log2_add(&z->zcrx_alloc_lat_ns, 1500, 40);
		hist_batch_add(&z->zcrx_rq_batch, 64, 35);
		hist_batch_add(&z->zcrx_rq_batch, 2, 2);
		z->zcrx_niovs = 1024;
		z->zcrx_free_niovs = 700;
		z->zcrx_user_niovs = 64;
		z->zcrx_rq_pending = 0;
		z->zcrx_rq_size = 256;
		z->zcrx_niov_size = 4096;
		z->zcrx_areas = 1;
	}
	s->n_bindings = 1;
	s->bindings = calloc(1, sizeof(*s->bindings));
	{
		/* field by field: a compound literal leaves padding undefined */
		struct dmt_binding_snap *b = &s->bindings[0];

		b->id = 5;
		b->ifindex = 4;
		snprintf(b->ifname, sizeof(b->ifname), "eth2-long-name");
		b->dmabuf_size = 1ULL << 31;
		b->niov_size = 4096;
		b->layout = "freelist";
		b->alive = true;
		b->total_niovs = 524288;
		b->free_niovs = 1000;
		b->in_pools = 523000;
		b->held_by_sockets = -1;
		b->occupancy = 0.998;
		b->pools = 1;
		b->alloc_calls = 99;
		b->alloc_niovs = 6336;
		b->alloc_fail = 2;
		b->free_niovs_count = 6000;
		b->out_at_unbind = -1;
		b->out_at_free = -1;
		b->created_ns = 5000000000ULL;
		b->unbound_ns = 0;	/* not seen: stays unknown through the tail */
		b->freed_ns = 7000000000ULL + seq;
	}
	hist_log2_add(&s->bindings[0].alloc_lat_ns, 700, 50);
	hist_log2_add(&s->bindings[0].alloc_lat_ns, UINT64_MAX / 2, 1);
	hist_log2_add(&s->bindings[0].alloc_lat_niov_ns, 20, 50);
	hist_log2_add(&s->bindings[0].free_lat_ns, 1, 9);
	s->dontneed_tokens = 11;
	s->dontneed_calls = 3;
	s->provider_calls = 99;
	s->ringbuf_drops = seq;
	s->map_full = 1;
	s->lat_missed = 2;
	s->bpf_stats_enabled = true;
	s->n_progs = 2;
	s->progs = calloc(2, sizeof(*s->progs));
	snprintf(s->progs[0].name, sizeof(s->progs[0].name), "pp_hold");
	s->progs[0].attached = true;
	s->progs[0].run_time_ns = 12345;
	s->progs[0].run_cnt = 678;
	snprintf(s->progs[1].name, sizeof(s->progs[1].name), "mp_alloc_exit");
	s->collect_ns = 250000;
	return s;
}

static void assert_snap_equal(const struct dmt_snapshot *a, const struct dmt_snapshot *b)
{
	assert_int_equal(a->ts_ns, b->ts_ns);
	assert_int_equal(a->wall_ns, b->wall_ns);
	assert_true(a->interval_s == b->interval_s);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->mode, b->mode);
	assert_memory_equal(a->avail, b->avail, sizeof(a->avail));
	assert_int_equal(a->n_pools, b->n_pools);
	/* pools have no pointers: byte-equal after calloc on both sides */
	assert_memory_equal(a->pools, b->pools, a->n_pools * sizeof(*a->pools));
	assert_int_equal(a->n_bindings, b->n_bindings);
	for (size_t i = 0; i < a->n_bindings; i++) {
		struct dmt_binding_snap x = a->bindings[i], y = b->bindings[i];

		assert_string_equal(x.layout, y.layout);
		x.layout = y.layout = NULL;
		assert_memory_equal(&x, &y, sizeof(x));
	}
	assert_int_equal(a->dontneed_tokens, b->dontneed_tokens);
	assert_int_equal(a->dontneed_calls, b->dontneed_calls);
	assert_int_equal(a->provider_calls, b->provider_calls);
	assert_int_equal(a->ringbuf_drops, b->ringbuf_drops);
	assert_int_equal(a->map_full, b->map_full);
	assert_int_equal(a->lat_missed, b->lat_missed);
	assert_int_equal(a->bpf_stats_enabled, b->bpf_stats_enabled);
	assert_int_equal(a->n_progs, b->n_progs);
	assert_memory_equal(a->progs, b->progs, a->n_progs * sizeof(*a->progs));
	assert_int_equal(a->collect_ns, b->collect_ns);
}

/* The token section of a snapshot without holders: count, 4 empty sparse
 * histograms (count, sum, u16 0), 4 counters. */
#define TOKENS_EMPTY	(4 + 4 * (8 + 8 + 2) + 4 * 8)
/* The holders' cgroups after it (issue 24), none: the count. */
#define CGROUPS_EMPTY	4

/* "u16 n, n x (u16 tag, u64)": the tagged rows of obj, and the pool's flags */
static size_t tail_len(enum mdef_obj obj)
{
	size_t n = obj == MO_POOL;

	for (size_t i = 0; i < mdef_count; i++)
		n += mdefs[i].obj == obj && mdefs[i].rec_tag && mdefs[i].kind == MK_SCALAR;
	return n ? 2 + 10 * n : 0;
}

/*
 * "u16 n, n x (u16 tag, sparse histogram)": obj's histogram rows with a
 * tag, all empty (count, sum, no slot: 20 bytes each)
 */
static size_t hist_tail_len(enum mdef_obj obj)
{
	size_t rows = 0;

	for (size_t i = 0; i < mdef_count; i++)
		rows += mdefs[i].obj == obj && mdefs[i].rec_tag != 0 &&
			mdefs[i].kind != MK_SCALAR;
	return rows ? 2 + rows * (2 + 8 + 8 + 2) : 0;
}

/*
 * A pool's tails: the tagged one (flags and its rows with a series: a pool
 * that is no zcrx pool stores none of the zcrx rows) and, when it has
 * histogram rows with a series, theirs (empty here)
 */
static size_t pool_tail_len(const struct dmt_pool_snap *p)
{
	size_t n = 1, h = 0;

	for (size_t i = 0; i < mdef_count; i++) {
		const struct mdef *d = &mdefs[i];

		if (d->obj != MO_POOL || !d->rec_tag || !mdef_present(d, p))
			continue;
		if (d->kind == MK_SCALAR)
			n++;
		else
			h++;
	}
	return 2 + 10 * n + (h ? 2 + h * (2 + 8 + 8 + 2) : 0);
}

/* the snapshot's tail after the cgroups (issue 25's kernel-wide rows) */
#define SNAP_TAIL	tail_len(MO_GLOBAL)
#define TAIL_EMPTY	(TOKENS_EMPTY + CGROUPS_EMPTY + SNAP_TAIL)

static void test_snapshot_round_trip(void **state)
{
	struct dmt_snapshot *s = full_snapshot(4), *d = NULL, empty = {};
	struct rec_buf b = {};
	char why[200];

	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_snap_equal(s, d);
	snapshot__free(d);

	/*
	 * every proper prefix is refused, never crashes; but for the two that
	 * end where the token section or the holders' cgroups start: those
	 * are recordings made before them (the frame length, checked by the
	 * reader, tells a cut frame)
	 */
	for (size_t n = 0; n < b.len; n++) {
		d = NULL;
		if (n == b.len - TAIL_EMPTY || n == b.len - CGROUPS_EMPTY - SNAP_TAIL ||
		    (SNAP_TAIL && n == b.len - SNAP_TAIL)) {
			assert_int_equal(rec_decode_snapshot(b.p, n, NULL, &d, why, sizeof(why)),
					 0);
			assert_int_equal(d->n_holders, 0);
			snapshot__free(d);
			continue;
		}
		if (!rec_decode_snapshot(b.p, n, NULL, &d, why, sizeof(why)))
			fail_msg("prefix of %zu/%zu bytes accepted", n, b.len);
		assert_null(d);
	}
	rec_buf__free(&b);

	/* an empty snapshot round-trips too */
	assert_int_equal(rec_encode_snapshot(&b, &empty, NULL), 0);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->n_pools, 0);
	assert_null(d->pools);
	snapshot__free(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/* Light mode: its mode and a sampled metric survive a recording. */
static void test_light_round_trip(void **state)
{
	struct dmt_snapshot *s = full_snapshot(2), *d = NULL;
	struct rec_buf b = {};
	char why[200];

	s->mode = DMT_MODE_LIGHT;
	/* listed, not located yet: holds and releases unknown, never 0 (issue 26) */
	s->pools[1].counters_unknown = true;
	s->avail[DMT_M_POOL_REFILL].available = true;
	s->avail[DMT_M_POOL_REFILL].sampled = true;
	memset(s->avail[DMT_M_POOL_REFILL].reason, 0, sizeof(s->avail[0].reason));
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_snap_equal(s, d);
	assert_int_equal(d->mode, DMT_MODE_LIGHT);
	assert_true(d->avail[DMT_M_POOL_REFILL].available);
	assert_true(d->avail[DMT_M_POOL_REFILL].sampled);
	assert_false(d->avail[DMT_M_POOL_HOLDS].sampled);
	assert_false(d->pools[0].counters_unknown);
	assert_true(d->pools[1].counters_unknown);
	snapshot__free(d);
	/* an availability byte above 2 is refused: the block follows its flag at
	 * offset 36 (test_avail_delta) and its u32 count; the first metric's byte */
	assert_int_equal(b.p[37], DMT_M__COUNT);
	assert_int_equal(b.p[41], 0);	/* metric 0 is unavailable in full_snapshot() */
	b.p[41] = 3;
	d = NULL;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "availability is 3, not 0, 1 or 2"));
	assert_null(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * A light-mode pool record from before the pool tail: unknown counters are
 * derived from what light mode did (no address: not located yet).
 */
static void test_pool_tail_absent(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct rec_buf b = {};
	const size_t n_off = 8 + 8 + 8 + 8 + 4 + 1, len_off = n_off + 4;
	uint32_t len;
	size_t cut;
	char why[200];

	s->mode = DMT_MODE_LIGHT;
	s->pools[0].addr = 0;
	s->pools[0].counters_unknown = false;	/* the flag comes from the file, or not */
	assert_int_equal(rec_encode_snapshot(&b, s, s->avail), 0);
	assert_true(s->n_pools >= 2);
	/*
	 * drop the first pool's tails: u16 n, n x (u16 tag, u64): flags and
	 * rows; then its histogram rows' (empty: it is no zcrx pool)
	 */
	cut = pool_tail_len(&s->pools[0]);
	memcpy(&len, b.p + len_off, 4);
	memmove(b.p + len_off + 4 + len - cut, b.p + len_off + 4 + len,
		b.len - (len_off + 4 + len));
	b.len -= cut;
	len -= cut;
	memcpy(b.p + len_off, &len, 4);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, s->avail, &d, why, sizeof(why)), 0);
	assert_true(d->pools[0].counters_unknown);
	assert_false(d->pools[1].counters_unknown);	/* has its tail, and an address */
	snapshot__free(d);
	/* the same file from full mode: a pool without address is just unlisted */
	b.p[32] = DMT_MODE_FENTRY;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, s->avail, &d, why, sizeof(why)), 0);
	assert_false(d->pools[0].counters_unknown);
	snapshot__free(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/* Availability is written only when it changed since what the reader knows. */
static void test_avail_delta(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct dmt_availability prev[DMT_M__COUNT];
	struct rec_buf full = {}, delta = {};
	char why[200];

	memcpy(prev, s->avail, sizeof(prev));
	assert_int_equal(rec_encode_snapshot(&full, s, NULL), 0);
	assert_int_equal(rec_encode_snapshot(&delta, s, prev), 0);
	{
		/* exactly the availability block is left out */
		size_t block = 4;

		for (int i = 0; i < DMT_M__COUNT; i++)
			block += 1 + 2 + strlen(s->avail[i].source) + 2 + strlen(s->avail[i].reason);
		assert_int_equal(full.len - delta.len, block);
	}
	/* decoded against the same previous availability: identical */
	assert_int_equal(rec_decode_snapshot(delta.p, delta.len, prev, &d, why, sizeof(why)), 0);
	assert_snap_equal(s, d);
	snapshot__free(d);
	/* without it: refused, not guessed */
	assert_int_equal(rec_decode_snapshot(delta.p, delta.len, NULL, &d, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "availability refers to an earlier frame"));
	/* a change is written in full */
	prev[3].available = !prev[3].available;
	rec_buf__free(&delta);
	assert_int_equal(rec_encode_snapshot(&delta, s, prev), 0);
	assert_int_equal(delta.len, full.len);
	/* a bad flag */
	delta.p[36] = 7;
	assert_int_equal(rec_decode_snapshot(delta.p, delta.len, prev, &d, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "availability flag 7 invalid"));
	rec_buf__free(&full);
	rec_buf__free(&delta);
	snapshot__free(s);
}

static void test_decode_rejects(void **state)
{
	struct dmt_snapshot *s = full_snapshot(0), *d;
	struct rec_buf b = {};
	char why[200];
	size_t off_mode = 8 + 8 + 8 + 8;

	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	/* attach mode out of range */
	b.p[off_mode] = 9;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "attach mode 9 out of range"));
	rec_buf__free(&b);

	/* a pool count far beyond the frame must not allocate or read past it */
	s->n_pools = 0;
	s->n_bindings = 0;
	s->n_progs = 0;
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	{
		/* the pool count sits right after the availability block */
		struct rec_buf head = {};
		struct dmt_snapshot t = *s;
		size_t off;

		t.n_pools = 0;
		rec_encode_snapshot(&head, &t, NULL);
		off = head.len - (4 + 4 + 6 * 8 + 1 + 4 + 8 + TAIL_EMPTY);
		rec_buf__free(&head);
		b.p[off] = 0xff;
		b.p[off + 1] = 0xff;
		b.p[off + 2] = 0xff;
		b.p[off + 3] = 0x7f;
	}
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "pool count 2147483647 larger than the frame"));
	rec_buf__free(&b);
	snapshot__free(s);
}


/* Token holders and token cost round-trip (issue 11). */
static void test_tokens_round_trip(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct dmt_holder_snap h[3] = {
		{ .pid = 4242, .comm = "devmem-traffic", .binding_id = 3, .tokens = 2211,
		  .niovs = 2176, .oldest_age_ns = 1500000000ULL, .handed = 9000,
		  .returned = 6789 },
		{ .pid = 7, .comm = "rx", .binding_id = 4, .tokens = 1, .niovs = 1,
		  .released = 5 },
		/* light mode, autorelease off: counts unknown, not 0 */
		{ .pid = 9, .comm = "rx", .binding_id = 5, .counts_unknown = true },
	};
	struct rec_buf b = {};
	char why[200];

	s->holders = malloc(sizeof(h));
	assert_non_null(s->holders);
	memcpy(s->holders, h, sizeof(h));
	s->n_holders = 3;
	hist_log2_add(&s->tok_cost.per_recvmsg, 17, 3);
	hist_log2_add(&s->tok_cost.dontneed_ns, 5000, 2);
	s->tok_cost.dontneed_mismatch = 1;
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->n_holders, 3);
	assert_memory_equal(d->holders, h, sizeof(h));
	assert_memory_equal(&d->tok_cost, &s->tok_cost, sizeof(s->tok_cost));
	snapshot__free(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * Issue 37, finding 3: a holder whose pid is unknown keeps its socket inode
 * in the recording (report tells such holders apart by it), written only
 * when known: a holder without one takes the bytes it took before.
 */
static void test_holder_sock_ino(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct rec_buf b = {}, b0 = {};
	char why[200];

	s->holders = calloc(2, sizeof(*s->holders));
	assert_non_null(s->holders);
	s->n_holders = 2;
	s->holders[0] = (struct dmt_holder_snap){ .tokens = 5, .cgroup_id = 500 };
	s->holders[1] = (struct dmt_holder_snap){ .tokens = 4, .cgroup_id = 501 };
	assert_int_equal(rec_encode_snapshot(&b0, s, NULL), 0);
	s->holders[0].sock_ino = 7000;
	s->holders[1].sock_ino = 7001;
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_int_equal(b.len, b0.len + 2 * 8);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->holders[0].pid, 0);
	assert_int_equal(d->holders[0].sock_ino, 7000);
	assert_int_equal(d->holders[1].sock_ino, 7001);
	assert_int_equal(d->holders[1].cgroup_id, 501);
	snapshot__free(d);
	d = NULL;
	assert_int_equal(rec_decode_snapshot(b0.p, b0.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->holders[0].sock_ino, 0);
	snapshot__free(d);
	rec_buf__free(&b);
	rec_buf__free(&b0);
	snapshot__free(s);
}

/*
 * Each holder's cgroup id and path (issue 24) follow the token section; a
 * recording from before them reads with the ids unknown (0, ""), a count
 * that does not match the holders' is damage.
 */
static void test_holder_cgroups(void **state)
{
	static const char pod[] = "/kubepods.slice/kubepods-besteffort.slice/"
		"kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/"
		"cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct rec_buf b = {};
	size_t sect;
	char why[200];

	s->holders = calloc(3, sizeof(*s->holders));
	assert_non_null(s->holders);
	s->n_holders = 3;
	s->holders[0] = (struct dmt_holder_snap){ .pid = 10, .tokens = 5, .cgroup_id = 4242 };
	snprintf(s->holders[0].cgroup, sizeof(s->holders[0].cgroup), "%s", pod);
	/* gone before its path was found: the id alone */
	s->holders[1] = (struct dmt_holder_snap){ .pid = 11, .tokens = 4, .cgroup_id = 77 };
	s->holders[2] = (struct dmt_holder_snap){ .pid = 12, .tokens = 3 };
	snprintf(s->holders[2].comm, sizeof(s->holders[2].comm), "rx");
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->n_holders, 3);
	assert_memory_equal(d->holders, s->holders, 3 * sizeof(*s->holders));
	snapshot__free(d);

	/* the section: u32 3, then (u32 len, u64 id, u16 + path) per holder */
	sect = b.len - SNAP_TAIL - 4 - 3 * (4 + 8 + 2) - strlen(pod);
	assert_int_equal(b.p[sect], 3);
	/* cut there: a recording from before it */
	assert_int_equal(rec_decode_snapshot(b.p, sect, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->n_holders, 3);
	assert_int_equal(d->holders[0].pid, 10);
	assert_int_equal(d->holders[0].cgroup_id, 0);
	assert_string_equal(d->holders[0].cgroup, "");
	snapshot__free(d);
	/* two cgroups for three holders */
	b.p[sect] = 2;
	d = NULL;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "2 holder cgroups for 3 token holders"));
	assert_null(d);
	/* an entry longer than the frame */
	b.p[sect] = 3;
	b.p[sect + 4] = 0xff;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_null(d);
	/* entries with more than this reader knows (a newer writer's): skipped */
	{
		uint8_t *p = malloc(sect + 4 + 3 * 20);
		size_t o = sect;

		assert_non_null(p);
		memcpy(p, b.p, sect);
		memcpy(p + o, "\3\0\0\0", 4);
		o += 4;
		for (int i = 0; i < 3; i++) {
			/* len 16: id 900 + i, path "", 6 bytes of a later field */
			memcpy(p + o, "\20\0\0\0", 4);
			memset(p + o + 4, 0, 16);
			p[o + 4] = 0x84 + i;
			p[o + 5] = 0x03;
			memset(p + o + 14, 0xee, 6);
			o += 20;
		}
		assert_int_equal(rec_decode_snapshot(p, o, NULL, &d, why, sizeof(why)), 0);
		assert_int_equal(d->holders[0].cgroup_id, 900);
		assert_int_equal(d->holders[2].cgroup_id, 902);
		assert_string_equal(d->holders[1].cgroup, "");
		snapshot__free(d);
		free(p);
	}
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * The length of a binding's histogram tail when its tagged histograms are
 * empty (full_snapshot fills none of them): n, then per row its tag, count,
 * sum and no slot; none without such a row.
 */
static size_t binding_hist_tail_len(void)
{
	return hist_tail_len(MO_BINDING);
}

/*
 * The metric table's stored rows travel in a tagged tail after the version 1
 * binding fields: a tag this reader does not know is skipped, not an error.
 */
static void test_binding_tail(void **state)
{
	struct dmt_snapshot *s = full_snapshot(2), *d = NULL;
	struct rec_buf b = {};
	char why[200];
	/* after the bindings: 6 counters, bpf_stats, program count, collect_ns */
	size_t after = 6 * 8 + 1 + 4 + 8 + TAIL_EMPTY, tail, stored = 0;

	for (size_t i = 0; i < mdef_count; i++)
		stored += mdefs[i].obj == MO_BINDING && mdefs[i].rec_tag != 0 &&
			  mdefs[i].kind == MK_SCALAR;
	s->n_pools = 0;
	s->n_progs = 0;
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	tail = b.len - after - (2 + stored * 10) - binding_hist_tail_len();
	assert_int_equal(b.p[tail], stored);	/* every row with a tag */
	assert_int_equal(b.p[tail + 2], 1);	/* created_ns */
	b.p[tail + 2] = 0xe7;			/* tag 999: a newer writer's */
	b.p[tail + 3] = 0x03;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), 0);
	assert_int_equal(d->bindings[0].created_ns, 0);
	assert_int_equal(d->bindings[0].freed_ns, 7000000002ULL);
	assert_int_equal(d->bindings[0].total_niovs, 524288);
	snapshot__free(d);
	/* a tail count that runs past the record is damage */
	b.p[tail] = 200;
	assert_int_equal(rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "binding tail count 200"));
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * The snapshot's tail (kernel-wide rows with a tag) comes after the token
 * section, only when a row has a tag; a reader skips tags it does not know
 * and calls a count that runs past the frame damage.
 */
static void test_snapshot_tail(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct rec_buf b = {};
	const uint8_t tail[] = { 1, 0, 0xe7, 0x03, 7, 0, 0, 0, 0, 0, 0, 0 };
	size_t stored = 0;
	char why[200];

	for (size_t i = 0; i < mdef_count; i++)
		stored += mdefs[i].obj == MO_GLOBAL && mdefs[i].rec_tag != 0;
	s->tok_cost.holders_full = 0x1122334455667788ULL;	/* the token section's last u64 */
	s->n_holders = 0;	/* then the holders' cgroups are one u32 0 */
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	if (!stored) {
		uint64_t last;
		uint32_t n_cg;

		/* nothing written: the frame ends with the holders' cgroups */
		memcpy(&last, b.p + b.len - 12, 8);
		memcpy(&n_cg, b.p + b.len - 4, 4);
		assert_int_equal(le64toh(last), 0x1122334455667788ULL);
		assert_int_equal(le32toh(n_cg), 0);
	}
	/* a newer writer's tail instead of ours: tag 999 */
	b.len -= SNAP_TAIL;
	b.p = realloc(b.p, b.len + sizeof(tail));
	assert_non_null(b.p);
	memcpy(b.p + b.len, tail, sizeof(tail));
	assert_int_equal(rec_decode_snapshot(b.p, b.len + sizeof(tail), NULL, &d, why,
					     sizeof(why)), 0);
	assert_snap_equal(s, d);
	snapshot__free(d);
	d = NULL;
	b.p[b.len] = 200;
	assert_int_equal(rec_decode_snapshot(b.p, b.len + sizeof(tail), NULL, &d, why,
					     sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "snapshot tail count 200"));
	assert_null(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * A binding record with a histogram tail after its tagged tail (written by
 * a table with a tagged histogram row): this reader reads past tags it does
 * not know, and a count that runs past the record is damage.
 */
static void test_hist_tail(void **state)
{
	struct dmt_snapshot *s = full_snapshot(1), *d = NULL;
	struct rec_buf b = {};
	/* n 1; tag 999: count 3, sum 30, one slot (2: 3) */
	const uint8_t tail[] = {
		1, 0, 0xe7, 0x03, 3, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 0,
	};
	/* where the table has tagged rows, the 999 row joins their tail instead */
	size_t own = binding_hist_tail_len(), skip = own ? 2 : 0, n_at;
	/* the binding's length: no pools, availability as in the frame before */
	const size_t at = 8 + 8 + 8 + 8 + 4 + 1 + 4 + 4;
	uint32_t len, nlen;
	size_t end;
	uint8_t *p;
	char why[200];

	s->n_pools = 0;
	assert_int_equal(rec_encode_snapshot(&b, s, s->avail), 0);
	memcpy(&len, b.p + at, 4);
	end = at + 4 + le32toh(len);
	p = malloc(b.len + sizeof(tail));
	assert_non_null(p);
	memcpy(p, b.p, end);
	memcpy(p + end, tail + skip, sizeof(tail) - skip);
	memcpy(p + end + sizeof(tail) - skip, b.p + end, b.len - end);
	nlen = htole32(le32toh(len) + sizeof(tail) - skip);
	memcpy(p + at, &nlen, 4);
	n_at = own ? end - own : end;
	if (own)
		p[n_at] += 1;
	assert_int_equal(rec_decode_snapshot(p, b.len + sizeof(tail) - skip, s->avail, &d, why,
					     sizeof(why)), 0);
	assert_snap_equal(s, d);
	snapshot__free(d);
	d = NULL;
	p[n_at] = 200;
	assert_int_equal(rec_decode_snapshot(p, b.len + sizeof(tail) - skip, s->avail, &d, why,
					     sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "histogram tail count 200"));
	assert_null(d);
	free(p);
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * A recording written before the metric table (tests/unit/fixtures/
 * rec-v1.dmtrec, see gen-rec-v1.c there) still reads, with every value it
 * had and the figures it could not carry unknown.
 */
static void test_v1_fixture(void **state)
{
	char path[512];
	const char *slash = strrchr(__FILE__, '/');
	struct rec_reader *r;
	struct rec_item it;
	int n_snap = 0, n_ev = 0, ret;

	snprintf(path, sizeof(path), "%.*sfixtures/rec-v1.dmtrec",
		 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
	r = rec_reader__open(path);
	if (!r)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	while ((ret = rec_reader__next(r, &it)) > 0) {
		if (it.type == REC_EVENT) {
			assert_int_equal(it.ev.type, DMT_EV_POOL_RELEASE);
			assert_int_equal(it.ev.id, 11);
			n_ev++;
		}
		if (it.type != REC_SNAPSHOT)
			continue;
		n_snap++;
		assert_int_equal(it.snap->n_pools, 2);
		assert_int_equal(it.snap->pools[1].state,
				 n_snap == 2 ? DMT_POOL_DESTROYED : DMT_POOL_ALIVE);
		assert_int_equal(it.snap->pools[0].holds, 1000 * n_snap);
		assert_int_equal(it.snap->n_bindings, 1);
		assert_string_equal(it.snap->bindings[0].layout, "freelist");
		assert_int_equal(it.snap->bindings[0].niov_size, 4096);
		assert_int_equal(it.snap->bindings[0].free_niovs, 16384 - 128 - (n_snap - 1));
		assert_int_equal(it.snap->bindings[0].held_by_sockets, -1);
		assert_int_equal(it.snap->bindings[0].alloc_lat_ns.count, 2 + (n_snap - 1));
		/* not in version 1: unknown */
		assert_int_equal(it.snap->bindings[0].created_ns, 0);
		assert_int_equal(it.snap->bindings[0].freed_ns, 0);
		snapshot__free(it.snap);
	}
	if (ret)
		fail_msg("%s", rec_reader__error(r));
	assert_int_equal(n_snap, 2);
	assert_int_equal(n_ev, 1);
	assert_string_equal(rec_reader__meta(r)->kernel, "6.18.0-fixture");
	rec_reader__free(r);
}

/*
 * A recording older than binding_token_events: the full modes' token
 * counters were covered by binding_held_by_sockets, light mode never had
 * them (they read 0 there, and a light-mode gate on them passed).
 */
static void test_avail_upgrade(void **state)
{
	struct dmt_availability a[DMT_M__COUNT] = {};

	a[DMT_M_BIND_HELD_BY_SOCKETS].available = true;
	snprintf(a[DMT_M_BIND_HELD_BY_SOCKETS].source, 64, "tp_btf/devmem_token_*");
	rec_avail__upgrade(a, DMT_M_BIND_TOKEN_EVENTS, DMT_MODE_DEVMEM_TP);
	assert_true(a[DMT_M_BIND_TOKEN_EVENTS].available);
	assert_string_equal(a[DMT_M_BIND_TOKEN_EVENTS].source, "tp_btf/devmem_token_*");
	/* light mode with the iterator: held exact, the counters unknown */
	snprintf(a[DMT_M_BIND_HELD_BY_SOCKETS].source, 64, "iter/tcp");
	rec_avail__upgrade(a, DMT_M_BIND_TOKEN_EVENTS, DMT_MODE_LIGHT);
	assert_false(a[DMT_M_BIND_TOKEN_EVENTS].available);
	assert_string_equal(a[DMT_M_BIND_TOKEN_EVENTS].reason, DMT_LIGHT_NO_TOKENS);
	/* full mode without token hooks: their reason */
	a[DMT_M_BIND_HELD_BY_SOCKETS].available = false;
	snprintf(a[DMT_M_BIND_HELD_BY_SOCKETS].reason, 160, "tcp_destroy_sock: not attached");
	rec_avail__upgrade(a, DMT_M_BIND_TOKEN_EVENTS, DMT_MODE_TP_ONLY);
	assert_false(a[DMT_M_BIND_TOKEN_EVENTS].available);
	assert_string_equal(a[DMT_M_BIND_TOKEN_EVENTS].reason, "tcp_destroy_sock: not attached");
	/* a recording that has the key keeps what it wrote */
	a[DMT_M_BIND_TOKEN_EVENTS] = (struct dmt_availability){ .available = true };
	rec_avail__upgrade(a, DMT_M__COUNT, DMT_MODE_LIGHT);
	assert_true(a[DMT_M_BIND_TOKEN_EVENTS].available);
	/* older still: a metric after it is unknown */
	rec_avail__upgrade(a, DMT_M_POOL_STATS, DMT_MODE_LIGHT);
	assert_false(a[DMT_M_QSTATS].available);
	assert_string_equal(a[DMT_M_QSTATS].reason, "not in this recording");
}

static struct rec_meta *meta(void)
{
	static char *log[] = { "probe pp_hold tp_btf ok", "attach mode: fentry" };
	struct rec_meta *m = calloc(1, sizeof(*m));

	snprintf(m->version, sizeof(m->version), "0.1.0");
	snprintf(m->kernel, sizeof(m->kernel), "6.18.0-test");
	snprintf(m->host, sizeof(m->host), "h");
	snprintf(m->cmdline, sizeof(m->cmdline), "kperf --rx");
	m->start_wall_ns = 1;
	m->start_mono_ns = 2;
	m->interval_ns = 500000000;
	m->mode = DMT_MODE_FENTRY;
	m->avail[DMT_M_POOL_HOLDS].available = true;
	snprintf(m->avail[DMT_M_BIND_LEAKS].reason, 160, "fexit refused");
	m->n_probe_log = 2;
	m->probe_log = log;
	/* the round trips compare addresses: keep them (test_private covers the default) */
	m->kernel_addresses = true;
	return m;
}

/* Write meta, 3 snapshots with events between, end; return the file bytes. */
static uint8_t *write_recording(const char *path, size_t *len, size_t *frame_end, int *n_frames)
{
	struct rec_meta *m = meta();
	struct rec_writer *w = rec_writer__open(path, m);
	struct rec_end end = { .n_snapshots = 3, .n_events = 2, .ringbuf_drops = 2,
			       .reason = REC_END_COMMAND, .exit_status = 0 };
	struct dmt_event ev = { .ts_ns = 5, .addr = 0xabc, .a = -1, .b = 2, .c = 3,
				.type = DMT_EV_POOL_RELEASE, .id = 10, .ifindex = -4 };
	uint8_t *buf;
	FILE *f;
	int k = 0;

	assert_non_null(w);
	frame_end[k++] = rec_writer__bytes(w);
	for (int i = 0; i < 3; i++) {
		struct dmt_snapshot *s = full_snapshot(i);

		assert_int_equal(rec_writer__snapshot(w, s), 0);
		frame_end[k++] = rec_writer__bytes(w);
		snapshot__free(s);
		if (i < 2) {
			ev.ts_ns = i;
			assert_int_equal(rec_writer__event(w, &ev), 0);
			frame_end[k++] = rec_writer__bytes(w);
		}
	}
	assert_int_equal(rec_writer__end(w, &end), 0);
	frame_end[k++] = rec_writer__bytes(w);
	assert_int_equal(rec_writer__close(w), 0);
	*n_frames = k;
	free(m);

	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	rewind(f);
	buf = malloc(*len);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	assert_int_equal(*len, frame_end[k - 1]);
	return buf;
}

/* Read everything from a memory image; returns items read, *ret the last code. */
static int read_all(const uint8_t *p, size_t len, int *ret, char *err, size_t errlen,
		    struct rec_end *end)
{
	FILE *f = fmemopen((void *)p, len ? len : 1, "rb");
	struct rec_reader *r;
	struct rec_item it;
	int n = 0;

	assert_non_null(f);
	if (!len) {
		/* fmemopen cannot open 0 bytes: read from an empty file instead */
		fclose(f);
		f = fopen("/dev/null", "rb");
	}
	r = rec_reader__open_file(f, "rec");
	assert_non_null(r);
	err[0] = '\0';
	if (!rec_reader__meta(r)) {
		*ret = -EBADMSG;
		snprintf(err, errlen, "%s", rec_reader__error(r));
		rec_reader__free(r);
		return -1;
	}
	while ((*ret = rec_reader__next(r, &it)) > 0) {
		n++;
		if (it.type == REC_SNAPSHOT) {
			assert_int_equal(it.snap->seq, (uint64_t)(n - 1) / 2);
			snapshot__free(it.snap);
		} else if (it.type == REC_EVENT) {
			assert_int_equal(it.ev.a, -1);
			assert_int_equal(it.ev.ifindex, -4);
			assert_int_equal(it.ev.addr, 0xabc);
		} else if (it.type == REC_END && end) {
			*end = it.end;
		}
	}
	if (*ret < 0)
		snprintf(err, errlen, "%s", rec_reader__error(r));
	rec_reader__free(r);
	return n;
}

static void test_file_round_trip(void **state)
{
	char path[] = "/tmp/dmt-rec-XXXXXX", err[800];
	size_t len, fe[16];
	struct rec_end end = {};
	struct rec_reader *r;
	uint8_t *buf;
	int fd = mkstemp(path), nf, ret, n;

	assert_true(fd >= 0);
	close(fd);
	buf = write_recording(path, &len, fe, &nf);
	assert_int_equal(nf, 7);

	r = rec_reader__open(path);
	assert_non_null(r);
	assert_non_null(rec_reader__meta(r));
	assert_string_equal(rec_reader__meta(r)->kernel, "6.18.0-test");
	assert_string_equal(rec_reader__meta(r)->cmdline, "kperf --rx");
	assert_int_equal(rec_reader__meta(r)->n_probe_log, 2);
	assert_string_equal(rec_reader__meta(r)->probe_log[1], "attach mode: fentry");
	assert_true(rec_reader__meta(r)->avail[DMT_M_POOL_HOLDS].available);
	assert_string_equal(rec_reader__meta(r)->avail[DMT_M_BIND_LEAKS].reason, "fexit refused");
	rec_reader__free(r);

	n = read_all(buf, len, &ret, err, sizeof(err), &end);
	assert_int_equal(ret, 0);
	assert_int_equal(n, 6);
	assert_int_equal(end.n_snapshots, 3);
	assert_int_equal(end.ringbuf_drops, 2);
	assert_int_equal(end.reason, REC_END_COMMAND);

	/* every snapshot comes back field for field (the first carries the
	 * availability, the others refer to it) */
	{
		struct rec_item it;
		int k = 0;

		r = rec_reader__open(path);
		while (rec_reader__next(r, &it) > 0) {
			struct dmt_snapshot *want;

			if (it.type != REC_SNAPSHOT)
				continue;
			want = full_snapshot(k++);
			assert_snap_equal(want, it.snap);
			snapshot__free(it.snap);
			snapshot__free(want);
		}
		assert_int_equal(k, 3);
		rec_reader__free(r);
	}
	free(buf);
	unlink(path);
}

/* Cut the file at every byte: what was whole before the cut is read, then a
 * one-line error that names truncation; never a crash, never success. */
static void test_truncation(void **state)
{
	char path[] = "/tmp/dmt-rec-XXXXXX", err[800];
	size_t len, fe[16];
	uint8_t *buf;
	int fd = mkstemp(path), nf, ret, n;

	assert_true(fd >= 0);
	close(fd);
	buf = write_recording(path, &len, fe, &nf);
	for (size_t cut = 0; cut < len; cut++) {
		int whole = 0;

		n = read_all(buf, cut, &ret, err, sizeof(err), NULL);
		if (ret >= 0)
			fail_msg("cut at %zu/%zu: no error", cut, len);
		if (strchr(err, '\n') || !err[0])
			fail_msg("cut at %zu: bad message '%s'", cut, err);
		if (cut < 8) {
			if (!strstr(err, "not a devmemtop recording"))
				fail_msg("cut at %zu: '%s'", cut, err);
			continue;
		}
		if (!strstr(err, "truncated"))
			fail_msg("cut at %zu: '%s' does not say truncated", cut, err);
		/* frames after META wholly before the cut must all have been read */
		for (int k = 1; k < nf; k++)
			if (fe[k] <= cut)
				whole++;
		if (cut >= fe[0] && n != whole)
			fail_msg("cut at %zu: read %d items, %d were whole", cut, n, whole);
	}
	free(buf);
	unlink(path);
}

/* Flip one byte inside every frame: CRC mismatch at that frame, and every
 * frame before it read. */
static void test_corruption(void **state)
{
	char path[] = "/tmp/dmt-rec-XXXXXX", err[800], want[64];
	size_t len, fe[16];
	uint8_t *buf;
	int fd = mkstemp(path), nf, ret, n;

	assert_true(fd >= 0);
	close(fd);
	buf = write_recording(path, &len, fe, &nf);
	for (int k = 0; k < nf; k++) {
		size_t start = k ? fe[k - 1] : 16;

		/* a payload byte, the CRC itself, and the type field */
		size_t spots[] = { fe[k] - 1, start + 8, start };

		for (size_t j = 0; j < 3; j++) {
			buf[spots[j]] ^= 0x40;
			n = read_all(buf, len, &ret, err, sizeof(err), NULL);
			buf[spots[j]] ^= 0x40;
			assert_true(ret < 0);
			snprintf(want, sizeof(want), "frame %d", k + 1);
			if (!strstr(err, "CRC mismatch") || !strstr(err, want))
				fail_msg("frame %d spot %zu: '%s'", k + 1, j, err);
			if (k > 0 && n != k - 1)
				fail_msg("frame %d: read %d items before it", k + 1, n);
		}
	}
	/* a length field too large to be true */
	buf[fe[1] + 7] = 0xff;
	n = read_all(buf, len, &ret, err, sizeof(err), NULL);
	assert_int_equal(n, 1);
	assert_non_null(strstr(err, "corrupt frame 3 at byte"));
	assert_non_null(strstr(err, "exceeds"));
	free(buf);
	unlink(path);
}

static void test_bad_headers(void **state)
{
	char path[] = "/tmp/dmt-rec-XXXXXX", err[800];
	size_t len, fe[16];
	uint8_t *buf;
	int fd = mkstemp(path), nf, ret;

	assert_true(fd >= 0);
	close(fd);
	buf = write_recording(path, &len, fe, &nf);
	buf[0] = 'X';
	read_all(buf, len, &ret, err, sizeof(err), NULL);
	assert_string_equal(err, "rec: not a devmemtop recording (bad magic)");
	buf[0] = 'D';
	buf[8] = 2;
	read_all(buf, len, &ret, err, sizeof(err), NULL);
	assert_string_equal(err, "rec: recording format version 2, this devmemtop reads version 1");
	buf[8] = 1;
	/* data after the end frame */
	{
		uint8_t *two = malloc(2 * len);

		memcpy(two, buf, len);
		memcpy(two + len, buf + fe[0], fe[1] - fe[0]);
		read_all(two, len + fe[1] - fe[0], &ret, err, sizeof(err), NULL);
		assert_non_null(strstr(err, "after the end frame"));
		free(two);
	}
	assert_null(rec_reader__open("/nonexistent/x.dmtrec"));
	assert_int_equal(errno, ENOENT);
	free(buf);
	unlink(path);
}

/*
 * The writer never emits more than a reader accepts (issue 13): a snapshot
 * past REC_MAX_POOLS/BINDINGS/PROGS keeps the first ones and counts the
 * rest in map_full, and the largest snapshot it can write (every pool and
 * binding with full histograms and the longest names) fits in a frame.
 */
static void test_writer_limits(void **state)
{
	struct dmt_snapshot *s = full_snapshot(0), *d = NULL;
	size_t np = REC_MAX_POOLS + 5, nb = REC_MAX_BINDINGS + 1, ng = REC_MAX_PROGS + 2;
	struct rec_buf b = {};
	char why[200];

	s->pools = realloc(s->pools, np * sizeof(*s->pools));
	s->bindings = realloc(s->bindings, nb * sizeof(*s->bindings));
	s->progs = realloc(s->progs, ng * sizeof(*s->progs));
	assert_true(s->pools && s->bindings && s->progs);
	for (size_t i = 0; i < np; i++) {
		s->pools[i] = s->pools[0];
		s->pools[i].addr += i * 64;
		memset(s->pools[i].ifname, 'x', sizeof(s->pools[i].ifname) - 1);
		for (int k = 0; k <= DMT_BATCH_MAX; k++)
			s->pools[i].refill.slots[k] = UINT64_MAX - k;
	}
	for (size_t i = 0; i < nb; i++) {
		s->bindings[i] = s->bindings[0];
		s->bindings[i].id = i + 1;
		for (int k = 0; k < DMT_LOG2_SLOTS; k++) {
			s->bindings[i].alloc_lat_ns.slots[k] = UINT64_MAX;
			s->bindings[i].alloc_lat_niov_ns.slots[k] = UINT64_MAX;
			s->bindings[i].free_lat_ns.slots[k] = UINT64_MAX;
		}
	}
	for (size_t i = 0; i < ng; i++) {
		memset(&s->progs[i], 0, sizeof(s->progs[i]));
		memset(s->progs[i].name, 'p', sizeof(s->progs[i].name) - 1);
	}
	s->n_pools = np;
	s->n_bindings = nb;
	s->n_progs = ng;
	assert_int_equal(rec_encode_snapshot(&b, s, NULL), 0);
	assert_true(b.len <= REC_MAX_FRAME);
	if (rec_decode_snapshot(b.p, b.len, NULL, &d, why, sizeof(why)))
		fail_msg("decode: %s", why);
	assert_int_equal(d->n_pools, REC_MAX_POOLS);
	assert_int_equal(d->n_bindings, REC_MAX_BINDINGS);
	assert_int_equal(d->n_progs, REC_MAX_PROGS);
	assert_int_equal(d->map_full, s->map_full + 5 + 1);
	assert_int_equal(d->pools[REC_MAX_POOLS - 1].addr, s->pools[REC_MAX_POOLS - 1].addr);
	snapshot__free(d);
	rec_buf__free(&b);
	snapshot__free(s);
}

/*
 * Recordings are private by default (issue 13): mode 0600 whatever the
 * umask, also when replacing a 0644 file; no kernel address in the file
 * (pool and event addresses pseudonymised but still one per object, the
 * kallsyms address in the probe log hidden); header flags 0.
 */
static void test_private(void **state)
{
	static char *log[] = { "kallsyms: mp_dmabuf_devmem_alloc_netmems=0xffffffff81a2b3c4 "
			       "io_pp_zc_alloc_netmems=0", "probe pp_hold tp_btf ok" };
	char path[] = "/tmp/dmt-rec-XXXXXX", pat[20];
	struct rec_meta *m = meta();
	struct dmt_event ev = { .ts_ns = 1, .addr = 0xffff888000001000ULL,
				.type = DMT_EV_POOL_RELEASE, .id = 11 };
	uint64_t first_addr[3] = {};
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item it;
	struct stat st;
	mode_t old;
	uint8_t *buf;
	size_t len;
	FILE *f;
	int fd = mkstemp(path), k = 0;

	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0644), 0);
	close(fd);
	m->kernel_addresses = false;
	m->probe_log = log;
	old = umask(0);
	w = rec_writer__open(path, m);
	umask(old);
	assert_non_null(w);
	for (int i = 0; i < 2; i++) {
		struct dmt_snapshot *s = full_snapshot(i);

		assert_int_equal(rec_writer__snapshot(w, s), 0);
		snapshot__free(s);
	}
	assert_int_equal(rec_writer__event(w, &ev), 0);
	assert_int_equal(rec_writer__end(w, &(struct rec_end){ .exit_status = -1 }), 0);
	assert_int_equal(rec_writer__close(w), 0);
	free(m);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* no address bytes anywhere in the file */
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
	assert_int_equal(buf[12] | buf[13] | buf[14] | buf[15], 0);
	for (int i = 0; i < 3; i++) {
		uint64_t a = 0xffff888000000000ULL + i * 0x1000;

		memcpy(pat, &a, 8);
		assert_null(memmem(buf, len, pat, 8));
	}
	memcpy(pat, &ev.addr, 8);
	assert_null(memmem(buf, len, pat, 8));
	assert_null(memmem(buf, len, "ffffffff81a2b3c4", 16));
	free(buf);

	r = rec_reader__open(path);
	assert_non_null(rec_reader__meta(r));
	assert_false(rec_reader__meta(r)->kernel_addresses);
	assert_string_equal(rec_reader__meta(r)->probe_log[0],
			    "kallsyms: mp_dmabuf_devmem_alloc_netmems=(hidden) "
			    "io_pp_zc_alloc_netmems=0");
	while (rec_reader__next(r, &it) > 0) {
		if (it.type != REC_SNAPSHOT)
			continue;
		for (int i = 0; i < 3; i++) {
			uint64_t a = it.snap->pools[i].addr;

			assert_true(a && a != 0xffff888000000000ULL + i * 0x1000);
			if (!k)
				first_addr[i] = a;
			/* the same pool keeps its pseudonym, distinct pools differ */
			assert_int_equal(a, first_addr[i]);
			assert_true(!i || a != it.snap->pools[i - 1].addr);
		}
		k++;
		snapshot__free(it.snap);
	}
	assert_int_equal(k, 2);
	rec_reader__free(r);
	unlink(path);
}

/*
 * Every bit of the header's flags is checked (issue 13): a flip is refused
 * in a default recording (flags 0) and in one with kernel addresses (the
 * META CRC then covers the header).
 */
static void test_header_flags(void **state)
{
	char path[] = "/tmp/dmt-rec-XXXXXX", err[800];
	size_t len, fe[16];
	int fd = mkstemp(path), nf, ret;

	assert_true(fd >= 0);
	close(fd);
	for (int raw = 0; raw < 2; raw++) {
		uint8_t *buf;

		if (raw) {
			buf = write_recording(path, &len, fe, &nf);
			assert_int_equal(buf[12], REC_FLAG_KERNEL_ADDRS);
		} else {
			struct rec_end e = { .exit_status = -1 };
			struct rec_meta *m = meta();
			struct rec_writer *w;
			FILE *f;

			m->kernel_addresses = false;
			w = rec_writer__open(path, m);
			assert_non_null(w);
			assert_int_equal(rec_writer__end(w, &e), 0);
			assert_int_equal(rec_writer__close(w), 0);
			free(m);
			f = fopen(path, "rb");
			fseek(f, 0, SEEK_END);
			len = ftell(f);
			rewind(f);
			buf = malloc(len);
			assert_int_equal(fread(buf, 1, len, f), len);
			fclose(f);
			assert_int_equal(buf[12], 0);
		}
		read_all(buf, len, &ret, err, sizeof(err), NULL);
		assert_int_equal(ret, 0);
		for (int bit = 0; bit < 32; bit++) {
			buf[12 + bit / 8] ^= 1u << (bit % 8);
			read_all(buf, len, &ret, err, sizeof(err), NULL);
			if (!ret)
				fail_msg("flags bit %d flipped (raw addresses %d) unnoticed",
					 bit, raw);
			buf[12 + bit / 8] ^= 1u << (bit % 8);
		}
		free(buf);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_round_trip),
		cmocka_unit_test(test_avail_delta),
		cmocka_unit_test(test_light_round_trip),
		cmocka_unit_test(test_pool_tail_absent),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_binding_tail),
		cmocka_unit_test(test_snapshot_tail),
		cmocka_unit_test(test_hist_tail),
		cmocka_unit_test(test_tokens_round_trip),
		cmocka_unit_test(test_holder_cgroups),
		cmocka_unit_test(test_holder_sock_ino),
		cmocka_unit_test(test_v1_fixture),
		cmocka_unit_test(test_avail_upgrade),
		cmocka_unit_test(test_file_round_trip),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_corruption),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_writer_limits),
		cmocka_unit_test(test_private),
		cmocka_unit_test(test_header_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
