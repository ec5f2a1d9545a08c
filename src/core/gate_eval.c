// SPDX-License-Identifier: GPL-2.0
/* Gate evaluation over a run of snapshots; its outputs are in gate_out.c. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gate_eval.h"
#include "metrics.h"
#include "objtrack.h"

union accum {
	struct hist_batch b;
	struct hist_log2 l;
	struct {
		uint64_t c;	/* counters; ratio numerator */
		uint64_t c2;	/* ratio denominator */
	};
};

/* One pool/binding (or the global counters) as one check sees it. */
struct obj {
	union accum acc;	/* over the run: the sum of the steps (objtrack_delta) */
	union accum last;
	int64_t total;		/* GM_TOTAL: last known value, -1 none */
	bool known;		/* the quantity was known at some sighting */
	bool partial;		/* unknown at first: counted from the sighting that knew it */
};

struct gauge {
	uint64_t n;
	double min, max, sum, last;
};

struct check_state {
	const struct gate_check *chk;
	struct objtrack ids;	/* which object is which, across snapshots */
	struct obj *objs;	/* indexed like ids */
	size_t n_objs, cap_objs;
	struct gauge g;
};

struct gate_eval {
	const struct gate_spec *spec;
	struct check_state *cs;
	uint64_t n_snaps;
	uint64_t first_ts, last_ts;
	uint64_t drops_first, drops_last;
};

const char *gate_status_name(enum gate_status s)
{
	switch (s) {
	case GATE_PASS: return "PASS";
	case GATE_FAIL: return "FAIL";
	case GATE_ERROR: return "ERROR";
	case GATE_SKIP: return "SKIP";
	}
	return "?";
}

struct gate_eval *gate_eval__new(const struct gate_spec *spec)
{
	struct gate_eval *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->spec = spec;
	e->cs = calloc(spec->n_checks ? spec->n_checks : 1, sizeof(*e->cs));
	if (!e->cs) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < spec->n_checks; i++) {
		e->cs[i].chk = &spec->checks[i];
		e->cs[i].ids.max = GATE_MAX_OBJS;
	}
	return e;
}

void gate_eval__free(struct gate_eval *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->cs && i < e->spec->n_checks; i++) {
		free(e->cs[i].objs);
		objtrack__fini(&e->cs[i].ids);
	}
	free(e->cs);
	free(e);
}

int gate_eval__check_avail(const struct gate_spec *spec, const struct dmt_availability *avail,
			   char *msg, size_t len)
{
	for (size_t i = 0; i < spec->n_checks; i++) {
		const struct gate_check *c = &spec->checks[i];
		const struct gm_def *d = gm_def(c->metric);

		if (d->avail >= 0 && avail[d->avail].available && avail[d->avail].sampled &&
		    !c->allow_sampled) {
			/* a threshold is exact: a sample of the events may miss the bad one */
			snprintf(msg, len, "%s:%d:%d: metric %s is sampled in this mode (%s), not "
				 "exact (mark the entry 'allow_sampled: true' to gate it anyway)",
				 spec->path, c->line, c->col, d->name, avail[d->avail].source);
			return -EDOM;
		}
		if (d->avail < 0 || c->optional || avail[d->avail].available)
			continue;
		snprintf(msg, len, "%s:%d:%d: metric %s is unavailable on this kernel: %s "
			 "(mark the entry 'optional: true' to skip it there)",
			 spec->path, c->line, c->col, d->name,
			 avail[d->avail].reason[0] ? avail[d->avail].reason : "no reason given");
		return -ENOENT;
	}
	return 0;
}

static bool match_iface(const struct gate_selector *s, const char *ifname, int ifindex)
{
	if (s->interface && fnmatch(s->interface, ifname, 0))
		return false;
	if (s->ifindex >= 0 && s->ifindex != ifindex)
		return false;
	return true;
}

static bool match_pool(const struct gate_selector *s, const struct dmt_pool_snap *p)
{
	return match_iface(s, p->ifname, p->ifindex) &&
	       (s->pool_id < 0 || s->pool_id == p->id) &&
	       (s->binding_id < 0 || (p->kind == DMT_KIND_DEVMEM && s->binding_id == p->binding_id)) &&
	       (s->queue < 0 || s->queue == p->queue) &&
	       (s->kind < 0 || s->kind == (int)p->kind);
}

static bool match_binding(const struct gate_selector *s, const struct dmt_binding_snap *b)
{
	return match_iface(s, b->ifname, b->ifindex) &&
	       (s->binding_id < 0 || s->binding_id == b->id);
}

