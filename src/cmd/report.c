// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop report: print a recording's header, events, per-pool and
 * per-binding tables and histograms offline (--json: every snapshot;
 * --html: html_report.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "commands.h"
#include "html_report.h"
#include "json_out.h"
#include "metrics.h"
#include "objtrack.h"
#include "outstream.h"
#include "record.h"
#include "textsafe.h"
#include "util.h"
#include "collector/runner.h"

/*
 * The tables hold at most objtrack's run caps (OBJRUN_MAX_POOLS pools,
 * OBJRUN_MAX_BINDINGS bindings): a recording may list any number over time
 * (a crafted one, millions), and each row costs two snapshots of the
 * object. Beyond, objects are counted, not shown. The HTML page has the
 * same caps (html_report.c).
 */
struct report {
	struct objrun run;		/* pools, bindings, holders: the identity gate uses too */
	bool tokens_known;		/* binding_held_by_sockets available at the end */
	bool tok_avail[2];		/* recvmsg_tokens, dontneed_cost at the end */
	uint64_t n_snaps, n_events, ev_by_type[16];
	uint64_t first_ts, last_ts, start_mono;
	uint64_t drops_first, drops_last, map_full;
	bool have_end;
	struct rec_end end;
	/* the last snapshot without its objects: availability and global rows */
	struct dmt_snapshot glob;
};

struct report_args {
	const char *path, *html, *baseline;
	bool quiet_events, json;
};

static const char *ev_name(uint32_t t)
{
	static const char *const names[] = {
		[DMT_EV_POOL_NEW] = "pool-new", [DMT_EV_POOL_RELEASE] = "pool-release",
		[DMT_EV_POOL_NID] = "pool-nid", [DMT_EV_BIND_CREATE] = "bind-create",
		[DMT_EV_BIND_UNBIND] = "bind-unbind", [DMT_EV_BIND_FREE] = "bind-free",
		[DMT_EV_ALLOC_FAIL] = "alloc-fail",
	};

	return t < ARRAY_SIZE(names) && names[t] ? names[t] : "unknown";
}

static void print_event(const struct report *r, const struct dmt_event *ev)
{
	double t = ev->ts_ns >= r->start_mono ? (ev->ts_ns - r->start_mono) / 1e9 : 0;

	printf("  %+10.3fs %-12s id=%u ifindex=%d", t, ev_name(ev->type), ev->id, ev->ifindex);
	switch (ev->type) {
	case DMT_EV_POOL_RELEASE:
		printf(" inflight=%lld hold=%lld release=%lld", (long long)ev->a,
		       (long long)ev->b, (long long)ev->c);
		break;
	case DMT_EV_POOL_NID:
		printf(" nid=%lld", (long long)ev->a);
		break;
	case DMT_EV_BIND_CREATE:
		printf(" niovs=%lld dmabuf=%lld", (long long)ev->a, (long long)ev->b);
		break;
	case DMT_EV_BIND_UNBIND:
		printf(" outstanding=%lld", (long long)ev->a);
		break;
	case DMT_EV_BIND_FREE:
		printf(" outstanding=%lld total=%lld", (long long)ev->a, (long long)ev->b);
		break;
	case DMT_EV_ALLOC_FAIL:
		printf(" free_left=%lld", (long long)ev->a);
		break;
	}
	printf("\n");
}

static void bar(uint64_t v, uint64_t max)
{
	int n = max ? (int)((double)v / max * 40 + 0.5) : 0;

	for (int i = 0; i < n; i++)
		putchar('*');
}

/* unit: "ns" for latencies, "" for counts (tokens) */
static void print_log2(const char *title, const struct hist_log2 *h, const char *unit)
{
	const char *sp = unit[0] ? " " : "";

	uint64_t max = 0, q50 = 0, q99 = 0;
	int lo = -1, hi = -1;

	if (!h->count)
		return;
	for (int i = 0; i < DMT_LOG2_SLOTS; i++) {
		if (!h->slots[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (h->slots[i] > max)
			max = h->slots[i];
	}
	hist_log2_quantile(h, 0.5, &q50);
	hist_log2_quantile(h, 0.99, &q99);
	printf("    %s: count %llu, avg %.0f%s%s, p50 <= %llu%s%s, p99 <= %llu%s%s\n", title,
	       (unsigned long long)h->count, (double)h->sum / h->count, sp, unit,
	       (unsigned long long)q50, sp, unit, (unsigned long long)q99, sp, unit);
	for (int i = lo; i >= 0 && i <= hi; i++) {
		printf("      %12llu -> %-12llu : %-10llu |",
		       (unsigned long long)(i ? hist_log2_bound(i - 1) + 1 : 0),
		       (unsigned long long)hist_log2_bound(i), (unsigned long long)h->slots[i]);
		bar(h->slots[i], max);
		printf("|\n");
	}
}

static void print_batch(const struct hist_batch *h)
{
	uint64_t max = 0, q50 = 0, q99 = 0;

	if (!h->count)
		return;
	for (int i = 0; i <= DMT_BATCH_MAX; i++)
		if (h->slots[i] > max)
			max = h->slots[i];
	hist_batch_quantile(h, 0.5, &q50);
	hist_batch_quantile(h, 0.99, &q99);
	printf("    refill batches: count %llu, mean %.1f, p50 %llu, p99 %llu, max %llu\n",
	       (unsigned long long)h->count, hist_batch_mean(h), (unsigned long long)q50,
	       (unsigned long long)q99, (unsigned long long)hist_batch_max(h));
	for (int i = 0; i <= DMT_BATCH_MAX; i++) {
		if (!h->slots[i])
			continue;
		printf("      %4d%s : %-10llu |", i, i == DMT_BATCH_MAX ? "+" : " ",
		       (unsigned long long)h->slots[i]);
		bar(h->slots[i], max);
		printf("|\n");
	}
}


/*
 * The metric table's columns of people's tables for one kind of object
 * (rows with a heading): headings when o is NULL, else o's values ("n/a"
 * unavailable, "-" unknown).
 */
static void print_cols(enum mdef_obj obj, const void *o, const struct dmt_availability *av)
{
	char v[32];

	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (mdef_view_col(d, obj))
			printf(" %*s", mdef_col_width(d, 8),
			       o ? mdef_fmt(d, o, av, false, v, sizeof(v)) : d->col);
	}
}

/* Why those columns say n/a: one line per unavailable metric (from the file: escaped). */
static void print_cols_why(enum mdef_obj obj, const struct dmt_availability *av)
{
	bool seen[DMT_M__COUNT] = {};
	char esc[512];

	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_view_col(d, obj) || d->avail < 0 || mdef_available(d, av) ||
		    seen[d->avail])
			continue;
		seen[d->avail] = true;
		printf("  n/a: %s unavailable: %s\n", dmt_metric_name(d->avail),
		       textsafe_str(esc, sizeof(esc), av[d->avail].reason));
	}
}

