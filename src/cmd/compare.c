// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop compare: is the difference between two sets of runs real?
 * Each recording gives one value per metric (the gate vocabulary and its
 * aggregations, evaluated over the whole run as `gate --from` does, plus
 * run figures such as CPU per GiB); the two sets of values are compared
 * with compare_eval.c. docs/compare.md.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "compare_eval.h"
#include "gate_eval.h"
#include "metrics.h"
#include "record.h"
#include "textsafe.h"
#include "util.h"

#define CMP_MAX_RUNS	1000
#define CMP_ALPHA	0.05

struct cmp_args {
	const char *spec, *json, *junit, *html, *summary, *better, *interface, *scale;
	bool strict, values, paired;
	double noise_pct;
	const char *metrics[CMP_MAX_METRICS];
	size_t n_metrics;
	char **files[2];
	size_t n_files[2];
};

/* Compared when no --metric or --spec names any (dropped when no run has them). */
static const char *const default_metrics[] = {
	"binding.alloc_latency:p(50)", "binding.alloc_latency_per_niov:avg",
	"binding.niovs_per_call:avg", "pool.refill_batch:p(50)", "run.cpu_per_gib",
	"run.niovs_per_mib", "run.calls_per_mib",
};

static void compare_usage(FILE *f)
{
	fprintf(f,
		"Usage: devmemtop compare [OPTIONS] BASE.dmtrec... -- CAND.dmtrec...\n"
		"       devmemtop compare --summary FILE [--noise PCT] [--json FILE]\n"
		"\n"
		"Compare repeated runs: one value per metric and recording, a Mann-Whitney U\n"
		"test per metric (Holm-corrected across them), the Hodges-Lehmann change of\n"
		"the median with its 95%% interval (a ratio for metrics positive by nature,\n"
		"never below -100%%; else a difference), and a verdict: improved, regressed,\n"
		"unchanged (the interval inside the noise threshold) or inconclusive.\n"
		"\n"
		"  -m, --metric NAME[:AGG[:lower|higher]]  a metric to compare (repeatable);\n"
		"                         AGG as in gate expressions: p50 or p(50), avg, max,\n"
		"                         min, last, count, rate, sum; run.* metrics: value\n"
		"  -s, --spec FILE        metrics, noise and direction from a YAML file\n"
		"  -n, --noise PCT        noise threshold (default 5%%)\n"
		"  -I, --interface GLOB   pools and bindings of these interfaces only\n"
		"      --strict           exit 1 on inconclusive too\n"
		"      --json FILE        the comparison with every run's value\n"
		"      --junit FILE       one testcase per metric\n"
		"      --html FILE        per-run dots and the interval, one row per metric\n"
		"      --summary FILE     compare published mean/sd/n rows (Welch's t-test)\n"
		"      --values           BASE and CAND are text files of numbers, one run a\n"
		"                         value (any benchmark's output); --better lower|higher\n"
		"      --scale ratio|difference  --values: ratio (default) for numbers > 0 by\n"
		"                         nature (latency, throughput), difference for ones\n"
		"                         that can be 0 or negative\n"
		"      --paired           run i of BASE and run i of CAND are one pair (one\n"
		"                         round of an interleaved A/B run): Wilcoxon signed-rank\n"
		"                         test and the median pair's ratio instead\n"
		"      --list-metrics     the run.* metrics (the rest: gate --list-metrics)\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 no metric regressed, 1 a metric regressed (or, with --strict,\n"
		"was inconclusive), 2 error. Full manual: devmemtop(8); docs/compare.md.\n");
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || (*end && strcmp(end, "%")) || !(v > 0 && v < 1000))
		return -EINVAL;
	*out = v;
	return 0;
}

