// SPDX-License-Identifier: GPL-2.0
/*
 * compare's other inputs: the spec (YAML: metrics with their noise
 * threshold and direction) and --summary rows (published mean, sd, n).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "compare_eval.h"
#include "metrics.h"
#include "textsafe.h"
#include "util.h"
#include "yamlfile.h"


static int parse_noise(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || (*end && strcmp(end, "%")) || !(v > 0 && v < 1000))
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *scalar_of(yaml_document_t *doc, yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

#define SPEC_ERR(n, ...) do {							\
	int _o = snprintf(msg, len, "%s:%zu:%zu: ", path, (n)->start_mark.line + 1,	\
			  (n)->start_mark.column + 1);				\
	snprintf(msg + _o, len - _o, __VA_ARGS__);				\
	return -EINVAL;								\
} while (0)

/* One entry of metrics: {metric, agg, noise, better}. */
static int spec_entry(yaml_document_t *doc, yaml_node_t *e, struct cmp_set *set,
		      const char *path, char *msg, size_t len)
{
	const char *metric = NULL, *agg = NULL, *better = NULL;
	double noise = set->noise_pct;
	char full[160], why[256];

	if (e->type != YAML_MAPPING_NODE)
		SPEC_ERR(e, "a metrics entry must be a mapping");
	for (yaml_node_pair_t *p = e->data.mapping.pairs.start; p < e->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *ks = scalar_of(doc, k), *vs = scalar_of(doc, v);

		if (!ks || !vs)
			SPEC_ERR(k, "keys and values of a metrics entry are scalars");
		if (!strcmp(ks, "metric"))
			metric = vs;
		else if (!strcmp(ks, "agg"))
			agg = vs;
		else if (!strcmp(ks, "better"))
			better = vs;
		else if (!strcmp(ks, "noise")) {
			if (parse_noise(vs, &noise))
				SPEC_ERR(v, "noise must be a percentage such as 3%%, not '%s'", vs);
		} else {
			SPEC_ERR(k, "unknown key '%s' (metric, agg, noise, better)", ks);
		}
	}
	if (!metric)
		SPEC_ERR(e, "a metrics entry needs 'metric'");
	snprintf(full, sizeof(full), "%s%s%s%s%s", metric, agg || better ? ":" : "",
		 agg ? agg : "", better ? ":" : "", better ? better : "");
	if (set->n == CMP_MAX_METRICS)
		SPEC_ERR(e, "more than %d metrics", CMP_MAX_METRICS);
	if (cmp_metric__init(&set->m[set->n], full, noise, why, sizeof(why)))
		SPEC_ERR(e, "%s", why);
	set->n++;
	return 0;
}

static int spec_root(yaml_document_t *doc, struct cmp_set *set, const char *path, char *msg,
		     size_t len)
{
	yaml_node_t *root = yaml_document_get_root_node(doc), *list = NULL;
	int err;

	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(msg, len, "%s: the spec must be a mapping with 'metrics'", path);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *ks = scalar_of(doc, k);

		if (!ks)
			SPEC_ERR(k, "keys must be scalars");
		if (!strcmp(ks, "metrics")) {
			list = v;
		} else if (!strcmp(ks, "noise")) {
			if (!scalar_of(doc, v) || parse_noise(scalar_of(doc, v), &set->noise_pct))
				SPEC_ERR(v, "noise must be a percentage such as 5%%");
		} else if (strcmp(ks, "name") && strcmp(ks, "version")) {
			SPEC_ERR(k, "unknown key '%s' (name, noise, metrics)", ks);
		}
	}
	if (!list || list->type != YAML_SEQUENCE_NODE)
		SPEC_ERR(root, "'metrics' must be a list");
	set->m = calloc(CMP_MAX_METRICS, sizeof(*set->m));
	if (!set->m)
		return -ENOMEM;
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		err = spec_entry(doc, yaml_document_get_node(doc, *it), set, path, msg, len);
		if (err)
			return err;
	}
	if (!set->n)
		SPEC_ERR(list, "'metrics' is empty");
	return 0;
}

/* The spec through yamlfile (its bounds: size, nesting, one document, no key twice). */
int compare_spec__load(const char *path, struct cmp_set *set, char *msg, size_t len)
{
	struct yamlfile_err ye;
	yaml_document_t doc;
	char *buf = NULL;
	size_t n = 0;
	int err;

	err = yamlfile__read(path, false, &buf, &n);
	if (err) {
		snprintf(msg, len, "cannot read %s: %s", path,
			 err == -EFBIG ? "larger than 1 MiB" : strerror(-err));
		return err;
	}
	err = yamlfile__parse(buf, n, &doc, &ye);
	free(buf);
	if (err == -ENOMEM)
		return err;
	if (err) {
		snprintf(msg, len, "%s:%zu:%zu: %s%s", path, ye.line, ye.col,
			 ye.why == YF_SYNTAX ? "YAML error: " : "", ye.text);
		return err;
	}
	err = spec_root(&doc, set, path, msg, len);
	yaml_document_delete(&doc);
	return err;
}