/* "netdev (last snapshot): RX queues bound 1, ...": the global rows people see. */
static void print_netdev(const struct report *r)
{
	const char *sep = "netdev (last snapshot): ";
	char v[32];

	if (!r->n_snaps)
		return;
	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_view_col(d, MO_GLOBAL))
			continue;
		printf("%s%s %s", sep, d->title,
		       mdef_fmt(d, &r->glob, r->glob.avail, true, v, sizeof(v)));
		sep = ", ";
	}
	printf("\n");
	print_cols_why(MO_GLOBAL, r->glob.avail);
}

static void print_summary(const struct report *r)
{
	double dur = r->n_snaps > 1 ? (r->last_ts - r->first_ts) / 1e9 : 0;
	uint64_t drops = r->have_end ? r->end.ringbuf_drops : r->drops_last;

	printf("\nsummary: %.1fs, %llu snapshots, %llu events", dur,
	       (unsigned long long)r->n_snaps, (unsigned long long)r->n_events);
	for (size_t i = 0; i < ARRAY_SIZE(r->ev_by_type); i++)
		if (r->ev_by_type[i])
			printf(", %s %llu", ev_name(i), (unsigned long long)r->ev_by_type[i]);
	printf("\nlost events (ring buffer full): %llu%s; untracked pools/bindings (map full): %llu\n",
	       (unsigned long long)drops, drops ? "  <-- events are missing from this recording" : "",
	       (unsigned long long)r->map_full);
	print_netdev(r);
	if (r->run.pools_over || r->run.binds_over)
		printf("not shown: %llu pool and %llu binding records of objects past the first "
		       "%d pools and %d bindings\n", (unsigned long long)r->run.pools_over,
		       (unsigned long long)r->run.binds_over, OBJRUN_MAX_POOLS, OBJRUN_MAX_BINDINGS);
}

