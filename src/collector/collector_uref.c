// SPDX-License-Identifier: GPL-2.0
/*
 * Light mode's held tokens without SO_DEVMEM_AUTORELEASE (kernel-patches
 * 0012): the kernel counts them per net_iov (net_iov->uref), so at each
 * snapshot bpf/urefwalk.bpf.c reads every net_iov of each live binding
 * (one BPF_PROG_TEST_RUN per binding, like walk_binding) and its records
 * join the iterator's token entries (src/core/tokiter.c), counted by
 * tokens__aggregate() as the full mode counts its own. Loaded only where
 * the kernel's net_iov has uref: elsewhere no socket can read in that
 * mode and nothing runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "collector_int.h"
#include "util.h"
#include "tokiter.h"
#include "devmemtop.skel.h"
#include "urefwalk.skel.h"

struct uref_state {
	struct urefwalk *skel;
	struct dmt_uref_rec *recs;	/* uref_recs, mmap()ed */
	size_t recs_len;
	struct tok_uref_status *st;	/* this snapshot's walks */
	size_t n_st;
	bool kernel;			/* the kernel's net_iov has uref */
	bool ready;			/* loaded: walks run */
	bool skipped;			/* no devmem pool listed: nothing held, no walk */
	struct bpf_link *pin;		/* uref_pin: bindings read without autorelease */
	uint64_t pin_since;		/* CLOCK_MONOTONIC ns it was attached */
	uint64_t skipped_bindings;	/* this snapshot's bindings no such socket read */
	uint64_t bpf_ns;		/* the last snapshot's walks: BPF run time */
	uint64_t wall_ns;		/* and wall time, all bindings */
	uint64_t walked;		/* net_iovs read */
};

static bool btf_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; m && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

/* open and load the skeleton, with or without its fentry program */
static int uref_load(struct collector *c, struct uref_state *u, bool pin)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_btf_path());
	int err;

	urefwalk__destroy(u->skel);
	u->skel = urefwalk__open_opts(&oo);
	if (!u->skel)
		return -errno;
	pin = pin && btf__find_by_name_kind(c->vmlinux, "net_devmem_dmabuf_binding_get_user",
					    BTF_KIND_FUNC) >= 0;
	bpf_program__set_autoload(u->skel->progs.uref_pin, pin);
	err = bpf_map__reuse_fd(u->skel->maps.live_bindings,
				bpf_map__fd(c->skel->maps.live_bindings));
	if (!err)
		err = urefwalk__load(u->skel);
	if (!err && pin) {
		u->pin = bpf_program__attach(u->skel->progs.uref_pin);
		if (!u->pin)
			err = -errno;
		u->pin_since = now_mono_ns();
	}
	if (err && pin)
		coll_log(c, 1, "tokens: uref walk: fentry/net_devmem_dmabuf_binding_get_user: %s: "
			 "every binding walked at each snapshot", strerror(-err));
	return err;
}

/* Light mode: load the uref walk where the kernel has net_iov.uref; say why not. */
void uref_open(struct collector *c)
{
	struct uref_state *u = calloc(1, sizeof(*u));
	int err;

	c->ur = u;
	if (!u)
		return;
	u->kernel = c->vmlinux && btf_member(c->vmlinux, "net_iov", "uref");
	if (!u->kernel) {
		coll_log(c, 2, "tokens: net_iov has no uref (kernel without SO_DEVMEM_AUTORELEASE): "
			 "no uref walk");
		return;
	}
	err = uref_load(c, u, true);
	if (err)	/* fentry refused or the function missing: walk every binding */
		err = uref_load(c, u, false);
	if (err) {
		coll_log(c, 1, "tokens: uref walk: load refused: %s: held tokens of bindings "
			 "unknown", strerror(-err));
		return;
	}
	u->recs_len = (size_t)DMT_UREF_MAX_RECS * sizeof(struct dmt_uref_rec);
	u->recs = mmap(NULL, u->recs_len, PROT_READ, MAP_SHARED,
		       bpf_map__fd(u->skel->maps.uref_recs), 0);
	if (u->recs == MAP_FAILED) {
		u->recs = NULL;
		coll_log(c, 1, "tokens: uref walk: mmap uref_recs: %s", strerror(errno));
		return;
	}
	u->ready = true;
	c->ar.tok_uref = true;
	coll_log(c, 1, "tokens: uref walk loaded: net_iov uref counts read at each snapshot%s",
		 u->pin ? ", of the bindings a socket without autorelease read from" : "");
}

void uref_close(struct collector *c)
{
	struct uref_state *u = c->ur;

	if (!u)
		return;
	if (u->recs)
		munmap(u->recs, u->recs_len);
	bpf_link__destroy(u->pin);
	urefwalk__destroy(u->skel);
	free(u->st);
	free(u);
	c->ur = NULL;
}

