#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (the 7.3 lab runs it: kernel-patches/7.3/scenarios; these tests are 7.x)
# Scenario "upstream-more" (the 7.3 lab; issue 34 item 3): more of
# upstream's own selftests, UNMODIFIED from the 7.3 source
# (selftests/devmem-build.sh), each under a timeout, devmemtop beside them:
#
#   hw/nk_devmem.py      devmem through netkit (NetDrvContEnv: a netkit pair,
#                        its guest end in a netns, nk_forward.bpf.o on the
#                        NIC's tc ingress, nk_primary_rx_redirect.bpf.o on
#                        the host end, an RX queue of the NIC leased to the
#                        netkit guest), the path a container takes; run in a
#                        cgroup laid out as a kubelet lays out a pod's
#                        container (as scenarios/pods.sh does)
#   hw/userns_devmem.py  the same with the netns owned by a user namespace
#   hw/pp_alloc_fail.py  as is (its harness refuses netdevsim) and through
#                        its hardware env on the 16-queue port
#   queues.py stats.py hds.py (drivers/net)  on netdevsim devices of their own
#   ppfail (ours, guest/ppfail.sh)  pp_alloc_fail.py's fault injection on
#                        page_pool_alloc_netmems, on netdevsim's pp_hold
#                        allocations (netdevsim's RX path takes none from
#                        its page pools); ppfail.txt, .trace
#
# The netkit tests run against the 16-queue netdevsim pair (guest/mq.sh)
# as their hardware env over IPv6 (NetDrvContEnv requires it):
# NETIF, LOCAL_V6 2001:db8:1::1, REMOTE_V6 2001:db8:1::2 in the peer's
# netns (REMOTE_TYPE=netns), LOCAL_PREFIX_V6 2001:db8:2::/64 for the
# netkit side, ntuple filters on as an operator would. Output per test
# NAME: NAME.tap .err .rc (KTAP, stderr, exit status), NAME.t (uptime
# before and after), NAME.ifindex (the highest ifindex before it); for
# the netkit tests NAME/devmemtop-live.json (-m full) and
# NAME/devmemtop-default.json through the test, pod.env; drv/devmemtop-live.json
# (-m full) through queues.py, stats.py and hds.py.
# usage: upstream-more.sh OUTDIR
R=/tmp/ksft-root
# The test's process, started by ksft() below through this script: into the
# pod's cgroup first (POD_SCOPE), then into the chroot. With NEWROOT the
# chroot is a root of its own instead: the kernel refuses a user namespace
# to a chrooted process (EPERM: "unshare failed: Operation not permitted",
# userns_devmem.py's UserNetNS), so in a mount namespace of its own the
# chroot's tree is moved onto / and entered from there (switch_root's way:
# then the process's root is its mount namespace's root).
case $1 in
--exec)
	shift
	[ -z "$POD_SCOPE" ] || echo $$ >$POD_SCOPE/cgroup.procs || exit 125
	[ -z "$NEWROOT" ] || exec unshare -m sh $0 --newroot "$@"
	exec chroot $R "$@" ;;
--newroot)
	shift
	mount --make-rprivate / && cd $R && mount --move $R / && exec chroot . "$@"
	exit 125 ;;
esac
. /lab/guest/lib.sh
. /lab/guest/ksft.sh
. /lab/guest/mq.sh
. /lab/guest/ppfail.sh
. $LAB_STATE
D=${1:?usage: upstream-more.sh OUTDIR}
K=/lab/ksrc-7.3/tools/testing/selftests
CG=/sys/fs/cgroup
T=/sys/kernel/tracing
mkdir -p $D

skip() {
	echo "$*" | tee $D/skip
	exit 0
}

