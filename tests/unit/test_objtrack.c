// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the object tracker (src/core/objtrack.c) that report and
 * gate --from share, on a synthetic recording shaped like the lab's patched
 * bulk run, where report showed pool 4 twice (alive on "?" and destroyed on
 * eth0) and the freelist binding as "unknown".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "gate_eval.h"
#include "gate_spec.h"
#include "objtrack.h"
#include "record.h"

static struct dmt_pool_snap pool_snap(uint64_t addr, uint32_t id, uint64_t holds)
{
	struct dmt_pool_snap p;

	memset(&p, 0, sizeof(p));
	p.addr = addr;
	p.id = id;
	p.holds = holds;
	p.releases = holds;
	p.queue = -1;
	p.netlink_inflight = -1;
	p.destroy_inflight = -1;
	return p;
}

static void test_pool_identity(void **state)
{
	struct objtrack t = {};
	struct dmt_pool_snap p;
	bool created;

	/* netlink sighting (no address), then the BPF side's: one pool */
	p = pool_snap(0, 4, 0);
	assert_int_equal(objtrack__pool(&t, &p, &created), 0);
	assert_true(created);
	p = pool_snap(0xa000, 4, 100);
	assert_int_equal(objtrack__pool(&t, &p, &created), 0);
	assert_false(created);
	/* another netlink-only pool is another object */
	p = pool_snap(0, 5, 0);
	assert_int_equal(objtrack__pool(&t, &p, &created), 1);
	assert_true(created);
	/* pool 4's address reused by pool 9: a new object */
	p = pool_snap(0xa000, 9, 3);
	assert_int_equal(objtrack__pool(&t, &p, &created), 2);
	assert_true(created);
	/* no netlink id: the address, with counters going forward */
	p = pool_snap(0xc000, 0, 50);
	assert_int_equal(objtrack__pool(&t, &p, &created), 3);
	p = pool_snap(0xc000, 0, 60);
	assert_int_equal(objtrack__pool(&t, &p, &created), 3);
	assert_false(created);
	p = pool_snap(0xc000, 0, 10);
	assert_int_equal(objtrack__pool(&t, &p, &created), 4);
	assert_true(created);
	objtrack__fini(&t);
}

/* The newest sighting keeps what earlier ones knew and it does not. */
/*
 * Many objects, out of snapshot order (a crafted recording): lookups go
 * through the indexes, reused addresses match their newest pool, and one
 * object past the cap is -E2BIG while the known ones still resolve.
 */
static void test_many_and_cap(void **state)
{
	struct objtrack t = { .max = 1000 };
	struct dmt_pool_snap p;
	struct dmt_binding_snap b;
	bool created;
	int i;

	for (uint32_t k = 0; k < 1000; k++) {
		p = pool_snap(0x1000 + 64 * (uint64_t)k, 0, 10);
		assert_int_equal(objtrack__pool(&t, &p, &created), (int)k);
		assert_true(created);
	}
	/* backwards through them: every one found, none created */
	for (uint32_t k = 1000; k-- > 0;) {
		p = pool_snap(0x1000 + 64 * (uint64_t)k, 0, 11);
		assert_int_equal(objtrack__pool(&t, &p, &created), (int)k);
		assert_false(created);
	}
	p = pool_snap(0x1000 + 64 * 1000, 0, 1);	/* a new address past the cap */
	assert_int_equal(objtrack__pool(&t, &p, &created), -E2BIG);
	p = pool_snap(0x1000 + 64 * 5, 0, 1);	/* reused address, counters went back */
	assert_int_equal(objtrack__pool(&t, &p, &created), -E2BIG);
	objtrack__fini(&t);

	/* a reused address after a netlink id: matched by id, not by address */
	t.max = 0;
	p = pool_snap(0x2000, 7, 5);
	assert_int_equal(objtrack__pool(&t, &p, &created), 0);
	p = pool_snap(0x2000, 9, 1);
	assert_int_equal(objtrack__pool(&t, &p, &created), 1);
	assert_true(created);
	p = pool_snap(0, 7, 0);	/* netlink-only sighting of the first */
	assert_int_equal(objtrack__pool(&t, &p, &created), 0);
	assert_false(created);
	p = pool_snap(0x2000, 9, 2);
	assert_int_equal(objtrack__pool(&t, &p, &created), 1);
	objtrack__fini(&t);

	memset(&b, 0, sizeof(b));
	for (uint32_t k = 0; k < 3000; k++) {
		b.id = 3000 - k;
		i = objtrack__binding(&t, &b, &created);
		assert_int_equal(i, (int)k);
	}
	b.id = 1500;
	assert_int_equal(objtrack__binding(&t, &b, &created), 1500);
	assert_false(created);
	objtrack__fini(&t);
}

