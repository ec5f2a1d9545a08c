#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "repeat" (issue 20): the bulk receive, shorter and repeated, for
# devmemtop compare. LAB_REPEAT_RUNS runs (default 5) of LAB_REPEAT_BYTES
# (default 16 MiB) through a 32 MiB udmabuf bound to RX queue 0 (its memfd's
# pages allocated interleaved with another memfd's, devmem-traffic's
# udmabuf-scatter: about one DMA chunk per page on 7.x, whose udmabuf merges
# physically contiguous pages, as on 6.12, whose udmabuf never does; each
# run's rx.json has the count, memfd_phys_runs), every token
# returned after its frag was verified, each run under its own `devmemtop
# record` (snapshots every 200 ms; the recording keeps the run's command
# CPU and the bytes received into the binding). The host compares the
# baseline kernel's runs with the patched kernel's (scripts/lab/compare.sh):
# provider time per niov, alloc latency p50, CPU per GiB. The two kernels
# boot one after the other, so their runs cannot alternate; the runs of one
# kernel follow each other in one boot.
#
# usage: repeat.sh OUTDIR            (in the lab guest)
#        repeat.sh --run OUTDIR      (one run; devmemtop record wraps it)
. /lab/guest/lib.sh
. $LAB_STATE
RUNS=${LAB_REPEAT_RUNS:-5}
BYTES=${LAB_REPEAT_BYTES:-16M}

one_run() {
	lab_rx_tx $1 $BYTES --dmabuf-size 32M --dmabuf udmabuf-scatter --idle-timeout 10000
}

if [ "$1" = --run ]; then
	one_run "$2"
	exit $?
fi

D=${1:?usage: repeat.sh OUTDIR}
mkdir -p $D
echo "$RUNS" >$D/runs
echo "$BYTES" >$D/bytes
rc=0
for run in $(seq $RUNS); do
	o=$D/run-$run
	mkdir -p $o
	echo "repeat: run $run of $RUNS"
	if [ -x /lab/bin/devmemtop ]; then
		devmemtop record -o $o/devmemtop.dmtrec -i 200ms -- \
			sh /lab/scenarios/repeat.sh --run $o >$o/devmemtop-record.log 2>&1
		echo $? >$o/devmemtop-record.rc
	else
		sh /lab/scenarios/repeat.sh --run $o
	fi
	[ "$(cat $o/rx.rc 2>/dev/null)" = 0 ] || rc=1
done
exit $rc
