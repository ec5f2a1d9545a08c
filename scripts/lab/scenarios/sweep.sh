#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "sweep" (issue #10): the same bytes through bindings whose
# net_iovs are 4, 16, 32 and 64 KiB (NETDEV_A_DMABUF_RX_PAGE_SIZE, patch
# 0007; netdevsim opts in with 0008), backed by the system dma-heap (1 MiB
# buddy chunks, naturally aligned: 6.12's udmabuf has one 4 KiB sg entry
# per page and cannot back a net_iov larger than a page).
#
# Each run: a 256 MiB heap dmabuf, 48 MiB received with every token held
# until the end (so every net_iov comes from the provider, none recycles:
# the counts are the binding's, not the page pool's luck), every payload
# byte verified, under its own `devmemtop record` (snapshots every 200 ms
# until the binding is freed). LAB_SWEEP_REPS runs per size (default 5,
# at least 5 a side for devmemtop compare, scripts/lab/compare.sh)
# give the spread of the CPU figures (48 MiB per run: the receiver's sys
# time is sampled per tick, 16 MiB gave only ~20-50 samples; 5 x 48 MiB
# costs what 4 x 64 MiB did). The host (assert_niov.py) builds the
# table from the recordings and the tool's JSON and gates the 64 KiB and
# 4 KiB recordings with specs/lab-sweep.yaml. Each receiver keeps its
# tokens held for LAB_SWEEP_HOLD_MS (1500) after the last byte (--hold-for,
# outside its CPU figures), and one -m light devmemtop --json runs
# through all runs: light's held tokens against each run's recording and
# the tool's counts in that time (assert_devmemtop.py). Beside it the
# default, -m devmem (issue 36): each run's binding's every devmem figure
# must equal that run's recording's (full mode) at its free.
#
# A kernel that does not know the attribute (baseline) refuses the first
# bind; the refusal is recorded (probe.rc, probe.log) and the sweep is
# skipped with that reason in skip.txt (the host asserts the refusal).
#
# usage: sweep.sh OUTDIR            (in the lab guest)
#        sweep.sh --run SIZE OUTDIR (one run; devmemtop record wraps it)
. /lab/guest/lib.sh
. $LAB_STATE
SIZES=${LAB_SWEEP_SIZES:-"4096 16384 32768 65536"}
REPS=${LAB_SWEEP_REPS:-5}
BYTES=${LAB_SWEEP_BYTES:-48M}
DMABUF=${LAB_SWEEP_DMABUF:-256M}
HOLD_MS=${LAB_SWEEP_HOLD_MS:-1500}

# one_run SIZE OUTDIR: receiver bound with rx-page-size SIZE, sender in the
# peer netns; waits until the binding's page pool is gone.
one_run() {
	lab_rx_tx $2 $BYTES --dmabuf heap --dmabuf-size $DMABUF --rx-page-size $1 --hold \
		--hold-for $HOLD_MS --idle-timeout 10000
}

if [ "$1" = --run ]; then
	one_run "$2" "$3"
	exit $?
fi

D=${1:?usage: sweep.sh OUTDIR}
mkdir -p $D
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.before
echo "$SIZES" >$D/sizes
echo "$REPS" >$D/reps
echo "$BYTES $DMABUF" >$D/bytes

# Probe: does this kernel take the attribute at all? A bind that fails
# exits at once with the kernel's extack text on stderr.
devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf heap \
	--dmabuf-size 1M --rx-page-size 16384 --idle-timeout 1000 \
	>$D/probe.json 2>$D/probe.log &
P=$!
if lab_wait_listening $D/probe.log $P; then
	# bound: connect once and close, so the probe receiver exits
	lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 64K \
		>$D/probe-tx.json 2>$D/probe-tx.log
fi
wait $P
echo $? >$D/probe.rc
if [ "$(cat $D/probe.rc)" != 0 ]; then
	echo "the $LAB_KERNEL kernel refused NETDEV_A_DMABUF_RX_PAGE_SIZE: $(cat $D/probe.log)" \
		>$D/skip.txt
	cat $D/skip.txt
	exit 0
fi
lab_wait_pool_gone $D/probe.json $D

lab_dmt_modes $D devmemtop-light:light:500ms:-vv devmemtop-default:devmem:500ms
rc=0
for rep in $(seq $REPS); do
	for size in $SIZES; do
		o=$D/run-$size-$rep
		mkdir -p $o
		echo "sweep: rx-page-size $size, run $rep"
		if [ -x /lab/bin/devmemtop ]; then
			devmemtop record -o $o/devmemtop.dmtrec -i 200ms -- \
				sh /lab/scenarios/sweep.sh --run $size $o \
				>$o/devmemtop-record.log 2>&1
			echo $? >$o/devmemtop-record.rc
		else
			sh /lab/scenarios/sweep.sh --run $size $o
		fi
		[ "$(cat $o/rx.rc 2>/dev/null)" = 0 ] || rc=1
	done
done
# the last run's binding freed: in a snapshot of each before they stop
lab_dmt_next 2
lab_dmt_stop
cat /sys/class/net/$LAB_RX_IF/statistics/rx_dropped >$D/rx_dropped.after
exit $rc
