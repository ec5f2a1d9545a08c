// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop export: serve snapshots as Prometheus metrics over HTTP.
 *
 * The main thread owns the collector: it takes a snapshot every interval
 * and hands it to the exporter's publisher; the HTTP server
 * (export_http.c) answers scrapes from its own threads. export --from hands
 * the file to export_replay.c instead. Call graph: this file -> replay ->
 * HTTP server, never back.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include "commands.h"
#include "expo.h"
#include "outstream.h"
#include "publisher.h"
#include "util.h"
#include "collector/collector.h"
#include "exporter/export_http.h"
#include "exporter/export_replay.h"
#include "exporter/privdrop.h"
#include "exporter/webcfg.h"

#define EXPORT_DEFAULT_INTERVAL	(2ULL * 1000000000ULL)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: devmemtop export [OPTIONS]\n"
		"Serve page pool and devmem metrics for Prometheus on /metrics.\n\n"
		"  -l, --listen ADDR:PORT   listen address (default %s; [::1]:PORT for IPv6)\n"
		"  -i, --interval DUR       time between snapshots (default 2s; 10ms..1h)\n"
		"      --http-timeout SECS  close HTTP connections idle this long, or with a\n"
		"                           request or response unfinished 1s longer (10)\n"
		"      --max-connections N  concurrent HTTP connections (default 64); more\n"
		"                           are closed at once\n"
		"      --max-connections-per-client N\n"
		"                           from one client address (default max/8, >= 2)\n"
		"      --web.config.file FILE\n"
		"                           TLS and basic auth (Prometheus exporter-toolkit\n"
		"                           format; docs/exporter.md)\n"
		"      --user USER          after attaching, run as USER with no capabilities\n"
		"                           (default nobody when started as root)\n"
		"      --keep-privileges    do not drop capabilities or switch user\n"
		"  -m, --mode MODE          devmem (default: no program per regular page,\n"
		"                           every devmem figure exact), full (per-page hooks\n"
		"                           on every pool) or light (no per-page, per-niov or\n"
		"                           per-token hook; refill batches sampled)\n"
		"      --sampling W/P       devmem and light modes: per-page hooks on for W\n"
		"                           every P (default 120ms/60s)\n"
		"      --pools WHICH        old name: devmem is -m devmem, all is -m full\n"
		"      --bpf-stats          turn on kernel.bpf_stats_enabled for BPF run time\n"
		"      --no-netlink         do not ask netdev genl about page pools\n"
		"      --once               watch for one interval, print one scrape, exit\n"
		"      --from FILE          serve a recording (devmemtop record) instead:\n"
		"                           its snapshots at their recorded pace, then the\n"
		"                           last one; no BPF, no privileges needed\n"
		"      --speed X            --from: replay X times as fast (0.01-1000; 1)\n"
		"      --iface-include GLOB per-pool series only for interfaces matching GLOB\n"
		"      --iface-exclude GLOB none for those matching GLOB (both repeatable)\n"
		"      --max-pools N        per-pool series for at most N pools per scrape\n"
		"                           (devmem first; the rest counted, not exported)\n"
		"      --list-metrics       print every metric the exporter can emit and exit\n"
		"  -v, --verbose            more logging (twice: HTTP errors too)\n"
		"  -h, --help               this help\n\n"
		"Full manual: man devmemtop (devmemtop(8)); docs/exporter.md.\n",
		EXPORT_DEFAULT_LISTEN);
}

enum {
	OPT_HTTP_TIMEOUT = 256,
	OPT_SAMPLING,
	OPT_POOLS,
	OPT_MAX_CONNS,
	OPT_BPF_STATS,
	OPT_NO_NETLINK,
	OPT_ONCE,
	OPT_LIST,
	OPT_MAX_CONNS_CLIENT,
	OPT_WEB_CONFIG,
	OPT_USER,
	OPT_KEEP_PRIVS,
	OPT_FROM,
	OPT_SPEED,
	OPT_IFACE_INCLUDE,
	OPT_IFACE_EXCLUDE,
	OPT_MAX_POOLS,
};

/* Cardinality options (expo.h, struct expo_limits): 0 or -EINVAL after one line. */
#define EXPORT_MAX_GLOBS	32
static const char *iface_include[EXPORT_MAX_GLOBS], *iface_exclude[EXPORT_MAX_GLOBS];
static struct expo_limits limits = { .include = iface_include, .exclude = iface_exclude };

