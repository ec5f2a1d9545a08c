/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus protobuf exposition format (delimited MetricFamily
 * messages, proto/prometheus_metrics.proto via protobuf-c), with native
 * histograms. promfmt.c drives it when a scraper asks for protobuf, so
 * expo.c renders one catalogue into either format:
 *
 *   struct promfmt *w = promfmt__new_proto();
 *   expo__render(w, &in);                  the same calls as for text
 *   char *buf = promfmt__take(w, &len);    delimited MetricFamily messages
 *
 * A family is serialized when the next one starts (or at the end), so
 * memory holds one family's messages at a time.
 *
 * Histograms: the refill batch histogram (exact integers 0..128) is sent
 * as a native histogram of schema 0 (bucket i = (2^(i-1), 2^i]) whose
 * buckets are our classic le buckets one to one, exact zeros in the zero
 * bucket (threshold 2^-128), sparse (spans skip empty buckets), with the
 * classic buckets alongside. The latency histograms' buckets are 2^k ns,
 * and 2^k * 1e-9 s is no schema's boundary in seconds (1e-9 is not a power
 * of two; Prometheus 2.42 has no custom-bucket native histograms), so their
 * _seconds families stay classic, and promproto__hist_log2_native() sends
 * the same slots as a separate native family in nanoseconds (expo.c names
 * it ..._nanoseconds): schema 0, slot k = index k, slot 0 (0 or 1 ns) the
 * zero bucket of threshold 1, exact. It exists in this format only.
 */
#ifndef DEVMEMTOP_PROMPROTO_H
#define DEVMEMTOP_PROMPROTO_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"
#include "promfmt.h"

#define PROMPROTO_CONTENT_TYPE \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

struct promproto;

struct promproto *promproto__new(void);
void promproto__free(struct promproto *pp);

void promproto__family(struct promproto *pp, const char *name, const char *type,
		       const char *help);
/* A counter, gauge or untyped sample (suffix must be NULL: no histogram parts). */
void promproto__sample(struct promproto *pp, const char *suffix, const struct prom_label *lbl,
		       size_t n, const char *xname, const char *xvalue, double v);
void promproto__hist_log2(struct promproto *pp, const struct prom_label *lbl, size_t n,
			  const struct hist_log2 *h, double div);
/* Native only, in the histogram's own unit (no div): see above. */
void promproto__hist_log2_native(struct promproto *pp, const struct prom_label *lbl, size_t n,
				 const struct hist_log2 *h);
void promproto__hist_batch(struct promproto *pp, const struct prom_label *lbl, size_t n,
			   const struct hist_batch *h);
/* Serialize the open family; 0 or the first -errno. */
int promproto__end(struct promproto *pp);
/* The bytes so far (after promproto__end()). */
const char *promproto__data(const struct promproto *pp, size_t *len);
/* Hand the buffer over (free() it); NULL + errno on error. */
char *promproto__take(struct promproto *pp, size_t *len);
int promproto__err(const struct promproto *pp);

/* The Accept header asks for delimited io.prometheus.client.MetricFamily. */
int promproto_accepts(const char *accept);

#endif /* DEVMEMTOP_PROMPROTO_H */
