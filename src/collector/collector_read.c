// SPDX-License-Identifier: GPL-2.0
/*
 * Collector, maps -> snapshot: the pool slots and overflow hash, netlink's
 * page-pool-get, the bindings (with their walk), frag tokens and holders,
 * global counters and per-program statistics. The pure parts (merging,
 * rates, token aggregation) live in src/core/snapbuild.c and tokens.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector_int.h"
#include "util.h"
#include "devmemtop.skel.h"

/*
 * The kernel-wide counters, each summed over the CPUs: one batch read of
 * the per-CPU array (one syscall, not one per counter); a counter that
 * cannot be read stays 0.
 */
static void counters_read(struct collector *c, uint64_t sum[DMT_CNT__MAX])
{
	int fd = bpf_map__fd(c->skel->maps.counters);
	int ncpu = libbpf_num_possible_cpus();
	__u32 keys[DMT_CNT__MAX], out, n = DMT_CNT__MAX;
	uint64_t *vals;
	int err;

	memset(sum, 0, sizeof(*sum) * DMT_CNT__MAX);
	if (ncpu <= 0)
		return;
	vals = calloc((size_t)ncpu * DMT_CNT__MAX, sizeof(*vals));
	if (!vals)
		return;
	err = bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &n, NULL);
	if (err && errno != ENOENT)	/* ENOENT: the last batch, n is valid */
		n = 0;
	for (__u32 k = 0; k < n; k++)
		for (int i = 0; keys[k] < DMT_CNT__MAX && i < ncpu; i++)
			sum[keys[k]] += vals[(size_t)k * ncpu + i];
	free(vals);
}

/*
 * Whose counters are read from the pool itself at snapshot time: every
 * pool's in the light and devmem modes (no per-page program outside the
 * sampling windows).
 */
static bool read_own_counters(const struct collector *c)
{
	return c->ar.light || c->ar.devmem;
}

int read_pools(struct collector *c, struct dmt_snapshot *s)
{
	int fd = bpf_map__fd(c->skel->maps.pools);
	struct dmt_pool_key key, next, *gone = NULL;
	size_t n_gone = 0, cap = 0;
	struct dmt_pool v;
	int err = 0;

	/*
	 * The id-indexed slots first, then the overflow hash. A slot is read
	 * through the mapping: copy it first, the BPF side may be updating it.
	 */
	for (__u32 i = 0; i < DMT_POOL_SLOTS; i++) {
		if (!READ_ONCE_U64(c->slots[i].addr))
			continue;
		memcpy(&v, &c->slots[i], sizeof(v));
		if (!v.addr)
			continue;
		if (read_own_counters(c) && light_pool(c, &v)) {
			/* destroyed while we looked: take the tracepoint's values */
			memcpy(&v, &c->slots[i], sizeof(v));
			v.hold_base = v.release_base = 0;
		}
		err = snapbuild_add_pool(s, &cap, &v);
		if (err)
			return err;
		/* a destroyed pool is reported in this snapshot, then forgotten */
		if (v.flags & DMT_POOL_GONE)
			snapbuild_slot_release(&c->slots[i], v.addr, v.id);
	}
	for (int r = bpf_map_get_next_key(fd, NULL, &next); !r;
	     r = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;	/* deleted meanwhile */
		if (read_own_counters(c) && light_pool(c, &v)) {
			if (bpf_map_lookup_elem(fd, &key, &v))
				continue;
			v.hold_base = v.release_base = 0;
		}
		err = snapbuild_add_pool(s, &cap, &v);
		if (err)
			goto out;
		if (!(v.flags & DMT_POOL_GONE) || n_gone >= DMT_MAX_POOLS)
			continue;
		/* allocated when first needed: most snapshots have no pool to forget */
		if (!gone && !(gone = calloc(DMT_MAX_POOLS, sizeof(*gone)))) {
			err = -ENOMEM;
			goto out;
		}
		gone[n_gone++] = key;
	}
	for (size_t i = 0; i < n_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
out:
	free(gone);
	return err;
}

/* Walk the interface queue of zcrx pool (addr, id): 0, or -errno. */
static int walk_zcrx(struct collector *c, uint64_t addr, uint32_t id, struct dmt_zcrx_walk *w)
{
	__u64 args[2] = { addr, id };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.walk_zcrx), &o))
		return -errno;
	*w = c->skel->bss->zcrx_walk_out;
	return w->err ? -EIO : 0;
}