static int limits_opt(int opt, const char *arg)
{
	size_t *n = opt == OPT_IFACE_INCLUDE ? &limits.n_include : &limits.n_exclude;
	const char **globs = opt == OPT_IFACE_INCLUDE ? iface_include : iface_exclude;
	uint64_t v;

	if (opt == OPT_MAX_POOLS) {
		if (parse_uint(arg, 1000000, &v) || !v) {
			fprintf(stderr, "devmemtop export: bad --max-pools '%s': want 1-1000000\n", arg);
			return -EINVAL;
		}
		limits.max_pools = v;
		return 0;
	}
	if (!*arg || *n == EXPORT_MAX_GLOBS) {
		fprintf(stderr, "devmemtop export: bad %s '%s': want a non-empty glob, at most %d of them\n",
			opt == OPT_IFACE_INCLUDE ? "--iface-include" : "--iface-exclude", arg,
			EXPORT_MAX_GLOBS);
		return -EINVAL;
	}
	globs[(*n)++] = arg;
	return 0;
}

/* Everything the command line decides. */
struct export_args {
	struct exporter_opts eo;
	struct collector_opts co;
	struct privdrop_opts po;
	uint64_t interval_ns;
	const char *web_config, *from;
	const char *live_opt;	/* an option that only live collection takes */
	double speed;
	bool once;
};

/* --speed X: 0.01-1000; 0 or -EINVAL. */
static int parse_speed(const char *s, double *speed)
{
	char *end;

	errno = 0;
	*speed = strtod(s, &end);
	if (errno || end == s || *end || !(*speed >= 0.01 && *speed <= 1000))
		return -EINVAL;
	return 0;
}

/* One numeric option 1..max; 0, or 2 after saying why. */
static int parse_count(const char *name, const char *s, uint64_t max, unsigned int *out)
{
	uint64_t v;

	if (parse_uint(s, max, &v) || !v) {
		fprintf(stderr, "devmemtop export: bad --%s '%s': want 1-%llu%s\n", name, s,
			(unsigned long long)max, !strcmp(name, "http-timeout") ? " seconds" : "");
		return 2;
	}
	*out = v;
	return 0;
}

/* One option; 0 to go on, -1 to exit 0 (--help, --list-metrics), else the exit status. */
static int export_opt(int opt, int argc, char **argv, struct export_args *a)
{
	switch (opt) {
	case 'l':
		a->eo.listen = optarg;
		return 0;
	case 'i':
		a->live_opt = "--interval";
		if (!parse_interval_ns(optarg, &a->interval_ns))
			return 0;
		fprintf(stderr, "devmemtop export: bad --interval '%s': want "
			DMT_INTERVAL_RANGE " (e.g. 2s)\n", optarg);
		return 2;
	case OPT_HTTP_TIMEOUT:
		return parse_count("http-timeout", optarg, 3600, &a->eo.http_timeout_s);
	case OPT_MAX_CONNS:
		return parse_count("max-connections", optarg, 4096, &a->eo.max_conns);
	case OPT_MAX_CONNS_CLIENT:
		return parse_count("max-connections-per-client", optarg, 4096,
				   &a->eo.max_conns_per_client);
	case OPT_WEB_CONFIG:
		a->web_config = optarg;
		return 0;
	case OPT_IFACE_INCLUDE:
	case OPT_IFACE_EXCLUDE:
	case OPT_MAX_POOLS:
		return limits_opt(opt, optarg) ? 2 : 0;
	case OPT_USER:
		a->po.user = optarg;
		return 0;
	case OPT_KEEP_PRIVS:
		a->po.keep = true;
		return 0;
	case OPT_BPF_STATS:
		a->live_opt = "--bpf-stats";
		a->co.enable_bpf_stats = true;
		return 0;
	case OPT_NO_NETLINK:
		a->live_opt = "--no-netlink";
		a->co.no_netlink = true;
		return 0;
	case 'm':
		a->live_opt = "--mode";
		if (!parse_mode(optarg, false, &a->co.force_mode)) {
			if (mode_rename_note("--mode", optarg))
				dmt_err("note: %s", mode_rename_note("--mode", optarg));
			return 0;
		}
		fprintf(stderr, "devmemtop export: bad mode '%s': devmem, full or light\n", optarg);
		return 2;
	case OPT_SAMPLING:
		a->live_opt = "--sampling";
		if (!parse_sampling(optarg, &a->co.light_window_ms, &a->co.light_period_ms))
			return 0;
		fprintf(stderr, "devmemtop export: bad sampling '%s': " DMT_SAMPLING_RANGE "\n",
			optarg);
		return 2;
	case OPT_POOLS:
		a->live_opt = "--pools";
		if (!parse_pools(optarg, &a->co.force_mode)) {
			dmt_err("note: %s", mode_rename_note("--pools", optarg));
			return 0;
		}
		fprintf(stderr, "devmemtop export: bad --pools '%s': devmem or all\n", optarg);
		return 2;
	case OPT_ONCE:
		a->once = true;
		return 0;
	case OPT_FROM:
		a->from = optarg;
		return 0;
	case OPT_SPEED:
		if (!parse_speed(optarg, &a->speed))
			return 0;
		fprintf(stderr, "devmemtop export: bad --speed '%s': want 0.01-1000\n", optarg);
		return 2;
	case OPT_LIST:
		expo_list_metrics(stdout);
		return -1;
	case 'v':
		dmt_verbosity++;
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	case ':':
		fprintf(stderr, "devmemtop export: option '%s' needs a value (try --help)\n",
			argv[optind - 1]);
		return 2;
	default:
		fprintf(stderr, "devmemtop export: unknown option '%s' (try --help)\n",
			argv[optind - 1]);
		return 2;
	}
}

