// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot -> Prometheus text. Names follow the Prometheus conventions:
 * base units in the name (_seconds, _bytes, _niovs, _items), counters end in
 * _total, a family is left out entirely when the collector says the metric
 * is unavailable, and a series whose value is unknown (-1) is left out
 * rather than exported as a made-up number.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "expo.h"
#include "metrics.h"
#include "podcg.h"
#include "util.h"

#define HW "needs a devmem dmabuf binding (devmem-capable NIC)"
/* the latency histograms' exact native twins (promproto.h) */
#define NATIVE "native histogram: protobuf scrapes only"
/* Token holders with their own series; the rest are summed (render_tokens). */
#define EXPO_TOP_HOLDERS	10
#define DMT_XSTR(x)		#x
#define DMT_STR(x)		DMT_XSTR(x)

enum {
	/* page pools */
	F_POOL_INFO,
	F_POOLS,
	F_POOLS_DESTROYED,
	F_POOLS_NOT_EXPORTED,
	/* bindings */
	F_BIND_INFO,
	/* kernel-wide */
	F_LEAKED_TOTAL,
	F_BINDINGS_FREED,
	/* frag tokens (issue 11) */
	F_TOK_HOLDERS,
	F_TOK_HOLDER_TOKENS,
	F_TOK_HOLDER_NIOVS,
	F_TOK_HOLDER_OLDEST,
	F_TOK_HOLDER_OTHERS,
	F_TOK_PER_RECVMSG,
	F_TOK_PER_DONTNEED,
	F_DONTNEED_LAT,
	F_DONTNEED_LAT_TOKEN,
	F_DONTNEED_LAT_NS,
	F_DONTNEED_LAT_TOKEN_NS,
	F_TOK_UNTRACKED,
	/* self */
	F_BUILD_INFO,
	F_METRIC_AVAILABLE,
	F_METRIC_METHOD,
	F_PROG_ATTACHED,
	F_BPF_STATS,
	F_PROG_RUN_TIME,
	F_PROG_RUNS,
	F_RB_DROPS,
	F_MAP_FULL,
	F_LAT_UNMATCHED,
	F_COLLECT_DURATION,
	F_COLLECTIONS,
	F_COLLECT_ERRORS,
	F_LAST_COLLECT,
	F_INTERVAL,
	F_SCRAPES,
	F_HTTP_TIMEOUTS,
	F_SNAPSHOTS_HELD,
	F_SCRAPE_DURATION,
	F__COUNT,
};

#define FAM(i, n, t, g, s, a, h) [i] = { .name = n, .type = t, .help = h, .gate = g, \
					 .scope = s, .absent_why = a }

