#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "multiqueue": one devmem binding over 4 RX queues (1..4) of the
# 16-queue netdevsim, 4 flows steered across them by ntuple rules on their
# destination ports (5301..5304 -> queues 1..4), RSS sending everything else to
# queue 0; flow i carries i MiB (busybox nc, ncdevmem's byte pattern), so
# each queue's share is known. lab-mqrx holds every token until all four
# flows ended: then each queue's pool has at least its flow's net_iovs in
# flight, devmemtop's snapshot and netlink page-pool-get are taken, and the
# tokens go back. assert_ncdevmem.py maps flows to queues from that.
# usage: multiqueue.sh OUTDIR   (in the lab guest)
. /lab/guest/lib.sh
. /lab/guest/mq.sh
D=${1:?usage: multiqueue.sh OUTDIR}
PORT=5300	# flow i (1..4) goes to port 5300 + i
MIB=1048576
mkdir -p $D

if [ ! -x /lab/bin/lab-mqrx ]; then
	echo "lab-mqrx not in this initramfs (build/lab/lab-mqrx missing on the host)" | tee $D/skip
	exit 0
fi
mq_setup 16 || { echo "multi-queue netdevsim setup failed"; exit 1; }
IF=$MQ_RX_IF
# the NIC as a devmem host sets it up: rules reset, RSS off the bound
# queues, one rule per flow
ethtool -K $IF ntuple off && ethtool -K $IF ntuple on && ethtool -X $IF equal 1 || exit 1
for i in 1 2 3 4; do
	ethtool -N $IF flow-type tcp4 dst-ip $MQ_RX_ADDR dst-port $((PORT + i)) \
		queue $i || exit 1
done
ethtool -n $IF >$D/ntuple-rules.txt 2>&1
ethtool -x $IF >$D/rss.txt 2>&1

DMT=
if [ -x /lab/bin/devmemtop ]; then
	devmemtop --json -i 500ms -m full >$D/devmemtop-live.json 2>$D/devmemtop-live.log &
	DMT=$!
	lab_wait_lines $D/devmemtop-live.json 1
fi
# one CPU for receiver and senders: see scenarios/ncdevmem.sh
taskset -c 0 lab-mqrx --ifname $IF --queues 1,2,3,4 --port $((PORT + 1)) --flows 4 \
	--dmabuf-size 64M >$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
TXS=
for i in 1 2 3 4; do
	mq_peer sh -c "yes \"\$(printf '\\001\\002\\003\\004\\005\\006')\" | tr '\\n' '\\000' |
		head -c $((i * MIB)) | taskset -c 0 nc $MQ_RX_ADDR $((PORT + i))" \
		>$D/nc$i.log 2>&1 &
	TXS="$TXS $!"
done
for i in $(seq 600); do
	grep -q '"state":"held"' $D/rx.json 2>/dev/null && break
	kill -0 $RX 2>/dev/null || break
	sleep 0.2
done
# every flow ended, tokens held: devmemtop snapshots, netlink, snapshots
if [ -n "$DMT" ]; then
	lab_wait_lines $D/devmemtop-live.json $(( $(wc -l <$D/devmemtop-live.json) + 2 ))
fi
devmem-traffic pools >$D/pools-held.json
if [ -n "$DMT" ]; then
	lab_wait_lines $D/devmemtop-live.json $(( $(wc -l <$D/devmemtop-live.json) + 2 ))
	kill -INT $DMT
	wait $DMT
	echo $? >$D/devmemtop-live.rc
fi
kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
for p in $TXS; do wait $p; done
bid=$(sed -n 's/.*"binding_id":\([0-9]*\).*/\1/p' $D/rx.json | tail -1)
for i in $(seq 50); do
	devmem-traffic pools >$D/pools-after.json
	[ -n "$bid" ] && ! grep -q "\"dmabuf\":$bid[,}]" $D/pools-after.json && break
	sleep 0.2
done
sleep 1		# one more recorder interval sees the binding freed
cat $D/rx.json
[ "$(cat $D/rx.rc)" = 0 ]
