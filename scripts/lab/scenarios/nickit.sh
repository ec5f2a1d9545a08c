#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "nickit": the NIC validation kit (scripts/nic/validate.sh, run
# with bash as on a real host) against the lab's 16-queue netdevsim. The
# NIC is prepared the way the kit's README asks a person to (ntuple on;
# header split is already on), the booted kernel's config is where the kit
# looks for it (/boot/config-$(uname -r), copied from the build by
# vmtest.sh), then the kit runs its checks and records and gates an
# ncdevmem run (guest/ncdevmem-run.sh) with specs/lab-ncdevmem.yaml.
# assert_ncdevmem.py checks its output on the host.
# usage: nickit.sh OUTDIR   (in the lab guest; env LAB_NCDEVMEM_BYTES)
. /lab/guest/lib.sh
. /lab/guest/mq.sh
D=${1:?usage: nickit.sh OUTDIR}
BYTES=${LAB_NCDEVMEM_BYTES:-33554432}
mkdir -p $D

for f in /lab/bin/bash /lab/bin/ncdevmem /lab/bin/devmemtop /lab/nic/validate.sh /out/kconfig; do
	if [ ! -e $f ]; then
		echo "$f missing in the guest (host build incomplete)" | tee $D/skip
		exit 0
	fi
done
mq_setup 16 || { echo "multi-queue netdevsim setup failed"; exit 1; }
mkdir -p /boot && cp /out/kconfig /boot/config-$(uname -r)
ethtool -K $MQ_RX_IF ntuple on
DMT=/lab/bin/devmemtop NCDEVMEM_LOG=/tmp/nickit-ncdevmem.log \
	bash /lab/nic/validate.sh $MQ_RX_IF --spec /lab/specs/lab-ncdevmem.yaml \
	--duration 300s --out $D/kit -- \
	sh /lab/guest/ncdevmem-run.sh $MQ_RX_IF $MQ_RX_ADDR $BYTES $MQ_PEER_PID \
	>$D/kit.log 2>&1
echo $? >$D/kit.rc
grep -v '^received frag_page=\|^recvmsg ret=\|^total_received=' /tmp/nickit-ncdevmem.log \
	>$D/ncdevmem-setup.log
cat $D/kit.log
exit 0		# the kit's verdict depends on the kernel: assert_ncdevmem.py judges it
