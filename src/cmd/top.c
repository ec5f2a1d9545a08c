// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop [top]: the live view (ncurses), plus -b plain text per interval
 * (like top -b) and --json (one object per interval, json_out.h schema).
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
#include "json_out.h"
#include "metrics.h"
#include "outstream.h"
#include "textsafe.h"
#include "top.h"
#include "top_detail.h"
#include "util.h"
#include "collector/collector.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

static const char *const sort_names[] = {
	[TOP_SORT_HOLDS] = "holds", [TOP_SORT_INFLIGHT] = "inflight", [TOP_SORT_ID] = "id",
	[TOP_SORT_BATCH] = "batch", [TOP_SORT_IFACE] = "iface",
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: devmemtop [top] [OPTIONS]\n"
"Live view of page pools and devmem TCP dmabuf bindings.\n\n"
"  -i, --interval DUR   refresh interval (default 1s; e.g. 500ms, 2s)\n"
"  -n, --count N        exit after N intervals\n"
"  -b, --batch          plain text per interval, no terminal UI\n"
"  -j, --json           one JSON object per interval (schema devmemtop.snapshot/1)\n"
"  -I, --iface NAME     only pools and bindings of this interface (name or ifindex)\n"
"  -B, --binding ID     only this dmabuf binding and its pools\n"
"  -s, --sort KEY       holds (default), inflight, id, batch, iface\n"
"  -m, --mode MODE      devmem (default): no program per regular page, every\n"
"                       devmem figure exact; full: per-page hooks on every pool\n"
"                       (fentry, tp: the full mode capped); light: no per-page,\n"
"                       per-niov or per-token hook (README, mode table)\n"
"      --sampling W/P   devmem and light modes: per-page hooks on for W every P\n"
"                       (default 120ms/60s)\n"
"      --pools WHICH    old name: devmem is -m devmem, all is -m full\n"
"      --no-netlink     do not query the netdev netlink family\n"
"      --bpf-stats      enable kernel BPF run-time stats while running\n"
"  -v, --verbose        print every probe result (-vv: libbpf warnings)\n"
"  -h, --help           this help\n\n"
"Keys in the live view: q quit, s next sort key, 1-5 sort by holds/inflight/id/\n"
"batch/iface, p pause, h or ? help.\n\n"
"Full manual: man devmemtop (devmemtop(8)).\n");
}