/*
 * The kernel's own figures of each pool (page-pool-stats-get, qstats-get)
 * and an io_uring zcrx pool's (its provider calls, its areas), as last
 * reported (objtrack_pool_update): the stats count since the pool's
 * creation.
 */
static void print_pool_kernel(const struct report *r)
{
	printf("\npools, the kernel's figures (page-pool-stats-get, qstats-get, zcrx; as "
	       "last reported):\n");
	printf("  %-6s %-16s", "ID", "IFACE");
	print_cols(MO_POOL, NULL, r->glob.avail);
	printf("\n");
	for (size_t i = 0; i < r->run.n_pools; i++) {
		const struct objrun_pool *t = &r->run.pools[i];
		char ifc[80];

		textsafe_col(ifc, sizeof(ifc), t->last.ifname[0] ? t->last.ifname : "?", 16);
		printf("  %-6u %s", t->last.id, ifc);
		print_cols(MO_POOL, &t->last, r->glob.avail);
		printf("\n");
	}
	print_cols_why(MO_POOL, r->glob.avail);
}

/*
 * A pool's count over the run: "?" never known (light mode, never
 * located), "N*" counted from the snapshot that located it.
 */
static void run_count(char *buf, size_t len, const struct objrun_pool *t, uint64_t v)
{
	if (!t->known)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)v, t->partial ? "*" : "");
}

static void print_pools(const struct report *r)
{
	bool unknown = false, partial = false;

	printf("\npools (%zu):\n", r->run.n_pools);
	printf("  %-6s %-16s %-8s %-9s %12s %12s %10s %8s %6s %6s %6s\n", "ID", "IFACE", "KIND",
	       "STATE", "HOLDS", "RELEASES", "INFLIGHT", "REFILLS", "P50", "P99", "MAX");
	for (size_t i = 0; i < r->run.n_pools; i++) {
		const struct objrun_pool *t = &r->run.pools[i];
		const struct hist_batch *h = &t->run.refill;
		uint64_t q50 = 0, q99 = 0;
		char ifc[80], holds[24], rel[24];

		hist_batch_quantile(h, 0.5, &q50);
		hist_batch_quantile(h, 0.99, &q99);
		run_count(holds, sizeof(holds), t, t->run.holds);
		run_count(rel, sizeof(rel), t, t->run.releases);
		unknown |= !t->known;
		partial |= t->partial;
		/* names come from the file (and the kernel before it): escaped */
		textsafe_col(ifc, sizeof(ifc), t->last.ifname[0] ? t->last.ifname : "?", 16);
		printf("  %-6u %s %-8s %-9s %12s %12s %10lld %8llu %6llu %6llu %6llu\n",
		       t->last.id, ifc,
		       dmt_kind_name(t->last.kind), dmt_pool_state_name(t->last.state),
		       holds, rel, (long long)t->last.inflight, (unsigned long long)h->count,
		       (unsigned long long)q50, (unsigned long long)q99,
		       (unsigned long long)hist_batch_max(h));
	}
	if (unknown)
		printf("  ?: holds and releases unknown: light mode never located the pool\n");
	if (partial)
		printf("  *: counted from the snapshot that located the pool (light mode), not from "
		       "the start\n");
	print_pool_kernel(r);
}

