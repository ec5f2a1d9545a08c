# SPDX-License-Identifier: GPL-2.0
# Guest-side helpers of the lab (busybox sh), sourced by /init and the
# scenarios. Layout: two netdevsim ports linked back to back,
#   RX: netdevsim1 port in the init netns, $LAB_RX_ADDR, devmem bound here
#   TX: netdevsim2 port in a netns held by $LAB_PEER_PID, $LAB_TX_ADDR
# Addresses are RFC 5737 documentation addresses, inside this guest only.

LAB_RX_ADDR=192.0.2.1
LAB_TX_ADDR=192.0.2.2
LAB_PORT=5201
LAB_STATE=/tmp/lab.env

lab_param() {
	sed -n "s/.*lab\.$1=\([^ ]*\).*/\1/p" /proc/cmdline
}

lab_now() {
	cut -d' ' -f1 /proc/uptime
}

lab_net_setup() {
	local tx_if tx_idx rx_idx i

	set -e
	echo "1 1" >/sys/bus/netdevsim/new_device
	for i in 1 2 3 4 5 6 7 8 9 10; do
		LAB_RX_IF=$(ls /sys/bus/netdevsim/devices/netdevsim1/net/ 2>/dev/null | head -1)
		[ -n "$LAB_RX_IF" ] && break
		sleep 0.2
	done
	[ -n "$LAB_RX_IF" ] || { echo "netdevsim1 has no netdev"; return 1; }
	rx_idx=$(cat /sys/class/net/$LAB_RX_IF/ifindex)
	ip link set lo up
	ip addr add $LAB_RX_ADDR/24 dev $LAB_RX_IF
	# Header split on, as on a NIC a devmem server configures: 7.3's
	# core refuses to bind a memory provider unless tcp-data-split was
	# set "on" (netdevsim reports "on" before anyone set it, which does
	# not count) with hds-thresh 0. 6.12 with 0010 starts with it on.
	if command -v lab-hds >/dev/null; then
		lab-hds $LAB_RX_IF on || echo "lab: tcp-data-split on $LAB_RX_IF failed"
	fi

	# The peer: a netns with the second netdevsim, kept by a sleeping shell.
	rm -f /tmp/peer.ready
	unshare -n sh -c "
		set -e
		ip link set lo up
		echo '2 1' >/sys/bus/netdevsim/new_device
		sleep 0.3
		tx_if=\$(ip -o link show | sed -n 's/^[0-9]*: \([a-z0-9]*\):.*/\1/p' | grep -v '^lo\$' | head -1)
		tx_idx=\$(ip -o link show dev \$tx_if | cut -d: -f1)
		exec 3</proc/1/ns/net 4</proc/self/ns/net
		echo \"3:$rx_idx 4:\$tx_idx\" >/sys/bus/netdevsim/link_device
		ip addr add $LAB_TX_ADDR/24 dev \$tx_if
		ip link set \$tx_if up
		echo \$tx_if >/tmp/peer.ready
		exec sleep 1000000
	" &
	LAB_PEER_PID=$!
	for i in $(seq 50); do
		[ -s /tmp/peer.ready ] && break
		sleep 0.1
	done
	[ -s /tmp/peer.ready ] || { echo "peer netns setup failed"; return 1; }
	LAB_TX_IF=$(cat /tmp/peer.ready)
	ip link set $LAB_RX_IF up
	ping -c 1 -W 3 $LAB_TX_ADDR
	set +e
	cat >$LAB_STATE <<-EOT
	LAB_RX_IF=$LAB_RX_IF
	LAB_TX_IF=$LAB_TX_IF
	LAB_PEER_PID=$LAB_PEER_PID
	EOT
	cat $LAB_STATE
	ip -o addr show dev $LAB_RX_IF
}

# Run a command in the TX peer's netns.
lab_peer() {
	. $LAB_STATE
	nsenter -n -t $LAB_PEER_PID "$@"
}

