// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c against values worked by hand or in published tables. The scipy
 * oracle on generated data is tests/integration/90-compare-oracle.sh.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "stats.h"

#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_describe(void **state)
{
	const double x[] = { 4, 1, 3, 2 };
	struct stats_desc d;

	assert_int_equal(stats__describe(x, 4, &d), 0);
	assert_near(d.mean, 2.5, 1e-12);
	assert_near(d.median, 2.5, 1e-12);
	assert_near(d.sd, sqrt(5.0 / 3), 1e-12);
	assert_near(d.min, 1, 0);
	assert_near(d.max, 4, 0);
	assert_int_equal(stats__describe(x, 0, &d), -EINVAL);
	assert_int_equal(stats__describe((const double[]){ NAN }, 1, &d), -EINVAL);
}

static void test_quantiles(void **state)
{
	assert_near(stats__norm_quantile(0.975), 1.959963984540054, 1e-12);
	assert_near(stats__norm_quantile(0.8), 0.8416212335729143, 1e-12);
	assert_near(stats__norm_sf(1.959963984540054), 0.025, 1e-14);
	/* Student's t tables */
	assert_near(stats__t_quantile(0.975, 10), 2.228138851986274, 1e-9);
	assert_near(stats__t_quantile(0.975, 1), 12.70620473617471, 1e-7);
	assert_near(stats__t_sf2(2.228138851986274, 10), 0.05, 1e-12);
	/* df = 1 is Cauchy: P(|T| > 1) = 1/2 */
	assert_near(stats__t_sf2(1, 1), 0.5, 1e-12);
	/* df = 2 has a closed form: P(|T| > t) = 1 - t / sqrt(2 + t^2) */
	assert_near(stats__t_sf2(3, 2), 1 - 3 / sqrt(11), 1e-12);
}

/* Separated samples: U = 0, and P(U = 0) = 1 / C(m + n, m). */
static void test_mwu_exact(void **state)
{
	const double a[] = { 1, 2, 3, 4 }, b[] = { 5, 6, 7, 8 };
	const double c[] = { 1.5, 6.5, 2.5, 9 };
	struct stats_mwu r;

	assert_int_equal(stats__mwu(a, 4, b, 4, &r), 0);
	assert_true(r.exact);
	assert_false(r.ties);
	assert_near(r.u_base, 0, 0);
	assert_near(r.u_cand, 16, 0);
	assert_near(r.p, 2.0 / 70, 1e-14);
	assert_int_equal(stats__mwu(b, 4, a, 4, &r), 0);
	assert_near(r.p, 2.0 / 70, 1e-14);
	/*
	 * a vs c: base values beat 1.5 (2, 3, 4), 2.5 (3, 4): U_base = 5;
	 * max(5, 11) = 11, P(U >= 11) for 4 + 4 is 17/70 by the table of
	 * partitions (counts 1 1 2 3 5 5 7 7 8 7 7 5 5 3 2 1 1 for u = 0..16).
	 */
	assert_int_equal(stats__mwu(a, 4, c, 4, &r), 0);
	assert_near(r.u_base, 5, 0);
	assert_near(r.p, 2 * 17.0 / 70, 1e-14);
}

/* Ties switch to the normal approximation with the tie-corrected variance. */
static void test_mwu_ties(void **state)
{
	const double a[] = { 1, 2, 2, 3 }, b[] = { 2, 3, 4, 5 };
	const double k[] = { 7, 7, 7 };
	struct stats_mwu r;
	double var, z;

	assert_int_equal(stats__mwu(a, 4, b, 4, &r), 0);
	assert_false(r.exact);
	assert_true(r.ties);
	/* ranks: 1 | 2 2 2 -> 3 | 3 3 -> 5.5 | 7 | 8; base 1 + 3 + 3 + 5.5 = 12.5 */
	assert_near(r.u_base, 12.5 - 10, 1e-12);
	var = 16.0 / 12 * (9 - (24.0 + 6.0) / 56);
	z = (13.5 - 8 - 0.5) / sqrt(var);
	assert_near(r.z, z, 1e-12);
	assert_near(r.p, erfc(z / sqrt(2)), 1e-12);
	/* every value equal: no evidence at all */
	assert_int_equal(stats__mwu(k, 3, k, 3, &r), 0);
	assert_near(r.p, 1, 0);
	assert_int_equal(stats__mwu(a, 0, b, 4, &r), -EINVAL);
}

static void test_hl_shift(void **state)
{
	const double a[] = { 10, 11, 12, 13 }, b[] = { 20, 21, 22, 23 };
	const double s3[] = { 1, 2, 3 }, t3[] = { 4, 5, 6 };
	struct stats_shift s;

	/* 16 differences 7..13, median 10; k = 1 (P(U <= 0) = 1/70 <= 0.025) */
	assert_int_equal(stats__hl_shift(a, 4, b, 4, 0.95, &s), 0);
	assert_near(s.est, 10, 1e-12);
	assert_near(s.lo, 7, 0);
	assert_near(s.hi, 13, 0);
	assert_true(s.exact);
	assert_near(s.level, 1 - 2.0 / 70, 1e-12);
	/* 3 and 3 values: the smallest two-sided level is 1 - 2/20 = 90 % */
	assert_int_equal(stats__hl_shift(s3, 3, t3, 3, 0.95, &s), -EDOM);
	assert_near(s.est, 3, 1e-12);
	assert_int_equal(stats__hl_shift(s3, 3, t3, 3, 0.90, &s), 0);
	assert_near(s.lo, 1, 0);
	assert_near(s.hi, 5, 0);
}