static int parse_sort(const char *s, enum top_sort *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(sort_names); i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* One option of the live view (getopt's c and optarg). */
static int top_opt(int c, char **argv, struct top_opts *o, char *err, size_t errlen)
{
	uint64_t v;

	switch (c) {
	case 'i':
		if (parse_interval_ns(optarg, &o->interval_ns)) {
			snprintf(err, errlen, "bad interval '%s': want " DMT_INTERVAL_RANGE
				 ", e.g. 500ms or 2s", optarg);
			return -EINVAL;
		}
		break;
	case 'n':
		if (parse_uint(optarg, 1000000000, &v) || !v) {
			snprintf(err, errlen, "bad count '%s': a positive integer", optarg);
			return -EINVAL;
		}
		o->count = v;
		break;
	case 'b':
		o->batch = true;
		break;
	case 'j':
		o->json = true;
		break;
	case 'I':
		if (!*optarg || strlen(optarg) >= DMT_IFNAMSIZ) {
			char esc[64];

			snprintf(err, errlen, "bad interface name '%s'",
				 textsafe_str(esc, sizeof(esc), optarg));
			return -EINVAL;
		}
		snprintf(o->iface, sizeof(o->iface), "%s", optarg);
		break;
	case 'B':
		if (parse_uint(optarg, UINT32_MAX, &v) || !v) {
			snprintf(err, errlen, "bad binding id '%s': a positive integer", optarg);
			return -EINVAL;
		}
		o->binding = v;
		break;
	case 's':
		if (parse_sort(optarg, &o->sort)) {
			snprintf(err, errlen, "bad sort key '%s': holds, inflight, id, batch or iface",
				 optarg);
			return -EINVAL;
		}
		break;
	case 'm':
		if (parse_mode(optarg, true, &o->force_mode)) {
			snprintf(err, errlen, "bad mode '%s': devmem, full, light, fentry or tp",
				 optarg);
			return -EINVAL;
		}
		if (mode_rename_note("--mode", optarg))
			dmt_err("note: %s", mode_rename_note("--mode", optarg));
		break;
	case 'N':
		o->no_netlink = true;
		break;
	case 'W':
		if (parse_sampling(optarg, &o->light_window_ms, &o->light_period_ms)) {
			snprintf(err, errlen, "bad sampling '%s': " DMT_SAMPLING_RANGE,
				 optarg);
			return -EINVAL;
		}
		break;
	case 'P':
		if (parse_pools(optarg, &o->force_mode)) {
			snprintf(err, errlen, "bad --pools '%s': devmem or all", optarg);
			return -EINVAL;
		}
		dmt_err("note: %s", mode_rename_note("--pools", optarg));
		break;
	case 'S':
		o->bpf_stats = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case 'h':
		o->help = true;
		break;
	case ':':
		snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
		return -EINVAL;
	default:
		snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		return -EINVAL;
	}
	return 0;
}

int top_parse_args(int argc, char **argv, struct top_opts *o, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "iface", required_argument, NULL, 'I' },
		{ "binding", required_argument, NULL, 'B' },
		{ "sort", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "no-netlink", no_argument, NULL, 'N' },
		{ "bpf-stats", no_argument, NULL, 'S' },
		{ "sampling", required_argument, NULL, 'W' },
		{ "pools", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->interval_ns = 1000000000ULL;
	o->force_mode = DMT_MODE_DEVMEM;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:n:bjI:B:s:m:vh", longopts, NULL)) != -1) {
		ret = top_opt(c, argv, o, err, errlen);
		if (ret || o->help)
			return ret;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (o->batch && o->json) {
		snprintf(err, errlen, "--batch and --json exclude each other");
		return -EINVAL;
	}
	return 0;
}

bool top_pool_match(const struct top_opts *o, const struct dmt_pool_snap *p)
{
	char idx[16];

	if (o->binding && p->binding_id != o->binding)
		return false;
	if (!o->iface[0])
		return true;
	snprintf(idx, sizeof(idx), "%d", p->ifindex);
	return !strcmp(o->iface, p->ifname) || (p->ifindex && !strcmp(o->iface, idx));
}

bool top_binding_match(const struct top_opts *o, const struct dmt_binding_snap *b)
{
	char idx[16];

	if (o->binding && b->id != o->binding)
		return false;
	if (!o->iface[0])
		return true;
	snprintf(idx, sizeof(idx), "%d", b->ifindex);
	return !strcmp(o->iface, b->ifname) || (b->ifindex && !strcmp(o->iface, idx));
}

/* The live view's last few notable events (pool gone, binding freed...). */
#define TOP_EVENTS	6

struct ev_log {
	char line[TOP_EVENTS][176];
	uint64_t repeat[TOP_EVENTS];
	unsigned int n;		/* lines in use, newest last */
};

void top_event_format(const struct dmt_event *e, char *buf, size_t len)
{
	switch (e->type) {
	case DMT_EV_POOL_NEW:
		snprintf(buf, len, "pool %u: first seen (ifindex %d)", e->id, e->ifindex);
		break;
	case DMT_EV_POOL_RELEASE:
		if (e->a)
			snprintf(buf, len, "pool %u: destroyed with %lld in flight (zombie)", e->id,
				 (long long)e->a);
		else
			snprintf(buf, len, "pool %u: destroyed, nothing in flight", e->id);
		break;
	case DMT_EV_POOL_NID:
		snprintf(buf, len, "pool %u: NUMA node -> %lld", e->id, (long long)e->a);
		break;
	case DMT_EV_BIND_CREATE:
		snprintf(buf, len, "binding %u: created on ifindex %d, %lld niovs", e->id,
			 e->ifindex, (long long)e->a);
		break;
	case DMT_EV_BIND_UNBIND:
		snprintf(buf, len, "binding %u: unbound with %lld niovs outstanding", e->id,
			 (long long)e->a);
		break;
	case DMT_EV_BIND_FREE:
		snprintf(buf, len, "binding %u: freed, %lld of %lld niovs leaked", e->id,
			 (long long)e->a, (long long)e->b);
		break;
	case DMT_EV_ALLOC_FAIL:
		snprintf(buf, len, "binding %u: allocation failed (no free niov)", e->id);
		break;
	default:
		snprintf(buf, len, "event %u on %u", e->type, e->id);
		break;
	}
}

static int ev_log_add(void *ctx, const struct dmt_event *e)
{
	struct ev_log *l = ctx;
	char buf[160], ts[16];
	time_t now = time(NULL);
	struct tm tm;

	if (e->type == DMT_EV_POOL_NEW)
		return 0;	/* every pool shows up in the table anyway */
	top_event_format(e, buf, sizeof(buf));
	/* the same event again (a zombie's retries, a run of failures): count it */
	if (l->n && !strcmp(l->line[l->n - 1] + 9, buf)) {
		l->repeat[l->n - 1]++;
		return 0;
	}
	if (l->n == TOP_EVENTS) {
		memmove(l->line, l->line + 1, sizeof(l->line[0]) * (TOP_EVENTS - 1));
		memmove(l->repeat, l->repeat + 1, sizeof(l->repeat[0]) * (TOP_EVENTS - 1));
		l->n--;
	}
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	snprintf(l->line[l->n], sizeof(l->line[0]), "%s %s", ts, buf);
	l->repeat[l->n] = 1;
	l->n++;
	return 0;
}

static enum top_sort g_sort;

static uint64_t batch_p50(const struct dmt_pool_snap *p)
{
	uint64_t v = 0;

	hist_batch_quantile(&p->refill, 0.5, &v);
	return v;
}

static int cmp_pool(const void *a, const void *b)
{
	const struct dmt_pool_snap *x = *(const struct dmt_pool_snap *const *)a;
	const struct dmt_pool_snap *y = *(const struct dmt_pool_snap *const *)b;
	int r = 0;

	switch (g_sort) {
	case TOP_SORT_HOLDS:
		r = (y->hold_rate > x->hold_rate) - (y->hold_rate < x->hold_rate);
		break;
	case TOP_SORT_INFLIGHT:
		r = (y->inflight > x->inflight) - (y->inflight < x->inflight);
		break;
	case TOP_SORT_BATCH:
		r = (batch_p50(y) > batch_p50(x)) - (batch_p50(y) < batch_p50(x));
		break;
	case TOP_SORT_IFACE:
		r = strcmp(x->ifname, y->ifname);
		break;
	case TOP_SORT_ID:
		break;
	}
	return r ? r : (x->id > y->id) - (x->id < y->id);
}

/* Pools matching the filters, sorted; returns the count. */
static size_t select_pools(const struct top_opts *o, const struct dmt_snapshot *s,
			   const struct dmt_pool_snap **out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_pools; i++)
		if (top_pool_match(o, &s->pools[i]))
			out[n++] = &s->pools[i];
	g_sort = o->sort;
	if (n)
		qsort(out, n, sizeof(*out), cmp_pool);
	return n;
}

static void fmt_ns(char *buf, size_t len, const struct hist_log2 *h, double q, bool avail)
{
	uint64_t v;

	if (!avail) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (hist_log2_quantile(h, q, &v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (v < 10000)
		snprintf(buf, len, "%lluns", (unsigned long long)v);
	else if (v < 10000000)
		snprintf(buf, len, "%.1fus", v / 1e3);
	else
		snprintf(buf, len, "%.1fms", v / 1e6);
}

static void fmt_count(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%lld", (long long)v);
}

static void fmt_bytes(char *buf, size_t len, uint64_t v)
{
	if (!v)
		snprintf(buf, len, "-");
	else if (v >= (1ULL << 30) && !(v % (1ULL << 30)))
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v >= (1ULL << 20))
		snprintf(buf, len, "%.0fM", v / 1048576.0);
	else
		snprintf(buf, len, "%.0fK", v / 1024.0);
}

/*
 * The view's lines, shared by the terminal UI and -b: each line is
 * rendered once into text and then either printed or drawn.
 */
struct lines {
	char **v;
	size_t n;
	int header_lines;	/* lines before the tables */
	struct top_sel *rows;	/* selectable rows, in order, and their lines */
	size_t *row_line;
	size_t n_rows;
};

/* The line just added is a binding's or a pool's row (selectable). */
static void lines_row(struct lines *l, enum top_sel_kind kind, uint32_t id, uint64_t addr)
{
	struct top_sel *nr = realloc(l->rows, (l->n_rows + 1) * sizeof(*nr));
	size_t *nl;

	if (nr)
		l->rows = nr;
	nl = realloc(l->row_line, (l->n_rows + 1) * sizeof(*nl));
	if (nl)
		l->row_line = nl;
	if (!nr || !nl || !l->n)
		return;
	l->rows[l->n_rows] = (struct top_sel){ kind, id, addr };
	l->row_line[l->n_rows++] = l->n - 1;
}

static void lines_add(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void lines_add(struct lines *l, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	char **nv;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv)
		return;
	l->v = nv;
	l->v[l->n] = strdup(buf);
	if (l->v[l->n])
		l->n++;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->rows);
	free(l->row_line);
	memset(l, 0, sizeof(*l));
}

/* "a, b (reason); c (reason)": unavailable metrics grouped by reason. */
void top_unavailable_summary(const struct dmt_snapshot *s, char *buf, size_t len)
{
	bool done[DMT_M__COUNT] = {};
	size_t off = 0;

	buf[0] = '\0';
	for (int m = 0; m < DMT_M__COUNT && off < len; m++) {
		if (s->avail[m].available || done[m])
			continue;
		off += snprintf(buf + off, len - off, "%s%s", off ? "; " : "", dmt_metric_name(m));
		for (int k = m + 1; k < DMT_M__COUNT && off < len; k++) {
			if (s->avail[k].available || done[k] ||
			    strcmp(s->avail[k].reason, s->avail[m].reason))
				continue;
			done[k] = true;
			off += snprintf(buf + off, len - off, ", %s", dmt_metric_name(k));
		}
		if (off < len)
			off += snprintf(buf + off, len - off, " (%s)", s->avail[m].reason);
	}
}

/* "pool_refill_batch (page_pool_state_hold 20ms every 10000ms)": sampled metrics. */
void top_sampled_summary(const struct dmt_snapshot *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int m = 0; m < DMT_M__COUNT && off < len; m++) {
		if (!s->avail[m].available || !s->avail[m].sampled)
			continue;
		off += snprintf(buf + off, len - off, "%s%s (%s)", off ? "; " : "",
				dmt_metric_name(m), s->avail[m].source);
	}
}

