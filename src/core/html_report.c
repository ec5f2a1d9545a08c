// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop report --html / gate --html: a run as one HTML page a person
 * looks at (html_report.h). Everything is inline: CSS in <style>, charts
 * as <svg>, tooltips as SVG <title>; no script and no URL, so the file
 * opens offline and can be attached to a patch series or a CI run.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "gate_spec.h"
#include "hist.h"
#include "html_report.h"
#include "metrics.h"
#include "objtrack.h"
#include "outstream.h"
#include "podcg.h"
#include "util.h"

struct html_pt {
	double t;		/* seconds since the run's first snapshot */
	double occ;		/* max binding occupancy, percent */
	double holds;		/* sum of pool holds/s */
	double inflight;	/* sum of pool inflight */
	bool has_occ, has_rate;
};

struct html_run {
	struct rec_meta meta;
	bool have_meta;
	char source[256];
	char error[512];
	struct dmt_availability avail[DMT_M__COUNT];	/* the last snapshot's */
	bool have_avail;
	int mode;
	uint64_t t0, t_last, n_snaps, n_events, drops, map_full;
	uint64_t ev_by_type[16];
	struct html_pt *pts;
	size_t n_pts, cap_pts;
	uint64_t pt_stride;		/* a point every pt_stride snapshots */
	/* pools and bindings, with report's identity, run figures and caps */
	struct objrun run;
	/* the last snapshot without its objects: its global rows */
	struct dmt_snapshot glob;
	bool have_glob;
};

/*
 * The time series keep at most this many points: past it every other point
 * goes and a point is kept every 2nd (4th, ...) snapshot, so a recording of
 * any length draws in bounded memory, at a resolution no chart can show.
 */
#define HTML_MAX_POINTS	8192

struct html_run *html_run__new(void)
{
	struct html_run *r = calloc(1, sizeof(*r));

	if (r)
		r->mode = -1;
	return r;
}

void html_run__free(struct html_run *r)
{
	if (!r)
		return;
	free(r->pts);
	objrun__fini(&r->run);
	free(r);
}

int html_run__meta(struct html_run *r, const struct rec_meta *m)
{
	r->meta = *m;
	r->meta.n_probe_log = 0;
	r->meta.probe_log = NULL;
	r->have_meta = true;
	if (!r->have_avail)
		memcpy(r->avail, m->avail, sizeof(r->avail));
	r->have_avail = true;
	r->mode = m->mode;
	return 0;
}

void html_run__live(struct html_run *r, const struct dmt_snapshot *first, uint64_t interval_ns,
		    char *const *cmd)
{
	struct rec_meta m = {};
	struct utsname u;
	size_t off = 0;

	snprintf(m.version, sizeof(m.version), "%s", DEVMEMTOP_VERSION);
	if (!uname(&u))
		snprintf(m.kernel, sizeof(m.kernel), "%s", u.release);
	if (gethostname(m.host, sizeof(m.host) - 1))
		m.host[0] = '\0';
	for (size_t i = 0; cmd && cmd[i] && off < sizeof(m.cmdline); i++)
		off += snprintf(m.cmdline + off, sizeof(m.cmdline) - off, "%s%s", i ? " " : "",
				cmd[i]);
	m.start_wall_ns = first->wall_ns;
	m.start_mono_ns = first->ts_ns;
	m.interval_ns = interval_ns;
	m.mode = first->mode;
	memcpy(m.avail, first->avail, sizeof(m.avail));
	html_run__meta(r, &m);
	html_run__set_source(r, "live");
}

void html_run__set_source(struct html_run *r, const char *source)
{
	snprintf(r->source, sizeof(r->source), "%s", source);
}

void html_run__set_error(struct html_run *r, const char *msg)
{
	snprintf(r->error, sizeof(r->error), "%s", msg);
}

void html_run__event(struct html_run *r, const struct dmt_event *ev)
{
	r->n_events++;
	if (ev->type < ARRAY_SIZE(r->ev_by_type))
		r->ev_by_type[ev->type]++;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *np;

	if (n < *cap)
		return 0;
	np = realloc(*p, c * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

/* Every other point goes: the series keep their shape at half the resolution. */
static void thin_points(struct html_run *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_pts; i += 2)
		r->pts[n++] = r->pts[i];
	r->n_pts = n;
	r->pt_stride = r->pt_stride ? r->pt_stride * 2 : 2;
}

int html_run__add(struct html_run *r, const struct dmt_snapshot *s)
{
	bool first = !r->n_snaps;
	struct html_pt *pt;
	uint64_t stride = r->pt_stride ? r->pt_stride : 1;
	int err;

	err = objrun__add(&r->run, s);
	if (first)
		r->t0 = s->ts_ns;
	memcpy(r->avail, s->avail, sizeof(r->avail));
	r->have_avail = true;
	r->glob = *s;
	r->glob.pools = NULL;
	r->glob.bindings = NULL;
	r->glob.holders = NULL;
	r->glob.progs = NULL;
	r->glob.n_pools = r->glob.n_bindings = r->glob.n_holders = r->glob.n_progs = 0;
	r->have_glob = true;
	r->mode = s->mode;
	r->t_last = s->ts_ns;
	r->drops = s->ringbuf_drops;
	r->map_full = s->map_full;
	if (r->n_snaps++ % stride)
		return err;
	if (r->n_pts == HTML_MAX_POINTS)
		thin_points(r);
	if (grow((void **)&r->pts, &r->cap_pts, r->n_pts, sizeof(*r->pts)))
		return -ENOMEM;
	pt = &r->pts[r->n_pts++];
	memset(pt, 0, sizeof(*pt));
	pt->t = s->ts_ns >= r->t0 ? (s->ts_ns - r->t0) / 1e9 : 0;
	pt->has_rate = s->interval_s > 0;
	for (size_t i = 0; i < s->n_pools; i++) {
		const struct dmt_pool_snap *p = &s->pools[i];

		pt->holds += p->hold_rate;
		if (p->state != DMT_POOL_DESTROYED && p->inflight > 0)
			pt->inflight += p->inflight;
	}
	for (size_t i = 0; i < s->n_bindings; i++) {
		const struct dmt_binding_snap *b = &s->bindings[i];

		if (b->occupancy >= 0 && (!pt->has_occ || b->occupancy * 100 > pt->occ)) {
			pt->occ = b->occupancy * 100;
			pt->has_occ = true;
		}
	}
	return err;
}

int html_run__read(const char *path, struct html_run **out, char *err, size_t errlen)
{
	const struct rec_meta *m;
	struct html_run *r;
	struct rec_reader *rd;
	struct rec_item it;
	int ret, e = 0;

	*out = NULL;
	rd = rec_reader__open(path);
	if (!rd) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-e));
		return e;
	}
	m = rec_reader__meta(rd);
	if (!m) {
		snprintf(err, errlen, "%s", rec_reader__error(rd));
		rec_reader__free(rd);
		return -EBADMSG;
	}
	r = html_run__new();
	if (!r) {
		rec_reader__free(rd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	html_run__meta(r, m);
	snprintf(r->source, sizeof(r->source), "recording %s", path);
	while ((ret = rec_reader__next(rd, &it)) > 0) {
		if (it.type == REC_SNAPSHOT) {
			e = html_run__add(r, it.snap);
			snapshot__free(it.snap);
			if (e)
				break;
		} else if (it.type == REC_EVENT) {
			html_run__event(r, &it.ev);
		}
	}
	if (e) {
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		html_run__free(r);
		rec_reader__free(rd);
		return e;
	}
	if (ret < 0)
		html_run__set_error(r, rec_reader__error(rd));
	rec_reader__free(rd);
	*out = r;
	return ret < 0 ? 1 : 0;
}

/* ---- output helpers ---------------------------------------------------- */

/*
 * Text into HTML: markup characters as entities, control characters and
 * bytes that are not UTF-8 as U+FFFD (interface names are arbitrary bytes).
 */
static void esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 :
			(c & 0xf8) == 0xf0 ? 3 : -1;
		bool ok = n >= 0 && !(n == 1 && c < 0xc2);

		for (int k = 1; ok && k <= n; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (!ok) {
			fputs("&#xFFFD;", f);
			p++;
			continue;
		}
		if (n) {
			fwrite(p, 1, n + 1, f);
			p += n + 1;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				fputs("&#xFFFD;", f);
			else
				fputc(c, f);
		}
		p++;
	}
}