/*
 * io_uring zcrx pools: their provider calls (zcrx_pools) and, for the live
 * ones, a walk of their interface queue now. A destroyed pool's entry is
 * reported in this snapshot, then forgotten, as read_pools does.
 */
int read_zcrx(struct collector *c, struct dmt_snapshot *s)
{
	int fd;

	if (!c->ar.hook[DMT_H_ZC_ALLOC_EXIT].attached)
		return 0;
	fd = bpf_map__fd(c->skel->maps.zcrx_pools);
	for (size_t i = 0; i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		struct dmt_pool_key k = { .addr = p->addr, .id = p->id };
		struct dmt_zcrx_walk w = {};
		struct dmt_zcrx_pool z;
		bool walked;

		if (p->kind != DMT_KIND_IO_URING || !p->addr || bpf_map_lookup_elem(fd, &k, &z))
			continue;
		walked = p->state != DMT_POOL_DESTROYED && c->ar.hook[DMT_H_WALK_ZCRX].loaded &&
			 !walk_zcrx(c, p->addr, p->id, &w);
		snapbuild_apply_zcrx(p, &z, walked ? &w : NULL);
		if (p->state == DMT_POOL_DESTROYED)
			bpf_map_delete_elem(fd, &k);
	}
	return 0;
}

/* Why a netdev genl request cannot be used, for the availability line. */
static void nl_why(char *why, size_t len, const char *cmd, int err, const char *config)
{
	if (err == -EOPNOTSUPP)
		snprintf(why, len, "kernel without %s (%s: %s)", config, cmd, strerror(-err));
	else
		snprintf(why, len, "%s: %s", cmd, strerror(-err));
}

/*
 * Which of the other netdev genl requests this kernel answers: one dump
 * each at start. page-pool-stats-get exists only with
 * CONFIG_PAGE_POOL_STATS; queue-get and qstats-get since 6.9/6.10.
 */
void netlink_probe(struct collector *c)
{
	struct nl_pp_stats *st = NULL;
	struct nl_queue *q = NULL;
	struct nl_qstats *qs = NULL;
	size_t n = 0;
	int err;

	err = netdev_nl__pp_stats(c->nl, &st, &n);
	free(st);
	c->ar.pp_stats = !err;
	if (err)
		nl_why(c->ar.pp_stats_why, sizeof(c->ar.pp_stats_why), "page-pool-stats-get", err,
		       "CONFIG_PAGE_POOL_STATS");
	err = netdev_nl__queues(c->nl, &q, &n);
	free(q);
	c->ar.queues = !err;
	if (err)
		nl_why(c->ar.queues_why, sizeof(c->ar.queues_why), "queue-get", err,
		       "queue-get (Linux 6.10)");
	err = netdev_nl__qstats(c->nl, false, &qs, &n);
	free(qs);
	c->ar.qstats = !err;
	if (err)
		nl_why(c->ar.qstats_why, sizeof(c->ar.qstats_why), "qstats-get", err,
		       "qstats-get (Linux 6.10)");
	err = netdev_nl__subscribe(c->nl);
	c->ntf_ok = !err;
	coll_log(c, 1, "page-pool notifications: %s%s", err ? "not subscribed: " : "subscribed",
		 err ? strerror(-err) : "");
}

static bool pool_located(const struct collector *c, uint32_t id)
{
	for (__u32 k = 0; k < DMT_POOL_SLOTS; k++)
		if (READ_ONCE_U64(c->slots[k].addr) &&
		    __atomic_load_n(&c->slots[k].id, __ATOMIC_RELAXED) == id)
			return true;
	return false;
}

static bool pool_located_cb(void *ctx, uint32_t id)
{
	return pool_located(ctx, id);
}

