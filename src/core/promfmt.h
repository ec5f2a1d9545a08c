/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer for the Prometheus text exposition format, version 0.0.4.
 *
 *   struct promfmt *w = promfmt__new();               NULL on ENOMEM
 *   promfmt__family(w, "x_total", "counter", "Help text.");
 *   promfmt__sample_u64(w, NULL, labels, n, 42);
 *   char *text = promfmt__take(w, &len);             NULL + errno on error
 *   promfmt__free(w);
 *
 * A family's # HELP and # TYPE lines are written with its first sample, so
 * a family without samples leaves no trace in the output. All samples of a
 * family must be written before the next promfmt__family() call (the format
 * wants families contiguous). Errors are sticky: the first -errno is kept
 * and returned by promfmt__err() and promfmt__take().
 */
#ifndef DEVMEMTOP_PROMFMT_H
#define DEVMEMTOP_PROMFMT_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

struct prom_label {
	const char *name;
	const char *value;
};

struct promfmt;

struct promfmt *promfmt__new(void);
/*
 * The same calls, written as the protobuf format with native histograms
 * (promproto.h); promfmt__text() is complete after promfmt__end().
 */
struct promfmt *promfmt__new_proto(void);
int promfmt__end(struct promfmt *w);
void promfmt__free(struct promfmt *w);

/* Start a family; the strings must outlive the family's samples. */
void promfmt__family(struct promfmt *w, const char *name, const char *type,
		     const char *help);
/*
 * One sample of the current family: name + suffix ("_bucket", "_sum", NULL),
 * the labels, an optional extra label (e.g. "le", NULL for none), the value.
 */
void promfmt__sample(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
		     size_t n, const char *xname, const char *xvalue, double v);
void promfmt__sample_u64(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
			 size_t n, const char *xname, const char *xvalue, uint64_t v);
void promfmt__sample_i64(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
			 size_t n, const char *xname, const char *xvalue, int64_t v);

/*
 * Histograms as cumulative le buckets, +Inf, _sum and _count.
 * log2: le = 2^k / div for k = 0 .. nslots-2, the last (clamped) slot only
 * in +Inf (div 1e9 turns ns into seconds); _sum is sum / div. batch: le = 1, 2, 4 .. DMT_BATCH_MAX.
 */
void promfmt__hist_log2(struct promfmt *w, const struct prom_label *lbl, size_t n,
			const struct hist_log2 *h, double div);
/*
 * A native-only histogram of the log2 slots in their own unit (ns): written
 * in the protobuf format only (promproto.h); the text format has no native
 * histograms, so there it writes nothing and its family leaves no trace.
 */
void promfmt__hist_log2_native(struct promfmt *w, const struct prom_label *lbl, size_t n,
			       const struct hist_log2 *h);
void promfmt__hist_batch(struct promfmt *w, const struct prom_label *lbl, size_t n,
			 const struct hist_batch *h);

/* Text of the output so far (NUL-terminated), valid until the next write. */
const char *promfmt__text(const struct promfmt *w, size_t *len);
/* Hand the buffer over to the caller (free() it); the writer is left empty. */
char *promfmt__take(struct promfmt *w, size_t *len);
int promfmt__err(const struct promfmt *w);

/*
 * Helpers, exported for tests: shortest text of a double that reads back
 * to the same value ("NaN", "+Inf", "-Inf" for the specials), and label
 * value escaping (\\, \", \n). Both return the length written, or -ENOSPC.
 */
int prom_format_double(char *buf, size_t len, double v);
int prom_escape_label(char *buf, size_t len, const char *s);

#endif /* DEVMEMTOP_PROMFMT_H */