/* The smallest 1, 2, 2.5, 5 x 10^k at or above v. */
static double nice_ceil(double v)
{
	static const double m[] = { 1, 2, 2.5, 5, 10 };
	double e;

	if (v <= 0)
		return 1;
	e = pow(10, floor(log10(v)));
	for (size_t i = 0; i < ARRAY_SIZE(m); i++)
		if (m[i] * e >= v * (1 - 1e-9))
			return m[i] * e;
	return 10 * e;
}

static const char *ifname_or(const char *n)
{
	return n && n[0] ? n : "?";
}

/* ---- charts ------------------------------------------------------------ */

#define CW	760	/* chart width, px */
#define CH	230
#define ML	64	/* margins: left (y labels), right, top (title), bottom */
#define MR	16
#define MT	34
#define MB	46

enum series_id { SER_OCC, SER_HOLDS, SER_INFLIGHT };

static bool pt_value(const struct html_pt *p, enum series_id id, double *v)
{
	switch (id) {
	case SER_OCC:
		*v = p->occ;
		return p->has_occ;
	case SER_HOLDS:
		*v = p->holds;
		return p->has_rate;
	case SER_INFLIGHT:
		*v = p->inflight;
		return true;
	}
	return false;
}

static size_t series_points(const struct html_run *r, enum series_id id, double *tmax,
			    double *vmax)
{
	size_t n = 0;
	double v;

	for (size_t i = 0; r && i < r->n_pts; i++) {
		if (!pt_value(&r->pts[i], id, &v))
			continue;
		n++;
		if (v > *vmax)
			*vmax = v;
		if (r->pts[i].t > *tmax)
			*tmax = r->pts[i].t;
	}
	return n;
}

static void polyline(FILE *f, const struct html_run *r, enum series_id id, const char *cls,
		     double tmax, double vmax)
{
	double pw = CW - ML - MR, ph = CH - MT - MB, v;
	size_t n = 0;

	fprintf(f, "<polyline class=\"line %s\" points=\"", cls);
	for (size_t i = 0; i < r->n_pts; i++) {
		if (!pt_value(&r->pts[i], id, &v))
			continue;
		fprintf(f, "%s%.1f,%.1f", n++ ? " " : "", ML + r->pts[i].t / tmax * pw,
			MT + ph - (v / vmax) * ph);
	}
	fprintf(f, "\"/>\n");
	if (n == 1) {	/* one point draws no line: mark it */
		for (size_t i = 0; i < r->n_pts; i++)
			if (pt_value(&r->pts[i], id, &v))
				fprintf(f, "<circle class=\"dot %s\" cx=\"%.1f\" cy=\"%.1f\" "
					"r=\"3\"/>\n", cls, ML + r->pts[i].t / tmax * pw,
					MT + ph - (v / vmax) * ph);
	}
}

/* m: the enum dmt_metric the figure needs, -1 always there */
static void why_no_data(char *buf, size_t len, const struct html_run *r, int m,
			const char *what)
{
	if (m >= 0 && m < DMT_M__COUNT && r->have_avail && !r->avail[m].available)
		snprintf(buf, len, "unavailable: %s", r->avail[m].reason);
	else
		snprintf(buf, len, "no %s in this run", what);
}

static void chart_series(FILE *f, const struct html_run *cand, const struct html_run *base,
			 enum series_id id)
{
	static const struct {
		const char *key, *title, *unit, *what;
		enum dmt_metric m;
	} d[] = {
		[SER_OCC] = { "occupancy", "Binding occupancy (max over bindings)", "%",
			      "devmem binding", DMT_M_BIND_OCCUPANCY },
		[SER_HOLDS] = { "holds_rate", "Page pool holds/s (sum over pools)", "/s",
				"page pool", DMT_M_POOL_HOLDS },
		[SER_INFLIGHT] = { "inflight", "Page pool inflight (sum over pools)", "",
				   "page pool", DMT_M_POOL_INFLIGHT },
	};
	double tmax = 0, vmax = 0, pw = CW - ML - MR, ph = CH - MT - MB;
	size_t nc = series_points(cand, id, &tmax, &vmax);
	size_t nb = series_points(base, id, &tmax, &vmax);
	char why[256], lab[32];

	if (!nc && !nb) {	/* a short box that says why */
		why_no_data(why, sizeof(why), cand, d[id].m, d[id].what);
		fprintf(f, "<figure class=\"chart\">\n<svg class=\"series nodata\" "
			"data-metric=\"%s\" data-points=\"0\" viewBox=\"0 0 %d 56\" width=\"%d\" "
			"height=\"56\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n"
			"<text class=\"title\" x=\"%d\" y=\"18\">%s</text>\n"
			"<text class=\"nodata\" x=\"%d\" y=\"44\">no data: ", d[id].key, CW, CW,
			ML, d[id].title, ML);
		esc(f, why);
		fprintf(f, "</text>\n</svg>\n</figure>\n");
		return;
	}
	fprintf(f, "<figure class=\"chart\">\n<svg class=\"series\" data-metric=\"%s\" "
		"data-points=\"%zu\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n", d[id].key, nc, CW, CH, CW, CH);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"18\">%s</text>\n", ML, d[id].title);
	vmax = id == SER_OCC ? 100 : nice_ceil(vmax);
	if (tmax <= 0)
		tmax = 1;
	for (int k = 0; k <= 4; k++) {
		double y = MT + ph - k * ph / 4;

		fmt_human_num(lab, sizeof(lab), vmax * k / 4);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"ylab\" x=\"%d\" y=\"%.1f\">%s%s</text>\n",
			ML, CW - MR, y, y, ML - 6, y + 4, lab, d[id].unit);
	}
	for (int k = 0; k <= 5; k++) {
		double x = ML + k * pw / 5;

		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%d\">%.3gs</text>\n", x,
			CH - MB + 16, tmax * k / 5);
	}
	fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\">time since the first snapshot</text>\n",
		ML + pw / 2, CH - 8);
	if (nb)
		polyline(f, base, id, "base", tmax, vmax);
	if (nc)
		polyline(f, cand, id, "cand", tmax, vmax);
	fprintf(f, "</svg>\n");
	if (nc && nb)
		fprintf(f, "<figcaption><span class=\"key cand\">&#9632;</span>candidate "
			"<span class=\"key base\">&#9632;</span>baseline</figcaption>\n");
	fprintf(f, "</figure>\n");
}

