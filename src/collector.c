// SPDX-License-Identifier: GPL-2.0
/*
 * Collector: run-time probes, load/attach, and map -> snapshot.
 *
 * Lifecycle follows libbpf-tools: probe -> open -> set autoload and rodata
 * -> load -> attach each program on its own, so one hook that cannot attach
 * makes its metrics "unavailable: <reason>" instead of failing the tool.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "nl.h"
#include "util.h"
#include "devmemtop.skel.h"

enum probe_kind {
	PK_TP_BTF,
	PK_FENTRY,
	PK_FEXIT,
	PK_RUN,		/* run on demand with BPF_PROG_TEST_RUN, never attached */
};

enum prog_group {
	PG_POOL,	/* page_pool tracepoints: the base */
	PG_FENTRY,	/* devmem allocator fentry/fexit */
	PG_DEVMEM_TP,	/* devmem tracepoints (our series) */
	PG_WALK,	/* binding walk */
	PG_TOK_TP,	/* frag token tracepoints (kernel-patches/0009) */
	PG_TOK_FENTRY,	/* frag tokens: recvmsg, cmsg writer, DONTNEED */
	PG_TOK,		/* frag tokens: socket destroy (both sources) */
};

struct prog_desc {
	const char *name;	/* program name in the skeleton */
	enum probe_kind kind;
	const char *target;	/* tracepoint or function */
	enum prog_group group;
};

static const struct prog_desc progs[] = {
	{ "pp_hold",		PK_TP_BTF, "page_pool_state_hold",	PG_POOL },
	{ "pp_release",		PK_TP_BTF, "page_pool_state_release",	PG_POOL },
	{ "pp_destroy",		PK_TP_BTF, "page_pool_release",		PG_POOL },
	{ "pp_nid",		PK_TP_BTF, "page_pool_update_nid",	PG_POOL },
	{ "walk_binding",	PK_RUN,    "net_devmem_dmabuf_binding",	PG_WALK },
	{ "bind_exit",		PK_FEXIT,  "net_devmem_bind_dmabuf",	PG_FENTRY },
	{ "unbind_entry",	PK_FENTRY, "net_devmem_unbind_dmabuf",	PG_FENTRY },
	{ "binding_free_entry",	PK_FENTRY, "__net_devmem_dmabuf_binding_free", PG_FENTRY },
	{ "mp_alloc_entry",	PK_FENTRY, "mp_dmabuf_devmem_alloc_netmems", PG_FENTRY },
	{ "mp_alloc_exit",	PK_FEXIT,  "mp_dmabuf_devmem_alloc_netmems", PG_FENTRY },
	{ "mp_release_entry",	PK_FENTRY, "mp_dmabuf_devmem_release_page", PG_FENTRY },
	{ "mp_release_exit",	PK_FEXIT,  "mp_dmabuf_devmem_release_page", PG_FENTRY },
	{ "dontneed_exit",	PK_FEXIT,  "sock_devmem_dontneed",	PG_FENTRY },
	{ "dm_create",		PK_TP_BTF, "devmem_binding_create",	PG_DEVMEM_TP },
	{ "dm_unbind",		PK_TP_BTF, "devmem_binding_unbind",	PG_DEVMEM_TP },
	{ "dm_free",		PK_TP_BTF, "devmem_binding_free",	PG_DEVMEM_TP },
	{ "dm_alloc",		PK_TP_BTF, "devmem_alloc",		PG_DEVMEM_TP },
	{ "dm_alloc_fail",	PK_TP_BTF, "devmem_alloc_fail",		PG_DEVMEM_TP },
	{ "dm_niov_free",	PK_TP_BTF, "devmem_niov_free",		PG_DEVMEM_TP },
	{ "dm_dontneed",	PK_TP_BTF, "devmem_dontneed",		PG_DEVMEM_TP },
	{ "tok_tp_recv",	PK_TP_BTF, "devmem_token_recv",		PG_TOK_TP },
	{ "tok_tp_dontneed",	PK_TP_BTF, "devmem_token_dontneed",	PG_TOK_TP },
	{ "tok_tp_release",	PK_TP_BTF, "devmem_token_release",	PG_TOK_TP },
	{ "tok_destroy",	PK_TP_BTF, "tcp_destroy_sock",		PG_TOK },
	{ "tok_recvmsg_entry",	PK_FENTRY, "tcp_recvmsg",		PG_TOK_FENTRY },
	{ "tok_recvmsg_exit",	PK_FEXIT,  "tcp_recvmsg",		PG_TOK_FENTRY },
	{ "tok_cmsg_exit",	PK_FEXIT,  "put_cmsg_notrunc",		PG_TOK_FENTRY },
	{ "tok_dontneed_entry",	PK_FENTRY, "sock_devmem_dontneed",	PG_TOK_FENTRY },
	{ "tok_dontneed_exit",	PK_FEXIT,  "sock_devmem_dontneed",	PG_TOK_FENTRY },
};

#define N_PROGS ARRAY_SIZE(progs)

struct prog_state {
	struct bpf_program *prog;
	struct bpf_link *link;
	bool wanted;		/* probe said it can work */
	bool loaded;
	bool attached;
	char why[160];		/* why not wanted / not attached */
};

/* What we remember of a pool between snapshots. */
struct pool_prev {
	uint64_t addr;
	uint64_t holds;
	uint64_t releases;
	uint64_t ts_ns;
};

struct collector {
	struct collector_opts opts;
	struct devmemtop *skel;
	struct btf *vmlinux;
	struct ring_buffer *rb;
	struct dmt_pool *slots;		/* pool_slots, mmap()ed */
	size_t slots_len;
	struct netdev_nl *nl;
	char nl_why[128];
	int stats_fd;
	bool bpf_stats;
	enum dmt_attach_mode mode;
	struct prog_state ps[N_PROGS];
	bool have_devmem;	/* kernel has struct net_devmem_dmabuf_binding */
	uint64_t devmem_alloc_fn;	/* mp_dmabuf_devmem_alloc_netmems */
	uint64_t io_uring_alloc_fn;	/* io_pp_zc_alloc_netmems */
	bool tok_fallback;	/* tokens from the cmsg writer, not 0009's tracepoints */
	struct tok_agg tok_agg;		/* this snapshot's token counts */
	struct dmt_tok_stats tok_stats;

	struct pool_prev *prev;
	size_t n_prev;
	uint64_t last_ts;
	uint64_t seq;

	collector_event_fn ev_cb;
	void *ev_ctx;

	char **log;
	size_t n_log;
};

static int rb_event(void *ctx, void *data, size_t len);