static double binding_alloc_rate(const struct dmt_binding_snap *b, const struct dmt_snapshot *prev,
				 double dt)
{
	if (!prev || dt <= 0)
		return 0;
	for (size_t i = 0; i < prev->n_bindings; i++)
		if (prev->bindings[i].id == b->id && b->alloc_niovs >= prev->bindings[i].alloc_niovs)
			return (b->alloc_niovs - prev->bindings[i].alloc_niovs) / dt;
	return 0;
}

/* Rows of the holders panel; the rest is one "... N more" line. */
#define TOP_HOLDERS	10

/*
 * Who sits on the niovs: sockets holding frag tokens, most tokens first,
 * and what tokens cost. Only where the token hooks attached (else the
 * "Unavailable:" line says why).
 */
static void render_holders(const struct dmt_snapshot *s, struct lines *l)
{
	const struct dmt_tok_cost *t = &s->tok_cost;
	char a[24], b[24], c[24];

	if (!s->avail[DMT_M_BIND_HELD_BY_SOCKETS].available)
		return;
	lines_add(l, "%s", "");
	lines_add(l, "HOLDERS: %zu socket%s holding frag tokens", s->n_holders,
		  s->n_holders == 1 ? "" : "s");
	if (s->n_holders)
		lines_add(l, "%-8s %-16s %5s %8s %8s %8s %8s %8s %8s  %s", "PID", "COMM", "BIND",
			  "TOKENS", "NIOVS", "OLDEST", "HANDED", "RETURNED", "RELEASED",
			  "POD/CGROUP");
	for (size_t i = 0; i < s->n_holders && i < TOP_HOLDERS; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];
		char cm[96], where[DMT_CGROUP_PATH_MAX], wh[128];

		char hd[24] = "-", rt[24] = "-", rl[24] = "-", tk[24] = "-", nv[24] = "-";
		char pid[16] = "-";	/* unknown: "-", never 0 */

		snprintf(a, sizeof(a), "-");
		if (h->pid)
			snprintf(pid, sizeof(pid), "%u", h->pid);
		if (dmt_snap_holder_history(s)) {	/* light mode: not known */
			snprintf(a, sizeof(a), "%.2fs", h->oldest_age_ns / 1e9);
			snprintf(hd, sizeof(hd), "%llu", (unsigned long long)h->handed);
			snprintf(rt, sizeof(rt), "%llu", (unsigned long long)h->returned);
			snprintf(rl, sizeof(rl), "%llu", (unsigned long long)h->released);
		}
		if (!h->counts_unknown) {	/* light, autorelease off: not known */
			snprintf(tk, sizeof(tk), "%llu", (unsigned long long)h->tokens);
			snprintf(nv, sizeof(nv), "%llu", (unsigned long long)h->niovs);
		}
		/* any process can name itself anything: escaped like ifnames */
		textsafe_col(cm, sizeof(cm), h->comm[0] ? h->comm : "?", 16);
		tokens__holder_where(h, true, where, sizeof(where));
		lines_add(l, "%-8s %s %5u%c%8s %8s %8s %8s %8s %8s  %s", pid,
			  cm, h->binding_id, h->manual ? '*' : ' ', tk, nv, a, hd, rt, rl,
			  textsafe_str(wh, sizeof(wh), where));
	}
	if (s->n_holders > TOP_HOLDERS)
		lines_add(l, "... %zu more", s->n_holders - TOP_HOLDERS);
	for (size_t i = 0; i < s->n_holders && i < TOP_HOLDERS; i++) {
		if (!s->holders[i].manual)
			continue;
		lines_add(l, "%s", "* SO_DEVMEM_AUTORELEASE off: tokens counted per niov of the "
			  "binding, any socket of it may return them");
		break;
	}
	if (s->avail[DMT_M_RECVMSG_TOKENS].available && t->per_recvmsg.count) {
		snprintf(a, sizeof(a), "%.1f", (double)t->per_recvmsg.sum / t->per_recvmsg.count);
		lines_add(l, "tokens/recvmsg: mean %s over %llu calls", a,
			  (unsigned long long)t->per_recvmsg.count);
	}
	if (s->avail[DMT_M_DONTNEED_COST].available && t->per_dontneed.count) {
		snprintf(a, sizeof(a), "%.1f", (double)t->per_dontneed.sum / t->per_dontneed.count);
		fmt_ns(b, sizeof(b), &t->dontneed_ns, 0.5, true);
		fmt_ns(c, sizeof(c), &t->dontneed_ns_token, 0.5, true);
		lines_add(l, "DONTNEED: %llu calls, tokens/call mean %s, latency p50 <=%s, "
			  "per token p50 <=%s", (unsigned long long)t->per_dontneed.count, a, b, c);
	}
}

