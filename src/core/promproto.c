// SPDX-License-Identifier: GPL-2.0
/* Protobuf exposition with native histograms (see promproto.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "prometheus_metrics.pb-c.h"
#include "promproto.h"
#include "textsafe.h"

typedef Io__Prometheus__Client__MetricFamily MetricFamily;
typedef Io__Prometheus__Client__Metric Metric;
typedef Io__Prometheus__Client__LabelPair LabelPair;
typedef Io__Prometheus__Client__Histogram Histogram;
typedef Io__Prometheus__Client__Bucket Bucket;
typedef Io__Prometheus__Client__BucketSpan BucketSpan;

#define ARENA_CHUNK	(64 * 1024)
#define BATCH_BUCKETS	8	/* schema 0 indices 0..7: (0.5, 1] .. (64, 128] */

/* Bump allocation for one family's messages, all freed when it is sent. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct promproto {
	struct chunk *arena;
	MetricFamily mf;
	bool open;
	Metric **metrics;
	size_t n_metrics, cap_metrics;
	char *out;
	size_t len, cap;
	int err;
};

static void *alloc(struct promproto *pp, size_t size)
{
	struct chunk *c = pp->arena;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (!c || c->size - c->used < size) {
		size_t sz = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + sz);
		if (!c) {
			if (!pp->err)
				pp->err = -ENOMEM;
			return NULL;
		}
		c->size = sz;
		c->used = 0;
		c->next = pp->arena;
		pp->arena = c;
	}
	p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

static char *copy(struct promproto *pp, const char *s)
{
	size_t n = strlen(s ? s : "") + 1;
	char *d = alloc(pp, n);

	if (d)
		memcpy(d, s ? s : "", n);
	return d;
}

/*
 * A label value as the text format's reader ends up with it (promfmt.c):
 * valid UTF-8 with no terminal controls, a refused byte shown as the text
 * \xNN. Protobuf strings must be UTF-8 too, or the whole scrape fails.
 */
static char *copy_label(struct promproto *pp, const char *s)
{
	size_t n = 0, o = 0, k;
	char *d;

	s = s ? s : "";
	for (const char *p = s; *p; p += k) {
		k = *p == '\t' ? 1 : textsafe_char(p);
		n += k ? k : 4;
		k = k ? k : 1;
	}
	d = alloc(pp, n + 1);
	if (!d)
		return NULL;
	for (; *s; s += k) {
		k = *s == '\t' ? 1 : textsafe_char(s);
		if (k) {
			memcpy(d + o, s, k);
			o += k;
		} else {
			snprintf(d + o, 5, "\\x%02x", (unsigned char)*s);
			o += 4;
			k = 1;
		}
	}
	d[o] = '\0';
	return d;
}

static void arena_reset(struct promproto *pp)
{
	while (pp->arena) {
		struct chunk *c = pp->arena;

		pp->arena = c->next;
		free(c);
	}
}

struct promproto *promproto__new(void)
{
	return calloc(1, sizeof(struct promproto));
}

void promproto__free(struct promproto *pp)
{
	if (!pp)
		return;
	arena_reset(pp);
	free(pp->metrics);
	free(pp->out);
	free(pp);
}

static int reserve(struct promproto *pp, size_t need)
{
	size_t cap = pp->cap ? pp->cap : 64 * 1024;
	char *b;

	if (pp->len + need <= pp->cap)
		return 0;
	while (cap < pp->len + need)
		cap *= 2;
	b = realloc(pp->out, cap);
	if (!b)
		return -ENOMEM;
	pp->out = b;
	pp->cap = cap;
	return 0;
}

