// SPDX-License-Identifier: GPL-2.0
/* compare's decision rule and the model it decides on (compare_eval.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare_eval.h"
#include "metrics.h"
#include "util.h"

const char *cmp_verdict_name(enum cmp_verdict v)
{
	static const char *const names[] = {
		[CV_UNCHANGED] = "unchanged", [CV_IMPROVED] = "improved",
		[CV_REGRESSED] = "regressed", [CV_INCONCLUSIVE] = "inconclusive",
	};

	return (unsigned int)v < 4 ? names[v] : "?";
}

const char *cmp_scale_name(enum cmp_scale s)
{
	return s == CS_RATIO ? "ratio" : "difference";
}

/* Values <= 0 in x[n]: a positive metric's ln needs every value > 0. */
static size_t count_nonpos(const double *x, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !(x[i] > 0);
	return k;
}

/* ln of every value (all > 0), malloc()ed; NULL on allocation failure. */
static double *ln_values(const double *x, size_t n)
{
	double *l = malloc((n ? n : 1) * sizeof(*l));

	for (size_t i = 0; l && i < n; i++)
		l[i] = log(x[i]);
	return l;
}

/*
 * The scale of this comparison: the ratio for a positive metric whose
 * values are all > 0; a 0 in a positive metric (a run without any of it)
 * has no ln, so the difference, said by nonpos.
 */
static void pick_scale(const struct cmp_input *in, struct cmp_result *r)
{
	if (!in->positive)
		return;
	r->nonpos = count_nonpos(in->base, in->na) + count_nonpos(in->cand, in->nb);
	r->scale = r->nonpos ? CS_DIFF : CS_RATIO;
}

/*
 * change, lo and hi from the shift: percent change of the ratio (ln
 * values), percent of the base median, or absolute when that median is 0.
 * A positive metric cannot fall by more than 100 %: on the difference
 * scale its interval is cut there (the true change is >= -100 %, so the
 * cut interval covers it whenever the whole one does).
 */
static void shift_to_change(const struct cmp_input *in, struct cmp_result *r)
{
	double m = fabs(r->d[0].median);

	r->relative = r->scale == CS_RATIO || m != 0;
	if (r->scale == CS_RATIO) {
		r->change = 100 * expm1(r->hl.est);
		r->lo = 100 * expm1(r->hl.lo);
		r->hi = 100 * expm1(r->hl.hi);
		return;
	}
	r->change = m != 0 ? 100 * r->hl.est / m : r->hl.est;
	r->lo = m != 0 ? 100 * r->hl.lo / m : r->hl.lo;
	r->hi = m != 0 ? 100 * r->hl.hi / m : r->hl.hi;
	if (in->positive && m != 0 && (r->lo < -100 || r->change < -100)) {
		r->truncated = true;
		r->lo = fmax(r->lo, -100);
		r->hi = fmax(r->hi, -100);
		r->change = fmax(r->change, -100);
	}
}

void cmp__noise_band(const struct cmp_result *r, double noise_pct, double *down, double *up)
{
	*up = r->relative ? noise_pct : 0;
	*down = r->scale == CS_RATIO ? 100 * (1 / (1 + *up / 100) - 1) : -*up;
}

/*
 * Paired: the differences (ln ratios on the ratio scale), the signed-rank
 * test and the paired shift. 0 or -errno.
 */
