/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run as one self-contained HTML page (inline CSS and SVG, no script, no
 * fetch): the run's facts and metric availability, a gate's thresholds
 * with pass/fail, time series of binding occupancy, pool holds/s and
 * inflight, and every histogram as bars; a baseline run is overlaid.
 *
 *   struct html_run *r = html_run__new();              NULL on ENOMEM
 *   html_run__meta(r, &meta);                          the run's facts
 *   html_run__add(r, snap);   html_run__event(r, ev);  oldest first
 *   html_report__write(path, r, base_or_NULL, gate_report_or_NULL);
 *   html_run__free(r);
 *
 * Or, for a recording: html_run__read(path, &r, err, len).
 */
#ifndef DEVMEMTOP_HTML_REPORT_H
#define DEVMEMTOP_HTML_REPORT_H

#include <stddef.h>
#include <stdio.h>
#include "snapshot.h"
#include "gate_eval.h"
#include "record.h"

struct html_run;

struct html_run *html_run__new(void);
/* Copies the facts of m (its probe log is not kept); 0 or -ENOMEM. */
int html_run__meta(struct html_run *r, const struct rec_meta *m);
/* A live run: facts from this host and the first snapshot. */
void html_run__live(struct html_run *r, const struct dmt_snapshot *first, uint64_t interval_ns,
		    char *const *cmd);
/* What the run is ("recording run.dmtrec", "live"); shown in the title. */
void html_run__set_source(struct html_run *r, const char *source);
int html_run__add(struct html_run *r, const struct dmt_snapshot *s);
void html_run__event(struct html_run *r, const struct dmt_event *ev);
/* A damaged recording, an interrupted run: shown in the facts. */
void html_run__set_error(struct html_run *r, const char *msg);
void html_run__free(struct html_run *r);

/*
 * Read a whole recording. 0, 1 when the file is damaged (r holds what was
 * readable and the damage is recorded in it), -errno with err set when
 * nothing could be read.
 */
int html_run__read(const char *path, struct html_run **out, char *err, size_t errlen);

/* 0 or -errno. base and gate may be NULL. */
int html_report__write(const char *path, const struct html_run *cand, const struct html_run *base,
		       const struct gate_report *gate);
/* The same into an open stream (unit tests). */
int html_report__fprint(FILE *f, const struct html_run *cand, const struct html_run *base,
			const struct gate_report *gate);

/*
 * For other pages in the same style: <head> with the report's CSS (plus
 * extra_css, may be NULL) and <body>; the footer and closing tags; text
 * escaped for HTML.
 */
void html_page__begin(FILE *f, const char *title, const char *extra_css);
void html_page__end(FILE *f);
void html_esc(FILE *f, const char *s);

/*
 * devmemtop report FILE --html OUT [--baseline BASE]: returns the exit
 * status (0, 1 damaged recording, 2 error) after one line on stderr.
 * text_opts: --json or --no-events were given too (an error).
 */
int html_report__cmd(const char *path, const char *baseline, const char *out, bool text_opts);

#endif /* DEVMEMTOP_HTML_REPORT_H */
