#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "bulk": 64 MiB through a 64 MiB udmabuf bound to RX queue 0.
# Every token is returned right after its frag was verified. When devmemtop
# is present, a live `devmemtop --json` runs from before the bind; once
# the receiver is idle and still bound (all tokens back), netlink
# page-pool-get is dumped between two of its snapshots, so the pool's
# inflight can be compared (assert_devmemtop.py). A second devmemtop runs
# alongside with -m fentry: the same facts through fentry/fexit instead of
# the devmem tracepoints, compared at the same idle point. A third runs
# -m light (no per-page/per-niov program; counters read at snapshot time),
# compared at the same point when it ran (devmemtop-light.rc). A fourth runs
# the default, -m devmem (issue 36: no program on the per-page tracepoints,
# every devmem figure from devmem-only hooks): every devmem figure must
# equal the full mode's at the same point, and its programs' run time per
# devmem niov be no more than the full mode's (--bpf-stats on both: the
# kernel's run_time_ns per program).
# usage: bulk.sh OUTDIR   (in the lab guest; env LAB_BULK_SIZE=64M)
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: bulk.sh OUTDIR}
SIZE=${LAB_BULK_SIZE:-64M}
mkdir -p $D


cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.before
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-before.json
# attached (a first snapshot printed) before the pool exists
lab_dmt_modes $D devmemtop-live:full:500ms:--bpf-stats devmemtop-fentry:fentry:500ms \
	devmemtop-light:light:500ms:--sampling:20ms/1s devmemtop-default:devmem:500ms:--bpf-stats
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M \
	--expect $SIZE --idle-timeout 10000 --linger 30000 \
	>$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
# the sender returns once the receiver closed: after the linger
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes $SIZE \
	>$D/tx.json 2>$D/tx.log &
TX=$!
for i in $(seq 600); do grep -q lingering $D/rx.log 2>/dev/null && break; sleep 0.1; done
# skbs recvmsg freed onto another CPU's defer list still hold net_iovs until
# NET_RX runs there, which can be any time later: flush them now, so the
# pool is idle for the comparisons below (seen: 158 and 399 net_iovs
# released after the idle point, between two devmemtops' last snapshots)
lab_flush_defer
# bound, idle, no token out: devmemtop snapshots, netlink, devmemtop snapshots
lab_dmt_next 2
# (uptime around the dump: assert_devmemtop.py compares the snapshots
# that bracket it, since the idle pool can still release niovs later)
cut -d' ' -f1 /proc/uptime >$D/pools-bound.t
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-bound.json
cut -d' ' -f1 /proc/uptime >>$D/pools-bound.t
lab_dmt_next 2
lab_dmt_stop
kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.after
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
