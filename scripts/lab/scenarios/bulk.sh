#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "bulk": 64 MiB through a 64 MiB udmabuf bound to RX queue 0.
# Every token is returned right after its frag was verified. While still
# bound and idle, devmemtop (if present) and netlink page-pool-get are
# sampled back to back so their inflight can be compared.
# usage: bulk.sh OUTDIR   (in the lab guest; env LAB_BULK_SIZE=64M)
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: bulk.sh OUTDIR}
SIZE=${LAB_BULK_SIZE:-64M}
mkdir -p $D

cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.before
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-before.json
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M \
	--expect $SIZE --idle-timeout 10000 --linger 1500 \
	>$D/rx.json 2>$D/rx.log &
RX=$!
for i in $(seq 100); do grep -q listening $D/rx.log 2>/dev/null && break; sleep 0.1; done
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes $SIZE \
	>$D/tx.json 2>$D/tx.log
echo $? >$D/tx.rc
for i in $(seq 100); do grep -q lingering $D/rx.log 2>/dev/null && break; sleep 0.1; done
# bound, idle, no token out: one devmemtop snapshot, then netlink
if [ -x /lab/bin/devmemtop ]; then
	devmemtop --json -n 1 -i 300ms -I $LAB_RX_IF >$D/devmemtop-bound.json 2>$D/devmemtop-bound.log
	echo $? >$D/devmemtop-bound.rc
fi
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-bound.json
wait $RX
echo $? >$D/rx.rc
# unbind -> page pool destroy -> binding free are asynchronous
sleep 1.5
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-after.json
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.after
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