static const char *const metric_names[DMT_M__COUNT] = {
	[DMT_M_POOL_HOLDS]		= "pool_holds",
	[DMT_M_POOL_RELEASES]		= "pool_releases",
	[DMT_M_POOL_INFLIGHT]		= "pool_inflight",
	[DMT_M_POOL_REFILL]		= "pool_refill_batch",
	[DMT_M_POOL_DESTROY]		= "pool_destroy",
	[DMT_M_POOL_NID]		= "pool_nid",
	[DMT_M_BIND_LIFECYCLE]		= "binding_lifecycle",
	[DMT_M_BIND_OCCUPANCY]		= "binding_occupancy",
	[DMT_M_BIND_IN_POOLS]		= "binding_in_pools",
	[DMT_M_BIND_HELD_BY_SOCKETS]	= "binding_held_by_sockets",
	[DMT_M_BIND_ALLOC_LATENCY]	= "binding_alloc_latency",
	[DMT_M_BIND_FREE_LATENCY]	= "binding_free_latency",
	[DMT_M_BIND_ALLOC_FAIL]		= "binding_alloc_failures",
	[DMT_M_BIND_PROVIDER_CALLS]	= "binding_provider_calls",
	[DMT_M_BIND_LEAKS]		= "binding_leaks",
	[DMT_M_DONTNEED_TOKENS]		= "dontneed_tokens",
	[DMT_M_NETLINK]			= "netlink_page_pools",
	[DMT_M_RECVMSG_TOKENS]		= "recvmsg_tokens",
	[DMT_M_DONTNEED_COST]		= "dontneed_cost",
};

const char *dmt_metric_name(enum dmt_metric m)
{
	return m < DMT_M__COUNT ? metric_names[m] : "unknown";
}

const char *dmt_mode_name(enum dmt_attach_mode m)
{
	switch (m) {
	case DMT_MODE_DEVMEM_TP:
		return "devmem-tracepoints";
	case DMT_MODE_FENTRY:
		return "fentry";
	case DMT_MODE_TP_ONLY:
		return "tracepoint-only";
	}
	return "unknown";
}

const char *dmt_kind_name(enum dmt_pool_kind k)
{
	static const char *const names[] = { "pages", "devmem", "io_uring", "other" };

	return k < ARRAY_SIZE(names) ? names[k] : "unknown";
}

const char *dmt_pool_state_name(enum dmt_pool_state s)
{
	static const char *const names[] = { "alive", "zombie", "destroyed" };

	return s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *dmt_attr_src_name(enum dmt_attr_src s)
{
	static const char *const names[] = { "none", "bpf-netdev", "bpf-napi", "netlink",
					     "bpf-device" };

	return s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

static void coll_log(struct collector *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void coll_log(struct collector *c, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	char **nl;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nl = realloc(c->log, (c->n_log + 2) * sizeof(*nl));
	if (nl) {
		c->log = nl;
		c->log[c->n_log] = strdup(buf);
		if (c->log[c->n_log])
			c->n_log++;
		c->log[c->n_log] = NULL;
	}
	if (c->opts.log && level <= c->opts.verbosity)
		c->opts.log(level, "%s\n", buf);
}

const char *const *collector__probe_log(const struct collector *c)
{
	static const char *const empty[] = { NULL };

	return c->log ? (const char *const *)c->log : empty;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && dmt_verbosity >= 2)
		return vfprintf(stderr, fmt, ap);
	if (dmt_verbosity >= 3)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* ---- probes ------------------------------------------------------------- */

static bool btf_has(const struct btf *btf, const char *name, int kind)
{
	return btf__find_by_name_kind(btf, name, kind) >= 0;
}

/*
 * Load (and attach) a two-instruction tracing program on func: the only
 * way to know whether this kernel lets us use fentry/fexit there (LSMs,
 * lockdown and sandboxes refuse with EPERM, notrace functions with EBUSY
 * or EINVAL).
 */
static int probe_tracing(const struct btf *btf, const char *func, bool fexit, char *why,
			 size_t len)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	int id, fd, lfd, err;

	id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	if (id < 0) {
		snprintf(why, len, "function %s not in kernel BTF", func);
		return -ENOENT;
	}
	o.expected_attach_type = fexit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY;
	o.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, ARRAY_SIZE(insns), &o);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "fentry/fexit load refused: %s", strerror(-err));
		return err;
	}
	lfd = bpf_raw_tracepoint_open(NULL, fd);
	if (lfd < 0) {
		err = -errno;
		close(fd);
		snprintf(why, len, "%s attach to %s failed: %s", fexit ? "fexit" : "fentry",
			 func, strerror(-err));
		return err;
	}
	close(lfd);
	close(fd);
	return 0;
}

static void probe_all(struct collector *c)
{
	char tp_name[128];
	int fentry_err = 0;
	char fentry_why[160] = "";

	for (size_t i = 0; i < N_PROGS; i++) {
		const struct prog_desc *d = &progs[i];
		struct prog_state *s = &c->ps[i];
		int err = 0;

		s->why[0] = '\0';
		switch (d->kind) {
		case PK_TP_BTF:
			snprintf(tp_name, sizeof(tp_name), "btf_trace_%s", d->target);
			if (!btf_has(c->vmlinux, tp_name, BTF_KIND_TYPEDEF)) {
				snprintf(s->why, sizeof(s->why), "tracepoint %s not in this kernel",
					 d->target);
				err = -ENOENT;
			}
			break;
		case PK_RUN:
			if (!c->have_devmem) {
				snprintf(s->why, sizeof(s->why),
					 "kernel has no devmem (CONFIG_NET_DEVMEM)");
				err = -ENOENT;
			}
			break;
		case PK_FENTRY:
		case PK_FEXIT:
			if (!c->have_devmem) {
				snprintf(s->why, sizeof(s->why),
					 "kernel has no devmem (CONFIG_NET_DEVMEM)");
				err = -ENOENT;
			} else if (fentry_err == -EPERM) {
				/* refused once is refused everywhere: don't ask again */
				snprintf(s->why, sizeof(s->why), "%s", fentry_why);
				err = -EPERM;
			} else {
				err = probe_tracing(c->vmlinux, d->target, d->kind == PK_FEXIT,
						    s->why, sizeof(s->why));
				if (err == -EPERM) {
					fentry_err = err;
					snprintf(fentry_why, sizeof(fentry_why), "%s", s->why);
				}
			}
			break;
		}
		s->wanted = !err;
		coll_log(c, 1, "probe %-20s %-7s %-34s %s", d->name,
		     d->kind == PK_TP_BTF ? "tp_btf" : d->kind == PK_FENTRY ? "fentry" :
		     d->kind == PK_FEXIT ? "fexit" : "run",
		     d->target, err ? s->why : "ok");
	}
}

/*
 * Where the kernel has the devmem tracepoints, they give binding lifecycle,
 * allocation counts and DONTNEED tokens without fentry: the fentry/fexit
 * programs for the same facts stay unloaded (they would count twice).
 * fentry remains for what only it gives: latency.
 */
