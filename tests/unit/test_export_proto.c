// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the protobuf exposition (src/core/promproto.c through
 * promfmt__new_proto()): the delimited stream decodes with protobuf-c,
 * counters and gauges keep their labels, and the refill batch histogram is
 * a sparse schema-0 native histogram whose buckets are the classic ones;
 * the latency histograms' native twins (ns) decode to their log2 slots
 * exactly and leave nothing in the text format.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "prometheus_metrics.pb-c.h"
#include "promfmt.h"
#include "promproto.h"

typedef Io__Prometheus__Client__MetricFamily MetricFamily;

struct stream {
	const unsigned char *p, *end;
};

/* The next length-delimited MetricFamily, or NULL at the end. */
static MetricFamily *next_family(struct stream *s)
{
	uint64_t len = 0;
	unsigned int shift = 0;
	MetricFamily *mf;

	if (s->p == s->end)
		return NULL;
	for (;;) {
		assert_true(s->p < s->end && shift < 64);
		len |= (uint64_t)(*s->p & 0x7f) << shift;
		shift += 7;
		if (!(*s->p++ & 0x80))
			break;
	}
	assert_true(len <= (uint64_t)(s->end - s->p));
	mf = io__prometheus__client__metric_family__unpack(NULL, len, s->p);
	assert_non_null(mf);
	s->p += len;
	return mf;
}

static char *render(void (*fn)(struct promfmt *), size_t *len)
{
	struct promfmt *w = promfmt__new_proto();
	char *buf;

	assert_non_null(w);
	fn(w);
	assert_int_equal(promfmt__err(w), 0);
	buf = promfmt__take(w, len);
	assert_non_null(buf);
	promfmt__free(w);
	return buf;
}

static void write_scalars(struct promfmt *w)
{
	char id[16];
	struct prom_label l[] = { { "pool_id", id }, { "ifname", "eth0" }, { "queue", "" } };

	promfmt__family(w, "t_holds_total", "counter", "Holds.");
	snprintf(id, sizeof(id), "7");
	promfmt__sample_u64(w, NULL, l, 3, NULL, NULL, 42);
	snprintf(id, sizeof(id), "8");	/* the first sample's labels were copied */
	promfmt__sample_u64(w, NULL, l, 3, NULL, NULL, 43);
	promfmt__family(w, "t_unused", "gauge", "No samples: left out.");
	promfmt__family(w, "t_ratio", "gauge", "A gauge.");
	promfmt__sample(w, NULL, NULL, 0, NULL, NULL, 0.25);
}