int promproto__end(struct promproto *pp)
{
	size_t size, n;
	uint64_t v;
	int err;

	if (!pp->open)
		return pp->err;
	pp->open = false;
	if (pp->err || !pp->n_metrics)
		goto out;	/* as in the text format: no samples, no family */
	pp->mf.n_metric = pp->n_metrics;
	pp->mf.metric = pp->metrics;
	size = io__prometheus__client__metric_family__get_packed_size(&pp->mf);
	err = reserve(pp, size + 10);
	if (err) {
		pp->err = err;
		goto out;
	}
	/* the length as a base-128 varint, then the message */
	for (v = size, n = 0; v >= 0x80; v >>= 7)
		pp->out[pp->len + n++] = (char)(v | 0x80);
	pp->out[pp->len + n++] = (char)v;
	pp->len += n;
	pp->len += io__prometheus__client__metric_family__pack(&pp->mf,
							      (uint8_t *)pp->out + pp->len);
out:
	pp->n_metrics = 0;
	arena_reset(pp);
	return pp->err;
}

void promproto__family(struct promproto *pp, const char *name, const char *type,
		       const char *help)
{
	promproto__end(pp);
	io__prometheus__client__metric_family__init(&pp->mf);
	pp->mf.name = copy(pp, name);
	pp->mf.help = copy(pp, help);
	pp->mf.has_type = true;
	if (!strcmp(type, "counter"))
		pp->mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER;
	else if (!strcmp(type, "gauge"))
		pp->mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
	else if (!strcmp(type, "histogram"))
		pp->mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM;
	else
		pp->mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED;
	pp->open = true;
}

/* A metric of the open family with its labels (copied: they may be on the caller's stack). */
static Metric *new_metric(struct promproto *pp, const struct prom_label *lbl, size_t n,
			  const char *xname, const char *xvalue)
{
	Metric *m;
	size_t k = 0;

	if (!pp->open) {
		if (!pp->err)
			pp->err = -EINVAL;
		return NULL;
	}
	if (pp->n_metrics == pp->cap_metrics) {
		size_t cap = pp->cap_metrics ? 2 * pp->cap_metrics : 64;
		Metric **v = realloc(pp->metrics, cap * sizeof(*v));

		if (!v) {
			pp->err = -ENOMEM;
			return NULL;
		}
		pp->metrics = v;
		pp->cap_metrics = cap;
	}
	m = alloc(pp, sizeof(*m));
	if (!m)
		return NULL;
	io__prometheus__client__metric__init(m);
	m->label = alloc(pp, (n + 1) * sizeof(*m->label));
	if (!m->label)
		return NULL;
	for (size_t i = 0; i <= n; i++) {
		const char *key = i < n ? lbl[i].name : xname;
		const char *val = i < n ? lbl[i].value : xvalue;
		LabelPair *lp;

		if (!key)
			continue;	/* skipped by the text writer too */
		lp = alloc(pp, sizeof(*lp));
		if (!lp)
			return NULL;
		io__prometheus__client__label_pair__init(lp);
		lp->name = copy(pp, key);
		lp->value = copy_label(pp, val);
		m->label[k++] = lp;
	}
	m->n_label = k;
	pp->metrics[pp->n_metrics++] = m;
	return m;
}

void promproto__sample(struct promproto *pp, const char *suffix, const struct prom_label *lbl,
		       size_t n, const char *xname, const char *xvalue, double v)
{
	Metric *m;

	if (suffix || pp->mf.type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM) {
		if (!pp->err)
			pp->err = -EINVAL;	/* histograms only through promproto__hist_*() */
		return;
	}
	m = new_metric(pp, lbl, n, xname, xvalue);
	if (!m)
		return;
	switch (pp->mf.type) {
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER:
		m->counter = alloc(pp, sizeof(*m->counter));
		if (!m->counter)
			return;
		io__prometheus__client__counter__init(m->counter);
		m->counter->has_value = true;
		m->counter->value = v;
		break;
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE:
		m->gauge = alloc(pp, sizeof(*m->gauge));
		if (!m->gauge)
			return;
		io__prometheus__client__gauge__init(m->gauge);
		m->gauge->has_value = true;
		m->gauge->value = v;
		break;
	default:
		m->untyped = alloc(pp, sizeof(*m->untyped));
		if (!m->untyped)
			return;
		io__prometheus__client__untyped__init(m->untyped);
		m->untyped->has_value = true;
		m->untyped->value = v;
		break;
	}
}