/* ---- --summary ---- */

#define SUMMARY_MAX_N		1000000000UL	/* runs a side */
#define SUMMARY_MAX_LINE	4096		/* characters a line, newline included */

/* A number of the row: the whole token, finite. */
static int summary_num(const char *tok, const char *what, double *out, char *msg, size_t len)
{
	char *end;

	*out = strtod(tok, &end);
	if (end == tok || *end || !isfinite(*out)) {
		snprintf(msg, len, "%s must be a finite number, not '%s'", what, tok);
		return -EINVAL;
	}
	return 0;
}

/* NAME BETTER MEAN SD N MEAN SD N [NOISE%] [# comment]; line is cut into tokens. */
static int summary_row(char *line, struct cmp_metric *m, double noise, char *msg, size_t len)
{
	static const char *const what[] = { "NAME", "BETTER", "the base mean", "the base sd",
		"the base n", "the candidate mean", "the candidate sd", "the candidate n", "NOISE" };
	char *tok[9], *save = NULL, *t;
	uint64_t n[2];
	int k = 0;

	memset(m, 0, sizeof(*m));
	for (t = strtok_r(line, " \t\r\n", &save); t && *t != '#';
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		if (k == 9) {
			snprintf(msg, len, "more than 9 columns (NAME lower|higher MEAN SD N MEAN SD "
				 "N [NOISE%%])");
			return -EINVAL;
		}
		tok[k++] = t;
	}
	if (k < 8) {
		snprintf(msg, len, "expected NAME lower|higher MEAN SD N MEAN SD N [NOISE%%]");
		return -EINVAL;
	}
	if (strlen(tok[0]) >= 128) {
		snprintf(msg, len, "NAME longer than 127 characters");
		return -EINVAL;
	}
	if (strcmp(tok[1], "lower") && strcmp(tok[1], "higher")) {
		snprintf(msg, len, "second column must be lower or higher, not '%.32s'", tok[1]);
		return -EINVAL;
	}
	for (int s = 0; s < 2; s++) {
		if (summary_num(tok[2 + 3 * s], what[2 + 3 * s], &m->mean[s], msg, len) ||
		    summary_num(tok[3 + 3 * s], what[3 + 3 * s], &m->sd[s], msg, len))
			return -EINVAL;
		if (parse_uint(tok[4 + 3 * s], SUMMARY_MAX_N, &n[s])) {
			snprintf(msg, len, "%s must be a whole number of runs up to %lu, not '%.32s'",
				 what[4 + 3 * s], SUMMARY_MAX_N, tok[4 + 3 * s]);
			return -EINVAL;
		}
	}
	m->noise_pct = noise;
	if (k == 9 && parse_noise(tok[8], &m->noise_pct)) {
		snprintf(msg, len, "noise must be a percentage such as 5%%, not '%.32s'", tok[8]);
		return -EINVAL;
	}
	m->summary = true;
	m->run = CR_NONE;
	m->gm = -1;
	m->better = !strcmp(tok[1], "lower") ? MB_LOWER : MB_HIGHER;
	m->sn[0] = n[0];
	m->sn[1] = n[1];
	snprintf(m->name, sizeof(m->name), "%s", tok[0]);
	snprintf(m->label, sizeof(m->label), "%s", tok[0]);
	snprintf(m->agg, sizeof(m->agg), "mean");
	if (stats__welch(m->mean[0], m->sd[0], n[0], m->mean[1], m->sd[1], n[1], 0.95, &m->welch)) {
		snprintf(msg, len, "Welch needs n >= 2 a side, sd >= 0 and not both 0");
		return -EINVAL;
	}
	return 0;
}

static void summary_decide(struct cmp_set *set)
{
	double p[CMP_MAX_METRICS];

	for (size_t i = 0; i < set->n; i++)
		p[i] = set->m[i].welch.p;
	stats__holm(p, set->n, p);
	for (size_t i = 0; i < set->n; i++) {
		struct cmp_metric *m = &set->m[i];
		struct cmp_result *r = &m->res;
		struct cmp_input in = { .noise_pct = m->noise_pct, .better = m->better };
		double base = fabs(m->mean[0]), pooled;

		memset(r, 0, sizeof(*r));
		m->welch_holm = p[i];
		r->tested = true;
		r->relative = base != 0;
		r->change = r->relative ? 100 * m->welch.diff / base : m->welch.diff;
		r->lo = r->relative ? 100 * m->welch.lo / base : m->welch.lo;
		r->hi = r->relative ? 100 * m->welch.hi / base : m->welch.hi;
		r->p_holm = p[i];
		r->verdict = CV_INCONCLUSIVE;
		pooled = sqrt((m->sd[0] * m->sd[0] + m->sd[1] * m->sd[1]) / 2);
		if (base)
			r->runs_needed = stats__runs_needed(pooled / base, m->noise_pct / 100,
							    0.05, 0.8);
		for (int s = 0; s < 2; s++)
			r->d[s] = (struct stats_desc){ .n = m->sn[s], .mean = m->mean[s],
						       .sd = m->sd[s], .median = NAN };
		cmp__decide(&in, r, 0.05);
	}
}