static int option(struct cmp_args *a, int argc, char **argv, int *i)
{
	const char *o = argv[*i], *val = *i + 1 < argc ? argv[*i + 1] : NULL;
	const char **dst = NULL;

	if (!strcmp(o, "--strict") || !strcmp(o, "--values")) {
		*(o[2] == 's' ? &a->strict : &a->values) = true;
		return 0;
	}
	if (!strcmp(o, "--paired")) {
		a->paired = true;
		return 0;
	}
	if (!strcmp(o, "-m") || !strcmp(o, "--metric")) {
		if (a->n_metrics == CMP_MAX_METRICS) {
			dmt_err("more than %d metrics",
				CMP_MAX_METRICS);
			return -E2BIG;
		}
		dst = &a->metrics[a->n_metrics++];
	} else if (!strcmp(o, "-s") || !strcmp(o, "--spec")) {
		dst = &a->spec;
	} else if (!strcmp(o, "--json")) {
		dst = &a->json;
	} else if (!strcmp(o, "--junit")) {
		dst = &a->junit;
	} else if (!strcmp(o, "--html")) {
		dst = &a->html;
	} else if (!strcmp(o, "--summary")) {
		dst = &a->summary;
	} else if (!strcmp(o, "--better")) {
		dst = &a->better;
	} else if (!strcmp(o, "--scale")) {
		dst = &a->scale;
	} else if (!strcmp(o, "-I") || !strcmp(o, "--interface")) {
		dst = &a->interface;
	} else if (!strcmp(o, "-n") || !strcmp(o, "--noise")) {
		if (!val || parse_pct(val, &a->noise_pct)) {
			dmt_err("--noise needs a percentage such as 5%% "
				"(got '%s')", val ? val : "");
			return -EINVAL;
		}
		(*i)++;
		return 0;
	} else {
		dmt_err("unknown option '%s' (try --help)", o);
		return -EINVAL;
	}
	if (!val || !*val) {
		dmt_err("%s needs an argument", o);
		return -EINVAL;
	}
	*dst = val;
	(*i)++;
	return 0;
}

/* 0, 1 help/list printed, -errno after a message. */
static int parse_args(int argc, char **argv, struct cmp_args *a)
{
	int side = 0, err;

	a->noise_pct = 5;
	for (int i = 0; i < 2; i++) {
		a->files[i] = calloc(argc, sizeof(char *));
		if (!a->files[i])
			return -ENOMEM;
	}
	for (int i = 1; i < argc; i++) {
		if (side == 0 && !strcmp(argv[i], "--")) {
			side = 1;
		} else if (side == 0 && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			compare_usage(stdout);
			return 1;
		} else if (side == 0 && !strcmp(argv[i], "--list-metrics")) {
			for (int k = 0; k < CR__COUNT; k++)
				printf("%-24s %s\n", cmp_run_defs[k].name, cmp_run_defs[k].help);
			return 1;
		} else if (side == 0 && argv[i][0] == '-' && argv[i][1]) {
			err = option(a, argc, argv, &i);
			if (err)
				return err;
		} else {
			a->files[side][a->n_files[side]++] = argv[i];
		}
	}
	if (a->summary && (a->n_files[0] || a->n_files[1] || a->n_metrics || a->spec || a->html)) {
		dmt_err("--summary takes its rows from FILE "
			"(no recordings, --metric, --spec or --html)");
		return -EINVAL;
	}
	if (!a->summary && (!a->n_files[0] || !a->n_files[1])) {
		dmt_err("need BASE recordings, '--', then CAND "
			"recordings (try --help)");
		return -EINVAL;
	}
	if (a->better && strcmp(a->better, "lower") && strcmp(a->better, "higher")) {
		dmt_err("--better must be lower or higher");
		return -EINVAL;
	}
	if (a->scale && strcmp(a->scale, "ratio") && strcmp(a->scale, "difference")) {
		dmt_err("--scale must be ratio or difference");
		return -EINVAL;
	}
	if (a->scale && !a->values) {
		dmt_err("--scale is for --values (the metric table says each metric's scale)");
		return -EINVAL;
	}
	if (a->paired && a->summary) {
		dmt_err("--paired needs the runs themselves, not --summary rows");
		return -EINVAL;
	}
	if (a->paired && !a->values && a->n_files[0] != a->n_files[1]) {
		dmt_err("--paired: %zu base and %zu candidate recordings (one of each a pair)",
			a->n_files[0], a->n_files[1]);
		return -EINVAL;
	}
	if (a->values && (a->n_metrics || a->spec)) {
		dmt_err("--values compares the numbers in the files "
			"(no --metric or --spec)");
		return -EINVAL;
	}
	if (a->n_files[0] > CMP_MAX_RUNS || a->n_files[1] > CMP_MAX_RUNS) {
		dmt_err("at most %d recordings a side", CMP_MAX_RUNS);
		return -E2BIG;
	}
	return 0;
}

