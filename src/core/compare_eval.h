/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdicts of `devmemtop compare` (docs/compare.md), from per-run values:
 *
 *   struct cmp_input in[N] = { { base, na, cand, nb, noise_pct, MB_LOWER }, ... };
 *   struct cmp_result res[N];
 *   cmp__run(in, res, N, 0.05);
 *
 * Per metric: the U test, the Hodges-Lehmann shift with its 95 % interval,
 * Holm across the N metrics, and
 *
 *   unchanged     the whole interval inside the noise threshold
 *   improved,     Holm-adjusted p < alpha, the interval excludes 0 and the
 *   regressed     estimated change is beyond the noise threshold (the
 *                 direction of the metric says which)
 *   inconclusive  anything else, including too few runs (reason says why)
 *
 * The scale of the change (docs/compare.md, "Two scales"):
 *
 *   CS_RATIO  positive metrics (in->positive: > 0 by nature, the metric
 *             table says so): the shift of ln values, change/lo/hi =
 *             100 (e^shift - 1), so every interval lies above -100 %; the
 *             noise threshold N % is [1/(1 + N/100) - 1, +N %] (5 %:
 *             [-4.76 %, +5 %]), symmetric in ln
 *   CS_DIFF   other metrics: the shift of the values, as a percentage of
 *             the base median (absolute when that median is 0); noise
 *             +/- N %. A positive metric with a value of 0 (ln 0 = -inf)
 *             falls back to it, says so (nonpos) and cuts the interval and
 *             estimate at -100 % (truncated), the least a quantity >= 0
 *             can change by; the truncation keeps the coverage.
 *
 * The U test and the signed-rank test are the same on both scales (ranks
 * do not change under ln).
 *
 * paired: base[i] and cand[i] are one pair (the same round of an
 * interleaved run). Wilcoxon's signed-rank test on the differences and the
 * paired Hodges-Lehmann estimate instead; on the ratio scale the
 * differences are log ratios (change: the median pair's ratio - 1).
 *
 * Below the rule, the model it is applied to: struct cmp_set, one
 * struct cmp_metric per compared metric with its values and its result.
 */
#ifndef DEVMEMTOP_COMPARE_EVAL_H
#define DEVMEMTOP_COMPARE_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include "gate_spec.h"
#include "metrics.h"
#include "stats.h"

/* Runs a side below which no verdict is given: a 95 % interval needs 4. */
#define CMP_MIN_RUNS	4

enum cmp_scale {
	CS_DIFF = 0,	/* cand - base: percent of the base median (or absolute) */
	CS_RATIO,	/* ln(cand) - ln(base): percent change of the ratio */
};

enum cmp_verdict {
	CV_UNCHANGED = 0,
	CV_IMPROVED,
	CV_REGRESSED,
	CV_INCONCLUSIVE,
};

struct cmp_input {
	const double *base;
	size_t na;
	const double *cand;
	size_t nb;
	double noise_pct;	/* e.g. 5 */
	int better;		/* enum mdef_better: MB_LOWER or MB_HIGHER */
	bool paired;		/* base[i] and cand[i] are one pair; na == nb */
	bool positive;		/* > 0 by nature (the metric table): the ratio scale */
};

struct cmp_result {
	struct stats_desc d[2];	/* base, cand (n 0: no values) */
	bool tested;		/* enough runs: u, hl, p_holm are set */
	struct stats_mwu u;	/* paired: p, z, exact and ties of the signed-rank test */
	bool paired;
	enum cmp_scale scale;	/* what hl is the shift of, and what change/lo/hi are */
	size_t nonpos;		/* positive metric: values <= 0 (then CS_DIFF) */
	bool truncated;		/* CS_DIFF, positive metric: lo or change cut at -100 % */
	struct stats_signed_rank sr;	/* paired */
	struct stats_shift hl;	/* shift cand - base (CS_RATIO: of ln values, ln ratios) */
	double p_holm;
	bool relative;		/* change/lo/hi in percent (CS_RATIO, or of the base median) */
	double change, lo, hi;
	enum cmp_verdict verdict;
	unsigned long runs_needed;	/* per side to resolve the noise threshold; 0 unknown */
	char reason[192];
};

/* 0 or -errno (-EINVAL: a non-finite value, -ENOMEM). */
int cmp__run(const struct cmp_input *in, struct cmp_result *res, size_t n, double alpha);
/*
 * The verdict alone, from a result whose tested, relative, change, lo, hi,
 * p_holm and runs_needed are set (compare --summary fills them from Welch).
 */
void cmp__decide(const struct cmp_input *in, struct cmp_result *r, double alpha);
const char *cmp_verdict_name(enum cmp_verdict v);
/* "ratio" or "difference" */
const char *cmp_scale_name(enum cmp_scale s);
/*
 * The noise band of a result on its scale, in percent: [*down, *up]
 * (CS_RATIO: [1/(1 + N/100) - 1, N]; CS_DIFF: [-N, N]; absolute: [0, 0]).
 */
void cmp__noise_band(const struct cmp_result *r, double noise_pct, double *down, double *up);

/*
 * The model of one comparison, shared by the command (compare.c), its
 * inputs (compare_input.c) and its outputs (compare_out.c), so none of them
 * includes another.
 *
 * Metrics (or --summary rows) one comparison holds: the spec's and
 * --metric's together, checked where they are added.
 */
#define CMP_MAX_METRICS	64

/* Figures of the whole run, from the recording rather than the gate vocabulary. */
enum cmp_run_metric {
	CR_NONE = -1,
	CR_CPU_PER_GIB = 0,	/* CPU s of the recorded command per GiB received */
	CR_NIOVS_PER_MIB,	/* niovs the provider handed out per MiB received */
	CR_CALLS_PER_MIB,	/* provider allocation calls per MiB received */
	CR_CPU_S,		/* CPU s of the recorded command */
	CR__COUNT,
};

/* The run metrics' names, directions and --list-metrics lines (compare_eval.c). */
struct cmp_run_def {
	const char *name;
	enum mdef_better better;
	const char *help;
};

extern const struct cmp_run_def cmp_run_defs[CR__COUNT];

struct cmp_metric {
	char label[200];		/* "binding.alloc_latency:p(50)" */
	char name[160];		/* the metric */
	char agg[24];		/* "p(50)", "avg", "value" */
	int gm;			/* gate vocabulary id, -1 for a run metric */
	int run;		/* enum cmp_run_metric */
	enum gate_stat stat;
	double q;
	enum gm_unit unit;
	double noise_pct;
	int better;		/* enum mdef_better */
	bool positive;		/* > 0 by nature: changes on the ratio scale */
	bool implicit;		/* a default, dropped when no run has it */
	double *v[2];		/* per-run values, base and cand */
	size_t n[2];
	size_t missing[2];	/* runs without a value */
	char why_missing[160];
	/* --summary: the published figures */
	bool summary;
	double mean[2], sd[2];
	size_t sn[2];
	struct stats_welch welch;
	double welch_holm;
	struct cmp_result res;
};

struct cmp_set {
	struct cmp_metric *m;
	size_t n;
	size_t runs[2];
	double noise_pct;
	bool summary;
	bool paired;		/* --paired: run i of BASE and run i of CAND are one pair */
	const char *interface;	/* --interface: selector of every gate metric */
};

/* NAME[:AGG[:lower|higher]] into m; -EINVAL with msg. */
int cmp_metric__init(struct cmp_metric *m, const char *spec, double noise, char *msg,
		     size_t len);
/* compare_input.c: the YAML spec (appends to set->m), and --summary (analyses and prints). */
int compare_spec__load(const char *path, struct cmp_set *set, char *msg, size_t len);
int compare_summary(const char *path, struct cmp_set *set);
/* compare_out.c: the files of compare --json, --junit and --html. */
int cmp_out__json(const struct cmp_set *s, const char *path);
int cmp_out__junit(const struct cmp_set *s, const char *path, bool strict);
int cmp_out__html(const struct cmp_set *s, const char *path);
/*
 * The first figure of m's result that is not finite ("base mean",
 * "change"...), or NULL: compare refuses to print inf or nan.
 */
const char *cmp_nonfinite(const struct cmp_metric *m);
/* A value in the metric's unit, for humans. */
void cmp_fmt(char *buf, size_t len, const struct cmp_metric *m, double v);
/* The verdict of a --summary row (Welch) or of a run comparison. */
const char *cmp_metric_verdict(const struct cmp_metric *m);

#endif /* DEVMEMTOP_COMPARE_EVAL_H */
