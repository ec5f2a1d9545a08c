// SPDX-License-Identifier: GPL-2.0
/*
 * Collector, light and devmem modes: no per-page program stays attached.
 * The pools' own counters are read at snapshot time (light_read, run with
 * BPF_PROG_TEST_RUN), and the per-page tracepoints are attached only in
 * short sampling windows to locate pools and sample refill batches (the
 * devmem mode locates devmem pools and counts their refills at the
 * provider call too).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector_int.h"
#include "util.h"
#include "devmemtop.skel.h"

/*
 * Light mode: one sampling window. The per-page tracepoints are attached
 * for window_ns: they find the pools that have traffic (their address,
 * identity, provider) and sample refill batches. A refill still open when
 * the window closes is dropped, never counted short.
 */
void light_window(struct collector *c)
{
	struct timespec ts = { .tv_sec = c->ar.window_ns / 1000000000ULL,
			       .tv_nsec = c->ar.window_ns % 1000000000ULL };

	c->last_window = now_mono_ns();
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		struct prog_state *ps = &c->ps[i];

		if (!dmt_hooks[i].window)
			continue;
		ps->link = bpf_program__attach(ps->prog);
		if (!ps->link)
			coll_log(c, 1, "window: attach %s failed: %s", dmt_hooks[i].name,
				 strerror(errno));
		else
			ps->ran = true;
	}
	nanosleep(&ts, NULL);
	for (size_t i = 0; i < DMT_H__COUNT; i++) {
		if (!dmt_hooks[i].window)
			continue;
		bpf_link__destroy(c->ps[i].link);
		c->ps[i].link = NULL;
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
bool light_pool(struct collector *c, struct dmt_pool *v)
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
