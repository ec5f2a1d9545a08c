// SPDX-License-Identifier: GPL-2.0
/*
 * Collector: run-time probes, load/attach, and map -> snapshot.
 *
 * Lifecycle follows libbpf-tools: probe -> open -> set autoload and rodata
 * -> load -> attach each program on its own, so one hook that cannot attach
 * makes its metrics "unavailable: <reason>" instead of failing the tool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "nl.h"
#include "snapbuild.h"
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
	PG_LIGHT,	/* light mode: pool counters read at snapshot time */
};

struct prog_desc {
	const char *name;	/* program name in the skeleton */
	enum probe_kind kind;
	const char *target;	/* tracepoint or function */
	enum prog_group group;
};

enum prog_id {
	P_PP_HOLD,
	P_PP_RELEASE,
	P_PP_DESTROY,
	P_PP_NID,
	P_WALK_BINDING,
	P_BIND_EXIT,
	P_UNBIND_ENTRY,
	P_BINDING_FREE_ENTRY,
	P_MP_ALLOC_ENTRY,
	P_MP_ALLOC_EXIT,
	P_MP_RELEASE_ENTRY,
	P_MP_RELEASE_EXIT,
	P_DONTNEED_EXIT,
	P_DM_CREATE,
	P_DM_UNBIND,
	P_DM_FREE,
	P_DM_ALLOC,
	P_DM_ALLOC_FAIL,
	P_DM_NIOV_FREE,
	P_DM_DONTNEED,
	P_TOK_TP_RECV,
	P_TOK_TP_DONTNEED,
	P_TOK_TP_RELEASE,
	P_TOK_DESTROY,
	P_TOK_RECVMSG_ENTRY,
	P_TOK_RECVMSG_EXIT,
	P_TOK_CMSG_EXIT,
	P_TOK_DONTNEED_ENTRY,
	P_TOK_DONTNEED_EXIT,
	P_LIGHT_READ,
	P__COUNT,
};

static const struct prog_desc progs[P__COUNT] = {
	[P_PP_HOLD] = { "pp_hold", PK_TP_BTF, "page_pool_state_hold", PG_POOL },
	[P_PP_RELEASE] = { "pp_release", PK_TP_BTF, "page_pool_state_release", PG_POOL },
	[P_PP_DESTROY] = { "pp_destroy", PK_TP_BTF, "page_pool_release", PG_POOL },
	[P_PP_NID] = { "pp_nid", PK_TP_BTF, "page_pool_update_nid", PG_POOL },
	[P_WALK_BINDING] = { "walk_binding", PK_RUN, "net_devmem_dmabuf_binding", PG_WALK },
	[P_BIND_EXIT] = { "bind_exit", PK_FEXIT, "net_devmem_bind_dmabuf", PG_FENTRY },
	[P_UNBIND_ENTRY] = { "unbind_entry", PK_FENTRY, "net_devmem_unbind_dmabuf", PG_FENTRY },
	[P_BINDING_FREE_ENTRY] = { "binding_free_entry",
		PK_FENTRY, "__net_devmem_dmabuf_binding_free", PG_FENTRY },
	[P_MP_ALLOC_ENTRY] = { "mp_alloc_entry",
		PK_FENTRY, "mp_dmabuf_devmem_alloc_netmems", PG_FENTRY },
	[P_MP_ALLOC_EXIT] = { "mp_alloc_exit",
		PK_FEXIT, "mp_dmabuf_devmem_alloc_netmems", PG_FENTRY },
	[P_MP_RELEASE_ENTRY] = { "mp_release_entry",
		PK_FENTRY, "mp_dmabuf_devmem_release_page", PG_FENTRY },
	[P_MP_RELEASE_EXIT] = { "mp_release_exit",
		PK_FEXIT, "mp_dmabuf_devmem_release_page", PG_FENTRY },
	[P_DONTNEED_EXIT] = { "dontneed_exit", PK_FEXIT, "sock_devmem_dontneed", PG_FENTRY },
	[P_DM_CREATE] = { "dm_create", PK_TP_BTF, "devmem_binding_create", PG_DEVMEM_TP },
	[P_DM_UNBIND] = { "dm_unbind", PK_TP_BTF, "devmem_binding_unbind", PG_DEVMEM_TP },
	[P_DM_FREE] = { "dm_free", PK_TP_BTF, "devmem_binding_free", PG_DEVMEM_TP },
	[P_DM_ALLOC] = { "dm_alloc", PK_TP_BTF, "devmem_alloc", PG_DEVMEM_TP },
	[P_DM_ALLOC_FAIL] = { "dm_alloc_fail", PK_TP_BTF, "devmem_alloc_fail", PG_DEVMEM_TP },
	[P_DM_NIOV_FREE] = { "dm_niov_free", PK_TP_BTF, "devmem_niov_free", PG_DEVMEM_TP },
	[P_DM_DONTNEED] = { "dm_dontneed", PK_TP_BTF, "devmem_dontneed", PG_DEVMEM_TP },
	[P_TOK_TP_RECV] = { "tok_tp_recv", PK_TP_BTF, "devmem_token_recv", PG_TOK_TP },
	[P_TOK_TP_DONTNEED] = { "tok_tp_dontneed",
		PK_TP_BTF, "devmem_token_dontneed", PG_TOK_TP },
	[P_TOK_TP_RELEASE] = { "tok_tp_release", PK_TP_BTF, "devmem_token_release", PG_TOK_TP },
	[P_TOK_DESTROY] = { "tok_destroy", PK_TP_BTF, "tcp_destroy_sock", PG_TOK },
	[P_TOK_RECVMSG_ENTRY] = { "tok_recvmsg_entry", PK_FENTRY, "tcp_recvmsg", PG_TOK_FENTRY },
	[P_TOK_RECVMSG_EXIT] = { "tok_recvmsg_exit", PK_FEXIT, "tcp_recvmsg", PG_TOK_FENTRY },
	[P_TOK_CMSG_EXIT] = { "tok_cmsg_exit", PK_FEXIT, "put_cmsg_notrunc", PG_TOK_FENTRY },
	[P_TOK_DONTNEED_ENTRY] = { "tok_dontneed_entry",
		PK_FENTRY, "sock_devmem_dontneed", PG_TOK_FENTRY },
	[P_TOK_DONTNEED_EXIT] = { "tok_dontneed_exit",
		PK_FEXIT, "sock_devmem_dontneed", PG_TOK_FENTRY },
	[P_LIGHT_READ] = { "light_read", PK_RUN, "page_pool", PG_LIGHT },
};

