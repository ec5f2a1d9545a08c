// SPDX-License-Identifier: GPL-2.0
/*
 * The metric table (metrics.h). Row order is output order: JSON keys and
 * Prometheus families come out in it.
 */
#include <string.h>
#include "metrics.h"

static bool used_niovs(const struct dmt_binding_snap *b, double *v)
{
	if (b->total_niovs < 0 || b->free_niovs < 0)
		return false;
	*v = (double)(b->total_niovs - b->free_niovs);
	return true;
}

/* niovs * niov_size: unknown when either is */
static bool bytes_of(double niovs, bool known, const struct dmt_binding_snap *b, double *v)
{
	if (!known || !b->niov_size)
		return false;
	*v = niovs * b->niov_size;
	return true;
}

static bool used_bytes(const struct dmt_binding_snap *b, double *v)
{
	double n = 0;
	bool k = used_niovs(b, &n);

	return bytes_of(n, k, b, v);
}

static bool free_bytes(const struct dmt_binding_snap *b, double *v)
{
	return bytes_of((double)b->free_niovs, b->free_niovs >= 0, b, v);
}

static bool in_pools_bytes(const struct dmt_binding_snap *b, double *v)
{
	return bytes_of((double)b->in_pools, b->in_pools >= 0, b, v);
}

#define F(field, r) .off = offsetof(struct dmt_binding_snap, field), .repr = r
#define D(fn) .repr = MR_DERIVED, .derive = fn, .integral = true

