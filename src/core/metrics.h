/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metric table: every figure declared once, in the way ebpf_exporter
 * declares its metrics. One row names the object it belongs to (a page
 * pool, a binding, or the snapshot as a whole), its kind (a scalar, a log2
 * or a batch histogram), the snapshot field (or the function that derives
 * the figure), the availability key that says whether this kernel can
 * measure it, and how each output shows it:
 *
 *   JSON key          json_out.c writes every row with a json key, in the
 *                     object's JSON object: scalars in row order, then the
 *                     histograms
 *   Prometheus family expo.c renders every row with a prom name (log2
 *                     histograms: classic in seconds or counts, and the
 *                     native twin prom_native)
 *   gate vocabulary   gate_spec.c adds every row with a gate name
 *   recording         record.c stores every row with a tag in the object's
 *                     tagged tail, histograms in the histogram tail after
 *                     it (others are in the frozen version 1 layout, or
 *                     derived on reading)
 *   people's views    report, the HTML page and the detail pane show the
 *                     binding histograms with a title
 *
 * Not rows (yet): the token holders (per socket), the snapshot-wide token
 * histograms and counters, and the tool's own health figures; the outputs
 * write those themselves.
 *
 * An unknown value (the row's repr says how the field spells it: -1, 0 or
 * a derived figure with an unknown input) and an unavailable metric are
 * null in JSON, absent in Prometheus and no sample for a gate: never a
 * made-up number. docs/HACKING.md, "Adding a figure".
 */
#ifndef DEVMEMTOP_METRICS_H
#define DEVMEMTOP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"

/* How a row's snapshot field spells "unknown". */
enum mdef_repr {
	MR_U64 = 0,	/* uint64_t, always known */
	MR_U32,		/* uint32_t, always known */
	MR_U64_NZ,	/* uint64_t, 0 = unknown */
	MR_U32_NZ,	/* uint32_t, 0 = unknown */
	MR_I64,		/* int64_t, < 0 = unknown */
	MR_F64,		/* double, < 0 = unknown */
	MR_DERIVED,	/* computed by derive() from other fields */
	MR_S64,		/* int64_t, always known (may be negative) */
	MR_S32,		/* int, always known (may be negative) */
};

/* What a row belongs to: the object its field is in. */
enum mdef_obj {
	MO_BINDING = 0,	/* struct dmt_binding_snap */
	MO_POOL,	/* struct dmt_pool_snap */
	MO_GLOBAL,	/* struct dmt_snapshot */
};

/* What the field holds. */
enum mdef_kind {
	MK_SCALAR = 0,	/* one number (repr says how it spells unknown) */
	MK_LOG2,	/* struct hist_log2 */
	MK_BATCH,	/* struct hist_batch: exact small integers */
};

enum mdef_type {
	MT_COUNTER = 0,	/* monotonic while the object lives */
	MT_GAUGE,	/* a level, sampled */
	MT_TOTAL,	/* known once, at an event (unbind, free) */
};

/* Units in base units; the Prometheus family name carries the same one. */
enum mdef_unit {
	MU_NIOVS = 0,	/* a count */
	MU_BYTES,
	MU_RATIO,	/* 0..1; gate vocabulary shows it as percent */
	MU_NS,		/* CLOCK_MONOTONIC time stamp, ns; histograms: a duration in ns */
	MU_ITEMS,	/* pages or niovs of a page pool */
};

/* Gate aggregation of a gauge over the matching objects, per snapshot. */
enum mdef_agg {
	MA_SUM = 0,
	MA_MAX,
};

/* Which way is better, for `compare` verdicts (none: not compared by default). */
enum mdef_better {
	MB_NONE = 0,
	MB_LOWER,
	MB_HIGHER,
};

