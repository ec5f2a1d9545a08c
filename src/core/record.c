// SPDX-License-Identifier: GPL-2.0
/* Recording file format: writer, reader and the snapshot encoding. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "metrics.h"
#include "record.h"
#include "util.h"

/* ---- encoding ---- */

static void buf_put(struct rec_buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u64(struct rec_buf *b, uint64_t v)
{
	uint8_t x[8];

	for (int i = 0; i < 8; i++)
		x[i] = v >> (8 * i);
	buf_put(b, x, 8);
}

static void put_u32(struct rec_buf *b, uint32_t v)
{
	uint8_t x[4] = { v, v >> 8, v >> 16, v >> 24 };

	buf_put(b, x, 4);
}

static void put_u16(struct rec_buf *b, uint16_t v)
{
	uint8_t x[2] = { v, v >> 8 };

	buf_put(b, x, 2);
}

static void put_u8(struct rec_buf *b, uint8_t v)
{
	buf_put(b, &v, 1);
}

static void put_f64(struct rec_buf *b, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	put_u64(b, v);
}

static void put_str(struct rec_buf *b, const char *s)
{
	size_t n = s ? strnlen(s, 65535) : 0;

	put_u16(b, n);
	buf_put(b, s, n);
}

/* Patch a u32 at off (for length prefixes). */
static void patch_u32(struct rec_buf *b, size_t off, uint32_t v)
{
	if (b->err)
		return;
	for (int i = 0; i < 4; i++)
		b->p[off + i] = v >> (8 * i);
}

void rec_buf__free(struct rec_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void put_sparse(struct rec_buf *b, const uint64_t *slots, unsigned int n, uint64_t count,
		       uint64_t sum)
{
	unsigned int nz = 0;

	put_u64(b, count);
	put_u64(b, sum);
	for (unsigned int i = 0; i < n; i++)
		nz += !!slots[i];
	put_u16(b, nz);
	for (unsigned int i = 0; i < n; i++) {
		if (!slots[i])
			continue;
		put_u16(b, i);
		put_u64(b, slots[i]);
	}
}

static void put_avail(struct rec_buf *b, const struct dmt_availability *a)
{
	put_u32(b, DMT_M__COUNT);
	for (int i = 0; i < DMT_M__COUNT; i++) {
		/* 2: available but sampled (light mode) */
		put_u8(b, a[i].available ? (a[i].sampled ? 2 : 1) : 0);
		put_str(b, a[i].source);
		put_str(b, a[i].reason);
	}
}

/*
 * A kernel address as the recording shows it (rec_meta.kernel_addresses):
 * a keyed mix, one-to-one, 0 kept as 0 ("no address"). Without the key
 * (random per recording, never written) it says nothing of the layout.
 */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t put_addr_value(const struct rec_buf *b, uint64_t addr)
{
	uint64_t h;

	if (!b->addr_key || !addr)
		return addr;
	h = mix64(mix64(addr ^ b->addr_key[0]) + b->addr_key[1]);
	return h ? h : 1;
}

/*
 * After the version 1 pool fields, like the binding's: "u16 n, n x (u16
 * tag, u64 value)". Readers before it stop at the refill histogram (pool
 * records are length-prefixed); this one skips tags it does not know.
 */
enum rec_pool_tag {
	REC_POOL_FLAGS = 1,		/* bit 0: holds/releases unknown (light mode),
					 * bit 1: an io_uring zcrx pool the zcrx hooks saw */
	/* 2 and up: the metric table's pool rows (rec_tag) */
};
#define REC_POOL_F_COUNTERS_UNKNOWN	(1u << 0)
#define REC_POOL_F_ZCRX			(1u << 1)

/* Whether row d of object kind obj is stored in a tail: scalars, or histograms. */
static bool tail_row(const struct mdef *d, enum mdef_obj obj, bool hist)
{
	return d->obj == obj && d->rec_tag && (d->kind != MK_SCALAR) == hist;
}

/*
 * Whether row d of object o is written: a pool's row only where it has a
 * series (present()): the zcrx rows of a pool that is no zcrx pool are
 * left out, and read back unknown, as they were (get_tail_unknown).
 */
static bool row_stored(const struct mdef *d, enum mdef_obj obj, bool hist, const void *o)
{
	return tail_row(d, obj, hist) && (obj != MO_POOL || mdef_present(d, o));
}

/* The metric table's rows of object o, of kind obj, stored in its tail. */
static uint16_t tail_rows(enum mdef_obj obj, bool hist, const void *o)
{
	uint16_t n = 0;

	for (size_t i = 0; i < mdef_count; i++)
		n += row_stored(&mdefs[i], obj, hist, o);
	return n;
}

static void put_tail_rows(struct rec_buf *b, enum mdef_obj obj, const void *o)
{
	for (size_t i = 0; i < mdef_count; i++) {
		if (!row_stored(&mdefs[i], obj, false, o))
			continue;
		put_u16(b, mdefs[i].rec_tag);
		put_u64(b, mdef_raw(&mdefs[i], o));
	}
}

/*
 * After an object's tagged tail, its histogram rows with a tag: "u16 n,
 * n x (u16 tag, sparse histogram)", written only when a row has a tag (the
 * histograms before the table are in the frozen layout). Readers before it
 * stop at the tagged tail (records are length-prefixed); this one skips
 * tags it does not know.
 */
static void put_hist_tail(struct rec_buf *b, enum mdef_obj obj, const void *o)
{
	uint16_t n = tail_rows(obj, true, o);

	if (!n)
		return;
	put_u16(b, n);
	for (size_t i = 0; i < mdef_count; i++) {
		const struct mdef *d = &mdefs[i];
		const struct hist_batch *hb = mdef_batch(d, o);
		const struct hist_log2 *hl = mdef_log2(d, o);

		if (!row_stored(d, obj, true, o))
			continue;
		put_u16(b, d->rec_tag);
		if (hl)
			put_sparse(b, hl->slots, DMT_LOG2_SLOTS, hl->count, hl->sum);
		else
			put_sparse(b, hb->slots, DMT_BATCH_MAX + 1, hb->count, hb->sum);
	}
}

static void put_pool_tail(struct rec_buf *b, const struct dmt_pool_snap *p)
{
	put_u16(b, 1 + tail_rows(MO_POOL, false, p));
	put_u16(b, REC_POOL_FLAGS);
	put_u64(b, (p->counters_unknown ? REC_POOL_F_COUNTERS_UNKNOWN : 0) |
		   (p->zcrx ? REC_POOL_F_ZCRX : 0));
	put_tail_rows(b, MO_POOL, p);
}

static void put_pool(struct rec_buf *b, const struct dmt_pool_snap *p)
{
	size_t off = b->len;

	put_u32(b, 0);
	put_u64(b, put_addr_value(b, p->addr));
	put_u32(b, p->id);
	put_u32(b, p->ifindex);
	put_str(b, p->ifname);
	put_u32(b, p->netns);
	put_u32(b, p->queue);
	put_u32(b, p->napi_id);
	put_u8(b, p->kind);
	put_u32(b, p->binding_id);
	put_u8(b, p->attr_src);
	put_u8(b, p->netlink_listed);
	put_u8(b, p->state);
	put_u32(b, p->nid);
	put_u32(b, p->nid_changes);
	put_u64(b, p->holds);
	put_u64(b, p->releases);
	put_u64(b, p->holds_page);
	put_u64(b, p->holds_niov);
	put_f64(b, p->hold_rate);
	put_f64(b, p->release_rate);
	put_u64(b, p->inflight);
	put_u64(b, p->netlink_inflight);
	put_u64(b, p->destroy_inflight);
	put_u32(b, p->destroy_retries);
	put_sparse(b, p->refill.slots, DMT_BATCH_MAX + 1, p->refill.count, p->refill.sum);
	put_pool_tail(b, p);
	put_hist_tail(b, MO_POOL, p);
	patch_u32(b, off, b->len - off - 4);
}

static void put_log2(struct rec_buf *b, const struct hist_log2 *h)
{
	put_sparse(b, h->slots, DMT_LOG2_SLOTS, h->count, h->sum);
}

/*
 * After the version 1 fields: the metric table's stored rows as tagged
 * values, "u16 n, n x (u16 tag, u64 value)". Readers before the table stop
 * at the end of the version 1 fields (records are length-prefixed); this
 * reader skips tags it does not know.
 */
static void put_binding_tail(struct rec_buf *b, const struct dmt_binding_snap *d)
{
	put_u16(b, tail_rows(MO_BINDING, false, d));
	put_tail_rows(b, MO_BINDING, d);
}

static void put_binding(struct rec_buf *b, const struct dmt_binding_snap *d)
{
	size_t off = b->len;

	put_u32(b, 0);
	put_u32(b, d->id);
	put_u32(b, d->ifindex);
	put_str(b, d->ifname);
	put_u64(b, d->dmabuf_size);
	put_u32(b, d->niov_size);
	put_str(b, d->layout);
	put_u8(b, d->alive);
	put_u8(b, d->unbound);
	put_u64(b, d->total_niovs);
	put_u64(b, d->free_niovs);
	put_u64(b, d->in_pools);
	put_u64(b, d->held_by_sockets);
	put_f64(b, d->occupancy);
	put_u32(b, d->pools);
	put_u64(b, d->alloc_calls);
	put_u64(b, d->alloc_niovs);
	put_u64(b, d->alloc_fail);
	put_u64(b, d->free_niovs_count);
	put_u64(b, d->out_at_unbind);
	put_u64(b, d->out_at_free);
	put_log2(b, &d->alloc_lat_ns);
	put_log2(b, &d->alloc_lat_niov_ns);
	put_log2(b, &d->free_lat_ns);
	put_binding_tail(b, d);
	put_hist_tail(b, MO_BINDING, d);
	patch_u32(b, off, b->len - off - 4);
}

/*
 * After collect_ns (issue 11): the token holders and the token cost,
 * "u32 n, n x holder, 4 x log2 histogram, 4 x u64". Readers before it stop
 * at collect_ns; this reader takes the section only when it is there.
 */
static void put_tokens(struct rec_buf *b, const struct dmt_snapshot *s)
{
	const struct dmt_tok_cost *t = &s->tok_cost;
	/* the largest holders come first: keep those */
	size_t n = s->n_holders < REC_MAX_HOLDERS ? s->n_holders : REC_MAX_HOLDERS;

	put_u32(b, n);
	for (size_t i = 0; i < n; i++) {
		const struct dmt_holder_snap *h = &s->holders[i];

		put_u32(b, h->pid);
		put_str(b, h->comm);
		put_u32(b, h->binding_id);
		/* light, autorelease off: unknown, REC_UNKNOWN_COUNT (no count per socket) */
		put_u64(b, h->counts_unknown ? REC_UNKNOWN_COUNT : h->tokens);
		put_u64(b, h->counts_unknown ? REC_UNKNOWN_COUNT : h->niovs);
		put_u64(b, h->oldest_age_ns);
		put_u64(b, h->handed);
		put_u64(b, h->returned);
		put_u64(b, h->released);
	}
	put_log2(b, &t->per_recvmsg);
	put_log2(b, &t->per_dontneed);
	put_log2(b, &t->dontneed_ns);
	put_log2(b, &t->dontneed_ns_token);
	put_u64(b, t->map_full);
	put_u64(b, t->no_socket);
	put_u64(b, t->dontneed_mismatch);
	put_u64(b, t->holders_full);
}

/*
 * After the token section (issue 24): each holder's cgroup, in the token
 * section's order, "u32 n, n x (u32 len, u64 cgroup id, str path[, u64
 * socket inode])", the inode only when known (issue 37: light mode's
 * sockets whose process is unknown are told apart by it). Each entry is
 * length-prefixed so later fields can follow the path; readers
 * before it stop after the token section (a snapshot's trailing bytes are
 * not read), and this one takes it only when it is there.
 */
static void put_holder_cgroups(struct rec_buf *b, const struct dmt_snapshot *s)
{
	size_t n = s->n_holders < REC_MAX_HOLDERS ? s->n_holders : REC_MAX_HOLDERS;

	put_u32(b, n);
	for (size_t i = 0; i < n; i++) {
		size_t off = b->len;

		put_u32(b, 0);
		put_u64(b, s->holders[i].cgroup_id);
		put_str(b, s->holders[i].cgroup);
		if (s->holders[i].sock_ino)
			put_u64(b, s->holders[i].sock_ino);
		patch_u32(b, off, b->len - off - 4);
	}
}

/*
 * After the holders' cgroups: the metric table's kernel-wide rows with a
 * tag, "u16 n, n x (u16 tag, u64 value)", then their histogram tail
 * (put_hist_tail), written only when a row has a tag (none of the figures
 * before the table: they are in the frozen layout). Readers before it stop
 * at the holders' cgroups; this one skips tags it does not know.
 */
static void put_snapshot_tail(struct rec_buf *b, const struct dmt_snapshot *s)
{
	uint16_t n = tail_rows(MO_GLOBAL, false, s);

	if (!n && !tail_rows(MO_GLOBAL, true, s))
		return;
	/* the histograms follow the scalars' tail, if need be an empty one */
	put_u16(b, n);
	put_tail_rows(b, MO_GLOBAL, s);
	put_hist_tail(b, MO_GLOBAL, s);
}

int rec_encode_snapshot(struct rec_buf *b, const struct dmt_snapshot *s,
			const struct dmt_availability *prev_avail)
{
	bool same = prev_avail && !memcmp(prev_avail, s->avail, sizeof(s->avail));
	size_t n_pools = s->n_pools < REC_MAX_POOLS ? s->n_pools : REC_MAX_POOLS;
	size_t n_bindings = s->n_bindings < REC_MAX_BINDINGS ? s->n_bindings : REC_MAX_BINDINGS;
	size_t n_progs = s->n_progs < REC_MAX_PROGS ? s->n_progs : REC_MAX_PROGS;

	put_u64(b, s->ts_ns);
	put_u64(b, s->wall_ns);
	put_f64(b, s->interval_s);
	put_u64(b, s->seq);
	put_u32(b, s->mode);
	/* availability rarely changes: 0 = as before, 1 = here it is */
	put_u8(b, !same);
	if (!same)
		put_avail(b, s->avail);
	/* never more than a reader accepts (REC_MAX_*): the rest is counted */
	put_u32(b, n_pools);
	for (size_t i = 0; i < n_pools; i++)
		put_pool(b, &s->pools[i]);
	put_u32(b, n_bindings);
	for (size_t i = 0; i < n_bindings; i++)
		put_binding(b, &s->bindings[i]);
	put_u64(b, s->dontneed_tokens);
	put_u64(b, s->dontneed_calls);
	put_u64(b, s->provider_calls);
	put_u64(b, s->ringbuf_drops);
	put_u64(b, s->map_full + (s->n_pools - n_pools) + (s->n_bindings - n_bindings));
	put_u64(b, s->lat_missed);
	put_u8(b, s->bpf_stats_enabled);
	put_u32(b, n_progs);
	for (size_t i = 0; i < n_progs; i++) {
		put_str(b, s->progs[i].name);
		put_u8(b, s->progs[i].attached);
		put_u64(b, s->progs[i].run_time_ns);
		put_u64(b, s->progs[i].run_cnt);
	}
	put_u64(b, s->collect_ns);
	put_tokens(b, s);
	put_holder_cgroups(b, s);
	put_snapshot_tail(b, s);
	return b->err;
}

/*
 * A probe log line with kernel addresses (0x and 12 or more hex digits: the
 * kallsyms line gives away the KASLR base) replaced by "(hidden)".
 */
static void hide_kernel_addrs(char *dst, size_t len, const char *s)
{
	size_t o = 0;

	while (*s && o + 1 < len) {
		size_t n = 0;

		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			while (isxdigit((unsigned char)s[2 + n]))
				n++;
		if (n >= 12 && o + 9 < len) {
			memcpy(dst + o, "(hidden)", 8);
			o += 8;
			s += 2 + n;
			continue;
		}
		dst[o++] = *s++;
	}
	dst[o] = '\0';
}

int rec_encode_meta(struct rec_buf *b, const struct rec_meta *m)
{
	size_t n;

	put_str(b, m->version);
	put_str(b, m->kernel);
	put_str(b, m->host);
	put_str(b, m->cmdline);
	put_u64(b, m->start_wall_ns);
	put_u64(b, m->start_mono_ns);
	put_u64(b, m->interval_ns);
	put_u32(b, m->mode);
	put_avail(b, m->avail);
	n = m->n_probe_log < REC_MAX_PROBE_LOG ? m->n_probe_log : REC_MAX_PROBE_LOG;
	put_u32(b, n);
	for (size_t i = 0; i < n; i++) {
		char line[1024];

		if (m->kernel_addresses) {
			put_str(b, m->probe_log[i]);
			continue;
		}
		hide_kernel_addrs(line, sizeof(line), m->probe_log[i]);
		put_str(b, line);
	}
	return b->err;
}

static void encode_event(struct rec_buf *b, const struct dmt_event *ev)
{
	put_u64(b, ev->ts_ns);
	put_u64(b, put_addr_value(b, ev->addr));
	put_u64(b, ev->a);
	put_u64(b, ev->b);
	put_u64(b, ev->c);
	put_u32(b, ev->type);
	put_u32(b, ev->id);
	put_u32(b, ev->ifindex);
}

static void encode_end(struct rec_buf *b, const struct rec_end *e)
{
	put_u64(b, e->n_snapshots);
	put_u64(b, e->n_events);
	put_u64(b, e->ringbuf_drops);
	put_u32(b, e->reason);
	put_u32(b, e->exit_status);
	if (!e->has_cpu)
		return;
	put_u16(b, 2);		/* the command's CPU (rec_end) */
	put_u16(b, 1);
	put_u64(b, e->cpu_user_ns);
	put_u16(b, 2);
	put_u64(b, e->cpu_sys_ns);
}

/* ---- decoding ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
	char *why;
	size_t wlen;
	int err;
};

static int rd_fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rd_fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(r->why, r->wlen, fmt, ap);
	va_end(ap);
	r->err = -EBADMSG;
	return r->err;
}

static const uint8_t *rd_take(struct rd *r, size_t n, const char *what)
{
	const uint8_t *p;

	if (r->err)
		return NULL;
	if (r->len - r->off < n) {
		rd_fail(r, "%s runs past the end of its frame (offset %zu)", what, r->off);
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static uint64_t get_u64(struct rd *r, const char *what)
{
	const uint8_t *p = rd_take(r, 8, what);
	uint64_t v = 0;

	if (!p)
		return 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get_u32(struct rd *r, const char *what)
{
	const uint8_t *p = rd_take(r, 4, what);

	return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		   (uint32_t)p[3] << 24 : 0;
}

static uint16_t get_u16(struct rd *r, const char *what)
{
	const uint8_t *p = rd_take(r, 2, what);

	return p ? p[0] | p[1] << 8 : 0;
}

static uint8_t get_u8(struct rd *r, const char *what)
{
	const uint8_t *p = rd_take(r, 1, what);

	return p ? p[0] : 0;
}

static double get_f64(struct rd *r, const char *what)
{
	uint64_t v = get_u64(r, what);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

/* Into a fixed buffer, truncated to fit; NULs inside are refused. */
static void get_str(struct rd *r, char *dst, size_t dlen, const char *what)
{
	uint16_t n = get_u16(r, what);
	const uint8_t *p = rd_take(r, n, what);
	size_t c;

	dst[0] = '\0';
	if (!p)
		return;
	if (memchr(p, 0, n)) {
		rd_fail(r, "%s contains a NUL byte", what);
		return;
	}
	c = n < dlen - 1 ? n : dlen - 1;
	memcpy(dst, p, c);
	dst[c] = '\0';
}

static uint8_t get_bool(struct rd *r, const char *what)
{
	uint8_t v = get_u8(r, what);

	if (v > 1)
		rd_fail(r, "%s is %u, not a boolean", what, v);
	return v;
}

static uint32_t get_enum(struct rd *r, uint32_t v, uint32_t max, const char *what)
{
	if (v > max)
		rd_fail(r, "%s %u out of range", what, v);
	return v;
}

static void get_sparse(struct rd *r, uint64_t *slots, unsigned int n, uint64_t *count,
		       uint64_t *sum, const char *what)
{
	uint16_t nz;
	int prev = -1;

	*count = get_u64(r, what);
	*sum = get_u64(r, what);
	nz = get_u16(r, what);
	if (nz > n)
		rd_fail(r, "%s has %u slots (at most %u)", what, nz, n);
	for (unsigned int i = 0; i < nz && !r->err; i++) {
		uint16_t k = get_u16(r, what);
		uint64_t v = get_u64(r, what);

		if (r->err)
			return;
		if (k >= n || (int)k <= prev || !v) {
			rd_fail(r, "%s slot %u invalid", what, k);
			return;
		}
		slots[k] = v;
		prev = k;
	}
}

static void get_avail(struct rd *r, struct dmt_availability *a, uint32_t mode)
{
	uint32_t n = get_u32(r, "availability count");

	if (n > REC_MAX_AVAIL) {
		rd_fail(r, "availability count %u too large", n);
		return;
	}
	for (uint32_t i = 0; i < n && !r->err; i++) {
		struct dmt_availability tmp, *d = i < DMT_M__COUNT ? &a[i] : &tmp;

		uint8_t v = get_u8(r, "availability");

		if (v > 2)
			rd_fail(r, "availability is %u, not 0, 1 or 2", v);
		d->available = v >= 1;
		d->sampled = v == 2;
		get_str(r, d->source, sizeof(d->source), "availability source");
		get_str(r, d->reason, sizeof(d->reason), "availability reason");
	}
	if (!r->err)
		rec_avail__upgrade(a, n, mode);
}

void rec_avail__upgrade(struct dmt_availability *a, uint32_t n, uint32_t mode)
{
	struct dmt_availability *ev = &a[DMT_M_BIND_TOKEN_EVENTS];

	/* metrics newer than the recording */
	for (uint32_t i = n; i < DMT_M__COUNT; i++) {
		a[i].available = false;
		snprintf(a[i].reason, sizeof(a[i].reason), "not in this recording");
	}
	/*
	 * Recordings from before the token events had a key of their own: the
	 * held-by-sockets key covered them, truly in the full modes; light mode
	 * (its held figures from the snapshot-time walk) never had them.
	 */
	if (n > DMT_M_BIND_TOKEN_EVENTS)
		return;
	*ev = a[DMT_M_BIND_HELD_BY_SOCKETS];
	if (mode == DMT_MODE_LIGHT) {
		*ev = (struct dmt_availability){ .available = false };
		snprintf(ev->reason, sizeof(ev->reason), "%s", DMT_LIGHT_NO_TOKENS);
	}
}

/* A length-prefixed sub-record: r is narrowed to it, returns the end offset. */
static size_t sub_begin(struct rd *r, struct rd *sub, const char *what)
{
	uint32_t n = get_u32(r, what);
	const uint8_t *p = rd_take(r, n, what);

	*sub = (struct rd){ .p = p, .len = p ? n : 0, .why = r->why, .wlen = r->wlen,
			    .err = r->err };
	return r->off;
}

/* A sparse histogram of a tag this reader does not know: read past it. */
static void skip_sparse(struct rd *r, const char *what)
{
	uint16_t nz;

	get_u64(r, what);
	get_u64(r, what);
	nz = get_u16(r, what);
	rd_take(r, (size_t)nz * 10, what);
}

/* The histogram tail (put_hist_tail); absent in files before it or without such rows. */
static void get_hist_tail(struct rd *r, enum mdef_obj obj, void *o)
{
	uint16_t n;

	if (r->err || r->off == r->len)
		return;
	n = get_u16(r, "histogram tail");
	if (!r->err && (size_t)n * 20 > r->len - r->off) {
		rd_fail(r, "histogram tail count %u larger than the record", n);
		return;
	}
	for (uint16_t k = 0; k < n && !r->err; k++) {
		uint16_t tag = get_u16(r, "histogram tail");
		const struct mdef *d = NULL;

		for (size_t i = 0; tag && i < mdef_count && !d; i++)
			if (tail_row(&mdefs[i], obj, true) && mdefs[i].rec_tag == tag)
				d = &mdefs[i];
		if (!d) {
			skip_sparse(r, "histogram tail");
		} else if (d->kind == MK_LOG2) {
			struct hist_log2 *h = (void *)((char *)o + d->off);

			memset(h, 0, sizeof(*h));
			get_sparse(r, h->slots, DMT_LOG2_SLOTS, &h->count, &h->sum, d->name);
		} else {
			struct hist_batch *h = (void *)((char *)o + d->off);

			memset(h, 0, sizeof(*h));
			get_sparse(r, h->slots, DMT_BATCH_MAX + 1, &h->count, &h->sum, d->name);
		}
	}
}

/* Rows stored in a tail start unknown: a file from before the row has none. */
static void get_tail_unknown(enum mdef_obj obj, void *o)
{
	for (size_t i = 0; i < mdef_count; i++)
		if (tail_row(&mdefs[i], obj, false))
			mdef_set_unknown(&mdefs[i], o);
}

/* A tagged value of a tail; tags no row knows are skipped (a newer writer). */
static void get_tail_row(enum mdef_obj obj, void *o, uint16_t tag, uint64_t v)
{
	for (size_t i = 0; tag && i < mdef_count; i++)
		if (tail_row(&mdefs[i], obj, false) && mdefs[i].rec_tag == tag)
			mdef_set_raw(&mdefs[i], o, v);
}

/*
 * The tagged tail (put_pool_tail). A file from before it says nothing of
 * unknown counters: light mode marked exactly the pools no window had
 * located (no address) that way, so the flag is derived from that.
 */
static void get_pool_tail(struct rd *r, struct dmt_pool_snap *p, bool light)
{
	uint16_t n;

	p->counters_unknown = light && !p->addr;
	get_tail_unknown(MO_POOL, p);
	if (r->err || r->off == r->len)
		return;
	n = get_u16(r, "pool tail");
	if (!r->err && (size_t)n * 10 > r->len - r->off) {
		rd_fail(r, "pool tail count %u larger than the record", n);
		return;
	}
	for (uint16_t k = 0; k < n && !r->err; k++) {
		uint16_t tag = get_u16(r, "pool tail");
		uint64_t v = get_u64(r, "pool tail");

		if (tag == REC_POOL_FLAGS) {
			p->counters_unknown = v & REC_POOL_F_COUNTERS_UNKNOWN;
			p->zcrx = v & REC_POOL_F_ZCRX;
		} else {
			get_tail_row(MO_POOL, p, tag, v);
		}
	}
}

static void get_pool(struct rd *r, struct dmt_pool_snap *p, bool light)
{
	struct rd s;

	sub_begin(r, &s, "pool");
	p->addr = get_u64(&s, "pool");
	p->id = get_u32(&s, "pool");
	p->ifindex = get_u32(&s, "pool");
	get_str(&s, p->ifname, sizeof(p->ifname), "pool ifname");
	p->netns = get_u32(&s, "pool");
	p->queue = get_u32(&s, "pool");
	p->napi_id = get_u32(&s, "pool");
	p->kind = get_enum(&s, get_u8(&s, "pool"), DMT_KIND_OTHER, "pool kind");
	p->binding_id = get_u32(&s, "pool");
	/* informational, and the enum grows: any value is kept */
	p->attr_src = get_u8(&s, "pool");
	p->netlink_listed = get_bool(&s, "pool netlink_listed");
	p->state = get_enum(&s, get_u8(&s, "pool"), DMT_POOL_DESTROYED, "pool state");
	p->nid = get_u32(&s, "pool");
	p->nid_changes = get_u32(&s, "pool");
	p->holds = get_u64(&s, "pool");
	p->releases = get_u64(&s, "pool");
	p->holds_page = get_u64(&s, "pool");
	p->holds_niov = get_u64(&s, "pool");
	p->hold_rate = get_f64(&s, "pool");
	p->release_rate = get_f64(&s, "pool");
	p->inflight = get_u64(&s, "pool");
	p->netlink_inflight = get_u64(&s, "pool");
	p->destroy_inflight = get_u64(&s, "pool");
	p->destroy_retries = get_u32(&s, "pool");
	get_sparse(&s, p->refill.slots, DMT_BATCH_MAX + 1, &p->refill.count, &p->refill.sum,
		   "pool refill histogram");
	get_pool_tail(&s, p, light);
	get_hist_tail(&s, MO_POOL, p);
	if (s.err)
		r->err = s.err;
}

static const char *layout_name(const char *s)
{
	if (!strcmp(s, "gen_pool"))
		return "gen_pool";
	if (!strcmp(s, "freelist"))
		return "freelist";
	return "unknown";
}

/* The tagged tail (put_binding_tail); absent in recordings made before it. */
static void get_binding_tail(struct rd *r, struct dmt_binding_snap *d)
{
	uint16_t n;

	get_tail_unknown(MO_BINDING, d);
	if (r->err || r->off == r->len)
		return;
	n = get_u16(r, "binding tail");
	if (!r->err && (size_t)n * 10 > r->len - r->off) {
		rd_fail(r, "binding tail count %u larger than the record", n);
		return;
	}
	for (uint16_t k = 0; k < n && !r->err; k++) {
		uint16_t tag = get_u16(r, "binding tail");
		uint64_t v = get_u64(r, "binding tail");

		get_tail_row(MO_BINDING, d, tag, v);
	}
}

static void get_binding(struct rd *r, struct dmt_binding_snap *d)
{
	char layout[32];
	struct rd s;

	sub_begin(r, &s, "binding");
	d->id = get_u32(&s, "binding");
	d->ifindex = get_u32(&s, "binding");
	get_str(&s, d->ifname, sizeof(d->ifname), "binding ifname");
	d->dmabuf_size = get_u64(&s, "binding");
	d->niov_size = get_u32(&s, "binding");
	get_str(&s, layout, sizeof(layout), "binding layout");
	d->layout = layout_name(layout);
	d->alive = get_bool(&s, "binding alive");
	d->unbound = get_bool(&s, "binding unbound");
	d->total_niovs = get_u64(&s, "binding");
	d->free_niovs = get_u64(&s, "binding");
	d->in_pools = get_u64(&s, "binding");
	d->held_by_sockets = get_u64(&s, "binding");
	d->occupancy = get_f64(&s, "binding");
	d->pools = get_u32(&s, "binding");
	d->alloc_calls = get_u64(&s, "binding");
	d->alloc_niovs = get_u64(&s, "binding");
	d->alloc_fail = get_u64(&s, "binding");
	d->free_niovs_count = get_u64(&s, "binding");
	d->out_at_unbind = get_u64(&s, "binding");
	d->out_at_free = get_u64(&s, "binding");
	get_sparse(&s, d->alloc_lat_ns.slots, DMT_LOG2_SLOTS, &d->alloc_lat_ns.count,
		   &d->alloc_lat_ns.sum, "binding alloc latency");
	get_sparse(&s, d->alloc_lat_niov_ns.slots, DMT_LOG2_SLOTS, &d->alloc_lat_niov_ns.count,
		   &d->alloc_lat_niov_ns.sum, "binding alloc latency per niov");
	get_sparse(&s, d->free_lat_ns.slots, DMT_LOG2_SLOTS, &d->free_lat_ns.count,
		   &d->free_lat_ns.sum, "binding free latency");
	get_binding_tail(&s, d);
	get_hist_tail(&s, MO_BINDING, d);
	if (s.err)
		r->err = s.err;
}

/*
 * Array count: at most max (what a writer emits, record.h), and each element
 * takes at least min bytes, so bound it by what's left.
 */
static uint32_t get_count(struct rd *r, size_t min, uint32_t max, const char *what)
{
	uint32_t n = get_u32(r, what);

	if (!r->err && (uint64_t)n * min > r->len - r->off) {
		rd_fail(r, "%s count %u larger than the frame", what, n);
		return 0;
	}
	if (!r->err && n > max) {
		rd_fail(r, "%u %ss in one frame, more than any writer records (%u)", n, what,
			max);
		return 0;
	}
	return n;
}

/* The token section (put_tokens); -ENOMEM only, damage goes to r->err. */
static int get_tokens(struct rd *r, struct dmt_snapshot *s)
{
	struct dmt_tok_cost *t = &s->tok_cost;
	uint32_t n = get_count(r, 4 + 1 + 4 + 6 * 8, REC_MAX_HOLDERS, "token holder");

	if (n && !(s->holders = calloc(n, sizeof(*s->holders))))
		return -ENOMEM;
	s->n_holders = n;
	for (size_t i = 0; i < n && !r->err; i++) {
		struct dmt_holder_snap *h = &s->holders[i];

		h->pid = get_u32(r, "token holder");
		get_str(r, h->comm, sizeof(h->comm), "token holder comm");
		h->binding_id = get_u32(r, "token holder");
		h->tokens = get_u64(r, "token holder");
		h->niovs = get_u64(r, "token holder");
		if (h->tokens == REC_UNKNOWN_COUNT) {
			h->counts_unknown = true;
			h->tokens = h->niovs = 0;
		}
		h->oldest_age_ns = get_u64(r, "token holder");
		h->handed = get_u64(r, "token holder");
		h->returned = get_u64(r, "token holder");
		h->released = get_u64(r, "token holder");
	}
	get_sparse(r, t->per_recvmsg.slots, DMT_LOG2_SLOTS, &t->per_recvmsg.count,
		   &t->per_recvmsg.sum, "tokens per recvmsg");
	get_sparse(r, t->per_dontneed.slots, DMT_LOG2_SLOTS, &t->per_dontneed.count,
		   &t->per_dontneed.sum, "tokens per dontneed");
	get_sparse(r, t->dontneed_ns.slots, DMT_LOG2_SLOTS, &t->dontneed_ns.count,
		   &t->dontneed_ns.sum, "dontneed latency");
	get_sparse(r, t->dontneed_ns_token.slots, DMT_LOG2_SLOTS, &t->dontneed_ns_token.count,
		   &t->dontneed_ns_token.sum, "dontneed latency per token");
	t->map_full = get_u64(r, "token cost");
	t->no_socket = get_u64(r, "token cost");
	t->dontneed_mismatch = get_u64(r, "token cost");
	t->holders_full = get_u64(r, "token cost");
	return 0;
}

/* The holders' cgroups (put_holder_cgroups); absent in older recordings. */
static void get_holder_cgroups(struct rd *r, struct dmt_snapshot *s)
{
	uint32_t n = get_count(r, 4 + 8 + 2, REC_MAX_HOLDERS, "holder cgroup");

	if (!r->err && n != s->n_holders) {
		rd_fail(r, "%u holder cgroups for %zu token holders", n, s->n_holders);
		return;
	}
	for (size_t i = 0; i < n && !r->err; i++) {
		struct dmt_holder_snap *h = &s->holders[i];
		struct rd e;

		sub_begin(r, &e, "holder cgroup");
		h->cgroup_id = get_u64(&e, "holder cgroup");
		get_str(&e, h->cgroup, sizeof(h->cgroup), "holder cgroup path");
		if (!e.err && e.len - e.off >= 8)
			h->sock_ino = get_u64(&e, "holder socket inode");
		if (e.err)
			r->err = e.err;
	}
}

/* The tail put_snapshot_tail() writes; absent in files before it (or without tagged rows). */
static void get_snapshot_tail(struct rd *r, struct dmt_snapshot *s)
{
	uint16_t n;

	get_tail_unknown(MO_GLOBAL, s);
	if (r->err || r->off == r->len)
		return;
	n = get_u16(r, "snapshot tail");
	if (!r->err && (size_t)n * 10 > r->len - r->off) {
		rd_fail(r, "snapshot tail count %u larger than the frame", n);
		return;
	}
	for (uint16_t k = 0; k < n && !r->err; k++) {
		uint16_t tag = get_u16(r, "snapshot tail");
		uint64_t v = get_u64(r, "snapshot tail");

		get_tail_row(MO_GLOBAL, s, tag, v);
	}
	get_hist_tail(r, MO_GLOBAL, s);
}

int rec_decode_snapshot(const void *p, size_t len, const struct dmt_availability *prev_avail,
			struct dmt_snapshot **out, char *why, size_t wlen)
{
	struct rd r = { .p = p, .len = len, .why = why, .wlen = wlen };
	struct dmt_snapshot *s = calloc(1, sizeof(*s));
	uint8_t has_avail;

	*out = NULL;
	if (!s) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	s->ts_ns = get_u64(&r, "snapshot");
	s->wall_ns = get_u64(&r, "snapshot");
	s->interval_s = get_f64(&r, "snapshot");
	s->seq = get_u64(&r, "snapshot");
	s->mode = get_enum(&r, get_u32(&r, "snapshot"), DMT_MODE_DEVMEM, "attach mode");
	has_avail = get_u8(&r, "snapshot");
	if (has_avail == 1)
		get_avail(&r, s->avail, s->mode);
	else if (has_avail == 0 && prev_avail)
		memcpy(s->avail, prev_avail, sizeof(s->avail));
	else if (has_avail == 0)
		rd_fail(&r, "availability refers to an earlier frame, none known");
	else
		rd_fail(&r, "availability flag %u invalid", has_avail);
	s->n_pools = get_count(&r, 4, REC_MAX_POOLS, "pool");
	if (s->n_pools && !(s->pools = calloc(s->n_pools, sizeof(*s->pools))))
		goto nomem;
	for (size_t i = 0; i < s->n_pools && !r.err; i++)
		get_pool(&r, &s->pools[i], s->mode == DMT_MODE_LIGHT);
	s->n_bindings = get_count(&r, 4, REC_MAX_BINDINGS, "binding");
	if (s->n_bindings && !(s->bindings = calloc(s->n_bindings, sizeof(*s->bindings))))
		goto nomem;
	for (size_t i = 0; i < s->n_bindings && !r.err; i++)
		get_binding(&r, &s->bindings[i]);
	s->dontneed_tokens = get_u64(&r, "snapshot");
	s->dontneed_calls = get_u64(&r, "snapshot");
	s->provider_calls = get_u64(&r, "snapshot");
	s->ringbuf_drops = get_u64(&r, "snapshot");
	s->map_full = get_u64(&r, "snapshot");
	s->lat_missed = get_u64(&r, "snapshot");
	s->bpf_stats_enabled = get_bool(&r, "bpf_stats_enabled");
	s->n_progs = get_count(&r, 19, REC_MAX_PROGS, "program");
	if (s->n_progs && !(s->progs = calloc(s->n_progs, sizeof(*s->progs))))
		goto nomem;
	for (size_t i = 0; i < s->n_progs && !r.err; i++) {
		get_str(&r, s->progs[i].name, sizeof(s->progs[i].name), "program name");
		s->progs[i].attached = get_bool(&r, "program attached");
		s->progs[i].run_time_ns = get_u64(&r, "program");
		s->progs[i].run_cnt = get_u64(&r, "program");
	}
	s->collect_ns = get_u64(&r, "snapshot");
	if (!r.err && r.off < r.len && get_tokens(&r, s))
		goto nomem;
	if (!r.err && r.off < r.len)
		get_holder_cgroups(&r, s);
	get_snapshot_tail(&r, s);
	if (r.err) {
		snapshot__free(s);
		return r.err;
	}
	*out = s;
	return 0;
nomem:
	snprintf(why, wlen, "out of memory");
	snapshot__free(s);
	return -ENOMEM;
}

void rec_meta__fini(struct rec_meta *m)
{
	for (size_t i = 0; m->probe_log && i < m->n_probe_log; i++)
		free(m->probe_log[i]);
	free(m->probe_log);
	m->probe_log = NULL;
	m->n_probe_log = 0;
}

static int decode_meta(const uint8_t *p, size_t len, struct rec_meta *m, char *why, size_t wlen)
{
	struct rd r = { .p = p, .len = len, .why = why, .wlen = wlen };
	uint32_t n;

	memset(m, 0, sizeof(*m));
	get_str(&r, m->version, sizeof(m->version), "meta version");
	get_str(&r, m->kernel, sizeof(m->kernel), "meta kernel");
	get_str(&r, m->host, sizeof(m->host), "meta host");
	get_str(&r, m->cmdline, sizeof(m->cmdline), "meta command");
	m->start_wall_ns = get_u64(&r, "meta");
	m->start_mono_ns = get_u64(&r, "meta");
	m->interval_ns = get_u64(&r, "meta");
	m->mode = get_enum(&r, get_u32(&r, "meta"), DMT_MODE_DEVMEM, "attach mode");
	get_avail(&r, m->avail, m->mode);
	n = get_count(&r, 2, REC_MAX_PROBE_LOG, "probe log line");
	if (!r.err && n) {
		m->probe_log = calloc(n, sizeof(*m->probe_log));
		if (!m->probe_log)
			return rd_fail(&r, "out of memory");
	}
	for (uint32_t i = 0; i < n && !r.err; i++) {
		char line[1024];

		get_str(&r, line, sizeof(line), "probe log line");
		if (r.err)
			break;
		m->probe_log[i] = strdup(line);
		if (!m->probe_log[i])
			return rd_fail(&r, "out of memory");
		m->n_probe_log = i + 1;
	}
	return r.err;
}

static int decode_event(const uint8_t *p, size_t len, struct dmt_event *ev, char *why,
			size_t wlen)
{
	struct rd r = { .p = p, .len = len, .why = why, .wlen = wlen };

	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = get_u64(&r, "event");
	ev->addr = get_u64(&r, "event");
	ev->a = get_u64(&r, "event");
	ev->b = get_u64(&r, "event");
	ev->c = get_u64(&r, "event");
	ev->type = get_u32(&r, "event");
	ev->id = get_u32(&r, "event");
	ev->ifindex = get_u32(&r, "event");
	return r.err;
}

static int decode_end(const uint8_t *p, size_t len, struct rec_end *e, char *why, size_t wlen)
{
	struct rd r = { .p = p, .len = len, .why = why, .wlen = wlen };

	e->n_snapshots = get_u64(&r, "end");
	e->n_events = get_u64(&r, "end");
	e->ringbuf_drops = get_u64(&r, "end");
	e->reason = get_enum(&r, get_u32(&r, "end"), REC_END_ERROR, "end reason");
	e->exit_status = get_u32(&r, "end");
	e->has_cpu = false;
	if (!r.err && r.off < r.len) {	/* the tagged tail; unknown tags skipped */
		uint16_t n = get_u16(&r, "end tail");

		for (uint16_t k = 0; k < n && !r.err; k++) {
			uint16_t tag = get_u16(&r, "end tail");
			uint64_t v = get_u64(&r, "end tail");

			if (tag == 1 || tag == 2)
				e->has_cpu = true;
			if (tag == 1)
				e->cpu_user_ns = v;
			else if (tag == 2)
				e->cpu_sys_ns = v;
		}
	}
	return r.err;
}

/* ---- frames ---- */

/* hdr: the file header's version and flags (8 bytes), covered too; or NULL */
static uint32_t frame_crc(uint32_t type, uint32_t len, const uint8_t *p, const uint8_t *hdr)
{
	uint8_t h[8] = { type, type >> 8, type >> 16, type >> 24, len, len >> 8, len >> 16,
			 len >> 24 };
	uLong c = crc32(0L, Z_NULL, 0);

	if (hdr)
		c = crc32(c, hdr, 8);
	c = crc32(c, h, 8);
	if (len)
		c = crc32(c, p, len);
	return c;
}

struct rec_writer {
	FILE *f;
	struct rec_buf buf;
	uint64_t addr_key[2];
	const uint8_t *hdr;	/* the header's version+flags while META is written */
	uint64_t bytes;
	int err;
	/* what the reader knows: META's availability, then each snapshot's */
	struct dmt_availability avail[DMT_M__COUNT];
};

static int write_frame(struct rec_writer *w, uint32_t type, struct rec_buf *payload)
{
	uint8_t h[12];
	uint32_t crc;

	if (w->err)
		return w->err;
	if (payload->err)
		return payload->err;
	if (payload->len > REC_MAX_FRAME)
		return -E2BIG;
	crc = frame_crc(type, payload->len, payload->p, type == REC_META ? w->hdr : NULL);
	for (int i = 0; i < 4; i++) {
		h[i] = type >> (8 * i);
		h[4 + i] = payload->len >> (8 * i);
		h[8 + i] = crc >> (8 * i);
	}
	if (fwrite(h, 1, 12, w->f) != 12 ||
	    (payload->len && fwrite(payload->p, 1, payload->len, w->f) != payload->len) ||
	    fflush(w->f)) {
		w->err = errno ? -errno : -EIO;
		return w->err;
	}
	w->bytes += 12 + payload->len;
	return 0;
}

struct rec_writer *rec_writer__open(const char *path, const struct rec_meta *meta)
{
	struct rec_writer *w = calloc(1, sizeof(*w));
	uint8_t h[16] = REC_MAGIC;
	uint32_t flags = meta->kernel_addresses ? REC_FLAG_KERNEL_ADDRS : 0;
	struct stat st;
	int err, fd;

	if (!w)
		return NULL;
	h[8] = REC_VERSION;
	for (int i = 0; i < 4; i++)
		h[12 + i] = flags >> (8 * i);
	if (!meta->kernel_addresses) {
		if (getrandom(w->addr_key, sizeof(w->addr_key), 0) != sizeof(w->addr_key)) {
			err = -errno;
			goto free_w;
		}
		w->buf.addr_key = w->addr_key;
	}
	/*
	 * Owner only: a recording describes the kernel (pools, interfaces,
	 * the probe log) and the user may be root. A replaced file of ours is
	 * made 0600 too; someone else's (fchmod refused) keeps the mode its
	 * owner chose, and a device or FIFO (-o /dev/stdout) is left alone.
	 */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto free_w;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (st.st_mode & 077))
		fchmod(fd, 0600);	/* best effort, see above */
	w->f = fdopen(fd, "wb");
	if (!w->f) {
		err = -errno;
		close(fd);
		goto free_w;
	}
	if (fwrite(h, 1, sizeof(h), w->f) != sizeof(h)) {
		err = errno ? -errno : -EIO;
		goto close_f;
	}
	w->bytes = sizeof(h);
	w->buf.len = 0;
	err = rec_encode_meta(&w->buf, meta);
	w->hdr = flags ? h + 8 : NULL;
	if (!err)
		err = write_frame(w, REC_META, &w->buf);
	w->hdr = NULL;
	if (err)
		goto close_f;
	memcpy(w->avail, meta->avail, sizeof(w->avail));
	return w;
close_f:
	fclose(w->f);
free_w:
	rec_buf__free(&w->buf);
	free(w);
	errno = -err;
	return NULL;
}

int rec_writer__snapshot(struct rec_writer *w, const struct dmt_snapshot *s)
{
	int err;

	w->buf.len = 0;
	w->buf.err = 0;
	err = rec_encode_snapshot(&w->buf, s, w->avail) ?: write_frame(w, REC_SNAPSHOT, &w->buf);
	if (!err)
		memcpy(w->avail, s->avail, sizeof(w->avail));
	return err;
}

int rec_writer__event(struct rec_writer *w, const struct dmt_event *ev)
{
	w->buf.len = 0;
	w->buf.err = 0;
	encode_event(&w->buf, ev);
	return write_frame(w, REC_EVENT, &w->buf);
}

int rec_writer__end(struct rec_writer *w, const struct rec_end *end)
{
	w->buf.len = 0;
	w->buf.err = 0;
	encode_end(&w->buf, end);
	return write_frame(w, REC_END, &w->buf);
}

uint64_t rec_writer__bytes(const struct rec_writer *w)
{
	return w->bytes;
}

int rec_writer__close(struct rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = w->err;
	if (fflush(w->f) && !err)
		err = -errno;
	if (!err && fsync(fileno(w->f)) && errno != EINVAL && errno != EROFS)
		err = -errno;
	if (fclose(w->f) && !err)
		err = -errno;
	rec_buf__free(&w->buf);
	free(w);
	return err;
}

struct rec_reader {
	FILE *f;
	char name[256];
	char err[700];
	int errcode;
	bool have_meta, ended;
	struct rec_meta meta;
	struct dmt_availability avail[DMT_M__COUNT];	/* the last one seen */
	uint64_t off;		/* bytes consumed */
	uint64_t frames;	/* frames read, META included */
	uint8_t *buf;
	size_t cap;
};

static const char *frame_name(uint32_t t)
{
	switch (t) {
	case REC_META: return "meta";
	case REC_SNAPSHOT: return "snapshot";
	case REC_EVENT: return "event";
	case REC_END: return "end";
	}
	return "unknown";
}

static int rerr(struct rec_reader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rerr(struct rec_reader *r, int code, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (r->errcode)
		return r->errcode;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err), "%s: %s", r->name, msg);
	r->errcode = code;
	return code;
}

