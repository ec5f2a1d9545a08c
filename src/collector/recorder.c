// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "record.h"
#include "recorder.h"
#include "util.h"

struct recorder {
	struct rec_writer *w;
	uint64_t snaps;
	uint64_t events;
	int err;		/* first write error, then nothing more is written */
};

static void join_cmd(char *buf, size_t len, char **cmd)
{
	buf[0] = '\0';
	for (size_t i = 0; cmd && cmd[i]; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "", cmd[i]);
}

struct recorder *recorder__open(const char *path, struct collector *c,
				const struct dmt_snapshot *first, uint64_t interval_ns, char **cmd)
{
	return recorder__open_raw(path, c, first, interval_ns, cmd, false);
}

struct recorder *recorder__open_raw(const char *path, struct collector *c,
				    const struct dmt_snapshot *first, uint64_t interval_ns,
				    char **cmd, bool kernel_addresses)
{
	struct recorder *r = calloc(1, sizeof(*r));
	struct rec_meta *m = calloc(1, sizeof(*m));
	const char *const *log;
	struct utsname u;
	int err = 0;

	if (!r || !m) {
		err = -ENOMEM;
		goto err;
	}
	snprintf(m->version, sizeof(m->version), "%s", DEVMEMTOP_VERSION);
	if (!uname(&u)) {
		snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
		snprintf(m->host, sizeof(m->host), "%.63s", u.nodename);
	}
	join_cmd(m->cmdline, sizeof(m->cmdline), cmd);
	m->start_wall_ns = first->wall_ns;
	m->start_mono_ns = first->ts_ns;
	m->interval_ns = interval_ns;
	m->mode = collector__mode(c);
	m->kernel_addresses = kernel_addresses;
	memcpy(m->avail, first->avail, sizeof(m->avail));
	log = collector__probe_log(c);
	for (m->n_probe_log = 0; log && log[m->n_probe_log]; m->n_probe_log++)
		;
	/* borrowed: the collector owns the lines */
	m->probe_log = (char **)log;
	r->w = rec_writer__open(path, m);
	if (!r->w) {
		err = -errno;
		goto err;
	}
	free(m);
	return r;
err:
	free(m);
	free(r);
	errno = -err;
	return NULL;
}

int recorder__snapshot(struct recorder *r, const struct dmt_snapshot *s)
{
	if (r->err)
		return r->err;
	r->err = rec_writer__snapshot(r->w, s);
	if (!r->err)
		r->snaps++;
	return r->err;
}

int recorder__event(struct recorder *r, const struct dmt_event *ev)
{
	if (r->err)
		return r->err;
	r->err = rec_writer__event(r->w, ev);
	if (!r->err)
		r->events++;
	return r->err;
}

uint64_t recorder__snapshots(const struct recorder *r)
{
	return r->snaps;
}

uint64_t recorder__events(const struct recorder *r)
{
	return r->events;
}

int recorder__close(struct recorder *r, const struct run_result *res)
{
	struct rec_end end = {
		.n_snapshots = r->snaps,
		.n_events = r->events,
		.ringbuf_drops = res->ringbuf_drops,
		.exit_status = res->cmd_status,
		.has_cpu = res->has_cpu,
		.cpu_user_ns = res->cpu_user_ns,
		.cpu_sys_ns = res->cpu_sys_ns,
		.reason = res->end == RUN_END_DURATION ? REC_END_DURATION :
			  res->end == RUN_END_COMMAND ? REC_END_COMMAND :
			  res->end == RUN_END_SIGNAL ? REC_END_SIGNAL : REC_END_ERROR,
	};
	int err = r->err, cerr;

	if (!err)
		err = rec_writer__end(r->w, &end);
	cerr = rec_writer__close(r->w);
	if (!err)
		err = cerr;
	free(r);
	return err;
}