/*
 * Page-pool notifications since the last snapshot (bounded: at most
 * DMT_NTF_MAX read per snapshot, the rest wait for the next). True when a
 * pool added or changed and not located yet wants a window now
 * (ntfsched.h: at 0, 1, 2, 4, 8, 16 and 32 s after its notification):
 * light mode then runs its sampling window instead of waiting for the
 * period, so the pool gets its address and counters in this snapshot.
 * Without the group, or after an overrun, the period stays the only
 * trigger, as before.
 */
#define DMT_NTF_MAX	64
bool pool_notifications(struct collector *c)
{
	struct nl_pp_ntf ev[DMT_NTF_MAX];
	uint64_t now = now_mono_ns();
	int n;

	if (!c->nl || !c->ntf_ok)
		return false;
	n = netdev_nl__notifications(c->nl, ev, DMT_NTF_MAX);
	if (n < 0) {
		run_log(c, 2, "page-pool notifications: %s", strerror(-n));
		n = 0;
	}
	c->ntf_seen += n;
	for (int i = 0; i < n; i++)
		if (ev[i].ev != NL_PP_DEL && ntf_sched__add(&c->ntf_sched, ev[i].pool.id, now))
			break;	/* full: the period finds the rest */
	return ntf_sched__due(&c->ntf_sched, now, pool_located_cb, c);
}

/* page-pool-stats-get into the pools (before the rates: the mean batch needs them) */
static int merge_pp_stats(struct collector *c, struct dmt_snapshot *s)
{
	struct nl_pp_stats *st = NULL;
	size_t n = 0;
	int err;

	if (!c->ar.pp_stats)
		return 0;
	err = netdev_nl__pp_stats(c->nl, &st, &n);
	if (err) {
		run_log(c, 2, "page-pool-stats-get dump failed: %s", strerror(-err));
		return 0;
	}
	if (netdev_nl__last_bad(c->nl))
		run_log(c, 2, "skipped: %s", netdev_nl__last_bad(c->nl));
	err = snapbuild_merge_pp_stats(s, st, n);
	free(st);
	return err;
}

/* queue-get and qstats-get: after the bindings, which they count queues for */
int read_queues(struct collector *c, struct dmt_snapshot *s)
{
	struct snapbuild_queues in = {};
	struct nl_queue *q = NULL;
	struct nl_qstats *dev = NULL, *perq = NULL;

	if (c->nl && c->ar.queues)
		in.queues_ok = !netdev_nl__queues(c->nl, &q, &in.n_queues);
	if (c->nl && c->ar.qstats) {
		if (netdev_nl__qstats(c->nl, false, &dev, &in.n_dev))
			in.n_dev = 0;
		if (netdev_nl__qstats(c->nl, true, &perq, &in.n_perq))
			in.n_perq = 0;
	}
	if (!in.queues_ok)
		in.n_queues = 0;
	in.queues = q;
	in.dev = dev;
	in.perq = perq;
	snapbuild_merge_queues(s, &in);
	free(q);
	free(dev);
	free(perq);
	return 0;
}

int merge_netlink(struct collector *c, struct dmt_snapshot *s)
{
	struct nl_pool_info *nlp = NULL;
	size_t n = 0;
	int err;

	c->nl_no_devmem = false;
	if (!c->nl)
		return 0;
	err = netdev_nl__pools(c->nl, &nlp, &n);
	if (err) {
		/* the dump is an enrichment: the snapshot stands without it */
		run_log(c, 2, "page-pool-get dump failed: %s", strerror(-err));
		return 0;
	}
	/*
	 * A held token pins a net_iov, so its page pool stays listed (a
	 * zombie after unbind, with its dmabuf) in the namespace of the
	 * device, which is the receiving socket's: none listed, none held.
	 */
	c->nl_no_devmem = true;
	for (size_t i = 0; i < n; i++)
		if (nlp[i].dmabuf)
			c->nl_no_devmem = false;
	err = snapbuild_merge_netlink(s, nlp, n, c->netns);
	free(nlp);
	if (!err)
		err = merge_pp_stats(c, s);
	/* light, devmem: a listed pool no window or per-call hook has located yet */
	for (size_t i = 0; !err && (c->ar.light || c->ar.devmem) && i < s->n_pools; i++)
		if (!s->pools[i].addr)
			s->pools[i].counters_unknown = true;
	/* the dump gives an ifindex in our netns: its name is ours to look up */
	for (size_t i = 0; !err && i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		char name[IF_NAMESIZE];

		if (p->attr_src == DMT_ATTR_NETLINK && p->ifindex > 0 && !p->ifname[0] &&
		    if_indextoname(p->ifindex, name))
			snprintf(p->ifname, sizeof(p->ifname), "%s", name);
	}
	return err;
}

