/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metric table: every per-binding figure declared once, in the way
 * ebpf_exporter declares its metrics. One row names the snapshot field (or
 * the function that derives the figure), the availability key that says
 * whether this kernel can measure it, and how each output shows it:
 *
 *   JSON key          json_out.c writes every row with a json key
 *   Prometheus family expo.c renders every row with a prom name
 *   gate vocabulary   gate_spec.c adds every row with a gate name
 *   recording         record.c stores every row with a tag (others are in
 *                     the frozen version 1 layout, or derived on reading)
 *
 * An unknown value (the row's repr says how the field spells it: -1, 0 or
 * a derived figure with an unknown input) and an unavailable metric are
 * null in JSON, absent in Prometheus and no sample for a gate: never a
 * made-up number. docs/HACKING.md, "How to add a metric".
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
	MU_NS,		/* CLOCK_MONOTONIC time stamp, ns */
};

/* Gate aggregation of a gauge over the matching bindings, per snapshot. */
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
	/* the snapshot field: offset into struct dmt_binding_snap, or derive() */
	size_t off;
	enum mdef_repr repr;
	bool (*derive)(const struct dmt_binding_snap *b, double *v);
	bool integral;			/* derived figures: a whole number */
	int avail;			/* enum dmt_metric that must be available, -1 always */
	const char *json;		/* JSON key in the binding object; NULL: not in JSON */
	const char *prom;		/* Prometheus family; NULL: not exported */
	bool gate;			/* in the gate vocabulary as name */
	enum mdef_agg agg;		/* gauges: sum or max over matching bindings */
	const char *event;		/* totals: the event that fixes the value */
	uint16_t rec_tag;		/* recording: tag in the binding tail; 0: not there */
	enum mdef_better better;	/* compare: lower or higher is better */
};

extern const struct mdef mdefs[];
extern const size_t mdef_count;

/*
 * The value of row d for binding b: false when unknown (the field says so,
 * or an input of a derived figure is unknown). Availability is the
 * caller's: mdef_available().
 */
bool mdef_value(const struct mdef *d, const struct dmt_binding_snap *b, double *v);
/* The raw field as stored in a recording (u64 bits of the field). */
uint64_t mdef_raw(const struct mdef *d, const struct dmt_binding_snap *b);
void mdef_set_raw(const struct mdef *d, struct dmt_binding_snap *b, uint64_t raw);
/* Set a stored row's field to "unknown" (before a recording says otherwise). */
void mdef_set_unknown(const struct mdef *d, struct dmt_binding_snap *b);
bool mdef_available(const struct mdef *d, const struct dmt_availability *avail);

#endif /* DEVMEMTOP_METRICS_H */