const struct mdef mdefs[] = {
	{ "binding.dmabuf_size", MT_GAUGE, MU_BYTES, "Size of the binding's dmabuf.",
	  F(dmabuf_size, MR_U64_NZ), .avail = -1, .json = "dmabuf_size",
	  .prom = "devmemtop_binding_dmabuf_size_bytes" },
	{ "binding.niov_size", MT_GAUGE, MU_BYTES,
	  "Size of one niov of the binding (rx-page-size).",
	  F(niov_size, MR_U32_NZ), .avail = -1, .json = "niov_size",
	  .prom = "devmemtop_binding_niov_size_bytes", .gate = true, .agg = MA_MAX },
	{ "binding.capacity_niovs", MT_GAUGE, MU_NIOVS, "Niovs the binding has in all.",
	  F(total_niovs, MR_I64), .avail = DMT_M_BIND_OCCUPANCY, .json = "total_niovs",
	  .prom = "devmemtop_binding_capacity_niovs" },
	{ "binding.free_niovs", MT_GAUGE, MU_NIOVS, "Niovs free in the binding's allocator.",
	  F(free_niovs, MR_I64), .avail = DMT_M_BIND_OCCUPANCY, .json = "free_niovs",
	  .prom = "devmemtop_binding_free_niovs", .gate = true },
	{ "binding.in_pools", MT_GAUGE, MU_NIOVS,
	  "Niovs of the binding held by its page pools (their inflight).",
	  F(in_pools, MR_I64), .avail = DMT_M_BIND_IN_POOLS, .json = "in_pools",
	  .prom = "devmemtop_binding_pool_held_niovs", .gate = true },
	{ "binding.held_by_sockets", MT_GAUGE, MU_NIOVS,
	  "Niovs of the binding handed to user space and not yet returned.",
	  F(held_by_sockets, MR_I64), .avail = DMT_M_BIND_HELD_BY_SOCKETS,
	  .json = "held_by_sockets", .prom = "devmemtop_binding_socket_held_niovs", .gate = true },
	{ "binding.occupancy", MT_GAUGE, MU_RATIO,
	  "Share of the binding's niovs in use: (capacity - free) / capacity.",
	  F(occupancy, MR_F64), .avail = DMT_M_BIND_OCCUPANCY, .json = "occupancy",
	  .prom = "devmemtop_binding_occupancy_ratio", .gate = true, .agg = MA_MAX },
	{ "binding.page_pools", MT_GAUGE, MU_NIOVS, "Page pools using the binding.",
	  F(pools, MR_U32), .avail = -1, .json = "pools", .prom = "devmemtop_binding_page_pools" },
	{ "binding.alloc_calls", MT_COUNTER, MU_NIOVS,
	  "Provider allocation calls that returned a niov.",
	  F(alloc_calls, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "alloc_calls",
	  .prom = "devmemtop_binding_alloc_calls_total", .gate = true },
	{ "binding.alloc_niovs", MT_COUNTER, MU_NIOVS,
	  "Niovs handed from the binding to page pools.",
	  F(alloc_niovs, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "alloc_niovs",
	  .prom = "devmemtop_binding_alloc_niovs_total", .gate = true },
	{ "binding.alloc_failures", MT_COUNTER, MU_NIOVS,
	  "Allocations from the binding that failed (no free niov).",
	  F(alloc_fail, MR_U64), .avail = DMT_M_BIND_ALLOC_FAIL, .json = "alloc_failures",
	  .prom = "devmemtop_binding_alloc_failures_total", .gate = true, .better = MB_LOWER },
	{ "binding.releases", MT_COUNTER, MU_NIOVS, "Niovs given back to the binding.",
	  F(free_niovs_count, MR_U64), .avail = DMT_M_BIND_PROVIDER_CALLS, .json = "niov_frees",
	  .prom = "devmemtop_binding_released_niovs_total", .gate = true },
	{ "binding.out_at_unbind", MT_TOTAL, MU_NIOVS,
	  "Niovs not free when the binding was unbound.",
	  F(out_at_unbind, MR_I64), .avail = DMT_M_BIND_LEAKS, .json = "outstanding_at_unbind",
	  .prom = "devmemtop_binding_unbind_outstanding_niovs", .gate = true, .event = "unbound", .better = MB_LOWER },
	{ "binding.leaked_niovs", MT_TOTAL, MU_NIOVS,
	  "Niovs not free when the binding was freed (a leak); reported in one snapshot, "
	  "then dropped.",
	  F(out_at_free, MR_I64), .avail = DMT_M_BIND_LEAKS, .json = "leaked_at_free",
	  .prom = "devmemtop_binding_leaked_niovs", .gate = true, .event = "freed", .better = MB_LOWER },
	/* byte figures next to the niov counts (issue 10) */
	{ "binding.used_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes of the binding in use: (capacity - free) niovs * niov size.",
	  D(used_bytes), .avail = DMT_M_BIND_OCCUPANCY, .json = "used_bytes",
	  .prom = "devmemtop_binding_used_bytes", .gate = true },
	{ "binding.free_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes free in the binding's allocator: free niovs * niov size.",
	  D(free_bytes), .avail = DMT_M_BIND_OCCUPANCY, .json = "free_bytes",
	  .prom = "devmemtop_binding_free_bytes", .gate = true },
	{ "binding.in_pools_bytes", MT_GAUGE, MU_BYTES,
	  "Bytes of the binding held by its page pools: their inflight * niov size.",
	  D(in_pools_bytes), .avail = DMT_M_BIND_IN_POOLS, .json = "in_pools_bytes",
	  .prom = "devmemtop_binding_pool_held_bytes", .gate = true },
	/* lifecycle times the BPF side keeps (CLOCK_MONOTONIC, like ts_ns) */
	{ "binding.created_ns", MT_GAUGE, MU_NS,
	  "When the binding was created (CLOCK_MONOTONIC ns, like ts_ns).",
	  F(created_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "created_ns",
	  .rec_tag = 1 },
	{ "binding.unbound_ns", MT_GAUGE, MU_NS,
	  "When the binding was unbound (CLOCK_MONOTONIC ns).",
	  F(unbound_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "unbound_ns",
	  .rec_tag = 2 },
	{ "binding.freed_ns", MT_GAUGE, MU_NS, "When the binding was freed (CLOCK_MONOTONIC ns).",
	  F(freed_ns, MR_U64_NZ), .avail = DMT_M_BIND_LIFECYCLE, .json = "freed_ns",
	  .rec_tag = 3 },
	/* frag tokens (issue 11): exact where the tool saw the binding created */
	{ "binding.held_tokens", MT_GAUGE, MU_NIOVS,
	  "Frag tokens of the binding user space holds (handed out, not yet returned).",
	  F(held_tokens, MR_I64), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .json = "held_tokens",
	  .prom = "devmemtop_binding_socket_held_tokens", .gate = true, .rec_tag = 4 },
	{ "binding.tokens_handed", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding handed to user space by recvmsg.",
	  F(tok_handed, MR_U64), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .json = "tokens_handed",
	  .prom = "devmemtop_binding_tokens_handed_total", .gate = true, .rec_tag = 5 },
	{ "binding.tokens_returned", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding returned with SO_DEVMEM_DONTNEED.",
	  F(tok_returned, MR_U64), .avail = DMT_M_BIND_HELD_BY_SOCKETS,
	  .json = "tokens_returned", .prom = "devmemtop_binding_tokens_returned_total",
	  .gate = true, .rec_tag = 6 },
	{ "binding.tokens_released", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding never returned: dropped when their socket was destroyed.",
	  F(tok_released, MR_U64), .avail = DMT_M_BIND_HELD_BY_SOCKETS,
	  .json = "tokens_released", .prom = "devmemtop_binding_tokens_released_total",
	  .gate = true, .rec_tag = 7, .better = MB_LOWER },
	/* SO_DEVMEM_AUTORELEASE off (issue 21, kernel-patches 0012) */
	{ "binding.tokens_drained", MT_COUNTER, MU_NIOVS,
	  "Frag tokens of the binding that sockets without SO_DEVMEM_AUTORELEASE never "
	  "returned: their references drained at unbind.",
	  F(tok_drained, MR_U64), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .json = "tokens_drained",
	  .prom = "devmemtop_binding_tokens_drained_total", .gate = true, .rec_tag = 20,
	  .better = MB_LOWER },
	{ "binding.token_mode", MT_GAUGE, MU_NIOVS,
	  "SO_DEVMEM_AUTORELEASE modes of the frags read from the binding: 1 autorelease "
	  "(token ids per socket), 2 without (tokens counted per niov: any socket of the "
	  "binding may return them), 3 both, 0 none yet.",
	  F(token_mode, MR_U32), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .json = "token_mode",
	  .prom = "devmemtop_binding_token_mode", .rec_tag = 21, .agg = MA_MAX },
	/* compare (issue 20): bytes per run for cpu per GiB, niovs and calls per MiB */
	{ "binding.rx_bytes", MT_COUNTER, MU_BYTES,
	  "Bytes returned by recvmsg calls that handed out the binding's frag tokens.",
	  F(rx_bytes, MR_U64), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .gate = true, .rec_tag = 9 },
	{ "binding.held_why", MT_GAUGE, MU_NIOVS,
	  "Why held_tokens and held_by_sockets are unknown (enum dmt_held_why).",
	  F(held_why, MR_U32), .avail = DMT_M_BIND_HELD_BY_SOCKETS, .rec_tag = 8 },
};

#undef F
#undef D

const size_t mdef_count = sizeof(mdefs) / sizeof(mdefs[0]);

static const void *field(const struct mdef *d, const struct dmt_binding_snap *b)
{
	return (const char *)b + d->off;
}

uint64_t mdef_raw(const struct mdef *d, const struct dmt_binding_snap *b)
{
	const void *p = field(d, b);
	uint64_t u = 0;
	uint32_t u32;
	int64_t i;
	double f;

	switch (d->repr) {
	case MR_U64:
	case MR_U64_NZ:
		memcpy(&u, p, sizeof(u));
		break;
	case MR_U32:
	case MR_U32_NZ:
		memcpy(&u32, p, sizeof(u32));
		u = u32;
		break;
	case MR_I64:
		memcpy(&i, p, sizeof(i));
		u = (uint64_t)i;
		break;
	case MR_F64:
		memcpy(&f, p, sizeof(f));
		memcpy(&u, &f, sizeof(u));
		break;
	case MR_DERIVED:
		break;
	}
	return u;
}

void mdef_set_raw(const struct mdef *d, struct dmt_binding_snap *b, uint64_t raw)
{
	void *p = (char *)b + d->off;
	uint32_t u32 = (uint32_t)raw;

	switch (d->repr) {
	case MR_U64:
	case MR_U64_NZ:
	case MR_I64:
	case MR_F64:
		memcpy(p, &raw, sizeof(raw));
		break;
	case MR_U32:
	case MR_U32_NZ:
		memcpy(p, &u32, sizeof(u32));
		break;
	case MR_DERIVED:
		break;
	}
}

void mdef_set_unknown(const struct mdef *d, struct dmt_binding_snap *b)
{
	int64_t m1 = -1;
	double f = -1;

	switch (d->repr) {
	case MR_I64:
		mdef_set_raw(d, b, (uint64_t)m1);
		break;
	case MR_F64:
		memcpy((char *)b + d->off, &f, sizeof(f));
		break;
	case MR_DERIVED:
		break;
	default:
		mdef_set_raw(d, b, 0);
		break;
	}
}

bool mdef_value(const struct mdef *d, const struct dmt_binding_snap *b, double *v)
{
	uint64_t raw;
	double f;

	if (d->repr == MR_DERIVED)
		return d->derive(b, v);
	raw = mdef_raw(d, b);
	switch (d->repr) {
	case MR_U64_NZ:
	case MR_U32_NZ:
		if (!raw)
			return false;
		/* fall through */
	case MR_U64:
	case MR_U32:
		*v = (double)raw;
		return true;
	case MR_I64:
		if ((int64_t)raw < 0)
			return false;
		*v = (double)(int64_t)raw;
		return true;
	case MR_F64:
		memcpy(&f, &raw, sizeof(f));
		if (!(f >= 0))
			return false;
		*v = f;
		return true;
	case MR_DERIVED:
		break;
	}
	return false;
}

bool mdef_available(const struct mdef *d, const struct dmt_availability *avail)
{
	return d->avail < 0 || (d->avail < DMT_M__COUNT && avail[d->avail].available);
}
