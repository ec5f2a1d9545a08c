#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "ncdevmem": the independent peer. The kernel's own devmem
# selftest server, ncdevmem from the pinned source (built unmodified by
# scripts/lab/ncdevmem/build.sh), receives on a 16-queue netdevsim
# (guest/mq.sh) with its defaults: it configures the NIC with ethtool
# (tcp-data-split, RSS "equal 8", an ntuple rule to queue 8), checks that
# a bind fails with header split off, binds queues 8..15 and validates
# every payload byte (-v 7). The client is the one its usage text names:
# netcat (busybox nc) sending 1,2,3,4,5,6,0,... from the peer's netns.
# Nothing here is ours but the NIC (kernel-patches/0010) and this script.
#
# While ncdevmem is still bound after the last byte (the client holds the
# connection open), netlink page-pool-get is dumped between devmemtop
# snapshots, and two more NIC properties are tried: channels cannot drop
# below a bound queue, header split cannot be turned off under a provider.
# usage: ncdevmem.sh OUTDIR   (in the lab guest; env LAB_NCDEVMEM_BYTES)
. /lab/guest/lib.sh
. /lab/guest/mq.sh
D=${1:?usage: ncdevmem.sh OUTDIR}
BYTES=${LAB_NCDEVMEM_BYTES:-33554432}
PORT=5201
LOG=/tmp/ncdevmem.log
mkdir -p $D


if [ ! -x /lab/bin/ncdevmem ]; then
	echo "ncdevmem not in this initramfs (build/lab/ncdevmem missing on the host)" | tee $D/skip
	exit 0
fi
mq_setup 16 || { echo "multi-queue netdevsim setup failed"; exit 1; }
echo "ifname=$MQ_RX_IF queues=$MQ_QUEUES bytes=$BYTES" >$D/setup.txt
IF=$MQ_RX_IF
ethtool -i $IF >$D/ethtool-i.txt 2>&1
ethtool -g $IF >$D/ethtool-g.txt 2>&1
ethtool -l $IF >$D/ethtool-l.txt 2>&1
lab-hds $IF >$D/hds.before 2>&1

DMT=
if [ -x /lab/bin/devmemtop ]; then
	devmemtop --json -i 500ms -m full >$D/devmemtop-live.json 2>$D/devmemtop-live.log &
	DMT=$!
	lab_wait_lines $D/devmemtop-live.json 1
fi

# Server and client on CPU 0: netdevsim runs the RX NAPI on the sending
# CPU, and an skb read on another CPU than it was allocated on is freed via
# that CPU's defer list, which holds its net_iovs until NET_RX runs there
# again. At unbind they would make the pool a (short-lived) zombie, so
# "holds == releases at destroy" would depend on timing.
# ncdevmem's defaults: queues 8..15 (-t 8 -q 8), port 5201
taskset -c 0 ncdevmem -s $MQ_RX_ADDR -f $IF -l -p $PORT -v 7 >/tmp/ncdevmem.out 2>$LOG &
NC=$!
for i in $(seq 600); do
	grep -q "Waiting or connection" $LOG 2>/dev/null && break	# [sic]
	kill -0 $NC 2>/dev/null || break
	sleep 0.1
done
ethtool -n $IF >$D/ntuple-rules.txt 2>&1
ethtool -x $IF >$D/rss.txt 2>&1
# 12 keeps the ntuple rule's queue (8) and the RSS queues (0..7): only the
# bound queues 12..15 stand in the way
ethtool -L $IF combined 12 >$D/shrink.log 2>&1
echo $? >$D/shrink.rc
lab-hds $IF off >$D/hds-off-bound.log 2>&1
echo $? >$D/hds-off-bound.rc

# the client of ncdevmem.c's usage text; stays connected until released
rm -f /tmp/nc.release
mq_peer sh -c "{ yes \"\$(printf '\\001\\002\\003\\004\\005\\006')\" | tr '\\n' '\\000' |
	head -c $BYTES; while [ ! -e /tmp/nc.release ]; do sleep 0.2; done; } |
	taskset -c 0 nc $MQ_RX_ADDR $PORT" >$D/nc.log 2>&1 &
TX=$!
got=0
for i in $(seq 1500); do
	got=$(grep -o 'total_received=[0-9]*$' $LOG | tail -1 | cut -d= -f2)
	[ "${got:-0}" -ge $BYTES ] && break
	kill -0 $NC 2>/dev/null || break
	sleep 0.2
done
# bound, idle, every token back: devmemtop snapshots, netlink, snapshots
if [ -n "$DMT" ]; then
	lab_wait_lines $D/devmemtop-live.json $(( $(wc -l <$D/devmemtop-live.json) + 2 ))
fi
devmem-traffic pools >$D/pools-bound.json
if [ -n "$DMT" ]; then
	lab_wait_lines $D/devmemtop-live.json $(( $(wc -l <$D/devmemtop-live.json) + 2 ))
	kill -INT $DMT
	wait $DMT
	echo $? >$D/devmemtop-live.rc
fi
touch /tmp/nc.release
wait $TX
echo $? >$D/nc.rc
wait $NC
echo $? >$D/ncdevmem.rc

# the last binding's pools go away (asynchronously) after ncdevmem exited
bid=$(sed -n 's/^got dmabuf id=\([0-9]*\)$/\1/p' $LOG | tail -1)
for i in $(seq 50); do
	devmem-traffic pools >$D/pools-after.json
	[ -n "$bid" ] && ! grep -q "\"dmabuf\":$bid[,}]" $D/pools-after.json && break
	sleep 0.2
done
sleep 1		# one more recorder interval sees the binding freed

{
	echo "bytes_sent=$BYTES"
	echo "total_received=${got:-0}"
	echo "binding_ids=$(sed -n 's/^got dmabuf id=\([0-9]*\)$/\1/p' $LOG | paste -sd,)"
	echo "validated_frags=$(grep -c '^Validated buffer' /tmp/ncdevmem.out)"
	echo "validation_errors=$(grep -c 'Failed validation' $LOG)"
	echo "linear_cmsgs=$(grep -c 'SCM_DEVMEM_LINEAR' $LOG)"
	echo "frags=$(grep -c '^received frag_page=' $LOG)"
	echo "frag_dmabuf_ids=$(sed -n 's/^received frag_page=.*dmabuf_id=\([0-9]*\)$/\1/p' $LOG |
		sort -u | paste -sd,)"
	echo "client_exited=$(grep -c '^client exited' $LOG)"
	echo "hds_before=$(cat $D/hds.before)"
	echo "shrink_rc=$(cat $D/shrink.rc)"
	echo "hds_off_bound_rc=$(cat $D/hds-off-bound.rc)"
	echo "hds_after=$(lab-hds $IF)"
	echo "ncdevmem_rc=$(cat $D/ncdevmem.rc)"
	echo "nc_rc=$(cat $D/nc.rc)"
} >$D/ncdevmem-results.txt
# the whole log is ~100 bytes per frag: keep its setup part and its end
grep -v '^received frag_page=\|^recvmsg ret=\|^total_received=' $LOG >$D/ncdevmem-setup.log
tail -n 20 $LOG >$D/ncdevmem-tail.log
cat $D/ncdevmem-results.txt
[ "$(cat $D/ncdevmem.rc)" = 0 ]
