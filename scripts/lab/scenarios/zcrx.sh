#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (the 7.3 lab runs it: kernel-patches/7.3/scenarios; io_uring zcrx is 6.15+)
# Scenario "zcrx" (issue 35): io_uring zero-copy receive over netdevsim
# (its memory provider pools are DMA_FROM_DEVICE with kernel-patches/7.3/
# 0016), devmemtop -m full and the default beside it. lab-zcrx (ours:
# upstream's iou-zcrx needs liburing >= 2.10, Debian 12 has 2.3) registers
# a zcrx interface queue on the RX port's queue 0 (4 MiB area, a 256-entry
# refill ring), receives 8 MiB from devmem-traffic tx in the peer and checks
# every byte; it returns each buffer through the refill ring at once but
# the first 64, which it holds once the stream ended (nothing allocates
# then): a devmemtop snapshot after that point must see them held by user
# space; lab-zcrx then returns them (SIGUSR1), and a snapshot after that
# must see them in the ring, not yet taken (mark-* say which line of each
# devmemtop output is the first taken fully after each point). Then
# lab-zcrx exits, the queue's zcrx pool is destroyed, and each devmemtop
# reports its final counts. Then a second lab-zcrx starves its queue
# (starve/: every buffer of a 64-niov area held): the provider's failures
# against the queue's rx-alloc-fail.
#   zcrx.json .log .rc   lab-zcrx's counts; its log says what it held, returned
#   tx.json .log .rc     the sender's
#   mark-held, mark-returned  "NAME LINE" per devmemtop output
#   starve/zcrx.* tx.*   the second receiver and its sender
#   devmemtop-*.json     the live views (lab_dmt_modes)
# A kernel whose uapi has no zcrx (6.12) has no lab-zcrx: SKIP, said in skip.
# usage: zcrx.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: zcrx.sh OUTDIR}
mkdir -p $D
BYTES=$((8 << 20))
HOLD=64

if [ ! -x /lab/bin/lab-zcrx ]; then
	echo "this kernel's uapi has no io_uring zcrx (IORING_REGISTER_ZCRX_IFQ): no lab-zcrx" >$D/skip
	echo "zcrx: SKIP: $(cat $D/skip)"
	exit 0
fi

# until LOG has a line matching RE, or PID exited (30 s at most)
wait_log() {
	local i

	for i in $(seq 300); do
		grep -q "$2" $1 && return 0
		kill -0 $3 2>/dev/null || break
		sleep 0.1
	done
	grep -q "$2" $1
}

# after a point: two more snapshots of each output, the second taken fully
# after it; record its line number
mark() {
	local p

	lab_dmt_next 2
	for p in $LAB_DMT; do
		echo "${p##*/} $(wc -l <${p#*:}.json)"
	done >$D/mark-$1
}

lab_dmt_modes $D devmemtop-live:full:300ms devmemtop-default:devmem:300ms
lab-zcrx --ifname $LAB_RX_IF --port $LAB_PORT --expect $BYTES --hold $HOLD \
	--hold-for 60000 >$D/zcrx.json 2>$D/zcrx.log &
ZC=$!
if ! lab_wait_listening $D/zcrx.log $ZC; then
	wait $ZC
	echo $? >$D/zcrx.rc
	lab_dmt_stop
	echo "zcrx: FAIL lab-zcrx did not listen: $(tail -1 $D/zcrx.log)"
	exit 1
fi
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes $BYTES \
	>$D/tx.json 2>$D/tx.log
echo $? >$D/tx.rc
if wait_log $D/zcrx.log holding $ZC; then
	mark held
	kill -USR1 $ZC
	wait_log $D/zcrx.log returned $ZC && mark returned
	kill -USR1 $ZC 2>/dev/null
fi
wait $ZC
echo $? >$D/zcrx.rc
# the pool's destroy (the ifq unregistered with the ring: a queue restart)
lab_dmt_next 3

# 2, starve: a 64-niov area and every buffer held. Once ring and area are
# empty the provider fails, netdevsim drops the packet and counts it in its
# queue's rx-alloc-fail (kernel-patches/7.3/0013), TCP retransmits, the
# stream stalls until lab-zcrx gives up (3 s without data: rc 3)
S=$D/starve
mkdir -p $S
lab-zcrx --ifname $LAB_RX_IF --port $LAB_PORT --area-size $((64 * 4096)) --hold 100000 \
	--hold-for 0 --idle-timeout 3000 >$S/zcrx.json 2>$S/zcrx.log &
ZC=$!
if lab_wait_listening $S/zcrx.log $ZC; then
	lab_peer timeout 30 devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT \
		--bytes $((4 << 20)) >$S/tx.json 2>$S/tx.log &
	TX=$!
	wait $ZC
	echo $? >$S/zcrx.rc
	wait $TX
	echo $? >$S/tx.rc
else
	wait $ZC
	echo $? >$S/zcrx.rc
fi
lab_dmt_next 3
lab_dmt_stop
echo "zcrx: lab-zcrx rc=$(cat $D/zcrx.rc) $(cat $D/zcrx.json), sender rc=$(cat $D/tx.rc);" \
	"starved: rc=$(cat $S/zcrx.rc) $(cat $S/zcrx.json)"
exit 0