static int walk_binding(struct collector *c, uint64_t addr, struct dmt_walk *w)
{
	__u64 args[1] = { addr };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));
	int err;

	if (!c->ar.hook[DMT_H_WALK_BINDING].loaded)
		return -ENOTSUP;
	err = bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.walk_binding), &o);
	if (err)
		return -errno;
	*w = c->skel->bss->walk_out;
	return w->err ? -EIO : 0;
}

/* Every entry of the token map, with batched lookups. */
static int read_token_map(struct collector *c, struct dmt_tok_entry **out, size_t *n_out)
{
	int fd = bpf_map__fd(c->skel->maps.tok_map);
	struct dmt_tok_key *keys = NULL;
	struct dmt_tok_val *vals = NULL;
	struct dmt_tok_entry *e = NULL;
	__u32 batch = 4096, cnt;
	__u64 in = 0, outb = 0;
	size_t n = 0, cap = 0;
	bool first = true;
	int err = 0;

	keys = calloc(batch, sizeof(*keys));
	vals = calloc(batch, sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		int r;

		cnt = batch;
		r = bpf_map_lookup_batch(fd, first ? NULL : &in, &outb, keys, vals, &cnt, &bo);
		if (r && errno != ENOENT) {
			err = -errno;
			goto out;
		}
		if (n + cnt > cap) {
			size_t ncap = (n + cnt) * 2;
			void *ne = realloc(e, ncap * sizeof(*e));

			if (!ne) {
				err = -ENOMEM;
				goto out;
			}
			e = ne;
			cap = ncap;
		}
		for (__u32 i = 0; i < cnt; i++) {
			e[n].key = keys[i];
			e[n].val = vals[i];
			n++;
		}
		if (r)
			break;	/* ENOENT: that was the last batch */
		in = outb;
		first = false;
	}
out:
	free(keys);
	free(vals);
	if (err) {
		free(e);
		return err;
	}
	*out = e;
	*n_out = n;
	return 0;
}

/* Append the holder map's entries to hs[*nh..cap), skipping sockets already there. */
static void read_holders(struct collector *c, struct dmt_holder *hs, size_t *nh, size_t cap)
{
	int fd = bpf_map__fd(c->skel->maps.holders);
	size_t before = *nh;
	__u64 key, next;

	for (int r = bpf_map_get_next_key(fd, NULL, &next); !r && *nh < cap;
	     r = bpf_map_get_next_key(fd, &key, &next)) {
		bool dup = false;

		key = next;
		for (size_t i = 0; i < before && !dup; i++)
			dup = hs[i].sk == key;
		if (!dup && !bpf_map_lookup_elem(fd, &key, &hs[*nh]))
			(*nh)++;
	}
}

/*
 * The holders' cgroup paths (issue 24): ids to paths by a walk of the
 * cgroup2 mount, cached; a cgroup gone before it keeps its id only.
 */
int holder_cgroups_open(struct collector *c)
{
	/* a container that mounts the host's cgroup2 elsewhere names it */
	const char *root = getenv("DEVMEMTOP_CGROUP_ROOT");

	c->cgpaths = cgpath__new(root && *root ? root : NULL);
	if (!c->cgpaths)
		return -ENOMEM;
	if (!cgpath__root(c->cgpaths)[0])
		coll_log(c, 1, "holders: no cgroup2 tree at %s: cgroup paths unknown%s",
			 root && *root ? root : "/sys/fs/cgroup(/unified)",
			 root && *root ? "" : " (DEVMEMTOP_CGROUP_ROOT names one)");
	return 0;
}

