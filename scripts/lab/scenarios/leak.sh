#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "leak": the receiver never calls SO_DEVMEM_DONTNEED, unbinds
# (closes its netlink socket) while the TCP socket still holds all tokens,
# samples the pools, then exits without returning them. Expected: the page
# pool outlives the unbind as a zombie (detached, inflight = held
# net_iovs); closing the socket releases the tokens; then the pool and the
# binding are freed, nothing leaks. Beside the recording (full mode), a
# -m light devmemtop --json: its held tokens, read at snapshot time, against
# the full mode's and the receiver's own counts while it holds them all
# (assert_devmemtop.py). A second -m light devmemtop runs in the sender's
# network namespace: its socket walk cannot see the receiver's sockets, so
# the binding's held figures must be unknown there with that reason, never 0.
# A third runs the default, -m devmem (issue 36): every devmem figure must
# equal the recording's (full mode) once the binding is freed and its
# zombie pool destroyed (assert_devmemtop.py).
# usage: leak.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: leak.sh OUTDIR}
mkdir -p $D

# issue 11: the live view (batch mode) through the run: its holders panel;
# --linger keeps every token held, bound, for 1.5 s so it has frames of it
TOP=
if [ -x /lab/bin/devmemtop ]; then
	devmemtop -b -i 250ms >$D/devmemtop-top.txt 2>$D/devmemtop-top.log &
	TOP=$!
	# attached (a first frame printed) before the binding exists
	for i in $(seq 100); do [ -s $D/devmemtop-top.txt ] && break; sleep 0.1; done
fi
lab_dmt_modes $D devmemtop-light:light:500ms:-vv devmemtop-peerns:light@peer:500ms \
	devmemtop-default:devmem:500ms
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M \
	--expect 8M --leak --unbind-first --idle-timeout 10000 --linger 1500 \
	>$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 8M \
	>$D/tx.json 2>$D/tx.log
echo $? >$D/tx.rc
wait $RX
echo $? >$D/rx.rc
lab_wait_pool_gone $D/rx.json $D
# binding freed, pool destroyed: in a snapshot of each before they stop
lab_dmt_next 2
lab_dmt_stop
[ -z "$TOP" ] || { kill -INT $TOP; wait $TOP; }
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
