/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's HTTP side (export.c), shared with the recording replay
 * (export_replay.c): both publish snapshots through one exporter.
 *
 *   ex = exporter__new(&opts, msg, len);   binds the socket; NULL + msg
 *   publisher__publish(exporter__publisher(ex), snap, ...);
 *   exporter__start(ex);                   HTTP threads (after privdrop)
 *   exporter__reap(ex);                    request deadlines; returns the next
 *   exporter__free(ex);
 */
#ifndef DEVMEMTOP_EXPORT_H
#define DEVMEMTOP_EXPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector.h"
#include "expo.h"
#include "privdrop.h"
#include "publisher.h"

struct webcfg;

struct exporter_opts {
	const char *listen;		/* "host:port", "[v6]:port" */
	double interval_s;
	unsigned int http_timeout_s;
	unsigned int max_conns;
	unsigned int max_conns_per_client;
	struct webcfg *web;		/* TLS and basic auth; NULL: plain HTTP */
};

struct exporter;

struct exporter *exporter__new(const struct exporter_opts *o, char *msg, size_t msglen);
int exporter__start(struct exporter *ex);
/*
 * Shut down connections past their request deadline; the next deadline
 * (monotonic ns) or UINT64_MAX. A new connection sends EXPORT_WAKE_SIG to
 * the thread that made the exporter: block it and take it with
 * sigtimedwait() along with the stop signals, then reap again.
 */
#define EXPORT_WAKE_SIG		SIGUSR2
uint64_t exporter__reap(struct exporter *ex);
/*
 * Block SIGINT, SIGTERM and EXPORT_WAKE_SIG (into *sigs, for sigtimedwait)
 * before any thread starts, so every thread inherits the mask; ignore SIGPIPE.
 */
void export__block_signals(sigset_t *sigs);
void exporter__free(struct exporter *ex);
struct publisher *exporter__publisher(struct exporter *ex);
const char *exporter__addr(const struct exporter *ex);
/* "https" with TLS configured, else "http" */
const char *exporter__scheme(const struct exporter *ex);

/* export --once: one scrape of snap to stdout; 0 or -errno. */
int export__print_once(struct dmt_snapshot *snap, const struct expo_totals *t,
		       double interval_s, uint64_t collections);

/*
 * export --from FILE: serve a recording (export_replay.c).
 * check: before anything binds, read the whole file once; 0, or -errno and
 * one line in msg. Sets *interval_ns to the recording's interval / speed.
 * run: publish its snapshots through ex (NULL with once: print the last
 * one's scrape) at their recorded pace divided by speed, then keep serving
 * the last one until SIGINT/SIGTERM. Returns the exit status.
 */
int export_replay__check(const char *path, double speed, uint64_t *interval_ns,
			 char *msg, size_t msglen);
int export_replay__run(struct exporter *ex, const char *path, double speed, bool once,
		       const struct privdrop_opts *po);

#endif /* DEVMEMTOP_EXPORT_H */
