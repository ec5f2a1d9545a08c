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
#include "objtrack.h"
#include "outstream.h"
#include "record.h"
#include "runner.h"
#include "textsafe.h"
#include "util.h"

struct pool_track {
	struct dmt_pool_snap first, last;
	bool in_first;
};

struct bind_track {
	struct dmt_binding_snap first, last;
	bool in_first;
	int64_t max_held_tokens, max_held_niovs;	/* -1: never known */
};

/* A process holding frag tokens of a binding, at its peak in the recording. */
struct holder_track {
	uint32_t pid, binding_id;
	char comm[16];
	uint64_t tokens, niovs, oldest_age_ns;
};

/*
 * The tables hold at most this many pools and bindings: a recording may
 * list any number over time (a crafted one, millions), and each row costs
 * two snapshots of the object. Beyond, objects are counted, not shown.
 */
#define REPORT_MAX_POOLS	16384
#define REPORT_MAX_BINDINGS	1024

struct report {
	uint64_t pools_over, binds_over;	/* records of objects past the caps */
	struct pool_track *pools;	/* indexed like pool_ids */
	size_t n_pools, cap_pools;
	struct bind_track *binds;	/* indexed like bind_ids */
	size_t n_binds, cap_binds;
	struct objtrack pool_ids, bind_ids;	/* the identity gate --from uses too */
	struct holder_track *holders;
	size_t n_holders;
	bool tokens_known;		/* binding_held_by_sockets available at the end */
	uint64_t n_snaps, n_events, ev_by_type[16];
	uint64_t first_ts, last_ts, start_mono;
	uint64_t drops_first, drops_last, map_full;
	bool have_end;
	struct rec_end end;
};

