// SPDX-License-Identifier: GPL-2.0
/*
 * Collector: run-time probes, load/attach, and map -> snapshot.
 *
 * Lifecycle follows libbpf-tools: probe -> open -> set autoload and rodata
 * -> load -> attach each program on its own, so one hook that cannot attach
 * makes its metrics "unavailable: <reason>" instead of failing the tool.
 * This file holds the lifecycle; collector_int.h lists the other parts.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "collector_int.h"
#include "util.h"
#include "devmemtop.skel.h"

static int rb_event(void *ctx, void *data, size_t len);

void coll_log(struct collector *c, int level, const char *fmt, ...)
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

void run_log(struct collector *c, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!c->opts.log || level > c->opts.verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
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

/* ---- load / attach ------------------------------------------------------ */

/*
 * Opens the object with every program's autoload and rodata set from the
 * probes; "only" >= 0 loads that one program and none of the others (the
 * per-program retry below). DEVMEMTOP_FAULT_PROG=NAME[,NAME...] gives each named program a
 * type no kernel loads: the tests' way to break one program on a kernel
 * where all of them load.
 */
static bool fault_injected(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static int skel_open(struct collector *c, int only)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_btf_path());
	const char *fault = getenv("DEVMEMTOP_FAULT_PROG");

	c->skel = devmemtop__open_opts(&oo);
	if (!c->skel)
		return -errno ? -errno : -ENOMEM;
	c->skel->rodata->devmem_alloc_fn = c->devmem_alloc_fn;
	c->skel->rodata->io_uring_alloc_fn = c->io_uring_alloc_fn;
	c->skel->rodata->binding_free_takes_work = binding_free_takes_work(c->vmlinux);
	c->skel->rodata->use_devmem_tp = false;
	c->skel->rodata->tok_fallback = c->ar.tok_fallback;
	/*
	 * devmem pools' refills counted at the provider call, not per page:
	 * the devmem_alloc tracepoint where the kernel has it, else the
	 * provider's fexit (light mode attaches it anyway, for the allocation
	 * latency: a kernel without our tracepoints, such as stock 7.3, still
	 * gets exact devmem refills and its devmem pools located at once)
	 */
	c->skel->rodata->light_devmem_refill =
		(c->ar.light || c->ar.devmem) &&
		(c->ps[DMT_H_DM_ALLOC].wanted || c->ps[DMT_H_MP_ALLOC_EXIT].wanted);
	/* zcrx pools the same, at fexit/io_pp_zc_alloc_netmems */
	c->skel->rodata->light_zcrx_refill =
		(c->ar.light || c->ar.devmem) && c->ps[DMT_H_ZC_ALLOC_EXIT].wanted;
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		c->ps[i].prog = bpf_object__find_program_by_name(c->skel->obj, dmt_hooks[i].name);
		if (!c->ps[i].prog)
			return -ENOENT;
		bpf_program__set_autoload(c->ps[i].prog,
					  c->ps[i].wanted && (only < 0 || (size_t)only == i));
		if (dmt_hooks[i].group == DMT_HG_DEVMEM_TP && c->ps[i].wanted)
			c->skel->rodata->use_devmem_tp = true;
		if (fault_injected(fault, dmt_hooks[i].name))	/* the kernel refuses it */
			bpf_program__set_type(c->ps[i].prog, BPF_PROG_TYPE_UNSPEC);
	}
	return 0;
}

/*
 * Load every wanted program. When the object does not load (a program
 * the probes accepted fails the verifier, a CO-RE relocation or its attach
 * target), each wanted program is loaded alone to find which ones fail:
 * those become "unavailable" with their own error and the rest load
 * together, so one broken program never takes its siblings down with it.
 */
