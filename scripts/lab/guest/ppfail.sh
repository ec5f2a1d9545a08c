# SPDX-License-Identifier: GPL-2.0
# Guest helper (busybox sh, sourced by scenarios/selftests.sh on 6.12 and
# scenarios/upstream-more.sh on 7.3): ppfail, the kernel's function fault
# injection on the page pool's allocation, configured as pp_alloc_fail.py
# configures it (verbose 0 first: each failure would dump a stack
# otherwise), allocations by netdevsim's pp_hold on a device of its own
# (bus id 4242). The function: PPF_FUNC (page_pool_alloc_pages, 6.12's; 7.3's
# pp_alloc_fail.py injects on page_pool_alloc_netmems). Needs D (the
# output directory), T (tracefs), max_ifindex and lab_now. Result in
# D/ppfail.txt, .t, .ifindex, .trace (or .skip).
PPF=/sys/kernel/debug/fail_function
ppfail_off() {
	echo 0 >$PPF/probability
	echo >$PPF/inject	# an empty line removes every function
	echo 0 >$PPF/times
}

ppfail() {
	local F=$PPF H if calls=60 ok=0 enomem=0 times=100 i t0 left
	local func=${PPF_FUNC:-page_pool_alloc_pages}

	max_ifindex >$D/ppfail.ifindex
	if [ ! -d $F ]; then
		echo "no $F: kernel without CONFIG_FAIL_FUNCTION" | tee $D/ppfail.skip
		return 0
	fi
	echo >$T/trace
	t0=$(lab_now)
	echo $t0 >$D/ppfail.t
	echo "4242 1 1" >/sys/bus/netdevsim/new_device || return 1
	for i in $(seq 50); do
		if=$(ls /sys/bus/netdevsim/devices/netdevsim4242/net/ 2>/dev/null | head -1)
		[ -n "$if" ] && break
		sleep 0.1
	done
	[ -n "$if" ] || { echo "ppfail: netdevsim4242 has no netdev"; return 1; }
	ip link set $if up || return 1
	H=/sys/kernel/debug/netdevsim/netdevsim4242/ports/0/pp_hold
	echo 0 >$F/verbose && echo 0 >$F/probability &&
		echo $func >$F/inject &&
		echo 3 >$F/interval && echo $times >$F/times &&
		echo 100 >$F/probability || { ppfail_off; return 1; }
	for i in $(seq $calls); do
		if echo y >$H 2>/dev/null; then
			ok=$((ok + 1))
			echo n >$H
		else
			enomem=$((enomem + 1))
		fi
	done
	echo 0 >$F/probability
	left=$(cat $F/times)
	ppfail_off
	cat >$D/ppfail.txt <<-EOT
	func=$func
	ifname=$if
	ifindex=$(cat /sys/class/net/$if/ifindex)
	calls=$calls
	allocated=$ok
	enomem=$enomem
	times_set=$times
	times_left=$left
	injected=$((times - left))
	EOT
	# devmemtop reads qstats at every snapshot (200 ms): let a few see the
	# device's rx-alloc-fail (0013) before it goes
	sleep 1
	echo 4242 >/sys/bus/netdevsim/del_device
	echo "$t0 $(lab_now)" >$D/ppfail.t
	sleep 0.5
	cat $T/trace >$D/ppfail.trace
	echo "${PPF_TAG:-selftests}: ppfail $(paste -sd' ' $D/ppfail.txt)"
}
