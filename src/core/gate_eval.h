/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gate evaluation: feed snapshots (live or from a recording) in order, then
 * evaluate the spec's thresholds over the whole run.
 *
 *   struct gate_eval *e = gate_eval__new(spec);       NULL + errno
 *   gate_eval__add(e, snap);    for every snapshot, oldest first
 *   gate_eval__finish(e, &rep); fills the report (results point into spec)
 *   gate_eval__free(e);
 *
 * Aggregation over the run: histograms and counters are the difference
 * between an object's last and first snapshot (objects first seen after the
 * first snapshot count from zero; objects that vanish keep their last
 * values), merged over all objects the selector matches. Gauges are sampled
 * at every snapshot (one sample per snapshot: the sum or the max over the
 * matching objects, see docs/gate.md).
 */
#ifndef DEVMEMTOP_GATE_EVAL_H
#define DEVMEMTOP_GATE_EVAL_H

#include <stdbool.h>
#include <stdio.h>
#include "snapshot.h"
#include "gate_spec.h"

enum gate_status {
	GATE_PASS = 0,
	GATE_FAIL,
	GATE_ERROR,	/* metric unavailable (not optional), bad baseline */
	GATE_SKIP,	/* optional metric unavailable on this kernel */
};

enum gate_bound {
	GATE_EXACT = 0,
	GATE_UPPER,	/* observed is the upper bound of a log2 bucket */
	GATE_LOWER,	/* observed is the lower bound of a log2 bucket */
};

struct gate_result {
	const struct gate_check *chk;
	const struct gate_threshold *th;
	enum gate_status status;
	bool has_data;
	double observed;
	enum gate_bound bound;
	bool has_baseline;
	double baseline;
	double regression_pct;	/* > 0: worse than the baseline */
	char note[200];
};

struct gate_report {
	const struct gate_spec *spec;
	size_t n_results;
	struct gate_result *results;
	double duration_s;
	uint64_t n_snapshots;
	uint64_t ringbuf_drops;		/* over the run */
	int n_pass, n_fail, n_error, n_skip;
	/* filled by the caller, for outputs */
	char source[256];		/* "live" or "recording FILE" */
	char kernel[128];
	char mode[32];
	char error[768];		/* run-level error (e.g. damaged recording) */
};

struct gate_eval;

/*
 * Distinct pools or bindings one check follows over a run (each costs a
 * few KiB): gate_eval__add() returns -E2BIG past it rather than growing
 * with whatever a recording lists.
 */
#define GATE_MAX_OBJS	16384

struct gate_eval *gate_eval__new(const struct gate_spec *spec);
/* 0, -ENOMEM, or -E2BIG: more than GATE_MAX_OBJS objects match one check. */
int gate_eval__add(struct gate_eval *e, const struct dmt_snapshot *s);
/*
 * Check availability of every metric the spec uses against a snapshot.
 * Returns 0, or -ENOENT with a one-line message naming the first
 * unavailable, non-optional metric and the collector's reason.
 */
int gate_eval__check_avail(const struct gate_spec *spec, const struct dmt_availability *avail,
			   char *msg, size_t len);
/*
 * Optional checks on unavailable metrics become SKIP (with the reason);
 * non-optional ones ERROR. Call after gate_eval__finish().
 */
void gate_report__mark_unavailable(struct gate_report *rep, const struct dmt_availability *avail);
/*
 * Fill the results of rep (rep->results is allocated; free with
 * gate_report__fini()). The fields marked "filled by the caller" (source,
 * kernel, mode, error) are left as they are: initialise rep first.
 */
int gate_eval__finish(struct gate_eval *e, struct gate_report *rep);
void gate_eval__free(struct gate_eval *e);

/*
 * Compare with a previous JSON result (--json output): a threshold whose
 * observed value got worse by more than max_pct percent, in the direction
 * its operator calls bad, fails. 0, or -errno with msg set.
 */
int gate_report__apply_baseline(struct gate_report *rep, const char *path, double max_pct,
				char *msg, size_t len);
/* Recount n_pass/n_fail/... from the results. */
void gate_report__count(struct gate_report *rep);
/* 0 all passed, 1 some failed, 2 errors */
int gate_report__exit_code(const struct gate_report *rep);
/* The outputs, in gate_out.c: text table, JUnit XML, JSON result. */
void gate_report__print(const struct gate_report *rep, FILE *f);
int gate_report__write_junit(const struct gate_report *rep, const char *path);
int gate_report__write_json(const struct gate_report *rep, const char *path);
void gate_report__fini(struct gate_report *rep);
/*
 * For errors before any threshold could be evaluated (bad spec, metric
 * unavailable, command did not start): a JUnit file with one errored
 * testcase and/or a JSON result with "result": "error". Either path may be
 * NULL. 0 or -errno.
 */
int gate_write_error(const char *junit, const char *json, const char *name, const char *msg);

const char *gate_status_name(enum gate_status s);

#endif /* DEVMEMTOP_GATE_EVAL_H */