/* Room for index i in an array of n elements of size sz. */
static int grow(void **arr, size_t *cap, size_t i, size_t sz)
{
	size_t ncap;
	void *n;

	if (i < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	n = realloc(*arr, ncap * sz);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int track_pool(struct report *r, const struct dmt_pool_snap *p, bool first_snap)
{
	bool created;
	int i = objtrack__pool(&r->pool_ids, p, &created);

	if (i == -E2BIG) {	/* past the table's cap: counted, not shown */
		r->pools_over++;
		return 0;
	}
	if (i < 0 || grow((void **)&r->pools, &r->cap_pools, i, sizeof(*r->pools)))
		return -ENOMEM;
	if (created) {
		r->pools[i].first = *p;
		r->pools[i].last = *p;
		r->pools[i].in_first = first_snap;
		r->n_pools = i + 1;
	} else {
		objtrack_pool_update(&r->pools[i].last, p);
	}
	return 0;
}

/* Per (pid, binding): the most tokens its sockets held at once. */
static int track_holders(struct report *r, const struct dmt_snapshot *s)
{
	for (size_t i = 0; i < s->n_holders; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];
		struct holder_track *t = NULL;
		uint64_t tok = 0, niovs = 0, age = 0;

		for (size_t k = 0; k < r->n_holders; k++)
			if (r->holders[k].pid == h->pid &&
			    r->holders[k].binding_id == h->binding_id)
				t = &r->holders[k];
		if (!t) {
			void *n = realloc(r->holders, (r->n_holders + 1) * sizeof(*r->holders));

			if (!n)
				return -ENOMEM;
			r->holders = n;
			t = &r->holders[r->n_holders++];
			memset(t, 0, sizeof(*t));
			t->pid = h->pid;
			t->binding_id = h->binding_id;
			memcpy(t->comm, h->comm, sizeof(t->comm));
		}
		/* this snapshot's sockets of that process on that binding */
		for (size_t k = 0; k < s->n_holders; k++) {
			if (s->holders[k].pid != h->pid ||
			    s->holders[k].binding_id != h->binding_id)
				continue;
			tok += s->holders[k].tokens;
			niovs += s->holders[k].niovs;
			if (s->holders[k].oldest_age_ns > age)
				age = s->holders[k].oldest_age_ns;
		}
		if (tok > t->tokens) {
			t->tokens = tok;
			t->niovs = niovs;
		}
		if (age > t->oldest_age_ns)
			t->oldest_age_ns = age;
	}
	return 0;
}

static int track_binding(struct report *r, const struct dmt_binding_snap *b, bool first_snap)
{
	bool created;
	int i = objtrack__binding(&r->bind_ids, b, &created);

	if (i == -E2BIG) {	/* past the table's cap: counted, not shown */
		r->binds_over++;
		return 0;
	}
	if (i < 0 || grow((void **)&r->binds, &r->cap_binds, i, sizeof(*r->binds)))
		return -ENOMEM;
	if (created) {
		r->binds[i].first = *b;
		r->binds[i].last = *b;
		r->binds[i].in_first = first_snap;
		r->binds[i].max_held_tokens = r->binds[i].max_held_niovs = -1;
		r->n_binds = i + 1;
	} else {
		objtrack_binding_update(&r->binds[i].last, b);
	}
	if (b->held_tokens > r->binds[i].max_held_tokens)
		r->binds[i].max_held_tokens = b->held_tokens;
	if (b->held_by_sockets > r->binds[i].max_held_niovs)
		r->binds[i].max_held_niovs = b->held_by_sockets;
	return 0;
}

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

static void print_log2(const char *title, const struct hist_log2 *h)
{
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
	printf("    %s: count %llu, avg %.0f ns, p50 <= %llu ns, p99 <= %llu ns\n", title,
	       (unsigned long long)h->count, (double)h->sum / h->count,
	       (unsigned long long)q50, (unsigned long long)q99);
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

/* What a counter did since first: never a wrapped negative difference. */
static uint64_t since(uint64_t last, uint64_t first)
{
	return last >= first ? last - first : last;
}

static void print_tables(const struct report *r)
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

	if (r->pools_over || r->binds_over)
		printf("not shown: %llu pool and %llu binding records of objects past the first "
		       "%d pools and %d bindings\n", (unsigned long long)r->pools_over,
		       (unsigned long long)r->binds_over, REPORT_MAX_POOLS, REPORT_MAX_BINDINGS);
	printf("\npools (%zu):\n", r->n_pools);
	printf("  %-6s %-16s %-8s %-9s %12s %12s %10s %8s %6s %6s %6s\n", "ID", "IFACE", "KIND",
	       "STATE", "HOLDS", "RELEASES", "INFLIGHT", "REFILLS", "P50", "P99", "MAX");
	for (size_t i = 0; i < r->n_pools; i++) {
		const struct pool_track *t = &r->pools[i];
		struct hist_batch h = t->last.refill;
		uint64_t holds = t->last.holds, rel = t->last.releases, q50 = 0, q99 = 0;
		char ifc[80];

		if (t->in_first) {
			holds = since(holds, t->first.holds);
			rel = since(rel, t->first.releases);
			if (hist_batch_sub(&h, &t->last.refill, &t->first.refill))
				h = t->last.refill;
		}
		hist_batch_quantile(&h, 0.5, &q50);
		hist_batch_quantile(&h, 0.99, &q99);
		/* names come from the file (and the kernel before it): escaped */
		textsafe_col(ifc, sizeof(ifc), t->last.ifname[0] ? t->last.ifname : "?", 16);
		printf("  %-6u %s %-8s %-9s %12llu %12llu %10lld %8llu %6llu %6llu %6llu\n",
		       t->last.id, ifc,
		       dmt_kind_name(t->last.kind), dmt_pool_state_name(t->last.state),
		       (unsigned long long)holds, (unsigned long long)rel,
		       (long long)t->last.inflight, (unsigned long long)h.count,
		       (unsigned long long)q50, (unsigned long long)q99,
		       (unsigned long long)hist_batch_max(&h));
	}
	printf("\nbindings (%zu):\n", r->n_binds);
	if (r->n_binds)
		printf("  %-6s %-16s %-9s %10s %8s %10s %8s %10s %10s %10s\n", "ID", "IFACE",
		       "LAYOUT", "NIOVS", "OCC%", "ALLOCS", "FAILS", "OUT@UNBIND", "LEAKED",
		       "LIFETIME");
	for (size_t i = 0; i < r->n_binds; i++) {
		const struct bind_track *t = &r->binds[i];
		uint64_t allocs = since(t->last.alloc_niovs, t->in_first ? t->first.alloc_niovs : 0);
		uint64_t fails = since(t->last.alloc_fail, t->in_first ? t->first.alloc_fail : 0);
		char occ[16] = "?", unb[24] = "-", leak[24] = "-", niovs[24] = "?", life[24] = "-";
		/* created -> freed, or -> the end of the recording ("+": still bound) */
		uint64_t end = t->last.freed_ns ? t->last.freed_ns : r->last_ts;

		if (t->last.created_ns && end >= t->last.created_ns)
			snprintf(life, sizeof(life), "%.1fs%s", (end - t->last.created_ns) / 1e9,
				 t->last.freed_ns ? "" : "+");
		if (t->last.total_niovs >= 0)
			snprintf(niovs, sizeof(niovs), "%lld", (long long)t->last.total_niovs);
		if (t->last.occupancy >= 0)
			snprintf(occ, sizeof(occ), "%.1f", t->last.occupancy * 100);
		if (t->last.out_at_unbind >= 0)
			snprintf(unb, sizeof(unb), "%lld", (long long)t->last.out_at_unbind);
		if (t->last.out_at_free >= 0)
			snprintf(leak, sizeof(leak), "%lld", (long long)t->last.out_at_free);
		printf("  %-6u %-16s %-9s %10s %8s %10llu %8llu %10s %10s %10s\n", t->last.id,
		       t->last.ifname[0] ? t->last.ifname : "?", t->last.layout, niovs, occ,
		       (unsigned long long)allocs, (unsigned long long)fails, unb, leak, life);
	}

	if (r->tokens_known) {
		printf("\nfrag tokens (bindings):\n");
		printf("  %-6s %10s %10s %10s %12s %12s\n", "ID", "HANDED", "RETURNED", "RELEASED",
		       "MAX.TOKENS", "MAX.NIOVS");
		for (size_t i = 0; i < r->n_binds; i++) {
			const struct bind_track *t = &r->binds[i];
			char mt[24] = "?", mn[24] = "?";

			if (t->max_held_tokens >= 0)
				snprintf(mt, sizeof(mt), "%lld", (long long)t->max_held_tokens);
			if (t->max_held_niovs >= 0)
				snprintf(mn, sizeof(mn), "%lld", (long long)t->max_held_niovs);
			printf("  %-6u %10llu %10llu %10llu %12s %12s%s\n", t->last.id,
			       (unsigned long long)since(t->last.tok_handed,
							 t->in_first ? t->first.tok_handed : 0),
			       (unsigned long long)since(t->last.tok_returned,
							 t->in_first ? t->first.tok_returned : 0),
			       (unsigned long long)since(t->last.tok_released,
							 t->in_first ? t->first.tok_released : 0),
			       mt, mn, t->last.held_why ? "  (held unknown: " : "");
			if (t->last.held_why)
				printf("%s)\n", dmt_held_why_text(t->last.held_why));
		}
		printf("\ntoken holders (peak per process and binding, %zu):\n", r->n_holders);
		if (r->n_holders)
			printf("  %-8s %-16s %6s %10s %10s %10s\n", "PID", "COMM", "BIND",
			       "MAX.TOKENS", "NIOVS", "OLDEST");
		for (size_t i = 0; i < r->n_holders; i++) {
			const struct holder_track *h = &r->holders[i];
			char cm[96];

			/* from the file, and any process can name itself anything */
			textsafe_col(cm, sizeof(cm), h->comm[0] ? h->comm : "?", 16);
			printf("  %-8u %s %6u %10llu %10llu %9.2fs\n", h->pid, cm, h->binding_id,
			       (unsigned long long)h->tokens, (unsigned long long)h->niovs,
			       h->oldest_age_ns / 1e9);
		}
	}

	printf("\nhistograms:\n");
	for (size_t i = 0; i < r->n_pools; i++) {
		const struct pool_track *t = &r->pools[i];
		struct hist_batch h = t->last.refill;
		char ifc[80];

		if (t->in_first && hist_batch_sub(&h, &t->last.refill, &t->first.refill))
			h = t->last.refill;
		if (!h.count)
			continue;
		printf("  pool %u (%s):\n", t->last.id,
		       textsafe_str(ifc, sizeof(ifc), t->last.ifname[0] ? t->last.ifname : "?"));
		print_batch(&h);
	}
	for (size_t i = 0; i < r->n_binds; i++) {
		const struct bind_track *t = &r->binds[i];
		struct hist_log2 a = t->last.alloc_lat_ns, n = t->last.alloc_lat_niov_ns,
				 f = t->last.free_lat_ns;
		char ifc[80];

		if (t->in_first) {
			if (hist_log2_sub(&a, &t->last.alloc_lat_ns, &t->first.alloc_lat_ns))
				a = t->last.alloc_lat_ns;
			if (hist_log2_sub(&n, &t->last.alloc_lat_niov_ns, &t->first.alloc_lat_niov_ns))
				n = t->last.alloc_lat_niov_ns;
			if (hist_log2_sub(&f, &t->last.free_lat_ns, &t->first.free_lat_ns))
				f = t->last.free_lat_ns;
		}
		if (!a.count && !n.count && !f.count)
			continue;
		printf("  binding %u (%s):\n", t->last.id,
		       textsafe_str(ifc, sizeof(ifc), t->last.ifname));
		print_log2("alloc latency", &a);
		print_log2("alloc latency per niov", &n);
		print_log2("free latency", &f);
	}
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

int cmd_report(int argc, char **argv)
{
	const struct rec_meta *m;
	struct report r = { .pool_ids.max = REPORT_MAX_POOLS, .bind_ids.max = REPORT_MAX_BINDINGS };
	struct rec_reader *rd;
	bool quiet_events = false, printed_hdr = false, json = false;
	struct rec_item it;
	const char *path = NULL, *html = NULL, *baseline = NULL;
	int ret, err = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
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
			return 0;
		} else if (!strcmp(argv[i], "--no-events")) {
			quiet_events = true;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--html") || !strcmp(argv[i], "--baseline")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "devmemtop report: %s needs a file\n", argv[i]);
				return 2;
			}
			*(argv[i][2] == 'h' ? &html : &baseline) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-' || path) {
			fprintf(stderr, "devmemtop report: unexpected argument '%s' "
				"(usage: devmemtop report [--no-events | --json] FILE)\n", argv[i]);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "devmemtop report: which recording? (usage: devmemtop report FILE)\n");
		return 2;
	}
	if (html || baseline)
		return html_report__cmd(path, baseline, html, json || quiet_events);
	rd = rec_reader__open(path);
	if (!rd) {
		char esc[1024];

		fprintf(stderr, "devmemtop report: cannot open %s: %s\n",
			textsafe_str(esc, sizeof(esc), path), strerror(errno));
		return 2;
	}
	m = rec_reader__meta(rd);
	if (!m) {
		report_error(rd);
		rec_reader__free(rd);
		return 1;
	}
	if (!json)
		print_meta(path, m);
	r.start_mono = m->start_mono_ns;
	while ((ret = rec_reader__next(rd, &it)) > 0) {
		if (json) {
			if (it.type == REC_SNAPSHOT) {
				struct json_object *o = json_snapshot(it.snap);

				snapshot__free(it.snap);
				if (!o) {
					err = -ENOMEM;
					break;
				}
				puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
				json_object_put(o);
				if (ferror(stdout))
					break;	/* main() says why */
			}
			continue;
		}
		switch (it.type) {
		case REC_EVENT:
			r.n_events++;
			if (it.ev.type < ARRAY_SIZE(r.ev_by_type))
				r.ev_by_type[it.ev.type]++;
			if (quiet_events)
				break;
			if (!printed_hdr) {
				printf("\nevents:\n");
				printed_hdr = true;
			}
			print_event(&r, &it.ev);
			break;
		case REC_SNAPSHOT:
			if (!r.n_snaps) {
				r.first_ts = it.snap->ts_ns;
				r.drops_first = it.snap->ringbuf_drops;
			}
			for (size_t i = 0; !err && i < it.snap->n_pools; i++)
				err = track_pool(&r, &it.snap->pools[i], !r.n_snaps);
			for (size_t i = 0; !err && i < it.snap->n_bindings; i++)
				err = track_binding(&r, &it.snap->bindings[i], !r.n_snaps);
			if (!err)
				err = track_holders(&r, it.snap);
			r.tokens_known = it.snap->avail[DMT_M_BIND_HELD_BY_SOCKETS].available;
			r.last_ts = it.snap->ts_ns;
			r.drops_last = it.snap->ringbuf_drops;
			r.map_full = it.snap->map_full;
			r.n_snaps++;
			snapshot__free(it.snap);
			break;
		case REC_END:
			r.have_end = true;
			r.end = it.end;
			break;
		default:
			break;
		}
		if (err)
			break;
	}
	if (!json)
		print_tables(&r);
	if (!json && r.have_end) {
		static const char *const why[] = { "duration elapsed", "command exited",
						   "signal", "error (command did not start or collection failed)" };

		printf("\nend: %s", why[r.end.reason]);
		if (r.end.exit_status != -1) {
			char st[96];

			run__describe_status(r.end.exit_status, st, sizeof(st));
			printf(" (command %s)", st);
		}
		printf("; writer counted %llu snapshots, %llu events\n",
		       (unsigned long long)r.end.n_snapshots, (unsigned long long)r.end.n_events);
		if (r.end.n_snapshots != r.n_snaps || r.end.n_events != r.n_events)
			printf("warning: read %llu snapshots and %llu events, the writer counted "
			       "differently\n", (unsigned long long)r.n_snaps,
			       (unsigned long long)r.n_events);
	}
	out_flush(stdout);	/* keeps the reason of a failed write for main() */
	free(r.pools);
	free(r.binds);
	free(r.holders);
	objtrack__fini(&r.pool_ids);
	objtrack__fini(&r.bind_ids);
	if (err) {
		fprintf(stderr, "devmemtop report: %s\n", strerror(-err));
		rec_reader__free(rd);
		return 2;
	}
	if (ret < 0) {
		report_error(rd);
		rec_reader__free(rd);
		return 1;
	}
	rec_reader__free(rd);
	return 0;
}
