// SPDX-License-Identifier: GPL-2.0
/*
 * Gate outputs (gate_eval.h): the text table, JUnit XML, the JSON result,
 * the comparison with a baseline JSON result, and the error files written
 * before any threshold could be evaluated. gate_eval.c evaluates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "gate_eval.h"
#include "outstream.h"
#include "textsafe.h"
#include "util.h"

#define GATE_BASELINE_MAX_BYTES	(16 << 20)

static void fmt_observed(char *buf, size_t len, const struct gate_result *r)
{
	char v[48];

	if (r->status == GATE_SKIP || (r->status == GATE_ERROR && !r->has_data)) {
		snprintf(buf, len, "-");
		return;
	}
	if (!r->has_data) {
		snprintf(buf, len, "no data");
		return;
	}
	gate_fmt_value(v, sizeof(v), r->observed, r->th->unit);
	snprintf(buf, len, "%s%s", r->bound == GATE_UPPER ? "<=" :
				   r->bound == GATE_LOWER ? ">=" : "", v);
}

void gate_report__print(const struct gate_report *rep, FILE *f)
{
	/* spec, recording and kernel text: escaped (textsafe.h) */
	char a[2048], b[2048], c[1024], d[1024];

	fprintf(f, "gate %s: %s, %.1fs, %llu snapshots\n",
		textsafe_str(a, sizeof(a), rep->spec->name),
		textsafe_str(b, sizeof(b), rep->source[0] ? rep->source : "live"), rep->duration_s,
		(unsigned long long)rep->n_snapshots);
	fprintf(f, "%-30s %-28s %-16s %-14s %s\n", "METRIC", "SELECTOR", "THRESHOLD",
		"OBSERVED", "RESULT");
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct gate_result *r = &rep->results[i];
		char obs[64];

		fmt_observed(obs, sizeof(obs), r);
		fprintf(f, "%-30s %-28s %-16s %-14s %s%s%s\n", gm_def(r->chk->metric)->name,
			textsafe_str(a, sizeof(a), r->chk->sel_str),
			textsafe_str(b, sizeof(b), r->th->expr), obs, gate_status_name(r->status),
			r->note[0] ? "  " : "", textsafe_str(c, sizeof(c), r->note));
	}
	if (rep->ringbuf_drops)
		fprintf(f, "warning: %llu events lost (ring buffer full) during the run\n",
			(unsigned long long)rep->ringbuf_drops);
	if (rep->error[0])
		fprintf(f, "error: %s\n", textsafe_str(d, sizeof(d), rep->error));
	fprintf(f, "%d passed, %d failed, %d errors, %d skipped: %s\n", rep->n_pass, rep->n_fail,
		rep->n_error, rep->n_skip,
		gate_report__exit_code(rep) == 0 ? "PASS" :
		gate_report__exit_code(rep) == 1 ? "FAIL" : "ERROR");
}

int gate_report__write_junit(const struct gate_report *rep, const char *path)
{
	int err = out_check_path(path);
	FILE *f = err ? NULL : fopen(path, "w");

	if (!f)
		return err ?: -errno;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
		rep->n_results, rep->n_fail, rep->n_error + (rep->error[0] ? 1 : 0), rep->n_skip);
	fprintf(f, "  <testsuite name=\"");
	textsafe_xml(f, rep->spec->name);
	fprintf(f, "\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
		rep->n_results, rep->n_fail, rep->n_error + (rep->error[0] ? 1 : 0), rep->n_skip,
		rep->duration_s);
	fprintf(f, "    <properties>\n");
	fprintf(f, "      <property name=\"source\" value=\"");
	textsafe_xml(f, rep->source);
	fprintf(f, "\"/>\n      <property name=\"kernel\" value=\"");
	textsafe_xml(f, rep->kernel);
	fprintf(f, "\"/>\n      <property name=\"mode\" value=\"");
	textsafe_xml(f, rep->mode);
	fprintf(f, "\"/>\n      <property name=\"snapshots\" value=\"%llu\"/>\n",
		(unsigned long long)rep->n_snapshots);
	fprintf(f, "      <property name=\"ringbuf_drops\" value=\"%llu\"/>\n",
		(unsigned long long)rep->ringbuf_drops);
	fprintf(f, "    </properties>\n");
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct gate_result *r = &rep->results[i];
		char obs[64], msg[400];

		fmt_observed(obs, sizeof(obs), r);
		snprintf(msg, sizeof(msg), "observed %s, expected %s%s%s", obs, r->th->expr,
			 r->note[0] ? "; " : "", r->note);
		fprintf(f, "    <testcase classname=\"");
		textsafe_xml(f, gm_def(r->chk->metric)->name);
		fprintf(f, "\" name=\"");
		textsafe_xml(f, r->chk->sel_str);
		fprintf(f, ": ");
		textsafe_xml(f, r->th->expr);
		fprintf(f, "\" time=\"0\"");
		if (r->status == GATE_PASS) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n      <%s message=\"",
			r->status == GATE_FAIL ? "failure" :
			r->status == GATE_ERROR ? "error" : "skipped");
		textsafe_xml(f, msg);
		fprintf(f, "\"/>\n    </testcase>\n");
	}
	if (rep->error[0]) {
		fprintf(f, "    <testcase classname=\"devmemtop\" name=\"run\" time=\"0\">\n"
			   "      <error message=\"");
		textsafe_xml(f, rep->error);
		fprintf(f, "\"/>\n    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	err = out_close(f);	/* the real reason, e.g. ENOSPC */
	return err;
}

/* JSON must be valid UTF-8: a recording's or path's strings may not be (textsafe.h) */
static json_object *jstr(const char *s)
{
	char buf[1024];

	return json_object_new_string(textsafe_utf8(buf, sizeof(buf), s));
}

static const char *const bound_names[] = { "exact", "upper", "lower" };
static const char *const unit_names[] = { "", "ns", "%", "bytes" };

static char *result_key(const struct gate_result *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s|%s|%s", gm_def(r->chk->metric)->name, r->chk->sel_str,
		 r->th->expr);
	return buf;
}

