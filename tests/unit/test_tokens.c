// SPDX-License-Identifier: GPL-2.0
/* Frag token accounting: held tokens and net_iovs per binding and socket. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tokens.h"

#define TOK(s, t, b, n, ts) { .key = { .sk = (s), .token = (t) }, \
			      .val = { .ts_ns = (ts), .binding_id = (b), .niov_idx = (n) } }

static void test_two_tokens_one_niov(void **state)
{
	/* socket A: 3 tokens on binding 7, two of them on niov 5 (a frag read
	 * over two recvmsg calls); socket B: 1 token on binding 7, niov 9;
	 * socket C: 2 tokens on binding 8 */
	struct dmt_tok_entry t[] = {
		TOK(0xa0, 1, 7, 5, 100), TOK(0xb0, 1, 7, 9, 400), TOK(0xa0, 2, 7, 5, 150),
		TOK(0xc0, 4, 8, 0, 900), TOK(0xa0, 3, 7, 6, 300), TOK(0xc0, 5, 8, 1, 950),
	};
	struct dmt_holder h[] = {
		{ .sk = 0xa0, .tgid = 42, .binding_id = 7, .comm = "rx", .handed = 10,
		  .returned = 7 },
		{ .sk = 0xc0, .tgid = 43, .binding_id = 8, .comm = "rx2", .handed = 2 },
	};
	const struct tok_binding_held *b;
	struct tok_agg a;

	assert_int_equal(tokens__aggregate(t, 6, h, 2, 1000, &a), 0);
	b = tok_agg__binding(&a, 7);
	assert_non_null(b);
	assert_int_equal(b->tokens, 4);
	assert_int_equal(b->niovs, 3);		/* 5, 6, 9 */
	b = tok_agg__binding(&a, 8);
	assert_non_null(b);
	assert_int_equal(b->tokens, 2);
	assert_int_equal(b->niovs, 2);
	assert_null(tok_agg__binding(&a, 9));

	assert_int_equal(a.n_holders, 3);
	/* most tokens first, then oldest */
	assert_int_equal(a.holders[0].sk, 0xa0);
	assert_int_equal(a.holders[0].pid, 42);
	assert_string_equal(a.holders[0].comm, "rx");
	assert_int_equal(a.holders[0].tokens, 3);
	assert_int_equal(a.holders[0].niovs, 2);
	assert_int_equal(a.holders[0].oldest_age_ns, 900);
	assert_int_equal(a.holders[0].handed, 10);
	assert_int_equal(a.holders[0].returned, 7);
	assert_int_equal(a.holders[1].sk, 0xc0);
	assert_int_equal(a.holders[1].tokens, 2);
	assert_int_equal(a.holders[1].oldest_age_ns, 100);
	/* no holder entry (map full): a row all the same, pid unknown */
	assert_int_equal(a.holders[2].sk, 0xb0);
	assert_int_equal(a.holders[2].pid, 0);
	assert_int_equal(a.holders[2].binding_id, 7);
	assert_int_equal(a.holders[2].tokens, 1);
	tok_agg__free(&a);
	assert_int_equal(a.n_holders, 0);
}

static void test_empty(void **state)
{
	struct dmt_holder h[] = { { .sk = 0xa0, .tgid = 42, .handed = 5, .returned = 5 } };
	struct tok_agg a;

	/* a socket that gave every token back holds nothing: no row */
	assert_int_equal(tokens__aggregate(NULL, 0, h, 1, 1000, &a), 0);
	assert_int_equal(a.n_bindings, 0);
	assert_int_equal(a.n_holders, 0);
	tok_agg__free(&a);
}

static void test_cost_copy(void **state)
{
	struct dmt_tok_stats src = { .map_full = 3, .no_socket = 1 };
	struct dmt_tok_cost dst;

	src.per_recvmsg.count = 2;
	src.per_recvmsg.sum = 17;
	src.per_recvmsg.slots[4] = 2;
	memset(&dst, 0xff, sizeof(dst));
	tok_cost_from_bpf(&dst, &src);
	assert_int_equal(dst.per_recvmsg.count, 2);
	assert_int_equal(dst.per_recvmsg.sum, 17);
	assert_int_equal(dst.per_recvmsg.slots[4], 2);
	assert_int_equal(dst.per_dontneed.count, 0);
	assert_int_equal(dst.map_full, 3);
	assert_int_equal(dst.no_socket, 1);
	assert_int_equal(dst.dontneed_mismatch, 0);
}

/* SO_DEVMEM_AUTORELEASE off: one entry per (binding, niov) with the
 * kernel's count, key.sk 0; a manual socket is a row from its holder. */
#define UREF(b, n, c, ts) { .key = { .sk = 0, .token = (n), .pad = (b) }, \
			    .val = { .ts_ns = (ts), .binding_id = (b), .niov_idx = (n), \
				     .count = (c) } }

static void test_manual_counts(void **state)
{
	/* binding 7 read without autorelease by socket 0xd0: niov 5 holds 3
	 * tokens (frags of one niov), niov 6 one; socket 0xa0 reads binding 7
	 * with autorelease: 2 tokens, one on niov 5 too */
	struct dmt_tok_entry t[] = {
		UREF(7, 5, 3, 100), TOK(0xa0, 1, 7, 5, 500), UREF(7, 6, 1, 200),
		TOK(0xa0, 2, 7, 8, 600),
	};
	struct dmt_holder h[] = {
		{ .sk = 0xd0, .tgid = 50, .binding_id = 7, .comm = "man", .handed = 9,
		  .returned = 5, .manual = 1, .cgroup_id = 4711 },
		{ .sk = 0xa0, .tgid = 51, .binding_id = 7, .comm = "auto", .handed = 2 },
		/* a manual socket that returned all it got: no row */
		{ .sk = 0xe0, .tgid = 52, .binding_id = 7, .comm = "done", .handed = 4,
		  .returned = 4, .manual = 1 },
	};
	const struct tok_binding_held *b;
	struct tok_agg a;

	assert_int_equal(tokens__aggregate(t, 4, h, 3, 1000, &a), 0);
	b = tok_agg__binding(&a, 7);
	assert_non_null(b);
	assert_int_equal(b->tokens, 3 + 1 + 2);
	assert_int_equal(b->niovs, 3);		/* 5, 6, 8 */
	assert_int_equal(b->manual_niovs, 2);	/* 5, 6 */
	assert_int_equal(a.n_holders, 2);
	assert_int_equal(a.holders[0].sk, 0xd0);
	assert_true(a.holders[0].manual);
	assert_int_equal(a.holders[0].pid, 50);
	assert_int_equal(a.holders[0].tokens, 4);	/* got 9, returned 5 */
	assert_int_equal(a.holders[0].niovs, 2);
	assert_int_equal(a.holders[0].oldest_age_ns, 900);
	assert_int_equal(a.holders[0].cgroup_id, 4711);	/* its pod, as with autorelease */
	assert_int_equal(a.holders[1].sk, 0xa0);
	assert_false(a.holders[1].manual);
	assert_int_equal(a.holders[1].tokens, 2);
	assert_int_equal(a.holders[1].niovs, 2);
	tok_agg__free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_tokens_one_niov),
		cmocka_unit_test(test_manual_counts),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_cost_copy),
	};

	return cmocka_run_group_tests_name("tokens", tests, NULL, NULL);
}