static int build_metrics(const struct cmp_args *a, struct cmp_set *set)
{
	char msg[512];
	size_t n = a->n_metrics ? a->n_metrics : ARRAY_SIZE(default_metrics);
	int err = 0;

	set->noise_pct = a->noise_pct;
	if (a->spec) {
		err = compare_spec__load(a->spec, set, msg, sizeof(msg));
		if (err) {
			if (err != -ENOMEM)	/* cmd_compare() says so */
				dmt_err("%s", textsafe_line(msg, sizeof(msg)));
			return err;
		}
		if (!a->n_metrics)
			return 0;
	}
	if (set->n + n > CMP_MAX_METRICS) {
		dmt_err("more than %d metrics (%zu from --spec, %zu from --metric)",
			CMP_MAX_METRICS, set->n, n);
		return -E2BIG;
	}
	set->m = realloc(set->m, (set->n + n) * sizeof(*set->m));
	if (!set->m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct cmp_metric *m = &set->m[set->n];
		const char *spec = a->n_metrics ? a->metrics[i] : default_metrics[i];
		/* "SPEC: why", escaped below: the spec is the user's text */
		int o = snprintf(msg, sizeof(msg), "%s: ", spec);

		if (o >= (int)sizeof(msg) / 2)
			o = sizeof(msg) / 2;
		err = cmp_metric__init(m, spec, set->noise_pct, msg + o, sizeof(msg) - o);
		if (err) {
			dmt_err("--metric %s", textsafe_line(msg, sizeof(msg)));
			return err;
		}
		m->implicit = !a->n_metrics;
		set->n++;
	}
	return 0;
}

/* ---- one recording ---- */

/* Helper checks after the compared ones: counts the run metrics divide. */
enum { HK_BYTES = 0, HK_NIOVS, HK_CALLS, HK__COUNT };
static const char *const helper_metric[HK__COUNT] = {
	"binding.rx_bytes", "binding.alloc_niovs", "binding.alloc_calls",
};

struct run_eval {
	const char *interface;	/* selector of every check, NULL all */
	struct gate_spec spec;
	struct gate_check *chk;
	struct gate_threshold *th;
	size_t n;
	struct gate_report rep;
	bool *avail_ok;		/* per check: its metric is available */
	bool has_cpu;
	double cpu_s;
};

static int spec_add(struct run_eval *x, int gm, enum gate_stat st, double q)
{
	struct gate_check *c = &x->chk[x->n];
	struct gate_threshold *t = &x->th[x->n];

	memset(c, 0, sizeof(*c));
	memset(t, 0, sizeof(*t));
	c->metric = gm;
	c->sel = (struct gate_selector){ .ifindex = -1, .pool_id = -1, .binding_id = -1,
					  .queue = -1, .kind = -1 };
	c->sel.interface = (char *)x->interface;
	snprintf(c->sel_str, sizeof(c->sel_str), "%s", x->interface ? x->interface : "*");
	c->optional = true;
	c->allow_sampled = true;
	c->no_data_skip = true;
	c->n_thresholds = 1;
	c->thresholds = t;
	t->expr = (char *)"compare";
	t->stat = st;
	t->q = q;
	t->op = GO_LT;	/* log2 quantiles: the bucket's upper bound */
	t->value = INFINITY;
	t->unit = gate_stat_unit(gm, st);
	x->n++;
	return 0;
}