struct mdef {
	const char *name;		/* code name, also the gate name when gate is true */
	enum mdef_type type;
	enum mdef_unit unit;
	const char *help;
	enum mdef_obj obj;
	enum mdef_kind kind;
	/* the snapshot field: offset into the object's struct, or derive() */
	size_t off;
	enum mdef_repr repr;
	bool (*derive)(const void *o, double *v);
	bool integral;			/* derived figures: a whole number */
	/* false: the object does not know the value now (JSON null, no sample) */
	bool (*known)(const void *o);
	int avail;			/* enum dmt_metric that must be available, -1 always */
	const char *json;		/* JSON key in the object; NULL: not in JSON */
	/* JSON version 1's pool and latency figures: shown whatever the availability says */
	bool json_always;
	const char *prom;		/* Prometheus family; NULL: not exported */
	/* log2 histograms: the classic family's values are the field's / prom_div */
	double prom_div;
	const char *prom_native;	/* log2: the native twin (protobuf only) */
	const char *native_help;
	/* Prometheus: a series only while this holds (NULL: always) */
	bool (*present)(const void *o);
	/* Prometheus: why a family may be absent (NULL: binding rows say HW) */
	const char *absent;
	/*
	 * The family's position among its object's families in the exposition
	 * before the table (1, 2, ...); 0: after those, in table order.
	 */
	uint8_t prom_seq;
	bool gate;			/* in the gate vocabulary as name */
	const char *gate_help;		/* the vocabulary's words, NULL: help */
	enum mdef_agg agg;		/* gauges: sum or max over matching objects */
	const char *event;		/* totals: the event that fixes the value */
	uint16_t rec_tag;		/* recording: tag in the object's tail; 0: not there */
	enum mdef_better better;	/* compare: lower or higher is better */
	/*
	 * compare: the figure is > 0 by nature (a latency, a size, a batch, a
	 * flow of traffic), so every aggregation of it is too and its change
	 * is a ratio (log scale, docs/compare.md "Two scales"); false: it can
	 * be 0 or negative (failures, leaks, levels), a difference.
	 */
	bool positive;
	/*
	 * People's views: a binding's log2 histogram with a title is in report,
	 * the HTML page and the live view's detail pane ("alloc latency");
	 * title_long where the chart stands alone (HTML), NULL: title.
	 */
	const char *title;
	const char *title_long;
	/*
	 * People's tables (issue 25): a scalar row with a column heading is a
	 * column of its object's table in report and the HTML page (heading
	 * title there) and a "title value" of the live view's detail pane; a
	 * global row's is in the live view's header, report's summary and the
	 * HTML facts. top: also a column of the live view's table, which must
	 * stay readable in 80-100 columns, so only a few rows say it.
	 */
	const char *col;
	bool top;
};

extern const struct mdef mdefs[];
extern const size_t mdef_count;

/*
 * The value of scalar row d for object o (of the row's obj): false when
 * unknown (the field says so, known() says so, or an input of a derived
 * figure is unknown). Availability is the caller's: mdef_available().
 */
bool mdef_value(const struct mdef *d, const void *o, double *v);
/* The raw field as stored in a recording (u64 bits of the field). */
uint64_t mdef_raw(const struct mdef *d, const void *o);
void mdef_set_raw(const struct mdef *d, void *o, uint64_t raw);
/* Set a stored row's field to "unknown" (before a recording says otherwise). */
void mdef_set_unknown(const struct mdef *d, void *o);
bool mdef_available(const struct mdef *d, const struct dmt_availability *avail);
/* A binding histogram people see (report, HTML, the detail pane): log2, with a title. */
bool mdef_bind_view_hist(const struct mdef *d);
/* A scalar row of object kind obj that people's tables show (col set). */
bool mdef_view_col(const struct mdef *d, enum mdef_obj obj);
/*
 * Row d's value of object o as people's views print it: "n/a" when this
 * kernel or mode cannot measure it (the views say why, from avail), "-"
 * when unknown now, ratios in percent rounded down to 0.1 (pct: with a
 * "%" sign; a table's heading says it instead), never a made-up 0.
 * Returns buf.
 */
const char *mdef_fmt(const struct mdef *d, const void *o, const struct dmt_availability *avail,
		     bool pct, char *buf, size_t len);
/* The column width of a people's table for row d: at least min. */
int mdef_col_width(const struct mdef *d, int min);
/* A histogram row's field (kind MK_LOG2 / MK_BATCH), NULL for another kind. */
const struct hist_log2 *mdef_log2(const struct mdef *d, const void *o);
const struct hist_batch *mdef_batch(const struct mdef *d, const void *o);
/* Whether a Prometheus series of row d exists for object o (present()). */
bool mdef_present(const struct mdef *d, const void *o);
/* The object of row d's kind in snapshot s: the i-th pool or binding, or s. */
const void *mdef_obj_at(const struct mdef *d, const struct dmt_snapshot *s, size_t i);
size_t mdef_obj_count(const struct mdef *d, const struct dmt_snapshot *s);

#endif /* DEVMEMTOP_METRICS_H */
