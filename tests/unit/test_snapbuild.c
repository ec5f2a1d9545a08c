// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the snapshot builder (src/core/snapbuild.c): synthetic BPF map
 * values, netlink dumps and walk results in, snapshot out. No kernel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "snapbuild.h"

static struct dmt_pool map_pool(uint64_t addr, uint32_t id, uint32_t hold, uint32_t release)
{
	struct dmt_pool v;

	memset(&v, 0, sizeof(v));
	v.addr = addr;
	v.id = id;
	v.ifindex = 3;
	v.attr_src = DMT_ATTR_NETDEV;
	v.queue = 2;
	v.hold_cnt = hold;
	v.release_cnt = release;
	snprintf(v.ifname, sizeof(v.ifname), "eth0");
	return v;
}

static struct dmt_snapshot *snap(uint64_t ts_ns)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->ts_ns = ts_ns;
	return s;
}

static void test_pool_from_map(void **state)
{
	struct dmt_pool v = map_pool(0xffff1000, 7, 1000, 900);
	struct dmt_pool_snap p;

	/* first seen at hold 400 / release 350: only what happened since counts */
	v.hold_base = 400;
	v.release_base = 350;
	v.flags = DMT_POOL_SAW_NIOV | DMT_POOL_DEVMEM;
	v.mp_priv = 0xffff2000;
	v.binding_id = 5;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.holds, 600);
	assert_int_equal(p.releases, 550);
	assert_int_equal(p.holds_niov, 600);
	assert_int_equal(p.holds_page, 0);
	assert_int_equal(p.inflight, 100);
	assert_int_equal(p.kind, DMT_KIND_DEVMEM);
	assert_int_equal(p.queue, 2);
	assert_int_equal(p.state, DMT_POOL_ALIVE);
	assert_int_equal(p.netlink_inflight, -1);
	assert_int_equal(p.destroy_inflight, -1);
	assert_string_equal(p.ifname, "eth0");

	/* the u32 kernel counters wrap: differences stay exact */
	v = map_pool(0xffff1000, 7, 5, 0xfffffff0u);
	v.hold_base = 0xfffffff0u;
	v.release_base = 0xffffffe0u;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.holds, 21);
	assert_int_equal(p.releases, 16);
	assert_int_equal(p.inflight, 21);
	assert_int_equal(p.holds_page, 21);
	assert_int_equal(p.kind, DMT_KIND_PAGES);

	/* an unknown provider, an interface from the napi: no queue */
	v = map_pool(0xffff1000, 7, 1, 1);
	v.mp_priv = 0x1234;
	v.attr_src = DMT_ATTR_NAPI;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.kind, DMT_KIND_OTHER);
	assert_int_equal(p.queue, -1);
}

static void test_pool_zombie_destroyed(void **state)
{
	struct dmt_pool v = map_pool(0xffff1000, 7, 1000, 990);
	struct dmt_pool_snap p;

	v.flags = DMT_POOL_RELEASED;
	v.release_inflight = 12;
	v.release_calls = 3;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.state, DMT_POOL_ZOMBIE);
	assert_int_equal(p.inflight, 12);
	assert_int_equal(p.destroy_inflight, 12);
	assert_int_equal(p.destroy_retries, 3);

	v.flags |= DMT_POOL_GONE;
	v.release_inflight = 0;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.state, DMT_POOL_DESTROYED);
	assert_int_equal(p.inflight, 0);
	assert_int_equal(p.destroy_inflight, 0);
}

static void test_slot_release(void **state)
{
	struct dmt_pool slot = map_pool(0xa000, 7, 10, 10);

	slot.flags = DMT_POOL_RELEASED | DMT_POOL_GONE;
	slot.mp_priv = 0x1234;		/* before the id */
	slot.refill.count = 3;		/* after it */
	snapbuild_slot_release(&slot, 0xa000, 7);
	assert_int_equal(slot.addr, 0);
	assert_int_equal(slot.flags, 0);
	assert_int_equal(slot.hold_cnt, 0);
	assert_int_equal(slot.mp_priv, 0);
	assert_int_equal(slot.refill.count, 0);
	assert_int_equal(slot.id, 0);

	/* a new pool claimed the slot after we read it: not ours to clear */
	slot = map_pool(0xb000, 1031, 5, 1);
	snapbuild_slot_release(&slot, 0xa000, 7);
	assert_int_equal(slot.addr, 0xb000);
	assert_int_equal(slot.id, 1031);
	assert_int_equal(slot.hold_cnt, 5);

	/* ... at the same address (the old pool's memory was reused) */
	slot = map_pool(0xa000, 1031, 5, 1);
	snapbuild_slot_release(&slot, 0xa000, 7);
	assert_int_equal(slot.addr, 0xa000);
	assert_int_equal(slot.id, 1031);
	assert_int_equal(slot.hold_cnt, 5);
}