/* One histogram as bars: n categories, optional baseline overlay. */
struct bars {
	const char *key;	/* data-hist */
	const char *cls;	/* one run's bars: "cand" or "base" */
	char title[160];
	size_t n;
	char (*label)[32];
	const uint64_t *cand, *base;	/* counts per category, base may be NULL */
	uint64_t cand_total, base_total;
	char stats[2][160];	/* summary lines: candidate, baseline */
};

static void chart_bars(FILE *f, const struct bars *b)
{
	double pw = CW - ML - MR, ph = CH - MT - MB, vmax = 0, gw, bw;
	bool pct = b->base != NULL;
	size_t every = b->n > 24 ? (b->n + 23) / 24 : 1;
	char lab[32];

	for (size_t i = 0; i < b->n; i++) {
		double c = !pct ? b->cand[i] :
			   b->cand_total ? 100.0 * b->cand[i] / b->cand_total : 0;
		double s = pct && b->base_total ? 100.0 * b->base[i] / b->base_total : 0;

		vmax = fmax(vmax, fmax(c, s));
	}
	vmax = pct ? fmin(100, nice_ceil(vmax)) : nice_ceil(vmax);
	gw = pw / (b->n ? b->n : 1);
	bw = fmin(pct ? gw * 0.42 : gw * 0.8, 56);	/* two or three sizes: no slabs */
	fprintf(f, "<figure class=\"chart\">\n<svg class=\"hist\" data-hist=\"");
	esc(f, b->key);
	fprintf(f, "\" data-bars=\"%zu\" data-overlay=\"%d\" viewBox=\"0 0 %d %d\" width=\"%d\" "
		"height=\"%d\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n", b->n, pct, CW,
		CH, CW, CH);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"18\">", ML);
	esc(f, b->title);
	fprintf(f, "</text>\n");
	for (int k = 0; k <= 4; k++) {
		double y = MT + ph - k * ph / 4;

		fmt_human_num(lab, sizeof(lab), vmax * k / 4);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"ylab\" x=\"%d\" y=\"%.1f\">%s%s</text>\n",
			ML, CW - MR, y, y, ML - 6, y + 4, lab, pct ? "%" : "");
	}
	for (size_t i = 0; i < b->n; i++) {
		double x = ML + i * gw + (gw - (pct ? 2 * bw : bw)) / 2;
		double c = !pct ? b->cand[i] :
			   b->cand_total ? 100.0 * b->cand[i] / b->cand_total : 0;
		double h = vmax ? c / vmax * ph : 0;

		fprintf(f, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%s: %llu (%.1f%%)</title></rect>\n", b->cls ? b->cls : "cand", x,
			MT + ph - h, bw, h, b->label[i],
			(unsigned long long)b->cand[i],
			b->cand_total ? 100.0 * b->cand[i] / b->cand_total : 0);
		if (pct) {
			double s = b->base_total ? 100.0 * b->base[i] / b->base_total : 0;

			h = vmax ? s / vmax * ph : 0;
			fprintf(f, "<rect class=\"bar base\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"><title>baseline %s: %llu (%.1f%%)</title></rect>\n",
				x + bw, MT + ph - h, bw, h, b->label[i],
				(unsigned long long)b->base[i], s);
		}
		if (i % every == 0)
			fprintf(f, "<text class=\"blab\" x=\"%.1f\" y=\"%d\">%s</text>\n",
				ML + i * gw + gw / 2, CH - MB + 16, b->label[i]);
	}
	fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\">%s</text>\n", ML + pw / 2, CH - 8,
		strstr(b->key, "refill") ? "items per refill" :
		strstr(b->key, "tokens_per") ? "tokens, log2 bucket (upper bound)" :
		"latency, log2 bucket (upper bound)");
	fprintf(f, "</svg>\n<figcaption>");
	if (pct)
		fprintf(f, "<span class=\"key cand\">&#9632;</span>");
	esc(f, b->stats[0]);
	if (pct) {
		fprintf(f, "<br/><span class=\"key base\">&#9632;</span>");
		esc(f, b->stats[1]);
		fprintf(f, "<br/>bars: share of each run's samples");
	}
	fprintf(f, "</figcaption>\n</figure>\n");
}

static void batch_stats(char *buf, size_t len, const char *who, const struct hist_batch *h)
{
	uint64_t q50 = 0, q99 = 0;

	if (!h || !h->count) {
		snprintf(buf, len, "%s: no refills", who);
		return;
	}
	hist_batch_quantile(h, 0.5, &q50);
	hist_batch_quantile(h, 0.99, &q99);
	snprintf(buf, len, "%s: %llu refills, mean %.1f, p50 %llu, p99 %llu, max %llu", who,
		 (unsigned long long)h->count, hist_batch_mean(h), (unsigned long long)q50,
		 (unsigned long long)q99, (unsigned long long)hist_batch_max(h));
}

/* A log2 bucket value: ns as "1.2us", a count (tokens) as a number. */
static void log2_value(char *buf, size_t len, double v, bool ns)
{
	if (ns)
		fmt_human_ns(buf, len, v);
	else
		snprintf(buf, len, "%.0f", v);
}

static void log2_stats(char *buf, size_t len, const char *who, const struct hist_log2 *h,
		       bool ns)
{
	char a[24], p50[24], p99[24];
	uint64_t q50 = 0, q99 = 0;

	if (!h || !h->count) {
		snprintf(buf, len, "%s: no samples", who);
		return;
	}
	hist_log2_quantile(h, 0.5, &q50);
	hist_log2_quantile(h, 0.99, &q99);
	log2_value(a, sizeof(a), (double)h->sum / h->count, ns);
	log2_value(p50, sizeof(p50), q50, ns);
	log2_value(p99, sizeof(p99), q99, ns);
	snprintf(buf, len, "%s: %llu samples, avg %s, p50 <= %s, p99 <= %s", who,
		 (unsigned long long)h->count, a, p50, p99);
}