static void prefer_devmem_tracepoints(struct collector *c)
{
	static const char *const covered[] = {
		"bind_exit", "unbind_entry", "binding_free_entry", "dontneed_exit",
	};

	for (size_t i = 0; i < N_PROGS; i++)
		if (progs[i].group == PG_DEVMEM_TP && !c->ps[i].wanted)
			return;
	for (size_t i = 0; i < N_PROGS; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(covered); k++) {
			if (strcmp(progs[i].name, covered[k]) || !c->ps[i].wanted)
				continue;
			c->ps[i].wanted = false;
			snprintf(c->ps[i].why, sizeof(c->ps[i].why),
				 "not needed: devmem tracepoints cover it");
			coll_log(c, 1, "skip  %-20s covered by the devmem tracepoints", progs[i].name);
		}
	}
}

static bool group_wanted(const struct collector *c, enum prog_group g)
{
	for (size_t i = 0; i < N_PROGS; i++)
		if (progs[i].group == g && !c->ps[i].wanted)
			return false;
	return true;
}

static void unwant(struct collector *c, const char *name, const char *why)
{
	for (size_t i = 0; i < N_PROGS; i++) {
		if (strcmp(progs[i].name, name) || !c->ps[i].wanted)
			continue;
		c->ps[i].wanted = false;
		snprintf(c->ps[i].why, sizeof(c->ps[i].why), "%s", why);
		coll_log(c, 1, "skip  %-20s %s", name, why);
	}
}

/*
 * Frag tokens come from 0009's tracepoints where the kernel has them, else
 * from the cmsg writer (fexit/put_cmsg_notrunc), which only makes sense
 * with the DONTNEED reader and the recvmsg socket stash next to it: a
 * tracker that sees tokens go out but not come back would only fill up.
 */
static void choose_token_source(struct collector *c)
{
	static const char *const need[] = { "tok_recvmsg_entry", "tok_dontneed_entry" };

	if (group_wanted(c, PG_TOK_TP)) {
		c->tok_fallback = false;
		unwant(c, "tok_cmsg_exit", "not needed: devmem_token_* tracepoints cover it");
		return;
	}
	c->tok_fallback = true;
	unwant(c, "tok_tp_recv", "fallback in use: not every devmem_token_* tracepoint is here");
	unwant(c, "tok_tp_dontneed", "fallback in use: not every devmem_token_* tracepoint is here");
	unwant(c, "tok_tp_release", "fallback in use: not every devmem_token_* tracepoint is here");
	for (size_t k = 0; k < ARRAY_SIZE(need); k++) {
		const struct prog_state *s = NULL;

		for (size_t i = 0; i < N_PROGS; i++)
			if (!strcmp(progs[i].name, need[k]))
				s = &c->ps[i];
		if (s && !s->wanted) {
			char why[160];

			snprintf(why, sizeof(why), "needs %s: %.120s", need[k], s->why);
			unwant(c, "tok_cmsg_exit", why);
		}
	}
}

/* ---- kernel facts ------------------------------------------------------- */

static void read_kallsyms(struct collector *c)
{
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "mp_dmabuf_devmem_alloc_netmems"))
			c->devmem_alloc_fn = addr;
		else if (!strcmp(name, "io_pp_zc_alloc_netmems"))
			c->io_uring_alloc_fn = addr;
	}
	fclose(f);
	coll_log(c, 2, "kallsyms: mp_dmabuf_devmem_alloc_netmems=%#llx io_pp_zc_alloc_netmems=%#llx",
	     (unsigned long long)c->devmem_alloc_fn, (unsigned long long)c->io_uring_alloc_fn);
}

/* Does __net_devmem_dmabuf_binding_free() take a work_struct? */
static bool binding_free_takes_work(const struct btf *btf)
{
	const struct btf_type *t;
	const struct btf_param *p;
	int id = btf__find_by_name_kind(btf, "__net_devmem_dmabuf_binding_free",
					BTF_KIND_FUNC);

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type);	/* FUNC_PROTO */
	if (!t || btf_vlen(t) < 1)
		return false;
	p = btf_params(t);
	t = btf__type_by_id(btf, p[0].type);
	while (t && (btf_is_ptr(t) || btf_is_const(t) || btf_is_volatile(t) ||
		     btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_struct(t) &&
	       !strcmp(btf__name_by_offset(btf, t->name_off), "work_struct");
}

/* ---- load / attach ------------------------------------------------------ */

/*
 * The kernel BTF: /sys/kernel/btf/vmlinux, or DEVMEMTOP_KERNEL_BTF (a raw
 * BTF or ELF file) for kernels whose BTF lives elsewhere, and for tests.
 */
static const char *kernel_btf_path(void)
{
	const char *p = getenv("DEVMEMTOP_KERNEL_BTF");

	return p && *p ? p : NULL;
}


static int open_and_load(struct collector *c)
{
	int err;

	for (int attempt = 0; attempt < 3; attempt++) {
		LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = kernel_btf_path());

		c->skel = devmemtop__open_opts(&oo);
		if (!c->skel)
			return -errno ? -errno : -ENOMEM;
		c->skel->rodata->devmem_alloc_fn = c->devmem_alloc_fn;
		c->skel->rodata->io_uring_alloc_fn = c->io_uring_alloc_fn;
		c->skel->rodata->binding_free_takes_work = binding_free_takes_work(c->vmlinux);
		c->skel->rodata->use_devmem_tp = false;
		c->skel->rodata->tok_fallback = c->tok_fallback;
		for (size_t i = 0; i < N_PROGS; i++) {
			c->ps[i].prog = bpf_object__find_program_by_name(c->skel->obj,
									 progs[i].name);
			if (!c->ps[i].prog)
				return -ENOENT;
			bpf_program__set_autoload(c->ps[i].prog, c->ps[i].wanted);
			if (progs[i].group == PG_DEVMEM_TP && c->ps[i].wanted)
				c->skel->rodata->use_devmem_tp = true;
		}
		err = devmemtop__load(c->skel);
		if (!err)
			return 0;
		devmemtop__destroy(c->skel);
		c->skel = NULL;
		/*
		 * Something the probes accepted failed the verifier or a CO-RE
		 * relocation. Drop the optional groups one at a time, saying so.
		 */
		enum prog_group drop = attempt == 0 ? PG_FENTRY : PG_DEVMEM_TP;
		bool dropped = false;

		for (size_t i = 0; i < N_PROGS; i++) {
			enum prog_group g = progs[i].group;

			if (g != drop && !(attempt == 0 && g == PG_TOK_FENTRY) &&
			    !(attempt == 1 && (g == PG_WALK || g == PG_TOK_TP || g == PG_TOK)))
				continue;
			if (!c->ps[i].wanted)
				continue;
			c->ps[i].wanted = false;
			snprintf(c->ps[i].why, sizeof(c->ps[i].why),
				 "BPF load failed (%s); run with -vv for the verifier log",
				 strerror(-err));
			dropped = true;
		}
		coll_log(c, 1, "load failed (%s), retrying without %s programs", strerror(-err),
		     drop == PG_FENTRY ? "fentry/fexit" : "devmem tracepoint and walk");
		if (!dropped && attempt > 0)
			break;
	}
	return err;
}

