/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's insides, shared by its files (not for commands):
 *   collector.c        lifecycle: new (probe -> policy -> load -> attach), snapshot, free
 *   collector_probe.c  what this kernel lets us use: BTF, fentry probes, kallsyms,
 *                      the mode policy (dmt_hooks[].modes), token source
 *   collector_light.c  light and devmem modes: sampling windows, the pools' own counters
 *   collector_read.c   maps -> snapshot: pools, netlink, bindings, tokens, stats
 * Availability and the attach mode are decided in src/core/availability.c
 * from c->ar, which these files fill.
 */
#ifndef DEVMEMTOP_COLLECTOR_INT_H
#define DEVMEMTOP_COLLECTOR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "availability.h"
#include "cgpath.h"
#include "collector.h"
#include "hooks.h"
#include "nl.h"
#include "ntfsched.h"
#include "snapbuild.h"

struct btf;
struct bpf_program;
struct bpf_link;
struct ring_buffer;
struct devmemtop;

struct prog_state {
	struct bpf_program *prog;
	struct bpf_link *link;
	bool wanted;		/* probe and policy said it can work */
	bool ran;		/* attached now or once (light windows): has run stats */
	uint64_t run_time_ns;	/* as read last (they move only while stats are on) */
	uint64_t run_cnt;
	uint64_t misses;	/* runs the kernel skipped (recursion_misses) */
};

struct collector {
	struct collector_opts opts;
	struct devmemtop *skel;
	struct btf *vmlinux;
	struct ring_buffer *rb;
	struct dmt_pool *slots;		/* pool_slots, mmap()ed */
	size_t slots_len;
	struct netdev_nl *nl;
	bool ntf_ok;			/* subscribed to the page-pool group */
	struct ntf_sched ntf_sched;	/* announced pools not located yet */
	uint64_t ntf_seen;		/* page-pool notifications read */
	uint64_t ntf_windows;		/* light windows a notification brought forward */
	uint64_t netns;			/* inode of our network namespace, 0 if unknown */
	bool nl_no_devmem;		/* this snapshot's page-pool-get listed no dmabuf pool */
	int stats_fd;
	int stats_sysctl_fd;	/* /proc/sys/kernel/bpf_stats_enabled, kept open */
	bool stats_were_on;	/* BPF stats on at the last snapshot (sysctl or stats_fd) */
	uint64_t tok_misses;	/* runs of the token programs the kernel skipped */
	enum dmt_attach_mode mode;
	struct prog_state ps[DMT_H__COUNT];
	struct dmt_attach_result ar;	/* what attached: availability's input */
	uint64_t devmem_alloc_fn;	/* mp_dmabuf_devmem_alloc_netmems */
	uint64_t io_uring_alloc_fn;	/* io_pp_zc_alloc_netmems */
	struct tok_agg tok_agg;		/* this snapshot's token counts */
	uint64_t tok_read_ns;		/* when this snapshot began reading them */
	struct dmt_tok_stats tok_stats;
	struct cgpath *cgpaths;		/* holders' cgroup id -> path, made at first use */
	struct tokiter_state *ti;	/* light mode's token iterator (collector_tokiter.c) */
	struct uref_state *ur;		/* its net_iov uref walk (collector_uref.c) */

	struct rate_tracker *rates;
	struct binding_memory *bindings;
	uint64_t last_ts;
	uint64_t seq;

	/* light mode (the flag and window sizes are in ar) */
	uint64_t last_window;		/* CLOCK_MONOTONIC of the last window's start */
	uint64_t windows;		/* sampling windows run */
	uint64_t light_stale;		/* reads discarded by the generation check */

	collector_event_fn ev_cb;
	void *ev_ctx;

	char **log;
	size_t n_log;
};

void coll_log(struct collector *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* -v lines of a snapshot: printed, not kept in the probe log (which must not grow) */
void run_log(struct collector *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool attached(const struct collector *c, enum dmt_hook id)
{
	return c->ar.hook[id].attached;
}

/* collector_probe.c */
const char *kernel_btf_path(void);
const char *core_btf_path(void);
bool btf_has(const struct btf *btf, const char *name, int kind);
bool binding_free_takes_work(const struct btf *btf);
void read_kallsyms(struct collector *c);
void select_programs(struct collector *c);

/* collector_light.c */
void light_window(struct collector *c);
bool light_pool(struct collector *c, struct dmt_pool *v);

/* collector_tokiter.c */
uint64_t prog_run_ns(const struct bpf_program *prog);
void tokiter_open(struct collector *c);
void tokiter_close(struct collector *c);
int tokiter_aggregate(struct collector *c, uint64_t now_ns, bool no_devmem);
uint32_t tokiter_held_why(const struct collector *c, uint32_t binding_id);

/* collector_uref.c */
struct dmt_iter_sock;
struct dmt_tok_entry;
void uref_open(struct collector *c);
void uref_close(struct collector *c);
int uref_walk_all(struct collector *c, uint64_t now_ns, struct dmt_tok_entry **toks, size_t *n);
void uref_skip(struct collector *c);
bool uref_kernel(const struct collector *c);
uint32_t uref_held_why(const struct collector *c, uint32_t iter_flags,
		       const struct dmt_iter_sock *socks, size_t ns, uint32_t binding_id);

/* collector_read.c */
int read_pools(struct collector *c, struct dmt_snapshot *s);
int read_zcrx(struct collector *c, struct dmt_snapshot *s);
int merge_netlink(struct collector *c, struct dmt_snapshot *s);
void netlink_probe(struct collector *c);
bool pool_notifications(struct collector *c);
int read_queues(struct collector *c, struct dmt_snapshot *s);
int read_tokens(struct collector *c, struct dmt_snapshot *s);
int holder_cgroups_open(struct collector *c);
int read_bindings(struct collector *c, struct dmt_snapshot *s);
void read_globals(struct collector *c, struct dmt_snapshot *s);
void read_prog_stats(struct collector *c, struct dmt_snapshot *s);

#define READ_ONCE_U64(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

#endif /* DEVMEMTOP_COLLECTOR_INT_H */
