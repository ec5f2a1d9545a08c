// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop gate: evaluate a spec's thresholds over a live run (for a
 * duration or while a command runs) or over a recording; exit 0 all pass,
 * 1 some failed, 2 error.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "commands.h"
#include "gate_eval.h"
#include "gate_spec.h"
#include "html_report.h"
#include "outstream.h"
#include "record.h"
#include "textsafe.h"
#include "util.h"
#include "collector/recorder.h"
#include "collector/runner.h"

#define EXIT_GATE_ERROR	2

static void gate_usage(FILE *f)
{
	fprintf(f,
		"Usage: devmemtop gate --spec FILE [OPTIONS] (--duration D | --from REC | -- COMMAND...)\n"
		"\n"
		"Collect while COMMAND runs (or for D, or from a recording) and check the\n"
		"spec's thresholds. Exit 0 when all pass, 1 when any fails, 2 on error.\n"
		"\n"
		"  -s, --spec FILE           thresholds (YAML, see docs/gate.md)\n"
		"  -d, --duration D          collect for D (e.g. 30s); with a command: at most D\n"
		"  -i, --interval D          snapshot interval (default: the spec's, else 1s)\n"
		"  -l, --linger D            after the command exits, keep collecting for D\n"
		"  -f, --from FILE           gate a recording made by 'devmemtop record'\n"
		"      --junit FILE          write JUnit XML (one testcase per threshold)\n"
		"      --json FILE           write the result as JSON (usable as a baseline)\n"
		"      --record FILE         also write the run as a recording (live runs)\n"
		"      --baseline FILE       a previous --json result to compare with\n"
		"      --html FILE           write an HTML page: thresholds, time series, histograms\n"
		"      --max-regression P    allowed regression vs the baseline (default 10%%)\n"
		"      --mode MODE           full (default), devmem (no program per regular\n"
		"                            page) or light (no per-page hook); sampled\n"
		"                            metrics need 'allow_sampled: true' in the spec\n"
		"      --sampling W/P        devmem and light modes: per-page hooks on for W\n"
		"                            every P (default 120ms/60s)\n"
		"      --pools WHICH         old name: devmem is --mode devmem, all is full\n"
		"      --check               only parse the spec, then exit 0 or 2\n"
		"      --list-metrics        print the metric vocabulary\n"
		"  -v, --verbose             more logging (repeat for more)\n"
		"  -h, --help                this text\n"
		"\n"
		"Full manual: man devmemtop (devmemtop(8)); docs/gate.md.\n");
}

struct gate_args {
	const char *spec;
	const char *from;
	const char *junit;
	const char *json;
	const char *baseline;
	const char *record;
	const char *html;
	double max_regression;
	uint64_t duration_ns;
	uint64_t interval_ns;
	uint64_t linger_ns;
	bool check_only;
	int force_mode;			/* -1 full, DMT_MODE_DEVMEM, DMT_MODE_LIGHT */
	unsigned int light_window_ms;
	unsigned int light_period_ms;
	char **cmd;
};

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "%")) || v < 0 || v > 1e6)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The options against each other, once all are read. */
static int check_gate_args(const struct gate_args *a)
{
	if (!a->spec) {
		dmt_err("--spec FILE is required");
		return -EINVAL;
	}
	if (a->check_only)
		return 0;
	if (a->from && (a->cmd || a->duration_ns || a->interval_ns || a->record || a->linger_ns)) {
		dmt_err("--from gates a recording; it takes no command, "
			"--duration, --interval, --linger or --record");
		return -EINVAL;
	}
	if (a->linger_ns && !a->cmd) {
		dmt_err("--linger needs a command after --");
		return -EINVAL;
	}
	if (!a->from && !a->cmd && !a->duration_ns) {
		dmt_err("give --duration D, a command after --, or --from RECORDING");
		return -EINVAL;
	}
	if (a->max_regression != 10 && !a->baseline) {
		dmt_err("--max-regression needs --baseline");
		return -EINVAL;
	}
	return 0;
}