/*
 * Read the accumulated quantity of metric m from a pool/binding/snapshot:
 * false when the object does not know it now (light mode lists pools it
 * has not located yet with holds and releases unknown): no sample, never 0.
 */
static bool read_accum(enum gm_id m, const struct dmt_snapshot *s, const void *o,
		       union accum *a)
{
	const struct dmt_binding_snap *b = o;
	const struct mdef *md = gm_def(m)->mdef;
	double v;

	memset(a, 0, sizeof(*a));
	if (md) {
		/* a row of the metric table */
		if (md->kind == MK_BATCH)
			a->b = *mdef_batch(md, o);
		else if (md->kind == MK_LOG2)
			a->l = *mdef_log2(md, o);
		else if (!mdef_value(md, o, &v))
			return false;
		else
			a->c = (uint64_t)v;
		return true;
	}
	switch (m) {
	case GM_BIND_NIOVS_PER_CALL:
		a->c = b->alloc_niovs;
		a->c2 = b->alloc_calls;
		break;
	case GM_TOOL_RINGBUF_DROPS: a->c = s->ringbuf_drops; break;
	case GM_TOOL_MAP_FULL: a->c = s->map_full; break;
	default: break;
	}
	return true;
}

/* acc += what the quantity did from prev to cur: objtrack's one delta rule. */
static void accum_step(enum gm_type t, union accum *acc, const union accum *cur,
		       const union accum *prev)
{
	switch (t) {
	case GM_HIST_BATCH: objtrack_delta_batch(&acc->b, &cur->b, &prev->b); break;
	case GM_HIST_LOG2: objtrack_delta_log2(&acc->l, &cur->l, &prev->l); break;
	default:
		acc->c += objtrack_delta(cur->c, prev->c);
		acc->c2 += objtrack_delta(cur->c2, prev->c2);
		break;
	}
}

static void accum_add(enum gm_type t, union accum *d, const union accum *a)
{
	switch (t) {
	case GM_HIST_BATCH: hist_batch_merge(&d->b, &a->b); break;
	case GM_HIST_LOG2: hist_log2_merge(&d->l, &a->l); break;
	default:
		d->c += a->c;
		d->c2 += a->c2;
		break;
	}
}

/* The check's state of the object at index i of its tracker. */
static struct obj *obj_at(struct check_state *cs, int i, bool created)
{
	struct obj *o;

	if (i < 0)
		return NULL;
	if ((size_t)i >= cs->cap_objs) {
		size_t cap = cs->cap_objs ? cs->cap_objs * 2 : 8;
		struct obj *n;

		while (cap <= (size_t)i)
			cap *= 2;
		n = realloc(cs->objs, cap * sizeof(*n));
		if (!n)
			return NULL;
		cs->objs = n;
		cs->cap_objs = cap;
	}
	o = &cs->objs[i];
	if (created) {
		memset(o, 0, sizeof(*o));
		o->total = -1;
		if ((size_t)i >= cs->n_objs)
			cs->n_objs = i + 1;
	}
	return o;
}

/*
 * An accumulating object seen in snapshot number e->n_snaps: a pool or a
 * binding (src), or the snapshot's global counters (src is s). Which object
 * it is comes from the tracker report uses too (objtrack.h).
 */
static int track(struct gate_eval *e, struct check_state *cs, const struct dmt_snapshot *s,
		 const void *src)
{
	enum gm_id m = cs->chk->metric;
	const struct gm_def *def = gm_def(m);
	enum gm_type t = def->type;
	union accum cur;
	bool created = cs->n_objs == 0;
	struct obj *o;
	int i = 0;

	if (def->obj == GM_OBJ_POOL)
		i = objtrack__pool(&cs->ids, src, &created);
	else if (def->obj == GM_OBJ_BINDING)
		i = objtrack__binding(&cs->ids, src, &created);
	if (i < 0)
		return i;	/* -ENOMEM, or -E2BIG past GATE_MAX_OBJS (objtrack) */
	o = obj_at(cs, i, created);
	if (!o)
		return -ENOMEM;
	if (t == GM_TOTAL) {
		double v;

		if (mdef_value(def->mdef, src, &v))
			o->total = (int64_t)v;
		return 0;
	}
	if (!read_accum(m, s, src, &cur))
		return 0;
	if (created || !o->known) {
		/*
		 * present from the start: count from there; appeared later: from
		 * zero (all it did is the run's); known only now (light mode
		 * located it): from here, its history before is not the run's,
		 * and the run's count is a lower bound (partial)
		 */
		if (created && e->n_snaps > 0)
			o->acc = cur;
		o->partial = !created;
		o->known = true;
		o->last = cur;
		return 0;
	}
	accum_step(t, &o->acc, &cur, &o->last);
	o->last = cur;
	return 0;
}

