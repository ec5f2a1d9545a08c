// SPDX-License-Identifier: GPL-2.0
/* compare's decision rule (compare_eval.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare_eval.h"
#include "metrics.h"

const char *cmp_verdict_name(enum cmp_verdict v)
{
	static const char *const names[] = {
		[CV_UNCHANGED] = "unchanged", [CV_IMPROVED] = "improved",
		[CV_REGRESSED] = "regressed", [CV_INCONCLUSIVE] = "inconclusive",
	};

	return (unsigned int)v < 4 ? names[v] : "?";
}

/*
 * change, lo and hi from the shift: percent change of the ratio (log
 * ratios), percent of the base median, or absolute when that median is 0.
 */
static void shift_to_change(struct cmp_result *r)
{
	double m = fabs(r->d[0].median);

	r->relative = r->log_ratio || m != 0;
	if (r->log_ratio) {
		r->change = 100 * expm1(r->hl.est);
		r->lo = 100 * expm1(r->hl.lo);
		r->hi = 100 * expm1(r->hl.hi);
	} else {
		r->change = m != 0 ? 100 * r->hl.est / m : r->hl.est;
		r->lo = m != 0 ? 100 * r->hl.lo / m : r->hl.lo;
		r->hi = m != 0 ? 100 * r->hl.hi / m : r->hl.hi;
	}
}

/*
 * Paired: the differences (log ratios when every value is positive), the
 * signed-rank test and the paired shift. 0 or -errno.
 */
static int test_paired(const struct cmp_input *in, struct cmp_result *r)
{
	size_t n = in->na;
	double *d = malloc(n * sizeof(*d)), sd;
	struct stats_desc dd;
	int err;

	if (!d)
		return -ENOMEM;
	r->paired = true;
	r->log_ratio = true;
	for (size_t i = 0; i < n; i++)
		if (!(in->base[i] > 0 && in->cand[i] > 0))
			r->log_ratio = false;
	/* a ratio and its inverse: the same |d| to the bit (a tie, not two ranks) */
	for (size_t i = 0; i < n; i++) {
		double b = in->base[i], c = in->cand[i];

		d[i] = !r->log_ratio ? c - b : c >= b ? log(c / b) : -log(b / c);
	}
	err = stats__describe(d, n, &dd);
	if (!err)
		err = stats__signed_rank(d, n, &r->sr);
	if (!err)
		err = stats__hl_paired(d, n, 0.95, &r->hl);
	free(d);
	if (err == -EDOM) {
		snprintf(r->reason, sizeof(r->reason),
			 "too few pairs (%zu) for a 95%% interval: 6 at least", n);
		return 0;
	}
	if (err)
		return err;
	sd = r->log_ratio ? dd.sd : (r->d[0].mean != 0 ? dd.sd / fabs(r->d[0].mean) : -1);
	r->runs_needed = sd >= 0 ? stats__runs_needed(sd / sqrt(2), in->noise_pct / 100,
						      0.05, 0.8) : 0;
	r->u.p = r->sr.p;
	r->u.z = r->sr.z;
	r->u.exact = r->sr.exact;
	r->u.ties = r->sr.ties;
	r->tested = true;
	shift_to_change(r);
	return 0;
}

/* Test one metric (no verdict yet). */
static int test_one(const struct cmp_input *in, struct cmp_result *r)
{
	double pooled;
	int err;

	memset(r, 0, sizeof(*r));
	r->verdict = CV_INCONCLUSIVE;
	if (in->na && (err = stats__describe(in->base, in->na, &r->d[0])))
		return err;
	if (in->nb && (err = stats__describe(in->cand, in->nb, &r->d[1])))
		return err;
	if (in->na && in->nb && r->d[0].mean != 0) {
		pooled = sqrt((r->d[0].sd * r->d[0].sd + r->d[1].sd * r->d[1].sd) / 2);
		r->runs_needed = stats__runs_needed(pooled / fabs(r->d[0].mean),
						    in->noise_pct / 100, 0.05, 0.8);
	}
	if (in->paired && in->na != in->nb) {
		snprintf(r->reason, sizeof(r->reason),
			 "paired runs need as many a side (base %zu, cand %zu)", in->na, in->nb);
		return 0;
	}
	if (in->paired && in->na > STATS_PAIRED_MAX) {
		snprintf(r->reason, sizeof(r->reason), "more than %d pairs", STATS_PAIRED_MAX);
		return 0;
	}
	if (in->paired && in->na >= CMP_MIN_RUNS)
		return test_paired(in, r);
	if (in->na < CMP_MIN_RUNS || in->nb < CMP_MIN_RUNS) {
		snprintf(r->reason, sizeof(r->reason),
			 "too few runs (base %zu, cand %zu): a 95%% interval needs %d a side",
			 in->na, in->nb, CMP_MIN_RUNS);
		return 0;
	}
	err = stats__mwu(in->base, in->na, in->cand, in->nb, &r->u);
	if (!err)
		err = stats__hl_shift(in->base, in->na, in->cand, in->nb, 0.95, &r->hl);
	if (err)
		return err;
	r->tested = true;
	shift_to_change(r);
	return 0;
}

void cmp__decide(const struct cmp_input *in, struct cmp_result *r, double alpha)
{
	double noise = r->relative ? in->noise_pct : 0;
	bool sig = r->p_holm < alpha && (r->lo > 0 || r->hi < 0);
	bool worse = (r->change > 0) == (in->better == MB_LOWER);

	if (!r->tested)
		return;
	if (r->lo >= -noise && r->hi <= noise) {
		r->verdict = CV_UNCHANGED;
		snprintf(r->reason, sizeof(r->reason), "interval inside +/-%g%%", noise);
	} else if (sig && fabs(r->change) > noise) {
		r->verdict = worse ? CV_REGRESSED : CV_IMPROVED;
		if (!r->relative)
			snprintf(r->reason, sizeof(r->reason), "base median 0: absolute change");
	} else if (sig) {
		snprintf(r->reason, sizeof(r->reason),
			 "significant, but the change is within the noise threshold (%g%%)", noise);
	} else if (r->runs_needed) {
		snprintf(r->reason, sizeof(r->reason),
			 "interval straddles the noise threshold: about %lu %s would decide",
			 r->runs_needed, r->paired ? "pairs" : "runs a side");
	} else {
		snprintf(r->reason, sizeof(r->reason), "interval straddles the noise threshold");
	}
}

int cmp__run(const struct cmp_input *in, struct cmp_result *res, size_t n, double alpha)
{
	double *p = calloc(n ? n : 1, sizeof(*p));
	size_t k = 0;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		err = test_one(&in[i], &res[i]);
		if (!err && res[i].tested)
			p[k++] = res[i].u.p;
	}
	if (!err)
		err = stats__holm(p, k, p);
	k = 0;
	for (size_t i = 0; i < n && !err; i++) {
		if (!res[i].tested)
			continue;
		res[i].p_holm = p[k++];
		cmp__decide(&in[i], &res[i], alpha);
	}
	free(p);
	return err;
}
