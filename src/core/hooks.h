/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF programs devmemtop knows, as data: what each hooks, how it is
 * probed, and in which --mode settings it may load (the mode policy). The
 * collector loads and attaches them; availability.c decides from what
 * attached which metrics are exact, sampled or unavailable. Nothing here
 * knows libbpf.
 *
 *   dmt_hooks[h].name                   program name in the skeleton
 *   dmt_hook_in_mode(h, force_mode)     may h load under this --mode?
 *   dmt_hook_mode_why(h, force_mode)    the reason when it may not
 */
#ifndef DEVMEMTOP_HOOKS_H
#define DEVMEMTOP_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

enum dmt_hook_kind {
	DMT_HK_TP_BTF,
	DMT_HK_FENTRY,
	DMT_HK_FEXIT,
	DMT_HK_RUN,		/* run on demand with BPF_PROG_TEST_RUN, never attached */
};

enum dmt_hook_group {
	DMT_HG_POOL,		/* page_pool tracepoints: the base */
	DMT_HG_FENTRY,		/* devmem allocator fentry/fexit */
	DMT_HG_DEVMEM_TP,	/* devmem tracepoints (our series) */
	DMT_HG_WALK,		/* binding walk */
	DMT_HG_TOK_TP,		/* frag token tracepoints (kernel-patches/0009) */
	DMT_HG_TOK_FENTRY,	/* frag tokens: recvmsg, cmsg writer, DONTNEED */
	DMT_HG_TOK,		/* frag tokens: socket destroy (both sources) */
	DMT_HG_LIGHT,		/* light mode: pool counters read at snapshot time */
	DMT_HG_UREF_TP,		/* SO_DEVMEM_AUTORELEASE off (kernel-patches 0012) */
	DMT_HG_TX,		/* devmem TX: sends and skb references (fentry/fexit) */
	DMT_HG_ZCRX,		/* io_uring zcrx: provider calls, area walk */
};

enum dmt_hook {
	DMT_H_PP_HOLD,
	DMT_H_PP_RELEASE,
	DMT_H_PP_DESTROY,
	DMT_H_PP_NID,
	DMT_H_WALK_BINDING,
	DMT_H_BIND_EXIT,
	DMT_H_UNBIND_ENTRY,
	DMT_H_BINDING_FREE_ENTRY,
	DMT_H_MP_ALLOC_ENTRY,
	DMT_H_MP_ALLOC_EXIT,
	DMT_H_MP_RELEASE_ENTRY,
	DMT_H_MP_RELEASE_EXIT,
	DMT_H_DONTNEED_EXIT,
	DMT_H_DM_CREATE,
	DMT_H_DM_UNBIND,
	DMT_H_DM_FREE,
	DMT_H_DM_ALLOC,
	DMT_H_DM_ALLOC_FAIL,
	DMT_H_DM_NIOV_FREE,
	DMT_H_DM_DONTNEED,
	DMT_H_TOK_TP_RECV,
	DMT_H_TOK_TP_DONTNEED,
	DMT_H_TOK_TP_RELEASE,
	DMT_H_TOK_DESTROY,
	DMT_H_TOK_RECVMSG_ENTRY,
	DMT_H_TOK_RECVMSG_EXIT,
	DMT_H_TOK_CMSG_EXIT,
	DMT_H_TOK_DONTNEED_ENTRY,
	DMT_H_TOK_DONTNEED_EXIT,
	DMT_H_LIGHT_READ,
	DMT_H_UREF_TP_RECV,
	DMT_H_UREF_TP_DONTNEED,
	DMT_H_UREF_TP_DRAIN,
	DMT_H_TX_BIND_EXIT,
	DMT_H_TX_NIOV_AT_EXIT,
	DMT_H_TX_ITER_EXIT,
	DMT_H_TX_REF_GET,
	DMT_H_TX_REF_PUT,
	DMT_H_ZC_ALLOC_ENTRY,
	DMT_H_ZC_ALLOC_EXIT,
	DMT_H_WALK_ZCRX,
	DMT_H__COUNT,
};

/*
 * The --mode settings, as bits of a hook's mode mask: -m full (best the
 * kernel allows; "auto" before issue 36), -m fentry (no devmem
 * tracepoints), -m tp (page_pool tracepoints, the walk and the
 * socket-destroy hook), -m light (no per-page, per-niov or per-token
 * program kept attached), -m devmem (the default: the full mode's devmem
 * hooks, no program kept on the per-page page_pool tracepoints).
 */
#define DMT_MM_AUTO	(1u << 0)
#define DMT_MM_FENTRY	(1u << 1)
#define DMT_MM_TP	(1u << 2)
#define DMT_MM_LIGHT	(1u << 3)
#define DMT_MM_DEVMEM	(1u << 4)
#define DMT_MM_ALL	(DMT_MM_AUTO | DMT_MM_FENTRY | DMT_MM_TP | DMT_MM_LIGHT | \
			 DMT_MM_DEVMEM)

/* Why a hook stays off in a mode whose bit it lacks. */
enum dmt_hook_off {
	DMT_OFF_MODE,		/* "disabled by --mode" */
	DMT_OFF_PER_NIOV,	/* light: a per-niov hook */
	DMT_OFF_PER_TOKEN,	/* light: a per-token hook */
	DMT_OFF_LIGHT_ONLY,	/* needs light mode */
};

struct dmt_hook_desc {
	const char *name;		/* program name in the skeleton */
	enum dmt_hook_kind kind;
	const char *target;		/* tracepoint or function */
	enum dmt_hook_group group;
	unsigned int modes;		/* DMT_MM_* in which it may load */
	enum dmt_hook_off light_off;	/* why, when light mode leaves it off */
	bool window;			/* light, devmem: attached in sampling windows only */
};

extern const struct dmt_hook_desc dmt_hooks[DMT_H__COUNT];

/* Why the zcrx group does not load on a kernel without it (6.12). */
#define DMT_NO_ZCRX	"kernel has no io_uring zero-copy receive (CONFIG_IO_URING_ZCRX, 6.15+)"

/* The DMT_MM_* bit of a collector_opts.force_mode (-1: auto). */
unsigned int dmt_mode_bit(int force_mode);
bool dmt_hook_in_mode(enum dmt_hook h, int force_mode);
/* Why h is off under force_mode (only meaningful when !dmt_hook_in_mode). */
const char *dmt_hook_mode_why(enum dmt_hook h, int force_mode);
/* "fexit/put_cmsg_notrunc" for a hook. */
const char *dmt_hook_target(enum dmt_hook h, char *buf, size_t len);
const char *dmt_hook_kind_name(enum dmt_hook_kind k);

#endif /* DEVMEMTOP_HOOKS_H */
