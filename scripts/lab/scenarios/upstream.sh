#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (the 7.3 lab runs it: kernel-patches/7.3/scenarios; devmem.py is 7.x)
# Scenario "upstream" (the 7.3 lab; issue 34: upstream's own tests as the
# judge): tools/testing/selftests/drivers/net/hw/devmem.py, UNMODIFIED from
# the 7.3 source, with the ncdevmem built from that source
# (selftests/devmem-build.sh), against the lab's 16-queue netdevsim pair
# (guest/mq.sh) as its hardware environment: NETIF the RX port, the peer's
# netns by name as REMOTE_TYPE=netns (ip netns attach), IPv4 addresses.
# It runs in a chroot over the host's /usr (guest/ksft.sh): Debian's
# python3, bash, socat, ethtool and iproute2. devmemtop -m full and the
# default mode watch the whole run. Output:
#   devmem.tap .err .rc    the test's KTAP output, stderr, exit status
#   devmem.t               uptime before and after
#   devmemtop-*.json       the live view through it (lab_dmt_modes)
#   ncdevmem-runs          how many ncdevmem binds the test asked for
#                          (its "-f" commands in the KTAP output)
# usage: upstream.sh OUTDIR
. /lab/guest/lib.sh
. /lab/guest/ksft.sh
. /lab/guest/mq.sh
. $LAB_STATE
D=${1:?usage: upstream.sh OUTDIR}
K=/lab/ksrc-7.3/tools/testing/selftests
R=/tmp/ksft-root
mkdir -p $D

skip() {
	echo "$*" | tee $D/skip
	exit 0
}

[ -d $K/drivers/net/hw ] ||
	skip "upstream's devmem selftests are not in this initramfs (build/lab/ksft-7.3; vmtest builds it when scenario upstream runs)"
mq_setup 16 || { echo "upstream: FAIL multi-queue netdevsim setup"; exit 1; }
ksft_root >$D/root.log 2>&1 ||
	{ echo "upstream: FAIL no chroot with the host's /usr: $(tail -1 $D/root.log)"; exit 1; }
for f in /usr/bin/socat /usr/bin/bash; do
	[ -x $R$f ] || { echo "upstream: FAIL the host has no $f (scripts/lab/deps.sh)"; exit 1; }
done
in_root ip netns attach mqpeer $MQ_PEER_PID >$D/netns-attach.log 2>&1 ||
	{ echo "upstream: FAIL ip netns attach mqpeer: $(tail -1 $D/netns-attach.log)"; exit 1; }
# the NIC set up as an operator would for devmem (the test's README): ntuple
# filters on, so ncdevmem can steer its flow to the queues it binds
in_root ethtool -K $MQ_RX_IF ntuple on >$D/ntuple.log 2>&1 ||
	{ echo "upstream: FAIL ethtool -K $MQ_RX_IF ntuple on: $(tail -1 $D/ntuple.log)"; exit 1; }
echo "ifname=$MQ_RX_IF ifindex=$(cat /sys/class/net/$MQ_RX_IF/ifindex) queues=$MQ_QUEUES" \
	"local=$MQ_RX_ADDR remote=$MQ_TX_ADDR" >$D/setup.txt

lab_dmt_modes $D devmemtop-live:full:500ms devmemtop-default:devmem:500ms
# check_rx_large_niov's ncdevmem takes a 62.5 MiB udmabuf of 2 MiB pages per
# payload size, and a binding (with its pinned pages) is freed only after
# its last niov is back: devmem.py reserves 64 hugepages (two buffers), and
# on a loaded host the next run's buffer came before the last one's was
# freed ("create udmabuf: Cannot allocate memory"). Six buffers' worth,
# which devmem.py then leaves as they are (it only raises the count).
hp=$(cat /proc/sys/vm/nr_hugepages)
echo 192 >/proc/sys/vm/nr_hugepages
echo "nr_hugepages $(cat /proc/sys/vm/nr_hugepages), was $hp" >$D/hugepages.txt
t0=$(lab_now)
echo "upstream: devmem.py at ${t0}s"
# a hung test must not take the rest of the VM run with it
timeout -k 5 1200 chroot $R /usr/bin/env -i PATH=/lab/ksft-bin:/usr/sbin:/usr/bin \
	HOME=/tmp PYTHONDONTWRITEBYTECODE=1 NETIF=$MQ_RX_IF LOCAL_V4=$MQ_RX_ADDR \
	REMOTE_V4=$MQ_TX_ADDR REMOTE_TYPE=netns REMOTE_ARGS=mqpeer \
	/usr/bin/python3 $K/drivers/net/hw/devmem.py >$D/devmem.tap 2>$D/devmem.err
echo $? >$D/devmem.rc
echo "$t0 $(lab_now)" >$D/devmem.t
# the last binding's pools (and so the binding) go away once its niovs are
# back: flush the defer lists, wait for netlink to list no devmem pool,
# then until both devmemtops have reported every binding freed (the free
# is a work item after the last put: CI once saw it between the two
# instances' last snapshots, freed in one output and alive in the other)
lab_flush_defer
for i in $(seq 50); do
	devmem-traffic pools --ifname $MQ_RX_IF | grep -q '"dmabuf":' || break
	sleep 0.2
done
lab_dmt_next 1
lab_dmt_wait_freed 30
lab_dmt_stop
echo $hp >/proc/sys/vm/nr_hugepages
in_root ip netns delete mqpeer
echo "upstream: devmem.py rc=$(cat $D/devmem.rc), $(grep '^# Totals' $D/devmem.tap)"
exit 0
