// SPDX-License-Identifier: GPL-2.0
/*
 * Collector, part 1: what this kernel lets us use. BTF lookups, a
 * two-instruction fentry/fexit probe per target, kallsyms, and the program
 * choice: probe results, then the mode policy (dmt_hooks[].modes), then the
 * overlaps (devmem tracepoints over fentry, 0009's token tracepoints over
 * the cmsg fallback).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "collector_int.h"
#include "util.h"

/*
 * The kernel BTF: /sys/kernel/btf/vmlinux, or DEVMEMTOP_KERNEL_BTF (a raw
 * BTF or ELF file) for kernels whose BTF lives elsewhere, and for tests.
 */
const char *kernel_btf_path(void)
{
	const char *p = getenv("DEVMEMTOP_KERNEL_BTF");

	return p && *p ? p : NULL;
}

/*
 * The BTF our objects' CO-RE relocations resolve against: the kernel's
 * (above), or /sys/kernel/btf/vmlinux. Named even when it is the default,
 * because libbpf then searches no module BTFs for a type vmlinux lacks (a
 * devmem type on 6.1, a 7.x zcrx type on 6.18): listing module BTFs needs
 * CAP_SYS_ADMIN, and libbpf 1.1 (Debian 12) fails the whole load when it is
 * refused, so devmemtop with only CAP_BPF and CAP_PERFMON could not load on
 * such a kernel. Every type we read is built in, none is a module's.
 */
const char *core_btf_path(void)
{
	const char *p = kernel_btf_path();

	if (p)
		return p;
	return access("/sys/kernel/btf/vmlinux", R_OK) ? NULL : "/sys/kernel/btf/vmlinux";
}

bool btf_has(const struct btf *btf, const char *name, int kind)
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

	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		const struct dmt_hook_desc *d = &dmt_hooks[i];
		struct dmt_hook_result *s = &c->ar.hook[i];
		int err = 0;

		s->why[0] = '\0';
		switch (d->kind) {
		case DMT_HK_TP_BTF:
			snprintf(tp_name, sizeof(tp_name), "btf_trace_%s", d->target);
			if (!btf_has(c->vmlinux, tp_name, BTF_KIND_TYPEDEF)) {
				snprintf(s->why, sizeof(s->why), "tracepoint %s not in this kernel",
					 d->target);
				err = -ENOENT;
			}
			break;
		case DMT_HK_RUN:
			/* light_read: not even probed outside light and devmem modes */
			if (!dmt_hook_in_mode(i, c->opts.force_mode)) {
				snprintf(s->why, sizeof(s->why), "%s",
					 dmt_hook_mode_why(i, c->opts.force_mode));
				err = -ENOENT;
			} else if (d->group == DMT_HG_WALK && !c->ar.have_devmem) {
				snprintf(s->why, sizeof(s->why),
					 "kernel has no devmem (CONFIG_NET_DEVMEM)");
				err = -ENOENT;
			} else if (d->group == DMT_HG_ZCRX &&
				   !btf_has(c->vmlinux, d->target, BTF_KIND_STRUCT)) {
				snprintf(s->why, sizeof(s->why), "%s", DMT_NO_ZCRX);
				err = -ENOENT;
			}
			break;
		case DMT_HK_FENTRY:
		case DMT_HK_FEXIT:
			if (d->group == DMT_HG_ZCRX &&
			    !btf_has(c->vmlinux, d->target, BTF_KIND_FUNC)) {
				snprintf(s->why, sizeof(s->why), "%s", DMT_NO_ZCRX);
				err = -ENOENT;
			} else if (!c->ar.have_devmem && d->group != DMT_HG_ZCRX) {
				snprintf(s->why, sizeof(s->why),
					 "kernel has no devmem (CONFIG_NET_DEVMEM)");
				err = -ENOENT;
			} else if (fentry_err == -EPERM) {
				/* refused once is refused everywhere: don't ask again */
				snprintf(s->why, sizeof(s->why), "%s", fentry_why);
				err = -EPERM;
			} else {
				err = probe_tracing(c->vmlinux, d->target, d->kind == DMT_HK_FEXIT,
						    s->why, sizeof(s->why));
				if (err == -EPERM) {
					fentry_err = err;
					snprintf(fentry_why, sizeof(fentry_why), "%s", s->why);
				}
			}
			break;
		}
		c->ps[i].wanted = !err;
		coll_log(c, 1, "probe %-20s %-7s %-34s %s", d->name, dmt_hook_kind_name(d->kind),
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
	static const enum dmt_hook covered[] = {
		DMT_H_BIND_EXIT, DMT_H_UNBIND_ENTRY, DMT_H_BINDING_FREE_ENTRY, DMT_H_DONTNEED_EXIT,
	};

	for (size_t i = 0; i < DMT_H__COUNT; i++)
		if (dmt_hooks[i].group == DMT_HG_DEVMEM_TP && !c->ps[i].wanted)
			return;
	for (size_t k = 0; k < ARRAY_SIZE(covered); k++) {
		struct prog_state *ps = &c->ps[covered[k]];
		struct dmt_hook_result *hr = &c->ar.hook[covered[k]];

		if (!ps->wanted)
			continue;
		ps->wanted = false;
		snprintf(hr->why, sizeof(hr->why), "not needed: devmem tracepoints cover it");
		coll_log(c, 1, "skip  %-20s covered by the devmem tracepoints",
			 dmt_hooks[covered[k]].name);
	}
}

