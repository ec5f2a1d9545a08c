// SPDX-License-Identifier: GPL-2.0
/*
 * Two-sample statistics (stats.h). Written from the textbook definitions:
 * the U distribution by its recursion on the largest observation, the
 * t distribution through the regularized incomplete beta function (its
 * continued fraction, evaluated with Lentz's method).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

/* Median of a sorted array. */
static double sorted_median(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int stats__describe(const double *x, size_t n, struct stats_desc *d)
{
	double *s, sum = 0, ss = 0;

	memset(d, 0, sizeof(*d));
	if (!n || !all_finite(x, n))
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	d->n = n;
	d->mean = sum / n;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - d->mean) * (s[i] - d->mean);
	d->sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	d->median = sorted_median(s, n);
	d->min = s[0];
	d->max = s[n - 1];
	free(s);
	return 0;
}

double stats__norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/* Bisection: the normal CDF is monotone, 200 halvings of [-40, 40] reach double precision. */
double stats__norm_quantile(double p)
{
	double lo = -40, hi = 40;

	if (!(p > 0 && p < 1))
		return NAN;
	for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
		double mid = (lo + hi) / 2;

		if (stats__norm_sf(mid) > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The continued fraction of I_x(a, b) (x below the mean a / (a + b)):
 * 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
 * d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d(2m) = m(b-m) x / ((a+2m-1)(a+2m)).
 */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double f = tiny, c = tiny, d = 0;

	for (int j = 1; j < 1000; j++) {
		double num, delta;
		int m = (j - 1) / 2;

		if (j == 1)
			num = 1;
		else if ((j - 1) % 2)	/* d(2m+1), j - 1 odd */
			num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		else			/* d(2m), m = (j - 1) / 2 */
			num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		delta = c * d;
		f *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return f;
}

/* Regularized incomplete beta I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double stats__t_sf2(double t, double df)
{
	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return 0;
	return inc_beta(df / 2, 0.5, df / (df + t * t));
}

double stats__t_quantile(double p, double df)
{
	double lo = 0, hi = 1e7;

	if (!(p > 0.5 && p < 1) || !(df > 0))
		return NAN;
	/* P(T > t) = sf2 / 2 decreases in t: find 1 - p */
	for (int i = 0; i < 300 && hi - lo > 1e-13 * (1 + lo); i++) {
		double mid = (lo + hi) / 2;

		if (stats__t_sf2(mid, df) / 2 > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The null distribution of U for samples of m and n values without ties:
 * pmf[u] = P(U = u), u = 0 .. m n, U counting pairs (x, y) with x > y.
 * The largest of the m + n values is an x with probability m / (m + n) and
 * then beats all n y's, so P(m, n, u) = m/(m+n) P(m-1, n, u-n) +
 * n/(m+n) P(m, n-1, u). Rows for m - 1 and m are kept, for every n' <= n.
 */
static double *u_pmf(size_t m, size_t n)
{
	size_t w = m * n + 1, rows = n + 1;
	double *prev, *cur, *out = NULL;

	prev = calloc(rows * w, sizeof(double));
	cur = calloc(rows * w, sizeof(double));
	if (!prev || !cur)
		goto free_rows;
	for (size_t j = 0; j <= n; j++)
		prev[j * w] = 1;
	for (size_t i = 1; i <= m; i++) {
		memset(cur, 0, rows * w * sizeof(double));
		cur[0] = 1;
		for (size_t j = 1; j <= n; j++) {
			double px = (double)i / (i + j), py = (double)j / (i + j);
			double *c = cur + j * w, *left = cur + (j - 1) * w, *up = prev + j * w;

			for (size_t u = 0; u <= i * j; u++)
				c[u] = py * left[u] + (u >= j ? px * up[u - j] : 0);
		}
		double *t = prev;

		prev = cur;
		cur = t;
	}
	out = malloc(w * sizeof(double));
	if (out)
		memcpy(out, prev + n * w, w * sizeof(double));
free_rows:
	free(prev);
	free(cur);
	return out;
}

struct ranked {
	double v;
	bool mark;	/* U: a base value; W+: a positive difference */
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/*
 * Sorts r[n] by value; the sum of the marked values' ranks (mid-ranks for
 * ties) and sum(t^3 - t) over the tie groups.
 */
static void marked_rank_sum(struct ranked *r, size_t n, double *rsum, double *tie_term)
{
	qsort(r, n, sizeof(*r), cmp_ranked);
	*rsum = 0;
	*tie_term = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double t;

		while (j < n && r[j].v == r[i].v)
			j++;
		t = (double)(j - i);
		for (size_t k = i; k < j; k++)
			if (r[k].mark)
				*rsum += (i + 1 + j) / 2.0;	/* ranks i+1 .. j */
		*tie_term += t * t * t - t;
		i = j;
	}
}

/* Rank sum of the base sample (mid-ranks for ties) and sum(t^3 - t) over tie groups. */
static int rank_sum(const double *base, size_t na, const double *cand, size_t nb,
		    double *rsum, double *tie_term)
{
	size_t n = na + nb;
	struct ranked *r = malloc(n * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ base[i], true };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ cand[i], false };
	marked_rank_sum(r, n, rsum, tie_term);
	free(r);
	return 0;
}

int stats__mwu(const double *base, size_t na, const double *cand, size_t nb, struct stats_mwu *r)
{
	double rsum, ties, umax, *pmf;
	int err;

	memset(r, 0, sizeof(*r));
	if (!na || !nb || !all_finite(base, na) || !all_finite(cand, nb))
		return -EINVAL;
	err = rank_sum(base, na, cand, nb, &rsum, &ties);
	if (err)
		return err;
	r->u_base = rsum - na * (na + 1) / 2.0;
	r->u_cand = (double)na * nb - r->u_base;
	r->ties = ties > 0;
	umax = fmax(r->u_base, r->u_cand);
	if (!r->ties && na <= STATS_EXACT_MAX && nb <= STATS_EXACT_MAX) {
		double tail = 0;

		pmf = u_pmf(na, nb);
		if (!pmf)
			return -ENOMEM;
		for (size_t u = (size_t)umax; u <= na * nb; u++)
			tail += pmf[u];
		free(pmf);
		r->exact = true;
		r->p = fmin(1, 2 * tail);
	} else {
		double n = (double)na + nb;
		double var = (double)na * nb / 12 * ((n + 1) - ties / (n * (n - 1)));

		if (var <= 0) {		/* every value equal */
			r->p = 1;
			return 0;
		}
		r->z = (umax - na * (double)nb / 2 - 0.5) / sqrt(var);
		r->p = fmin(1, 2 * stats__norm_sf(r->z));
	}
	return 0;
}

/*
 * An interval's rank from a null distribution pmf[0..len): the largest k
 * >= 1 with P(X <= k - 1) <= tail, 0 if none; *level = 1 - 2 P(X <= k - 1).
 * Frees pmf.
 */
static size_t tail_rank(double *pmf, size_t len, double tail, double *level)
{
	double cdf = 0;
	size_t k = 0;

	while (k < len && cdf + pmf[k] <= tail * (1 + 1e-12))
		cdf += pmf[k++];
	*level = 1 - 2 * cdf;
	free(pmf);
	return k;
}

/* The normal approximation's rank for n sorted estimates of null variance var. */
static size_t normal_rank(size_t n, double var, double conf)
{
	double c = n / 2.0 - stats__norm_quantile(1 - (1 - conf) / 2) * sqrt(var);

	return c >= 1 ? (size_t)floor(c) : 0;
}

/* lo and hi at ranks k and n + 1 - k of sorted[n]; -EDOM when no k fits. */
static int rank_interval(const double *sorted, size_t n, size_t k, struct stats_shift *s)
{
	if (!k || k > n / 2 + 1) {
		s->level = 0;
		return -EDOM;
	}
	s->lo = sorted[k - 1];
	s->hi = sorted[n - k];
	return 0;
}

/* tail_rank() of U for na and nb. */
static size_t exact_rank(size_t na, size_t nb, double tail, double *level, int *err)
{
	double *pmf = u_pmf(na, nb);

	*err = pmf ? 0 : -ENOMEM;
	return pmf ? tail_rank(pmf, na * nb + 1, tail, level) : 0;
}

int stats__hl_shift(const double *base, size_t na, const double *cand, size_t nb, double conf,
		    struct stats_shift *s)
{
	size_t nd = na * nb, k;
	double *d;
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (!na || !nb || !(conf > 0 && conf < 1) || !all_finite(base, na) ||
	    !all_finite(cand, nb))
		return -EINVAL;
	if (nd / na != nb || nd > STATS_SHIFT_MAX)
		return -E2BIG;
	d = malloc(nd * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			d[i * nb + j] = cand[j] - base[i];
	qsort(d, nd, sizeof(*d), cmp_double);
	s->est = sorted_median(d, nd);
	if (na <= STATS_EXACT_MAX && nb <= STATS_EXACT_MAX) {
		s->exact = true;
		k = exact_rank(na, nb, (1 - conf) / 2, &s->level, &err);
		if (err)
			goto free_d;
	} else {
		k = normal_rank(nd, nd * (na + nb + 1.0) / 12, conf);
		s->level = conf;
	}
	err = rank_interval(d, nd, k, s);
free_d:
	free(d);
	return err;
}

/*
 * Distribution of W+ for m non-zero differences without ties: the number of
 * subsets of ranks 1..m with each sum, over 2^m. NULL on allocation failure.
 */
static double *w_pmf(size_t m)
{
	size_t wmax = m * (m + 1) / 2;
	double *c = calloc(wmax + 1, sizeof(*c));

	if (!c)
		return NULL;
	c[0] = 1;
	for (size_t k = 1; k <= m; k++)
		for (size_t w = wmax; w >= k; w--)
			c[w] += c[w - k];
	for (size_t w = 0; w <= wmax; w++)
		c[w] = ldexp(c[w], -(int)m);
	return c;
}

int stats__signed_rank(const double *d, size_t n, struct stats_signed_rank *r)
{
	struct ranked *v;
	double ties, mean, var;
	size_t m = 0;

	memset(r, 0, sizeof(*r));
	if (!n || !all_finite(d, n))
		return -EINVAL;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			v[m++] = (struct ranked){ fabs(d[i]), d[i] > 0 };
	marked_rank_sum(v, m, &r->w_plus, &ties);
	free(v);
	r->n = m;
	r->ties = ties > 0;
	r->p = 1;
	if (!m)			/* every difference 0 */
		return 0;
	mean = m * (m + 1) / 4.0;
	if (!r->ties && m <= STATS_EXACT_MAX) {
		double *pmf = w_pmf(m), tail = 0;
		double wext = fmax(r->w_plus, 2 * mean - r->w_plus);

		if (!pmf)
			return -ENOMEM;
		for (size_t w = (size_t)wext; w <= m * (m + 1) / 2; w++)
			tail += pmf[w];
		free(pmf);
		r->exact = true;
		r->p = fmin(1, 2 * tail);
		return 0;
	}
	var = m * (m + 1) * (2 * m + 1) / 24.0 - ties / 48;
	if (var <= 0)
		return 0;
	r->z = (fabs(r->w_plus - mean) - 0.5) / sqrt(var);
	r->p = fmin(1, 2 * stats__norm_sf(fmax(r->z, 0)));
	return 0;
}

int stats__hl_paired(const double *d, size_t n, double conf, struct stats_shift *s)
{
	size_t nw = n * (n + 1) / 2, k = 0, x = 0;
	double *w;
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (!n || !(conf > 0 && conf < 1) || !all_finite(d, n))
		return -EINVAL;
	if (n > STATS_PAIRED_MAX)
		return -E2BIG;
	w = malloc(nw * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[x++] = (d[i] + d[j]) / 2;
	qsort(w, nw, sizeof(*w), cmp_double);
	s->est = sorted_median(w, nw);
	if (n <= STATS_EXACT_MAX) {
		double *pmf = w_pmf(n);

		if (!pmf) {
			err = -ENOMEM;
			goto free_w;
		}
		k = tail_rank(pmf, nw + 1, (1 - conf) / 2, &s->level);
		s->exact = true;
	} else {
		k = normal_rank(nw, n * (n + 1.0) * (2 * n + 1) / 24, conf);
		s->level = conf;
	}
	err = rank_interval(w, nw, k, s);
free_w:
	free(w);
	return err;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int stats__holm(const double *p, size_t n, double *adj)
{
	struct pidx *o;
	double run = 0;

	if (!n)
		return 0;
	o = malloc(n * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		o[i] = (struct pidx){ p[i], i };
	qsort(o, n, sizeof(*o), cmp_pidx);
	for (size_t r = 0; r < n; r++) {
		double a = fmin(1, (double)(n - r) * o[r].p);

		run = fmax(run, a);
		adj[o[r].i] = run;
	}
	free(o);
	return 0;
}

int stats__welch(double mean1, double sd1, size_t n1, double mean2, double sd2, size_t n2,
		 double conf, struct stats_welch *w)
{
	double v1, v2, q;

	memset(w, 0, sizeof(*w));
	if (n1 < 2 || n2 < 2 || !(sd1 >= 0) || !(sd2 >= 0) || (sd1 == 0 && sd2 == 0) ||
	    !isfinite(mean1) || !isfinite(mean2) || !isfinite(sd1) || !isfinite(sd2) ||
	    !(conf > 0 && conf < 1))
		return -EINVAL;
	v1 = sd1 * sd1 / n1;
	v2 = sd2 * sd2 / n2;
	w->diff = mean2 - mean1;
	w->se = sqrt(v1 + v2);
	w->t = w->diff / w->se;
	w->df = (v1 + v2) * (v1 + v2) / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1));
	w->p = stats__t_sf2(w->t, w->df);
	q = stats__t_quantile(1 - (1 - conf) / 2, w->df);
	w->lo = w->diff - q * w->se;
	w->hi = w->diff + q * w->se;
	return 0;
}

unsigned long stats__runs_needed(double cv, double effect, double alpha, double power)
{
	double z, n;

	if (!(effect > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) ||
	    !(cv >= 0))
		return 0;
	z = stats__norm_quantile(1 - alpha / 2) + stats__norm_quantile(power);
	n = 2 * z * z * cv * cv / (effect * effect) * M_PI / 3;
	if (!(n < 1e9))
		return 1000000000UL;
	return n < 4 ? 4 : (unsigned long)ceil(n);
}
