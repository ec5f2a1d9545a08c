#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (the race is caught in 2 of 2 runs on the unfixed kernel, 14 and 1 tokens lost: a run that loses none would fail the baseline check, so it stays out of make check; vmtest.sh --scenario race runs it)
# Scenario "race" (issue 22, D4): the frag token commit race.
# tcp_recvmsg_dmabuf() reserves the lowest free token ids, writes them to
# user space in cmsgs, and commits them at the end of each skb;
# SO_DEVMEM_DONTNEED takes no socket lock. devmem-traffic --race-dontneed
# returns ids 1..1024 from a second thread on the receiver's CPU while the
# main thread receives (and returns its own tokens). A kernel whose
# DONTNEED erases a reservation loses the reference its token holds: the
# tokens are handed out but never returned nor released, the binding's
# page pool never drains after the socket closed and the binding was
# unbound, and the binding is never freed. The fix (the patched-only
# "don't let SO_DEVMEM_DONTNEED erase an uncommitted token") leaves
# reservations alone. Run under devmemtop record (guest/lib.sh).
# Writes rx.json, tx.json, pools-after.json, pool-gone.txt and
# pool-final.json (the pools of the binding 10 s after the close).
# usage: race.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: race.sh OUTDIR}
mkdir -p $D
BYTES=${LAB_RACE_BYTES:-128M}

devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 16M \
	--expect $BYTES --race-dontneed 1024 --idle-timeout 10000 \
	>$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
# the sender on the other CPU: the racing thread shares the receiver's
lab_peer taskset -c 1 devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT \
	--bytes $BYTES >$D/tx.json 2>$D/tx.log
echo $? >$D/tx.rc
wait $RX
echo $? >$D/rx.rc
# closed and unbound: a drained pool goes away within a second or two
lab_wait_pool_gone $D/rx.json $D
devmem-traffic pools --ifname $LAB_RX_IF >$D/pool-final.json
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
