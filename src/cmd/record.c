// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop record: write a recording (record.h) of snapshots and events;
 * report.c reads it back.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "commands.h"
#include "gate_spec.h"
#include "html_report.h"
#include "json_out.h"
#include "objtrack.h"
#include "outstream.h"
#include "record.h"
#include "textsafe.h"
#include "util.h"
#include "collector/recorder.h"
#include "collector/runner.h"

#define EXIT_REC_ERROR	2
#define EXIT_REC_CMD_FAILED	3	/* recorded fine, but the command failed */

static void record_usage(FILE *f)
{
	fprintf(f,
		"Usage: devmemtop record -o FILE [-i INTERVAL] (--duration D | [--linger D] -- COMMAND...)\n"
		"\n"
		"Record snapshots every INTERVAL and every ring-buffer event into FILE, for D,\n"
		"while COMMAND runs, or until SIGINT/SIGTERM (which end the recording cleanly).\n"
		"Read it back with 'devmemtop report FILE' or 'devmemtop gate --from FILE'.\n"
		"\n"
		"  -o, --output FILE      the recording to write (replaced if it exists)\n"
		"  -i, --interval D       snapshot interval (default 1s)\n"
		"  -d, --duration D       stop after D; with a command: at most D\n"
		"  -l, --linger D         after the command exits, keep recording for D (to\n"
		"                         see pools and bindings torn down asynchronously)\n"
		"      --kernel-addresses keep kernel addresses (pool addresses, the kallsyms\n"
		"                         line of the probe log) in the file; by default they\n"
		"                         are pseudonymised or hidden. The file is mode 0600\n"
		"      --mode MODE        full (default), devmem (no program per regular page)\n"
		"                         or light (no per-page hook)\n"
		"      --sampling W/P     devmem and light modes: per-page hooks on for W\n"
		"                         every P (default 120ms/60s)\n"
		"      --pools WHICH      old name: devmem is --mode devmem, all is full\n"
		"  -v, --verbose          more logging\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 recorded (and the command exited 0), 2 recording failed or the\n"
		"command could not start, 3 recorded but the command failed (its wait status\n"
		"is in the recording's end frame; 'report' prints it).\n"
		"\n"
		"Full manual: man devmemtop (devmemtop(8)); docs/gate.md.\n");
}

static int rec_snapshot(void *ctx, const struct dmt_snapshot *s)
{
	return recorder__snapshot(ctx, s);
}

static int rec_event(void *ctx, const struct dmt_event *ev)
{
	return recorder__event(ctx, ev);
}

struct record_args {
	const char *out;
	bool kernel_addresses;
	struct collector_opts copts;
	struct run_opts ro;
};

