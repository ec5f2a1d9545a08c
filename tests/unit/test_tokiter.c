// SPDX-License-Identifier: GPL-2.0
/*
 * Light mode's held tokens (src/core/tokiter.c): the iterator's socket
 * headers and records into token entries and holders, counted by
 * tokens__aggregate() as the full mode's map; bound flags to reasons; a
 * socket inode to its process through a /proc tree; without
 * SO_DEVMEM_AUTORELEASE, the uref walk's records joined to them and the
 * per-binding reasons a held figure is unknown.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "snapshot.h"
#include "tokiter.h"

#define REC(s, b, n, t) { .sock = (s), .binding_id = (b), .niov_idx = (n), .token = (t) }

static void test_entries_counted_as_full_mode(void **state)
{
	/* socket 0: 3 tokens on binding 7, two on niov 5 (a frag over two
	 * recvmsg calls); socket 1: 1 token on binding 7 niov 9, 1 on binding 8 */
	struct dmt_iter_sock s[] = {
		{ .sk = 0xa0, .cgroup_id = 11, .ino = 100, .tokens = 3, .first_rec = 0 },
		{ .sk = 0xb0, .cgroup_id = 12, .ino = 200, .tokens = 2, .first_rec = 3 },
	};
	struct dmt_iter_rec r[] = {
		REC(0, 7, 5, 1), REC(0, 7, 5, 2), REC(0, 7, 6, 3), REC(1, 7, 9, 1), REC(1, 8, 0, 2),
	};
	struct dmt_tok_entry *t;
	struct dmt_holder *h;
	const struct tok_binding_held *b;
	struct tok_agg a;
	size_t n, nh;

	assert_int_equal(tok_iter__entries(s, 2, r, 5, &t, &n, &h, &nh), 0);
	assert_int_equal(n, 5);
	assert_int_equal(nh, 2);
	assert_int_equal(t[3].key.sk, 0xb0);
	assert_int_equal(t[3].key.token, 1);
	assert_int_equal(h[0].binding_id, 7);	/* its first token's */
	assert_int_equal(h[1].cgroup_id, 12);
	assert_int_equal(tokens__aggregate(t, n, h, nh, 1000, &a), 0);
	b = tok_agg__binding(&a, 7);
	assert_non_null(b);
	assert_int_equal(b->tokens, 4);
	assert_int_equal(b->niovs, 3);
	b = tok_agg__binding(&a, 8);
	assert_non_null(b);
	assert_int_equal(b->tokens, 1);
	assert_int_equal(a.n_holders, 2);
	assert_int_equal(a.holders[0].sk, 0xa0);
	assert_int_equal(a.holders[0].tokens, 3);
	assert_int_equal(a.holders[0].niovs, 2);
	assert_int_equal(a.holders[0].cgroup_id, 11);
	tok_agg__free(&a);
	free(t);
	free(h);
}

static void test_entries_reject_inconsistent(void **state)
{
	struct dmt_iter_sock s[] = { { .sk = 0xa0, .tokens = 2, .first_rec = 0 } };
	struct dmt_iter_rec r[] = { REC(0, 7, 5, 1), REC(1, 7, 6, 2) };
	struct dmt_tok_entry *t;
	struct dmt_holder *h;
	size_t n, nh;

	/* a record naming no socket */
	assert_int_equal(tok_iter__entries(s, 1, r, 2, &t, &n, &h, &nh), -EINVAL);
	assert_null(t);
	/* a socket's range past the records */
	s[0].tokens = 3;
	r[1].sock = 0;
	assert_int_equal(tok_iter__entries(s, 1, r, 2, &t, &n, &h, &nh), -EINVAL);
	/* a record outside its socket's range */
	s[0].tokens = 1;
	assert_int_equal(tok_iter__entries(s, 1, r, 2, &t, &n, &h, &nh), -EINVAL);
	/* nothing held: no entry, no holder */
	assert_int_equal(tok_iter__entries(s, 0, r, 0, &t, &n, &h, &nh), 0);
	assert_int_equal(n, 0);
	assert_int_equal(nh, 0);
	free(t);
	free(h);
}

static void test_why(void **state)
{
	char buf[96];

	assert_null(tok_iter__why(0, buf, sizeof(buf)));
	assert_non_null(tok_iter__why(DMT_ITER_TRUNC_RECS, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "262144"));
	assert_non_null(tok_iter__why(DMT_ITER_TRUNC_SOCKS | DMT_ITER_PAGE, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "4096 sockets"));
	assert_non_null(tok_iter__why(DMT_ITER_LAYOUT, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "layout"));
	assert_non_null(tok_iter__why(DMT_ITER_MANUAL, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "AUTORELEASE off"));
}

#define UREC(n, u) { .niov_idx = (n), .uref = (u) }

/*
 * Autorelease off: socket 0 reads binding 7 without autorelease (a header,
 * no records), socket 1 holds 2 xarray tokens of binding 8. The uref walk
 * of binding 7 gives niov 3 with 2 tokens, niov 4 with 1: binding 7 holds
 * 3 tokens on 2 niovs, and socket 0 is a holder row with its counts
 * unknown, its pid and binding kept.
 */