static void print_bindings(const struct report *r)
{
	printf("\nbindings (%zu):\n", r->run.n_binds);
	if (r->run.n_binds) {
		printf("  %-6s %-16s %-9s %10s %8s %10s %8s %10s %10s %10s", "ID", "IFACE",
		       "LAYOUT", "NIOVS", "OCC%", "ALLOCS", "FAILS", "OUT@UNBIND", "LEAKED",
		       "LIFETIME");
		print_cols(MO_BINDING, NULL, r->glob.avail);
		printf("\n");
	}
	for (size_t i = 0; i < r->run.n_binds; i++) {
		const struct dmt_binding_snap *b = &r->run.binds[i].last, *run = &r->run.binds[i].run;
		char occ[16] = "?", unb[24] = "-", leak[24] = "-", niovs[24] = "?", life[24] = "-";
		/* created -> freed, or -> the end of the recording ("+": still bound) */
		uint64_t end = b->freed_ns ? b->freed_ns : r->last_ts;

		if (b->created_ns && end >= b->created_ns)
			snprintf(life, sizeof(life), "%.1fs%s", (end - b->created_ns) / 1e9,
				 b->freed_ns ? "" : "+");
		if (b->total_niovs >= 0)
			snprintf(niovs, sizeof(niovs), "%lld", (long long)b->total_niovs);
		if (b->occupancy >= 0)
			snprintf(occ, sizeof(occ), "%.1f", b->occupancy * 100);
		if (b->out_at_unbind >= 0)
			snprintf(unb, sizeof(unb), "%lld", (long long)b->out_at_unbind);
		if (b->out_at_free >= 0)
			snprintf(leak, sizeof(leak), "%lld", (long long)b->out_at_free);
		printf("  %-6u %-16s %-9s %10s %8s %10llu %8llu %10s %10s %10s", b->id,
		       b->ifname[0] ? b->ifname : "?", b->layout, niovs, occ,
		       (unsigned long long)run->alloc_niovs, (unsigned long long)run->alloc_fail,
		       unb, leak, life);
		print_cols(MO_BINDING, b, r->glob.avail);
		printf("\n");
	}
	if (r->run.n_binds)
		print_cols_why(MO_BINDING, r->glob.avail);
}

static void print_tokens(const struct report *r)
{
	printf("\nfrag tokens (bindings):\n");
	printf("  %-6s %10s %10s %10s %12s %12s\n", "ID", "HANDED", "RETURNED", "RELEASED",
	       "MAX.TOKENS", "MAX.NIOVS");
	for (size_t i = 0; i < r->run.n_binds; i++) {
		const struct dmt_binding_snap *b = &r->run.binds[i].last, *run = &r->run.binds[i].run;
		char mt[24] = "?", mn[24] = "?", hd[24] = "-", rt[24] = "-", rl[24] = "-";

		if (run->held_tokens >= 0)
			snprintf(mt, sizeof(mt), "%lld", (long long)run->held_tokens);
		if (run->held_by_sockets >= 0)
			snprintf(mn, sizeof(mn), "%lld", (long long)run->held_by_sockets);
		/* light mode: what is held now is walked, no hand-out history */
		if (r->glob.avail[DMT_M_BIND_TOKEN_EVENTS].available &&
		    dmt_binding_tok_counts_known(b)) {
			snprintf(hd, sizeof(hd), "%llu", (unsigned long long)run->tok_handed);
			snprintf(rt, sizeof(rt), "%llu", (unsigned long long)run->tok_returned);
			snprintf(rl, sizeof(rl), "%llu", (unsigned long long)run->tok_released);
		}
		printf("  %-6u %10s %10s %10s %12s %12s", b->id, hd, rt, rl, mt, mn);
		/* one line: the reason used to end the row early and start its own */
		if (b->held_why)
			printf("  (held unknown: %s)", dmt_held_why_text(b->held_why));
		printf("\n");
	}
	printf("\ntoken holders (peak per process and binding, per socket where the process is "
	       "unknown, %zu):\n", r->run.n_holders);
	if (r->run.n_holders)
		printf("  %-8s %-16s %6s %10s %10s %10s  %s\n", "PID", "COMM", "BIND",
		       "MAX.TOKENS", "NIOVS", "OLDEST", "POD/CGROUP");
	for (size_t i = 0; i < r->run.n_holders; i++) {
		const struct objrun_holder *h = &r->run.holders[i];
		struct dmt_holder_snap hs = { .cgroup_id = h->cgroup_id };
		char cm[96], where[DMT_CGROUP_PATH_MAX + 64], wh[4 * sizeof(where)], age[32] = "-";
		char tk[24] = "-", nv[24] = "-", pid[16] = "-";	/* unknown: "-", never 0 */

		if (h->pid)
			snprintf(pid, sizeof(pid), "%u", h->pid);
		/* from the file, and any process can name itself anything */
		textsafe_col(cm, sizeof(cm), h->comm[0] ? h->comm : "?", 16);
		memcpy(hs.cgroup, h->cgroup, sizeof(hs.cgroup));
		tokens__holder_where(&hs, false, where, sizeof(where));
		/* light mode knows no token's age: "-", never "0.00s" */
		if (h->age_known)
			snprintf(age, sizeof(age), "%.2fs", h->oldest_age_ns / 1e9);
		/* light, autorelease off: the kernel keeps no count per socket */
		if (h->tokens_known) {
			snprintf(tk, sizeof(tk), "%llu", (unsigned long long)h->tokens);
			snprintf(nv, sizeof(nv), "%llu", (unsigned long long)h->niovs);
		}
		printf("  %-8s %s %6u %10s %10s %10s  %s\n", pid, cm, h->binding_id, tk, nv, age,
		       textsafe_str(wh, sizeof(wh), where));
	}
	if (r->run.holders_over)
		printf("  (%llu sightings of more holders not listed: at most %d)\n",
		       (unsigned long long)r->run.holders_over, OBJRUN_MAX_HOLDERS);
}