static int holder_cgroups(struct collector *c)
{
	struct cgpath_stats a, b;
	int err;

	if (!c->tok_agg.n_holders)
		return 0;
	if (!c->cgpaths && holder_cgroups_open(c))
		return -ENOMEM;
	cgpath__stats(c->cgpaths, &a);
	err = cgpath__fill_holders(c->cgpaths, c->tok_agg.holders, c->tok_agg.n_holders);
	cgpath__stats(c->cgpaths, &b);
	/*
	 * -v: once per cgroup not found (ids are cached, a not-found one for
	 * CGPATH_NEG_TTL_NS); not kept in the probe log, which must not grow
	 * with the run
	 */
	if (b.not_found > a.not_found && cgpath__root(c->cgpaths)[0] && c->opts.log &&
	    c->opts.verbosity >= 1)
		c->opts.log(1, "holders: %llu cgroup id(s) not found in %s (%llu directories "
			    "walked): path unknown\n",
			    (unsigned long long)(b.not_found - a.not_found),
			    cgpath__root(c->cgpaths), (unsigned long long)(b.dirs - a.dirs));
	/* not "not found": the walk did not see the whole tree; looked for again */
	if (b.cut_short > a.cut_short && c->opts.log && c->opts.verbosity >= 1)
		c->opts.log(1, "holders: %llu cgroup id(s) not found before the walk of %s "
			    "stopped at its bound (%d directories, depth %d): path unknown, "
			    "looked for again in %llu s\n",
			    (unsigned long long)(b.cut_short - a.cut_short),
			    cgpath__root(c->cgpaths), CGPATH_MAX_WALK, CGPATH_MAX_DEPTH,
			    CGPATH_NEG_TTL_NS / 1000000000ULL);
	return err;
}

/* this snapshot's holders (c->tok_agg), with their cgroup paths */
static int holders_out(struct collector *c, struct dmt_snapshot *s)
{
	int err = holder_cgroups(c);

	if (err || !c->tok_agg.n_holders)
		return err;
	s->holders = malloc(c->tok_agg.n_holders * sizeof(*s->holders));
	if (!s->holders)
		return -ENOMEM;
	memcpy(s->holders, c->tok_agg.holders, c->tok_agg.n_holders * sizeof(*s->holders));
	s->n_holders = c->tok_agg.n_holders;
	return 0;
}

/*
 * c->tok_agg from the tokens as they are now: the kernel's own xarrays
 * (light mode) or the token map. 0 with nothing aggregated when no token
 * source is loaded.
 */
static int tokens_aggregate(struct collector *c, uint64_t ts)
{
	struct dmt_holder *hs = NULL;
	struct dmt_tok_entry *toks = NULL;
	size_t n = 0, nh = 0;
	int err;

	tok_agg__free(&c->tok_agg);
	c->tok_read_ns = now_mono_ns();
	if (c->ar.tok_iter)	/* light mode: the kernel's own xarrays, now */
		return tokiter_aggregate(c, ts, c->nl_no_devmem);
	if (!c->ar.hook[DMT_H_TOK_DESTROY].loaded)
		return 0;
	/*
	 * The holders before and after the tokens: a socket destroyed while
	 * the token map was read is in the first pass, one that got its first
	 * token meanwhile in the second, so every token read has its holder.
	 */
	hs = calloc(2 * DMT_MAX_HOLDERS, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	read_holders(c, hs, &nh, DMT_MAX_HOLDERS);
	err = read_token_map(c, &toks, &n);
	if (!err) {
		read_holders(c, hs, &nh, 2 * DMT_MAX_HOLDERS);
		err = tokens__aggregate(toks, n, hs, nh, ts, &c->tok_agg);
	}
	free(toks);
	free(hs);
	return err;
}

/*
 * Runs of the frag token programs the kernel skipped. A program is not run
 * where it would nest in a run of itself on the same CPU: two threads on
 * one CPU in SO_DEVMEM_DONTNEED, one preempted inside the program, is
 * enough (seen in the 7.3 lab's race scenario: a twentieth of the DONTNEED
 * calls went unseen). The kernel counts those misses whether or not BPF
 * stats are on; a token event missed makes the binding's token figures
 * wrong, so they are read every snapshot (a few programs, tracked modes
 * only).
 */
static void read_tok_misses(struct collector *c)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		struct prog_state *st = &c->ps[i];
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		enum dmt_hook_group g = dmt_hooks[i].group;

		if ((g != DMT_HG_TOK_TP && g != DMT_HG_TOK_FENTRY && g != DMT_HG_TOK) ||
		    !st->ran || !c->ar.hook[i].attached)
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(st->prog), &info, &len))
			st->misses = info.recursion_misses;
		sum += st->misses;
	}
	if (sum > c->tok_misses)
		coll_log(c, 1, "frag token programs: %llu runs skipped by the kernel (nested on a CPU): "
			 "token figures unknown from now on", (unsigned long long)sum);
	c->tok_misses = sum;
}

