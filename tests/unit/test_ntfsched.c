// SPDX-License-Identifier: GPL-2.0
/* ntfsched.c: when an announced page pool brings a window forward. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "ntfsched.h"

#define S(x)	((uint64_t)((x) * 1e9))

static uint32_t located_id;

static bool located(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == located_id;
}

/* Announced at 100 s, never located: windows at +0, 1, 2, 4, 8, 16, 32 s. */
static void test_backoff(void **state)
{
	static const double at[] = { 0, 0.5, 0.99, 1, 1.5, 2, 3, 3.9, 4, 7, 8, 15, 16, 31, 32, 33,
				      64, 1000 };
	static const bool want[] = { 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0 };
	struct ntf_sched s = {};

	(void)state;
	located_id = 0;
	assert_int_equal(ntf_sched__add(&s, 7, S(100)), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		bool due = ntf_sched__due(&s, S(100 + at[i]), located, NULL);

		if (due != want[i])
			fail_msg("at +%g s: due %d, want %d", at[i], due, want[i]);
	}
	assert_int_equal(s.n, 0);	/* out of tries: dropped */
}

/* Snapshots far apart (-i 1h): one window a snapshot, never a burst. */
static void test_sparse_snapshots(void **state)
{
	struct ntf_sched s = {};
	int windows = 0;

	(void)state;
	located_id = 0;
	ntf_sched__add(&s, 1, 0);
	for (int h = 0; h < 10; h++)
		windows += ntf_sched__due(&s, S(3600.0 * h), located, NULL);
	assert_int_equal(windows, NTF_TRIES);
}

/* A located pool wants nothing; a change of a waiting pool is not a second entry. */
static void test_located_and_duplicates(void **state)
{
	struct ntf_sched s = {};

	(void)state;
	located_id = 0;
	assert_int_equal(ntf_sched__add(&s, 3, 0), 0);
	assert_int_equal(ntf_sched__add(&s, 3, S(0.5)), 0);
	assert_int_equal(ntf_sched__add(&s, 4, S(0.5)), 0);
	assert_int_equal(s.n, 2);
	assert_true(ntf_sched__due(&s, S(0.5), located, NULL));
	located_id = 3;
	assert_true(ntf_sched__due(&s, S(1.5), located, NULL));	/* 4's second */
	assert_int_equal(s.n, 1);
	located_id = 4;
	assert_false(ntf_sched__due(&s, S(2.5), located, NULL));
	assert_int_equal(s.n, 0);
	for (uint32_t i = 0; i < NTF_PENDING; i++)
		assert_int_equal(ntf_sched__add(&s, 100 + i, 0), 0);
	assert_int_equal(ntf_sched__add(&s, 1, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_sparse_snapshots),
		cmocka_unit_test(test_located_and_duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