/* 0 to run, 1 when done (--help, --list-metrics), -EINVAL said why. */
static int parse_gate_args(int argc, char **argv, struct gate_args *a)
{
	static const struct option opts[] = {
		{ "spec", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "linger", required_argument, NULL, 'l' },
		{ "from", required_argument, NULL, 'f' },
		{ "junit", required_argument, NULL, 'J' },
		{ "json", required_argument, NULL, 'j' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "record", required_argument, NULL, 'r' },
		{ "html", required_argument, NULL, 'H' },
		{ "max-regression", required_argument, NULL, 'm' },
		{ "mode", required_argument, NULL, 'M' },
		{ "sampling", required_argument, NULL, 'W' },
		{ "pools", required_argument, NULL, 'P' },
		{ "check", no_argument, NULL, 'c' },
		{ "list-metrics", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int o;

	a->max_regression = 10;
	a->force_mode = -1;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+s:d:i:l:f:vh", opts, NULL)) != -1) {
		switch (o) {
		case 's': a->spec = optarg; break;
		case 'f': a->from = optarg; break;
		case 'J': a->junit = optarg; break;
		case 'j': a->json = optarg; break;
		case 'b': a->baseline = optarg; break;
		case 'r': a->record = optarg; break;
		case 'H': a->html = optarg; break;
		case 'c': a->check_only = true; break;
		case 'v': dmt_verbosity++; break;
		case 'h': gate_usage(stdout); return 1;
		case 'L': gm_list(stdout); return 1;
		case 'd':
			if (parse_duration_ns(optarg, &a->duration_ns) || !a->duration_ns) {
				dmt_err("bad --duration '%s' (e.g. 30s, 500ms)", optarg);
				return -EINVAL;
			}
			break;
		case 'i':
			if (parse_interval_ns(optarg, &a->interval_ns)) {
				dmt_err("bad --interval '%s' (" DMT_INTERVAL_RANGE ")", optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			if (parse_duration_ns(optarg, &a->linger_ns)) {
				dmt_err("bad --linger '%s' (e.g. 3s)", optarg);
				return -EINVAL;
			}
			break;
		case 'M':
			if (parse_mode(optarg, false, &a->force_mode)) {
				dmt_err("bad --mode '%s': full, devmem or light", optarg);
				return -EINVAL;
			}
			if (mode_rename_note("--mode", optarg))
				dmt_err("note: %s", mode_rename_note("--mode", optarg));
			break;
		case 'W':
			if (parse_sampling(optarg, &a->light_window_ms, &a->light_period_ms)) {
				dmt_err("bad --sampling '%s': " DMT_SAMPLING_RANGE, optarg);
				return -EINVAL;
			}
			break;
		case 'P':
			if (parse_pools(optarg, &a->force_mode)) {
				dmt_err("bad --pools '%s': devmem or all", optarg);
				return -EINVAL;
			}
			dmt_err("note: %s", mode_rename_note("--pools", optarg));
			break;
		case 'm':
			if (parse_pct(optarg, &a->max_regression)) {
				dmt_err("bad --max-regression '%s' (e.g. 10%%)", optarg);
				return -EINVAL;
			}
			break;
		default:
			if (optopt)
				dmt_err("option -%c %s (try 'devmemtop gate --help')", optopt,
					strchr("sdilf", optopt) ? "needs an argument" : "is unknown");
			else
				dmt_err("unknown or incomplete option '%s' (try 'devmemtop gate --help')",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		a->cmd = argv + optind;
	return check_gate_args(a);
}

/*
 * An error before thresholds could be evaluated: one line on stderr, and
 * the --junit/--json outputs say so too, so CI shows why.
 */
static void gate_error(const struct gate_args *a, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void gate_error(const struct gate_args *a, const char *name, const char *fmt, ...)
{
	char msg[1600], esc[2048];
	va_list ap;
	int err;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* may quote the spec, the recording or its kernel string: escaped */
	dmt_err("%s", textsafe_str(esc, sizeof(esc), msg));
	err = gate_write_error(a->junit, a->json, name, msg);
	if (err)
		dmt_err("cannot write the error to --junit/--json: %s",
			strerror(-err));
}

/* --html: the run as html_report.h sees it, or NULL */
static struct html_run *gate_html;

struct live_ctx {
	struct gate_eval *ev;
	struct recorder *rec;	/* --record, or NULL */
};

static int live_snapshot(void *ctx, const struct dmt_snapshot *s)
{
	struct live_ctx *x = ctx;
	int err = gate_eval__add(x->ev, s);

	if (!err && gate_html)
		err = html_run__add(gate_html, s);
	if (!err && x->rec)
		err = recorder__snapshot(x->rec, s);
	return err;
}

static int live_event(void *ctx, const struct dmt_event *ev)
{
	struct live_ctx *x = ctx;

	return recorder__event(x->rec, ev);
}

/* Live run: 0, or -errno with rep->error set / message printed. */
static int gate_live(const struct gate_args *a, const struct gate_spec *spec,
		     struct gate_eval *ev, struct gate_report *rep,
		     struct dmt_availability *avail)
{
	struct collector_opts copts = { .log = dmt_log, .verbosity = dmt_verbosity,
					.force_mode = a->force_mode, .events = !!a->record,
					.light_window_ms = a->light_window_ms,
					.light_period_ms = a->light_period_ms };
	struct live_ctx x = { .ev = ev };
	struct run_opts ro = { .on_snapshot = live_snapshot, .on_event = live_event, .ctx = &x,
			       .events = !!a->record };
	struct dmt_snapshot *first = NULL;
	struct run_result res;
	struct collector *c;
	char why[512] = "";
	int err;

	run__catch_signals();
	/* the collector checks privileges, BTF and the rest, and says why */
	copts.errbuf = why;
	copts.errlen = sizeof(why);
	c = collector__new(&copts);
	if (!c) {
		err = -errno;
		gate_error(a, spec->name, "cannot start the collector: %s",
			   why[0] ? why : strerror(-err));
		return err;
	}
	err = collector__snapshot(c, &first);
	if (err) {
		gate_error(a, spec->name, "first snapshot failed: %s", strerror(-err));
		goto free_c;
	}
	memcpy(avail, first->avail, sizeof(first->avail));
	snprintf(rep->mode, sizeof(rep->mode), "%s", dmt_mode_name(collector__mode(c)));
	err = gate_eval__check_avail(spec, first->avail, why, sizeof(why));
	if (err) {
		gate_error(a, spec->name, "%s", why);
		snapshot__free(first);
		goto free_c;
	}
	ro.interval_ns = a->interval_ns ? a->interval_ns :
			 spec->interval_ns ? spec->interval_ns : 1000000000ULL;
	ro.duration_ns = a->duration_ns;
	ro.linger_ns = a->linger_ns;
	ro.cmd = a->cmd;
	if (gate_html)
		html_run__live(gate_html, first, ro.interval_ns, ro.cmd);
	if (a->record) {
		x.rec = recorder__open(a->record, c, first, ro.interval_ns, ro.cmd);
		if (!x.rec) {
			err = -errno;
			gate_error(a, spec->name, "cannot write %s: %s", a->record, strerror(-err));
			snapshot__free(first);
			goto free_c;
		}
	}
	err = run__collect(c, first, &ro, &res);
	if (x.rec) {
		int werr = recorder__close(x.rec, &res);

		if (werr && !err) {
			snprintf(res.err, sizeof(res.err), "writing %s failed: %s", a->record,
				 strerror(-werr));
			err = werr;
		}
	}
	if (err) {
		snprintf(rep->error, sizeof(rep->error), "%s", res.err);
		/* a command that never started measured nothing: no table */
		if (a->cmd && res.n_snapshots <= 1) {
			gate_error(a, spec->name, "%s", res.err);
			goto free_c;
		}
		err = 0;
	} else if (res.end == RUN_END_SIGNAL) {
		snprintf(rep->error, sizeof(rep->error), "interrupted by a signal before the end");
	} else if (a->cmd && res.cmd_status != -1 &&
		   !(WIFEXITED(res.cmd_status) && WEXITSTATUS(res.cmd_status) == 0) &&
		   res.end == RUN_END_COMMAND) {
		char st[96];

		run__describe_status(res.cmd_status, st, sizeof(st));
		snprintf(rep->error, sizeof(rep->error), "the command %s", st);
	}
	err = 0;
free_c:
	collector__free(c);
	return err;
}

/* Recording: 0, or -errno when nothing usable was read. */
static int gate_from(const struct gate_args *a, const struct gate_spec *spec,
		     struct gate_eval *ev, struct gate_report *rep,
		     struct dmt_availability *avail)
{
	const struct rec_meta *m;
	struct rec_reader *r;
	struct rec_item it;
	char why[512];
	int err, ret;

	r = rec_reader__open(a->from);
	if (!r) {
		err = -errno;
		gate_error(a, spec->name, "cannot open %s: %s", a->from, strerror(-err));
		return err;
	}
	m = rec_reader__meta(r);
	if (!m) {
		gate_error(a, spec->name, "%s", rec_reader__error(r));
		err = -EBADMSG;
		goto free_r;
	}
	memcpy(avail, m->avail, sizeof(m->avail));
	if (gate_html) {
		char src[1100];

		snprintf(src, sizeof(src), "recording %s", a->from);
		html_run__meta(gate_html, m);
		html_run__set_source(gate_html, src);
	}
	snprintf(rep->kernel, sizeof(rep->kernel), "%s", m->kernel);
	snprintf(rep->mode, sizeof(rep->mode), "%s", dmt_mode_name(m->mode));
	err = gate_eval__check_avail(spec, m->avail, why, sizeof(why));
	if (err) {
		gate_error(a, spec->name, "%s (recorded on kernel %s)", why, m->kernel);
		goto free_r;
	}
	while ((ret = rec_reader__next(r, &it)) > 0) {
		if (it.type == REC_EVENT && gate_html)
			html_run__event(gate_html, &it.ev);
		if (it.type != REC_SNAPSHOT)
			continue;
		err = gate_eval__add(ev, it.snap);
		if (!err && gate_html)
			err = html_run__add(gate_html, it.snap);
		snapshot__free(it.snap);
		if (err == -E2BIG) {
			gate_error(a, spec->name, "%s: more than %d distinct pools or bindings "
				   "match one check: refusing to gate it", a->from, GATE_MAX_OBJS);
			goto free_r;
		}
		if (err) {
			gate_error(a, spec->name, "%s", strerror(-err));
			goto free_r;
		}
	}
	if (ret < 0)
		snprintf(rep->error, sizeof(rep->error), "%s", rec_reader__error(r));
	if (ret < 0 && gate_html)
		html_run__set_error(gate_html, rec_reader__error(r));
	err = 0;
free_r:
	rec_reader__free(r);
	return err;
}

int cmd_gate(int argc, char **argv)
{
	struct dmt_availability avail[DMT_M__COUNT] = {};
	struct gate_report rep = {};
	struct gate_spec *spec;
	struct gate_eval *ev = NULL;
	struct gate_args a = {};
	struct utsname u;
	char err[2560];
	int ret, werr;

	ret = parse_gate_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : EXIT_GATE_ERROR;
	spec = gate_spec__parse_file(a.spec, err, sizeof(err));
	if (!spec) {
		gate_error(&a, a.spec, "%s", err);
		return EXIT_GATE_ERROR;
	}
	if (a.check_only) {
		size_t n = 0;

		for (size_t i = 0; i < spec->n_checks; i++)
			n += spec->checks[i].n_thresholds;
		printf("%s: %zu thresholds on %zu metrics: OK\n", a.spec, n, spec->n_checks);
		ret = 0;
		goto free_spec;
	}
	ev = gate_eval__new(spec);
	if (a.html)
		gate_html = html_run__new();
	if (!ev || (a.html && !gate_html)) {
		dmt_err("out of memory");
		ret = EXIT_GATE_ERROR;
		goto free_spec;
	}
	if (a.from) {
		ret = gate_from(&a, spec, ev, &rep, avail);
	} else {
		ret = gate_live(&a, spec, ev, &rep, avail);
		if (!uname(&u))
			snprintf(rep.kernel, sizeof(rep.kernel), "%s", u.release);
	}
	if (ret) {
		ret = EXIT_GATE_ERROR;
		goto free_eval;
	}
	if (gate_eval__finish(ev, &rep)) {
		dmt_err("out of memory");
		ret = EXIT_GATE_ERROR;
		goto free_eval;
	}
	if (a.from)
		snprintf(rep.source, sizeof(rep.source), "recording %s", a.from);
	else
		snprintf(rep.source, sizeof(rep.source), "live");
	gate_report__mark_unavailable(&rep, avail);
	if (a.baseline &&
	    gate_report__apply_baseline(&rep, a.baseline, a.max_regression, err, sizeof(err)))
		snprintf(rep.error, sizeof(rep.error), "%.700s", err);
	gate_report__print(&rep, stdout);
	out_flush(stdout);	/* keeps the reason of a failed write for main() */
	ret = gate_report__exit_code(&rep);
	if (a.junit && (werr = gate_report__write_junit(&rep, a.junit))) {
		dmt_err("cannot write %s: %s", a.junit, strerror(-werr));
		ret = EXIT_GATE_ERROR;
	}
	if (a.json && (werr = gate_report__write_json(&rep, a.json))) {
		dmt_err("cannot write %s: %s", a.json, strerror(-werr));
		ret = EXIT_GATE_ERROR;
	}
	if (a.html && (werr = html_report__write(a.html, gate_html, NULL, &rep))) {
		dmt_err("cannot write %s: %s", a.html, strerror(-werr));
		ret = EXIT_GATE_ERROR;
	}
	if (rep.error[0])
		dmt_err("%s", textsafe_str(err, sizeof(err), rep.error));
	gate_report__fini(&rep);
free_eval:
	html_run__free(gate_html);
	gate_html = NULL;
	gate_eval__free(ev);
free_spec:
	gate_spec__free(spec);
	return ret;
}