max_ifindex() {
	cat /sys/class/net/*/ifindex | sort -n | tail -1
}

# ksft NAME FILE [VAR=VALUE...]: one selftest in the chroot, in the pod's
# cgroup when POD_SCOPE is set, in a root of its own when NEWROOT is
ksft() {
	local name=$1 file=$2 t0
	shift 2
	max_ifindex >$D/$name.ifindex
	t0=$(lab_now)
	echo "upstream-more: $name ($file) at ${t0}s"
	POD_SCOPE=$POD_SCOPE NEWROOT=$NEWROOT timeout -k 5 600 sh $0 --exec /usr/bin/env -i \
		PATH=/lab/ksft-bin:/usr/sbin:/usr/bin HOME=/tmp PYTHONDONTWRITEBYTECODE=1 \
		"$@" /usr/bin/python3 $K/$file >$D/$name.tap 2>$D/$name.err
	echo $? >$D/$name.rc
	echo "$t0 $(lab_now)" >$D/$name.t
	echo "upstream-more: $name rc=$(cat $D/$name.rc), $(grep '^# Totals' $D/$name.tap)"
}

# nk NAME FILE: a netkit test with both devmemtop modes beside it, until
# every binding it made is freed
nk() {
	local name=$1 file=$2 i
	mkdir -p $D/$name
	lab_dmt_modes $D/$name devmemtop-live:full:500ms devmemtop-default:devmem:500ms
	ksft $name $file NETIF=$MQ_RX_IF LOCAL_V6=$L6 REMOTE_V6=$R6 \
		LOCAL_PREFIX_V6=$P6 REMOTE_TYPE=netns REMOTE_ARGS=mqpeer
	lab_flush_defer
	for i in $(seq 50); do
		devmem-traffic pools --ifname $MQ_RX_IF | grep -q '"dmabuf":' || break
		sleep 0.2
	done
	lab_dmt_next 1
	lab_dmt_wait_freed 30
	lab_dmt_stop
}

[ -d $K/drivers/net/hw ] ||
	skip "upstream's selftests are not in this initramfs (build/lab/ksft-7.3; vmtest builds it)"
mq_setup 16 || { echo "upstream-more: FAIL multi-queue netdevsim setup"; exit 1; }
# the chroot upstream.sh set up earlier in this boot is reused (its 9p
# share mounts once)
[ -x $R/usr/bin/python3 ] || ksft_root >$D/root.log 2>&1 ||
	{ echo "upstream-more: FAIL no chroot with the host's /usr: $(tail -1 $D/root.log)"; exit 1; }
for f in /usr/bin/socat /usr/bin/bash /usr/sbin/tc /usr/sbin/bpftool /usr/bin/nsenter \
	/usr/bin/unshare; do
	[ -x $R$f ] || { echo "upstream-more: FAIL the host has no $f (scripts/lab/deps.sh)"; exit 1; }
done
in_root ip netns attach mqpeer $MQ_PEER_PID >$D/netns-attach.log 2>&1 ||
	{ echo "upstream-more: FAIL ip netns attach mqpeer: $(tail -1 $D/netns-attach.log)"; exit 1; }
in_root ethtool -K $MQ_RX_IF ntuple on >$D/ntuple.log 2>&1 ||
	{ echo "upstream-more: FAIL ethtool -K $MQ_RX_IF ntuple on: $(tail -1 $D/ntuple.log)"; exit 1; }
L6=2001:db8:1::1 R6=2001:db8:1::2 P6=2001:db8:2::/64
# Debian's ip (busybox's knows no nodad)
in_root ip -6 addr add $L6/64 dev $MQ_RX_IF nodad &&
	in_root ip -netns mqpeer -6 addr add $R6/64 dev $MQ_TX_IF nodad ||
	{ echo "upstream-more: FAIL IPv6 addresses on the pair"; exit 1; }
echo "ifname=$MQ_RX_IF ifindex=$(cat /sys/class/net/$MQ_RX_IF/ifindex) queues=$(ls -d /sys/class/net/$MQ_RX_IF/queues/rx-* | wc -l)" \
	"local=$L6 remote=$R6 prefix=$P6" >$D/setup.txt

# the pod's cgroup (scenarios/pods.sh says whose layout)
grep -q "^[^ ]* $CG cgroup2 " /proc/mounts || mount -t cgroup2 cgroup2 $CG
POD_UID=$(cat /proc/sys/kernel/random/uuid)
CID=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
POD_SCOPE=$CG/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$(echo $POD_UID | tr - _).slice/cri-containerd-$CID.scope
mkdir -p $POD_SCOPE || POD_SCOPE=
cat >$D/pod.env <<EOT
POD_UID=$POD_UID
CONTAINER_ID=$CID
CGROUP=${POD_SCOPE#$CG}
EOT

# check_nk_rx_large_niov's ncdevmem takes 2 MiB pages (upstream.sh says why
# six buffers' worth)
hp=$(cat /proc/sys/vm/nr_hugepages)
echo 192 >/proc/sys/vm/nr_hugepages
nk nk_devmem drivers/net/hw/nk_devmem.py
NEWROOT=1
nk userns_devmem drivers/net/hw/userns_devmem.py
NEWROOT=
echo $hp >/proc/sys/vm/nr_hugepages
# the pod's cgroups go once their processes did (the tests' ended)
d=$POD_SCOPE
while [ -n "$POD_SCOPE" ] && [ "$d" != $CG ]; do
	rmdir $d 2>/dev/null || break
	d=${d%/*}
done
POD_SCOPE=

ksft pp_alloc_fail drivers/net/hw/pp_alloc_fail.py
ksft pp_alloc_fail_netif drivers/net/hw/pp_alloc_fail.py NETIF=$MQ_RX_IF \
	LOCAL_V6=$L6 REMOTE_V6=$R6 REMOTE_TYPE=netns REMOTE_ARGS=mqpeer
# the driver tests make netdevsim devices of their own: devmemtop -m full
# through all three (their windows: NAME.t, NAME.ifindex), and before them
# through ppfail: what pp_alloc_fail.py would inject, on the page pool
# allocation netdevsim makes on request (guest/ppfail.sh; 7.3's function)
mkdir -p $D/drv
readlink /proc/self/ns/net >$D/netns
lab_dmt_modes $D/drv devmemtop-live:full:500ms
PPF_FUNC=page_pool_alloc_netmems
PPF_TAG=upstream-more
ppfail || echo "upstream-more: ppfail failed"
ksft queues drivers/net/queues.py
ksft stats drivers/net/stats.py
ksft hds drivers/net/hds.py
lab_dmt_next 2
lab_dmt_stop
in_root ip netns delete mqpeer
exit 0