static void test_scalars(void **state)
{
	size_t len;
	char *buf = render(write_scalars, &len);
	struct stream s = { (unsigned char *)buf, (unsigned char *)buf + len };
	MetricFamily *mf;

	mf = next_family(&s);
	assert_string_equal(mf->name, "t_holds_total");
	assert_string_equal(mf->help, "Holds.");
	assert_int_equal(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	assert_int_equal(mf->n_metric, 2);
	assert_int_equal(mf->metric[0]->n_label, 3);
	assert_string_equal(mf->metric[0]->label[0]->name, "pool_id");
	assert_string_equal(mf->metric[0]->label[0]->value, "7");
	assert_string_equal(mf->metric[1]->label[0]->value, "8");
	assert_string_equal(mf->metric[0]->label[2]->value, "");	/* as the text has queue="" */
	assert_non_null(mf->metric[0]->counter);
	assert_true(mf->metric[0]->counter->value == 42);
	assert_true(mf->metric[1]->counter->value == 43);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);

	mf = next_family(&s);	/* t_unused had no sample */
	assert_string_equal(mf->name, "t_ratio");
	assert_int_equal(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
	assert_true(mf->metric[0]->gauge->value == 0.25);
	assert_int_equal(mf->metric[0]->n_label, 0);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	assert_null(next_family(&s));
	free(buf);
}

static void write_hostile(struct promfmt *w)
{
	/* an interface name with a title-setting escape and bytes that are not UTF-8 */
	struct prom_label l[] = { { "ifname", "r\x1b]0;X\x07\xff\xc2\\ok\tz" } };

	promfmt__family(w, "t_pools", "gauge", "Pools.");
	promfmt__sample_u64(w, NULL, l, 1, NULL, NULL, 1);
}

/* Label values are what a text-format reader gets: no control, valid UTF-8. */
static void test_hostile_label(void **state)
{
	size_t len;
	char *buf = render(write_hostile, &len);
	struct stream s = { (unsigned char *)buf, (unsigned char *)buf + len };
	MetricFamily *mf = next_family(&s);

	assert_string_equal(mf->metric[0]->label[0]->value,
			    "r\\x1b]0;X\\x07\\xff\\xc2\\ok\tz");
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	free(buf);
}

static struct hist_batch batch;

static void write_batch(struct promfmt *w)
{
	struct prom_label l[] = { { "ifname", "veth0" } };

	promfmt__family(w, "t_batch_items", "histogram", "Batches.");
	promfmt__hist_batch(w, l, 1, &batch);
}

static void test_native_batch(void **state)
{
	/* values 0 x3, 1 x5, 3 x2, 4 x1, 64 x7, 100 x4 */
	static const unsigned int val[] = { 0, 1, 3, 4, 64, 100 };
	static const uint64_t cnt[] = { 3, 5, 2, 1, 7, 4 };
	/* schema-0 buckets 0..7: (0.5,1] (1,2] (2,4] (4,8] .. (64,128] */
	static const int64_t want_delta[] = { 5, -2, 4, -3 };
	static const uint64_t want_cum[] = { 8, 8, 11, 11, 11, 11, 18, 22 };
	Io__Prometheus__Client__Histogram *h;
	uint64_t native[8] = {}, v = 0;
	size_t len, d = 0;
	MetricFamily *mf;
	struct stream s;
	char *buf;
	int idx = 0;

	memset(&batch, 0, sizeof(batch));
	for (size_t i = 0; i < sizeof(val) / sizeof(*val); i++)
		hist_batch_add(&batch, val[i], cnt[i]);
	buf = render(write_batch, &len);
	s = (struct stream){ (unsigned char *)buf, (unsigned char *)buf + len };
	mf = next_family(&s);
	assert_int_equal(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	h = mf->metric[0]->histogram;
	assert_non_null(h);
	assert_true(h->sample_count == 22);
	assert_true(h->sample_sum == 0 * 3 + 1 * 5 + 3 * 2 + 4 + 64 * 7 + 100 * 4);
	/* classic alongside, as the text's le buckets */
	assert_int_equal(h->n_bucket, 8);
	for (size_t i = 0; i < 8; i++) {
		assert_true(h->bucket[i]->upper_bound == (double)(1u << i));
		assert_true(h->bucket[i]->cumulative_count == want_cum[i]);
	}
	/* native: schema 0, zeros in the zero bucket, sparse */
	assert_true(h->has_schema && h->schema == 0);
	assert_true(h->zero_threshold > 0 && h->zero_threshold < 1e-30);
	assert_true(h->zero_count == 3);
	assert_int_equal(h->n_positive_span, 3);
	assert_int_equal(h->positive_span[0]->offset, 0);
	assert_int_equal(h->positive_span[0]->length, 1);
	assert_int_equal(h->positive_span[1]->offset, 1);
	assert_int_equal(h->positive_span[1]->length, 1);
	assert_int_equal(h->positive_span[2]->offset, 3);
	assert_int_equal(h->positive_span[2]->length, 2);
	assert_int_equal(h->n_positive_delta, 4);
	for (size_t i = 0; i < 4; i++)
		assert_true(h->positive_delta[i] == want_delta[i]);
	/* decode spans + deltas: the native buckets are the classic ones, 1:1 */
	for (size_t sp = 0; sp < h->n_positive_span; sp++) {
		idx += h->positive_span[sp]->offset;
		for (uint32_t k = 0; k < h->positive_span[sp]->length; k++, idx++) {
			v += h->positive_delta[d++];
			assert_in_range(idx, 0, 7);
			native[idx] = v;
		}
	}
	for (size_t i = 0, cum = h->zero_count; i < 8; i++) {
		cum += native[i];
		assert_true(cum == want_cum[i]);
	}
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	assert_null(next_family(&s));
	free(buf);
}

static void test_native_empty(void **state)
{
	Io__Prometheus__Client__Histogram *h;
	MetricFamily *mf;
	struct stream s;
	size_t len;
	char *buf;

	memset(&batch, 0, sizeof(batch));
	buf = render(write_batch, &len);
	s = (struct stream){ (unsigned char *)buf, (unsigned char *)buf + len };
	mf = next_family(&s);
	h = mf->metric[0]->histogram;
	/* still native for Prometheus: a positive zero threshold, no spans */
	assert_true(h->zero_threshold > 0);
	assert_int_equal(h->n_positive_span, 0);
	assert_true(h->sample_count == 0);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	free(buf);
}

static struct hist_log2 lat;

static void write_log2(struct promfmt *w)
{
	promfmt__family(w, "t_latency_seconds", "histogram", "Latency.");
	promfmt__hist_log2(w, NULL, 0, &lat, 1e9);
}

static void test_log2_classic_only(void **state)
{
	Io__Prometheus__Client__Histogram *h;
	MetricFamily *mf;
	struct stream s;
	size_t len;
	char *buf;

	memset(&lat, 0, sizeof(lat));
	hist_log2_add(&lat, 1000, 3);	/* slot 10: le = 1024 ns */
	buf = render(write_log2, &len);
	s = (struct stream){ (unsigned char *)buf, (unsigned char *)buf + len };
	mf = next_family(&s);
	h = mf->metric[0]->histogram;
	assert_false(h->has_schema);	/* 2^k ns is no schema boundary in seconds */
	assert_int_equal(h->n_positive_span, 0);
	assert_false(h->has_zero_threshold);
	assert_int_equal(h->n_bucket, DMT_LOG2_SLOTS - 1);
	assert_true(h->bucket[10]->upper_bound == 1024 / 1e9);
	assert_true(h->bucket[9]->cumulative_count == 0);
	assert_true(h->bucket[10]->cumulative_count == 3);
	assert_true(h->sample_count == 3);
	assert_true(fabs(h->sample_sum - 3000 / 1e9) < 1e-15);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	free(buf);
}

static void write_log2_native(struct promfmt *w)
{
	struct prom_label l[] = { { "binding_id", "1" } };

	promfmt__family(w, "t_latency_nanoseconds", "histogram", "Latency.");
	promfmt__hist_log2_native(w, l, 1, &lat);
}

/* Decode spans + deltas into per-index counts; returns the bucket total. */
static uint64_t decode_native(const Io__Prometheus__Client__Histogram *h, uint64_t *idx_count,
			      unsigned int n)
{
	uint64_t v = 0, total = 0;
	size_t d = 0;
	int idx = 0;

	for (size_t sp = 0; sp < h->n_positive_span; sp++) {
		idx += h->positive_span[sp]->offset;
		for (uint32_t k = 0; k < h->positive_span[sp]->length; k++, idx++) {
			assert_true(d < h->n_positive_delta);
			v += h->positive_delta[d++];
			assert_in_range(idx, 0, n - 1);
			assert_true(v > 0);	/* sparse: no empty bucket in a span */
			idx_count[idx] = v;
			total += v;
		}
	}
	assert_int_equal(d, h->n_positive_delta);
	return total;
}

static void test_log2_native(void **state)
{
	/* ns values across the range, 0 and 1 (slot 0), and one past the last bound */
	static const uint64_t val[] = { 0, 1, 2, 3, 1000, 1024, 1025, 3000, 1ULL << 30,
					1ULL << 40 };
	static const uint64_t cnt[] = { 2, 1, 5, 1, 3, 1, 2, 4, 1, 1 };
	uint64_t native[DMT_LOG2_SLOTS] = {}, sum = 0, total;
	Io__Prometheus__Client__Histogram *h;
	struct promfmt *t;
	MetricFamily *mf;
	struct stream s;
	size_t len;
	char *buf;

	memset(&lat, 0, sizeof(lat));
	for (size_t i = 0; i < sizeof(val) / sizeof(*val); i++) {
		hist_log2_add(&lat, val[i], cnt[i]);
		sum += val[i] * cnt[i];
	}
	buf = render(write_log2_native, &len);
	s = (struct stream){ (unsigned char *)buf, (unsigned char *)buf + len };
	mf = next_family(&s);
	assert_string_equal(mf->name, "t_latency_nanoseconds");
	assert_int_equal(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	assert_int_equal(mf->metric[0]->n_label, 1);
	h = mf->metric[0]->histogram;
	assert_non_null(h);
	/* native only: schema 0, zero bucket [-1, 1] ns = slot 0, no classic buckets */
	assert_true(h->has_schema && h->schema == 0);
	assert_true(h->zero_threshold == 1.0);
	assert_true(h->zero_count == lat.slots[0]);
	assert_true(h->zero_count == 3);
	assert_int_equal(h->n_bucket, 0);
	/* every slot k >= 1 comes back as index k, exactly */
	total = decode_native(h, native, DMT_LOG2_SLOTS);
	assert_true(native[0] == 0);
	for (unsigned int k = 1; k < DMT_LOG2_SLOTS; k++)
		assert_true(native[k] == lat.slots[k]);
	/* spot checks of the mapping: (2^(k-1), 2^k] */
	assert_true(native[1] == 5 && native[2] == 1);		/* 2 | 3 */
	assert_true(native[10] == 4 && native[11] == 2);	/* 1000, 1024 | 1025 */
	assert_true(native[12] == 4 && native[30] == 1);
	assert_true(native[DMT_LOG2_SLOTS - 1] == 1);		/* clamped, as +Inf in classic */
	assert_true(h->sample_count == total + h->zero_count);
	assert_true(h->sample_count == lat.count);
	assert_true(h->sample_sum == (double)sum);	/* ns, not scaled */
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	assert_null(next_family(&s));
	free(buf);

	/* the text format has no native histograms: no trace of the family */
	t = promfmt__new();
	assert_non_null(t);
	write_log2_native(t);
	assert_int_equal(promfmt__err(t), 0);
	promfmt__text(t, &len);
	assert_int_equal(len, 0);
	promfmt__free(t);
}

static void test_log2_native_empty(void **state)
{
	Io__Prometheus__Client__Histogram *h;
	MetricFamily *mf;
	struct stream s;
	size_t len;
	char *buf;

	memset(&lat, 0, sizeof(lat));
	buf = render(write_log2_native, &len);
	s = (struct stream){ (unsigned char *)buf, (unsigned char *)buf + len };
	mf = next_family(&s);
	h = mf->metric[0]->histogram;
	/* native for Prometheus (a positive zero threshold) while empty */
	assert_true(h->zero_threshold > 0);
	assert_int_equal(h->n_positive_span, 0);
	assert_true(h->sample_count == 0 && h->sample_sum == 0);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	free(buf);
}

static void write_bad(struct promfmt *w)
{
	promfmt__family(w, "t_h", "histogram", "x");
	promfmt__sample_u64(w, "_bucket", NULL, 0, "le", "1", 1);
}

static void test_histogram_parts_refused(void **state)
{
	struct promfmt *w = promfmt__new_proto();
	size_t len;

	write_bad(w);
	assert_int_equal(promfmt__err(w), -EINVAL);
	assert_null(promfmt__take(w, &len));
	promfmt__free(w);
}

static void test_accepts(void **state)
{
	assert_true(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"));
	assert_true(promproto_accepts("text/plain;q=0.5, application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"));
	assert_false(promproto_accepts(NULL));
	assert_false(promproto_accepts(""));
	assert_false(promproto_accepts("text/plain;version=0.0.4"));
	assert_false(promproto_accepts("*/*"));
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0"));
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text"));
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=other.Message;encoding=delimited"));
	/* what Prometheus 2.42 sends with native histograms on */
	assert_true(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
}

/* Issue 26 item 9: q-values in order, whatever order the ranges come in. */
static void test_accepts_q_order(void **state)
{
	assert_false(promproto_accepts("text/plain;version=0.0.4;q=1,application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5"));
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.2, */*;q=0.9"));
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5, text/*"));
	assert_true(promproto_accepts("text/plain;q=0.4, application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5"));
	/* a tie goes to the format the client named */
	assert_true(promproto_accepts("*/*;q=0.5, application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5"));
	/* a malformed q is 0 */
	assert_false(promproto_accepts("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=high"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_hostile_label),
		cmocka_unit_test(test_native_batch),
		cmocka_unit_test(test_native_empty),
		cmocka_unit_test(test_log2_classic_only),
		cmocka_unit_test(test_log2_native),
		cmocka_unit_test(test_log2_native_empty),
		cmocka_unit_test(test_histogram_parts_refused),
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_accepts_q_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