static void print_histograms(const struct report *r)
{
	const struct dmt_tok_cost *tc = &r->run.tok_run;
	char ifc[80];

	printf("\nhistograms:\n");
	for (size_t i = 0; i < r->run.n_pools; i++) {
		const struct objrun_pool *t = &r->run.pools[i];

		if (!t->run.refill.count)
			continue;
		printf("  pool %u (%s):\n", t->last.id,
		       textsafe_str(ifc, sizeof(ifc), t->last.ifname[0] ? t->last.ifname : "?"));
		print_batch(&t->run.refill);
	}
	for (size_t i = 0; i < r->run.n_binds; i++) {
		const struct dmt_binding_snap *b = &r->run.binds[i].last, *run = &r->run.binds[i].run;
		bool any = false;

		/* the metric table's binding histograms, over the run */
		for (size_t k = 0; k < mdef_count; k++)
			any |= mdef_bind_view_hist(&mdefs[k]) && mdef_log2(&mdefs[k], run)->count;
		if (!any)
			continue;
		printf("  binding %u (%s):\n", b->id, textsafe_str(ifc, sizeof(ifc), b->ifname));
		for (size_t k = 0; k < mdef_count; k++)
			if (mdef_bind_view_hist(&mdefs[k]) &&
			    (!mdefs[k].known || mdefs[k].known(b)))
				print_log2(mdefs[k].title, mdef_log2(&mdefs[k], run),
					   mdefs[k].unit == MU_NS ? "ns" : "");
	}
	if ((r->tok_avail[0] && tc->per_recvmsg.count) ||
	    (r->tok_avail[1] && (tc->per_dontneed.count || tc->dontneed_ns.count)))
		printf("  frag tokens:\n");
	if (r->tok_avail[0])
		print_log2("tokens per recvmsg", &tc->per_recvmsg, "");
	if (r->tok_avail[1]) {
		print_log2("tokens per DONTNEED call", &tc->per_dontneed, "");
		print_log2("DONTNEED latency", &tc->dontneed_ns, "ns");
		print_log2("DONTNEED latency per token", &tc->dontneed_ns_token, "ns");
	}
}

static void print_tables(const struct report *r)
{
	print_summary(r);
	print_pools(r);
	print_bindings(r);
	if (r->tokens_known)
		print_tokens(r);
	print_histograms(r);
}