/* one binding: its status, and its records into *toks */
static int uref_one(struct collector *c, const struct dmt_binding *v, uint64_t now_ns,
		    struct dmt_tok_entry **toks, size_t *n)
{
	struct uref_state *u = c->ur;
	__u64 args[1] = { v->addr };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));
	struct tok_uref_status *s = &u->st[u->n_st++];
	struct dmt_uref_out r;
	char why[96];

	s->binding_id = v->id;
	s->flags = DMT_UREF_UNKNOWN;
	if (!v->addr)
		goto log;
	if (bpf_prog_test_run_opts(bpf_program__fd(u->skel->progs.uref_walk), &o)) {
		s->flags = DMT_UREF_FAULT;
		goto log;
	}
	r = u->skel->bss->uref_out;
	s->flags = r.flags;
	if (!r.flags && (r.id != v->id || r.recs != r.niovs))
		s->flags = DMT_UREF_FAULT;	/* another binding at the address, or torn */
	u->walked += r.walked;
	if (!s->flags)
		return tok_iter__add_urefs(toks, n, v->id, u->recs, r.recs, now_ns);
log:
	if (c->opts.log && c->opts.verbosity >= 2 && tok_iter__uref_why(s->flags, why, sizeof(why)))
		c->opts.log(2, "tokens: uref walk of binding %u incomplete: %s\n", v->id, why);
	return 0;
}

/*
 * Whether binding v may hold tokens without autorelease: uref_pin saw a
 * socket in that mode read from it, or it cannot say (not attached, the
 * binding created before it was, or its create time unknown).
 */
static bool uref_needed(const struct uref_state *u, const struct dmt_binding *v)
{
	__u32 one;

	if (!u->pin || u->skel->bss->pin_lost || !(v->flags & DMT_BIND_SEEN_CREATE) ||
	    v->create_ns <= u->pin_since)
		return true;
	return !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.manual_bindings), &v->id, &one);
}

/*
 * This snapshot's uref counts: every live binding of the binding map
 * walked, its records appended to *toks; the status of each in c->ur.
 * Nothing on a kernel without net_iov.uref.
 */
int uref_walk_all(struct collector *c, uint64_t now_ns, struct dmt_tok_entry **toks, size_t *n)
{
	struct uref_state *u = c->ur;
	int fd = bpf_map__fd(c->skel->maps.bindings);
	uint64_t t0 = now_mono_ns(), b0;
	struct dmt_binding v;
	__u32 key, next;
	int err = 0;

	if (!u || !u->kernel)
		return 0;
	u->n_st = 0;
	u->skipped = false;
	if (!u->ready)
		return 0;	/* no status: every binding's figures unknown */
	if (!u->st && !(u->st = calloc(DMT_MAX_BINDINGS, sizeof(*u->st))))
		return -ENOMEM;
	b0 = prog_run_ns(u->skel->progs.uref_walk);
	u->walked = 0;
	u->skipped_bindings = 0;
	for (int r = bpf_map_get_next_key(fd, NULL, &next); !r && !err && u->n_st < DMT_MAX_BINDINGS;
	     r = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		/* every reference gone, or no socket without autorelease read it */
		if (v.flags & DMT_BIND_FREED)	/* ids are not reused: forget it */
			bpf_map_delete_elem(bpf_map__fd(u->skel->maps.manual_bindings), &v.id);
		if ((v.flags & DMT_BIND_FREED) || !uref_needed(u, &v)) {
			u->st[u->n_st++] = (struct tok_uref_status){ .binding_id = v.id };
			u->skipped_bindings += !(v.flags & DMT_BIND_FREED);
			continue;
		}
		err = uref_one(c, &v, now_ns, toks, n);
	}
	u->bpf_ns = prog_run_ns(u->skel->progs.uref_walk) - b0;
	u->wall_ns = now_mono_ns() - t0;
	if (c->opts.log && c->opts.verbosity >= 2)
		c->opts.log(2, "tokens: uref walk: %zu bindings, %llu net_iovs read; %llu us "
			    "(its BPF %llu us); %llu not walked: no socket without autorelease "
			    "read them\n", u->n_st - u->skipped_bindings,
			    (unsigned long long)u->walked, (unsigned long long)(u->wall_ns / 1000),
			    (unsigned long long)(u->bpf_ns / 1000),
			    (unsigned long long)u->skipped_bindings);
	return err;
}

/* page-pool-get listed no devmem pool: no net_iov is held, 0 exactly without a walk */
void uref_skip(struct collector *c)
{
	if (c->ur)
		c->ur->skipped = true;
}

bool uref_kernel(const struct collector *c)
{
	return c->ur && c->ur->kernel;
}

/* why binding_id's held figures are unknown this snapshot (enum dmt_held_why), 0: exact */
uint32_t uref_held_why(const struct collector *c, uint32_t iter_flags,
		       const struct dmt_iter_sock *socks, size_t ns, uint32_t binding_id)
{
	const struct uref_state *u = c->ur;

	if (u && u->skipped)
		return DMT_HELD_NO_REASON;
	return tok_iter__held_why(iter_flags, socks, ns, u ? u->st : NULL, u ? u->n_st : 0,
				  u && u->kernel, binding_id);
}