/* The options that go together or not at all; 0 or 2 after saying why. */
static int export_check_args(struct export_args *a)
{
	struct exporter_opts *eo = &a->eo;

	if (!eo->max_conns_per_client) {
		eo->max_conns_per_client = eo->max_conns / 8 < 2 ? 2 : eo->max_conns / 8;
		if (eo->max_conns_per_client > eo->max_conns)
			eo->max_conns_per_client = eo->max_conns;
	} else if (eo->max_conns_per_client > eo->max_conns) {
		fprintf(stderr, "devmemtop export: --max-connections-per-client %u is above --max-connections %u\n",
			eo->max_conns_per_client, eo->max_conns);
		return 2;
	}
	if (!a->from && a->speed != 1) {
		fprintf(stderr, "devmemtop export: --speed is for --from\n");
		return 2;
	}
	if (a->from && a->live_opt) {
		fprintf(stderr, "devmemtop export: %s is for live collection, not --from (the recording sets the pace; see --speed)\n",
			a->live_opt);
		return 2;
	}
	if (a->po.keep && a->po.user) {
		fprintf(stderr, "devmemtop export: --user and --keep-privileges exclude each other\n");
		return 2;
	}
	return 0;
}

/* The command line into *a; -1 to go on, else the exit status. */
static int export_parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNS },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "no-netlink", no_argument, NULL, OPT_NO_NETLINK },
		{ "mode", required_argument, NULL, 'm' },
		{ "sampling", required_argument, NULL, OPT_SAMPLING },
		{ "pools", required_argument, NULL, OPT_POOLS },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "list-metrics", no_argument, NULL, OPT_LIST },
		{ "max-connections-per-client", required_argument, NULL, OPT_MAX_CONNS_CLIENT },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "user", required_argument, NULL, OPT_USER },
		{ "keep-privileges", no_argument, NULL, OPT_KEEP_PRIVS },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "speed", required_argument, NULL, OPT_SPEED },
		{ "iface-include", required_argument, NULL, OPT_IFACE_INCLUDE },
		{ "iface-exclude", required_argument, NULL, OPT_IFACE_EXCLUDE },
		{ "max-pools", required_argument, NULL, OPT_MAX_POOLS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int opt, rc;

	*a = (struct export_args){
		.eo = { .listen = EXPORT_DEFAULT_LISTEN, .http_timeout_s = 10, .max_conns = 64 },
		.co = { .log = NULL, .force_mode = DMT_MODE_DEVMEM },
		.interval_ns = EXPORT_DEFAULT_INTERVAL,
		.speed = 1,
	};
	optind = 1;
	opterr = 0;	/* our own one-line messages */
	while ((opt = getopt_long(argc, argv, ":l:i:m:vh", longopts, NULL)) != -1) {
		rc = export_opt(opt, argc, argv, a);
		if (rc)
			return rc < 0 ? 0 : rc;
	}
	if (optind < argc) {
		fprintf(stderr, "devmemtop export: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	rc = export_check_args(a);
	return rc ? rc : -1;
}

/*
 * Snapshots every interval; a connection's request deadline when it
 * comes. One wake-up per event, no tick: a wake-up costs ~50 us of
 * CPU on a VM, which an idle always-on exporter should not pay 4x a
 * second. A new connection wakes us (EXPORT_WAKE_SIG) for its deadline.
 * Returns at SIGINT/SIGTERM.
 */
static void export_loop(struct exporter *ex, struct collector *col, const sigset_t *sigs,
			uint64_t interval_ns, struct expo_totals *totals, uint64_t collections)
{
	struct publisher *pb = exporter__publisher(ex);
	struct dmt_snapshot *snap;
	uint64_t errors = 0;
	int err;

	for (uint64_t next = now_mono_ns() + interval_ns;;) {
		uint64_t now, wait, reap_at;
		struct timespec ts;
		int sig;

		reap_at = exporter__reap(ex);
		now = now_mono_ns();
		if (now < next) {
			wait = (reap_at < next ? reap_at : next);
			wait = wait > now ? wait - now : 0;
			ts.tv_sec = wait / 1000000000ULL;
			ts.tv_nsec = wait % 1000000000ULL;
			sig = sigtimedwait(sigs, NULL, &ts);
			if (sig == SIGINT || sig == SIGTERM)
				return;
			continue;
		}
		next += interval_ns;
		if (next <= now)	/* fell behind (suspend, slow collection): no burst */
			next = now + interval_ns;
		err = collector__snapshot(col, &snap);
		if (err) {
			errors++;
			pr_info("export: snapshot failed: %s\n", strerror(-err));
			publisher__count_error(pb, errors);
			continue;
		}
		collections++;
		expo_totals__account(totals, snap);
		publisher__publish(pb, snap, totals, collections, errors, 0);
	}
}

/*
 * Live collection: the collector, the first snapshot (printed with --once,
 * else published), the privilege drop, the HTTP threads, then the loop.
 * ex is NULL with --once. Returns the exit status.
 */
static int export_live(struct export_args *a, struct exporter *ex)
{
	struct collector_opts *co = &a->co;
	struct expo_totals totals = {};
	struct dmt_snapshot *snap = NULL;
	struct collector *col = NULL;
	char msg[512];
	sigset_t sigs;
	int err, ret = 1;

	if (check_bpf_privileges(msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	/*
	 * Block the stop signals before any thread starts so they all inherit
	 * the mask; the main thread takes them with sigtimedwait().
	 */
	export__block_signals(&sigs);

	co->errbuf = msg;
	co->errlen = sizeof(msg);
	col = collector__new(co);
	if (!col) {
		fprintf(stderr, "devmemtop export: cannot start the collector: %s\n", msg);
		goto cleanup;
	}
	if (a->once) {
		/* pools show up with their first events: watch for one interval */
		struct timespec ts = { .tv_sec = a->interval_ns / 1000000000ULL,
				       .tv_nsec = a->interval_ns % 1000000000ULL };
		int sig = sigtimedwait(&sigs, NULL, &ts);

		if (sig == SIGINT || sig == SIGTERM)
			goto cleanup;
	}
	err = collector__snapshot(col, &snap);
	if (err) {
		fprintf(stderr, "devmemtop export: first snapshot failed: %s\n", strerror(-err));
		goto cleanup;
	}
	expo_totals__account(&totals, snap);
	if (a->once) {
		err = export__print_once(snap, &totals, a->eo.interval_s, 1);
		if (err && !out_flush(stdout))	/* a stdout error: main() says it */
			fprintf(stderr, "devmemtop export: %s\n", strerror(-err));
		else
			ret = 0;
		goto cleanup;
	}
	err = publisher__publish(exporter__publisher(ex), snap, &totals, 1, 0, 0);
	snap = NULL;
	/* programs attached, first snapshot taken: the HTTP threads start without */
	if (!err && privdrop__apply(&a->po, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		goto cleanup;
	}
	if (!err)
		err = exporter__start(ex);
	if (err) {
		fprintf(stderr, "devmemtop export: cannot start the HTTP server on %s\n",
			exporter__addr(ex));
		goto cleanup;
	}
	fprintf(stderr, "devmemtop export: serving %s://%s/metrics (mode %s, every %gs)\n",
		exporter__scheme(ex), exporter__addr(ex),
		dmt_mode_name(collector__mode(col)), a->eo.interval_s);
	export_loop(ex, col, &sigs, a->interval_ns, &totals, 1);
	ret = 0;
cleanup:
	snapshot__free(snap);
	collector__free(col);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct exporter *ex = NULL;
	struct export_args a;
	char msg[512];
	int ret;

	ret = export_parse_args(argc, argv, &a);
	if (ret >= 0)
		return ret;
	ret = 1;
	if (a.from && export_replay__check(a.from, a.speed, &a.interval_ns, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	if (!a.once && privdrop__prepare(&a.po, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	a.eo.interval_s = (double)a.interval_ns / 1e9;
	expo__set_limits(&limits);
	a.co.verbosity = dmt_verbosity;
	a.co.log = dmt_verbosity ? dmt_log : NULL;

	if (a.web_config && !a.once) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			fprintf(stderr, "devmemtop export: this libmicrohttpd has no TLS support\n");
			return 1;
		}
		if (webcfg__load(a.web_config, &a.eo.web, msg, sizeof(msg))) {
			fprintf(stderr, "devmemtop export: %s\n", msg);
			return 1;
		}
		if (webcfg__warning(a.eo.web))
			fprintf(stderr, "devmemtop export: %s\n", webcfg__warning(a.eo.web));
	}
	if (!a.once) {
		ex = exporter__new(&a.eo, msg, sizeof(msg));
		if (!ex) {
			fprintf(stderr, "devmemtop export: %s\n", msg);
			goto cleanup;
		}
	}
	if (a.from)
		ret = export_replay__run(ex, a.from, a.speed, a.once, &a.po);
	else
		ret = export_live(&a, ex);
cleanup:
	exporter__free(ex);
	webcfg__free(a.eo.web);
	return ret;
}