static void gauge_add(struct gauge *g, double v)
{
	if (!g->n || v < g->min)
		g->min = v;
	if (!g->n || v > g->max)
		g->max = v;
	g->sum += v;
	g->last = v;
	g->n++;
}

/* A gauge row of the metric table: sum or max over the matching objects. */
static void sample_table_gauge(struct check_state *cs, const struct dmt_snapshot *s, double *sum,
			       bool *any)
{
	const struct gm_def *d = gm_def(cs->chk->metric);
	const struct mdef *md = d->mdef;
	double v;

	if (!md)
		return;
	for (size_t i = 0; i < mdef_obj_count(md, s); i++) {
		const void *o = mdef_obj_at(md, s, i);

		if (md->obj == MO_POOL && !match_pool(&cs->chk->sel, o))
			continue;
		if (md->obj == MO_BINDING && !match_binding(&cs->chk->sel, o))
			continue;
		if (!mdef_value(md, o, &v))
			continue;
		v *= d->scale;
		if (md->agg == MA_SUM)
			*sum += v;
		else if (!*any || v > *sum)
			*sum = v;
		*any = true;
	}
}

/* One gauge sample per snapshot over the matching objects. */
static void sample_gauge(struct check_state *cs, const struct dmt_snapshot *s)
{
	const struct gate_selector *sel = &cs->chk->sel;
	enum gm_id m = cs->chk->metric;
	double v = 0;
	bool any = false;

	switch (m) {
	case GM_POOL_COUNT:
	case GM_POOL_ZOMBIES:
		for (size_t i = 0; i < s->n_pools; i++) {
			const struct dmt_pool_snap *p = &s->pools[i];

			if (!match_pool(sel, p))
				continue;
			if (m == GM_POOL_COUNT)
				v += p->state != DMT_POOL_DESTROYED;
			else
				v += p->state == DMT_POOL_ZOMBIE;
		}
		any = true;
		break;
	case GM_BIND_COUNT:
		for (size_t i = 0; i < s->n_bindings; i++)
			if (match_binding(sel, &s->bindings[i]))
				v += s->bindings[i].alive;
		any = true;
		break;
	case GM_TOOL_COLLECT_TIME:
		v = s->collect_ns;
		any = true;
		break;
	default:
		sample_table_gauge(cs, s, &v, &any);
		break;
	}
	if (any)
		gauge_add(&cs->g, v);
}

int gate_eval__add(struct gate_eval *e, const struct dmt_snapshot *s)
{
	int err;

	for (size_t i = 0; i < e->spec->n_checks; i++) {
		struct check_state *cs = &e->cs[i];
		const struct gm_def *d = gm_def(cs->chk->metric);

		if (d->type == GM_GAUGE) {
			sample_gauge(cs, s);
			continue;
		}
		if (d->obj == GM_OBJ_GLOBAL) {
			err = track(e, cs, s, s);
		} else if (d->obj == GM_OBJ_POOL) {
			err = 0;
			for (size_t j = 0; !err && j < s->n_pools; j++)
				if (match_pool(&cs->chk->sel, &s->pools[j]))
					err = track(e, cs, s, &s->pools[j]);
		} else {
			err = 0;
			for (size_t j = 0; !err && j < s->n_bindings; j++)
				if (match_binding(&cs->chk->sel, &s->bindings[j]))
					err = track(e, cs, s, &s->bindings[j]);
		}
		if (err)
			return err;
	}
	if (!e->n_snaps) {
		e->first_ts = s->ts_ns;
		e->drops_first = s->ringbuf_drops;
	}
	e->last_ts = s->ts_ns;
	e->drops_last = s->ringbuf_drops;
	e->n_snaps++;
	return 0;
}

/* Log2 bucket bound on the side the operator needs to be safe. */
static double log2_value(unsigned int slot, enum gate_op op, enum gate_bound *b)
{
	if (op == GO_GT || op == GO_GE) {
		*b = GATE_LOWER;
		return slot ? (double)hist_log2_bound(slot - 1) + 1 : 0;
	}
	*b = GATE_UPPER;
	return (double)hist_log2_bound(slot);
}