int read_tokens(struct collector *c, struct dmt_snapshot *s)
{
	__u32 zero = 0;
	int err;

	if (!c->ar.tok_iter && dmt_tokens_tracked(&c->ar))
		read_tok_misses(c);
	memset(&c->tok_stats, 0, sizeof(c->tok_stats));
	bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.tok_stats), &zero, &c->tok_stats);
	tok_cost_from_bpf(&s->tok_cost, &c->tok_stats);
	err = tokens_aggregate(c, s->ts_ns);
	if (!err && (c->ar.tok_iter || c->ar.hook[DMT_H_TOK_DESTROY].loaded))
		err = holders_out(c, s);
	return err;
}

/*
 * What read_binding_map leaves for read_bindings: per s->bindings[i] its
 * address and what binding_held needs of the map value; the freed ones to
 * forget once the snapshot is made, and those freed after this snapshot's
 * tokens were read (their held figures are made again from tokens read
 * after the free).
 */
struct binding_track {
	uint32_t flags;
	uint64_t tok_lost;
	bool freed_late;
};

struct binding_reads {
	struct snapbuild_addrs addrs;
	struct binding_track *track;
	size_t n_track, n_late;
	uint32_t gone[DMT_MAX_BINDINGS];
	size_t n_gone;
};

/*
 * Held tokens and niovs of a binding the tracker may know: exact only when
 * it saw the binding created (hence every token since) and lost none.
 */
static void binding_held(const struct collector *c, struct dmt_binding_snap *b,
			 const struct binding_track *v)
{
	const struct tok_binding_held *h;

	b->held_tokens = b->held_by_sockets = -1;
	b->held_why = DMT_HELD_NO_REASON;
	if (c->ar.tok_iter) {
		/* the kernel's state: exact whenever the binding was made */
		b->held_why = tokiter_held_why(c, b->id);
		if (b->held_why)
			return;
		h = tok_agg__binding(&c->tok_agg, b->id);
		b->held_tokens = h ? (int64_t)h->tokens : 0;
		b->held_by_sockets = h ? (int64_t)h->niovs : 0;
		return;
	}
	if (!dmt_tokens_tracked(&c->ar))
		return;	/* the availability says why */
	if (!v || !(v->flags & DMT_BIND_SEEN_CREATE)) {
		b->held_why = DMT_HELD_ATTACHED_LATE;
		return;
	}
	/*
	 * The fallback forgets a destroyed socket's tokens only through its
	 * holder entry: a socket the holder map had no room for keeps them.
	 */
	if (v->tok_lost || (c->ar.tok_fallback && c->tok_stats.holders_full)) {
		b->held_why = DMT_HELD_MAP_FULL;
		return;
	}
	if (c->tok_misses) {
		b->held_why = DMT_HELD_MISSED_RUNS;
		return;
	}
	if (c->ar.tok_fallback && (c->tok_stats.dontneed_mismatch || c->tok_stats.no_socket)) {
		b->held_why = c->tok_stats.no_socket ? DMT_HELD_NO_SOCKET :
			      DMT_HELD_DONTNEED_MISMATCH;
		return;
	}
	h = tok_agg__binding(&c->tok_agg, b->id);
	b->held_tokens = h ? (int64_t)h->tokens : 0;
	b->held_by_sockets = h ? (int64_t)h->niovs : 0;
}

/*
 * Light mode's socket walk sees the sockets of devmemtop's network
 * namespace only, and a socket receives from a device of its own: a binding
 * on a device of another namespace (netns: the binding walk's or one of its
 * pools') would read 0 held, so its held figures are unknown.
 */