static void test_manual_binding_from_urefs(void **state)
{
	struct dmt_iter_sock s[] = {
		{ .sk = 0xa0, .cgroup_id = 11, .ino = 100, .flags = DMT_ITER_MANUAL,
		  .binding_id = 7 },
		{ .sk = 0xb0, .cgroup_id = 12, .ino = 200, .tokens = 2, .first_rec = 0 },
	};
	struct dmt_iter_rec r[] = { REC(1, 8, 0, 1), REC(1, 8, 1, 2) };
	struct dmt_uref_rec u[] = { UREC(3, 2), UREC(4, 1), UREC(9, 0) };
	const struct tok_binding_held *b;
	struct dmt_holder_snap *row = NULL;
	struct dmt_tok_entry *t;
	struct dmt_holder *h;
	struct tok_agg a;
	size_t n, nh;

	assert_int_equal(tok_iter__entries(s, 2, r, 2, &t, &n, &h, &nh), 0);
	assert_int_equal(h[0].manual, 1);
	assert_int_equal(h[0].binding_id, 7);
	h[0].tgid = 4242;
	strcpy(h[0].comm, "rx");
	assert_int_equal(tok_iter__add_urefs(&t, &n, 7, u, 3, 1000), 0);
	assert_int_equal(n, 4);	/* a record with uref 0 stands for nothing */
	assert_int_equal(tokens__aggregate(t, n, h, nh, 1000, &a), 0);
	b = tok_agg__binding(&a, 7);
	assert_non_null(b);
	assert_int_equal(b->tokens, 3);
	assert_int_equal(b->niovs, 2);
	b = tok_agg__binding(&a, 8);
	assert_non_null(b);
	assert_int_equal(b->tokens, 2);
	assert_int_equal(b->niovs, 2);
	assert_int_equal(a.n_holders, 1);	/* counts_manual() needs counters light has not */
	assert_int_equal(tok_iter__manual_holders(s, 2, h, &a), 0);
	assert_int_equal(a.n_holders, 2);
	for (size_t i = 0; i < a.n_holders; i++)
		if (a.holders[i].sk == 0xa0)
			row = &a.holders[i];
	assert_non_null(row);
	assert_true(row->manual);
	assert_true(row->counts_unknown);
	assert_int_equal(row->tokens, 0);
	assert_int_equal(row->pid, 4242);
	assert_string_equal(row->comm, "rx");
	assert_int_equal(row->binding_id, 7);
	assert_int_equal(row->cgroup_id, 11);
	/* issue 37: every row gets its socket's inode, what names it without a pid */
	tok_iter__holder_inodes(s, 2, &a);
	for (size_t i = 0; i < a.n_holders; i++)
		for (size_t k = 0; k < 2; k++)
			if (s[k].sk == a.holders[i].sk)
				assert_int_equal(a.holders[i].sock_ino, s[k].ino);
	tok_agg__free(&a);
	free(t);
	free(h);
}

/*
 * One binding read both ways: an autorelease socket holds tokens on niovs
 * 3 and 5, the net_iov counts say niov 3 has 2 tokens and niov 6 one
 * without autorelease. Tokens are disjoint (an xarray entry or a count),
 * so they add up: 5; niov 3 is counted once: 3 niovs.
 */
static void test_mixed_binding_sums(void **state)
{
	struct dmt_iter_sock s[] = {
		{ .sk = 0xa0, .tokens = 2, .first_rec = 0 },
		{ .sk = 0xb0, .flags = DMT_ITER_MANUAL, .binding_id = 7 },
	};
	struct dmt_iter_rec r[] = { REC(0, 7, 3, 1), REC(0, 7, 5, 2) };
	struct dmt_uref_rec u[] = { UREC(3, 2), UREC(6, 1) };
	const struct tok_binding_held *b;
	struct dmt_tok_entry *t;
	struct dmt_holder *h;
	struct tok_agg a;
	size_t n, nh;

	assert_int_equal(tok_iter__entries(s, 2, r, 2, &t, &n, &h, &nh), 0);
	assert_int_equal(tok_iter__add_urefs(&t, &n, 7, u, 2, 1000), 0);
	assert_int_equal(tokens__aggregate(t, n, h, nh, 1000, &a), 0);
	b = tok_agg__binding(&a, 7);
	assert_non_null(b);
	assert_int_equal(b->tokens, 5);
	assert_int_equal(b->niovs, 3);
	assert_int_equal(tok_iter__manual_holders(s, 2, h, &a), 0);
	assert_int_equal(a.n_holders, 2);
	assert_int_equal(a.holders[0].sk, 0xa0);	/* its own count, as with autorelease */
	assert_int_equal(a.holders[0].tokens, 2);
	assert_false(a.holders[0].counts_unknown);
	assert_true(a.holders[1].counts_unknown);
	tok_agg__free(&a);
	free(t);
	free(h);
}

