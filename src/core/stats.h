/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two-sample statistics for `devmemtop compare` (docs/compare.md):
 *
 *   stats__mwu()       Mann-Whitney U, two-sided. Exact p-value (the null
 *                      distribution of U counted by recursion) when there are
 *                      no ties and both samples have at most STATS_EXACT_MAX
 *                      values; otherwise the normal approximation with the
 *                      tie correction of the variance and a continuity
 *                      correction of 0.5 (what scipy.stats.mannwhitneyu does
 *                      with method="exact" and method="asymptotic").
 *   stats__hl_shift()  Hodges-Lehmann shift (cand - base: the median of all
 *                      pairwise differences) with its distribution-free
 *                      confidence interval: order statistics of the
 *                      differences at ranks taken from the null distribution
 *                      of U (exact up to STATS_EXACT_MAX a side, normal
 *                      beyond). No resampling: the result is deterministic.
 *   stats__holm()      Holm's step-down adjustment of a family of p-values.
 *   stats__welch()     Welch's t-test and interval from mean, sd and n.
 *   stats__runs_needed() runs per side to detect a relative shift.
 *
 * Functions return 0 or -errno; no global state.
 */
#ifndef DEVMEMTOP_STATS_H
#define DEVMEMTOP_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Exact U distribution up to this many values a side (2 MiB of work space). */
#define STATS_EXACT_MAX		50

struct stats_desc {
	size_t n;
	double mean;
	double sd;		/* sample standard deviation (n - 1); 0 for n < 2 */
	double median;
	double min, max;
};

/* -EINVAL for n == 0 or a non-finite value. */
int stats__describe(const double *x, size_t n, struct stats_desc *d);

/* Upper tail of the standard normal, P(Z > z). */
double stats__norm_sf(double z);
/* The p-quantile of the standard normal, p in (0, 1). */
double stats__norm_quantile(double p);
/* Two-sided tail of Student's t: P(|T| > |t|) with df > 0 degrees of freedom. */
double stats__t_sf2(double t, double df);
/* The p-quantile of Student's t, p in (0.5, 1). */
double stats__t_quantile(double p, double df);

struct stats_mwu {
	double u_base;		/* U of the base sample: pairs (b, c) with b > c, ties 1/2 */
	double u_cand;		/* na * nb - u_base */
	double p;		/* two-sided */
	double z;		/* normal approximation's z (0 when exact) */
	bool exact;
	bool ties;
};

/* -EINVAL when a side is empty or holds a non-finite value, -ENOMEM. */
int stats__mwu(const double *base, size_t na, const double *cand, size_t nb,
	       struct stats_mwu *r);

struct stats_shift {
	double est;		/* Hodges-Lehmann estimate of cand - base */
	double lo, hi;		/* the interval */
	double level;		/* its actual confidence (>= the one asked when exact) */
	bool exact;		/* ranks from the exact distribution */
};

/*
 * conf in (0, 1), e.g. 0.95. -EDOM when the samples are too small for any
 * interval at that confidence (3 and 3 values: the widest one is 90 %);
 * the estimate is still filled in. -E2BIG past STATS_SHIFT_MAX
 * differences (na * nb).
 */
#define STATS_SHIFT_MAX		(16u << 20)
int stats__hl_shift(const double *base, size_t na, const double *cand, size_t nb, double conf,
		    struct stats_shift *s);

/*
 * Holm's adjustment: adj[i] for p[i], monotone in the order of p, at most 1.
 * p and adj may be the same array. -ENOMEM.
 */
int stats__holm(const double *p, size_t n, double *adj);

/*
 * Paired samples (one difference d[i] = cand[i] - base[i] per pair, e.g.
 * the rounds of an interleaved A/B run): Wilcoxon's signed-rank test.
 * Zero differences are dropped (Wilcoxon's rule); mid-ranks for tied |d|.
 * Exact distribution of W+ up to STATS_EXACT_MAX non-zero differences
 * without ties, else the normal approximation with tie correction and
 * continuity correction. -EINVAL when empty or non-finite, -ENOMEM.
 */
struct stats_signed_rank {
	double w_plus;		/* sum of the ranks of the positive differences */
	size_t n;		/* non-zero differences */
	double p;		/* two-sided */
	double z;		/* normal approximation's z (0 when exact) */
	bool exact;
	bool ties;
};

int stats__signed_rank(const double *d, size_t n, struct stats_signed_rank *r);

/*
 * The Hodges-Lehmann estimate of the paired shift: the median of the Walsh
 * averages (d[i] + d[j]) / 2, i <= j, with the interval from the signed-rank
 * distribution (exact up to STATS_EXACT_MAX pairs). All n differences, zeros
 * included. -EDOM when n is too small for any interval at conf (5 pairs:
 * the widest is 93.75 %); the estimate is still filled in. -E2BIG past
 * STATS_PAIRED_MAX pairs.
 */
#define STATS_PAIRED_MAX	2000
int stats__hl_paired(const double *d, size_t n, double conf, struct stats_shift *s);

struct stats_welch {
	double diff;		/* mean2 - mean1 */
	double se;
	double t;
	double df;		/* Welch-Satterthwaite */
	double p;		/* two-sided */
	double lo, hi;		/* interval of diff at the confidence asked */
};

/* -EINVAL for n < 2, a negative sd, or both sd 0. */
int stats__welch(double mean1, double sd1, size_t n1, double mean2, double sd2, size_t n2,
		 double conf, struct stats_welch *w);

/*
 * Runs per side for a two-sided U test at level alpha to detect, with the
 * given power, a relative shift `effect` (0.05 = 5 %) when the runs spread
 * with coefficient of variation cv: the normal-theory sample size
 * 2 (z(1-alpha/2) + z(power))^2 cv^2 / effect^2, times pi/3 for the U test's
 * efficiency relative to the t-test under normality, and never below the 4
 * a side an interval at 95 % needs. 0 when effect <= 0.
 */
unsigned long stats__runs_needed(double cv, double effect, double alpha, double power);

#endif /* DEVMEMTOP_STATS_H */
