// SPDX-License-Identifier: GPL-2.0
/*
 * The metric table (src/core/metrics.c) checked as a whole, so a new row cannot
 * silently break an output: names, JSON keys, Prometheus families and
 * recording tags unique; every row reachable from the outputs that claim
 * it; Prometheus naming conventions; derived rows not recorded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "expo.h"
#include "gate_spec.h"
#include "metrics.h"

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && !strcmp(s + n - m, sfx);
}

static const char *const obj_prefix[] = {
	[MO_BINDING] = "binding.", [MO_POOL] = "pool.", [MO_GLOBAL] = "",
};

static size_t obj_size(enum mdef_obj o)
{
	return o == MO_POOL ? sizeof(struct dmt_pool_snap) :
	       o == MO_BINDING ? sizeof(struct dmt_binding_snap) : sizeof(struct dmt_snapshot);
}

static size_t kind_size(enum mdef_kind k)
{
	return k == MK_LOG2 ? sizeof(struct hist_log2) :
	       k == MK_BATCH ? sizeof(struct hist_batch) : sizeof(uint32_t);
}

static void test_rows(void **state)
{
	assert_true(mdef_count > 0);
	/* the outputs keep fixed room for the table's rows */
	assert_true(mdef_count <= 128);
	for (size_t i = 0; i < mdef_count; i++) {
		const struct mdef *d = &mdefs[i];

		assert_non_null(d->name);
		assert_int_equal(strncmp(d->name, obj_prefix[d->obj], strlen(obj_prefix[d->obj])),
				 0);
		assert_non_null(d->help);
		assert_true(strlen(d->help) > 10);
		assert_true(d->avail < DMT_M__COUNT);
		if (d->repr == MR_DERIVED) {
			assert_non_null(d->derive);
			assert_int_equal(d->rec_tag, 0);	/* computed on reading */
		} else {
			assert_null(d->derive);
			assert_true(d->off + kind_size(d->kind) <= obj_size(d->obj));
		}
		/* a histogram's classic family is scaled; its native twin has help */
		if (d->kind == MK_LOG2 && d->prom)
			assert_true(d->prom_div >= 1);
		if (d->prom_native) {
			assert_int_equal(d->kind, MK_LOG2);
			assert_non_null(d->native_help);
		}
		/* recordings: pool tag 1 is the flags */
		if (d->obj == MO_POOL && d->rec_tag)
			assert_true(d->rec_tag >= 2);
		if (d->type == MT_TOTAL)
			assert_non_null(d->event);
		/* people's tables: a scalar with words; top only among those */
		if (d->col) {
			assert_int_equal(d->kind, MK_SCALAR);
			assert_non_null(d->title);
		}
		if (d->top)
			assert_true(d->col && d->obj != MO_GLOBAL);
		for (size_t j = 0; j < i; j++) {
			const struct mdef *e = &mdefs[j];

			assert_string_not_equal(d->name, e->name);
			if (d->json && e->json)
				assert_string_not_equal(d->json, e->json);
			if (d->prom && e->prom)
				assert_string_not_equal(d->prom, e->prom);
			if (d->rec_tag && d->obj == e->obj)
				assert_int_not_equal(d->rec_tag, e->rec_tag);
			/* one row per field: the run figures add each row up once */
			if (d->repr != MR_DERIVED && e->repr != MR_DERIVED && d->obj == e->obj)
				assert_int_not_equal(d->off, e->off);
			/* one heading per column of an object's table */
			if (d->col && e->col && d->obj == e->obj)
				assert_string_not_equal(d->col, e->col);
			/* prom_seq: one place per family among its object's */
			if (d->prom_seq && d->obj == e->obj)
				assert_int_not_equal(d->prom_seq, e->prom_seq);
		}
	}
}

static void test_outputs_reach_rows(void **state)
{
	for (size_t i = 0; i < mdef_count; i++) {
		const struct mdef *d = &mdefs[i];

		if (d->gate) {
			int id = gm_lookup(d->name);

			assert_true(id >= 0);
			assert_ptr_equal(gm_def(id)->mdef, d);
			assert_int_equal(gm_def(id)->avail, d->avail);
		} else {
			assert_int_equal(gm_lookup(d->name), -1);
		}
		if (d->prom) {
			const struct expo_family *f = expo_family_find(d->prom);

			assert_non_null(f);
			assert_string_equal(f->type, d->kind != MK_SCALAR ? "histogram" :
					    d->type == MT_COUNTER ? "counter" : "gauge");
			assert_int_equal(f->gate, d->avail);
			assert_int_equal(f->scope, d->obj == MO_POOL ? EXPO_POOL :
					 d->obj == MO_BINDING ? EXPO_BINDING : EXPO_GLOBAL);
			/* Prometheus conventions: counters _total, units in the name */
			assert_true(ends_with(d->prom, "_total") ==
				    (d->kind == MK_SCALAR && d->type == MT_COUNTER));
			if (d->kind == MK_LOG2 && d->unit == MU_NS)
				assert_true(ends_with(d->prom, "_seconds"));
			if (d->prom_native)
				assert_non_null(expo_family_find(d->prom_native));
			if (d->unit == MU_BYTES)
				assert_true(ends_with(d->prom, d->kind == MK_SCALAR &&
						      d->type == MT_COUNTER ? "_bytes_total" :
						      "_bytes"));
			if (d->unit == MU_RATIO)
				assert_true(ends_with(d->prom, "_ratio"));
		}
	}
}

