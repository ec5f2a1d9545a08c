// SPDX-License-Identifier: GPL-2.0
/* compare's files: JSON (with every run's value), JUnit and an HTML page. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "compare_eval.h"
#include "html_report.h"
#include "metrics.h"
#include "textsafe.h"

static json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *side_json(const struct cmp_metric *m, int s)
{
	const struct stats_desc *d = &m->res.d[s];
	json_object *o = json_object_new_object(), *vals;

	if (!m->summary) {
		vals = json_object_new_array();
		for (size_t i = 0; i < m->n[s]; i++)
			json_object_array_add(vals, json_object_new_double(m->v[s][i]));
		json_object_object_add(o, "values", vals);
		json_object_object_add(o, "missing", json_object_new_int64(m->missing[s]));
	}
	json_object_object_add(o, "n", json_object_new_int64(d->n));
	json_object_object_add(o, "mean", d->n ? num(d->mean) : NULL);
	json_object_object_add(o, "sd", d->n ? num(d->sd) : NULL);
	json_object_object_add(o, "median", d->n ? num(d->median) : NULL);
	return o;
}

static json_object *metric_json(const struct cmp_metric *m)
{
	const struct cmp_result *r = &m->res;
	json_object *o = json_object_new_object(), *ci = NULL;
	char buf[512];	/* file text: valid UTF-8 (textsafe.h) */

	json_object_object_add(o, "metric",
			       json_object_new_string(textsafe_utf8(buf, sizeof(buf), m->name)));
	json_object_object_add(o, "agg", json_object_new_string(m->agg));
	json_object_object_add(o, "better",
			       json_object_new_string(m->better == MB_LOWER ? "lower" : "higher"));
	json_object_object_add(o, "noise_pct", json_object_new_double(m->noise_pct));
	json_object_object_add(o, "base", side_json(m, 0));
	json_object_object_add(o, "cand", side_json(m, 1));
	if (r->tested) {
		ci = json_object_new_array();
		json_object_array_add(ci, num(r->lo));
		json_object_array_add(ci, num(r->hi));
	}
	json_object_object_add(o, "p", r->tested ? num(m->summary ? m->welch.p : r->u.p) : NULL);
	json_object_object_add(o, "p_holm", r->tested ? num(r->p_holm) : NULL);
	json_object_object_add(o, "test", json_object_new_string(
		m->summary ? "welch" : !r->tested ? "none" :
		r->paired ? (r->u.exact ? "wilcoxon signed-rank exact" :
			     "wilcoxon signed-rank normal") :
		r->u.exact ? "mann-whitney exact" : "mann-whitney normal"));
	json_object_object_add(o, "ci", ci);
	json_object_object_add(o, "change", r->tested ? num(r->change) : NULL);
	json_object_object_add(o, "change_unit",
			       json_object_new_string(r->relative || !r->tested ? "%" : "abs"));
	json_object_object_add(o, "change_scale", json_object_new_string(cmp_scale_name(r->scale)));
	if (r->tested && r->scale == CS_RATIO) {
		json_object_object_add(o, "ratio", num(exp(r->hl.est)));
		ci = json_object_new_array();
		json_object_array_add(ci, num(exp(r->hl.lo)));
		json_object_array_add(ci, num(exp(r->hl.hi)));
		json_object_object_add(o, "ratio_ci", ci);
	}
	if (r->nonpos)
		json_object_object_add(o, "scale_reason", json_object_new_string(
			"positive metric with values of 0 (no ln): difference scale, "
			"cut at -100%"));
	json_object_object_add(o, "ci_truncated", json_object_new_boolean(r->truncated));
	if (!m->summary && r->tested) {
		if (r->paired) {
			json_object_object_add(o, "w_plus", num(r->sr.w_plus));
			json_object_object_add(o, "pairs_nonzero", num((double)r->sr.n));
			json_object_object_add(o, "shift_of", json_object_new_string(
				r->scale == CS_RATIO ? "ln(cand/base)" : "cand-base"));
		} else {
			json_object_object_add(o, "u", num(r->u.u_base));
		}
		json_object_object_add(o, "shift", num(r->hl.est));
		ci = json_object_new_array();
		json_object_array_add(ci, num(r->hl.lo));
		json_object_array_add(ci, num(r->hl.hi));
		json_object_object_add(o, "shift_ci", ci);
		json_object_object_add(o, "shift_ci_level", num(r->hl.level));
		json_object_object_add(o, "z", num(r->u.z));
	}
	if (m->summary) {
		json_object_object_add(o, "t", num(m->welch.t));
		json_object_object_add(o, "df", num(m->welch.df));
		json_object_object_add(o, "diff", num(m->welch.diff));
		ci = json_object_new_array();
		json_object_array_add(ci, num(m->welch.lo));
		json_object_array_add(ci, num(m->welch.hi));
		json_object_object_add(o, "diff_ci", ci);
	}
	json_object_object_add(o, "verdict", json_object_new_string(cmp_metric_verdict(m)));
	json_object_object_add(o, "reason",
			       json_object_new_string(textsafe_utf8(buf, sizeof(buf), r->reason)));
	json_object_object_add(o, "runs_needed",
			       r->runs_needed ? json_object_new_int64(r->runs_needed) : NULL);
	return o;
}