static void attach_all(struct collector *c)
{
	for (size_t i = 0; i < N_PROGS; i++) {
		struct prog_state *s = &c->ps[i];

		s->loaded = s->wanted;
		if (!s->wanted || progs[i].kind == PK_RUN)
			continue;
		s->link = bpf_program__attach(s->prog);
		if (!s->link) {
			snprintf(s->why, sizeof(s->why), "attach %s failed: %s", progs[i].target,
				 strerror(errno));
			coll_log(c, 1, "attach %-20s failed: %s", progs[i].name, strerror(errno));
			continue;
		}
		s->attached = true;
	}
}

static const struct prog_state *ps_by_name(const struct collector *c, const char *name)
{
	for (size_t i = 0; i < N_PROGS; i++)
		if (!strcmp(progs[i].name, name))
			return &c->ps[i];
	return NULL;
}

static bool attached(const struct collector *c, const char *name)
{
	const struct prog_state *s = ps_by_name(c, name);

	return s && s->attached;
}

static const char *why_not(const struct collector *c, const char *name)
{
	const struct prog_state *s = ps_by_name(c, name);

	return s && s->why[0] ? s->why : "not attached";
}

static void set_avail(struct dmt_availability *a, bool ok, const char *source, const char *why)
{
	a->available = ok;
	snprintf(a->source, sizeof(a->source), "%s", source);
	if (ok)
		a->reason[0] = '\0';
	else
		snprintf(a->reason, sizeof(a->reason), "%s", why);
}

/* "fexit/put_cmsg_notrunc" for a program's name. */
static const char *prog_target(const struct collector *c, const char *name)
{
	static char buf[48];

	for (size_t i = 0; i < N_PROGS; i++)
		if (!strcmp(progs[i].name, name))
			snprintf(buf, sizeof(buf), "%s/%s", progs[i].kind == PK_FEXIT ? "fexit" :
				 progs[i].kind == PK_FENTRY ? "fentry" : "tp_btf", progs[i].target);
	return buf;
}

/* Does the token tracker see every hand-out, return and release? */
static bool tokens_tracked(const struct collector *c)
{
	if (!attached(c, "tok_destroy"))
		return false;
	if (!c->tok_fallback)
		return attached(c, "tok_tp_recv") && attached(c, "tok_tp_dontneed") &&
		       attached(c, "tok_tp_release");
	return attached(c, "tok_recvmsg_entry") && attached(c, "tok_cmsg_exit") &&
	       attached(c, "tok_dontneed_entry");
}

static void tokens_availability(const struct collector *c, struct dmt_availability *av)
{
	const char *src = c->tok_fallback ?
		"fexit/put_cmsg_notrunc, fentry/tcp_recvmsg+sock_devmem_dontneed" :
		"tp_btf/devmem_token_* (kernel-patches/0009)";
	const char *missing = !attached(c, "tok_cmsg_exit") ? "tok_cmsg_exit" :
			      !attached(c, "tok_recvmsg_entry") ? "tok_recvmsg_entry" :
			      "tok_dontneed_entry";
	char why[160];

	if (!attached(c, "tok_destroy"))
		snprintf(why, sizeof(why), "tcp_destroy_sock: %s", why_not(c, "tok_destroy"));
	else if (!c->tok_fallback)
		snprintf(why, sizeof(why), "devmem_token_*: %s", why_not(c, "tok_tp_recv"));
	else
		snprintf(why, sizeof(why), "no devmem_token_* tracepoints (0009); fallback %s: %.60s", prog_target(c, missing), why_not(c, missing));
	set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], tokens_tracked(c), src, why);
	set_avail(&av[DMT_M_RECVMSG_TOKENS], tokens_tracked(c) && attached(c, "tok_recvmsg_exit"),
		  "fexit/tcp_recvmsg", tokens_tracked(c) ? why_not(c, "tok_recvmsg_exit") : why);
	set_avail(&av[DMT_M_DONTNEED_COST], attached(c, "tok_dontneed_entry") &&
		  attached(c, "tok_dontneed_exit"), "fentry+fexit/sock_devmem_dontneed",
		  why_not(c, attached(c, "tok_dontneed_entry") ? "tok_dontneed_exit" :
			  "tok_dontneed_entry"));
}

/* Which metrics the attached programs can give: one place, used everywhere. */
static void fill_availability(const struct collector *c, struct dmt_availability *av)
{
	bool tp = c->mode == DMT_MODE_DEVMEM_TP;
	bool walk = ps_by_name(c, "walk_binding")->loaded;
	const char *nodev = "kernel has no devmem (CONFIG_NET_DEVMEM)";

	set_avail(&av[DMT_M_POOL_HOLDS], attached(c, "pp_hold"), "tp_btf/page_pool_state_hold",
		  why_not(c, "pp_hold"));
	set_avail(&av[DMT_M_POOL_RELEASES], attached(c, "pp_release"),
		  "tp_btf/page_pool_state_release", why_not(c, "pp_release"));
	set_avail(&av[DMT_M_POOL_INFLIGHT], attached(c, "pp_hold") && attached(c, "pp_release"),
		  "hold - release counters", why_not(c, attached(c, "pp_hold") ? "pp_release" :
						     "pp_hold"));
	set_avail(&av[DMT_M_POOL_REFILL], attached(c, "pp_hold"),
		  "pool->alloc.count at page_pool_state_hold", why_not(c, "pp_hold"));
	set_avail(&av[DMT_M_POOL_DESTROY], attached(c, "pp_destroy"), "tp_btf/page_pool_release",
		  why_not(c, "pp_destroy"));
	set_avail(&av[DMT_M_POOL_NID], attached(c, "pp_nid"), "tp_btf/page_pool_update_nid",
		  why_not(c, "pp_nid"));

	if (!c->have_devmem) {
		for (int m = DMT_M_BIND_LIFECYCLE; m <= DMT_M_DONTNEED_TOKENS; m++)
			set_avail(&av[m], false, "", nodev);
		set_avail(&av[DMT_M_RECVMSG_TOKENS], false, "", nodev);
		set_avail(&av[DMT_M_DONTNEED_COST], false, "", nodev);
	} else {
		if (tp)
			set_avail(&av[DMT_M_BIND_LIFECYCLE], true, "tp_btf/devmem_binding_*", "");
		else
			set_avail(&av[DMT_M_BIND_LIFECYCLE],
				  attached(c, "bind_exit") && attached(c, "binding_free_entry"),
				  "fexit/net_devmem_bind_dmabuf", why_not(c, "bind_exit"));
		if (tp && attached(c, "dm_alloc"))
			set_avail(&av[DMT_M_BIND_OCCUPANCY], true, "tp_btf/devmem_* free_niovs", "");
		else
			set_avail(&av[DMT_M_BIND_OCCUPANCY], walk, "bpf_loop walk of the binding",
				  why_not(c, "walk_binding"));
		set_avail(&av[DMT_M_BIND_IN_POOLS], attached(c, "pp_hold") &&
			  attached(c, "pp_release"), "sum of the binding's pools' inflight",
			  why_not(c, "pp_release"));
		tokens_availability(c, av);
		set_avail(&av[DMT_M_BIND_ALLOC_LATENCY],
			  attached(c, "mp_alloc_entry") && attached(c, "mp_alloc_exit"),
			  "fentry+fexit/mp_dmabuf_devmem_alloc_netmems",
			  why_not(c, "mp_alloc_exit"));
		set_avail(&av[DMT_M_BIND_FREE_LATENCY],
			  attached(c, "mp_release_entry") && attached(c, "mp_release_exit"),
			  "fentry+fexit/mp_dmabuf_devmem_release_page",
			  why_not(c, "mp_release_exit"));
		if (tp && attached(c, "dm_alloc_fail"))
			set_avail(&av[DMT_M_BIND_ALLOC_FAIL], true, "tp_btf/devmem_alloc_fail", "");
		else
			set_avail(&av[DMT_M_BIND_ALLOC_FAIL], attached(c, "mp_alloc_exit"),
				  "fexit/mp_dmabuf_devmem_alloc_netmems",
				  why_not(c, "mp_alloc_exit"));
		if (tp && attached(c, "dm_alloc"))
			set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], true, "tp_btf/devmem_alloc", "");
		else
			set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], attached(c, "mp_alloc_exit"),
				  "fexit/mp_dmabuf_devmem_alloc_netmems",
				  why_not(c, "mp_alloc_exit"));
		if (tp && attached(c, "dm_free"))
			set_avail(&av[DMT_M_BIND_LEAKS], true, "tp_btf/devmem_binding_unbind/free",
				  "");
		else
			set_avail(&av[DMT_M_BIND_LEAKS], attached(c, "unbind_entry") &&
				  attached(c, "binding_free_entry"),
				  "fentry/net_devmem_unbind_dmabuf + binding free",
				  why_not(c, "binding_free_entry"));
		if (tp && attached(c, "dm_dontneed"))
			set_avail(&av[DMT_M_DONTNEED_TOKENS], true, "tp_btf/devmem_dontneed", "");
		else
			set_avail(&av[DMT_M_DONTNEED_TOKENS], attached(c, "dontneed_exit"),
				  "fexit/sock_devmem_dontneed", why_not(c, "dontneed_exit"));
	}
	set_avail(&av[DMT_M_NETLINK], c->nl != NULL, "netdev genl page-pool-get", c->nl_why);
}