/* 0 to record, 1 after --help, -EINVAL said why. */
static int parse_record_args(int argc, char **argv, struct record_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "linger", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'M' },
		{ "sampling", required_argument, NULL, 'W' },
		{ "pools", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "kernel-addresses", no_argument, NULL, 'K' },
		{},
	};
	int o;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+o:i:d:l:vh", opts, NULL)) != -1) {
		switch (o) {
		case 'o': a->out = optarg; break;
		case 'K': a->kernel_addresses = true; break;
		case 'v': dmt_verbosity++; break;
		case 'h': record_usage(stdout); return 1;
		case 'i':
			if (parse_interval_ns(optarg, &a->ro.interval_ns)) {
				dmt_err("bad --interval '%s' (" DMT_INTERVAL_RANGE ")", optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if (parse_duration_ns(optarg, &a->ro.duration_ns) || !a->ro.duration_ns) {
				dmt_err("bad --duration '%s' (e.g. 30s)", optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			if (parse_duration_ns(optarg, &a->ro.linger_ns)) {
				dmt_err("bad --linger '%s' (e.g. 3s)", optarg);
				return -EINVAL;
			}
			break;
		case 'M':
			if (parse_mode(optarg, false, &a->copts.force_mode)) {
				dmt_err("bad --mode '%s': full, devmem or light", optarg);
				return -EINVAL;
			}
			if (mode_rename_note("--mode", optarg))
				dmt_err("note: %s", mode_rename_note("--mode", optarg));
			break;
		case 'W':
			if (parse_sampling(optarg, &a->copts.light_window_ms,
					   &a->copts.light_period_ms)) {
				dmt_err("bad --sampling '%s': " DMT_SAMPLING_RANGE, optarg);
				return -EINVAL;
			}
			break;
		case 'P':
			if (parse_pools(optarg, &a->copts.force_mode)) {
				dmt_err("bad --pools '%s': devmem or all", optarg);
				return -EINVAL;
			}
			dmt_err("note: %s", mode_rename_note("--pools", optarg));
			break;
		default:
			dmt_err("unknown option or missing argument '%s' "
				"(try 'devmemtop record --help')", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		a->ro.cmd = argv + optind;
	if (a->ro.linger_ns && !a->ro.cmd) {
		dmt_err("--linger needs a command after --");
		return -EINVAL;
	}
	if (!a->out) {
		dmt_err("-o FILE is required");
		return -EINVAL;
	}
	return 0;
}

/* The run's outcome: 0, EXIT_REC_CMD_FAILED, or EXIT_REC_ERROR (said why). */
static int record_outcome(const struct record_args *a, const struct run_result *res, int err)
{
	char st[96];

	if (err) {
		dmt_err("%s", res->err);
		return EXIT_REC_ERROR;
	}
	if (res->cmd_status == -1 || (WIFEXITED(res->cmd_status) && !WEXITSTATUS(res->cmd_status)))
		return 0;
	/* the recording is complete; the run it recorded failed: say so, exit 3 */
	run__describe_status(res->cmd_status, st, sizeof(st));
	dmt_err("the command %s (its status is in the recording: devmemtop report %s)", st,
		a->out);
	return EXIT_REC_CMD_FAILED;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = {
		.copts = { .log = dmt_log, .force_mode = -1, .events = true },
		.ro = { .interval_ns = 1000000000ULL, .events = true,
			.on_snapshot = rec_snapshot, .on_event = rec_event },
	};
	struct dmt_snapshot *first = NULL;
	struct run_result res;
	struct recorder *rec;
	struct collector *c;
	char why[256] = "";
	uint64_t snaps, events;
	int err, werr, ret = EXIT_REC_ERROR;

	err = parse_record_args(argc, argv, &a);
	if (err)
		return err > 0 ? 0 : EXIT_REC_ERROR;
	run__catch_signals();
	/* the collector checks privileges, BTF and the rest, and says why */
	a.copts.verbosity = dmt_verbosity;
	a.copts.errbuf = why;
	a.copts.errlen = sizeof(why);
	c = collector__new(&a.copts);
	if (!c) {
		dmt_err("cannot start the collector: %s", why[0] ? why : strerror(errno));
		return EXIT_REC_ERROR;
	}
	err = collector__snapshot(c, &first);
	if (err) {
		dmt_err("first snapshot failed: %s", strerror(-err));
		goto free_c;
	}
	rec = recorder__open_raw(a.out, c, first, a.ro.interval_ns, a.ro.cmd, a.kernel_addresses);
	if (!rec) {
		dmt_err("cannot write %s: %s", a.out, strerror(errno));
		snapshot__free(first);
		goto free_c;
	}
	a.ro.ctx = rec;
	err = run__collect(c, first, &a.ro, &res);
	snaps = recorder__snapshots(rec);
	events = recorder__events(rec);
	werr = recorder__close(rec, &res);
	if (werr) {
		dmt_err("writing %s failed: %s", a.out, strerror(-werr));
		goto free_c;
	}
	dmt_err("%llu snapshots, %llu events, %llu events lost (ring buffer full) -> %s",
		(unsigned long long)snaps, (unsigned long long)events,
		(unsigned long long)res.ringbuf_drops, a.out);
	ret = record_outcome(&a, &res, err);
free_c:
	collector__free(c);
	return ret;
}
