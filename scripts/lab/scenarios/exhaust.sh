#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "exhaust": a 2 MiB udmabuf (512 net_iovs) and a receiver that
# holds every token. RX stalls when the binding has no free net_iov left:
# netdevsim drops the packet (rx_dropped) and TCP retransmits, in vain.
# After 3 s without data the receiver samples the pools (occupancy peak),
# returns all tokens and exits; the sender gives up (exit 3, incomplete).
# Beside the recording (full mode), a -m light devmemtop --json: its held
# tokens, read at snapshot time, against the full mode's and the
# receiver's own counts while it holds them all (assert_devmemtop.py).
# A second one runs the default, -m devmem (issue 36): every devmem figure
# must equal the recording's (full mode) once the binding is freed and its
# pool destroyed, when nothing moves any more (assert_devmemtop.py).
# usage: exhaust.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: exhaust.sh OUTDIR}
mkdir -p $D

cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.before
lab_dmt_modes $D devmemtop-light:light:500ms:-vv devmemtop-default:devmem:500ms
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 2M \
	--hold --idle-timeout 3000 >$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 16M \
	--timeout 8 >$D/tx.json 2>$D/tx.log &
TX=$!
wait $RX
echo $? >$D/rx.rc
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.after
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
# binding freed, pool destroyed: in a snapshot of each before they stop
lab_dmt_next 2
lab_dmt_stop
# the sender cannot complete here: 3 (incomplete) is the expected status
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 3 ]