static Histogram *new_hist(struct promproto *pp, const struct prom_label *lbl, size_t n,
			   size_t n_buckets)
{
	Metric *m = new_metric(pp, lbl, n, NULL, NULL);
	Histogram *h;

	if (!m)
		return NULL;
	h = alloc(pp, sizeof(*h));
	if (!h)
		return NULL;
	io__prometheus__client__histogram__init(h);
	h->bucket = alloc(pp, n_buckets * sizeof(*h->bucket));
	if (!h->bucket)
		return NULL;
	m->histogram = h;
	return h;
}

static void add_bucket(struct promproto *pp, Histogram *h, double le, uint64_t cum)
{
	Bucket *b = alloc(pp, sizeof(*b));

	if (!b)
		return;
	io__prometheus__client__bucket__init(b);
	b->has_upper_bound = true;
	b->upper_bound = le;
	b->has_cumulative_count = true;
	b->cumulative_count = cum;
	h->bucket[h->n_bucket++] = b;
}

/*
 * Make h a sparse native histogram of schema 0 (index i = (2^(i-1), 2^i]):
 * zero bucket [-zthr, zthr] with zcount, c[i] the count of index i, a span
 * per run of non-empty indices and deltas between consecutive counts. A
 * positive threshold marks it native for Prometheus even while empty.
 */
static void set_native(struct promproto *pp, Histogram *h, double zthr, uint64_t zcount,
		       const uint64_t *c, unsigned int n)
{
	BucketSpan *span = NULL;
	unsigned int next = 0;
	uint64_t prev = 0;

	h->has_schema = true;
	h->schema = 0;
	h->has_zero_threshold = true;
	h->zero_threshold = zthr;
	h->has_zero_count = true;
	h->zero_count = zcount;
	h->positive_span = alloc(pp, n * sizeof(*h->positive_span));
	h->positive_delta = alloc(pp, n * sizeof(*h->positive_delta));
	if (!h->positive_span || !h->positive_delta)
		return;
	for (unsigned int k = 0; k < n; k++) {
		if (!c[k]) {
			span = NULL;
			continue;
		}
		if (!span) {
			span = alloc(pp, sizeof(*span));
			if (!span)
				return;
			io__prometheus__client__bucket_span__init(span);
			span->has_offset = span->has_length = true;
			span->offset = k - next;
			h->positive_span[h->n_positive_span++] = span;
		}
		span->length++;
		next = k + 1;
		h->positive_delta[h->n_positive_delta++] = (int64_t)(c[k] - prev);
		prev = c[k];
	}
}

void promproto__hist_log2(struct promproto *pp, const struct prom_label *lbl, size_t n,
			  const struct hist_log2 *hs, double div)
{
	Histogram *h = new_hist(pp, lbl, n, DMT_LOG2_SLOTS);
	uint64_t cum = 0;

	if (!h)
		return;
	/* as the text: the last slot holds everything larger, so only in +Inf (the count) */
	for (unsigned int k = 0; k + 1 < DMT_LOG2_SLOTS; k++) {
		cum += hs->slots[k];
		add_bucket(pp, h, (double)hist_log2_bound(k) / div, cum);
	}
	cum += hs->slots[DMT_LOG2_SLOTS - 1];
	h->has_sample_count = true;
	h->sample_count = hs->count > cum ? hs->count : cum;
	h->has_sample_sum = true;
	h->sample_sum = (double)hs->sum / div;
}

void promproto__hist_batch(struct promproto *pp, const struct prom_label *lbl, size_t n,
			   const struct hist_batch *hs)
{
	Histogram *h = new_hist(pp, lbl, n, BATCH_BUCKETS);
	uint64_t c[BATCH_BUCKETS] = {}, cum = hs->slots[0];
	unsigned int i = 1;

	if (!h)
		return;
	/* native bucket k = (2^(k-1), 2^k]: batch sizes 1 | 2 | 3-4 | 5-8 .. | 65-128 */
	for (unsigned int k = 0, bound = 1; k < BATCH_BUCKETS; k++, bound *= 2) {
		for (; i <= bound; i++)
			c[k] += hs->slots[i];
		cum += c[k];
		add_bucket(pp, h, bound, cum);
	}
	/*
	 * The count is the buckets' sum here, not max(count, buckets) as in the
	 * text: a native histogram's count must equal its buckets (they differ
	 * only while a BPF slot and count update race).
	 */
	h->has_sample_count = true;
	h->sample_count = cum;
	h->has_sample_sum = true;
	h->sample_sum = (double)hs->sum;
	set_native(pp, h, ldexp(1.0, -128), hs->slots[0], c, BATCH_BUCKETS);
}

