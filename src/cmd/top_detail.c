// SPDX-License-Identifier: GPL-2.0
/*
 * The live view's selection, detail pane, help overlay and netns names
 * (top_detail.h). top.c renders the tables and calls in here.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <ncurses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hist.h"
#include "metrics.h"
#include "objtrack.h"
#include "top_detail.h"
#include "util.h"

#define HIST_PTS	512		/* per object: a minute at 100 ms and more */
#define HIST_OBJS	256
#define WINDOW_NS	60000000000ULL	/* sparklines: the last minute */

struct pt {
	uint64_t ts;
	double rate;		/* holds/s (a binding: of its pools) */
	double level;		/* pool: inflight; binding: occupancy %, < 0 unknown */
};

struct obj_hist {
	enum top_sel_kind kind;
	uint32_t id;
	uint64_t addr;
	uint64_t last_seen;
	size_t head, n;
	struct pt pts[HIST_PTS];
};

struct top_ui {
	struct top_sel sel;
	bool detail;
	struct obj_hist *objs;
	size_t n_objs;
	uint64_t now;
};

struct top_ui *top_ui__new(void)
{
	struct top_ui *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->objs = calloc(HIST_OBJS, sizeof(*u->objs));
	if (!u->objs) {
		free(u);
		return NULL;
	}
	return u;
}

void top_ui__free(struct top_ui *u)
{
	if (!u)
		return;
	free(u->objs);
	free(u);
}

/* A pool is the one objtrack says (report and gate agree on it). */
static bool same(const struct top_sel *a, enum top_sel_kind kind, uint32_t id, uint64_t addr)
{
	if (a->kind != kind)
		return false;
	if (kind == TOP_SEL_POOL)
		return objtrack_same_pool_key(a->id, a->addr, id, addr);
	return a->id == id;
}

static struct obj_hist *find_hist(struct top_ui *u, enum top_sel_kind kind, uint32_t id,
				  uint64_t addr, bool create)
{
	struct obj_hist *old = NULL;

	for (size_t i = 0; i < u->n_objs; i++) {
		struct obj_hist *h = &u->objs[i];
		struct top_sel k = { h->kind, h->id, h->addr };

		if (same(&k, kind, id, addr))
			return h;
		if (!old || h->last_seen < old->last_seen)
			old = h;
	}
	if (!create)
		return NULL;
	if (u->n_objs < HIST_OBJS)
		old = &u->objs[u->n_objs++];
	/* full: reuse the one seen longest ago */
	memset(old, 0, sizeof(*old));
	old->kind = kind;
	old->id = id;
	old->addr = addr;
	return old;
}

static void hist_push(struct obj_hist *h, uint64_t ts, double rate, double level)
{
	h->pts[h->head] = (struct pt){ ts, rate, level };
	h->head = (h->head + 1) % HIST_PTS;
	if (h->n < HIST_PTS)
		h->n++;
	h->last_seen = ts;
}

void top_ui__feed(struct top_ui *u, const struct dmt_snapshot *s)
{
	struct obj_hist *h;

	u->now = s->ts_ns;
	for (size_t i = 0; i < s->n_pools; i++) {
		const struct dmt_pool_snap *p = &s->pools[i];

		h = find_hist(u, TOP_SEL_POOL, p->id, p->addr, true);
		if (s->interval_s > 0)
			hist_push(h, s->ts_ns, p->hold_rate, (double)p->inflight);
	}
	for (size_t i = 0; i < s->n_bindings; i++) {
		const struct dmt_binding_snap *b = &s->bindings[i];
		double rate = 0;

		for (size_t k = 0; k < s->n_pools; k++)
			if (s->pools[k].binding_id == b->id)
				rate += s->pools[k].hold_rate;
		h = find_hist(u, TOP_SEL_BINDING, b->id, 0, true);
		if (s->interval_s > 0)
			hist_push(h, s->ts_ns, rate, b->occupancy >= 0 ? b->occupancy * 100 : -1);
	}
}