/*
 * Programs that run once per page or niov: light mode never keeps them
 * attached (pp_hold/pp_release only inside its sampling windows).
 */
static bool per_item_prog(enum prog_id id)
{
	return id == P_PP_HOLD || id == P_PP_RELEASE || id == P_MP_RELEASE_ENTRY ||
	       id == P_MP_RELEASE_EXIT || id == P_DM_NIOV_FREE;
}

/*
 * Frag token programs run once per token handed out or returned, or once
 * per TCP recvmsg of every socket: their cost grows with the packet rate,
 * so light mode leaves them off too (held_by_sockets is exact or nothing).
 */
static bool per_token_prog(enum prog_id id)
{
	return progs[id].group == PG_TOK_TP || progs[id].group == PG_TOK_FENTRY ||
	       progs[id].group == PG_TOK;
}

#define LIGHT_NO_TOKENS "per-token hook: not attached in light mode"

#define N_PROGS P__COUNT

struct prog_state {
	struct bpf_program *prog;
	struct bpf_link *link;
	bool wanted;		/* probe said it can work */
	bool loaded;
	bool attached;
	bool ran;		/* attached now or once (light windows): has run stats */
	char why[160];		/* why not wanted / not attached */
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
	int stats_sysctl_fd;	/* /proc/sys/kernel/bpf_stats_enabled, kept open */
	bool bpf_stats;
	enum dmt_attach_mode mode;
	struct prog_state ps[N_PROGS];
	bool have_devmem;	/* kernel has struct net_devmem_dmabuf_binding */
	uint64_t devmem_alloc_fn;	/* mp_dmabuf_devmem_alloc_netmems */
	uint64_t io_uring_alloc_fn;	/* io_pp_zc_alloc_netmems */
	bool tok_fallback;	/* tokens from the cmsg writer, not 0009's tracepoints */
	struct tok_agg tok_agg;		/* this snapshot's token counts */
	struct dmt_tok_stats tok_stats;

	struct rate_tracker *rates;
	struct binding_memory *bindings;
	uint64_t last_ts;
	uint64_t seq;

	/* light mode */
	bool light;
	uint64_t window_ns, period_ns;
	uint64_t last_window;		/* CLOCK_MONOTONIC of the last window's start */
	uint64_t windows;		/* sampling windows run */
	uint64_t light_stale;		/* reads discarded by the generation check */

	collector_event_fn ev_cb;
	void *ev_ctx;

	char **log;
	size_t n_log;
};

static int rb_event(void *ctx, void *data, size_t len);

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