static void build_spec(struct run_eval *x, const struct cmp_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct cmp_metric *m = &set->m[i];

		/* run metrics keep a slot (never evaluated) so indexes line up */
		spec_add(x, m->gm >= 0 ? m->gm : 0, m->gm >= 0 ? m->stat : GS_COUNT, m->q);
	}
	for (int k = 0; k < HK__COUNT; k++) {
		int gm = gm_lookup(helper_metric[k]);

		spec_add(x, gm >= 0 ? gm : 0, GS_COUNT, 0);
		if (gm < 0)	/* not in this build's vocabulary */
			x->chk[x->n - 1].metric = -1;
	}
	x->spec.name = "compare";
	x->spec.checks = x->chk;
	x->spec.n_checks = x->n;
}

static void mark_avail(struct run_eval *x, const struct dmt_availability *av)
{
	for (size_t i = 0; i < x->n; i++) {
		const struct gm_def *d = (int)x->chk[i].metric >= 0 ?
			gm_def(x->chk[i].metric) : NULL;

		x->avail_ok[i] = d && (d->avail < 0 || av[d->avail].available);
		if ((int)x->chk[i].metric < 0)
			x->chk[i].metric = 0;
	}
}

static int read_recording(const char *path, struct run_eval *x, char *msg, size_t len)
{
	struct rec_reader *r = rec_reader__open(path);
	struct gate_eval *ev = NULL;
	struct rec_item it;
	int ret, err = -ENOMEM;

	if (!r) {
		int e = errno;

		snprintf(msg, len, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	if (!rec_reader__meta(r)) {
		snprintf(msg, len, "%s", rec_reader__error(r));
		err = -EBADMSG;
		goto free_r;
	}
	mark_avail(x, rec_reader__meta(r)->avail);
	ev = gate_eval__new(&x->spec);
	if (!ev)
		goto free_r;
	while ((ret = rec_reader__next(r, &it)) > 0) {
		if (it.type == REC_END && it.end.has_cpu) {
			x->has_cpu = true;
			x->cpu_s = (it.end.cpu_user_ns + it.end.cpu_sys_ns) / 1e9;
		}
		if (it.type != REC_SNAPSHOT)
			continue;
		err = gate_eval__add(ev, it.snap);
		snapshot__free(it.snap);
		if (err) {
			snprintf(msg, len, "%s: %s", path, strerror(-err));
			goto free_ev;
		}
	}
	if (ret < 0) {
		snprintf(msg, len, "%s (compare needs complete recordings)", rec_reader__error(r));
		err = -EBADMSG;
		goto free_ev;
	}
	err = gate_eval__finish(ev, &x->rep);
	if (err)
		snprintf(msg, len, "%s: %s", path, strerror(-err));
free_ev:
	gate_eval__free(ev);
free_r:
	rec_reader__free(r);
	return err;
}

static bool result_value(const struct run_eval *x, size_t i, double *v)
{
	const struct gate_result *r = &x->rep.results[i];

	if (!x->avail_ok[i] || !r->has_data)
		return false;
	*v = r->observed;
	return true;
}

static bool run_value(const struct run_eval *x, size_t base, int run, double *v)
{
	double bytes = 0, count = 0;
	bool has_bytes = result_value(x, base + HK_BYTES, &bytes) && bytes > 0;

	switch (run) {
	case CR_CPU_S:
		*v = x->cpu_s;
		return x->has_cpu;
	case CR_CPU_PER_GIB:
		*v = x->cpu_s / (bytes / (1024.0 * 1024 * 1024));
		return x->has_cpu && has_bytes;
	case CR_NIOVS_PER_MIB:
	case CR_CALLS_PER_MIB:
		if (!result_value(x, base + (run == CR_NIOVS_PER_MIB ? HK_NIOVS : HK_CALLS), &count))
			return false;
		*v = count / (bytes / (1024.0 * 1024));
		return has_bytes;
	default:
		return false;
	}
}

static void why_missing(struct cmp_metric *m, const struct run_eval *x, size_t i)
{
	const char *why;

	if (m->why_missing[0])
		return;
	if (m->run == CR_CPU_S || m->run == CR_CPU_PER_GIB)
		why = x->has_cpu ? "no bytes received into bindings" :
		      "no command CPU in the recording (record -- CMD keeps it)";
	else if (m->run != CR_NONE)
		why = "no bytes received into bindings, or no provider counts";
	else if (!x->avail_ok[i])
		why = "metric unavailable in the recording";
	else
		why = "no data in the run";
	snprintf(m->why_missing, sizeof(m->why_missing), "%s", why);
}

static int one_run(struct cmp_set *set, int side, const char *path)
{
	struct run_eval x = { .interface = set->interface };
	size_t cap = set->n + HK__COUNT;
	char msg[1024];
	int err = -ENOMEM;

	x.chk = calloc(cap, sizeof(*x.chk));
	x.th = calloc(cap, sizeof(*x.th));
	x.avail_ok = calloc(cap, sizeof(*x.avail_ok));
	if (!x.chk || !x.th || !x.avail_ok)
		goto out;
	build_spec(&x, set);
	err = read_recording(path, &x, msg, sizeof(msg));
	if (err) {
		dmt_err("%s", textsafe_line(msg, sizeof(msg)));
		goto out;
	}
	for (size_t i = 0; i < set->n; i++) {
		struct cmp_metric *m = &set->m[i];
		double v;
		bool ok = m->run == CR_NONE ? result_value(&x, i, &v) :
			  run_value(&x, set->n, m->run, &v);

		if (ok && isfinite(v)) {
			m->v[side][m->n[side]++] = v;
		} else {
			m->missing[side]++;
			why_missing(m, &x, i);
		}
	}
	gate_report__fini(&x.rep);
out:
	free(x.chk);
	free(x.th);
	free(x.avail_ok);
	return err;
}

/* ---- text output ---- */

static void print_side(const struct cmp_metric *m, int side, FILE *f)
{
	const struct stats_desc *d = &m->res.d[side];
	char mean[32], sd[32], med[32];

	if (!d->n) {
		fprintf(f, "  %-5s n=0\n", side ? "cand" : "base");
		return;
	}
	cmp_fmt(mean, sizeof(mean), m, d->mean);
	cmp_fmt(sd, sizeof(sd), m, d->sd);
	cmp_fmt(med, sizeof(med), m, d->median);
	fprintf(f, "  %-5s n=%-3zu %s +/- %s, median %s", side ? "cand" : "base", d->n, mean, sd,
		med);
	if (m->missing[side])
		fprintf(f, " (%zu runs without a value: %s)", m->missing[side], m->why_missing);
	fprintf(f, "\n");
}

static void print_text(const struct cmp_set *s, FILE *f)
{
	int count[4] = {};
	char label[800];

	if (s->paired)
		fprintf(f, "compare: %zu pairs (base, candidate); Wilcoxon signed-rank test, Holm over "
			"%zu metrics, paired Hodges-Lehmann 95%% interval, noise %g%% unless the "
			"spec says otherwise\n", s->runs[0], s->n, s->noise_pct);
	else
		fprintf(f, "compare: %zu base runs, %zu candidate runs; U test, Holm over %zu "
			"metrics, Hodges-Lehmann 95%% interval, noise %g%% unless the spec says "
			"otherwise\n", s->runs[0], s->runs[1], s->n, s->noise_pct);
	fprintf(f, "scale: ratio = change of cand/base from ln values (metrics > 0 by nature; "
		"never below -100%%), difference = cand - base over the base median\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct cmp_metric *m = &s->m[i];
		const struct cmp_result *r = &m->res;

		count[r->verdict]++;
		fprintf(f, "%-40s %-12s", textsafe_str(label, sizeof(label), m->label),
			cmp_verdict_name(r->verdict));
		if (r->tested)
			fprintf(f, " %+.1f%s [%+.1f, %+.1f] %s p=%.3g p(Holm)=%.3g%s", r->change,
				r->relative ? "%" : "", r->lo, r->hi, cmp_scale_name(r->scale),
				r->u.p, r->p_holm, r->u.exact ? " exact" : "");
		if (r->tested && r->scale == CS_RATIO)
			fprintf(f, " ratio %.3g [%.3g, %.3g]", exp(r->hl.est), exp(r->hl.lo),
				exp(r->hl.hi));
		if (r->runs_needed && r->verdict == CV_INCONCLUSIVE)
			fprintf(f, r->paired ? " pairs needed ~%lu" : " runs needed ~%lu a side",
				r->runs_needed);
		fprintf(f, "\n");
		print_side(m, 0, f);
		print_side(m, 1, f);
		if (r->reason[0])
			fprintf(f, "  %s\n", r->reason);
		if (r->nonpos)
			fprintf(f, "  difference scale: %zu value%s of 0 (no ln)%s\n", r->nonpos,
				r->nonpos > 1 ? "s" : "",
				r->truncated ? "; interval cut at -100%" : "");
	}
	fprintf(f, "%d regressed, %d improved, %d unchanged, %d inconclusive\n",
		count[CV_REGRESSED], count[CV_IMPROVED], count[CV_UNCHANGED],
		count[CV_INCONCLUSIVE]);
}

/* Results compare cannot print: one line, -ERANGE. */
static int check_finite(const struct cmp_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *what = cmp_nonfinite(&s->m[i]);

		if (what) {
			dmt_err("%s: the %s is not finite (values too far apart in magnitude)",
				s->m[i].label, what);
			return -ERANGE;
		}
	}
	return 0;
}

/* A metric with values on both sides (--paired: a value in every run). */
static bool compared(const struct cmp_set *s, const struct cmp_metric *m)
{
	if (s->paired && (m->missing[0] || m->missing[1]))
		return false;
	return m->n[0] && m->n[1];
}

/* Nothing compared is an error, not a pass: one line, -ENODATA. */
static int check_compared(const struct cmp_set *s)
{
	const struct cmp_metric *first = NULL;

	for (size_t i = 0; i < s->n; i++) {
		if (compared(s, &s->m[i]))
			return 0;
		if (!first)
			first = &s->m[i];
	}
	if (first)
		dmt_err("nothing compared: no metric has values in both the base and the "
			"candidate runs (%s: %s)", first->label, first->why_missing[0] ?
			first->why_missing : first->res.reason);
	else
		dmt_err("nothing compared: no metric");
	return -ENODATA;
}

static int exit_code(const struct cmp_set *s, bool strict)
{
	int rc = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (s->m[i].res.verdict == CV_REGRESSED)
			rc = 1;
		if (strict && s->m[i].res.verdict == CV_INCONCLUSIVE)
			rc = 1;
	}
	return rc;
}