static int open_and_load(struct collector *c)
{
	char eb[128];
	int err, n_failed = 0;

	err = skel_open(c, -1);
	if (!err)
		err = devmemtop__load(c->skel);
	if (!err)
		return 0;
	devmemtop__destroy(c->skel);
	c->skel = NULL;
	if (err == -ENOENT || err == -ENOMEM)
		return err;
	coll_log(c, 1, "load failed (%s): loading each program alone to find which",
		 err_str(err, eb, sizeof(eb)));
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		int perr;

		if (!c->ps[i].wanted)
			continue;
		perr = skel_open(c, (int)i);
		if (!perr)
			perr = devmemtop__load(c->skel);
		devmemtop__destroy(c->skel);
		c->skel = NULL;
		if (!perr)
			continue;
		c->ps[i].wanted = false;
		n_failed++;
		snprintf(c->ar.hook[i].why, sizeof(c->ar.hook[i].why),
			 "BPF load of %s failed (%.40s); run with -vv for the verifier log",
			 dmt_hooks[i].name, err_str(perr, eb, sizeof(eb)));
		coll_log(c, 1, "program %s does not load: %s", dmt_hooks[i].name, eb);
	}
	if (!n_failed) {
		coll_log(c, 1, "every program loads alone, but not together (%s)",
			 err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = skel_open(c, -1);
	if (!err)
		err = devmemtop__load(c->skel);
	if (err) {
		devmemtop__destroy(c->skel);
		c->skel = NULL;
		coll_log(c, 1, "load without the %d failed program(s) failed too (%s)", n_failed,
			 err_str(err, eb, sizeof(eb)));
	}
	return err;
}

static void attach_all(struct collector *c)
{
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		struct prog_state *s = &c->ps[i];
		struct dmt_hook_result *hr = &c->ar.hook[i];

		hr->loaded = s->wanted;
		if (!s->wanted || dmt_hooks[i].kind == DMT_HK_RUN)
			continue;
		/* light and devmem modes: attached only inside sampling windows */
		if ((c->ar.light || c->ar.devmem) && dmt_hooks[i].window) {
			snprintf(hr->why, sizeof(hr->why), "%s mode: attached in sampling windows",
				 c->ar.light ? "light" : "devmem");
			continue;
		}
		s->link = bpf_program__attach(s->prog);
		if (!s->link) {
			snprintf(hr->why, sizeof(hr->why), "attach %s failed: %s",
				 dmt_hooks[i].target, strerror(errno));
			coll_log(c, 1, "attach %-20s failed: %s", dmt_hooks[i].name, strerror(errno));
			continue;
		}
		hr->attached = true;
		s->ran = true;
	}
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

/* Privileges, BTF with the page_pool tracepoints, and the kernel facts. */
static int collector_setup(struct collector *c, char *why, size_t len)
{
	char ebuf[128];
	int err;

	err = check_environment(why, len);
	if (err)
		return err;
	c->vmlinux = kernel_btf_path() ? btf__parse(kernel_btf_path(), NULL) :
					 btf__load_vmlinux_btf();
	if (!c->vmlinux) {
		err = -errno;
		snprintf(why, len, "cannot parse kernel BTF: %s", err_str(err, ebuf, sizeof(ebuf)));
		return err;
	}
	if (!btf_has(c->vmlinux, "btf_trace_page_pool_state_hold", BTF_KIND_TYPEDEF)) {
		snprintf(why, len, "no page_pool tracepoints in this kernel "
			 "(needs CONFIG_PAGE_POOL and tracepoint BTF)");
		return -ENOENT;
	}
	c->ar.have_devmem = btf_has(c->vmlinux, "net_devmem_dmabuf_binding", BTF_KIND_STRUCT);
	c->ar.light = c->opts.force_mode == DMT_MODE_LIGHT;
	c->ar.devmem = c->opts.force_mode == DMT_MODE_DEVMEM;
	c->ar.window_ns = (c->opts.light_window_ms ? c->opts.light_window_ms :
			   DMT_LIGHT_WINDOW_MS) * 1000000ULL;
	c->ar.period_ns = (c->opts.light_period_ms ? c->opts.light_period_ms :
			   DMT_LIGHT_PERIOD_MS) * 1000000ULL;
	coll_log(c, 1, "kernel devmem support: %s", c->ar.have_devmem ? "yes" : "no");
	read_kallsyms(c);
	return 0;
}

/* The pool table's mapping, the ring buffer, netlink and run-time stats. */
static int collector_open_io(struct collector *c, char *why, size_t len)
{
	struct stat st;
	int err;

	c->slots_len = sizeof(struct dmt_pool) * DMT_POOL_SLOTS;
	c->slots = mmap(NULL, c->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(c->skel->maps.pool_slots), 0);
	if (c->slots == MAP_FAILED) {
		err = -errno;
		c->slots = NULL;
		snprintf(why, len, "cannot map the pool table: %s", strerror(-err));
		return err;
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), rb_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		snprintf(why, len, "cannot open the event ring buffer: %s", strerror(-err));
		return err;
	}
	/* netlink dumps and light mode's socket walk answer for this namespace */
	if (!stat("/proc/self/ns/net", &st))
		c->netns = st.st_ino;
	if (!c->opts.no_netlink) {
		c->nl = netdev_nl__new();
		if (!c->nl)
			snprintf(c->ar.nl_why, sizeof(c->ar.nl_why), "netdev genl family: %s",
				 strerror(errno));
	} else {
		snprintf(c->ar.nl_why, sizeof(c->ar.nl_why), "disabled by --no-netlink");
	}
	c->ar.netlink = c->nl != NULL;
	if (c->nl)
		netlink_probe(c);
	if (c->opts.enable_bpf_stats) {
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c->stats_fd < 0)
			coll_log(c, 1, "cannot enable BPF run-time stats: %s", strerror(errno));
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

	err = collector_setup(c, why, sizeof(why));
	if (err)
		goto err_msg;
	select_programs(c);
	err = open_and_load(c);
	if (err) {
		snprintf(why, sizeof(why), "cannot load BPF programs: %s%s",
			 err_str(err, ebuf, sizeof(ebuf)),
			 err == -EPERM ? " (locked down kernel or missing CAP_BPF/CAP_PERFMON?)" :
			 "");
		goto err_msg;
	}
	attach_all(c);
	err = dmt_attach__check(&c->ar, why, sizeof(why));
	if (err)
		goto err_msg;
	c->mode = dmt_attach_mode__decide(&c->ar);
	coll_log(c, 1, "attach mode: %s", dmt_mode_name(c->mode));
	if (c->ar.light)
		tokiter_open(c);
	/* holders' cgroups: the tree opened before any privilege drop */
	if ((c->ar.hook[DMT_H_TOK_DESTROY].loaded || c->ar.tok_iter) && holder_cgroups_open(c)) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto err_msg;
	}
	err = collector_open_io(c, why, sizeof(why));
	if (err)
		goto err_msg;
	return c;