/* strerror() that also knows libbpf's own codes (-4001: "BPF object format invalid"). */
static const char *err_str(int err, char *buf, size_t len)
{
	if (libbpf_strerror(err, buf, len))
		snprintf(buf, len, "%s", strerror(err < 0 ? -err : err));
	return buf;
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
			if (d->group == PG_LIGHT && !c->light) {
				snprintf(s->why, sizeof(s->why), "light mode only");
				err = -ENOENT;
			} else if (d->group == PG_WALK && !c->have_devmem) {
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
	static const enum prog_id covered[] = {
		P_BIND_EXIT, P_UNBIND_ENTRY, P_BINDING_FREE_ENTRY, P_DONTNEED_EXIT,
	};

	for (size_t i = 0; i < N_PROGS; i++)
		if (progs[i].group == PG_DEVMEM_TP && !c->ps[i].wanted)
			return;
	for (size_t k = 0; k < ARRAY_SIZE(covered); k++) {
		struct prog_state *ps = &c->ps[covered[k]];

		if (!ps->wanted)
			continue;
		ps->wanted = false;
		snprintf(ps->why, sizeof(ps->why), "not needed: devmem tracepoints cover it");
		coll_log(c, 1, "skip  %-20s covered by the devmem tracepoints",
			 progs[covered[k]].name);
	}
}

static bool group_wanted(const struct collector *c, enum prog_group g)
{
	for (size_t i = 0; i < N_PROGS; i++)
		if (progs[i].group == g && !c->ps[i].wanted)
			return false;
	return true;
}

static void unwant(struct collector *c, enum prog_id id, const char *why)
{
	struct prog_state *ps = &c->ps[id];

	if (!ps->wanted)
		return;
	ps->wanted = false;
	snprintf(ps->why, sizeof(ps->why), "%s", why);
	coll_log(c, 1, "skip  %-20s %s", progs[id].name, why);
}

/*
 * Frag tokens come from 0009's tracepoints where the kernel has them, else
 * from the cmsg writer (fexit/put_cmsg_notrunc), which only makes sense
 * with the DONTNEED reader and the recvmsg socket stash next to it: a
 * tracker that sees tokens go out but not come back would only fill up.
 */
static void choose_token_source(struct collector *c)
{
	static const enum prog_id need[] = { P_TOK_RECVMSG_ENTRY, P_TOK_DONTNEED_ENTRY };
	const char *fb = "fallback in use: not every devmem_token_* tracepoint is here";

	if (group_wanted(c, PG_TOK_TP)) {
		c->tok_fallback = false;
		unwant(c, P_TOK_CMSG_EXIT, "not needed: devmem_token_* tracepoints cover it");
		return;
	}
	c->tok_fallback = true;
	unwant(c, P_TOK_TP_RECV, fb);
	unwant(c, P_TOK_TP_DONTNEED, fb);
	unwant(c, P_TOK_TP_RELEASE, fb);
	for (size_t k = 0; k < ARRAY_SIZE(need); k++) {
		char why[160];

		if (c->ps[need[k]].wanted)
			continue;
		snprintf(why, sizeof(why), "needs %s: %.120s", progs[need[k]].name,
			 c->ps[need[k]].why);
		unwant(c, P_TOK_CMSG_EXIT, why);
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
		c->skel->rodata->light_devmem_refill = c->light && c->ps[P_DM_ALLOC].wanted;
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
		/* light mode: attached only inside sampling windows */
		if (c->light && (i == P_PP_HOLD || i == P_PP_RELEASE)) {
			snprintf(s->why, sizeof(s->why),
				 "light mode: attached in sampling windows");
			continue;
		}
		s->link = bpf_program__attach(s->prog);
		if (!s->link) {
			snprintf(s->why, sizeof(s->why), "attach %s failed: %s", progs[i].target,
				 strerror(errno));
			coll_log(c, 1, "attach %-20s failed: %s", progs[i].name, strerror(errno));
			continue;
		}
		s->attached = true;
		s->ran = true;
	}
}

static bool attached(const struct collector *c, enum prog_id id)
{
	return c->ps[id].attached;
}

static const char *why_not(const struct collector *c, enum prog_id id)
{
	return c->ps[id].why[0] ? c->ps[id].why : "not attached";
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

/* "fexit/put_cmsg_notrunc" for a program. */
static const char *prog_target(enum prog_id id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", progs[id].kind == PK_FEXIT ? "fexit" :
		 progs[id].kind == PK_FENTRY ? "fentry" : "tp_btf", progs[id].target);
	return buf;
}

/* Does the token tracker see every hand-out, return and release? */
static bool tokens_tracked(const struct collector *c)
{
	if (!attached(c, P_TOK_DESTROY))
		return false;
	if (!c->tok_fallback)
		return attached(c, P_TOK_TP_RECV) && attached(c, P_TOK_TP_DONTNEED) &&
		       attached(c, P_TOK_TP_RELEASE);
	return attached(c, P_TOK_RECVMSG_ENTRY) && attached(c, P_TOK_CMSG_EXIT) &&
	       attached(c, P_TOK_DONTNEED_ENTRY);
}

static void tokens_availability(const struct collector *c, struct dmt_availability *av)
{
	const char *src = c->tok_fallback ?
		"fexit/put_cmsg_notrunc, fentry/tcp_recvmsg+sock_devmem_dontneed" :
		"tp_btf/devmem_token_* (kernel-patches/0009)";
	enum prog_id missing = !attached(c, P_TOK_CMSG_EXIT) ? P_TOK_CMSG_EXIT :
			       !attached(c, P_TOK_RECVMSG_ENTRY) ? P_TOK_RECVMSG_ENTRY :
			       P_TOK_DONTNEED_ENTRY;
	bool ok = tokens_tracked(c);
	char why[160], tgt[40];

	if (!attached(c, P_TOK_DESTROY))
		snprintf(why, sizeof(why), "tcp_destroy_sock: %.100s", why_not(c, P_TOK_DESTROY));
	else if (!c->tok_fallback)
		snprintf(why, sizeof(why), "devmem_token_*: %.100s", why_not(c, P_TOK_TP_RECV));
	else
		snprintf(why, sizeof(why),
			 "no devmem_token_* tracepoints (0009); fallback %s: %.60s",
			 prog_target(missing, tgt, sizeof(tgt)), why_not(c, missing));
	set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], ok, src, why);
	set_avail(&av[DMT_M_RECVMSG_TOKENS], ok && attached(c, P_TOK_RECVMSG_EXIT),
		  "fexit/tcp_recvmsg", ok ? why_not(c, P_TOK_RECVMSG_EXIT) : why);
	set_avail(&av[DMT_M_DONTNEED_COST], attached(c, P_TOK_DONTNEED_ENTRY) &&
		  attached(c, P_TOK_DONTNEED_EXIT), "fentry+fexit/sock_devmem_dontneed",
		  why_not(c, attached(c, P_TOK_DONTNEED_ENTRY) ? P_TOK_DONTNEED_EXIT :
			  P_TOK_DONTNEED_ENTRY));
}
/* Page pool metrics, full mode: the per-page tracepoints. */
static void pool_availability(const struct collector *c, struct dmt_availability *av)
{
	set_avail(&av[DMT_M_POOL_HOLDS], attached(c, P_PP_HOLD), "tp_btf/page_pool_state_hold",
		  why_not(c, P_PP_HOLD));
	set_avail(&av[DMT_M_POOL_RELEASES], attached(c, P_PP_RELEASE),
		  "tp_btf/page_pool_state_release", why_not(c, P_PP_RELEASE));
	set_avail(&av[DMT_M_POOL_INFLIGHT], attached(c, P_PP_HOLD) && attached(c, P_PP_RELEASE),
		  "hold - release counters", why_not(c, attached(c, P_PP_HOLD) ? P_PP_RELEASE :
						     P_PP_HOLD));
	set_avail(&av[DMT_M_POOL_REFILL], attached(c, P_PP_HOLD),
		  "pool->alloc.count at page_pool_state_hold", why_not(c, P_PP_HOLD));
}