/*
 * Defaults no run has are left out, with one line saying so; all of them
 * stay (each says why it has no values) when none has any.
 */
static void drop_empty_defaults(struct cmp_set *s)
{
	size_t k = 0;
	bool any = false;

	for (size_t i = 0; i < s->n; i++)
		any |= !s->m[i].implicit || s->m[i].n[0] || s->m[i].n[1];
	if (!any)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct cmp_metric *m = &s->m[i];

		if (m->implicit && !m->n[0] && !m->n[1]) {
			fprintf(stderr, "devmemtop compare: %s left out: %s\n", m->label,
				m->why_missing);
			free(m->v[0]);
			free(m->v[1]);
			continue;
		}
		s->m[k++] = *m;
	}
	s->n = k;
}

/* cmp__run() failed: which metric, and why, in one line (ENOMEM: the caller's). */
static void analyse_error(const struct cmp_set *s, const struct cmp_input *in, int err)
{
	struct cmp_result r;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (cmp__run(&in[i], &r, 1, CMP_ALPHA))
			break;
	if (i == s->n || err == -ENOMEM)
		return;
	if (err == -E2BIG)
		dmt_err("%s: %zu base and %zu candidate values: the interval takes every "
			"difference of the two, at most %u", s->m[i].label, in[i].na, in[i].nb,
			STATS_SHIFT_MAX);
	else if (err == -EINVAL && in[i].paired)
		dmt_err("%s: a pair's ratio or difference is not finite (values too far apart "
			"in magnitude)", s->m[i].label);
	else if (err == -EINVAL)
		dmt_err("%s: a statistic is not finite (values too far apart in magnitude)",
			s->m[i].label);
	else
		dmt_err("%s: %s", s->m[i].label, strerror(-err));
}

