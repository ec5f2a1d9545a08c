// SPDX-License-Identifier: GPL-2.0
/* Prometheus text exposition format 0.0.4 writer. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "promfmt.h"
#include "promproto.h"
#include "textsafe.h"

struct promfmt {
	char *buf;
	size_t len;
	size_t cap;
	int err;
	const char *name;
	const char *type;
	const char *help;
	int header_done;
	struct promproto *pp;	/* protobuf instead of text (promproto.c) */
};

struct promfmt *promfmt__new(void)
{
	struct promfmt *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cap = 4096;
	w->buf = malloc(w->cap);
	if (!w->buf) {
		free(w);
		return NULL;
	}
	w->buf[0] = '\0';
	return w;
}

/* The protobuf format: every call below goes to promproto.c instead. */
struct promfmt *promfmt__new_proto(void)
{
	struct promfmt *w = promfmt__new();

	if (!w)
		return NULL;
	w->pp = promproto__new();
	if (!w->pp) {
		promfmt__free(w);
		return NULL;
	}
	return w;
}

int promfmt__end(struct promfmt *w)
{
	return w->pp ? promproto__end(w->pp) : w->err;
}

void promfmt__free(struct promfmt *w)
{
	if (!w)
		return;
	promproto__free(w->pp);
	free(w->buf);
	free(w);
}

static int grow(struct promfmt *w, size_t need)
{
	size_t cap = w->cap ? w->cap : 4096;
	char *nb;

	if (w->err)
		return w->err;
	if (w->len + need + 1 <= w->cap)
		return 0;
	while (cap < w->len + need + 1) {
		if (cap > SIZE_MAX / 2) {
			w->err = -ENOMEM;
			return w->err;
		}
		cap *= 2;
	}
	nb = realloc(w->buf, cap);
	if (!nb) {
		w->err = -ENOMEM;
		return w->err;
	}
	w->buf = nb;
	w->cap = cap;
	return 0;
}