/*
 * Page pool metrics, light mode: exact where read at snapshot time, sampled
 * where they come from the per-page tracepoints inside the sampling windows.
 */
static void pool_availability_light(const struct collector *c, struct dmt_availability *av)
{
	char sampled[64];

	snprintf(sampled, sizeof(sampled), "page_pool_state_hold %llums every %llums",
		 (unsigned long long)(c->window_ns / 1000000),
		 (unsigned long long)(c->period_ns / 1000000));
	set_avail(&av[DMT_M_POOL_HOLDS], true, "pool->pages_state_hold_cnt at snapshot", "");
	set_avail(&av[DMT_M_POOL_RELEASES], true, "pool->pages_state_release_cnt at snapshot",
		  "");
	set_avail(&av[DMT_M_POOL_INFLIGHT], true, "pool hold - release counters at snapshot", "");
	if (attached(c, P_DM_ALLOC))
		snprintf(sampled, sizeof(sampled), "devmem: devmem_alloc; pages: hold tp %ums/%ums",
			 (unsigned int)(c->window_ns / 1000000),
			 (unsigned int)(c->period_ns / 1000000));
	/* sampled as a whole as soon as any pool's batches are */
	set_avail(&av[DMT_M_POOL_REFILL], true, sampled, "");
	av[DMT_M_POOL_REFILL].sampled = true;
}