/*
 * The metric table's columns of the live view's table for one kind of
 * object (rows with .top): their headings when o is NULL, else o's values
 * ("n/a" unavailable: the header's "Unavailable:" line says why; "-"
 * unknown now).
 */
static void top_cols(char *buf, size_t len, enum mdef_obj obj, const void *o,
		     const struct dmt_availability *avail)
{
	size_t off = 0;
	char v[32];

	buf[0] = '\0';
	for (size_t k = 0; k < mdef_count && off < len; k++) {
		const struct mdef *d = &mdefs[k];

		if (!d->top || !mdef_view_col(d, obj))
			continue;
		off += snprintf(buf + off, len - off, " %*s", mdef_col_width(d, 5),
				o ? mdef_fmt(d, o, avail, false, v, sizeof(v)) : d->col);
	}
}

/* "Netdev: RX queues bound 1, ...": the metric table's global rows people see. */
static void render_netdev(const struct dmt_snapshot *s, struct lines *l)
{
	char buf[256], v[32];
	size_t off = 0;

	for (size_t k = 0; k < mdef_count && off < sizeof(buf); k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_view_col(d, MO_GLOBAL))
			continue;
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s %s", off ? ", " : "Netdev: ",
				d->title, mdef_fmt(d, s, s->avail, true, v, sizeof(v)));
	}
	if (off)
		lines_add(l, "%s", buf);
}