static void test_add_pool_grows(void **state)
{
	struct dmt_snapshot *s = snap(1);
	size_t cap = 0;

	for (uint32_t i = 0; i < 200; i++) {
		struct dmt_pool v = map_pool(0x1000 + i, i + 1, i, 0);

		assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	}
	assert_int_equal(s->n_pools, 200);
	assert_true(cap >= 200);
	assert_int_equal(s->pools[199].id, 200);
	assert_int_equal(s->pools[199].holds, 199);
	snapshot__free(s);
}

/*
 * An io_uring zcrx pool (issue 35): its provider calls and the walk of its
 * ifq. No zcrx_pools entry: no zcrx figure at all; a walk that failed, or
 * of another ifq than the entry's (the pool's address reused meanwhile):
 * the area figures unknown, the calls kept.
 */
static void test_pool_zcrx(void **state)
{
	struct dmt_pool v = map_pool(0xffff3000, 21, 64, 0);
	struct dmt_zcrx_pool z = { .ifq = 0xffffa000, .alloc_calls = 3, .alloc_niovs = 130,
				   .alloc_fail = 1, .rq_refills = 2, .rqes = 128 };
	struct dmt_zcrx_walk w = { .ifq = 0xffffa000, .niovs = 1024, .free_niovs = 800,
				   .user_niovs = 64, .rq_pending = 5, .rq_entries = 256,
				   .niov_size = 4096, .nr_areas = 1 };
	struct dmt_pool_snap p;

	v.flags = DMT_POOL_IO_URING;
	v.mp_priv = 0xffffa000;
	z.rq_batch.slots[64] = 2;
	z.rq_batch.count = 2;
	z.rq_batch.sum = 128;
	z.alloc_lat.count = 4;
	snapbuild_pool(&v, &p);
	assert_int_equal(p.kind, DMT_KIND_IO_URING);
	snapbuild_apply_zcrx(&p, NULL, &w);
	assert_false(p.zcrx);
	assert_int_equal(p.zcrx_niovs, -1);
	assert_int_equal(p.zcrx_user_niovs, -1);

	snapbuild_apply_zcrx(&p, &z, &w);
	assert_true(p.zcrx);
	assert_int_equal(p.zcrx_alloc_calls, 3);
	assert_int_equal(p.zcrx_alloc_niovs, 130);
	assert_int_equal(p.zcrx_alloc_fail, 1);
	assert_int_equal(p.zcrx_rq_refills, 2);
	assert_int_equal(p.zcrx_rqes, 128);
	assert_int_equal(p.zcrx_rq_batch.slots[64], 2);
	assert_int_equal(p.zcrx_rq_batch.sum, 128);
	assert_int_equal(p.zcrx_alloc_lat_ns.count, 4);
	assert_int_equal(p.zcrx_niovs, 1024);
	assert_int_equal(p.zcrx_free_niovs, 800);
	assert_int_equal(p.zcrx_user_niovs, 64);
	assert_int_equal(p.zcrx_rq_pending, 5);
	assert_int_equal(p.zcrx_rq_size, 256);
	assert_int_equal(p.zcrx_niov_size, 4096);
	assert_int_equal(p.zcrx_areas, 1);

	/* the walk of another ifq, or one that failed: area unknown, calls kept */
	w.ifq = 0xffffb000;
	snapbuild_apply_zcrx(&p, &z, &w);
	assert_true(p.zcrx);
	assert_int_equal(p.zcrx_alloc_calls, 3);
	assert_int_equal(p.zcrx_niovs, -1);
	assert_int_equal(p.zcrx_free_niovs, -1);
	assert_int_equal(p.zcrx_rq_pending, -1);
	w.ifq = z.ifq;
	w.err = -2;
	snapbuild_apply_zcrx(&p, &z, &w);
	assert_int_equal(p.zcrx_user_niovs, -1);
	assert_int_equal(p.zcrx_rq_size, -1);
	snapbuild_apply_zcrx(&p, &z, NULL);
	assert_int_equal(p.zcrx_niovs, -1);
}

