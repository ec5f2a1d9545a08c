#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (issue 21; vmtest.sh --kernel patched --scenario autorelease-measure)
# Scenario "autorelease-measure" (issue 21, kernel-patches 0012, patched
# kernel only): the cover letter's claim, SO_DEVMEM_AUTORELEASE off costs
# the receiver less CPU, measured the way compare wants it. Four cells:
#   4k-ret    4 KiB net_iovs (udmabuf), every token returned after its recvmsg
#   4k-hold   4 KiB net_iovs, every token held and returned at the end
#   16k-ret   16 KiB net_iovs (dma-heap, rx-page-size 16K), returned as it goes
#   16k-hold  16 KiB net_iovs, held
# In each cell LAB_ARM_RUNS (default 6) runs per mode of LAB_ARM_BYTES
# (default 16 MiB, --verify none: the dma-buf sync ioctls of a verified
# frag would bury the token path), off and on alternating (the first of
# each pair swapped every round), each under its own `devmemtop record`
# (200 ms; the recording keeps the receiver's CPU, the bytes and the
# DONTNEED cost). The host compares on (base) with off (candidate) per
# cell (scripts/lab/compare.sh: OUT/autorelease-CELL.{txt,json,html}).
# Then one run per cell and mode without devmemtop under the function
# tracer: the xarray calls of the token path per token (a count, not a
# time: the part of the claim TCG can show exactly).
# Results: one AR_RESULT line per run in OUTDIR/ar-results.txt.
# The kernel without the option (baseline): OUTDIR/skip.txt, exit 0.
#
# usage: autorelease-measure.sh OUTDIR              (in the lab guest)
#        autorelease-measure.sh --run OUTDIR CELL MODE  (one run)
. /lab/guest/lib.sh
. $LAB_STATE
RUNS=${LAB_ARM_RUNS:-6}
BYTES=${LAB_ARM_BYTES:-16M}
CELLS="4k-ret 4k-hold 16k-ret 16k-hold"
T=/sys/kernel/tracing
F=$T/instances/autorel_fn
XA="__xa_alloc __xa_cmpxchg __xa_erase"

# arm_rx OUTDIR CELL MODE: one receive of BYTES in that cell and mode.
arm_rx() {
	local o=$1 cell=$2 mode=$3 a

	a="--autorelease $mode --verify none --dmabuf-size 64M --idle-timeout 10000"
	case $cell in 16k-*) a="$a --dmabuf heap --rx-page-size 16K" ;; esac
	case $cell in *-hold) a="$a --hold" ;; esac
	lab_rx_tx $o $BYTES $a
}

if [ "$1" = --run ]; then
	arm_rx "$2" "$3" "$4"
	exit $?
fi

D=${1:?usage: autorelease-measure.sh OUTDIR}
mkdir -p $D