/* The header: totals over what the filter selects, mode, what is missing. */
static size_t render_header(const struct top_opts *o, const struct dmt_snapshot *s,
			    const struct dmt_pool_snap **sel, size_t n_sel, bool paused,
			    struct lines *l)
{
	double hold_rate = 0, rel_rate = 0;
	size_t alive = 0, zombie = 0, nb = 0;
	int64_t inflight = 0;
	char ts[32], unav[1024];
	time_t now = s->wall_ns / 1000000000ULL;
	struct tm tm;

	for (size_t i = 0; i < n_sel; i++) {
		hold_rate += sel[i]->hold_rate;
		rel_rate += sel[i]->release_rate;
		inflight += sel[i]->inflight > 0 ? sel[i]->inflight : 0;
		alive += sel[i]->state == DMT_POOL_ALIVE;
		zombie += sel[i]->state == DMT_POOL_ZOMBIE;
	}
	for (size_t i = 0; i < s->n_bindings; i++)
		nb += top_binding_match(o, &s->bindings[i]);
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);

	lines_add(l, "devmemtop %s - %s  mode: %s  interval %.1fs  sort: %s%s", DEVMEMTOP_VERSION,
		  ts, dmt_mode_name(s->mode), o->interval_ns / 1e9, sort_names[o->sort],
		  paused ? "  [paused]" : "");
	lines_add(l, "Pools: %zu (%zu alive, %zu zombie)  Bindings: %zu  holds/s %.0f  "
		  "releases/s %.0f  inflight %lld  drops %llu",
		  n_sel, alive, zombie, nb, hold_rate, rel_rate, (long long)inflight,
		  (unsigned long long)s->ringbuf_drops);
	render_netdev(s, l);
	top_unavailable_summary(s, unav, sizeof(unav));
	if (unav[0])
		lines_add(l, "Unavailable: %s", unav);
	top_sampled_summary(s, unav, sizeof(unav));
	if (unav[0])
		lines_add(l, "Sampled: %s", unav);
	if (o->iface[0] || o->binding) {
		char bid[24] = "", ifc[4 * DMT_IFNAMSIZ];

		if (o->binding)
			snprintf(bid, sizeof(bid), " binding=%u", o->binding);
		lines_add(l, "Filter:%s%s%s", o->iface[0] ? " iface=" : "",
			  textsafe_str(ifc, sizeof(ifc), o->iface), bid);
	}
	lines_add(l, "%s", "");
	l->header_lines = l->n;
	return nb;
}