int gate_report__write_json(const struct gate_report *rep, const char *path)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	int err = 0;

	if (!root || !arr) {
		json_object_put(root);
		json_object_put(arr);
		return -ENOMEM;
	}
	json_object_object_add(root, "devmemtop_gate", json_object_new_int(1));
	json_object_object_add(root, "spec", jstr(rep->spec->name));
	json_object_object_add(root, "spec_path", jstr(rep->spec->path));
	json_object_object_add(root, "source", jstr(rep->source));
	json_object_object_add(root, "kernel", jstr(rep->kernel));
	json_object_object_add(root, "mode", json_object_new_string(rep->mode));
	json_object_object_add(root, "duration_s", json_object_new_double(rep->duration_s));
	json_object_object_add(root, "snapshots", json_object_new_int64(rep->n_snapshots));
	json_object_object_add(root, "ringbuf_drops", json_object_new_int64(rep->ringbuf_drops));
	json_object_object_add(root, "result", json_object_new_string(
		gate_report__exit_code(rep) == 0 ? "pass" :
		gate_report__exit_code(rep) == 1 ? "fail" : "error"));
	json_object_object_add(root, "error", rep->error[0] ?
			       jstr(rep->error) : NULL);
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct gate_result *r = &rep->results[i];
		json_object *o = json_object_new_object();
		char key[400];

		if (!o) {
			err = -ENOMEM;
			goto put;
		}
		json_object_object_add(o, "key", json_object_new_string(result_key(r, key,
										   sizeof(key))));
		json_object_object_add(o, "metric",
				       json_object_new_string(gm_def(r->chk->metric)->name));
		json_object_object_add(o, "selector", jstr(r->chk->sel_str));
		json_object_object_add(o, "expr", jstr(r->th->expr));
		json_object_object_add(o, "stat", json_object_new_string(gate_stat_name(r->th->stat)));
		json_object_object_add(o, "op", json_object_new_string(gate_op_name(r->th->op)));
		json_object_object_add(o, "threshold", json_object_new_double(r->th->value));
		json_object_object_add(o, "unit", json_object_new_string(unit_names[r->th->unit]));
		json_object_object_add(o, "observed", r->has_data ?
				       json_object_new_double(r->observed) : NULL);
		json_object_object_add(o, "bound", json_object_new_string(bound_names[r->bound]));
		json_object_object_add(o, "status", json_object_new_string(gate_status_name(r->status)));
		json_object_object_add(o, "note", jstr(r->note));
		json_object_object_add(o, "baseline", r->has_baseline ?
				       json_object_new_double(r->baseline) : NULL);
		json_object_object_add(o, "regression_pct", r->has_baseline && isfinite(r->regression_pct) ?
				       json_object_new_double(r->regression_pct) : NULL);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "thresholds", arr);
	arr = NULL;
	err = out_check_path(path);
	if (!err && json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY))
		err = errno ? -errno : -EIO;
put:
	json_object_put(arr);
	json_object_put(root);
	return err;
}