void promproto__hist_log2_native(struct promproto *pp, const struct prom_label *lbl, size_t n,
				 const struct hist_log2 *hs)
{
	Histogram *h = new_hist(pp, lbl, n, 0);
	uint64_t c[DMT_LOG2_SLOTS] = {}, cum = hs->slots[0];

	if (!h)
		return;
	/*
	 * Slot k (2^(k-1), 2^k] ns is schema-0 index k; slot 0 (0 or 1 ns) is
	 * the zero bucket with threshold 1, which holds exactly |v| <= 1. The
	 * last slot also holds what the BPF side clamped, as +Inf does in the
	 * classic family. No classic buckets: those are the _seconds family's.
	 */
	for (unsigned int k = 1; k < DMT_LOG2_SLOTS; k++) {
		c[k] = hs->slots[k];
		cum += c[k];
	}
	h->has_sample_count = true;
	h->sample_count = cum;	/* a native count must equal its buckets */
	h->has_sample_sum = true;
	h->sample_sum = (double)hs->sum;
	set_native(pp, h, 1.0, hs->slots[0], c, DMT_LOG2_SLOTS);
}

const char *promproto__data(const struct promproto *pp, size_t *len)
{
	if (len)
		*len = pp->len;
	return pp->out ? pp->out : "";
}

char *promproto__take(struct promproto *pp, size_t *len)
{
	char *b;

	if (promproto__end(pp)) {
		errno = -pp->err;
		return NULL;
	}
	if (!pp->out && reserve(pp, 1)) {
		errno = ENOMEM;
		return NULL;
	}
	b = pp->out;
	if (len)
		*len = pp->len;
	pp->out = NULL;
	pp->len = pp->cap = 0;
	return b;
}

int promproto__err(const struct promproto *pp)
{
	return pp->err;
}

/*
 * "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;
 * encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*\/\*;q=0.2":
 * one media range that names all three, with no q=0.
 */
/* The q of one media range without blanks (1 when absent, 0 when malformed). */
static double range_q(const char *range)
{
	const char *q = strstr(range, ";q=");
	char *end;
	double v;

	if (!q)
		return 1;
	v = strtod(q + 3, &end);
	if (end == q + 3 || (*end && *end != ';') || !(v >= 0))
		return 0;
	return v > 1 ? 1 : v;
}

/*
 * Content negotiation between the two formats we serve: the protobuf one
 * when its best q is above 0 and not below the best q of a range that
 * takes text (text/plain, text/ *, * / *). Ties go to protobuf, which the
 * client named explicitly.
 */
int promproto_accepts(const char *accept)
{
	double proto_q = 0, text_q = 0;
	const char *p = accept;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char range[512];

		if (len < sizeof(range)) {
			size_t k = 0;
			double q;

			/* without blanks: "a; b" and "a;b" are the same parameters */
			for (size_t j = 0; j < len; j++)
				if (p[j] != ' ' && p[j] != '\t')
					range[k++] = p[j];
			range[k] = '\0';
			q = range_q(range);
			if (!strncasecmp(range, "application/vnd.google.protobuf;", 32) &&
			    strstr(range, ";proto=io.prometheus.client.MetricFamily") &&
			    strstr(range, ";encoding=delimited")) {
				if (q > proto_q)
					proto_q = q;
			} else if (!strncasecmp(range, "text/plain", 10) ||
				   !strncasecmp(range, "text/*", 6) || !strncmp(range, "*/*", 3)) {
				if (q > text_q)
					text_q = q;
			}
		}
		p = end ? end + 1 : NULL;
	}
	return proto_q > 0 && proto_q >= text_q;
}
