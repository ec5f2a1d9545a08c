/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording fed by the collection loop (runner.h): used by 'record' and
 * by 'gate --record'. The META frame is built from the collector and the
 * run's first snapshot; close writes the END frame from the run's result.
 *
 *   struct recorder *r = recorder__open(path, c, first, interval, cmd);
 *   recorder__snapshot(r, s) / recorder__event(r, ev)   from the run loop
 *   recorder__close(r, &res);                            0 or -errno
 */
#ifndef DEVMEMTOP_RECORDER_H
#define DEVMEMTOP_RECORDER_H

#include "collector.h"
#include "runner.h"

struct recorder;

/*
 * NULL + errno when the file cannot be written. The file is created 0600,
 * without kernel addresses (record.h, rec_meta.kernel_addresses);
 * recorder__open_raw() keeps them (record --kernel-addresses).
 */
struct recorder *recorder__open(const char *path, struct collector *c,
				const struct dmt_snapshot *first, uint64_t interval_ns, char **cmd);
struct recorder *recorder__open_raw(const char *path, struct collector *c,
				    const struct dmt_snapshot *first, uint64_t interval_ns,
				    char **cmd, bool kernel_addresses);
int recorder__snapshot(struct recorder *r, const struct dmt_snapshot *s);
int recorder__event(struct recorder *r, const struct dmt_event *ev);
uint64_t recorder__snapshots(const struct recorder *r);
uint64_t recorder__events(const struct recorder *r);
/*
 * Write the END frame (also after a failed run: the file stays readable),
 * flush, close, free. 0, or the first write error as -errno.
 */
int recorder__close(struct recorder *r, const struct run_result *res);

#endif /* DEVMEMTOP_RECORDER_H */
