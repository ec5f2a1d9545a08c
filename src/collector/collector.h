/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector: probes what the running kernel lets us attach, loads and
 * attaches the BPF programs, and turns their maps into snapshots. The live
 * view, the exporter, the gates and the recorder all read snapshots.
 *
 *   struct collector *c = collector__new(&opts);    NULL + errno on error,
 *                                                    the reason in opts.errbuf
 *   collector__snapshot(c, &snap);                   0 or -errno
 *   ... use snap ...
 *   snapshot__free(snap);
 *   collector__free(c);
 *
 * A collector is not thread safe: one thread calls into it (the exporter
 * publishes copies of snapshots to its HTTP threads).
 */
#ifndef DEVMEMTOP_COLLECTOR_H
#define DEVMEMTOP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "devmemtop.h"
#include "snapshot.h"

struct collector_opts {
	/* log sink for -v: printf-like, NULL for silent */
	void (*log)(int level, const char *fmt, ...);
	int verbosity;
	/*
	 * The mode: -1 the full mode (best available), DMT_MODE_DEVMEM (no
	 * program on the per-page tracepoints outside sampling windows; the
	 * default of top and export), DMT_MODE_LIGHT, or DMT_MODE_FENTRY /
	 * DMT_MODE_TP_ONLY (the full mode capped, for tests).
	 */
	int force_mode;
	bool no_netlink;
	bool events;			/* keep the event ring buffer open */
	bool enable_bpf_stats;		/* turn on kernel.bpf_stats_enabled */
	/*
	 * Light and devmem modes: the per-page tracepoints are attached for
	 * window_ms every period_ms to find pools by address and sample refill
	 * batches. 0: the defaults below.
	 */
	unsigned int light_window_ms;
	unsigned int light_period_ms;
	/*
	 * Where collector__new() puts its one-line reason when it fails
	 * ("no kernel BTF (...)", "cannot load BPF programs: ..."). NULL: the
	 * reason goes to log (level 0) instead.
	 */
	char *errbuf;
	size_t errlen;
};

/*
 * Light and devmem modes' default sampling: a 0.2 % duty cycle in few, long
 * windows. Every window attaches and detaches the per-page tracepoints, a
 * fixed cost per window (static key and static call patching with IPIs,
 * whatever the traffic), so 120ms/60s pays it a sixth as often as 20ms/10s
 * at the same duty (docs/light-mode.md).
 */
#define DMT_LIGHT_WINDOW_MS	120
#define DMT_LIGHT_PERIOD_MS	60000

struct collector;

struct collector *collector__new(const struct collector_opts *opts);
/* Fill *out with a new snapshot; caller frees it with snapshot__free(). */
int collector__snapshot(struct collector *c, struct dmt_snapshot **out);
/*
 * Poll the event ring buffer for up to timeout_ms and call cb for each
 * event. Returns the number of events or -errno. Only with opts.events.
 */
typedef int (*collector_event_fn)(void *ctx, const struct dmt_event *ev);
int collector__poll_events(struct collector *c, int timeout_ms, collector_event_fn cb,
			   void *ctx);
/* The ring buffer's epoll fd: readable when events wait (epoll_pwait on it). */
int collector__events_fd(const struct collector *c);
enum dmt_attach_mode collector__mode(const struct collector *c);
/* One line per probe, for -v and record headers; NULL-terminated. */
const char *const *collector__probe_log(const struct collector *c);
void collector__free(struct collector *c);

#endif /* DEVMEMTOP_COLLECTOR_H */