/* A zcrx pool only netlink lists (no provider call seen yet) is io_uring, not pages. */
static void test_netlink_zcrx_kind(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct nl_pool_info nl[] = {
		{ .id = 30, .ifindex = 3, .inflight = 64, .io_uring = true },
		{ .id = 31, .ifindex = 3, .inflight = 0 },
	};

	assert_int_equal(snapbuild_merge_netlink(s, nl, 2, 4026531840ULL), 0);
	assert_int_equal(s->n_pools, 2);
	assert_int_equal(s->pools[0].kind, DMT_KIND_IO_URING);
	assert_false(s->pools[0].zcrx);
	assert_int_equal(s->pools[0].zcrx_niovs, -1);
	assert_int_equal(s->pools[1].kind, DMT_KIND_PAGES);
	snapshot__free(s);
}

static void test_netlink_merge(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct dmt_pool v;
	size_t cap = 0;
	struct nl_pool_info nl[] = {
		/* the BPF side has pool 7 with its netdev: netlink enriches it */
		{ .id = 7, .ifindex = 9, .napi_id = 8193, .inflight = 64, .dmabuf = 0 },
		/* pool 8 had no event yet: added from netlink alone */
		{ .id = 8, .ifindex = 4, .napi_id = 0, .inflight = 3, .dmabuf = 5 },
		/* pool 9: attributed by nothing on the BPF side */
		{ .id = 9, .ifindex = 6, .inflight = 0 },
		/* pool 10 was destroyed in this snapshot; the kernel still lists it */
		{ .id = 10, .ifindex = 2, .inflight = 1, .detach_time = 77 },
	};

	v = map_pool(0xa000, 7, 100, 36);
	v.netns = 4026532001ULL;
	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	v = map_pool(0xb000, 9, 1, 1);
	v.netns = 0;
	v.attr_src = DMT_ATTR_NONE;
	v.ifindex = 0;
	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	v = map_pool(0xc000, 10, 1, 1);
	v.flags = DMT_POOL_RELEASED | DMT_POOL_GONE;
	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);

	assert_int_equal(snapbuild_merge_netlink(s, nl, 4, 4026531840ULL), 0);
	assert_int_equal(s->n_pools, 4);

	/* pool 7: the BPF netdev wins over netlink's ifindex */
	assert_true(s->pools[0].netlink_listed);
	assert_int_equal(s->pools[0].netlink_inflight, 64);
	assert_int_equal(s->pools[0].ifindex, 3);
	assert_int_equal(s->pools[0].attr_src, DMT_ATTR_NETDEV);
	assert_int_equal(s->pools[0].napi_id, 8193);
	/* pool 9: netlink gives the interface */
	assert_int_equal(s->pools[1].ifindex, 6);
	assert_int_equal(s->pools[1].attr_src, DMT_ATTR_NETLINK);
	/* destroyed pool 10 untouched, and not listed a second time as alive */
	assert_false(s->pools[2].netlink_listed);
	assert_int_equal(s->pools[2].state, DMT_POOL_DESTROYED);
	/* pool 8 added, a devmem pool of binding 5, ifindex from netlink */
	assert_int_equal(s->pools[3].id, 8);
	assert_int_equal(s->pools[3].addr, 0);
	assert_int_equal(s->pools[3].kind, DMT_KIND_DEVMEM);
	assert_int_equal(s->pools[3].binding_id, 5);
	assert_int_equal(s->pools[3].ifindex, 4);
	assert_int_equal(s->pools[3].attr_src, DMT_ATTR_NETLINK);
	assert_int_equal(s->pools[3].inflight, 3);
	assert_int_equal(s->pools[3].queue, -1);
	assert_int_equal(s->pools[3].destroy_inflight, -1);
	assert_int_equal(s->pools[3].state, DMT_POOL_ALIVE);
	/* listed, so in the dump's namespace; a netns the events gave is kept */
	assert_true(s->pools[3].netns == 4026531840ULL);
	assert_true(s->pools[1].netns == 4026531840ULL);
	assert_true(s->pools[0].netns == 4026532001ULL);
	snapshot__free(s);

	/* listed only by netlink, with a detach time: a zombie */
	s = snap(2);
	nl[3].id = 11;
	assert_int_equal(snapbuild_merge_netlink(s, &nl[3], 1, 0), 0);
	assert_int_equal(s->n_pools, 1);
	assert_int_equal(s->pools[0].state, DMT_POOL_ZOMBIE);
	snapshot__free(s);
}

