// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop record: write a recording (record.h) of snapshots and events;
 * report_cmd.c reads it back.
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
#include "recorder.h"
#include "runner.h"
#include "textsafe.h"
#include "util.h"

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
		"      --mode MODE        auto (default) or light: no per-page hook\n"
		"      --sampling W/P     light mode: per-page hooks on for W every P\n"
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

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "linger", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'M' },
		{ "sampling", required_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "kernel-addresses", no_argument, NULL, 'K' },
		{},
	};
	bool kernel_addresses = false;
	struct collector_opts copts = { .log = dmt_log, .force_mode = -1, .events = true };
	struct run_opts ro = { .interval_ns = 1000000000ULL, .events = true,
			       .on_snapshot = rec_snapshot, .on_event = rec_event };
	struct dmt_snapshot *first = NULL;
	struct run_result res;
	const char *out = NULL;
	struct recorder *rec;
	struct collector *c;
	char why[256];
	uint64_t snaps, events;
	int o, err, werr, ret = EXIT_REC_ERROR;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+o:i:d:l:vh", opts, NULL)) != -1) {
		switch (o) {
		case 'o': out = optarg; break;
		case 'K': kernel_addresses = true; break;
		case 'v': dmt_verbosity++; break;
		case 'h': record_usage(stdout); return 0;
		case 'i':
			if (parse_interval_ns(optarg, &ro.interval_ns)) {
				fprintf(stderr, "devmemtop record: bad --interval '%s' ("
					DMT_INTERVAL_RANGE ")\n", optarg);
				return EXIT_REC_ERROR;
			}
			break;
		case 'd':
			if (parse_duration_ns(optarg, &ro.duration_ns) || !ro.duration_ns) {
				fprintf(stderr, "devmemtop record: bad --duration '%s' (e.g. 30s)\n",
					optarg);
				return EXIT_REC_ERROR;
			}
			break;
		case 'l':
			if (parse_duration_ns(optarg, &ro.linger_ns)) {
				fprintf(stderr, "devmemtop record: bad --linger '%s' (e.g. 3s)\n",
					optarg);
				return EXIT_REC_ERROR;
			}
			break;
		case 'M':
			if (!strcmp(optarg, "light")) {
				copts.force_mode = DMT_MODE_LIGHT;
			} else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "devmemtop record: bad --mode '%s': auto or light\n",
					optarg);
				return EXIT_REC_ERROR;
			}
			break;
		case 'W':
			if (parse_sampling(optarg, &copts.light_window_ms,
					   &copts.light_period_ms)) {
				fprintf(stderr, "devmemtop record: bad --sampling '%s': "
					DMT_SAMPLING_RANGE "\n", optarg);
				return EXIT_REC_ERROR;
			}
			break;
		default:
			fprintf(stderr, "devmemtop record: unknown option or missing argument '%s' "
				"(try 'devmemtop record --help')\n", argv[optind - 1]);
			return EXIT_REC_ERROR;
		}
	}
	if (optind < argc)
		ro.cmd = argv + optind;
	if (ro.linger_ns && !ro.cmd) {
		fprintf(stderr, "devmemtop record: --linger needs a command after --\n");
		return EXIT_REC_ERROR;
	}
	if (!out) {
		fprintf(stderr, "devmemtop record: -o FILE is required\n");
		return EXIT_REC_ERROR;
	}
	if (check_bpf_privileges(why, sizeof(why))) {
		fprintf(stderr, "devmemtop record: %s\n", why);
		return EXIT_REC_ERROR;
	}
	copts.verbosity = dmt_verbosity;
	copts.errbuf = why;
	copts.errlen = sizeof(why);
	c = collector__new(&copts);
	if (!c) {
		fprintf(stderr, "devmemtop record: cannot start the collector: %s\n", why);
		return EXIT_REC_ERROR;
	}
	err = collector__snapshot(c, &first);
	if (err) {
		fprintf(stderr, "devmemtop record: first snapshot failed: %s\n", strerror(-err));
		goto free_c;
	}
	rec = recorder__open_raw(out, c, first, ro.interval_ns, ro.cmd, kernel_addresses);
	if (!rec) {
		fprintf(stderr, "devmemtop record: cannot write %s: %s\n", out, strerror(errno));
		snapshot__free(first);
		goto free_c;
	}
	ro.ctx = rec;
	err = run__collect(c, first, &ro, &res);
	snaps = recorder__snapshots(rec);
	events = recorder__events(rec);
	werr = recorder__close(rec, &res);
	if (werr) {
		fprintf(stderr, "devmemtop record: writing %s failed: %s\n", out, strerror(-werr));
		goto free_c;
	}
	fprintf(stderr, "devmemtop record: %llu snapshots, %llu events, %llu events lost "
		"(ring buffer full) -> %s\n", (unsigned long long)snaps,
		(unsigned long long)events, (unsigned long long)res.ringbuf_drops, out);
	if (err) {
		fprintf(stderr, "devmemtop record: %s\n", res.err);
		goto free_c;
	}
	ret = 0;
	if (res.cmd_status != -1 && !(WIFEXITED(res.cmd_status) && !WEXITSTATUS(res.cmd_status))) {
		char st[96];

		/* the recording is complete; the run it recorded failed: say so, exit 3 */
		run__describe_status(res.cmd_status, st, sizeof(st));
		fprintf(stderr, "devmemtop record: the command %s (its status is in the "
			"recording: devmemtop report %s)\n", st, out);
		ret = EXIT_REC_CMD_FAILED;
	}
free_c:
	collector__free(c);
	return ret;
}