/*
 * The gate list keeps its places for the figures that became rows (R() in
 * gate_spec.c): each is filled from its row, with the row's type and
 * direction, and the row is not listed a second time.
 */
static void test_gate_places(void **state)
{
	static const struct {
		enum gm_id id;
		const char *name;
		enum gm_type type;
	} placed[] = {
		{ GM_POOL_REFILL_BATCH, "pool.refill_batch", GM_HIST_BATCH },
		{ GM_POOL_HOLDS, "pool.holds", GM_COUNTER },
		{ GM_POOL_RELEASES, "pool.releases", GM_COUNTER },
		{ GM_POOL_INFLIGHT, "pool.inflight", GM_GAUGE },
		{ GM_POOL_DESTROY_INFLIGHT, "pool.destroy_inflight", GM_GAUGE },
		{ GM_POOL_NID_CHANGES, "pool.nid_changes", GM_COUNTER },
		{ GM_BIND_ALLOC_LATENCY, "binding.alloc_latency", GM_HIST_LOG2 },
		{ GM_BIND_ALLOC_LATENCY_NIOV, "binding.alloc_latency_per_niov", GM_HIST_LOG2 },
		{ GM_BIND_FREE_LATENCY, "binding.free_latency", GM_HIST_LOG2 },
		{ GM_DONTNEED_TOKENS, "dontneed.tokens", GM_COUNTER },
		{ GM_DONTNEED_CALLS, "dontneed.calls", GM_COUNTER },
	};

	for (size_t i = 0; i < sizeof(placed) / sizeof(placed[0]); i++) {
		const struct gm_def *g = gm_def(placed[i].id);

		assert_non_null(g->mdef);
		assert_string_equal(g->name, placed[i].name);
		assert_int_equal(g->type, placed[i].type);
		assert_int_equal(g->better, g->mdef->better);
		assert_non_null(g->help);
		assert_int_equal(gm_lookup(placed[i].name), placed[i].id);
	}
	/* every entry has a name and words: no place left unfilled */
	for (int i = 0; i < gm_count(); i++) {
		assert_non_null(gm_def(i)->name);
		assert_non_null(gm_def(i)->help);
	}
}

/* What people's views print (mdef_fmt): n/a unavailable, - unknown, never 0. */
static void test_view_fmt(void **state)
{
	struct dmt_availability av[DMT_M__COUNT] = {};
	struct dmt_pool_snap p = { .queue_alloc_fail = -1 };
	const struct mdef *rcy = NULL, *mean = NULL, *qaf = NULL;
	char buf[32];

	for (size_t i = 0; i < mdef_count; i++) {
		if (!strcmp(mdefs[i].name, "pool.recycle_ratio"))
			rcy = &mdefs[i];
		if (!strcmp(mdefs[i].name, "pool.refill_batch_mean"))
			mean = &mdefs[i];
		if (!strcmp(mdefs[i].name, "pool.queue_rx_alloc_fail"))
			qaf = &mdefs[i];
	}
	assert_non_null(rcy);
	assert_non_null(mean);
	assert_non_null(qaf);
	for (int i = 0; i < DMT_PPS__COUNT; i++)
		p.pps[i] = -1;
	/* a kernel without CONFIG_PAGE_POOL_STATS */
	assert_string_equal(mdef_fmt(rcy, &p, av, true, buf, sizeof(buf)), "n/a");
	av[DMT_M_POOL_STATS].available = true;
	av[DMT_M_QSTATS].available = true;
	/* available, but this pool has no stats (no netdev) */
	assert_string_equal(mdef_fmt(rcy, &p, av, true, buf, sizeof(buf)), "-");
	assert_string_equal(mdef_fmt(qaf, &p, av, true, buf, sizeof(buf)), "-");
	for (int i = 0; i < DMT_PPS__COUNT; i++)
		p.pps[i] = 0;
	p.pps[DMT_PPS_RECYCLE_RING] = 9998;
	p.pps[DMT_PPS_RECYCLE_RING_FULL] = 2;
	/* 99.98 %: rounded down, never shown as a perfect 100 */
	assert_string_equal(mdef_fmt(rcy, &p, av, true, buf, sizeof(buf)), "99.9%");
	assert_string_equal(mdef_fmt(rcy, &p, av, false, buf, sizeof(buf)), "99.9");
	p.slow_holds = 640;
	p.slow_calls = 10;
	assert_string_equal(mdef_fmt(mean, &p, av, true, buf, sizeof(buf)), "64.0");
	p.queue_alloc_fail = 3;
	assert_string_equal(mdef_fmt(qaf, &p, av, true, buf, sizeof(buf)), "3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_outputs_reach_rows),
		cmocka_unit_test(test_gate_places),
		cmocka_unit_test(test_view_fmt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