static struct dmt_binding map_binding(uint32_t id, uint64_t addr)
{
	struct dmt_binding v;

	memset(&v, 0, sizeof(v));
	v.id = id;
	v.addr = addr;
	v.ifindex = 3;
	v.niov_size = 4096;
	v.dmabuf_size = 1 << 26;
	v.free_niovs_tp = -1;
	v.out_at_unbind = -1;
	v.out_at_free = -1;
	return v;
}

/*
 * A TX binding's sends since attach; its references in flight only where
 * the tool saw it made (every reference since), and never below zero.
 */
static void test_tx_binding(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct dmt_binding v = map_binding(8, 0xee00);
	struct dmt_binding_snap *b;

	(void)state;
	v.flags = DMT_BIND_TX | DMT_BIND_SEEN_CREATE;
	v.tx_sendmsg = 2;
	v.tx_bytes = 12;
	v.tx_errors = 1;
	v.tx_refs_taken = 5;
	v.tx_refs_dropped = 3;
	v.tx_ref_time.slots[12] = 1;
	v.tx_ref_time.count = 1;
	b = snapbuild_add_binding(s, &v);
	assert_int_equal(b->tx_sendmsg, 2);
	assert_int_equal(b->tx_bytes, 12);
	assert_int_equal(b->tx_errors, 1);
	assert_int_equal(b->tx_niov_refs, 2);
	assert_int_equal(b->tx_ref_time_ns.count, 1);
	assert_int_equal(b->tx_ref_time_ns.slots[12], 1);
	/* made before the attach: references taken before it are not seen */
	v.flags = DMT_BIND_TX;
	assert_int_equal(snapbuild_add_binding(s, &v)->tx_niov_refs, -1);
	/* more dropped than taken (a drop counted, its take missed): unknown */
	v.flags = DMT_BIND_TX | DMT_BIND_SEEN_CREATE;
	v.tx_refs_dropped = 6;
	assert_int_equal(snapbuild_add_binding(s, &v)->tx_niov_refs, -1);
	/* an RX binding has no references in flight to know */
	v.flags = DMT_BIND_SEEN_CREATE;
	v.tx_refs_dropped = 0;
	assert_int_equal(snapbuild_add_binding(s, &v)->tx_niov_refs, -1);
	snapshot__free(s);
}

static void test_binding_from_map(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct dmt_binding v = map_binding(5, 0xbb00);
	struct dmt_binding_snap *b;

	v.flags = DMT_BIND_FREELIST | DMT_BIND_UNBOUND;
	v.total_niovs = 16384;
	v.free_niovs_tp = 100;
	v.alloc_calls = 4;
	v.alloc_niovs = 256;
	v.alloc_lat.slots[10] = 4;
	v.alloc_lat.count = 4;
	b = snapbuild_add_binding(s, &v);
	assert_non_null(b);
	assert_string_equal(b->layout, "freelist");
	assert_true(b->unbound);
	assert_true(b->alive);
	assert_int_equal(b->total_niovs, 16384);
	assert_int_equal(b->free_niovs, 100);
	assert_int_equal(b->in_pools, -1);
	assert_int_equal(b->held_by_sockets, -1);
	assert_int_equal(b->alloc_lat_ns.slots[10], 4);
	snapbuild_finish_binding(b, false);
	assert_int_equal(b->in_pools, -1);
	assert_true(b->occupancy > 0.9938 && b->occupancy < 0.9940);

	/* unknown free count: occupancy stays unknown */
	v = map_binding(6, 0xcc00);
	v.flags = DMT_BIND_FREED;
	b = snapbuild_add_binding(s, &v);
	assert_false(b->alive);
	assert_string_equal(b->layout, "unknown");
	assert_int_equal(b->total_niovs, -1);
	snapbuild_finish_binding(b, true);
	assert_int_equal(b->in_pools, 0);
	assert_true(b->occupancy < 0);

	/* freed after its pool was read: the pool's inflight is not in pools */
	b->in_pools = 26;
	b->pools = 1;
	snapbuild_finish_binding(b, true);
	assert_int_equal(b->in_pools, 0);
	assert_int_equal(b->pools, 0);
	b->in_pools = 26;
	snapbuild_finish_binding(b, false);
	assert_int_equal(b->in_pools, -1);

	/* a TX binding: its allocator reads all free, it has no RX pool or
	 * token; those figures are unknown with the reason, never 0
	 */
	v = map_binding(7, 0xdd00);
	v.flags = DMT_BIND_TX;
	v.free_niovs_tp = 100;
	v.total_niovs = 100;
	b = snapbuild_add_binding(s, &v);
	assert_int_equal(b->tx, 1);
	snapbuild_finish_binding(b, true);
	assert_int_equal(b->total_niovs, 100);
	assert_int_equal(b->free_niovs, -1);
	assert_int_equal(b->in_pools, -1);
	assert_int_equal(b->held_tokens, -1);
	assert_int_equal(b->held_why, DMT_HELD_TX);
	assert_true(b->occupancy < 0);
	assert_non_null(strstr(dmt_held_why_text(b->held_why), "TX binding"));
	snapshot__free(s);
}