# Run NET_RX once on every CPU (a ping from the peer pinned to each CPU;
# netdevsim runs the RX NAPI on the sending CPU). recvmsg frees an skb that
# was allocated on another CPU through that CPU's defer list, which is only
# flushed when NET_RX runs there: after the traffic stops, such skbs (and
# the net_iov references of their frags) stay parked.
lab_flush_defer() {
	local cpu n

	n=$(grep -c ^processor /proc/cpuinfo)
	for cpu in $(seq 0 $((n - 1))); do
		lab_peer taskset -c $cpu ping -c 1 -W 1 $LAB_RX_ADDR >/dev/null 2>&1
	done
}

# lab_wait_lines FILE N: until FILE has N lines (a snapshot each), 60 s at
# most; says so on stderr if it never gets there
lab_wait_lines() {
	local i

	for i in $(seq 300); do
		[ "$(wc -l <$1 2>/dev/null || echo 0)" -ge $2 ] && return 0
		sleep 0.2
	done
	echo "$(basename $0 .sh): $1 stuck below $2 lines" >&2
}

# lab_dmt_modes OUTDIR SPEC...: one live `devmemtop --json` per SPEC, side
# by side in the background (the scenarios compare the modes at the same
# points), and return once each printed its first snapshot (attached).
# SPEC is NAME:MODE:INTERVAL[:OPTION...]: writes OUTDIR/NAME.json (one
# snapshot a line) and OUTDIR/NAME.log; MODE is `-m MODE` (full: every hook,
# the devmem tracepoints on the patched kernel; devmem: the default since
# issue 36, no program per regular page); OPTIONs
# are passed on as words (e.g. light:500ms:--sampling:20ms/1s). Without
# /lab/bin/devmemtop nothing starts (status 1) and the helpers below do
# nothing. The instances, in SPEC order, are in LAB_DMT ("pid:OUTDIR/NAME
# ..."): lab_dmt_next waits for their next snapshots, lab_dmt_lines marks
# where they are, lab_dmt_stop ends them.
lab_dmt_modes() {
	local d=$1 spec name mode ival p ns ifs=$IFS

	shift
	[ -x /lab/bin/devmemtop ] || return 1
	for spec in "$@"; do
		set -f
		IFS=:
		set -- $spec
		IFS=$ifs
		set +f
		name=$1 mode=$2 ival=$3
		shift 3
		# MODE@peer: in the TX peer's netns (nsenter execs devmemtop: $! is its pid)
		ns=
		case $mode in *@peer) ns="nsenter -n -t $LAB_PEER_PID" mode=${mode%@peer} ;; esac
		$ns devmemtop --json -i $ival -m $mode "$@" >$d/$name.json 2>$d/$name.log &
		LAB_DMT="$LAB_DMT $!:$d/$name"
	done
	for p in $LAB_DMT; do
		lab_wait_lines ${p#*:}.json 1
	done
}

# lab_dmt_lines: the line (snapshot) counts of lab_dmt_modes' outputs, in
# its SPEC order, on one line (marks of a point for the host's checks)
lab_dmt_lines() {
	local p

	for p in $LAB_DMT; do
		printf '%s ' "$(wc -l <${p#*:}.json)"
	done
	echo
}