static int lowest_slot(const uint64_t *slots, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (slots[i])
			return i;
	return 0;
}

static int highest_slot(const uint64_t *slots, unsigned int n)
{
	for (int i = n - 1; i >= 0; i--)
		if (slots[i])
			return i;
	return 0;
}

static void eval_hist(struct gate_result *r, enum gm_type t, const union accum *a, double dur)
{
	const struct gate_threshold *th = r->th;
	const uint64_t *slots = t == GM_HIST_BATCH ? a->b.slots : a->l.slots;
	unsigned int n = t == GM_HIST_BATCH ? DMT_BATCH_MAX + 1 : DMT_LOG2_SLOTS;
	uint64_t count = t == GM_HIST_BATCH ? a->b.count : a->l.count;
	uint64_t sum = t == GM_HIST_BATCH ? a->b.sum : a->l.sum;
	int slot;

	r->bound = GATE_EXACT;
	if (th->stat == GS_COUNT) {
		r->has_data = true;
		r->observed = count;
		return;
	}
	if (th->stat == GS_RATE) {
		r->has_data = dur > 0;
		r->observed = dur > 0 ? count / dur : 0;
		if (!r->has_data)
			snprintf(r->note, sizeof(r->note), "no data: run too short for a rate");
		return;
	}
	if (!count) {
		snprintf(r->note, sizeof(r->note), "no data: no samples in the run");
		return;
	}
	r->has_data = true;
	switch (th->stat) {
	case GS_AVG:
		r->observed = (double)sum / count;
		return;
	case GS_P:
		/* count > 0 here and the parser keeps q in (0, 1] */
		slot = hist_slots_quantile(slots, n, count, th->q);
		break;
	case GS_MAX:
		slot = highest_slot(slots, n);
		break;
	default:
		slot = lowest_slot(slots, n);
		break;
	}
	if (t == GM_HIST_BATCH)
		r->observed = slot;
	else
		r->observed = log2_value(slot, th->op, &r->bound);
}

static void eval_one(struct gate_eval *e, struct check_state *cs, struct gate_result *r)
{
	const struct gm_def *d = gm_def(cs->chk->metric);
	double dur = e->n_snaps > 1 ? (e->last_ts - e->first_ts) / 1e9 : 0;
	const char *what = d->obj == GM_OBJ_POOL ? "pool" : "binding";
	size_t n_unknown = 0, n_partial = 0;
	union accum sum;

	if (!e->n_snaps) {
		snprintf(r->note, sizeof(r->note), "no data: no snapshot was taken");
		return;
	}
	switch (d->type) {
	case GM_GAUGE:
		if (!cs->g.n) {
			snprintf(r->note, sizeof(r->note), "no data: no matching %s reported it",
				 what);
			return;
		}
		r->has_data = true;
		switch (r->th->stat) {
		case GS_MAX: r->observed = cs->g.max; break;
		case GS_MIN: r->observed = cs->g.min; break;
		case GS_AVG: r->observed = cs->g.sum / cs->g.n; break;
		default: r->observed = cs->g.last; break;
		}
		return;
	case GM_TOTAL:
		r->observed = 0;
		for (size_t i = 0; i < cs->n_objs; i++) {
			int64_t v = cs->objs[i].total;

			if (v < 0)
				continue;
			if (r->th->stat == GS_MAX)
				r->observed = r->has_data && r->observed > v ? r->observed : v;
			else
				r->observed += v;
			r->has_data = true;
		}
		if (!r->has_data)
			snprintf(r->note, sizeof(r->note),
				 cs->n_objs ? "no data: no matching binding was %s during the run" :
					      "no data: no matching binding seen%s",
				 cs->n_objs ? d->mdef->event : "");
		return;
	default:
		break;
	}
	if (!cs->n_objs) {
		snprintf(r->note, sizeof(r->note), "no data: no matching %s seen", what);
		return;
	}
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < cs->n_objs; i++) {
		n_unknown += !cs->objs[i].known;
		n_partial += cs->objs[i].partial;
		accum_add(d->type, &sum, &cs->objs[i].acc);
	}
	if (n_unknown == cs->n_objs) {
		snprintf(r->note, sizeof(r->note), "no data: unknown for the %zu matching %s%s "
			 "(light mode never located %s)", n_unknown, what, n_unknown > 1 ? "s" : "",
			 n_unknown > 1 ? "them" : "it");
		return;
	}
	if (d->type == GM_RATIO) {
		r->has_data = sum.c2 > 0;
		r->observed = sum.c2 ? (double)sum.c / sum.c2 : 0;
		if (!r->has_data)
			snprintf(r->note, sizeof(r->note), "no data: no provider call in the run");
		return;
	}
	if (d->type == GM_COUNTER) {
		r->has_data = true;
		r->bound = GATE_EXACT;
		if (n_unknown || n_partial) {
			/* what the others did is not known: at least this much */
			r->bound = GATE_LOWER;
			snprintf(r->note, sizeof(r->note), "lower bound: %zu of %zu matching %ss "
				 "unknown for all or part of the run (light mode)",
				 n_unknown + n_partial, cs->n_objs, what);
		}
		if (r->th->stat == GS_RATE) {
			r->has_data = dur > 0;
			r->observed = dur > 0 ? sum.c / dur : 0;
			if (!r->has_data)
				snprintf(r->note, sizeof(r->note), "no data: run too short for a rate");
		} else {
			r->observed = sum.c;
		}
		return;
	}
	eval_hist(r, d->type, &sum, dur);
}

