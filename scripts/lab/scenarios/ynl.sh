#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "ynl": the kernel's own reader of page-pool stats, ynltool
# (tools/net/ynl/ynltool, built from the 7.3 source: ynltool/build.sh), beside
# devmemtop on the same pools. A netdevsim device of its own (bus id 4244)
# goes up after devmemtop started (full and light mode), a page is taken
# from its queue's pool (debugfs pp_hold: a slow-path bulk) and given back.
# At each idle point, ynltool reads, devmemtop snapshots, ynltool reads
# again: assert_ynl.py takes the points where both ynltool reads agree and
# checks devmemtop's per-pool counters, and ynltool's recycling % and
# slow:fast computed from them, against ynltool's own output.
# usage: ynl.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: ynl.sh OUTDIR}
mkdir -p $D
[ -x /lab/bin/devmemtop ] || { echo "ynl: devmemtop not built" >&2; exit 1; }
[ -x /lab/bin/ynltool ] || { echo "ynl: ynltool not in this initramfs" >$D/skip; exit 0; }

yn() {	# yn NAME: ynltool's page-pool stats per pool and per device, and qstats
	ynltool -j page-pool stats group-by pp >$D/$1.pp.json 2>$D/$1.err
	ynltool -j page-pool stats group-by device >$D/$1.dev.json 2>>$D/$1.err
	ynltool -j qstats show scope queue >$D/$1.qstats.json 2>>$D/$1.err
}
point() {	# point NAME: ynltool, a snapshot of each devmemtop, ynltool
	yn $1.a
	# snapshot L+2 is collected wholly after this count, so after read a
	echo "$1 $(lab_dmt_lines)" >>$D/points
	lab_dmt_next 2
	yn $1.b
}

lab_dmt_modes $D devmemtop-full:full:300ms devmemtop-light:light:300ms:--sampling:50ms/1s
echo "4244 1 1" >/sys/bus/netdevsim/new_device || exit 1
IF=
for i in $(seq 50); do
	IF=$(ls /sys/bus/netdevsim/devices/netdevsim4244/net/ 2>/dev/null | head -1)
	[ -n "$IF" ] && break
	sleep 0.1
done
[ -n "$IF" ] || { echo "ynl: netdevsim4244 has no netdev" >&2; exit 1; }
ip link set $IF up || exit 1
echo "ifindex=$(cat /sys/class/net/$IF/ifindex)" >$D/dev.txt
point up
H=/sys/kernel/debug/netdevsim/netdevsim4244/ports/0/pp_hold
echo y >$H || { echo "ynl: pp_hold failed" >&2; exit 1; }
# light mode locates the pool in a sampling window (1 s period)
sleep 2
point held
echo n >$H
sleep 1
point released
lab_dmt_stop
echo 4244 >/sys/bus/netdevsim/del_device
[ "$(cat $D/devmemtop-full.rc)" = 0 ] && [ "$(cat $D/devmemtop-light.rc)" = 0 ]
