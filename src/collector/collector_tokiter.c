// SPDX-License-Identifier: GPL-2.0
/*
 * Light mode's held frag tokens: the TCP socket iterator (bpf/tokiter.bpf.c)
 * read at each snapshot, nothing attached between snapshots. Its records
 * become the token map's entries (src/core/tokiter.c), so the per-binding
 * and per-holder counts are tokens__aggregate()'s, as in the full mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector_int.h"
#include "util.h"
#include "tokiter.h"
#include "tokiter.skel.h"

/* which process holds a socket: found once per socket in /proc, then kept */
struct ti_pid {
	uint64_t sk, ino;
	uint32_t pid;
	char comm[16];
};

struct tokiter_state {
	struct tokiter *skel;
	struct bpf_link *link;
	struct dmt_iter_rec *recs;	/* tok_recs, mmap()ed */
	size_t recs_len;
	struct dmt_iter_sock *socks;	/* the last read's headers */
	size_t n_socks;			/* how many */
	size_t cap;
	struct ti_pid *pids;
	size_t n_pids;
	uint32_t flags;			/* the last read's enum dmt_iter_flags */
	bool said_pids;			/* logged why some holders' pids are unknown */
	bool always;			/* DEVMEMTOP_TOKITER=always: never skip the walk */
};

static void ti_why(struct collector *c, const char *what, int err)
{
	snprintf(c->ar.tok_iter_why, sizeof(c->ar.tok_iter_why), "iter/tcp: %s: %s", what,
		 strerror(err < 0 ? -err : err));
	coll_log(c, 1, "tokens: %s", c->ar.tok_iter_why);
}

/* Light mode only: load and attach the iterator; on failure say why, never fail the run. */
void tokiter_open(struct collector *c)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_btf_path());
	struct tokiter_state *t = calloc(1, sizeof(*t));
	const char *env = getenv("DEVMEMTOP_TOKITER");
	int err;

	c->ti = t;
	if (!t) {
		ti_why(c, "out of memory", ENOMEM);
		return;
	}
	t->always = env && !strcmp(env, "always");
	t->skel = tokiter__open_opts(&oo);
	if (!t->skel) {
		ti_why(c, "open", errno);
		return;
	}
	err = tokiter__load(t->skel);
	if (err) {
		ti_why(c, "load refused", err);
		return;
	}
	t->link = bpf_program__attach_iter(t->skel->progs.tok_iter, NULL);
	if (!t->link) {
		ti_why(c, "attach", errno);
		return;
	}
	t->recs_len = (size_t)DMT_ITER_MAX_RECS * sizeof(struct dmt_iter_rec);
	t->recs = mmap(NULL, t->recs_len, PROT_READ, MAP_SHARED,
		       bpf_map__fd(t->skel->maps.tok_recs), 0);
	if (t->recs == MAP_FAILED) {
		t->recs = NULL;
		ti_why(c, "mmap tok_recs", errno);
		return;
	}
	c->ar.tok_iter = true;
	coll_log(c, 1, "tokens: iter/tcp attached: held tokens read at each snapshot");
	uref_open(c);
}

void tokiter_close(struct collector *c)
{
	struct tokiter_state *t = c->ti;

	uref_close(c);
	if (!t)
		return;
	if (t->recs)
		munmap(t->recs, t->recs_len);
	bpf_link__destroy(t->link);
	tokiter__destroy(t->skel);
	free(t->socks);
	free(t->pids);
	free(t);
	c->ti = NULL;
}

/*
 * At most this much per read(): the kernel's bpf_iter fills its own seq
 * buffer (PAGE_SIZE << 3, 32 KiB with 4 KiB pages) up to our read size; a
 * socket header that would overflow it is thrown away and the program run
 * again for that socket at the next read(), which appends its token
 * records a second time (seen in the lab at 1,000 holding sockets, 40 KB
 * of headers: iter_socks != headers read, every snapshot incomplete). A
 * read of at most 16 KiB stops the kernel's fill before its buffer can
 * overflow, so every socket runs the program exactly once.
 */
#define TI_READ_MAX	16384