static void put(struct promfmt *w, const char *s, size_t n)
{
	if (grow(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void puts_(struct promfmt *w, const char *s)
{
	put(w, s, strlen(s));
}

static void putc_(struct promfmt *w, char c)
{
	put(w, &c, 1);
}

/*
 * Label values escape \, " and newline; HELP text escapes \ and newline.
 * Both must be valid UTF-8 and should not carry terminal controls: a byte
 * textsafe_char() refuses (an ESC in an interface name, invalid UTF-8)
 * becomes the visible text \xNN, written as "\\xNN". A tab is valid
 * in the format and kept.
 * The escaped form of the unit at s into out (at most 5 bytes); returns
 * how many bytes of s it covers, and its length in *olen.
 */
static size_t prom_unit(const char *s, int quote, char *out, size_t *olen)
{
	size_t n;

	switch (*s) {
	case '\\':
		memcpy(out, "\\\\", 2);
		*olen = 2;
		return 1;
	case '\n':
		memcpy(out, "\\n", 2);
		*olen = 2;
		return 1;
	case '"':
		if (quote) {
			memcpy(out, "\\\"", 2);
			*olen = 2;
			return 1;
		}
		break;
	case '\t':
		out[0] = '\t';
		*olen = 1;
		return 1;
	}
	n = textsafe_char(s);
	if (n) {
		memcpy(out, s, n);
		*olen = n;
		return n;
	}
	snprintf(out, 6, "\\\\x%02x", (unsigned char)*s);
	*olen = 5;
	return 1;
}

static void put_escaped(struct promfmt *w, const char *s, int quote)
{
	while (s && *s) {
		char u[6];
		size_t ulen;

		s += prom_unit(s, quote, u, &ulen);
		put(w, u, ulen);
	}
}

int prom_escape_label(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	while (s && *s) {
		char u[6];
		size_t ulen;

		s += prom_unit(s, 1, u, &ulen);
		if (o + ulen + 1 > len)
			return -ENOSPC;
		memcpy(buf + o, u, ulen);
		o += ulen;
	}
	if (o + 1 > len)
		return -ENOSPC;
	buf[o] = '\0';
	return (int)o;
}

int prom_format_double(char *buf, size_t len, double v)
{
	int n;

	if (isnan(v))
		n = snprintf(buf, len, "NaN");
	else if (isinf(v))
		n = snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		n = snprintf(buf, len, "%.0f", v);	/* integers in full, not 1.7e+09 */
	else {
		/* the shortest %g that reads back exactly */
		for (int prec = 1; prec <= 17; prec++) {
			n = snprintf(buf, len, "%.*g", prec, v);
			if (n < 0 || (size_t)n >= len)
				return -ENOSPC;
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

void promfmt__family(struct promfmt *w, const char *name, const char *type, const char *help)
{
	if (w->pp)
		promproto__family(w->pp, name, type, help);
	w->name = name;
	w->type = type;
	w->help = help;
	w->header_done = 0;
}

static void sample_head(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
			size_t n, const char *xname, const char *xvalue)
{
	int first = 1;

	if (!w->name) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	if (!w->header_done) {
		puts_(w, "# HELP ");
		puts_(w, w->name);
		putc_(w, ' ');
		put_escaped(w, w->help, 0);
		puts_(w, "\n# TYPE ");
		puts_(w, w->name);
		putc_(w, ' ');
		puts_(w, w->type);
		putc_(w, '\n');
		w->header_done = 1;
	}
	puts_(w, w->name);
	if (suffix)
		puts_(w, suffix);
	for (size_t i = 0; i <= n; i++) {
		const char *k = i < n ? lbl[i].name : xname;
		const char *v = i < n ? lbl[i].value : xvalue;

		if (!k)
			continue;
		putc_(w, first ? '{' : ',');
		first = 0;
		puts_(w, k);
		puts_(w, "=\"");
		put_escaped(w, v, 1);
		putc_(w, '"');
	}
	if (!first)
		putc_(w, '}');
	putc_(w, ' ');
}

void promfmt__sample(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
		     size_t n, const char *xname, const char *xvalue, double v)
{
	char num[64];

	if (w->pp) {
		promproto__sample(w->pp, suffix, lbl, n, xname, xvalue, v);
		return;
	}
	sample_head(w, suffix, lbl, n, xname, xvalue);
	if (prom_format_double(num, sizeof(num), v) < 0)
		snprintf(num, sizeof(num), "NaN");
	puts_(w, num);
	putc_(w, '\n');
}

void promfmt__sample_u64(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
			 size_t n, const char *xname, const char *xvalue, uint64_t v)
{
	char num[32];

	if (w->pp) {
		promproto__sample(w->pp, suffix, lbl, n, xname, xvalue, (double)v);
		return;
	}
	sample_head(w, suffix, lbl, n, xname, xvalue);
	snprintf(num, sizeof(num), "%" PRIu64 "\n", v);
	puts_(w, num);
}

void promfmt__sample_i64(struct promfmt *w, const char *suffix, const struct prom_label *lbl,
			 size_t n, const char *xname, const char *xvalue, int64_t v)
{
	char num[32];

	if (w->pp) {
		promproto__sample(w->pp, suffix, lbl, n, xname, xvalue, (double)v);
		return;
	}
	sample_head(w, suffix, lbl, n, xname, xvalue);
	snprintf(num, sizeof(num), "%" PRId64 "\n", v);
	puts_(w, num);
}

void promfmt__hist_log2(struct promfmt *w, const struct prom_label *lbl, size_t n,
			const struct hist_log2 *h, double div)
{
	char le[64];
	uint64_t cum = 0;

	if (w->pp) {
		promproto__hist_log2(w->pp, lbl, n, h, div);
		return;
	}
	/* the last slot also takes everything above its bound: only +Inf is exact */
	for (unsigned int k = 0; k + 1 < DMT_LOG2_SLOTS; k++) {
		cum += h->slots[k];
		prom_format_double(le, sizeof(le), (double)hist_log2_bound(k) / div);
		promfmt__sample_u64(w, "_bucket", lbl, n, "le", le, cum);
	}
	cum += h->slots[DMT_LOG2_SLOTS - 1];
	/*
	 * +Inf and _count must agree and never be below a finite bucket, even
	 * if the BPF side's slot and count updates raced (they are not atomic
	 * together): take the larger of the two.
	 */
	promfmt__sample_u64(w, "_bucket", lbl, n, "le", "+Inf", h->count > cum ? h->count : cum);
	promfmt__sample(w, "_sum", lbl, n, NULL, NULL, (double)h->sum / div);
	promfmt__sample_u64(w, "_count", lbl, n, NULL, NULL, h->count > cum ? h->count : cum);
}

void promfmt__hist_log2_native(struct promfmt *w, const struct prom_label *lbl, size_t n,
			       const struct hist_log2 *h)
{
	if (w->pp)
		promproto__hist_log2_native(w->pp, lbl, n, h);
}

void promfmt__hist_batch(struct promfmt *w, const struct prom_label *lbl, size_t n,
			 const struct hist_batch *h)
{
	char le[16];
	uint64_t cum = 0;
	unsigned int i = 0;

	if (w->pp) {
		promproto__hist_batch(w->pp, lbl, n, h);
		return;
	}

	/* batches are bounded by the pool's alloc cache (128): le=128 is exact */
	for (unsigned int bound = 1; bound <= DMT_BATCH_MAX; bound *= 2) {
		for (; i <= bound; i++)
			cum += h->slots[i];
		snprintf(le, sizeof(le), "%u", bound);
		promfmt__sample_u64(w, "_bucket", lbl, n, "le", le, cum);
	}
	for (; i <= DMT_BATCH_MAX; i++)
		cum += h->slots[i];
	promfmt__sample_u64(w, "_bucket", lbl, n, "le", "+Inf", h->count > cum ? h->count : cum);
	promfmt__sample_u64(w, "_sum", lbl, n, NULL, NULL, h->sum);
	promfmt__sample_u64(w, "_count", lbl, n, NULL, NULL, h->count > cum ? h->count : cum);
}

const char *promfmt__text(const struct promfmt *w, size_t *len)
{
	if (w->pp)
		return promproto__data(w->pp, len);	/* complete after promfmt__end() */
	if (len)
		*len = w->len;
	return w->buf;
}

char *promfmt__take(struct promfmt *w, size_t *len)
{
	char *b;

	if (w->pp)
		return promproto__take(w->pp, len);
	if (w->err) {
		errno = -w->err;
		return NULL;
	}
	b = w->buf;
	if (len)
		*len = w->len;
	w->buf = NULL;
	w->len = 0;
	w->cap = 0;
	w->name = NULL;
	return b;
}

int promfmt__err(const struct promfmt *w)
{
	if (w->pp)
		return promproto__err(w->pp);
	return w->err;
}
