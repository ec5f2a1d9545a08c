#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand
# Scenario "lighttok" (issue 25, token side): three devmemtops at once (the
# devmem tracepoints, -m fentry: the put_cmsg_notrunc fallback, and -m
# light: held tokens from the TCP socket iterator at snapshot time), with
# kernel.bpf_stats_enabled=1, through
#  1. a bystander: a plain TCP stream over loopback (busybox httpd to
#     wget, 32 MiB, no MSG_SOCK_DEVMEM): the token programs' run counts and run time over it
#     (bys.marks: the snapshot line numbers before and after);
#  2. a devmem receiver that holds every token, bound (--leak --linger):
#     light's held_tokens, held_by_sockets and holder against the full
#     mode's and the receiver's own counts (held.marks), and light's
#     collector time per snapshot with the tokens held;
#  3. the bystander's rate: two 32 MiB fetches, devmemtop off and in each
#     mode, 5 rounds, rotated (bys-rate.txt).
# assert_lighttok.py checks it.
# usage: lighttok.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: lighttok.sh OUTDIR}
mkdir -p $D
[ -x /lab/bin/devmemtop ] || { echo "lighttok: devmemtop not built" >&2; exit 1; }
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# full.json, fentry.json, light.json (the marks below list them so)
lab_dmt_modes $D full:full:250ms fentry:fentry:250ms light:light:250ms:-vv
lab_dmt_next

# The bystander: busybox httpd sends a 32 MiB file over loopback, busybox
# wget reads it with plain read()s (one tcp_recvmsg each, no
# MSG_SOCK_DEVMEM). (busybox nc is no good: its client quits at the end of
# its stdin before the data are sent.)
WWW=/tmp/lighttok-www
mkdir -p $WWW
dd if=/dev/zero of=$WWW/blob bs=1048576 count=32 2>/dev/null
busybox httpd -f -p 127.0.0.1:7001 -h $WWW &
HTTPD=$!
fetch() { busybox wget -q -O /dev/null http://127.0.0.1:7001/blob; }

# 1. the bystander stream
lab_dmt_next	# one more snapshot in each, so a mark is after what it marks
lab_dmt_lines >$D/bys.marks
fetch
echo $? >$D/bys.rc
lab_dmt_next
lab_dmt_lines >>$D/bys.marks

# 2. every token held, bound
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M --expect 8M \
	--leak --idle-timeout 10000 --linger 20000 >$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 8M \
	>$D/tx.json 2>$D/tx.log &
TX=$!
for i in $(seq 600); do grep -q lingering $D/rx.log 2>/dev/null && break; sleep 0.1; done
lab_dmt_next
lab_dmt_lines >$D/held.marks
sleep 2
lab_dmt_lines >>$D/held.marks
echo "rx_pid=$RX" >$D/rx.env
kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
lab_dmt_next
lab_dmt_stop

# 3. the bystander's rate: two fetches of the same 32 MiB with devmemtop
# not attached, and attached in each mode (fentry works here), the order
# rotated every round: bys-rate.txt "round mode t0 t1" (/proc/uptime)
up() { cut -d' ' -f1 /proc/uptime; }
MODES="off auto fentry light"
for r in 1 2 3 4 5; do
	k=0
	for m in $MODES $MODES; do
		k=$((k + 1))
		[ $k -gt $(((r - 1) % 4)) ] && [ $k -le $(((r - 1) % 4 + 4)) ] || continue
		p=
		if [ $m != off ]; then
			devmemtop --json -i 1s -m $m >$D/rate-$m.json 2>>$D/rate-$m.log &
			p=$!
			: >$D/rate-$m.json
			lab_wait_lines $D/rate-$m.json 1
		fi
		sleep 3	# an attach's or the last detach's aftermath settles (bench/bystander.sh)
		t0=$(up)
		fetch || echo "lighttok: fetch failed ($m, round $r)" >&2
		fetch
		t1=$(up)
		echo "$r $m $t0 $t1" >>$D/bys-rate.txt
		[ -z "$p" ] || { kill -INT $p; wait $p; }
	done
done
kill $HTTPD
wait $HTTPD
rm -rf $WWW
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ] && [ "$(cat $D/bys.rc)" = 0 ]
