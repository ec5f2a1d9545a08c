#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "autorelease" (issue 21, kernel-patches 0012, patched kernel
# only): SO_DEVMEM_AUTORELEASE on vs off, read from the devmem tracepoints
# (0003, 0009, 0012) in a tracefs instance of its own. On a kernel without
# the option devmem-traffic exits 77 (ENOPROTOOPT): the scenario writes
# the reason to OUTDIR/skip.txt and ends there (the baseline kernel).
#
# Identity runs, one directory each (rx.json, tx.json, events.txt, lost):
#   on-ret, off-ret          16 MiB, tokens returned after each recvmsg
#   on-hold, off-hold        16 MiB, every token held, returned at the end
#   on-ret-16k, off-ret-16k  16 MiB through 16 KiB net_iovs (dma-heap)
#   on-leak                  tokens never returned: released at close
#   off-leak                 never returned, socket closed, then unbind:
#                            the drain at unbind takes them
#   off-leak-unbind          never returned, unbind while the socket is open
# assert_autorelease.py checks per binding: received - returned - released
# - drained == held (0 at the end, the tool's leaked count at unbind), the
# per-net_iov counts the events carry, and the binding freed with 0
# outstanding.
#
# Beside the full mode's recording, a `devmemtop -m light -vv` (issue 25:
# light.json, light.log) reads held tokens at snapshot time: from the token
# xarrays with autorelease, from the binding's net_iov uref counts without;
# assert_autorelease.py compares it with the recording and the tool in the
# leak runs' --linger hold. Beside it the default, `devmemtop -m devmem`
# (issue 36: default.json, default.log): each run's binding's every devmem
# figure, token counts and mode included, must equal the recording's (full
# mode) at its free (assert_devmemtop.py).
#
# The CPU measurement is scenarios/autorelease-measure.sh.
# usage: autorelease.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: autorelease.sh OUTDIR}
mkdir -p $D
BYTES=${LAB_AR_BYTES:-16M}

T=/sys/kernel/tracing
I=$T/instances/autorel

die() { echo "autorelease: $*" >&2; exit 1; }

[ -d "$T/events/devmem" ] || die "no devmem trace events"
[ -d "$I" ] || mkdir "$I" || die "cannot create tracefs instance $I"
echo 0 >$I/tracing_on
echo 16384 >$I/buffer_size_kb
echo 1 >$I/events/devmem/enable

# Overruns of an instance's ring buffer, summed over CPUs.
ar_lost() {
	cat "$1"/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# ar_run LABEL BYTES RX-OPTIONS...: one transfer under the devmem events.
# Returns the receiver's exit status.
ar_run() {
	label=$1 bytes=$2
	shift 2
	out=$D/$label
	mkdir -p $out
	echo 0 >$I/tracing_on
	echo >$I/trace
	echo 1 >$I/tracing_on
	devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT \
		--expect $bytes --idle-timeout 10000 "$@" >$out/rx.json 2>$out/rx.log &
	rx=$!
	lab_wait_listening $out/rx.log $rx
	lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT \
		--bytes $bytes --timeout 300 >$out/tx.json 2>$out/tx.log
	echo $? >$out/tx.rc
	wait $rx
	rc=$?
	echo $rc >$out/rx.rc
	if [ $rc = 0 ]; then
		# closed and unbound; the pool drains, then the binding is
		# freed (from a work item when a socket held the last reference)
		lab_wait_pool_gone $out/rx.json $out
		bid=$(sed -n 's/.*"binding_id":\([0-9]*\).*/\1/p' $out/rx.json)
		[ "$(cat $I/events/devmem/enable)" = 0 ] ||
		for i in $(seq 50); do
			grep -q "devmem_binding_free: binding=[^ ]* id=$bid " $I/trace && break
			sleep 0.2
		done
	fi
	echo 0 >$I/tracing_on
	cat $I/trace >$out/events.txt
	ar_lost $I >$out/lost
	echo "autorelease: $label rx rc=$rc $(head -c 300 $out/rx.json)"
	return $rc
}

# light mode's held tokens (issue 25), its BPF run time with -vv
STATS=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
lab_dmt_modes $D light:light:200ms:-vv default:devmem:200ms ||
	echo "autorelease: no devmemtop: no -m light or -m devmem run" >&2

# The first run tells whether the kernel has the option at all.
ar_run on-ret $BYTES --autorelease on
rc=$?
if [ $rc = 77 ]; then
	grep SKIP $D/on-ret/rx.log | sed 's/.*SKIP: //' >$D/skip.txt
	echo "autorelease: SKIP: $(cat $D/skip.txt)"
	lab_dmt_stop
	echo $STATS >/proc/sys/kernel/bpf_stats_enabled
	exit 0
fi
fail=0
[ $rc = 0 ] || fail=1

ar_run off-ret $BYTES --autorelease off || fail=1
ar_run on-hold $BYTES --autorelease on --hold || fail=1
ar_run off-hold $BYTES --autorelease off --hold || fail=1
ar_run on-ret-16k $BYTES --autorelease on --dmabuf heap \
	--rx-page-size 16K || fail=1
ar_run off-ret-16k $BYTES --autorelease off --dmabuf heap \
	--rx-page-size 16K || fail=1
# --linger: every leaked token stays held, bound, for 1.5 s, so devmemtop's
# 200 ms snapshots see the whole hold before the close or the unbind
ar_run on-leak 4M --autorelease on --leak --linger 1500 || fail=1
ar_run off-leak 4M --autorelease off --leak --linger 1500 || fail=1
ar_run off-leak-unbind 4M --autorelease off --leak --unbind-first --linger 1500 || fail=1

# the last run's binding freed: in a snapshot of each before they stop
lab_dmt_next 2
lab_dmt_stop
echo $STATS >/proc/sys/kernel/bpf_stats_enabled
# the scenarios after this one get the guest's memory back
echo 0 >$I/events/devmem/enable
rmdir $I 2>/dev/null
exit $fail