static void render_bindings(const struct top_opts *o, const struct dmt_snapshot *s,
			    const struct dmt_snapshot *prev, struct lines *l)
{
	char cols[128];

	top_cols(cols, sizeof(cols), MO_BINDING, NULL, s->avail);
	lines_add(l, "%-5s %-10s %6s %5s %8s %8s %8s %8s %6s%s %9s %6s %8s %8s %8s %6s",
		  "BIND", "IFACE", "SIZE", "NIOV", "TOTAL", "FREE", "INPOOLS", "SOCKETS", "OCC%",
		  cols, "ALLOC/s", "FAILS", "ALAT.p50", "ALAT.p99", "FLAT.p99", "LEAK");
	for (size_t i = 0; i < s->n_bindings; i++) {
		const struct dmt_binding_snap *b = &s->bindings[i];
		char size[24], niov[24], tot[24], fr[24], inp[24], sock[24], occ[24];
		char a50[24], a99[24], f99[24], leak[24], fails[24], ifc[48], bid[24];
		bool lat = s->avail[DMT_M_BIND_ALLOC_LATENCY].available;

		if (!top_binding_match(o, b))
			continue;
		fmt_bytes(size, sizeof(size), b->dmabuf_size);
		fmt_bytes(niov, sizeof(niov), b->niov_size);
		fmt_count(tot, sizeof(tot), b->total_niovs);
		fmt_count(fr, sizeof(fr), b->free_niovs);
		fmt_count(inp, sizeof(inp), b->in_pools);
		fmt_count(sock, sizeof(sock), b->held_by_sockets);
		if (b->occupancy >= 0)
			snprintf(occ, sizeof(occ), "%.1f", b->occupancy * 100);
		else
			snprintf(occ, sizeof(occ), "n/a");
		fmt_ns(a50, sizeof(a50), &b->alloc_lat_ns, 0.5, lat);
		fmt_ns(a99, sizeof(a99), &b->alloc_lat_ns, 0.99, lat);
		fmt_ns(f99, sizeof(f99), &b->free_lat_ns, 0.99,
		       s->avail[DMT_M_BIND_FREE_LATENCY].available);
		if (s->avail[DMT_M_BIND_ALLOC_FAIL].available)
			snprintf(fails, sizeof(fails), "%llu", (unsigned long long)b->alloc_fail);
		else
			snprintf(fails, sizeof(fails), "n/a");
		fmt_count(leak, sizeof(leak), b->out_at_free >= 0 ? b->out_at_free : b->out_at_unbind);
		/* kernel-supplied: escaped, cut on a character boundary */
		textsafe_col(ifc, sizeof(ifc), b->ifname[0] ? b->ifname : "?", 10);
		top_cols(cols, sizeof(cols), MO_BINDING, b, s->avail);
		/* a TX binding (bind-tx) says so: its RX columns read n/a */
		snprintf(bid, sizeof(bid), "%u%s", b->id, b->tx ? "tx" : "");
		lines_add(l, "%-5s %s %6s %5s %8s %8s %8s %8s %6s%s %9.0f %6s %8s %8s %8s %6s%s",
			  bid, ifc, size, niov, tot, fr, inp, sock, occ, cols,
			  binding_alloc_rate(b, prev, s->interval_s), fails, a50, a99, f99, leak,
			  b->alive ? (b->unbound ? " unbound" : "") : " freed");
		lines_row(l, TOP_SEL_BINDING, b->id, 0);
	}
}

static void render_pools(const struct dmt_snapshot *s, const struct dmt_pool_snap **sel,
			 size_t n_sel, struct lines *l)
{
	char cols[128];

	top_cols(cols, sizeof(cols), MO_POOL, NULL, s->avail);
	/* 8 digits a second: 400 Gbit/s of 4 KiB pages is 12 M; RCY% ends at column 100 */
	lines_add(l, "%-6s %-12s %-12s %3s %6s %-6s %5s %-9s %8s %8s %8s%s %6s %6s %-10s",
		  "POOL", "IFACE", "NETNS", "Q", "NAPI", "KIND", "BIND", "STATE", "HOLD/s", "REL/s",
		  "INFLIGHT", cols, "B.p50", "B.max", "SOURCE");
	for (size_t i = 0; i < n_sel; i++) {
		const struct dmt_pool_snap *p = sel[i];
		char q[8], napi[16], bind[16], ns[64], nsc[48], b50[16], bmax[16], ifc[48];
		uint64_t v;

		snprintf(q, sizeof(q), p->queue >= 0 ? "%d" : "-", p->queue);
		snprintf(napi, sizeof(napi), p->napi_id ? "%u" : "-", p->napi_id);
		snprintf(bind, sizeof(bind), p->binding_id ? "%u" : "-", p->binding_id);
		top_netns_name(p->netns, ns, sizeof(ns));	/* ip netns name, else inode */
		if (!hist_batch_quantile(&p->refill, 0.5, &v))
			snprintf(b50, sizeof(b50), "%llu", (unsigned long long)v);
		else
			snprintf(b50, sizeof(b50), "-");
		if (p->refill.count)
			snprintf(bmax, sizeof(bmax), "%llu",
				 (unsigned long long)hist_batch_max(&p->refill));
		else
			snprintf(bmax, sizeof(bmax), "-");
		textsafe_col(ifc, sizeof(ifc), p->ifname[0] ? p->ifname : (p->ifindex ? "?" : "-"),
			     12);
		textsafe_col(nsc, sizeof(nsc), ns, 12);	/* an ip netns name is a file name */
		top_cols(cols, sizeof(cols), MO_POOL, p, s->avail);
		lines_add(l, "%-6u %s %s %3s %6s %-6s %5s %-9s %8.0f %8.0f %8lld%s %6s %6s %-10s",
			  p->id, ifc, nsc, q, napi,
			  dmt_kind_name(p->kind), bind, dmt_pool_state_name(p->state), p->hold_rate,
			  p->release_rate, (long long)p->inflight, cols, b50, bmax,
			  dmt_attr_src_name(p->attr_src));
		lines_row(l, TOP_SEL_POOL, p->id, p->addr);
	}
}

static void render_events(const struct ev_log *ev, struct lines *l)
{
	if (!ev || !ev->n)
		return;
	lines_add(l, "%s", "");
	lines_add(l, "EVENTS");
	for (unsigned int i = 0; i < ev->n; i++) {
		if (ev->repeat[i] > 1)
			lines_add(l, "%s (x%llu)", ev->line[i], (unsigned long long)ev->repeat[i]);
		else
			lines_add(l, "%s", ev->line[i]);
	}
}