static void test_update_keeps_attributes(void **state)
{
	struct dmt_pool_snap last = pool_snap(0xa000, 4, 10), cur = pool_snap(0, 4, 0);
	struct dmt_binding_snap bl = { .id = 5, .layout = "freelist", .niov_size = 4096,
				       .total_niovs = 64, .ifindex = 2 };
	struct dmt_binding_snap bc = { .id = 5, .layout = "unknown", .total_niovs = -1,
				       .alive = false, .out_at_free = 0 };

	snprintf(last.ifname, sizeof(last.ifname), "eth0");
	last.ifindex = 2;
	cur.ifindex = 2;
	last.pps[DMT_PPS_RECYCLE_RING_FULL] = 15;
	last.queue_alloc_fail = 2;
	for (int i = 0; i < DMT_PPS__COUNT; i++)
		cur.pps[i] = -1;
	cur.queue_alloc_fail = -1;
	objtrack_pool_update(&last, &cur);
	/* the kernel's stats, since the pool's creation: the last reported stay */
	assert_int_equal(last.pps[DMT_PPS_RECYCLE_RING_FULL], 15);
	assert_int_equal(last.pps[DMT_PPS_ALLOC_FAST], 0);
	assert_int_equal(last.queue_alloc_fail, 2);
	assert_string_equal(last.ifname, "eth0");
	assert_int_equal(last.addr, 0xa000);
	/* the netlink sighting has no counters: the BPF side's stay */
	assert_int_equal(last.holds, 10);
	assert_int_equal(last.releases, 10);
	objtrack_binding_update(&bl, &bc);
	assert_string_equal(bl.layout, "freelist");
	assert_int_equal(bl.niov_size, 4096);
	assert_int_equal(bl.total_niovs, 64);
	assert_int_equal(bl.ifindex, 2);
	assert_false(bl.alive);
	assert_int_equal(bl.out_at_free, 0);
}

/* Snapshot k of the lab-like run: see the file comment. */
static struct dmt_snapshot *lab_snap(int k)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));
	struct dmt_pool_snap *p;
	struct dmt_binding_snap *b;

	s->ts_ns = (k + 1) * 1000000000ULL;
	s->seq = k + 1;
	s->mode = DMT_MODE_DEVMEM_TP;
	for (int m = 0; m < DMT_M__COUNT; m++)
		s->avail[m].available = true;
	s->n_pools = 1;
	s->pools = calloc(1, sizeof(*s->pools));
	p = &s->pools[0];
	if (k == 0) {
		/* listed by netlink before its first event */
		*p = pool_snap(0, 4, 0);
		p->ifindex = 2;
		p->attr_src = DMT_ATTR_NETLINK;
		p->netlink_listed = true;
	} else {
		*p = pool_snap(0xffff8880aa000000ULL, 4, 100 * k);
		p->ifindex = 2;
		snprintf(p->ifname, sizeof(p->ifname), "eth0");
		p->attr_src = DMT_ATTR_NETDEV;
		p->queue = 0;
		if (k == 2)
			p->state = DMT_POOL_DESTROYED;
	}
	p->kind = DMT_KIND_DEVMEM;
	p->binding_id = 5;
	s->n_bindings = 1;
	s->bindings = calloc(1, sizeof(*s->bindings));
	b = &s->bindings[0];
	b->id = 5;
	b->ifindex = 2;
	snprintf(b->ifname, sizeof(b->ifname), "eth0");
	b->layout = k < 2 ? "freelist" : "unknown";	/* no walk once freed */
	b->alive = k < 2;
	b->niov_size = 4096;
	b->total_niovs = k < 2 ? 64 : -1;
	b->free_niovs = k < 2 ? 32 : -1;
	b->in_pools = b->held_by_sockets = b->out_at_unbind = -1;
	b->out_at_free = k < 2 ? -1 : 0;
	b->occupancy = -1;
	b->alloc_niovs = 64 * k;
	b->alloc_calls = k;
	return s;
}