static bool group_wanted(const struct collector *c, enum dmt_hook_group g)
{
	for (size_t i = 0; i < DMT_H__COUNT; i++)
		if (dmt_hooks[i].group == g && !c->ps[i].wanted)
			return false;
	return true;
}

static void unwant(struct collector *c, enum dmt_hook id, const char *why)
{
	struct prog_state *ps = &c->ps[id];
	struct dmt_hook_result *hr = &c->ar.hook[id];

	if (!ps->wanted)
		return;
	ps->wanted = false;
	snprintf(hr->why, sizeof(hr->why), "%s", why);
	coll_log(c, 1, "skip  %-20s %s", dmt_hooks[id].name, why);
}

/*
 * Frag tokens come from 0009's tracepoints where the kernel has them, else
 * from the cmsg writer (fexit/put_cmsg_notrunc), which only makes sense
 * with the DONTNEED reader and the recvmsg socket stash next to it: a
 * tracker that sees tokens go out but not come back would only fill up.
 */
static void choose_token_source(struct collector *c)
{
	static const enum dmt_hook need[] = { DMT_H_TOK_RECVMSG_ENTRY, DMT_H_TOK_DONTNEED_ENTRY };
	const char *fb = "fallback in use: not every devmem_token_* tracepoint is here";

	/*
	 * Tokens without SO_DEVMEM_AUTORELEASE (kernel-patches 0012): all three
	 * events or none (a count that goes up and is never taken back down
	 * would be wrong), and only beside 0009's.
	 */
	if (!group_wanted(c, DMT_HG_UREF_TP) || !group_wanted(c, DMT_HG_TOK_TP)) {
		const char *why = !group_wanted(c, DMT_HG_TOK_TP) ?
			"needs the devmem_token_* tracepoints (0009)" :
			"not every devmem_frag_recv/devmem_uref_* tracepoint is here (0012)";

		unwant(c, DMT_H_UREF_TP_RECV, why);
		unwant(c, DMT_H_UREF_TP_DONTNEED, why);
		unwant(c, DMT_H_UREF_TP_DRAIN, why);
	}
	if (group_wanted(c, DMT_HG_TOK_TP)) {
		c->ar.tok_fallback = false;
		unwant(c, DMT_H_TOK_CMSG_EXIT, "not needed: devmem_token_* tracepoints cover it");
		/* one program less on every TCP recvmsg of the host */
		unwant(c, DMT_H_TOK_RECVMSG_ENTRY,
		       "not needed: devmem_token_recv opens the call's count");
		return;
	}
	c->ar.tok_fallback = true;
	unwant(c, DMT_H_TOK_TP_RECV, fb);
	unwant(c, DMT_H_TOK_TP_DONTNEED, fb);
	unwant(c, DMT_H_TOK_TP_RELEASE, fb);
	for (size_t k = 0; k < ARRAY_SIZE(need); k++) {
		char why[160];

		if (c->ps[need[k]].wanted)
			continue;
		snprintf(why, sizeof(why), "needs %s: %.120s", dmt_hooks[need[k]].name,
			 c->ar.hook[need[k]].why);
		unwant(c, DMT_H_TOK_CMSG_EXIT, why);
	}
	/* no token source: nothing to forget at a socket's destruction */
	if (!c->ps[DMT_H_TOK_CMSG_EXIT].wanted)
		unwant(c, DMT_H_TOK_DESTROY, "not needed: no frag token source");
}

/*
 * The TX figures need every TX hook: a send counted with no reference
 * taken, or references taken with none dropped, would be wrong. A kernel
 * without devmem TX (6.12) has skb_zerocopy_iter_stream without the
 * binding argument: it loads nothing of this group. The zcrx figures the
 * same: a call timed but not counted, or a walk of pools no hook saw
 * alive (it reads none), would be figures of nothing.
 */
static void all_or_none(struct collector *c, enum dmt_hook_group g)
{
	char why[160];

	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		if (dmt_hooks[i].group != g || c->ps[i].wanted)
			continue;
		snprintf(why, sizeof(why), "needs %s: %.120s", dmt_hooks[i].name,
			 c->ar.hook[i].why);
		for (size_t k = 0; k < DMT_H__COUNT; k++)
			if (dmt_hooks[k].group == g && k != i)
				unwant(c, k, why);
		return;
	}
}

void read_kallsyms(struct collector *c)
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
bool binding_free_takes_work(const struct btf *btf)
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

/*
 * The mode policy: a program whose row lacks this --mode's bit stays off,
 * with the row's reason. Quietly, as the probes' verdicts are logged.
 */
static void apply_mode_policy(struct collector *c)
{
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		struct dmt_hook_result *hr = &c->ar.hook[i];

		if (!c->ps[i].wanted || dmt_hook_in_mode(i, c->opts.force_mode))
			continue;
		c->ps[i].wanted = false;
		snprintf(hr->why, sizeof(hr->why), "%s", dmt_hook_mode_why(i, c->opts.force_mode));
	}
}

/*
 * Which programs to load: what the probes accept, less what the mode
 * excludes and what another program already covers. -m fentry/tp apply
 * before the overlaps are settled (their caps decide which source wins);
 * light mode after, so it keeps the same per-call hooks and token source
 * choice as the full mode on this kernel and only drops the per-item ones.
 */
void select_programs(struct collector *c)
{
	probe_all(c);
	if (!c->ar.light)
		apply_mode_policy(c);
	prefer_devmem_tracepoints(c);
	choose_token_source(c);
	if (c->ar.light)
		apply_mode_policy(c);
	all_or_none(c, DMT_HG_TX);
	all_or_none(c, DMT_HG_ZCRX);
}