static int row_index(const struct top_ui *u, const struct top_sel *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (same(&u->sel, rows[i].kind, rows[i].id, rows[i].addr))
			return i;
	return -1;
}

void top_ui__fix_selection(struct top_ui *u, const struct top_sel *rows, size_t n)
{
	if (u->detail)	/* the pane keeps its object, even when it is gone */
		return;
	if (!n)
		u->sel.kind = TOP_SEL_NONE;
	else if (row_index(u, rows, n) < 0)
		u->sel = rows[0];
}

bool top_ui__key(struct top_ui *u, int ch, const struct top_sel *rows, size_t n)
{
	int i = row_index(u, rows, n);

	switch (ch) {
	case KEY_UP:
	case 'k':
	case KEY_DOWN:
	case 'j':
		if (u->detail || !n)
			return true;
		if (i < 0)
			i = 0;
		else if ((ch == KEY_UP || ch == 'k') && i > 0)
			i--;
		else if ((ch == KEY_DOWN || ch == 'j') && i + 1 < (int)n)
			i++;
		u->sel = rows[i];
		return true;
	case KEY_HOME:
	case KEY_END:
		if (!u->detail && n)
			u->sel = rows[ch == KEY_HOME ? 0 : n - 1];
		return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (u->sel.kind != TOP_SEL_NONE && (i >= 0 || u->detail))
			u->detail = true;
		return true;
	case 27:		/* Esc */
	case KEY_BACKSPACE:
	case KEY_LEFT:
		u->detail = false;
		top_ui__fix_selection(u, rows, n);
		return true;
	}
	return false;
}

bool top_ui__detail_open(const struct top_ui *u)
{
	return u->detail;
}

bool top_ui__is_selected(const struct top_ui *u, const struct top_sel *r)
{
	return same(&u->sel, r->kind, r->id, r->addr);
}

const char *top_ui__keys_line(const struct top_ui *u)
{
	if (u->detail)
		return "Esc back  q quit  p pause  h help";
	return "q quit  s sort  1-5 sort key  p pause  h help  j/k select  Enter detail";
}

/* ---- netns names -------------------------------------------------------- */

#define NETNS_DIR	"/run/netns"

static struct {
	uint64_t scanned;
	size_t n;
	struct { uint32_t ino; char name[256]; } e[64];
} netns_cache;

static void netns_scan(void)
{
	DIR *d = opendir(NETNS_DIR);
	struct dirent *de;
	char path[320];
	struct stat st;

	netns_cache.n = 0;
	netns_cache.scanned = now_mono_ns();
	if (!d)
		return;
	while ((de = readdir(d)) && netns_cache.n < ARRAY_SIZE(netns_cache.e)) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), NETNS_DIR "/%s", de->d_name);
		/* a bind mount of /proc/PID/ns/net: its inode is the namespace's */
		if (stat(path, &st) || st.st_ino > UINT32_MAX)
			continue;
		netns_cache.e[netns_cache.n].ino = st.st_ino;
		snprintf(netns_cache.e[netns_cache.n].name, sizeof(netns_cache.e[0].name), "%s",
			 de->d_name);
		netns_cache.n++;
	}
	closedir(d);
}