/*
 * Hollander & Wolfe's paired example (Hamilton depression scale, 9
 * patients, x before, y after): W+ 40 for x - y, two-sided exact p 5/128,
 * pseudo-median 0.46, exact 96.1 % interval from the 6th smallest and the
 * 6th largest of the 45 Walsh averages, 0.010 .. 0.786.
 */
static void test_signed_rank(void **state)
{
	const double x[] = { 1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30 };
	const double y[] = { 0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29 };
	const double tie[] = { 1, -1, 2, 0, 3, 4, 5, 6, 7, 8 };
	struct stats_signed_rank r;
	struct stats_shift s;
	double d[9];

	(void)state;
	for (int i = 0; i < 9; i++)
		d[i] = x[i] - y[i];
	assert_int_equal(stats__signed_rank(d, 9, &r), 0);
	assert_near(r.w_plus, 40, 1e-12);
	assert_true(r.exact && !r.ties && r.n == 9);
	assert_near(r.p, 5.0 / 128, 1e-15);
	assert_int_equal(stats__hl_paired(d, 9, 0.95, &s), 0);
	assert_near(s.est, 0.46, 1e-12);
	assert_near(s.lo, 0.010, 1e-12);
	assert_near(s.hi, 0.786, 1e-12);
	assert_near(s.level, 1 - 2 * 10.0 / 512, 1e-15);	/* P(W+ <= 5) = 10 / 2^9 */
	/* a zero is dropped, |1| = |-1| is a tie: the normal approximation */
	assert_int_equal(stats__signed_rank(tie, 10, &r), 0);
	assert_true(!r.exact && r.ties && r.n == 9);
	assert_near(r.w_plus, 43.5, 1e-12);
	/* 5 pairs: no 95 % interval (the widest is 93.75 %), the estimate is set */
	assert_int_equal(stats__hl_paired(d, 5, 0.95, &s), -EDOM);
	assert_true(s.est != 0);
	assert_int_equal(stats__signed_rank((const double[]){ 0, 0 }, 2, &r), 0);
	assert_near(r.p, 1, 0);
	assert_int_equal(stats__signed_rank(d, 0, &r), -EINVAL);
	assert_int_equal(stats__hl_paired((const double[]){ NAN }, 1, 0.95, &s), -EINVAL);
}

static void test_holm(void **state)
{
	double p[] = { 0.01, 0.04, 0.03 }, adj[3];

	assert_int_equal(stats__holm(p, 3, adj), 0);
	assert_near(adj[0], 0.03, 1e-15);
	assert_near(adj[1], 0.06, 1e-15);
	assert_near(adj[2], 0.06, 1e-15);
	p[0] = 0.6;
	assert_int_equal(stats__holm(p, 3, p), 0);
	assert_near(p[0], 0.6, 1e-15);	/* 3 * 0.03 = 0.09, 2 * 0.04, then 0.6 */
	assert_near(p[1], 0.09, 1e-15);
	assert_near(p[2], 0.09, 1e-15);
}

/* The rx-page-size cover letter, RX Gbit/s 4K -> 16K (docs/compare.md). */
static void test_welch(void **state)
{
	struct stats_welch w;

	assert_int_equal(stats__welch(300.63, 53.21, 10, 321.35, 28.20, 10, 0.95, &w), 0);
	assert_near(w.diff, 20.72, 1e-9);
	assert_near(w.t, 1.09, 0.005);
	assert_near(w.df, 13.7, 0.05);
	assert_near(w.p, 0.30, 0.005);
	/*
	 * statistics.md's [-22.3, 63.8] takes t(0.975) at 9 df (n - 1, the
	 * conservative choice); at Welch's 13.7 df the quantile is 2.147.
	 */
	assert_near(w.lo, -20.21, 0.01);
	assert_near(w.hi, 61.65, 0.01);
	assert_int_equal(stats__welch(1, 0, 10, 2, 0, 10, 0.95, &w), -EINVAL);
	assert_int_equal(stats__welch(1, 1, 1, 2, 1, 10, 0.95, &w), -EINVAL);
}

/* statistics.md: CV 17.7 % and a 5 % change need about 200 runs per arm. */
static void test_runs_needed(void **state)
{
	unsigned long n = stats__runs_needed(0.177, 0.05, 0.05, 0.8);

	assert_true(n >= 190 && n <= 215);
	assert_int_equal(stats__runs_needed(0, 0.05, 0.05, 0.8), 4);
	assert_int_equal(stats__runs_needed(0.1, 0, 0.05, 0.8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_mwu_exact),
		cmocka_unit_test(test_mwu_ties),
		cmocka_unit_test(test_hl_shift),
		cmocka_unit_test(test_signed_rank),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_runs_needed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