/* Read exactly n bytes; returns how many were read. */
static size_t read_full(struct rec_reader *r, void *p, size_t n)
{
	size_t got = fread(p, 1, n, r->f);

	r->off += got;
	return got;
}

/* Next frame into r->buf: 1, 0 at clean EOF, or -errno. hdr: see frame_crc(). */
static int read_frame(struct rec_reader *r, uint32_t *type, uint32_t *len, const uint8_t *hdr)
{
	uint64_t start = r->off, idx = r->frames + 1;
	uint8_t h[12];
	uint32_t crc;
	size_t got;

	got = read_full(r, h, 12);
	if (got == 0 && !ferror(r->f))
		return 0;
	if (ferror(r->f))
		return rerr(r, -EIO, "read error at byte %llu: %s", (unsigned long long)r->off,
			    strerror(errno));
	if (got < 12)
		return rerr(r, -EBADMSG,
			    "truncated at byte %llu: frame %llu header cut short (%zu of 12 bytes)",
			    (unsigned long long)start, (unsigned long long)idx, got);
	*type = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
	*len = h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24;
	crc = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
	if (*len > REC_MAX_FRAME)
		return rerr(r, -EBADMSG,
			    "corrupt frame %llu at byte %llu: length %u exceeds %u (type %u)",
			    (unsigned long long)idx, (unsigned long long)start, *len,
			    REC_MAX_FRAME, *type);
	/*
	 * Read in chunks, growing the buffer as data arrives, so a corrupt
	 * length in a short file does not make us allocate 32 MiB first.
	 */
	got = 0;
	while (got < *len) {
		size_t want = *len - got < (1u << 20) ? *len - got : (1u << 20), n;

		if (got + want > r->cap) {
			size_t cap = r->cap ? r->cap : 4096;
			uint8_t *nb;

			while (cap < got + want)
				cap *= 2;
			nb = realloc(r->buf, cap);
			if (!nb)
				return rerr(r, -ENOMEM, "out of memory for frame %llu (%u bytes)",
					    (unsigned long long)idx, *len);
			r->buf = nb;
			r->cap = cap;
		}
		n = read_full(r, r->buf + got, want);
		got += n;
		if (n < want)
			break;
	}
	if (ferror(r->f))
		return rerr(r, -EIO, "read error at byte %llu: %s", (unsigned long long)r->off,
			    strerror(errno));
	if (got < *len)
		return rerr(r, -EBADMSG,
			    "truncated at byte %llu: frame %llu (%s) needs %u bytes, only %zu left",
			    (unsigned long long)start, (unsigned long long)idx,
			    frame_name(*type), *len, got);
	if (frame_crc(*type, *len, r->buf, hdr) != crc)
		return rerr(r, -EBADMSG, "corrupt frame %llu (%s) at byte %llu: CRC mismatch",
			    (unsigned long long)idx, frame_name(*type), (unsigned long long)start);
	r->frames++;
	return 1;
}