/* One read of the iterator: every TCP socket of our network namespace. */
static int ti_run(struct tokiter_state *t, size_t *ns)
{
	size_t len = 0, want;
	int fd, err = 0;
	ssize_t r;

	/* a read that shows no socket runs no program that would reset them */
	t->skel->bss->iter_recs = 0;
	t->skel->bss->iter_socks = 0;
	t->skel->bss->iter_flags = 0;
	t->skel->bss->iter_visited = 0;
	fd = bpf_iter_create(bpf_link__fd(t->link));
	if (fd < 0)
		return -errno;
	for (;;) {
		if (len + 4096 > t->cap * sizeof(*t->socks)) {
			size_t cap = t->cap ? 2 * t->cap : 256;
			void *p = realloc(t->socks, cap * sizeof(*t->socks));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			t->socks = p;
			t->cap = cap;
		}
		want = t->cap * sizeof(*t->socks) - len;
		r = read(fd, (char *)t->socks + len, want < TI_READ_MAX ? want : TI_READ_MAX);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		len += r;
	}
	close(fd);
	*ns = len / sizeof(*t->socks);
	return err;
}

/* pid and comm of each holder: cached per socket, /proc walked once for the new ones */
static void ti_pids(struct tokiter_state *t, struct dmt_holder *hs, size_t nh)
{
	uint64_t *inos = calloc(nh ? nh : 1, sizeof(*inos));
	uint32_t *pids = calloc(nh ? nh : 1, sizeof(*pids));
	char (*comms)[16] = calloc(nh ? nh : 1, sizeof(*comms));
	struct ti_pid *keep = calloc(nh ? nh : 1, sizeof(*keep));
	size_t n_new = 0;

	if (!inos || !pids || !comms || !keep)
		goto out;
	for (size_t i = 0; i < nh; i++) {
		keep[i].sk = hs[i].sk;
		keep[i].ino = t->socks[i].ino;
		for (size_t k = 0; k < t->n_pids; k++)
			if (t->pids[k].sk == keep[i].sk && t->pids[k].ino == keep[i].ino)
				keep[i] = t->pids[k];
		if (!keep[i].pid && keep[i].ino)
			inos[n_new++] = keep[i].ino;
	}
	if (n_new && tok_iter__socket_pids("/proc", inos, n_new, pids, comms))
		for (size_t i = 0, j = 0; i < nh && j < n_new; i++)
			if (!keep[i].pid && keep[i].ino == inos[j]) {
				keep[i].pid = pids[j];
				memcpy(keep[i].comm, comms[j], sizeof(keep[i].comm));
				j++;
			}
	for (size_t i = 0; i < nh; i++) {
		hs[i].tgid = keep[i].pid;
		memcpy(hs[i].comm, keep[i].comm, sizeof(hs[i].comm));
	}
	/* only the sockets holding tokens now stay cached */
	free(t->pids);
	t->pids = keep;
	t->n_pids = nh;
	keep = NULL;
out:
	free(keep);
	free(comms);
	free(pids);
	free(inos);
}

/*
 * -v, once: holders whose process /proc did not name. Without root (the
 * exporter after its privilege drop) another user's /proc/PID/fd cannot
 * be read; those holders are their sockets (socket_inode), their pid and
 * comm unknown, never 0.
 */
static void ti_say_pids(struct collector *c, const struct tok_agg *a)
{
	size_t unknown = 0;

	for (size_t i = 0; i < a->n_holders; i++)
		unknown += !a->holders[i].pid;
	if (!unknown || c->ti->said_pids)
		return;
	c->ti->said_pids = true;
	coll_log(c, 1, "tokens: %zu of %zu holding sockets: process unknown (%s): shown by "
		 "socket inode, pid and comm unknown", unknown, a->n_holders,
		 geteuid() ? "another user's /proc/PID/fd is not readable without root; "
		 "--keep-privileges reads them" : "no /proc/PID/fd names the socket");
}

/* a program's run time so far (kernel.bpf_stats_enabled), 0 without */
uint64_t prog_run_ns(const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.run_time_ns;
}

