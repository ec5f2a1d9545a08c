/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `devmemtop export` exposes: the metric catalogue and the rendering
 * of a snapshot into the Prometheus text format. No I/O and no locking:
 * export_http.c owns the HTTP side and calls expo__render() on an immutable
 * snapshot.
 *
 *   struct expo_totals t = {};
 *   expo_totals__account(&t, snap);        once per new snapshot
 *   struct expo_input in = { .snap = snap, .totals = &t, ... };
 *   expo__render(w, &in);                  0 or -errno
 */
#ifndef DEVMEMTOP_EXPO_H
#define DEVMEMTOP_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "snapshot.h"
#include "promfmt.h"

enum expo_scope {
	EXPO_POOL,	/* one series per page pool */
	EXPO_BINDING,	/* one series per devmem binding */
	EXPO_GLOBAL,	/* kernel-wide counters */
	EXPO_SELF,	/* the tool's own health */
};

struct expo_family {
	const char *name;
	const char *type;		/* counter, gauge, histogram */
	const char *help;
	int gate;			/* enum dmt_metric, -1 always */
	enum expo_scope scope;
	/*
	 * Only present with devmem hardware (a live dmabuf binding), or only
	 * under conditions a test bed cannot force (a why string); NULL when a
	 * host with page pool traffic has it.
	 */
	const char *absent_why;
};

/*
 * The catalogue, in output order: expo_family_at(0 .. expo_family_count()-1).
 * expo_families[] holds the hand-written families (NULL-name terminated);
 * the per-binding figures come from the metric table (metrics.c).
 */
extern const struct expo_family expo_families[];
size_t expo_family_count(void);
const struct expo_family *expo_family_at(size_t i);
const struct expo_family *expo_family_find(const char *name);
/*
 * `devmemtop export --list-metrics`: one line per family,
 * "NAME TYPE SCOPE gate=METRIC|- [absent-when: WHY]", where METRIC is the
 * devmemtop_metric_available{metric=...} that must be 1 for it to appear.
 */
void expo_list_metrics(FILE *f);

/* Totals the exporter keeps across snapshots for things the collector drops. */
struct expo_totals {
	uint64_t leaked_niovs;		/* sum of out_at_free of freed bindings */
	uint64_t bindings_freed;
	uint64_t pools_destroyed[DMT_KIND_OTHER + 1];
};

/* Fold the objects a snapshot reports for the last time into *t. */
void expo_totals__account(struct expo_totals *t, const struct dmt_snapshot *s);

/*
 * Cardinality limits on the per-pool series (docs/exporter.md,
 * "Cardinality"): a pool is exported when its ifname matches one of
 * include (fnmatch(3) globs; none given: every interface) and none of
 * exclude; of those, at most max_pools (0: no cap), devmem pools first,
 * then by netlink pool id, then in snapshot order, so the same pools keep
 * their series from scrape to scrape. The pools left out are counted in
 * devmemtop_page_pools_not_exported{reason}; devmemtop_page_pools still
 * counts every pool. The arrays must outlive every render.
 */
struct expo_limits {
	const char *const *include;
	size_t n_include;
	const char *const *exclude;
	size_t n_exclude;
	size_t max_pools;
};

/* The process's limits for inputs without their own (export sets them once, before serving). */
void expo__set_limits(const struct expo_limits *l);

struct expo_input {
	const struct dmt_snapshot *snap;
	const struct expo_limits *limits;	/* NULL: expo__set_limits()' */
	const struct expo_totals *totals;
	double interval_s;		/* configured collection interval */
	uint64_t collections;		/* snapshots taken */
	uint64_t collection_errors;
};

/*
 * Everything that depends only on the snapshot (export_http.c renders it once
 * per published snapshot and shares the text between scrapes).
 */
int expo__render(struct promfmt *w, const struct expo_input *in);
/* The per-scrape tail, after the snapshot's text. */
struct expo_scrape {
	uint64_t scrapes;		/* /metrics requests, this one included */
	uint64_t http_timeouts;		/* connections shut down at the deadline */
	uint64_t snapshots_held;	/* snapshot versions alive (publisher) */
	double seconds;			/* this scrape so far: measure last */
};

int expo__render_scrape(struct promfmt *w, const struct expo_scrape *sc);

#endif /* DEVMEMTOP_EXPO_H */
