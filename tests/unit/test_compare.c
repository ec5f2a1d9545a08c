// SPDX-License-Identifier: GPL-2.0
/*
 * compare's decision rule: verdicts on crafted samples, the A/A
 * false-regression rate and the power to see an injected shift, both
 * measured here and printed (docs/compare.md quotes these lines).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "compare_eval.h"
#include "gate_spec.h"
#include "metrics.h"
#include "record.h"
#include <stdlib.h>
#include <unistd.h>

/* xorshift64*: a fixed seed, so the rates below are the same on every run */
static uint64_t rng_state;

static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return ((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void)
{
	double u1 = uniform(), u2 = uniform();

	while (u1 <= 0)
		u1 = uniform();
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* n log-normal run values around median m with spread sigma (about the CV) */
static void runs(double *x, size_t n, double m, double sigma)
{
	for (size_t i = 0; i < n; i++)
		x[i] = m * exp(sigma * normal());
}

static void test_verdicts(void **state)
{
	const double base[] = { 100, 101, 99, 100.5, 99.5, 100.2 };
	const double slow[] = { 130, 131, 129, 130.5, 129.5, 130.2 };
	const double same[] = { 100.1, 100.9, 99.2, 100.4, 99.6, 100.3 };
	const double zero[] = { 0, 0, 0, 0, 0 };
	struct cmp_input in[] = {
		{ base, 6, slow, 6, 5, MB_LOWER },	/* 30 % slower */
		{ base, 6, slow, 6, 5, MB_HIGHER },	/* 30 % more batch */
		{ base, 6, same, 6, 5, MB_LOWER },
		{ base, 3, slow, 6, 5, MB_LOWER },	/* too few */
		{ zero, 5, zero, 5, 5, MB_LOWER },
	};
	struct cmp_result r[5];

	assert_int_equal(cmp__run(in, r, 5, 0.05), 0);
	assert_int_equal(r[0].verdict, CV_REGRESSED);
	assert_true(r[0].change > 29 && r[0].change < 31);
	assert_true(r[0].lo > 5 && r[0].hi < 40);
	assert_int_equal(r[1].verdict, CV_IMPROVED);
	assert_int_equal(r[2].verdict, CV_UNCHANGED);
	assert_int_equal(r[3].verdict, CV_INCONCLUSIVE);
	assert_false(r[3].tested);
	assert_non_null(strstr(r[3].reason, "too few runs"));
	assert_int_equal(r[4].verdict, CV_UNCHANGED);
	/* Holm over the 4 tested metrics: exact p of 6 vs 6 separated is 2/924 */
	assert_true(fabs(r[0].u.p - 2.0 / 924) < 1e-12);
	assert_true(fabs(r[0].p_holm - 4 * 2.0 / 924) < 1e-12);
}

/* The gate vocabulary says which way is better. */
static void test_direction(void **state)
{
	assert_int_equal(gm_def(gm_lookup("binding.alloc_latency"))->better, MB_LOWER);
	assert_int_equal(gm_def(gm_lookup("binding.niovs_per_call"))->better, MB_HIGHER);
	assert_int_equal(gm_def(gm_lookup("binding.alloc_failures"))->better, MB_LOWER);
	assert_int_equal(gm_def(gm_lookup("binding.niov_size"))->better, MB_NONE);
}

#define AA_RUNS		1000
#define AA_N		10
#define AA_SIGMA	0.10

/*
 * A/A: both sides drawn from the same distribution, 10 runs a side with a
 * 10 % spread; a "regressed" verdict is a false alarm. The goal is at most
 * the nominal 5 %; the rule also asks for a change beyond the noise
 * threshold, so it should be well below.
 */
static void test_aa_false_regressions(void **state)
{
	double a[AA_N], b[AA_N];
	int regressed = 0, unchanged = 0, inconclusive = 0;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < AA_RUNS; i++) {
		struct cmp_input in = { a, AA_N, b, AA_N, 5, MB_LOWER };
		struct cmp_result r;

		runs(a, AA_N, 1000, AA_SIGMA);
		runs(b, AA_N, 1000, AA_SIGMA);
		assert_int_equal(cmp__run(&in, &r, 1, 0.05), 0);
		regressed += r.verdict == CV_REGRESSED;
		unchanged += r.verdict == CV_UNCHANGED;
		inconclusive += r.verdict == CV_INCONCLUSIVE;
	}
	printf("A/A: %d comparisons, %d runs a side, spread %.0f%%, noise 5%%: "
	       "%d regressed (false-regression rate %.1f%%, goal <= 5%%), %d unchanged, "
	       "%d inconclusive\n", AA_RUNS, AA_N, AA_SIGMA * 100, regressed,
	       100.0 * regressed / AA_RUNS, unchanged, inconclusive);
	assert_true(regressed <= AA_RUNS * 5 / 100);
}

/* A 20 % slowdown at the same spread and n: found in at least 80 % of the trials. */
static void test_injected_shift(void **state)
{
	double a[AA_N], b[AA_N];
	int regressed = 0, improved = 0;

	rng_state = 0x243f6a8885a308d3ULL;
	for (int i = 0; i < AA_RUNS; i++) {
		struct cmp_input in = { a, AA_N, b, AA_N, 5, MB_LOWER };
		struct cmp_result r;

		runs(a, AA_N, 1000, AA_SIGMA);
		runs(b, AA_N, 1200, AA_SIGMA);
		assert_int_equal(cmp__run(&in, &r, 1, 0.05), 0);
		regressed += r.verdict == CV_REGRESSED;
		improved += r.verdict == CV_IMPROVED;
	}
	printf("shift: %d comparisons, +20%% at %d runs a side, spread %.0f%%: "
	       "%d regressed (detected %.1f%%, goal >= 80%%), %d improved\n", AA_RUNS, AA_N,
	       AA_SIGMA * 100, regressed, 100.0 * regressed / AA_RUNS, improved);
	assert_true(regressed >= AA_RUNS * 80 / 100);
	assert_int_equal(improved, 0);
}

/* Write a recording with this end frame, read its end frame back. */
static void end_round_trip(const struct rec_end *in, struct rec_end *out)
{
	char path[] = "/tmp/dmt-test-end-XXXXXX";
	int fd = mkstemp(path), ret;
	struct rec_meta m = { .version = "t", .kernel = "k", .interval_ns = 1 };
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item it;
	bool seen = false;

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path, &m);
	assert_non_null(w);
	assert_int_equal(rec_writer__end(w, in), 0);
	assert_int_equal(rec_writer__close(w), 0);
	r = rec_reader__open(path);
	assert_non_null(r);
	while ((ret = rec_reader__next(r, &it)) > 0) {
		if (it.type == REC_END) {
			*out = it.end;
			seen = true;
		}
	}
	assert_int_equal(ret, 0);
	assert_true(seen);
	rec_reader__free(r);
	unlink(path);
}

/* The recorded command's CPU survives a recording; without it, none is made up. */
static void test_end_cpu_tail(void **state)
{
	struct rec_end in = { .n_snapshots = 0, .reason = REC_END_COMMAND, .exit_status = 0,
			      .has_cpu = true, .cpu_user_ns = 1234567890123ULL,
			      .cpu_sys_ns = 42 }, out;

	end_round_trip(&in, &out);
	assert_true(out.has_cpu);
	assert_true(out.cpu_user_ns == in.cpu_user_ns);
	assert_true(out.cpu_sys_ns == in.cpu_sys_ns);
	assert_int_equal(out.reason, REC_END_COMMAND);
	in.has_cpu = false;
	end_round_trip(&in, &out);
	assert_false(out.has_cpu);
	assert_true(out.cpu_user_ns == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_end_cpu_tail),
		cmocka_unit_test(test_aa_false_regressions),
		cmocka_unit_test(test_injected_shift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
