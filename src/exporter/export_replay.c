// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop export --from FILE: serve a recording through the exporter.
 *
 * The snapshots of a `devmemtop record` file go through the same publisher
 * and exposition code as live ones, each at its recorded time since the
 * first (divided by --speed), so a scraper sees what it would have seen
 * scraping the recorded host. After the last one the exporter keeps serving
 * it until SIGINT/SIGTERM. No BPF and no privilege: the file is read once
 * to validate it before anything is bound, then replayed.
 *
 * Each published snapshot gets the replay's own clocks (CLOCK_MONOTONIC and
 * the wall clock at publication): devmemtop_last_collection_timestamp_seconds
 * is then the time it was served, not the recorded one, so /healthz and the
 * staleness alert judge the replay, not the age of the recording.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "export_http.h"
#include "export_replay.h"
#include "outstream.h"
#include "record.h"
#include "textsafe.h"
#include "util.h"

#define REPLAY_MIN_INTERVAL	(10ULL * 1000000ULL)	/* as --interval */
#define REPLAY_MAX_INTERVAL	(3600ULL * 1000000000ULL)

/* "cannot open F: why", "F: corrupt frame ..." (the reader's one line). */
static struct rec_reader *replay_open(const char *path, char *msg, size_t msglen)
{
	struct rec_reader *rd = rec_reader__open(path);
	char esc[512];

	if (!rd) {
		snprintf(msg, msglen, "--from: cannot open %s: %s",
			 textsafe_str(esc, sizeof(esc), path), strerror(errno));
		return NULL;
	}
	if (!rec_reader__meta(rd)) {
		snprintf(msg, msglen, "--from: %s", rec_reader__error(rd));
		rec_reader__free(rd);
		return NULL;
	}
	return rd;
}

int export_replay__check(const char *path, double speed, uint64_t *interval_ns,
			 char *msg, size_t msglen)
{
	struct rec_reader *rd = replay_open(path, msg, msglen);
	uint64_t n = 0, iv;
	struct rec_item it;
	char esc[512];
	int ret;

	if (!rd)
		return -EINVAL;
	iv = (uint64_t)(rec_reader__meta(rd)->interval_ns / speed);
	while ((ret = rec_reader__next(rd, &it)) > 0) {
		if (it.type != REC_SNAPSHOT)
			continue;
		snapshot__free(it.snap);
		n++;
	}
	if (ret < 0) {
		snprintf(msg, msglen, "--from: %s", rec_reader__error(rd));
		ret = -EINVAL;
	} else if (!n) {
		snprintf(msg, msglen, "--from: %s: the recording has no snapshot",
			 textsafe_str(esc, sizeof(esc), path));
		ret = -ENODATA;
	}
	rec_reader__free(rd);
	if (ret)
		return ret;
	*interval_ns = iv < REPLAY_MIN_INTERVAL ? REPLAY_MIN_INTERVAL :
		       iv > REPLAY_MAX_INTERVAL ? REPLAY_MAX_INTERVAL : iv;
	return 0;
}

/*
 * Wait until monotonic time due, keeping the HTTP deadlines (one wake-up
 * per deadline, no tick); 1 on a stop signal.
 */
static int replay_wait(struct exporter *ex, const sigset_t *sigs, uint64_t due)
{
	for (;;) {
		uint64_t now, wait, reap_at = UINT64_MAX;
		struct timespec ts;
		int sig;

		if (ex)
			reap_at = exporter__reap(ex);
		now = now_mono_ns();
		if (now >= due)
			return 0;
		wait = reap_at < due ? reap_at : due;
		wait = wait > now ? wait - now : 0;
		ts.tv_sec = wait / 1000000000ULL;
		ts.tv_nsec = wait % 1000000000ULL;
		sig = sigtimedwait(sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			return 1;
	}
}

int export_replay__run(struct exporter *ex, const char *path, double speed, bool once,
		       const struct privdrop_opts *po)
{
	struct expo_totals totals = {};
	struct dmt_snapshot *last = NULL;
	uint64_t n = 0, t0 = 0, rec0 = 0, rec_last = 0, interval_ns;
	struct rec_reader *rd;
	struct rec_item it;
	char msg[640], esc[512];
	bool stopped = false;
	sigset_t sigs;
	int ret = 1, rc, err;

	rd = replay_open(path, msg, sizeof(msg));
	if (!rd) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	interval_ns = rec_reader__meta(rd)->interval_ns;
	export__block_signals(&sigs);
	/* the file is open: nothing below needs a privilege */
	if (!once && privdrop__apply(po, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		goto out;
	}

	while ((rc = rec_reader__next(rd, &it)) > 0) {
		struct dmt_snapshot *s = it.snap;

		if (it.type != REC_SNAPSHOT)
			continue;
		if (!n) {
			rec0 = s->ts_ns;
			t0 = now_mono_ns();
		}
		/* at its recorded offset from the first (a clock step back: at once) */
		if (!once && s->ts_ns > rec0 &&
		    replay_wait(ex, &sigs, t0 + (uint64_t)((s->ts_ns - rec0) / speed))) {
			snapshot__free(s);
			stopped = true;
			break;
		}
		rec_last = s->ts_ns;
		expo_totals__account(&totals, s);
		n++;
		if (once) {
			snapshot__free(last);
			last = s;
			continue;
		}
		s->ts_ns = now_mono_ns();
		s->wall_ns = now_real_ns();
		err = publisher__publish(exporter__publisher(ex), s, &totals, n, 0, 0);
		if (err) {
			fprintf(stderr, "devmemtop export: --from: publishing snapshot %llu: %s\n",
				(unsigned long long)n, strerror(-err));
			goto out;
		}
		if (n > 1)
			continue;
		if (exporter__start(ex)) {
			fprintf(stderr, "devmemtop export: cannot start the HTTP server on %s\n",
				exporter__addr(ex));
			goto out;
		}
		fprintf(stderr, "devmemtop export: serving %s://%s/metrics (replay of %s at %gx, recorded every %gs)\n",
			exporter__scheme(ex), exporter__addr(ex),
			textsafe_str(esc, sizeof(esc), path), speed, (double)interval_ns / 1e9);
	}
	if (rc < 0)	/* it passed the check: changed since */
		fprintf(stderr, "devmemtop export: --from: %s\n", rec_reader__error(rd));
	if (once) {
		if (!last) {
			fprintf(stderr, "devmemtop export: --from: no snapshot in %s\n",
				textsafe_str(esc, sizeof(esc), path));
			goto out;
		}
		err = export__print_once(last, &totals, (double)interval_ns / 1e9, n);
		if (err && !out_flush(stdout))	/* a stdout error: main() says it */
			fprintf(stderr, "devmemtop export: %s\n", strerror(-err));
		else if (rc >= 0)
			ret = 0;
		goto out;
	}
	if (!n) {
		fprintf(stderr, "devmemtop export: --from: no snapshot in %s\n",
			textsafe_str(esc, sizeof(esc), path));
		goto out;
	}
	if (!stopped) {
		fprintf(stderr, "devmemtop export: replay done: %llu snapshots, %.3f s recorded; serving the last one until stopped\n",
			(unsigned long long)n, (double)(rec_last - rec0) / 1e9);
		while (!replay_wait(ex, &sigs, UINT64_MAX))
			;
	}
	ret = rc < 0 ? 1 : 0;
out:
	snapshot__free(last);
	rec_reader__free(rd);
	return ret;
}
