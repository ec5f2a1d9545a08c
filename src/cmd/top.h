/* SPDX-License-Identifier: GPL-2.0 */
/* The live view's options and filters, split out for unit tests. */
#ifndef DEVMEMTOP_TOP_H
#define DEVMEMTOP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "collector/collector.h"

enum top_sort {
	TOP_SORT_HOLDS = 0,
	TOP_SORT_INFLIGHT,
	TOP_SORT_ID,
	TOP_SORT_BATCH,
	TOP_SORT_IFACE,
};

struct top_opts {
	uint64_t interval_ns;
	uint64_t count;		/* 0: until stopped */
	bool batch;
	bool json;
	bool help;
	bool no_netlink;
	bool bpf_stats;
	char iface[DMT_IFNAMSIZ];
	uint32_t binding;
	enum top_sort sort;
	int force_mode;		/* DMT_MODE_DEVMEM (default), -1 full, ... */
	unsigned int light_window_ms;	/* --sampling, 0 default */
	unsigned int light_period_ms;
	int verbose;
};

/* What the live view says when there is no page pool or binding at all. */
#define TOP_NO_POOL_HINT "No page pool yet: they appear with XDP or devmem traffic. Try: sudo make demo"

/* 0, or -EINVAL with a one-line message in err. */
int top_parse_args(int argc, char **argv, struct top_opts *o, char *err, size_t errlen);
bool top_pool_match(const struct top_opts *o, const struct dmt_pool_snap *p);
bool top_binding_match(const struct top_opts *o, const struct dmt_binding_snap *b);
void top_unavailable_summary(const struct dmt_snapshot *s, char *buf, size_t len);
/* Metrics this mode samples instead of counting exactly, with how; "" none. */
void top_sampled_summary(const struct dmt_snapshot *s, char *buf, size_t len);
/* The tables of -b for snapshot s (prev: the one before, or NULL), to f. */
void top_print_text(const struct top_opts *o, const struct dmt_snapshot *s,
		    const struct dmt_snapshot *prev, FILE *f);
/* One line of text for an event from the ring buffer. */
void top_event_format(const struct dmt_event *e, char *buf, size_t len);

#endif /* DEVMEMTOP_TOP_H */