static void test_link_pools(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct snapbuild_addrs addrs = {};
	struct dmt_binding v = map_binding(5, 0);
	struct dmt_pool p;
	size_t cap = 0;

	assert_non_null(snapbuild_add_binding(s, &v));
	assert_int_equal(snapbuild_addr_set(&addrs, 0, 0), 0);
	/* two live pools and a destroyed one of binding 5, one pool of binding 6 */
	for (int i = 0; i < 4; i++) {
		p = map_pool(0xa000 + i, 20 + i, 100, 100 - 10 * (i + 1));
		p.flags = DMT_POOL_DEVMEM | DMT_POOL_SAW_NIOV;
		p.mp_priv = i == 3 ? 0xb600 : 0xb500;
		p.binding_id = i == 3 ? 6 : 5;
		if (i == 2)
			p.flags |= DMT_POOL_RELEASED | DMT_POOL_GONE;
		assert_int_equal(snapbuild_add_pool(s, &cap, &p), 0);
	}
	/* a page pool is no binding's */
	p = map_pool(0xf000, 40, 5, 0);
	assert_int_equal(snapbuild_add_pool(s, &cap, &p), 0);
	/* destroyed after its binding 7 was freed and forgotten: no binding 7 */
	p = map_pool(0xa100, 30, 100, 100);
	p.flags = DMT_POOL_DEVMEM | DMT_POOL_SAW_NIOV | DMT_POOL_RELEASED | DMT_POOL_GONE;
	p.mp_priv = 0xb700;
	p.binding_id = 7;
	assert_int_equal(snapbuild_add_pool(s, &cap, &p), 0);

	assert_int_equal(snapbuild_link_pools(s, &addrs), 0);
	assert_int_equal(s->n_bindings, 2);
	assert_int_equal(s->bindings[0].pools, 2);
	assert_int_equal(s->bindings[0].in_pools, 10 + 20);
	assert_string_equal(s->bindings[0].ifname, "eth0");
	assert_int_equal(addrs.v[0], 0xb500);
	/* binding 6 nobody saw created: added from its pool */
	assert_int_equal(s->bindings[1].id, 6);
	assert_int_equal(s->bindings[1].pools, 1);
	assert_int_equal(s->bindings[1].in_pools, 40);
	assert_int_equal(s->bindings[1].ifindex, 3);
	assert_int_equal(addrs.v[1], 0xb600);
	free(addrs.v);
	snapshot__free(s);
}

static void test_light_niov_frees(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct snapbuild_addrs addrs = {};
	struct dmt_binding v = map_binding(5, 0);
	struct dmt_pool p;
	size_t cap = 0;

	assert_non_null(snapbuild_add_binding(s, &v));
	assert_int_equal(snapbuild_addr_set(&addrs, 0, 0), 0);
	/* light mode: counters from pool creation (base 0) */
	for (int i = 0; i < 3; i++) {
		p = map_pool(0xa000 + i, 20 + i, 1000, 900 + i);
		p.flags = i == 2 ? 0 : DMT_POOL_DEVMEM | DMT_POOL_SAW_NIOV;
		p.mp_priv = i == 2 ? 0 : 0xb500;
		p.binding_id = i == 2 ? 0 : 5;
		assert_int_equal(snapbuild_add_pool(s, &cap, &p), 0);
	}
	/* a page pool that claims binding 5's id must not count: it is not devmem */
	s->pools[2].binding_id = 5;
	assert_int_equal(snapbuild_link_pools(s, &addrs), 0);
	s->bindings[0].free_niovs_count = 7;	/* whatever the map said is replaced */
	snapbuild_light_niov_frees(s);
	assert_int_equal(s->bindings[0].free_niovs_count, 900 + 901);
	free(addrs.v);
	snapshot__free(s);
}