static void hist_batch_chart(FILE *f, const char *key, const char *cls, const char *title,
			     const struct hist_batch *c, const struct hist_batch *b)
{
	uint64_t cv[DMT_BATCH_MAX + 1], bv[DMT_BATCH_MAX + 1];
	char label[DMT_BATCH_MAX + 1][32];
	struct bars bars = { .key = key, .cls = cls, .label = label, .cand = cv,
			     .base = b ? bv : NULL };

	/* only sizes that occurred: a refill histogram is sparse (1 and 64) */
	for (int i = 0; i <= DMT_BATCH_MAX; i++) {
		if (!c->slots[i] && !(b && b->slots[i]))
			continue;
		cv[bars.n] = c->slots[i];
		bv[bars.n] = b ? b->slots[i] : 0;
		snprintf(label[bars.n], sizeof(label[0]), "%d%s", i, i == DMT_BATCH_MAX ? "+" : "");
		bars.n++;
	}
	if (!bars.n)
		return;
	snprintf(bars.title, sizeof(bars.title), "%s", title);
	bars.cand_total = c->count;
	bars.base_total = b ? b->count : 0;
	batch_stats(bars.stats[0], sizeof(bars.stats[0]), b ? "candidate" : "refill batches", c);
	batch_stats(bars.stats[1], sizeof(bars.stats[1]), "baseline", b);
	chart_bars(f, &bars);
}

/* ns: a latency histogram; false: a count (tokens per call). */
static void hist_log2_chart(FILE *f, const char *key, const char *cls, const char *title,
			    const struct hist_log2 *c, const struct hist_log2 *b, bool ns)
{
	uint64_t cv[DMT_LOG2_SLOTS], bv[DMT_LOG2_SLOTS];
	char label[DMT_LOG2_SLOTS][32], v[24];
	struct bars bars = { .key = key, .cls = cls, .label = label, .cand = cv,
			     .base = b ? bv : NULL };
	int lo = -1, hi = -1;

	/* a contiguous bucket range: the shape of a latency distribution */
	for (int i = 0; i < DMT_LOG2_SLOTS; i++) {
		if (!c->slots[i] && !(b && b->slots[i]))
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
	}
	if (lo < 0)
		return;
	for (int i = lo; i <= hi; i++) {
		cv[bars.n] = c->slots[i];
		bv[bars.n] = b ? b->slots[i] : 0;
		log2_value(v, sizeof(v), hist_log2_bound(i), ns);
		snprintf(label[bars.n], sizeof(label[0]), "&#8804;%s", v);
		bars.n++;
	}
	snprintf(bars.title, sizeof(bars.title), "%s", title);
	bars.cand_total = c->count;
	bars.base_total = b ? b->count : 0;
	log2_stats(bars.stats[0], sizeof(bars.stats[0]),
		   b ? "candidate" : ns ? "latency" : "tokens", c, ns);
	log2_stats(bars.stats[1], sizeof(bars.stats[1]), "baseline", b, ns);
	chart_bars(f, &bars);
}

/*
 * A binding histogram row over the run (objtrack.h): each step's
 * difference, never a wrapped one.
 */
static const struct hist_log2 *bind_lat(const struct objrun_binding *t, const struct mdef *d)
{
	return mdef_log2(d, &t->run);
}

/* Its key in the page: the row's name without "binding." */
static const char *lat_key(const struct mdef *d)
{
	return d->name + strlen("binding.");
}

static const char *lat_title(const struct mdef *d)
{
	return d->title_long ? d->title_long : d->title;
}

static void all_refill(const struct html_run *r, struct hist_batch *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; r && i < r->run.n_pools; i++)
		hist_batch_merge(h, &r->run.pools[i].run.refill);
}

static void all_lat(const struct html_run *r, const struct mdef *d, struct hist_log2 *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; r && i < r->run.n_binds; i++)
		hist_log2_merge(h, bind_lat(&r->run.binds[i], d));
}

/* The frag token histograms (snapshot-wide), over the run. */
static const struct {
	const char *key, *title, *what;
	size_t off;			/* in struct dmt_tok_cost */
	enum dmt_metric metric;
	bool ns;
} tok_hists[] = {
	{ "tokens_per_recvmsg:all", "Frag tokens per recvmsg", "tcp_recvmsg with tokens",
	  offsetof(struct dmt_tok_cost, per_recvmsg), DMT_M_RECVMSG_TOKENS, false },
	{ "tokens_per_dontneed:all", "Frag tokens per SO_DEVMEM_DONTNEED call", "DONTNEED call",
	  offsetof(struct dmt_tok_cost, per_dontneed), DMT_M_DONTNEED_COST, false },
	{ "dontneed_latency:all", "SO_DEVMEM_DONTNEED latency per call", "DONTNEED call",
	  offsetof(struct dmt_tok_cost, dontneed_ns), DMT_M_DONTNEED_COST, true },
	{ "dontneed_latency_per_token:all", "SO_DEVMEM_DONTNEED latency per token",
	  "DONTNEED call", offsetof(struct dmt_tok_cost, dontneed_ns_token), DMT_M_DONTNEED_COST,
	  true },
};

static const struct hist_log2 *tok_hist(const struct html_run *r, size_t k)
{
	static const struct hist_log2 empty;

	if (!r)
		return &empty;
	return (const struct hist_log2 *)((const char *)&r->run.tok_run + tok_hists[k].off);
}

static void token_histograms(FILE *f, const struct html_run *cand, const struct html_run *base)
{
	char why[256];

	for (size_t k = 0; k < ARRAY_SIZE(tok_hists); k++) {
		const struct hist_log2 *c = tok_hist(cand, k), *b = tok_hist(base, k);

		if (!c->count && !b->count) {
			why_no_data(why, sizeof(why), cand, tok_hists[k].metric, tok_hists[k].what);
			fprintf(f, "<p class=\"nodata\" data-hist=\"%s\">%s: no data: ",
				tok_hists[k].key, tok_hists[k].title);
			esc(f, why);
			fprintf(f, "</p>\n");
			continue;
		}
		hist_log2_chart(f, tok_hists[k].key, "cand", tok_hists[k].title, c, base ? b : NULL,
				tok_hists[k].ns);
	}
}