err_msg:
	if (c->opts.errbuf && c->opts.errlen)
		snprintf(c->opts.errbuf, c->opts.errlen, "%s", why);
	else if (c->opts.log)
		dmt_err("%s", why);	/* a caller without errbuf: said here, once */
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

int collector__snapshot(struct collector *c, struct dmt_snapshot **out)
{
	struct dmt_snapshot *s;
	uint64_t t0 = now_mono_ns();
	bool ntf;
	int err;

	/*
	 * light mode: the window first, so the snapshot's time is its reads';
	 * a pool announced by a notification and not located yet brings it
	 * forward (at most one window per snapshot)
	 */
	ntf = pool_notifications(c);
	if ((c->ar.light || c->ar.devmem) &&
	    (ntf || !c->windows || t0 - c->last_window >= c->ar.period_ns)) {
		if (ntf && c->windows && t0 - c->last_window < c->ar.period_ns)
			run_log(c, 2, "page-pool notifications: window brought forward (%llu, "
				 "%llu notifications read)",
				 (unsigned long long)++c->ntf_windows,
				 (unsigned long long)c->ntf_seen);
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
	dmt_availability__decide(&c->ar, s->avail);

	err = read_pools(c, s);
	if (!err)
		err = read_zcrx(c, s);
	if (err)
		goto err_free;
	s->rxq_bound = s->rxq_unbound = s->rx_alloc_fail = -1;
	err = merge_netlink(c, s);
	if (!err)
		err = rate_tracker__apply(c->rates, s);
	if (!err)
		err = read_tokens(c, s);
	if (!err)
		err = read_bindings(c, s);
	if (!err)
		err = read_queues(c, s);
	if (err)
		goto err_free;
	read_globals(c, s);
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
	for (size_t i = 0; i < DMT_H__COUNT; i++)
		bpf_link__destroy(c->ps[i].link);
	ring_buffer__free(c->rb);
	if (c->slots)
		munmap(c->slots, c->slots_len);
	tokiter_close(c);
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
	cgpath__free(c->cgpaths);
	free(c);
}
