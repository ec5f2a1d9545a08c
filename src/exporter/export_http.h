/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's HTTP server (export_http.c), used by live collection
 * (export.c) and the recording replay (export_replay.c): both publish
 * snapshots through one exporter.
 *
 *   ex = exporter__new(&opts, msg, len);   binds the socket; NULL + msg
 *   publisher__publish(exporter__publisher(ex), snap, ...);
 *   exporter__start(ex);                   HTTP threads (after privdrop)
 *   exporter__reap(ex);                    request deadlines; returns the next
 *   exporter__free(ex);
 */
#ifndef DEVMEMTOP_EXPORT_HTTP_H
#define DEVMEMTOP_EXPORT_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "expo.h"
#include "publisher.h"
#include "snapshot.h"

/* the default --listen */
#define EXPORT_DEFAULT_LISTEN	"127.0.0.1:9435"

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

#endif /* DEVMEMTOP_EXPORT_HTTP_H */