/* Every histogram: merged over the run (overlaid), then each object's. */
static void histograms(FILE *f, const struct html_run *cand, const struct html_run *base)
{
	struct hist_batch hc, hb;
	struct hist_log2 lc, lb;
	char key[64], title[160], why[256];
	size_t shown = 0;

	fprintf(f, "<section id=\"histograms\">\n<h2>Histograms</h2>\n");
	all_refill(cand, &hc);
	all_refill(base, &hb);
	if (hc.count || hb.count) {
		hist_batch_chart(f, "refill:all", "cand", "Refill batch sizes, all page pools", &hc,
				 base ? &hb : NULL);
		shown++;
	} else {
		why_no_data(why, sizeof(why), cand, DMT_M_POOL_REFILL, "page pool refill");
		fprintf(f, "<p class=\"nodata\" data-hist=\"refill:all\">Refill batches: no data: ");
		esc(f, why);
		fprintf(f, "</p>\n");
	}
	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_bind_view_hist(d))
			continue;
		all_lat(cand, d, &lc);
		all_lat(base, d, &lb);
		snprintf(key, sizeof(key), "%s:all", lat_key(d));
		if (!lc.count && !lb.count) {
			why_no_data(why, sizeof(why), cand, d->avail, "devmem binding sample");
			fprintf(f, "<p class=\"nodata\" data-hist=\"%s\">%s: no data: ", key,
				lat_title(d));
			esc(f, why);
			fprintf(f, "</p>\n");
			continue;
		}
		snprintf(title, sizeof(title), "%c%s, all bindings", toupper(lat_title(d)[0]),
			 lat_title(d) + 1);
		hist_log2_chart(f, key, "cand", title, &lc, base ? &lb : NULL, d->unit == MU_NS);
		shown++;
	}
	token_histograms(f, cand, base);
	for (int w = 0; w < 2; w++) {
		const struct html_run *r = w ? base : cand;
		const char *who = w ? "Baseline: " : "", *kp = w ? "baseline:" : "";

		if (!r || (!r->run.n_pools && !r->run.n_binds))
			continue;
		if (cand && base)
			fprintf(f, "<h3>Per object, %s</h3>\n", w ? "baseline" : "candidate");
		else
			fprintf(f, "<h3>Per object</h3>\n");
		for (size_t i = 0; i < r->run.n_pools; i++) {
			const struct objrun_pool *t = &r->run.pools[i];
			char ifn[DMT_IFNAMSIZ * 4];

			hc = t->run.refill;
			if (!hc.count)
				continue;
			snprintf(ifn, sizeof(ifn), "%s", ifname_or(t->last.ifname));
			snprintf(key, sizeof(key), "%srefill:pool-%u", kp, t->last.id);
			snprintf(title, sizeof(title), "%sPool %u (%s, %s): refill batch sizes", who,
				 t->last.id, ifn, dmt_kind_name(t->last.kind));
			hist_batch_chart(f, key, w ? "base" : "cand", title, &hc, NULL);
		}
		for (size_t i = 0; i < r->run.n_binds; i++) {
			const struct dmt_binding_snap *b = &r->run.binds[i].last;

			for (size_t k = 0; k < mdef_count; k++) {
				const struct mdef *d = &mdefs[k];

				if (!mdef_bind_view_hist(d))
					continue;
				lc = *bind_lat(&r->run.binds[i], d);
				if (!lc.count)
					continue;
				snprintf(key, sizeof(key), "%s%s:binding-%u", kp, lat_key(d),
					 b->id);
				snprintf(title, sizeof(title), "%sBinding %u (%s): %s", who, b->id,
					 ifname_or(b->ifname), lat_title(d));
				hist_log2_chart(f, key, w ? "base" : "cand", title, &lc, NULL,
						d->unit == MU_NS);
			}
		}
	}
	fprintf(f, "</section>\n");
}

/* ---- facts and tables -------------------------------------------------- */

static double run_duration(const struct html_run *r)
{
	return r->n_snaps > 1 ? (r->t_last - r->t0) / 1e9 : 0;
}

static void fact_row(FILE *f, const char *name, const char *c, const char *b, bool two)
{
	fprintf(f, "<tr><th>%s</th><td>", name);
	esc(f, c);
	fprintf(f, "</td>");
	if (two) {
		fprintf(f, "<td>");
		esc(f, b);
		fprintf(f, "</td>");
	}
	fprintf(f, "</tr>\n");
}

enum fact { F_SOURCE, F_KERNEL, F_HOST, F_VERSION, F_MODE, F_START, F_INTERVAL, F_DURATION,
	    F_SNAPS, F_POOLS, F_EVENTS, F_DROPS, F_COMMAND, F_STATUS, F__N };

static void fact(const struct html_run *r, enum fact k, char *buf, size_t len)
{
	time_t t;
	struct tm tm;

	buf[0] = '\0';
	if (!r)
		return;
	switch (k) {
	case F_SOURCE:
		snprintf(buf, len, "%s", r->source[0] ? r->source : "live");
		break;
	case F_KERNEL:
		snprintf(buf, len, "%s", r->have_meta ? r->meta.kernel : "?");
		break;
	case F_HOST:
		snprintf(buf, len, "%s", r->have_meta && r->meta.host[0] ? r->meta.host : "?");
		break;
	case F_VERSION:
		snprintf(buf, len, "devmemtop %s", r->have_meta ? r->meta.version : "?");
		break;
	case F_MODE:
		snprintf(buf, len, "%s", r->mode >= 0 ? dmt_mode_name(r->mode) : "?");
		break;
	case F_START:
		t = r->have_meta ? r->meta.start_wall_ns / 1000000000ULL : 0;
		if (t && gmtime_r(&t, &tm))
			strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
		else
			snprintf(buf, len, "?");
		break;
	case F_INTERVAL:
		snprintf(buf, len, "%.3gs", r->have_meta ? r->meta.interval_ns / 1e9 : 0);
		break;
	case F_DURATION:
		snprintf(buf, len, "%.1fs", run_duration(r));
		break;
	case F_SNAPS:
		snprintf(buf, len, "%llu", (unsigned long long)r->n_snaps);
		break;
	case F_POOLS:
		snprintf(buf, len, "%zu page pools, %zu devmem bindings", r->run.n_pools,
			 r->run.n_binds);
		if (r->run.pools_over || r->run.binds_over)
			snprintf(buf + strlen(buf), len - strlen(buf), " shown (the first %d and "
				 "%d; %llu pool and %llu binding records of further ones not shown)",
				 OBJRUN_MAX_POOLS, OBJRUN_MAX_BINDINGS,
				 (unsigned long long)r->run.pools_over,
				 (unsigned long long)r->run.binds_over);
		break;
	case F_EVENTS:
		snprintf(buf, len, "%llu", (unsigned long long)r->n_events);
		break;
	case F_DROPS:
		snprintf(buf, len, "%llu%s", (unsigned long long)r->drops,
			 r->drops ? " (events are missing)" : "");
		break;
	case F_COMMAND:
		snprintf(buf, len, "%s",
			 r->have_meta && r->meta.cmdline[0] ? r->meta.cmdline : "-");
		break;
	case F_STATUS:
		snprintf(buf, len, "%s", r->error[0] ? r->error : "complete");
		break;
	case F__N:
		break;
	}
}

/* A global row of the metric table as a fact: the value, or n/a with the reason. */
static void glob_fact(const struct html_run *r, const struct mdef *d, char *buf, size_t len)
{
	char v[32];

	if (!r || !r->have_glob) {
		snprintf(buf, len, "-");
		return;
	}
	mdef_fmt(d, &r->glob, r->glob.avail, true, v, sizeof(v));
	if (d->avail >= 0 && !mdef_available(d, r->glob.avail))
		snprintf(buf, len, "n/a: %s", r->glob.avail[d->avail].reason);
	else
		snprintf(buf, len, "%s", v);
}