static int check_environment(char *why, size_t len)
{
	const char *path = kernel_btf_path();
	struct stat st;
	int err;

	err = check_bpf_privileges(why, len);
	if (err)
		return err;
	if (stat(path ? path : "/sys/kernel/btf/vmlinux", &st)) {
		snprintf(why, len, "no kernel BTF (%s): the kernel needs CONFIG_DEBUG_INFO_BTF=y",
			 path ? path : "/sys/kernel/btf/vmlinux");
		return -ENOENT;
	}
	return 0;
}

struct collector *collector__new(const struct collector_opts *opts)
{
	struct collector *c;
	char why[256];
	int err;

	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		c->opts = *opts;
	c->stats_fd = -1;
	libbpf_set_print(libbpf_quiet);

	err = check_environment(why, sizeof(why));
	if (err)
		goto err_msg;
	c->vmlinux = kernel_btf_path() ? btf__parse(kernel_btf_path(), NULL) :
					 btf__load_vmlinux_btf();
	if (!c->vmlinux) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot parse kernel BTF: %s", strerror(-err));
		goto err_msg;
	}
	if (!btf_has(c->vmlinux, "btf_trace_page_pool_state_hold", BTF_KIND_TYPEDEF)) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "no page_pool tracepoints in this kernel "
			 "(needs CONFIG_PAGE_POOL and tracepoint BTF)");
		goto err_msg;
	}
	c->have_devmem = btf_has(c->vmlinux, "net_devmem_dmabuf_binding", BTF_KIND_STRUCT);
	coll_log(c, 1, "kernel devmem support: %s", c->have_devmem ? "yes" : "no");
	read_kallsyms(c);
	probe_all(c);
	if (c->opts.force_mode == DMT_MODE_TP_ONLY || c->opts.force_mode == DMT_MODE_FENTRY) {
		for (size_t i = 0; i < N_PROGS; i++) {
			enum prog_group g = progs[i].group;
			bool drop = g == PG_DEVMEM_TP || g == PG_TOK_TP ||
				    (c->opts.force_mode == DMT_MODE_TP_ONLY &&
				     (g == PG_FENTRY || g == PG_TOK_FENTRY));

			if (drop && c->ps[i].wanted) {
				c->ps[i].wanted = false;
				snprintf(c->ps[i].why, sizeof(c->ps[i].why), "disabled by --mode");
			}
		}
	}

	prefer_devmem_tracepoints(c);
	choose_token_source(c);
	err = open_and_load(c);
	if (err) {
		snprintf(why, sizeof(why), "cannot load BPF programs: %s%s", strerror(-err),
			 err == -EPERM ? " (locked down kernel or missing CAP_BPF/CAP_PERFMON?)" :
			 "");
		goto err_msg;
	}
	attach_all(c);
	if (!attached(c, "pp_hold") || !attached(c, "pp_release")) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "cannot attach the page_pool tracepoints: %s",
			 why_not(c, attached(c, "pp_hold") ? "pp_release" : "pp_hold"));
		goto err_msg;
	}
	if (attached(c, "dm_alloc") && attached(c, "dm_create"))
		c->mode = DMT_MODE_DEVMEM_TP;
	else if (attached(c, "mp_alloc_exit") || attached(c, "bind_exit"))
		c->mode = DMT_MODE_FENTRY;
	else
		c->mode = DMT_MODE_TP_ONLY;
	coll_log(c, 1, "attach mode: %s", dmt_mode_name(c->mode));

	c->slots_len = sizeof(struct dmt_pool) * DMT_POOL_SLOTS;
	c->slots = mmap(NULL, c->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(c->skel->maps.pool_slots), 0);
	if (c->slots == MAP_FAILED) {
		err = -errno;
		c->slots = NULL;
		snprintf(why, sizeof(why), "cannot map the pool table: %s", strerror(-err));
		goto err_msg;
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), rb_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot open the event ring buffer: %s",
			 strerror(-err));
		goto err_msg;
	}
	if (!c->opts.no_netlink) {
		c->nl = netdev_nl__new();
		if (!c->nl)
			snprintf(c->nl_why, sizeof(c->nl_why), "netdev genl family: %s",
				 strerror(errno));
	} else {
		snprintf(c->nl_why, sizeof(c->nl_why), "disabled by --no-netlink");
	}
	if (c->opts.enable_bpf_stats) {
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c->stats_fd < 0)
			coll_log(c, 1, "cannot enable BPF run-time stats: %s", strerror(errno));
	}
	return c;

err_msg:
	if (c->opts.log)
		c->opts.log(0, "devmemtop: %s\n", why);
	collector__free(c);
	errno = -err;
	return NULL;
}

