/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmemtop compare: the command (compare.c) and its JSON, JUnit and HTML
 * writers (compare_out.c). docs/compare.md.
 */
#ifndef DEVMEMTOP_COMPARE_H
#define DEVMEMTOP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include "compare_eval.h"
#include "gate_spec.h"

/* Figures of the whole run, from the recording rather than the gate vocabulary. */
enum cmp_run_metric {
	CR_NONE = -1,
	CR_CPU_PER_GIB = 0,	/* CPU s of the recorded command per GiB received */
	CR_NIOVS_PER_MIB,	/* niovs the provider handed out per MiB received */
	CR_CALLS_PER_MIB,	/* provider allocation calls per MiB received */
	CR_CPU_S,		/* CPU s of the recorded command */
	CR__COUNT,
};

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
int cmp_out__json(const struct cmp_set *s, const char *path);
int cmp_out__junit(const struct cmp_set *s, const char *path, bool strict);
int cmp_out__html(const struct cmp_set *s, const char *path);
/* A value in the metric's unit, for humans. */
void cmp_fmt(char *buf, size_t len, const struct cmp_metric *m, double v);
/* The verdict of a --summary row (Welch) or of a run comparison. */
const char *cmp_metric_verdict(const struct cmp_metric *m);

#endif /* DEVMEMTOP_COMPARE_H */