static void read_header(struct rec_reader *r)
{
	uint8_t h[16];
	uint32_t version, flags, type, len;
	char why[200];
	size_t got;
	int ret;

	got = read_full(r, h, sizeof(h));
	if (got < 8 || memcmp(h, REC_MAGIC, 8)) {
		rerr(r, -EBADMSG, "not a devmemtop recording (%s)",
		     got < 8 ? "file too short" : "bad magic");
		return;
	}
	if (got < sizeof(h)) {
		rerr(r, -EBADMSG, "truncated at byte %zu: file header cut short", got);
		return;
	}
	version = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
	if (version != REC_VERSION) {
		rerr(r, -EPROTONOSUPPORT,
		     "recording format version %u, this devmemtop reads version %d", version,
		     REC_VERSION);
		return;
	}
	flags = h[12] | h[13] << 8 | h[14] << 16 | (uint32_t)h[15] << 24;
	if (flags & ~REC_FLAGS_KNOWN) {
		rerr(r, -EBADMSG, "corrupt header: unknown flags %#x (a flipped bit, or a newer "
		     "devmemtop)", flags);
		return;
	}
	ret = read_frame(r, &type, &len, flags ? h + 8 : NULL);
	if (ret == 0)
		rerr(r, -EBADMSG, "truncated at byte %llu: no meta frame",
		     (unsigned long long)r->off);
	if (ret <= 0)
		return;
	if (type != REC_META) {
		rerr(r, -EBADMSG, "corrupt: first frame is %s, not meta", frame_name(type));
		return;
	}
	if (decode_meta(r->buf, len, &r->meta, why, sizeof(why))) {
		rerr(r, -EBADMSG, "corrupt frame 1 (meta): %s", why);
		return;
	}
	r->meta.kernel_addresses = flags & REC_FLAG_KERNEL_ADDRS;
	memcpy(r->avail, r->meta.avail, sizeof(r->avail));
	r->have_meta = true;
}