static void render(const struct top_opts *o, const struct dmt_snapshot *s,
		   const struct dmt_snapshot *prev, const struct ev_log *ev, struct lines *l,
		   bool paused, size_t *matched)
{
	const struct dmt_pool_snap **sel = calloc(s->n_pools + 1, sizeof(*sel));
	size_t n_sel;

	if (!sel)
		return;
	n_sel = select_pools(o, s, sel);
	*matched += n_sel + render_header(o, s, sel, n_sel, paused, l);
	/* nothing to show at all: say how to get traffic, not two empty tables */
	if (!s->n_pools && !s->n_bindings && !o->iface[0] && !o->binding) {
		lines_add(l, "%s", TOP_NO_POOL_HINT);
	} else {
		render_bindings(o, s, prev, l);
		render_holders(s, l);
		lines_add(l, "%s", "");
		render_pools(s, sel, n_sel, l);
	}
	render_events(ev, l);
	free(sel);
}

void top_print_text(const struct top_opts *o, const struct dmt_snapshot *s,
		    const struct dmt_snapshot *prev, FILE *f)
{
	struct lines l = {};
	size_t matched = 0;

	render(o, s, prev, NULL, &l, false, &matched);
	for (size_t i = 0; i < l.n; i++)
		fprintf(f, "%s\n", l.v[i]);
	lines_free(&l);
}

static void print_json(const struct dmt_snapshot *s)
{
	struct json_object *o = json_snapshot(s);

	if (!o)
		return;
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), stdout);
	fputc('\n', stdout);
	out_flush(stdout);
	json_object_put(o);
}

static bool top_exiting(void *ctx)
{
	return exiting;
}

/* Batch mode: sleep until the deadline or a stop signal, one wake-up. */
static void wait_batch(uint64_t deadline)
{
	sigset_t sigs;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sleep_until(deadline, &sigs, top_exiting, NULL);
}

static void draw(const struct lines *l, bool help, const struct top_ui *tui,
		 const struct dmt_snapshot *snap)
{
	size_t off = 0, sel_line = 0, y = 0;
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	erase();
	if (top_ui__detail_open(tui) && snap) {
		top_ui__draw_detail(tui, snap);
		goto bottom;
	}
	for (size_t r = 0; r < l->n_rows; r++)
		if (top_ui__is_selected(tui, &l->rows[r]))
			sel_line = l->row_line[r];
	/* a selected row below the screen scrolls the tables, not the header */
	if (sel_line && (int)sel_line >= rows - 1)
		off = sel_line - (rows - 2);
	for (size_t i = 0; i < l->n && (int)y < rows - 1; i++) {
		if (i >= (size_t)l->header_lines && i < (size_t)l->header_lines + off)
			continue;
		if ((int)i < l->header_lines - 1)
			attron(A_BOLD);
		if (i >= (size_t)l->header_lines && (strncmp(l->v[i], "BIND ", 5) == 0 ||
						     strncmp(l->v[i], "POOL ", 5) == 0))
			attron(A_REVERSE);
		if (sel_line && i == sel_line)
			attron(A_STANDOUT | A_BOLD);
		mvaddnstr(y++, 0, l->v[i], cols);
		attroff(A_BOLD | A_REVERSE | A_STANDOUT);
	}
	if (help)
		top_ui__draw_help();
bottom:
	if (help && top_ui__detail_open(tui))
		top_ui__draw_help();
	mvaddnstr(rows - 1, 0, top_ui__keys_line(tui), cols);
	refresh();
}