static void facts(FILE *f, const struct html_run *cand, const struct html_run *base)
{
	static const char *const names[F__N] = {
		"source", "kernel", "host", "written by", "attach mode", "started",
		"interval", "duration", "snapshots", "objects seen", "events",
		"lost events (ring buffer full)", "command", "recording",
	};
	char c[600], b[600];
	bool two = base != NULL;

	fprintf(f, "<section id=\"facts\">\n<h2>Run</h2>\n<table class=\"facts\">\n");
	if (two)
		fprintf(f, "<tr><th></th><th>candidate</th><th>baseline</th></tr>\n");
	for (int k = 0; k < F__N; k++) {
		fact(cand, k, c, sizeof(c));
		fact(base, k, b, sizeof(b));
		fact_row(f, names[k], c, b, two);
	}
	/* the metric table's global rows people see (RX queues, rx-alloc-fail) */
	for (size_t k = 0; k < mdef_count; k++) {
		char name[96];

		if (!mdef_view_col(&mdefs[k], MO_GLOBAL))
			continue;
		glob_fact(cand, &mdefs[k], c, sizeof(c));
		glob_fact(base, &mdefs[k], b, sizeof(b));
		snprintf(name, sizeof(name), "%s (last snapshot)", mdefs[k].title);
		fact_row(f, name, c, b, two);
	}
	fprintf(f, "</table>\n</section>\n");
}

static void availability(FILE *f, const struct html_run *cand, const struct html_run *base)
{
	bool two = base != NULL;

	fprintf(f, "<section id=\"avail\">\n<h2>Metric availability</h2>\n"
		"<table id=\"availability\">\n"
		"<tr><th>metric</th><th>%s</th>%s</tr>\n", two ? "candidate" : "",
		two ? "<th>baseline</th>" : "");
	for (int m = 0; m < DMT_M__COUNT; m++) {
		fprintf(f, "<tr><td>%s</td>", dmt_metric_name(m));
		for (int w = 0; w < (two ? 2 : 1); w++) {
			const struct html_run *r = w ? base : cand;
			bool ok = r->have_avail && r->avail[m].available;

			fprintf(f, "<td class=\"%s\">%s ", ok ? "yes" : "no", ok ? "yes" : "no");
			esc(f, r->have_avail ? (ok ? r->avail[m].source : r->avail[m].reason) : "");
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n</section>\n");
}

/* A pool's count over the run: "?" never known, "N*" from its location on. */
static void pool_count(FILE *f, const struct objrun_pool *t, uint64_t v)
{
	if (!t->known)
		fprintf(f, "<td title=\"unknown: light mode never located the pool\">?</td>");
	else if (t->partial)
		fprintf(f, "<td title=\"counted from the snapshot that located the pool (light "
			"mode), not from the start\">%llu*</td>", (unsigned long long)v);
	else
		fprintf(f, "<td>%llu</td>", (unsigned long long)v);
}

/*
 * The metric table's columns of people's tables for one kind of object:
 * headings (o NULL: the row's words, "%" for a ratio) or o's values, "n/a"
 * with the reason as its tooltip, "-" unknown.
 */
static void view_cols(FILE *f, const struct html_run *r, enum mdef_obj obj, const void *o)
{
	const struct dmt_availability *av = r->glob.avail;
	char v[32];

	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_view_col(d, obj))
			continue;
		if (!o) {
			fprintf(f, "<th>");
			esc(f, d->title);
			fprintf(f, "%s</th>", d->unit == MU_RATIO ? " %" : "");
		} else if (d->avail >= 0 && !mdef_available(d, av)) {
			fprintf(f, "<td class=\"na\" title=\"");
			esc(f, r->have_glob ? av[d->avail].reason : "");
			fprintf(f, "\">n/a</td>");
		} else {
			fprintf(f, "<td>%s</td>", mdef_fmt(d, o, av, false, v, sizeof(v)));
		}
	}
}

static void pool_rows(FILE *f, const struct html_run *r)
{
	for (size_t i = 0; i < r->run.n_pools; i++) {
		const struct objrun_pool *t = &r->run.pools[i];
		const struct hist_batch *h = &t->run.refill;
		uint64_t q50 = 0;

		hist_batch_quantile(h, 0.5, &q50);
		fprintf(f, "<tr class=\"pool\"><td>%u</td><td>", t->last.id);
		esc(f, ifname_or(t->last.ifname));
		fprintf(f, "</td><td>%s</td><td>%s</td>", dmt_kind_name(t->last.kind),
			dmt_pool_state_name(t->last.state));
		pool_count(f, t, t->run.holds);
		pool_count(f, t, t->run.releases);
		fprintf(f, "<td>%lld</td><td>%llu</td><td>%llu</td><td>%llu</td>",
			(long long)t->last.inflight, (unsigned long long)h->count,
			(unsigned long long)q50, (unsigned long long)hist_batch_max(h));
		view_cols(f, r, MO_POOL, &t->last);
		fprintf(f, "</tr>\n");
	}
}

static void binding_rows(FILE *f, const struct html_run *r)
{
	for (size_t i = 0; i < r->run.n_binds; i++) {
		const struct dmt_binding_snap *b = &r->run.binds[i].last, *run = &r->run.binds[i].run;

		fprintf(f, "<tr class=\"binding\"><td>%u</td><td>", b->id);
		esc(f, ifname_or(b->ifname));
		fprintf(f, "</td><td>%s</td><td>%lld</td>", b->layout ? b->layout : "?",
			(long long)b->total_niovs);
		if (b->occupancy >= 0)
			fprintf(f, "<td>%.1f%%</td>", b->occupancy * 100);
		else
			fprintf(f, "<td>?</td>");
		fprintf(f, "<td>%llu</td><td>%llu</td>", (unsigned long long)run->alloc_niovs,
			(unsigned long long)run->alloc_fail);
		if (b->out_at_unbind >= 0)
			fprintf(f, "<td>%lld</td>", (long long)b->out_at_unbind);
		else
			fprintf(f, "<td>-</td>");
		if (b->out_at_free >= 0)
			fprintf(f, "<td>%lld</td>", (long long)b->out_at_free);
		else
			fprintf(f, "<td>-</td>");
		view_cols(f, r, MO_BINDING, b);
		fprintf(f, "</tr>\n");
	}
}