enum dmt_attach_mode collector__mode(const struct collector *c)
{
	return c->mode;
}

/* ---- events ------------------------------------------------------------- */

static int rb_event(void *ctx, void *data, size_t len)
{
	struct collector *c = ctx;

	if (len < sizeof(struct dmt_event) || !c->ev_cb)
		return 0;
	return c->ev_cb(c->ev_ctx, data);
}

int collector__poll_events(struct collector *c, int timeout_ms, collector_event_fn cb, void *ctx)
{
	int n;

	c->ev_cb = cb;
	c->ev_ctx = ctx;
	n = ring_buffer__poll(c->rb, timeout_ms);
	c->ev_cb = NULL;
	c->ev_ctx = NULL;
	return n < 0 && n != -EINTR ? n : (n < 0 ? 0 : n);
}

/* ---- snapshots ---------------------------------------------------------- */

static uint64_t counter_sum(struct collector *c, enum dmt_counter idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *vals;
	__u32 key = idx;

	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.counters), &key, vals))
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static int cmp_prev(const void *a, const void *b)
{
	const struct pool_prev *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct pool_prev *prev_find(const struct collector *c, uint64_t addr)
{
	struct pool_prev key = { .addr = addr };

	if (!c->n_prev)
		return NULL;
	return bsearch(&key, c->prev, c->n_prev, sizeof(key), cmp_prev);
}

static enum dmt_pool_kind pool_kind(const struct dmt_pool *v)
{
	if (v->flags & DMT_POOL_DEVMEM)
		return DMT_KIND_DEVMEM;
	if (v->flags & DMT_POOL_IO_URING)
		return DMT_KIND_IO_URING;
	if (!v->mp_priv)
		return DMT_KIND_PAGES;
	return DMT_KIND_OTHER;	/* a provider we do not know, or kallsyms hidden */
}

static void pool_from_map(struct collector *c, const struct dmt_pool *v, struct dmt_pool_snap *p)
{
	memset(p, 0, sizeof(*p));
	p->addr = v->addr;
	p->provider_priv = v->mp_priv;
	p->id = v->id;
	p->ifindex = v->ifindex;
	memcpy(p->ifname, v->ifname, sizeof(p->ifname));
	p->ifname[sizeof(p->ifname) - 1] = '\0';
	p->netns = v->netns;
	p->queue = v->attr_src == DMT_ATTR_NETDEV ? (int)v->queue : -1;
	p->napi_id = v->napi_id;
	p->kind = pool_kind(v);
	p->binding_id = v->binding_id;
	p->attr_src = v->attr_src;
	p->nid = v->nid;
	p->nid_changes = v->nid_changes;
	p->holds = (uint32_t)(v->hold_cnt - v->hold_base);
	p->releases = (uint32_t)(v->release_cnt - v->release_base);
	if (v->flags & DMT_POOL_SAW_NIOV && !(v->flags & DMT_POOL_SAW_PAGE))
		p->holds_niov = p->holds;
	else
		p->holds_page = p->holds;
	p->inflight = (int32_t)(v->hold_cnt - v->release_cnt);
	p->netlink_inflight = -1;
	p->destroy_inflight = (v->flags & DMT_POOL_RELEASED) ? v->release_inflight : -1;
	p->destroy_retries = v->release_calls;
	if (v->flags & DMT_POOL_GONE) {
		p->state = DMT_POOL_DESTROYED;
		p->inflight = 0;
	} else if (v->flags & DMT_POOL_RELEASED) {
		p->state = DMT_POOL_ZOMBIE;
		p->inflight = v->release_inflight;
	}
	memcpy(p->refill.slots, v->refill.slots, sizeof(p->refill.slots));
	p->refill.count = v->refill.count;
	p->refill.sum = v->refill.sum;
}

#define READ_ONCE_U64(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static int pool_push(struct collector *c, struct dmt_snapshot *s, size_t *cap,
		     const struct dmt_pool *v)
{
	if (s->n_pools == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *np = realloc(s->pools, ncap * sizeof(*s->pools));

		if (!np)
			return -ENOMEM;
		s->pools = np;
		*cap = ncap;
	}
	pool_from_map(c, v, &s->pools[s->n_pools++]);
	return 0;
}

static int read_pools(struct collector *c, struct dmt_snapshot *s)
{
	int fd = bpf_map__fd(c->skel->maps.pools);
	__u64 key, next, *gone = NULL;
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
		err = pool_push(c, s, &cap, &v);
		if (err)
			return err;
		/* a destroyed pool is reported in this snapshot, then forgotten */
		if (v.flags & DMT_POOL_GONE)
			memset(&c->slots[i], 0, sizeof(c->slots[i]));
	}
	gone = calloc(DMT_MAX_POOLS, sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	for (int r = bpf_map_get_next_key(fd, NULL, &next); !r;
	     r = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;	/* deleted meanwhile */
		err = pool_push(c, s, &cap, &v);
		if (err)
			goto out;
		if ((v.flags & DMT_POOL_GONE) && n_gone < DMT_MAX_POOLS)
			gone[n_gone++] = key;
	}
	for (size_t i = 0; i < n_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
out:
	free(gone);
	return err;
}

static void merge_netlink(struct collector *c, struct dmt_snapshot *s)
{
	struct nl_pool_info *nlp = NULL;
	size_t n = 0;
	int err;
	void *np;

	if (!c->nl)
		return;
	err = netdev_nl__pools(c->nl, &nlp, &n);
	if (err) {
		coll_log(c, 2, "page-pool-get dump failed: %s", strerror(-err));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct dmt_pool_snap *p = NULL;

		for (size_t j = 0; j < s->n_pools; j++) {
			if (s->pools[j].id == nlp[i].id && s->pools[j].state != DMT_POOL_DESTROYED) {
				p = &s->pools[j];
				break;
			}
		}
		if (!p) {
			/* listed but no event seen since we attached: show it anyway */
			np = realloc(s->pools, (s->n_pools + 1) * sizeof(*s->pools));
			if (!np)
				break;
			s->pools = np;
			p = &s->pools[s->n_pools++];
			memset(p, 0, sizeof(*p));
			p->id = nlp[i].id;
			p->queue = -1;
			p->destroy_inflight = -1;
			p->kind = nlp[i].dmabuf ? DMT_KIND_DEVMEM : DMT_KIND_PAGES;
			p->binding_id = nlp[i].dmabuf;
			p->inflight = nlp[i].inflight;
			p->state = nlp[i].detach_time ? DMT_POOL_ZOMBIE : DMT_POOL_ALIVE;
			p->attr_src = DMT_ATTR_NETLINK;
		}
		p->netlink_listed = true;
		p->netlink_inflight = nlp[i].inflight;
		if (nlp[i].napi_id)
			p->napi_id = nlp[i].napi_id;
		if (!p->binding_id)
			p->binding_id = nlp[i].dmabuf;
		if (p->attr_src == DMT_ATTR_NONE || p->attr_src == DMT_ATTR_NETLINK) {
			p->ifindex = nlp[i].ifindex;
			p->attr_src = DMT_ATTR_NETLINK;
		}
	}
	free(nlp);
}

static void rates(struct collector *c, struct dmt_snapshot *s)
{
	struct pool_prev *next;

	for (size_t i = 0; i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		const struct pool_prev *pp = p->addr ? prev_find(c, p->addr) : NULL;
		double dt;

		if (!pp || s->ts_ns <= pp->ts_ns)
			continue;
		dt = (s->ts_ns - pp->ts_ns) / 1e9;
		p->hold_rate = (p->holds - pp->holds) / dt;
		p->release_rate = (p->releases - pp->releases) / dt;
	}
	next = calloc(s->n_pools ? s->n_pools : 1, sizeof(*next));
	if (!next)
		return;
	for (size_t i = 0; i < s->n_pools; i++) {
		next[i].addr = s->pools[i].addr;
		next[i].holds = s->pools[i].holds;
		next[i].releases = s->pools[i].releases;
		next[i].ts_ns = s->ts_ns;
	}
	qsort(next, s->n_pools, sizeof(*next), cmp_prev);
	free(c->prev);
	c->prev = next;
	c->n_prev = s->n_pools;
}

static int walk_binding(struct collector *c, uint64_t addr, struct dmt_walk *w)
{
	__u64 args[1] = { addr };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));
	int err;

	if (!ps_by_name(c, "walk_binding")->loaded)
		return -ENOTSUP;
	err = bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.walk_binding), &o);
	if (err)
		return -errno;
	*w = c->skel->bss->walk_out;
	return w->err ? -EIO : 0;
}

