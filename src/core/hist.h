/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Histograms as user space sees them. hist_log2 mirrors the BPF side's
 * round-up log2 buckets (slot k holds 2^(k-1) < v <= 2^k); hist_batch holds
 * exact small integers (refill batch sizes).
 *
 * Quantiles are conservative: a log2 quantile is the upper bound of the
 * bucket holding the requested rank, so "p(99) < X" never passes on a value
 * that might be above X. Batch quantiles are exact.
 */
#ifndef DEVMEMTOP_HIST_H
#define DEVMEMTOP_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "devmemtop.h"

struct hist_log2 {
	uint64_t slots[DMT_LOG2_SLOTS];
	uint64_t count;
	uint64_t sum;
};

struct hist_batch {
	uint64_t slots[DMT_BATCH_MAX + 1];
	uint64_t count;
	uint64_t sum;
};

/*
 * Index of the slot holding the nearest-rank q quantile (the smallest rank
 * r >= q * count, at least 1) of any slot array; -ENODATA when count is 0,
 * -EINVAL when q is outside [0, 1].
 */
int hist_slots_quantile(const uint64_t *slots, unsigned int n, uint64_t count, double q);

/* Upper bound of log2 slot k (1 for slot 0). */
uint64_t hist_log2_bound(unsigned int k);
/* Slot a value falls in. */
unsigned int hist_log2_slot(uint64_t v);
void hist_log2_add(struct hist_log2 *h, uint64_t v, uint64_t n);
void hist_log2_merge(struct hist_log2 *dst, const struct hist_log2 *src);
/* dst = a - b (counts since b); returns -EINVAL if b is not a prefix of a */
int hist_log2_sub(struct hist_log2 *dst, const struct hist_log2 *a, const struct hist_log2 *b);
/* q in [0, 1]; returns -ENODATA on an empty histogram */
int hist_log2_quantile(const struct hist_log2 *h, double q, uint64_t *out);
uint64_t hist_log2_max(const struct hist_log2 *h);
/* Count of values <= 2^k: the cumulative Prometheus bucket le=2^k. */
uint64_t hist_log2_cumulative(const struct hist_log2 *h, unsigned int k);

void hist_batch_add(struct hist_batch *h, unsigned int v, uint64_t n);
void hist_batch_merge(struct hist_batch *dst, const struct hist_batch *src);
int hist_batch_sub(struct hist_batch *dst, const struct hist_batch *a, const struct hist_batch *b);
int hist_batch_quantile(const struct hist_batch *h, double q, uint64_t *out);
uint64_t hist_batch_max(const struct hist_batch *h);
double hist_batch_mean(const struct hist_batch *h);

#endif /* DEVMEMTOP_HIST_H */
