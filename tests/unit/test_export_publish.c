// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the exporter's snapshot publisher (src/core/publisher.c): readers
 * keep their snapshot across publishes, the last reference frees it, a
 * reader that never lets go does not block publishing, and concurrent
 * readers always see one consistent, fully rendered snapshot.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "publisher.h"
#include "util.h"

/* A heap snapshot snapshot__free() can free: n pools, seq in ringbuf_drops. */
static struct dmt_snapshot *make_snap(uint64_t seq, size_t n)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	for (int m = 0; m < DMT_M__COUNT; m++)
		s->avail[m].available = true;
	s->seq = seq;
	s->ringbuf_drops = seq;
	s->wall_ns = 1000000000ULL * (1700000000ULL + seq);
	s->n_pools = n;
	s->pools = calloc(n ? n : 1, sizeof(*s->pools));
	assert_non_null(s->pools);
	for (size_t i = 0; i < n; i++) {
		s->pools[i].id = i + 1;
		s->pools[i].queue = -1;
		s->pools[i].netlink_inflight = -1;
		s->pools[i].destroy_inflight = -1;
		s->pools[i].holds = seq;
		snprintf(s->pools[i].ifname, sizeof(s->pools[i].ifname), "eth%zu", i);
	}
	return s;
}

/* For reader threads (no cmocka asserts there): UINT64_MAX when missing. */
static uint64_t find_u64(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	return p ? strtoull(p + strlen(prefix), NULL, 10) : UINT64_MAX;
}

static uint64_t value_of(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	if (!p)
		fail_msg("no '%s' in the text", prefix);
	return strtoull(p + strlen(prefix), NULL, 10);
}

static void test_get_before_publish(void **state)
{
	struct publisher *pb = publisher__new(2);

	assert_non_null(pb);
	assert_null(publisher__get(pb));
	assert_int_equal(publisher__live(pb), 0);
	/* nothing to count an error against yet */
	assert_int_equal(publisher__count_error(pb, 1), 0);
	assert_null(publisher__get(pb));
	publisher__free(pb);
}

static void test_readers_keep_their_snapshot(void **state)
{
	struct publisher *pb = publisher__new(2);
	struct expo_totals t = {};
	struct pubsnap *a, *b;
	const char *ta, *tb;
	size_t la, lb;

	assert_int_equal(publisher__publish(pb, make_snap(1, 2), &t, 1, 0, 0), 0);
	a = publisher__get(pb);
	assert_non_null(a);
	assert_int_equal(publisher__live(pb), 1);
	assert_int_equal(publisher__publish(pb, make_snap(2, 3), &t, 2, 0, 0), 0);
	/* a is still alive for its reader: two versions in memory */
	assert_int_equal(publisher__live(pb), 2);
	b = publisher__get(pb);
	assert_ptr_not_equal(a, b);
	assert_int_equal(pubsnap__text(a, &ta, &la), 0);
	assert_int_equal(pubsnap__text(b, &tb, &lb), 0);
	assert_int_equal(value_of(ta, "\ndevmemtop_ringbuf_drops_total "), 1);
	assert_int_equal(value_of(tb, "\ndevmemtop_ringbuf_drops_total "), 2);
	assert_int_equal(value_of(ta, "\ndevmemtop_collections_total "), 1);
	assert_int_equal(value_of(tb, "\ndevmemtop_collections_total "), 2);
	assert_non_null(strstr(tb, "pool_id=\"3\""));
	assert_null(strstr(ta, "pool_id=\"3\""));
	/* rendered once: the same text on the next call */
	{
		const char *again;
		size_t l2;

		assert_int_equal(pubsnap__text(b, &again, &l2), 0);
		assert_ptr_equal(again, tb);
		assert_int_equal(l2, lb);
	}
	pubsnap__put(a);	/* the last reference to snapshot 1 */
	assert_int_equal(publisher__live(pb), 1);
	pubsnap__put(b);
	assert_int_equal(publisher__live(pb), 1);	/* current one stays */
	publisher__free(pb);
}

