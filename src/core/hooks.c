// SPDX-License-Identifier: GPL-2.0
/*
 * The program table and the mode policy: which --mode loads which program
 * is one mask per row, not a branch per mode in the collector.
 */
#include <stdio.h>
#include "hooks.h"
#include "snapshot.h"

/* the devmem mode loads what the full mode loads, less the per-page windows */
#define BEST		(DMT_MM_AUTO | DMT_MM_DEVMEM)
#define FULL		(BEST | DMT_MM_FENTRY)	/* not -m tp, not light */
#define NOT_TP		(BEST | DMT_MM_FENTRY | DMT_MM_LIGHT)
#define DM_TP_MODES	(BEST | DMT_MM_LIGHT)	/* -m fentry/tp cap them */

#define H(id, n, k, t, g, m, off) \
	[DMT_H_##id] = { .name = n, .kind = DMT_HK_##k, .target = t, .group = DMT_HG_##g, \
			 .modes = (m), .light_off = DMT_OFF_##off }

/*
 * The devmem mode keeps no program that runs once per page: pp_hold and
 * pp_release only inside its sampling windows, as light mode; every
 * per-niov and per-token hook of devmem stays, as in the full mode.
 * Light mode keeps no program that runs once per page, niov or token:
 * pp_hold/pp_release only inside its sampling windows, the per-niov
 * release hooks and every frag token hook off (held_by_sockets is exact or
 * nothing: light mode reads held tokens at snapshot time with its own
 * iterator, collector_tokiter.c). The recvmsg token hooks run once per TCP
 * recvmsg of every socket, but return on the flags test unless the call
 * asked for devmem (MSG_SOCK_DEVMEM).
 */
const struct dmt_hook_desc dmt_hooks[DMT_H__COUNT] = {
	[DMT_H_PP_HOLD] = { .name = "pp_hold", .kind = DMT_HK_TP_BTF,
		.target = "page_pool_state_hold", .group = DMT_HG_POOL, .modes = DMT_MM_ALL,
		.window = true },
	[DMT_H_PP_RELEASE] = { .name = "pp_release", .kind = DMT_HK_TP_BTF,
		.target = "page_pool_state_release", .group = DMT_HG_POOL, .modes = DMT_MM_ALL,
		.window = true },
	H(PP_DESTROY, "pp_destroy", TP_BTF, "page_pool_release", POOL, DMT_MM_ALL, MODE),
	H(PP_NID, "pp_nid", TP_BTF, "page_pool_update_nid", POOL, DMT_MM_ALL, MODE),
	H(WALK_BINDING, "walk_binding", RUN, "net_devmem_dmabuf_binding", WALK, DMT_MM_ALL, MODE),
	H(BIND_EXIT, "bind_exit", FEXIT, "net_devmem_bind_dmabuf", FENTRY, NOT_TP, MODE),
	H(UNBIND_ENTRY, "unbind_entry", FENTRY, "net_devmem_unbind_dmabuf", FENTRY, NOT_TP,
	  MODE),
	H(BINDING_FREE_ENTRY, "binding_free_entry", FENTRY, "__net_devmem_dmabuf_binding_free",
	  FENTRY, NOT_TP, MODE),
	H(MP_ALLOC_ENTRY, "mp_alloc_entry", FENTRY, "mp_dmabuf_devmem_alloc_netmems", FENTRY,
	  NOT_TP, MODE),
	H(MP_ALLOC_EXIT, "mp_alloc_exit", FEXIT, "mp_dmabuf_devmem_alloc_netmems", FENTRY,
	  NOT_TP, MODE),
	H(MP_RELEASE_ENTRY, "mp_release_entry", FENTRY, "mp_dmabuf_devmem_release_page", FENTRY,
	  FULL, PER_NIOV),
	H(MP_RELEASE_EXIT, "mp_release_exit", FEXIT, "mp_dmabuf_devmem_release_page", FENTRY,
	  FULL, PER_NIOV),
	H(DONTNEED_EXIT, "dontneed_exit", FEXIT, "sock_devmem_dontneed", FENTRY, NOT_TP, MODE),
	H(DM_CREATE, "dm_create", TP_BTF, "devmem_binding_create", DEVMEM_TP, DM_TP_MODES, MODE),
	H(DM_UNBIND, "dm_unbind", TP_BTF, "devmem_binding_unbind", DEVMEM_TP, DM_TP_MODES, MODE),
	H(DM_FREE, "dm_free", TP_BTF, "devmem_binding_free", DEVMEM_TP, DM_TP_MODES, MODE),
	H(DM_ALLOC, "dm_alloc", TP_BTF, "devmem_alloc", DEVMEM_TP, DM_TP_MODES, MODE),
	H(DM_ALLOC_FAIL, "dm_alloc_fail", TP_BTF, "devmem_alloc_fail", DEVMEM_TP, DM_TP_MODES,
	  MODE),
	H(DM_NIOV_FREE, "dm_niov_free", TP_BTF, "devmem_niov_free", DEVMEM_TP, BEST,
	  PER_NIOV),
	H(DM_DONTNEED, "dm_dontneed", TP_BTF, "devmem_dontneed", DEVMEM_TP, DM_TP_MODES, MODE),
	H(TOK_TP_RECV, "tok_tp_recv", TP_BTF, "devmem_token_recv", TOK_TP, BEST,
	  PER_TOKEN),
	H(TOK_TP_DONTNEED, "tok_tp_dontneed", TP_BTF, "devmem_token_dontneed", TOK_TP,
	  BEST, PER_TOKEN),
	H(TOK_TP_RELEASE, "tok_tp_release", TP_BTF, "devmem_token_release", TOK_TP, BEST,
	  PER_TOKEN),
	H(TOK_DESTROY, "tok_destroy", TP_BTF, "tcp_destroy_sock", TOK,
	  BEST | DMT_MM_FENTRY | DMT_MM_TP, PER_TOKEN),
	H(TOK_RECVMSG_ENTRY, "tok_recvmsg_entry", FENTRY, "tcp_recvmsg", TOK_FENTRY, FULL,
	  PER_TOKEN),
	H(TOK_RECVMSG_EXIT, "tok_recvmsg_exit", FEXIT, "tcp_recvmsg", TOK_FENTRY, FULL,
	  PER_TOKEN),
	H(TOK_CMSG_EXIT, "tok_cmsg_exit", FEXIT, "put_cmsg_notrunc", TOK_FENTRY, FULL,
	  PER_TOKEN),
	H(TOK_DONTNEED_ENTRY, "tok_dontneed_entry", FENTRY, "sock_devmem_dontneed", TOK_FENTRY,
	  FULL, PER_TOKEN),
	H(TOK_DONTNEED_EXIT, "tok_dontneed_exit", FEXIT, "sock_devmem_dontneed", TOK_FENTRY,
	  FULL, PER_TOKEN),
	H(LIGHT_READ, "light_read", RUN, "page_pool", LIGHT, DMT_MM_LIGHT | DMT_MM_DEVMEM,
	  LIGHT_ONLY),
	/* tokens without SO_DEVMEM_AUTORELEASE: counted per (binding, niov) */
	H(UREF_TP_RECV, "uref_tp_recv", TP_BTF, "devmem_frag_recv", UREF_TP, BEST,
	  PER_TOKEN),
	H(UREF_TP_DONTNEED, "uref_tp_dontneed", TP_BTF, "devmem_uref_dontneed", UREF_TP,
	  BEST, PER_TOKEN),
	H(UREF_TP_DRAIN, "uref_tp_drain", TP_BTF, "devmem_uref_drain", UREF_TP, BEST,
	  PER_TOKEN),
	/*
	 * devmem TX: once per devmem sendmsg, per skb it fills, and per niov
	 * frag reference (the last three are per niov: not in light mode);
	 * all five or none (collector_probe.c, tx_hooks)
	 */
	H(TX_BIND_EXIT, "tx_bind_exit", FEXIT, "net_devmem_get_binding", TX, FULL, MODE),
	H(TX_NIOV_AT_EXIT, "tx_niov_at_exit", FEXIT, "net_devmem_get_niov_at", TX, FULL,
	  PER_NIOV),
	H(TX_ITER_EXIT, "tx_iter_exit", FEXIT, "skb_zerocopy_iter_stream", TX, FULL, MODE),
	H(TX_REF_GET, "tx_ref_get", FENTRY, "net_devmem_get_net_iov", TX, FULL, PER_NIOV),
	H(TX_REF_PUT, "tx_ref_put", FENTRY, "net_devmem_put_net_iov", TX, FULL, PER_NIOV),
	/*
	 * io_uring zcrx pools: once per provider call (one refill of up to 64
	 * niovs), as the devmem provider's hooks, so light mode keeps them;
	 * the walk reads the pools' interface queues at snapshot time. All
	 * three or none (collector_probe.c, zcrx_hooks).
	 */
	H(ZC_ALLOC_ENTRY, "zc_alloc_entry", FENTRY, "io_pp_zc_alloc_netmems", ZCRX, NOT_TP, MODE),
	H(ZC_ALLOC_EXIT, "zc_alloc_exit", FEXIT, "io_pp_zc_alloc_netmems", ZCRX, NOT_TP, MODE),
	H(WALK_ZCRX, "walk_zcrx", RUN, "io_zcrx_ifq", ZCRX, NOT_TP, MODE),
};

unsigned int dmt_mode_bit(int force_mode)
{
	switch (force_mode) {
	case DMT_MODE_FENTRY:
		return DMT_MM_FENTRY;
	case DMT_MODE_TP_ONLY:
		return DMT_MM_TP;
	case DMT_MODE_LIGHT:
		return DMT_MM_LIGHT;
	case DMT_MODE_DEVMEM:
		return DMT_MM_DEVMEM;
	default:
		return DMT_MM_AUTO;
	}
}

bool dmt_hook_in_mode(enum dmt_hook h, int force_mode)
{
	return dmt_hooks[h].modes & dmt_mode_bit(force_mode);
}

const char *dmt_hook_mode_why(enum dmt_hook h, int force_mode)
{
	if (dmt_hooks[h].modes == (DMT_MM_LIGHT | DMT_MM_DEVMEM))
		return "light and devmem modes only";
	if (dmt_mode_bit(force_mode) != DMT_MM_LIGHT)
		return "disabled by --mode";
	switch (dmt_hooks[h].light_off) {
	case DMT_OFF_PER_TOKEN:
		return "per-token hook: not attached in light mode";
	case DMT_OFF_PER_NIOV:
		return "per-niov hook: not attached in light mode";
	default:
		return "disabled by --mode";
	}
}

const char *dmt_hook_kind_name(enum dmt_hook_kind k)
{
	switch (k) {
	case DMT_HK_TP_BTF:
		return "tp_btf";
	case DMT_HK_FENTRY:
		return "fentry";
	case DMT_HK_FEXIT:
		return "fexit";
	default:
		return "run";
	}
}

const char *dmt_hook_target(enum dmt_hook h, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dmt_hooks[h].kind == DMT_HK_FEXIT ? "fexit" :
		 dmt_hooks[h].kind == DMT_HK_FENTRY ? "fentry" : "tp_btf", dmt_hooks[h].target);
	return buf;
}