static void test_walk_precedence(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct dmt_walk w = { .total_niovs = 16384, .free_niovs = 16000, .dmabuf_size = 1 << 26,
			      .niov_size = 4096, .layout = 1, .ifindex = 8, .id = 5 };
	struct dmt_binding v = map_binding(5, 0xbb00);
	struct dmt_binding_snap *b;

	/* devmem tracepoints: their exact free count wins over the walk */
	v.total_niovs = 16384;
	v.free_niovs_tp = 15000;
	v.niov_size = 0;
	v.dmabuf_size = 0;
	v.ifindex = 0;
	b = snapbuild_add_binding(s, &v);
	snapbuild_apply_walk(b, &w, DMT_MODE_DEVMEM_TP);
	assert_int_equal(b->free_niovs, 15000);
	assert_string_equal(b->layout, "gen_pool");
	assert_int_equal(b->niov_size, 4096);
	assert_int_equal(b->dmabuf_size, 1 << 26);
	assert_int_equal(b->ifindex, 8);

	/* fentry mode: the walk is "now", it wins */
	snapbuild_apply_walk(b, &w, DMT_MODE_FENTRY);
	assert_int_equal(b->free_niovs, 16000);

	/* tracepoints, but no free count yet: the walk fills it */
	v = map_binding(6, 0xcc00);
	b = snapbuild_add_binding(s, &v);
	w.layout = 2;
	snapbuild_apply_walk(b, &w, DMT_MODE_DEVMEM_TP);
	assert_int_equal(b->free_niovs, 16000);
	assert_int_equal(b->total_niovs, 16384);
	assert_string_equal(b->layout, "freelist");
	/* what the map had stays */
	assert_int_equal(b->ifindex, 3);
	snapbuild_finish_binding(b, true);
	assert_true(b->occupancy > 0.0234 && b->occupancy < 0.0235);
	snapshot__free(s);
}

static void test_binding_memory(void **state)
{
	struct binding_memory *bm = binding_memory__new();
	struct dmt_snapshot *s = snap(1);
	struct dmt_binding v = map_binding(5, 0xbb00);
	struct dmt_walk w = { .layout = 2, .id = 5, .total_niovs = 10, .free_niovs = 5 };

	/* alive: the walk says freelist */
	snapbuild_apply_walk(snapbuild_add_binding(s, &v), &w, DMT_MODE_DEVMEM_TP);
	assert_int_equal(binding_memory__apply(bm, s), 0);
	assert_string_equal(s->bindings[0].layout, "freelist");
	snapshot__free(s);

	/* freed: no walk any more, the layout is still known */
	s = snap(2);
	v.flags = DMT_BIND_FREED;
	snapbuild_add_binding(s, &v);
	assert_string_equal(s->bindings[0].layout, "unknown");
	assert_int_equal(binding_memory__apply(bm, s), 0);
	assert_string_equal(s->bindings[0].layout, "freelist");
	snapshot__free(s);

	/* and forgotten once reported freed */
	s = snap(3);
	v.flags = 0;
	snapbuild_add_binding(s, &v);
	assert_int_equal(binding_memory__apply(bm, s), 0);
	assert_string_equal(s->bindings[0].layout, "unknown");
	snapshot__free(s);
	binding_memory__free(bm);
}

/* One pool per snapshot at 0xa000: (id, holds, releases), 1 s apart. */
static struct dmt_snapshot *rate_snap(uint64_t t, uint32_t id, uint32_t holds, uint32_t rel)
{
	struct dmt_snapshot *s = snap(t * 1000000000ULL);
	struct dmt_pool v = map_pool(0xa000, id, holds, rel);
	size_t cap = 0;

	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	return s;
}

static void test_rates(void **state)
{
	struct rate_tracker *rt = rate_tracker__new();
	struct dmt_snapshot *s;

	assert_non_null(rt);
	s = rate_snap(1, 7, 1000, 900);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 0);	/* first sight: no rate */
	snapshot__free(s);

	s = rate_snap(3, 7, 3000, 2900);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 1000);
	assert_true(s->pools[0].release_rate == 1000);
	snapshot__free(s);
	rate_tracker__free(rt);
}

/*
 * Issue 13 item 2: a new pool on a destroyed pool's kernel address. Rates
 * matched by address alone subtracted the old pool's larger counters from
 * the new pool's and wrapped to ~9.2e18/s.
 */