struct rec_reader *rec_reader__open_file(FILE *f, const char *name)
{
	struct rec_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		fclose(f);
		return NULL;
	}
	r->f = f;
	snprintf(r->name, sizeof(r->name), "%s", name);
	read_header(r);
	return r;
}

struct rec_reader *rec_reader__open(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	return rec_reader__open_file(f, path);
}

const struct rec_meta *rec_reader__meta(const struct rec_reader *r)
{
	return r->have_meta ? &r->meta : NULL;
}

const char *rec_reader__error(const struct rec_reader *r)
{
	return r->errcode ? r->err : NULL;
}

int rec_reader__next(struct rec_reader *r, struct rec_item *it)
{
	uint32_t type, len;
	uint64_t start;
	char why[200];
	int ret;

	memset(it, 0, sizeof(*it));
	if (r->errcode)
		return r->errcode;
	for (;;) {
		start = r->off;
		ret = read_frame(r, &type, &len, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (r->ended)
				return 0;
			return rerr(r, -EBADMSG,
				    "truncated at byte %llu: no end frame after %llu frames "
				    "(recorder killed or file cut short)",
				    (unsigned long long)r->off, (unsigned long long)r->frames);
		}
		if (r->ended)
			return rerr(r, -EBADMSG, "corrupt: frame %llu (%s) after the end frame",
				    (unsigned long long)r->frames, frame_name(type));
		it->type = type;
		switch (type) {
		case REC_SNAPSHOT:
			ret = rec_decode_snapshot(r->buf, len, r->avail, &it->snap, why, sizeof(why));
			if (!ret)
				memcpy(r->avail, it->snap->avail, sizeof(r->avail));
			break;
		case REC_EVENT:
			ret = decode_event(r->buf, len, &it->ev, why, sizeof(why));
			break;
		case REC_END:
			ret = decode_end(r->buf, len, &it->end, why, sizeof(why));
			r->ended = !ret;
			break;
		case REC_META:
			return rerr(r, -EBADMSG, "corrupt: second meta frame (frame %llu)",
				    (unsigned long long)r->frames);
		default:
			/* a later version's frame type: CRC checked, skip it */
			continue;
		}
		if (ret)
			return rerr(r, ret == -ENOMEM ? -ENOMEM : -EBADMSG,
				    "corrupt frame %llu (%s) at byte %llu: %s",
				    (unsigned long long)r->frames, frame_name(type),
				    (unsigned long long)start, why);
		return 1;
	}
}

void rec_reader__free(struct rec_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	rec_meta__fini(&r->meta);
	free(r->buf);
	free(r);
}
