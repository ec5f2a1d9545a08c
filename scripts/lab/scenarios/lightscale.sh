#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand
# Scenario "lightscale" (issue 25, benchmarks): light mode's held tokens at
# scale. One devmem receiver accepts CONNS connections on the lab's RX
# queue (netdevsim has one) and holds exactly PER tokens on each, none
# returned (devmem-traffic rx --conns --conn-tokens --leak): CONNS * PER
# tokens held, 1,000 * 100 = 100,000 by default. Then devmemtop -m light
# -vv (the iter/tcp walk of every socket's token xarray) runs alone for
# WINDOW snapshots, with kernel.bpf_stats_enabled=1, and this records per
# snapshot the iterator's own BPF run time (-vv), the collector's wall time
# (health.collect_ns) and its CPU (/proc/PID/schedstat, before and after
# the window). The same light devmemtop runs before the receiver too (no
# devmem socket: the fixed cost), and the full mode runs through the
# hand-out (its token programs' run time per token, and its figures for
# the cross-check). assert_lightscale.py checks and prints the table.
#
# Sizing: netdevsim copies a packet's payload into 4 KiB net_iovs, so a
# token covers at most 4 KiB and 100 tokens need at most 400 KiB read;
# each sender sends PER * 4 KiB + 32 KiB (the reads stop at PER tokens,
# the rest stays unread in the socket, up to ~36 KiB each). Held: at most
# 100,000 net_iovs (fewer when frags share one), unread at most ~9,000,
# the page pool's ring and cache some hundreds: a 512 MiB udmabuf (131,072
# net_iovs of 4 KiB) fits them with room; udmabuf's size_limit_mb (64 by
# default) is raised for the run and restored, and the 2 GiB guest holds it.
# usage: lightscale.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: lightscale.sh OUTDIR}
mkdir -p $D
[ -x /lab/bin/devmemtop ] || { echo "lightscale: devmemtop not built" >&2; exit 1; }
CONNS=${LIGHTSCALE_CONNS:-1000}
PER=${LIGHTSCALE_PER:-100}
WINDOW=${LIGHTSCALE_WINDOW:-15}
BUF=512M
echo "conns=$CONNS per=$PER window=$WINDOW dmabuf=$BUF" >$D/params
echo 1 >/proc/sys/kernel/bpf_stats_enabled
UL=/sys/module/udmabuf/parameters/size_limit_mb
UL_OLD=$(cat $UL)
echo 1024 >$UL

# lines FILE: its line count
lines() { wc -l <$1 2>/dev/null || echo 0; }
# wait_lines FILE N: lab_wait_lines without its 60 s cap (a snapshot with
# 100,000 tokens may take seconds under TCG): 20 minutes at most
wait_lines() {
	local i

	for i in $(seq 6000); do
		[ "$(lines $1)" -ge $2 ] && return 0
		sleep 0.2
	done
	echo "lightscale: $1 stuck below $2 lines" >&2
}
# sched PID: nanoseconds on CPU so far (all its threads)
sched() { cat /proc/$1/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

devmemtop --json -i 1s -m light -vv >$D/light.json 2>$D/light.log &
LIGHT=$!
lab_wait_lines $D/light.json 2
# 1. no devmem socket: the iterator's fixed cost
a=$(lines $D/light.json)
s0=$(sched $LIGHT)
wait_lines $D/light.json $((a + 8))
b=$(lines $D/light.json)
s1=$(sched $LIGHT)
echo "idle $a $b $s0 $s1" >$D/windows

# 2. the hand-out, with the full mode attached
devmemtop --json -i 1s -m full >$D/full.json 2>$D/full.log &
FULL=$!
lab_wait_lines $D/full.json 2
f0=$(lines $D/full.json)
t0=$(lab_now)
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size $BUF \
	--conns $CONNS --conn-tokens $PER --leak --verify none \
	--idle-timeout 60000 --linger 600000 >$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --conns $CONNS \
	--bytes $((PER * 4096 + 32768)) --timeout 1800 >$D/tx.json 2>$D/tx.log &
TX=$!
for i in $(seq 9000); do
	grep -q lingering $D/rx.log 2>/dev/null && break
	kill -0 $RX 2>/dev/null || break
	sleep 0.2
done
t1=$(lab_now)
echo "rx_pid=$RX handout_seconds=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", b - a }')" >$D/rx.env
cat /proc/meminfo >$D/meminfo.held
devmem-traffic pools --ifname $LAB_RX_IF >$D/pools-held.json
# two more snapshots of each, taken while every token is held
a=$(lines $D/full.json)
wait_lines $D/full.json $((a + 2))
f1=$(lines $D/full.json)
kill -INT $FULL
wait $FULL
echo "full $? $f0 $f1" >>$D/devmemtop.rcs

# 3. every token held: light alone
a=$(lines $D/light.json)
wait_lines $D/light.json $((a + 1))
a=$(lines $D/light.json)
s0=$(sched $LIGHT)
wait_lines $D/light.json $((a + WINDOW))
b=$(lines $D/light.json)
s1=$(sched $LIGHT)
echo "held $a $b $s0 $s1" >>$D/windows
echo "full_held $f0 $f1" >>$D/windows

kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
a=$(lines $D/light.json)
wait_lines $D/light.json $((a + 2))
kill -INT $LIGHT
wait $LIGHT
echo "light $? 0 0" >>$D/devmemtop.rcs
echo $UL_OLD >$UL
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