static struct dmt_binding_snap *binding_find(struct dmt_snapshot *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_bindings; i++)
		if (s->bindings[i].id == id)
			return &s->bindings[i];
	return NULL;
}

static struct dmt_binding_snap *binding_add(struct dmt_snapshot *s, uint32_t id)
{
	struct dmt_binding_snap *b;
	void *np = realloc(s->bindings, (s->n_bindings + 1) * sizeof(*s->bindings));

	if (!np)
		return NULL;
	s->bindings = np;
	b = &s->bindings[s->n_bindings++];
	memset(b, 0, sizeof(*b));
	b->id = id;
	b->alive = true;
	b->layout = "unknown";
	b->total_niovs = b->free_niovs = b->in_pools = b->held_by_sockets = -1;
	b->held_tokens = -1;
	b->out_at_unbind = b->out_at_free = -1;
	b->occupancy = -1;
	return b;
}

static void copy_log2(struct hist_log2 *dst, const struct dmt_log2_hist *src)
{
	memcpy(dst->slots, src->slots, sizeof(dst->slots));
	dst->count = src->count;
	dst->sum = src->sum;
}

/* Addresses of the snapshot's bindings, index for index, for the walk. */
struct addr_vec {
	uint64_t *v;
	size_t n;
};

static int addr_set(struct addr_vec *a, size_t i, uint64_t addr)
{
	if (i >= a->n) {
		uint64_t *nv = realloc(a->v, (i + 16) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		memset(nv + a->n, 0, (i + 16 - a->n) * sizeof(*nv));
		a->v = nv;
		a->n = i + 16;
	}
	if (addr)
		a->v[i] = addr;
	return 0;
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

static int read_tokens(struct collector *c, struct dmt_snapshot *s)
{
	int hfd = bpf_map__fd(c->skel->maps.holders);
	struct dmt_holder *hs = NULL;
	struct dmt_tok_entry *toks = NULL;
	size_t n = 0, nh = 0;
	__u64 key, next;
	__u32 zero = 0;
	int err;

	tok_agg__free(&c->tok_agg);
	memset(&c->tok_stats, 0, sizeof(c->tok_stats));
	bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.tok_stats), &zero, &c->tok_stats);
	tok_cost_from_bpf(&s->tok_cost, &c->tok_stats);
	if (!ps_by_name(c, "tok_destroy")->loaded)
		return 0;
	err = read_token_map(c, &toks, &n);
	if (err)
		return err;
	hs = calloc(DMT_MAX_HOLDERS, sizeof(*hs));
	if (!hs) {
		err = -ENOMEM;
		goto out;
	}
	for (int r = bpf_map_get_next_key(hfd, NULL, &next); !r && nh < DMT_MAX_HOLDERS;
	     r = bpf_map_get_next_key(hfd, &key, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(hfd, &key, &hs[nh]))
			nh++;
	}
	err = tokens__aggregate(toks, n, hs, nh, s->ts_ns, &c->tok_agg);
	if (err)
		goto out;
	if (c->tok_agg.n_holders) {
		s->holders = malloc(c->tok_agg.n_holders * sizeof(*s->holders));
		if (!s->holders) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(s->holders, c->tok_agg.holders, c->tok_agg.n_holders * sizeof(*s->holders));
		s->n_holders = c->tok_agg.n_holders;
	}
out:
	free(toks);
	free(hs);
	return err;
}

/*
 * Held tokens and niovs of a binding the tracker may know: exact only when
 * it saw the binding created (hence every token since) and lost none.
 */
static void binding_held(const struct collector *c, struct dmt_binding_snap *b,
			 const struct dmt_binding *v)
{
	const struct tok_binding_held *h;

	b->held_tokens = b->held_by_sockets = -1;
	b->held_why = NULL;
	if (!tokens_tracked(c))
		return;	/* the availability says why */
	if (!v || !(v->flags & DMT_BIND_SEEN_CREATE)) {
		b->held_why = "binding created before devmemtop attached: earlier tokens unseen";
		return;
	}
	if (v->tok_lost) {
		b->held_why = "token map full: some tokens were not tracked";
		return;
	}
	if (c->tok_fallback && (c->tok_stats.dontneed_mismatch || c->tok_stats.no_socket)) {
		b->held_why = c->tok_stats.no_socket ?
			"fallback: a token cmsg was written outside tcp_recvmsg" :
			"fallback: a DONTNEED freed other tokens than the ranges named";
		return;
	}
	h = tok_agg__binding(&c->tok_agg, b->id);
	b->held_tokens = h ? (int64_t)h->tokens : 0;
	b->held_by_sockets = h ? (int64_t)h->niovs : 0;
}

