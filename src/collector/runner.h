/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collection loop shared by 'gate' and 'record': take a snapshot every
 * interval (draining the event ring buffer in between) while a command runs,
 * for a duration, or until SIGINT/SIGTERM; always a snapshot at the start
 * and one at the end.
 */
#ifndef DEVMEMTOP_RUNNER_H
#define DEVMEMTOP_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include "collector.h"

enum run_end {
	RUN_END_DURATION = 0,
	RUN_END_COMMAND,
	RUN_END_SIGNAL,
	RUN_END_ERROR,
};

struct run_opts {
	uint64_t interval_ns;
	uint64_t duration_ns;		/* 0: until the command ends or a signal */
	uint64_t linger_ns;		/* keep collecting this long after the command */
	char **cmd;			/* NULL-terminated argv, or NULL */
	bool events;			/* drain the ring buffer into on_event */
	/* a non-zero return stops the run with that error */
	int (*on_snapshot)(void *ctx, const struct dmt_snapshot *s);
	int (*on_event)(void *ctx, const struct dmt_event *ev);
	void *ctx;
};

struct run_result {
	enum run_end end;
	int cmd_status;			/* wait status, -1 when no command ran */
	bool has_cpu;			/* the command's rusage (wait4), children it reaped included */
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t n_snapshots;
	uint64_t n_events;
	uint64_t ringbuf_drops;		/* from the last snapshot */
	char err[256];			/* set for RUN_END_ERROR */
};

/*
 * Run the loop on an existing collector. first may be a snapshot already
 * taken (it is passed to on_snapshot and freed), or NULL. Returns 0 or
 * -errno; on -errno res->err says why (command did not start, snapshot or
 * callback failed); what was collected until then was already delivered.
 */
int run__collect(struct collector *c, struct dmt_snapshot *first, const struct run_opts *o,
		 struct run_result *res);

/*
 * Catch SIGINT and SIGTERM from now on (before the collector starts, which
 * takes seconds): a stop signal that comes before run__collect() ends it at
 * its first snapshot instead of being lost (a shell's background job
 * inherits both ignored) or killing the process.
 */
void run__catch_signals(void);

/* Describe a wait status: "exited with status 3", "killed by signal 9". */
void run__describe_status(int status, char *buf, size_t len);

#endif /* DEVMEMTOP_RUNNER_H */
