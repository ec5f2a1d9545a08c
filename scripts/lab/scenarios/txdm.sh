#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (the 7.3 lab runs it: kernel-patches/7.3/scenarios; devmem TX is 7.x)
# Scenario "txdm" (issue 35): devmem TX's bytes and its refused sends
# against devmemtop's TX figures, where devmem.py (upstream.sh) sends 12
# bytes and never fails. devmem-traffic txdm binds a 256 KiB udmabuf that
# holds the lab's byte pattern with bind-tx on the lab's RX port, connects
# to a sink in the peer, tries one send naming no TX binding (EINVAL: the
# kernel-wide tx_no_binding) and one at the dma-buf's end (EFAULT: the
# binding's tx_errors), then sends the whole dma-buf, 16 KiB a sendmsg; the
# sink verifies every byte (netdevsim's transmit reads them from the
# dma-buf, kernel-patches/7.3/0014). devmemtop -m full and the default
# watch it until the binding is freed. Output:
#   txdm.json .log .rc     the sender's counts (binding id, bytes, calls, errnos)
#   sink.json .log .rc     the sink's counts (bytes, mismatches)
#   devmemtop-*.json       the live views (lab_dmt_modes)
# usage: txdm.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: txdm.sh OUTDIR}
mkdir -p $D

lab_dmt_modes $D devmemtop-live:full:500ms devmemtop-default:devmem:500ms
lab_peer devmem-traffic sink --port $LAB_PORT >$D/sink.json 2>$D/sink.log &
SINK=$!
if ! lab_wait_listening $D/sink.log $SINK; then
	echo "txdm: FAIL the sink did not listen: $(tail -1 $D/sink.log)"
	lab_dmt_stop
	exit 1
fi
devmem-traffic txdm --ifname $LAB_RX_IF --addr $LAB_TX_ADDR --port $LAB_PORT \
	>$D/txdm.json 2>$D/txdm.log
echo $? >$D/txdm.rc
wait $SINK
echo $? >$D/sink.rc
# a snapshot of each after the send (so each has listed the binding: a
# freed one stays in the map until a snapshot reports it), then until
# the binding is freed, once the last skb that references its niovs is
lab_dmt_next 1
lab_dmt_wait_freed 30
lab_dmt_stop
echo "txdm: sender rc=$(cat $D/txdm.rc) $(cat $D/txdm.json), sink rc=$(cat $D/sink.rc) $(cat $D/sink.json)"
exit 0