static void summary_print(const struct cmp_set *set, const char *path)
{
	printf("compare --summary %s: Welch's t-test on mean/sd/n (assumes independent runs and "
	       "roughly normal means; variances may differ), Holm over %zu rows, 95%% intervals\n",
	       path, set->n);
	printf("%-22s %-6s %22s %22s %9s %28s %7s %8s %8s  %s\n", "ROW", "BETTER",
	       "BASE mean +/- sd (n)", "CAND mean +/- sd (n)", "CHANGE", "95% CI of the change",
	       "t(df)", "p", "p(Holm)", "VERDICT");
	for (size_t i = 0; i < set->n; i++) {
		const struct cmp_metric *m = &set->m[i];
		const struct cmp_result *r = &m->res;
		char b[40], c[40], ci[64], t[24], label[800];

		snprintf(b, sizeof(b), "%.4g +/- %.4g (%zu)", m->mean[0], m->sd[0], m->sn[0]);
		snprintf(c, sizeof(c), "%.4g +/- %.4g (%zu)", m->mean[1], m->sd[1], m->sn[1]);
		snprintf(ci, sizeof(ci), "[%+.4g, %+.4g] = [%+.1f%%, %+.1f%%]", m->welch.lo,
			 m->welch.hi, r->lo, r->hi);
		snprintf(t, sizeof(t), "%.2f(%.1f)", m->welch.t, m->welch.df);
		printf("%-22s %-6s %22s %22s %+8.1f%% %28s %7s %8.2g %8.2g  %s",
		       textsafe_str(label, sizeof(label), m->label),
		       m->better == MB_LOWER ? "lower" : "higher", b, c, r->change, ci, t,
		       m->welch.p, r->p_holm, cmp_verdict_name(r->verdict));
		if (r->verdict == CV_INCONCLUSIVE)
			printf(" (%s)", r->reason);
		printf("\n");
	}
}

/* Nothing left to read (a last line without a newline is whole). */
static bool at_eof(FILE *f)
{
	int c = getc(f);

	if (c == EOF)
		return true;
	ungetc(c, f);
	return false;
}

int compare_summary(const char *path, struct cmp_set *set)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[SUMMARY_MAX_LINE], msg[256];
	unsigned int lineno = 0;
	int err = 0;

	if (!f) {
		int e = errno;

		dmt_err("cannot open %s: %s", path, strerror(e));
		return -e;
	}
	set->summary = true;
	set->noise_pct = set->noise_pct ? set->noise_pct : 5;
	set->m = calloc(CMP_MAX_METRICS, sizeof(*set->m));
	if (!set->m)
		err = -ENOMEM;
	while (!err && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t\r");
		bool whole = strchr(line, '\n') || at_eof(f);

		lineno++;
		if (!whole && *s == '#') {	/* the rest of a long comment is comment too */
			int c;

			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (!whole) {
			dmt_err("%s:%u: line longer than %d characters", path, lineno,
				SUMMARY_MAX_LINE - 2);
			err = -E2BIG;
			break;
		}
		if (!*s || *s == '#' || *s == '\n')
			continue;
		if (set->n == CMP_MAX_METRICS) {
			dmt_err("%s:%u: more than %d rows", path, lineno, CMP_MAX_METRICS);
			err = -E2BIG;
		} else if (summary_row(s, &set->m[set->n], set->noise_pct, msg, sizeof(msg))) {
			dmt_err("%s:%u: %s", path, lineno, textsafe_line(msg, sizeof(msg)));
			err = -EINVAL;
		} else {
			set->n++;
		}
	}
	if (!err && !set->n) {
		dmt_err("%s: no rows", path);
		err = -EINVAL;
	}
	if (f != stdin)
		fclose(f);
	if (err)
		return err;
	summary_decide(set);
	for (size_t i = 0; i < set->n; i++) {
		const char *what = cmp_nonfinite(&set->m[i]);

		if (what) {
			char label[800];

			dmt_err("%s: row %s: the %s is not finite (values too far apart in "
				"magnitude)", path, textsafe_str(label, sizeof(label), set->m[i].label),
				what);
			return -ERANGE;
		}
	}
	summary_print(set, path);
	return 0;
}