static void print_meta(const char *path, const struct rec_meta *m)
{
	time_t t = m->start_wall_ns / 1000000000ULL;
	char when[64] = "?", a[4096], b[512], c[512];
	struct tm tm;

	/* every string here comes from the file: escaped (textsafe.h) */
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("recording %s\n", textsafe_str(a, sizeof(a), path));
	printf("  written by devmemtop %s on %s, kernel %s\n",
	       textsafe_str(a, sizeof(a), m->version),
	       textsafe_str(b, sizeof(b), m->host[0] ? m->host : "?"),
	       textsafe_str(c, sizeof(c), m->kernel));
	printf("  started %s, interval %.3gs, attach mode %s\n", when, m->interval_ns / 1e9,
	       dmt_mode_name(m->mode));
	if (m->cmdline[0])
		printf("  command: %s\n", textsafe_str(a, sizeof(a), m->cmdline));
	printf("\nmetric availability:\n");
	for (int i = 0; i < DMT_M__COUNT; i++)
		printf("  %-24s %-3s %s\n", dmt_metric_name(i), m->avail[i].available ? "yes" : "no",
		       textsafe_str(a, sizeof(a), m->avail[i].available ? m->avail[i].source :
							       m->avail[i].reason));
	if (m->n_probe_log) {
		printf("\nprobe log:\n");
		for (size_t i = 0; i < m->n_probe_log; i++)
			printf("  %s\n", textsafe_str(a, sizeof(a), m->probe_log[i]));
	}
}

/* The reader's one line quotes the file name: escaped (textsafe.h). */
static void report_error(const struct rec_reader *rd)
{
	char esc[1024];

	fprintf(stderr, "devmemtop report: %s\n",
		textsafe_str(esc, sizeof(esc), rec_reader__error(rd)));
}

static void report_usage(void)
{
	printf("Usage: devmemtop report [--no-events | --json] FILE\n"
	       "       devmemtop report FILE --html OUT [--baseline BASE]\n\n"
	       "Print a recording made by 'devmemtop record': header, metric\n"
	       "availability, events, pool and binding tables and histograms.\n"
	       "--json prints every snapshot instead, one JSON object a line, in\n"
	       "the schema of 'devmemtop --json' (docs/json-schema.md).\n"
	       "--html OUT writes one self-contained HTML page (facts, time series,\n"
	       "every histogram as bars); --baseline BASE overlays another recording.\n"
	       "Exits 1 when the file is damaged (after printing what it could read).\n\n"
	       "Full manual: man devmemtop (devmemtop(8)); docs/gate.md.\n");
}

/* 0 parsed, 1 help printed, 2 usage error (said on stderr). */
static int parse_report_args(int argc, char **argv, struct report_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			report_usage();
			return 1;
		} else if (!strcmp(argv[i], "--no-events")) {
			a->quiet_events = true;
		} else if (!strcmp(argv[i], "--json")) {
			a->json = true;
		} else if (!strcmp(argv[i], "--html") || !strcmp(argv[i], "--baseline")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "devmemtop report: %s needs a file\n", argv[i]);
				return 2;
			}
			if (!strcmp(argv[i], "--html"))
				a->html = argv[++i];
			else
				a->baseline = argv[++i];
		} else if (argv[i][0] == '-' || a->path) {
			fprintf(stderr, "devmemtop report: unexpected argument '%s' "
				"(usage: devmemtop report [--no-events | --json] FILE)\n", argv[i]);
			return 2;
		} else {
			a->path = argv[i];
		}
	}
	if (!a->path) {
		fprintf(stderr, "devmemtop report: which recording? (usage: devmemtop report FILE)\n");
		return 2;
	}
	return 0;
}

/* report --json: one snapshot a line. 0 or -ENOMEM; a failed write stops it. */
static int print_json(struct rec_item *it)
{
	struct json_object *o = json_snapshot(it->snap);
	const char *str;

	snapshot__free(it->snap);
	if (!o)
		return -ENOMEM;
	str = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	/*
	 * out_write() keeps a failed write's errno for main()'s one line: a
	 * line longer than stdio's buffer is written past it, and no later
	 * flush knows why it failed (it said Input/output error on a full disk)
	 */
	if (!out_write(stdout, str, strlen(str)))
		out_write(stdout, "\n", 1);
	json_object_put(o);
	return 0;
}

