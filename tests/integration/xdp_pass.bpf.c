// SPDX-License-Identifier: GPL-2.0
/* Test bed: XDP_PASS on the receiving veth makes veth run its page_pool. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
