// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_out.h"
#include "metrics.h"
#include "podcg.h"
#include "textsafe.h"
#include "util.h"

/* JSON must be valid UTF-8: kernel- and file-supplied strings may not be (textsafe.h) */
static struct json_object *jstr(const char *s)
{
	char buf[1024];

	return json_object_new_string(textsafe_utf8(buf, sizeof(buf), s));
}

/* A name (interface, reason) that may be empty: null then. */
static struct json_object *json_name(const char *s)
{
	return s && *s ? jstr(s) : NULL;
}

/* Strings that may come from a recording too: valid UTF-8, "" when empty. */
static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, jstr(v ? v : ""));
}

static void add_int_or_null(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, v < 0 ? NULL : json_object_new_int64(v));
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/*
 * {"count", "sum", "p50", "p90", "p99", "max", "buckets": [[le, count]...]}
 * with only the non-empty buckets; le is the bucket's inclusive upper bound.
 */
struct json_object *json_log2_hist(const struct hist_log2 *h, double unit_scale)
{
	struct json_object *o = json_object_new_object();
	struct json_object *b = json_object_new_array();
	static const struct {
		const char *k;
		double q;
	} qs[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 } };
	uint64_t v;

	add_u64(o, "count", h->count);
	json_object_object_add(o, "sum", json_object_new_double(h->sum * unit_scale));
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++)
		json_object_object_add(o, qs[i].k, hist_log2_quantile(h, qs[i].q, &v) ? NULL :
				       json_object_new_double(v * unit_scale));
	json_object_object_add(o, "max", h->count ?
			       json_object_new_double(hist_log2_max(h) * unit_scale) : NULL);
	for (unsigned int i = 0; i < DMT_LOG2_SLOTS; i++) {
		struct json_object *pair;

		if (!h->slots[i])
			continue;
		pair = json_object_new_array();
		json_object_array_add(pair, json_object_new_double(hist_log2_bound(i) * unit_scale));
		json_object_array_add(pair, json_object_new_uint64(h->slots[i]));
		json_object_array_add(b, pair);
	}
	json_object_object_add(o, "buckets", b);
	return o;
}

/* Exact batch histogram: {"count","sum","mean","p50","p99","max","sizes":{"64":n}} */
struct json_object *json_batch_hist(const struct hist_batch *h)
{
	struct json_object *o = json_object_new_object();
	struct json_object *sizes = json_object_new_object();
	char key[16];
	uint64_t v;

	add_u64(o, "count", h->count);
	add_u64(o, "sum", h->sum);
	json_object_object_add(o, "mean", h->count ?
			       json_object_new_double(hist_batch_mean(h)) : NULL);
	json_object_object_add(o, "p50", hist_batch_quantile(h, 0.5, &v) ? NULL :
			       json_object_new_uint64(v));
	json_object_object_add(o, "p99", hist_batch_quantile(h, 0.99, &v) ? NULL :
			       json_object_new_uint64(v));
	json_object_object_add(o, "max", h->count ? json_object_new_uint64(hist_batch_max(h)) :
			       NULL);
	for (unsigned int i = 0; i <= DMT_BATCH_MAX; i++) {
		if (!h->slots[i])
			continue;
		snprintf(key, sizeof(key), "%u", i);
		add_u64(sizes, key, h->slots[i]);
	}
	json_object_object_add(o, "sizes", sizes);
	return o;
}

/* A metric table row: null when unavailable on this kernel or unknown. */
static struct json_object *json_mdef(const struct mdef *d, const void *o,
				     const struct dmt_availability *avail)
{
	double v;

	if (!d->json_always && !mdef_available(d, avail))
		return NULL;
	/* a histogram the object does not have (a TX one of an RX binding) */
	if (d->kind != MK_SCALAR && d->known && !d->known(o))
		return NULL;
	if (d->kind == MK_LOG2)
		return json_log2_hist(mdef_log2(d, o), 1);
	if (d->kind == MK_BATCH)
		return json_batch_hist(mdef_batch(d, o));
	if (!mdef_value(d, o, &v))
		return NULL;
	switch (d->repr) {
	case MR_U64:
	case MR_U32:
	case MR_U64_NZ:
	case MR_U32_NZ:
		return json_object_new_uint64(mdef_raw(d, o));
	case MR_I64:
	case MR_S64:
	case MR_S32:
		return json_object_new_int64((int64_t)mdef_raw(d, o));
	case MR_F64:
		return json_object_new_double(v);
	case MR_DERIVED:
		break;
	}
	return d->integral ? json_object_new_int64((int64_t)v) : json_object_new_double(v);
}

/* The rows of object kind obj with a JSON key: scalars (hists false) or histograms. */
static void json_rows(struct json_object *j, enum mdef_obj obj, bool hists, const void *o,
		      const struct dmt_availability *avail)
{
	for (size_t i = 0; i < mdef_count; i++) {
		const struct mdef *d = &mdefs[i];

		if (d->obj == obj && d->json && (d->kind != MK_SCALAR) == hists)
			json_object_object_add(j, d->json, json_mdef(d, o, avail));
	}
}