static int read_binding_map(struct collector *c, struct dmt_snapshot *s, struct addr_vec *addrs)
{
	int fd = bpf_map__fd(c->skel->maps.bindings);
	__u32 key, next, gone[DMT_MAX_BINDINGS];
	struct dmt_binding v;
	size_t n_gone = 0;

	for (int r = bpf_map_get_next_key(fd, NULL, &next); !r;
	     r = bpf_map_get_next_key(fd, &key, &next)) {
		struct dmt_binding_snap *b;

		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		b = binding_add(s, v.id);
		if (!b || addr_set(addrs, s->n_bindings - 1, v.addr))
			return -ENOMEM;
		b->ifindex = v.ifindex;
		b->dmabuf_size = v.dmabuf_size;
		b->niov_size = v.niov_size;
		b->unbound = v.flags & DMT_BIND_UNBOUND;
		b->alive = !(v.flags & DMT_BIND_FREED);
		if (v.flags & DMT_BIND_FREELIST)
			b->layout = "freelist";
		if (v.total_niovs)
			b->total_niovs = v.total_niovs;
		if (v.free_niovs_tp >= 0)
			b->free_niovs = v.free_niovs_tp;
		b->alloc_calls = v.alloc_calls;
		b->alloc_niovs = v.alloc_niovs;
		b->alloc_fail = v.alloc_fail;
		b->free_niovs_count = v.free_niovs_cnt;
		b->out_at_unbind = v.out_at_unbind;
		b->out_at_free = v.out_at_free;
		b->tok_handed = v.tok_handed;
		b->tok_returned = v.tok_returned;
		b->tok_released = v.tok_released;
		binding_held(c, b, &v);
		copy_log2(&b->alloc_lat_ns, &v.alloc_lat);
		copy_log2(&b->alloc_lat_niov_ns, &v.alloc_lat_niov);
		copy_log2(&b->free_lat_ns, &v.free_lat);
		/* a freed binding is reported in this snapshot, then forgotten */
		if (!b->alive && n_gone < DMT_MAX_BINDINGS)
			gone[n_gone++] = key;
	}
	for (size_t i = 0; i < n_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return 0;
}

static int read_bindings(struct collector *c, struct dmt_snapshot *s)
{
	struct addr_vec addrs = {};
	int err;

	if (!c->have_devmem)
		return 0;
	err = read_binding_map(c, s, &addrs);
	if (err)
		goto out;

	/* pools give occupancy in pools, and bindings nobody saw created */
	for (size_t i = 0; i < s->n_pools; i++) {
		struct dmt_pool_snap *p = &s->pools[i];
		struct dmt_binding_snap *b;

		if (p->kind != DMT_KIND_DEVMEM || !p->binding_id)
			continue;
		b = binding_find(s, p->binding_id);
		if (!b) {
			b = binding_add(s, p->binding_id);
			if (!b) {
				err = -ENOMEM;
				goto out;
			}
			b->ifindex = p->ifindex;
		}
		if (!b->ifname[0] && b->ifindex == p->ifindex)
			memcpy(b->ifname, p->ifname, sizeof(b->ifname));
		if (p->state == DMT_POOL_DESTROYED)
			continue;
		b->pools++;
		b->in_pools = (b->in_pools < 0 ? 0 : b->in_pools) + (p->inflight > 0 ? p->inflight : 0);
		/* a live pool holds a reference on its binding: safe to walk */
		err = addr_set(&addrs, b - s->bindings, p->provider_priv);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < s->n_bindings; i++) {
		struct dmt_binding_snap *b = &s->bindings[i];
		uint64_t addr = i < addrs.n ? addrs.v[i] : 0;
		struct dmt_walk w = {};

		if (b->alive && addr && !walk_binding(c, addr, &w) && w.id == b->id) {
			b->layout = w.layout == 2 ? "freelist" : "gen_pool";
			/* tracepoint values are exact at the event; the walk is now */
			if (b->free_niovs < 0 || c->mode != DMT_MODE_DEVMEM_TP) {
				b->total_niovs = w.total_niovs;
				b->free_niovs = w.free_niovs;
			}
			if (!b->dmabuf_size)
				b->dmabuf_size = w.dmabuf_size;
			if (!b->niov_size)
				b->niov_size = w.niov_size;
			if (!b->ifindex)
				b->ifindex = w.ifindex;
		}
		if (b->in_pools < 0 && attached(c, "pp_hold"))
			b->in_pools = 0;
		if (b->held_tokens < 0 && !b->held_why)
			binding_held(c, b, NULL);
		if (b->total_niovs > 0 && b->free_niovs >= 0)
			b->occupancy = (double)(b->total_niovs - b->free_niovs) / b->total_niovs;
	}
out:
	free(addrs.v);
	return err;
}

static void read_prog_stats(struct collector *c, struct dmt_snapshot *s)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	s->bpf_stats_enabled = on || c->stats_fd >= 0;
	s->progs = calloc(N_PROGS, sizeof(*s->progs));
	if (!s->progs)
		return;
	for (size_t i = 0; i < N_PROGS; i++) {
		struct dmt_prog_stat *ps = &s->progs[s->n_progs];
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!c->ps[i].loaded || progs[i].kind == PK_RUN)
			continue;
		snprintf(ps->name, sizeof(ps->name), "%s", progs[i].name);
		ps->attached = c->ps[i].attached;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(c->ps[i].prog), &info, &len)) {
			ps->run_time_ns = info.run_time_ns;
			ps->run_cnt = info.run_cnt;
		}
		s->n_progs++;
	}
}

int collector__snapshot(struct collector *c, struct dmt_snapshot **out)
{
	struct dmt_snapshot *s;
	uint64_t t0 = now_mono_ns();
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* events nobody asked for are consumed here so the ring never fills */
	if (!c->opts.events)
		ring_buffer__consume(c->rb);
	s->ts_ns = t0;
	s->wall_ns = now_real_ns();
	s->seq = ++c->seq;
	s->interval_s = c->last_ts ? (t0 - c->last_ts) / 1e9 : 0;
	s->mode = c->mode;
	fill_availability(c, s->avail);

	err = read_pools(c, s);
	if (err)
		goto err_free;
	merge_netlink(c, s);
	rates(c, s);
	err = read_tokens(c, s);
	if (err)
		goto err_free;
	err = read_bindings(c, s);
	if (err)
		goto err_free;

	s->dontneed_tokens = counter_sum(c, DMT_CNT_DONTNEED_TOKENS);
	s->dontneed_calls = counter_sum(c, DMT_CNT_DONTNEED_CALLS);
	s->provider_calls = counter_sum(c, DMT_CNT_PROVIDER_CALLS);
	s->ringbuf_drops = counter_sum(c, DMT_CNT_RB_DROPS);
	s->map_full = counter_sum(c, DMT_CNT_POOL_MAP_FULL) +
		      counter_sum(c, DMT_CNT_BIND_MAP_FULL);
	s->lat_missed = counter_sum(c, DMT_CNT_LAT_MISSED);
	read_prog_stats(c, s);
	c->last_ts = t0;
	s->collect_ns = now_mono_ns() - t0;
	*out = s;
	return 0;

err_free:
	snapshot__free(s);
	return err;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_PROGS; i++)
		bpf_link__destroy(c->ps[i].link);
	ring_buffer__free(c->rb);
	if (c->slots)
		munmap(c->slots, c->slots_len);
	devmemtop__destroy(c->skel);
	btf__free(c->vmlinux);
	netdev_nl__free(c->nl);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	for (size_t i = 0; i < c->n_log; i++)
		free(c->log[i]);
	free(c->log);
	free(c->prev);
	tok_agg__free(&c->tok_agg);
	free(c);
}