/* -vv, once per snapshot (not kept in the probe log, which must not grow) */
static void ti_trace(struct collector *c, size_t ns, size_t nr, uint64_t t0, uint64_t t1,
		     uint64_t t2, uint64_t bpf_ns)
{
	char why[96];
	/* autorelease off is read by the uref walk where the kernel has uref */
	uint32_t f = c->ti->flags & ~(uref_kernel(c) ? DMT_ITER_MANUAL : 0);
	const char *w = tok_iter__why(f, why, sizeof(why));

	if (!c->opts.log || c->opts.verbosity < 2)
		return;
	c->opts.log(2, "tokens: iter/tcp: %llu TCP sockets, %zu holding %zu tokens; read %llu us "
		    "(its BPF %llu us), count %llu us%s%s\n",
		    (unsigned long long)c->ti->skel->bss->iter_visited, ns, nr,
		    (unsigned long long)((t1 - t0) / 1000), (unsigned long long)(bpf_ns / 1000),
		    (unsigned long long)((t2 - t1) / 1000), w ? "; incomplete: " : "", w ? w : "");
}

/* This snapshot's held tokens into c->tok_agg. */
/*
 * no_devmem: page-pool-get listed no pool with a dmabuf in our namespace,
 * so no socket here can hold a token: 0, exactly, without the walk, whose
 * cost is the kernel's TCP hash (262,144 buckets here, 0.4-0.8 ms a
 * snapshot) whatever the sockets (bench/light.sh: light mode went from
 * 1.65 % to 14.9 % of the full mode at the bed's top rate with it).
 * DEVMEMTOP_TOKITER=always walks anyway (tests, diagnosis).
 */
int tokiter_aggregate(struct collector *c, uint64_t now_ns, bool no_devmem)
{
	struct tokiter_state *t = c->ti;
	struct dmt_tok_entry *toks = NULL;
	struct dmt_holder *hs = NULL;
	size_t ns = 0, n = 0, nh = 0, nr;
	uint64_t t0 = now_mono_ns(), t1, tu, bpf0 = prog_run_ns(t->skel->progs.tok_iter), bpf1;
	int err;

	if (no_devmem && !t->always) {
		t->flags = 0;
		t->n_socks = 0;
		uref_skip(c);
		if (c->opts.log && c->opts.verbosity >= 2)
			c->opts.log(2, "tokens: iter/tcp skipped: no devmem page pool in "
				    "page-pool-get, 0 tokens held\n");
		return 0;
	}
	t->n_socks = 0;
	err = ti_run(t, &ns);
	t1 = now_mono_ns();
	bpf1 = prog_run_ns(t->skel->progs.tok_iter);
	nr = t->skel->bss->iter_recs;
	t->flags = t->skel->bss->iter_flags;
	/* a failed read makes this snapshot's held figures null, not the snapshot fail */
	if (!err && (nr > DMT_ITER_MAX_RECS || ns != t->skel->bss->iter_socks))
		err = -EIO;
	if (!err)
		err = tok_iter__entries(t->socks, ns, t->recs, nr, &toks, &n, &hs, &nh);
	if (err) {
		t->flags |= DMT_ITER_FAULT;
		if (c->opts.log && c->opts.verbosity >= 1)
			c->opts.log(1, "tokens: iter/tcp read failed: %s\n", strerror(-err));
		return err == -ENOMEM ? err : 0;
	}
	t->n_socks = ns;
	/* the kernel keeps no hand-out time: ages are not known in light mode */
	for (size_t i = 0; i < n; i++)
		toks[i].val.ts_ns = now_ns;
	ti_pids(t, hs, nh);
	/* autorelease off: the bindings' net_iov counts join the xarrays' tokens */
	tu = now_mono_ns();
	err = uref_walk_all(c, now_ns, &toks, &n);
	tu = now_mono_ns() - tu;
	if (!err)
		err = tokens__aggregate(toks, n, hs, nh, now_ns, &c->tok_agg);
	if (!err)
		err = tok_iter__manual_holders(t->socks, ns, hs, &c->tok_agg);
	if (!err) {
		tok_iter__holder_inodes(t->socks, ns, &c->tok_agg);
		ti_say_pids(c, &c->tok_agg);
	}
	ti_trace(c, ns, nr, t0, t1, now_mono_ns() - tu, bpf1 - bpf0);
	free(toks);
	free(hs);
	return err;
}

/* why binding_id's held figures are unknown this snapshot (enum dmt_held_why), 0: exact */
uint32_t tokiter_held_why(const struct collector *c, uint32_t binding_id)
{
	const struct tokiter_state *t = c->ti;

	if (!t)
		return DMT_HELD_ITER_INCOMPLETE;
	return uref_held_why(c, t->flags, t->socks, t->n_socks, binding_id);
}