static void test_lab_recording(void **state)
{
	char path[] = "/tmp/dmt-objtrack-XXXXXX";
	struct rec_meta m = { .mode = DMT_MODE_DEVMEM_TP };
	struct dmt_pool_snap pools[4], pool_first;
	struct dmt_binding_snap bind_last;
	struct objtrack pt = {}, bt = {};
	struct rec_end end = { .n_snapshots = 3 };
	struct gate_report rep = {};
	struct gate_spec *spec;
	struct gate_eval *ev;
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item it;
	const char *y = "thresholds:\n"
			"  - metric: pool.holds\n"
			"    expect: [count == 200]\n"
			"  - metric: binding.leaked_niovs\n"
			"    expect: [sum == 0]\n";
	char err[256];
	int fd = mkstemp(path), ret, n = 0;

	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < DMT_M__COUNT; i++)
		m.avail[i].available = true;
	w = rec_writer__open(path, &m);
	assert_non_null(w);
	for (int k = 0; k < 3; k++) {
		struct dmt_snapshot *s = lab_snap(k);

		assert_int_equal(rec_writer__snapshot(w, s), 0);
		snapshot__free(s);
	}
	assert_int_equal(rec_writer__end(w, &end), 0);
	assert_int_equal(rec_writer__close(w), 0);

	spec = gate_spec__parse_buf(y, strlen(y), "t", err, sizeof(err));
	assert_non_null(spec);
	ev = gate_eval__new(spec);
	assert_non_null(ev);
	r = rec_reader__open(path);
	assert_non_null(r);
	/* what report does with each snapshot */
	while ((ret = rec_reader__next(r, &it)) > 0) {
		bool created;
		int i;

		if (it.type != REC_SNAPSHOT)
			continue;
		assert_int_equal(gate_eval__add(ev, it.snap), 0);
		i = objtrack__pool(&pt, &it.snap->pools[0], &created);
		assert_true(i >= 0 && i < 4);
		if (created)
			pools[i] = pool_first = it.snap->pools[0];
		else
			objtrack_pool_update(&pools[i], &it.snap->pools[0]);
		i = objtrack__binding(&bt, &it.snap->bindings[0], &created);
		assert_int_equal(i, 0);
		if (created)
			bind_last = it.snap->bindings[0];
		else
			objtrack_binding_update(&bind_last, &it.snap->bindings[0]);
		snapshot__free(it.snap);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 3);
	/* one pool 4, destroyed, on eth0 */
	assert_int_equal(pt.n, 1);
	assert_int_equal(pools[0].id, 4);
	assert_int_equal(pools[0].state, DMT_POOL_DESTROYED);
	assert_string_equal(pools[0].ifname, "eth0");
	assert_int_equal(pools[0].holds - pool_first.holds, 200);
	/* the freelist binding stays freelist in its last, freed, sighting */
	assert_string_equal(bind_last.layout, "freelist");
	assert_false(bind_last.alive);
	/* gate --from counts the same pool the same way */
	assert_int_equal(gate_eval__finish(ev, &rep), 0);
	assert_int_equal(rep.n_results, 2);
	assert_int_equal(rep.results[0].status, GATE_PASS);
	assert_true(rep.results[0].observed == 200);
	assert_int_equal(rep.results[1].status, GATE_PASS);
	gate_report__fini(&rep);
	gate_eval__free(ev);
	gate_spec__free(spec);
	rec_reader__free(r);
	objtrack__fini(&pt);
	objtrack__fini(&bt);
	unlink(path);
}

/*
 * The run figures report and the HTML page show (objrun): one row per pool
 * whatever its sightings say (light mode lists a pool by id before a window
 * gives its address), unknown stays unknown, history before the run is not
 * the run's, and no difference ever wraps.
 */
static void test_run_light(void **state)
{
	struct dmt_pool_snap p[4][3];
	struct dmt_snapshot s[4];
	struct objrun r = {};

	for (int k = 0; k < 4; k++) {
		p[k][0] = pool_snap(0, 7, 0);		/* never located */
		p[k][0].counters_unknown = true;
		p[k][1] = k < 2 ? pool_snap(0, 8, 0) : pool_snap(0xffff2000, 8, 5000 + 10 * k);
		p[k][1].counters_unknown = k < 2;
		/* a counter that restarts (a reused map slot): 900, 950, then 30, 60 */
		p[k][2] = pool_snap(0xffff3000, 9, k < 2 ? 900 + 50 * k : 30 * (k - 1));
		s[k] = (struct dmt_snapshot){ .ts_ns = k, .mode = DMT_MODE_LIGHT, .n_pools = 3,
					      .pools = p[k] };
		assert_int_equal(objrun__add(&r, &s[k]), 0);
	}
	assert_int_equal(r.n_pools, 3);
	assert_false(r.pools[0].known);
	assert_true(r.pools[1].known);
	assert_true(r.pools[1].partial);
	assert_int_equal(r.pools[1].run.holds, 10);
	assert_int_equal(r.pools[1].last.addr, 0xffff2000);
	assert_false(r.pools[2].partial);
	/* 50 before the restart, 30 + 30 after: not 60 - 900 wrapped */
	assert_int_equal(r.pools[2].run.holds, 110);
	objrun__fini(&r);
}

/* Past the caps objects are counted, not kept: memory bounded by the caps. */
static void test_run_caps(void **state)
{
	struct dmt_pool_snap p[64];
	struct dmt_snapshot s = { .n_pools = 64, .pools = p };
	struct objrun r = { .max_pools = 16 };

	for (int k = 0; k < 64; k++)
		p[k] = pool_snap(0x1000 * (k + 1), k + 1, 10);
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_pools, 16);
	assert_int_equal(r.pools_over, 48);
	assert_true(r.cap_pools <= 16);
	objrun__fini(&r);
}