/*
 * Binding metrics. Light mode differs where the full mode needs a per-page,
 * per-niov or per-token program: occupancy comes from the walk, in-pools
 * from the pools' counters, frag tokens and free latency are unavailable.
 */
static void binding_availability(const struct collector *c, struct dmt_availability *av)
{
	bool tp = attached(c, P_DM_ALLOC) && attached(c, P_DM_CREATE);
	bool walk = c->ps[P_WALK_BINDING].loaded;
	const char *nodev = "kernel has no devmem (CONFIG_NET_DEVMEM)";

	if (!c->have_devmem) {
		for (int m = DMT_M_BIND_LIFECYCLE; m <= DMT_M_DONTNEED_TOKENS; m++)
			set_avail(&av[m], false, "", nodev);
		set_avail(&av[DMT_M_RECVMSG_TOKENS], false, "", nodev);
		set_avail(&av[DMT_M_DONTNEED_COST], false, "", nodev);
		return;
	}
	if (tp)
		set_avail(&av[DMT_M_BIND_LIFECYCLE], true, "tp_btf/devmem_binding_*", "");
	else
		set_avail(&av[DMT_M_BIND_LIFECYCLE],
			  attached(c, P_BIND_EXIT) && attached(c, P_BINDING_FREE_ENTRY),
			  "fexit/net_devmem_bind_dmabuf", why_not(c, P_BIND_EXIT));
	if (c->light)
		set_avail(&av[DMT_M_BIND_OCCUPANCY], walk, "binding walk at snapshot",
			  why_not(c, P_WALK_BINDING));
	else if (tp && attached(c, P_DM_ALLOC))
		set_avail(&av[DMT_M_BIND_OCCUPANCY], true, "tp_btf/devmem_* free_niovs", "");
	else
		set_avail(&av[DMT_M_BIND_OCCUPANCY], walk, "bpf_loop walk of the binding",
			  why_not(c, P_WALK_BINDING));
	if (c->light) {
		set_avail(&av[DMT_M_BIND_IN_POOLS], true, "sum of the binding's pools' inflight",
			  "");
		set_avail(&av[DMT_M_BIND_HELD_BY_SOCKETS], false, "", LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_RECVMSG_TOKENS], false, "", LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_DONTNEED_COST], false, "", LIGHT_NO_TOKENS);
		set_avail(&av[DMT_M_BIND_FREE_LATENCY], false, "",
			  "per-niov hook: not attached in light mode");
	} else {
		set_avail(&av[DMT_M_BIND_IN_POOLS], attached(c, P_PP_HOLD) &&
			  attached(c, P_PP_RELEASE), "sum of the binding's pools' inflight",
			  why_not(c, P_PP_RELEASE));
		tokens_availability(c, av);
		set_avail(&av[DMT_M_BIND_FREE_LATENCY],
			  attached(c, P_MP_RELEASE_ENTRY) && attached(c, P_MP_RELEASE_EXIT),
			  "fentry+fexit/mp_dmabuf_devmem_release_page",
			  why_not(c, P_MP_RELEASE_EXIT));
	}
	set_avail(&av[DMT_M_BIND_ALLOC_LATENCY],
		  attached(c, P_MP_ALLOC_ENTRY) && attached(c, P_MP_ALLOC_EXIT),
		  "fentry+fexit/mp_dmabuf_devmem_alloc_netmems", why_not(c, P_MP_ALLOC_EXIT));
	if (tp && attached(c, P_DM_ALLOC_FAIL))
		set_avail(&av[DMT_M_BIND_ALLOC_FAIL], true, "tp_btf/devmem_alloc_fail", "");
	else
		set_avail(&av[DMT_M_BIND_ALLOC_FAIL], attached(c, P_MP_ALLOC_EXIT),
			  "fexit/mp_dmabuf_devmem_alloc_netmems", why_not(c, P_MP_ALLOC_EXIT));
	/* light mode: niov frees are the binding's pools' release counters */
	if (tp && attached(c, P_DM_ALLOC))
		set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], true, c->light ?
			  "tp_btf/devmem_alloc; frees: pool counters" : "tp_btf/devmem_alloc", "");
	else
		set_avail(&av[DMT_M_BIND_PROVIDER_CALLS], attached(c, P_MP_ALLOC_EXIT),
			  "fexit/mp_dmabuf_devmem_alloc_netmems", why_not(c, P_MP_ALLOC_EXIT));
	if (tp && attached(c, P_DM_FREE))
		set_avail(&av[DMT_M_BIND_LEAKS], true, "tp_btf/devmem_binding_unbind/free", "");
	else
		set_avail(&av[DMT_M_BIND_LEAKS], attached(c, P_UNBIND_ENTRY) &&
			  attached(c, P_BINDING_FREE_ENTRY),
			  "fentry/net_devmem_unbind_dmabuf + binding free",
			  why_not(c, P_BINDING_FREE_ENTRY));
	if (tp && attached(c, P_DM_DONTNEED))
		set_avail(&av[DMT_M_DONTNEED_TOKENS], true, "tp_btf/devmem_dontneed", "");
	else
		set_avail(&av[DMT_M_DONTNEED_TOKENS], attached(c, P_DONTNEED_EXIT),
			  "fexit/sock_devmem_dontneed", why_not(c, P_DONTNEED_EXIT));
}