const struct expo_family expo_families[F__COUNT + 1] = {
	FAM(F_POOL_INFO, "devmemtop_page_pool_info", "gauge",
	    -1, EXPO_POOL, NULL,
	    "A page pool the collector watches (value 1); labels carry its binding, NAPI id, state and where its interface came from."),
	FAM(F_POOLS, "devmemtop_page_pools", "gauge",
	    -1, EXPO_POOL, NULL,
	    "Page pools the collector watches, by kind and state (alive, zombie)."),
	FAM(F_POOLS_DESTROYED, "devmemtop_page_pools_destroyed_total", "counter",
	    DMT_M_POOL_DESTROY, EXPO_POOL, NULL,
	    "Page pools seen destroyed since the exporter started, by kind."),
	FAM(F_POOLS_NOT_EXPORTED, "devmemtop_page_pools_not_exported", "gauge",
	    -1, EXPO_POOL, NULL,
	    "Page pools of this snapshot left out of the per-pool series, by reason: iface_filter (--iface-include/--iface-exclude) or max_pools (--max-pools)."),

	FAM(F_BIND_INFO, "devmemtop_binding_info", "gauge",
	    -1, EXPO_BINDING, HW,
	    "A devmem dmabuf binding (value 1); labels carry its layout and state."),

	FAM(F_LEAKED_TOTAL, "devmemtop_leaked_niovs_total", "counter",
	    DMT_M_BIND_LEAKS, EXPO_GLOBAL, NULL,
	    "Niovs outstanding when their binding was freed, summed since the exporter started."),
	FAM(F_BINDINGS_FREED, "devmemtop_bindings_freed_total", "counter",
	    DMT_M_BIND_LIFECYCLE, EXPO_GLOBAL, NULL,
	    "Devmem bindings seen freed since the exporter started."),

	FAM(F_TOK_HOLDERS, "devmemtop_token_holder_sockets", "gauge",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, NULL,
	    "Sockets holding devmem frag tokens."),
	FAM(F_TOK_HOLDER_TOKENS, "devmemtop_token_holder_tokens", "gauge",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, "only while a socket holds frag tokens",
	    "Frag tokens held, per process and binding: the top " DMT_STR(EXPO_TOP_HOLDERS)
	    " holders only (the rest: devmemtop_token_holder_others_tokens); a Kubernetes"
	    " pod's process also has pod_uid and container_id; a socket whose process is"
	    " unknown has socket_inode instead of pid."),
	FAM(F_TOK_HOLDER_NIOVS, "devmemtop_token_holder_niovs", "gauge",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, "only while a socket holds frag tokens",
	    "Niovs behind the frag tokens held, per process and binding (top holders only)."),
	FAM(F_TOK_HOLDER_OLDEST, "devmemtop_token_holder_oldest_token_age_seconds", "gauge",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, "only while a socket holds frag tokens",
	    "Age of the oldest frag token held, per process and binding (top holders only)."),
	FAM(F_TOK_HOLDER_OTHERS, "devmemtop_token_holder_others_tokens", "gauge",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, NULL,
	    "Frag tokens held by the holders beyond the top ones."),
	FAM(F_TOK_PER_RECVMSG, "devmemtop_tokens_per_recvmsg", "histogram",
	    DMT_M_RECVMSG_TOKENS, EXPO_GLOBAL, NULL,
	    "Frag tokens handed out per tcp_recvmsg call that handed out any."),
	FAM(F_TOK_PER_DONTNEED, "devmemtop_tokens_per_dontneed", "histogram",
	    DMT_M_DONTNEED_COST, EXPO_GLOBAL, NULL,
	    "Frag tokens freed per SO_DEVMEM_DONTNEED call."),
	FAM(F_DONTNEED_LAT, "devmemtop_dontneed_latency_seconds", "histogram",
	    DMT_M_DONTNEED_COST, EXPO_GLOBAL, NULL,
	    "Time per SO_DEVMEM_DONTNEED call."),
	FAM(F_DONTNEED_LAT_TOKEN, "devmemtop_dontneed_latency_per_token_seconds", "histogram",
	    DMT_M_DONTNEED_COST, EXPO_GLOBAL, NULL,
	    "Time per SO_DEVMEM_DONTNEED call divided by the tokens it freed."),
	FAM(F_DONTNEED_LAT_NS, "devmemtop_dontneed_latency_nanoseconds", "histogram",
	    DMT_M_DONTNEED_COST, EXPO_GLOBAL, NATIVE,
	    "Time per SO_DEVMEM_DONTNEED call (native, exact log2 buckets; classic: _seconds)."),
	FAM(F_DONTNEED_LAT_TOKEN_NS, "devmemtop_dontneed_latency_per_token_nanoseconds", "histogram",
	    DMT_M_DONTNEED_COST, EXPO_GLOBAL, NATIVE,
	    "Time per SO_DEVMEM_DONTNEED call divided by the tokens it freed (native, exact log2 buckets; classic: _seconds)."),
	FAM(F_TOK_UNTRACKED, "devmemtop_token_untracked_total", "counter",
	    DMT_M_BIND_HELD_BY_SOCKETS, EXPO_GLOBAL, NULL,
	    "Frag tokens the tracker lost (map full) or could not attribute; non-zero makes the held figures of the affected bindings unknown."),
	FAM(F_BUILD_INFO, "devmemtop_build_info", "gauge",
	    -1, EXPO_SELF, NULL,
	    "devmemtop version and attach mode (value 1)."),
	FAM(F_METRIC_AVAILABLE, "devmemtop_metric_available", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Whether the collector can measure a metric on this kernel (1) or not (0, with the reason)."),
	FAM(F_METRIC_METHOD, "devmemtop_metric_method_info", "gauge",
	    -1, EXPO_SELF, NULL,
	    "How this attach mode measures a metric: method exact, sampled or unavailable (value 1)."),
	FAM(F_PROG_ATTACHED, "devmemtop_bpf_program_attached", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Whether a BPF program is attached (1) or not (0)."),
	FAM(F_BPF_STATS, "devmemtop_bpf_stats_enabled", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Whether kernel.bpf_stats_enabled is on, so BPF run time and count are measured."),
	FAM(F_PROG_RUN_TIME, "devmemtop_bpf_program_run_time_seconds_total", "counter",
	    -1, EXPO_SELF, "needs kernel.bpf_stats_enabled=1 (export --bpf-stats)",
	    "Time the kernel spent running the BPF program."),
	FAM(F_PROG_RUNS, "devmemtop_bpf_program_runs_total", "counter",
	    -1, EXPO_SELF, "needs kernel.bpf_stats_enabled=1 (export --bpf-stats)",
	    "Times the kernel ran the BPF program."),
	FAM(F_RB_DROPS, "devmemtop_ringbuf_drops_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "Events the BPF side could not put in the ring buffer."),
	FAM(F_MAP_FULL, "devmemtop_map_full_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "Pools or bindings the BPF side could not track because its map was full."),
	FAM(F_LAT_UNMATCHED, "devmemtop_latency_unmatched_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "Function exits with no matching entry (latency samples lost)."),
	FAM(F_COLLECT_DURATION, "devmemtop_collection_duration_seconds", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Time the last snapshot took to collect."),
	FAM(F_COLLECTIONS, "devmemtop_collections_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "Snapshots taken since the exporter started."),
	FAM(F_COLLECT_ERRORS, "devmemtop_collection_errors_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "Snapshots that failed (the last good one stays published)."),
	FAM(F_LAST_COLLECT, "devmemtop_last_collection_timestamp_seconds", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Wall-clock time of the published snapshot."),
	FAM(F_INTERVAL, "devmemtop_collection_interval_seconds", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Configured time between snapshots."),
	FAM(F_SCRAPES, "devmemtop_scrapes_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "/metrics requests served, this one included."),
	FAM(F_HTTP_TIMEOUTS, "devmemtop_http_request_timeouts_total", "counter",
	    -1, EXPO_SELF, NULL,
	    "HTTP connections closed because a request or response did not finish within --http-timeout."),
	FAM(F_SNAPSHOTS_HELD, "devmemtop_snapshots_held", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Snapshot versions in memory: the current one plus older ones that scrapes in progress still hold (more than a few means slow clients)."),
	FAM(F_SCRAPE_DURATION, "devmemtop_scrape_duration_seconds", "gauge",
	    -1, EXPO_SELF, NULL,
	    "Time this scrape took to produce, up to this line (rendering its snapshot, or copying the text the first scrape of that snapshot rendered)."),
	[F__COUNT] = { .name = NULL },
};

/*
 * The catalogue: the hand-written families above with the metric table's
 * rows that have a Prometheus name after F_POOL_INFO (pool rows),
 * F_BIND_INFO (binding rows) and F_BINDINGS_FREED (kernel-wide rows), in
 * the order render_pools(), render_bindings() and render_global() write
 * them (cat_rows()).
 */
struct cat_ent {
	struct expo_family f;
	const struct mdef *row;		/* NULL: a hand-written family */
	bool native;			/* the row's native histogram twin */
};

static struct cat_ent cat[F__COUNT + 128];
static size_t n_cat;
static pthread_once_t cat_once = PTHREAD_ONCE_INIT;

static void cat_add(const struct mdef *d, bool native)
{
	const char *absent = d->absent ? d->absent : d->obj == MO_BINDING ? HW : NULL;
	struct expo_family *f;

	if (n_cat >= ARRAY_SIZE(cat))
		return;
	f = &cat[n_cat].f;
	cat[n_cat].row = d;
	cat[n_cat++].native = native;
	*f = (struct expo_family){
		.name = native ? d->prom_native : d->prom,
		.help = native ? d->native_help : d->help,
		.type = d->kind != MK_SCALAR ? "histogram" : d->type == MT_COUNTER ? "counter" :
			"gauge",
		.gate = d->avail, .absent_why = absent,
		.scope = d->obj == MO_POOL ? EXPO_POOL : d->obj == MO_BINDING ? EXPO_BINDING :
			 EXPO_GLOBAL,
	};
	if (native)
		f->absent_why = d->obj == MO_BINDING ? HW "; " NATIVE : NATIVE;
}

/*
 * The rows of object kind obj: those with a place in the exposition from
 * before the table (prom_seq) first, then scalars, then histograms, then
 * the histograms' native twins, each in table order.
 */
static void cat_rows(enum mdef_obj obj)
{
	for (unsigned int seq = 1; seq < 256; seq++)
		for (size_t i = 0; i < mdef_count; i++)
			if (mdefs[i].obj == obj && mdefs[i].prom && mdefs[i].prom_seq == seq)
				cat_add(&mdefs[i], false);
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < mdef_count; i++) {
			const struct mdef *d = &mdefs[i];

			if (d->obj != obj || !d->prom || d->prom_seq)
				continue;
			if (pass == 0 && d->kind == MK_SCALAR)
				cat_add(d, false);
			else if (pass == 1 && d->kind != MK_SCALAR)
				cat_add(d, false);
			else if (pass == 2 && d->prom_native)
				cat_add(d, true);
		}
	}
}

static void cat_init(void)
{
	for (int i = 0; i < F__COUNT; i++) {
		cat[n_cat++].f = expo_families[i];
		if (i == F_POOL_INFO)
			cat_rows(MO_POOL);
		else if (i == F_BIND_INFO)
			cat_rows(MO_BINDING);
		else if (i == F_BINDINGS_FREED)
			cat_rows(MO_GLOBAL);
	}
}

size_t expo_family_count(void)
{
	pthread_once(&cat_once, cat_init);
	return n_cat;
}

const struct expo_family *expo_family_at(size_t i)
{
	return i < expo_family_count() ? &cat[i].f : NULL;
}

const struct expo_family *expo_family_find(const char *name)
{
	for (size_t i = 0; i < expo_family_count(); i++)
		if (!strcmp(expo_family_at(i)->name, name))
			return expo_family_at(i);
	return NULL;
}

static const char *const scope_names[] = {
	[EXPO_POOL] = "pool", [EXPO_BINDING] = "binding",
	[EXPO_GLOBAL] = "global", [EXPO_SELF] = "self",
};

void expo_list_metrics(FILE *f)
{
	for (size_t i = 0; i < expo_family_count(); i++) {
		const struct expo_family *fam = expo_family_at(i);

		fprintf(f, "%s %s %s gate=%s", fam->name, fam->type, scope_names[fam->scope],
			fam->gate < 0 ? "-" : dmt_metric_name(fam->gate));
		if (fam->absent_why)
			fprintf(f, " absent-when: %s", fam->absent_why);
		fputc('\n', f);
	}
}

void expo_totals__account(struct expo_totals *t, const struct dmt_snapshot *s)
{
	for (size_t i = 0; i < s->n_pools; i++) {
		const struct dmt_pool_snap *p = &s->pools[i];

		if (p->state == DMT_POOL_DESTROYED && p->kind <= DMT_KIND_OTHER)
			t->pools_destroyed[p->kind]++;
	}
	for (size_t i = 0; i < s->n_bindings; i++) {
		const struct dmt_binding_snap *b = &s->bindings[i];

		if (b->alive)
			continue;
		t->bindings_freed++;
		if (b->out_at_free > 0)
			t->leaked_niovs += (uint64_t)b->out_at_free;
	}
}

static bool gate_ok(const struct dmt_snapshot *s, int f)
{
	int g = expo_families[f].gate;

	return g < 0 || (g < DMT_M__COUNT && s->avail[g].available);
}

/* Start family f if its metric is available; false to skip it. */
static bool fam(struct promfmt *w, const struct dmt_snapshot *s, int f)
{
	if (!gate_ok(s, f))
		return false;
	promfmt__family(w, expo_families[f].name, expo_families[f].type, expo_families[f].help);
	return true;
}

/* Start the family of catalogue entry c (a table row) if its metric is available. */
static bool row_fam(struct promfmt *w, const struct dmt_snapshot *s, size_t c)
{
	const struct expo_family *f = &cat[c].f;

	if (!mdef_available(cat[c].row, s->avail))
		return false;
	promfmt__family(w, f->name, f->type, f->help);
	return true;
}

/* One object's sample of a metric table row; nothing when unknown or not present. */
static void render_row(struct promfmt *w, const struct mdef *d, bool native, const void *o,
		       const struct prom_label *l, size_t nl)
{
	double v;

	if (!mdef_present(d, o))
		return;
	if (d->kind == MK_BATCH) {
		promfmt__hist_batch(w, l, nl, mdef_batch(d, o));
		return;
	}
	if (d->kind == MK_LOG2) {
		if (native)
			promfmt__hist_log2_native(w, l, nl, mdef_log2(d, o));
		else
			promfmt__hist_log2(w, l, nl, mdef_log2(d, o), d->prom_div);
		return;
	}
	if (!mdef_value(d, o, &v))
		return;
	switch (d->repr) {
	case MR_U64:
	case MR_U32:
	case MR_U64_NZ:
	case MR_U32_NZ:
		promfmt__sample_u64(w, NULL, l, nl, NULL, NULL, mdef_raw(d, o));
		break;
	case MR_I64:
	case MR_S64:
	case MR_S32:
		promfmt__sample_i64(w, NULL, l, nl, NULL, NULL, (int64_t)mdef_raw(d, o));
		break;
	default:
		promfmt__sample(w, NULL, l, nl, NULL, NULL, v);
		break;
	}
}

/* Labels of one pool: pool_id, ifname, ifindex, queue, kind, netns. */
#define POOL_NLBL	6
struct pool_lbl {
	char id[24], ifindex[16], queue[16], netns[16];
	struct prom_label l[POOL_NLBL + 4];
};

/*
 * A stand-in when the pool has no netlink id: stable for this process,
 * and keyed with a random value, since the unkeyed mix of a kernel heap
 * address (about 30 bits of entropy) can be brute-forced back from 32 bits.
 */
static uint32_t addr_tag(uint64_t a)
{
	static uint64_t key;

	if (!key && getrandom(&key, sizeof(key), 0) != sizeof(key))
		key = now_real_ns() * 0x9e3779b97f4a7c15ULL;	/* still not known outside */
	key |= 1;
	a ^= key;
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	a *= 0xc4ceb9fe1a85ec53ULL;
	a ^= a >> 33;
	return (uint32_t)a;
}

static void pool_labels(struct pool_lbl *pl, const struct dmt_pool_snap *p)
{
	if (p->id)
		snprintf(pl->id, sizeof(pl->id), "%u", p->id);
	else
		snprintf(pl->id, sizeof(pl->id), "h%08x", addr_tag(p->addr));
	if (p->ifindex > 0)
		snprintf(pl->ifindex, sizeof(pl->ifindex), "%d", p->ifindex);
	else
		pl->ifindex[0] = '\0';
	if (p->queue >= 0)
		snprintf(pl->queue, sizeof(pl->queue), "%d", p->queue);
	else
		pl->queue[0] = '\0';
	if (p->netns)
		snprintf(pl->netns, sizeof(pl->netns), "%u", p->netns);
	else
		pl->netns[0] = '\0';
	pl->l[0] = (struct prom_label){ "pool_id", pl->id };
	pl->l[1] = (struct prom_label){ "ifname", p->ifname };
	pl->l[2] = (struct prom_label){ "ifindex", pl->ifindex };
	pl->l[3] = (struct prom_label){ "queue", pl->queue };
	pl->l[4] = (struct prom_label){ "kind", dmt_kind_name(p->kind) };
	pl->l[5] = (struct prom_label){ "netns", pl->netns };
}

/* Labels of one binding: binding_id, ifname, ifindex, direction. */
#define BIND_NLBL	4
struct bind_lbl {
	char id[16], ifindex[16];
	struct prom_label l[BIND_NLBL + 2];
};

static void bind_labels(struct bind_lbl *bl, const struct dmt_binding_snap *b)
{
	snprintf(bl->id, sizeof(bl->id), "%u", b->id);
	if (b->ifindex > 0)
		snprintf(bl->ifindex, sizeof(bl->ifindex), "%d", b->ifindex);
	else
		bl->ifindex[0] = '\0';
	bl->l[0] = (struct prom_label){ "binding_id", bl->id };
	bl->l[1] = (struct prom_label){ "ifname", b->ifname };
	bl->l[2] = (struct prom_label){ "ifindex", bl->ifindex };
	bl->l[3] = (struct prom_label){ "direction", b->tx ? "tx" : "rx" };
}

static struct expo_limits proc_limits;

void expo__set_limits(const struct expo_limits *l)
{
	proc_limits = *l;
}

static bool iface_selected(const struct expo_limits *l, const char *ifname)
{
	bool in = !l->n_include;

	for (size_t i = 0; i < l->n_include && !in; i++)
		in = !fnmatch(l->include[i], ifname, 0);
	for (size_t i = 0; i < l->n_exclude && in; i++)
		in = fnmatch(l->exclude[i], ifname, 0) != 0;
	return in;
}

/* The cap's order: devmem pools, then by netlink id (none last), then as listed. */
static int pool_rank_cmp(const void *a, const void *b, void *snap)
{
	const struct dmt_snapshot *s = snap;
	const struct dmt_pool_snap *p = &s->pools[*(const size_t *)a];
	const struct dmt_pool_snap *q = &s->pools[*(const size_t *)b];
	uint64_t pk = p->id ? p->id : UINT64_MAX, qk = q->id ? q->id : UINT64_MAX;

	if ((p->kind == DMT_KIND_DEVMEM) != (q->kind == DMT_KIND_DEVMEM))
		return p->kind == DMT_KIND_DEVMEM ? -1 : 1;
	if (pk != qk)
		return pk < qk ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int idx_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Indices of the pools to export, in snapshot order, into sel (n_pools
 * long); *filtered and *capped: how many each limit left out.
 */
static size_t select_pools(const struct dmt_snapshot *s, const struct expo_limits *l,
			   size_t *sel, size_t *filtered, size_t *capped)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_pools; i++)
		if (iface_selected(l, s->pools[i].ifname))
			sel[n++] = i;
	*filtered = s->n_pools - n;
	*capped = 0;
	if (l->max_pools && n > l->max_pools) {
		qsort_r(sel, n, sizeof(*sel), pool_rank_cmp, (void *)s);
		*capped = n - l->max_pools;
		n = l->max_pools;
		qsort(sel, n, sizeof(*sel), idx_cmp);
	}
	return n;
}

static void render_pools(struct promfmt *w, const struct dmt_snapshot *s,
			 const struct expo_totals *t, const size_t *sel, size_t nsel,
			 const size_t dropped[2])
{
	size_t np = s->n_pools;
	struct pool_lbl pl;

	/* One family at a time: the format wants a family's samples together. */
#define FOR_POOLS(p) \
	for (size_t _i = 0; _i < nsel && ((p) = &s->pools[sel[_i]], pool_labels(&pl, (p)), 1); _i++)
	const struct dmt_pool_snap *p;

	if (fam(w, s, F_POOL_INFO)) {
		FOR_POOLS(p) {
			char napi[16], bid[16];

			snprintf(napi, sizeof(napi), "%u", p->napi_id);
			if (p->kind == DMT_KIND_DEVMEM && p->binding_id)
				snprintf(bid, sizeof(bid), "%u", p->binding_id);
			else
				bid[0] = '\0';
			pl.l[POOL_NLBL + 0] = (struct prom_label){ "binding_id", bid };
			pl.l[POOL_NLBL + 1] = (struct prom_label){ "napi_id", napi };
			pl.l[POOL_NLBL + 2] = (struct prom_label){ "state", dmt_pool_state_name(p->state) };
			pl.l[POOL_NLBL + 3] = (struct prom_label){ "ifname_source",
								   dmt_attr_src_name(p->attr_src) };
			promfmt__sample_u64(w, NULL, pl.l, POOL_NLBL + 4, NULL, NULL, 1);
		}
	}
	/* the metric table's pool figures */
	for (size_t c = 0; c < n_cat; c++) {
		const struct mdef *d = cat[c].row;

		if (!d || d->obj != MO_POOL || !row_fam(w, s, c))
			continue;
		FOR_POOLS(p)
			render_row(w, d, cat[c].native, p, pl.l, POOL_NLBL);
	}
#undef FOR_POOLS

	if (fam(w, s, F_POOLS)) {
		/* every kind x {alive, zombie}: a bounded, stable set of series */
		for (int k = DMT_KIND_PAGES; k <= DMT_KIND_OTHER; k++) {
			for (int st = DMT_POOL_ALIVE; st <= DMT_POOL_ZOMBIE; st++) {
				struct prom_label l[2] = {
					{ "kind", dmt_kind_name(k) },
					{ "state", dmt_pool_state_name(st) },
				};
				uint64_t n = 0;

				for (size_t i = 0; i < np; i++)
					n += s->pools[i].kind == (enum dmt_pool_kind)k &&
					     s->pools[i].state == (enum dmt_pool_state)st;
				promfmt__sample_u64(w, NULL, l, 2, NULL, NULL, n);
			}
		}
	}
	if (fam(w, s, F_POOLS_DESTROYED)) {
		for (int k = DMT_KIND_PAGES; k <= DMT_KIND_OTHER; k++) {
			struct prom_label l = { "kind", dmt_kind_name(k) };

			promfmt__sample_u64(w, NULL, &l, 1, NULL, NULL, t->pools_destroyed[k]);
		}
	}
	if (fam(w, s, F_POOLS_NOT_EXPORTED)) {
		static const char *const why[2] = { "iface_filter", "max_pools" };

		for (int i = 0; i < 2; i++) {
			struct prom_label l = { "reason", why[i] };

			promfmt__sample_u64(w, NULL, &l, 1, NULL, NULL, dropped[i]);
		}
	}
}

static void render_bindings(struct promfmt *w, const struct dmt_snapshot *s)
{
	size_t nb = s->n_bindings;
	const struct dmt_binding_snap *b;
	struct bind_lbl bl;

#define FOR_BINDINGS(b) \
	for (size_t _i = 0; _i < nb && ((b) = &s->bindings[_i], bind_labels(&bl, (b)), 1); _i++)

	if (fam(w, s, F_BIND_INFO)) {
		FOR_BINDINGS(b) {
			const char *state = !b->alive ? "freed" : b->unbound ? "unbound" : "bound";

			bl.l[BIND_NLBL + 0] = (struct prom_label){ "layout",
								   b->layout ? b->layout : "unknown" };
			bl.l[BIND_NLBL + 1] = (struct prom_label){ "state", state };
			promfmt__sample_u64(w, NULL, bl.l, BIND_NLBL + 2, NULL, NULL, 1);
		}
	}
	/* the metric table's binding figures, in catalogue order */
	for (size_t c = 0; c < n_cat; c++) {
		const struct mdef *d = cat[c].row;

		if (!d || d->obj != MO_BINDING || !row_fam(w, s, c))
			continue;
		FOR_BINDINGS(b)
			render_row(w, d, cat[c].native, b, bl.l, BIND_NLBL);
	}
#undef FOR_BINDINGS
}

static void render_global(struct promfmt *w, const struct dmt_snapshot *s,
			  const struct expo_totals *t)
{
	if (fam(w, s, F_LEAKED_TOTAL))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, t->leaked_niovs);
	if (fam(w, s, F_BINDINGS_FREED))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, t->bindings_freed);
	/* the metric table's kernel-wide figures */
	for (size_t c = 0; c < n_cat; c++)
		if (cat[c].row && cat[c].row->obj == MO_GLOBAL && row_fam(w, s, c))
			render_row(w, cat[c].row, cat[c].native, s, NULL, 0);
}

/*
 * Token holders, bounded: the snapshot's holders come most tokens first;
 * sockets of one known process on one binding are summed, a socket whose
 * process is unknown (light mode after the privilege drop) is a row of its
 * own, named by its inode (tokens__holder_key()), and only the first
 * EXPO_TOP_HOLDERS rows get series. Everyone else, and a socket known by
 * neither (a full holder map), is one number,
 * devmemtop_token_holder_others_tokens.
 */
struct holder_row {
	struct dmt_holder_key key;
	const char *comm;
	const char *cgroup;	/* of the row's largest socket */
	uint64_t tokens, niovs, oldest_ns;
};

static size_t holder_rows(const struct dmt_snapshot *s, struct holder_row *rows,
			  uint64_t *others)
{
	size_t n = 0;

	*others = 0;
	for (size_t i = 0; i < s->n_holders; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];
		struct dmt_holder_key key = tokens__holder_key(h);
		size_t k;

		if (h->counts_unknown)
			continue;	/* light, autorelease off: no count, no series */
		if (!key.pid && !key.sock_ino) {
			*others += h->tokens;	/* nothing to name its series by */
			continue;
		}
		for (k = 0; k < n; k++)
			if (tokens__holder_key_eq(&rows[k].key, &key))
				break;
		if (k == n) {
			if (n == EXPO_TOP_HOLDERS) {
				*others += h->tokens;
				continue;
			}
			rows[n++] = (struct holder_row){ .key = key, .comm = h->comm,
							 .cgroup = h->cgroup };
		}
		rows[k].tokens += h->tokens;
		rows[k].niovs += h->niovs;
		if (h->oldest_age_ns > rows[k].oldest_ns)
			rows[k].oldest_ns = h->oldest_age_ns;
	}
	return n;
}

static void render_tokens(struct promfmt *w, const struct dmt_snapshot *s)
{
	struct holder_row rows[EXPO_TOP_HOLDERS];
	char pid[EXPO_TOP_HOLDERS][24], bid[EXPO_TOP_HOLDERS][16];
	struct podcg pc[EXPO_TOP_HOLDERS];
	bool pods[EXPO_TOP_HOLDERS];
	uint64_t others;
	size_t n = holder_rows(s, rows, &others);

	for (size_t i = 0; i < n; i++) {
		/* an unknown pid is no label, never pid="0": the socket names the row */
		if (rows[i].key.pid)
			snprintf(pid[i], sizeof(pid[i]), "%u", rows[i].key.pid);
		else
			snprintf(pid[i], sizeof(pid[i]), "%llu",
				 (unsigned long long)rows[i].key.sock_ino);
		snprintf(bid[i], sizeof(bid[i]), "%u", rows[i].key.binding_id);
	}
	if (fam(w, s, F_TOK_HOLDERS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, s->n_holders);
	for (size_t i = 0; i < n; i++)
		pods[i] = rows[i].cgroup[0] && !podcg__parse(rows[i].cgroup, &pc[i]);
	for (int f = F_TOK_HOLDER_TOKENS; f <= F_TOK_HOLDER_OLDEST; f++) {
		/* light mode knows no token's age: no series rather than 0 */
		if (f == F_TOK_HOLDER_OLDEST && !dmt_snap_holder_history(s))
			continue;
		if (!n || !fam(w, s, f))
			continue;
		for (size_t i = 0; i < n; i++) {
			/*
			 * A pod's: its uid and container id too. They belong
			 * to the pid, so they add no series: at most
			 * EXPO_TOP_HOLDERS rows either way.
			 */
			struct prom_label hl[5] = {
				{ rows[i].key.pid ? "pid" : "socket_inode", pid[i] },
				{ "comm", rows[i].comm },
				{ "binding_id", bid[i] },
				{ "pod_uid", pc[i].pod_uid }, { "container_id", pc[i].container_id },
			};
			size_t nl = !pods[i] ? 3 : pc[i].container_id[0] ? 5 : 4;
			double age = rows[i].oldest_ns / 1e9;

			if (f == F_TOK_HOLDER_OLDEST)
				promfmt__sample(w, NULL, hl, nl, NULL, NULL, age);
			else
				promfmt__sample_u64(w, NULL, hl, nl, NULL, NULL,
						    f == F_TOK_HOLDER_TOKENS ? rows[i].tokens :
						    rows[i].niovs);
		}
	}
	if (fam(w, s, F_TOK_HOLDER_OTHERS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, others);
	if (fam(w, s, F_TOK_PER_RECVMSG))
		promfmt__hist_log2(w, NULL, 0, &s->tok_cost.per_recvmsg, 1);
	if (fam(w, s, F_TOK_PER_DONTNEED))
		promfmt__hist_log2(w, NULL, 0, &s->tok_cost.per_dontneed, 1);
	if (fam(w, s, F_DONTNEED_LAT))
		promfmt__hist_log2(w, NULL, 0, &s->tok_cost.dontneed_ns, 1e9);
	if (fam(w, s, F_DONTNEED_LAT_TOKEN))
		promfmt__hist_log2(w, NULL, 0, &s->tok_cost.dontneed_ns_token, 1e9);
	if (fam(w, s, F_DONTNEED_LAT_NS))
		promfmt__hist_log2_native(w, NULL, 0, &s->tok_cost.dontneed_ns);
	if (fam(w, s, F_DONTNEED_LAT_TOKEN_NS))
		promfmt__hist_log2_native(w, NULL, 0, &s->tok_cost.dontneed_ns_token);
	if (fam(w, s, F_TOK_UNTRACKED))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL,
				    s->tok_cost.map_full + s->tok_cost.no_socket);
}

static void render_self(struct promfmt *w, const struct expo_input *in)
{
	const struct dmt_snapshot *s = in->snap;

	if (fam(w, s, F_BUILD_INFO)) {
		struct prom_label l[2] = {
			{ "version", DEVMEMTOP_VERSION }, { "mode", dmt_mode_name(s->mode) },
		};

		promfmt__sample_u64(w, NULL, l, 2, NULL, NULL, 1);
	}
	if (fam(w, s, F_METRIC_AVAILABLE)) {
		for (int m = 0; m < DMT_M__COUNT; m++) {
			const struct dmt_availability *a = &s->avail[m];
			struct prom_label l[2] = {
				{ "metric", dmt_metric_name(m) },
				{ "reason", a->available ? "" : a->reason },
			};

			promfmt__sample_u64(w, NULL, l, 2, NULL, NULL, a->available);
		}
	}
	/*
	 * An info series to join on (group_left), not a label on every series:
	 * a label would change each series' identity when the mode changes and
	 * break rate() across the switch.
	 */
	if (fam(w, s, F_METRIC_METHOD)) {
		for (int m = 0; m < DMT_M__COUNT; m++) {
			struct prom_label l[2] = {
				{ "metric", dmt_metric_name(m) },
				{ "method", dmt_avail_method(&s->avail[m]) },
			};

			promfmt__sample_u64(w, NULL, l, 2, NULL, NULL, 1);
		}
	}
	if (fam(w, s, F_PROG_ATTACHED))
		for (size_t i = 0; i < s->n_progs; i++) {
			struct prom_label l = { "program", s->progs[i].name };

			promfmt__sample_u64(w, NULL, &l, 1, NULL, NULL, s->progs[i].attached);
		}
	if (fam(w, s, F_BPF_STATS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, s->bpf_stats_enabled);
	if (s->bpf_stats_enabled) {
		if (fam(w, s, F_PROG_RUN_TIME))
			for (size_t i = 0; i < s->n_progs; i++) {
				struct prom_label l = { "program", s->progs[i].name };

				if (s->progs[i].attached)
					promfmt__sample(w, NULL, &l, 1, NULL, NULL,
							(double)s->progs[i].run_time_ns / 1e9);
			}
		if (fam(w, s, F_PROG_RUNS))
			for (size_t i = 0; i < s->n_progs; i++) {
				struct prom_label l = { "program", s->progs[i].name };

				if (s->progs[i].attached)
					promfmt__sample_u64(w, NULL, &l, 1, NULL, NULL,
							    s->progs[i].run_cnt);
			}
	}
	if (fam(w, s, F_RB_DROPS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, s->ringbuf_drops);
	if (fam(w, s, F_MAP_FULL))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, s->map_full);
	if (fam(w, s, F_LAT_UNMATCHED))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, s->lat_missed);
	if (fam(w, s, F_COLLECT_DURATION))
		promfmt__sample(w, NULL, NULL, 0, NULL, NULL, (double)s->collect_ns / 1e9);
	if (fam(w, s, F_COLLECTIONS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, in->collections);
	if (fam(w, s, F_COLLECT_ERRORS))
		promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, in->collection_errors);
	if (fam(w, s, F_LAST_COLLECT) && s->wall_ns)
		promfmt__sample(w, NULL, NULL, 0, NULL, NULL, (double)s->wall_ns / 1e9);
	if (fam(w, s, F_INTERVAL))
		promfmt__sample(w, NULL, NULL, 0, NULL, NULL, in->interval_s);
}

int expo__render(struct promfmt *w, const struct expo_input *in)
{
	static const struct expo_totals zero;
	const struct expo_totals *t = in->totals ? in->totals : &zero;
	const struct expo_limits *l = in->limits ? in->limits : &proc_limits;
	size_t *sel, nsel, dropped[2];

	if (!in->snap)
		return -EINVAL;
	pthread_once(&cat_once, cat_init);
	sel = malloc((in->snap->n_pools ? in->snap->n_pools : 1) * sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	nsel = select_pools(in->snap, l, sel, &dropped[0], &dropped[1]);
	render_pools(w, in->snap, t, sel, nsel, dropped);
	free(sel);
	render_bindings(w, in->snap);
	render_global(w, in->snap, t);
	render_tokens(w, in->snap);
	render_self(w, in);
	return promfmt__err(w);
}

int expo__render_scrape(struct promfmt *w, const struct expo_scrape *sc)
{
	const struct expo_family *f;

	f = &expo_families[F_SCRAPES];
	promfmt__family(w, f->name, f->type, f->help);
	promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, sc->scrapes);
	f = &expo_families[F_HTTP_TIMEOUTS];
	promfmt__family(w, f->name, f->type, f->help);
	promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, sc->http_timeouts);
	f = &expo_families[F_SNAPSHOTS_HELD];
	promfmt__family(w, f->name, f->type, f->help);
	promfmt__sample_u64(w, NULL, NULL, 0, NULL, NULL, sc->snapshots_held);
	f = &expo_families[F_SCRAPE_DURATION];
	promfmt__family(w, f->name, f->type, f->help);
	promfmt__sample(w, NULL, NULL, 0, NULL, NULL, sc->seconds);
	return promfmt__err(w);
}