static int add_snapshot(struct report *r, const struct dmt_snapshot *s)
{
	int err;

	if (!r->n_snaps) {
		r->first_ts = s->ts_ns;
		r->drops_first = s->ringbuf_drops;
	}
	err = objrun__add(&r->run, s);
	r->tokens_known = s->avail[DMT_M_BIND_HELD_BY_SOCKETS].available;
	r->tok_avail[0] = s->avail[DMT_M_RECVMSG_TOKENS].available;
	r->tok_avail[1] = s->avail[DMT_M_DONTNEED_COST].available;
	r->last_ts = s->ts_ns;
	r->drops_last = s->ringbuf_drops;
	r->map_full = s->map_full;
	r->glob = *s;
	r->glob.pools = NULL;
	r->glob.n_pools = 0;
	r->glob.bindings = NULL;
	r->glob.n_bindings = 0;
	r->glob.holders = NULL;
	r->glob.n_holders = 0;
	r->glob.progs = NULL;
	r->glob.n_progs = 0;
	r->n_snaps++;
	return err;
}

/* Every frame of the recording; returns the reader's status, *err -errno. */
static int read_all(struct rec_reader *rd, struct report *r, const struct report_args *a,
		    int *err)
{
	bool printed_hdr = false;
	struct rec_item it;
	int ret = 0;

	while (!*err && (ret = rec_reader__next(rd, &it)) > 0) {
		if (a->json) {
			if (it.type == REC_SNAPSHOT && (*err = print_json(&it)) == 0 &&
			    ferror(stdout))
				break;	/* main() says why */
			continue;
		}
		switch (it.type) {
		case REC_EVENT:
			r->n_events++;
			if (it.ev.type < ARRAY_SIZE(r->ev_by_type))
				r->ev_by_type[it.ev.type]++;
			if (a->quiet_events)
				break;
			if (!printed_hdr) {
				printf("\nevents:\n");
				printed_hdr = true;
			}
			print_event(r, &it.ev);
			break;
		case REC_SNAPSHOT:
			*err = add_snapshot(r, it.snap);
			snapshot__free(it.snap);
			break;
		case REC_END:
			r->have_end = true;
			r->end = it.end;
			break;
		default:
			break;
		}
	}
	return *err ? 0 : ret;
}

static void print_end(const struct report *r)
{
	static const char *const why[] = { "duration elapsed", "command exited",
					   "signal", "error (command did not start or collection failed)" };

	printf("\nend: %s", why[r->end.reason]);
	if (r->end.exit_status != -1) {
		char st[96];

		run__describe_status(r->end.exit_status, st, sizeof(st));
		printf(" (command %s)", st);
	}
	printf("; writer counted %llu snapshots, %llu events\n",
	       (unsigned long long)r->end.n_snapshots, (unsigned long long)r->end.n_events);
	if (r->end.has_cpu)
		printf("command CPU: %.3fs user, %.3fs system\n", r->end.cpu_user_ns / 1e9,
		       r->end.cpu_sys_ns / 1e9);
	if (r->end.n_snapshots != r->n_snaps || r->end.n_events != r->n_events)
		printf("warning: read %llu snapshots and %llu events, the writer counted "
		       "differently\n", (unsigned long long)r->n_snaps,
		       (unsigned long long)r->n_events);
}

int cmd_report(int argc, char **argv)
{
	const struct rec_meta *m;
	struct report r = {};
	struct report_args a = {};
	struct rec_reader *rd;
	int ret, err = 0;

	ret = parse_report_args(argc, argv, &a);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (a.html || a.baseline)
		return html_report__cmd(a.path, a.baseline, a.html, a.json || a.quiet_events);
	rd = rec_reader__open(a.path);
	if (!rd) {
		char esc[1024];

		fprintf(stderr, "devmemtop report: cannot open %s: %s\n",
			textsafe_str(esc, sizeof(esc), a.path), strerror(errno));
		return 2;
	}
	m = rec_reader__meta(rd);
	if (!m) {
		report_error(rd);
		rec_reader__free(rd);
		return 1;
	}
	if (!a.json)
		print_meta(a.path, m);
	r.start_mono = m->start_mono_ns;
	ret = read_all(rd, &r, &a, &err);
	if (!a.json)
		print_tables(&r);
	if (!a.json && r.have_end)
		print_end(&r);
	out_flush(stdout);	/* keeps the reason of a failed write for main() */
	objrun__fini(&r.run);
	if (err)
		fprintf(stderr, "devmemtop report: %s\n", strerror(-err));
	else if (ret < 0)
		report_error(rd);
	rec_reader__free(rd);
	return err ? 2 : ret < 0 ? 1 : 0;
}