static void test_rates_address_reuse(void **state)
{
	struct rate_tracker *rt = rate_tracker__new();
	struct dmt_snapshot *s;

	s = rate_snap(1, 7, 50000, 49000);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	snapshot__free(s);

	/* same address, new netlink id, fewer holds */
	s = rate_snap(2, 8, 10, 5);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 0);
	assert_true(s->pools[0].release_rate == 0);
	snapshot__free(s);

	/* the new pool then gets rates of its own */
	s = rate_snap(3, 8, 110, 55);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 100);
	assert_true(s->pools[0].release_rate == 50);
	snapshot__free(s);

	/* same address and id (unlisted pools have id 0), counters went back */
	s = rate_snap(4, 8, 20, 56);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 0);
	assert_true(s->pools[0].release_rate == 0);
	snapshot__free(s);
	s = rate_snap(5, 8, 30, 60);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 10);
	assert_true(s->pools[0].release_rate >= 0 && s->pools[0].release_rate < 1e6);
	snapshot__free(s);
	rate_tracker__free(rt);
}

/*
 * A pool first seen without its netlink id, then with it: the same pool
 * (objtrack's rule, as report and gate see it), so its rate goes on.
 */
static void test_rates_id_learned(void **state)
{
	struct rate_tracker *rt = rate_tracker__new();
	struct dmt_snapshot *s;

	s = rate_snap(1, 0, 1000, 900);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	snapshot__free(s);
	s = rate_snap(2, 9, 1300, 1000);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_true(s->pools[0].hold_rate == 300);
	assert_true(s->pools[0].release_rate == 100);
	snapshot__free(s);
	rate_tracker__free(rt);
}

/* rate_snap with the kernel's slow-path counters: slow + slow_high_order = calls */
static struct dmt_snapshot *stats_snap(uint64_t t, uint32_t holds, int64_t slow, int64_t ho)
{
	struct dmt_snapshot *s = rate_snap(t, 7, holds, holds / 2);
	struct nl_pp_stats st = { .id = 7, .ifindex = 3 };

	for (int i = 0; i < DMT_PPS__COUNT; i++)
		st.v[i] = -1;
	st.v[DMT_PPS_ALLOC_SLOW] = slow;
	st.v[DMT_PPS_ALLOC_SLOW_HIGH_ORDER] = ho;
	assert_int_equal(snapbuild_merge_pp_stats(s, &st, 1), 0);
	return s;
}

/*
 * Issue 25: the mean refill batch from the kernel's counters is holds over
 * slow-path calls, both differenced between snapshots and summed; the first
 * sight is the base, a counter going backwards adds nothing, a pool without
 * the stats has none, and a devmem pool (no slow-path calls) has none.
 */
static void test_slow_batch_mean(void **state)
{
	struct rate_tracker *rt = rate_tracker__new();
	struct dmt_snapshot *s;

	assert_non_null(rt);
	s = stats_snap(1, 1000, 10, 0);
	assert_int_equal(s->pools[0].pps[DMT_PPS_ALLOC_SLOW], 10);
	assert_int_equal(s->pools[0].pps[DMT_PPS_ALLOC_FAST], -1);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_int_equal(s->pools[0].slow_calls, 0);		/* the base */
	snapshot__free(s);
	s = stats_snap(2, 1000 + 64 * 5 + 1, 14, 1);		/* 4 bulk calls of 64, 1 high order */
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_int_equal(s->pools[0].slow_holds, 64 * 5 + 1);
	assert_int_equal(s->pools[0].slow_calls, 5);
	snapshot__free(s);
	s = stats_snap(3, 1000 + 64 * 5 + 1 + 32, 15, 1);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_int_equal(s->pools[0].slow_holds, 64 * 5 + 1 + 32);
	assert_int_equal(s->pools[0].slow_calls, 6);
	snapshot__free(s);
	/* the stats went missing: the sums carry over, nothing is added */
	s = rate_snap(4, 7, 2000, 1000);
	assert_int_equal(s->pools[0].pps[DMT_PPS_ALLOC_SLOW], -1);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_int_equal(s->pools[0].slow_calls, 6);
	snapshot__free(s);
	/* a slow counter lower than before (another pool's?): nothing added */
	s = stats_snap(5, 2100, 3, 0);
	assert_int_equal(rate_tracker__apply(rt, s), 0);
	assert_int_equal(s->pools[0].slow_calls, 6);
	assert_int_equal(s->pools[0].slow_holds, 64 * 5 + 1 + 32);
	snapshot__free(s);
	rate_tracker__free(rt);
}