# lab_dmt_next [N]: until each of lab_dmt_modes' instances printed N (1)
# more snapshots, so whatever happened before is in a snapshot of each
lab_dmt_next() {
	local p

	for p in $LAB_DMT; do
		lab_wait_lines ${p#*:}.json $(( $(wc -l <${p#*:}.json) + ${1:-1} ))
	done
}

# lab_dmt_wait_freed [SECONDS]: until the newest complete snapshot of each
# of lab_dmt_modes' instances lists no binding alive, SECONDS (20) at most.
# A freed binding is listed once, freed, and then no more, so that point is
# where each instance has reported every binding it saw freed; a binding
# the kernel frees late (its free is a work item after the last reference)
# is then in the output of both instances, not of the one whose last
# snapshot happened to come after it. One that is never freed runs out the
# bound, and the checks say which.
lab_dmt_wait_freed() {
	local p f i

	for p in $LAB_DMT; do
		f=${p#*:}.json
		for i in $(seq $(( ${1:-20} * 5 ))); do
			# the last line may be one being written: the one before it then
			if [ -z "$(tail -c 1 $f)" ]; then
				tail -n 1 $f
			else
				tail -n 2 $f | head -n 1
			fi | grep -q '"alive":true' || break
			sleep 0.2
		done
	done
}

# lab_dmt_stop: SIGINT to each of lab_dmt_modes' instances; its exit status
# in OUTDIR/NAME.rc and a line "pid status NAME" in OUTDIR/devmemtop.rcs
lab_dmt_stop() {
	local p pid f rc

	for p in $LAB_DMT; do
		kill -INT ${p%%:*}
	done
	for p in $LAB_DMT; do
		pid=${p%%:*} f=${p#*:}
		wait $pid
		rc=$?
		echo $rc >$f.rc
		echo "$pid $rc ${f##*/}" >>${f%/*}/devmemtop.rcs
	done
	LAB_DMT=
}

# lab_wait_listening LOG PID: wait up to 10 s until the devmem-traffic
# receiver PID has written "listening" to LOG (bound and listening), or has
# exited. 0 if it listens.
lab_wait_listening() {
	local i

	for i in $(seq 100); do
		grep -q listening "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	grep -q listening "$1" 2>/dev/null
}

# lab_rx_tx OUTDIR BYTES RX-ARGS...: one receive of BYTES: a devmem-traffic
# receiver on the lab's RX port with RX-ARGS (OUTDIR/rx.json, rx.log, rx.rc),
# the sender in the peer netns (tx.json, tx.log, tx.rc), then
# lab_wait_pool_gone. 0 if both ends succeeded.
lab_rx_tx() {
	local o=$1 bytes=$2 rx tx

	shift 2
	mkdir -p $o
	devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --expect $bytes "$@" \
		>$o/rx.json 2>$o/rx.log &
	rx=$!
	if ! lab_wait_listening $o/rx.log $rx; then
		wait $rx
		echo $? >$o/rx.rc
		return 1
	fi
	lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT \
		--bytes $bytes >$o/tx.json 2>$o/tx.log &
	tx=$!
	wait $rx
	echo $? >$o/rx.rc
	wait $tx
	echo $? >$o/tx.rc
	lab_wait_pool_gone $o/rx.json $o
	[ "$(cat $o/rx.rc)" = 0 ] && [ "$(cat $o/tx.rc)" = 0 ]
}

# lab_wait_pool_gone RX_JSON OUTDIR: after the receiver exited, wait until
# no page pool of its binding is listed by page-pool-get any more (unbind,
# page pool destroy and binding free are asynchronous). If the pool is
# still there after 2 s, record it (OUTDIR/pools-before-flush.json), flush
# the CPU defer lists (lab_flush_defer) and wait up to 8 s more. Leaves the
# last dump in OUTDIR/pools-after.json and "seconds=S flushed=0|1" in
# OUTDIR/pool-gone.txt.
lab_wait_pool_gone() {
	local bid t0 i flushed=0

	bid=$(sed -n 's/.*"binding_id":\([0-9]*\).*/\1/p' "$1")
	t0=$(lab_now)
	for i in $(seq 50); do
		devmem-traffic pools --ifname $LAB_RX_IF >$2/pools-after.json
		[ -n "$bid" ] && ! grep -q "\"dmabuf\":$bid[,}]" $2/pools-after.json && break
		if [ $i = 10 ]; then
			cp $2/pools-after.json $2/pools-before-flush.json
			lab_flush_defer
			flushed=1
		fi
		sleep 0.2
	done
	echo "seconds=$(awk -v a=$t0 -v b=$(lab_now) 'BEGIN { printf "%.2f", b - a }') flushed=$flushed" \
		>$2/pool-gone.txt
	sleep 1		# one more recorder interval sees the binding freed
}

# page_pool tracepoints into the trace buffer, per scenario
lab_trace_start() {
	local t=/sys/kernel/tracing

	echo 0 >$t/tracing_on
	echo 16384 >$t/buffer_size_kb
	echo >$t/trace
	for e in page_pool_state_hold page_pool_state_release page_pool_release; do
		echo 1 >$t/events/page_pool/$e/enable
	done
	echo 1 >$t/tracing_on
}

lab_trace_stop() {
	local t=/sys/kernel/tracing

	echo 0 >$t/tracing_on
	for e in page_pool_state_hold page_pool_state_release page_pool_release; do
		echo 0 >$t/events/page_pool/$e/enable
	done
	cat $t/trace
	echo "# overrun: $(grep -h overrun $t/per_cpu/cpu*/stats | awk '{s += $2} END {print s}')"
}

# devmemtop record interval of the scenarios that have a gate spec
# (specs/lab-*.yaml) or whose host check reads the recording (race);
# other scenarios run without devmemtop.
lab_interval() {
	case $1 in
	exhaust) echo 100ms ;;
	bulk|leak|ncdevmem|multiqueue|selftests|race|autorelease) echo 200ms ;;
	esac
}

lab_run_scenario() {
	local s=$1 d=/out/$1 t0 t1 rc

	[ -f /lab/scenarios/$s.sh ] || { echo "LAB: FAIL no scenario '$s'"; return 1; }
	mkdir -p $d
	echo "LAB: scenario $s start at $(lab_now)s"
	lab_trace_start
	t0=$(lab_now)
	if [ -x /lab/bin/devmemtop ] && [ -n "$(lab_interval $s)" ]; then
		devmemtop record -o $d/devmemtop.dmtrec -i $(lab_interval $s) -- \
			sh -c "sh /lab/scenarios/$s.sh $d >$d/scenario.log 2>&1; echo \$? >$d/rc" \
			>$d/devmemtop-record.log 2>&1
		echo $? >$d/devmemtop-record.rc
	else
		[ -x /lab/bin/devmemtop ] &&
			echo "no devmemtop recording for scenario $s (no gate spec)" >$d/devmemtop-record.log ||
			echo "devmemtop not in this initramfs (build/devmemtop missing on the host)" \
				>$d/devmemtop-record.log
		sh /lab/scenarios/$s.sh $d >$d/scenario.log 2>&1
		echo $? >$d/rc
	fi
	t1=$(lab_now)
	lab_trace_stop >$d/trace.txt
	rc=$(cat $d/rc 2>/dev/null || echo 99)
	awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f\n", b - a }' >$d/seconds
	echo "LAB: scenario $s rc=$rc seconds=$(cat $d/seconds)"
	[ "$rc" = 0 ]
}

lab_banner() {
	. $LAB_STATE
	cat <<-EOT
	=== devmem lab shell (kernel flavor: $LAB_KERNEL) ===
	RX port $LAB_RX_IF ($LAB_RX_ADDR, init netns), TX port $LAB_TX_IF ($LAB_TX_ADDR)
	in the netns of pid $LAB_PEER_PID. Results share: /out. Try:
	  devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M &
	  nsenter -n -t $LAB_PEER_PID devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 64M
	  sh /lab/scenarios/bulk.sh /out/bulk       (one scenario by hand)
	  devmemtop -b -n 3                         (if built)
	exit the shell to power off.
	EOT
}

lab_finish() {
	dmesg >/out/dmesg.txt
	cat /proc/sys/kernel/tainted >/out/tainted
	echo "$1" >/out/guest.rc
	echo "LAB: done rc=$1 tainted=$(cat /proc/sys/kernel/tainted) at $(lab_now)s"
	sync
	umount /out 2>/dev/null || umount -l /out
	poweroff -f
}