static int analyse(struct cmp_set *s)
{
	struct cmp_input *in = calloc(s->n ? s->n : 1, sizeof(*in));
	struct cmp_result *res = calloc(s->n ? s->n : 1, sizeof(*res));
	int err = -ENOMEM;

	if (!in || !res)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const struct cmp_metric *m = &s->m[i];

		in[i] = (struct cmp_input){ m->v[0], m->n[0], m->v[1], m->n[1], m->noise_pct,
					    m->better, s->paired, m->positive };
		/* a run without the value leaves its pair without a partner */
		if (s->paired && (m->missing[0] || m->missing[1]))
			in[i].na = in[i].nb = 0;
	}
	err = cmp__run(in, res, s->n, CMP_ALPHA);
	if (err)
		analyse_error(s, in, err);
	for (size_t i = 0; i < s->n && !err; i++) {
		const struct cmp_metric *m = &s->m[i];

		s->m[i].res = res[i];
		if (s->paired && (m->missing[0] || m->missing[1]) && (m->n[0] || m->n[1])) {
			/* the runs' values are still described */
			stats__describe(m->v[0], m->n[0], &s->m[i].res.d[0]);
			stats__describe(m->v[1], m->n[1], &s->m[i].res.d[1]);
			snprintf(s->m[i].res.reason, sizeof(s->m[i].res.reason),
				 "--paired: %zu base and %zu candidate runs without a value: %.80s",
				 m->missing[0], m->missing[1], m->why_missing);
			continue;
		}
		if (!res[i].tested && !res[i].d[0].n && !res[i].d[1].n)
			snprintf(s->m[i].res.reason, sizeof(s->m[i].res.reason), "no values: %s",
				 s->m[i].why_missing);
	}
