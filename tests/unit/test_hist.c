// SPDX-License-Identifier: GPL-2.0
/* Histogram math: bucket bounds, quantiles, subtraction. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "hist.h"

static void test_log2_slots_round_up(void **state)
{
	/* slot k holds 2^(k-1) < v <= 2^k: le=2^k is exact */
	assert_int_equal(hist_log2_slot(0), 0);
	assert_int_equal(hist_log2_slot(1), 0);
	assert_int_equal(hist_log2_slot(2), 1);
	assert_int_equal(hist_log2_slot(3), 2);
	assert_int_equal(hist_log2_slot(4), 2);
	assert_int_equal(hist_log2_slot(5), 3);
	assert_int_equal(hist_log2_slot(1024), 10);
	assert_int_equal(hist_log2_slot(1025), 11);
	assert_int_equal(hist_log2_slot(UINT64_MAX), DMT_LOG2_SLOTS - 1);
	for (unsigned int k = 1; k < DMT_LOG2_SLOTS - 1; k++) {
		assert_int_equal(hist_log2_slot(hist_log2_bound(k)), k);
		assert_int_equal(hist_log2_slot(hist_log2_bound(k) + 1), k + 1);
	}
}

static void test_log2_quantiles(void **state)
{
	struct hist_log2 h = {};
	uint64_t v;

	assert_int_equal(hist_log2_quantile(&h, 0.5, &v), -ENODATA);
	hist_log2_add(&h, 100, 98);	/* bucket (64, 128] */
	hist_log2_add(&h, 5000, 2);	/* bucket (4096, 8192] */
	assert_int_equal(h.count, 100);
	assert_int_equal(h.sum, 100 * 98 + 5000 * 2);
	assert_int_equal(hist_log2_quantile(&h, 0.5, &v), 0);
	assert_int_equal(v, 128);
	assert_int_equal(hist_log2_quantile(&h, 0.98, &v), 0);
	assert_int_equal(v, 128);
	/* rank 99 of 100 falls in the slow bucket: conservative upper bound */
	assert_int_equal(hist_log2_quantile(&h, 0.99, &v), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(hist_log2_max(&h), 8192);
	assert_int_equal(hist_log2_cumulative(&h, 7), 98);
	assert_int_equal(hist_log2_cumulative(&h, 13), 100);
	assert_int_equal(hist_log2_quantile(&h, 1.5, &v), -EINVAL);
}

static void test_log2_sub(void **state)
{
	struct hist_log2 a = {}, b = {}, d;

	hist_log2_add(&b, 10, 3);
	a = b;
	hist_log2_add(&a, 1000, 5);
	assert_int_equal(hist_log2_sub(&d, &a, &b), 0);
	assert_int_equal(d.count, 5);
	assert_int_equal(d.sum, 5000);
	assert_int_equal(d.slots[hist_log2_slot(10)], 0);
	assert_int_equal(hist_log2_sub(&d, &b, &a), -EINVAL);
}

static void test_batch_exact(void **state)
{
	struct hist_batch h = {};
	uint64_t v;

	hist_batch_add(&h, 1, 10);
	hist_batch_add(&h, 64, 30);
	hist_batch_add(&h, 500, 1);	/* clamps to the top slot */
	assert_int_equal(h.count, 41);
	assert_int_equal(hist_batch_quantile(&h, 0.5, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(hist_batch_quantile(&h, 0.2, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(hist_batch_max(&h), DMT_BATCH_MAX);
	assert_true(hist_batch_mean(&h) > 49 && hist_batch_mean(&h) < 51);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2_slots_round_up),
		cmocka_unit_test(test_log2_quantiles),
		cmocka_unit_test(test_log2_sub),
		cmocka_unit_test(test_batch_exact),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
