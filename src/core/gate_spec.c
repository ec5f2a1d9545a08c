// SPDX-License-Identifier: GPL-2.0
/*
 * Gate spec parsing: YAML (libyaml document API, so every node carries its
 * line and column) into struct gate_spec, and the threshold expression
 * grammar:
 *
 *   expr  := stat op number [unit]
 *   stat  := "p(" number ")" | max | min | avg | mean | last | count | rate | sum
 *   op    := "<" | "<=" | ">" | ">=" | "==" | "!="
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "yamlfile.h"
#include "snapshot.h"
#include "gate_spec.h"
#include "metrics.h"
#include "textsafe.h"
#include "util.h"

#define P(id, n, o, t, u, a, h) [id] = { n, o, t, u, a, h, NULL, 1 }
/* a metric table row's place in the list (gm_init() fills it from the row) */
#define R(id, n) [id] = { .name = n }
static struct gm_def gm_defs[GM__STATIC + 128] = {
	R(GM_POOL_REFILL_BATCH, "pool.refill_batch"),
	R(GM_POOL_HOLDS, "pool.holds"),
	R(GM_POOL_RELEASES, "pool.releases"),
	R(GM_POOL_INFLIGHT, "pool.inflight"),
	P(GM_POOL_COUNT, "pool.count", GM_OBJ_POOL, GM_GAUGE, GM_UNIT_NONE,
	  DMT_M_POOL_HOLDS, "matching pools present in a snapshot"),
	P(GM_POOL_ZOMBIES, "pool.zombies", GM_OBJ_POOL, GM_GAUGE, GM_UNIT_NONE,
	  DMT_M_POOL_DESTROY, "destroyed pools with items still in flight"),
	R(GM_POOL_DESTROY_INFLIGHT, "pool.destroy_inflight"),
	R(GM_POOL_NID_CHANGES, "pool.nid_changes"),
	R(GM_BIND_ALLOC_LATENCY, "binding.alloc_latency"),
	R(GM_BIND_ALLOC_LATENCY_NIOV, "binding.alloc_latency_per_niov"),
	R(GM_BIND_FREE_LATENCY, "binding.free_latency"),
	P(GM_BIND_NIOVS_PER_CALL, "binding.niovs_per_call", GM_OBJ_BINDING, GM_RATIO,
	  GM_UNIT_NONE, DMT_M_BIND_PROVIDER_CALLS,
	  "niovs taken per provider allocation call over the run (bulk refill)"),
	P(GM_BIND_COUNT, "binding.count", GM_OBJ_BINDING, GM_GAUGE, GM_UNIT_NONE,
	  DMT_M_BIND_LIFECYCLE, "matching bindings present in a snapshot"),
	R(GM_DONTNEED_TOKENS, "dontneed.tokens"),
	R(GM_DONTNEED_CALLS, "dontneed.calls"),
	P(GM_TOOL_RINGBUF_DROPS, "tool.ringbuf_drops", GM_OBJ_GLOBAL, GM_COUNTER,
	  GM_UNIT_NONE, -1, "events lost because the ring buffer was full"),
	P(GM_TOOL_MAP_FULL, "tool.map_full", GM_OBJ_GLOBAL, GM_COUNTER, GM_UNIT_NONE, -1,
	  "pools/bindings the BPF maps had no room for"),
	P(GM_TOOL_COLLECT_TIME, "tool.collect_time", GM_OBJ_GLOBAL, GM_GAUGE, GM_UNIT_NS, -1,
	  "time one snapshot took"),
};
#undef P
#undef R

static int gm_n;
static pthread_once_t gm_once = PTHREAD_ONCE_INIT;

/* The vocabulary entry of a metric table row. */
static struct gm_def gm_of_row(const struct mdef *m)
{
	static const enum gm_type types[] = {
		[MT_COUNTER] = GM_COUNTER, [MT_GAUGE] = GM_GAUGE, [MT_TOTAL] = GM_TOTAL,
	};
	static const enum gm_unit units[] = {
		[MU_NIOVS] = GM_UNIT_NONE, [MU_BYTES] = GM_UNIT_BYTES, [MU_RATIO] = GM_UNIT_PCT,
		[MU_NS] = GM_UNIT_NS, [MU_ITEMS] = GM_UNIT_NONE,
	};
	static const enum gm_object objs[] = {
		[MO_POOL] = GM_OBJ_POOL, [MO_BINDING] = GM_OBJ_BINDING, [MO_GLOBAL] = GM_OBJ_GLOBAL,
	};