static void log_to_stderr(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* One run of the live view, -b or --json. */
struct top_run {
	struct top_opts o;
	struct collector *c;
	struct top_ui *tui;		/* the live view only */
	struct dmt_snapshot *prev;
	struct ev_log evl;
	bool ui, help, paused;
	size_t matched;			/* objects the filter matched, over the run */
};

/* Collector, first snapshot (say once what is unavailable), terminal: 0 or -errno. */
static int top_start(struct top_run *r)
{
	struct collector_opts copts = {
		.log = log_to_stderr, .verbosity = r->o.verbose, .force_mode = r->o.force_mode,
		.light_window_ms = r->o.light_window_ms, .light_period_ms = r->o.light_period_ms,
		.no_netlink = r->o.no_netlink, .enable_bpf_stats = r->o.bpf_stats,
		.events = !r->o.json,		/* the view lists recent events */
	};
	char why[512] = "", unav[1024];
	int e;

	copts.errbuf = why;
	copts.errlen = sizeof(why);
	r->c = collector__new(&copts);
	if (!r->c) {
		e = -errno;
		dmt_err("%s", why[0] ? why : strerror(-e));
		return e;
	}
	e = collector__snapshot(r->c, &r->prev);
	if (e) {
		dmt_err("snapshot failed: %s", strerror(-e));
		return e;
	}
	top_unavailable_summary(r->prev, unav, sizeof(unav));
	if (unav[0] && !r->o.json)
		dmt_err("%s mode; unavailable: %s", dmt_mode_name(r->prev->mode), unav);
	if (!r->ui)
		return 0;
	r->tui = top_ui__new();
	if (!r->tui) {
		dmt_err("out of memory");
		return -ENOMEM;
	}
	setlocale(LC_ALL, "");
	initscr();
	set_escdelay(25);	/* Esc leaves the detail pane at once */
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(100);		/* keys are polled: 10 wake-ups a second in the live view */
	return 0;
}

static void top_end_ui(struct top_run *r)
{
	if (r->ui)
		endwin();
	r->ui = false;
}

/* The live view between snapshots: keys until the deadline (or forever, paused). */
static void top_keys(struct top_run *r, uint64_t deadline)
{
	while (!exiting) {
		struct lines l = {};
		int ch = getch();

		if (ch == 'q' || ch == 'Q') {
			exiting = 1;
			break;
		}
		if (ch == 's')
			r->o.sort = (r->o.sort + 1) % ARRAY_SIZE(sort_names);
		else if (ch >= '1' && ch <= '5')
			r->o.sort = ch - '1';
		else if (ch == 'h' || ch == '?')
			r->help = !r->help;
		else if (ch == 'p')
			r->paused = !r->paused;
		if (ch != ERR && r->prev) {
			render(&r->o, r->prev, NULL, &r->evl, &l, r->paused, &r->matched);
			top_ui__fix_selection(r->tui, l.rows, l.n_rows);
			top_ui__key(r->tui, ch, l.rows, l.n_rows);
			draw(&l, r->help, r->tui, r->prev);
			lines_free(&l);
		}
		if (now_mono_ns() >= deadline && !r->paused)
			break;
	}
}

/* One snapshot out: JSON, text, or the screen. 0, or -EIO when stdout failed. */
static int top_show(struct top_run *r, const struct dmt_snapshot *s)
{
	struct lines l = {};

	if (r->o.json) {
		print_json(s);
		for (size_t i = 0; i < s->n_pools; i++)
			r->matched += top_pool_match(&r->o, &s->pools[i]);
		for (size_t i = 0; i < s->n_bindings; i++)
			r->matched += top_binding_match(&r->o, &s->bindings[i]);
	} else {
		render(&r->o, s, r->prev, &r->evl, &l, r->paused, &r->matched);
		if (r->ui) {
			top_ui__feed(r->tui, s);
			top_ui__fix_selection(r->tui, l.rows, l.n_rows);
			draw(&l, r->help, r->tui, s);
		} else {
			for (size_t i = 0; i < l.n; i++)
				puts(l.v[i]);
			putchar('\n');
		}
		lines_free(&l);
	}
	/* a full disk or closed stdout ends the run; main() says why */
	return !r->ui && out_flush(stdout) ? -EIO : 0;
}

/* Snapshot every interval until a signal, q, -n or an error: 0, 1 on error. */
static int top_loop(struct top_run *r)
{
	struct dmt_snapshot *s = NULL;
	uint64_t n = 0;
	int e;

	while (!exiting) {
		uint64_t deadline = now_mono_ns() + r->o.interval_ns;

		if (r->ui)
			top_keys(r, deadline);
		else
			wait_batch(deadline);
		if (exiting)
			break;
		if (!r->o.json)
			collector__poll_events(r->c, 0, ev_log_add, &r->evl);
		e = collector__snapshot(r->c, &s);
		if (e) {
			top_end_ui(r);
			dmt_err("snapshot failed: %s", strerror(-e));
			return 1;
		}
		e = top_show(r, s);
		snapshot__free(r->prev);
		r->prev = s;
		if (e)
			return 1;
		if (r->o.count && ++n >= r->o.count)
			break;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_run r = {};
	char err[256];
	int ret = 1;

	if (top_parse_args(argc, argv, &r.o, err, sizeof(err))) {
		dmt_err("%s", err);
		return 2;
	}
	if (r.o.help) {
		usage(stdout);
		return 0;
	}
	r.ui = !r.o.batch && !r.o.json;
	if (r.ui && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))) {
		dmt_err("not a terminal: use -b (text) or --json");
		return 2;
	}
	dmt_verbosity = r.o.verbose;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	if (top_start(&r))
		goto cleanup;
	ret = top_loop(&r);
	if (!ret && (r.o.iface[0] || r.o.binding) && !r.matched) {
		char bid[24] = "", ifc[4 * DMT_IFNAMSIZ];

		top_end_ui(&r);
		if (r.o.binding)
			snprintf(bid, sizeof(bid), " --binding %u", r.o.binding);
		dmt_err("no page pool or binding matched the filter%s%s%s",
			r.o.iface[0] ? " --iface " : "", textsafe_str(ifc, sizeof(ifc), r.o.iface),
			bid);
		ret = 1;
	}
cleanup:
	top_end_ui(&r);
	snapshot__free(r.prev);
	collector__free(r.c);
	top_ui__free(r.tui);
	return ret;
}
