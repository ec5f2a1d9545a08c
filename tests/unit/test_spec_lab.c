// SPDX-License-Identifier: GPL-2.0
/*
 * The shipped lab specs (specs/lab-*.yaml) against synthetic runs shaped
 * like the lab scenarios: the bulk gate must fail on a baseline-like run
 * (one net_iov per provider call) on exactly its batch rows and pass on a
 * patched-like run; the leak gate must fail on a leak run and pass on the
 * bulk run; the exhaustion gate must fail on exhaustion. This checks the
 * specs' logic on the host; the lab checks it on real kernels.
 *
 * Specs are read from $DMT_SPECS (default "specs", the repository root is
 * the working directory of 'make unit-tests').
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "gate_eval.h"
#include "gate_spec.h"

#define NS 1000000000ULL

enum scenario { BULK_PATCHED, BULK_BASELINE, LEAK, EXHAUSTION };

static struct gate_spec *load(const char *name)
{
	const char *dir = getenv("DMT_SPECS") ?: "specs";
	char path[512], err[2048];
	struct gate_spec *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = gate_spec__parse_file(path, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	return s;
}

/* Snapshot i (0..n-1) of a 10-snapshot run of the scenario. */
static struct dmt_snapshot *mk(enum scenario sc, int i, int n)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));
	struct dmt_pool_snap *p;
	struct dmt_binding_snap *b;
	uint64_t calls, niovs, batch = sc == BULK_BASELINE ? 1 : 64;
	bool last = i == n - 1;

	s->ts_ns = (uint64_t)i * NS / 5;
	for (int k = 0; k < DMT_M__COUNT; k++)
		s->avail[k].available = true;
	s->n_pools = 1;
	s->pools = p = calloc(1, sizeof(*p));
	p->addr = 0xffff1000;
	p->id = 3;
	snprintf(p->ifname, sizeof(p->ifname), "eni0np1");
	p->kind = DMT_KIND_DEVMEM;
	p->binding_id = 1;
	p->queue = 0;
	p->destroy_inflight = -1;
	p->netlink_inflight = -1;
	niovs = (uint64_t)i * 6400;
	calls = niovs / batch;
	p->holds = niovs;
	p->releases = niovs - (niovs ? 100 : 0);
	p->inflight = p->holds - p->releases;
	hist_batch_add(&p->refill, batch, calls);

	s->n_bindings = 1;
	s->bindings = b = calloc(1, sizeof(*b));
	b->id = 1;
	snprintf(b->ifname, sizeof(b->ifname), "eni0np1");
	b->layout = sc == BULK_BASELINE ? "gen_pool" : "freelist";
	b->alive = true;
	b->niov_size = 4096;
	b->total_niovs = 4096;
	b->free_niovs = 4096 - 300;
	b->occupancy = 300 / 4096.0;
	b->in_pools = b->held_by_sockets = -1;
	b->alloc_calls = calls;
	b->alloc_niovs = niovs;
	b->out_at_unbind = b->out_at_free = -1;
	/* frag tokens: returned as they come, but in the leak run, where the
	 * kernel releases them all when the socket goes at the end */
	b->tok_handed = (uint64_t)i * 3200;
	b->tok_returned = sc == LEAK ? 0 : b->tok_handed;
	b->tok_released = sc == LEAK && last ? b->tok_handed : 0;
	b->held_tokens = b->tok_handed - b->tok_returned - b->tok_released;
	if (sc == EXHAUSTION && i >= n / 2) {
		b->free_niovs = 0;
		b->occupancy = 1.0;
		b->alloc_fail = (uint64_t)(i - n / 2 + 1) * 25;
	}
	if (last) {
		/* the scenario ends: unbind, pool destroyed, binding freed */
		b->unbound = true;
		b->alive = false;
		b->out_at_unbind = sc == LEAK ? 300 : 0;
		b->out_at_free = 0;
		p->state = sc == LEAK ? DMT_POOL_ZOMBIE : DMT_POOL_DESTROYED;
		p->destroy_inflight = sc == LEAK ? 300 : 0;
	}
	return s;
}

/* Run spec over the scenario; return the exit code and the failing rows. */
static int gate(const struct gate_spec *spec, enum scenario sc, char *failed, size_t len)
{
	struct gate_eval *e = gate_eval__new(spec);
	struct gate_report rep = {};
	int code;

	assert_non_null(e);
	for (int i = 0; i < 10; i++) {
		struct dmt_snapshot *s = mk(sc, i, 10);

		assert_int_equal(gate_eval__add(e, s), 0);
		free(s->pools);
		free(s->bindings);
		free(s);
	}
	assert_int_equal(gate_eval__finish(e, &rep), 0);
	failed[0] = '\0';
	for (size_t i = 0; i < rep.n_results; i++)
		if (rep.results[i].status != GATE_PASS)
			snprintf(failed + strlen(failed), len - strlen(failed), "%s%s %s",
				 failed[0] ? "; " : "", gm_def(rep.results[i].chk->metric)->name,
				 rep.results[i].th->expr);
	code = gate_report__exit_code(&rep);
	gate_report__fini(&rep);
	gate_eval__free(e);
	return code;
}

static void expect(const struct gate_spec *s, enum scenario sc, int code, const char *failed)
{
	char got[1024];
	int c = gate(s, sc, got, sizeof(got));

	if (c != code || strcmp(got, failed))
		fail_msg("%s, scenario %d: exit %d failing [%s], want exit %d failing [%s]",
			 s->name, sc, c, got, code, failed);
}

static void test_lab_bulk(void **state)
{
	struct gate_spec *s = load("lab-bulk.yaml");

	expect(s, BULK_PATCHED, 0, "");
	expect(s, BULK_BASELINE, 1,
	       "pool.refill_batch p(50) >= 32; binding.niovs_per_call avg >= 32");
	gate_spec__free(s);
}

static void test_lab_leak(void **state)
{
	struct gate_spec *s = load("lab-leak.yaml");

	expect(s, LEAK, 1, "binding.out_at_unbind sum == 0; pool.zombies max == 0; "
	       "binding.tokens_released count == 0");
	expect(s, BULK_PATCHED, 0, "");
	gate_spec__free(s);
}

static void test_lab_exhaustion(void **state)
{
	struct gate_spec *s = load("lab-exhaustion.yaml");

	expect(s, EXHAUSTION, 1,
	       "binding.alloc_failures count == 0; binding.occupancy max < 95%; "
	       "binding.free_niovs min > 0");
	expect(s, BULK_PATCHED, 0, "");
	gate_spec__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lab_bulk),
		cmocka_unit_test(test_lab_leak),
		cmocka_unit_test(test_lab_exhaustion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