	return (struct gm_def){
		.name = m->name, .obj = objs[m->obj],
		.type = m->kind == MK_BATCH ? GM_HIST_BATCH : m->kind == MK_LOG2 ? GM_HIST_LOG2 :
			types[m->type],
		.unit = units[m->unit], .avail = m->avail,
		.help = m->gate_help ? m->gate_help : m->help, .mdef = m,
		.scale = m->unit == MU_RATIO ? 100 : 1, .better = m->better,
		.positive = m->positive,
	};
}

/*
 * Fill the places the list keeps for metric table rows (R above), then
 * append the other rows that have a gate name, in table order.
 */
static void gm_init(void)
{
	/* positive: > 0 by nature (metrics.h, mdef.positive) */
	static const struct { enum gm_id id; enum mdef_better b; bool positive; } dirs[] = {
		{ GM_POOL_ZOMBIES, MB_LOWER }, { GM_BIND_NIOVS_PER_CALL, MB_HIGHER, true },
		{ GM_TOOL_RINGBUF_DROPS, MB_LOWER },
		{ GM_TOOL_MAP_FULL, MB_LOWER }, { GM_TOOL_COLLECT_TIME, MB_LOWER, true },
	};
	bool placed[128] = { false };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		gm_defs[dirs[i].id].better = dirs[i].b;
		gm_defs[dirs[i].id].positive = dirs[i].positive;
	}
	for (int k = 0; k < GM__STATIC; k++) {
		for (size_t i = 0; i < mdef_count && i < ARRAY_SIZE(placed); i++) {
			if (gm_defs[k].help || !mdefs[i].gate)
				continue;
			if (!strcmp(mdefs[i].name, gm_defs[k].name)) {
				gm_defs[k] = gm_of_row(&mdefs[i]);
				placed[i] = true;
			}
		}
	}
	gm_n = GM__STATIC;
	for (size_t i = 0; i < mdef_count && gm_n < (int)ARRAY_SIZE(gm_defs); i++)
		if (mdefs[i].gate && !(i < ARRAY_SIZE(placed) && placed[i]))
			gm_defs[gm_n++] = gm_of_row(&mdefs[i]);
}

int gm_count(void)
{
	pthread_once(&gm_once, gm_init);
	return gm_n;
}

const struct gm_def *gm_def(enum gm_id id)
{
	return (unsigned int)id < (unsigned int)gm_count() ? &gm_defs[id] : NULL;
}

int gm_lookup(const char *name)
{
	for (int i = 0; i < gm_count(); i++)
		if (!strcmp(gm_defs[i].name, name))
			return i;
	return -1;
}

static const char *const stat_names[] = {
	[GS_P] = "p", [GS_MAX] = "max", [GS_MIN] = "min", [GS_AVG] = "avg",
	[GS_LAST] = "last", [GS_COUNT] = "count", [GS_RATE] = "rate", [GS_SUM] = "sum",
};

static const char *const op_names[] = {
	[GO_LT] = "<", [GO_LE] = "<=", [GO_GT] = ">", [GO_GE] = ">=", [GO_EQ] = "==",
	[GO_NE] = "!=",
};

const char *gate_stat_name(enum gate_stat s)
{
	return (unsigned int)s < ARRAY_SIZE(stat_names) ? stat_names[s] : "?";
}