int cmp_out__json(const struct cmp_set *s, const char *path)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	int err = 0;

	json_object_object_add(root, "devmemtop_compare", json_object_new_int(1));
	json_object_object_add(root, "mode", json_object_new_string(s->summary ? "summary" :
								   s->paired ? "paired" : "runs"));
	json_object_object_add(root, "alpha", json_object_new_double(0.05));
	json_object_object_add(root, "runs_base", json_object_new_int64(s->runs[0]));
	json_object_object_add(root, "runs_cand", json_object_new_int64(s->runs[1]));
	for (size_t i = 0; i < s->n; i++)
		json_object_array_add(arr, metric_json(&s->m[i]));
	json_object_object_add(root, "metrics", arr);
	if (json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY |
				    JSON_C_TO_STRING_NOSLASHESCAPE))
		err = errno ? -errno : -EIO;
	json_object_put(root);
	return err;
}

int cmp_out__junit(const struct cmp_set *s, const char *path, bool strict)
{
	FILE *f = fopen(path, "w");
	size_t fail = 0, skip = 0;
	int err = 0;

	if (!f)
		return -errno;
	for (size_t i = 0; i < s->n; i++) {
		enum cmp_verdict v = s->m[i].res.verdict;

		fail += v == CV_REGRESSED || (strict && v == CV_INCONCLUSIVE);
		skip += !strict && v == CV_INCONCLUSIVE;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		"<testsuite name=\"devmemtop compare\" tests=\"%zu\" failures=\"%zu\" "
		"skipped=\"%zu\" errors=\"0\">\n", s->n, fail, skip);
	for (size_t i = 0; i < s->n; i++) {
		const struct cmp_metric *m = &s->m[i];
		const struct cmp_result *r = &m->res;
		char msg[512];

		snprintf(msg, sizeof(msg), "%s: change %+.2f%s [%+.2f, %+.2f] (%s scale), "
			 "p(Holm) %.3g; %s", cmp_metric_verdict(m), r->change,
			 r->relative ? "%" : "", r->lo, r->hi, cmp_scale_name(r->scale),
			 r->p_holm, r->reason);
		fprintf(f, "<testcase classname=\"compare\" name=\"");
		textsafe_xml(f, m->label);
		fprintf(f, "\">");
		if (r->verdict == CV_REGRESSED || (strict && r->verdict == CV_INCONCLUSIVE)) {
			fprintf(f, "<failure message=\"");
			textsafe_xml(f, msg);
			fprintf(f, "\"/>");
		} else if (r->verdict == CV_INCONCLUSIVE) {
			fprintf(f, "<skipped message=\"");
			textsafe_xml(f, msg);
			fprintf(f, "\"/>");
		} else {
			fprintf(f, "<system-out>");
			textsafe_xml(f, msg);
			fprintf(f, "</system-out>");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static const char extra_css[] =
	"td.verdict{font-weight:bold;white-space:nowrap}\n"
	"tr.regressed td.verdict{background:#ffebe9;color:#cf222e}\n"
	"tr.improved td.verdict{background:#dafbe1;color:#1a7f37}\n"
	"tr.unchanged td.verdict{color:#57606a}\n"
	"tr.inconclusive td.verdict{background:#fff8c5;color:#9a6700}\n"
	"svg .band{fill:#eaeef2}svg .zero{stroke:#8c959f;stroke-width:1}\n"
	"svg .ci{stroke:#0969da;stroke-width:3}svg .est{fill:#0969da}\n";

#define DOT_W	260
#define CI_W	220

/* Per-run values as dots on one axis: base above (grey), cand below (blue). */
static void dots_svg(FILE *f, const struct cmp_metric *m)
{
	double lo = INFINITY, hi = -INFINITY;
	char a[32], b[32];

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < m->n[s]; i++) {
			lo = fmin(lo, m->v[s][i]);
			hi = fmax(hi, m->v[s][i]);
		}
	if (!isfinite(lo)) {
		fprintf(f, "no values");
		return;
	}
	if (hi == lo) {
		lo -= fabs(lo) * 0.05 + 1e-9;
		hi += fabs(hi) * 0.05 + 1e-9;
	}
	fprintf(f, "<svg width=\"%d\" height=\"48\" viewBox=\"0 0 %d 48\" role=\"img\">",
		DOT_W, DOT_W);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < m->n[s]; i++)
			fprintf(f, "<circle class=\"dot %s\" cx=\"%.1f\" cy=\"%d\" r=\"3.5\" "
				"fill-opacity=\"0.6\"/>", s ? "cand" : "base",
				10 + (m->v[s][i] - lo) / (hi - lo) * (DOT_W - 20), s ? 26 : 10);
	cmp_fmt(a, sizeof(a), m, lo);
	cmp_fmt(b, sizeof(b), m, hi);
	fprintf(f, "<text class=\"xlab\" x=\"10\" y=\"44\" style=\"text-anchor:start\">");
	html_esc(f, a);
	fprintf(f, "</text><text class=\"xlab\" x=\"%d\" y=\"44\" style=\"text-anchor:end\">",
		DOT_W - 10);
	html_esc(f, b);
	fprintf(f, "</text></svg>");
}

/* A change in percent where the axis puts it: ln of the ratio on the ratio scale. */
static double axis_pos(const struct cmp_result *r, double pct)
{
	return r->scale == CS_RATIO ? log1p(fmax(pct, -99.9999) / 100) : pct;
}

/*
 * The interval of the change with the noise band around 0; on the ratio
 * scale the axis is logarithmic (x0.5 and x2 equally far from 0).
 */
static void ci_svg(FILE *f, const struct cmp_metric *m)
{
	const struct cmp_result *r = &m->res;
	double span, down, noise;

	if (!r->tested) {
		fprintf(f, "-");
		return;
	}
	cmp__noise_band(r, m->noise_pct, &down, &noise);
	span = fmax(fmax(fabs(axis_pos(r, r->lo)), fabs(axis_pos(r, r->hi))),
		    2 * fabs(axis_pos(r, noise))) * 1.1 + 1e-9;
#define X(v) (CI_W / 2.0 + axis_pos(r, v) / span * (CI_W / 2.0 - 6))
	fprintf(f, "<svg width=\"%d\" height=\"40\" viewBox=\"0 0 %d 40\" role=\"img\">", CI_W,
		CI_W);
	fprintf(f, "<rect class=\"band\" x=\"%.1f\" y=\"4\" width=\"%.1f\" height=\"20\"/>",
		X(down), X(noise) - X(down));
	fprintf(f, "<line class=\"zero\" x1=\"%.1f\" x2=\"%.1f\" y1=\"2\" y2=\"26\"/>", X(0),
		X(0));
	fprintf(f, "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"14\" y2=\"14\"/>", X(r->lo),
		X(r->hi));
	fprintf(f, "<circle class=\"est\" cx=\"%.1f\" cy=\"14\" r=\"4\"/>", X(r->change));
	fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"37\">%+.1f%s [%+.1f, %+.1f] %s</text>"
		"</svg>", CI_W / 2.0, r->change, r->relative ? "%" : "", r->lo, r->hi,
		r->scale == CS_RATIO ? "ratio, log axis" : "difference");
#undef X
}