out:
	free(in);
	free(res);
	return err;
}

static int write_outputs(const struct cmp_set *s, const struct cmp_args *a)
{
	int err = 0;

	if (a->json && (err = cmp_out__json(s, a->json)))
		dmt_err("cannot write %s: %s", a->json, strerror(-err));
	if (!err && a->junit && (err = cmp_out__junit(s, a->junit, a->strict)))
		dmt_err("cannot write %s: %s", a->junit,
			strerror(-err));
	if (!err && a->html && (err = cmp_out__html(s, a->html)))
		dmt_err("cannot write %s: %s", a->html, strerror(-err));
	return err;
}

#define CMP_MAX_VALUES	100000

/*
 * The next whitespace-separated token of f into tok: 1, 0 at the end, or
 * -E2BIG when it does not fit in len - 1 characters (never two tokens).
 */
static int next_token(FILE *f, char *tok, size_t len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && isspace(c))
		;
	for (; c != EOF && !isspace(c); c = getc(f)) {
		if (n + 1 == len) {
			tok[n] = '\0';
			return -E2BIG;
		}
		tok[n++] = c;
	}
	tok[n] = '\0';
	return n > 0;
}

/* --values: every number in the side's files is one run. */
static int read_values(struct cmp_metric *m, int side, const char *path)
{
	FILE *f = fopen(path, "r");
	char tok[128], esc[512];
	int err = 0, got;

	if (!f) {
		int e = errno;

		dmt_err("cannot open %s: %s", path, strerror(e));
		return -e;
	}
	while (!err && (got = next_token(f, tok, sizeof(tok))) != 0) {
		char *end;
		double v = strtod(tok, &end);
		double *nv;

		if (got < 0) {
			tok[20] = '\0';
			dmt_err("%s: a number longer than %zu characters ('%s...')", path,
				sizeof(tok) - 1, textsafe_str(esc, sizeof(esc), tok));
			err = -E2BIG;
		} else if (*end || end == tok || !isfinite(v)) {
			dmt_err("%s: '%s' is not a number", path, textsafe_str(esc, sizeof(esc), tok));
			err = -EINVAL;
		} else if (m->n[side] == CMP_MAX_VALUES) {
			dmt_err("more than %d values a side",
				CMP_MAX_VALUES);
			err = -E2BIG;
		} else if (!(nv = realloc(m->v[side], (m->n[side] + 1) * sizeof(double)))) {
			err = -ENOMEM;
		} else {
			m->v[side] = nv;
			m->v[side][m->n[side]++] = v;
		}
	}
	fclose(f);
	return err;
}