const char *gate_op_name(enum gate_op op)
{
	return (unsigned int)op < ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

bool gate_op_holds(enum gate_op op, double o, double t)
{
	switch (op) {
	case GO_LT: return o < t;
	case GO_LE: return o <= t;
	case GO_GT: return o > t;
	case GO_GE: return o >= t;
	case GO_EQ: return o == t;
	case GO_NE: return o != t;
	}
	return false;
}

/* Which stats a metric type has. */
static bool stat_allowed(enum gm_type t, enum gate_stat s)
{
	switch (t) {
	case GM_HIST_BATCH:
	case GM_HIST_LOG2:
		return s == GS_P || s == GS_MAX || s == GS_MIN || s == GS_AVG ||
		       s == GS_COUNT || s == GS_RATE;
	case GM_COUNTER:
		return s == GS_COUNT || s == GS_RATE;
	case GM_GAUGE:
		return s == GS_MAX || s == GS_MIN || s == GS_AVG || s == GS_LAST;
	case GM_TOTAL:
		return s == GS_SUM || s == GS_MAX;
	case GM_RATIO:
		return s == GS_AVG;
	}
	return false;
}

static const char *stats_of(enum gm_type t)
{
	switch (t) {
	case GM_HIST_BATCH:
	case GM_HIST_LOG2:
		return "p(N), max, min, avg, count, rate";
	case GM_COUNTER:
		return "count, rate";
	case GM_GAUGE:
		return "max, min, avg, last";
	case GM_TOTAL:
		return "sum, max";
	case GM_RATIO:
		return "avg";
	}
	return "";
}

enum gm_unit gate_stat_unit(enum gm_id m, enum gate_stat s)
{
	if (s == GS_COUNT || s == GS_RATE)
		return GM_UNIT_NONE;
	return gm_def(m)->unit;
}

void gm_list(FILE *f)
{
	static const char *const types[] = { "histogram", "histogram", "counter", "gauge",
					     "total", "ratio" };
	static const char *const unit[] = { "-", "time", "%", "bytes" };
	static const char *const better[] = { "-", "lower", "higher" };

	fprintf(f, "%-32s %-9s %-5s %-34s %-6s %s\n", "METRIC", "TYPE", "UNIT", "STATISTICS",
		"BETTER", "MEANING");
	for (int i = 0; i < gm_count(); i++) {
		const struct gm_def *d = &gm_defs[i];
		const char *agg = "";

		if (d->mdef && d->type == GM_GAUGE && d->obj == GM_OBJ_BINDING)
			agg = d->mdef->agg == MA_MAX ? " (max over matching bindings)" :
						      " (summed over matching bindings)";
		fprintf(f, "%-32s %-9s %-5s %-34s %-6s %s%s\n", d->name, types[d->type],
			unit[d->unit], stats_of(d->type), better[d->better], d->help, agg);
	}
}

static const struct {
	const char *sfx;
	enum gm_unit unit;
	double mult;
} units[] = {
	{ "ns", GM_UNIT_NS, 1 }, { "us", GM_UNIT_NS, 1e3 }, { "\xc2\xb5s", GM_UNIT_NS, 1e3 },
	{ "ms", GM_UNIT_NS, 1e6 }, { "s", GM_UNIT_NS, 1e9 },
	{ "%", GM_UNIT_PCT, 1 },
	{ "B", GM_UNIT_BYTES, 1 }, { "KiB", GM_UNIT_BYTES, 1024.0 },
	{ "MiB", GM_UNIT_BYTES, 1048576.0 }, { "GiB", GM_UNIT_BYTES, 1073741824.0 },
	{ "KB", GM_UNIT_BYTES, 1e3 }, { "MB", GM_UNIT_BYTES, 1e6 }, { "GB", GM_UNIT_BYTES, 1e9 },
	{ "/s", GM_UNIT_NONE, 1 },
};

static const char *unit_words(enum gm_unit u)
{
	switch (u) {
	case GM_UNIT_NS: return "a time unit (ns, us, ms, s)";
	case GM_UNIT_PCT: return "a percentage (%)";
	case GM_UNIT_BYTES: return "a size (B, KiB, MiB, GiB, KB, MB, GB)";
	case GM_UNIT_NONE: break;
	}
	return "a plain number";
}

static int fail(char *msg, size_t msglen, size_t *err_off, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *msg, size_t msglen, size_t *err_off, size_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	*err_off = off;
	return -EINVAL;
}

/* A decimal number: digits with at most one '.', optional leading '-'. */
static size_t scan_number(const char *s, double *out)
{
	size_t i = 0, digits = 0;
	bool dot = false;
	char tmp[64];

	if (s[i] == '-' || s[i] == '+')
		i++;
	for (;; i++) {
		if (isdigit((unsigned char)s[i])) {
			digits++;
		} else if (s[i] == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (!digits || i >= sizeof(tmp))
		return 0;
	memcpy(tmp, s, i);
	tmp[i] = '\0';
	*out = strtod(tmp, NULL);
	if (!isfinite(*out))
		return 0;
	return i;
}

static size_t skip_ws(const char *s, size_t i)
{
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	return i;
}

int gate_threshold__parse(const char *expr, enum gm_id m, struct gate_threshold *t,
			  size_t *err_off, char *msg, size_t msglen)
{
	const struct gm_def *d = gm_def(m);
	size_t i = skip_ws(expr, 0), start, n;
	enum gm_unit want;
	double v, mult = 1;
	int si = -1;

	memset(t, 0, sizeof(*t));
	start = i;
	while (isalpha((unsigned char)expr[i]))
		i++;
	for (size_t k = 0; k < ARRAY_SIZE(stat_names); k++)
		if (i - start == strlen(stat_names[k]) &&
		    !strncmp(expr + start, stat_names[k], i - start))
			si = k;
	if (i - start == 4 && !strncmp(expr + start, "mean", 4))
		si = GS_AVG;
	if (si < 0)
		return fail(msg, msglen, err_off, start,
			    "expected a statistic (p(N), max, min, avg, last, count, rate, sum) in '%s'",
			    expr);
	t->stat = si;
	if (t->stat == GS_P) {
		i = skip_ws(expr, i);
		if (expr[i] != '(')
			return fail(msg, msglen, err_off, i, "expected '(' after p, as in p(99)");
		i = skip_ws(expr, i + 1);
		n = scan_number(expr + i, &v);
		if (!n || v <= 0 || v > 100)
			return fail(msg, msglen, err_off, i,
				    "percentile must be a number in (0, 100], as in p(99.9)");
		t->q = v / 100.0;
		i = skip_ws(expr, i + n);
		if (expr[i] != ')')
			return fail(msg, msglen, err_off, i, "expected ')' after the percentile");
		i++;
	}
	if (!stat_allowed(d->type, t->stat))
		return fail(msg, msglen, err_off, start,
			    "metric %s has no statistic '%s' (it has: %s)", d->name,
			    gate_stat_name(t->stat), stats_of(d->type));
	i = skip_ws(expr, i);
	start = i;
	if (expr[i] == '<' || expr[i] == '>') {
		bool eq = expr[i + 1] == '=';

		t->op = expr[i] == '<' ? (eq ? GO_LE : GO_LT) : (eq ? GO_GE : GO_GT);
		i += eq ? 2 : 1;
	} else if ((expr[i] == '=' || expr[i] == '!') && expr[i + 1] == '=') {
		t->op = expr[i] == '=' ? GO_EQ : GO_NE;
		i += 2;
	} else {
		return fail(msg, msglen, err_off, start,
			    "expected a comparison (<, <=, >, >=, ==, !=) after '%.*s'",
			    (int)start, expr);
	}
	i = skip_ws(expr, i);
	n = scan_number(expr + i, &v);
	if (!n)
		return fail(msg, msglen, err_off, i, "expected a number after '%s'",
			    gate_op_name(t->op));
	i += n;
	start = i;
	want = gate_stat_unit(m, t->stat);
	i = skip_ws(expr, i);
	if (expr[i]) {
		size_t ulen = strlen(expr + i);
		int ui = -1;

		while (ulen && (expr[i + ulen - 1] == ' ' || expr[i + ulen - 1] == '\t'))
			ulen--;
		for (size_t k = 0; k < ARRAY_SIZE(units); k++)
			if (strlen(units[k].sfx) == ulen && !strncmp(expr + i, units[k].sfx, ulen))
				ui = k;
		if (ui < 0)
			return fail(msg, msglen, err_off, i,
				    "unknown unit '%.*s' (%s %s takes %s)", (int)ulen, expr + i,
				    d->name, gate_stat_name(t->stat), unit_words(want));
		if (units[ui].unit != want ||
		    (!strcmp(units[ui].sfx, "/s") && t->stat != GS_RATE))
			return fail(msg, msglen, err_off, i,
				    "unit '%s' does not fit %s %s, which takes %s",
				    units[ui].sfx, d->name, gate_stat_name(t->stat),
				    unit_words(want));
		mult = units[ui].mult;
	} else if (want == GM_UNIT_NS || want == GM_UNIT_PCT) {
		return fail(msg, msglen, err_off, start,
			    "missing unit: %s %s takes %s", d->name, gate_stat_name(t->stat),
			    unit_words(want));
	}
	t->value = v * mult;
	t->unit = want;
	t->expr = strdup(expr);
	if (!t->expr)
		return fail(msg, msglen, err_off, 0, "out of memory");
	return 0;
}

void gate_fmt_value(char *buf, size_t len, double v, enum gm_unit u)
{
	double a = fabs(v);

	switch (u) {
	case GM_UNIT_NS:
		if (a >= 1e9)
			snprintf(buf, len, "%.3gs", v / 1e9);
		else if (a >= 1e6)
			snprintf(buf, len, "%.3gms", v / 1e6);
		else if (a >= 1e3)
			snprintf(buf, len, "%.3gus", v / 1e3);
		else
			snprintf(buf, len, "%.3gns", v);
		return;
	case GM_UNIT_PCT:
		snprintf(buf, len, "%.2f%%", v);
		return;
	case GM_UNIT_BYTES:
		if (a >= 1073741824.0)
			snprintf(buf, len, "%.3gGiB", v / 1073741824.0);
		else if (a >= 1048576.0)
			snprintf(buf, len, "%.3gMiB", v / 1048576.0);
		else if (a >= 1024.0)
			snprintf(buf, len, "%.3gKiB", v / 1024.0);
		else
			snprintf(buf, len, "%.0fB", v);
		return;
	case GM_UNIT_NONE:
		break;
	}
	if (v == floor(v) && a < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (a < 1e12)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* ---- YAML ---- */

struct pctx {
	yaml_document_t *doc;
	const char *name;
	char *err;
	size_t errlen;
};

static int perr(struct pctx *p, const yaml_node_t *n, size_t col_off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct pctx *p, const yaml_node_t *n, size_t col_off, const char *fmt, ...)
{
	char msg[2048];	/* the unknown metric error lists the vocabulary */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(p->err, p->errlen, "%s:%zu:%zu: %s", p->name, n->start_mark.line + 1,
			 n->start_mark.column + 1 + col_off, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->name, msg);
	return -EINVAL;
}

static const char *node_type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int want_type(struct pctx *p, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	static const char *const names[] = {
		[YAML_SCALAR_NODE] = "a scalar", [YAML_SEQUENCE_NODE] = "a list",
		[YAML_MAPPING_NODE] = "a mapping",
	};

	if (n->type == t && (t != YAML_SCALAR_NODE || !memchr(scalar(n), 0, n->data.scalar.length)))
		return 0;
	return perr(p, n, 0, "%s must be %s, not %s", what, names[t], node_type_name(n));
}

/* Keys of a mapping must be scalars from the allowed list (yamlfile refused repeats). */
static int check_keys(struct pctx *p, const yaml_node_t *map, const char *const *allowed,
		      const char *what)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, a->key);
		bool ok = false;
		char list[256] = "";

		if (want_type(p, k, YAML_SCALAR_NODE, "a key"))
			return -EINVAL;
		for (size_t i = 0; allowed[i]; i++) {
			if (!strcmp(scalar(k), allowed[i]))
				ok = true;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", allowed[i]);
		}
		if (!ok)
			return perr(p, k, 0, "unknown key '%s' in %s (valid: %s)", scalar(k), what,
				    list);
	}
	return 0;
}

static yaml_node_t *map_get(struct pctx *p, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, a->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
			return yaml_document_get_node(p->doc, a->value);
	}
	return NULL;
}

static int parse_int_node(struct pctx *p, const yaml_node_t *n, const char *what, int64_t max,
			  int64_t *out)
{
	uint64_t v;

	if (want_type(p, n, YAML_SCALAR_NODE, what))
		return -EINVAL;
	if (parse_uint(scalar(n), (uint64_t)max, &v))
		return perr(p, n, 0, "%s must be an integer in 0..%lld, not '%s'", what,
			    (long long)max, scalar(n));
	*out = (int64_t)v;
	return 0;
}

static int parse_bool_node(struct pctx *p, const yaml_node_t *n, const char *what, bool *out)
{
	static const char *const t[] = { "true", "yes", "on", "True", "TRUE", NULL };
	static const char *const f[] = { "false", "no", "off", "False", "FALSE", NULL };

	if (want_type(p, n, YAML_SCALAR_NODE, what))
		return -EINVAL;
	for (int i = 0; t[i]; i++) {
		if (!strcmp(scalar(n), t[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(scalar(n), f[i])) {
			*out = false;
			return 0;
		}
	}
	return perr(p, n, 0, "%s must be true or false, not '%s'", what, scalar(n));
}

static const char *const kind_names[] = {
	[DMT_KIND_PAGES] = "pages", [DMT_KIND_DEVMEM] = "devmem",
	[DMT_KIND_IO_URING] = "io_uring", [DMT_KIND_OTHER] = "other",
};

static void sel_append(struct gate_check *c, const char *k, const char *v)
{
	size_t l = strlen(c->sel_str);

	snprintf(c->sel_str + l, sizeof(c->sel_str) - l, "%s%s=%s", l ? "," : "", k, v);
}

static int parse_selectors(struct pctx *p, struct gate_check *c, const yaml_node_t *map)
{
	const struct gm_def *d = gm_def(c->metric);
	struct gate_selector *s = &c->sel;
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, a->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, a->value);
		const char *key = scalar(k);
		int64_t *ip = NULL, max = INT32_MAX;

		if (!strcmp(key, "metric") || !strcmp(key, "optional") ||
		    !strcmp(key, "allow_sampled") ||
		    !strcmp(key, "expect") || !strcmp(key, "no_data"))
			continue;
		if (d->obj == GM_OBJ_GLOBAL)
			return perr(p, k, 0, "%s is global and takes no selector ('%s')", d->name,
				    key);
		if (want_type(p, v, YAML_SCALAR_NODE, key))
			return -EINVAL;
		if (!strcmp(key, "interface")) {
			if (!*scalar(v) || strlen(scalar(v)) > 64)
				return perr(p, v, 0, "interface must be a name or glob of 1..64 characters");
			s->interface = strdup(scalar(v));
			if (!s->interface)
				return perr(p, v, 0, "out of memory");
		} else if (!strcmp(key, "kind")) {
			if (d->obj != GM_OBJ_POOL)
				return perr(p, k, 0, "selector 'kind' applies to pool.* metrics only");
			for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
				if (!strcmp(scalar(v), kind_names[i]))
					s->kind = i;
			if (s->kind < 0)
				return perr(p, v, 0,
					    "unknown pool kind '%s' (valid: pages, devmem, io_uring, other)",
					    scalar(v));
		} else if (!strcmp(key, "ifindex")) {
			ip = &s->ifindex;
		} else if (!strcmp(key, "binding")) {
			ip = &s->binding_id;
			max = UINT32_MAX;
		} else if (!strcmp(key, "pool")) {
			if (d->obj != GM_OBJ_POOL)
				return perr(p, k, 0, "selector 'pool' applies to pool.* metrics only");
			ip = &s->pool_id;
			max = UINT32_MAX;
		} else if (!strcmp(key, "queue")) {
			if (d->obj != GM_OBJ_POOL)
				return perr(p, k, 0, "selector 'queue' applies to pool.* metrics only");
			ip = &s->queue;
		}
		if (ip && parse_int_node(p, v, key, max, ip))
			return -EINVAL;
		sel_append(c, key, scalar(v));
	}
	if (!c->sel_str[0])
		snprintf(c->sel_str, sizeof(c->sel_str), "*");
	return 0;
}

static int unknown_metric(struct pctx *p, const yaml_node_t *n)
{
	char list[2048] = "";

	for (int i = 0; i < gm_count(); i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 gm_defs[i].name);
	return perr(p, n, 0, "unknown metric '%s' (valid: %s)", scalar(n), list);
}

static int parse_check(struct pctx *p, struct gate_check *c, const yaml_node_t *map)
{
	static const char *const keys[] = {
		"metric", "optional", "allow_sampled", "no_data", "expect", "interface",
		"ifindex", "binding", "pool", "kind", "queue", NULL,
	};
	yaml_node_t *n, *exp;
	int m;

	c->line = map->start_mark.line + 1;
	c->col = map->start_mark.column + 1;
	c->sel = (struct gate_selector){ .ifindex = -1, .pool_id = -1, .binding_id = -1,
					 .queue = -1, .kind = -1 };
	if (want_type(p, map, YAML_MAPPING_NODE, "a threshold entry") ||
	    check_keys(p, map, keys, "a threshold entry"))
		return -EINVAL;
	n = map_get(p, map, "metric");
	if (!n)
		return perr(p, map, 0, "threshold entry has no 'metric'");
	if (want_type(p, n, YAML_SCALAR_NODE, "metric"))
		return -EINVAL;
	m = gm_lookup(scalar(n));
	if (m < 0)
		return unknown_metric(p, n);
	c->metric = m;
	n = map_get(p, map, "optional");
	if (n && parse_bool_node(p, n, "optional", &c->optional))
		return -EINVAL;
	n = map_get(p, map, "allow_sampled");
	if (n && parse_bool_node(p, n, "allow_sampled", &c->allow_sampled))
		return -EINVAL;
	n = map_get(p, map, "no_data");
	if (n) {
		if (want_type(p, n, YAML_SCALAR_NODE, "no_data"))
			return -EINVAL;
		if (!strcmp(scalar(n), "skip"))
			c->no_data_skip = true;
		else if (strcmp(scalar(n), "fail"))
			return perr(p, n, 0, "no_data must be fail or skip, not '%s'", scalar(n));
	}
	if (parse_selectors(p, c, map))
		return -EINVAL;
	exp = map_get(p, map, "expect");
	if (!exp)
		return perr(p, map, 0, "threshold entry for %s has no 'expect' list",
			    gm_def(m)->name);
	if (exp->type != YAML_SCALAR_NODE && want_type(p, exp, YAML_SEQUENCE_NODE, "expect"))
		return -EINVAL;
	if (exp->type == YAML_SEQUENCE_NODE &&
	    exp->data.sequence.items.top == exp->data.sequence.items.start)
		return perr(p, exp, 0, "'expect' is empty");
	c->n_thresholds = exp->type == YAML_SCALAR_NODE ? 1 :
			  (size_t)(exp->data.sequence.items.top - exp->data.sequence.items.start);
	c->thresholds = calloc(c->n_thresholds, sizeof(*c->thresholds));
	if (!c->thresholds)
		return perr(p, exp, 0, "out of memory");
	for (size_t i = 0; i < c->n_thresholds; i++) {
		yaml_node_t *e = exp->type == YAML_SCALAR_NODE ? exp :
				 yaml_document_get_node(p->doc, exp->data.sequence.items.start[i]);
		struct gate_threshold *t = &c->thresholds[i];
		size_t off = 0, quote;
		char msg[200];

		if (!e || want_type(p, e, YAML_SCALAR_NODE, "a threshold expression"))
			return -EINVAL;
		if (gate_threshold__parse(scalar(e), m, t, &off, msg, sizeof(msg))) {
			quote = e->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
				e->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
			/* columns inside block scalars would be wrong: point at the start */
			if (e->start_mark.line != e->end_mark.line)
				off = 0, quote = 0;
			return perr(p, e, off + quote, "%s", msg);
		}
		t->line = e->start_mark.line + 1;
		t->col = e->start_mark.column + 1;
	}
	return 0;
}

static int parse_root(struct pctx *p, struct gate_spec *s)
{
	static const char *const keys[] = { "version", "name", "interval", "thresholds", NULL };
	yaml_node_t *root = yaml_document_get_root_node(p->doc), *n, *th;

	if (!root)
		return perr(p, NULL, 0, "empty spec (expected a mapping with 'thresholds')");
	if (want_type(p, root, YAML_MAPPING_NODE, "the spec") ||
	    check_keys(p, root, keys, "the spec"))
		return -EINVAL;
	n = map_get(p, root, "version");
	if (n) {
		if (want_type(p, n, YAML_SCALAR_NODE, "version"))
			return -EINVAL;
		if (strcmp(scalar(n), "1"))
			return perr(p, n, 0, "unsupported spec version '%s' (this devmemtop reads 1)",
				    scalar(n));
	}
	n = map_get(p, root, "name");
	if (n) {
		if (want_type(p, n, YAML_SCALAR_NODE, "name"))
			return -EINVAL;
		s->name = strdup(scalar(n));
		if (!s->name)
			return perr(p, n, 0, "out of memory");
	}
	n = map_get(p, root, "interval");
	if (n) {
		if (want_type(p, n, YAML_SCALAR_NODE, "interval"))
			return -EINVAL;
		if (parse_interval_ns(scalar(n), &s->interval_ns))
			return perr(p, n, 0, "interval must be " DMT_INTERVAL_RANGE ", not '%s'",
				    scalar(n));
	}
	th = map_get(p, root, "thresholds");
	if (!th)
		return perr(p, root, 0, "spec has no 'thresholds' list");
	if (want_type(p, th, YAML_SEQUENCE_NODE, "thresholds"))
		return -EINVAL;
	s->n_checks = th->data.sequence.items.top - th->data.sequence.items.start;
	if (!s->n_checks)
		return perr(p, th, 0, "'thresholds' is empty");
	s->checks = calloc(s->n_checks, sizeof(*s->checks));
	if (!s->checks)
		return perr(p, th, 0, "out of memory");
	for (size_t i = 0; i < s->n_checks; i++) {
		n = yaml_document_get_node(p->doc, th->data.sequence.items.start[i]);
		if (!n || parse_check(p, &s->checks[i], n))
			return -EINVAL;
	}
	return 0;
}

struct gate_spec *gate_spec__parse_buf(const char *buf, size_t len, const char *name, char *err,
				       size_t errlen)
{
	struct pctx p = { .name = name, .err = err, .errlen = errlen };
	struct yamlfile_err ye;
	yaml_document_t doc;
	struct gate_spec *s;
	int e;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	s->path = strdup(name);
	if (!s->path) {
		snprintf(err, errlen, "%s: out of memory", name);
		goto free_spec;
	}
	e = yamlfile__parse(buf, len, &doc, &ye);
	if (e) {
		if (ye.why == YF_NOMEM)
			snprintf(err, errlen, "%s: out of memory", name);
		else
			snprintf(err, errlen, "%s:%zu:%zu: %s%s", name, ye.line, ye.col,
				 ye.why == YF_SYNTAX ? "YAML error: " : "", ye.text);
		goto free_spec;
	}
	p.doc = &doc;
	e = parse_root(&p, s);
	yaml_document_delete(&doc);
	if (!e) {
		if (!s->name)
			s->name = strdup(name);
		if (s->name)
			return s;
		snprintf(err, errlen, "%s: out of memory", name);
	}
free_spec:
	textsafe_line(err, errlen);
	gate_spec__free(s);
	return NULL;
}

struct gate_spec *gate_spec__parse_file(const char *path, char *err, size_t errlen)
{
	struct gate_spec *s;
	char *buf = NULL;
	size_t len = 0;
	int e;

	e = yamlfile__read(path, false, &buf, &len);
	if (e == -EFBIG)
		snprintf(err, errlen, "%s: spec larger than %d bytes", path, YAMLFILE_MAX_BYTES);
	else if (e == -EISDIR)
		snprintf(err, errlen, "%s: cannot read spec: %s", path, strerror(-e));
	else if (e)
		snprintf(err, errlen, "%s: cannot open spec: %s", path, strerror(-e));
	if (e) {
		textsafe_line(err, errlen);
		return NULL;
	}
	s = gate_spec__parse_buf(buf, len, path, err, errlen);
	free(buf);
	return s;
}

void gate_spec__free(struct gate_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_checks; i++) {
		struct gate_check *c = &s->checks[i];

		free(c->sel.interface);
		for (size_t j = 0; c->thresholds && j < c->n_thresholds; j++)
			free(c->thresholds[j].expr);
		free(c->thresholds);
	}
	free(s->checks);
	free(s->name);
	free(s->path);
	free(s);
}