int cmp_out__html(const struct cmp_set *s, const char *path)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	html_page__begin(f, "devmemtop compare", extra_css);
	fprintf(f, "<h1>devmemtop compare</h1>\n<p class=\"sub\">%zu base runs (grey) vs %zu "
		"candidate runs (blue). Mann-Whitney U per metric, Holm over %zu metrics; the "
		"bar is the Hodges-Lehmann 95%% interval of the change of the median, the grey "
		"band the noise threshold. Positive metrics (latency, CPU, sizes, rates): the "
		"change of the ratio, on a log axis; others: the difference over the base "
		"median.</p>\n", s->runs[0], s->runs[1], s->n);
	fprintf(f, "<table id=\"compare\">\n<tr><th>metric</th><th>verdict</th><th>runs</th>"
		"<th>change, 95%% interval</th><th>p (Holm)</th><th>note</th></tr>\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct cmp_metric *m = &s->m[i];
		const struct cmp_result *r = &m->res;

		fprintf(f, "<tr class=\"%s\"><td>", cmp_metric_verdict(m));
		html_esc(f, m->label);
		fprintf(f, "<br/>%s is better, noise %g%%</td><td class=\"verdict\">%s</td><td>",
			m->better == MB_LOWER ? "lower" : "higher", m->noise_pct,
			cmp_metric_verdict(m));
		dots_svg(f, m);
		fprintf(f, "</td><td>");
		ci_svg(f, m);
		if (r->tested)
			fprintf(f, "</td><td>%.3g (%.3g)</td><td>", r->u.p, r->p_holm);
		else
			fprintf(f, "</td><td>-</td><td>");
		html_esc(f, r->reason);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	html_page__end(f);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