/* Which metrics the attached programs can give: one place, used everywhere. */
static void fill_availability(const struct collector *c, struct dmt_availability *av)
{
	if (c->light)
		pool_availability_light(c, av);
	else
		pool_availability(c, av);
	set_avail(&av[DMT_M_POOL_DESTROY], attached(c, P_PP_DESTROY), "tp_btf/page_pool_release",
		  why_not(c, P_PP_DESTROY));
	set_avail(&av[DMT_M_POOL_NID], attached(c, P_PP_NID), "tp_btf/page_pool_update_nid",
		  why_not(c, P_PP_NID));
	binding_availability(c, av);
	set_avail(&av[DMT_M_NETLINK], c->nl != NULL, "netdev genl page-pool-get", c->nl_why);
}

/* 44 programs, as many links, 13 maps, BTF, ring buffer, netlink, probes */
#define DMT_COLLECTOR_FDS	128

static int check_environment(char *why, size_t len)
{
	const char *path = kernel_btf_path();
	struct stat st;
	int err;

	err = check_bpf_privileges(why, len);
	if (!err)	/* before any fd: else a BTF or probe failure names the wrong cause */
		err = check_fd_limit(DMT_COLLECTOR_FDS, why, len);
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
	char why[256], ebuf[128];
	int err;

	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		c->opts = *opts;
	c->stats_fd = -1;
	c->stats_sysctl_fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);
	c->rates = rate_tracker__new();
	c->bindings = binding_memory__new();
	if (!c->rates || !c->bindings) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto err_msg;
	}
	libbpf_set_print(libbpf_quiet);

	err = check_environment(why, sizeof(why));
	if (err)
		goto err_msg;
	c->vmlinux = kernel_btf_path() ? btf__parse(kernel_btf_path(), NULL) :
					 btf__load_vmlinux_btf();
	if (!c->vmlinux) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot parse kernel BTF: %s",
			 err_str(err, ebuf, sizeof(ebuf)));
		goto err_msg;
	}
	if (!btf_has(c->vmlinux, "btf_trace_page_pool_state_hold", BTF_KIND_TYPEDEF)) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "no page_pool tracepoints in this kernel "
			 "(needs CONFIG_PAGE_POOL and tracepoint BTF)");
		goto err_msg;
	}
	c->have_devmem = btf_has(c->vmlinux, "net_devmem_dmabuf_binding", BTF_KIND_STRUCT);
	c->light = c->opts.force_mode == DMT_MODE_LIGHT;
	c->window_ns = (c->opts.light_window_ms ? c->opts.light_window_ms :
			DMT_LIGHT_WINDOW_MS) * 1000000ULL;
	c->period_ns = (c->opts.light_period_ms ? c->opts.light_period_ms :
			DMT_LIGHT_PERIOD_MS) * 1000000ULL;
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
	if (c->light) {
		for (size_t i = 0; i < N_PROGS; i++) {
			bool tok = per_token_prog(i);

			if ((!per_item_prog(i) && !tok) || i == P_PP_HOLD || i == P_PP_RELEASE ||
			    !c->ps[i].wanted)
				continue;
			c->ps[i].wanted = false;
			snprintf(c->ps[i].why, sizeof(c->ps[i].why), "%s",
				 tok ? LIGHT_NO_TOKENS : "per-niov hook: not attached in light mode");
		}
	}
	err = open_and_load(c);
	if (err) {
		snprintf(why, sizeof(why), "cannot load BPF programs: %s%s",
			 err_str(err, ebuf, sizeof(ebuf)),
			 err == -EPERM ? " (locked down kernel or missing CAP_BPF/CAP_PERFMON?)" :
			 "");
		goto err_msg;
	}
	attach_all(c);
	if (c->light && (!c->ps[P_LIGHT_READ].loaded || !attached(c, P_PP_DESTROY) ||
			 !c->ps[P_PP_HOLD].loaded || !c->ps[P_PP_RELEASE].loaded)) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "light mode needs the page_pool_release tracepoint "
			 "and the counter reader: %s",
			 !c->ps[P_LIGHT_READ].loaded ? why_not(c, P_LIGHT_READ) :
			 why_not(c, P_PP_DESTROY));
		goto err_msg;
	}
	if (!c->light && (!attached(c, P_PP_HOLD) || !attached(c, P_PP_RELEASE))) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "cannot attach the page_pool tracepoints: %s",
			 why_not(c, attached(c, P_PP_HOLD) ? P_PP_RELEASE : P_PP_HOLD));
		goto err_msg;
	}
	if (c->light)
		c->mode = DMT_MODE_LIGHT;
	else if (attached(c, P_DM_ALLOC) && attached(c, P_DM_CREATE))
		c->mode = DMT_MODE_DEVMEM_TP;
	else if (attached(c, P_MP_ALLOC_EXIT) || attached(c, P_BIND_EXIT))
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
	if (c->opts.errbuf && c->opts.errlen)
		snprintf(c->opts.errbuf, c->opts.errlen, "%s", why);
	else if (c->opts.log)
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

