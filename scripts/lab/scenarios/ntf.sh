#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "ntf" (issue 25): a page-pool notification locates a listed
# pool in light mode without waiting for the sampling period.
# devmemtop -m light with its sampling windows once an hour (--sampling
# 3s/1h: the start's window, then none), then a new netdevsim device (bus
# id 4243) goes up: its page pool is announced on the netdev family's
# page-pool group, the notification brings a window forward, and a page
# taken from the pool during that window (debugfs pp_hold: a slow-path
# allocation, a hold event per page of the bulk) gives light mode the
# pool's address. assert_ntf.py checks that the new device's pool is
# located in light's JSON with the kernel's own inflight, and that the -vv
# log says the window was brought forward.
# usage: ntf.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: ntf.sh OUTDIR}
mkdir -p $D
[ -x /lab/bin/devmemtop ] || { echo "ntf: devmemtop not built" >&2; exit 1; }
fwd() { grep -c 'window brought forward' $D/light.log; }

devmemtop --json -i 250ms -m light --sampling 3s/1h -vv >$D/light.json 2>$D/light.log &
P=$!
lab_wait_lines $D/light.json 1
fwd0=$(fwd)

echo "4243 1 1" >/sys/bus/netdevsim/new_device || exit 1
IF=
for i in $(seq 50); do
	IF=$(ls /sys/bus/netdevsim/devices/netdevsim4243/net/ 2>/dev/null | head -1)
	[ -n "$IF" ] && break
	sleep 0.1
done
[ -n "$IF" ] || { echo "ntf: netdevsim4243 has no netdev" >&2; exit 1; }
# up: the queue's page pool is created, and announced
ip link set $IF up || exit 1
echo "ifindex=$(cat /sys/class/net/$IF/ifindex) fwd_before=$fwd0 up=$(lab_now)" >$D/dev.txt
for i in $(seq 300); do
	[ "$(fwd)" -gt "$fwd0" ] && break
	sleep 0.1
done
echo "fwd_seen=$(fwd) at=$(lab_now)" >>$D/dev.txt
# the window is open for 3 s from its log line: a page from the pool now
sleep 0.5
H=/sys/kernel/debug/netdevsim/netdevsim4243/ports/0/pp_hold
echo y >$H || { echo "ntf: pp_hold failed" >&2; exit 1; }
echo "held=$(lab_now)" >>$D/dev.txt
# past the window's end, and two snapshots more
sleep 3
n=$(wc -l <$D/light.json)
lab_wait_lines $D/light.json $((n + 2))
echo n >$H
lab_wait_lines $D/light.json $((n + 4))
echo 4243 >/sys/bus/netdevsim/del_device
lab_wait_lines $D/light.json $((n + 6))
kill -INT $P
wait $P
echo $? >$D/dmt.rc
[ "$(cat $D/dmt.rc)" = 0 ]
