// SPDX-License-Identifier: GPL-2.0
/* A raw_tp program run with BPF_PROG_TEST_RUN, as the collector runs its
 * binding walk: returns 7 when its argument is 42 (59-export-least-privilege.sh). */
#include <linux/bpf.h>

__attribute__((section("raw_tp"), used))
int walk(unsigned long long *ctx)
{
	return ctx[0] == 42 ? 7 : 1;
}

char LICENSE[] __attribute__((section("license"), used)) = "GPL";