int collector__events_fd(const struct collector *c)
{
	return ring_buffer__epoll_fd(c->rb);
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

#define READ_ONCE_U64(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * Light mode: one sampling window. The per-page tracepoints are attached
 * for window_ns: they find the pools that have traffic (their address,
 * identity, provider) and sample refill batches. A refill still open when
 * the window closes is dropped, never counted short.
 */
static void light_window(struct collector *c)
{
	struct timespec ts = { .tv_sec = c->window_ns / 1000000000ULL,
			       .tv_nsec = c->window_ns % 1000000000ULL };
	enum prog_id ids[2] = { P_PP_HOLD, P_PP_RELEASE };

	c->last_window = now_mono_ns();
	for (int k = 0; k < 2; k++) {
		struct prog_state *ps = &c->ps[ids[k]];

		ps->link = bpf_program__attach(ps->prog);
		if (!ps->link)
			coll_log(c, 1, "window: attach %s failed: %s", progs[ids[k]].name,
				 strerror(errno));
		else
			ps->ran = true;
	}
	nanosleep(&ts, NULL);
	for (int k = 0; k < 2; k++) {
		bpf_link__destroy(c->ps[ids[k]].link);
		c->ps[ids[k]].link = NULL;
	}
	for (__u32 i = 0; i < DMT_POOL_SLOTS; i++)
		if (READ_ONCE_U64(c->slots[i].addr))
			__atomic_store_n(&c->slots[i].batch_open, 0, __ATOMIC_RELAXED);
	c->windows++;
}

/* Light mode: run light_read for the pool of map value v. */
static int light_read(struct collector *c, const struct dmt_pool *v, struct dmt_light_read *o)
{
	__u64 args[2] = { v->addr, v->id };
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.light_read), &t))
		return -errno;
	*o = c->skel->bss->light_out;
	return 0;
}

/*
 * Light mode: the pool's counters as the kernel has them now. Its holds and
 * releases count from the pool's creation (the base is 0), whichever came
 * first of us and the pool. A pool destroyed meanwhile keeps the values its
 * page_pool_release tracepoint gave (map value re-read by the caller).
 */
static bool light_pool(struct collector *c, struct dmt_pool *v)
{
	struct dmt_light_read o = {};
	bool gone = false;

	if (!(v->flags & DMT_POOL_GONE) && !light_read(c, v, &o)) {
		if (o.status == DMT_LIGHT_OK) {
			v->hold_cnt = o.hold_cnt;
			v->release_cnt = o.release_cnt;
		} else if (o.status == DMT_LIGHT_GONE) {
			gone = true;
		} else {
			c->light_stale++;
			coll_log(c, 2, "light read of pool %u at %#llx: status %u (read id %u)",
				 v->id, (unsigned long long)v->addr, o.status, o.id);
		}
	}
	v->hold_base = 0;
	v->release_base = 0;
	return gone;
}

