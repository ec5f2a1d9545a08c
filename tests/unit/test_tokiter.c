// SPDX-License-Identifier: GPL-2.0
/*
 * Light mode's held tokens (src/core/tokiter.c): the iterator's socket
 * headers and records into token entries and holders, counted by
 * tokens__aggregate() as the full mode's map; bound flags to reasons; a
 * socket inode to its process through a /proc tree.
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
		cmocka_unit_test(test_socket_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