const char *top_netns_name(uint32_t ino, char *buf, size_t len)
{
	if (!ino) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (!netns_cache.scanned || now_mono_ns() - netns_cache.scanned > 2000000000ULL)
		netns_scan();
	for (size_t i = 0; i < netns_cache.n; i++) {
		if (netns_cache.e[i].ino == ino) {
			snprintf(buf, len, "%s", netns_cache.e[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%u", ino);
	return buf;
}

/* ---- the detail pane as text --------------------------------------------- */

struct pane {
	struct top_dlines *d;
	int rows, cols;
	bool utf8;
	int err;
};

/* Display width of UTF-8 text: one column per character (no wide chars here). */
static int width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Cut s to at most cols columns, on a character boundary. */
static void cut(char *s, int cols)
{
	int w = 0;

	for (char *p = s; *p; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && ++w > cols) {
			*p = '\0';
			return;
		}
	}
}

static void add(struct pane *p, int bold, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct pane *p, int bold, const char *fmt, ...)
{
	char buf[1024], **nv;
	int *nb;
	va_list ap;

	if (p->err || (int)p->d->n >= p->rows)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cut(buf, p->cols);
	nv = realloc(p->d->v, (p->d->n + 1) * sizeof(*nv));
	if (nv)
		p->d->v = nv;
	nb = realloc(p->d->bold, (p->d->n + 1) * sizeof(*nb));
	if (nb)
		p->d->bold = nb;
	if (!nv || !nb || !(p->d->v[p->d->n] = strdup(buf))) {
		p->err = -ENOMEM;
		return;
	}
	p->d->bold[p->d->n++] = bold;
}

static int left(const struct pane *p)
{
	return p->rows - (int)p->d->n;
}

void top_dlines__free(struct top_dlines *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	free(d->bold);
	memset(d, 0, sizeof(*d));
}

/* "[#####.....]" n cells wide (plus brackets) for frac in [0, 1]. */
static void gauge(char *buf, int n, double frac)
{
	int fill = (int)lrint(fmax(0, fmin(1, frac)) * n);

	buf[0] = '[';
	for (int i = 0; i < n; i++)
		buf[1 + i] = i < fill ? '#' : '.';
	buf[n + 1] = ']';
	buf[n + 2] = '\0';
}

/*
 * One sparkline over the last minute, now at the right end: the window is
 * split into w time slots, each shows the largest value that fell in it;
 * a slot without a sample after the first one repeats the value before it
 * (intervals longer than a slot), before the first one it is blank.
 */
static void sparkline(struct pane *p, const char *label, const struct obj_hist *h, bool level,
		      uint64_t now, bool pct)
{
	static const char *const blocks[] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
					      "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "_.-:=+*#";
	double slot[256], max = 0, cur = -1;
	bool has[256] = {};
	char line[1200], a[24], b[24];
	int w = p->cols - 34, off;

	if (w > 120)
		w = 120;
	if (!h || !h->n) {
		add(p, 0, "  %-12s (no samples yet)", label);
		return;
	}
	if (w < 8) {	/* too narrow for a line: the numbers alone */
		const struct pt *l = &h->pts[(h->head + HIST_PTS - 1) % HIST_PTS];

		fmt_human_num(a, sizeof(a), level ? l->level : l->rate);
		add(p, 0, "  %s %s%s", label, a, pct ? "%" : "");
		return;
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct pt *x = &h->pts[(h->head + HIST_PTS - h->n + i) % HIST_PTS];
		double v = level ? x->level : x->rate;
		int k;

		if (x->ts > now || now - x->ts >= WINDOW_NS || v < 0)
			continue;
		k = w - 1 - (int)((double)(now - x->ts) / WINDOW_NS * w);
		k = k < 0 ? 0 : k;
		if (!has[k] || v > slot[k])
			slot[k] = v;
		has[k] = true;
		max = fmax(max, v);
		cur = v;
	}
	if (cur < 0) {
		add(p, 0, "  %-12s (unknown)", label);
		return;
	}
	for (int k = 1; k < w; k++) {
		if (!has[k] && has[k - 1]) {
			slot[k] = slot[k - 1];
			has[k] = true;
		}
	}
	off = snprintf(line, sizeof(line), "  %-12s ", label);
	for (int k = 0; k < w && off < (int)sizeof(line) - 8; k++) {
		int lvl = has[k] && max > 0 ? (int)(slot[k] / max * 7.999) : 0;

		if (!has[k])
			off += snprintf(line + off, sizeof(line) - off, " ");
		else if (p->utf8)
			off += snprintf(line + off, sizeof(line) - off, "%s", blocks[lvl]);
		else
			off += snprintf(line + off, sizeof(line) - off, "%c", ascii[lvl]);
	}
	fmt_human_num(a, sizeof(a), cur);
	fmt_human_num(b, sizeof(b), max);
	add(p, 0, "%s now %s%s max %s%s", line, a, pct ? "%" : "", b, pct ? "%" : "");
}

/* Histogram rows: "label |#####     | count pct%", at most max_rows. */
static void bars(struct pane *p, const char (*label)[32], const uint64_t *v, int n,
		 uint64_t total, int max_rows)
{
	uint64_t top = 0;
	int lw = 0, bw, shown = 0;
	char bar[256];

	for (int i = 0; i < n; i++) {
		top = v[i] > top ? v[i] : top;
		lw = (int)strlen(label[i]) > lw ? (int)strlen(label[i]) : lw;
	}
	bw = p->cols - lw - 24;
	if (bw > 60)
		bw = 60;
	for (int i = 0; i < n; i++) {
		int fill;

		if (shown == max_rows - 1 && n - i > 1) {
			add(p, 0, "  %*s  ... %d more buckets (taller terminal shows them)", lw, "",
			    n - i);
			return;
		}
		if (bw < 4) {
			add(p, 0, "  %*s %llu", lw, label[i], (unsigned long long)v[i]);
		} else {
			fill = top ? (int)lrint((double)v[i] / top * bw) : 0;
			if (v[i] && !fill)
				fill = 1;	/* never hide a bucket that has samples */
			memset(bar, '#', fill);
			memset(bar + fill, ' ', bw - fill);
			bar[bw] = '\0';
			add(p, 0, "  %*s |%s| %llu %.0f%%", lw, label[i], bar,
			    (unsigned long long)v[i], total ? 100.0 * v[i] / total : 0);
		}
		shown++;
	}
}

static void batch_section(struct pane *p, const struct dmt_snapshot *s,
			  const struct hist_batch *h, int max_rows)
{
	char label[DMT_BATCH_MAX + 1][32];
	uint64_t v[DMT_BATCH_MAX + 1], q50 = 0, q99 = 0;
	int n = 0;

	if (!s->avail[DMT_M_POOL_REFILL].available) {
		add(p, 1, "Refill batches: unavailable: %s", s->avail[DMT_M_POOL_REFILL].reason);
		return;
	}
	if (!h->count) {
		add(p, 1, "Refill batches: none yet");
		return;
	}
	hist_batch_quantile(h, 0.5, &q50);
	hist_batch_quantile(h, 0.99, &q99);
	add(p, 1, "Refill batches %s: %llu refills, mean %.1f, p50 %llu, p99 %llu, "
	    "max %llu", s->avail[DMT_M_POOL_REFILL].sampled ? "(sampled)" : "since start",
	    (unsigned long long)h->count, hist_batch_mean(h),
	    (unsigned long long)q50, (unsigned long long)q99,
	    (unsigned long long)hist_batch_max(h));
	for (int i = 0; i <= DMT_BATCH_MAX; i++) {
		if (!h->slots[i])
			continue;	/* sizes that occurred: 1 and 64 is two rows */
		snprintf(label[n], sizeof(label[0]), "%d%s", i, i == DMT_BATCH_MAX ? "+" : "");
		v[n++] = h->slots[i];
	}
	bars(p, label, v, n, h->count, max_rows);
}

static void log2_section(struct pane *p, const char *title, const struct hist_log2 *h,
			 const struct dmt_availability *av, int max_rows)
{
	char label[DMT_LOG2_SLOTS][32], a[24], b[24], c[24];
	uint64_t v[DMT_LOG2_SLOTS], q50 = 0, q99 = 0;
	int lo = -1, hi = -1, n = 0;

	if (!av->available) {
		add(p, 1, "%s: unavailable: %s", title, av->reason);
		return;
	}
	if (!h->count) {
		add(p, 1, "%s: no samples yet", title);
		return;
	}
	hist_log2_quantile(h, 0.5, &q50);
	hist_log2_quantile(h, 0.99, &q99);
	fmt_human_ns(a, sizeof(a), (double)h->sum / h->count);
	fmt_human_ns(b, sizeof(b), q50);
	fmt_human_ns(c, sizeof(c), q99);
	add(p, 1, "%s: %llu samples, avg %s, p50 <= %s, p99 <= %s", title,
	    (unsigned long long)h->count, a, b, c);
	for (int i = 0; i < DMT_LOG2_SLOTS; i++) {
		if (!h->slots[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
	}
	/* the whole range shows the shape; when it does not fit, the non-empty buckets */
	for (int i = lo; i <= hi; i++) {
		if (!h->slots[i] && hi - lo + 1 > max_rows)
			continue;
		fmt_human_ns(a, sizeof(a), hist_log2_bound(i));
		snprintf(label[n], sizeof(label[0]), "<=%s", a);
		v[n++] = h->slots[i];
	}
	bars(p, label, v, n, h->count, max_rows);
}

static const struct dmt_binding_snap *find_binding(const struct dmt_snapshot *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_bindings; i++)
		if (s->bindings[i].id == id)
			return &s->bindings[i];
	return NULL;
}

static void occupancy_line(struct pane *p, const struct dmt_binding_snap *b)
{
	char g[128];
	int n = p->cols - 44;

	if (!b || b->occupancy < 0 || b->total_niovs <= 0) {
		add(p, 0, "  occupancy    n/a%s", b ? " (binding size or free count unknown)" : "");
		return;
	}
	n = n > 60 ? 60 : n;
	if (n < 4) {
		add(p, 0, "  occupancy %.1f%%", b->occupancy * 100);
		return;
	}
	gauge(g, n, b->occupancy);
	add(p, 0, "  occupancy    %s %.1f%% (%lld of %lld niovs)", g, b->occupancy * 100,
	    (long long)(b->total_niovs - b->free_niovs), (long long)b->total_niovs);
}

static void cnt(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%lld", (long long)v);
}

/*
 * The metric table's figures of object o that people see (rows with a
 * column heading): "title value" pairs, as many a line as the pane is
 * wide, then why the "n/a" ones are unavailable, one line per reason.
 */
static void view_rows(struct pane *p, const struct dmt_snapshot *s, enum mdef_obj obj,
		      const void *o)
{
	bool why[DMT_M__COUNT] = {};
	char line[256], item[96], v[32];
	int off = 0;

	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];
		int w;

		if (!mdef_view_col(d, obj))
			continue;
		w = snprintf(item, sizeof(item), "  %s %s", d->title,
			     mdef_fmt(d, o, s->avail, true, v, sizeof(v)));
		if (off && off + w > p->cols) {
			add(p, 0, "%s", line);
			off = 0;
		}
		off += snprintf(line + off, sizeof(line) - off, "%s", item);
		if (off >= (int)sizeof(line))
			off = sizeof(line) - 1;
		if (d->avail >= 0 && !mdef_available(d, s->avail))
			why[d->avail] = true;
	}
	if (off)
		add(p, 0, "%s", line);
	for (int m = 0; m < DMT_M__COUNT; m++)
		if (why[m])
			add(p, 0, "    (n/a: %s)", s->avail[m].reason);
}

static void pool_pane(struct pane *p, const struct top_ui *u, const struct dmt_snapshot *s,
		      const struct dmt_pool_snap *pl)
{
	const struct dmt_binding_snap *b = pl->binding_id ? find_binding(s, pl->binding_id) : NULL;
	const struct obj_hist *h = find_hist((struct top_ui *)u, TOP_SEL_POOL, pl->id, pl->addr,
					     false);
	char ns[80], nl[24], q[16], napi[16], bind[16];

	top_netns_name(pl->netns, ns, sizeof(ns));
	if (pl->netns && strcmp(ns, "-") && (uint32_t)strtoul(ns, NULL, 10) != pl->netns)
		snprintf(ns + strlen(ns), sizeof(ns) - strlen(ns), " (%u)", pl->netns);
	cnt(nl, sizeof(nl), pl->netlink_inflight);
	snprintf(q, sizeof(q), pl->queue >= 0 ? "%d" : "-", pl->queue);
	snprintf(napi, sizeof(napi), pl->napi_id ? "%u" : "-", pl->napi_id);
	snprintf(bind, sizeof(bind), pl->binding_id ? "%u" : "-", pl->binding_id);
	add(p, 2, "Pool %u on %s", pl->id, pl->ifname[0] ? pl->ifname : "?");
	add(p, 0, "  netns %s  ifindex %d  queue %s  napi %s  NUMA node %d (%u changes)", ns,
	    pl->ifindex, q, napi, pl->nid, pl->nid_changes);
	add(p, 0, "  kind %s  binding %s  state %s  attribution %s", dmt_kind_name(pl->kind),
	    bind, dmt_pool_state_name(pl->state), dmt_attr_src_name(pl->attr_src));
	add(p, 0, "  holds %llu (%llu pages, %llu niovs)  releases %llu",
	    (unsigned long long)pl->holds, (unsigned long long)pl->holds_page,
	    (unsigned long long)pl->holds_niov, (unsigned long long)pl->releases);
	add(p, 0, "  inflight %lld  netlink: %s, inflight %s%s", (long long)pl->inflight,
	    pl->netlink_listed ? "listed" : "not listed", nl,
	    pl->destroy_inflight >= 0 ? "  (destroyed with items in flight)" : "");
	view_rows(p, s, MO_POOL, pl);
	if (pl->binding_id)
		occupancy_line(p, b);
	add(p, 0, "%s", "");
	add(p, 1, "Last minute");
	sparkline(p, "holds/s", h, false, u->now, false);
	sparkline(p, "inflight", h, true, u->now, false);
	if (b) {
		const struct obj_hist *bh = find_hist((struct top_ui *)u, TOP_SEL_BINDING, b->id,
						      0, false);

		sparkline(p, "occupancy", bh, true, u->now, true);
	}
	add(p, 0, "%s", "");
	batch_section(p, s, &pl->refill, left(p) - 1);
}

/*
 * The metric table's binding histograms (latencies: log2_section() shows
 * times), sharing what is left of the pane between those with samples; the
 * last one takes the rest.
 */
static void bind_histograms(struct pane *p, const struct dmt_snapshot *s,
			    const struct dmt_binding_snap *b)
{
	static const struct dmt_availability always = { .available = true };
	const struct mdef *last = NULL;
	char title[64];
	int rows, with = 0;

	for (size_t k = 0; k < mdef_count; k++) {
		/* and only the binding's own: no TX time on an RX binding */
		if (!mdef_bind_view_hist(&mdefs[k]) || (mdefs[k].known && !mdefs[k].known(b)))
			continue;
		with += mdef_available(&mdefs[k], s->avail) && mdef_log2(&mdefs[k], b)->count;
		last = &mdefs[k];
	}
	rows = with ? (left(p) - 3) / with : 0;
	for (size_t k = 0; k < mdef_count; k++) {
		const struct mdef *d = &mdefs[k];

		if (!mdef_bind_view_hist(d) || (d->known && !d->known(b)))
			continue;
		snprintf(title, sizeof(title), "%c%s", toupper(d->title[0]), d->title + 1);
		log2_section(p, title, mdef_log2(d, b),
			     d->avail < 0 ? &always : &s->avail[d->avail],
			     d == last ? left(p) - 1 : rows);
	}
}

static void binding_pane(struct pane *p, const struct top_ui *u, const struct dmt_snapshot *s,
			 const struct dmt_binding_snap *b)
{
	const struct obj_hist *h = find_hist((struct top_ui *)u, TOP_SEL_BINDING, b->id, 0, false);
	char tot[24], fr[24], inp[24], sock[24], unb[24], leak[24];

	cnt(tot, sizeof(tot), b->total_niovs);
	cnt(fr, sizeof(fr), b->free_niovs);
	cnt(inp, sizeof(inp), b->in_pools);
	cnt(sock, sizeof(sock), b->held_by_sockets);
	cnt(unb, sizeof(unb), b->out_at_unbind);
	cnt(leak, sizeof(leak), b->out_at_free);
	add(p, 2, "Binding %u on %s (%s)", b->id, b->ifname[0] ? b->ifname : "?",
	    b->tx ? "TX: bind-tx, RX figures n/a" : "RX");
	add(p, 0, "  ifindex %d  dmabuf %llu bytes  niov %u bytes  layout %s  %s", b->ifindex,
	    (unsigned long long)b->dmabuf_size, b->niov_size, b->layout ? b->layout : "?",
	    !b->alive ? "freed" : b->unbound ? "unbound" : "bound");
	add(p, 0, "  niovs %s  free %s  in %u pools %s  held by sockets %s", tot, fr, b->pools,
	    inp, sock);
	if (b->held_by_sockets < 0 && !s->avail[DMT_M_BIND_HELD_BY_SOCKETS].available)
		add(p, 0, "    (held by sockets: %s)", s->avail[DMT_M_BIND_HELD_BY_SOCKETS].reason);
	add(p, 0, "  provider calls %llu  niovs allocated %llu  failures %llu  freed %llu",
	    (unsigned long long)b->alloc_calls, (unsigned long long)b->alloc_niovs,
	    (unsigned long long)b->alloc_fail, (unsigned long long)b->free_niovs_count);
	add(p, 0, "  outstanding at unbind %s  leaked at free %s", unb, leak);
	view_rows(p, s, MO_BINDING, b);
	if (s->avail[DMT_M_BIND_TOKEN_EVENTS].available)
		add(p, 0, "  token mode %s  tokens drained at unbind %llu",
		    b->token_mode == (DMT_TOKMODE_AUTORELEASE | DMT_TOKMODE_MANUAL) ? "both" :
		    b->token_mode & DMT_TOKMODE_MANUAL ? "manual (SO_DEVMEM_AUTORELEASE off)" :
		    b->token_mode & DMT_TOKMODE_AUTORELEASE ? "autorelease" : "-",
		    (unsigned long long)b->tok_drained);
	else
		add(p, 0, "  token mode, tokens drained: n/a (%s)",
		    s->avail[DMT_M_BIND_TOKEN_EVENTS].reason);
	occupancy_line(p, b);
	add(p, 0, "%s", "");
	add(p, 1, "Last minute");
	sparkline(p, "occupancy", h, true, u->now, true);
	sparkline(p, "pool holds/s", h, false, u->now, false);
	add(p, 0, "%s", "");
	bind_histograms(p, s, b);
}

int top_ui__detail_lines(const struct top_ui *u, const struct dmt_snapshot *s, int rows,
			 int cols, bool utf8, struct top_dlines *out)
{
	struct pane p = { .d = out, .rows = rows, .cols = cols, .utf8 = utf8 };
	bool found = false;

	memset(out, 0, sizeof(*out));
	if (rows <= 0 || cols <= 0)
		return 0;
	if (u->sel.kind == TOP_SEL_POOL) {
		for (size_t i = 0; i < s->n_pools && !found; i++) {
			if (same(&u->sel, TOP_SEL_POOL, s->pools[i].id, s->pools[i].addr)) {
				pool_pane(&p, u, s, &s->pools[i]);
				found = true;
			}
		}
	} else if (u->sel.kind == TOP_SEL_BINDING) {
		const struct dmt_binding_snap *b = find_binding(s, u->sel.id);

		if (b) {
			binding_pane(&p, u, s, b);
			found = true;
		}
	}
	if (!found)
		add(&p, 2, "%s %u is gone (destroyed or freed): Esc returns to the tables",
		    u->sel.kind == TOP_SEL_POOL ? "Pool" : "Binding", u->sel.id);
	if (p.err)
		top_dlines__free(out);
	return p.err;
}

/* ---- drawing --------------------------------------------------------------- */

void top_ui__draw_detail(const struct top_ui *u, const struct dmt_snapshot *s)
{
	struct top_dlines d;
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (top_ui__detail_lines(u, s, rows - 1, cols, MB_CUR_MAX > 1, &d))
		return;
	for (size_t i = 0; i < d.n; i++) {
		attrset(d.bold[i] == 2 ? A_REVERSE | A_BOLD : d.bold[i] ? A_BOLD : A_NORMAL);
		mvaddstr(i, 0, d.v[i]);
		if (d.bold[i] == 2)	/* the title bar spans the width */
			for (int x = width(d.v[i]); x < cols; x++)
				addch(' ');
	}
	attrset(A_NORMAL);
	top_dlines__free(&d);
}

void top_ui__draw_help(void)
{
	static const char *const h[] = {
		"devmemtop keys",
		"",
		"  q          quit",
		"  s          next sort key",
		"  1..5       sort by holds, inflight, id, batch, iface",
		"  p          pause / resume refresh",
		"  j k, arrows  select a binding or pool",
		"  Enter      its detail: histograms, gauge, last minute",
		"  Esc        back to the tables",
		"  h or ?     toggle this help",
	};
	int rows, cols, w = 0, bw, bh, y0, x0;

	getmaxyx(stdscr, rows, cols);
	for (size_t i = 0; i < ARRAY_SIZE(h); i++)
		w = (int)strlen(h[i]) > w ? (int)strlen(h[i]) : w;
	bw = w + 4 < cols ? w + 4 : cols;
	bh = (int)ARRAY_SIZE(h) + 2 < rows - 1 ? (int)ARRAY_SIZE(h) + 2 : rows - 1;
	y0 = (rows - 1 - bh) / 2 > 0 ? (rows - 1 - bh) / 2 : 0;
	x0 = (cols - bw) / 2 > 0 ? (cols - bw) / 2 : 0;
	if (bh < 3 || bw < 6) {	/* no room for a box: one line */
		mvaddnstr(0, 0, "keys: q s 1-5 p j/k Enter Esc h", cols);
		clrtoeol();
		return;
	}
	/* clear the box first: nothing of the table shows through */
	for (int y = y0; y < y0 + bh; y++)
		mvhline(y, x0, ' ', bw);
	attron(A_BOLD);
	mvaddch(y0, x0, ACS_ULCORNER);
	mvhline(y0, x0 + 1, ACS_HLINE, bw - 2);
	mvaddch(y0, x0 + bw - 1, ACS_URCORNER);
	mvaddch(y0 + bh - 1, x0, ACS_LLCORNER);
	mvhline(y0 + bh - 1, x0 + 1, ACS_HLINE, bw - 2);
	mvaddch(y0 + bh - 1, x0 + bw - 1, ACS_LRCORNER);
	mvvline(y0 + 1, x0, ACS_VLINE, bh - 2);
	mvvline(y0 + 1, x0 + bw - 1, ACS_VLINE, bh - 2);
	attroff(A_BOLD);
	for (int i = 0; i < bh - 2 && i < (int)ARRAY_SIZE(h); i++)
		mvaddnstr(y0 + 1 + i, x0 + 2, h[i], bw - 4);
}
