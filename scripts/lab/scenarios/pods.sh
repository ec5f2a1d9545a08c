#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "pods" (issue 24, holders by pod): the devmem receiver runs in a
# cgroup laid out as a kubelet with the systemd driver and containerd lays
# out a BestEffort pod's container,
#   /sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/
#     kubepods-besteffort-pod<uid, '_' for '-'>.slice/cri-containerd-<64 hex>.scope
# with a fresh random pod uid and container id, and holds its tokens for a
# while (--leak --linger). devmemtop runs in the root cgroup: the live view
# in batch mode, --json (devmem tracepoints, and -m fentry: the
# put_cmsg_notrunc fallback), -m light (no token hooks: holders read at
# snapshot time by the TCP socket iterator), a recording and the exporter (scraped
# while every token is held). assert_pods.py checks that
# the holders show that pod uid and container id, the cgroup path and its
# id (the directory's inode), in every output.
# usage: pods.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: pods.sh OUTDIR}
CG=/sys/fs/cgroup
mkdir -p $D


grep -q "^[^ ]* $CG cgroup2 " /proc/mounts || mount -t cgroup2 cgroup2 $CG || exit 1
# The initramfs root is the host's `mktemp -d` staging directory, mode 0700:
# uid 65534 (the exporter after its privilege drop) cannot even reach /sys.
# Left so: devmemtop opens the cgroup2 root before it drops privileges, and
# the exporter's check below proves that is enough.
ls -ldn / >$D/root-mode.txt
POD_UID=$(cat /proc/sys/kernel/random/uuid)
CID=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
QOS=$CG/kubepods.slice/kubepods-besteffort.slice
POD=$QOS/kubepods-besteffort-pod$(echo $POD_UID | tr - _).slice
SCOPE=$POD/cri-containerd-$CID.scope
mkdir -p $SCOPE || exit 1
cat >$D/pod.env <<EOT
POD_UID=$POD_UID
CONTAINER_ID=$CID
CGROUP=${SCOPE#$CG}
CGROUP_ID=$(stat -c %i $SCOPE)
EOT
cat $D/pod.env

TOP= REC= EXP=
if [ -x /lab/bin/devmemtop ]; then
	devmemtop -b -i 250ms >$D/devmemtop-top.txt 2>$D/devmemtop-top.log &
	TOP=$!
	devmemtop record -o $D/devmemtop-pods.dmtrec -i 250ms >$D/devmemtop-record-pods.log 2>&1 &
	REC=$!
	# the exporter resolves cgroups after dropping to uid 65534
	devmemtop export -v --listen 127.0.0.1:9435 --interval 250ms --user=65534 \
		>$D/devmemtop-export.log 2>&1 &
	EXP=$!
	devmemtop export -v --listen 127.0.0.1:9436 --interval 250ms --keep-privileges \
		>$D/devmemtop-export-root.log 2>&1 &
	EXP="$EXP $!"
	ls -ldn $CG $QOS $POD $SCOPE >$D/cgroup-modes.txt 2>&1
	lab_dmt_modes $D devmemtop-live:full:250ms devmemtop-fentry:fentry:250ms \
		devmemtop-light:light:500ms
	lab_wait_lines $D/devmemtop-top.txt 1
	for i in $(seq 300); do
		wget -q -O /dev/null http://127.0.0.1:9435/metrics 2>/dev/null && break
		sleep 0.2
	done
fi
# the receiver moves itself into the container's cgroup, then execs
sh -c "echo \$\$ >$SCOPE/cgroup.procs && exec devmem-traffic rx --ifname $LAB_RX_IF \
	--port $LAB_PORT --dmabuf-size 64M --expect 8M --leak --idle-timeout 10000 \
	--linger 20000" >$D/rx.json 2>$D/rx.log &
RX=$!
for i in $(seq 100); do grep -q listening $D/rx.log 2>/dev/null && break; sleep 0.1; done
echo "rx_pid=$RX rx_cgroup=$(cat /proc/$RX/cgroup)" >>$D/pod.env
# the sender returns once the receiver closed: after the linger
lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 8M \
	>$D/tx.json 2>$D/tx.log &
TX=$!
# every token held, bound: a few snapshots of it, and a scrape
for i in $(seq 600); do grep -q lingering $D/rx.log 2>/dev/null && break; sleep 0.1; done
sleep 1.5
[ -z "$EXP" ] || wget -q -O $D/export.prom http://127.0.0.1:9435/metrics ||
	echo "pods: scrape failed" >&2
[ -z "$EXP" ] || wget -q -O $D/export-root.prom http://127.0.0.1:9436/metrics ||
	echo "pods: scrape failed" >&2
kill -USR1 $RX
wait $RX
echo $? >$D/rx.rc
wait $TX
echo $? >$D/tx.rc
lab_wait_pool_gone $D/rx.json $D
lab_dmt_stop
for p in $TOP $REC $EXP; do
	kill -INT $p
	wait $p
	echo "$p $?" >>$D/devmemtop.rcs
done
# the receiver has exited: its cgroups are empty
rmdir $SCOPE $POD $QOS $CG/kubepods.slice
[ "$(cat $D/rx.rc)" = 0 ] && [ "$(cat $D/tx.rc)" = 0 ]
