// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline of bench/overhead.sh: programs on the same tracepoints as
 * devmemtop's hold/release handlers that do nothing, so their run time is
 * the floor any handler pays.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/page_pool_state_hold")
int BPF_PROG(empty_hold, void *pool, unsigned long netmem, __u32 hold)
{
	return 0;
}

SEC("tp_btf/page_pool_state_release")
int BPF_PROG(empty_release, void *pool, unsigned long netmem, __u32 release)
{
	return 0;
}
