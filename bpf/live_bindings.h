/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The addresses of the devmem bindings devmemtop.bpf.c saw created and not
 * yet freed (value: the binding's id). Read-only towards the bpf() syscall:
 * a program that takes a binding address from user space reads only one in
 * here. devmemtop.bpf.c owns it; urefwalk.bpf.c declares the same map and
 * shares it by fd (bpf_map__reuse_fd), so both declare it from here.
 */
#ifndef DEVMEMTOP_LIVE_BINDINGS_H
#define DEVMEMTOP_LIVE_BINDINGS_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DMT_MAX_BINDINGS);
	__uint(map_flags, BPF_F_RDONLY);
	__type(key, __u64);
	__type(value, __u32);
} live_bindings SEC(".maps");

#endif