static struct json_object *json_pool(const struct dmt_pool_snap *p,
				     const struct dmt_availability *avail)
{
	struct json_object *o = json_object_new_object();
	char addr[32];

	json_object_object_add(o, "id", json_object_new_uint64(p->id));
	snprintf(addr, sizeof(addr), "%#llx", (unsigned long long)p->addr);
	json_object_object_add(o, "addr", p->addr ? jstr(addr) : NULL);
	json_object_object_add(o, "ifindex", p->ifindex ? json_object_new_int(p->ifindex) : NULL);
	json_object_object_add(o, "ifname", json_name(p->ifname));
	json_object_object_add(o, "netns", p->netns ? json_object_new_uint64(p->netns) : NULL);
	add_int_or_null(o, "queue", p->queue);
	json_object_object_add(o, "napi_id", p->napi_id ? json_object_new_uint64(p->napi_id) :
			       NULL);
	add_str(o, "kind", dmt_kind_name(p->kind));
	json_object_object_add(o, "binding_id", p->binding_id ?
			       json_object_new_uint64(p->binding_id) : NULL);
	add_str(o, "attribution", dmt_attr_src_name(p->attr_src));
	json_object_object_add(o, "netlink_listed", json_object_new_boolean(p->netlink_listed));
	add_str(o, "state", dmt_pool_state_name(p->state));
	json_rows(o, MO_POOL, false, p, avail);
	json_rows(o, MO_POOL, true, p, avail);
	return o;
}

static struct json_object *json_binding(const struct dmt_binding_snap *b,
					const struct dmt_availability *avail)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "id", b->id);
	json_object_object_add(o, "ifindex", b->ifindex ? json_object_new_int(b->ifindex) : NULL);
	json_object_object_add(o, "ifname", json_name(b->ifname));
	add_str(o, "layout", b->layout);
	json_object_object_add(o, "alive", json_object_new_boolean(b->alive));
	json_object_object_add(o, "unbound", json_object_new_boolean(b->unbound));
	add_str(o, "direction", b->tx ? "tx" : "rx");
	json_rows(o, MO_BINDING, false, b, avail);
	/* null held figures say why, when the hooks are there */
	json_object_object_add(o, "held_reason", b->held_why ?
			       json_object_new_string(dmt_held_why_text(b->held_why)) : NULL);
	json_rows(o, MO_BINDING, true, b, avail);
	return o;
}

/*
 * A holder's cgroup (issue 24): its id, path, and the pod and container the
 * path names; each null when unknown or not a Kubernetes pod.
 */
static void json_holder_cgroup(struct json_object *o, const struct dmt_holder_snap *h)
{
	struct podcg pc;
	bool pod = h->cgroup[0] && !podcg__parse(h->cgroup, &pc);

	json_object_object_add(o, "cgroup_id",
			       h->cgroup_id ? json_object_new_uint64(h->cgroup_id) : NULL);
	json_object_object_add(o, "cgroup", json_name(h->cgroup));
	json_object_object_add(o, "pod_uid", pod ? jstr(pc.pod_uid) : NULL);
	json_object_object_add(o, "container_id", pod ? json_name(pc.container_id) : NULL);
	json_object_object_add(o, "container_runtime", pod ? json_name(pc.runtime) : NULL);
}

/* Sockets holding frag tokens: null when the token hooks are not there. */
static struct json_object *json_holders(const struct dmt_snapshot *s)
{
	struct json_object *a;

	if (!s->avail[DMT_M_BIND_HELD_BY_SOCKETS].available)
		return NULL;
	a = json_object_new_array();
	for (size_t i = 0; i < s->n_holders; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "pid", h->pid ? json_object_new_uint64(h->pid) : NULL);
		json_object_object_add(o, "comm", json_name(h->comm));
		add_u64(o, "binding_id", h->binding_id);
		if (h->counts_unknown) {	/* light, autorelease off: no count per socket */
			json_object_object_add(o, "tokens", NULL);
			json_object_object_add(o, "niovs", NULL);
		} else {
			add_u64(o, "tokens", h->tokens);
			add_u64(o, "niovs", h->niovs);
		}
		if (dmt_snap_holder_history(s)) {
			json_object_object_add(o, "oldest_token_age_s",
					       json_object_new_double(h->oldest_age_ns / 1e9));
			add_u64(o, "tokens_handed", h->handed);
			add_u64(o, "tokens_returned", h->returned);
			add_u64(o, "tokens_released", h->released);
		} else {	/* light mode: the kernel keeps no history */
			json_object_object_add(o, "oldest_token_age_s", NULL);
			json_object_object_add(o, "tokens_handed", NULL);
			json_object_object_add(o, "tokens_returned", NULL);
			json_object_object_add(o, "tokens_released", NULL);
		}
		/* SO_DEVMEM_AUTORELEASE (kernel-patches 0012) */
		json_object_object_add(o, "token_mode",
				       json_object_new_string(h->manual ? "manual" : "autorelease"));
		if (h->manual)
			json_object_object_add(o, "token_note", json_object_new_string(
				"without SO_DEVMEM_AUTORELEASE tokens are counted per niov of "
				"the binding: any socket of it may return them, references "
				"left are drained at unbind"));
		json_holder_cgroup(o, h);
		json_object_array_add(a, o);
	}
	return a;
}

