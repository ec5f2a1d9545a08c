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
	if (r->d[0].median != 0) {
		double m = fabs(r->d[0].median);

		r->relative = true;
		r->change = 100 * r->hl.est / m;
		r->lo = 100 * r->hl.lo / m;
		r->hi = 100 * r->hl.hi / m;
	} else {
		r->change = r->hl.est;
		r->lo = r->hl.lo;
		r->hi = r->hl.hi;
	}
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
			 "interval straddles the noise threshold: about %lu runs a side would decide",
			 r->runs_needed);
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