/*
 * Issue 37, finding 3: holders whose pid is unknown (light mode after the
 * privilege drop) are one row each, by socket inode; a recording from
 * before the inode was kept tells them apart by cgroup. Never one row for
 * all unknown processes.
 */
static void test_run_holder_unknown_pids(void **state)
{
	struct dmt_holder_snap h[3] = {
		{ .binding_id = 3, .tokens = 100, .niovs = 10, .cgroup_id = 500, .sock_ino = 7000 },
		{ .binding_id = 3, .tokens = 40, .niovs = 4, .cgroup_id = 501, .sock_ino = 7001 },
		{ .binding_id = 3, .tokens = 20, .niovs = 2, .cgroup_id = 501, .sock_ino = 7002 },
	};
	struct dmt_snapshot s = { .mode = DMT_MODE_LIGHT, .n_holders = 3, .holders = h };
	struct objrun r = {};

	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_holders, 3);
	assert_int_equal(r.holders[0].tokens, 100);
	assert_int_equal(r.holders[0].cgroup_id, 500);
	assert_int_equal(r.holders[1].tokens, 40);
	assert_int_equal(r.holders[2].tokens, 20);
	assert_int_equal(r.holders[2].sock_ino, 7002);
	objrun__fini(&r);

	/* no inode (an older recording): by cgroup, 501's two sockets summed */
	for (int i = 0; i < 3; i++)
		h[i].sock_ino = 0;
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_holders, 2);
	assert_int_equal(r.holders[0].tokens, 100);
	assert_int_equal(r.holders[1].tokens, 60);
	assert_int_equal(r.holders[1].cgroup_id, 501);
	objrun__fini(&r);

	/* known pids: one process's sockets are one row, whatever their inodes */
	h[0].pid = h[1].pid = h[2].pid = 42;
	h[0].sock_ino = 1;
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_holders, 1);
	assert_int_equal(r.holders[0].tokens, 160);
	objrun__fini(&r);
}

/*
 * A holder's oldest token age over the run (issue 25): light mode's
 * snapshots carry none (0), so it stays unknown unless a sighting with a
 * hand-out history gave it; report and the HTML page print "-" for it.
 */
static void test_run_holder_age(void **state)
{
	struct dmt_holder_snap h = { .pid = 7, .binding_id = 3, .tokens = 5, .niovs = 5 };
	struct dmt_snapshot s = { .mode = DMT_MODE_LIGHT, .n_holders = 1, .holders = &h };
	struct objrun r = {};

	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_holders, 1);
	assert_false(r.holders[0].age_known);
	objrun__fini(&r);

	s.mode = DMT_MODE_FENTRY;
	h.oldest_age_ns = 2000000000ULL;
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_true(r.holders[0].age_known);
	assert_int_equal(r.holders[0].oldest_age_ns, 2000000000ULL);
	objrun__fini(&r);
}

/*
 * Light mode, autorelease off: a holder's counts are unknown (not 0) until
 * a sighting with counts; the peak is taken over those only.
 */
static void test_run_holder_counts_unknown(void **state)
{
	struct dmt_holder_snap h = { .pid = 7, .binding_id = 3, .manual = true,
				     .counts_unknown = true };
	struct dmt_snapshot s = { .mode = DMT_MODE_LIGHT, .n_holders = 1, .holders = &h };
	struct objrun r = {};

	assert_int_equal(objrun__add(&r, &s), 0);
	assert_int_equal(r.n_holders, 1);
	assert_false(r.holders[0].tokens_known);
	h = (struct dmt_holder_snap){ .pid = 7, .binding_id = 3, .tokens = 4, .niovs = 2 };
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_true(r.holders[0].tokens_known);
	assert_int_equal(r.holders[0].tokens, 4);
	h = (struct dmt_holder_snap){ .pid = 7, .binding_id = 3, .counts_unknown = true };
	assert_int_equal(objrun__add(&r, &s), 0);
	assert_true(r.holders[0].tokens_known);
	assert_int_equal(r.holders[0].tokens, 4);
	objrun__fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_light),
		cmocka_unit_test(test_run_caps),
		cmocka_unit_test(test_run_holder_age),
		cmocka_unit_test(test_run_holder_unknown_pids),
		cmocka_unit_test(test_run_holder_counts_unknown),
		cmocka_unit_test(test_pool_identity),
		cmocka_unit_test(test_many_and_cap),
		cmocka_unit_test(test_update_keeps_attributes),
		cmocka_unit_test(test_lab_recording),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