/* Token cost: tokens per recvmsg and per DONTNEED call, DONTNEED latency. */
static struct json_object *json_token_cost(const struct dmt_snapshot *s)
{
	const struct dmt_tok_cost *t = &s->tok_cost;
	bool dn = s->avail[DMT_M_DONTNEED_COST].available;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "tokens_per_recvmsg",
			       s->avail[DMT_M_RECVMSG_TOKENS].available ?
			       json_log2_hist(&t->per_recvmsg, 1) : NULL);
	json_object_object_add(o, "tokens_per_dontneed",
			       dn ? json_log2_hist(&t->per_dontneed, 1) : NULL);
	json_object_object_add(o, "dontneed_latency_ns",
			       dn ? json_log2_hist(&t->dontneed_ns, 1) : NULL);
	json_object_object_add(o, "dontneed_latency_per_token_ns",
			       dn ? json_log2_hist(&t->dontneed_ns_token, 1) : NULL);
	return o;
}

struct json_object *json_snapshot(const struct dmt_snapshot *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *av = json_object_new_object();
	struct json_object *unav = json_object_new_array();
	struct json_object *pools = json_object_new_array();
	struct json_object *binds = json_object_new_array();
	struct json_object *health = json_object_new_object();
	struct json_object *progs = json_object_new_array();

	if (!o)
		return NULL;
	add_str(o, "schema", DMT_JSON_SCHEMA);
	json_object_object_add(o, "version", json_object_new_int(DMT_JSON_VERSION));
	add_u64(o, "seq", s->seq);
	add_u64(o, "ts_ns", s->ts_ns);
	add_u64(o, "wall_ns", s->wall_ns);
	json_object_object_add(o, "interval_s", json_object_new_double(s->interval_s));
	add_str(o, "mode", dmt_mode_name(s->mode));
	for (int m = 0; m < DMT_M__COUNT; m++) {
		struct json_object *a = json_object_new_object();

		json_object_object_add(a, "available", json_object_new_boolean(s->avail[m].available));
		add_str(a, "source", s->avail[m].source);
		add_str(a, "method", dmt_avail_method(&s->avail[m]));
		json_object_object_add(a, "reason", s->avail[m].available ? NULL :
				       s->avail[m].reason[0] ? json_name(s->avail[m].reason) :
				       json_object_new_string(""));
		json_object_object_add(av, dmt_metric_name(m), a);
		if (!s->avail[m].available) {
			char line[256];

			snprintf(line, sizeof(line), "%s: unavailable: %s", dmt_metric_name(m),
				 s->avail[m].reason);
			json_object_array_add(unav, json_name(line));
		}
	}
	json_object_object_add(o, "metrics", av);
	json_object_object_add(o, "unavailable", unav);
	for (size_t i = 0; i < s->n_pools; i++)
		json_object_array_add(pools, json_pool(&s->pools[i], s->avail));
	json_object_object_add(o, "pools", pools);
	for (size_t i = 0; i < s->n_bindings; i++)
		json_object_array_add(binds, json_binding(&s->bindings[i], s->avail));
	json_object_object_add(o, "bindings", binds);
	json_rows(o, MO_GLOBAL, false, s, s->avail);
	json_rows(o, MO_GLOBAL, true, s, s->avail);
	json_object_object_add(o, "holders", json_holders(s));
	json_object_object_add(o, "token_cost", json_token_cost(s));
	add_u64(health, "ringbuf_drops", s->ringbuf_drops);
	add_u64(health, "map_full", s->map_full);
	add_u64(health, "latency_unmatched", s->lat_missed);
	add_u64(health, "collect_ns", s->collect_ns);
	add_u64(health, "token_map_full", s->tok_cost.map_full);
	add_u64(health, "token_holders_full", s->tok_cost.holders_full);
	add_u64(health, "token_cmsg_no_socket", s->tok_cost.no_socket);
	add_u64(health, "token_dontneed_mismatch", s->tok_cost.dontneed_mismatch);
	json_object_object_add(health, "bpf_stats_enabled",
			       json_object_new_boolean(s->bpf_stats_enabled));
	for (size_t i = 0; i < s->n_progs; i++) {
		struct json_object *p = json_object_new_object();

		add_str(p, "name", s->progs[i].name);
		json_object_object_add(p, "attached", json_object_new_boolean(s->progs[i].attached));
		add_u64(p, "run_cnt", s->progs[i].run_cnt);
		add_u64(p, "run_time_ns", s->progs[i].run_time_ns);
		json_object_array_add(progs, p);
	}
	json_object_object_add(health, "programs", progs);
	json_object_object_add(o, "health", health);
	return o;
}