static int test_paired(const struct cmp_input *in, struct cmp_result *r)
{
	size_t n = in->na;
	double *d = malloc(n * sizeof(*d)), sd, effect = in->noise_pct / 100;
	bool ratio = r->scale == CS_RATIO;
	struct stats_desc dd;
	int err;

	if (!d)
		return -ENOMEM;
	r->paired = true;
	/* a ratio and its inverse: the same |d| to the bit (a tie, not two ranks) */
	for (size_t i = 0; i < n; i++) {
		double b = in->base[i], c = in->cand[i];

		d[i] = !ratio ? c - b : c >= b ? log(c / b) : -log(b / c);
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
	if (ratio)
		effect = log1p(effect);
	sd = ratio ? dd.sd : (r->d[0].mean != 0 ? dd.sd / fabs(r->d[0].mean) : -1);
	r->runs_needed = sd >= 0 ? stats__runs_needed(sd / sqrt(2), effect, 0.05, 0.8) : 0;
	r->u.p = r->sr.p;
	r->u.z = r->sr.z;
	r->u.exact = r->sr.exact;
	r->u.ties = r->sr.ties;
	r->tested = true;
	shift_to_change(in, r);
	return 0;
}

/*
 * The unpaired shift on the ratio scale: Hodges-Lehmann of ln values, and
 * the runs needed from the spread of the ln values (about the CV) against
 * ln(1 + noise). 0 or -errno.
 */
static int shift_ratio(const struct cmp_input *in, struct cmp_result *r)
{
	double *lb = ln_values(in->base, in->na), *lc = ln_values(in->cand, in->nb);
	struct stats_desc d[2];
	int err = -ENOMEM;

	if (!lb || !lc)
		goto free_ln;
	err = stats__hl_shift(lb, in->na, lc, in->nb, 0.95, &r->hl);
	if (!err)
		err = stats__describe(lb, in->na, &d[0]);
	if (!err)
		err = stats__describe(lc, in->nb, &d[1]);
	if (!err)
		r->runs_needed = stats__runs_needed(sqrt((d[0].sd * d[0].sd +
							  d[1].sd * d[1].sd) / 2),
						    log1p(in->noise_pct / 100), 0.05, 0.8);
free_ln:
	free(lb);
	free(lc);
	return err;
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
	pick_scale(in, r);
	if (in->paired && in->na >= CMP_MIN_RUNS)
		return test_paired(in, r);
	if (in->na < CMP_MIN_RUNS || in->nb < CMP_MIN_RUNS) {
		snprintf(r->reason, sizeof(r->reason),
			 "too few runs (base %zu, cand %zu): a 95%% interval needs %d a side",
			 in->na, in->nb, CMP_MIN_RUNS);
		return 0;
	}
	err = stats__mwu(in->base, in->na, in->cand, in->nb, &r->u);
	if (!err && r->scale == CS_RATIO)
		err = shift_ratio(in, r);
	else if (!err)
		err = stats__hl_shift(in->base, in->na, in->cand, in->nb, 0.95, &r->hl);
	if (err)
		return err;
	r->tested = true;
	shift_to_change(in, r);
	return 0;
}

void cmp__decide(const struct cmp_input *in, struct cmp_result *r, double alpha)
{
	double down, noise;
	bool sig = r->p_holm < alpha && (r->lo > 0 || r->hi < 0);
	bool worse = (r->change > 0) == (in->better == MB_LOWER);

	if (!r->tested)
		return;
	cmp__noise_band(r, in->noise_pct, &down, &noise);
	if (r->lo >= down && r->hi <= noise) {
		r->verdict = CV_UNCHANGED;
		if (r->scale == CS_RATIO)
			snprintf(r->reason, sizeof(r->reason),
				 "interval inside [%+.3g%%, +%g%%] (ratio 1/%g .. %g)", down, noise,
				 1 + noise / 100, 1 + noise / 100);
		else
			snprintf(r->reason, sizeof(r->reason), "interval inside +/-%g%%", noise);
	} else if (sig && (r->change > noise || r->change < down)) {
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

/* ---- the model: what one compared metric is, and how it prints ---- */

const struct cmp_run_def cmp_run_defs[CR__COUNT] = {
	[CR_CPU_PER_GIB] = { "run.cpu_per_gib", MB_LOWER,
		"CPU seconds (user + system) of the recorded command per GiB received into bindings" },
	[CR_NIOVS_PER_MIB] = { "run.niovs_per_mib", MB_LOWER,
		"niovs the provider handed to page pools per MiB received" },
	[CR_CALLS_PER_MIB] = { "run.calls_per_mib", MB_LOWER,
		"provider allocation calls per MiB received" },
	[CR_CPU_S] = { "run.cpu_s", MB_LOWER, "CPU seconds of the recorded command" },
};

/* Every run metric is > 0 by nature (a run with traffic): ratio scale. */

/* "p50" -> "p(50)"; "mean" -> "avg" */
static void norm_agg(const char *in, char *out, size_t len)
{
	if (in[0] == 'p' && in[1] >= '0' && in[1] <= '9')
		snprintf(out, len, "p(%s)", in + 1);
	else if (!strcmp(in, "mean"))
		snprintf(out, len, "avg");
	else
		snprintf(out, len, "%s", in);
}

static const char *default_agg(enum gm_type t)
{
	switch (t) {
	case GM_HIST_BATCH:
	case GM_HIST_LOG2:
		return "p(50)";
	case GM_COUNTER:
		return "rate";
	case GM_TOTAL:
		return "sum";
	default:
		return "avg";
	}
}

/* The statistic of a gate metric: parse "AGG < 0" with the unit the metric wants. */
static int parse_stat(struct cmp_metric *m, char *msg, size_t len)
{
	static const char *const units[] = { "", "ns", "%" };
	struct gate_threshold t;
	char expr[64];
	size_t off;

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		snprintf(expr, sizeof(expr), "%s < 0%s", m->agg, units[i]);
		if (!gate_threshold__parse(expr, m->gm, &t, &off, msg, len)) {
			free(t.expr);
			m->stat = t.stat;
			m->q = t.q;
			m->unit = gate_stat_unit(m->gm, t.stat);
			return 0;
		}
		if (off < strlen(m->agg))	/* the statistic itself is wrong */
			return -EINVAL;
	}
	return -EINVAL;
}

/* NAME[:AGG[:lower|higher]] */
int cmp_metric__init(struct cmp_metric *m, const char *spec, double noise, char *msg,
		     size_t len)
{
	char buf[160], *agg, *dir;

	memset(m, 0, sizeof(*m));
	m->noise_pct = noise;
	m->run = CR_NONE;
	snprintf(buf, sizeof(buf), "%s", spec);
	agg = strchr(buf, ':');
	if (agg)
		*agg++ = '\0';
	dir = agg ? strchr(agg, ':') : NULL;
	if (dir)
		*dir++ = '\0';
	snprintf(m->name, sizeof(m->name), "%s", buf);
	m->gm = gm_lookup(buf);
	for (int k = 0; k < CR__COUNT && m->gm < 0; k++)
		if (!strcmp(buf, cmp_run_defs[k].name))
			m->run = k;
	if (m->gm < 0 && m->run == CR_NONE) {
		snprintf(msg, len, "unknown metric '%s' (gate --list-metrics, compare "
			 "--list-metrics)", buf);
		return -EINVAL;
	}
	if (m->run != CR_NONE) {
		if (agg && *agg && strcmp(agg, "value")) {
			snprintf(msg, len, "%s has one value per run: no aggregation '%s'", buf, agg);
			return -EINVAL;
		}
		snprintf(m->agg, sizeof(m->agg), "value");
		m->better = cmp_run_defs[m->run].better;
		m->positive = true;
	} else {
		norm_agg(agg && *agg ? agg : default_agg(gm_def(m->gm)->type), m->agg,
			 sizeof(m->agg));
		if (parse_stat(m, msg, len))
			return -EINVAL;
		m->better = gm_def(m->gm)->better;
		m->positive = gm_def(m->gm)->positive;
	}
	if (dir && strcmp(dir, "lower") && strcmp(dir, "higher")) {
		snprintf(msg, len, "direction must be lower or higher, not '%s'", dir);
		return -EINVAL;
	}
	if (dir)
		m->better = !strcmp(dir, "lower") ? MB_LOWER : MB_HIGHER;
	if (m->better == MB_NONE) {
		snprintf(msg, len, "%s has no better direction: say %s:%s:lower or :higher",
			 buf, buf, m->agg);
		return -EINVAL;
	}
	snprintf(m->label, sizeof(m->label), "%s%s%s", m->name,
		 m->run == CR_NONE ? ":" : "", m->run == CR_NONE ? m->agg : "");
	return 0;
}

void cmp_fmt(char *buf, size_t len, const struct cmp_metric *m, double v)
{
	if (m->run != CR_NONE || m->summary || m->gm < 0)
		snprintf(buf, len, "%.6g", v);
	else
		gate_fmt_value(buf, len, v, m->unit);
}

const char *cmp_metric_verdict(const struct cmp_metric *m)
{
	return cmp_verdict_name(m->res.verdict);
}

const char *cmp_nonfinite(const struct cmp_metric *m)
{
	const struct cmp_result *r = &m->res;
	static const char *const side[2][3] = {
		{ "base mean", "base sd", "base median" },
		{ "candidate mean", "candidate sd", "candidate median" },
	};

	for (int s = 0; s < 2; s++) {
		if (!r->d[s].n)
			continue;
		if (!isfinite(r->d[s].mean))
			return side[s][0];
		if (!isfinite(r->d[s].sd))
			return side[s][1];
		if (!m->summary && !isfinite(r->d[s].median))
			return side[s][2];
	}
	if (!r->tested)
		return NULL;
	if (!isfinite(r->change) || !isfinite(r->lo) || !isfinite(r->hi))
		return "change";
	if (!isfinite(m->summary ? m->welch.p : r->u.p) || !isfinite(r->p_holm))
		return "p-value";
	if (m->summary && (!isfinite(m->welch.t) || !isfinite(m->welch.df) ||
			   !isfinite(m->welch.diff) || !isfinite(m->welch.lo) ||
			   !isfinite(m->welch.hi)))
		return "difference of the means";
	if (!m->summary && (!isfinite(r->hl.est) || !isfinite(r->hl.lo) || !isfinite(r->hl.hi)))
		return "shift";
	return NULL;
}
