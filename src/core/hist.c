// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "hist.h"

/*
 * Both histogram types are "slots[n], count, sum": the arithmetic on them
 * is shared, only the meaning of a slot differs.
 */
static void slots_merge(uint64_t *dst, const uint64_t *src, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		dst[i] += src[i];
}

/* dst = a - b; -EINVAL unless every slot of b is <= a's (b a prefix of a) */
static int slots_sub(uint64_t *dst, const uint64_t *a, const uint64_t *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (a[i] < b[i])
			return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		dst[i] = a[i] - b[i];
	return 0;
}

int hist_slots_quantile(const uint64_t *slots, unsigned int n, uint64_t count, double q)
{
	uint64_t seen = 0, want;
	double r;

	if (!count)
		return -ENODATA;
	if (q < 0 || q > 1)
		return -EINVAL;
	/* the smallest rank r with r >= q * count, at least 1 */
	r = q * (double)count;
	want = (uint64_t)r;
	if ((double)want < r)
		want++;
	if (!want)
		want = 1;
	for (unsigned int i = 0; i < n; i++) {
		seen += slots[i];
		if (seen >= want)
			return i;
	}
	return n - 1;
}

uint64_t hist_log2_bound(unsigned int k)
{
	if (k >= 64)
		return UINT64_MAX;
	return 1ULL << k;
}

unsigned int hist_log2_slot(uint64_t v)
{
	unsigned int k;

	if (v <= 1)
		return 0;
	/* smallest k with v <= 2^k */
	k = 64 - __builtin_clzll(v - 1);
	return k < DMT_LOG2_SLOTS ? k : DMT_LOG2_SLOTS - 1;
}

void hist_log2_add(struct hist_log2 *h, uint64_t v, uint64_t n)
{
	h->slots[hist_log2_slot(v)] += n;
	h->count += n;
	h->sum += v * n;
}

void hist_log2_merge(struct hist_log2 *dst, const struct hist_log2 *src)
{
	slots_merge(dst->slots, src->slots, DMT_LOG2_SLOTS);
	dst->count += src->count;
	dst->sum += src->sum;
}

int hist_log2_sub(struct hist_log2 *dst, const struct hist_log2 *a, const struct hist_log2 *b)
{
	struct hist_log2 r;

	if (a->count < b->count || a->sum < b->sum ||
	    slots_sub(r.slots, a->slots, b->slots, DMT_LOG2_SLOTS))
		return -EINVAL;
	r.count = a->count - b->count;
	r.sum = a->sum - b->sum;
	*dst = r;
	return 0;
}

int hist_log2_quantile(const struct hist_log2 *h, double q, uint64_t *out)
{
	int k = hist_slots_quantile(h->slots, DMT_LOG2_SLOTS, h->count, q);

	if (k < 0)
		return k;
	*out = hist_log2_bound(k);
	return 0;
}

uint64_t hist_log2_max(const struct hist_log2 *h)
{
	for (int i = DMT_LOG2_SLOTS - 1; i >= 0; i--)
		if (h->slots[i])
			return hist_log2_bound(i);
	return 0;
}

uint64_t hist_log2_cumulative(const struct hist_log2 *h, unsigned int k)
{
	uint64_t c = 0;

	for (unsigned int i = 0; i <= k && i < DMT_LOG2_SLOTS; i++)
		c += h->slots[i];
	return c;
}

void hist_batch_add(struct hist_batch *h, unsigned int v, uint64_t n)
{
	if (v > DMT_BATCH_MAX)
		v = DMT_BATCH_MAX;
	h->slots[v] += n;
	h->count += n;
	h->sum += (uint64_t)v * n;
}

void hist_batch_merge(struct hist_batch *dst, const struct hist_batch *src)
{
	slots_merge(dst->slots, src->slots, DMT_BATCH_MAX + 1);
	dst->count += src->count;
	dst->sum += src->sum;
}

int hist_batch_sub(struct hist_batch *dst, const struct hist_batch *a, const struct hist_batch *b)
{
	struct hist_batch r;

	if (a->count < b->count || a->sum < b->sum ||
	    slots_sub(r.slots, a->slots, b->slots, DMT_BATCH_MAX + 1))
		return -EINVAL;
	r.count = a->count - b->count;
	r.sum = a->sum - b->sum;
	*dst = r;
	return 0;
}

int hist_batch_quantile(const struct hist_batch *h, double q, uint64_t *out)
{
	int k = hist_slots_quantile(h->slots, DMT_BATCH_MAX + 1, h->count, q);

	if (k < 0)
		return k;
	*out = k;
	return 0;
}

uint64_t hist_batch_max(const struct hist_batch *h)
{
	for (int i = DMT_BATCH_MAX; i >= 0; i--)
		if (h->slots[i])
			return i;
	return 0;
}

double hist_batch_mean(const struct hist_batch *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