/* Frag token holders at their peak, with their pod and cgroup (issue 24). */
static void holder_rows(FILE *f, const struct html_run *r)
{
	fprintf(f, "<table id=\"holders\">\n<tr><th>pid</th><th>process</th><th>binding</th>"
		"<th>tokens (most)</th><th>niovs</th><th>oldest token</th><th>pod uid</th>"
		"<th>container</th><th>cgroup</th></tr>\n");
	for (size_t i = 0; i < r->run.n_holders; i++) {
		const struct objrun_holder *h = &r->run.holders[i];
		struct podcg pc;
		int err = h->cgroup[0] ? podcg__parse(h->cgroup, &pc) : -ENOENT;
		bool pod = !err;
		char ctr[96] = "-";

		if (pod && pc.container_id[0])
			snprintf(ctr, sizeof(ctr), "%s%s%s", pc.runtime, pc.runtime[0] ? "://" : "",
				 pc.container_id);
		/* unknown: "-", never 0 */
		if (h->pid)
			fprintf(f, "<tr class=\"holder\"><td>%u</td><td>", h->pid);
		else
			fprintf(f, "<tr class=\"holder\"><td title=\"process unknown: its "
				"socket, inode %llu\">-</td><td>", (unsigned long long)h->sock_ino);
		esc(f, h->comm[0] ? h->comm : "?");
		if (h->tokens_known)
			fprintf(f, "</td><td>%u</td><td>%llu</td><td>%llu</td>", h->binding_id,
				(unsigned long long)h->tokens, (unsigned long long)h->niovs);
		else	/* light, autorelease off: no count per socket */
			fprintf(f, "</td><td>%u</td><td>-</td><td>-</td>", h->binding_id);
		/* light mode knows no token's age: "-", never "0.00 s" */
		if (h->age_known)
			fprintf(f, "<td>%.2f s</td><td>", h->oldest_age_ns / 1e9);
		else
			fprintf(f, "<td title=\"unknown: light mode reads held tokens from the "
				"kernel, which keeps no token's age\">-</td><td>");
		if (pod) {
			esc(f, pc.pod_uid);
		} else if (err != -ENOENT) {	/* looks like a pod's, is not: say so */
			fprintf(f, "- (");
			esc(f, podcg_why(err));
			fprintf(f, ")");
		} else {
			fprintf(f, "-");
		}
		fprintf(f, "</td><td>");
		esc(f, ctr);
		fprintf(f, "</td><td>");
		if (h->cgroup[0])
			esc(f, h->cgroup);
		else if (h->cgroup_id)
			fprintf(f, "id %llu (path unknown)", (unsigned long long)h->cgroup_id);
		else
			fprintf(f, "?");
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

static void objects(FILE *f, const struct html_run *r)
{
	fprintf(f, "<section id=\"objects\">\n<h2>Page pools and bindings</h2>\n");
	fprintf(f, "<table id=\"pools\">\n<tr><th>pool</th><th>interface</th><th>kind</th>"
		"<th>state</th><th>holds</th><th>releases</th><th>inflight (last)</th>"
		"<th>refills</th><th>batch p50</th><th>batch max</th>");
	view_cols(f, r, MO_POOL, NULL);
	fprintf(f, "</tr>\n");
	pool_rows(f, r);
	fprintf(f, "</table>\n");
	if (r->run.n_binds) {
		fprintf(f, "<table id=\"bindings\">\n<tr><th>binding</th><th>interface</th>"
			"<th>layout</th><th>niovs</th><th>occupancy (last)</th><th>niovs allocated"
			"</th><th>alloc failures</th><th>out at unbind</th><th>leaked</th>");
		view_cols(f, r, MO_BINDING, NULL);
		fprintf(f, "</tr>\n");
		binding_rows(f, r);
		fprintf(f, "</table>\n");
	}
	if (r->run.n_holders)
		holder_rows(f, r);
	fprintf(f, "</section>\n");
}

static void gate_observed(char *buf, size_t len, const struct gate_result *r, double v,
			  bool has)
{
	char s[48];

	if (r->status == GATE_SKIP || (r->status == GATE_ERROR && !r->has_data)) {
		snprintf(buf, len, "-");
		return;
	}
	if (!has) {
		snprintf(buf, len, "no data");
		return;
	}
	gate_fmt_value(s, sizeof(s), v, r->th->unit);
	snprintf(buf, len, "%s%s", r->bound == GATE_UPPER ? "<=" :
		 r->bound == GATE_LOWER ? ">=" : "", s);
}

static void thresholds(FILE *f, const struct gate_report *g)
{
	int code = gate_report__exit_code(g);
	bool any_base = false;
	char obs[64], base[64];

	for (size_t i = 0; i < g->n_results; i++)
		any_base |= g->results[i].has_baseline;
	fprintf(f, "<section id=\"gate\">\n<h2>Gate ");
	esc(f, g->spec->name);
	fprintf(f, "</h2>\n<p id=\"verdict\" class=\"%s\">%s: %d passed, %d failed, %d errors, "
		"%d skipped</p>\n", code == 0 ? "pass" : code == 1 ? "fail" : "error",
		code == 0 ? "PASS" : code == 1 ? "FAIL" : "ERROR", g->n_pass, g->n_fail,
		g->n_error, g->n_skip);
	if (g->error[0]) {
		fprintf(f, "<p class=\"error\">error: ");
		esc(f, g->error);
		fprintf(f, "</p>\n");
	}
	fprintf(f, "<table id=\"thresholds\">\n<tr><th>metric</th><th>selector</th>"
		"<th>threshold</th><th>observed</th>%s<th>result</th><th>note</th></tr>\n",
		any_base ? "<th>baseline</th><th>change</th>" : "");
	for (size_t i = 0; i < g->n_results; i++) {
		const struct gate_result *r = &g->results[i];
		const char *st = gate_status_name(r->status);

		gate_observed(obs, sizeof(obs), r, r->observed, r->has_data);
		fprintf(f, "<tr class=\"%s\"><td>%s</td><td>", r->status == GATE_PASS ? "pass" :
			r->status == GATE_FAIL ? "fail" : r->status == GATE_SKIP ? "skip" : "error",
			gm_def(r->chk->metric)->name);
		esc(f, r->chk->sel_str);
		fprintf(f, "</td><td>");
		esc(f, r->th->expr);
		fprintf(f, "</td><td>");
		esc(f, obs);
		fprintf(f, "</td>");
		if (any_base) {
			if (r->has_baseline) {
				gate_observed(base, sizeof(base), r, r->baseline, true);
				fprintf(f, "<td>");
				esc(f, base);
				fprintf(f, "</td><td>");
				if (fabs(r->regression_pct) < 0.05)
					fprintf(f, "same");
				else
					fprintf(f, "%.1f%% %s", fabs(r->regression_pct),
						r->regression_pct > 0 ? "worse" : "better");
				fprintf(f, "</td>");
			} else {
				fprintf(f, "<td>-</td><td>-</td>");
			}
		}
		fprintf(f, "<td class=\"status\">%s</td><td>", st);
		esc(f, r->note);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	if (g->ringbuf_drops)
		fprintf(f, "<p class=\"warn\">%llu events lost (ring buffer full) during the run</p>\n",
			(unsigned long long)g->ringbuf_drops);
	fprintf(f, "</section>\n");
}

static const char css[] =
	"body{font:14px/1.4 system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:24px auto;"
	"max-width:1000px;padding:0 12px;color:#1b1f24;background:#fff}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}\n"
	".sub{color:#57606a;margin:0 0 12px}\n"
	"table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}\n"
	"th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}\n"
	"th{background:#f6f8fa}table.facts th{width:210px}\n"
	"#thresholds td{white-space:nowrap}#thresholds td:last-child{white-space:normal}\n"
	"#holders td{word-break:break-all}\n"
	"td.na{color:#888}\n"
	"td.yes{color:#1a7f37}td.no{color:#9a6700}\n"
	"tr.pass td.status{background:#dafbe1;color:#1a7f37;font-weight:bold}\n"
	"tr.fail td.status{background:#ffebe9;color:#cf222e;font-weight:bold}\n"
	"tr.error td.status{background:#ffebe9;color:#82071e;font-weight:bold}\n"
	"tr.skip td.status{background:#fff8c5;color:#9a6700}\n"
	"#verdict{font-size:18px;font-weight:bold;padding:6px 10px;display:inline-block}\n"
	"#verdict.pass{background:#dafbe1;color:#1a7f37}#verdict.fail,#verdict.error"
	"{background:#ffebe9;color:#cf222e}\n"
	".error,.warn{color:#cf222e}\n"
	"figure.chart{margin:8px 0 16px}figcaption{font-size:12px;color:#57606a}\n"
	"svg{max-width:100%;height:auto;background:#fff}\n"
	"svg .title{font-size:14px;font-weight:bold;fill:#1b1f24}\n"
	"svg .ylab{font-size:11px;text-anchor:end;fill:#57606a}\n"
	"svg .xlab,svg .blab{font-size:10px;text-anchor:middle;fill:#57606a}\n"
	"svg .axis{font-size:11px;text-anchor:middle;fill:#57606a}\n"
	"svg .nodata{font-size:13px;fill:#9a6700}\n"
	"svg .grid{stroke:#eaeef2;stroke-width:1}\n"
	"svg .line{fill:none;stroke-width:2}svg .line.cand{stroke:#0969da}"
	"svg .line.base{stroke:#8c959f;stroke-dasharray:5 3}\n"
	"svg .dot.cand{fill:#0969da}svg .dot.base{fill:#8c959f}\n"
	"svg .bar.cand{fill:#0969da}svg .bar.base{fill:#8c959f}\n"
	".key{margin:0 4px 0 10px;font-size:14px}.key.cand{color:#0969da}.key.base{color:#8c959f}\n"
	"p.nodata{color:#9a6700}footer{margin-top:30px;color:#57606a;font-size:12px}\n";

/* Shared with other pages (compare_out.c): the same head, style and escaping. */
void html_page__begin(FILE *f, const char *title, const char *extra_css)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		"<meta name=\"viewport\" content=\"width=device-width\"/>\n<title>");
	esc(f, title);
	fprintf(f, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", css,
		extra_css ? extra_css : "");
}

void html_page__end(FILE *f)
{
	fprintf(f, "<footer>Written by devmemtop %s.</footer>\n</body>\n</html>\n",
		DEVMEMTOP_VERSION);
}

void html_esc(FILE *f, const char *s)
{
	esc(f, s);
}

int html_report__fprint(FILE *f, const struct html_run *cand, const struct html_run *base,
			const struct gate_report *gate)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		"<meta name=\"viewport\" content=\"width=device-width\"/>\n<title>devmemtop ");
	fprintf(f, "%s: ", gate ? "gate" : "report");
	if (gate)
		esc(f, gate->spec->name);
	else
		esc(f, cand->source[0] ? cand->source : "live");
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
	fprintf(f, "<h1>devmemtop %s%s</h1>\n<p class=\"sub\">", gate ? "gate" : "report",
		base ? ": candidate vs baseline" : "");
	esc(f, cand->source[0] ? cand->source : "live");
	if (base) {
		fprintf(f, " against ");
		esc(f, base->source);
	}
	fprintf(f, ", kernel ");
	esc(f, cand->have_meta ? cand->meta.kernel : "?");
	fprintf(f, ", %s mode</p>\n", cand->mode >= 0 ? dmt_mode_name(cand->mode) : "?");
	if (gate)
		thresholds(f, gate);
	facts(f, cand, base);
	fprintf(f, "<section id=\"series\">\n<h2>Over time</h2>\n");
	chart_series(f, cand, base, SER_OCC);
	chart_series(f, cand, base, SER_HOLDS);
	chart_series(f, cand, base, SER_INFLIGHT);
	fprintf(f, "</section>\n");
	histograms(f, cand, base);
	objects(f, cand);
	availability(f, cand, base);
	fprintf(f, "<footer>Written by devmemtop %s. Latency buckets are log2, rounded up: a "
		"bar labelled &#8804;X holds values in (X/2, X]. Refill batch sizes are exact."
		"</footer>\n</body>\n</html>\n", DEVMEMTOP_VERSION);
	return ferror(f) ? -EIO : 0;
}

