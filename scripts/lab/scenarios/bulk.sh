#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "bulk": 64 MiB through a 64 MiB udmabuf bound to RX queue 0.
# Every token is returned right after its frag was verified. When devmemtop
# is present, a live `devmemtop --json` runs from before the bind; once
# the receiver is idle and still bound (all tokens back), netlink
# page-pool-get is dumped between two of its snapshots, so the pool's
# inflight can be compared (assert_devmemtop.py).
# usage: bulk.sh OUTDIR   (in the lab guest; env LAB_BULK_SIZE=64M)
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: bulk.sh OUTDIR}
SIZE=${LAB_BULK_SIZE:-64M}
mkdir -p $D

cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.before
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-before.json
DMT=
if [ -x /lab/bin/devmemtop ]; then
	devmemtop --json -i 500ms >$D/devmemtop-live.json 2>$D/devmemtop-live.log &
	DMT=$!
	sleep 2		# programs attached before the pool exists
fi
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M \
	--expect $SIZE --idle-timeout 10000 --linger 30000 \
	>$D/rx.json 2>$D/rx.log &
RX=$!
for i in $(seq 100); do grep -q listening $D/rx.log 2>/dev/null && break; sleep 0.1; done
# the sender returns once the receiver closed: after the linger
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes $SIZE \
	>$D/tx.json 2>$D/tx.log &
TX=$!
for i in $(seq 600); do grep -q lingering $D/rx.log 2>/dev/null && break; sleep 0.1; done
# bound, idle, no token out: devmemtop snapshot, netlink, devmemtop snapshot
[ -n "$DMT" ] && sleep 1.2
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-bound.json
if [ -n "$DMT" ]; then
	sleep 1.2
	kill -INT $DMT
	wait $DMT
	echo $? >$D/devmemtop-live.rc
fi
kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.after
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