static void held_other_netns(const struct collector *c, struct dmt_binding_snap *b,
			     uint32_t netns)
{
	if (!c->ar.tok_iter || !netns || !c->netns || netns == c->netns ||
	    b->held_why == DMT_HELD_ITER_INCOMPLETE)
		return;
	b->held_tokens = b->held_by_sockets = -1;
	b->held_why = DMT_HELD_OTHER_NETNS;
}

static int read_binding_map(struct collector *c, struct dmt_snapshot *s,
			    struct binding_reads *r)
{
	int fd = bpf_map__fd(c->skel->maps.bindings);
	struct dmt_binding v;
	__u32 key, next;
	int err = 0;

	if (!c->ar.have_devmem)
		return 0;
	for (int rc = bpf_map_get_next_key(fd, NULL, &next); !rc;
	     rc = bpf_map_get_next_key(fd, &key, &next)) {
		struct binding_track *t;
		struct dmt_binding_snap *b;

		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		/*
		 * The BPF side sets FREED after the final figures; a copy that
		 * read a figure before the flag may predate it: read it again
		 * (once per binding's life)
		 */
		if ((v.flags & DMT_BIND_FREED) && bpf_map_lookup_elem(fd, &key, &v))
			continue;
		b = snapbuild_add_binding(s, &v);
		if (!b || snapbuild_addr_set(&r->addrs, s->n_bindings - 1, v.addr)) {
			err = -ENOMEM;
			break;
		}
		t = realloc(r->track, s->n_bindings * sizeof(*t));
		if (!t) {
			err = -ENOMEM;
			break;
		}
		r->track = t;
		r->n_track = s->n_bindings;
		/*
		 * Freed after the tokens were read: a socket that closed in
		 * between left its tokens in them, and a freed binding is
		 * listed once, so its held figures would stay wrong
		 */
		t[s->n_bindings - 1] = (struct binding_track){
			v.flags, v.tok_lost, !b->alive && v.free_ns >= c->tok_read_ns };
		r->n_late += !b->alive && v.free_ns >= c->tok_read_ns;
		/* a freed binding is reported in this snapshot, then forgotten */
		if (!b->alive && r->n_gone < DMT_MAX_BINDINGS)
			r->gone[r->n_gone++] = key;
	}
	return err;
}

int read_bindings(struct collector *c, struct dmt_snapshot *s)
{
	struct binding_reads br = {}, *r = &br;
	bool in_pools_known = c->ar.hook[DMT_H_PP_HOLD].attached || c->ar.light || c->ar.devmem;
	/* the devmem tracepoints' free_niovs win over the walk, as in the full mode */
	enum dmt_attach_mode walk_mode = c->ar.devmem && attached(c, DMT_H_DM_ALLOC) &&
					 attached(c, DMT_H_DM_CREATE) ? DMT_MODE_DEVMEM_TP : c->mode;
	struct snapbuild_addrs *addrs = &r->addrs;
	int err = 0;

	if (!c->ar.have_devmem)
		return 0;
	err = read_binding_map(c, s, r);
	for (size_t i = 0; !err && i < s->n_bindings; i++)
		binding_held(c, &s->bindings[i], i < r->n_track ? &r->track[i] : NULL);
	/*
	 * A binding freed after the tokens were read: its held figures from
	 * tokens read after its free; the live ones keep the first read, which
	 * their token counters (read with them) add up to.
	 */
	if (!err && r->n_late)
		err = tokens_aggregate(c, s->ts_ns);
	for (size_t i = 0; !err && r->n_late && i < r->n_track; i++)
		if (r->track[i].freed_late)
			binding_held(c, &s->bindings[i], &r->track[i]);
	if (!err)
		err = snapbuild_link_pools(s, addrs);
	for (size_t i = 0; !err && i < s->n_bindings; i++) {
		struct dmt_binding_snap *b = &s->bindings[i];
		uint64_t addr = i < addrs->n ? addrs->v[i] : 0;
		struct dmt_walk w = {};

		if (b->alive && addr && !walk_binding(c, addr, &w) && w.id == b->id) {
			snapbuild_apply_walk(b, &w, walk_mode);
			held_other_netns(c, b, w.netns);
		}
		snapbuild_finish_binding(b, in_pools_known);
		if (b->held_tokens < 0 && !b->held_why)
			binding_held(c, b, NULL);
	}
	/* a binding the walk did not reach: its pools' namespace */
	for (size_t i = 0; !err && i < s->n_pools; i++)
		for (size_t j = 0; s->pools[i].binding_id && j < s->n_bindings; j++)
			if (s->bindings[j].id == s->pools[i].binding_id)
				held_other_netns(c, &s->bindings[j], s->pools[i].netns);
	if (!err && c->ar.light)
		snapbuild_light_niov_frees(s);
	if (!err)
		err = binding_memory__apply(c->bindings, s);
	/* only a snapshot that is made reports them: else the next one does */
	for (size_t i = 0; !err && i < r->n_gone; i++)
		bpf_map_delete_elem(bpf_map__fd(c->skel->maps.bindings), &r->gone[i]);
	free(br.addrs.v);
	free(br.track);
	return err;
}