/* How much worse obs is than base, in percent, for this operator. */
static double regression(enum gate_op op, double obs, double base)
{
	double worse;

	if (op == GO_LT || op == GO_LE)
		worse = obs - base;
	else if (op == GO_GT || op == GO_GE)
		worse = base - obs;
	else
		return 0;
	if (worse <= 0)
		return worse == 0 || base == 0 ? 0 : worse / fabs(base) * 100;
	return base == 0 ? INFINITY : worse / fabs(base) * 100;
}

int gate_report__apply_baseline(struct gate_report *rep, const char *path, double max_pct,
				char *msg, size_t len)
{
	json_object *root, *arr, *v;
	struct stat st;
	int err = 0;

	/*
	 * A result is about 0.5 KiB a threshold: far below this. json-c needs
	 * many times a file's size in memory, so a larger one is refused unread.
	 */
	if (!stat(path, &st) && st.st_size > GATE_BASELINE_MAX_BYTES) {
		snprintf(msg, len, "%s: baseline of %lld bytes, larger than any gate result "
			 "(%d MiB)", path, (long long)st.st_size, GATE_BASELINE_MAX_BYTES >> 20);
		return -EFBIG;
	}
	root = json_object_from_file(path);
	if (!root) {
		snprintf(msg, len, "%s: cannot read baseline: %s", path, json_util_get_last_err() ?
			 json_util_get_last_err() : "not JSON");
		/* json-c's message ends with a newline */
		if (strlen(msg) && msg[strlen(msg) - 1] == '\n')
			msg[strlen(msg) - 1] = '\0';
		return -EINVAL;
	}
	if (!json_object_object_get_ex(root, "devmemtop_gate", &v) ||
	    !json_object_object_get_ex(root, "thresholds", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		snprintf(msg, len, "%s: not a devmemtop gate result (--json output)", path);
		err = -EINVAL;
		goto put;
	}
	for (size_t i = 0; i < rep->n_results; i++) {
		struct gate_result *r = &rep->results[i];
		char key[400];

		result_key(r, key, sizeof(key));
		for (size_t j = 0; j < json_object_array_length(arr); j++) {
			json_object *o = json_object_array_get_idx(arr, j), *k, *ob;
			char v1[48], v2[48];

			if (!json_object_object_get_ex(o, "key", &k) ||
			    !json_object_is_type(k, json_type_string) ||
			    strcmp(json_object_get_string(k), key))
				continue;
			if (!json_object_object_get_ex(o, "observed", &ob) ||
			    !(json_object_is_type(ob, json_type_double) ||
			      json_object_is_type(ob, json_type_int)))
				break;
			r->has_baseline = true;
			r->baseline = json_object_get_double(ob);
			if (!r->has_data)
				break;
			r->regression_pct = regression(r->th->op, r->observed, r->baseline);
			if (r->regression_pct > max_pct && r->status == GATE_PASS) {
				r->status = GATE_FAIL;
				gate_fmt_value(v1, sizeof(v1), r->baseline, r->th->unit);
				gate_fmt_value(v2, sizeof(v2), max_pct, GM_UNIT_PCT);
				if (isfinite(r->regression_pct))
					snprintf(r->note, sizeof(r->note),
						 "regressed %.1f%% vs baseline %s (max %s)",
						 r->regression_pct, v1, v2);
				else
					snprintf(r->note, sizeof(r->note),
						 "regressed from baseline %s (max %s)", v1, v2);
			}
			break;
		}
	}
	gate_report__count(rep);
put:
	json_object_put(root);
	return err;
}

int gate_write_error(const char *junit, const char *json, const char *name, const char *msg)
{
	json_object *root;
	FILE *f;
	int err = 0;

	if (junit) {
		err = out_check_path(junit);
		f = err ? NULL : fopen(junit, "w");
		if (!f)
			return err ?: -errno;
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			   "<testsuites tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
			   "  <testsuite name=\"");
		textsafe_xml(f, name);
		fprintf(f, "\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0\">\n"
			   "    <testcase classname=\"devmemtop\" name=\"run\" time=\"0\">\n"
			   "      <error message=\"");
		textsafe_xml(f, msg);
		fprintf(f, "\"/>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
		err = out_close(f);
		if (err)
			return err;
	}
	if (!json)
		return 0;
	root = json_object_new_object();
	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "devmemtop_gate", json_object_new_int(1));
	json_object_object_add(root, "spec", jstr(name));
	json_object_object_add(root, "result", json_object_new_string("error"));
	json_object_object_add(root, "error", jstr(msg));
	json_object_object_add(root, "thresholds", json_object_new_array());
	err = out_check_path(json);
	if (!err && json_object_to_file_ext(json, root, JSON_C_TO_STRING_PRETTY))
		err = errno ? -errno : -EIO;
	json_object_put(root);
	return err;
}
