/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdicts of `devmemtop compare` (docs/compare.md), from per-run values:
 *
 *   struct cmp_input in[N] = { { base, na, cand, nb, noise_pct, MB_LOWER }, ... };
 *   struct cmp_result res[N];
 *   cmp__run(in, res, N, 0.05);
 *
 * Per metric: the U test, the Hodges-Lehmann shift with its 95 % interval
 * as a percentage of the base median, Holm across the N metrics, and
 *
 *   unchanged     the whole interval inside +/- the noise threshold
 *   improved,     Holm-adjusted p < alpha, the interval excludes 0 and the
 *   regressed     estimated change is beyond the noise threshold (the
 *                 direction of the metric says which)
 *   inconclusive  anything else, including too few runs (reason says why)
 *
 * paired: base[i] and cand[i] are one pair (the same round of an
 * interleaved run). Wilcoxon's signed-rank test on the differences and the
 * paired Hodges-Lehmann estimate instead; with every value positive the
 * differences are log ratios (change, lo and hi: percent change of the
 * median pair's ratio), else cand - base against the base median.
 */
#ifndef DEVMEMTOP_COMPARE_EVAL_H
#define DEVMEMTOP_COMPARE_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include "stats.h"

/* Runs a side below which no verdict is given: a 95 % interval needs 4. */
#define CMP_MIN_RUNS	4

enum cmp_verdict {
	CV_UNCHANGED = 0,
	CV_IMPROVED,
	CV_REGRESSED,
	CV_INCONCLUSIVE,
};

struct cmp_input {
	const double *base;
	size_t na;
	const double *cand;
	size_t nb;
	double noise_pct;	/* e.g. 5 */
	int better;		/* enum mdef_better: MB_LOWER or MB_HIGHER */
	bool paired;		/* base[i] and cand[i] are one pair; na == nb */
};

struct cmp_result {
	struct stats_desc d[2];	/* base, cand (n 0: no values) */
	bool tested;		/* enough runs: u, hl, p_holm are set */
	struct stats_mwu u;	/* paired: p, z, exact and ties of the signed-rank test */
	bool paired;
	bool log_ratio;		/* paired with every value positive: hl is of ln(cand / base) */
	struct stats_signed_rank sr;	/* paired */
	struct stats_shift hl;	/* absolute shift cand - base (log_ratio: of the log ratios) */
	double p_holm;
	bool relative;		/* change/lo/hi are percent of the base median */
	double change, lo, hi;
	enum cmp_verdict verdict;
	unsigned long runs_needed;	/* per side to resolve the noise threshold; 0 unknown */
	char reason[192];
};

/* 0 or -errno (-EINVAL: a non-finite value, -ENOMEM). */
int cmp__run(const struct cmp_input *in, struct cmp_result *res, size_t n, double alpha);
/*
 * The verdict alone, from a result whose tested, relative, change, lo, hi,
 * p_holm and runs_needed are set (compare --summary fills them from Welch).
 */
void cmp__decide(const struct cmp_input *in, struct cmp_result *r, double alpha);
const char *cmp_verdict_name(enum cmp_verdict v);

#endif /* DEVMEMTOP_COMPARE_EVAL_H */