/* kernel.bpf_stats_enabled, from a file kept open: no open/stdio per snapshot */
static int bpf_stats_sysctl(struct collector *c)
{
	char buf[16];
	ssize_t n;

	if (c->stats_sysctl_fd < 0)
		return 0;
	n = pread(c->stats_sysctl_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return atoi(buf) != 0;
}

/*
 * Run time and count per program. Only programs that were ever attached
 * can have run: the others are listed without a syscall each (light mode
 * loads every program and attaches a few). The kernel counts both only
 * while kernel.bpf_stats_enabled is on (or a BPF_ENABLE_STATS fd is
 * held): with stats off, as on most hosts, the values read last stand, so
 * a snapshot reads them while stats are on and once after they went off,
 * not a syscall per program every snapshot. (Stats switched on and off
 * again between two snapshots leave their runs to the next read while on:
 * the counts are cumulative, late but not lost.)
 */
void read_prog_stats(struct collector *c, struct dmt_snapshot *s)
{
	bool fresh;

	s->bpf_stats_enabled = bpf_stats_sysctl(c) || c->stats_fd >= 0;
	fresh = s->bpf_stats_enabled || c->stats_were_on;
	c->stats_were_on = s->bpf_stats_enabled;
	s->progs = calloc(DMT_H__COUNT, sizeof(*s->progs));
	if (!s->progs)
		return;
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		struct prog_state *st = &c->ps[i];
		struct dmt_prog_stat *ps = &s->progs[s->n_progs];
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!c->ar.hook[i].loaded || dmt_hooks[i].kind == DMT_HK_RUN)
			continue;
		snprintf(ps->name, sizeof(ps->name), "%s", dmt_hooks[i].name);
		ps->attached = c->ar.hook[i].attached;
		if (st->ran && fresh &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(st->prog), &info, &len)) {
			st->run_time_ns = info.run_time_ns;
			st->run_cnt = info.run_cnt;
		}
		ps->run_time_ns = st->run_time_ns;
		ps->run_cnt = st->run_cnt;
		s->n_progs++;
	}
}

/* Kernel-wide counters, summed over the CPUs. */
void read_globals(struct collector *c, struct dmt_snapshot *s)
{
	uint64_t sum[DMT_CNT__MAX];

	counters_read(c, sum);
	s->dontneed_tokens = sum[DMT_CNT_DONTNEED_TOKENS];
	s->dontneed_calls = sum[DMT_CNT_DONTNEED_CALLS];
	s->provider_calls = sum[DMT_CNT_PROVIDER_CALLS];
	s->ringbuf_drops = sum[DMT_CNT_RB_DROPS];
	s->map_full = sum[DMT_CNT_POOL_MAP_FULL] + sum[DMT_CNT_BIND_MAP_FULL] +
		      sum[DMT_CNT_ZCRX_MAP_FULL];
	s->lat_missed = sum[DMT_CNT_LAT_MISSED];
	s->tx_no_binding = sum[DMT_CNT_TX_NO_BINDING];
	s->tx_ref_lost = sum[DMT_CNT_TX_REF_LOST];
}