int html_report__write(const char *path, const struct html_run *cand, const struct html_run *base,
		       const struct gate_report *gate)
{
	FILE *f = fopen(path, "w");
	int err, e;

	if (!f)
		return -errno;
	err = html_report__fprint(f, cand, base, gate);
	e = out_close(f);	/* the write's own reason: ferror() alone gives -EIO */
	if (e && (!err || err == -EIO))
		err = e;
	return err;
}

int html_report__cmd(const char *path, const char *baseline, const char *out, bool text_opts)
{
	struct html_run *cand = NULL, *base = NULL;
	char err[768];
	int rc, brc = 0, ret = 2, e;

	if (!out) {
		fprintf(stderr, "devmemtop report: --baseline needs --html OUT\n");
		return 2;
	}
	if (text_opts) {
		fprintf(stderr,
			"devmemtop report: --html does not combine with --json or --no-events\n");
		return 2;
	}
	rc = html_run__read(path, &cand, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "devmemtop report: %s\n", err);
		return rc == -EBADMSG ? 1 : 2;
	}
	if (baseline) {
		brc = html_run__read(baseline, &base, err, sizeof(err));
		if (brc < 0) {
			fprintf(stderr, "devmemtop report: baseline: %s\n", err);
			goto out;
		}
	}
	e = html_report__write(out, cand, base, NULL);
	if (e) {
		fprintf(stderr, "devmemtop report: cannot write %s: %s\n", out, strerror(-e));
		goto out;
	}
	fprintf(stderr, "devmemtop report: %s: %llu snapshots%s -> %s\n", path,
		(unsigned long long)cand->n_snaps, base ? " against a baseline" : "", out);
	if (base && brc)
		fprintf(stderr, "devmemtop report: baseline %s\n", base->error);
	ret = 0;
	if (rc) {
		fprintf(stderr, "devmemtop report: %s\n", cand->error);
		ret = 1;
	}
out:
	html_run__free(cand);
	html_run__free(base);
	return ret;
}