static int gather_values(struct cmp_set *set, const struct cmp_args *a)
{
	struct cmp_metric *m;

	set->m = calloc(1, sizeof(*set->m));
	if (!set->m)
		return -ENOMEM;
	set->n = 1;
	set->noise_pct = a->noise_pct;
	m = &set->m[0];
	m->run = CR_NONE;
	m->gm = -1;
	m->summary = false;
	m->noise_pct = a->noise_pct;
	m->better = a->better && !strcmp(a->better, "higher") ? MB_HIGHER : MB_LOWER;
	m->positive = !a->scale || !strcmp(a->scale, "ratio");
	snprintf(m->name, sizeof(m->name), "values");
	snprintf(m->agg, sizeof(m->agg), "value");
	snprintf(m->label, sizeof(m->label), "values");
	snprintf(m->why_missing, sizeof(m->why_missing), "no numbers in the files");
	for (int side = 0; side < 2; side++) {
		set->runs[side] = 0;
		for (size_t f = 0; f < a->n_files[side]; f++) {
			int err = read_values(m, side, a->files[side][f]);

			if (err)
				return err;
		}
		set->runs[side] = m->n[side];
		for (size_t i = 0; m->positive && i < m->n[side]; i++) {
			if (m->v[side][i] < 0) {
				dmt_err("--values: %g is negative: --scale difference for numbers "
					"that can be", m->v[side][i]);
				return -EINVAL;
			}
		}
	}
	if (set->paired && m->n[0] != m->n[1]) {
		dmt_err("--paired: %zu base and %zu candidate values (one of each a pair)",
			m->n[0], m->n[1]);
		return -EINVAL;
	}
	return 0;
}

static int gather(struct cmp_set *set, const struct cmp_args *a)
{
	for (size_t i = 0; i < set->n; i++) {
		for (int side = 0; side < 2; side++) {
			set->m[i].v[side] = calloc(a->n_files[side] + 1, sizeof(double));
			if (!set->m[i].v[side])
				return -ENOMEM;
		}
	}
	set->interface = a->interface;
	for (int side = 0; side < 2; side++) {
		set->runs[side] = a->n_files[side];
		for (size_t f = 0; f < a->n_files[side]; f++) {
			int err = one_run(set, side, a->files[side][f]);

			if (err)
				return err;
		}
	}
	drop_empty_defaults(set);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_args a = {};
	struct cmp_set set = {};
	int err, rc = 2;

	err = parse_args(argc, argv, &a);
	if (err)
		goto out;
	set.noise_pct = a.noise_pct;
	set.paired = a.paired;
	if (a.summary) {
		err = compare_summary(a.summary, &set);
	} else if (a.values) {
		err = gather_values(&set, &a);
		if (!err)
			err = analyse(&set);
	} else {
		err = build_metrics(&a, &set);
		if (!err)
			err = gather(&set, &a);
		if (!err)
			err = analyse(&set);
	}
	if (!err && !a.summary)
		err = check_finite(&set);
	if (err == -ENOMEM)
		dmt_err("out of memory");
	if (err)
		goto out;
	if (!a.summary) {
		print_text(&set, stdout);
		/* after the text: it says why each metric has no values */
		if (check_compared(&set))
			goto out;
	}
	if (write_outputs(&set, &a))
		goto out;
	rc = exit_code(&set, a.strict);
out:
	if (err == 1)
		rc = 0;
	for (size_t i = 0; i < set.n; i++) {
		free(set.m[i].v[0]);
		free(set.m[i].v[1]);
	}
	free(set.m);
	free(a.files[0]);
	free(a.files[1]);
	return rc;
}