# Overruns of a tracefs instance's ring buffer, summed over CPUs.
arm_lost() {
	cat "$1"/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# arm_fn_start: the function tracer on the xarray calls in an instance of
# its own; on refusal, why on stdout and status 1.
arm_fn_start() {
	local f have=

	[ -d "$F" ] || mkdir "$F" 2>/dev/null || { echo "cannot create $F"; return 1; }
	for f in $XA; do
		grep -q "^$f\( \|$\)" $T/available_filter_functions 2>/dev/null && have="$have $f"
	done
	[ -n "$have" ] || { echo "none of $XA in available_filter_functions"; return 1; }
	echo $have >$F/set_ftrace_filter 2>/dev/null ||
		{ echo "set_ftrace_filter refused '$have'"; return 1; }
	echo function >$F/current_tracer 2>/dev/null ||
		{ echo "function tracer refused in $F (tracers: $(cat $F/available_tracers 2>/dev/null))"; return 1; }
	echo 0 >$F/tracing_on
	echo 16384 >$F/buffer_size_kb
	echo >$F/trace
	echo 1 >$F/tracing_on
	echo "traced:$have" >$D/xa-functions.txt
}

arm_fn_stop() {	# OUT
	echo 0 >$F/tracing_on
	cat $F/trace >$1/xa.txt
	arm_lost $F >$1/xa-lost
	echo nop >$F/current_tracer
	echo >$F/set_ftrace_filter
}

# A number from the receiver's one-line JSON, "none" if absent.
arm_json() {
	v=$(sed -n "s/.*\"$2\":\([0-9.a-z-]*\).*/\1/p" "$1" | head -n 1)
	echo "${v:-none}"
}

arm_result() {	# OUT LABEL CELL MODE XA XA_LOST
	r=$1/rx.json
	echo "AR_RESULT label=$2 cell=$3 mode=$4 rx_rc=$(cat $1/rx.rc 2>/dev/null || echo none)" \
		"xa_calls=$5 xa_lost=$6 tokens=$(arm_json $r tokens_received)" \
		"returned=$(arm_json $r tokens_returned) bytes=$(arm_json $r bytes)" \
		"recvmsg_calls=$(arm_json $r recvmsg_calls) dontneed_calls=$(arm_json $r dontneed_calls)" \
		"sys_seconds=$(arm_json $r sys_seconds) user_seconds=$(arm_json $r user_seconds)" \
		"seconds=$(arm_json $r seconds) autorelease=$(arm_json $r autorelease)" \
		>>$D/ar-results.txt
}

# The first run tells whether the kernel has the option at all.
o=$D/probe
lab_rx_tx $o 1M --autorelease off --verify none --idle-timeout 10000
if [ "$(cat $o/rx.rc)" = 77 ]; then
	grep SKIP $o/rx.log | sed 's/.*SKIP: //' >$D/skip.txt
	echo "autorelease-measure: SKIP: $(cat $D/skip.txt)"
	exit 0
fi

: >$D/ar-results.txt
echo "$RUNS" >$D/runs
echo "$BYTES" >$D/bytes
rc=0
n=0
while [ $n -lt $RUNS ]; do
	n=$((n + 1))
	[ $((n % 2)) = 1 ] && order="off on" || order="on off"
	for cell in $CELLS; do
		for mode in $order; do
			o=$D/$cell-$mode-$n
			mkdir -p $o
			echo "autorelease-measure: round $n of $RUNS, $cell $mode"
			devmemtop record -o $o/devmemtop.dmtrec -i 200ms -- \
				sh /lab/scenarios/autorelease-measure.sh --run $o $cell $mode \
				>$o/devmemtop-record.log 2>&1
			echo $? >$o/devmemtop-record.rc
			[ "$(cat $o/rx.rc 2>/dev/null)" = 0 ] || rc=1
			arm_result $o $cell-$mode-$n $cell $mode none none
		done
	done
done

# The xarray calls: one run per cell and mode, no devmemtop.
for cell in $CELLS; do
	for mode in off on; do
		o=$D/xa-$cell-$mode
		mkdir -p $o
		if arm_fn_start >$o/xa-skip.txt; then
			rm -f $o/xa-skip.txt
			arm_rx $o $cell $mode || rc=1
			arm_fn_stop $o
			pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' $o/rx.json)
			# the token path's calls only: callers in tcp_*/sock_* (the
			# bind and unbind in this process use the xarray too)
			xa=$(awk -v p="-$pid " 'index($0, p) &&
				/ __xa_(alloc|cmpxchg|erase) <-(tcp_|sock_)/ { n++ }
				END { print n + 0 }' $o/xa.txt)
			[ -n "$pid" ] || xa=none
			arm_result $o xa-$cell-$mode $cell $mode $xa $(cat $o/xa-lost)
		else
			arm_rx $o $cell $mode || rc=1
			arm_result $o xa-$cell-$mode $cell $mode none none
		fi
	done
done
[ ! -d "$F" ] || rmdir $F 2>/dev/null
cut -c1-300 $D/ar-results.txt
exit $rc