static void test_held_why(void **state)
{
	struct dmt_iter_sock s[] = {
		{ .sk = 0xa0, .flags = DMT_ITER_MANUAL, .binding_id = 7 },
		{ .sk = 0xb0, .tokens = 1 },
	};
	struct tok_uref_status u[] = {
		{ .binding_id = 7 }, { .binding_id = 9, .flags = DMT_UREF_TRUNC_RECS },
	};

	/* an incomplete xarray walk: every binding */
	assert_int_equal(tok_iter__held_why(DMT_ITER_FAULT | DMT_ITER_MANUAL, s, 2, u, 2, true, 7),
			 DMT_HELD_ITER_INCOMPLETE);
	/* a kernel with uref: the binding's walk decides, autorelease off or not */
	assert_int_equal(tok_iter__held_why(DMT_ITER_MANUAL, s, 2, u, 2, true, 7),
			 DMT_HELD_NO_REASON);
	assert_int_equal(tok_iter__held_why(DMT_ITER_MANUAL, s, 2, u, 2, true, 9),
			 DMT_HELD_UREF_INCOMPLETE);
	/* not walked (address unknown, walk not loaded): may hold counted tokens */
	assert_int_equal(tok_iter__held_why(0, s + 1, 1, u, 2, true, 8),
			 DMT_HELD_UREF_INCOMPLETE);
	assert_int_equal(tok_iter__held_why(0, s + 1, 1, NULL, 0, true, 7),
			 DMT_HELD_UREF_INCOMPLETE);
	/* a kernel without: only a binding read with autorelease off is unknown */
	assert_int_equal(tok_iter__held_why(DMT_ITER_MANUAL, s, 2, NULL, 0, false, 7),
			 DMT_HELD_NO_UREF);
	assert_int_equal(tok_iter__held_why(DMT_ITER_MANUAL, s, 2, NULL, 0, false, 8),
			 DMT_HELD_NO_REASON);
	assert_int_equal(tok_iter__held_why(0, s + 1, 1, NULL, 0, false, 7), DMT_HELD_NO_REASON);
	/* a socket whose binding was not read: any binding may be its */
	s[0].binding_id = 0;
	assert_int_equal(tok_iter__held_why(DMT_ITER_MANUAL, s, 2, NULL, 0, false, 8),
			 DMT_HELD_NO_UREF);
	assert_non_null(strstr(dmt_held_why_text(DMT_HELD_NO_UREF), "without net_iov.uref"));
	assert_non_null(strstr(dmt_held_why_text(DMT_HELD_UREF_INCOMPLETE), "uref"));
}

static void test_uref_why(void **state)
{
	char buf[96];

	assert_null(tok_iter__uref_why(0, buf, sizeof(buf)));
	assert_non_null(strstr(tok_iter__uref_why(DMT_UREF_NOFIELD, buf, sizeof(buf)), "no uref"));
	assert_non_null(strstr(tok_iter__uref_why(DMT_UREF_TRUNC_NIOVS | DMT_UREF_FAULT, buf,
						 sizeof(buf)), "failed"));
	assert_non_null(strstr(tok_iter__uref_why(DMT_UREF_NEGATIVE, buf, sizeof(buf)), "below 0"));
}

static void mk(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_socket_pids(void **state)
{
	char root[] = "/tmp/dmt-tokiter-XXXXXX", p[512];
	uint64_t inos[] = { 555, 777, 999 };
	uint32_t pids[3];
	char comms[3][16];

	assert_non_null(mkdtemp(root));
	/* pid 42 holds socket 555 as fd 3 (fd 4 is a pipe); pid 43 holds 777 */
	snprintf(p, sizeof(p), "%s/42", root); assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/42/fd", root); assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/42/fd/3", root); assert_int_equal(symlink("socket:[555]", p), 0);
	snprintf(p, sizeof(p), "%s/42/fd/4", root); assert_int_equal(symlink("pipe:[777]", p), 0);
	snprintf(p, sizeof(p), "%s/42/comm", root); mk(p, "devmem-rx\n");
	snprintf(p, sizeof(p), "%s/43", root); assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/43/fd", root); assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/43/fd/9", root); assert_int_equal(symlink("socket:[777]", p), 0);
	snprintf(p, sizeof(p), "%s/43/comm", root); mk(p, "a-very-long-command-name\n");
	snprintf(p, sizeof(p), "%s/self", root); assert_int_equal(mkdir(p, 0700), 0);

	assert_int_equal(tok_iter__socket_pids(root, inos, 3, pids, comms), 2);
	assert_int_equal(pids[0], 42);
	assert_string_equal(comms[0], "devmem-rx");
	assert_int_equal(pids[1], 43);
	assert_string_equal(comms[1], "a-very-long-com");	/* 15 bytes, as the kernel's */
	assert_int_equal(pids[2], 0);
	assert_string_equal(comms[2], "");
	/* no such procfs: nothing found, no crash */
	assert_int_equal(tok_iter__socket_pids("/nonexistent-proc", inos, 3, pids, comms), 0);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_counted_as_full_mode),
		cmocka_unit_test(test_entries_reject_inconsistent),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_manual_binding_from_urefs),
		cmocka_unit_test(test_mixed_binding_sums),
		cmocka_unit_test(test_held_why),
		cmocka_unit_test(test_uref_why),
		cmocka_unit_test(test_socket_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