static int read_pools(struct collector *c, struct dmt_snapshot *s)
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
		if (c->light && light_pool(c, &v)) {
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
		if (c->light && light_pool(c, &v)) {
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

static int merge_netlink(struct collector *c, struct dmt_snapshot *s)
{
	struct nl_pool_info *nlp = NULL;
	size_t n = 0;
	int err;

	if (!c->nl)
		return 0;
	err = netdev_nl__pools(c->nl, &nlp, &n);
	if (err) {
		/* the dump is an enrichment: the snapshot stands without it */
		coll_log(c, 2, "page-pool-get dump failed: %s", strerror(-err));
		return 0;
	}
	err = snapbuild_merge_netlink(s, nlp, n);
	free(nlp);
	/* light mode: a listed pool no window or per-call hook has located yet */
	for (size_t i = 0; !err && c->light && i < s->n_pools; i++)
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

	if (!c->ps[P_WALK_BINDING].loaded)
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

static int read_tokens(struct collector *c, struct dmt_snapshot *s)
{
	struct dmt_holder *hs = NULL;
	struct dmt_tok_entry *toks = NULL;
	size_t n = 0, nh = 0;
	__u32 zero = 0;
	int err;

	tok_agg__free(&c->tok_agg);
	memset(&c->tok_stats, 0, sizeof(c->tok_stats));
	bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.tok_stats), &zero, &c->tok_stats);
	tok_cost_from_bpf(&s->tok_cost, &c->tok_stats);
	if (!c->ps[P_TOK_DESTROY].loaded)
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
	if (err)
		goto out;
	read_holders(c, hs, &nh, 2 * DMT_MAX_HOLDERS);
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
	b->held_why = DMT_HELD_NO_REASON;
	if (!tokens_tracked(c))
		return;	/* the availability says why */
	if (!v || !(v->flags & DMT_BIND_SEEN_CREATE)) {
		b->held_why = DMT_HELD_ATTACHED_LATE;
		return;
	}
	/*
	 * The fallback forgets a destroyed socket's tokens only through its
	 * holder entry: a socket the holder map had no room for keeps them.
	 */
	if (v->tok_lost || (c->tok_fallback && c->tok_stats.holders_full)) {
		b->held_why = DMT_HELD_MAP_FULL;
		return;
	}
	if (c->tok_fallback && (c->tok_stats.dontneed_mismatch || c->tok_stats.no_socket)) {
		b->held_why = c->tok_stats.no_socket ? DMT_HELD_NO_SOCKET :
			      DMT_HELD_DONTNEED_MISMATCH;
		return;
	}
	h = tok_agg__binding(&c->tok_agg, b->id);
	b->held_tokens = h ? (int64_t)h->tokens : 0;
	b->held_by_sockets = h ? (int64_t)h->niovs : 0;
}

static int read_binding_map(struct collector *c, struct dmt_snapshot *s,
			    struct snapbuild_addrs *addrs)
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
		b = snapbuild_add_binding(s, &v);
		if (!b || snapbuild_addr_set(addrs, s->n_bindings - 1, v.addr))
			return -ENOMEM;
		binding_held(c, b, &v);
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
	struct snapbuild_addrs addrs = {};
	bool in_pools_known = c->ps[P_PP_HOLD].attached || c->light;
	int err;

	if (!c->have_devmem)
		return 0;
	err = read_binding_map(c, s, &addrs);
	if (!err)
		err = snapbuild_link_pools(s, &addrs);
	for (size_t i = 0; !err && i < s->n_bindings; i++) {
		struct dmt_binding_snap *b = &s->bindings[i];
		uint64_t addr = i < addrs.n ? addrs.v[i] : 0;
		struct dmt_walk w = {};

		if (b->alive && addr && !walk_binding(c, addr, &w) && w.id == b->id)
			snapbuild_apply_walk(b, &w, c->mode);
		snapbuild_finish_binding(b, in_pools_known);
		if (b->held_tokens < 0 && !b->held_why)
			binding_held(c, b, NULL);
	}
	if (!err && c->light)
		snapbuild_light_niov_frees(s);
	if (!err)
		err = binding_memory__apply(c->bindings, s);
	free(addrs.v);
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
 * loads every program and attaches a few).
 */
static void read_prog_stats(struct collector *c, struct dmt_snapshot *s)
{
	s->bpf_stats_enabled = bpf_stats_sysctl(c) || c->stats_fd >= 0;
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
		if (c->ps[i].ran &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(c->ps[i].prog), &info, &len)) {
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

	/* light mode: the window first, so the snapshot's time is its reads' */
	if (c->light && (!c->windows || t0 - c->last_window >= c->period_ns)) {
		light_window(c);
		t0 = now_mono_ns();
	}
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
	err = merge_netlink(c, s);
	if (!err)
		err = rate_tracker__apply(c->rates, s);
	if (!err)
		err = read_tokens(c, s);
	if (!err)
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
	if (c->stats_sysctl_fd >= 0)
		close(c->stats_sysctl_fd);
	for (size_t i = 0; i < c->n_log; i++)
		free(c->log[i]);
	free(c->log);
	rate_tracker__free(c->rates);
	binding_memory__free(c->bindings);
	tok_agg__free(&c->tok_agg);
	free(c);
}