/* queue-get and qstats-get: bound and unbound RX queues, per binding, per pool's queue */
static void test_merge_queues(void **state)
{
	struct dmt_snapshot *s = snap(1);
	struct dmt_pool v = map_pool(0xa000, 7, 10, 5);
	struct nl_queue q[] = {
		{ .id = 0, .ifindex = 3, .type = 0, .napi_id = 100 },
		{ .id = 1, .ifindex = 3, .type = 0, .napi_id = 101, .dmabuf = 9 },
		{ .id = 2, .ifindex = 3, .type = 0, .napi_id = 102, .dmabuf = 9 },
		{ .id = 0, .ifindex = 3, .type = 1, .napi_id = 100 },		/* tx: not counted */
		{ .id = 0, .ifindex = 4, .type = 0, .dmabuf = 77 },		/* binding not seen */
	};
	struct nl_qstats dev[] = {
		{ .ifindex = 3, .queue = -1, .rx_alloc_fail = 5 },
		{ .ifindex = 4, .queue = -1, .rx_alloc_fail = -1 },		/* not reported */
		{ .ifindex = 5, .queue = -1, .rx_alloc_fail = 2 },
	};
	struct nl_qstats perq[] = {
		{ .ifindex = 3, .queue = 1, .rx_alloc_fail = 4 },
		{ .ifindex = 3, .queue = 2, .rx_alloc_fail = 1 },
	};
	struct snapbuild_queues in = { .queues_ok = true, .queues = q, .n_queues = 5,
				       .dev = dev, .n_dev = 3, .perq = perq, .n_perq = 2 };
	size_t cap = 0;

	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);	/* queue 2 from the netdev */
	v = map_pool(0xb000, 8, 10, 5);
	v.attr_src = DMT_ATTR_NAPI;				/* no queue: by its NAPI */
	v.napi_id = 101;
	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	v = map_pool(0xc000, 9, 10, 5);
	v.attr_src = DMT_ATTR_NAPI;				/* a NAPI no queue has */
	v.napi_id = 555;
	assert_int_equal(snapbuild_add_pool(s, &cap, &v), 0);
	assert_non_null(snapbuild_binding_new(s, 9));
	assert_non_null(snapbuild_binding_new(s, 10));
	assert_int_equal(s->bindings[0].rx_queues, -1);
	snapbuild_merge_queues(s, &in);
	assert_int_equal(s->rxq_bound, 3);
	assert_int_equal(s->rxq_unbound, 1);
	assert_int_equal(s->bindings[0].rx_queues, 2);
	assert_int_equal(s->bindings[1].rx_queues, 0);
	assert_int_equal(s->rx_alloc_fail, 7);
	assert_int_equal(s->pools[0].queue_alloc_fail, 1);
	assert_int_equal(s->pools[1].queue_alloc_fail, 4);
	assert_int_equal(s->pools[2].queue_alloc_fail, -1);
	/* both dumps failed: every figure unknown */
	in = (struct snapbuild_queues){};
	snapbuild_merge_queues(s, &in);
	assert_int_equal(s->rxq_bound, -1);
	assert_int_equal(s->rxq_unbound, -1);
	assert_int_equal(s->rx_alloc_fail, -1);
	assert_int_equal(s->pools[0].queue_alloc_fail, -1);
	assert_int_equal(s->bindings[0].rx_queues, -1);
	snapshot__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_from_map),
		cmocka_unit_test(test_rates_id_learned),
		cmocka_unit_test(test_pool_zombie_destroyed),
		cmocka_unit_test(test_pool_zcrx),
		cmocka_unit_test(test_netlink_zcrx_kind),
		cmocka_unit_test(test_slot_release),
		cmocka_unit_test(test_add_pool_grows),
		cmocka_unit_test(test_netlink_merge),
		cmocka_unit_test(test_binding_from_map),
		cmocka_unit_test(test_binding_memory),
		cmocka_unit_test(test_link_pools),
		cmocka_unit_test(test_walk_precedence),
		cmocka_unit_test(test_light_niov_frees),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_slow_batch_mean),
		cmocka_unit_test(test_merge_queues),
		cmocka_unit_test(test_rates_address_reuse),
		cmocka_unit_test(test_tx_binding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
