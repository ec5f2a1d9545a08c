/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gate specs: a YAML file of thresholds on named metrics, in the style of
 * k6 thresholds. See docs/gate.md for the format and the metric vocabulary.
 *
 *   char err[256];
 *   struct gate_spec *s = gate_spec__parse_file(path, err, sizeof(err));
 *   if (!s) -> err holds "FILE:LINE:COL: message"
 *   ...
 *   gate_spec__free(s);
 *
 * This module knows nothing about the collector; it only maps metric names
 * to the snapshot fields they are computed from (gate_eval.c does that).
 */
#ifndef DEVMEMTOP_GATE_SPEC_H
#define DEVMEMTOP_GATE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a metric is computed from. */
enum gm_object {
	GM_OBJ_POOL = 0,
	GM_OBJ_BINDING,
	GM_OBJ_GLOBAL,
};

enum gm_type {
	GM_HIST_BATCH = 0,	/* exact small integers (refill batches) */
	GM_HIST_LOG2,		/* log2 buckets (latencies) */
	GM_COUNTER,		/* monotonic: last - first over the run */
	GM_GAUGE,		/* sampled at every snapshot */
	GM_TOTAL,		/* last known value per object, summed */
	GM_RATIO,		/* (last - first) of one counter over another's */
};

enum gm_unit {
	GM_UNIT_NONE = 0,	/* counts */
	GM_UNIT_NS,		/* time: ns, us, ms, s */
	GM_UNIT_PCT,		/* percent: % */
	GM_UNIT_BYTES,		/* B, KiB, MiB, GiB, KB, MB, GB */
};

enum gm_id {
	GM_POOL_REFILL_BATCH = 0,
	GM_POOL_HOLDS,
	GM_POOL_RELEASES,
	GM_POOL_INFLIGHT,
	GM_POOL_COUNT,
	GM_POOL_ZOMBIES,
	GM_POOL_DESTROY_INFLIGHT,
	GM_POOL_NID_CHANGES,
	GM_BIND_ALLOC_LATENCY,
	GM_BIND_ALLOC_LATENCY_NIOV,
	GM_BIND_FREE_LATENCY,
	GM_BIND_NIOVS_PER_CALL,
	GM_BIND_COUNT,
	GM_DONTNEED_TOKENS,
	GM_DONTNEED_CALLS,
	GM_TOOL_RINGBUF_DROPS,
	GM_TOOL_MAP_FULL,
	GM_TOOL_COLLECT_TIME,
	/*
	 * The per-binding scalars follow, one per row of the metric table
	 * (metrics.c) with a gate name: look them up by name.
	 */
	GM__STATIC,
};

/* Size of the whole vocabulary: the ids above, then the metric table's. */
int gm_count(void);
#define GM__COUNT gm_count()

struct mdef;

struct gm_def {
	const char *name;
	enum gm_object obj;
	enum gm_type type;
	enum gm_unit unit;
	int avail;		/* enum dmt_metric it needs, -1 always there */
	const char *help;
	const struct mdef *mdef;	/* the metric table row, NULL for the ids above */
	double scale;		/* gate value = snapshot value * scale (ratio -> %) */
	int better;		/* enum mdef_better: which way `compare` calls better */
	bool positive;		/* > 0 by nature: `compare` changes are ratios (mdef.positive) */
};

const struct gm_def *gm_def(enum gm_id id);
/* -1 when unknown */
int gm_lookup(const char *name);

enum gate_stat {
	GS_P = 0,	/* p(N) */
	GS_MAX,
	GS_MIN,
	GS_AVG,
	GS_LAST,
	GS_COUNT,
	GS_RATE,	/* per second over the run */
	GS_SUM,
};

enum gate_op {
	GO_LT = 0,
	GO_LE,
	GO_GT,
	GO_GE,
	GO_EQ,
	GO_NE,
};

const char *gate_stat_name(enum gate_stat s);
const char *gate_op_name(enum gate_op op);
bool gate_op_holds(enum gate_op op, double observed, double threshold);

struct gate_threshold {
	char *expr;		/* as written */
	enum gate_stat stat;
	double q;		/* GS_P: quantile in [0, 1] */
	enum gate_op op;
	double value;		/* in the metric's base unit (ns, %, bytes) */
	enum gm_unit unit;	/* unit of the value (base unit of the stat) */
	int line, col;
};

/* Selectors: unset fields match everything. */
struct gate_selector {
	char *interface;	/* fnmatch(3) glob on the interface name */
	int64_t ifindex;	/* -1 any */
	int64_t pool_id;	/* -1 any */
	int64_t binding_id;	/* -1 any */
	int64_t queue;		/* -1 any */
	int kind;		/* enum dmt_pool_kind, -1 any */
};

struct gate_check {
	enum gm_id metric;
	struct gate_selector sel;
	char sel_str[160];	/* "interface=veth1,kind=pages" or "*" */
	bool optional;
	bool allow_sampled;	/* a sampled metric (light mode) may be gated */
	bool no_data_skip;	/* "no_data: skip": no samples is SKIP, not FAIL */
	int line, col;
	size_t n_thresholds;
	struct gate_threshold *thresholds;
};

struct gate_spec {
	char *name;
	char *path;
	uint64_t interval_ns;	/* 0: caller's default */
	size_t n_checks;
	struct gate_check *checks;
};

struct gate_spec *gate_spec__parse_file(const char *path, char *err, size_t errlen);
/* name is used in messages ("NAME:LINE:COL: ..."). */
struct gate_spec *gate_spec__parse_buf(const char *buf, size_t len, const char *name, char *err,
				       size_t errlen);
void gate_spec__free(struct gate_spec *s);

/*
 * Parse one threshold expression such as "p(99) < 20us" for metric m. On
 * error returns -EINVAL, *err_off is the byte offset of the problem in expr
 * and msg holds the message.
 */
int gate_threshold__parse(const char *expr, enum gm_id m, struct gate_threshold *t,
			  size_t *err_off, char *msg, size_t msglen);

/* The unit a stat of metric m is expressed in (count/rate are plain). */
enum gm_unit gate_stat_unit(enum gm_id m, enum gate_stat s);

/* The vocabulary, one metric a line (devmemtop gate --list-metrics). */
void gm_list(FILE *f);

/* Format a value in a unit for humans: "20.0us", "95.0%", "1.5MiB", "32". */
void gate_fmt_value(char *buf, size_t len, double v, enum gm_unit u);

#endif /* DEVMEMTOP_GATE_SPEC_H */