void gate_report__count(struct gate_report *rep)
{
	rep->n_pass = rep->n_fail = rep->n_error = rep->n_skip = 0;
	for (size_t i = 0; i < rep->n_results; i++) {
		switch (rep->results[i].status) {
		case GATE_PASS: rep->n_pass++; break;
		case GATE_FAIL: rep->n_fail++; break;
		case GATE_ERROR: rep->n_error++; break;
		case GATE_SKIP: rep->n_skip++; break;
		}
	}
}

/* A lower bound shows "> x" or ">= x", never an upper limit or an equality. */
static bool bound_proves(const struct gate_result *r)
{
	return r->bound != GATE_LOWER || r->th->op == GO_GT || r->th->op == GO_GE;
}

int gate_eval__finish(struct gate_eval *e, struct gate_report *rep)
{
	const struct gate_spec *spec = e->spec;
	size_t n = 0;

	/* source, kernel, mode and error are the caller's: leave them be */
	rep->spec = spec;
	rep->results = NULL;
	rep->n_results = 0;
	for (size_t i = 0; i < spec->n_checks; i++)
		n += spec->checks[i].n_thresholds;
	rep->results = calloc(n ? n : 1, sizeof(*rep->results));
	if (!rep->results)
		return -ENOMEM;
	rep->n_results = n;
	rep->n_snapshots = e->n_snaps;
	rep->duration_s = e->n_snaps > 1 ? (e->last_ts - e->first_ts) / 1e9 : 0;
	rep->ringbuf_drops = e->drops_last - e->drops_first;
	n = 0;
	for (size_t i = 0; i < spec->n_checks; i++) {
		for (size_t j = 0; j < spec->checks[i].n_thresholds; j++) {
			struct gate_result *r = &rep->results[n++];

			r->chk = &spec->checks[i];
			r->th = &spec->checks[i].thresholds[j];
			eval_one(e, &e->cs[i], r);
			if (!r->has_data && r->chk->no_data_skip)
				r->status = GATE_SKIP;
			else
				r->status = r->has_data && gate_op_holds(r->th->op, r->observed,
									 r->th->value) &&
					    bound_proves(r) ? GATE_PASS : GATE_FAIL;
		}
	}
	gate_report__count(rep);
	return 0;
}

void gate_report__mark_unavailable(struct gate_report *rep, const struct dmt_availability *avail)
{
	for (size_t i = 0; i < rep->n_results; i++) {
		struct gate_result *r = &rep->results[i];
		const struct gm_def *d = gm_def(r->chk->metric);

		if (d->avail < 0 || avail[d->avail].available)
			continue;
		r->status = r->chk->optional ? GATE_SKIP : GATE_ERROR;
		r->has_data = false;
		snprintf(r->note, sizeof(r->note), "unavailable: %s",
			 avail[d->avail].reason[0] ? avail[d->avail].reason : "no reason given");
	}
	gate_report__count(rep);
}

void gate_report__fini(struct gate_report *rep)
{
	free(rep->results);
	rep->results = NULL;
	rep->n_results = 0;
}

int gate_report__exit_code(const struct gate_report *rep)
{
	if (rep->n_error || rep->error[0])
		return 2;
	return rep->n_fail ? 1 : 0;
}