static void test_count_error_keeps_age(void **state)
{
	struct publisher *pb = publisher__new(2);
	struct expo_totals t = { .leaked_niovs = 5 };
	struct pubsnap *p;
	const char *text;
	size_t len;

	assert_int_equal(publisher__publish(pb, make_snap(7, 1), &t, 4, 0, 12345), 0);
	assert_int_equal(publisher__count_error(pb, 3), 0);
	p = publisher__get(pb);
	assert_int_equal(pubsnap__published_ns(p), 12345);
	assert_int_equal(pubsnap__collections(p), 4);
	assert_int_equal(pubsnap__text(p, &text, &len), 0);
	assert_int_equal(value_of(text, "\ndevmemtop_collection_errors_total "), 3);
	assert_int_equal(value_of(text, "\ndevmemtop_leaked_niovs_total "), 5);
	assert_int_equal(value_of(text, "\ndevmemtop_ringbuf_drops_total "), 7);
	pubsnap__put(p);
	assert_int_equal(publisher__live(pb), 1);
	publisher__free(pb);
}

struct race {
	struct publisher *pb;
	volatile int stop;
	uint64_t reads;
	int bad;
	char why[160];
};

/* Readers: every text is whole and agrees with its own snapshot. */
static void *reader(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct pubsnap *p = publisher__get(r->pb);
		const char *text;
		size_t len;
		uint64_t seq;

		if (!p)
			continue;
		if (pubsnap__text(p, &text, &len)) {
			r->bad = 1;
			snprintf(r->why, sizeof(r->why), "render failed");
		} else {
			seq = pubsnap__collections(p);
			/* drops == seq == collections, and holds of each pool == seq */
			if (find_u64(text, "\ndevmemtop_ringbuf_drops_total ") != seq ||
			    strlen(text) != len || text[len - 1] != '\n') {
				r->bad = 1;
				snprintf(r->why, sizeof(r->why), "inconsistent text for seq %llu",
					 (unsigned long long)seq);
			}
		}
		pubsnap__put(p);
		__atomic_add_fetch(&r->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_concurrent_readers_and_stuck_reader(void **state)
{
	struct race r = { .pb = publisher__new(1) };
	struct expo_totals t = {};
	struct pubsnap *stuck;
	pthread_t th[4];
	uint64_t t0, elapsed, seq;
	const char *text;
	size_t len;

	assert_int_equal(publisher__publish(r.pb, make_snap(1, 8), &t, 1, 0, 0), 0);
	/* a reader that takes a snapshot and never lets go (until the end) */
	stuck = publisher__get(r.pb);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, &r), 0);
	/* publish until the readers have done plenty of reads alongside */
	t0 = now_mono_ns();
	for (seq = 2; seq < 3000 || __atomic_load_n(&r.reads, __ATOMIC_RELAXED) < 3000; seq++) {
		assert_int_equal(publisher__publish(r.pb, make_snap(seq, 8), &t, seq, 0, 0), 0);
		assert_true(seq < 1000000);
	}
	elapsed = now_mono_ns() - t0;
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	if (r.bad)
		fail_msg("%s", r.why);
	assert_true(r.reads > 0);
	/* the stuck reader's snapshot is intact and still its own */
	assert_int_equal(pubsnap__text(stuck, &text, &len), 0);
	assert_int_equal(value_of(text, "\ndevmemtop_ringbuf_drops_total "), 1);
	/* everything but the current and the stuck one is gone */
	assert_int_equal(publisher__live(r.pb), 2);
	pubsnap__put(stuck);
	assert_int_equal(publisher__live(r.pb), 1);
	print_message("%llu publishes with 4 readers (%llu reads) and a stuck reader: %.1f ms\n",
		      (unsigned long long)seq - 1, (unsigned long long)r.reads,
		      (double)elapsed / 1e6);
	publisher__free(r.pb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_before_publish),
		cmocka_unit_test(test_readers_keep_their_snapshot),
		cmocka_unit_test(test_count_error_keeps_age),
		cmocka_unit_test(test_concurrent_readers_and_stuck_reader),
	};

	return cmocka_run_group_tests_name("export_publish", tests, NULL, NULL);
}
