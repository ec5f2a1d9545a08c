/* SPDX-License-Identifier: GPL-2.0 */
/* export --from FILE (export_replay.c), on top of the HTTP server. */
#ifndef DEVMEMTOP_EXPORT_REPLAY_H
#define DEVMEMTOP_EXPORT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export_http.h"
#include "privdrop.h"

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

#endif /* DEVMEMTOP_EXPORT_REPLAY_H */
